/*
 * Unit tests for src/auth.c: JWT building and RS256 signing (verified with
 * OpenSSL), credential files of every type, token replies, and the token
 * cache's permissions (umask 000, a pre-existing 0644 file, a symlink at
 * the path) against a scripted loopback metadata server.
 */
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>

#include <netinet/in.h>
#include <arpa/inet.h>
#include <dirent.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <check.h>
#include <cjson/cJSON.h>
#include <openssl/evp.h>
#include <openssl/pem.h>

#include "auth.h"
#include "buf.h"
#include "canned_server.h"
#include "http.h"
#include "xmalloc.h"

/* base64url decode for the test */
static unsigned char *
b64d(const char *s, size_t n, size_t *outlen)
{
	unsigned char *out = xmalloc(n + 4);
	unsigned acc = 0;
	int bits = 0;
	size_t i, o = 0;

	for (i = 0; i < n; i++) {
		const char *t =
		    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
		    "0123456789-_";
		const char *p = strchr(t, s[i]);

		ck_assert_ptr_nonnull(p);
		acc = (acc << 6) | (unsigned)(p - t);
		bits += 6;
		if (bits >= 8) {
			bits -= 8;
			out[o++] = (unsigned char)(acc >> bits);
		}
	}
	*outlen = o;
	return out;
}

static char *
pem_of(EVP_PKEY *k, int pub)
{
	BIO *b = BIO_new(BIO_s_mem());
	char *p, *r;
	long n;

	if (pub)
		PEM_write_bio_PUBKEY(b, k);
	else
		PEM_write_bio_PrivateKey(b, k, NULL, NULL, 0, NULL, NULL);
	n = BIO_get_mem_data(b, &p);
	r = xstrndup(p, (size_t)n);
	BIO_free(b);
	return r;
}

START_TEST(jwt_signed_and_verifies)
{
	EVP_PKEY *k = EVP_RSA_gen(2048), *pk;
	char *priv = pem_of(k, 0), *pub = pem_of(k, 1), *jwt = NULL;
	struct tpu_err err;
	const char *d1, *d2;
	unsigned char *sig, *raw;
	size_t siglen, rawlen;
	cJSON *hdr, *cl;
	EVP_MD_CTX *md;
	BIO *b;

	tpu_err_init(&err);
	ck_assert_int_eq(
	    auth_jwt_sign(priv, "kid1", "sa@p.iam", AUTH_SCOPE_CLOUD,
	        "http://127.0.0.1:1/token", 1700000000, &jwt, &err),
	    0);
	d1 = strchr(jwt, '.');
	d2 = strchr(d1 + 1, '.');
	ck_assert_ptr_nonnull(d2);
	ck_assert_ptr_null(strchr(d2 + 1, '.'));
	ck_assert_ptr_null(strchr(jwt, '='));
	raw = b64d(jwt, (size_t)(d1 - jwt), &rawlen);
	hdr = cJSON_ParseWithLength((char *)raw, rawlen);
	free(raw);
	ck_assert_str_eq(cJSON_GetObjectItem(hdr, "alg")->valuestring, "RS256");
	ck_assert_str_eq(cJSON_GetObjectItem(hdr, "kid")->valuestring, "kid1");
	raw = b64d(d1 + 1, (size_t)(d2 - d1 - 1), &rawlen);
	cl = cJSON_ParseWithLength((char *)raw, rawlen);
	free(raw);
	ck_assert_str_eq(
	    cJSON_GetObjectItem(cl, "iss")->valuestring, "sa@p.iam");
	ck_assert_str_eq(cJSON_GetObjectItem(cl, "aud")->valuestring,
	    "http://127.0.0.1:1/token");
	ck_assert_str_eq(
	    cJSON_GetObjectItem(cl, "scope")->valuestring, AUTH_SCOPE_CLOUD);
	ck_assert_int_eq(
	    (long)cJSON_GetObjectItem(cl, "iat")->valuedouble, 1700000000L);
	ck_assert_int_eq(
	    (long)cJSON_GetObjectItem(cl, "exp")->valuedouble, 1700003600L);
	sig = b64d(d2 + 1, strlen(d2 + 1), &siglen);
	b = BIO_new_mem_buf(pub, -1);
	pk = PEM_read_bio_PUBKEY(b, NULL, NULL, NULL);
	md = EVP_MD_CTX_new();
	ck_assert_int_eq(
	    EVP_DigestVerifyInit(md, NULL, EVP_sha256(), NULL, pk), 1);
	ck_assert_int_eq(EVP_DigestVerify(md, sig, siglen,
	                     (const unsigned char *)jwt, (size_t)(d2 - jwt)),
	    1);
	/* a flipped byte does not verify */
	sig[0] ^= 1;
	EVP_MD_CTX_free(md);
	md = EVP_MD_CTX_new();
	EVP_DigestVerifyInit(md, NULL, EVP_sha256(), NULL, pk);
	ck_assert_int_ne(EVP_DigestVerify(md, sig, siglen,
	                     (const unsigned char *)jwt, (size_t)(d2 - jwt)),
	    1);
	EVP_MD_CTX_free(md);
	EVP_PKEY_free(pk);
	BIO_free(b);
	free(sig);
	cJSON_Delete(hdr);
	cJSON_Delete(cl);
	free(jwt);
	free(priv);
	free(pub);
	EVP_PKEY_free(k);
}
END_TEST

START_TEST(jwt_bad_key)
{
	struct tpu_err err;
	char *jwt = NULL;

	tpu_err_init(&err);
	ck_assert_int_eq(
	    auth_jwt_sign("privatekey", NULL, "a", "s", "u", 0, &jwt, &err),
	    TPU_E_AUTH);
	ck_assert_ptr_null(jwt);
	ck_assert_ptr_nonnull(strstr(err.msg, "PEM"));
}
END_TEST

static int
check_cred(const char *json, const char **type, struct tpu_err *err)
{
	cJSON *j = cJSON_Parse(json);
	int rc;

	ck_assert_ptr_nonnull(j);
	tpu_err_init(err);
	rc = auth_check_credentials(j, type, err);
	cJSON_Delete(j);
	return rc;
}

START_TEST(credential_types)
{
	/* the shapes of shared/api/samples/credentials */
	static const struct {
		const char *json, *type;
	} ok[] = {
		{ "{\"private_key_id\":\"key123\",\"private_key\":"
		  "\"privatekey\","
		  "\"client_email\":\"hello@youarecool.com\",\"client_id\":"
		  "\"client123\",\"type\":\"service_account\",\"project_id\":"
		  "\"not-a-project-id\"}",
		    "service_account" },
		{ "{\"client_secret\":\"privatekey\",\"client_id\":"
		  "\"client123\","
		  "\"refresh_token\":\"refreshtoken\",\"type\":"
		  "\"authorized_user\"}",
		    "authorized_user" },
		{ "{\"client_id\":\"764.apps.googleusercontent.com\","
		  "\"client_secret\":\"privatekey\",\"refresh_token\":"
		  "\"refreshtoken\",\"type\":\"authorized_user\",\"project_"
		  "id\":"
		  "\"my-project\",\"quota_project_id\":\"my-quota-project\"}",
		    "authorized_user" },
		{ "{\"type\":\"external_account\",\"audience\":\"//iam/x\","
		  "\"subject_token_type\":\"urn:ietf:params:oauth:token-type:"
		  "jwt\",\"token_url\":\"https://sts.googleapis.com/v1/token\","
		  "\"credential_source\":{\"file\":\"./t.txt\"}}",
		    "external_account" },
		{ "{\"type\":\"external_account\",\"audience\":\"a\","
		  "\"subject_token_type\":\"t\",\"token_url\":\"u\","
		  "\"credential_source\":{\"url\":\"http://127.0.0.1/x\","
		  "\"headers\":{\"Metadata\":\"True\"},\"format\":{\"type\":"
		  "\"json\",\"subject_token_field_name\":\"access_token\"}}}",
		    "external_account" },
		{ "{\"type\":\"external_account_authorized_user\",\"audience\":"
		  "\"a\",\"client_id\":\"clientId\",\"client_secret\":"
		  "\"clientSecret\",\"refresh_token\":\"refreshToken\","
		  "\"token_url\":\"https://sts.googleapis.com/v1/oauthtoken\"}",
		    "external_account_authorized_user" },
		{ "{\"delegates\":[],\"service_account_impersonation_url\":"
		  "\"https://iamcredentials.googleapis.com/v1/projects/-/"
		  "serviceAccounts/target@project.iam.gserviceaccount.com:"
		  "generateAccessToken\",\"source_credentials\":{\"client_id\":"
		  "\"c\",\"client_secret\":\"privatekey\",\"refresh_token\":"
		  "\"refreshtoken\",\"type\":\"authorized_user\"},\"type\":"
		  "\"impersonated_service_account\"}",
		    "impersonated_service_account" },
	};
	static const struct {
		const char *json, *needle;
	} bad[] = {
		{ "[]", "not a JSON object" },
		{ "{}", "'type'" },
		{ "{\"type\":\"gdch_service_account\"}", "unsupported type" },
		{ "{\"type\":\"service_account\",\"client_email\":\"a\"}",
		    "'private_key'" },
		{ "{\"type\":\"authorized_user\",\"client_id\":\"a\","
		  "\"client_secret\":\"b\"}",
		    "'refresh_token'" },
		{ "{\"type\":\"external_account\",\"audience\":\"a\","
		  "\"subject_token_type\":\"t\",\"token_url\":\"u\"}",
		    "credential_source" },
		{ "{\"type\":\"external_account\",\"audience\":\"a\","
		  "\"subject_token_type\":\"t\",\"token_url\":\"u\","
		  "\"credential_source\":{\"executable\":{}}}",
		    "'file' or 'url'" },
		{ "{\"type\":\"impersonated_service_account\","
		  "\"service_account_impersonation_url\":\"u\"}",
		    "source_credentials" },
		{ "{\"type\":\"impersonated_service_account\","
		  "\"service_account_impersonation_url\":\"u\","
		  "\"source_credentials\":{\"type\":\"authorized_user\"}}",
		    "source_credentials" },
		{ "{\"type\":\"service_account\",\"client_email\":1,"
		  "\"private_key\":\"k\"}",
		    "'client_email'" },
	};
	struct tpu_err err;
	const char *t;
	size_t i;

	for (i = 0; i < sizeof ok / sizeof ok[0]; i++) {
		ck_assert_msg(check_cred(ok[i].json, &t, &err) == 0, "%s: %s",
		    ok[i].json, err.msg);
		ck_assert_str_eq(t, ok[i].type);
	}
	for (i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		ck_assert_int_eq(check_cred(bad[i].json, &t, &err), TPU_E_AUTH);
		ck_assert_msg(strstr(err.msg, bad[i].needle) != NULL,
		    "'%s' not in '%s'", bad[i].needle, err.msg);
	}
}
END_TEST

START_TEST(token_replies)
{
	struct tpu_err err;
	char *tok = NULL;
	time_t exp = 0;
	const char *b;

	tpu_err_init(&err);
	b = "{\"access_token\":\"ya29.a\",\"expires_in\":3599,\"token_type\":"
	    "\"Bearer\"}";
	ck_assert_int_eq(
	    auth_parse_token_response(b, strlen(b), 1000, &tok, &exp, &err), 0);
	ck_assert_str_eq(tok, "ya29.a");
	ck_assert_int_eq(exp, 4599);
	free(tok);
	b = "{\"access_token\":\"t\",\"expires_in\":\"60\"}";
	ck_assert_int_eq(
	    auth_parse_token_response(b, strlen(b), 0, &tok, &exp, &err), 0);
	ck_assert_int_eq(exp, 60);
	free(tok);
	b = "{\"accessToken\":\"t2\",\"expireTime\":\"2014-10-02T15:01:23Z\"}";
	ck_assert_int_eq(
	    auth_parse_token_response(b, strlen(b), 0, &tok, &exp, &err), 0);
	ck_assert_str_eq(tok, "t2");
	ck_assert_int_eq(exp, 1412262083);
	free(tok);
	b = "{\"accessToken\":\"t2\",\"expireTime\":"
	    "\"2014-10-02T15:01:23.045123456Z\"}";
	ck_assert_int_eq(
	    auth_parse_token_response(b, strlen(b), 0, &tok, &exp, &err), 0);
	free(tok);
	b = "{\"accessToken\":\"t2\",\"expireTime\":\"tomorrow\"}";
	ck_assert_int_eq(
	    auth_parse_token_response(b, strlen(b), 0, &tok, &exp, &err),
	    TPU_E_API);
	b = "{\"token_type\":\"Bearer\"}";
	ck_assert_int_eq(
	    auth_parse_token_response(b, strlen(b), 0, &tok, &exp, &err),
	    TPU_E_API);
	ck_assert_ptr_nonnull(strstr(err.msg, "access_token"));
	b = "{\"access_token\":\"a b\"}";
	ck_assert_int_eq(
	    auth_parse_token_response(b, strlen(b), 0, &tok, &exp, &err),
	    TPU_E_API);
	b = "{\"access_token\":\"a\",\"expires_in\":-5}";
	ck_assert_int_eq(
	    auth_parse_token_response(b, strlen(b), 0, &tok, &exp, &err),
	    TPU_E_API);
	ck_assert_int_eq(
	    auth_parse_token_response("<html>", 6, 0, &tok, &exp, &err),
	    TPU_E_API);
}
END_TEST

#define TOKREPLY                                                               \
	"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"                \
	"Content-Length: 50\r\nConnection: close\r\n\r\n{\"access_token\":"    \
	"\"ya29.unit-1\",\"expires_in\":3600}  "

static char cdir[128];

static struct auth *
metadata_auth(struct http **hp)
{
	struct http_opts o;
	struct auth_opts ao;
	struct tpu_err err;
	char host[64];

	memset(&o, 0, sizeof o);
	retry_policy_default(&o.retry);
	o.retry.initial_ms = 10;
	tpu_err_init(&err);
	*hp = http_new(&o, &err);
	snprintf(host, sizeof host, "127.0.0.1:%d", server_port);
	setenv("GCE_METADATA_HOST", host, 1);
	unsetenv("GOOGLE_APPLICATION_CREDENTIALS");
	setenv("CLOUDSDK_CONFIG", "/nonexistent-gcloud", 1);
	memset(&ao, 0, sizeof ao);
	ao.cache_dir = cdir;
	return auth_new(*hp, &ao);
}

static char *
only_cache_file(void)
{
	DIR *d = opendir(cdir);
	struct dirent *de;
	char *p = NULL;

	ck_assert_ptr_nonnull(d);
	while ((de = readdir(d)) != NULL)
		if (strstr(de->d_name, ".json") != NULL) {
			ck_assert_ptr_null(p);
			p = xasprintf("%s/%s", cdir, de->d_name);
		}
	closedir(d);
	ck_assert_ptr_nonnull(p);
	return p;
}

static mode_t
mode_of(const char *p)
{
	struct stat st;

	ck_assert_int_eq(lstat(p, &st), 0);
	return st.st_mode & 07777;
}

/* Remove the cache dir the test made (files, dir, its parent). */
static void
rm_cdir(void)
{
	DIR *d = opendir(cdir);
	struct dirent *de;
	char *p;

	while (d != NULL && (de = readdir(d)) != NULL) {
		if (de->d_name[0] == '.')
			continue;
		p = xasprintf("%s/%s", cdir, de->d_name);
		unlink(p);
		free(p);
	}
	if (d != NULL)
		closedir(d);
	rmdir(cdir);
	p = xstrndup(cdir, strlen(cdir) - strlen("/tokens"));
	rmdir(p);
	free(p);
}

static void
mk_cdir(void)
{
	char base[64];

	snprintf(base, sizeof base, "/tmp/check_auth.XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(base));
	snprintf(cdir, sizeof cdir, "%s/tokens", base);
}

START_TEST(cache_umask0)
{
	static const char *const rep[] = { TOKREPLY };
	struct http *h;
	struct auth *a;
	struct tpu_err err;
	char *tok = NULL, *f;

	mk_cdir();
	umask(0);
	serve(rep, 1);
	a = metadata_auth(&h);
	tpu_err_init(&err);
	ck_assert_msg(auth_token(a, 0, &tok, &err) == 0, "%s", err.msg);
	ck_assert_str_eq(tok, "ya29.unit-1");
	free(tok);
	canned_cleanup();
	ck_assert_int_eq(mode_of(cdir), 0700);
	f = only_cache_file();
	ck_assert_int_eq(mode_of(f), 0600);
	auth_free(a);
	http_free(h);
	/* a new process reads the cache: no request (the server is gone) */
	a = metadata_auth(&h);
	ck_assert_int_eq(auth_token(a, 0, &tok, &err), 0);
	ck_assert_str_eq(tok, "ya29.unit-1");
	free(tok);
	auth_free(a);
	http_free(h);
	free(f);
	rm_cdir();
}
END_TEST

START_TEST(cache_loose_file_fixed)
{
	static const char *const rep[] = { TOKREPLY };
	struct http *h;
	struct auth *a;
	struct tpu_err err;
	char *tok = NULL, *f;

	mk_cdir();
	serve(rep, 1);
	a = metadata_auth(&h);
	tpu_err_init(&err);
	ck_assert_int_eq(auth_token(a, 0, &tok, &err), 0);
	free(tok);
	auth_free(a);
	http_free(h);
	canned_cleanup();
	f = only_cache_file();
	chmod(f, 0644);
	a = metadata_auth(&h);
	ck_assert_int_eq(auth_token(a, 0, &tok, &err), 0);
	free(tok);
	ck_assert_int_eq(mode_of(f), 0600);
	auth_free(a);
	http_free(h);
	free(f);
	rm_cdir();
}
END_TEST

START_TEST(cache_symlink_refused)
{
	static const char *const rep[] = { TOKREPLY, TOKREPLY };
	struct http *h;
	struct auth *a;
	struct tpu_err err;
	char *tok = NULL, *f, *target;
	struct stat st;

	mk_cdir();
	serve(rep, 2);
	a = metadata_auth(&h);
	tpu_err_init(&err);
	ck_assert_int_eq(auth_token(a, 0, &tok, &err), 0);
	free(tok);
	auth_free(a);
	http_free(h);
	f = only_cache_file();
	target = xasprintf("%s/../stolen", cdir);
	unlink(f);
	ck_assert_int_eq(symlink(target, f), 0);
	/* target sits next to cdir: removed by rm_cdir's parent rmdir */
	a = metadata_auth(&h);
	/* the symlink is neither read nor written through */
	ck_assert_int_eq(auth_token(a, 0, &tok, &err), 0);
	free(tok);
	canned_cleanup();
	ck_assert_int_eq(stat(target, &st), -1);
	ck_assert_int_eq(lstat(f, &st), 0);
	ck_assert(S_ISLNK(st.st_mode));
	auth_free(a);
	http_free(h);
	free(f);
	free(target);
	rm_cdir();
}
END_TEST

START_TEST(no_credentials_found)
{
	struct http *h;
	struct auth *a;
	struct tpu_err err;
	char *tok = NULL;

	mk_cdir();
	server_port = 9;
	a = metadata_auth(&h);
	tpu_err_init(&err);
	ck_assert_int_eq(auth_token(a, 0, &tok, &err), TPU_E_AUTH);
	ck_assert_ptr_nonnull(strstr(err.msg, "no credentials found"));
	ck_assert_ptr_nonnull(
	    strstr(err.msg, "GOOGLE_APPLICATION_CREDENTIALS"));
	ck_assert_ptr_nonnull(strstr(err.msg, "metadata"));
	auth_free(a);
	http_free(h);
	rm_cdir();
}
END_TEST

static Suite *
auth_suite(void)
{
	Suite *s = suite_create("auth");
	TCase *tc;

	tc = tcase_create("jwt");
	/* an RSA 2048 key is generated: seconds on a loaded machine, past
	   Check's 4 s default (the CI failure of stop 23) */
	tcase_set_timeout(tc, 30);
	tcase_add_test(tc, jwt_signed_and_verifies);
	tcase_add_test(tc, jwt_bad_key);
	suite_add_tcase(s, tc);
	tc = tcase_create("files");
	tcase_add_test(tc, credential_types);
	tcase_add_test(tc, token_replies);
	suite_add_tcase(s, tc);
	tc = tcase_create("cache");
	tcase_set_timeout(tc, 30);
	tcase_add_test(tc, cache_umask0);
	tcase_add_test(tc, cache_loose_file_fixed);
	tcase_add_test(tc, cache_symlink_refused);
	tcase_add_test(tc, no_credentials_found);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	return canned_run(auth_suite());
}
