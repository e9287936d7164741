/*
 * Unit tests for src/output.c: --format parsing, and the exact text of
 * every format (table alignment, box, title, sort; JSON indentation; YAML
 * quoting and block scalars; value/get/csv; flattened; list), plus write
 * errors.  gcloud_output_cases.h holds what gcloud's own printers print
 * for the same resources and formats; the topic texts' examples follow.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <check.h>
#include <cjson/cJSON.h>

#include "buf.h"
#include "output.h"
#include "gcloud_output_cases.h"

static char *text;
static size_t textlen;

/* Render json with format (and columns) into text; returns emit's rc. */
static int
render(const char *format, const char *json, const char *columns)
{
	struct output o;
	struct tpu_err err;
	cJSON *r;
	int rc;

	free(text);
	text = NULL;
	output_init(&o);
	tpu_err_init(&err);
	ck_assert_int_eq(output_parse_format(&o, format, &err), 0);
	o.fp = open_memstream(&text, &textlen);
	ck_assert_ptr_nonnull(o.fp);
	r = cJSON_Parse(json);
	ck_assert_ptr_nonnull(r);
	rc = output_emit(&o, r, columns, &err);
	fclose(o.fp);
	cJSON_Delete(r);
	output_release(&o);
	return rc;
}

static void
teardown(void)
{
	free(text);
	text = NULL;
}

START_TEST(format_parse_valid)
{
	struct output o;
	struct tpu_err err;

	output_init(&o);
	tpu_err_init(&err);
	ck_assert_int_eq(output_parse_format(&o, "json", &err), 0);
	ck_assert_int_eq(o.fmt, OUTPUT_JSON);
	ck_assert_int_eq(output_parse_format(&o, " yaml ", &err), 0);
	ck_assert_int_eq(o.fmt, OUTPUT_YAML);
	ck_assert_int_eq(output_parse_format(&o, "jsonl", &err), 0);
	ck_assert_int_eq(o.fmt, OUTPUT_JSONL);
	ck_assert_int_eq(output_parse_format(&o, "table", &err), 0);
	ck_assert_int_eq(o.fmt, OUTPUT_TABLE);
	ck_assert_int_eq(o.nfields, 0);
	ck_assert_int_eq(output_parse_format(&o,
	                     "value(name, a.b[0].c,x-y_z.basename())", &err),
	    0);
	ck_assert_int_eq(o.fmt, OUTPUT_VALUE);
	ck_assert_int_eq(o.nfields, 3);
	ck_assert_str_eq(o.proj.cols[1].key.segs[1].name, "b");
	ck_assert_int_eq(o.proj.cols[1].key.segs[2].kind, RESPROJ_INDEX);
	ck_assert_str_eq(o.proj.cols[2].key.segs[0].name, "x-y_z");
	ck_assert_int_eq(o.proj.cols[2].key.ncalls, 1);
	ck_assert_int_eq(output_parse_format(&o, "table(state)", &err), 0);
	ck_assert_int_eq(o.fmt, OUTPUT_TABLE);
	ck_assert_int_eq(o.nfields, 1);
	ck_assert_int_eq(output_parse_format(&o, "[box]", &err), 0);
	ck_assert_int_eq(o.fmt, OUTPUT_TABLE);
	ck_assert_int_eq(o.nfields, 0);
	ck_assert_int_eq(
	    output_parse_format(&o, "csv[no-heading](a)", &err), 0);
	ck_assert_int_eq(o.fmt, OUTPUT_CSV);
	ck_assert_int_eq(output_parse_format(&o, "get(state)", &err), 0);
	ck_assert_int_eq(o.fmt, OUTPUT_VALUE);
	ck_assert_int_eq(output_parse_format(&o, "text", &err), 0);
	ck_assert_int_eq(o.fmt, OUTPUT_FLAT);
	ck_assert_int_eq(output_parse_format(&o, "default", &err), 0);
	ck_assert_int_eq(o.fmt, OUTPUT_YAML);
	/* A later json drops the fields. */
	ck_assert_int_eq(output_parse_format(&o, "json", &err), 0);
	ck_assert_int_eq(o.nfields, 0);
	output_release(&o);
}
END_TEST

START_TEST(format_parse_invalid)
{
	static const struct {
		const char *in, *msg;
	} bad[] = {
		{ "", "format name expected" },
		{ "xml", "unknown format 'xml'" },
		{ "JSON", "unexpected text" },
		{ "value", "value needs a projection" },
		{ "value()", "value needs a projection" },
		{ "csv", "csv needs a projection" },
		{ "value(a,)", "non-empty key name expected" },
		{ "value(,a)", "non-empty key name expected" },
		{ "value(a..b)",
		    "non-empty key name expected [value(a. *HERE* .b)]" },
		{ "value(a b)", "',' or ')' expected" },
		{ "table(a", "',' or ')' expected" },
		{ "table)", "unexpected text" },
		{ "value(a))", "unexpected text" },
		{ "value(a;b)", "',' or ')' expected" },
		{ "jsonx", "unknown format 'jsonx'" },
		{ "table (a)", "unexpected text" },
		{ "value(a.nosuch())", "unknown transform 'nosuch()'" },
		{ "value(a.date(when=1))", "date() has no argument 'when'" },
		{ "value(a.len(1))", "len() takes 0 to 0 arguments, not 1" },
		{ "value(a:bogus)", "unknown key attribute ':bogus'" },
		{ "value(a:sort=x)", "sort= needs a number" },
		{ "value(a[x])", "[N] or [] expected" },
		{ "value(a.basename().b)", "a key part after a transform" },
		{ "table[box", "',' or ']' expected" },
		{ "value(\"a)", "unterminated \" quote" },
		{ "value(a.join(\"x))", "unterminated \" quote" },
	};
	struct output o;
	struct tpu_err err;
	struct buf big;
	size_t i;

	output_init(&o);
	ck_assert_int_eq(output_parse_format(&o, "value(keep)", &err), 0);
	for (i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		tpu_err_init(&err);
		ck_assert_msg(
		    output_parse_format(&o, bad[i].in, &err) == TPU_E_USAGE,
		    "'%s' accepted", bad[i].in);
		ck_assert_ptr_nonnull(strstr(err.msg, "invalid format '"));
		ck_assert_msg(strstr(err.msg, bad[i].msg) != NULL, "'%s': %s",
		    bad[i].in, err.msg);
		ck_assert_ptr_null(strchr(err.msg, '\n'));
	}
	/* issue 19 defect 13: a 3000-part key is refused, not ignored */
	buf_init(&big, BUF_NOCAP);
	buf_puts(&big, "value(a");
	for (i = 0; i < 3000; i++)
		buf_puts(&big, ".a");
	buf_puts(&big, ")");
	ck_assert_int_eq(output_parse_format(&o, big.data, &err), TPU_E_USAGE);
	ck_assert_ptr_nonnull(strstr(err.msg, "a key has at most 64 parts"));
	ck_assert_uint_lt(strlen(err.msg), 400);
	buf_release(&big);
	/* A failed parse leaves the previous format alone. */
	ck_assert_int_eq(o.fmt, OUTPUT_VALUE);
	ck_assert_str_eq(o.proj.cols[0].key.segs[0].name, "keep");
	output_release(&o);
}
END_TEST

/* Every case gcloud's printers rendered (gcloud_output_cases.h). */
START_TEST(gcloud_byte_for_byte)
{
	cJSON *all = cJSON_Parse(gc_nodes);
	size_t i;

	ck_assert_ptr_nonnull(all);
	for (i = 0; i < sizeof gc_cases / sizeof gc_cases[0]; i++) {
		const struct gc_case *c = &gc_cases[i];
		cJSON *in;
		char *json;
		int k, w = c->which;

		if (w == -1)
			in = cJSON_Duplicate(all, 1);
		else if (w >= 4) {
			in = cJSON_CreateArray();
			for (k = w == 4 || w == 7 ? 1
			         : w == 5         ? 2
			                          : 0;
			     k < 3; k++) {
				cJSON_AddItemToArray(
				    in, cJSON_Duplicate(
				            cJSON_GetArrayItem(all, k), 1));
				if (w >= 6)
					break;
			}
		} else
			in = cJSON_Duplicate(cJSON_GetArrayItem(all, w), 1);
		json = cJSON_PrintUnformatted(in);
		ck_assert_int_eq(render(c->format, json, NULL), 0);
		ck_assert_msg(strcmp(text, c->expect) == 0,
		    "%s:\n--- gcloud\n%s--- tpuctl\n%s", c->format, c->expect,
		    text);
		cJSON_free(json);
		cJSON_Delete(in);
	}
	cJSON_Delete(all);
}
END_TEST

/* gcloud topic resource-keys: the regions example, flattened. */
START_TEST(topic_resource_keys)
{
	ck_assert_int_eq(
	    render("flattened",
	        "[{\"creationTimestamp\":\"2013-05-23T07:02:09.522-07:00\","
	        "\"description\":\"us-central1\",\"id\":\"22115839677829654\","
	        "\"kind\":\"compute#region\",\"name\":\"us-central1\","
	        "\"quotas\":[{\"limit\":24.5,\"metric\":\"CPUS\",\"usage\":15."
	        "5}],"
	        "\"selfLink\":\"https://www.googleapis.com/.../us-central1\","
	        "\"status\":\"UP\",\"zones\":[\"us-central1-a\","
	        "\"us-central1-b\",\"us-central1-f\"]}]",
	        NULL),
	    0);
	ck_assert_str_eq(text,
	    "---\n"
	    "creationTimestamp: 2013-05-23T07:02:09.522-07:00\n"
	    "description:       us-central1\n"
	    "id:                22115839677829654\n"
	    "kind:              compute#region\n"
	    "name:              us-central1\n"
	    "quotas[0].limit:   24.5\n"
	    "quotas[0].metric:  CPUS\n"
	    "quotas[0].usage:   15.5\n"
	    "selfLink:          https://www.googleapis.com/.../us-central1\n"
	    "status:            UP\n"
	    "zones[0]:          us-central1-a\n"
	    "zones[1]:          us-central1-b\n"
	    "zones[2]:          us-central1-f\n");
}
END_TEST

/* gcloud topic formats and projections: the examples' values. */
START_TEST(topic_examples)
{
	const char *zone =
	    "{\"selfLink\":\"https://www.googleapis.com/"
	    "compute/v1/projects/my-project/zones/us-central1-a\","
	    "\"s\":\"http://abc/foo/projects/bar/xyz\","
	    "\"r\":\"http://xyz/foo/regions/abc\","
	    "\"l\":[1,2,3],\"p\":\"a/b/c/d\"}";

	ck_assert_int_eq(render("value(selfLink.scope())", zone, NULL), 0);
	ck_assert_str_eq(text, "us-central1-a\n");
	ck_assert_int_eq(
	    render("value(selfLink.scope(projects))", zone, NULL), 0);
	ck_assert_str_eq(text, "my-project/zones/us-central1-a\n");
	ck_assert_int_eq(
	    render("value(s.scope(\"projects\"),r.scope())", zone, NULL), 0);
	ck_assert_str_eq(text, "bar/xyz\tabc\n");
	ck_assert_int_eq(render("value(l.slice(1:),l.slice(:2),l.slice(-1:),"
	                        "l.slice(::-1),l.slice(1))",
	                     zone, NULL),
	    0);
	ck_assert_str_eq(text, "2;3\t1;2\t3\t3;2;1\t2\n");
	ck_assert_int_eq(render("value(p.split().join(\"!\"),p.split(),"
	                        "p.split().sort().len())",
	                     zone, NULL),
	    0);
	ck_assert_str_eq(text, "a!b!c!d\ta;b;c;d\t4\n");
	/* "(first.name, last.name) produce the headings NAME, LAST_NAME" */
	ck_assert_int_eq(
	    render("table(first.name,last.name)",
	        "{\"first\":{\"name\":\"a\"},\"last\":{\"name\":\"b\"}}", NULL),
	    0);
	ck_assert_str_eq(text, "NAME  LAST_NAME\na     b\n");
}
END_TEST

START_TEST(table_aligned)
{
	ck_assert_int_eq(render("table",
	                     "[{\"name\":\"a\",\"state\":\"READY\","
	                     "\"n\":{\"ip\":\"10.0.0.1\"}},"
	                     "{\"name\":\"ünïcödé\",\"state\":\"CREATING\"}]",
	                     "NAME=name,STATE=state,IP=n.ip"),
	    0);
	ck_assert_str_eq(text, "NAME     STATE     IP\n"
	                       "a        READY     10.0.0.1\n"
	                       "ünïcödé  CREATING\n");
}
END_TEST

/* Wide (CJK, full width, emoji) characters take two columns, combining
 * marks none: what gcloud printed for the same rows. */
START_TEST(table_display_width)
{
	ck_assert_int_eq(
	    render("table(n,s,t)",
	        "[{\"n\":\"\\u65e5\\u672c\\u8a9e\",\"s\":\"\\u00e9\",\"t\":"
	        "\"x\"},"
	        "{\"n\":\"ab\",\"s\":\"e\\u0301z\",\"t\":\"y\"},"
	        "{\"n\":\"\\u00fcn\\u00ef\\ud83d\\ude00\",\"s\":"
	        "\"\\uff46\\uff55\\uff4c\\uff4c\",\"t\":\"\\ud55c\\uad6d\"}]",
	        NULL),
	    0);
	ck_assert_str_eq(text,
	    "N       S         T\n"
	    "\xe6\x97\xa5\xe6\x9c\xac\xe8\xaa\x9e  \xc3\xa9         x\n"
	    "ab      e\xcc\x81z        y\n"
	    "\xc3\xbcn\xc3\xaf\xf0\x9f\x98\x80   "
	    "\xef\xbd\x86\xef\xbd\x95\xef\xbd\x8c\xef\xbd\x8c  "
	    "\xed\x95\x9c\xea\xb5\xad\n");
}
END_TEST

START_TEST(table_fields_and_object)
{
	ck_assert_int_eq(render("table(name,a.b)",
	                     "{\"name\":\"x\",\"a\":{\"b\":[1,2]}}", "N=zzz"),
	    0);
	ck_assert_str_eq(text, "NAME  B\nx     [1, 2]\n");
}
END_TEST

START_TEST(table_empty_and_control)
{
	ck_assert_int_eq(render("table", "[]", "NAME=name"), 0);
	ck_assert_str_eq(text, "");
	/* a newline continues the cell on the next line, as gcloud; a tab
	 * prints as a space */
	ck_assert_int_eq(render("table", "[{\"a\":\"x\\ny\\tz\"}]", "A=a"), 0);
	ck_assert_str_eq(text, "A\nx\ny z\n");
}
END_TEST

START_TEST(table_bad_columns)
{
	ck_assert_int_eq(render("table", "[{\"a\":1}]", "A"), TPU_E_INTERNAL);
	ck_assert_int_eq(render("table", "[{\"a\":1}]", "=a"), TPU_E_INTERNAL);
	ck_assert_int_eq(render("table", "[{\"a\":1}]", "A="), TPU_E_INTERNAL);
}
END_TEST

START_TEST(table_without_columns_is_yaml)
{
	ck_assert_int_eq(render("table", "{\"name\":\"n1\",\"n\":3}", NULL), 0);
	/* keys sorted; "n" is no boolean in YAML 1.2 (gcloud's) */
	ck_assert_str_eq(text, "n: 3\nname: n1\n");
}
END_TEST

START_TEST(json_pretty)
{
	ck_assert_int_eq(render("json",
	                     "{\"a\":1,\"b\":[true,null,\"x\\\"y\"],"
	                     "\"c\":{},\"d\":[],\"e\":{\"f\":1.5}}",
	                     "A=a"),
	    0);
	ck_assert_str_eq(text, "{\n"
	                       "  \"a\": 1,\n"
	                       "  \"b\": [\n"
	                       "    true,\n"
	                       "    null,\n"
	                       "    \"x\\\"y\"\n"
	                       "  ],\n"
	                       "  \"c\": {},\n"
	                       "  \"d\": [],\n"
	                       "  \"e\": {\n"
	                       "    \"f\": 1.5\n"
	                       "  }\n"
	                       "}\n");
	ck_assert_int_eq(render("json", "\"s\"", NULL), 0);
	ck_assert_str_eq(text, "\"s\"\n");
}
END_TEST

START_TEST(jsonl_lines)
{
	ck_assert_int_eq(
	    render("jsonl", "[{\"a\":1},{\"b\":[2, 3]},4]", NULL), 0);
	ck_assert_str_eq(text, "{\"a\":1}\n{\"b\":[2,3]}\n4\n");
	ck_assert_int_eq(render("jsonl", "{\"a\": {\"b\": 1}}", NULL), 0);
	ck_assert_str_eq(text, "{\"a\":{\"b\":1}}\n");
	ck_assert_int_eq(render("jsonl", "[]", NULL), 0);
	ck_assert_str_eq(text, "");
}
END_TEST

START_TEST(yaml_structure)
{
	ck_assert_int_eq(render("yaml",
	                     "{\"name\":\"nm\",\"labels\":{\"a\":\"b\"},"
	                     "\"list\":[1,\"x\",{\"k\":false}],\"e\":{},"
	                     "\"f\":[],\"z\":null,\"num\":-2.5}",
	                     NULL),
	    0);
	ck_assert_str_eq(text, "e: {}\n"
	                       "f: []\n"
	                       "labels:\n"
	                       "  a: b\n"
	                       "list:\n"
	                       "- 1\n"
	                       "- x\n"
	                       "- k: false\n"
	                       "name: nm\n"
	                       "num: -2.5\n"
	                       "z: null\n");
}
END_TEST

START_TEST(yaml_documents)
{
	ck_assert_int_eq(render("yaml", "[{\"a\":1},{\"a\":2}]", NULL), 0);
	ck_assert_str_eq(text, "---\na: 1\n---\na: 2\n");
	ck_assert_int_eq(render("yaml", "[]", NULL), 0);
	ck_assert_str_eq(text, "");
}
END_TEST

START_TEST(yaml_quoting)
{
	static const struct {
		const char *in, *out;
	} cases[] = {
		{ "yes", "v: yes\n" },
		{ "No", "v: No\n" },
		{ "on", "v: on\n" },
		{ "y", "v: y\n" },
		{ "True", "v: 'True'\n" },
		{ "1_000", "v: '1_000'\n" },
		{ "0x1F", "v: '0x1F'\n" },
		{ "1.2.3", "v: 1.2.3\n" },
		{ "1e", "v: 1e\n" },
		{ "true", "v: 'true'\n" },
		{ "null", "v: 'null'\n" },
		{ "~", "v: '~'\n" },
		{ "", "v: ''\n" },
		{ "0123", "v: '0123'\n" },
		{ "1e3", "v: '1e3'\n" },
		{ "-1", "v: '-1'\n" },
		{ ".5", "v: '.5'\n" },
		{ ".inf", "v: '.inf'\n" },
		{ "12:30", "v: 12:30\n" },
		{ "2024-05-01T12:00:00Z", "v: '2024-05-01T12:00:00Z'\n" },
		{ "2001-12-14", "v: '2001-12-14'\n" },
		{ "it's", "v: it's\n" },
		{ "plain text", "v: plain text\n" },
		{ "us-central2-b", "v: us-central2-b\n" },
		{ "v2-8", "v: v2-8\n" },
	};
	char json[256];
	size_t i;

	for (i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		snprintf(json, sizeof json, "{\"v\":\"%s\"}", cases[i].in);
		ck_assert_int_eq(render("yaml", json, NULL), 0);
		ck_assert_str_eq(text, cases[i].out);
	}
	/* Keys are quoted by the same rule. */
	ck_assert_int_eq(render("yaml", "{\"yes\":\"no\",\"1\":2}", NULL), 0);
	ck_assert_str_eq(text, "'1': 2\nyes: no\n");
	ck_assert_int_eq(render("yaml", "{\"q\":\"'q\"}", NULL), 0);
	ck_assert_str_eq(text, "q: \"'q\"\n");
}
END_TEST

START_TEST(yaml_indicators)
{
	/* libyaml quotes what its own analysis finds unsafe. */
	ck_assert_int_eq(render("yaml",
	                     "{\"a\":\"x: y\",\"b\":\"#c\",\"c\":\"- x\","
	                     "\"d\":\"[x\",\"e\":\"&a\",\"f\":\" lead\"}",
	                     NULL),
	    0);
	ck_assert_str_eq(text, "a: 'x: y'\n"
	                       "b: '#c'\n"
	                       "c: '- x'\n"
	                       "d: '[x'\n"
	                       "e: '&a'\n"
	                       "f: ' lead'\n");
}
END_TEST

START_TEST(yaml_multiline)
{
	ck_assert_int_eq(
	    render("yaml", "{\"script\":\"#!/bin/sh\\necho hi\\n\"}", NULL), 0);
	ck_assert_str_eq(text, "script: |\n  #!/bin/sh\n  echo hi\n");
	ck_assert_int_eq(render("yaml", "{\"s\":\"a\\nb\"}", NULL), 0);
	ck_assert_str_eq(text, "s: |-\n  a\n  b\n");
}
END_TEST

START_TEST(yaml_invalid_utf8)
{
	/* libyaml refuses invalid UTF-8: such bytes become U+FFFD. */
	ck_assert_int_eq(
	    render("yaml", "{\"a\":\"x\xff\xc0\x80y\",\"b\":\"\xe2\x82\xac\"}",
	        NULL),
	    0);
	ck_assert_str_eq(text, "a: x\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbdy\n"
	                       "b: \xe2\x82\xac\n");
	ck_assert_int_eq(render("yaml", "{\"c\":\"\\u0001\"}", NULL), 0);
	ck_assert_str_eq(text, "c: \"\\x01\"\n");
}
END_TEST

START_TEST(value_paths)
{
	ck_assert_int_eq(render("value(name,ep[0].ip,tags,md,ok,n,z,missing)",
	                     "[{\"name\":\"a\",\"ep\":[{\"ip\":\"10.0.0.2\"}],"
	                     "\"tags\":[\"x\",\"y\"],\"md\":{\"k\":\"v\"},"
	                     "\"ok\":true,\"n\":42,\"z\":null},"
	                     "{\"name\":\"b\"}]",
	                     "IGNORED=x"),
	    0);
	ck_assert_str_eq(text, "a\t10.0.0.2\tx;y\tk=v\tTrue\t42\t\t\n"
	                       "b\t\t\t\t\t\t\t\n");
	ck_assert_int_eq(render("value(a)", "{\"a\":\"one\\ttwo\"}", NULL), 0);
	ck_assert_str_eq(text, "one\ttwo\n");
	ck_assert_int_eq(render("value(a)", "{\"a\":[{\"b\":1}]}", NULL), 0);
	ck_assert_str_eq(text, "{'b': 1}\n");
}
END_TEST

/* Headings of many like-named columns: linear work, not exponential
 * (a fuzzer's find: 40 columns took seconds). */
START_TEST(many_columns)
{
	struct buf f;
	int i;

	buf_init(&f, BUF_NOCAP);
	buf_puts(&f, "table(");
	for (i = 0; i < 256; i++)
		buf_printf(&f, "%sa.b.c", i > 0 ? "," : "");
	buf_puts(&f, ")");
	ck_assert_int_eq(
	    render(f.data, "[{\"a\":{\"b\":{\"c\":1}}}]", NULL), 0);
	ck_assert_ptr_nonnull(strstr(text, "C  C  C"));
	buf_release(&f);
}
END_TEST

START_TEST(write_error)
{
	static const char *const formats[] = { "table", "json", "yaml", "jsonl",
		"value(a)", "csv(a)", "flattened", "table[box](a)" };
	struct output o;
	struct tpu_err err;
	cJSON *r;
	size_t i;

	r = cJSON_Parse("[{\"a\":\"x\"}]");
	for (i = 0; i < sizeof formats / sizeof formats[0]; i++) {
		output_init(&o);
		tpu_err_init(&err);
		ck_assert_int_eq(output_parse_format(&o, formats[i], &err), 0);
		o.fp = fopen("/dev/full", "w");
		if (o.fp == NULL) {
			output_release(&o);
			break;
		}
		setvbuf(o.fp, NULL, _IONBF, 0);
		ck_assert_int_eq(output_emit(&o, r, "A=a", &err), TPU_E_IO);
		ck_assert_ptr_nonnull(strstr(err.msg, "write error"));
		fclose(o.fp);
		output_release(&o);
	}
	cJSON_Delete(r);
}
END_TEST

static Suite *
output_suite(void)
{
	Suite *s = suite_create("output");
	TCase *tc;

	tc = tcase_create("parse");
	tcase_add_test(tc, format_parse_valid);
	tcase_add_test(tc, format_parse_invalid);
	suite_add_tcase(s, tc);

	tc = tcase_create("gcloud");
	tcase_add_checked_fixture(tc, NULL, teardown);
	tcase_add_test(tc, gcloud_byte_for_byte);
	tcase_add_test(tc, topic_resource_keys);
	tcase_add_test(tc, topic_examples);
	suite_add_tcase(s, tc);

	tc = tcase_create("table");
	tcase_add_checked_fixture(tc, NULL, teardown);
	tcase_add_test(tc, table_aligned);
	tcase_add_test(tc, table_fields_and_object);
	tcase_add_test(tc, table_display_width);
	tcase_add_test(tc, table_empty_and_control);
	tcase_add_test(tc, table_bad_columns);
	tcase_add_test(tc, table_without_columns_is_yaml);
	suite_add_tcase(s, tc);

	tc = tcase_create("json");
	tcase_add_checked_fixture(tc, NULL, teardown);
	tcase_add_test(tc, json_pretty);
	tcase_add_test(tc, jsonl_lines);
	suite_add_tcase(s, tc);

	tc = tcase_create("yaml");
	tcase_add_checked_fixture(tc, NULL, teardown);
	tcase_add_test(tc, yaml_structure);
	tcase_add_test(tc, yaml_documents);
	tcase_add_test(tc, yaml_quoting);
	tcase_add_test(tc, yaml_indicators);
	tcase_add_test(tc, yaml_multiline);
	tcase_add_test(tc, yaml_invalid_utf8);
	suite_add_tcase(s, tc);

	tc = tcase_create("value");
	tcase_add_checked_fixture(tc, NULL, teardown);
	tcase_add_test(tc, value_paths);
	suite_add_tcase(s, tc);

	tc = tcase_create("limits");
	tcase_add_checked_fixture(tc, NULL, teardown);
	tcase_add_test(tc, many_columns);
	tcase_set_timeout(tc, 5);
	suite_add_tcase(s, tc);

	tc = tcase_create("errors");
	tcase_add_test(tc, write_error);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	SRunner *sr = srunner_create(output_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
