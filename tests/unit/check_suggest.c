/*
 * Tests for src/suggest.c: the distance (swaps count once) and the
 * thresholds of "did you mean".
 */
#include <stdint.h>
#include <string.h>

#include <check.h>

#include "suggest.h"

START_TEST(test_distance)
{
	static const struct {
		const char *a, *b;
		size_t d;
	} cases[] = {
		{ "", "", 0 },
		{ "list", "list", 0 },
		{ "lsit", "list", 1 },  /* adjacent swap */
		{ "lst", "list", 1 },   /* deletion */
		{ "lisst", "list", 1 }, /* insertion */
		{ "lust", "list", 1 },  /* substitution */
		{ "--workers", "--worker", 1 },
		{ "ca", "abc", 3 }, /* OSA, not unrestricted DL */
		{ "", "abc", 3 },
		{ "kitten", "sitting", 3 },
	};
	size_t i;

	for (i = 0; i < sizeof cases / sizeof cases[0]; i++)
		ck_assert_msg(
		    suggest_distance(cases[i].a, cases[i].b) == cases[i].d,
		    "%s/%s", cases[i].a, cases[i].b);
}
END_TEST

START_TEST(test_too_long)
{
	char big[SUGGEST_MAXLEN + 2];

	memset(big, 'a', sizeof big - 1);
	big[sizeof big - 1] = '\0';
	ck_assert(suggest_distance(big, "a") == SIZE_MAX);
	ck_assert(suggest_distance("a", big) == SIZE_MAX);
}
END_TEST

START_TEST(test_best)
{
	static const char *const cmds[] = { "list", "delete", "describe", NULL,
		"create", "versions" };
	static const char *const opts[] = { "--worker", "--zone", "--command" };
	size_t n = sizeof cmds / sizeof cmds[0];

	ck_assert_str_eq(suggest_best("lsit", cmds, n), "list");
	ck_assert_str_eq(suggest_best("delet", cmds, n), "delete");
	ck_assert_str_eq(suggest_best("creat", cmds, n), "create");
	ck_assert_str_eq(suggest_best("verisons", cmds, n), "versions");
	ck_assert_str_eq(suggest_best("--workers", opts, 3), "--worker");
	ck_assert_str_eq(suggest_best("--zome", opts, 3), "--zone");
	/* too far */
	ck_assert_ptr_null(suggest_best("frobnicate", cmds, n));
	ck_assert_ptr_null(suggest_best("xyz", cmds, n));
	/* short words: at most one edit, and never the whole word */
	ck_assert_ptr_null(suggest_best("ls", cmds, n));
	ck_assert_ptr_null(suggest_best("", cmds, n));
	ck_assert_ptr_null(suggest_best("x", opts, 0));
}
END_TEST

static Suite *
suggest_suite(void)
{
	Suite *s = suite_create("suggest");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, test_distance);
	tcase_add_test(tc, test_too_long);
	tcase_add_test(tc, test_best);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	SRunner *sr = srunner_create(suggest_suite());
	int nf;

	srunner_run_all(sr, CK_NORMAL);
	nf = srunner_ntests_failed(sr);
	srunner_free(sr);
	return nf == 0 ? 0 : 1;
}
