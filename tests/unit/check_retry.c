/*
 * Unit tests for src/retry.c: retryable classes (R1), full-jitter backoff
 * bounds and the overall deadline (A12), Retry-After parsing (A2).
 */
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <check.h>

#include "retry.h"

START_TEST(statuses)
{
	static const int yes[] = { 408, 429, 500, 502, 503, 504, 599 };
	static const int no[] = { 200, 308, 400, 401, 403, 404, 409, 412, 413,
		600 };
	size_t i;

	for (i = 0; i < sizeof yes / sizeof yes[0]; i++)
		ck_assert_int_eq(retry_status_retryable(yes[i]), 1);
	for (i = 0; i < sizeof no / sizeof no[0]; i++)
		ck_assert_int_eq(retry_status_retryable(no[i]), 0);
}
END_TEST

START_TEST(curl_codes)
{
	static const int yes[] = { 6, 7, 18, 28, 52, 55, 56 };
	static const int no[] = { 0, 1, 3, 22, 23, 51, 58, 60, 77 };
	size_t i;

	for (i = 0; i < sizeof yes / sizeof yes[0]; i++)
		ck_assert_int_eq(retry_curl_retryable(yes[i], 0), 1);
	for (i = 0; i < sizeof no / sizeof no[0]; i++) {
		ck_assert_int_eq(retry_curl_retryable(no[i], 0), 0);
		ck_assert_int_eq(retry_curl_retryable(no[i], 1), 0);
	}
	ck_assert_int_eq(retry_curl_retryable(35, 0), 0);
	ck_assert_int_eq(retry_curl_retryable(35, 1), 1);
}
END_TEST

START_TEST(backoff_bounds)
{
	struct retry_policy p;
	uint64_t rng = 12345;
	int n, k;
	int64_t ceil, w, max_seen[8] = { 0 };

	retry_policy_default(&p);
	for (n = 0; n < 8; n++) {
		ceil = 1000LL << n;
		if (ceil > 30000)
			ceil = 30000;
		for (k = 0; k < 2000; k++) {
			w = retry_backoff_ms(&p, n, &rng);
			ck_assert_int_ge(w, 0);
			ck_assert_int_le(w, ceil);
			if (w > max_seen[n])
				max_seen[n] = w;
		}
		/* full jitter really spreads over the range */
		ck_assert_int_gt(max_seen[n], ceil / 2);
	}
	ck_assert_int_le(retry_backoff_ms(&p, 1000, &rng), 30000);
}
END_TEST

START_TEST(deadline_and_attempts)
{
	struct retry_policy p;
	struct retry_state s;
	int64_t now = 1000000, w, total = 0;
	int seed, tries;

	retry_policy_default(&p);
	p.deadline_ms = 20000;
	p.max_attempts = 100;
	for (seed = 1; seed < 200; seed++) {
		retry_state_init(&s, &p, (uint64_t)seed, now);
		total = 0;
		tries = 0;
		while (retry_next(&s, -1, now + total, &w) == 0) {
			ck_assert_int_ge(w, 0);
			total += w;
			tries++;
		}
		/* every sleep ends before the deadline */
		ck_assert_int_lt(total, p.deadline_ms);
		ck_assert_int_lt(tries, 100);
	}
	p.deadline_ms = 0;
	p.max_attempts = 3;
	retry_state_init(&s, &p, 7, now);
	ck_assert_int_eq(retry_next(&s, -1, now, &w), 0);
	ck_assert_int_eq(retry_next(&s, -1, now, &w), 0);
	ck_assert_int_eq(retry_next(&s, -1, now, &w), -1);
	/* progress (R3) starts the count again */
	retry_state_progress(&s);
	ck_assert_int_eq(retry_next(&s, -1, now, &w), 0);
}
END_TEST

START_TEST(retry_after_overrides_and_capped)
{
	struct retry_policy p;
	struct retry_state s;
	int64_t w;

	retry_policy_default(&p);
	p.deadline_ms = 10000;
	retry_state_init(&s, &p, 9, 0);
	ck_assert_int_eq(retry_next(&s, 3000, 0, &w), 0);
	ck_assert_int_eq(w, 3000);
	/* a Retry-After past the deadline ends the retries */
	ck_assert_int_eq(retry_next(&s, 60000, 1000, &w), -1);
}
END_TEST

START_TEST(parse_after)
{
	int64_t ms;
	time_t now = 1445412480; /* Wed, 21 Oct 2015 07:28:00 GMT */

	ck_assert_int_eq(retry_parse_after("3", now, &ms), 0);
	ck_assert_int_eq(ms, 3000);
	ck_assert_int_eq(retry_parse_after(" 120\r\n", now, &ms), 0);
	ck_assert_int_eq(ms, 120000);
	ck_assert_int_eq(retry_parse_after("0", now, &ms), 0);
	ck_assert_int_eq(ms, 0);
	ck_assert_int_eq(
	    retry_parse_after("Wed, 21 Oct 2015 07:28:10 GMT", now, &ms), 0);
	ck_assert_int_eq(ms, 10000);
	ck_assert_int_eq(
	    retry_parse_after("Wednesday, 21-Oct-15 07:28:05 GMT", now, &ms),
	    0);
	ck_assert_int_eq(ms, 5000);
	ck_assert_int_eq(
	    retry_parse_after("Wed Oct 21 07:28:07 2015", now, &ms), 0);
	ck_assert_int_eq(ms, 7000);
	/* the past is "now" */
	ck_assert_int_eq(
	    retry_parse_after("Wed, 21 Oct 2015 07:00:00 GMT", now, &ms), 0);
	ck_assert_int_eq(ms, 0);
}
END_TEST

START_TEST(parse_after_garbage)
{
	static const char *const bad[] = { "", "soon", "-1", "1.5", "3s",
		"99999999999999", "Wed, 32 Oct 2015 07:28:00 GMT",
		"Wed, 21 Foo 2015 07:28:00 GMT",
		"Wed, 21 Oct 2015 25:28:00 GMT",
		"Wed, 21 Oct 2015 07:28:00 PST", "Wed, 21 Oct 2015", ",",
		"Wed Oct 21 07:28:07", "0x10" };
	size_t i;
	int64_t ms;

	for (i = 0; i < sizeof bad / sizeof bad[0]; i++)
		ck_assert_msg(retry_parse_after(bad[i], 0, &ms) == -1,
		    "accepted '%s'", bad[i]);
	ck_assert_int_eq(retry_parse_after(NULL, 0, &ms), -1);
}
END_TEST

START_TEST(sleep_interrupted)
{
	struct tpu_err err;

	tpu_err_init(&err);
	ck_assert_int_eq(retry_sleep(10, &err), 0);
	retry_interrupted = 2; /* SIGINT */
	ck_assert_int_eq(retry_sleep(60000, &err), TPU_E_INTERRUPTED);
	retry_interrupted = 15;
	ck_assert_int_eq(retry_sleep(60000, &err), TPU_E_TERMINATED);
	retry_interrupted = 0;
}
END_TEST

/* The one interrupt flag: the handlers record the signal, once
 * installed (a second install changes nothing), and the codes follow. */
START_TEST(install_signals_once)
{
	struct sigaction sa;

	ck_assert_int_eq(retry_interrupt_errc(SIGINT), TPU_E_INTERRUPTED);
	ck_assert_int_eq(retry_interrupt_errc(SIGTERM), TPU_E_TERMINATED);
	ck_assert_str_eq(retry_interrupt_name(SIGINT), "interrupted");
	ck_assert_str_eq(retry_interrupt_name(SIGTERM), "terminated");
	retry_install_signals();
	raise(SIGTERM);
	ck_assert_int_eq(retry_interrupted, SIGTERM);
	raise(SIGINT);
	ck_assert_int_eq(retry_interrupted, SIGINT);
	retry_interrupted = 0;
	/* a handler set meanwhile is not replaced by a second install */
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = SIG_IGN;
	sigaction(SIGTERM, &sa, NULL);
	retry_install_signals();
	raise(SIGTERM);
	ck_assert_int_eq(retry_interrupted, 0);
	signal(SIGTERM, SIG_DFL);
	signal(SIGINT, SIG_DFL);
}
END_TEST

static Suite *
retry_suite(void)
{
	Suite *s = suite_create("retry");
	TCase *tc;

	tc = tcase_create("classes");
	tcase_add_test(tc, statuses);
	tcase_add_test(tc, curl_codes);
	suite_add_tcase(s, tc);
	tc = tcase_create("backoff");
	tcase_add_test(tc, backoff_bounds);
	tcase_add_test(tc, deadline_and_attempts);
	tcase_add_test(tc, retry_after_overrides_and_capped);
	tcase_add_test(tc, sleep_interrupted);
	tcase_add_test(tc, install_signals_once);
	suite_add_tcase(s, tc);
	tc = tcase_create("retry_after");
	tcase_add_test(tc, parse_after);
	tcase_add_test(tc, parse_after_garbage);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	SRunner *sr = srunner_create(retry_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
