/*
 * Unit tests for the separable logic of src/gcsxfer.c: the Range of 308
 * replies (RELIABILITY.md C6-C8), Content-Range, part planning for
 * composite uploads and sliced downloads, crc32c of parts combined (C12),
 * the resume trackers of resumable and composite uploads (C10) and the
 * destination path rules downloads use.
 */
#include <sys/stat.h>

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <check.h>
#include <cjson/cJSON.h>

#include "buf.h"
#include "crc32c.h"
#include "gcsurl.h"
#include "gcsxfer.h"
#include "util.h"
#include "xmalloc.h"

START_TEST(range_308)
{
	ck_assert_int_eq(gcsx_parse_range(NULL), 0); /* C7: restart at 0 */
	ck_assert_int_eq(gcsx_parse_range("bytes=0-0"), 1);
	ck_assert_int_eq(gcsx_parse_range("bytes=0-262143"), 262144);
	ck_assert_int_eq(
	    gcsx_parse_range("bytes=0-2147483647"), (int64_t)2147483648LL);
	ck_assert_int_eq(gcsx_parse_range("bytes=1-262143"), -1);
	ck_assert_int_eq(gcsx_parse_range("bytes=0-"), -1);
	ck_assert_int_eq(gcsx_parse_range("bytes=0-12x"), -1);
	ck_assert_int_eq(gcsx_parse_range("bytes=0--1"), -1);
	ck_assert_int_eq(gcsx_parse_range("bytes 0-5"), -1);
	ck_assert_int_eq(gcsx_parse_range(""), -1);
	ck_assert_int_eq(gcsx_parse_range("bytes=0-9223372036854775807"), -1);
	ck_assert_int_eq(gcsx_parse_range("bytes=0-99999999999999999999"), -1);
}
END_TEST

START_TEST(content_range)
{
	int64_t s, e, t;

	ck_assert_int_eq(
	    gcsx_parse_content_range("bytes 10-19/100", &s, &e, &t), 0);
	ck_assert_int_eq(s, 10);
	ck_assert_int_eq(e, 19);
	ck_assert_int_eq(t, 100);
	ck_assert_int_eq(
	    gcsx_parse_content_range("bytes 10-100/100", &s, &e, &t), -1);
	ck_assert_int_eq(
	    gcsx_parse_content_range("bytes 20-19/100", &s, &e, &t), -1);
	ck_assert_int_eq(
	    gcsx_parse_content_range("bytes 10-19/*", &s, &e, &t), -1);
	ck_assert_int_eq(gcsx_parse_content_range(NULL, &s, &e, &t), -1);
	ck_assert_int_eq(
	    gcsx_parse_content_range("bytes 1-2/3 ", &s, &e, &t), -1);
}
END_TEST

static void
check_plan(int64_t size, int64_t min, size_t maxp)
{
	struct gcsx_part parts[GCSX_MAX_PARTS];
	size_t n, i;
	int64_t off = 0;

	n = gcsx_plan_parts(size, min, maxp, parts);
	ck_assert_uint_ge(n, 1);
	ck_assert_uint_le(n, maxp);
	for (i = 0; i < n; i++) {
		ck_assert_int_eq(parts[i].off, off);
		if (i + 1 < n)
			ck_assert_int_eq(parts[i].len % GCSX_QUANTUM, 0);
		if (size > 0)
			ck_assert_int_gt(parts[i].len, 0);
		off += parts[i].len;
	}
	ck_assert_int_eq(off, size < 0 ? 0 : size);
}

START_TEST(slice_streams)
{
	ck_assert_uint_eq(gcsx_slice_streams(1, 8), 1);
	ck_assert_uint_eq(gcsx_slice_streams(8, 2), 2);
	ck_assert_uint_eq(gcsx_slice_streams(8, 1), 2);  /* two on one CPU */
	ck_assert_uint_eq(gcsx_slice_streams(8, -1), 2); /* sysconf failed */
	ck_assert_uint_eq(gcsx_slice_streams(4, 16), 4);
	ck_assert_uint_eq(gcsx_slice_streams(64, 240), GCSX_MAX_PARTS);
}
END_TEST

START_TEST(plan_parts)
{
	struct gcsx_part parts[GCSX_MAX_PARTS];
	size_t n;

	n = gcsx_plan_parts(0, 1 << 20, 8, parts);
	ck_assert_uint_eq(n, 1);
	ck_assert_int_eq(parts[0].len, 0);
	n = gcsx_plan_parts((int64_t)2 << 30, (int64_t)8 << 20, 4, parts);
	ck_assert_uint_eq(n, 4);
	ck_assert_int_eq(parts[0].len, (int64_t)512 << 20);
	n = gcsx_plan_parts(100, 1 << 20, 8, parts); /* tiny: one part */
	ck_assert_uint_eq(n, 1);
	ck_assert_int_eq(parts[0].len, 100);
	n = gcsx_plan_parts((int64_t)300 << 20, (int64_t)64 << 20, 32, parts);
	ck_assert_uint_eq(n, 5); /* the minimum part size wins */
	check_plan(1, 1, 1);
	check_plan(GCSX_QUANTUM - 1, 1, 32);
	check_plan(GCSX_QUANTUM, 1, 32);
	check_plan(GCSX_QUANTUM + 1, 1, 32);
	check_plan((int64_t)1 << 30, 1, 32);
	check_plan(((int64_t)1 << 30) + 12345, (int64_t)8 << 20, 7);
	check_plan((int64_t)100 << 20, (int64_t)64 << 20, 3);
}
END_TEST

START_TEST(combine_parts)
{
	struct gcsx_part parts[GCSX_MAX_PARTS];
	uint32_t crcs[GCSX_MAX_PARTS], whole;
	size_t size = 3 * GCSX_QUANTUM + 777, n, i;
	unsigned char *b = xmalloc(size);

	for (i = 0; i < size; i++)
		b[i] = (unsigned char)(i * 131 + (i >> 9));
	whole = crc32c_update(0, b, size);
	n = gcsx_plan_parts((int64_t)size, 1, 4, parts);
	ck_assert_uint_eq(n, 4);
	for (i = 0; i < n; i++)
		crcs[i] =
		    crc32c_update(0, b + parts[i].off, (size_t)parts[i].len);
	ck_assert_uint_eq(gcsx_combine(crcs, parts, n), whole);
	/* a wrong part crc changes the result (the C12 check can fail) */
	crcs[2] ^= 1;
	ck_assert_uint_ne(gcsx_combine(crcs, parts, n), whole);
	n = gcsx_plan_parts((int64_t)size, 1, 1, parts);
	crcs[0] = whole;
	ck_assert_uint_eq(gcsx_combine(crcs, parts, n), whole);
	free(b);
}
END_TEST

#define BASE "http://127.0.0.1:9023"

static void
tracker_fill(struct gcsx_tracker *t)
{
	t->src = xstrdup("/data/big file.bin");
	t->dst = xstrdup("gs://bkt/dir/big file.bin");
	t->session =
	    xstrdup(BASE "/upload/storage/v1/b/bkt/o?uploadType=resumable&"
	                 "upload_id=0123456789abcdef");
	t->size = 104857601;
	t->mtime_ns = 1700000000123456789LL;
	t->crc32c = 0xdeadbeef;
}

START_TEST(tracker_roundtrip)
{
	struct gcsx_tracker t, u;
	struct tpu_err err;
	struct buf b;

	memset(&t, 0, sizeof t);
	tracker_fill(&t);
	buf_init(&b, BUF_NOCAP);
	ck_assert_int_eq(gcsx_tracker_format(&t, &b), 0);
	tpu_err_init(&err);
	ck_assert_msg(gcsx_tracker_parse(b.data, b.len, BASE, &u, &err) == 0,
	    "%s", err.msg);
	ck_assert_str_eq(u.src, t.src);
	ck_assert_str_eq(u.dst, t.dst);
	ck_assert_str_eq(u.session, t.session);
	ck_assert_int_eq(u.size, t.size);
	ck_assert_int_eq(u.mtime_ns, t.mtime_ns);
	ck_assert_uint_eq(u.crc32c, t.crc32c);
	ck_assert(gcsx_tracker_matches(
	    &u, t.src, t.dst, t.size, t.mtime_ns, t.crc32c));
	/* C10: any change of size, mtime or crc means starting over */
	ck_assert(!gcsx_tracker_matches(
	    &u, t.src, t.dst, t.size + 1, t.mtime_ns, t.crc32c));
	ck_assert(!gcsx_tracker_matches(
	    &u, t.src, t.dst, t.size, t.mtime_ns + 1, t.crc32c));
	ck_assert(!gcsx_tracker_matches(
	    &u, t.src, t.dst, t.size, t.mtime_ns, t.crc32c ^ 4));
	ck_assert(!gcsx_tracker_matches(
	    &u, "/other", t.dst, t.size, t.mtime_ns, t.crc32c));
	ck_assert(!gcsx_tracker_matches(
	    &u, t.src, "gs://bkt/x", t.size, t.mtime_ns, t.crc32c));
	gcsx_tracker_release(&u);
	gcsx_tracker_release(&t);
	buf_release(&b);
}
END_TEST

START_TEST(tracker_reject)
{
	static const char *bad[] = {
		"",
		"[]",
		"{",
		"{\"version\":1}",
		/* wrong version */
		"{\"version\":2,\"src\":\"/a\",\"dst\":\"gs://b/"
		"a\",\"session\":"
		"\"" BASE "/upload/storage/v1/b/b/o?upload_id=1\",\"crc32c\":"
		"\"AAAAAA==\",\"size\":\"1\",\"mtime_ns\":\"1\"}",
		/* another host: the token must never go there */
		"{\"version\":1,\"src\":\"/a\",\"dst\":\"gs://b/"
		"a\",\"session\":"
		"\"http://evil.example/upload/storage/v1/b/b/o\",\"crc32c\":"
		"\"AAAAAA==\",\"size\":\"1\",\"mtime_ns\":\"1\"}",
		/* same prefix, other port */
		"{\"version\":1,\"src\":\"/a\",\"dst\":\"gs://b/"
		"a\",\"session\":"
		"\"http://127.0.0.1:90231/upload/storage/v1/b/b/o\",\"crc32c\":"
		"\"AAAAAA==\",\"size\":\"1\",\"mtime_ns\":\"1\"}",
		/* bad crc */
		"{\"version\":1,\"src\":\"/a\",\"dst\":\"gs://b/"
		"a\",\"session\":"
		"\"" BASE "/upload/storage/v1/b/b/o?upload_id=1\",\"crc32c\":"
		"\"AAAA\",\"size\":\"1\",\"mtime_ns\":\"1\"}",
		/* negative size */
		"{\"version\":1,\"src\":\"/a\",\"dst\":\"gs://b/"
		"a\",\"session\":"
		"\"" BASE "/upload/storage/v1/b/b/o?upload_id=1\",\"crc32c\":"
		"\"AAAAAA==\",\"size\":\"-1\",\"mtime_ns\":\"1\"}",
		/* number instead of string */
		"{\"version\":1,\"src\":\"/a\",\"dst\":\"gs://b/"
		"a\",\"session\":"
		"\"" BASE "/upload/storage/v1/b/b/o?upload_id=1\",\"crc32c\":"
		"\"AAAAAA==\",\"size\":1,\"mtime_ns\":\"1\"}",
		/* a header injection in the URL */
		"{\"version\":1,\"src\":\"/a\",\"dst\":\"gs://b/"
		"a\",\"session\":"
		"\"" BASE
		"/upload/storage/v1/b/b/o?x\\r\\nHost: y\",\"crc32c\":"
		"\"AAAAAA==\",\"size\":\"1\",\"mtime_ns\":\"1\"}",
	};
	static const char *good =
	    "{\"version\":1,\"src\":\"/a\",\"dst\":\"gs://b/a\",\"session\":"
	    "\"" BASE "/upload/storage/v1/b/b/o?upload_id=1\",\"crc32c\":"
	    "\"AAAAAA==\",\"size\":\"1\",\"mtime_ns\":\"1\"}";
	struct gcsx_tracker t;
	struct tpu_err err;
	size_t i;

	for (i = 0; i < nitems(bad); i++) {
		tpu_err_init(&err);
		ck_assert_msg(gcsx_tracker_parse(bad[i], strlen(bad[i]), BASE,
		                  &t, &err) == TPU_E_INVALID,
		    "accepted %s", bad[i]);
	}
	ck_assert_int_eq(
	    gcsx_tracker_parse(good, strlen(good), BASE, &t, &err), 0);
	gcsx_tracker_release(&t);
	/* gcs_base() ends in '/': the same rule */
	ck_assert_int_eq(
	    gcsx_tracker_parse(good, strlen(good), BASE "/", &t, &err), 0);
	gcsx_tracker_release(&t);
}
END_TEST

/* A composite tracker of 3 parts: 2 uploaded, 1 with a session. */
static void
ctracker_fill(struct gcsx_ctracker *t)
{
	size_t i;

	memset(t, 0, sizeof *t);
	t->src = xstrdup("/data/big");
	t->dst = xstrdup("gs://bkt/big");
	t->size = 5 * (int64_t)GCSX_QUANTUM + 17;
	t->mtime_ns = 1700000000123456789LL;
	t->crc32c = 0xdeadbeef;
	snprintf(t->id, sizeof t->id, "0123456789abcdef");
	t->n = gcsx_plan_parts(t->size, 2 * GCSX_QUANTUM, 3, t->parts);
	ck_assert_uint_eq(t->n, 3);
	for (i = 0; i < t->n; i++)
		t->crcs[i] = 0x1000u + (uint32_t)i;
	t->gens[0] = 1700000000000001LL;
	t->gens[2] = 7;
	t->sessions[1] =
	    xstrdup(BASE "/upload/storage/v1/b/bkt/o?upload_id=abc");
}

/* Format t, apply edit to part i's field k (v NULL: delete it) or to the
 * top-level field when i < 0, and parse the result with base. */
static int
ctracker_edit(const struct gcsx_ctracker *t, int i, const char *k, cJSON *v,
    struct gcsx_ctracker *out, struct tpu_err *err)
{
	struct buf b;
	cJSON *o, *at;
	char *s;
	int rc;

	buf_init(&b, BUF_NOCAP);
	ck_assert_int_eq(gcsx_ctracker_format(t, &b), 0);
	o = cJSON_ParseWithLength(b.data, b.len);
	ck_assert_ptr_nonnull(o);
	at = i < 0 ? o
	           : cJSON_GetArrayItem(
	                 cJSON_GetObjectItemCaseSensitive(o, "parts"), i);
	if (k != NULL) {
		cJSON_DeleteItemFromObjectCaseSensitive(at, k);
		if (v != NULL)
			cJSON_AddItemToObject(at, k, v);
	}
	s = cJSON_PrintUnformatted(o);
	tpu_err_init(err);
	rc = gcsx_ctracker_parse(s, strlen(s), BASE, out, err);
	cJSON_free(s);
	cJSON_Delete(o);
	buf_release(&b);
	return rc;
}

START_TEST(ctracker_roundtrip)
{
	struct gcsx_ctracker t, u;
	struct gcsx_tracker v1;
	struct tpu_err err;
	struct buf b;
	size_t i;
	char *pn;

	ctracker_fill(&t);
	ck_assert_msg(
	    ctracker_edit(&t, -1, NULL, NULL, &u, &err) == 0, "%s", err.msg);
	ck_assert_str_eq(u.src, t.src);
	ck_assert_str_eq(u.dst, t.dst);
	ck_assert_str_eq(u.id, t.id);
	ck_assert_int_eq(u.size, t.size);
	ck_assert_int_eq(u.mtime_ns, t.mtime_ns);
	ck_assert_uint_eq(u.crc32c, t.crc32c);
	ck_assert_uint_eq(u.n, t.n);
	for (i = 0; i < t.n; i++) {
		ck_assert_int_eq(u.parts[i].off, t.parts[i].off);
		ck_assert_int_eq(u.parts[i].len, t.parts[i].len);
		ck_assert_uint_eq(u.crcs[i], t.crcs[i]);
		ck_assert_int_eq(u.gens[i], t.gens[i]);
	}
	ck_assert_ptr_null(u.sessions[0]);
	ck_assert_str_eq(u.sessions[1], t.sessions[1]);
	ck_assert_ptr_null(u.sessions[2]);
	gcsx_ctracker_release(&u);
	/* a composite tracker is not a resumable one, and the reverse */
	buf_init(&b, BUF_NOCAP);
	ck_assert_int_eq(gcsx_ctracker_format(&t, &b), 0);
	ck_assert_int_eq(
	    gcsx_tracker_parse(b.data, b.len, BASE, &v1, &err), TPU_E_INVALID);
	buf_release(&b);
	pn = gcsx_part_name("a/b c", t.id, 31);
	ck_assert_str_eq(pn, "a/b c.tpuctl-part-0123456789abcdef-31");
	free(pn);
	gcsx_ctracker_release(&t);
}
END_TEST

START_TEST(ctracker_reject)
{
	struct gcsx_ctracker t, u;
	struct tpu_err err;
	int64_t q = GCSX_QUANTUM;
	char n[32];

	ctracker_fill(&t);
#define REJECT(i, k, v)                                                        \
	ck_assert_msg(ctracker_edit(&t, i, k, v, &u, &err) == TPU_E_INVALID,   \
	    "accepted %s of part %d", k, i)
	REJECT(-1, "version", cJSON_CreateNumber(1));
	REJECT(-1, "id", cJSON_CreateString("0123456789ABCDEF"));
	REJECT(-1, "id", cJSON_CreateString("0123"));
	REJECT(-1, "id", cJSON_CreateString("../../x/456789abcdef"));
	REJECT(-1, "size", cJSON_CreateString("99"));
	REJECT(-1, "parts", cJSON_CreateArray());
	REJECT(-1, "parts", NULL);
	REJECT(-1, "mtime_ns", NULL);
	/* the plan must tile the file: a gap, an overlap, a part not on a
	   256 KiB boundary, a part past the end, an empty part */
	snprintf(n, sizeof n, "%lld", (long long)(t.parts[1].off + 1));
	REJECT(1, "off", cJSON_CreateString(n));
	snprintf(n, sizeof n, "%lld", (long long)(t.parts[1].off - q));
	REJECT(1, "off", cJSON_CreateString(n));
	snprintf(n, sizeof n, "%lld", (long long)(t.parts[0].len + 1));
	REJECT(0, "len", cJSON_CreateString(n));
	snprintf(n, sizeof n, "%lld", (long long)(t.parts[2].len + 1));
	REJECT(2, "len", cJSON_CreateString(n));
	REJECT(2, "len", cJSON_CreateString("0"));
	REJECT(0, "crc32c", cJSON_CreateString("AAAA"));
	REJECT(0, "generation", cJSON_CreateString("0"));
	REJECT(0, "generation", cJSON_CreateNumber(5));
	/* a session elsewhere never gets the token */
	REJECT(1, "session",
	    cJSON_CreateString("http://evil.example/upload/storage/v1/b/x"));
	REJECT(1, "session",
	    cJSON_CreateString(BASE "/upload/storage/v1/b/b/o?x\r\nHost: y"));
#undef REJECT
	gcsx_ctracker_release(&t);
}
END_TEST

START_TEST(tracker_paths)
{
	char *a, *b, *c, *d;

	a = gcsx_tracker_path("/c", "/src/f", "gs://b/f");
	b = gcsx_tracker_path("/c", "/src/f", "gs://b/f");
	c = gcsx_tracker_path("/c", "/src/f", "gs://b/g");
	d = gcsx_tracker_path("/c", "/src/f\ngs://b", "f");
	ck_assert_str_eq(a, b);
	ck_assert_str_ne(a, c);
	ck_assert(strncmp(a, "/c/", 3) == 0);
	ck_assert_uint_eq(strlen(a), 3 + 64 + 5);
	ck_assert_str_ne(a, d);
	free(a);
	free(b);
	free(c);
	free(d);
	setenv("TPUCTL_CACHE_DIR", "/x/cache", 1);
	a = gcsx_tracker_dir();
	ck_assert_str_eq(a, "/x/cache/uploads");
	free(a);
	unsetenv("TPUCTL_CACHE_DIR");
	setenv("XDG_CACHE_HOME", "/xdg", 1);
	a = gcsx_tracker_dir();
	ck_assert_str_eq(a, "/xdg/tpuctl/uploads");
	free(a);
	setenv("XDG_CACHE_HOME", "relative", 1);
	setenv("HOME", "/home/u", 1);
	a = gcsx_tracker_dir();
	ck_assert_str_eq(a, "/home/u/.cache/tpuctl/uploads");
	free(a);
}
END_TEST

START_TEST(file_crc)
{
	char path[] = "/tmp/check_gcsxfer.XXXXXX";
	unsigned char *b;
	size_t n = (3 << 20) + 5, i;
	struct tpu_err err;
	uint32_t crc;
	int64_t size;
	int fd = mkstemp(path);

	ck_assert_int_ge(fd, 0);
	b = xmalloc(n);
	for (i = 0; i < n; i++)
		b[i] = (unsigned char)(i * 7 + 3);
	ck_assert_int_eq(write(fd, b, n), (ssize_t)n);
	close(fd);
	tpu_err_init(&err);
	ck_assert_int_eq(gcsx_file_crc32c(path, &crc, &size, &err), 0);
	ck_assert_int_eq(size, (int64_t)n);
	ck_assert_uint_eq(crc, crc32c_update_sw(0, b, n));
	unlink(path);
	ck_assert_int_eq(gcsx_file_crc32c(path, &crc, &size, &err), TPU_E_IO);
	ck_assert(strstr(err.msg, path) != NULL);
	free(b);
}
END_TEST

/* How cp maps names: the object's parent prefix is stripped. */
START_TEST(dest_paths)
{
	struct tpu_err err;
	char *p;

	p = gcs_local_path("/d", "data/", "data/x/y.bin", &err);
	ck_assert_str_eq(p, "/d/x/y.bin");
	free(p);
	p = gcs_local_path("/d", "", "a?b#c%2F", &err);
	ck_assert_str_eq(p, "/d/a?b#c%2F");
	free(p);
	ck_assert_ptr_null(gcs_local_path("/d", "data/", "data/../x", &err));
	ck_assert_ptr_null(gcs_local_path("/d", "", "/etc/passwd", &err));
	ck_assert_ptr_null(gcs_local_path("/d", "", "a//b", &err));
	ck_assert_ptr_null(gcs_local_path("/d", "", "dir/", &err));
	ck_assert_str_eq(gcsx_guess_type("a/b.TXT"), "text/plain");
	ck_assert_str_eq(gcsx_guess_type("a.d/b"), "application/octet-stream");
	ck_assert_str_eq(gcsx_guess_type("x.json"), "application/json");
}
END_TEST

static Suite *
gcsxfer_suite(void)
{
	Suite *s = suite_create("gcsxfer");
	TCase *tc;

	tc = tcase_create("parse");
	tcase_add_test(tc, range_308);
	tcase_add_test(tc, content_range);
	suite_add_tcase(s, tc);
	tc = tcase_create("parts");
	tcase_add_test(tc, plan_parts);
	tcase_add_test(tc, slice_streams);
	tcase_add_test(tc, combine_parts);
	tcase_add_test(tc, file_crc);
	suite_add_tcase(s, tc);
	tc = tcase_create("tracker");
	tcase_add_test(tc, tracker_roundtrip);
	tcase_add_test(tc, tracker_reject);
	tcase_add_test(tc, tracker_paths);
	tcase_add_test(tc, ctracker_roundtrip);
	tcase_add_test(tc, ctracker_reject);
	tcase_add_test(tc, dest_paths);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	SRunner *sr = srunner_create(gcsxfer_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
