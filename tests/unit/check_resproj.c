/*
 * Unit tests for src/resproj.c: keys ([N], [], quoted parts), their
 * evaluation on resources, transforms, default headings, Python's str()
 * of values and the bounds on expressions.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <check.h>
#include <cjson/cJSON.h>

#include "buf.h"
#include "resproj.h"

/* str() of key k (with transforms) in json, into a static buffer. */
static const char *
eval(const char *k, const char *json)
{
	static char out[512];
	struct resproj_lex lx = { k, 0, "key" };
	struct resproj_key key;
	struct tpu_err err;
	struct buf b;
	cJSON *r = cJSON_Parse(json), *v;

	ck_assert_ptr_nonnull(r);
	tpu_err_init(&err);
	ck_assert_msg(
	    resproj_key_parse(&lx, &key, "", &err) == 0, "%s: %s", k, err.msg);
	ck_assert_int_eq(k[lx.i], '\0');
	v = resproj_eval(&key, r);
	buf_init(&b, BUF_NOCAP);
	if (v == NULL)
		buf_puts(&b, "<undefined>");
	else
		resproj_str(&b, v, 0);
	snprintf(out, sizeof out, "%s", b.data);
	buf_release(&b);
	cJSON_Delete(v);
	cJSON_Delete(r);
	resproj_key_release(&key);
	return out;
}

START_TEST(keys)
{
	const char *j =
	    "{\"a\":{\"b.c\":1,\"l\":[{\"x\":\"p\"},{\"x\":\"q\","
	    "\"y\":true}]},\"s\":\"projects/p/locations/z/nodes/n\"}";

	ck_assert_str_eq(eval("a.l[0].x", j), "p");
	ck_assert_str_eq(eval("a.l[-1].x", j), "q");
	ck_assert_str_eq(eval("a.l[2].x", j), "<undefined>");
	ck_assert_str_eq(eval("a.l[].x", j), "['p', 'q']");
	ck_assert_str_eq(eval("a.l.x", j), "['p', 'q']");
	ck_assert_str_eq(eval("a.l[].y", j), "[None, True]");
	ck_assert_str_eq(eval("a.\"b.c\"", j), "1");
	ck_assert_str_eq(eval("a.'b.c'", j), "1");
	ck_assert_str_eq(eval("nosuch.x", j), "<undefined>");
	ck_assert_str_eq(eval("a", j),
	    "{'b.c': 1, 'l': [{'x': 'p'}, {'x': 'q', 'y': True}]}");
	ck_assert_str_eq(eval("s.basename()", j), "n");
	ck_assert_str_eq(eval("s.segment(3).upper()", j), "Z");
	ck_assert_str_eq(eval("s.scope(locations)", j), "z/nodes/n");
	ck_assert_str_eq(eval("basename()", "\"a/b\""), "b");
	ck_assert_str_eq(eval("a.l.len()", j), "2");
	ck_assert_str_eq(eval("uri()", "{\"name\":\"projects/p/x\"}"),
	    "https://tpu.googleapis.com/v2/projects/p/x");
}
END_TEST

START_TEST(dates)
{
	const char *j = "{\"t\":\"2024-05-01T12:34:56.789Z\",\"o\":"
	                "\"2024-05-01T12:34:56+02:00\",\"e\":1714566896,"
	                "\"bad\":\"soon\"}";

	ck_assert_str_eq(eval("t.date()", j), "2024-05-01T12:34:56");
	ck_assert_str_eq(
	    eval("t.date(\"%Y-%m-%d %H:%M:%3f\")", j), "2024-05-01 12:34:789");
	ck_assert_str_eq(eval("o.date(\"%H:%M %z\")", j), "12:34 +0200");
	ck_assert_str_eq(eval("o.date(\"%H:%M %Z\", tz=UTC)", j), "10:34 UTC");
	ck_assert_str_eq(eval("e.date(tz=UTC)", j), "2024-05-01T12:34:56");
	ck_assert_str_eq(eval("bad.date(undefined=never)", j), "never");
}
END_TEST

START_TEST(python_str)
{
	static const struct {
		const char *json, *str;
	} t[] = {
		{ "1", "1" },
		{ "1.5", "1.5" },
		{ "0.1", "0.1" },
		{ "1e+20", "1e+20" },
		{ "true", "True" },
		{ "null", "None" },
		{ "\"it's\"", "it's" },
		{ "[\"it's\", \"a\\\"b\", \"\\n\"]",
		    "[\"it's\", 'a\"b', '\\n']" },
		{ "{}", "{}" },
	};
	struct buf b;
	size_t i;

	buf_init(&b, BUF_NOCAP);
	for (i = 0; i < sizeof t / sizeof t[0]; i++) {
		cJSON *v = cJSON_Parse(t[i].json);

		buf_clear(&b);
		resproj_str(&b, v, 0);
		ck_assert_str_eq(b.data, t[i].str);
		cJSON_Delete(v);
	}
	/* gcloud's float(): 6 digits, ".1f" below an e+09 exponent */
	buf_clear(&b);
	resproj_float(&b, 123456789.0);
	ck_assert_str_eq(b.data, "123456789.0");
	buf_clear(&b);
	resproj_float(&b, 1.0 / 3);
	ck_assert_str_eq(b.data, "0.333333");
	buf_release(&b);
}
END_TEST

START_TEST(labels)
{
	struct resproj p;
	struct tpu_err err;
	char *l;

	resproj_init(&p);
	tpu_err_init(&err);
	ck_assert_int_eq(resproj_parse(&p,
	                     "table(first.name, last.name, "
	                     "networkEndpoints[0].ipAddress, uri(), "
	                     "acceleratorType:label=TYPE, createTime.date())",
	                     &err),
	    0);
	l = resproj_label(&p, 0);
	ck_assert_str_eq(l, "NAME");
	free(l);
	l = resproj_label(&p, 1);
	ck_assert_str_eq(l, "LAST_NAME");
	free(l);
	l = resproj_label(&p, 2);
	ck_assert_str_eq(l, "IP_ADDRESS");
	free(l);
	l = resproj_label(&p, 3);
	ck_assert_str_eq(l, "URI");
	free(l);
	l = resproj_label(&p, 4);
	ck_assert_str_eq(l, "TYPE");
	free(l);
	l = resproj_label(&p, 5);
	ck_assert_str_eq(l, "CREATE_TIME");
	free(l);
	resproj_release(&p);
}
END_TEST

START_TEST(attributes)
{
	struct resproj p;
	struct tpu_err err;
	const char *v;

	resproj_init(&p);
	tpu_err_init(&err);
	ck_assert_int_eq(resproj_parse(&p,
	                     "csv[no-heading,separator=\"\\t\",title='a, b']"
	                     "(name:sort=2:reverse:align=right:width=7)",
	                     &err),
	    0);
	ck_assert_str_eq(p.name, "csv");
	ck_assert_int_eq(resproj_attr(&p, "no-heading", NULL), 1);
	ck_assert_int_eq(resproj_attr(&p, "heading", NULL), 0);
	ck_assert_int_eq(resproj_attr(&p, "separator", &v), 1);
	ck_assert_str_eq(v, "\t");
	ck_assert_int_eq(resproj_attr(&p, "title", &v), 1);
	ck_assert_str_eq(v, "a, b");
	ck_assert_int_eq(p.cols[0].sort, 2);
	ck_assert_int_eq(p.cols[0].reverse, 1);
	ck_assert_int_eq(p.cols[0].align, RESPROJ_RIGHT);
	ck_assert_int_eq(p.cols[0].width, 7);
	resproj_release(&p);
}
END_TEST

START_TEST(bounds)
{
	struct resproj p;
	struct tpu_err err;
	struct buf b;
	int i;

	resproj_init(&p);
	buf_init(&b, BUF_NOCAP);
	buf_puts(&b, "value(");
	for (i = 0; i < RESPROJ_MAX_COLS + 1; i++)
		buf_printf(&b, "%sa", i > 0 ? "," : "");
	buf_puts(&b, ")");
	ck_assert_int_eq(resproj_parse(&p, b.data, &err), TPU_E_USAGE);
	ck_assert_ptr_nonnull(strstr(err.msg, "more than 256 keys"));
	buf_clear(&b);
	for (i = 0; i < RESPROJ_MAX_EXPR; i++)
		buf_puts(&b, " ");
	buf_puts(&b, "json");
	ck_assert_int_eq(resproj_parse(&p, b.data, &err), TPU_E_USAGE);
	ck_assert_ptr_nonnull(strstr(err.msg, "longer than 8192 bytes"));
	buf_release(&b);
	resproj_release(&p);
}
END_TEST

/* --sort-by: str() of the values ("None" when unset), ~ descending,
 * several keys, stable. */
START_TEST(sortby)
{
	static const struct {
		const char *by, *order;
	} t[] = {
		{ "name", "a b c d" },
		{ "~name", "d c b a" },
		{ "env,name", "a b c d" },
		{ "~env,name", "d a b c" },
		{ "env,~name", "c b a d" },
		{ "n", "c b d a" }, /* "10" < "9" < "None", as gcloud */
		{ "nosuch", "b a d c" },
	};
	struct resproj_sortby sb;
	struct tpu_err err;
	struct buf b;
	size_t i;

	buf_init(&b, BUF_NOCAP);
	for (i = 0; i < sizeof t / sizeof t[0]; i++) {
		cJSON *l =
		    cJSON_Parse("[{\"name\":\"b\",\"env\":\"dev\",\"n\":9},"
		                "{\"name\":\"a\",\"env\":\"dev\"},"
		                "{\"name\":\"d\",\"env\":\"prod\",\"n\":9},"
		                "{\"name\":\"c\",\"env\":\"dev\",\"n\":10}]");
		const cJSON *it;

		tpu_err_init(&err);
		ck_assert_int_eq(resproj_sortby_parse(&sb, t[i].by, &err), 0);
		resproj_sortby_apply(&sb, l);
		buf_clear(&b);
		cJSON_ArrayForEach(it, l)
		{
			buf_printf(&b, "%s%s", b.len > 0 ? " " : "",
			    cJSON_GetStringValue(
			        cJSON_GetObjectItemCaseSensitive(it, "name")));
		}
		ck_assert_msg(
		    strcmp(b.data, t[i].order) == 0, "%s: %s", t[i].by, b.data);
		resproj_sortby_release(&sb);
		cJSON_Delete(l);
	}
	buf_release(&b);
	ck_assert_int_eq(resproj_sortby_parse(&sb, "name,", &err), TPU_E_USAGE);
	ck_assert_ptr_nonnull(strstr(err.msg, "invalid sort-by 'name,'"));
	ck_assert_int_eq(resproj_sortby_parse(&sb, "a b", &err), TPU_E_USAGE);
	ck_assert_ptr_nonnull(strstr(err.msg, "',' or the end expected"));
}
END_TEST

/* --flatten: one record per list item, empty lists dropped. */
START_TEST(flatten)
{
	struct resproj_sortby fl;
	struct tpu_err err;
	cJSON *l = cJSON_Parse("[{\"n\":\"a\",\"e\":{\"ips\":[1,2]}},"
	                       "{\"n\":\"b\",\"e\":{\"ips\":[]}},"
	                       "{\"n\":\"c\"}]"),
	      *out;
	char *s;

	tpu_err_init(&err);
	ck_assert_int_eq(resproj_flatten_parse(&fl, "e.ips", &err), 0);
	out = resproj_flatten(&fl, l);
	s = cJSON_PrintUnformatted(out);
	ck_assert_str_eq(s, "[{\"n\":\"a\",\"e\":{\"ips\":1}},"
	                    "{\"n\":\"a\",\"e\":{\"ips\":2}},{\"n\":\"c\"}]");
	cJSON_free(s);
	cJSON_Delete(out);
	resproj_sortby_release(&fl);
	ck_assert_int_eq(
	    resproj_flatten_parse(&fl, "e.ips.len()", &err), TPU_E_USAGE);
	ck_assert_ptr_nonnull(strstr(err.msg, "names only"));
	cJSON_Delete(l);
}
END_TEST

static Suite *
resproj_suite(void)
{
	Suite *s = suite_create("resproj");
	TCase *tc;

	tc = tcase_create("eval");
	tcase_add_test(tc, keys);
	tcase_add_test(tc, dates);
	tcase_add_test(tc, python_str);
	suite_add_tcase(s, tc);

	tc = tcase_create("parse");
	tcase_add_test(tc, labels);
	tcase_add_test(tc, attributes);
	tcase_add_test(tc, bounds);
	tcase_add_test(tc, sortby);
	tcase_add_test(tc, flatten);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	SRunner *sr = srunner_create(resproj_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
