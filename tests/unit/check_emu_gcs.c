/*
 * Unit tests for the emulator's Cloud Storage helpers (emulator/gcs_util.c):
 * request paths with percent-encoded names, multipart/related bodies as
 * gcsfs and the Node client send them, Content-Range of resumable chunks,
 * download Range, X-Goog-Hash and the etag form of the recorded samples.
 */
#include <stdlib.h>
#include <string.h>

#include <check.h>

#include "gcs_util.h"

START_TEST(path_forms)
{
	struct gcsemu_path p;

	ck_assert_int_eq(
	    gcsemu_path_parse("/storage/v1/b?project=p", "GET", &p), 0);
	ck_assert_int_eq(p.api, GCSEMU_API_JSON);
	ck_assert_int_eq(p.kind, GCSEMU_P_BUCKETS);
	gcsemu_path_release(&p);
	ck_assert_int_eq(
	    gcsemu_path_parse("/storage/v1/b/?project=p", "POST", &p), 0);
	ck_assert_int_eq(p.kind, GCSEMU_P_BUCKETS);
	gcsemu_path_release(&p);
	ck_assert_int_eq(gcsemu_path_parse("/b/bkt", "GET", &p), 0);
	ck_assert_int_eq(p.kind, GCSEMU_P_BUCKET);
	ck_assert_str_eq(p.bucket, "bkt");
	gcsemu_path_release(&p);
	ck_assert_int_eq(gcsemu_path_parse("/b/bkt/o/", "GET", &p), 0);
	ck_assert_int_eq(p.kind, GCSEMU_P_OBJECTS);
	gcsemu_path_release(&p);
	ck_assert_int_eq(gcsemu_path_parse("/upload/storage/v1/b/bkt/o?"
	                                   "uploadType=media&name=x",
	                     "POST", &p),
	    0);
	ck_assert_int_eq(p.api, GCSEMU_API_UPLOAD);
	ck_assert_int_eq(p.kind, GCSEMU_P_OBJECTS);
	gcsemu_path_release(&p);
	/* Encoded and raw slashes name the same object. */
	ck_assert_int_eq(gcsemu_path_parse("/download/storage/v1/b/bkt/o/"
	                                   "test%2Faccounts.1.json?alt=media",
	                     "GET", &p),
	    0);
	ck_assert_int_eq(p.api, GCSEMU_API_DOWNLOAD);
	ck_assert_int_eq(p.kind, GCSEMU_P_OBJECT);
	ck_assert_str_eq(p.object, "test/accounts.1.json");
	gcsemu_path_release(&p);
	ck_assert_int_eq(gcsemu_path_parse("/b/bkt/o/a/b/c", "GET", &p), 0);
	ck_assert_str_eq(p.object, "a/b/c");
	gcsemu_path_release(&p);
	/* a?b#c%2F round-trips. */
	ck_assert_int_eq(
	    gcsemu_path_parse("/b/bkt/o/a%3Fb%23c%252F", "GET", &p), 0);
	ck_assert_str_eq(p.object, "a?b#c%2F");
	gcsemu_path_release(&p);
	ck_assert_int_eq(gcsemu_path_parse("/b/bkt/o/%E2%82%AC", "GET", &p), 0);
	ck_assert_str_eq(p.object, "\xe2\x82\xac");
	gcsemu_path_release(&p);
}
END_TEST

START_TEST(path_actions)
{
	struct gcsemu_path p;

	ck_assert_int_eq(gcsemu_path_parse("/storage/v1/b/B/o/tmp%2Ftest%2Fx/"
	                                   "rewriteTo/b/D/o/test%2Fy",
	                     "POST", &p),
	    0);
	ck_assert_int_eq(p.kind, GCSEMU_P_REWRITE);
	ck_assert_str_eq(p.bucket, "B");
	ck_assert_str_eq(p.object, "tmp/test/x");
	ck_assert_str_eq(p.dbucket, "D");
	ck_assert_str_eq(p.dobject, "test/y");
	gcsemu_path_release(&p);
	ck_assert_int_eq(
	    gcsemu_path_parse("/b/B/o/s/copyTo/b/D/o/d", "POST", &p), 0);
	ck_assert_int_eq(p.kind, GCSEMU_P_COPY);
	gcsemu_path_release(&p);
	ck_assert_int_eq(
	    gcsemu_path_parse("/storage/v1/b/B/o/joined/compose", "POST", &p),
	    0);
	ck_assert_int_eq(p.kind, GCSEMU_P_COMPOSE);
	ck_assert_str_eq(p.object, "joined");
	gcsemu_path_release(&p);
	/* GET of ".../compose" is an object named that way. */
	ck_assert_int_eq(
	    gcsemu_path_parse("/storage/v1/b/B/o/joined/compose", "GET", &p),
	    0);
	ck_assert_int_eq(p.kind, GCSEMU_P_OBJECT);
	ck_assert_str_eq(p.object, "joined/compose");
	gcsemu_path_release(&p);
}
END_TEST

START_TEST(path_rejects)
{
	struct gcsemu_path p;

	ck_assert_int_eq(gcsemu_path_parse("/v2/projects", "GET", &p), -1);
	ck_assert_int_eq(
	    gcsemu_path_parse("/batch/storage/v1", "POST", &p), -1);
	ck_assert_int_eq(gcsemu_path_parse("/b/B/acl", "GET", &p), -1);
	ck_assert_int_eq(gcsemu_path_parse("/b/B/o/a%2", "GET", &p), -1);
	ck_assert_int_eq(gcsemu_path_parse("/b/B/o/a%zz", "GET", &p), -1);
	ck_assert_int_eq(gcsemu_path_parse("/b/B/o/a%00b", "GET", &p), -1);
	ck_assert_int_eq(gcsemu_path_parse("/b//o/x", "GET", &p), -1);
	ck_assert_int_eq(gcsemu_path_parse("/bucket", "GET", &p), -1);
}
END_TEST

START_TEST(multipart_gcsfs_lf)
{
	/* As recorded (bare LF line ends, quoted boundary). */
	const char *body =
	    "--==0==\nContent-Type: application/json; charset=UTF-8\n\n"
	    "{\"name\": \"nested/file1\"}\n--==0==\n"
	    "Content-Type: application/octet-stream\n\nhello\n\n--==0==--";
	char b[80];
	struct gcsemu_mp mp;

	ck_assert_int_eq(gcsemu_mp_boundary("multipart/related; "
	                                    "boundary=\"==0==\"",
	                     b, sizeof(b)),
	    0);
	ck_assert_str_eq(b, "==0==");
	ck_assert_int_eq(gcsemu_mp_parse(body, strlen(body), b, &mp), 0);
	ck_assert_int_eq(mp.json_len, strlen("{\"name\": \"nested/file1\"}"));
	ck_assert_int_eq(
	    memcmp(body + mp.json_off, "{\"name\": \"nested/file1\"}", 24), 0);
	ck_assert_int_eq(mp.data_len, 6);
	ck_assert_int_eq(memcmp(body + mp.data_off, "hello\n", 6), 0);
	ck_assert_str_eq(mp.data_ctype, "application/octet-stream");
}
END_TEST

START_TEST(multipart_node_crlf)
{
	/* Node: unquoted boundary, CRLF, no CRLF after the close. */
	const char *body = "--abc-123\r\nContent-Type: application/json\r\n\r\n"
	                   "{\"contentType\":\"text/plain\"}\r\n--abc-123\r\n"
	                   "Content-Type: text/plain\r\n\r\n"
	                   "x\r\n--abc-123 inside\r\n--abc-123--";
	char b[80];
	struct gcsemu_mp mp;

	ck_assert_int_eq(
	    gcsemu_mp_boundary(
	        "multipart/related; boundary=abc-123", b, sizeof(b)),
	    0);
	ck_assert_str_eq(b, "abc-123");
	ck_assert_int_eq(gcsemu_mp_parse(body, strlen(body), b, &mp), 0);
	ck_assert_int_eq(mp.data_len, strlen("x\r\n--abc-123 inside"));
	ck_assert_int_eq(
	    memcmp(body + mp.data_off, "x\r\n--abc-123 inside", mp.data_len),
	    0);
	ck_assert_str_eq(mp.data_ctype, "text/plain");
}
END_TEST

START_TEST(multipart_empty_and_bad)
{
	const char *empty = "--B\r\n\r\n{}\r\n--B\r\n\r\n\r\n--B--\r\n";
	struct gcsemu_mp mp;
	char b[80];

	ck_assert_int_eq(gcsemu_mp_parse(empty, strlen(empty), "B", &mp), 0);
	ck_assert_int_eq(mp.data_len, 0);
	ck_assert_int_eq(mp.json_len, 2);
	ck_assert_int_eq(
	    gcsemu_mp_parse("--B\r\n\r\n{}\r\n--B--", 17, "B", &mp), -1);
	ck_assert_int_eq(gcsemu_mp_parse("garbage", 7, "B", &mp), -1);
	ck_assert_int_eq(
	    gcsemu_mp_parse("--B\r\n\r\n{}\r\n--B\r\n\r\nx", 20, "B", &mp), -1);
	ck_assert_int_eq(
	    gcsemu_mp_boundary("application/json", b, sizeof(b)), -1);
	ck_assert_int_eq(
	    gcsemu_mp_boundary("multipart/related", b, sizeof(b)), -1);
	ck_assert_int_eq(
	    gcsemu_mp_boundary("multipart/related; boundary=", b, sizeof(b)),
	    -1);
	ck_assert_int_eq(
	    gcsemu_mp_boundary("multipart/related; boundary=\"x", b, sizeof(b)),
	    -1);
}
END_TEST

START_TEST(content_range)
{
	struct gcsemu_crange cr;

	ck_assert_int_eq(gcsemu_crange_parse("bytes 0-262143/*", &cr), 0);
	ck_assert(cr.has_range && !cr.total_known && !cr.open_end);
	ck_assert_uint_eq(cr.first, 0);
	ck_assert_uint_eq(cr.last, 262143);
	ck_assert_int_eq(
	    gcsemu_crange_parse("bytes 786432-1048575/1048576", &cr), 0);
	ck_assert(cr.has_range && cr.total_known);
	ck_assert_uint_eq(cr.total, 1048576);
	ck_assert_int_eq(gcsemu_crange_parse("bytes */0", &cr), 0);
	ck_assert(!cr.has_range && cr.total_known && cr.total == 0);
	ck_assert_int_eq(gcsemu_crange_parse("bytes */*", &cr), 0);
	ck_assert(!cr.has_range && !cr.total_known);
	ck_assert_int_eq(gcsemu_crange_parse("bytes 0-*/*", &cr), 0);
	ck_assert(cr.has_range && cr.open_end && !cr.total_known);
	ck_assert_int_eq(gcsemu_crange_parse("bytes 5-4/10", &cr), -1);
	ck_assert_int_eq(gcsemu_crange_parse("bytes 0-10/10", &cr), -1);
	ck_assert_int_eq(gcsemu_crange_parse("bytes 0-9/10x", &cr), -1);
	ck_assert_int_eq(gcsemu_crange_parse("bytes=0-9/10", &cr), -1);
	ck_assert_int_eq(gcsemu_crange_parse("bytes -1-9/10", &cr), -1);
	ck_assert_int_eq(gcsemu_crange_parse("bytes 0-9", &cr), -1);
	ck_assert_int_eq(
	    gcsemu_crange_parse("bytes 0-99999999999999999999999/*", &cr), -1);
}
END_TEST

START_TEST(download_range)
{
	uint64_t off, len;

	ck_assert_int_eq(gcsemu_range_parse("bytes=1-9", 133, &off, &len), 0);
	ck_assert_uint_eq(off, 1);
	ck_assert_uint_eq(len, 9);
	ck_assert_int_eq(gcsemu_range_parse("bytes=1-", 133, &off, &len), 0);
	ck_assert_uint_eq(len, 132);
	ck_assert_int_eq(gcsemu_range_parse("bytes=0-0", 133, &off, &len), 0);
	ck_assert_uint_eq(len, 1);
	ck_assert_int_eq(gcsemu_range_parse("bytes=-10", 133, &off, &len), 0);
	ck_assert_uint_eq(off, 123);
	ck_assert_int_eq(
	    gcsemu_range_parse("bytes=100-999", 133, &off, &len), 0);
	ck_assert_uint_eq(len, 33);
	ck_assert_int_eq(gcsemu_range_parse("bytes=133-", 133, &off, &len), -1);
	ck_assert_int_eq(gcsemu_range_parse("bytes=-0", 133, &off, &len), -1);
	ck_assert_int_eq(gcsemu_range_parse("bytes=9-1", 133, &off, &len), 1);
	ck_assert_int_eq(
	    gcsemu_range_parse("bytes=0-1,5-6", 133, &off, &len), 1);
	ck_assert_int_eq(gcsemu_range_parse("items=0-1", 133, &off, &len), 1);
}
END_TEST

START_TEST(goog_hash)
{
	char c[64], m[64];

	ck_assert_int_eq(gcsemu_goog_hash_parse("crc32c=m/kv4g==,md5="
	                                        "WkMiVAUW1IeCesnRRyniYg==",
	                     c, sizeof(c), m, sizeof(m)),
	    0);
	ck_assert_str_eq(c, "m/kv4g==");
	ck_assert_str_eq(m, "WkMiVAUW1IeCesnRRyniYg==");
	ck_assert_int_eq(gcsemu_goog_hash_parse("md5=abc, crc32c=AAAAAA==", c,
	                     sizeof(c), m, sizeof(m)),
	    0);
	ck_assert_str_eq(c, "AAAAAA==");
	ck_assert_str_eq(m, "abc");
	ck_assert_int_eq(
	    gcsemu_goog_hash_parse("crc32c", c, sizeof(c), m, sizeof(m)), -1);
	ck_assert_int_eq(
	    gcsemu_goog_hash_parse("crc32c=", c, sizeof(c), m, sizeof(m)), -1);
}
END_TEST

START_TEST(etag_matches_samples)
{
	char t[48];

	/* From gcs_resumable_chunked_upload: generation 1620658560613644. */
	gcsemu_etag(1620658560613644LL, 1, t, sizeof(t));
	ck_assert_str_eq(t, "CIz6us6vv/ACEAE=");
	gcsemu_etag(1620658704970008LL, 1, t, sizeof(t));
	ck_assert_str_eq(t, "CJjipZOwv/ACEAE=");
}
END_TEST

START_TEST(pct_decode)
{
	char *s;

	s = gcsemu_pct_decode("a%2Fb+c", 7);
	ck_assert_str_eq(s, "a/b+c");
	free(s);
	ck_assert_ptr_null(gcsemu_pct_decode("%", 1));
	ck_assert_ptr_null(gcsemu_pct_decode("%4", 2));
	ck_assert_ptr_null(gcsemu_pct_decode("%00", 3));
	ck_assert(gcsemu_is_hex("0af9", 4));
	ck_assert(!gcsemu_is_hex("0aF9", 4));
	ck_assert(!gcsemu_is_hex("0af9x", 4));
}
END_TEST

/* selfLink/mediaLink form: all but A-Z a-z 0-9 - . _ ~ escaped, '/'
 * too, and decoding gives the name back. */
START_TEST(pct_encode)
{
	static const char *const names[] = { "dir/a b+c?d#e%f",
		"\xc3\xbcn\xc3\xaf/\xe6\x96\x87", "a-b.c_d~e", "" };
	char *e, *d;
	size_t i;

	e = gcsemu_pct_encode("dir/a b+c?d#e%f");
	ck_assert_str_eq(e, "dir%2Fa%20b%2Bc%3Fd%23e%25f");
	free(e);
	e = gcsemu_pct_encode("\xc3\xbc~");
	ck_assert_str_eq(e, "%C3%BC~");
	free(e);
	for (i = 0; i < sizeof names / sizeof names[0]; i++) {
		e = gcsemu_pct_encode(names[i]);
		d = gcsemu_pct_decode(e, strlen(e));
		ck_assert_ptr_nonnull(d);
		ck_assert_str_eq(d, names[i]);
		free(d);
		free(e);
	}
}
END_TEST

static Suite *
emu_gcs_suite(void)
{
	Suite *s = suite_create("emu_gcs");
	TCase *tc;

	tc = tcase_create("paths");
	tcase_add_test(tc, path_forms);
	tcase_add_test(tc, path_actions);
	tcase_add_test(tc, path_rejects);
	tcase_add_test(tc, pct_decode);
	tcase_add_test(tc, pct_encode);
	suite_add_tcase(s, tc);
	tc = tcase_create("multipart");
	tcase_add_test(tc, multipart_gcsfs_lf);
	tcase_add_test(tc, multipart_node_crlf);
	tcase_add_test(tc, multipart_empty_and_bad);
	suite_add_tcase(s, tc);
	tc = tcase_create("headers");
	tcase_add_test(tc, content_range);
	tcase_add_test(tc, download_range);
	tcase_add_test(tc, goog_hash);
	tcase_add_test(tc, etag_matches_samples);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	SRunner *sr = srunner_create(emu_gcs_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
