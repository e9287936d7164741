/*
 * Unit tests for src/util.c: bounded number and duration parsing.
 */
#include <stdlib.h>
#include <string.h>

#include <check.h>

#include "util.h"

START_TEST(strtonum_accepts_range)
{
	const char *e;

	ck_assert_int_eq(tpu_strtonum("0", 0, 10, &e), 0);
	ck_assert_ptr_null(e);
	ck_assert_int_eq(tpu_strtonum("10", 0, 10, &e), 10);
	ck_assert_ptr_null(e);
	ck_assert_int_eq(tpu_strtonum("-5", -5, 10, &e), -5);
	ck_assert_ptr_null(e);
}
END_TEST

START_TEST(strtonum_rejects)
{
	const char *e;

	tpu_strtonum("11", 0, 10, &e);
	ck_assert_str_eq(e, "too large");
	tpu_strtonum("-1", 0, 10, &e);
	ck_assert_str_eq(e, "too small");
	tpu_strtonum("", 0, 10, &e);
	ck_assert_str_eq(e, "invalid");
	tpu_strtonum(" 1", 0, 10, &e);
	ck_assert_str_eq(e, "invalid");
	tpu_strtonum("+1", 0, 10, &e);
	ck_assert_str_eq(e, "invalid");
	tpu_strtonum("1x", 0, 10, &e);
	ck_assert_str_eq(e, "invalid");
	tpu_strtonum("99999999999999999999", 0, 10, &e);
	ck_assert_str_eq(e, "too large");
}
END_TEST

START_TEST(duration_forms)
{
	struct tpu_err err;
	long long s;

	tpu_err_init(&err);
	ck_assert_int_eq(tpu_parse_duration("--timeout", "90", &s, &err), 0);
	ck_assert_int_eq(s, 90);
	ck_assert_int_eq(tpu_parse_duration("--timeout", "5m", &s, &err), 0);
	ck_assert_int_eq(s, 300);
	ck_assert_int_eq(tpu_parse_duration("--timeout", "1h30m", &s, &err), 0);
	ck_assert_int_eq(s, 5400);
	ck_assert_int_eq(tpu_parse_duration("--timeout", "1d", &s, &err), 0);
	ck_assert_int_eq(s, 86400);
}
END_TEST

START_TEST(duration_rejects)
{
	static const char *bad[] = { "", "m", "5x", "1h30", "-5", "5 m",
		"999999999999d", "1.5h" };
	struct tpu_err err;
	long long s;
	size_t i;

	for (i = 0; i < nitems(bad); i++) {
		tpu_err_init(&err);
		ck_assert_int_eq(
		    tpu_parse_duration("--timeout", bad[i], &s, &err),
		    TPU_E_USAGE);
		ck_assert_ptr_nonnull(strstr(err.msg, "--timeout"));
	}
}
END_TEST

static Suite *
util_suite(void)
{
	Suite *s = suite_create("util");
	TCase *tc;

	tc = tcase_create("strtonum");
	tcase_add_test(tc, strtonum_accepts_range);
	tcase_add_test(tc, strtonum_rejects);
	suite_add_tcase(s, tc);
	tc = tcase_create("duration");
	tcase_add_test(tc, duration_forms);
	tcase_add_test(tc, duration_rejects);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	SRunner *sr = srunner_create(util_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
