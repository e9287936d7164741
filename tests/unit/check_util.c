/*
 * Unit tests for src/util.c: bounded number, duration and RFC 3339 time
 * parsing, base64, tpu_write_all.
 */
#include <sys/wait.h>

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <check.h>

#include "util.h"

START_TEST(strtonum_accepts_range)
{
	const char *e;

	ck_assert_int_eq(tpu_strtonum("0", 0, 10, &e), 0);
	ck_assert_ptr_null(e);
	ck_assert_int_eq(tpu_strtonum("10", 0, 10, &e), 10);
	ck_assert_ptr_null(e);
	ck_assert_int_eq(tpu_strtonum("-5", -5, 10, &e), -5);
	ck_assert_ptr_null(e);
}
END_TEST

START_TEST(strtonum_rejects)
{
	const char *e;

	tpu_strtonum("11", 0, 10, &e);
	ck_assert_str_eq(e, "too large");
	tpu_strtonum("-1", 0, 10, &e);
	ck_assert_str_eq(e, "too small");
	tpu_strtonum("", 0, 10, &e);
	ck_assert_str_eq(e, "invalid");
	tpu_strtonum(" 1", 0, 10, &e);
	ck_assert_str_eq(e, "invalid");
	tpu_strtonum("+1", 0, 10, &e);
	ck_assert_str_eq(e, "invalid");
	tpu_strtonum("1x", 0, 10, &e);
	ck_assert_str_eq(e, "invalid");
	tpu_strtonum("99999999999999999999", 0, 10, &e);
	ck_assert_str_eq(e, "too large");
}
END_TEST

START_TEST(duration_forms)
{
	struct tpu_err err;
	long long s;

	tpu_err_init(&err);
	ck_assert_int_eq(tpu_parse_duration("--timeout", "90", &s, &err), 0);
	ck_assert_int_eq(s, 90);
	ck_assert_int_eq(tpu_parse_duration("--timeout", "5m", &s, &err), 0);
	ck_assert_int_eq(s, 300);
	ck_assert_int_eq(tpu_parse_duration("--timeout", "1h30m", &s, &err), 0);
	ck_assert_int_eq(s, 5400);
	ck_assert_int_eq(tpu_parse_duration("--timeout", "1d", &s, &err), 0);
	ck_assert_int_eq(s, 86400);
}
END_TEST

START_TEST(duration_rejects)
{
	static const char *bad[] = { "", "m", "5x", "1h30", "-5", "5 m",
		"999999999999d", "1.5h" };
	struct tpu_err err;
	long long s;
	size_t i;

	for (i = 0; i < nitems(bad); i++) {
		tpu_err_init(&err);
		ck_assert_int_eq(
		    tpu_parse_duration("--timeout", bad[i], &s, &err),
		    TPU_E_USAGE);
		ck_assert_ptr_nonnull(strstr(err.msg, "--timeout"));
	}
}
END_TEST

START_TEST(job_timeout_range)
{
	static const char *bad[] = { "0", "0s", "8d", "169h", "3x", "" };
	struct tpu_err err;
	long long s;
	size_t i;

	ck_assert_int_eq(tpu_parse_job_timeout("1", &s, &err), 0);
	ck_assert_int_eq(s, 1);
	ck_assert_int_eq(tpu_parse_job_timeout("7d", &s, &err), 0);
	ck_assert_int_eq(s, 7 * 86400);
	ck_assert_int_eq(tpu_parse_job_timeout("2m30s", &s, &err), 0);
	ck_assert_int_eq(s, 150);
	for (i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		tpu_err_init(&err);
		ck_assert_int_eq(
		    tpu_parse_job_timeout(bad[i], &s, &err), TPU_E_USAGE);
		ck_assert_ptr_nonnull(strstr(err.msg, "--timeout"));
		ck_assert_ptr_nonnull(strstr(err.msg, bad[i]));
	}
}
END_TEST

START_TEST(rfc3339_forms)
{
	static const struct {
		const char *s;
		long long t;
	} ok[] = {
		{ "2026-12-01T10:00:00Z", 1796119200 },
		{ "2026-12-01t10:00:00z", 1796119200 },
		{ "1970-01-01T00:00:00Z", 0 },
		{ "2026-12-01T10:00:00.5Z", 1796119200 },
		{ "2026-12-01T10:00:00.123456789123Z", 1796119200 },
		{ "2026-12-01T11:30:00+01:30", 1796119200 },
		{ "2026-12-01T02:00:00-08:00", 1796119200 },
		{ "2026-12-01T10:00:00.25+00:00", 1796119200 },
		{ "2026-12-02T10:00:00+24:00", 1796119200 },
		{ "2024-02-29T12:00:00Z", 1709208000 },
		{ "2000-02-29T00:00:00Z", 951782400 },
		{ "2026-12-31T23:59:59Z", 1798761599 },
		/* Second 60 within a day rolls over to the next minute. */
		{ "2026-12-01T09:59:60Z", 1796119200 },
	};
	time_t t;
	size_t i;

	for (i = 0; i < nitems(ok); i++) {
		t = 42;
		ck_assert_msg(tpu_parse_rfc3339(ok[i].s, &t) == 0,
		    "rejected %s", ok[i].s);
		ck_assert_msg((long long)t == ok[i].t, "%s: got %lld want %lld",
		    ok[i].s, (long long)t, ok[i].t);
	}
}
END_TEST

START_TEST(rfc3339_rejects)
{
	static const char *bad[] = {
		"",
		"2026",
		"2026-12-01",
		"2026-12-01 10:00:00Z", /* missing T */
		"2026-12-01X10:00:00Z",
		"2026-12-01T10:00:00",   /* no zone */
		"2026-12-01T10:00Z",     /* no seconds */
		"2026-00-01T10:00:00Z",  /* month 0 */
		"2026-13-01T10:00:00Z",  /* month 13 */
		"2026-12-00T10:00:00Z",  /* day 0 */
		"2026-12-32T10:00:00Z",  /* day 32 */
		"2026-04-31T10:00:00Z",  /* April has 30 days */
		"2026-02-29T10:00:00Z",  /* not a leap year */
		"2100-02-29T10:00:00Z",  /* century, not a leap year */
		"2026-12-01T24:00:00Z",  /* hour 24 */
		"2026-12-01T10:60:00Z",  /* minute 60 */
		"2026-12-01T10:00:61Z",  /* second 61 */
		"2026-12-31T23:59:60Z",  /* leap second into next day */
		"2026-12-01T10:00:00.Z", /* empty fraction */
		"2026-12-01T10:00:00,5Z",
		"2026-12-01T10:00:00ZZ",
		"2026-12-01T10:00:00Z ",
		" 2026-12-01T10:00:00Z",
		"2026-12-01T10:00:00+0100",
		"2026-12-01T10:00:00+1:00",
		"2026-12-01T10:00:00+01:0",
		"2026-12-01T10:00:00+24:01", /* offset over 24 h */
		"2026-12-01T10:00:00+99:99",
		"+2026-12-01T10:00:00Z",
		"-026-12-01T10:00:00Z",
		"20260-12-01T10:00:00Z", /* 5-digit year */
		"99999999999999999999-12-01T10:00:00Z",
		"2026-012-01T10:00:00Z",
		"2026-12-01T10:00:000Z",
		"2026-1a-01T10:00:00Z",
		"junk",
		"now",
		"1796119200",
	};
	time_t t;
	size_t i;

	for (i = 0; i < nitems(bad); i++) {
		t = 42;
		ck_assert_msg(tpu_parse_rfc3339(bad[i], &t) == -1,
		    "accepted '%s'", bad[i]);
		ck_assert_msg(t == 42, "'%s' changed *t", bad[i]);
	}
}
END_TEST

START_TEST(utf8_sequences)
{
	static const struct {
		const char *s;
		size_t n;
	} rows[] = {
		{ "a", 1 },
		{ "\xc3\xa9", 2 },
		{ "\xe2\x82\xac", 3 },
		{ "\xf0\x9f\x98\x80", 4 },
		{ "\xf4\x8f\xbf\xbf", 4 },
		{ "\xc0\xaf", 0 },         /* overlong '/' */
		{ "\xe0\x80\xaf", 0 },     /* overlong */
		{ "\xf0\x80\x80\xaf", 0 }, /* overlong */
		{ "\xed\xa0\x80", 0 },     /* surrogate */
		{ "\xf4\x90\x80\x80", 0 }, /* past U+10FFFF */
		{ "\xf5\x80\x80\x80", 0 },
		{ "\x80", 0 },
		{ "\xff", 0 },
		{ "\xc3", 0 }, /* NUL inside the sequence */
		{ "\xe2\x82", 0 },
	};
	size_t i;

	for (i = 0; i < nitems(rows); i++)
		ck_assert_msg(
		    tpu_utf8_len((const unsigned char *)rows[i].s) == rows[i].n,
		    "row %zu", i);
}
END_TEST

/* issue 19 defect 12: what reaches a terminal has no control character */
START_TEST(show_escapes_controls)
{
	char out[64], *d;

	ck_assert_str_eq(
	    tpu_show("a\033]0;x\007\r\n\tb\x7f", 12, out, sizeof out, 0),
	    "a\\x1b]0;x\\x07\\r\\n\\tb\\x7f");
	/* already shown text passes unchanged; with the flag, \ is \\ */
	ck_assert_str_eq(tpu_show("a\\x1b", 5, out, sizeof out, 0), "a\\x1b");
	ck_assert_str_eq(
	    tpu_show("a\\b", 3, out, sizeof out, TPU_SHOW_BACKSLASH), "a\\\\b");
	/* bounded, the cut marked */
	tpu_show("0123456789abcdef0123", 20, out, 16, 0);
	ck_assert_uint_lt(strlen(out), 16);
	ck_assert_ptr_nonnull(strstr(out, "..."));
	/* UTF-8 is kept */
	ck_assert_str_eq(
	    tpu_show("\xc3\xa9", 2, out, sizeof out, 0), "\xc3\xa9");
	d = tpu_show_dup("\033\033\033\033\033\033\033\033\033\033", 0);
	ck_assert_str_eq(
	    d, "\\x1b\\x1b\\x1b\\x1b\\x1b\\x1b\\x1b\\x1b\\x1b\\x1b");
	free(d);
}
END_TEST

/* RFC 4648 section 10 vectors, both alphabets, with and without '='. */
START_TEST(b64_vectors)
{
	static const struct {
		const char *in, *std;
	} v[] = { { "", "" }, { "f", "Zg==" }, { "fo", "Zm8=" },
		{ "foo", "Zm9v" }, { "foob", "Zm9vYg==" },
		{ "fooba", "Zm9vYmE=" }, { "foobar", "Zm9vYmFy" } };
	const unsigned char hi[] = { 0xfb, 0xff, 0xfe };
	unsigned char *d;
	char *e, out[16];
	size_t i, n;

	for (i = 0; i < nitems(v); i++) {
		size_t len = strlen(v[i].in);

		e = tpu_b64_encode((const unsigned char *)v[i].in, len, 0);
		ck_assert_str_eq(e, v[i].std);
		ck_assert_uint_eq(strlen(e), tpu_b64_len(len, 0));
		free(e);
		e = tpu_b64_encode(
		    (const unsigned char *)v[i].in, len, TPU_B64_NOPAD);
		ck_assert_uint_eq(strlen(e), tpu_b64_len(len, TPU_B64_NOPAD));
		ck_assert_int_eq(strncmp(e, v[i].std, strlen(e)), 0);
		ck_assert(
		    v[i].std[strlen(e)] == '\0' || v[i].std[strlen(e)] == '=');
		free(e);
		if (len == 0)
			continue;
		d = tpu_b64_decode(v[i].std, strlen(v[i].std), &n, 0);
		ck_assert_ptr_nonnull(d);
		ck_assert_uint_eq(n, len);
		ck_assert_int_eq(memcmp(d, v[i].in, len), 0);
		free(d);
	}
	ck_assert_uint_eq(tpu_b64_encode_to(out, hi, 3, 0), 4);
	ck_assert_str_eq(out, "+//+");
	tpu_b64_encode_to(out, hi, 3, TPU_B64_URL);
	ck_assert_str_eq(out, "-__-");
	d = tpu_b64_decode("-__-", 4, &n, TPU_B64_URL);
	ck_assert_ptr_nonnull(d);
	ck_assert_int_eq(memcmp(d, hi, 3), 0);
	free(d);
	ck_assert_int_eq(tpu_b64_value('+', 0), 62);
	ck_assert_int_eq(tpu_b64_value('-', 0), -1);
	ck_assert_int_eq(tpu_b64_value('_', TPU_B64_URL), 63);
}
END_TEST

START_TEST(b64_rejects)
{
	static const char *const bad[] = { "", "=", "Z",
		"Zg=", "Zh==", "Zm9v\n", "Zm 9", "Zg===", "Z===", "-__-" };
	size_t i, n;

	for (i = 0; i < nitems(bad); i++)
		ck_assert_msg(
		    tpu_b64_decode(bad[i], strlen(bad[i]), &n, 0) == NULL,
		    "%s accepted", bad[i]);
	/* padding is optional */
	free(tpu_b64_decode("Zg", 2, &n, 0));
	ck_assert_uint_eq(n, 1);
}
END_TEST

START_TEST(write_all_pipe)
{
	char big[200000], back[sizeof big];
	int fd[2];
	size_t got = 0;
	ssize_t r;
	pid_t pid;
	int status;

	memset(big, 'x', sizeof big);
	big[sizeof big - 1] = 'y';
	ck_assert_int_eq(pipe(fd), 0);
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		close(fd[0]);
		_exit(tpu_write_all(fd[1], big, sizeof big) == 0 ? 0 : 1);
	}
	close(fd[1]);
	while ((r = read(fd[0], back + got, sizeof back - got)) > 0)
		got += (size_t)r;
	close(fd[0]);
	ck_assert_int_eq(waitpid(pid, &status, 0), pid);
	ck_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	ck_assert_uint_eq(got, sizeof big);
	ck_assert_int_eq(memcmp(big, back, sizeof big), 0);
	ck_assert_int_eq(tpu_write_all(-1, "a", 1), EBADF);
}
END_TEST

START_TEST(human_sizes)
{
	char b[32];

	tpu_human_size(0, b, sizeof b);
	ck_assert_str_eq(b, "0 B");
	tpu_human_size(1023, b, sizeof b);
	ck_assert_str_eq(b, "1023 B");
	tpu_human_size(1024, b, sizeof b);
	ck_assert_str_eq(b, "1.0 KiB");
	tpu_human_size(3.4 * 1024 * 1024, b, sizeof b);
	ck_assert_str_eq(b, "3.4 MiB");
	tpu_human_size(5.0 * 1024 * 1024 * 1024 * 1024 * 1024, b, sizeof b);
	ck_assert_str_eq(b, "5120.0 TiB"); /* the largest unit */
}
END_TEST

static Suite *
util_suite(void)
{
	Suite *s = suite_create("util");
	TCase *tc;

	tc = tcase_create("strtonum");
	tcase_add_test(tc, strtonum_accepts_range);
	tcase_add_test(tc, strtonum_rejects);
	suite_add_tcase(s, tc);
	tc = tcase_create("duration");
	tcase_add_test(tc, duration_forms);
	tcase_add_test(tc, job_timeout_range);
	tcase_add_test(tc, duration_rejects);
	suite_add_tcase(s, tc);
	tc = tcase_create("rfc3339");
	tcase_add_test(tc, rfc3339_forms);
	tcase_add_test(tc, rfc3339_rejects);
	suite_add_tcase(s, tc);
	tc = tcase_create("utf8");
	tcase_add_test(tc, utf8_sequences);
	suite_add_tcase(s, tc);
	tc = tcase_create("show");
	tcase_add_test(tc, show_escapes_controls);
	suite_add_tcase(s, tc);
	tc = tcase_create("base64");
	tcase_add_test(tc, b64_vectors);
	tcase_add_test(tc, b64_rejects);
	suite_add_tcase(s, tc);
	tc = tcase_create("write_all");
	tcase_add_test(tc, write_all_pipe);
	suite_add_tcase(s, tc);
	tc = tcase_create("human");
	tcase_add_test(tc, human_sizes);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	SRunner *sr = srunner_create(util_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
