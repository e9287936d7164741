/*
 * Tests for src/outgroup.c: the grouped summary of a fan-out (identical
 * outcomes together, ranges, counts past OUTGROUP_MAX_PIECES, order,
 * details, nodes of a queued resource, the buffer cap).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <check.h>

#include "buf.h"
#include "outgroup.h"
#include "xmalloc.h"

static char *
fmt(const struct outgroup_item *it, size_t n)
{
	struct buf b;

	buf_init(&b, BUF_NOCAP);
	ck_assert_int_eq(outgroup_format(it, n, &b), 0);
	return buf_detach(&b, NULL);
}

START_TEST(test_issue_example)
{
	struct outgroup_item *it = xcalloc(2048, sizeof *it);
	char *s;
	int i;

	for (i = 0; i < 2048; i++) {
		it[i].worker = i;
		it[i].what = "exit 0";
	}
	it[17].what = it[903].what = "exit 1";
	for (i = 1200; i <= 1204; i++) {
		it[i].what = "connect timeout";
		it[i].detail = i == 1200 ? "after 10 s" : "other";
	}
	/* Given out of order: the result does not depend on it. */
	{
		struct outgroup_item t = it[1202];

		it[1202] = it[5];
		it[5] = t;
	}
	s = fmt(it, 2048);
	ck_assert_str_eq(s,
	    "2041 workers: exit 0; w1200-w1204: connect timeout (w1200: "
	    "after 10 s); w17, w903: exit 1");
	free(s);
	free(it);
}
END_TEST

START_TEST(test_small)
{
	struct outgroup_item one[] = { { NULL, 3, "exit 0", NULL } };
	struct outgroup_item two[] = { { NULL, 1, "exit 2", NULL },
		{ NULL, 0, "exit 0", "" } };
	struct outgroup_item tie[] = { { NULL, 4, "exit 0", NULL },
		{ NULL, 2, "exit 1", NULL }, { NULL, 3, "exit 1", NULL },
		{ NULL, 0, "exit 0", NULL } };
	struct buf b;
	char *s;

	s = fmt(one, 1);
	ck_assert_str_eq(s, "w3: exit 0");
	free(s);
	{
		struct outgroup_item all[9];
		int i;

		for (i = 0; i < 9; i++) {
			all[i].node = NULL;
			all[i].worker = i;
			all[i].what = "exit 0";
			all[i].detail = NULL;
		}
		s = fmt(all, 8);
		ck_assert_str_eq(s, "w0-w7: exit 0");
		free(s);
		s = fmt(all, 9);
		ck_assert_str_eq(s, "9 workers: exit 0");
		free(s);
	}
	/* A tie in size: the group seen first comes first. */
	s = fmt(two, 2);
	ck_assert_str_eq(s, "w1: exit 2; w0: exit 0");
	free(s);
	s = fmt(tie, 4);
	ck_assert_str_eq(s, "w0, w4: exit 0; w2-w3: exit 1");
	free(s);
	buf_init(&b, BUF_NOCAP);
	ck_assert_int_eq(outgroup_format(one, 0, &b), 0);
	ck_assert_uint_eq(b.len, 0);
	buf_release(&b);
}
END_TEST

START_TEST(test_pieces_limit)
{
	struct outgroup_item it[20];
	char *s;
	int i;

	/* Eight separate workers are still listed; the largest group of
	   more than eight is counted ... */
	for (i = 0; i < 20; i++) {
		it[i].node = NULL;
		it[i].worker = i;
		it[i].what = i % 2 == 0 && i < 16 ? "exit 3" : "exit 0";
		it[i].detail = NULL;
	}
	s = fmt(it, 20);
	ck_assert_str_eq(s, "12 workers: exit 0; "
	                    "w0, w2, w4, w6, w8, w10, w12, w14: exit 3");
	free(s);
	/* ... nine are counted. */
	it[16].what = "exit 3";
	it[17].what = "exit 0";
	it[18].what = "exit 9";
	s = fmt(it, 20);
	ck_assert_str_eq(s, "10 workers: exit 0; 9 workers: exit 3; w18: "
	                    "exit 9");
	free(s);
}
END_TEST

START_TEST(test_nodes)
{
	struct outgroup_item it[] = { { "ms-0", 0, "exit 0", NULL },
		{ "ms-0", 1, "exit 0", NULL }, { "ms-1", 0, "exit 0", NULL },
		{ "ms-1", 1, "exit 0", NULL }, { "ms-1", 2, "exit 5", NULL },
		{ "ms-0", 2, "exit 0", NULL } };
	char *s = fmt(it, 6);

	/* Ranges never span two nodes. */
	ck_assert_str_eq(s, "ms-0/w0-w2, ms-1/w0-w1: exit 0; ms-1/w2: exit 5");
	free(s);
}
END_TEST

START_TEST(test_cap)
{
	struct outgroup_item it[] = { { NULL, 0, "exit 0", NULL },
		{ NULL, 1, "exit 1", "a long detail that does not fit" } };
	struct buf b;

	buf_init(&b, 16);
	ck_assert_int_eq(outgroup_format(it, 2, &b), -1);
	ck_assert_uint_le(b.len, 16);
	buf_release(&b);
}
END_TEST

static Suite *
outgroup_suite(void)
{
	Suite *s = suite_create("outgroup");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, test_issue_example);
	tcase_add_test(tc, test_small);
	tcase_add_test(tc, test_pieces_limit);
	tcase_add_test(tc, test_nodes);
	tcase_add_test(tc, test_cap);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	SRunner *sr = srunner_create(outgroup_suite());
	int nf;

	srunner_run_all(sr, CK_NORMAL);
	nf = srunner_ntests_failed(sr);
	srunner_free(sr);
	return nf == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
