/*
 * Unit tests for src/err.c: message formatting, prefixes, and the one
 * table mapping error codes onto the exit-status contract of DESIGN.md.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <check.h>

#include "err.h"

START_TEST(error_formats_and_returns)
{
	struct tpu_err err;

	tpu_err_init(&err);
	ck_assert_int_eq(err.code, TPU_OK);
	ck_assert_str_eq(err.msg, "");
	ck_assert_int_eq(
	    tpu_error(&err, TPU_E_NOTFOUND, "node '%s' not found", "n1"),
	    TPU_E_NOTFOUND);
	ck_assert_int_eq(err.code, TPU_E_NOTFOUND);
	ck_assert_str_eq(err.msg, "node 'n1' not found");
	/* A NULL err is allowed: the code still comes back. */
	ck_assert_int_eq(tpu_error(NULL, TPU_E_IO, "x"), TPU_E_IO);
}
END_TEST

START_TEST(error_keeps_http_status)
{
	struct tpu_err err;

	tpu_err_init(&err);
	err.http_status = 409;
	snprintf(err.api_status, sizeof err.api_status, "ALREADY_EXISTS");
	tpu_error(&err, TPU_E_CONFLICT, "exists");
	ck_assert_int_eq(err.http_status, 409);
	ck_assert_str_eq(err.api_status, "ALREADY_EXISTS");
}
END_TEST

START_TEST(error_truncates)
{
	struct tpu_err err;
	char big[3000];

	memset(big, 'a', sizeof big - 1);
	big[sizeof big - 1] = '\0';
	tpu_err_init(&err);
	tpu_error(&err, TPU_E_API, "%s", big);
	ck_assert_uint_eq(strlen(err.msg), TPU_ERR_MSGLEN - 1);
}
END_TEST

START_TEST(error_prefix)
{
	struct tpu_err err;
	char big[2000];

	tpu_err_init(&err);
	tpu_error(&err, TPU_E_PERMISSION, "permission denied (HTTP 403)");
	ck_assert_int_eq(
	    tpu_error_prefix(&err, "cannot delete node '%s'", "n1"),
	    TPU_E_PERMISSION);
	ck_assert_str_eq(
	    err.msg, "cannot delete node 'n1': permission denied (HTTP 403)");
	/* A prefix longer than the buffer truncates without overflow. */
	memset(big, 'p', sizeof big - 1);
	big[sizeof big - 1] = '\0';
	tpu_error_prefix(&err, "%s", big);
	ck_assert_uint_eq(strlen(err.msg), TPU_ERR_MSGLEN - 1);
	ck_assert_int_eq(err.code, TPU_E_PERMISSION);
}
END_TEST

START_TEST(exit_status_contract)
{
	static const struct {
		enum tpu_errc code;
		int status;
	} rows[] = {
		{ TPU_OK, 0 },
		{ TPU_E_INTERNAL, 1 },
		{ TPU_E_API, 1 },
		{ TPU_E_IO, 1 },
		{ TPU_E_USAGE, 2 },
		{ TPU_E_INVALID, 2 },
		{ TPU_E_AUTH, 3 },
		{ TPU_E_PERMISSION, 3 },
		{ TPU_E_NOTFOUND, 4 },
		{ TPU_E_CONFLICT, 4 },
		{ TPU_E_PRECONDITION, 4 },
		{ TPU_E_TRANSIENT, 5 },
		{ TPU_E_INTEGRITY, 6 },
		{ TPU_E_OPERATION, 7 },
		{ TPU_E_PARTIAL, 8 },
		{ TPU_E_UNREACHABLE, 9 },
		{ TPU_E_TIMEOUT, 124 },
		{ TPU_E_INTERRUPTED, 130 },
		{ TPU_E_TERMINATED, 143 },
		{ TPU_E_DECLINED, 1 },
	};
	size_t i;

	for (i = 0; i < sizeof rows / sizeof rows[0]; i++) {
		ck_assert_int_eq(tpu_exit_status(rows[i].code), rows[i].status);
		ck_assert_str_ne(tpu_errc_name(rows[i].code), "unknown error");
	}
	/* Every code of the enum has a row. */
	ck_assert_uint_eq(
	    sizeof rows / sizeof rows[0], (size_t)(-TPU_E_DECLINED + 1));
	ck_assert_int_eq(tpu_exit_status((enum tpu_errc) - 99), 1);
	ck_assert_str_eq(tpu_errc_name((enum tpu_errc) - 99), "unknown error");
	ck_assert_str_eq(tpu_errc_name(TPU_E_NOTFOUND), "not found");
}
END_TEST

START_TEST(http_mapping)
{
	static const struct {
		int http;
		enum tpu_errc code;
	} rows[] = {
		{ 200, TPU_OK },
		{ 204, TPU_OK },
		{ 299, TPU_OK },
		{ 400, TPU_E_INVALID },
		{ 401, TPU_E_AUTH },
		{ 403, TPU_E_PERMISSION },
		{ 404, TPU_E_NOTFOUND },
		{ 410, TPU_E_NOTFOUND },
		{ 409, TPU_E_CONFLICT },
		{ 412, TPU_E_PRECONDITION },
		{ 408, TPU_E_TRANSIENT },
		{ 429, TPU_E_TRANSIENT },
		{ 500, TPU_E_TRANSIENT },
		{ 503, TPU_E_TRANSIENT },
		{ 302, TPU_E_API },
		{ 418, TPU_E_API },
		{ 0, TPU_E_API },
	};
	size_t i;

	for (i = 0; i < sizeof rows / sizeof rows[0]; i++)
		ck_assert_msg(tpu_errc_from_http(rows[i].http) == rows[i].code,
		    "HTTP %d", rows[i].http);
}
END_TEST

START_TEST(bug_aborts)
{
	TPU_BUG("broken invariant");
}
END_TEST

static Suite *
err_suite(void)
{
	Suite *s = suite_create("err");
	TCase *tc;

	tc = tcase_create("messages");
	tcase_add_test(tc, error_formats_and_returns);
	tcase_add_test(tc, error_keeps_http_status);
	tcase_add_test(tc, error_truncates);
	tcase_add_test(tc, error_prefix);
	suite_add_tcase(s, tc);

	tc = tcase_create("codes");
	tcase_add_test(tc, exit_status_contract);
	tcase_add_test(tc, http_mapping);
	tcase_add_test_raise_signal(tc, bug_aborts, SIGABRT);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	SRunner *sr = srunner_create(err_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
