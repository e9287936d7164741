/*
 * Unit tests for src/shframe.c: the trailer parser over every split of
 * the stream, refusal of out-of-step streams, and the wrapper run
 * through a real POSIX sh as the long-lived shell of a held session
 * (exit statuses, output without a final newline, a command that reads
 * stdin or changes directory does not reach the shell).
 */
#include <sys/wait.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <check.h>

#include "shframe.h"

#define M "tpuctl-end-0123456789abcdef0123456789abcdef"

static void
collect(void *arg, const char *d, size_t n)
{
	buf_append(arg, d, n);
}

/* Feed s split at every position pair; every split gives want/status. */
static void
feed_splits(
    const char *s, int want_status, int want_rc, const char *want, int want_st)
{
	size_t n = strlen(s), a, b;

	for (a = 0; a <= n; a++)
		for (b = a; b <= n; b++) {
			struct shframe_rd r;
			struct buf out;
			struct tpu_err err;
			int rc;

			tpu_err_init(&err);
			buf_init(&out, BUF_NOCAP);
			shframe_rd_init(&r, M, want_status);
			size_t cut[4] = { 0, a, b, n }, k;

			rc = 0;
			for (k = 0; k < 3 && rc >= 0; k++) {
				/* after the end only bytes count: none is
				 * fine, any is out of step */
				if (rc == 1 && cut[k + 1] == cut[k])
					continue;
				rc = shframe_rd_feed(&r, s + cut[k],
				    cut[k + 1] - cut[k], collect, &out, &err);
			}
			ck_assert_msg(
			    rc == want_rc, "split %zu/%zu: rc %d", a, b, rc);
			if (want_rc == 1) {
				ck_assert_str_eq(out.data, want);
				ck_assert_int_eq(r.status, want_st);
			}
			shframe_rd_release(&r);
			buf_release(&out);
		}
}

START_TEST(parse_splits)
{
	feed_splits("hello\nworld\n\n" M " 0\n", 1, 1, "hello\nworld\n", 0);
	feed_splits("no newline\n" M " 17\n", 1, 1, "no newline", 17);
	feed_splits("\n" M " 255\n", 1, 1, "", 255);
	feed_splits("\n\n\n" M " 3\n", 1, 1, "\n\n", 3);
	/* a line that looks like the start of a marker is output */
	feed_splits("x\ntpuctl-end-01\n" M "\n", 0, 1, "x\ntpuctl-end-01", 0);
	feed_splits("err\n\n" M "\n", 0, 1, "err\n", 0);
}
END_TEST

START_TEST(out_of_step)
{
	/* bytes after the trailer, a status out of range or missing, a
	 * marker followed by something else */
	feed_splits("a\n" M " 0\nmore", 1, TPU_E_API, NULL, 0);
	feed_splits("a\n" M " 256\n", 1, TPU_E_API, NULL, 0);
	feed_splits("a\n" M " 1234\n", 1, TPU_E_API, NULL, 0);
	feed_splits("a\n" M " \n", 1, TPU_E_API, NULL, 0);
	feed_splits("a\n" M " 07\n", 1, TPU_E_API, NULL, 0);
	feed_splits("a\n" M "x\n", 0, TPU_E_API, NULL, 0);
	feed_splits("a\n" M "\n\n", 0, TPU_E_API, NULL, 0);
}
END_TEST

START_TEST(incomplete_holds_back)
{
	struct shframe_rd r;
	struct buf out;
	struct tpu_err err;

	tpu_err_init(&err);
	buf_init(&out, BUF_NOCAP);
	shframe_rd_init(&r, M, 1);
	ck_assert_int_eq(
	    shframe_rd_feed(&r, "abc\ntpuctl", 10, collect, &out, &err), 0);
	ck_assert_str_eq(out.data, "abc");
	ck_assert_int_eq(shframe_rd_feed(&r, "-x", 2, collect, &out, &err), 0);
	ck_assert_str_eq(out.data, "abc\ntpuctl-x");
	ck_assert_int_eq(r.done, 0);
	shframe_rd_release(&r);
	buf_release(&out);
}
END_TEST

START_TEST(wrap_refuses)
{
	struct buf b;
	struct tpu_err err;

	buf_init(&b, BUF_NOCAP);
	tpu_err_init(&err);
	ck_assert_int_eq(
	    shframe_wrap(&b, "tpuctl-end-xyz", "true", &err), TPU_E_INVALID);
	ck_assert_int_eq(
	    shframe_wrap(&b, M "; rm", "true", &err), TPU_E_INVALID);
	ck_assert_uint_eq(b.len, 0);
	buf_release(&b);
}
END_TEST

START_TEST(marker_random)
{
	char a[SHFRAME_MARKER_MAX], b[SHFRAME_MARKER_MAX];
	struct buf w;
	struct tpu_err err;

	tpu_err_init(&err);
	ck_assert_int_eq(shframe_marker(a, &err), 0);
	ck_assert_int_eq(shframe_marker(b, &err), 0);
	ck_assert_str_ne(a, b);
	buf_init(&w, BUF_NOCAP);
	ck_assert_int_eq(shframe_wrap(&w, a, "true", &err), 0);
	buf_release(&w);
}
END_TEST

/*
 * The commands through one sh as the holder would: every command's
 * stdout, stderr and status as sh -c gives them.
 */
START_TEST(through_sh)
{
	static const struct {
		const char *cmd, *out, *err;
		int st;
	} c[] = {
		{ "echo one; echo two >&2", "one\n", "two\n", 0 },
		{ "printf 'no newline'; exit 3", "no newline", "", 3 },
		{ "cd /; read x; echo \"[$x]\"", "[]\n", "", 0 },
		{ "cd /; read x", "", "", 1 }, /* stdin is /dev/null */
		{ "pwd", NULL, "",
		    0 }, /* not /: the cd stayed in its command */
		{ "echo 'quote''s' \"$((1+2))\"", "quotes 3\n", "", 0 },
		{ "exit 255", "", "", 255 },
		{ "set -e; false; echo not", "", "", 1 },
		{ "echo still", "still\n", "", 0 },
	};
	char marker[SHFRAME_MARKER_MAX];
	int in[2], out[2], er[2];
	struct buf script, o, e, all_o, all_e;
	struct tpu_err err;
	pid_t pid;
	size_t i;
	int st;

	tpu_err_init(&err);
	buf_init(&script, BUF_NOCAP);
	ck_assert_int_eq(shframe_marker(marker, &err), 0);
	for (i = 0; i < sizeof c / sizeof c[0]; i++)
		ck_assert_int_eq(
		    shframe_wrap(&script, marker, c[i].cmd, &err), 0);
	ck_assert_int_eq(pipe(in), 0);
	ck_assert_int_eq(pipe(out), 0);
	ck_assert_int_eq(pipe(er), 0);
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		dup2(in[0], 0);
		dup2(out[1], 1);
		dup2(er[1], 2);
		close(in[1]);
		close(out[0]);
		close(er[0]);
		execl("/bin/sh", "sh", (char *)NULL);
		_exit(127);
	}
	close(in[0]);
	close(out[1]);
	close(er[1]);
	ck_assert_int_eq(
	    write(in[1], script.data, script.len), (ssize_t)script.len);
	close(in[1]);
	buf_init(&all_o, BUF_NOCAP);
	buf_init(&all_e, BUF_NOCAP);
	for (;;) {
		char chunk[4096];
		ssize_t n = read(out[0], chunk, sizeof chunk);

		if (n <= 0)
			break;
		buf_append(&all_o, chunk, (size_t)n);
	}
	for (;;) {
		char chunk[4096];
		ssize_t n = read(er[0], chunk, sizeof chunk);

		if (n <= 0)
			break;
		buf_append(&all_e, chunk, (size_t)n);
	}
	waitpid(pid, &st, 0);
	ck_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	/* cut the streams command by command, one byte at a time */
	{
		size_t po = 0, pe = 0;

		for (i = 0; i < sizeof c / sizeof c[0]; i++) {
			struct shframe_rd ro, re;
			int rc = 0;

			buf_init(&o, BUF_NOCAP);
			buf_init(&e, BUF_NOCAP);
			shframe_rd_init(&ro, marker, 1);
			shframe_rd_init(&re, marker, 0);
			while (rc == 0 && po < all_o.len)
				rc = shframe_rd_feed(&ro, all_o.data + po++, 1,
				    collect, &o, &err);
			ck_assert_int_eq(rc, 1);
			rc = 0;
			while (rc == 0 && pe < all_e.len)
				rc = shframe_rd_feed(&re, all_e.data + pe++, 1,
				    collect, &e, &err);
			ck_assert_int_eq(rc, 1);
			if (c[i].out != NULL)
				ck_assert_str_eq(o.data, c[i].out);
			else
				ck_assert_str_ne(o.data, "/\n");
			ck_assert_str_eq(e.data, c[i].err);
			ck_assert_int_eq(ro.status, c[i].st);
			shframe_rd_release(&ro);
			shframe_rd_release(&re);
			buf_release(&o);
			buf_release(&e);
		}
		ck_assert_uint_eq(po, all_o.len);
		ck_assert_uint_eq(pe, all_e.len);
	}
	buf_release(&all_o);
	buf_release(&all_e);
	buf_release(&script);
}
END_TEST

static Suite *
shframe_suite(void)
{
	Suite *s = suite_create("shframe");
	TCase *tc = tcase_create("parse");

	tcase_add_test(tc, parse_splits);
	tcase_add_test(tc, out_of_step);
	tcase_add_test(tc, incomplete_holds_back);
	tcase_add_test(tc, wrap_refuses);
	tcase_add_test(tc, marker_random);
	suite_add_tcase(s, tc);
	tc = tcase_create("sh");
	tcase_add_test(tc, through_sh);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	SRunner *sr = srunner_create(shframe_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
