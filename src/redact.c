/*
 * The redactor (see redact.h).  It works on text of any shape: it splits
 * lines, applies the header rules to lines that look like headers, then
 * the field, query, userinfo, PEM and token rules to everything.  It errs
 * on the side of removing too much.
 */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "buf.h"
#include "redact.h"
#include "xmalloc.h"

static const char *const secret_headers[] = {
	"authorization", "proxy-authorization", "cookie", "set-cookie",
	"x-goog-api-key", "x-goog-iam-authorization-token",
	"x-guploader-uploadid", /* the upload session id, as upload_id */
};

static const char *const secret_fields[] = {
	"access_token",
	"accessToken",
	"refresh_token",
	"refreshToken",
	"id_token",
	"idToken",
	"client_secret",
	"private_key",
	"private_key_id",
	"assertion",
	"subject_token",
	"token",
};

static const char *const secret_params[] = {
	"upload_id",
	"X-Goog-Signature",
	"Signature",
	"sig",
	"access_token",
	"key",
};

#define NITEMS(a) (sizeof(a) / sizeof((a)[0]))

static int
is_secret_header(const char *name, size_t n)
{
	size_t i;

	for (i = 0; i < NITEMS(secret_headers); i++)
		if (strlen(secret_headers[i]) == n &&
		    strncasecmp(secret_headers[i], name, n) == 0)
			return 1;
	return 0;
}

static int
is_in(const char *const *list, size_t nlist, const char *name, size_t n,
    int nocase)
{
	size_t i;

	for (i = 0; i < nlist; i++) {
		if (strlen(list[i]) != n)
			continue;
		if (nocase ? strncasecmp(list[i], name, n) == 0
		           : strncmp(list[i], name, n) == 0)
			return 1;
	}
	return 0;
}

/*
 * Pass 1 on one line: a secret header keeps its name and scheme.  Returns
 * 1 when the line was handled (and written to out).
 */
static int
header_rule(struct buf *out, const char *line, size_t len)
{
	size_t i = 0, name_end, v, w;

	/* "> " / "< " prefixes are not part of the header */
	while (i < len && (line[i] == ' ' || line[i] == '\t'))
		i++;
	name_end = i;
	while (name_end < len && line[name_end] != ':' &&
	       line[name_end] != ' ' && line[name_end] != '\t')
		name_end++;
	if (name_end >= len || line[name_end] != ':')
		return 0;
	if (!is_secret_header(line + i, name_end - i))
		return 0;
	v = name_end + 1;
	while (v < len && (line[v] == ' ' || line[v] == '\t'))
		v++;
	w = v;
	while (w < len && line[w] != ' ' && line[w] != '\t' &&
	       line[w] != '\r' && line[w] != '\n')
		w++;
	buf_append(out, line, v);
	/* a scheme is a bare word followed by more text (Bearer xyz) */
	if (w < len && (line[w] == ' ' || line[w] == '\t') && w > v) {
		size_t k;
		int word = 1;

		for (k = v; k < w; k++)
			if (!isalnum((unsigned char)line[k]) && line[k] != '-')
				word = 0;
		if (word && w - v <= 32) {
			buf_append(out, line + v, w - v);
			buf_puts(out, " ");
		}
	}
	buf_puts(out, REDACTED);
	if (len > 0 && line[len - 1] == '\n') {
		if (len > 1 && line[len - 2] == '\r')
			buf_puts(out, "\r");
		buf_puts(out, "\n");
	}
	return 1;
}

static int
is_name_char(char c)
{
	return isalnum((unsigned char)c) || c == '_' || c == '-';
}

/*
 * Pass 2 on any text: fields, query parameters, userinfo, PEM blocks and
 * bare tokens.  Works on s[0..len) appending to out.
 */
static void
value_rules(struct buf *out, const char *s, size_t len, int *in_pem)
{
	size_t i = 0, j, k;

	if (*in_pem) {
		/* inside a multi-line PEM block: drop up to its END line */
		for (k = 0; k + 9 <= len; k++)
			if (strncmp(s + k, "-----END ", 9) == 0)
				break;
		if (k + 9 > len)
			return;
		*in_pem = 0;
		k += 9;
		while (k < len && s[k] != '-')
			k++;
		while (k < len && s[k] == '-')
			k++;
		i = k;
	}

	while (i < len) {
		/* PEM private key blocks (also with escaped newlines) */
		if (s[i] == '-' && len - i > 11 &&
		    strncmp(s + i, "-----BEGIN ", 11) == 0) {
			const char *end = NULL;

			for (k = i + 11; k + 9 <= len; k++)
				if (strncmp(s + k, "-----END ", 9) == 0) {
					end = s + k;
					break;
				}
			buf_puts(out, "-----BEGIN " REDACTED "-----");
			if (end == NULL) {
				*in_pem = 1;
				if (len > 0 && s[len - 1] == '\n')
					buf_puts(out, "\n");
				i = len;
				continue;
			}
			k = (size_t)(end - s) + 9;
			while (k < len && s[k] != '-')
				k++;
			while (k < len && s[k] == '-')
				k++;
			i = k;
			continue;
		}
		/* Google OAuth access tokens anywhere */
		if (s[i] == 'y' && len - i > 5 &&
		    strncmp(s + i, "ya29.", 5) == 0) {
			buf_puts(out, "ya29." REDACTED);
			k = i + 5;
			while (k < len && (is_name_char(s[k]) || s[k] == '.' ||
			                      s[k] == '~' || s[k] == '+' ||
			                      s[k] == '/' || s[k] == '='))
				k++;
			i = k;
			continue;
		}
		/* JSON "name" : "value" */
		if (s[i] == '"') {
			j = i + 1;
			while (j < len && s[j] != '"' && s[j] != '\\')
				j++;
			if (j < len && s[j] == '"' &&
			    is_in(secret_fields, NITEMS(secret_fields),
			        s + i + 1, j - i - 1, 0)) {
				k = j + 1;
				while (k < len && isspace((unsigned char)s[k]))
					k++;
				if (k < len && s[k] == ':') {
					k++;
					while (k < len &&
					       isspace((unsigned char)s[k]))
						k++;
					if (k < len && s[k] == '"') {
						buf_append(
						    out, s + i, k + 1 - i);
						buf_puts(out, REDACTED);
						k++;
						while (k < len && s[k] != '"') {
							if (s[k] == '\\' &&
							    k + 1 < len)
								k++;
							k++;
						}
						i = k;
						continue;
					}
				}
			}
			buf_append(out, s + i, 1);
			i++;
			continue;
		}
		/* form or query name=value, at a boundary */
		if (is_name_char(s[i]) &&
		    (i == 0 || s[i - 1] == '&' || s[i - 1] == '?' ||
		        s[i - 1] == ';' || isspace((unsigned char)s[i - 1]))) {
			j = i;
			while (j < len && is_name_char(s[j]))
				j++;
			if (j < len && s[j] == '=' &&
			    (is_in(secret_fields, NITEMS(secret_fields), s + i,
			         j - i, 0) ||
			        is_in(secret_params, NITEMS(secret_params),
			            s + i, j - i, 1))) {
				buf_append(out, s + i, j + 1 - i);
				buf_puts(out, REDACTED);
				k = j + 1;
				while (k < len && s[k] != '&' && s[k] != ' ' &&
				       s[k] != '"' && s[k] != '\r' &&
				       s[k] != '\n' && s[k] != '#' &&
				       s[k] != ';')
					k++;
				i = k;
				continue;
			}
			/* not a secret name: move on one byte, so a token
			 * glued inside the word is still seen */
			buf_append(out, s + i, 1);
			i++;
			continue;
		}
		/* scheme://userinfo@host */
		if (s[i] == ':' && i + 2 < len && s[i + 1] == '/' &&
		    s[i + 2] == '/') {
			j = i + 3;
			while (j < len && s[j] != '@' && s[j] != '/' &&
			       s[j] != ' ' && s[j] != '"' && s[j] != '\n' &&
			       s[j] != '?' && s[j] != '#')
				j++;
			if (j < len && s[j] == '@' && j > i + 3) {
				buf_append(out, s + i, 3);
				buf_puts(out, REDACTED);
				i = j;
				continue;
			}
			buf_append(out, s + i, 3);
			i += 3;
			continue;
		}
		buf_append(out, s + i, 1);
		i++;
	}
}

/* A header rule applies to the whole line; a Location value's query and
 * any other content still goes through the value rules. */
char *
redact_text(const char *s, size_t len)
{
	struct buf out;
	size_t i = 0, e;
	int in_pem = 0;

	buf_init(&out, BUF_NOCAP);
	while (i < len) {
		e = i;
		while (e < len && s[e] != '\n')
			e++;
		if (e < len)
			e++;
		if (!header_rule(&out, s + i, e - i))
			value_rules(&out, s + i, e - i, &in_pem);
		i = e;
	}
	return buf_detach(&out, NULL);
}

char *
redact_str(const char *s)
{
	return redact_text(s, strlen(s));
}

char *
redact_url_param(const char *url, const char *name)
{
	const char *q = strchr(url, '?'), *p, *e;
	size_t n = strlen(name);

	for (p = q; p != NULL && *p != '\0' && *p != '#';
	     p = strpbrk(p + 1, "&#")) {
		if (*p == '#')
			break;
		if (strncmp(p + 1, name, n) == 0 && p[1 + n] == '=') {
			p += 1 + n + 1;
			e = p + strcspn(p, "&#");
			return e > p ? xstrndup(p, (size_t)(e - p)) : NULL;
		}
	}
	return NULL;
}

char *
redact_secret(const char *s, const char *secret)
{
	struct buf out;
	const char *p;
	size_t n = secret != NULL ? strlen(secret) : 0;

	buf_init(&out, BUF_NOCAP);
	if (n < REDACT_SECRET_MIN) {
		buf_puts(&out, s);
		return buf_detach(&out, NULL);
	}
	while ((p = strstr(s, secret)) != NULL) {
		buf_append(&out, s, (size_t)(p - s));
		buf_puts(&out, REDACTED);
		s = p + n;
	}
	buf_puts(&out, s);
	return buf_detach(&out, NULL);
}
