/*
 * Unit tests for the emulator's JWT-bearer verification (emulator/auth.c,
 * emu_auth_jwt_verify): assertions signed here with an OpenSSL RSA key, then
 * each rule Google's token endpoint applies (algorithm, key id, signature,
 * issuer, audience, scope, iat/exp window).  And the metadata server's
 * TPU-VM values (emulator/md.c): worker names and ids, the chip and host
 * bounds of accelerator types, worker-network-endpoints and tpu-env.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <check.h>
#include <openssl/bio.h>
#include <openssl/evp.h>
#include <openssl/pem.h>

#include "emu.h"
#include "md.h"

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

/* ---- the metadata server's TPU-VM values (md.c) ---- */

#define NODE "projects/p/locations/us-central2-b/nodes/n1"

START_TEST(md_names)
{
	char a[EMU_MD_NAME_MAX], b[EMU_MD_NAME_MAX], c[EMU_MD_NAME_MAX];
	size_t i;

	emu_md_hostname(NODE, "123", 0, a, sizeof(a));
	emu_md_hostname(NODE, "123", 0, b, sizeof(b));
	ck_assert_str_eq(a, b); /* stable */
	ck_assert_uint_eq(strlen(a), strlen("t1v-n-01234567-w-0"));
	ck_assert(strncmp(a, "t1v-n-", 6) == 0);
	for (i = 6; i < 14; i++)
		ck_assert(strchr("0123456789abcdef", a[i]) != NULL);
	ck_assert_str_eq(a + 14, "-w-0");
	emu_md_hostname(NODE, "123", 17, b, sizeof(b));
	ck_assert(strncmp(a, b, 14) == 0); /* one prefix per node */
	ck_assert_str_eq(b + 14, "-w-17");
	emu_md_hostname(NODE, "124", 0, c, sizeof(c)); /* a new VM */
	ck_assert_str_ne(a, c);

	emu_md_instance_id(NODE, "123", 0, a, sizeof(a));
	emu_md_instance_id(NODE, "123", 1, b, sizeof(b));
	ck_assert_uint_eq(strlen(a), 19);
	ck_assert_uint_eq(strlen(b), 19);
	ck_assert(a[0] != '0');
	ck_assert_uint_eq(strspn(a, "0123456789"), 19);
	ck_assert_str_ne(a, b);
	emu_md_instance_id(NODE, "123", 0, c, sizeof(c));
	ck_assert_str_eq(a, c);
}
END_TEST

START_TEST(md_bounds)
{
	static const struct {
		const char *accel, *topo;
		int t[3], cph[3], hosts[3];
	} ok[] = {
		{ "v4-8", NULL, { 2, 2, 1 }, { 2, 2, 1 }, { 1, 1, 1 } },
		{ "v4-16", NULL, { 2, 2, 2 }, { 2, 2, 1 }, { 1, 1, 2 } },
		{ "v4-32", NULL, { 2, 2, 4 }, { 2, 2, 1 }, { 1, 1, 4 } },
		{ "v4-64", NULL, { 2, 4, 4 }, { 2, 2, 1 }, { 1, 2, 4 } },
		{ "v4-128", NULL, { 4, 4, 4 }, { 2, 2, 1 }, { 2, 2, 4 } },
		/* a real v4-256's tpu-env: 4x4x8, hosts 2,2,8 */
		{ "v4-256", NULL, { 4, 4, 8 }, { 2, 2, 1 }, { 2, 2, 8 } },
		{ "v4-32", "4x2x2", { 4, 2, 2 }, { 2, 2, 1 }, { 2, 1, 2 } },
		{ "v5p-16", NULL, { 2, 2, 2 }, { 2, 2, 1 }, { 1, 1, 2 } },
		{ "v5litepod-1", NULL, { 1, 1, 1 }, { 1, 1, 1 }, { 1, 1, 1 } },
		{ "v5litepod-4", NULL, { 2, 2, 1 }, { 2, 2, 1 }, { 1, 1, 1 } },
		{ "v5litepod-8", NULL, { 2, 4, 1 }, { 2, 4, 1 }, { 1, 1, 1 } },
		{ "v5e-8", NULL, { 2, 4, 1 }, { 2, 4, 1 }, { 1, 1, 1 } },
		{ "v5litepod-16", NULL, { 4, 4, 1 }, { 2, 2, 1 }, { 2, 2, 1 } },
		{ "v5litepod-32", NULL, { 4, 8, 1 }, { 2, 2, 1 }, { 2, 4, 1 } },
		{ "v6e-8", NULL, { 2, 4, 1 }, { 2, 4, 1 }, { 1, 1, 1 } },
		{ "v6e-256", NULL, { 16, 16, 1 }, { 2, 2, 1 }, { 8, 8, 1 } },
		/* PyTorch/XLA's own v2/v3 host bounds table agrees */
		{ "v2-8", NULL, { 2, 2, 1 }, { 2, 2, 1 }, { 1, 1, 1 } },
		{ "v2-32", NULL, { 4, 4, 1 }, { 2, 2, 1 }, { 2, 2, 1 } },
		{ "v2-256", NULL, { 8, 16, 1 }, { 2, 2, 1 }, { 4, 8, 1 } },
		{ "v3-64", NULL, { 4, 8, 1 }, { 2, 2, 1 }, { 2, 4, 1 } },
		{ "v3-1024", NULL, { 16, 32, 1 }, { 2, 2, 1 }, { 8, 16, 1 } },
	};
	static const char *const bad[][2] = {
		{ "v4-32", "2x2x2" }, /* 8 chips, not 16 */
		{ "v4-32", "2x8" },   /* v4 is 3-D */
		{ "v9-8", NULL },
		{ "v4-7", NULL },
		{ "v4-24", NULL }, /* no default shape */
		{ "v4", NULL },
		{ "v4-x", NULL },
		{ NULL, NULL },
	};
	struct emu_md_bounds b;
	char acc[32];
	size_t i;
	int k;

	for (i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
		ck_assert_msg(emu_md_bounds(ok[i].accel, ok[i].topo, &b) == 0,
		    "%s", ok[i].accel);
		for (k = 0; k < 3; k++) {
			ck_assert_msg(b.topo[k] == ok[i].t[k], "%s topo[%d] %d",
			    ok[i].accel, k, b.topo[k]);
			ck_assert_msg(b.chips_per_host[k] == ok[i].cph[k],
			    "%s cph[%d] %d", ok[i].accel, k,
			    b.chips_per_host[k]);
			ck_assert_msg(b.hosts[k] == ok[i].hosts[k],
			    "%s hosts[%d] %d", ok[i].accel, k, b.hosts[k]);
		}
	}
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		ck_assert_msg(emu_md_bounds(bad[i][0], bad[i][1], &b) == -1,
		    "%s %s", bad[i][0] != NULL ? bad[i][0] : "NULL",
		    bad[i][1] != NULL ? bad[i][1] : "");
	ck_assert_int_eq(
	    emu_md_accel_from_config("V4", "2x2x4", acc, sizeof(acc)), 0);
	ck_assert_str_eq(acc, "v4-32");
	ck_assert_int_eq(
	    emu_md_accel_from_config("V5LITE_POD", "4x4", acc, sizeof(acc)), 0);
	ck_assert_str_eq(acc, "v5litepod-16");
	ck_assert_int_eq(
	    emu_md_accel_from_config("V9", "2x2", acc, sizeof(acc)), -1);
	ck_assert_int_eq(
	    emu_md_accel_from_config("V4", "2x2", acc, sizeof(acc)), -1);
}
END_TEST

static const char *const md_addrs[] = { "127.1.0.1", "127.1.0.2", "127.1.0.3",
	"127.1.0.4" };

static struct emu_md_worker
md_worker(int w)
{
	struct emu_md_worker mw;

	memset(&mw, 0, sizeof(mw));
	mw.node_key = NODE;
	mw.node_id = "123";
	mw.accel = "v4-32";
	mw.zone = "us-central2-b";
	mw.worker = w;
	mw.nworkers = 4;
	mw.addrs = md_addrs;
	return mw;
}

START_TEST(md_endpoints)
{
	struct emu_md_worker mw = md_worker(2);
	char want[1024], name[EMU_MD_NAME_MAX], id[EMU_MD_NAME_MAX], *got;
	size_t n = 0;
	int i;

	for (i = 0; i < 4; i++) {
		emu_md_hostname(NODE, "123", i, name, sizeof(name));
		emu_md_instance_id(NODE, "123", i, id, sizeof(id));
		n += (size_t)snprintf(want + n, sizeof(want) - n, "%s%s:%s:%s",
		    i > 0 ? "," : "", name, id, md_addrs[i]);
	}
	got = emu_md_endpoints(&mw);
	ck_assert_str_eq(got, want);
	free(got);
	/* Every worker renders the same list. */
	mw = md_worker(0);
	got = emu_md_endpoints(&mw);
	ck_assert_str_eq(got, want);
	free(got);
	mw.nworkers = 1;
	got = emu_md_endpoints(&mw);
	ck_assert(strchr(got, ',') == NULL);
	ck_assert(strstr(got, "-w-0:") != NULL);
	free(got);
}
END_TEST

START_TEST(md_tpu_env)
{
	struct emu_md_worker mw = md_worker(2);
	char *got;

	got = emu_md_tpu_env(&mw);
	ck_assert_str_eq(got, "ACCELERATOR_TYPE: 'v4-32'\n"
	                      "CHIPS_PER_HOST_BOUNDS: '2,2,1'\n"
	                      "HOST_BOUNDS: '1,1,4'\n"
	                      "NODE_ID: 'n1'\n"
	                      "TOPOLOGY: '2x2x4'\n"
	                      "TPU_CHIPS_PER_PROCESS_BOUNDS: '2,2,1'\n"
	                      "TPU_PROCESS_BOUNDS: '1,1,4'\n"
	                      "WORKER_ID: '2'\n"
	                      "ZONE: 'us-central2-b'\n");
	free(got);

	/* Slice 1 of 2 of a multislice: MEGASCALE_*, sorted in place. */
	mw = md_worker(1);
	mw.accel = "v5litepod-16";
	mw.slice = 1;
	mw.nslices = 2;
	mw.coordinator = "127.2.0.1";
	got = emu_md_tpu_env(&mw);
	ck_assert_str_eq(got,
	    "ACCELERATOR_TYPE: 'v5litepod-16'\n"
	    "CHIPS_PER_HOST_BOUNDS: '2,2,1'\n"
	    "HOST_BOUNDS: '2,2,1'\n"
	    "MEGASCALE_COORDINATOR_ADDRESS: '127.2.0.1:8080'\n"
	    "MEGASCALE_NUM_SLICES: '2'\n"
	    "MEGASCALE_PORT: '8080'\n"
	    "MEGASCALE_SLICE_ID: '1'\n"
	    "NODE_ID: 'n1'\n"
	    "TOPOLOGY: '4x4'\n"
	    "TPU_CHIPS_PER_PROCESS_BOUNDS: '2,2,1'\n"
	    "TPU_PROCESS_BOUNDS: '2,2,1'\n"
	    "WORKER_ID: '1'\n"
	    "ZONE: 'us-central2-b'\n");
	free(got);

	/* Unknown geometry: no bounds lines; quotes double (YAML). */
	mw = md_worker(0);
	mw.accel = "v9-8";
	mw.node_key = "projects/p/locations/z/nodes/it's";
	got = emu_md_tpu_env(&mw);
	ck_assert_str_eq(got, "ACCELERATOR_TYPE: 'v9-8'\n"
	                      "NODE_ID: 'it''s'\n"
	                      "WORKER_ID: '0'\n"
	                      "ZONE: 'us-central2-b'\n");
	free(got);
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
	tc = tcase_create("metadata");
	tcase_add_test(tc, md_names);
	tcase_add_test(tc, md_bounds);
	tcase_add_test(tc, md_endpoints);
	tcase_add_test(tc, md_tpu_env);
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
