/*
 * Unit tests for src/json.c: strict parsing with offsets, dotted paths,
 * required and optional getters, and Google's int64-as-string numbers.
 */
#include <stdlib.h>
#include <string.h>

#include <check.h>

#include "json.h"

static cJSON *
parse(const char *s)
{
	struct tpu_err err;
	cJSON *r;

	tpu_err_init(&err);
	r = json_parse(s, strlen(s), "test", &err);
	ck_assert_msg(r != NULL, "%s", err.msg);
	return r;
}

START_TEST(parse_valid)
{
	cJSON *r = parse(" {\"a\": [1, 2]} \n\t");

	ck_assert(cJSON_IsObject(r));
	cJSON_Delete(r);
	/* Exactly len bytes: a NUL after them is not read. */
	r = json_parse("[1]garbage", 3, "t", NULL);
	ck_assert_ptr_nonnull(r);
	cJSON_Delete(r);
}
END_TEST

START_TEST(parse_invalid)
{
	static const struct {
		const char *text, *msg;
	} cases[] = {
		{ "{\"a\":", "node: invalid JSON at offset" },
		{ "{} {}", "node: invalid JSON: trailing data at offset 3" },
		{ "[1] x", "node: invalid JSON: trailing data at offset 4" },
		{ "nul", "node: invalid JSON at offset" },
		{ "{'a':1}", "node: invalid JSON at offset" },
	};
	struct tpu_err err;
	size_t i;

	for (i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		tpu_err_init(&err);
		ck_assert_ptr_null(json_parse(
		    cases[i].text, strlen(cases[i].text), "node", &err));
		ck_assert_int_eq(err.code, TPU_E_API);
		ck_assert_msg(
		    strncmp(err.msg, cases[i].msg, strlen(cases[i].msg)) == 0,
		    "'%s' gave '%s'", cases[i].text, err.msg);
	}
	tpu_err_init(&err);
	ck_assert_ptr_null(json_parse("", 0, "reply", &err));
	ck_assert_str_eq(err.msg, "reply: empty reply where JSON was expected");
	ck_assert_ptr_null(json_parse(NULL, 0, "reply", &err));
	/* A NUL inside the length is not JSON. */
	ck_assert_ptr_null(json_parse("{}\0{}", 5, "reply", &err));
}
END_TEST

START_TEST(paths)
{
	cJSON *r = parse("{\"a\":{\"b\":[{\"c\":\"x\"},{\"c\":\"y\"}]},"
	                 "\"metadata\":{\"ssh-keys\":\"k\"},\"10\":\"ten\","
	                 "\"arr\":[[1,2],[3]]}");

	ck_assert_str_eq(json_path(r, "a.b.1.c")->valuestring, "y");
	ck_assert_str_eq(json_path(r, "metadata.ssh-keys")->valuestring, "k");
	/* A numeric part is a key in an object, an index in an array. */
	ck_assert_str_eq(json_path(r, "10")->valuestring, "ten");
	ck_assert_int_eq(json_path(r, "arr.0.1")->valueint, 2);
	ck_assert_ptr_eq(json_path(r, ""), r);
	ck_assert_ptr_null(json_path(r, "a.b.2.c"));
	ck_assert_ptr_null(json_path(r, "a.b.x"));
	ck_assert_ptr_null(json_path(r, "a.b.-1"));
	ck_assert_ptr_null(json_path(r, "metadata.ssh-keys.x"));
	ck_assert_ptr_null(json_path(r, "nosuch"));
	ck_assert_ptr_null(json_path(NULL, "a"));
	ck_assert_ptr_null(json_path(r, "arr.99999999999"));
	cJSON_Delete(r);
}
END_TEST

START_TEST(required_getters)
{
	cJSON *r = parse("{\"name\":\"n\",\"o\":{},\"l\":[],\"i\":\"1024\","
	                 "\"f\":1.5,\"big\":\"9223372036854775807\"}");
	struct tpu_err err;
	long long v;

	tpu_err_init(&err);
	ck_assert_str_eq(json_req_string(r, "name", &err), "n");
	ck_assert_ptr_nonnull(json_req_object(r, "o", &err));
	ck_assert_ptr_nonnull(json_req_array(r, "l", &err));
	ck_assert_int_eq(json_req_int64(r, "i", &v, &err), 0);
	ck_assert_int_eq(v, 1024);
	ck_assert_int_eq(json_req_int64(r, "big", &v, &err), 0);
	ck_assert_int_eq(v, 9223372036854775807LL);

	ck_assert_ptr_null(json_req_string(r, "state", &err));
	ck_assert_str_eq(err.msg, "field 'state' is missing");
	ck_assert_int_eq(err.code, TPU_E_API);
	ck_assert_ptr_null(json_req_string(r, "o", &err));
	ck_assert_str_eq(err.msg, "field 'o' is not a string");
	ck_assert_ptr_null(json_req_object(r, "l", &err));
	ck_assert_str_eq(err.msg, "field 'l' is not an object");
	ck_assert_ptr_null(json_req_array(r, "o", &err));
	ck_assert_str_eq(err.msg, "field 'o' is not an array");
	ck_assert_int_eq(json_req_int64(r, "f", &v, &err), TPU_E_API);
	ck_assert_str_eq(err.msg, "field 'f' is not an integer");
	ck_assert_int_eq(json_req_int64(r, "nope", &v, &err), TPU_E_API);
	ck_assert_str_eq(err.msg, "field 'nope' is missing");
	cJSON_Delete(r);
}
END_TEST

START_TEST(optional_getters)
{
	cJSON *r = parse("{\"s\":\"x\",\"n\":5,\"b\":true,\"ns\":\"-7\"}");

	ck_assert_str_eq(json_opt_string(r, "s", "d"), "x");
	ck_assert_str_eq(json_opt_string(r, "n", "d"), "d");
	ck_assert_str_eq(json_opt_string(r, "zz", "d"), "d");
	ck_assert_ptr_null(json_opt_string(r, "zz", NULL));
	ck_assert_int_eq(json_opt_int64(r, "n", -1), 5);
	ck_assert_int_eq(json_opt_int64(r, "ns", -1), -7);
	ck_assert_int_eq(json_opt_int64(r, "s", -1), -1);
	ck_assert_int_eq(json_opt_bool(r, "b", 0), 1);
	ck_assert_int_eq(json_opt_bool(r, "s", 0), 0);
	ck_assert_int_eq(json_opt_bool(r, "zz", 1), 1);
	cJSON_Delete(r);
}
END_TEST

START_TEST(int64_forms)
{
	static const struct {
		const char *json;
		int ok;
		long long v;
	} cases[] = {
		{ "\"0\"", 1, 0 },
		{ "\"-12\"", 1, -12 },
		{ "\"1024\"", 1, 1024 },
		{ "3", 1, 3 },
		{ "-3", 1, -3 },
		{ "1e3", 1, 1000 },
		{ "\"\"", 0, 0 },
		{ "\" 1\"", 0, 0 },
		{ "\"+1\"", 0, 0 },
		{ "\"1x\"", 0, 0 },
		{ "\"99999999999999999999\"", 0, 0 },
		{ "1.5", 0, 0 },
		{ "1e300", 0, 0 },
		{ "true", 0, 0 },
		{ "null", 0, 0 },
	};
	long long v;
	size_t i;
	cJSON *r;

	for (i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		r = parse(cases[i].json);
		v = 0;
		ck_assert_msg((json_as_int64(r, &v) == 0) == cases[i].ok, "%s",
		    cases[i].json);
		if (cases[i].ok)
			ck_assert_int_eq(v, cases[i].v);
		cJSON_Delete(r);
	}
}
END_TEST

START_TEST(print_forms)
{
	cJSON *r = parse("{\"a\":[1,\"x\"]}");
	char *s;

	s = json_print(r, 0);
	ck_assert_str_eq(s, "{\"a\":[1,\"x\"]}");
	cJSON_free(s);
	s = json_print(r, 1);
	ck_assert_ptr_nonnull(strchr(s, '\n'));
	cJSON_free(s);
	cJSON_Delete(r);
}
END_TEST

static Suite *
json_suite(void)
{
	Suite *s = suite_create("json");
	TCase *tc;

	tc = tcase_create("parse");
	tcase_add_test(tc, parse_valid);
	tcase_add_test(tc, parse_invalid);
	tcase_add_test(tc, print_forms);
	suite_add_tcase(s, tc);

	tc = tcase_create("access");
	tcase_add_test(tc, paths);
	tcase_add_test(tc, required_getters);
	tcase_add_test(tc, optional_getters);
	tcase_add_test(tc, int64_forms);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	SRunner *sr = srunner_create(json_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
