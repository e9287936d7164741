/*
 * Unit tests for the emulator's JWT-bearer verification (emulator/auth.c,
 * emu_auth_jwt_verify): assertions signed here with an OpenSSL RSA key, then
 * each rule Google's token endpoint applies (algorithm, key id, signature,
 * issuer, audience, scope, iat/exp window).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <check.h>
#include <openssl/bio.h>
#include <openssl/evp.h>
#include <openssl/pem.h>

#include "emu.h"

#define ISS "emu-sa@p.iam.gserviceaccount.com"
#define AUD "http://127.0.0.1:1/token"
#define NOW 1700000000LL

static EVP_PKEY *key, *other;
static char *pub;

static char *
b64url(const unsigned char *p, size_t n)
{
	static const char t[] =
	    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuv"
	    "wxyz0123456789-_";
	char *o = malloc(n * 4 / 3 + 4);
	size_t i, k = 0;
	unsigned v;

	for (i = 0; i < n; i += 3) {
		v = (unsigned)p[i] << 16;
		if (i + 1 < n)
			v |= (unsigned)p[i + 1] << 8;
		if (i + 2 < n)
			v |= p[i + 2];
		o[k++] = t[v >> 18 & 63];
		o[k++] = t[v >> 12 & 63];
		if (i + 1 < n)
			o[k++] = t[v >> 6 & 63];
		if (i + 2 < n)
			o[k++] = t[v & 63];
	}
	o[k] = '\0';
	return o;
}

/* A JWT over header and payload JSON, signed with k (RS256). */
static char *
sign(EVP_PKEY *k, const char *hdr, const char *pl)
{
	char *h = b64url((const unsigned char *)hdr, strlen(hdr));
	char *p = b64url((const unsigned char *)pl, strlen(pl));
	char *in, *s, *out;
	unsigned char sig[1024];
	size_t siglen = sizeof(sig);
	EVP_MD_CTX *md = EVP_MD_CTX_new();

	in = malloc(strlen(h) + strlen(p) + 2);
	snprintf(in, strlen(h) + strlen(p) + 2, "%s.%s", h, p);
	ck_assert_int_eq(
	    EVP_DigestSignInit(md, NULL, EVP_sha256(), NULL, k), 1);
	ck_assert_int_eq(EVP_DigestSign(md, sig, &siglen,
	                     (const unsigned char *)in, strlen(in)),
	    1);
	s = b64url(sig, siglen);
	out = malloc(strlen(in) + strlen(s) + 2);
	snprintf(out, strlen(in) + strlen(s) + 2, "%s.%s", in, s);
	EVP_MD_CTX_free(md);
	free(h);
	free(p);
	free(in);
	free(s);
	return out;
}

static char *
claims(const char *iss, const char *aud, const char *scope, long long iat,
    long long exp)
{
	static char buf[1024];

	if (scope != NULL)
		snprintf(buf, sizeof(buf),
		    "{\"iss\":\"%s\",\"aud\":\"%s\",\"scope\":\"%s\","
		    "\"iat\":%lld,\"exp\":%lld}",
		    iss, aud, scope, iat, exp);
	else
		snprintf(buf, sizeof(buf),
		    "{\"iss\":\"%s\",\"aud\":\"%s\",\"iat\":%lld,\"exp\":%lld}",
		    iss, aud, iat, exp);
	return buf;
}

static const char *HDR = "{\"alg\":\"RS256\",\"typ\":\"JWT\",\"kid\":\"k1\"}";

static int
verify(const char *jwt, char *err, size_t n)
{
	return emu_auth_jwt_verify(jwt, pub, "k1", ISS, AUD,
	    "https://oauth2.googleapis.com/token", NOW, err, n);
}

static int
check(EVP_PKEY *k, const char *hdr, const char *pl, char *err, size_t n)
{
	char *j = sign(k, hdr, pl);
	int rc = verify(j, err, n);

	free(j);
	return rc;
}

static void
setup(void)
{
	BIO *b = BIO_new(BIO_s_mem());
	char *p;
	long n;

	key = EVP_RSA_gen(2048);
	other = EVP_RSA_gen(2048);
	ck_assert_ptr_nonnull(key);
	PEM_write_bio_PUBKEY(b, key);
	n = BIO_get_mem_data(b, &p);
	pub = strndup(p, (size_t)n);
	BIO_free(b);
}

static void
teardown(void)
{
	EVP_PKEY_free(key);
	EVP_PKEY_free(other);
	free(pub);
}

START_TEST(valid)
{
	char err[256];

	ck_assert_int_eq(
	    check(key, HDR, claims(ISS, AUD, "https://x/auth", NOW, NOW + 3600),
	        err, sizeof(err)),
	    0);
	/* Google's own audience is accepted as well. */
	ck_assert_int_eq(check(key, HDR,
	                     claims(ISS, "https://oauth2.googleapis.com/token",
	                         "s", NOW - 100, NOW + 100),
	                     err, sizeof(err)),
	    0);
	/* No kid: fine.  iat up to 300 s in the future: fine (skew). */
	ck_assert_int_eq(
	    check(key, "{\"alg\":\"RS256\"}",
	        claims(ISS, AUD, "s", NOW + 299, NOW + 1000), err, sizeof(err)),
	    0);
}
END_TEST

START_TEST(times)
{
	char err[256];
	static const long long bad[][2] = {
		{ NOW, NOW + 3601 },       /* longer than an hour */
		{ NOW + 301, NOW + 1000 }, /* from the future */
		{ NOW - 4000, NOW - 1 },   /* expired */
		{ NOW, NOW },              /* empty window */
		{ NOW + 10, NOW - 10 },    /* reversed */
	};
	size_t i;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		ck_assert_int_eq(
		    check(key, HDR, claims(ISS, AUD, "s", bad[i][0], bad[i][1]),
		        err, sizeof(err)),
		    -1);
		ck_assert_str_eq(err,
		    "Invalid JWT: Token must be a short-lived token (60 "
		    "minutes) and in a reasonable timeframe. Check your iat "
		    "and exp values in the JWT claim.");
	}
}
END_TEST

START_TEST(identity)
{
	char err[256];

	ck_assert_int_eq(
	    check(key, HDR, claims("evil@x", AUD, "s", NOW, NOW + 60), err,
	        sizeof(err)),
	    -1);
	ck_assert_int_eq(
	    check(key, HDR,
	        claims(ISS, "https://evil/token", "s", NOW, NOW + 60), err,
	        sizeof(err)),
	    -1);
	ck_assert_int_eq(check(key, HDR, claims(ISS, AUD, NULL, NOW, NOW + 60),
	                     err, sizeof(err)),
	    -2);
	ck_assert_int_eq(check(key, HDR, claims(ISS, AUD, "", NOW, NOW + 60),
	                     err, sizeof(err)),
	    -2);
}
END_TEST

START_TEST(signature)
{
	char err[256], *j;
	size_t n;

	/* Another key, wrong kid, wrong algorithm. */
	ck_assert_int_eq(check(other, HDR, claims(ISS, AUD, "s", NOW, NOW + 60),
	                     err, sizeof(err)),
	    -1);
	ck_assert_str_eq(err, "Invalid JWT Signature.");
	ck_assert_int_eq(
	    check(key, "{\"alg\":\"RS256\",\"kid\":\"other\"}",
	        claims(ISS, AUD, "s", NOW, NOW + 60), err, sizeof(err)),
	    -1);
	ck_assert_int_eq(
	    check(key, "{\"alg\":\"none\"}",
	        claims(ISS, AUD, "s", NOW, NOW + 60), err, sizeof(err)),
	    -1);
	ck_assert_int_eq(
	    check(key, "{\"alg\":\"HS256\"}",
	        claims(ISS, AUD, "s", NOW, NOW + 60), err, sizeof(err)),
	    -1);
	/* A tampered payload byte. */
	j = sign(key, HDR, claims(ISS, AUD, "s", NOW, NOW + 60));
	n = strlen(HDR) * 4 / 3 + 5;
	j[n] = j[n] == 'A' ? 'B' : 'A';
	ck_assert_int_eq(verify(j, err, sizeof(err)), -1);
	free(j);
}
END_TEST

START_TEST(malformed)
{
	char err[256];
	static const char *const bad[] = {
		"", "a", "a.b", "a.b.c.d", "!!.??.**", "e30.e30.",
		"W10.W10.AAAA", /* [] is not an object */
		"e30.e30x.AAAA",
		"eyJhbGciOiJSUzI1NiJ9.e30gZ2FyYmFnZQ.AAAA", /* "{} garbage" */
	};
	size_t i;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		ck_assert_int_eq(verify(bad[i], err, sizeof(err)), -1);
}
END_TEST

static Suite *
suite(void)
{
	Suite *s = suite_create("emu_auth");
	TCase *tc = tcase_create("jwt");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 30);
	tcase_add_test(tc, valid);
	tcase_add_test(tc, times);
	tcase_add_test(tc, identity);
	tcase_add_test(tc, signature);
	tcase_add_test(tc, malformed);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	SRunner *sr = srunner_create(suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
