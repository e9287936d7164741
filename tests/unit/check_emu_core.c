/*
 * Unit tests for the emulator core's pure helpers (emulator/core_util.c):
 * fault-spec parsing, form decoding, request-log redaction, the env file,
 * timestamps, options and project lists.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <check.h>
#include <cjson/cJSON.h>

#include "emu.h"

static int
parse(const char *spec, struct emu_fault_action *a)
{
	char err[512];

	return emu_fault_parse(spec, a, err, sizeof(err));
}

START_TEST(fault_return)
{
	struct emu_fault_action a;

	ck_assert_int_eq(parse("return-503", &a), 0);
	ck_assert_int_eq(a.kind, EMU_FK_RETURN);
	ck_assert_int_eq(a.code, 503);
	ck_assert_int_eq(parse("return-500-after-256K", &a), 0);
	ck_assert_int_eq(a.kind, EMU_FK_RETURN_AFTER);
	ck_assert_int_eq(a.code, 500);
	ck_assert_int_eq(a.bytes, 256 * 1024);
	ck_assert_int_eq(parse("return-99", &a), -1);
	ck_assert_int_eq(parse("return-600", &a), -1);
	ck_assert_int_eq(parse("return-", &a), -1);
	ck_assert_int_eq(parse("return-503x", &a), -1);
	ck_assert_int_eq(parse("return-503-after-K", &a), -1);
	ck_assert_int_eq(parse("return-503-after-5", &a), -1);
}
END_TEST

START_TEST(fault_retry_after)
{
	struct emu_fault_action a;

	ck_assert_int_eq(parse("retry-after-3", &a), 0);
	ck_assert_int_eq(a.kind, EMU_FK_RETRY_AFTER);
	ck_assert_int_eq(a.secs, 3);
	ck_assert_int_eq(a.code, 429);
	ck_assert_int_eq(parse("retry-after-date", &a), 0);
	ck_assert_int_eq(a.kind, EMU_FK_RETRY_DATE);
	ck_assert_int_eq(parse("retry-after-date-10", &a), 0);
	ck_assert_int_eq(a.secs, 10);
	ck_assert_int_eq(parse("retry-after-garbage", &a), 0);
	ck_assert_int_eq(a.kind, EMU_FK_RETRY_GARBAGE);
	ck_assert_int_eq(parse("retry-after-", &a), -1);
	ck_assert_int_eq(parse("retry-after-date-", &a), -1);
	ck_assert_int_eq(parse("retry-after-99999999", &a), -1);
}
END_TEST

START_TEST(fault_stream)
{
	struct emu_fault_action a;

	ck_assert_int_eq(parse("reset-connection", &a), 0);
	ck_assert_int_eq(a.kind, EMU_FK_RESET);
	ck_assert_int_eq(parse("broken-stream-after-1024K", &a), 0);
	ck_assert_int_eq(a.kind, EMU_FK_BROKEN);
	ck_assert_int_eq(a.bytes, 1024 * 1024);
	ck_assert_int_eq(parse("broken-stream-after-0K", &a), 0);
	ck_assert_int_eq(a.bytes, 0);
	ck_assert_int_eq(parse("broken-stream", &a), -1);
	ck_assert_int_eq(parse("stall-30s-after-1K", &a), 0);
	ck_assert_int_eq(a.kind, EMU_FK_STALL);
	ck_assert_int_eq(a.secs, 30);
	ck_assert_int_eq(a.bytes, 1024);
	ck_assert_int_eq(parse("stall-30s", &a), -1);
	ck_assert_int_eq(parse("stall-s-after-1K", &a), -1);
	ck_assert_int_eq(parse("corrupt-byte-100", &a), 0);
	ck_assert_int_eq(a.kind, EMU_FK_CORRUPT);
	ck_assert_int_eq(a.bytes, 100);
	ck_assert_int_eq(parse("corrupt-byte-", &a), -1);
}
END_TEST

START_TEST(fault_module_and_charset)
{
	struct emu_fault_action a;
	char err[512];

	ck_assert_int_eq(parse("lro-pending-5", &a), 0);
	ck_assert_int_eq(a.kind, EMU_FK_MODULE);
	ck_assert_int_eq(parse("lro-error-8", &a), 0);
	ck_assert_int_eq(a.kind, EMU_FK_MODULE);
	ck_assert_int_eq(parse("", &a), -1);
	ck_assert_int_eq(parse("Return-503", &a), -1);
	ck_assert_int_eq(parse("return 503", &a), -1);
	ck_assert_int_eq(emu_fault_parse("x/y", &a, err, sizeof(err)), -1);
	ck_assert_ptr_nonnull(strstr(err, "'x/y'"));
}
END_TEST

START_TEST(gstatus)
{
	ck_assert_str_eq(emu_http_gstatus(404), "NOT_FOUND");
	ck_assert_str_eq(emu_http_gstatus(503), "UNAVAILABLE");
	ck_assert_str_eq(emu_http_gstatus(429), "RESOURCE_EXHAUSTED");
	ck_assert_str_eq(emu_http_reason(404), "notFound");
	ck_assert_str_eq(emu_http_gstatus(599), "INTERNAL");
}
END_TEST

START_TEST(form)
{
	const char *b = "a=1&grant_type=refresh_token&x=a%2Bb+c%3D&empty&"
	                "pct=%zz%4";
	char *v;

	v = emu_form_get(b, strlen(b), "grant_type");
	ck_assert_str_eq(v, "refresh_token");
	free(v);
	v = emu_form_get(b, strlen(b), "x");
	ck_assert_str_eq(v, "a+b c=");
	free(v);
	v = emu_form_get(b, strlen(b), "empty");
	ck_assert_str_eq(v, "");
	free(v);
	v = emu_form_get(b, strlen(b), "pct");
	ck_assert_str_eq(v, "%zz%4");
	free(v);
	ck_assert_ptr_null(emu_form_get(b, strlen(b), "missing"));
	ck_assert_ptr_null(emu_form_get(b, strlen(b), "gran"));
	/* Length-bounded: nothing past len is read. */
	ck_assert_ptr_null(emu_form_get(b, 3, "grant_type"));
}
END_TEST

START_TEST(json_body)
{
	char why[128];
	cJSON *j;

	j = emu_json_object("{\"a\":1} \n", 9, why, sizeof(why));
	ck_assert_ptr_nonnull(j);
	cJSON_Delete(j);
	j = emu_json_object(NULL, 0, why, sizeof(why));
	ck_assert(cJSON_IsObject(j));
	cJSON_Delete(j);
	ck_assert_ptr_null(emu_json_object("[1]", 3, why, sizeof(why)));
	ck_assert_str_eq(why, "Root element must be a message.");
	ck_assert_ptr_null(emu_json_object("{} x", 4, why, sizeof(why)));
	ck_assert_str_eq(why, "Unexpected token at offset 3.");
	ck_assert_ptr_null(emu_json_object("{\"a\":}", 6, why, sizeof(why)));
	/* Only len bytes count: the closing brace is past the end. */
	ck_assert_ptr_null(emu_json_object("{\"a\":1}", 6, why, sizeof(why)));
}
END_TEST

START_TEST(log_redaction)
{
	cJSON *h = cJSON_CreateObject(), *line;
	char *s;

	cJSON_AddStringToObject(h, "Authorization", "Bearer ya29.SECRET1");
	cJSON_AddStringToObject(h, "proxy-authorization", "Basic U0VDUkVUMg==");
	cJSON_AddStringToObject(h, "Cookie", "SID=SECRET3");
	cJSON_AddStringToObject(h, "X-Goog-Api-Key", "SECRET4");
	cJSON_AddStringToObject(h, "User-Agent", "curl/8");
	s = emu_log_line(0, "POST", "/token",
	    "access_token=SECRET5&a=1&refresh_token=SECRET6&assertion=SECRET7"
	    "&client_secret=SECRET8&subject_token=SECRET9&b",
	    200, 10, 20, 3, "return-503", h);
	ck_assert_ptr_null(strstr(s, "SECRET"));
	line = cJSON_Parse(s);
	ck_assert_ptr_nonnull(line);
	ck_assert_str_eq(cJSON_GetObjectItem(line, "ts")->valuestring,
	    "1970-01-01T00:00:00.000000000Z");
	ck_assert_str_eq(cJSON_GetObjectItem(line, "query")->valuestring,
	    "access_token=<redacted>&a=1&refresh_token=<redacted>&"
	    "assertion=<redacted>&client_secret=<redacted>&"
	    "subject_token=<redacted>&b");
	ck_assert_str_eq(
	    cJSON_GetObjectItem(line, "fault")->valuestring, "return-503");
	ck_assert_int_eq(cJSON_GetObjectItem(line, "status")->valueint, 200);
	ck_assert_int_eq(
	    cJSON_GetObjectItem(line, "request_bytes")->valueint, 10);
	ck_assert_int_eq(
	    cJSON_GetObjectItem(line, "response_bytes")->valueint, 20);
	ck_assert_int_eq(cJSON_GetObjectItem(line, "duration_ms")->valueint, 3);
	{
		cJSON *hh = cJSON_GetObjectItem(line, "headers");

		ck_assert_str_eq(
		    cJSON_GetObjectItem(hh, "Authorization")->valuestring,
		    "Bearer <redacted>");
		ck_assert_str_eq(
		    cJSON_GetObjectItem(hh, "proxy-authorization")->valuestring,
		    "Basic <redacted>");
		ck_assert_str_eq(cJSON_GetObjectItem(hh, "Cookie")->valuestring,
		    "<redacted>");
		ck_assert_str_eq(
		    cJSON_GetObjectItem(hh, "User-Agent")->valuestring,
		    "curl/8");
	}
	cJSON_Delete(line);
	free(s);
	/* No query, no fault: JSON nulls. */
	s = emu_log_line(0, "GET", "/", NULL, 404, 0, 0, 0, NULL, h);
	line = cJSON_Parse(s);
	ck_assert(cJSON_IsNull(cJSON_GetObjectItem(line, "query")));
	ck_assert(cJSON_IsNull(cJSON_GetObjectItem(line, "fault")));
	cJSON_Delete(line);
	free(s);
	cJSON_Delete(h);
}
END_TEST

START_TEST(env_file)
{
	struct emu e;
	char *text = NULL, dir[] = "/tmp/st'ate";
	size_t len = 0;
	FILE *fp;

	memset(&e, 0, sizeof(e));
	e.state_dir = dir;
	e.base_url = (char *)"http://127.0.0.1:4242";
	e.project = (char *)"proj-x";
	e.zone = (char *)"us-central2-b";
	fp = open_memstream(&text, &len);
	emu_env_write(&e, fp);
	fclose(fp);
	ck_assert_ptr_nonnull(
	    strstr(text, "export CLOUDSDK_API_ENDPOINT_OVERRIDES_TPU="
	                 "'http://127.0.0.1:4242/'\n"));
	ck_assert_ptr_nonnull(strstr(
	    text, "export STORAGE_EMULATOR_HOST='http://127.0.0.1:4242'\n"));
	ck_assert_ptr_nonnull(
	    strstr(text, "export GCE_METADATA_HOST='127.0.0.1:4242'\n"));
	ck_assert_ptr_nonnull(
	    strstr(text, "export GOOGLE_APPLICATION_CREDENTIALS="
	                 "'/tmp/st'\\''ate/service-account.json'\n"));
	ck_assert_ptr_nonnull(
	    strstr(text, "export CLOUDSDK_CORE_PROJECT='proj-x'\n"));
	ck_assert_ptr_nonnull(
	    strstr(text, "export CLOUDSDK_COMPUTE_ZONE='us-central2-b'\n"));
	ck_assert_ptr_nonnull(strstr(
	    text, "export TPUCTL_EMULATOR_URL='http://127.0.0.1:4242'\n"));
	ck_assert_ptr_null(strstr(text, "TPUCTL_CA_BUNDLE"));
	free(text);
	e.tls = 1;
	e.base_url = (char *)"https://127.0.0.1:4242";
	fp = open_memstream(&text, &len);
	emu_env_write(&e, fp);
	fclose(fp);
	ck_assert_ptr_nonnull(
	    strstr(text, "export TPUCTL_CA_BUNDLE='/tmp/st'\\''ate/ca.pem'\n"));
	free(text);
}
END_TEST

START_TEST(rfc3339)
{
	char b[64];

	emu_rfc3339(b, sizeof(b), 1704067200123LL);
	ck_assert_str_eq(b, "2024-01-01T00:00:00.123000000Z");
	emu_rfc3339(b, sizeof(b), 0);
	ck_assert_str_eq(b, "1970-01-01T00:00:00.000000000Z");
}
END_TEST

START_TEST(opts_and_projects)
{
	struct emu e;
	char *opts[] = { (char *)"tpu.create_ms=3000",
		(char *)"auth.projects=a-proj,b-proj", (char *)"x=bad",
		(char *)"tpu.create_ms=4000", NULL };
	char hex[33], num[32], num2[32];

	memset(&e, 0, sizeof(e));
	e.opts = opts;
	e.project = (char *)"main-proj";
	ck_assert_int_eq(emu_opt_int(&e, "tpu.create_ms", 1), 4000);
	ck_assert_int_eq(emu_opt_int(&e, "x", 7), 7);
	ck_assert_int_eq(emu_opt_int(&e, "tpu.create", 9), 9);
	ck_assert_str_eq(emu_opt(&e, "missing", "d"), "d");
	ck_assert(emu_project_allowed(&e, "main-proj"));
	ck_assert(emu_project_allowed(&e, "a-proj"));
	ck_assert(emu_project_allowed(&e, "b-proj"));
	ck_assert(!emu_project_allowed(&e, "a-pro"));
	ck_assert(!emu_project_allowed(&e, "c-proj"));
	emu_random_hex(hex, 32);
	ck_assert_uint_eq(strlen(hex), 32);
	ck_assert_uint_eq(strspn(hex, "0123456789abcdef"), 32);
	emu_project_number("main-proj", num, sizeof(num));
	emu_project_number("main-proj", num2, sizeof(num2));
	ck_assert_str_eq(num, num2);
	ck_assert_uint_eq(strlen(num), 12);
}
END_TEST

static Suite *
suite(void)
{
	Suite *s = suite_create("emu_core");
	TCase *tc;

	tc = tcase_create("faults");
	tcase_add_test(tc, fault_return);
	tcase_add_test(tc, fault_retry_after);
	tcase_add_test(tc, fault_stream);
	tcase_add_test(tc, fault_module_and_charset);
	tcase_add_test(tc, gstatus);
	suite_add_tcase(s, tc);
	tc = tcase_create("requests");
	tcase_add_test(tc, form);
	tcase_add_test(tc, json_body);
	tcase_add_test(tc, log_redaction);
	suite_add_tcase(s, tc);
	tc = tcase_create("state");
	tcase_add_test(tc, env_file);
	tcase_add_test(tc, rfc3339);
	tcase_add_test(tc, opts_and_projects);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	SRunner *sr = srunner_create(suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
