/*
 * Tests for src/manpage.c: mdoc lines as text, the .It Fl items and
 * their first sentences, and flag lookup.
 */
#include <stdlib.h>
#include <string.h>

#include <check.h>

#include "manpage.h"

START_TEST(test_line_text)
{
	static const struct {
		const char *in, *out;
	} cases[] = {
		{ ".It Fl -worker Ar n|all", "--worker n|all" },
		{ ".It Fl r , Fl -recursive", "-r, --recursive" },
		{ ".It Fl A", "-A" },
		{ "Plain text \\- with \\&escapes.",
		    "Plain text - with escapes." },
		{ ".Pq Dq yes .", "(\"yes\")." },
		{ ".Dq 90s ,", "\"90s\"," },
		{ ".Op Fl -zone Ar zone", "[--zone zone]" },
		{ ".Ar section Ns / Ns Ar name", "section/name" },
		{ ".Xr tpuctl-list 1 ,", "tpuctl-list(1)," },
		{ ".Cm prefix", "prefix" },
		{ ".Ql \"a b\"", "'a b'" },
		{ ".Po", "(" },
		{ ".Pc .", ")." },
	};
	size_t i;
	char *t;

	for (i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		t = manpage_line_text(cases[i].in);
		ck_assert_msg(
		    strcmp(t, cases[i].out) == 0, "%s -> '%s'", cases[i].in, t);
		free(t);
	}
}
END_TEST

static const char page[] = ".\\\" a comment\n"
                           ".Sh DESCRIPTION\n"
                           "Text.\n"
                           ".Bl -tag -width Ds\n"
                           ".It Fl -timeout Ar duration\n"
                           "Close a worker's command after this long\n"
                           ".Po\n"
                           ".Dq 90s ,\n"
                           ".Dq 5m\n"
                           ".Pc .\n"
                           "Second sentence, not shown.\n"
                           ".It Fl -spot , Fl -reserved\n"
                           "The scheduling model, e.g.\n"
                           ".Cm spot ;\n"
                           "at most one.\n"
                           ".It Fl -format Ar format\n"
                           "Output format:\n"
                           ".Bl -tag -width Ds\n"
                           ".It Fl -nested\n"
                           "Not an item of the outer list.\n"
                           ".El\n"
                           ".It Fl -bare\n"
                           ".It Cm notaflag\n"
                           "Ignored.\n"
                           ".El\n"
                           ".Sh EXIT STATUS\n";

START_TEST(test_parse)
{
	struct manpage m;
	const struct manpage_flag *f;

	manpage_parse(&m, page);
	ck_assert_uint_eq(m.n, 4);
	ck_assert_str_eq(m.flags[0].spec, "--timeout duration");
	ck_assert_str_eq(m.flags[0].desc,
	    "Close a worker's command after this long (\"90s\", \"5m\").");
	ck_assert_str_eq(m.flags[1].spec, "--spot, --reserved");
	ck_assert_str_eq(
	    m.flags[1].desc, "The scheduling model, e.g. spot; at most one.");
	ck_assert_str_eq(m.flags[2].spec, "--format format");
	ck_assert_str_eq(m.flags[2].desc, "Output format:");
	ck_assert_str_eq(m.flags[3].spec, "--bare");
	ck_assert_str_eq(m.flags[3].desc, "");

	f = manpage_find(&m, "--reserved");
	ck_assert_ptr_nonnull(f);
	ck_assert_str_eq(f->spec, "--spot, --reserved");
	ck_assert_ptr_eq(manpage_find(&m, "--spot"), f);
	ck_assert_ptr_null(manpage_find(&m, "--time"));   /* whole words */
	ck_assert_ptr_null(manpage_find(&m, "--nested")); /* not ours */
	ck_assert_ptr_null(manpage_find(&m, "--zone"));
	manpage_release(&m);
	ck_assert_uint_eq(m.n, 0);
}
END_TEST

START_TEST(test_empty)
{
	struct manpage m;

	manpage_parse(&m, "");
	ck_assert_uint_eq(m.n, 0);
	manpage_release(&m);
	manpage_parse(&m, ".It Fl -x\nno newline at the end.");
	ck_assert_uint_eq(m.n, 1);
	ck_assert_str_eq(m.flags[0].desc, "no newline at the end.");
	manpage_release(&m);
}
END_TEST

static Suite *
manpage_suite(void)
{
	Suite *s = suite_create("manpage");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, test_line_text);
	tcase_add_test(tc, test_parse);
	tcase_add_test(tc, test_empty);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	SRunner *sr = srunner_create(manpage_suite());
	int nf;

	srunner_run_all(sr, CK_NORMAL);
	nf = srunner_ntests_failed(sr);
	srunner_free(sr);
	return nf == 0 ? 0 : 1;
}
