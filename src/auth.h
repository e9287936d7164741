/*
 * One credential chain (application default credentials, in gcloud's
 * order) and the on-disk token cache.
 *
 *   1. an access-token file: --access-token-file, TPUCTL_ACCESS_TOKEN_FILE
 *      (config key auth/access_token_file): used as is, never cached;
 *   2. GOOGLE_APPLICATION_CREDENTIALS naming a JSON file of type
 *      service_account (RS256 JWT-bearer grant to its token_uri),
 *      authorized_user (refresh_token grant), external_account (STS token
 *      exchange of a file- or URL-sourced subject token, then optional
 *      service-account impersonation), external_account_authorized_user,
 *      or impersonated_service_account (source credentials, then
 *      iamcredentials generateAccessToken);
 *   3. gcloud's ADC file, $CLOUDSDK_CONFIG (default ~/.config/gcloud)
 *      /application_default_credentials.json, same types;
 *   4. the GCE metadata server at $GCE_METADATA_HOST (default
 *      metadata.google.internal), with a short connect timeout.
 *
 * --impersonate-service-account (auth/impersonate_service_account) wraps
 * any of them through iamcredentials.  Tokens are cached per credential
 * (key: a SHA-256 of the identity, the scope and the impersonation target)
 * in $XDG_CACHE_HOME/tpuctl/tokens (0700), one 0600 file each, and
 * refreshed when less than 3m45s remain.  Secrets live in struct auth only
 * and are wiped (OPENSSL_cleanse) when released; core dumps are disabled
 * once a secret is held.
 */
#ifndef TPUCTL_AUTH_H
#define TPUCTL_AUTH_H

#include <time.h>

#include <cjson/cJSON.h>

#include "err.h"

struct http;
struct auth;

#define AUTH_SCOPE_CLOUD "https://www.googleapis.com/auth/cloud-platform"
#define AUTH_REFRESH_MARGIN 225 /* seconds: 3m45s, as google-auth */

struct auth_opts {
	const char *access_token_file; /* step 1, or NULL */
	const char *impersonate;       /* service account email, or NULL */
	const char *iam_base;          /* iamcredentials base URL ending '/' */
	const char *token_uri;         /* default OAuth token endpoint */
	const char *cache_dir;         /* NULL: $XDG_CACHE_HOME/tpuctl/tokens */
	const char *scope;             /* NULL: AUTH_SCOPE_CLOUD */
	int no_cache;                  /* do not read or write the cache */
};

/* A chain over http (borrowed; it must outlive the auth). Strings copied. */
struct auth *auth_new(struct http *, const struct auth_opts *);
void auth_free(struct auth *);

/*
 * An access token: from memory, the cache, or a fresh exchange (always
 * fresh with force).  *token is the caller's to wipe and free
 * (xfree_secret).  Errors: TPU_E_AUTH for "no credentials found" (naming
 * every place tried), invalid_grant (with a re-auth hint) or a rejected
 * JWT (naming the clock); others as http_request returns them.
 */
int auth_token(struct auth *, int force, char **token, struct tpu_err *);

/* auth_token with the http_token_fn signature; arg is the struct auth. */
int auth_http_token(void *arg, int force, char **token, struct tpu_err *);

/*
 * Describe the chain for "tpuctl auth list": which source is active and
 * why, what was found where.  Does not fetch a token.  *out is the
 * caller's (cJSON_Delete).
 */
int auth_describe(struct auth *, cJSON **out, struct tpu_err *);

/*
 * The email of the metadata server's default service account (GET
 * instance/service-accounts/default/email with Metadata-Flavor: Google,
 * on GCE_METADATA_HOST), for credentials from the metadata server, which
 * name no account themselves.  *email is the caller's.  TPU_E_PRECONDITION
 * when the credentials are not the metadata server's; TPU_E_AUTH when it
 * does not answer; TPU_E_API for a reply that is no email.
 */
int auth_metadata_email(struct auth *, char **email, struct tpu_err *);

/* Remove every cached token; *removed counts the files. */
int auth_revoke(struct auth *, int *removed, struct tpu_err *);

/* The token cache directory in use. Borrowed. */
const char *auth_cache_dir(const struct auth *);

/*
 * Build and sign an RS256 JWT-bearer assertion (exported for tests): the
 * header carries kid when not NULL, the claims iss, scope, aud, iat = now,
 * exp = now + 3600.  *jwt is the caller's to free.  TPU_E_AUTH when the
 * PEM key cannot be read.
 */
int auth_jwt_sign(const char *pem, const char *kid, const char *iss,
    const char *scope, const char *aud, time_t now, char **jwt,
    struct tpu_err *);

/*
 * Parse a token endpoint reply: {"access_token", "expires_in"} (OAuth,
 * STS, metadata) or {"accessToken", "expireTime"} (iamcredentials).
 * *token is the caller's (xfree_secret); *expiry is a wall-clock time.
 * TPU_E_API naming the missing field.
 */
int auth_parse_token_response(const char *, size_t, time_t now, char **token,
    time_t *expiry, struct tpu_err *);

/*
 * Check a credential file's JSON (exported for tests and fuzzing): the
 * type and the fields that type needs.  Returns 0 with *type set to a
 * static string, or TPU_E_AUTH naming the missing field.
 */
int auth_check_credentials(const cJSON *, const char **type, struct tpu_err *);

#endif
