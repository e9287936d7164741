/*
 * Unit tests for src/log.c: which levels print, the program prefix, the
 * function name on debug lines, one line per call.  stderr is captured
 * in a temporary file.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <check.h>

#include "log.h"

static char captured[8192];
static int saved = -1;
static FILE *cap;

static void
capture_start(void)
{
	fflush(stderr);
	cap = tmpfile();
	ck_assert_ptr_nonnull(cap);
	saved = dup(STDERR_FILENO);
	dup2(fileno(cap), STDERR_FILENO);
}

static const char *
capture_end(void)
{
	size_t n;

	fflush(stderr);
	dup2(saved, STDERR_FILENO);
	close(saved);
	rewind(cap);
	n = fread(captured, 1, sizeof captured - 1, cap);
	captured[n] = '\0';
	fclose(cap);
	return captured;
}

START_TEST(levels)
{
	log_set_level(LOG_WARN);
	ck_assert_int_eq(log_get_level(), LOG_WARN);
	capture_start();
	log_warn("w%d", 1);
	log_info("i%d", 1);
	log_debug("d%d", 1);
	ck_assert_str_eq(capture_end(), "tpuctl: w1\n");

	log_set_level(LOG_INFO);
	capture_start();
	log_warn("w");
	log_info("i");
	log_debug("d");
	ck_assert_str_eq(capture_end(), "tpuctl: w\ntpuctl: i\n");

	log_set_level(LOG_DEBUG);
	capture_start();
	log_debug("d%s", "x");
	/* Check names the test function levels_fn. */
	ck_assert_str_eq(capture_end(), "tpuctl: levels_fn: dx\n");

	log_set_level(LOG_QUIET);
	capture_start();
	log_warn("w");
	log_info("i");
	ck_assert_str_eq(capture_end(), "");
}
END_TEST

START_TEST(one_line_and_prog)
{
	char big[6000];

	log_set_level(LOG_WARN);
	log_set_prog("tpuctl-emulator");
	capture_start();
	log_warn("trailing newlines go\n\n");
	ck_assert_str_eq(
	    capture_end(), "tpuctl-emulator: trailing newlines go\n");
	log_set_prog("tpuctl");
	memset(big, 'z', sizeof big - 1);
	big[sizeof big - 1] = '\0';
	capture_start();
	log_warn("%s", big);
	/* Long messages are cut, still one line. */
	ck_assert_ptr_eq(
	    strchr(capture_end(), '\n'), captured + strlen(captured) - 1);
	ck_assert_uint_lt(strlen(captured), sizeof big);
}
END_TEST

static Suite *
log_suite(void)
{
	Suite *s = suite_create("log");
	TCase *tc = tcase_create("log");

	tcase_add_test(tc, levels);
	tcase_add_test(tc, one_line_and_prog);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	SRunner *sr = srunner_create(log_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
