/*
 * Tests for src/fdlimit.c: when the soft RLIMIT_NOFILE is raised, how
 * far, and the error when the hard limit is too low.  Each test runs in
 * its own process (check's fork mode), so lowering the limits is local.
 */
#include <sys/resource.h>

#include <stdlib.h>
#include <string.h>

#include <check.h>

#include "err.h"
#include "fdlimit.h"

START_TEST(test_plan)
{
	unsigned long long to = 0;

	/* Enough already: unchanged. */
	ck_assert_int_eq(fdlimit_plan(1024, 4096, 100, &to), 0);
	ck_assert_uint_eq(to, 1024);
	ck_assert_int_eq(
	    fdlimit_plan(1024, 4096, 1024 - FDLIMIT_SLACK, &to), 0);
	ck_assert_uint_eq(to, 1024);
	/* More: up to the hard limit. */
	ck_assert_int_eq(fdlimit_plan(1024, 4096, 2048, &to), 0);
	ck_assert_uint_eq(to, 4096);
	ck_assert_int_eq(
	    fdlimit_plan(1024, 4096, 4096 - FDLIMIT_SLACK, &to), 0);
	ck_assert_uint_eq(to, 4096);
	/* Beyond it: refused. */
	ck_assert_int_eq(
	    fdlimit_plan(1024, 4096, 4096 - FDLIMIT_SLACK + 1, &to), -1);
	/* An unlimited hard limit is not taken literally. */
	ck_assert_int_eq(fdlimit_plan(1024, ~0ULL, 4096, &to), 0);
	ck_assert_uint_eq(to, FDLIMIT_CAP);
	ck_assert_int_eq(fdlimit_plan(1024, ~0ULL, FDLIMIT_CAP, &to), 0);
	ck_assert_uint_eq(to, FDLIMIT_CAP + FDLIMIT_SLACK);
}
END_TEST

START_TEST(test_ensure)
{
	struct rlimit rl = { 100, 300 };
	struct tpu_err err;

	ck_assert_int_eq(setrlimit(RLIMIT_NOFILE, &rl), 0);
	tpu_err_init(&err);
	ck_assert_int_eq(fdlimit_ensure(30, "x", &err), 0);
	ck_assert_int_eq(getrlimit(RLIMIT_NOFILE, &rl), 0);
	ck_assert_uint_eq(rl.rlim_cur, 100);
	ck_assert_int_eq(fdlimit_ensure(200, "x", &err), 0);
	ck_assert_int_eq(getrlimit(RLIMIT_NOFILE, &rl), 0);
	ck_assert_uint_eq(rl.rlim_cur, 300);
	ck_assert_uint_eq(rl.rlim_max, 300);
	ck_assert_int_eq(
	    fdlimit_ensure(2048, "--output-dir for 2048 workers", &err),
	    TPU_E_IO);
	ck_assert_str_eq(err.msg,
	    "--output-dir for 2048 workers needs 2112 open files, but the "
	    "limit is 300 (hard limit, ulimit -Hn): raise it or use fewer "
	    "workers");
}
END_TEST

static Suite *
fdlimit_suite(void)
{
	Suite *s = suite_create("fdlimit");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, test_plan);
	tcase_add_test(tc, test_ensure);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	SRunner *sr = srunner_create(fdlimit_suite());
	int nf;

	srunner_run_all(sr, CK_NORMAL);
	nf = srunner_ntests_failed(sr);
	srunner_free(sr);
	return nf == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
