/*
 * The credential chain, token exchanges and the token cache (see
 * auth.h).  Every secret (credential JSON, keys, tokens) is wiped before
 * it is freed and never reaches log_* or output_*.
 */
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/types.h>

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cjson/cJSON.h>
#include <openssl/bio.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/pem.h>

#include "auth.h"
#include "buf.h"
#include "fsutil.h"
#include "http.h"
#include "json.h"
#include "log.h"
#include "util.h"
#include "xmalloc.h"

#define CRED_MAX (1u << 20)
#define TOKEN_REPLY_MAX (1u << 20)

enum cred_kind {
	CRED_NONE = 0,
	CRED_TOKEN_FILE,
	CRED_JSON, /* a credential file; its "type" says which */
	CRED_METADATA,
};

struct auth {
	struct http *http;
	char *access_token_file, *impersonate, *iam_base, *token_uri;
	char *cache_dir, *scope;
	int no_cache;
	/* resolution */
	int resolved;
	enum cred_kind kind;
	char *path;         /* the file in use */
	const char *origin; /* "GOOGLE_APPLICATION_CREDENTIALS" ... */
	cJSON *cred;        /* parsed credential file (secret) */
	cJSON *chain;       /* [{step, detail}] what was tried */
	char *metadata_host;
	/* in memory */
	char *token;
	time_t expiry;
};

static void
no_dumps(void)
{
	/* holding secrets: no core dumps (S14) */
	prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
}

/* Wipe every string in a tree, then free it. */
static void
json_free_secret(cJSON *j)
{
	cJSON *c;

	if (j == NULL)
		return;
	for (c = j->child; c != NULL; c = c->next) {
		if (c->valuestring != NULL)
			OPENSSL_cleanse(c->valuestring, strlen(c->valuestring));
		if (c->child != NULL) {
			cJSON *k;

			for (k = c->child; k != NULL; k = k->next)
				if (k->valuestring != NULL)
					OPENSSL_cleanse(k->valuestring,
					    strlen(k->valuestring));
		}
	}
	cJSON_Delete(j);
}

struct auth *
auth_new(struct http *http, const struct auth_opts *o)
{
	struct auth *a = xcalloc(1, sizeof *a);
	const char *x, *h;

	a->http = http;
	if (o->access_token_file != NULL && *o->access_token_file != '\0')
		a->access_token_file = xstrdup(o->access_token_file);
	if (o->impersonate != NULL && *o->impersonate != '\0')
		a->impersonate = xstrdup(o->impersonate);
	a->iam_base = xstrdup(o->iam_base != NULL
	                          ? o->iam_base
	                          : "https://iamcredentials.googleapis.com/");
	a->token_uri = xstrdup(o->token_uri != NULL
	                           ? o->token_uri
	                           : "https://oauth2.googleapis.com/token");
	a->scope = xstrdup(o->scope != NULL ? o->scope : AUTH_SCOPE_CLOUD);
	a->no_cache = o->no_cache;
	if (o->cache_dir != NULL)
		a->cache_dir = xstrdup(o->cache_dir);
	else if ((x = getenv("XDG_CACHE_HOME")) != NULL && *x == '/')
		a->cache_dir = xasprintf("%s/tpuctl/tokens", x);
	else if ((h = getenv("HOME")) != NULL && *h != '\0')
		a->cache_dir = xasprintf("%s/.cache/tpuctl/tokens", h);
	else
		a->no_cache = 1;
	x = getenv("GCE_METADATA_HOST");
	a->metadata_host =
	    xstrdup(x != NULL && *x != '\0' ? x : "metadata.google.internal");
	return a;
}

void
auth_free(struct auth *a)
{
	if (a == NULL)
		return;
	free(a->access_token_file);
	free(a->impersonate);
	free(a->iam_base);
	free(a->token_uri);
	free(a->cache_dir);
	free(a->scope);
	free(a->path);
	free(a->metadata_host);
	json_free_secret(a->cred);
	cJSON_Delete(a->chain);
	xfree_secret(a->token);
	free(a);
}

const char *
auth_cache_dir(const struct auth *a)
{
	return a->cache_dir != NULL ? a->cache_dir : "";
}

/* --- credential files ------------------------------------------------ */

static const char *
str(const cJSON *o, const char *k)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);

	return cJSON_IsString(v) && v->valuestring[0] != '\0' ? v->valuestring
	                                                      : NULL;
}

static int
need(const cJSON *o, const char *type, const char *const *fields,
    struct tpu_err *err)
{
	for (; *fields != NULL; fields++)
		if (str(o, *fields) == NULL)
			return tpu_error(err, TPU_E_AUTH,
			    "%s credentials: field '%s' is missing or not a "
			    "string",
			    type, *fields);
	return 0;
}

int
auth_check_credentials(const cJSON *o, const char **type, struct tpu_err *err)
{
	static const char *const sa[] = { "client_email", "private_key", NULL };
	static const char *const user[] = { "client_id", "client_secret",
		"refresh_token", NULL };
	static const char *const ext[] = { "audience", "subject_token_type",
		"token_url", NULL };
	static const char *const extuser[] = { "refresh_token", "token_url",
		"client_id", "client_secret", NULL };
	static const char *const imp[] = { "service_account_impersonation_url",
		NULL };
	const char *t;
	const cJSON *cs, *src;
	int rc;

	if (!cJSON_IsObject(o))
		return tpu_error(
		    err, TPU_E_AUTH, "credentials: not a JSON object");
	if ((t = str(o, "type")) == NULL)
		return tpu_error(
		    err, TPU_E_AUTH, "credentials: field 'type' is missing");
	if (strcmp(t, "service_account") == 0) {
		*type = "service_account";
		return need(o, t, sa, err);
	}
	if (strcmp(t, "authorized_user") == 0) {
		*type = "authorized_user";
		return need(o, t, user, err);
	}
	if (strcmp(t, "external_account_authorized_user") == 0) {
		*type = "external_account_authorized_user";
		return need(o, t, extuser, err);
	}
	if (strcmp(t, "external_account") == 0) {
		*type = "external_account";
		if ((rc = need(o, t, ext, err)) != 0)
			return rc;
		cs = cJSON_GetObjectItemCaseSensitive(o, "credential_source");
		if (!cJSON_IsObject(cs))
			return tpu_error(err, TPU_E_AUTH,
			    "external_account credentials: field "
			    "'credential_source' is missing");
		if (str(cs, "file") == NULL && str(cs, "url") == NULL)
			return tpu_error(err, TPU_E_AUTH,
			    "external_account credentials: credential_source "
			    "needs 'file' or 'url' (executable and AWS sources "
			    "are not supported)");
		return 0;
	}
	if (strcmp(t, "impersonated_service_account") == 0) {
		const char *st;

		*type = "impersonated_service_account";
		if ((rc = need(o, t, imp, err)) != 0)
			return rc;
		src = cJSON_GetObjectItemCaseSensitive(o, "source_credentials");
		if (!cJSON_IsObject(src))
			return tpu_error(err, TPU_E_AUTH,
			    "impersonated_service_account credentials: field "
			    "'source_credentials' is missing");
		if ((rc = auth_check_credentials(src, &st, err)) != 0)
			return tpu_error_prefix(err, "source_credentials");
		if (strcmp(st, "impersonated_service_account") == 0)
			return tpu_error(err, TPU_E_AUTH,
			    "impersonated_service_account credentials: nested "
			    "impersonation is not supported");
		*type = "impersonated_service_account";
		return 0;
	}
	return tpu_error(err, TPU_E_AUTH,
	    "credentials: unsupported type '%.60s' (want service_account, "
	    "authorized_user, external_account, "
	    "external_account_authorized_user or "
	    "impersonated_service_account)",
	    t);
}

/* Read and check a credential file. */
static int
load_cred_file(const char *path, cJSON **out, struct tpu_err *err)
{
	struct buf b;
	const char *type, *end = NULL;
	cJSON *j = NULL;
	int rc, loose = 0;

	buf_init(&b, CRED_MAX);
	if ((rc = fsutil_read_file(path, 0, &b, &loose, err)) != 0)
		goto out;
	j = cJSON_ParseWithLengthOpts(b.data, b.len, &end, 0);
	if (j == NULL) {
		rc = tpu_error(err, TPU_E_AUTH,
		    "credentials file '%s' is not valid JSON", path);
		goto out;
	}
	if ((rc = auth_check_credentials(j, &type, err)) != 0) {
		tpu_error_prefix(err, "'%s'", path);
		goto out;
	}
	if (loose && strcmp(type, "service_account") == 0)
		log_warn("'%s' holds a private key and is readable by group "
		         "or others: chmod 600 it",
		    path);
	*out = j;
	j = NULL;
out:
	json_free_secret(j);
	buf_release_secret(&b);
	return rc;
}

static void chain_add(struct auth *a, const char *step, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static void
chain_add(struct auth *a, const char *step, const char *fmt, ...)
{
	cJSON *o = cJSON_CreateObject();
	char d[600];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(d, sizeof d, fmt, ap);
	va_end(ap);
	cJSON_AddStringToObject(o, "step", step);
	cJSON_AddStringToObject(o, "result", d);
	cJSON_AddItemToArray(a->chain, o);
}

static char *
adc_path(void)
{
	const char *d = getenv("CLOUDSDK_CONFIG"), *h;

	if (d != NULL && *d != '\0')
		return xasprintf("%s/application_default_credentials.json", d);
	if ((h = getenv("HOME")) == NULL || *h == '\0')
		return NULL;
	return xasprintf(
	    "%s/.config/gcloud/application_default_credentials.json", h);
}

/*
 * Walk steps 1-4 (without network I/O): the first file that exists wins;
 * a broken file is an error, not a fall-through (gcloud does the same).
 */
static int
resolve(struct auth *a, struct tpu_err *err)
{
	const char *g;
	char *p = NULL;
	struct stat st;
	int rc = 0;

	if (a->resolved)
		return 0;
	a->chain = cJSON_CreateArray();
	if (a->access_token_file != NULL) {
		a->kind = CRED_TOKEN_FILE;
		a->path = xstrdup(a->access_token_file);
		a->origin = "access token file";
		chain_add(a, "access token file", "using '%s'", a->path);
		goto done;
	}
	chain_add(a, "access token file",
	    "not set (--access-token-file, TPUCTL_ACCESS_TOKEN_FILE)");
	g = getenv("GOOGLE_APPLICATION_CREDENTIALS");
	if (g != NULL && *g != '\0') {
		if ((rc = load_cred_file(g, &a->cred, err)) != 0) {
			tpu_error_prefix(err, "GOOGLE_APPLICATION_CREDENTIALS");
			return rc;
		}
		a->kind = CRED_JSON;
		a->path = xstrdup(g);
		a->origin = "GOOGLE_APPLICATION_CREDENTIALS";
		chain_add(a, "GOOGLE_APPLICATION_CREDENTIALS",
		    "using '%s' (%s)", g, str(a->cred, "type"));
		goto done;
	}
	chain_add(a, "GOOGLE_APPLICATION_CREDENTIALS", "not set");
	p = adc_path();
	if (p != NULL && stat(p, &st) == 0) {
		if ((rc = load_cred_file(p, &a->cred, err)) != 0) {
			free(p);
			return rc;
		}
		a->kind = CRED_JSON;
		a->path = p;
		a->origin = "gcloud application default credentials";
		chain_add(a, "gcloud ADC file", "using '%s' (%s)", p,
		    str(a->cred, "type"));
		goto done;
	}
	chain_add(a, "gcloud ADC file", "'%s' not found",
	    p != NULL ? p : "$HOME/.config/gcloud/...");
	free(p);
	a->kind = CRED_METADATA;
	a->origin = "metadata server";
	chain_add(
	    a, "metadata server", "will ask http://%s/", a->metadata_host);
done:
	a->resolved = 1;
	return 0;
}

/* --- encoding and signing ------------------------------------------ */

static void
b64url(struct buf *b, const unsigned char *s, size_t n)
{
	char *e = tpu_b64_encode(s, n, TPU_B64_URL | TPU_B64_NOPAD);

	buf_append(b, e, strlen(e));
	free(e);
}

static void
form_add(struct buf *b, const char *k, const char *v)
{
	static const char hex[] = "0123456789ABCDEF";
	const unsigned char *p;

	if (b->len > 0)
		buf_puts(b, "&");
	buf_puts(b, k);
	buf_puts(b, "=");
	for (p = (const unsigned char *)v; *p != '\0'; p++) {
		if (isalnum(*p) || *p == '-' || *p == '.' || *p == '_' ||
		    *p == '~')
			buf_append(b, p, 1);
		else {
			char e[3] = { '%', hex[*p >> 4], hex[*p & 15] };

			buf_append(b, e, 3);
		}
	}
}

int
auth_jwt_sign(const char *pem, const char *kid, const char *iss,
    const char *scope, const char *aud, time_t now, char **jwt,
    struct tpu_err *err)
{
	BIO *bio = NULL;
	EVP_PKEY *key = NULL;
	EVP_MD_CTX *md = NULL;
	cJSON *hdr = cJSON_CreateObject(), *cl = cJSON_CreateObject();
	char *hs = NULL, *cs = NULL;
	unsigned char *sig = NULL;
	size_t siglen = 0;
	struct buf b;
	int rc = 0;

	buf_init(&b, BUF_NOCAP);
	cJSON_AddStringToObject(hdr, "alg", "RS256");
	cJSON_AddStringToObject(hdr, "typ", "JWT");
	if (kid != NULL)
		cJSON_AddStringToObject(hdr, "kid", kid);
	cJSON_AddStringToObject(cl, "iss", iss);
	cJSON_AddStringToObject(cl, "scope", scope);
	cJSON_AddStringToObject(cl, "aud", aud);
	cJSON_AddNumberToObject(cl, "iat", (double)now);
	cJSON_AddNumberToObject(cl, "exp", (double)now + 3600);
	hs = cJSON_PrintUnformatted(hdr);
	cs = cJSON_PrintUnformatted(cl);
	b64url(&b, (const unsigned char *)hs, strlen(hs));
	buf_puts(&b, ".");
	b64url(&b, (const unsigned char *)cs, strlen(cs));

	no_dumps();
	if ((bio = BIO_new_mem_buf(pem, -1)) == NULL ||
	    (key = PEM_read_bio_PrivateKey(bio, NULL, NULL, NULL)) == NULL) {
		rc = tpu_error(err, TPU_E_AUTH,
		    "the service account's private_key is not a PEM private "
		    "key");
		goto out;
	}
	if (EVP_PKEY_get_base_id(key) != EVP_PKEY_RSA) {
		rc = tpu_error(err, TPU_E_AUTH,
		    "the service account's private_key is not an RSA key");
		goto out;
	}
	if ((md = EVP_MD_CTX_new()) == NULL ||
	    EVP_DigestSignInit(md, NULL, EVP_sha256(), NULL, key) != 1 ||
	    EVP_DigestSign(md, NULL, &siglen, (unsigned char *)b.data, b.len) !=
	        1) {
		rc = tpu_error(err, TPU_E_AUTH, "cannot sign the JWT");
		goto out;
	}
	sig = xmalloc(siglen);
	if (EVP_DigestSign(md, sig, &siglen, (unsigned char *)b.data, b.len) !=
	    1) {
		rc = tpu_error(err, TPU_E_AUTH, "cannot sign the JWT");
		goto out;
	}
	buf_puts(&b, ".");
	b64url(&b, sig, siglen);
	*jwt = buf_detach(&b, NULL);
	buf_init(&b, BUF_NOCAP);
out:
	EVP_MD_CTX_free(md);
	EVP_PKEY_free(key);
	BIO_free(bio);
	free(sig);
	cJSON_free(hs);
	cJSON_free(cs);
	cJSON_Delete(hdr);
	cJSON_Delete(cl);
	buf_release_secret(&b);
	return rc;
}

/* --- token replies ------------------------------------------------- */

int
auth_parse_token_response(const char *body, size_t len, time_t now,
    char **token, time_t *expiry, struct tpu_err *err)
{
	cJSON *j = NULL;
	const cJSON *v;
	const char *end = NULL, *t;
	long long secs;
	int rc = 0;

	j = cJSON_ParseWithLengthOpts(body, len, &end, 0);
	if (!cJSON_IsObject(j)) {
		rc =
		    tpu_error(err, TPU_E_API, "token reply: not a JSON object");
		goto out;
	}
	if ((t = str(j, "access_token")) != NULL) {
		v = cJSON_GetObjectItemCaseSensitive(j, "expires_in");
		if (v == NULL)
			secs = 3600;
		else if (json_as_int64(v, &secs) != 0 || secs < 0 ||
		         secs > 86400LL * 366) {
			rc = tpu_error(err, TPU_E_API,
			    "token reply: field 'expires_in' is not a number "
			    "of seconds");
			goto out;
		}
		*expiry = now + (time_t)secs;
	} else if ((t = str(j, "accessToken")) != NULL) {
		const char *e = str(j, "expireTime");

		if (e == NULL || tpu_parse_rfc3339(e, expiry) != 0) {
			rc = tpu_error(err, TPU_E_API,
			    "token reply: field 'expireTime' is missing or "
			    "not an RFC 3339 time");
			goto out;
		}
	} else {
		rc = tpu_error(err, TPU_E_API,
		    "token reply: field 'access_token' is missing");
		goto out;
	}
	if (strlen(t) > 8192 || strpbrk(t, "\r\n ") != NULL) {
		rc = tpu_error(err, TPU_E_API,
		    "token reply: the access token is malformed");
		goto out;
	}
	*token = xstrdup(t);
out:
	json_free_secret(j);
	return rc;
}

/* --- exchanges ----------------------------------------------------- */

struct tok {
	char *token;
	time_t expiry;
};

static void
tok_clear(struct tok *t)
{
	xfree_secret(t->token);
	t->token = NULL;
	t->expiry = 0;
}

/*
 * Turn a failed token exchange into a clear error: invalid_grant is not
 * retried and gets a re-authentication hint; a JWT rejected for its times
 * names the clock.
 */
static int
token_error(int rc, const char *what, int jwt, struct tpu_err *err)
{
	if (strcmp(err->api_status, "invalid_grant") == 0 ||
	    err->http_status == 400 || err->http_status == 401) {
		char m[TPU_ERR_MSGLEN];

		snprintf(m, sizeof m, "%s", err->msg);

		if (jwt &&
		    (strstr(m, "iat") != NULL || strstr(m, "exp") != NULL ||
		        strstr(m, "timeframe") != NULL ||
		        strstr(m, "clock") != NULL)) {
			char now[32];
			time_t t = time(NULL);
			struct tm tm;

			gmtime_r(&t, &tm);
			strftime(now, sizeof now, "%Y-%m-%dT%H:%M:%SZ", &tm);
			return tpu_error(err, TPU_E_AUTH,
			    "%s: the token endpoint rejected the JWT's issue "
			    "and expiry times: check the system clock (it "
			    "says %s UTC): %.300s",
			    what, now, m);
		}
		return tpu_error(err, TPU_E_AUTH,
		    "%s: %.400s; the credentials were rejected: re-create "
		    "them (e.g. 'gcloud auth application-default login' or a "
		    "new key) and run 'tpuctl auth revoke'",
		    what, m);
	}
	tpu_error_prefix(err, "%s", what);
	return rc;
}

static int
post_token(struct auth *a, const char *url, const char *ctype,
    const struct buf *body, const char *bearer, int jwt, const char *what,
    struct tok *out, struct tpu_err *err)
{
	struct http_request req;
	struct http_response resp;
	int rc;

	memset(&req, 0, sizeof req);
	req.method = "POST";
	req.url = url;
	req.body = body->data;
	req.body_len = body->len;
	req.content_type = ctype;
	req.bearer = bearer;
	req.flags = HTTP_F_NOAUTH | HTTP_F_IDEMPOTENT | HTTP_F_NODRYRUN;
	req.max_response = TOKEN_REPLY_MAX;
	req.deadline_ms = 60000;
	http_response_init(&resp);
	if ((rc = http_request(a->http, &req, &resp, err)) != 0) {
		rc = token_error(rc, what, jwt, err);
		goto out;
	}
	if ((rc = auth_parse_token_response(resp.body.data, resp.body.len,
	         time(NULL), &out->token, &out->expiry, err)) != 0)
		tpu_error_prefix(err, "%s", what);
out:
	http_response_release(&resp);
	return rc;
}

static int fetch_json(
    struct auth *, const cJSON *, struct tok *, struct tpu_err *);

static int
fetch_service_account(
    struct auth *a, const cJSON *c, struct tok *out, struct tpu_err *err)
{
	const char *uri = str(c, "token_uri");
	char *jwt = NULL, *what;
	struct buf form;
	int rc;

	if (uri == NULL)
		uri = a->token_uri;
	what = xasprintf("service account '%s': token endpoint %s",
	    str(c, "client_email"), uri);
	buf_init(&form, BUF_NOCAP);
	if ((rc = auth_jwt_sign(str(c, "private_key"), str(c, "private_key_id"),
	         str(c, "client_email"), a->scope, uri, time(NULL), &jwt,
	         err)) != 0) {
		tpu_error_prefix(err, "%s", what);
		goto out;
	}
	form_add(
	    &form, "grant_type", "urn:ietf:params:oauth:grant-type:jwt-bearer");
	form_add(&form, "assertion", jwt);
	rc = post_token(a, uri, "application/x-www-form-urlencoded", &form,
	    NULL, 1, what, out, err);
out:
	xfree_secret(jwt);
	buf_release_secret(&form);
	free(what);
	return rc;
}

static int
fetch_refresh(struct auth *a, const cJSON *c, const char *uri, struct tok *out,
    struct tpu_err *err)
{
	struct buf form;
	char *what;
	int rc;

	what = xasprintf("%s credentials (client '%s'): token endpoint %s",
	    str(c, "type"), str(c, "client_id"), uri);
	buf_init(&form, BUF_NOCAP);
	form_add(&form, "grant_type", "refresh_token");
	form_add(&form, "client_id", str(c, "client_id"));
	form_add(&form, "client_secret", str(c, "client_secret"));
	form_add(&form, "refresh_token", str(c, "refresh_token"));
	rc = post_token(a, uri, "application/x-www-form-urlencoded", &form,
	    NULL, 0, what, out, err);
	buf_release_secret(&form);
	free(what);
	return rc;
}

/* generateAccessToken at url with the source token. */
static int
impersonate_at(struct auth *a, const char *url, const cJSON *delegates,
    const char *source_token, struct tok *out, struct tpu_err *err)
{
	cJSON *o = cJSON_CreateObject(), *sc = cJSON_CreateArray();
	char *s = NULL, *what;
	struct buf body;
	int rc;

	cJSON_AddItemToArray(sc, cJSON_CreateString(a->scope));
	cJSON_AddItemToObject(o, "scope", sc);
	cJSON_AddStringToObject(o, "lifetime", "3600s");
	if (cJSON_IsArray(delegates) && cJSON_GetArraySize(delegates) > 0)
		cJSON_AddItemToObject(
		    o, "delegates", cJSON_Duplicate(delegates, 1));
	s = cJSON_PrintUnformatted(o);
	buf_init(&body, BUF_NOCAP);
	buf_puts(&body, s);
	what = xasprintf("impersonation through %s", url);
	rc = post_token(
	    a, url, "application/json", &body, source_token, 0, what, out, err);
	if (rc != 0 && err->http_status == 403) {
		size_t n = strlen(err->msg);

		snprintf(err->msg + n, sizeof err->msg - n,
		    "; the source credentials need "
		    "roles/iam.serviceAccountTokenCreator on the target");
		rc = err->code = TPU_E_PERMISSION;
	}
	free(what);
	buf_release(&body);
	cJSON_free(s);
	cJSON_Delete(o);
	return rc;
}

static int
subject_token(struct auth *a, const cJSON *c, char **out, struct tpu_err *err)
{
	const cJSON *cs =
	    cJSON_GetObjectItemCaseSensitive(c, "credential_source");
	const cJSON *fmt = cJSON_GetObjectItemCaseSensitive(cs, "format");
	const char *ftype = str(fmt, "type"), *field;
	const char *file = str(cs, "file"), *url = str(cs, "url");
	struct buf b;
	struct http_response resp;
	int rc = 0;

	buf_init(&b, CRED_MAX);
	http_response_init(&resp);
	if (file != NULL) {
		if ((rc = fsutil_read_file(file, 0, &b, NULL, err)) != 0) {
			tpu_error_prefix(err, "external_account subject token");
			goto out;
		}
	} else {
		struct http_request req;
		const cJSON *hs =
		                cJSON_GetObjectItemCaseSensitive(cs, "headers"),
		            *h;
		char **lines = NULL;
		size_t n = 0, i;

		memset(&req, 0, sizeof req);
		lines =
		    xcalloc((size_t)cJSON_GetArraySize(hs) + 1, sizeof *lines);
		cJSON_ArrayForEach(
		    h, hs) if (cJSON_IsString(h) && h->string != NULL &&
		               strpbrk(h->string, "\r\n:") == NULL &&
		               strpbrk(h->valuestring, "\r\n") == NULL)
		    lines[n++] = xasprintf("%s: %s", h->string, h->valuestring);
		req.method = "GET";
		req.url = url;
		req.headers = (const char *const *)lines;
		req.flags = HTTP_F_NOAUTH | HTTP_F_IDEMPOTENT |
		            HTTP_F_NODRYRUN | HTTP_F_ALLOW_HTTP;
		req.max_response = CRED_MAX;
		req.deadline_ms = 30000;
		rc = http_request(a->http, &req, &resp, err);
		for (i = 0; i < n; i++)
			free(lines[i]);
		free(lines);
		if (rc != 0) {
			tpu_error_prefix(
			    err, "external_account subject token from the URL");
			goto out;
		}
		buf_append(&b, resp.body.data, resp.body.len);
	}
	if (ftype != NULL && strcmp(ftype, "json") == 0) {
		cJSON *j;
		const char *v;

		field = str(fmt, "subject_token_field_name");
		if (field == NULL) {
			rc = tpu_error(err, TPU_E_AUTH,
			    "external_account: credential_source.format needs "
			    "subject_token_field_name");
			goto out;
		}
		j = cJSON_ParseWithLength(b.data, b.len);
		if ((v = str(j, field)) == NULL) {
			json_free_secret(j);
			rc = tpu_error(err, TPU_E_AUTH,
			    "external_account: the subject token source has "
			    "no field '%.60s'",
			    field);
			goto out;
		}
		*out = xstrdup(v);
		json_free_secret(j);
	} else {
		while (b.len > 0 && isspace((unsigned char)b.data[b.len - 1]))
			b.data[--b.len] = '\0';
		if (b.len == 0) {
			rc = tpu_error(err, TPU_E_AUTH,
			    "external_account: the subject token is empty");
			goto out;
		}
		*out = xstrdup(b.data);
	}
out:
	http_response_release(&resp);
	buf_release_secret(&b);
	return rc;
}

static int
fetch_external(
    struct auth *a, const cJSON *c, struct tok *out, struct tpu_err *err)
{
	const char *imp = str(c, "service_account_impersonation_url");
	char *subj = NULL, *what = NULL;
	struct buf form;
	struct tok sts = { NULL, 0 };
	int rc;

	buf_init(&form, BUF_NOCAP);
	if ((rc = subject_token(a, c, &subj, err)) != 0)
		goto out;
	form_add(&form, "grant_type",
	    "urn:ietf:params:oauth:grant-type:token-exchange");
	form_add(&form, "audience", str(c, "audience"));
	form_add(&form, "scope", a->scope);
	form_add(&form, "requested_token_type",
	    "urn:ietf:params:oauth:token-type:access_token");
	form_add(&form, "subject_token_type", str(c, "subject_token_type"));
	form_add(&form, "subject_token", subj);
	what = xasprintf("external_account: STS %s", str(c, "token_url"));
	if ((rc = post_token(a, str(c, "token_url"),
	         "application/x-www-form-urlencoded", &form, NULL, 0, what,
	         imp != NULL ? &sts : out, err)) != 0)
		goto out;
	if (imp != NULL)
		rc = impersonate_at(a, imp, NULL, sts.token, out, err);
out:
	tok_clear(&sts);
	xfree_secret(subj);
	buf_release_secret(&form);
	free(what);
	return rc;
}

static int
fetch_json(struct auth *a, const cJSON *c, struct tok *out, struct tpu_err *err)
{
	const char *t = str(c, "type"), *uri;
	struct tok src = { NULL, 0 };
	int rc;

	if (strcmp(t, "service_account") == 0)
		return fetch_service_account(a, c, out, err);
	if (strcmp(t, "authorized_user") == 0) {
		uri = str(c, "token_uri");
		return fetch_refresh(
		    a, c, uri != NULL ? uri : a->token_uri, out, err);
	}
	if (strcmp(t, "external_account_authorized_user") == 0)
		return fetch_refresh(a, c, str(c, "token_url"), out, err);
	if (strcmp(t, "external_account") == 0)
		return fetch_external(a, c, out, err);
	if (strcmp(t, "impersonated_service_account") == 0) {
		rc = fetch_json(a,
		    cJSON_GetObjectItemCaseSensitive(c, "source_credentials"),
		    &src, err);
		if (rc == 0)
			rc = impersonate_at(a,
			    str(c, "service_account_impersonation_url"),
			    cJSON_GetObjectItemCaseSensitive(c, "delegates"),
			    src.token, out, err);
		tok_clear(&src);
		return rc;
	}
	return tpu_error(err, TPU_E_AUTH, "unsupported credentials type");
}

/*
 * GET the default service account's WHAT (token, email) from the metadata
 * server into resp (initialised here; the caller releases it).  A read:
 * also under --dry-run.
 */
static int
metadata_get(struct auth *a, const char *what, size_t max,
    struct http_response *resp, struct tpu_err *err)
{
	static const char *const hdrs[] = { "Metadata-Flavor: Google", NULL };
	struct http_request req;
	char *url;
	int rc;

	url = xasprintf("http://%s/computeMetadata/v1/instance/"
	                "service-accounts/default/%s",
	    a->metadata_host, what);
	memset(&req, 0, sizeof req);
	req.method = "GET";
	req.url = url;
	req.headers = hdrs;
	req.flags = HTTP_F_NOAUTH | HTTP_F_IDEMPOTENT | HTTP_F_NODRYRUN |
	            HTTP_F_ALLOW_HTTP | HTTP_F_NO_CONNECT_RETRY;
	req.connect_timeout_s = 2;
	req.max_attempts = 3;
	req.deadline_ms = 20000;
	req.max_response = max;
	http_response_init(resp);
	rc = http_request(a->http, &req, resp, err);
	free(url);
	return rc;
}

static int
fetch_metadata(struct auth *a, struct tok *out, struct tpu_err *err)
{
	struct http_response resp;
	int rc;

	rc = metadata_get(a, "token", TOKEN_REPLY_MAX, &resp, err);
	if (rc != 0 && resp.status == 0) {
		char *m = xstrdup(err->msg);
		struct buf tried;
		cJSON *s;

		buf_init(&tried, BUF_NOCAP);
		cJSON_ArrayForEach(s, a->chain)
		{
			buf_printf(&tried, "%s%s: %s", tried.len ? "; " : "",
			    str(s, "step"), str(s, "result"));
		}
		rc = tpu_error(err, TPU_E_AUTH,
		    "no credentials found; tried: %s: %.300s. Set "
		    "GOOGLE_APPLICATION_CREDENTIALS, run 'gcloud auth "
		    "application-default login' or pass --access-token-file",
		    tried.data, m);
		buf_release(&tried);
		free(m);
	} else if (rc != 0)
		tpu_error_prefix(err, "metadata server %s", a->metadata_host);
	else
		rc = auth_parse_token_response(resp.body.data, resp.body.len,
		    time(NULL), &out->token, &out->expiry, err);
	http_response_release(&resp);
	return rc;
}

int
auth_metadata_email(struct auth *a, char **email, struct tpu_err *err)
{
	struct http_response resp;
	size_t n;
	int rc;

	*email = NULL;
	if ((rc = resolve(a, err)) != 0)
		return rc;
	if (a->kind != CRED_METADATA)
		return tpu_error(err, TPU_E_PRECONDITION,
		    "the credentials are not the metadata server's");
	rc = metadata_get(a, "email", 1024, &resp, err);
	if (rc != 0)
		tpu_error_prefix(err, "metadata server %s", a->metadata_host);
	else {
		n = resp.body.len;
		while (n > 0 && (resp.body.data[n - 1] == '\n' ||
		                    resp.body.data[n - 1] == '\r'))
			n--;
		if (n == 0 || memchr(resp.body.data, '@', n) == NULL ||
		    strcspn(resp.body.data, " \t\r\n") < n)
			rc = tpu_error(err, TPU_E_API,
			    "metadata server %s: the default service "
			    "account's email is '%.*s', no email address",
			    a->metadata_host, (int)(n > 200 ? 200 : n),
			    resp.body.data != NULL ? resp.body.data : "");
		else
			*email = xstrndup(resp.body.data, n);
	}
	http_response_release(&resp);
	return rc;
}

/* --- cache ------------------------------------------------------------ */

static char *
cache_path(struct auth *a)
{
	struct buf id;
	unsigned char md[32];
	unsigned int mdlen = 0;
	char hex[65];
	static const char hx[] = "0123456789abcdef";
	size_t i;
	char *p = NULL;
	const cJSON *c = a->cred;

	if (a->no_cache || a->cache_dir == NULL || a->kind == CRED_TOKEN_FILE)
		return NULL;
	buf_init(&id, BUF_NOCAP);
	buf_printf(&id, "v1|scope=%s|imp=%s|", a->scope,
	    a->impersonate != NULL ? a->impersonate : "");
	if (a->kind == CRED_METADATA)
		buf_printf(&id, "metadata=%s", a->metadata_host);
	else {
		/* the identity: the whole credential file (it holds the key
		 * or refresh token, so a new key gets a new entry) */
		char *s = cJSON_PrintUnformatted(c);

		buf_puts(&id, s);
		OPENSSL_cleanse(s, strlen(s));
		cJSON_free(s);
	}
	if (EVP_Digest(id.data, id.len, md, &mdlen, EVP_sha256(), NULL) == 1) {
		for (i = 0; i < 32; i++) {
			hex[2 * i] = hx[md[i] >> 4];
			hex[2 * i + 1] = hx[md[i] & 15];
		}
		hex[64] = '\0';
		p = xasprintf("%s/%s.json", a->cache_dir, hex);
	}
	buf_release_secret(&id);
	return p;
}

static int
cache_read(struct auth *a, const char *path, struct tok *out)
{
	struct buf b;
	struct tpu_err e;
	cJSON *j = NULL;
	const cJSON *x;
	int loose = 0, rc = -1;

	tpu_err_init(&e);
	buf_init(&b, 64 << 10);
	if (fsutil_read_file(path,
	        FSUTIL_F_NOFOLLOW | FSUTIL_F_PRIVATE | FSUTIL_F_FIX, &b, &loose,
	        &e) != 0) {
		if (e.code != TPU_E_NOTFOUND)
			log_warn("token cache: %s; ignoring it", e.msg);
		goto out;
	}
	if (loose)
		log_warn("token cache '%s' was readable by group or others; "
		         "fixed to 0600",
		    path);
	(void)a;
	j = cJSON_ParseWithLength(b.data, b.len);
	x = cJSON_GetObjectItemCaseSensitive(j, "expiry");
	if (str(j, "access_token") == NULL || !cJSON_IsNumber(x))
		goto out;
	out->token = xstrdup(str(j, "access_token"));
	out->expiry = (time_t)x->valuedouble;
	rc = 0;
out:
	json_free_secret(j);
	buf_release_secret(&b);
	return rc;
}

static void
cache_write(struct auth *a, const char *path, const struct tok *t)
{
	struct tpu_err e;
	cJSON *j = cJSON_CreateObject();
	char *s;

	tpu_err_init(&e);
	cJSON_AddStringToObject(j, "access_token", t->token);
	cJSON_AddNumberToObject(j, "expiry", (double)t->expiry);
	cJSON_AddStringToObject(j, "source", a->origin);
	s = cJSON_PrintUnformatted(j);
	if (fsutil_mkdir_private(a->cache_dir, &e) != 0 ||
	    fsutil_write_atomic(path, s, strlen(s), 0600, &e) != 0)
		log_warn("token cache not written: %s", e.msg);
	OPENSSL_cleanse(s, strlen(s));
	cJSON_free(s);
	json_free_secret(j);
}

/* --- public ------------------------------------------------------------ */

static int
read_token_file(struct auth *a, struct tok *out, struct tpu_err *err)
{
	struct buf b;
	int rc, loose = 0;
	size_t s = 0;

	buf_init(&b, 64 << 10);
	if ((rc = fsutil_read_file(a->path, 0, &b, &loose, err)) != 0) {
		tpu_error_prefix(err, "access token file");
		goto out;
	}
	if (loose)
		log_warn("access token file '%s' is readable by group or "
		         "others: chmod 600 it",
		    a->path);
	while (b.len > 0 && isspace((unsigned char)b.data[b.len - 1]))
		b.data[--b.len] = '\0';
	while (s < b.len && isspace((unsigned char)b.data[s]))
		s++;
	if (b.len == s || strpbrk(b.data + s, "\r\n \t") != NULL) {
		rc = tpu_error(err, TPU_E_AUTH,
		    "access token file '%s' must hold one token on one line",
		    a->path);
		goto out;
	}
	out->token = xstrdup(b.data + s);
	out->expiry = time(NULL) + 3600;
out:
	buf_release_secret(&b);
	return rc;
}

int
auth_token(struct auth *a, int force, char **token, struct tpu_err *err)
{
	struct tok base = { NULL, 0 }, t = { NULL, 0 };
	char *cp = NULL, *url = NULL;
	time_t now = time(NULL);
	int rc;

	if ((rc = resolve(a, err)) != 0)
		return rc;
	no_dumps();
	if (!force && a->token != NULL &&
	    a->expiry - now > AUTH_REFRESH_MARGIN) {
		*token = xstrdup(a->token);
		return 0;
	}
	if (a->kind == CRED_TOKEN_FILE && a->impersonate == NULL) {
		if ((rc = read_token_file(a, &t, err)) != 0)
			goto out;
		goto keep;
	}
	cp = cache_path(a);
	if (!force && cp != NULL && cache_read(a, cp, &t) == 0) {
		if (t.expiry - now > AUTH_REFRESH_MARGIN) {
			log_debug("using the cached access token");
			goto keep;
		}
		log_debug("cached access token expires in %lld s: refreshing",
		    (long long)(t.expiry - now));
		tok_clear(&t);
	}
	if (a->kind == CRED_TOKEN_FILE)
		rc = read_token_file(a, &base, err);
	else if (a->kind == CRED_JSON)
		rc = fetch_json(a, a->cred, &base, err);
	else
		rc = fetch_metadata(a, &base, err);
	if (rc != 0)
		goto out;
	if (a->impersonate != NULL) {
		url = xasprintf("%sv1/projects/-/serviceAccounts/%s:"
		                "generateAccessToken",
		    a->iam_base, a->impersonate);
		if ((rc = impersonate_at(a, url, NULL, base.token, &t, err)) !=
		    0)
			goto out;
	} else {
		t = base;
		base.token = NULL;
	}
	if (cp != NULL)
		cache_write(a, cp, &t);
keep:
	xfree_secret(a->token);
	a->token = t.token;
	a->expiry = t.expiry;
	t.token = NULL;
	*token = xstrdup(a->token);
out:
	tok_clear(&base);
	tok_clear(&t);
	free(cp);
	free(url);
	return rc;
}

int
auth_http_token(void *arg, int force, char **token, struct tpu_err *err)
{
	return auth_token(arg, force, token, err);
}

int
auth_describe(struct auth *a, cJSON **out, struct tpu_err *err)
{
	cJSON *o;
	const char *t;
	char *cp;
	int rc;

	if ((rc = resolve(a, err)) != 0)
		return rc;
	o = cJSON_CreateObject();
	switch (a->kind) {
	case CRED_TOKEN_FILE:
		cJSON_AddStringToObject(o, "type", "access_token_file");
		break;
	case CRED_JSON:
		cJSON_AddStringToObject(o, "type", str(a->cred, "type"));
		break;
	default:
		cJSON_AddStringToObject(o, "type", "metadata_server");
		break;
	}
	cJSON_AddStringToObject(o, "source", a->origin);
	if (a->path != NULL)
		cJSON_AddStringToObject(o, "path", a->path);
	else
		cJSON_AddStringToObject(o, "metadataHost", a->metadata_host);
	if (a->kind == CRED_JSON) {
		if ((t = str(a->cred, "client_email")) != NULL)
			cJSON_AddStringToObject(o, "account", t);
		else if ((t = str(a->cred,
		              "service_account_impersonation_url")) != NULL)
			cJSON_AddStringToObject(o, "impersonationUrl", t);
		else if ((t = str(a->cred, "client_id")) != NULL)
			cJSON_AddStringToObject(o, "clientId", t);
		if ((t = str(a->cred, "audience")) != NULL)
			cJSON_AddStringToObject(o, "audience", t);
	}
	if (a->impersonate != NULL)
		cJSON_AddStringToObject(o, "impersonate", a->impersonate);
	cJSON_AddStringToObject(o, "scope", a->scope);
	cp = cache_path(a);
	if (cp != NULL) {
		struct tok tk = { NULL, 0 };

		cJSON_AddStringToObject(o, "tokenCache", cp);
		if (cache_read(a, cp, &tk) == 0) {
			cJSON_AddNumberToObject(o, "cachedTokenExpiresIn",
			    (double)(tk.expiry - time(NULL)));
			tok_clear(&tk);
		}
		free(cp);
	}
	cJSON_AddItemToObject(o, "chain", cJSON_Duplicate(a->chain, 1));
	*out = o;
	return 0;
}

int
auth_revoke(struct auth *a, int *removed, struct tpu_err *err)
{
	DIR *d;
	struct dirent *de;
	char *p;
	int rc = 0;

	*removed = 0;
	if (a->cache_dir == NULL)
		return 0;
	if ((d = opendir(a->cache_dir)) == NULL) {
		if (errno == ENOENT)
			return 0;
		return tpu_error(err, TPU_E_IO, "cannot open '%s': %s",
		    a->cache_dir, strerror(errno));
	}
	while ((de = readdir(d)) != NULL) {
		size_t n = strlen(de->d_name);

		/* only our entries: 64 hex digits + ".json" (and temps) */
		if (n < 69 || strspn(de->d_name, "0123456789abcdef") != 64 ||
		    strncmp(de->d_name + 64, ".json", 5) != 0)
			continue;
		p = xasprintf("%s/%s", a->cache_dir, de->d_name);
		if ((rc = fsutil_remove(p, err)) == 0)
			(*removed)++;
		free(p);
		if (rc != 0)
			break;
	}
	closedir(d);
	xfree_secret(a->token);
	a->token = NULL;
	return rc;
}
