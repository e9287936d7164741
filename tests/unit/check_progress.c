/*
 * Tests for src/progress.c: the count, when progress_add draws (at most
 * every every_ms, never with 0, at once when last_ms is 0), the rate,
 * and that adds from several threads all count.
 */
#include <pthread.h>
#include <stdlib.h>

#include <check.h>

#include "progress.h"

struct seen {
	int draws, finals;
	int64_t done_at_draw;
	struct progress *pr;
};

static void
count_draw(void *arg, int final)
{
	struct seen *s = arg;

	s->draws++;
	s->finals += final;
	s->done_at_draw = s->pr->done;
}

START_TEST(test_every)
{
	struct progress pr;
	struct seen s = { 0, 0, 0, &pr };

	progress_init(&pr, 1000, 200, count_draw, &s);
	ck_assert_int_eq(pr.start_ms, 1000);
	ck_assert_int_eq(pr.done, 0);
	progress_add_at(&pr, 10, 1100); /* 100 ms after the start: not yet */
	progress_add_at(&pr, 10, 1199);
	ck_assert_int_eq(s.draws, 0);
	progress_add_at(&pr, 10, 1200); /* 200 ms: a draw, with the sum */
	ck_assert_int_eq(s.draws, 1);
	ck_assert_int_eq(s.done_at_draw, 30);
	progress_add_at(&pr, 5, 1399); /* measured from that draw */
	ck_assert_int_eq(s.draws, 1);
	progress_add_at(&pr, 5, 1400);
	ck_assert_int_eq(s.draws, 2);
	ck_assert_int_eq(s.done_at_draw, 40);
	ck_assert_int_eq(pr.last_ms, 1400);
	ck_assert_int_eq(s.finals, 0);
	ck_assert_int_eq(pr.done, 40);
	progress_release(&pr);
}
END_TEST

START_TEST(test_at_once_and_never)
{
	struct progress pr;
	struct seen s = { 0, 0, 0, &pr };

	/* last_ms 0: the first bytes draw at once */
	progress_init(&pr, 5000, 500, count_draw, &s);
	pr.last_ms = 0;
	progress_add_at(&pr, 1, 5001);
	ck_assert_int_eq(s.draws, 1);
	progress_add_at(&pr, 1, 5400);
	ck_assert_int_eq(s.draws, 1);
	progress_release(&pr);

	/* every_ms 0: counted, never drawn (draw may be NULL) */
	progress_init(&pr, 0, 0, NULL, NULL);
	progress_add_at(&pr, 7, 100000);
	progress_add(&pr, 3);
	ck_assert_int_eq(pr.done, 10);
	progress_release(&pr);
}
END_TEST

START_TEST(test_rate)
{
	struct progress pr;

	progress_init(&pr, 1000, 0, NULL, NULL);
	ck_assert_double_eq(progress_rate(&pr, 1000), 0);
	progress_add_at(&pr, 5000, 2000);
	ck_assert_double_eq(progress_rate(&pr, 1000), 0); /* no time: 0 */
	ck_assert_double_eq(progress_rate(&pr, 3000), 2500.0);
	progress_release(&pr);
}
END_TEST

#define NTHREADS 4
#define NADDS 10000

static void *
adder(void *arg)
{
	struct progress *pr = arg;
	int i;

	for (i = 0; i < NADDS; i++)
		progress_add(pr, 3);
	return NULL;
}

START_TEST(test_threads)
{
	struct progress pr;
	struct seen s = { 0, 0, 0, &pr };
	pthread_t th[NTHREADS];
	int i;

	progress_init(&pr, 0, 1, count_draw, &s);
	for (i = 0; i < NTHREADS; i++)
		ck_assert_int_eq(pthread_create(&th[i], NULL, adder, &pr), 0);
	for (i = 0; i < NTHREADS; i++)
		pthread_join(th[i], NULL);
	ck_assert_int_eq(pr.done, (int64_t)NTHREADS * NADDS * 3);
	ck_assert_int_eq(s.finals, 0);
	progress_release(&pr);
}
END_TEST

static Suite *
progress_suite(void)
{
	Suite *s = suite_create("progress");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, test_every);
	tcase_add_test(tc, test_at_once_and_never);
	tcase_add_test(tc, test_rate);
	tcase_add_test(tc, test_threads);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	SRunner *sr = srunner_create(progress_suite());
	int nf;

	srunner_run_all(sr, CK_NORMAL);
	nf = srunner_ntests_failed(sr);
	srunner_free(sr);
	return nf == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
