/*
 * The emulator's identity side: the OAuth2 token endpoint (JWT-bearer
 * grants signed by the generated service-account key, refresh-token
 * grants), the STS token exchange for workload identity federation,
 * iamcredentials generateAccessToken for impersonation, and the GCE
 * metadata server.  On first start it writes every kind of credential file
 * a client may be given under the state dir; the secrets behind them and
 * every issued token persist across restarts under DIR/auth.
 */
#include <sys/stat.h>

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <cjson/cJSON.h>
#include <openssl/bio.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/rsa.h>

#include "buf.h"
#include "crc32c.h"
#include "emu.h"
#include "md.h"
#include "util.h"
#include "xmalloc.h"

#define AUTH_TOKEN_PREFIX "ya29.emu-"
#define AUTH_JWT_TYPE "urn:ietf:params:oauth:token-type:jwt"
#define AUTH_AT_TYPE "urn:ietf:params:oauth:token-type:access_token"
#define AUTH_GOOGLE_AUD "https://oauth2.googleapis.com/token"

struct emu_auth_token {
	char *token;
	int64_t exp_ms;
	const char *principal; /* interned: lives until emu_auth_fini */
};

struct emu_auth_state {
	char *dir;     /* DIR/auth */
	EVP_PKEY *key; /* the service account's RSA key */
	char *pub_pem;
	char *key_id;
	char *email;
	char *sa_client_id;
	char *client_id; /* authorized_user */
	char *client_secret;
	char *refresh_token;
	char *subject_token;
	char *audience;
	char *number; /* project number */
	struct emu_auth_token *tokens;
	size_t ntokens;
	char **principals;
	size_t nprincipals;
};

static struct emu_auth_state *
A(struct emu *e)
{
	return e->auth;
}

/* ---- base64url ---- */

/* A base64 or base64url character's value (clients send either), or -1. */
static int
b64val(int c)
{
	int v = tpu_b64_value((unsigned char)c, TPU_B64_URL);

	return v >= 0 ? v : tpu_b64_value((unsigned char)c, 0);
}

/* Decode n chars of base64url (padding optional); NULL when invalid. */
static unsigned char *
b64url_decode(const char *s, size_t n, size_t *outlen)
{
	unsigned char *out;
	uint32_t acc = 0;
	size_t i, o = 0;
	int bits = 0, v;

	while (n > 0 && s[n - 1] == '=')
		n--;
	if (n % 4 == 1)
		return NULL;
	out = xmalloc(n * 3 / 4 + 1);
	for (i = 0; i < n; i++) {
		if ((v = b64val((unsigned char)s[i])) < 0) {
			free(out);
			return NULL;
		}
		acc = (acc << 6) | (uint32_t)v;
		bits += 6;
		if (bits >= 8) {
			bits -= 8;
			out[o++] = (unsigned char)(acc >> bits);
		}
	}
	out[o] = '\0';
	*outlen = o;
	return out;
}

/* ---- JWT verification ---- */

static cJSON *
jwt_part(const char *s, size_t n)
{
	unsigned char *raw;
	const char *end = NULL;
	size_t len;
	cJSON *j;

	if ((raw = b64url_decode(s, n, &len)) == NULL)
		return NULL;
	j = cJSON_ParseWithLengthOpts((const char *)raw, len, &end, 0);
	if (j != NULL && end != NULL)
		while (end < (const char *)raw + len &&
		       isspace((unsigned char)*end))
			end++;
	if (j != NULL &&
	    (end != (const char *)raw + len || !cJSON_IsObject(j))) {
		cJSON_Delete(j);
		j = NULL;
	}
	free(raw);
	return j;
}

static int
verify_rs256(const char *pem, const char *data, size_t n,
    const unsigned char *sig, size_t siglen)
{
	BIO *b = BIO_new_mem_buf(pem, -1);
	EVP_PKEY *k = NULL;
	EVP_MD_CTX *md = NULL;
	int ok = 0;

	if (b == NULL)
		goto out;
	k = PEM_read_bio_PUBKEY(b, NULL, NULL, NULL);
	if (k == NULL || EVP_PKEY_base_id(k) != EVP_PKEY_RSA)
		goto out;
	md = EVP_MD_CTX_new();
	if (md == NULL ||
	    EVP_DigestVerifyInit(md, NULL, EVP_sha256(), NULL, k) != 1)
		goto out;
	ok = EVP_DigestVerify(
	         md, sig, siglen, (const unsigned char *)data, n) == 1;
out:
	EVP_MD_CTX_free(md);
	EVP_PKEY_free(k);
	BIO_free(b);
	return ok;
}

static const char *
jstr(const cJSON *o, const char *k)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);

	return cJSON_IsString(v) ? v->valuestring : NULL;
}

int
emu_auth_jwt_verify(const char *jwt, const char *pub_pem, const char *kid,
    const char *iss, const char *aud, const char *aud2, int64_t now,
    char *errbuf, size_t errlen)
{
	const char *d1, *d2, *v;
	cJSON *hdr = NULL, *pl = NULL;
	const cJSON *iat, *exp;
	unsigned char *sig = NULL;
	size_t siglen;
	int rc = -1;

	d1 = strchr(jwt, '.');
	d2 = d1 != NULL ? strchr(d1 + 1, '.') : NULL;
	if (d1 == NULL || d2 == NULL || strchr(d2 + 1, '.') != NULL) {
		snprintf(errbuf, errlen, "Invalid JWT: not three parts.");
		goto out;
	}
	hdr = jwt_part(jwt, (size_t)(d1 - jwt));
	pl = jwt_part(d1 + 1, (size_t)(d2 - d1 - 1));
	sig = b64url_decode(d2 + 1, strlen(d2 + 1), &siglen);
	if (hdr == NULL || pl == NULL || sig == NULL) {
		snprintf(errbuf, errlen, "Invalid JWT: cannot decode it.");
		goto out;
	}
	if ((v = jstr(hdr, "alg")) == NULL || strcmp(v, "RS256") != 0) {
		snprintf(errbuf, errlen,
		    "Invalid JWT: the algorithm must be RS256.");
		goto out;
	}
	if ((v = jstr(hdr, "kid")) != NULL && kid != NULL &&
	    strcmp(v, kid) != 0) {
		snprintf(
		    errbuf, errlen, "Invalid JWT Signature: unknown key id.");
		goto out;
	}
	if (!verify_rs256(pub_pem, jwt, (size_t)(d2 - jwt), sig, siglen)) {
		snprintf(errbuf, errlen, "Invalid JWT Signature.");
		goto out;
	}
	if ((v = jstr(pl, "iss")) == NULL || strcmp(v, iss) != 0) {
		snprintf(errbuf, errlen, "Invalid JWT: unknown issuer.");
		goto out;
	}
	if ((v = jstr(pl, "aud")) == NULL ||
	    (strcmp(v, aud) != 0 && (aud2 == NULL || strcmp(v, aud2) != 0))) {
		snprintf(errbuf, errlen,
		    "Invalid JWT: the audience must be the token URI.");
		goto out;
	}
	iat = cJSON_GetObjectItemCaseSensitive(pl, "iat");
	exp = cJSON_GetObjectItemCaseSensitive(pl, "exp");
	if (!cJSON_IsNumber(iat) || !cJSON_IsNumber(exp) ||
	    exp->valuedouble - iat->valuedouble > 3600 ||
	    exp->valuedouble <= iat->valuedouble ||
	    (double)now < iat->valuedouble - 300 ||
	    (double)now > exp->valuedouble) {
		snprintf(errbuf, errlen,
		    "Invalid JWT: Token must be a short-lived token (60 "
		    "minutes) and in a reasonable timeframe. Check your iat "
		    "and exp values in the JWT claim.");
		goto out;
	}
	if ((v = jstr(pl, "scope")) == NULL || *v == '\0') {
		snprintf(errbuf, errlen, "Empty or missing scope not allowed.");
		rc = -2;
		goto out;
	}
	rc = 0;
out:
	cJSON_Delete(hdr);
	cJSON_Delete(pl);
	free(sig);
	return rc;
}

/* ---- tokens ---- */

static const char *
intern(struct emu_auth_state *s, const char *p)
{
	size_t i;

	for (i = 0; i < s->nprincipals; i++)
		if (strcmp(s->principals[i], p) == 0)
			return s->principals[i];
	s->principals =
	    xreallocarray(s->principals, s->nprincipals + 1, sizeof(char *));
	s->principals[s->nprincipals] = xstrdup(p);
	return s->principals[s->nprincipals++];
}

static void
tokens_save(struct emu_auth_state *s)
{
	cJSON *arr = cJSON_CreateArray(), *o;
	char *text, *path;
	size_t i;

	for (i = 0; i < s->ntokens; i++) {
		o = cJSON_CreateObject();
		cJSON_AddStringToObject(o, "token", s->tokens[i].token);
		cJSON_AddNumberToObject(
		    o, "exp_ms", (double)s->tokens[i].exp_ms);
		cJSON_AddStringToObject(o, "principal", s->tokens[i].principal);
		cJSON_AddItemToArray(arr, o);
	}
	text = cJSON_Print(arr);
	path = xasprintf("%s/tokens.json", s->dir);
	if (text != NULL && emu_write_file(path, text, strlen(text), 0600) != 0)
		fprintf(stderr, "tpuctl-emulator: cannot write '%s': %s\n",
		    path, strerror(errno));
	if (text != NULL)
		OPENSSL_cleanse(text, strlen(text));
	cJSON_free(text);
	cJSON_Delete(arr);
	free(path);
}

static void
tokens_add(struct emu_auth_state *s, const char *tok, int64_t exp_ms,
    const char *principal)
{
	s->tokens =
	    xreallocarray(s->tokens, s->ntokens + 1, sizeof(*s->tokens));
	s->tokens[s->ntokens].token = xstrdup(tok);
	s->tokens[s->ntokens].exp_ms = exp_ms;
	s->tokens[s->ntokens].principal = intern(s, principal);
	s->ntokens++;
}

/* Issue a token for principal, valid ttl_s; borrowed until the next call. */
static const char *
token_issue(struct emu *e, const char *principal, long long ttl_s)
{
	struct emu_auth_state *s = A(e);
	char hex[49], tok[80];
	int64_t now = emu_wall_ms();
	size_t i, o = 0;

	/* Drop the expired ones first. */
	for (i = 0; i < s->ntokens; i++) {
		if (s->tokens[i].exp_ms <= now)
			xfree_secret(s->tokens[i].token);
		else
			s->tokens[o++] = s->tokens[i];
	}
	s->ntokens = o;
	emu_random_hex(hex, 48);
	snprintf(tok, sizeof(tok), AUTH_TOKEN_PREFIX "%s", hex);
	tokens_add(s, tok, now + ttl_s * 1000, principal);
	tokens_save(s);
	OPENSSL_cleanse(tok, sizeof(tok));
	return s->tokens[s->ntokens - 1].token;
}

static const struct emu_auth_token *
token_find(struct emu_auth_state *s, const char *tok)
{
	size_t i;

	for (i = 0; i < s->ntokens; i++)
		if (strcmp(s->tokens[i].token, tok) == 0)
			return &s->tokens[i];
	return NULL;
}

static long long
token_ttl(struct emu *e)
{
	long long t = emu_opt_int(e, "auth.token_ttl_s", 3599);

	return t < 1 ? 1 : t;
}

/* ---- replies ---- */

static int
oauth_error(struct emu_req *r, int status, const char *error, const char *desc)
{
	cJSON *o = cJSON_CreateObject();

	cJSON_AddStringToObject(o, "error", error);
	cJSON_AddStringToObject(o, "error_description", desc);
	return emu_reply_json(r, status, o);
}

static int
token_reply(
    struct emu *e, struct emu_req *r, const char *principal, const char *scope)
{
	cJSON *o = cJSON_CreateObject();
	long long ttl = token_ttl(e);

	cJSON_AddStringToObject(
	    o, "access_token", token_issue(e, principal, ttl));
	cJSON_AddNumberToObject(o, "expires_in", (double)ttl);
	if (scope != NULL)
		cJSON_AddStringToObject(o, "scope", scope);
	cJSON_AddStringToObject(o, "token_type", "Bearer");
	emu_add_header(r, "Cache-Control", "no-cache, no-store, max-age=0");
	return emu_reply_json(r, 200, o);
}

/* A request parameter from a form or JSON body; the caller frees. */
static char *
param(struct emu_req *r, const char *key)
{
	const char *ct = emu_header(r, "Content-Type");
	const char *v;
	cJSON *j;
	char *out = NULL;

	if (ct != NULL && strncasecmp(ct, "application/json", 16) == 0) {
		j = cJSON_ParseWithLength(r->body, r->body_len);
		v = jstr(j, key);
		if (v != NULL)
			out = xstrdup(v);
		cJSON_Delete(j);
		return out;
	}
	return emu_form_get(r->body, r->body_len, key);
}

/*
 * The common front of the POST-only token endpoints: 404 unless
 * path_ok, 405 unless POST. 0 to go on, -1 when answered.
 */
static int
post_only(struct emu_req *r, int path_ok)
{
	if (!path_ok) {
		emu_reply_error(r, 404, "NOT_FOUND",
		    "The requested URL %s was not found on this server.",
		    r->path);
		return -1;
	}
	if (strcmp(r->method, "POST") == 0)
		return 0;
	emu_add_header(r, "Allow", "POST");
	emu_reply_error(r, 405, "INVALID_ARGUMENT",
	    "Method %s is not allowed on %s; use POST.", r->method, r->path);
	return -1;
}

static int
streq_secret(const char *a, const char *b)
{
	size_t n;

	if (a == NULL || b == NULL || (n = strlen(a)) != strlen(b))
		return 0;
	return CRYPTO_memcmp(a, b, n) == 0;
}

/* HTTP Basic client credentials, when the form has none. */
static void
basic_client(struct emu_req *r, char **id, char **secret)
{
	const char *h = emu_header(r, "Authorization");
	unsigned char *raw;
	size_t n;
	char *colon;

	if (h == NULL || strncasecmp(h, "Basic ", 6) != 0)
		return;
	raw = b64url_decode(h + 6, strlen(h + 6), &n);
	if (raw == NULL)
		return;
	colon = strchr((char *)raw, ':');
	if (colon != NULL) {
		*colon = '\0';
		free(*id);
		free(*secret);
		*id = xstrdup((char *)raw);
		*secret = xstrdup(colon + 1);
	}
	OPENSSL_cleanse(raw, n);
	free(raw);
}

/* ---- POST /token ---- */

static int
grant_jwt(struct emu *e, struct emu_req *r)
{
	struct emu_auth_state *s = A(e);
	char *assertion = param(r, "assertion"), *aud, errbuf[256];
	const char *d1, *d2;
	cJSON *pl;
	char *scope = NULL;
	int rc;

	if (assertion == NULL) {
		rc = oauth_error(r, 400, "invalid_request",
		    "Missing required parameter: assertion");
		goto out;
	}
	aud = xasprintf("%s/token", e->base_url);
	rc = emu_auth_jwt_verify(assertion, s->pub_pem, s->key_id, s->email,
	    aud, AUTH_GOOGLE_AUD, emu_wall_ms() / 1000, errbuf, sizeof(errbuf));
	free(aud);
	if (rc != 0) {
		rc = oauth_error(r, 400,
		    rc == -2 ? "invalid_scope" : "invalid_grant", errbuf);
		goto out;
	}
	d1 = strchr(assertion, '.');
	d2 = strchr(d1 + 1, '.');
	pl = jwt_part(d1 + 1, (size_t)(d2 - d1 - 1));
	if (jstr(pl, "scope") != NULL)
		scope = xstrdup(jstr(pl, "scope"));
	cJSON_Delete(pl);
	rc = token_reply(e, r, s->email, scope);
out:
	free(scope);
	xfree_secret(assertion);
	return rc;
}

static int
grant_refresh(struct emu *e, struct emu_req *r)
{
	struct emu_auth_state *s = A(e);
	char *id = param(r, "client_id"), *secret = param(r, "client_secret");
	char *rt = param(r, "refresh_token"), *scope = param(r, "scope");
	char *principal;
	int rc;

	if (id == NULL)
		basic_client(r, &id, &secret);
	if (!streq_secret(id, s->client_id) ||
	    !streq_secret(secret, s->client_secret)) {
		rc = oauth_error(r, 401, "invalid_client",
		    "The OAuth client was not found.");
		goto out;
	}
	if (!streq_secret(rt, s->refresh_token)) {
		rc = oauth_error(r, 400, "invalid_grant", "Bad Request");
		goto out;
	}
	principal = xasprintf("user:emu-user@%s.example.com", e->project);
	rc = token_reply(e, r, principal, scope);
	free(principal);
out:
	free(id);
	xfree_secret(secret);
	xfree_secret(rt);
	free(scope);
	return rc;
}

static int
emu_auth_token(struct emu *e, struct emu_req *r)
{
	char *gt;
	int rc;

	if (post_only(r, strcmp(r->path, "/token") == 0) != 0)
		return 0;
	gt = param(r, "grant_type");
	if (gt == NULL)
		rc = oauth_error(r, 400, "invalid_request",
		    "Missing required parameter: grant_type");
	else if (strcmp(gt, "urn:ietf:params:oauth:grant-type:jwt-bearer") == 0)
		rc = grant_jwt(e, r);
	else if (strcmp(gt, "refresh_token") == 0)
		rc = grant_refresh(e, r);
	else {
		char *d = xasprintf("Invalid grant_type: %s", gt);

		rc = oauth_error(r, 400, "unsupported_grant_type", d);
		free(d);
	}
	free(gt);
	return rc;
}

/* ---- POST /v1/token (STS) ---- */

static int
emu_auth_sts(struct emu *e, struct emu_req *r)
{
	struct emu_auth_state *s = A(e);
	char *gt = NULL, *aud = NULL, *stt = NULL, *st = NULL, *principal;
	cJSON *o;
	long long ttl = token_ttl(e);
	int rc;

	if (post_only(r, strcmp(r->path, "/v1/token") == 0) != 0)
		return 0;
	gt = param(r, "grant_type");
	aud = param(r, "audience");
	stt = param(r, "subject_token_type");
	st = param(r, "subject_token");
	if (gt == NULL ||
	    strcmp(gt, "urn:ietf:params:oauth:grant-type:token-exchange") !=
	        0) {
		rc = oauth_error(r, 400, "unsupported_grant_type",
		    "Invalid value for \"grant_type\": expected "
		    "urn:ietf:params:oauth:grant-type:token-exchange.");
		goto out;
	}
	if (aud == NULL || strcmp(aud, s->audience) != 0) {
		rc = oauth_error(r, 400, "invalid_target",
		    "The target service indicated by the \"audience\" "
		    "parameters is invalid. This might either be because the "
		    "pool or provider is disabled or deleted or because it "
		    "doesn't exist.");
		goto out;
	}
	if (stt == NULL ||
	    (strcmp(stt, AUTH_JWT_TYPE) != 0 &&
	        strcmp(stt, "urn:ietf:params:oauth:token-type:id_token") !=
	            0)) {
		rc = oauth_error(r, 400, "invalid_request",
		    "Invalid value for \"subject_token_type\".");
		goto out;
	}
	if (!streq_secret(st, s->subject_token)) {
		rc = oauth_error(r, 400, "invalid_grant",
		    "The provided subject token is invalid.");
		goto out;
	}
	principal = xasprintf("principal://iam.googleapis.com/projects/%s/"
	                      "locations/global/workloadIdentityPools/emu-pool/"
	                      "subject/emu-ci",
	    s->number);
	o = cJSON_CreateObject();
	cJSON_AddStringToObject(
	    o, "access_token", token_issue(e, principal, ttl));
	cJSON_AddStringToObject(o, "issued_token_type", AUTH_AT_TYPE);
	cJSON_AddStringToObject(o, "token_type", "Bearer");
	cJSON_AddNumberToObject(o, "expires_in", (double)ttl);
	free(principal);
	rc = emu_reply_json(r, 200, o);
out:
	free(gt);
	free(aud);
	free(stt);
	xfree_secret(st);
	return rc;
}

/* ---- POST /v1/projects/-/serviceAccounts/EMAIL:generateAccessToken ---- */

static int
emu_auth_iam(struct emu *e, struct emu_req *r)
{
	struct emu_auth_state *s = A(e);
	const char *p = r->path + strlen("/v1/projects/-/serviceAccounts/");
	const char *colon = strrchr(p, ':'), *lt;
	const cJSON *scope;
	cJSON *body, *o;
	char ts[64], *email;
	long long ttl = 3600;
	const char *errstr;
	int rc;

	if (post_only(r, colon != NULL &&
	                     strcmp(colon, ":generateAccessToken") == 0) != 0)
		return 0;
	email = xstrndup(p, (size_t)(colon - p));
	if ((body = emu_body_json(e, r)) == NULL) {
		free(email);
		return 0;
	}
	if (strcmp(email, s->email) != 0) {
		rc = emu_reply_error(r, 404, "NOT_FOUND",
		    "Not found; Gaia id not found for email %s", email);
		goto out;
	}
	scope = cJSON_GetObjectItemCaseSensitive(body, "scope");
	if (!cJSON_IsArray(scope) || cJSON_GetArraySize(scope) == 0) {
		rc = emu_reply_error(
		    r, 400, "INVALID_ARGUMENT", "Scope required.");
		goto out;
	}
	if ((lt = jstr(body, "lifetime")) != NULL) {
		char num[32];
		size_t n = strlen(lt);

		if (n < 2 || n > 20 || lt[n - 1] != 's')
			errstr = "invalid";
		else {
			snprintf(num, sizeof(num), "%.*s", (int)(n - 1), lt);
			ttl = tpu_strtonum(num, 1, 43200, &errstr);
		}
		if (errstr != NULL) {
			rc = emu_reply_error(r, 400, "INVALID_ARGUMENT",
			    "Invalid lifetime '%s': expected a duration like "
			    "\"3600s\" (1 to 43200 seconds).",
			    lt);
			goto out;
		}
	}
	o = cJSON_CreateObject();
	cJSON_AddStringToObject(
	    o, "accessToken", token_issue(e, s->email, ttl));
	emu_rfc3339(ts, sizeof(ts), emu_wall_ms() + ttl * 1000);
	/* Google sends whole seconds here: 2024-01-01T00:00:00Z. */
	snprintf(ts + 19, sizeof(ts) - 19, "Z");
	cJSON_AddStringToObject(o, "expireTime", ts);
	rc = emu_reply_json(r, 200, o);
out:
	cJSON_Delete(body);
	free(email);
	return rc;
}

/* ---- the metadata server ---- */

static int
md_text(struct emu_req *r, const char *text)
{
	emu_add_header(r, "Metadata-Flavor", "Google");
	return emu_reply_data(r, 200, "application/text", text, strlen(text));
}

static int
md_not_found(struct emu_req *r)
{
	static const char msg[] = "Not Found\n";

	emu_add_header(r, "Metadata-Flavor", "Google");
	return emu_reply_data(
	    r, 404, "text/html; charset=UTF-8", msg, sizeof(msg) - 1);
}

static int
md_flavor_ok(struct emu_req *r)
{
	const char *h = emu_header(r, "Metadata-Flavor");
	static const char msg[] = "Missing required header: Metadata-Flavor\n";

	if (h != NULL && strcmp(h, "Google") == 0)
		return 1;
	emu_add_header(r, "Metadata-Flavor", "Google");
	emu_reply_data(
	    r, 403, "text/html; charset=UTF-8", msg, sizeof(msg) - 1);
	return 0;
}

/*
 * Who asks: the host (the main address, worker -1) or worker w of a node,
 * told by the address the request was sent to (emu_req_worker), never by
 * a header.  view is the node's metadata view (tpu_md_view).
 */
struct md_ctx {
	struct emu *e;
	struct emu_req *r;
	int worker;
	char node[512];
	cJSON *view;
	const char **addrs;
	struct emu_md_worker mw;
	char name[EMU_MD_NAME_MAX];
	char id[EMU_MD_NAME_MAX];
};

static void
md_ctx_init(struct md_ctx *m, struct emu *e, struct emu_req *r)
{
	const cJSON *a, *it;
	int n = 0;

	memset(m, 0, sizeof(*m));
	m->e = e;
	m->r = r;
	m->worker = emu_req_worker(r, m->node, sizeof(m->node));
	if (m->worker >= 0 && (m->view = tpu_md_view(e, m->node)) == NULL)
		m->worker = -2; /* the node went away meanwhile */
	if (m->worker < 0) {
		emu_md_instance_id("host", e->project, 0, m->id, sizeof(m->id));
		snprintf(m->name, sizeof(m->name), "tpuctl-emu");
		return;
	}
	a = cJSON_GetObjectItemCaseSensitive(m->view, "addrs");
	m->addrs = xcalloc((size_t)cJSON_GetArraySize(a) + 1, sizeof(char *));
	cJSON_ArrayForEach(it, a) m->addrs[n++] = it->valuestring;
	m->mw.node_key = m->node;
	m->mw.node_id = jstr(m->view, "id");
	m->mw.accel = jstr(m->view, "accel");
	m->mw.topology = jstr(m->view, "topology");
	m->mw.zone = jstr(m->view, "zone");
	m->mw.worker = m->worker;
	m->mw.nworkers = n;
	m->mw.addrs = m->addrs;
	m->mw.nslices = (int)cJSON_GetNumberValue(
	    cJSON_GetObjectItemCaseSensitive(m->view, "slices"));
	m->mw.slice = (int)cJSON_GetNumberValue(
	    cJSON_GetObjectItemCaseSensitive(m->view, "slice"));
	m->mw.coordinator = jstr(m->view, "coordinator");
	emu_md_hostname(
	    m->node, m->mw.node_id, m->worker, m->name, sizeof(m->name));
	emu_md_instance_id(
	    m->node, m->mw.node_id, m->worker, m->id, sizeof(m->id));
}

static void
md_ctx_release(struct md_ctx *m)
{
	cJSON_Delete(m->view);
	free(m->addrs);
}

/* The worker's own attributes, sorted by key: a new object of strings. */
static cJSON *
md_attributes(struct md_ctx *m)
{
	cJSON *o = cJSON_CreateObject(), *sorted;
	const cJSON *it;
	char num[16];

	if (m->worker < 0)
		return o;
	cJSON_ArrayForEach(
	    it, cJSON_GetObjectItemCaseSensitive(m->view, "metadata"))
	{
		if (cJSON_IsString(it) && it->string != NULL)
			cJSON_AddStringToObject(o, it->string, it->valuestring);
	}
	/* The TPU agent's own keys win over user keys of the same name. */
	cJSON_DeleteItemFromObjectCaseSensitive(o, "accelerator-type");
	cJSON_DeleteItemFromObjectCaseSensitive(o, "agent-worker-number");
	cJSON_DeleteItemFromObjectCaseSensitive(o, "tpu-env");
	cJSON_DeleteItemFromObjectCaseSensitive(o, "worker-network-endpoints");
	cJSON_AddStringToObject(o, "accelerator-type", m->mw.accel);
	snprintf(num, sizeof(num), "%d", m->worker);
	cJSON_AddStringToObject(o, "agent-worker-number", num);
	{
		char *env = emu_md_tpu_env(&m->mw);

		cJSON_AddStringToObject(o, "tpu-env", env);
		free(env);
	}
	{
		char *ep = emu_md_endpoints(&m->mw);

		cJSON_AddStringToObject(o, "worker-network-endpoints", ep);
		free(ep);
	}
	/* Sorted, as the metadata server lists them. */
	sorted = cJSON_CreateObject();
	while (o->child != NULL) {
		cJSON *min = o->child, *x;

		for (x = o->child; x != NULL; x = x->next)
			if (strcmp(x->string, min->string) < 0)
				min = x;
		cJSON_DetachItemViaPointer(o, min);
		cJSON_AddItemToObject(sorted, min->string, min);
	}
	cJSON_Delete(o);
	return sorted;
}

/* A leaf of instance/ (no trailing slash): a new string, or NULL. */
static char *
md_instance_leaf(struct md_ctx *m, const char *p)
{
	struct emu_auth_state *s = A(m->e);
	const char *zone = m->worker >= 0 ? m->mw.zone : m->e->zone;
	char project[128] = "";

	if (strcmp(p, "zone") == 0)
		return xasprintf("projects/%s/zones/%s", s->number, zone);
	if (strcmp(p, "id") == 0)
		return xstrdup(m->id);
	if (strcmp(p, "name") == 0)
		return xstrdup(m->name);
	if (strcmp(p, "hostname") == 0) {
		if (m->worker < 0)
			return xstrdup("tpuctl-emu.internal");
		sscanf(m->node, "projects/%127[^/]", project);
		return xasprintf("%s.%s.c.%s.internal", m->name, zone, project);
	}
	if (strcmp(p, "network-interfaces/0/ip") == 0)
		return xstrdup(
		    m->worker >= 0 ? m->addrs[m->worker] : "127.0.0.1");
	if (strcmp(p, "preempted") == 0)
		return xstrdup(
		    m->worker >= 0 &&
		            cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(
		                m->view, "preempted"))
		        ? "TRUE"
		        : "FALSE");
	if (strcmp(p, "maintenance-event") == 0)
		return xstrdup(
		    m->worker >= 0 ? jstr(m->view, "maintenance") : "NONE");
	return NULL;
}

static const char *const md_instance_keys[] = { "hostname", "id",
	"maintenance-event", "name", "preempted", "zone" };

/* instance/?recursive=true, with the server's camelCase keys. */
static cJSON *
md_instance_json(struct md_ctx *m)
{
	struct emu_auth_state *s = A(m->e);
	cJSON *o = cJSON_CreateObject(), *nics, *nic, *sas, *sa, *sc;
	char *v;
	size_t i;

	cJSON_AddItemToObject(o, "attributes", md_attributes(m));
	for (i = 0; i < nitems(md_instance_keys); i++) {
		v = md_instance_leaf(m, md_instance_keys[i]);
		if (strcmp(md_instance_keys[i], "id") == 0)
			/* 19 digits: more than a double keeps */
			cJSON_AddRawToObject(o, "id", v);
		else if (strcmp(md_instance_keys[i], "maintenance-event") == 0)
			cJSON_AddStringToObject(o, "maintenanceEvent", v);
		else
			cJSON_AddStringToObject(o, md_instance_keys[i], v);
		free(v);
	}
	nics = cJSON_AddArrayToObject(o, "networkInterfaces");
	nic = cJSON_CreateObject();
	v = md_instance_leaf(m, "network-interfaces/0/ip");
	cJSON_AddStringToObject(nic, "ip", v);
	free(v);
	cJSON_AddItemToArray(nics, nic);
	sas = cJSON_AddObjectToObject(o, "serviceAccounts");
	for (i = 0; i < 2; i++) {
		sa =
		    cJSON_AddObjectToObject(sas, i == 0 ? "default" : s->email);
		sc = cJSON_AddArrayToObject(sa, "aliases");
		cJSON_AddItemToArray(sc, cJSON_CreateString("default"));
		cJSON_AddStringToObject(sa, "email", s->email);
		sc = cJSON_AddArrayToObject(sa, "scopes");
		cJSON_AddItemToArray(
		    sc, cJSON_CreateString(
		            "https://www.googleapis.com/auth/cloud-platform"));
	}
	return o;
}

/* The listing of a JSON object's keys, "dir/" for the objects. */
static char *
md_listing(const cJSON *o)
{
	const cJSON *it;
	struct buf b;

	buf_init(&b, BUF_NOCAP);
	cJSON_ArrayForEach(it, o) buf_printf(&b, "%s%s\n", it->string,
	    cJSON_IsObject(it) || cJSON_IsArray(it) ? "/" : "");
	buf_puts(&b, "");
	return buf_detach(&b, NULL);
}

/*
 * The value at p (after "instance/"): text, or JSON (*json set) for a
 * directory asked with recursive=true.  NULL when there is none.
 */
static char *
md_instance_value(struct md_ctx *m, const char *p, int recursive, int *json)
{
	cJSON *o;
	char *out = NULL, *t;

	*json = 0;
	if ((out = md_instance_leaf(m, p)) != NULL)
		return out;
	if (tpu_startswith(p, "attributes/")) {
		const cJSON *it;

		o = md_attributes(m);
		p += strlen("attributes/");
		if (*p == '\0') {
			if (recursive) {
				*json = 1;
				t = cJSON_PrintUnformatted(o);
				out = xstrdup(t);
				cJSON_free(t);
			} else
				out = md_listing(o);
		} else if ((it = cJSON_GetObjectItemCaseSensitive(o, p)) !=
		           NULL)
			out = xstrdup(it->valuestring);
		cJSON_Delete(o);
		return out;
	}
	if (strcmp(p, "") == 0 || strcmp(p, "network-interfaces/") == 0 ||
	    strcmp(p, "network-interfaces/0/") == 0) {
		o = md_instance_json(m);
		if (*p != '\0') {
			cJSON *nic =
			    cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(
			                           o, "networkInterfaces"),
			        0);

			if (strcmp(p, "network-interfaces/") == 0) {
				out =
				    recursive
				        ? cJSON_PrintUnformatted(
				              cJSON_GetObjectItemCaseSensitive(
				                  o, "networkInterfaces"))
				        : xstrdup("0/\n");
			} else {
				out = recursive ? cJSON_PrintUnformatted(nic)
				                : xstrdup("ip\n");
			}
			*json = recursive;
		} else if (recursive) {
			*json = 1;
			out = cJSON_PrintUnformatted(o);
		} else {
			out = xstrdup("attributes/\nhostname\nid\n"
			              "maintenance-event\nname\n"
			              "network-interfaces/\npreempted\n"
			              "service-accounts/\nzone\n");
		}
		if (*json) {
			t = xstrdup(out);
			cJSON_free(out);
			out = t;
		}
		cJSON_Delete(o);
	}
	return out;
}

/* A 16-hex ETag of a value (the real server's are 16 hex digits too). */
static void
md_etag(const char *v, char *out, size_t len)
{
	uint32_t a = crc32c_update(0, v, strlen(v));
	uint32_t b = crc32c_update(a ^ 0x5bd1e995u, v, strlen(v));

	snprintf(out, len, "%08x%08x", (unsigned)a, (unsigned)b);
}

/*
 * Reply with v (consumed), honouring wait_for_change=true, last_etag
 * and timeout_sec: a request whose value still has the ETag it waits on
 * is parked (emu_req_wait) until a change or the timeout.
 */
static int
md_value_reply(struct emu *e, struct emu_req *r, char *v, int json)
{
	const char *w = emu_query(r, "wait_for_change");
	const char *last = emu_query(r, "last_etag");
	const char *ts = emu_query(r, "timeout_sec"), *errstr;
	char etag[32];
	const char *base;
	int64_t now = tpu_now_ms(), until;
	long long secs = 3600;
	int rc;

	(void)e;
	md_etag(v, etag, sizeof(etag));
	if (w != NULL && strcasecmp(w, "true") == 0) {
		if (ts != NULL) {
			secs = tpu_strtonum(ts, 1, 86400, &errstr);
			if (errstr != NULL) {
				static const char msg[] =
				    "Invalid value for timeout_sec\n";

				free(v);
				emu_add_header(r, "Metadata-Flavor", "Google");
				return emu_reply_data(r, 400,
				    "text/html; charset=UTF-8", msg,
				    sizeof(msg) - 1);
			}
		}
		base = r->wait_etag[0] != '\0' ? r->wait_etag
		       : last != NULL          ? last
		                               : etag;
		until = r->wait_until_ms != 0 ? r->wait_until_ms
		                              : now + secs * 1000;
		if (strcmp(base, etag) == 0 && now < until) {
			free(v);
			return emu_req_wait(r, base, until);
		}
	}
	emu_add_header(r, "Metadata-Flavor", "Google");
	emu_add_header(r, "ETag", etag);
	rc = emu_reply_data(r, 200,
	    json ? "application/json" : "application/text", v, strlen(v));
	free(v);
	return rc;
}

static int
emu_auth_metadata(struct emu *e, struct emu_req *r)
{
	struct emu_auth_state *s = A(e);
	struct md_ctx m;
	const char *p = r->path, *rec;
	char *v = NULL, buf[512];
	int json = 0, rc;

	if (!md_flavor_ok(r))
		return 0;
	if (strcmp(r->method, "GET") != 0)
		return md_not_found(r);
	if (!tpu_startswith(p, "/computeMetadata/v1/"))
		return md_not_found(r);
	p += strlen("/computeMetadata/v1/");
	if (*p == '\0')
		return md_text(r, "instance/\nproject/\n");
	if (strcmp(p, "project/project-id") == 0)
		return md_text(r, e->project);
	if (strcmp(p, "project/numeric-project-id") == 0)
		return md_text(r, s->number);
	if (strcmp(p, "instance/service-accounts/") == 0) {
		snprintf(buf, sizeof(buf), "default/\n%s/\n", s->email);
		return md_text(r, buf);
	}
	if (tpu_startswith(p, "instance/service-accounts/")) {
		const char *acct = p + strlen("instance/service-accounts/");
		const char *slash = strchr(acct, '/');
		size_t n = slash != NULL ? (size_t)(slash - acct) : 0;

		if (slash == NULL ||
		    !((n == 7 && strncmp(acct, "default", 7) == 0) ||
		        (n == strlen(s->email) &&
		            strncmp(acct, s->email, n) == 0)))
			return md_not_found(r);
		if (strcmp(slash, "/email") == 0)
			return md_text(r, s->email);
		if (strcmp(slash, "/scopes") == 0)
			return md_text(r,
			    "https://www.googleapis.com/auth/cloud-platform\n");
		if (strcmp(slash, "/aliases") == 0)
			return md_text(r, "default\n");
		if (strcmp(slash, "/") == 0)
			return md_text(r, "aliases\nemail\nscopes\ntoken\n");
		if (strcmp(slash, "/token") == 0) {
			emu_add_header(r, "Metadata-Flavor", "Google");
			return token_reply(e, r, s->email, NULL);
		}
		return md_not_found(r);
	}
	if (!tpu_startswith(p, "instance/"))
		return md_not_found(r);
	rec = emu_query(r, "recursive");
	md_ctx_init(&m, e, r);
	if (m.worker == -2) {
		/* The VM is gone: what a waiting client of it would see. */
		md_ctx_release(&m);
		return emu_reply_error(
		    r, 503, "UNAVAILABLE", "The instance was deleted.");
	}
	v = md_instance_value(&m, p + strlen("instance/"),
	    rec != NULL && strcasecmp(rec, "true") == 0, &json);
	md_ctx_release(&m);
	if (v == NULL)
		return md_not_found(r);
	rc = md_value_reply(e, r, v, json);
	return rc;
}

int
emu_auth_root(struct emu *e, struct emu_req *r)
{
	(void)e;
	if (!md_flavor_ok(r))
		return 0;
	return md_text(r, "ok");
}

/* ---- the auth check for EMU_R_AUTH routes ---- */

static int
unauthenticated(struct emu_req *r, const char *msg)
{
	emu_add_header(r, "WWW-Authenticate",
	    "Bearer realm=\"https://accounts.google.com/\"");
	return emu_reply_error(r, 401, "UNAUTHENTICATED",
	    "%s Expected OAuth 2 access token, login cookie or other valid "
	    "authentication credential. See "
	    "https://developers.google.com/identity/sign-in/web/"
	    "devconsole-project.",
	    msg);
}

int
emu_auth_check(struct emu *e, struct emu_req *r)
{
	struct emu_auth_state *s = A(e);
	const struct emu_auth_token *t;
	const char *h = emu_header(r, "Authorization"), *p, *end;
	char project[128];
	size_t n;

	if (h == NULL || strncasecmp(h, "Bearer ", 7) != 0) {
		unauthenticated(r,
		    "Request is missing required authentication credential.");
		return -1;
	}
	for (h += 7; *h == ' '; h++)
		;
	t = token_find(s, h);
	if (t == NULL || t->exp_ms <= emu_wall_ms()) {
		unauthenticated(r, "Request had invalid authentication "
		                   "credentials.");
		return -1;
	}
	r->principal = t->principal;
	/* "projects/P" anywhere in the path names the project. */
	p = strstr(r->path, "projects/");
	if (p != NULL && (p == r->path || p[-1] == '/')) {
		p += 9;
		end = strchr(p, '/');
		n = end != NULL ? (size_t)(end - p) : strlen(p);
		if (n == 0 || n >= sizeof(project))
			return 0;
		snprintf(project, sizeof(project), "%.*s", (int)n, p);
		if (strcmp(project, "-") == 0 ||
		    emu_project_allowed(e, project) ||
		    strcmp(project, s->number) == 0)
			return 0;
		emu_reply_error(r, 403, "PERMISSION_DENIED",
		    "Permission denied on resource project %s.", project);
		return -1;
	}
	return 0;
}

/* ---- files and lifecycle ---- */

static int
write_json(struct emu *e, const char *name, cJSON *o)
{
	char *text = cJSON_Print(o), *path = emu_state_path(e, "%s", name);
	int rc = -1;

	if (text != NULL)
		rc = emu_write_file(path, text, strlen(text), 0600);
	if (rc != 0)
		fprintf(stderr, "tpuctl-emulator: cannot write '%s': %s\n",
		    path, strerror(errno));
	if (text != NULL)
		OPENSSL_cleanse(text, strlen(text));
	cJSON_free(text);
	cJSON_Delete(o);
	free(path);
	return rc;
}

static char *
random_id(size_t n)
{
	char *s = xmalloc(n + 1);

	emu_random_hex(s, n);
	return s;
}

static char *
digits_id(void)
{
	char hex[25], *s = xmalloc(22);
	size_t i;

	emu_random_hex(hex, 21);
	for (i = 0; i < 21; i++)
		s[i] = (char)('0' + (hex[i] % 10));
	s[0] = s[0] == '0' ? '1' : s[0];
	s[21] = '\0';
	return s;
}

/* Load DIR/auth/secrets.json and sa-key.pem, or create them. */
static int
secrets_load(struct emu *e, struct emu_auth_state *s)
{
	char *kpath = xasprintf("%s/sa-key.pem", s->dir);
	char *spath = xasprintf("%s/secrets.json", s->dir), *text = NULL;
	cJSON *j = NULL;
	BIO *b = NULL;
	int rc = -1;

	text = emu_read_file(spath, NULL);
	j = text != NULL ? cJSON_Parse(text) : NULL;
	if (text != NULL) {
		b = BIO_new_file(kpath, "r");
		s->key = b != NULL
		             ? PEM_read_bio_PrivateKey(b, NULL, NULL, NULL)
		             : NULL;
	}
	if (j != NULL && s->key != NULL && jstr(j, "key_id") != NULL &&
	    jstr(j, "client_secret") != NULL &&
	    jstr(j, "refresh_token") != NULL &&
	    jstr(j, "subject_token") != NULL) {
		s->key_id = xstrdup(jstr(j, "key_id"));
		s->sa_client_id = xstrdup(jstr(j, "sa_client_id"));
		s->client_id = xstrdup(jstr(j, "client_id"));
		s->client_secret = xstrdup(jstr(j, "client_secret"));
		s->refresh_token = xstrdup(jstr(j, "refresh_token"));
		s->subject_token = xstrdup(jstr(j, "subject_token"));
		rc = 0;
		goto out;
	}
	/* First start (or damaged state): make everything anew. */
	EVP_PKEY_free(s->key);
	s->key = EVP_RSA_gen(2048);
	if (s->key == NULL)
		goto out;
	{
		BIO *w = BIO_new(BIO_s_mem());
		char *pem = NULL;
		long n;

		if (w == NULL || PEM_write_bio_PrivateKey(w, s->key, NULL, NULL,
		                     0, NULL, NULL) != 1) {
			BIO_free(w);
			goto out;
		}
		n = BIO_get_mem_data(w, &pem);
		if (emu_write_file(kpath, pem, (size_t)n, 0600) != 0) {
			BIO_free(w);
			goto out;
		}
		BIO_free(w);
	}
	{
		char hex[41], hdr[128], pl[512], *h64, *p64, *sig;
		unsigned char rnd[64];

		s->key_id = random_id(40);
		s->sa_client_id = digits_id();
		emu_random_hex(hex, 12);
		s->client_id =
		    xasprintf("%s-emu.apps.googleusercontent.com", hex);
		emu_random_hex(hex, 24);
		s->client_secret = xasprintf("GOCSPX-%s", hex);
		emu_random_hex(hex, 40);
		s->refresh_token = xasprintf("1//emu-%s", hex);
		/* A JWT-shaped OIDC token, as a CI system would hand out. */
		snprintf(hdr, sizeof(hdr),
		    "{\"alg\":\"RS256\",\"kid\":\"%.16s\",\"typ\":\"JWT\"}",
		    s->key_id);
		emu_random_hex(hex, 16);
		snprintf(pl, sizeof(pl),
		    "{\"iss\":\"https://ci.emu.example\",\"sub\":\"emu-ci\","
		    "\"aud\":\"emu-provider\",\"jti\":\"%s\"}",
		    hex);
		emu_random_hex(hex, 40);
		memcpy(rnd, hex, 40);
		h64 = tpu_b64_encode((const unsigned char *)hdr, strlen(hdr),
		    TPU_B64_URL | TPU_B64_NOPAD);
		p64 = tpu_b64_encode((const unsigned char *)pl, strlen(pl),
		    TPU_B64_URL | TPU_B64_NOPAD);
		sig = tpu_b64_encode(rnd, 40, TPU_B64_URL | TPU_B64_NOPAD);
		s->subject_token = xasprintf("%s.%s.%s", h64, p64, sig);
		free(h64);
		free(p64);
		free(sig);
	}
	cJSON_Delete(j);
	j = cJSON_CreateObject();
	cJSON_AddStringToObject(j, "key_id", s->key_id);
	cJSON_AddStringToObject(j, "sa_client_id", s->sa_client_id);
	cJSON_AddStringToObject(j, "client_id", s->client_id);
	cJSON_AddStringToObject(j, "client_secret", s->client_secret);
	cJSON_AddStringToObject(j, "refresh_token", s->refresh_token);
	cJSON_AddStringToObject(j, "subject_token", s->subject_token);
	{
		char *t = cJSON_Print(j);

		rc = t != NULL && emu_write_file(spath, t, strlen(t), 0600) == 0
		         ? 0
		         : -1;
		if (t != NULL)
			OPENSSL_cleanse(t, strlen(t));
		cJSON_free(t);
	}
	(void)e;
out:
	if (text != NULL)
		OPENSSL_cleanse(text, strlen(text));
	free(text);
	cJSON_Delete(j);
	BIO_free(b);
	free(kpath);
	free(spath);
	return rc;
}

static void
tokens_load(struct emu_auth_state *s)
{
	char *path = xasprintf("%s/tokens.json", s->dir), *text;
	const cJSON *it;
	cJSON *arr;
	int64_t now = emu_wall_ms();

	text = emu_read_file(path, NULL);
	free(path);
	if (text == NULL)
		return;
	arr = cJSON_Parse(text);
	OPENSSL_cleanse(text, strlen(text));
	free(text);
	cJSON_ArrayForEach(it, arr)
	{
		const cJSON *x = cJSON_GetObjectItemCaseSensitive(it, "exp_ms");
		const char *t = jstr(it, "token"), *p = jstr(it, "principal");

		if (t != NULL && p != NULL && cJSON_IsNumber(x) &&
		    x->valuedouble > (double)now)
			tokens_add(s, t, (int64_t)x->valuedouble, p);
	}
	cJSON_Delete(arr);
}

/* The key as PEM (private for the JSON file, public for checks). */
static char *
pem_of(EVP_PKEY *k, int priv)
{
	BIO *b = BIO_new(BIO_s_mem());
	char *p = NULL, *out = NULL;
	long n;
	int ok;

	if (b == NULL)
		return NULL;
	ok = priv ? PEM_write_bio_PKCS8PrivateKey(
	                b, k, NULL, NULL, 0, NULL, NULL)
	          : PEM_write_bio_PUBKEY(b, k);
	if (ok == 1) {
		n = BIO_get_mem_data(b, &p);
		out = xstrndup(p, (size_t)n);
	}
	BIO_free(b);
	return out;
}

static cJSON *
authorized_user(struct emu *e, struct emu_auth_state *s)
{
	cJSON *o = cJSON_CreateObject();
	char *uri = xasprintf("%s/token", e->base_url);

	cJSON_AddStringToObject(o, "client_id", s->client_id);
	cJSON_AddStringToObject(o, "client_secret", s->client_secret);
	cJSON_AddStringToObject(o, "refresh_token", s->refresh_token);
	cJSON_AddStringToObject(o, "type", "authorized_user");
	cJSON_AddStringToObject(o, "token_uri", uri);
	cJSON_AddStringToObject(o, "quota_project_id", e->project);
	free(uri);
	return o;
}

static cJSON *
external_account(struct emu *e, struct emu_auth_state *s, int impersonate)
{
	cJSON *o = cJSON_CreateObject(), *src;
	char *url, *file = emu_state_path(e, "subject-token");

	cJSON_AddStringToObject(o, "type", "external_account");
	cJSON_AddStringToObject(o, "audience", s->audience);
	cJSON_AddStringToObject(o, "subject_token_type", AUTH_JWT_TYPE);
	url = xasprintf("%s/v1/token", e->base_url);
	cJSON_AddStringToObject(o, "token_url", url);
	free(url);
	src = cJSON_AddObjectToObject(o, "credential_source");
	cJSON_AddStringToObject(src, "file", file);
	if (impersonate) {
		url = xasprintf("%s/v1/projects/-/serviceAccounts/"
		                "%s:generateAccessToken",
		    e->base_url, s->email);
		cJSON_AddStringToObject(
		    o, "service_account_impersonation_url", url);
		free(url);
	}
	cJSON_AddStringToObject(o, "quota_project_id", e->project);
	free(file);
	return o;
}

/* Write every credential file (the URLs change with the port). */
static int
files_write(struct emu *e, struct emu_auth_state *s)
{
	cJSON *o;
	char *pem, *uri, *path, *url;
	const char *tok = NULL;
	size_t i;
	int rc = 0;

	o = cJSON_CreateObject();
	cJSON_AddStringToObject(o, "type", "service_account");
	cJSON_AddStringToObject(o, "project_id", e->project);
	cJSON_AddStringToObject(o, "private_key_id", s->key_id);
	pem = pem_of(s->key, 1);
	if (pem == NULL) {
		cJSON_Delete(o);
		return -1;
	}
	cJSON_AddStringToObject(o, "private_key", pem);
	xfree_secret(pem);
	cJSON_AddStringToObject(o, "client_email", s->email);
	cJSON_AddStringToObject(o, "client_id", s->sa_client_id);
	cJSON_AddStringToObject(
	    o, "auth_uri", "https://accounts.google.com/o/oauth2/auth");
	uri = xasprintf("%s/token", e->base_url);
	cJSON_AddStringToObject(o, "token_uri", uri);
	free(uri);
	cJSON_AddStringToObject(o, "universe_domain", "googleapis.com");
	rc |= write_json(e, "service-account.json", o);
	rc |= write_json(e, "authorized-user.json", authorized_user(e, s));
	rc |= write_json(e, "external-account.json", external_account(e, s, 0));
	rc |= write_json(
	    e, "external-account-impersonate.json", external_account(e, s, 1));
	o = cJSON_CreateObject();
	cJSON_AddStringToObject(o, "type", "impersonated_service_account");
	url =
	    xasprintf("%s/v1/projects/-/serviceAccounts/%s:generateAccessToken",
	        e->base_url, s->email);
	cJSON_AddStringToObject(o, "service_account_impersonation_url", url);
	free(url);
	cJSON_AddItemToObject(o, "source_credentials", authorized_user(e, s));
	cJSON_AddArrayToObject(o, "delegates");
	rc |= write_json(e, "impersonated-service-account.json", o);

	path = emu_state_path(e, "subject-token");
	rc |= emu_write_file(
	    path, s->subject_token, strlen(s->subject_token), 0600);
	free(path);
	/* A long-lived token for --access-token-file: reuse a live one. */
	path = emu_state_path(e, "access-token");
	{
		char *cur = emu_read_file(path, NULL);
		const struct emu_auth_token *t =
		    cur != NULL ? token_find(s, cur) : NULL;

		if (t != NULL && t->exp_ms > emu_wall_ms() + 86400000LL)
			tok = t->token;
		xfree_secret(cur);
	}
	if (tok == NULL)
		tok = token_issue(e, s->email, 10LL * 365 * 86400);
	rc |= emu_write_file(path, tok, strlen(tok), 0600);
	free(path);
	(void)i;
	return rc;
}

int
emu_auth_init(struct emu *e)
{
	struct emu_auth_state *s = xcalloc(1, sizeof(*s));
	char num[32];

	e->auth = s;
	s->dir = emu_state_path(e, "auth");
	if (mkdir(s->dir, 0700) != 0 && errno != EEXIST) {
		fprintf(stderr, "tpuctl-emulator: cannot create '%s': %s\n",
		    s->dir, strerror(errno));
		return -1;
	}
	emu_project_number(e->project, num, sizeof(num));
	s->number = xstrdup(num);
	s->email = xasprintf("emu-sa@%s.iam.gserviceaccount.com", e->project);
	s->audience = xasprintf("//iam.googleapis.com/projects/%s/locations/"
	                        "global/workloadIdentityPools/emu-pool/"
	                        "providers/emu-provider",
	    s->number);
	if (secrets_load(e, s) != 0) {
		fprintf(stderr,
		    "tpuctl-emulator: cannot create the credentials under "
		    "'%s'\n",
		    s->dir);
		return -1;
	}
	if ((s->pub_pem = pem_of(s->key, 0)) == NULL)
		return -1;
	tokens_load(s);
	if (files_write(e, s) != 0) {
		fprintf(stderr, "tpuctl-emulator: cannot write the credential "
		                "files\n");
		return -1;
	}
	return 0;
}

void
emu_auth_fini(struct emu *e)
{
	struct emu_auth_state *s = A(e);
	size_t i;

	if (s == NULL)
		return;
	for (i = 0; i < s->ntokens; i++)
		xfree_secret(s->tokens[i].token);
	free(s->tokens);
	for (i = 0; i < s->nprincipals; i++)
		free(s->principals[i]);
	free(s->principals);
	EVP_PKEY_free(s->key);
	free(s->pub_pem);
	free(s->key_id);
	free(s->email);
	free(s->sa_client_id);
	free(s->client_id);
	xfree_secret(s->client_secret);
	xfree_secret(s->refresh_token);
	xfree_secret(s->subject_token);
	free(s->audience);
	free(s->number);
	free(s->dir);
	free(s);
	e->auth = NULL;
}

void
emu_auth_env(struct emu *e, FILE *fp)
{
	struct emu_auth_state *s = A(e);
	char *p;

	if (s == NULL)
		return;
	p = emu_state_path(e, "access-token");
	fprintf(fp, "export TPUCTL_EMULATOR_ACCESS_TOKEN_FILE='%s'\n", p);
	free(p);
	fprintf(fp, "export TPUCTL_EMULATOR_SA_EMAIL='%s'\n", s->email);
}

const struct emu_route emu_auth_routes[] = {
	{ "/token", 0, emu_auth_token, NULL, NULL },
	{ "/v1/token", 0, emu_auth_sts, NULL, NULL },
	{ "/v1/projects/-/serviceAccounts/", EMU_R_AUTH, emu_auth_iam, NULL,
	    NULL },
	{ "/computeMetadata/", 0, emu_auth_metadata, NULL, NULL },
	{ NULL, 0, NULL, NULL, NULL },
};
