/*
 * Unit tests for src/gcsurl.c: the bucket and object rows of
 * RELIABILITY.md table 4F, percent-encoding (S7) and download path
 * mapping (S8).
 */
#include <stdlib.h>
#include <string.h>

#include <check.h>

#include "gcsurl.h"
#include "util.h"

START_TEST(bucket_accept)
{
	static const char *ok[] = { "my-bkt", "a.b.c", "abc", "a_b-c9",
		"b_k..t", "0bucket" };
	struct tpu_err err;
	size_t i;

	for (i = 0; i < nitems(ok); i++) {
		tpu_err_init(&err);
		ck_assert_msg(gcs_bucket_validate(ok[i], &err) == 0, "%s: %s",
		    ok[i], err.msg);
	}
}
END_TEST

START_TEST(bucket_reject)
{
	static const char *bad[] = { "ab", "My-Bkt", "-bkt", "bkt-",
		"192.168.5.4", "goog-bkt", "my-google-bkt", "b kt", "bkt/x",
		"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
		"aa",
		"x."
		"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
		"aa",
		"" };
	struct tpu_err err;
	size_t i;

	for (i = 0; i < nitems(bad); i++) {
		tpu_err_init(&err);
		ck_assert_msg(gcs_bucket_validate(bad[i], &err) == TPU_E_USAGE,
		    "accepted '%s'", bad[i]);
		ck_assert_ptr_nonnull(strstr(err.msg, "bucket name"));
	}
}
END_TEST

START_TEST(object_rules)
{
	char big[1026];
	struct tpu_err err;

	ck_assert_int_eq(gcs_object_validate("a/b/c.txt", &err), 0);
	ck_assert_int_eq(
	    gcs_object_validate("d\xc3\xa9j\xc3\xa0/\xe2\x9c\x93", &err), 0);
	memset(big, 'x', 1024);
	big[1024] = '\0';
	ck_assert_int_eq(gcs_object_validate(big, &err), 0);
	big[1024] = 'x';
	big[1025] = '\0';
	ck_assert_int_eq(gcs_object_validate(big, &err), TPU_E_USAGE);
	ck_assert_int_eq(gcs_object_validate("", &err), TPU_E_USAGE);
	ck_assert_int_eq(gcs_object_validate("a\nb", &err), TPU_E_USAGE);
	ck_assert_int_eq(gcs_object_validate("a\rb", &err), TPU_E_USAGE);
	ck_assert_int_eq(gcs_object_validate(".", &err), TPU_E_USAGE);
	ck_assert_int_eq(gcs_object_validate("..", &err), TPU_E_USAGE);
	ck_assert_int_eq(gcs_object_validate("bad\xff", &err), TPU_E_USAGE);
	ck_assert_int_eq(gcs_object_validate("\xc0\xaf", &err), TPU_E_USAGE);
	ck_assert_int_eq(
	    gcs_object_validate("\xed\xa0\x80", &err), TPU_E_USAGE);
}
END_TEST

START_TEST(url_parse)
{
	struct gcs_url u;
	struct tpu_err err;

	ck_assert_int_eq(gcs_url_parse("gs://my-bkt/a/b.txt", &u, &err), 0);
	ck_assert_str_eq(u.bucket, "my-bkt");
	ck_assert_str_eq(u.object, "a/b.txt");
	gcs_url_release(&u);
	ck_assert_int_eq(gcs_url_parse("gs://my-bkt", &u, &err), 0);
	ck_assert_str_eq(u.object, "");
	gcs_url_release(&u);
	ck_assert_int_eq(gcs_url_parse("gs://my-bkt/", &u, &err), 0);
	ck_assert_str_eq(u.object, "");
	gcs_url_release(&u);
	ck_assert_int_eq(gcs_url_parse("s3://x/y", &u, &err), TPU_E_USAGE);
	ck_assert_ptr_nonnull(strstr(err.msg, "s3://x/y"));
	ck_assert_int_eq(gcs_url_parse("gs://My/y", &u, &err), TPU_E_USAGE);
	ck_assert_int_eq(gcs_url_parse("gs://bkt/a\nb", &u, &err), TPU_E_USAGE);
	ck_assert_ptr_null(u.bucket);
}
END_TEST

START_TEST(pct_encode)
{
	char *s;

	s = gcs_pct_encode("a?b#c%2F");
	ck_assert_str_eq(s, "a%3Fb%23c%252F");
	free(s);
	s = gcs_pct_encode("tmp/test/x y+z");
	ck_assert_str_eq(s, "tmp%2Ftest%2Fx%20y%2Bz");
	free(s);
	s = gcs_pct_encode("\xc3\xa9-._~");
	ck_assert_str_eq(s, "%C3%A9-._~");
	free(s);
	s = gcs_pct_encode("");
	ck_assert_str_eq(s, "");
	free(s);
}
END_TEST

START_TEST(local_path_safe)
{
	struct tpu_err err;
	char *p;

	p = gcs_local_path("/dst", "data/", "data/a/b.bin", &err);
	ck_assert_str_eq(p, "/dst/a/b.bin");
	free(p);
	p = gcs_local_path("/dst", "data", "data/a", &err);
	ck_assert_str_eq(p, "/dst/a");
	free(p);
	p = gcs_local_path("/dst", "", "x..y/..z", &err);
	ck_assert_str_eq(p, "/dst/x..y/..z");
	free(p);
}
END_TEST

START_TEST(local_path_escape)
{
	static const char *bad[] = { "../../etc/passwd", "a/../../b", "/abs",
		"a//b", "a/./b", "a\\..\\b", "a/", ".." };
	struct tpu_err err;
	size_t i;

	for (i = 0; i < nitems(bad); i++) {
		tpu_err_init(&err);
		ck_assert_msg(gcs_local_path("/dst", "", bad[i], &err) == NULL,
		    "mapped '%s'", bad[i]);
		ck_assert_int_eq(err.code, TPU_E_INVALID);
	}
}
END_TEST

START_TEST(wildcards)
{
	static const struct {
		const char *p, *s;
		int want;
	} c[] = {
		{ "big*.tar", "big1.tar", 1 },
		{ "big*.tar", "big.tar", 1 },
		{ "big*.tar", "big/1.tar", 0 }, /* '*' stays in its part */
		{ "dir/**", "dir/a/b/c", 1 },
		{ "dir/**", "dir/", 1 },
		{ "dir/**", "dirx/a", 0 },
		{ "**.json", "a/b/c.json", 1 },
		{ "**/c*d", "a/c/x/c1d", 1 }, /* back to the "**" */
		{ "**/c*d", "a/c/x/c1/d", 0 },
		{ "a?c", "abc", 1 },
		{ "a?c", "a?c", 1 }, /* a literal '?' matches itself */
		{ "a?c", "a/c", 0 },
		{ "a?c", "ac", 0 },
		{ "*", "", 1 },
		{ "*", "abc", 1 },
		{ "*", "a/b", 0 },
		{ "**", "a/b", 1 },
		{ "*a*a*a*b", "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", 0 },
		{ "x/*/y", "x/q/y", 1 },
		{ "x/*/y", "x/q/r/y", 0 },
		{ "x/**/y", "x/q/r/y", 1 },
		{ "abc", "abc", 1 },
		{ "abc", "abcd", 0 },
	};
	size_t i;

	for (i = 0; i < sizeof c / sizeof c[0]; i++)
		ck_assert_msg(gcs_wildcard_match(c[i].p, c[i].s) == c[i].want,
		    "%s ~ %s: want %d", c[i].p, c[i].s, c[i].want);
	ck_assert_int_eq(gcs_has_wildcard("a/b*"), 1);
	ck_assert_int_eq(gcs_has_wildcard("a/b?"), 1);
	ck_assert_int_eq(gcs_has_wildcard("a/b"), 0);
	ck_assert_uint_eq(gcs_wildcard_prefix("data/big*.tar"), 8);
	ck_assert_uint_eq(gcs_wildcard_prefix("**"), 0);
	ck_assert_uint_eq(gcs_wildcard_prefix("plain"), 5);
}
END_TEST

START_TEST(wildcard_root)
{
	static const struct {
		const char *p, *s;
		size_t want;
	} c[] = {
		{ "run*", "run1", 4 },            /* the object itself */
		{ "run*", "run1/a/b", 4 },        /* under the "directory" */
		{ "run*", "x/run1", 0 },          /* '*' stays in its part */
		{ "d/r?", "d/r2/ckpt/0", 4 },     /* '?' as one character */
		{ "**/b", "a/x/b/c/b/z", 5 },     /* the shortest root */
		{ "**", "a/b", 1 },               /* every top "directory" */
		{ "d/*.json", "d/a.json", 8 },    /* a plain object match */
		{ "d/*.json", "d/a.jsonx/y", 0 }, /* no part matches */
		{ "*", "", 0 },                   /* an empty name never */
		{ "a*", "a//b", 1 },              /* empty parts skipped */
	};
	size_t i;

	for (i = 0; i < sizeof c / sizeof c[0]; i++)
		ck_assert_msg(gcs_wildcard_root(c[i].p, c[i].s) == c[i].want,
		    "%s ~ %s: want %zu, got %zu", c[i].p, c[i].s, c[i].want,
		    gcs_wildcard_root(c[i].p, c[i].s));
}
END_TEST

static Suite *
gcsurl_suite(void)
{
	Suite *s = suite_create("gcsurl");
	TCase *tc;

	tc = tcase_create("names");
	tcase_add_test(tc, bucket_accept);
	tcase_add_test(tc, bucket_reject);
	tcase_add_test(tc, object_rules);
	tcase_add_test(tc, url_parse);
	suite_add_tcase(s, tc);
	tc = tcase_create("encoding");
	tcase_add_test(tc, pct_encode);
	tcase_add_test(tc, local_path_safe);
	tcase_add_test(tc, local_path_escape);
	tcase_add_test(tc, wildcards);
	tcase_add_test(tc, wildcard_root);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	SRunner *sr = srunner_create(gcsurl_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
