/*
 * Unit tests for src/redact.c: every rule of R10 (headers, JSON and form
 * fields, query parameters, proxy userinfo, PEM blocks, bare tokens), and
 * that ordinary text passes unchanged.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <check.h>

#include "redact.h"

static void
expect(const char *in, const char *want)
{
	char *got = redact_str(in);

	ck_assert_msg(strcmp(got, want) == 0, "redact('%s') = '%s', want '%s'",
	    in, got, want);
	free(got);
}

static void
no_secret(const char *in, const char *secret)
{
	char *got = redact_str(in);

	ck_assert_msg(
	    strstr(got, secret) == NULL, "'%s' leaked in '%s'", secret, got);
	free(got);
}

START_TEST(headers)
{
	expect("Authorization: Bearer ya29.CANARYabc\r\n",
	    "Authorization: Bearer <redacted>\r\n");
	expect("authorization: Basic dTpw", "authorization: Basic <redacted>");
	expect("Proxy-Authorization: Basic dTpDQU5BUllQVw==\r\n",
	    "Proxy-Authorization: Basic <redacted>\r\n");
	expect("Cookie: SID=CANARY; x=y", "Cookie: <redacted>");
	expect("Set-Cookie: SID=CANARY; Path=/", "Set-Cookie: <redacted>");
	expect("X-Goog-Api-Key: AIzaCANARY", "X-Goog-Api-Key: <redacted>");
	expect("x-goog-iam-authorization-token: CANARY",
	    "x-goog-iam-authorization-token: <redacted>");
	expect(
	    "Content-Type: application/json", "Content-Type: application/json");
}
END_TEST

START_TEST(header_block)
{
	const char *blk = "POST /token HTTP/1.1\r\nHost: h\r\n"
	                  "Authorization: Bearer CANARY1\r\n"
	                  "Cookie: a=CANARY2\r\n\r\n";
	char *got = redact_str(blk);

	ck_assert_ptr_null(strstr(got, "CANARY"));
	ck_assert_ptr_nonnull(strstr(got, "Host: h\r\n"));
	ck_assert_ptr_nonnull(strstr(got, "Authorization: Bearer <redacted>"));
	free(got);
}
END_TEST

START_TEST(json_fields)
{
	static const char *const f[] = { "access_token", "accessToken",
		"refresh_token", "id_token", "client_secret", "private_key",
		"private_key_id", "assertion", "subject_token" };
	size_t i;
	char in[256], want[256];

	for (i = 0; i < sizeof f / sizeof f[0]; i++) {
		snprintf(
		    in, sizeof in, "{\"%s\": \"CANARY\\\"x\", \"n\": 1}", f[i]);
		snprintf(want, sizeof want,
		    "{\"%s\": \"<redacted>\", \"n\": 1}", f[i]);
		expect(in, want);
	}
	expect("{\"name\":\"x\",\"expires_in\":3599}",
	    "{\"name\":\"x\",\"expires_in\":3599}");
}
END_TEST

START_TEST(form_fields)
{
	expect("grant_type=refresh_token&client_id=c&client_secret=CANARY&"
	       "refresh_token=CANARY2",
	    "grant_type=refresh_token&client_id=c&client_secret=<redacted>&"
	    "refresh_token=<redacted>");
	expect("grant_type=x&assertion=eyJCANARY.eyJ.sig",
	    "grant_type=x&assertion=<redacted>");
	expect(
	    "subject_token=CANARY&scope=s", "subject_token=<redacted>&scope=s");
}
END_TEST

START_TEST(query_params)
{
	expect("PUT /upload/storage/v1/b/b/o?uploadType=resumable&"
	       "upload_id=CANARY HTTP/1.1",
	    "PUT /upload/storage/v1/b/b/o?uploadType=resumable&"
	    "upload_id=<redacted> HTTP/1.1");
	expect("Location: https://h/x?upload_id=CANARY&a=b",
	    "Location: https://h/x?upload_id=<redacted>&a=b");
	expect("https://s/o?X-Goog-Signature=CANARY&X-Goog-Date=1",
	    "https://s/o?X-Goog-Signature=<redacted>&X-Goog-Date=1");
	expect(
	    "https://s/o?Signature=CANARY", "https://s/o?Signature=<redacted>");
	expect(
	    "https://s/o?sv=1&sig=CANARY", "https://s/o?sv=1&sig=<redacted>");
	expect("https://s/o?pageToken=abc", "https://s/o?pageToken=abc");
}
END_TEST

START_TEST(userinfo)
{
	expect("Uses proxy env variable https_proxy == "
	       "'http://u:CANARYPW@127.0.0.1:8888'",
	    "Uses proxy env variable https_proxy == "
	    "'http://<redacted>@127.0.0.1:8888'");
	expect("https://host/path@x", "https://host/path@x");
}
END_TEST

START_TEST(pem_and_tokens)
{
	no_secret("{\"private_key\": \"-----BEGIN PRIVATE KEY-----\\nCANARY\\n"
	          "-----END PRIVATE KEY-----\\n\"}",
	    "CANARY");
	no_secret("-----BEGIN RSA PRIVATE KEY-----\nCANARY1\nCANARY2\n"
	          "-----END RSA PRIVATE KEY-----\nafter\n",
	    "CANARY");
	{
		char *got = redact_str("-----BEGIN PRIVATE KEY-----\nCANARY\n"
		                       "-----END PRIVATE KEY-----\nafter\n");

		ck_assert_ptr_nonnull(strstr(got, "after"));
		free(got);
	}
	expect("token ya29.CANARY-abc_def.x end", "token ya29.<redacted> end");
	expect("xya29.CANARY", "xya29.<redacted>");
	expect("ya29", "ya29");
}
END_TEST

/* issue 19 defect 6: the upload session id in its own header, and quoted
 * by a server message */
START_TEST(upload_session_id)
{
	char *v, *got;

	expect("X-GUploader-UploadID: CANARYUPLOADID42\r\n",
	    "X-GUploader-UploadID: <redacted>\r\n");
	expect("x-guploader-uploadid: CANARYUPLOADID42",
	    "x-guploader-uploadid: <redacted>");
	v = redact_url_param(
	    "http://h/upload/x?uploadType=resumable&upload_id=CANARY42&a=b",
	    "upload_id");
	ck_assert_str_eq(v, "CANARY42");
	free(v);
	ck_assert_ptr_null(redact_url_param("http://h/x?a=1", "upload_id"));
	ck_assert_ptr_null(
	    redact_url_param("http://h/x?upload_id=", "upload_id"));
	ck_assert_ptr_null(
	    redact_url_param("http://h/x?xupload_id=CANARY42", "upload_id"));
	ck_assert_ptr_null(
	    redact_url_param("http://h/x#upload_id=CANARY42", "upload_id"));
	got = redact_secret(
	    "The upload session CANARY42 is busy (CANARY42)", "CANARY42");
	ck_assert_str_eq(
	    got, "The upload session <redacted> is busy (<redacted>)");
	free(got);
	got = redact_secret("short abc", "abc");
	ck_assert_str_eq(got, "short abc");
	free(got);
	got = redact_secret("nothing", NULL);
	ck_assert_str_eq(got, "nothing");
	free(got);
}
END_TEST

START_TEST(binary_safe)
{
	char in[64];
	char *got;
	size_t i;

	for (i = 0; i < sizeof in; i++)
		in[i] = (char)(i * 7 + 1);
	got = redact_text(in, sizeof in);
	ck_assert_ptr_nonnull(got);
	free(got);
	got = redact_text("", 0);
	ck_assert_str_eq(got, "");
	free(got);
}
END_TEST

static Suite *
redact_suite(void)
{
	Suite *s = suite_create("redact");
	TCase *tc = tcase_create("rules");

	tcase_add_test(tc, headers);
	tcase_add_test(tc, upload_session_id);
	tcase_add_test(tc, header_block);
	tcase_add_test(tc, json_fields);
	tcase_add_test(tc, form_fields);
	tcase_add_test(tc, query_params);
	tcase_add_test(tc, userinfo);
	tcase_add_test(tc, pem_and_tokens);
	tcase_add_test(tc, binary_safe);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	SRunner *sr = srunner_create(redact_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
