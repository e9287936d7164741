/*
 * Unit tests for src/resfilter.c: what each filter selects, compared with
 * what gcloud selects from the same resources (gcloud_filter_cases.h),
 * the ':' pattern table of gcloud topic filters, precedence, and the
 * refusal of malformed expressions with a message naming the bad part.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <check.h>
#include <cjson/cJSON.h>

#include "buf.h"
#include "resfilter.h"
#include "resproj.h"
#include "gcloud_output_cases.h"
#include "gcloud_filter_cases.h"

/* The basenames of the nodes f selects, comma-separated, into b. */
static void
selected(const char *filter, const cJSON *all, struct buf *b)
{
	struct resfilter *f = NULL;
	struct tpu_err err;
	const cJSON *it;

	tpu_err_init(&err);
	ck_assert_msg(
	    resfilter_parse(filter, &f, &err) == 0, "%s: %s", filter, err.msg);
	buf_clear(b);
	cJSON_ArrayForEach(it, all)
	{
		const char *name = cJSON_GetStringValue(
		    cJSON_GetObjectItemCaseSensitive(it, "name"));

		if (!resfilter_match(f, it))
			continue;
		if (b->len > 0)
			buf_puts(b, ",");
		buf_puts(b, strrchr(name, '/') + 1);
	}
	resfilter_free(f);
}

START_TEST(gcloud_selects_the_same)
{
	cJSON *all = cJSON_Parse(gc_nodes);
	struct buf b;
	size_t i;

	buf_init(&b, BUF_NOCAP);
	for (i = 0; i < sizeof gc_filters / sizeof gc_filters[0]; i++) {
		selected(gc_filters[i].filter, all, &b);
		ck_assert_msg(strcmp(b.data, gc_filters[i].names) == 0,
		    "%s: gcloud selects '%s', tpuctl '%s'",
		    gc_filters[i].filter, gc_filters[i].names, b.data);
	}
	buf_release(&b);
	cJSON_Delete(all);
}
END_TEST

/* gcloud topic filters: the ':' table (DEPRECATED_MATCHES, which gcloud
 * still applies). */
START_TEST(topic_pattern_table)
{
	static const struct {
		const char *pattern, *value;
		int match;
	} t[] = {
		{ "abc*", "abcpdqxyz", 1 },
		{ "abc", "abcpdqxyz", 1 },
		{ "pdq*", "abcpdqxyz", 0 },
		{ "pdq", "abcpdqxyz", 1 },
		{ "xyz*", "abcpdqxyz", 0 },
		{ "xyz", "abcpdqxyz", 1 },
		{ "*", "abcpdqxyz", 1 },
		{ "*", NULL, 0 },
		{ "*", "", 0 },
		{ "abc*", "abc.pdq.xyz", 1 },
		{ "abc", "abc.pdq.xyz", 1 },
		{ "abc.pdq", "abc.pdq.xyz", 1 },
		{ "pdq*", "abc.pdq.xyz", 0 },
		{ "pdq", "abc.pdq.xyz", 1 },
		{ "pdq.xyz", "abc.pdq.xyz", 1 },
		{ "xyz*", "abc.pdq.xyz", 0 },
		{ "xyz", "abc.pdq.xyz", 1 },
	};
	struct tpu_err err;
	size_t i;

	for (i = 0; i < sizeof t / sizeof t[0]; i++) {
		struct resfilter *f = NULL;
		char expr[64];
		cJSON *r = cJSON_CreateObject();

		if (t[i].value != NULL)
			cJSON_AddStringToObject(r, "key", t[i].value);
		snprintf(expr, sizeof expr, "key:%s", t[i].pattern);
		tpu_err_init(&err);
		ck_assert_int_eq(resfilter_parse(expr, &f, &err), 0);
		ck_assert_msg(resfilter_match(f, r) == t[i].match, "%s on '%s'",
		    expr, t[i].value ? t[i].value : "(None)");
		resfilter_free(f);
		cJSON_Delete(r);
	}
}
END_TEST

START_TEST(empty_matches_all)
{
	struct resfilter *f = (struct resfilter *)1;
	struct tpu_err err;

	tpu_err_init(&err);
	ck_assert_int_eq(resfilter_parse("  ", &f, &err), 0);
	ck_assert_ptr_null(f);
	ck_assert_int_eq(resfilter_match(NULL, NULL), 1);
}
END_TEST

START_TEST(refused)
{
	static const struct {
		const char *in, *msg;
	} bad[] = {
		{ "a=1 AND b=2 OR c=3",
		    "parentheses are required when AND and OR" },
		{ "a=1 OR b=2 AND c=3",
		    "parentheses are required when AND and OR" },
		{ "state=", "term operand expected" },
		{ "state=(", "')' expected to end the value list" },
		{ "(state=READY", "')' expected" },
		{ "state=READY)", "unexpected tokens" },
		{ "state:R*A*Y", "at most one * expected" },
		{ "name~[", "bad regular expression '['" },
		{ "a!=(x y)", "a value list (...) follows only : and =" },
		{ "a..b=1", "non-empty key name expected" },
		{ "a.nosuch()=1", "unknown transform 'nosuch()'" },
		{ "a=\"x", "unterminated \" quote" },
	};
	struct resfilter *f;
	struct tpu_err err;
	struct buf deep;
	size_t i;

	for (i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		f = NULL;
		tpu_err_init(&err);
		ck_assert_msg(
		    resfilter_parse(bad[i].in, &f, &err) == TPU_E_USAGE,
		    "'%s' accepted", bad[i].in);
		ck_assert_ptr_null(f);
		ck_assert_ptr_nonnull(strstr(err.msg, "invalid filter '"));
		ck_assert_msg(strstr(err.msg, bad[i].msg) != NULL, "'%s': %s",
		    bad[i].in, err.msg);
	}
	/* nesting and size are bounded */
	buf_init(&deep, BUF_NOCAP);
	for (i = 0; i < 1000; i++)
		buf_puts(&deep, "(");
	buf_puts(&deep, "a=1");
	f = NULL;
	ck_assert_int_eq(resfilter_parse(deep.data, &f, &err), TPU_E_USAGE);
	ck_assert_ptr_nonnull(strstr(err.msg, "nested more than 64 deep"));
	buf_clear(&deep);
	for (i = 0; i < 3000; i++)
		buf_puts(&deep, "a.");
	buf_puts(&deep, "a=1");
	ck_assert_int_eq(resfilter_parse(deep.data, &f, &err), TPU_E_USAGE);
	ck_assert_ptr_nonnull(strstr(err.msg, "a key has at most 64 parts"));
	buf_release(&deep);
}
END_TEST

START_TEST(transforms_in_keys)
{
	cJSON *all = cJSON_Parse(gc_nodes);
	struct buf b;

	buf_init(&b, BUF_NOCAP);
	selected("name.basename()=n22", all, &b);
	ck_assert_str_eq(b.data, "n22");
	selected("tags.len()>1", all, &b);
	ck_assert_str_eq(b.data, "n1");
	selected("name.segment(3):us-central2", all, &b);
	ck_assert_str_eq(b.data, "n1,n22,a3");
	buf_release(&b);
	cJSON_Delete(all);
}
END_TEST

/* gcloud topic filters: createTime>-P2W, an ISO 8601 duration from now. */
START_TEST(durations)
{
	struct resfilter *f = NULL;
	struct tpu_err err;
	char when[64], json[128];
	time_t now = time(NULL), t;
	struct tm tm;
	cJSON *r;
	static const struct {
		long ago; /* seconds */
		const char *filter;
		int match;
	} c[] = {
		{ 86400, "createTime>-P2W", 1 },
		{ 20 * 86400, "createTime>-P2W", 0 },
		{ 20 * 86400, "createTime<-P2W", 1 },
		{ 3600, "createTime>-PT2H", 1 },
		{ 3 * 3600, "createTime>-PT2H", 0 },
		{ 3 * 3600, "createTime>=-P1DT2H30M", 1 },
	};
	size_t i;

	for (i = 0; i < sizeof c / sizeof c[0]; i++) {
		t = now - c[i].ago;
		gmtime_r(&t, &tm);
		strftime(when, sizeof when, "%Y-%m-%dT%H:%M:%SZ", &tm);
		snprintf(json, sizeof json, "{\"createTime\":\"%s\"}", when);
		r = cJSON_Parse(json);
		tpu_err_init(&err);
		ck_assert_int_eq(resfilter_parse(c[i].filter, &f, &err), 0);
		ck_assert_msg(resfilter_match(f, r) == c[i].match, "%s on %s",
		    c[i].filter, when);
		resfilter_free(f);
		cJSON_Delete(r);
	}
}
END_TEST

static Suite *
resfilter_suite(void)
{
	Suite *s = suite_create("resfilter");
	TCase *tc;

	tc = tcase_create("match");
	tcase_add_test(tc, gcloud_selects_the_same);
	tcase_add_test(tc, topic_pattern_table);
	tcase_add_test(tc, empty_matches_all);
	tcase_add_test(tc, transforms_in_keys);
	tcase_add_test(tc, durations);
	suite_add_tcase(s, tc);

	tc = tcase_create("parse");
	tcase_add_test(tc, refused);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	SRunner *sr = srunner_create(resfilter_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
