/*
 * Unit tests for src/holdproto.c: every message round-trips, frames are
 * found across partial reads, and malformed bytes (lengths past the
 * frame, unknown types, NUL in text, trailing bytes, absurd counts) are
 * refused without allocating.
 */
#include <stdlib.h>
#include <string.h>

#include <check.h>

#include "holdproto.h"

static struct holdproto_frame
one_frame(const struct buf *b)
{
	struct holdproto_frame f;
	struct tpu_err err;
	size_t used = 0;

	tpu_err_init(&err);
	ck_assert_int_eq(
	    holdproto_frame_next(b->data, b->len, &f, &used, &err), 1);
	ck_assert_uint_eq(used, b->len);
	return f;
}

START_TEST(hello_roundtrip)
{
	char slice[] = "p/z/n1", id[] = "123", ident[] = "key=/k SHA256:x";
	struct holdproto_hello h = { HOLDPROTO_VERSION, slice, id, ident }, g;
	struct holdproto_frame f;
	struct tpu_err err;
	struct buf b;

	buf_init(&b, BUF_NOCAP);
	holdproto_put_hello(&b, &h);
	f = one_frame(&b);
	ck_assert_int_eq(holdproto_get_hello(&f, &g, &err), 0);
	ck_assert_uint_eq(g.version, HOLDPROTO_VERSION);
	ck_assert_str_eq(g.slice, "p/z/n1");
	ck_assert_str_eq(g.node_id, "123");
	ck_assert_str_eq(g.identity, "key=/k SHA256:x");
	holdproto_hello_release(&g);
	/* an identity of NULL goes as "" */
	h.identity = NULL;
	buf_clear(&b);
	holdproto_put_hello(&b, &h);
	f = one_frame(&b);
	ck_assert_int_eq(holdproto_get_hello(&f, &g, &err), 0);
	ck_assert_str_eq(g.identity, "");
	holdproto_hello_release(&g);
	/* a version-2 HELLO (no identity) is refused, nothing kept */
	{
		static const unsigned char v2[] = { 0, 0, 0, 15, 1, 0, 0, 0, 2,
			0, 0, 0, 1, 'a', 0, 0, 0, 1, 'b' };
		size_t used;

		ck_assert_int_eq(
		    holdproto_frame_next(v2, sizeof v2, &f, &used, &err), 1);
		ck_assert_int_eq(holdproto_get_hello(&f, &g, &err), TPU_E_API);
		ck_assert_ptr_null(g.slice);
	}
	/* another type's decoder refuses it */
	ck_assert_int_eq(
	    holdproto_get_run(&f, &(struct holdproto_run){ 0 }, &err),
	    TPU_E_API);
	buf_release(&b);
}
END_TEST

START_TEST(run_roundtrip)
{
	char k0[] = "ssh-ed25519 AAAA c", k1[] = "ecdsa-sha2-nistp256 BBBB";
	char h0[] = "127.0.0.1", u0[] = "me", c0[] = "echo 'a b'\n";
	char h1[] = "::1", u1[] = "u", c1[] = "true";
	char *keys0[] = { k0, k1 };
	struct holdproto_target t[2] = {
		{ 0, h0, 2222, u0, keys0, 2, c0 },
		{ 7, h1, 22, u1, NULL, 0, c1 },
	};
	struct holdproto_run run = { 3, 5000, 64, t, 2 }, g;
	struct holdproto_frame f;
	struct tpu_err err;
	struct buf b;

	buf_init(&b, BUF_NOCAP);
	holdproto_put_run(&b, &run);
	f = one_frame(&b);
	ck_assert_int_eq(holdproto_get_run(&f, &g, &err), 0);
	ck_assert_uint_eq(g.flags, 3);
	ck_assert_uint_eq(g.timeout_ms, 5000);
	ck_assert_uint_eq(g.fanout, 64);
	ck_assert_uint_eq(g.ntargets, 2);
	ck_assert_uint_eq(g.targets[0].worker, 0);
	ck_assert_str_eq(g.targets[0].host, "127.0.0.1");
	ck_assert_uint_eq(g.targets[0].port, 2222);
	ck_assert_str_eq(g.targets[0].user, "me");
	ck_assert_uint_eq(g.targets[0].nhostkeys, 2);
	ck_assert_str_eq(g.targets[0].hostkeys[1], "ecdsa-sha2-nistp256 BBBB");
	ck_assert_str_eq(g.targets[0].command, "echo 'a b'\n");
	ck_assert_uint_eq(g.targets[1].worker, 7);
	ck_assert_uint_eq(g.targets[1].nhostkeys, 0);
	ck_assert_str_eq(g.targets[1].command, "true");
	holdproto_run_release(&g);
	buf_release(&b);
}
END_TEST

START_TEST(out_done_end_roundtrip)
{
	struct holdproto_done d = { 3, 2, 17, "", 1234, 1, "SHA256:x", "m" }, g;
	struct holdproto_frame f;
	struct holdproto_out o;
	struct tpu_err err;
	struct buf b;
	int32_t rc;
	char *text;

	buf_init(&b, BUF_NOCAP);
	holdproto_put_out(&b, 5, 2, 1, "a\0b\n", 4); /* output may hold NUL */
	f = one_frame(&b);
	ck_assert_int_eq(holdproto_get_out(&f, &o, &err), 0);
	ck_assert_uint_eq(o.idx, 5);
	ck_assert_uint_eq(o.stream, 2);
	ck_assert_uint_eq(o.flags, 1);
	ck_assert_uint_eq(o.len, 4);
	ck_assert_int_eq(memcmp(o.data, "a\0b\n", 4), 0);
	buf_clear(&b);
	holdproto_put_done(&b, &d);
	f = one_frame(&b);
	ck_assert_int_eq(holdproto_get_done(&f, &g, &err), 0);
	ck_assert_uint_eq(g.idx, 3);
	ck_assert_uint_eq(g.status, 2);
	ck_assert_int_eq(g.exit_status, 17);
	ck_assert_str_eq(g.signal, "");
	ck_assert_uint_eq(g.duration_ms, 1234);
	ck_assert_str_eq(g.hostkey_fp, "SHA256:x");
	ck_assert_str_eq(g.msg, "m");
	buf_clear(&b);
	d.exit_status = -1;
	holdproto_put_done(&b, &d);
	f = one_frame(&b);
	ck_assert_int_eq(holdproto_get_done(&f, &g, &err), 0);
	ck_assert_int_eq(g.exit_status, -1);
	buf_clear(&b);
	holdproto_put_end(&b, -14);
	f = one_frame(&b);
	ck_assert_int_eq(holdproto_get_end(&f, &rc, &err), 0);
	ck_assert_int_eq(rc, -14);
	buf_clear(&b);
	holdproto_put_text(&b, HOLDPROTO_INFO, "p/z/n 64 sessions");
	f = one_frame(&b);
	ck_assert_int_eq(
	    holdproto_get_textmsg(&f, HOLDPROTO_INFO, &text, &err), 0);
	ck_assert_str_eq(text, "p/z/n 64 sessions");
	free(text);
	ck_assert_int_eq(
	    holdproto_get_textmsg(&f, HOLDPROTO_ERROR, &text, &err), TPU_E_API);
	ck_assert_ptr_null(text);
	buf_release(&b);
}
END_TEST

START_TEST(partial_frames)
{
	struct holdproto_frame f;
	struct tpu_err err;
	struct buf b;
	size_t i, used, off = 0;
	int n = 0, rc;

	buf_init(&b, BUF_NOCAP);
	holdproto_put_out(&b, 0, 1, 0, "hello\n", 6);
	holdproto_put_end(&b, 0);
	/* every prefix shorter than the first frame asks for more */
	for (i = 0; i < 4 + 1 + 16 + 6; i++)
		ck_assert_int_eq(
		    holdproto_frame_next(b.data, i, &f, &used, &err), 0);
	while ((rc = holdproto_frame_next(
	            b.data + off, b.len - off, &f, &used, &err)) == 1) {
		off += used;
		n++;
	}
	ck_assert_int_eq(rc, 0);
	ck_assert_int_eq(n, 2);
	ck_assert_uint_eq(off, b.len);
	ck_assert_int_eq(f.type, HOLDPROTO_END);
	buf_release(&b);
}
END_TEST

START_TEST(malformed)
{
	static const unsigned char zero_len[] = { 0, 0, 0, 0, 1 };
	static const unsigned char huge[] = { 0xff, 0, 0, 0, 1 };
	static const unsigned char bad_type[] = { 0, 0, 0, 1, 42 };
	/* OUT whose string claims more bytes than the frame has */
	static const unsigned char long_str[] = { 0, 0, 0, 17, 3, 0, 0, 0, 0, 0,
		0, 0, 1, 0, 0, 0, 1, 0, 0, 0, 9 };
	/* OUT with a flag that is not SSHPOOL_OUT_EOL */
	static const unsigned char bad_flag[] = { 0, 0, 0, 17, 3, 0, 0, 0, 0, 0,
		0, 0, 1, 0, 0, 0, 2, 0, 0, 0, 0 };
	/* the same with flag 1: accepted (the two above fail for their own
	 * reason only) */
	static const unsigned char good_out[] = { 0, 0, 0, 17, 3, 0, 0, 0, 0, 0,
		0, 0, 1, 0, 0, 0, 1, 0, 0, 0, 0 };
	/* END with a trailing byte */
	static const unsigned char trailing[] = { 0, 0, 0, 6, 5, 0, 0, 0, 0,
		7 };
	/* RUN claiming 4 billion workers in a few bytes */
	static const unsigned char many[] = { 0, 0, 0, 17, 2, 0, 0, 0, 0, 0, 0,
		0, 0, 0, 0, 0, 0, 0xff, 0xff, 0xff, 0xff };
	/* HELLO whose slice holds a NUL */
	static const unsigned char nul[] = { 0, 0, 0, 15, 1, 0, 0, 0, 1, 0, 0,
		0, 2, 'a', 0, 0, 0, 0, 0 };
	struct holdproto_frame f;
	struct holdproto_hello h;
	struct holdproto_run run;
	struct holdproto_out o;
	struct tpu_err err;
	size_t used;
	int32_t rc;

	tpu_err_init(&err);
	ck_assert_int_eq(
	    holdproto_frame_next(zero_len, sizeof zero_len, &f, &used, &err),
	    TPU_E_API);
	ck_assert_int_eq(
	    holdproto_frame_next(huge, sizeof huge, &f, &used, &err),
	    TPU_E_API);
	ck_assert_int_eq(
	    holdproto_frame_next(bad_type, sizeof bad_type, &f, &used, &err),
	    TPU_E_API);
	ck_assert_ptr_nonnull(strstr(err.msg, "unknown frame type 42"));
	{
		/* PING (no payload) is a frame; the type after it is not */
		static const unsigned char ping[] = { 0, 0, 0, 1, 10 };
		static const unsigned char next[] = { 0, 0, 0, 1, 11 };

		ck_assert_int_eq(
		    holdproto_frame_next(ping, sizeof ping, &f, &used, &err),
		    1);
		ck_assert_int_eq(f.type, HOLDPROTO_PING);
		ck_assert_uint_eq(f.len, 0);
		ck_assert_uint_eq(used, sizeof ping);
		ck_assert_int_eq(
		    holdproto_frame_next(next, sizeof next, &f, &used, &err),
		    TPU_E_API);
	}
	ck_assert_int_eq(
	    holdproto_frame_next(long_str, sizeof long_str, &f, &used, &err),
	    1);
	ck_assert_int_eq(holdproto_get_out(&f, &o, &err), TPU_E_API);
	ck_assert_int_eq(
	    holdproto_frame_next(bad_flag, sizeof bad_flag, &f, &used, &err),
	    1);
	ck_assert_int_eq(holdproto_get_out(&f, &o, &err), TPU_E_API);
	ck_assert_int_eq(
	    holdproto_frame_next(good_out, sizeof good_out, &f, &used, &err),
	    1);
	ck_assert_int_eq(holdproto_get_out(&f, &o, &err), 0);
	ck_assert_uint_eq(o.flags, 1);
	ck_assert_uint_eq(o.len, 0);
	ck_assert_int_eq(
	    holdproto_frame_next(trailing, sizeof trailing, &f, &used, &err),
	    1);
	ck_assert_int_eq(holdproto_get_end(&f, &rc, &err), TPU_E_API);
	ck_assert_int_eq(
	    holdproto_frame_next(many, sizeof many, &f, &used, &err), 1);
	ck_assert_int_eq(holdproto_get_run(&f, &run, &err), TPU_E_API);
	ck_assert_ptr_null(run.targets);
	ck_assert_int_eq(
	    holdproto_frame_next(nul, sizeof nul, &f, &used, &err), 1);
	ck_assert_int_eq(holdproto_get_hello(&f, &h, &err), TPU_E_API);
	ck_assert_ptr_null(h.slice);
}
END_TEST

START_TEST(run_truncated_everywhere)
{
	char k[] = "ssh-ed25519 AAAA", h[] = "h", u[] = "u", c[] = "cmd";
	char *keys[] = { k };
	struct holdproto_target t = { 1, h, 22, u, keys, 1, c };
	struct holdproto_run run = { 0, 0, 1, &t, 1 }, g;
	struct holdproto_frame f;
	struct tpu_err err;
	struct buf b;
	size_t cut;

	buf_init(&b, BUF_NOCAP);
	holdproto_put_run(&b, &run);
	f = one_frame(&b);
	/* a payload cut anywhere is refused, nothing leaks (ASan) */
	for (cut = 0; cut < f.len; cut++) {
		struct holdproto_frame c = f;

		c.len = cut;
		ck_assert_int_eq(holdproto_get_run(&c, &g, &err), TPU_E_API);
		ck_assert_ptr_null(g.targets);
	}
	buf_release(&b);
}
END_TEST

static Suite *
holdproto_suite(void)
{
	Suite *s = suite_create("holdproto");
	TCase *tc = tcase_create("roundtrip");

	tcase_add_test(tc, hello_roundtrip);
	tcase_add_test(tc, run_roundtrip);
	tcase_add_test(tc, out_done_end_roundtrip);
	suite_add_tcase(s, tc);
	tc = tcase_create("framing");
	tcase_add_test(tc, partial_frames);
	tcase_add_test(tc, malformed);
	tcase_add_test(tc, run_truncated_everywhere);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	SRunner *sr = srunner_create(holdproto_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
