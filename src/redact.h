/*
 * The redactor: every byte of an HTTP trace, a URL or a body that tpuctl
 * prints for diagnosis passes through here first.  Redaction happens on
 * output, never at the source (R10), and cannot be turned off.
 *
 * Rules:
 *   - headers Authorization, Proxy-Authorization, Cookie, Set-Cookie,
 *     X-Goog-Api-Key, x-goog-iam-authorization-token keep their name and
 *     auth scheme only ("Authorization: Bearer <redacted>");
 *   - JSON and form fields access_token, accessToken, refresh_token,
 *     id_token, client_secret, private_key, private_key_id, assertion,
 *     subject_token have their value replaced;
 *   - query parameters upload_id, X-Goog-Signature, Signature, sig,
 *     access_token are replaced;
 *   - userinfo in URLs (http://u:p@proxy) is replaced;
 *   - PEM private-key blocks and bare "ya29." OAuth tokens anywhere are
 *     replaced.
 */
#ifndef TPUCTL_REDACT_H
#define TPUCTL_REDACT_H

#include <stddef.h>

#define REDACTED "<redacted>"

/*
 * Redact one line or a whole block of text (header lines, a body, a URL,
 * curl's informational text) of len bytes.  Header blocks are split into
 * lines, each checked against the header rules.  Returns a NUL-terminated
 * copy the caller frees.
 */
char *redact_text(const char *, size_t len);

/* Convenience for a NUL-terminated string. */
char *redact_str(const char *);

/*
 * The raw value of query parameter name in url ("upload_id"), or NULL when
 * absent or empty.  The caller frees.
 */
char *redact_url_param(const char *url, const char *name);

/* Shorter secrets are not looked for (they would hit ordinary text). */
#define REDACT_SECRET_MIN 8

/*
 * A copy of s with every occurrence of secret (a value the caller knows is
 * one, such as the upload session id a server quotes in an error message)
 * replaced by "<redacted>"; secret NULL or shorter than REDACT_SECRET_MIN
 * changes nothing.  The caller frees.
 */
char *redact_secret(const char *s, const char *secret);

#endif
