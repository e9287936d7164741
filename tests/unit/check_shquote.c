/*
 * Tests for src/shquote.c: exact quoting, NUL rejection, argv joining,
 * and the S5 property on a real sshd: random byte strings survive a
 * `printf %s <quoted>` round trip exactly, and injection strings never
 * execute anything.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <check.h>

#include "buf.h"
#include "shquote.h"
#include "sshd_harness.h"
#include "sshpool.h"
#include "xmalloc.h"

START_TEST(test_quote_exact)
{
	static const struct {
		const char *in, *out;
	} cases[] = {
		{ "", "''" },
		{ "abc", "'abc'" },
		{ "a b", "'a b'" },
		{ "it's", "'it'\\''s'" },
		{ "'", "''\\'''" },
		{ "$(id)", "'$(id)'" },
		{ "`id`", "'`id`'" },
		{ "a\nb", "'a\nb'" },
		{ "-n", "'-n'" },
		{ "\\", "'\\'" },
	};
	size_t i;
	char *q;

	for (i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		q = shquote(cases[i].in);
		ck_assert_str_eq(q, cases[i].out);
		free(q);
	}
}
END_TEST

START_TEST(test_nul_rejected)
{
	struct buf b;
	struct tpu_err err;

	buf_init(&b, BUF_NOCAP);
	buf_puts(&b, "x ");
	ck_assert_int_eq(shquote_append(&b, "ab\0c", 4, &err), TPU_E_INVALID);
	ck_assert_ptr_nonnull(strstr(err.msg, "NUL byte at offset 2"));
	ck_assert_str_eq(b.data, "x "); /* unchanged */
	ck_assert_int_eq(shquote_append(&b, "ab", 2, &err), 0);
	ck_assert_str_eq(b.data, "x 'ab'");
	buf_release(&b);
}
END_TEST

START_TEST(test_cap)
{
	struct buf b;
	struct tpu_err err;

	buf_init(&b, 8);
	ck_assert_int_eq(
	    shquote_append(&b, "abcdefgh", 8, &err), TPU_E_INVALID);
	ck_assert_uint_eq(b.len, 0);
	buf_release(&b);
}
END_TEST

START_TEST(test_argv)
{
	char *argv[] = { (char *)"echo", (char *)"a b", (char *)"",
		(char *)"'" };
	char *out;
	struct tpu_err err;

	ck_assert_int_eq(shquote_argv(4, argv, &out, &err), 0);
	ck_assert_str_eq(out, "'echo' 'a b' '' ''\\'''");
	free(out);
	ck_assert_int_eq(shquote_argv(0, argv, &out, &err), TPU_E_USAGE);
	ck_assert_ptr_null(out);
}
END_TEST

/* ---- property tests on a real sshd ---- */

static char base[64];
static char *userkey;
static struct sshd_srv srv;
static struct buf got;

static void
on_output(
    void *arg, size_t idx, int stream, const char *d, size_t len, int flags)
{
	(void)arg;
	(void)idx;
	(void)flags;
	if (stream == 1)
		ck_assert_int_eq(buf_append(&got, d, len), 0);
}

static void
sshd_setup(void)
{
	char *ak, *pub, *line;

	snprintf(base, sizeof base, "/tmp/check_shquote.XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(base));
	userkey = xasprintf("%s/id", base);
	ak = xasprintf("%s/authorized_keys", base);
	ck_assert_int_eq(harness_keygen(userkey, "ed25519", ""), 0);
	pub = harness_publine(userkey);
	line = xasprintf("%s\n", pub);
	ck_assert_int_eq(harness_write(ak, line, 0600), 0);
	ck_assert_int_eq(harness_sshd_start(&srv, base, 0, ak), 0);
	free(ak);
	free(pub);
	free(line);
}

static void
sshd_teardown(void)
{
	harness_sshd_stop(&srv);
	harness_rmrf(base);
	free(userkey);
}

/* Run cmd on the server; stdout goes to got. */
static void
run(const char *cmd)
{
	struct sshpool_target t;
	struct sshpool_opts o;
	struct sshpool_result r;
	struct tpu_err err;
	const char *hk[1] = { srv.hostpub };

	memset(&t, 0, sizeof t);
	t.host = srv.addr;
	t.port = srv.port;
	t.user = harness_user();
	t.hostkeys = hk;
	t.nhostkeys = 1;
	memset(&o, 0, sizeof o);
	o.command = cmd;
	o.keyfile = userkey;
	o.on_output = on_output;
	buf_clear(&got);
	ck_assert_msg(
	    sshpool_run(&t, 1, &o, &r, &err) == 0, "%s: %s", err.msg, r.msg);
	sshpool_result_release(&r);
}

START_TEST(test_roundtrip_random)
{
	enum { N = 150 };
	char *s[N];
	size_t len[N], i, j, off;
	struct buf cmd;
	struct tpu_err err;
	unsigned seed = (unsigned)getpid() ^ (unsigned)time(NULL);

	srandom(seed);
	buf_init(&got, 1 << 20);
	buf_init(&cmd, BUF_NOCAP);
	/* one remote command prints every string, NUL-separated */
	for (i = 0; i < N; i++) {
		len[i] = (size_t)(random() % 48);
		s[i] = xmalloc(len[i] + 1);
		for (j = 0; j < len[i]; j++) {
			/* favour the dangerous characters */
			static const char special[] = "'\"\\$`!*?[]{}();&|<>~#"
			                              "\n\t -=%";
			long r = random();

			s[i][j] = (r & 1)
			              ? special[(r >> 1) % (sizeof special - 1)]
			              : (char)(1 + (r >> 1) % 255);
		}
		s[i][len[i]] = '\0';
		buf_puts(&cmd, "printf %s ");
		ck_assert_int_eq(shquote_append(&cmd, s[i], len[i], &err), 0);
		buf_puts(&cmd, "; printf '\\000'; ");
	}
	run(cmd.data);
	off = 0;
	for (i = 0; i < N; i++) {
		ck_assert_msg(
		    off + len[i] < got.len + 1, "seed %u: short", seed);
		ck_assert_msg(memcmp(got.data + off, s[i], len[i]) == 0 &&
		                  got.data[off + len[i]] == '\0',
		    "seed %u: string %zu differs", seed, i);
		off += len[i] + 1;
		free(s[i]);
	}
	ck_assert_uint_eq(off, got.len);
	buf_release(&cmd);
	buf_release(&got);
}
END_TEST

START_TEST(test_injection)
{
	const char *evil[] = {
		"'; touch PWN; '",
		"$(touch PWN)",
		"`touch PWN`",
		"\ntouch PWN\n",
		"x; touch PWN",
		"x && touch PWN",
		"x | touch PWN",
		"--",
		"-n",
		"'\\''; touch PWN; '\\''",
		"\"; touch PWN; \"",
		"${IFS}touch${IFS}PWN",
	};
	char *pwn = xasprintf("%s/PWN", srv.home);
	size_t i;

	buf_init(&got, 1 << 16);
	for (i = 0; i < sizeof evil / sizeof evil[0]; i++) {
		char *argv[3], *cmd = NULL, *line;
		struct tpu_err err;

		argv[0] = (char *)"printf";
		argv[1] = (char *)"%s";
		/* the marker path is absolute, in the session's HOME */
		line = xstrdup(evil[i]);
		argv[2] = line;
		ck_assert_int_eq(shquote_argv(3, argv, &cmd, &err), 0);
		{
			/* run in HOME so "touch PWN" would land there */
			char *full = xasprintf("cd \"$HOME\" && %s", cmd);

			run(full);
			free(full);
		}
		ck_assert_uint_eq(got.len, strlen(evil[i]));
		ck_assert_int_eq(memcmp(got.data, evil[i], got.len), 0);
		ck_assert_msg(access(pwn, F_OK) != 0, "injection: %s", evil[i]);
		free(cmd);
		free(line);
	}
	buf_release(&got);
	free(pwn);
}
END_TEST

static Suite *
shquote_suite(void)
{
	Suite *s = suite_create("shquote");
	TCase *tc = tcase_create("quote");
	TCase *ts = tcase_create("sshd");

	tcase_add_test(tc, test_quote_exact);
	tcase_add_test(tc, test_nul_rejected);
	tcase_add_test(tc, test_cap);
	tcase_add_test(tc, test_argv);
	suite_add_tcase(s, tc);
	tcase_add_unchecked_fixture(ts, sshd_setup, sshd_teardown);
	tcase_set_timeout(ts, 30);
	tcase_add_test(ts, test_roundtrip_random);
	tcase_add_test(ts, test_injection);
	suite_add_tcase(s, ts);
	return s;
}

int
main(void)
{
	SRunner *sr = srunner_create(shquote_suite());
	int nf;

	srunner_run_all(sr, CK_NORMAL);
	nf = srunner_ntests_failed(sr);
	srunner_free(sr);
	return nf == 0 ? 0 : 1;
}
