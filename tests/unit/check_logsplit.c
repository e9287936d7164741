/*
 * Tests for src/logsplit.c: tail's one stream of a job's files split
 * back byte for byte whatever the chunking; job output that looks like
 * a header (another nonce, other names, a header cut short) is data;
 * a stream cut inside a header gives out nothing of it; the first bytes
 * a worker sent again are dropped.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <check.h>

#include "buf.h"
#include "jobs.h"
#include "logsplit.h"
#include "xmalloc.h"

struct got {
	struct buf s[LOGSPLIT_NSTREAMS];
};

static void
cb(void *arg, int stream, const char *data, size_t len)
{
	struct got *g = arg;

	ck_assert_int_ge(stream, 0);
	ck_assert_int_lt(stream, LOGSPLIT_NSTREAMS);
	ck_assert_uint_gt(len, 0);
	buf_append(&g->s[stream], data, len);
}

static void
got_init(struct got *g)
{
	int s;

	for (s = 0; s < LOGSPLIT_NSTREAMS; s++)
		buf_init(&g->s[s], BUF_NOCAP);
}

static void
got_release(struct got *g)
{
	int s;

	for (s = 0; s < LOGSPLIT_NSTREAMS; s++)
		buf_release(&g->s[s]);
}

static const uint64_t NONCE = 0x0123456789abcdefULL;

static void
names_of(uint64_t nonce, char *nm[3])
{
	int s;

	for (s = 0; s < 3; s++)
		nm[s] = jobs_follow_name(nonce, s + 1);
}

static void
names_free(char *nm[3])
{
	int s;

	for (s = 0; s < 3; s++)
		free(nm[s]);
}

/* Split text (len) fed in chunks of at most chunk bytes (0: one). */
static void
split(const char *text, size_t len, size_t chunk, uint64_t d1, uint64_t d2,
    int end, struct got *g)
{
	char *nm[3];
	struct logsplit ls;
	size_t off = 0;

	names_of(NONCE, nm);
	got_init(g);
	logsplit_init(&ls, (const char *const *)nm, d1, d2, cb, g);
	while (off < len) {
		size_t n = chunk == 0 ? len - off : chunk;

		if (n > len - off)
			n = len - off;
		logsplit_feed(&ls, text + off, n);
		off += n;
	}
	if (end)
		logsplit_end(&ls);
	logsplit_release(&ls);
	names_free(nm);
}

/* What tail -v prints for these pieces (stream 1..3, text) in order. */
static char *
tail_stream(const int *stream, const char *const *text, size_t n, size_t *len)
{
	char *nm[3];
	struct buf b;
	size_t i;
	int cur = 0;

	names_of(NONCE, nm);
	buf_init(&b, BUF_NOCAP);
	for (i = 0; i < n; i++) {
		if (stream[i] != cur)
			buf_printf(&b, "%s==> %s <==\n", cur == 0 ? "" : "\n",
			    nm[stream[i] - 1]);
		cur = stream[i];
		buf_puts(&b, text[i]);
	}
	names_free(nm);
	return buf_detach(&b, len);
}

START_TEST(test_split_exact)
{
	static const int st[] = { 1, 2, 1, 2, 3 };
	static const char *const tx[] = { "a\nb", "E1\n", "c\n\n", "E2",
		"exit 0\n" };
	size_t len, chunk;
	char *t = tail_stream(st, tx, 5, &len);

	for (chunk = 0; chunk <= len; chunk++) {
		struct got g;

		split(t, len, chunk, 0, 0, 1, &g);
		ck_assert_str_eq(g.s[1].data, "a\nbc\n\n");
		ck_assert_str_eq(g.s[2].data, "E1\nE2");
		ck_assert_str_eq(g.s[3].data, "exit 0\n");
		ck_assert_uint_eq(g.s[0].len, 0);
		got_release(&g);
	}
	free(t);
}
END_TEST

/* A job printing what tail would print for another follow, or with the
 * real names but cut short: data. */
START_TEST(test_split_forged)
{
	char *other = jobs_follow_name(NONCE ^ 1, 2),
	     *real = jobs_follow_name(NONCE, 2);
	char *fake = xasprintf("x\n==> %s <==\nstderr?\n==> ./stderr <==\n"
	                       "\n==> %s <=\n==> %s",
	    other, real, real);
	int st[] = { 1, 2 };
	const char *tx[] = { fake, "real err" };
	size_t len, chunk;
	char *t = tail_stream(st, tx, 2, &len);

	for (chunk = 0; chunk <= 7; chunk++) {
		struct got g;

		split(t, len, chunk, 0, 0, 1, &g);
		ck_assert_str_eq(g.s[1].data, fake);
		ck_assert_str_eq(g.s[2].data, "real err");
		got_release(&g);
	}
	free(t);
	free(fake);
	free(other);
	free(real);
}
END_TEST

/* Cut inside a header: nothing of it given out, and nothing after; at
 * the stream's end the held bytes are data. */
START_TEST(test_split_cut)
{
	static const int st[] = { 1, 2 };
	static const char *const tx[] = { "line\npart", "e\n" };
	size_t len, cut;
	char *t = tail_stream(st, tx, 2, &len);
	char *hdr = strstr(t + 1, "\n==> ");

	ck_assert_ptr_nonnull(hdr);
	for (cut = (size_t)(hdr - t); cut < (size_t)(hdr - t) + 12; cut++) {
		struct got g;

		split(t, cut, 3, 0, 0, 0, &g);
		ck_assert_str_eq(g.s[1].data, "line\npart");
		ck_assert_uint_eq(g.s[2].len, 0);
		got_release(&g);
	}
	/* a job's last bytes that look like a header's start */
	{
		static const int st2[] = { 1 };
		static const char *const tx2[] = { "end\n==> ./" };
		struct got g;
		size_t l2;
		char *t2 = tail_stream(st2, tx2, 1, &l2);

		split(t2, l2, 1, 0, 0, 1, &g);
		ck_assert_str_eq(g.s[1].data, "end\n==> ./");
		got_release(&g);
		free(t2);
	}
	free(t);
}
END_TEST

/* The first bytes sent again are dropped, per stream. */
START_TEST(test_split_drop)
{
	static const int st[] = { 1, 2, 1 };
	static const char *const tx[] = { "0123", "ab", "456789" };
	size_t len, chunk;
	char *t = tail_stream(st, tx, 3, &len);

	for (chunk = 0; chunk < 6; chunk++) {
		struct got g;

		split(t, len, chunk, 6, 1, 1, &g);
		ck_assert_str_eq(g.s[1].data, "6789");
		ck_assert_str_eq(g.s[2].data, "b");
		got_release(&g);
	}
	free(t);
}
END_TEST

/* The shell's status first (the job had ended), then tail's first
 * header with no newline before it: the status's newline ends it. */
START_TEST(test_split_status_first)
{
	char *nm[3], *t;
	struct got g;

	names_of(NONCE, nm);
	t = xasprintf("==> %s <==\nexit 3\n==> %s <==\nout\n\n==> %s <==\n",
	    nm[2], nm[0], nm[1]);
	split(t, strlen(t), 2, 0, 0, 1, &g);
	ck_assert_str_eq(g.s[3].data, "exit 3");
	ck_assert_str_eq(g.s[1].data, "out\n");
	ck_assert_uint_eq(g.s[2].len, 0);
	ck_assert(!jobs_follow_ok(g.s[3].data, g.s[3].len));
	ck_assert(jobs_follow_ok("exit 0", 6));
	ck_assert(jobs_follow_ok("exit 0\n", 7));
	ck_assert(!jobs_follow_ok("exit 00", 7));
	ck_assert(!jobs_follow_ok("xit 0", 5));
	got_release(&g);
	free(t);
	names_free(nm);
}
END_TEST

/* Random pieces with random bytes (newlines, '=', '>', '<' and the
 * names' characters often), random chunking: always the same bytes. */
START_TEST(test_split_random)
{
	static const char alpha[] = "\n=>< ./dstoutera\r\001";
	unsigned seed = 1300;
	int round;

	for (round = 0; round < 300; round++) {
		int st[8];
		char *tx[8];
		struct buf want[LOGSPLIT_NSTREAMS];
		size_t n = 1 + (size_t)(rand_r(&seed) % 8), i, len;
		struct got g;
		char *t;
		int s;

		for (s = 0; s < LOGSPLIT_NSTREAMS; s++)
			buf_init(&want[s], BUF_NOCAP);
		for (i = 0; i < n; i++) {
			size_t k = (size_t)(rand_r(&seed) % 40), j;

			st[i] = 1 + rand_r(&seed) % 2;
			tx[i] = xcalloc(k + 1, 1);
			for (j = 0; j < k; j++)
				tx[i][j] =
				    alpha[rand_r(&seed) % (sizeof alpha - 1)];
			buf_puts(&want[st[i]], tx[i]);
		}
		t = tail_stream(st, (const char *const *)tx, n, &len);
		split(t, len, 1 + (size_t)(rand_r(&seed) % 9), 0, 0, 1, &g);
		for (s = 1; s < 3; s++) {
			ck_assert_uint_eq(g.s[s].len, want[s].len);
			ck_assert(memcmp(g.s[s].data, want[s].data,
			              want[s].len) == 0);
		}
		got_release(&g);
		for (s = 0; s < LOGSPLIT_NSTREAMS; s++)
			buf_release(&want[s]);
		for (i = 0; i < n; i++)
			free(tx[i]);
		free(t);
	}
}
END_TEST

static Suite *
logsplit_suite(void)
{
	Suite *s = suite_create("logsplit");
	TCase *tc = tcase_create("split");

	tcase_add_test(tc, test_split_exact);
	tcase_add_test(tc, test_split_forged);
	tcase_add_test(tc, test_split_cut);
	tcase_add_test(tc, test_split_drop);
	tcase_add_test(tc, test_split_status_first);
	tcase_add_test(tc, test_split_random);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	SRunner *sr = srunner_create(logsplit_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
