/*
 * Tests for src/sshpool.c against real sshd servers on loopback (see
 * sshd_harness.h): the rows of RELIABILITY.md matrix 4D that need only
 * sshd (D1, D2, D5-D13), refused connections, unknown host keys, an
 * encrypted key, and option validation.
 */
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/socket.h>

#include <sys/ioctl.h>

#include <arpa/inet.h>
#include <netinet/in.h>

#include <fcntl.h>
#include <pty.h>
#include <termios.h>

#include <dirent.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <check.h>
#include <openssl/evp.h>

#include "buf.h"
#include "sshd_harness.h"
#include "sshpool.h"
#include "util.h"
#include "xmalloc.h"

#define NSRV 8

static char base[64];
static char *userkey, *authkeys;
static struct sshd_srv srv[NSRV];
static struct sshpool_target tg[NSRV];
static const char *hk[NSRV][1];

/* what the callbacks saw, per target */
struct seen {
	struct buf out[NSRV][2];
	int eol[NSRV][2];
	int noeol[NSRV][2];
	int done[NSRV];
	size_t bytes[NSRV];
	EVP_MD_CTX *md;
	int kill_on_output;
	int stop_on_output; /* SIGSTOP instead: the pid in stopped */
	long stopped;
	int alarm_on_done;
	volatile sig_atomic_t *abort_after_first;
};

static struct seen seen;

static void
seen_init(void)
{
	int i, j;

	memset(&seen, 0, sizeof seen);
	for (i = 0; i < NSRV; i++)
		for (j = 0; j < 2; j++)
			buf_init(&seen.out[i][j], 1 << 20);
}

/* Before a second seen_init in one test. */
static void
seen_release(void)
{
	int i, j;

	for (i = 0; i < NSRV; i++)
		for (j = 0; j < 2; j++)
			buf_release(&seen.out[i][j]);
}

static void
on_output(
    void *arg, size_t idx, int stream, const char *d, size_t len, int flags)
{
	struct seen *s = arg;
	char pfx[16];

	ck_assert_uint_lt(idx, NSRV);
	ck_assert(stream == 1 || stream == 2);
	seen.bytes[idx] += len;
	if (s->md != NULL) {
		EVP_DigestUpdate(s->md, d, len);
		if (flags & SSHPOOL_OUT_EOL)
			EVP_DigestUpdate(s->md, "\n", 1);
		if (flags & SSHPOOL_OUT_EOL)
			seen.bytes[idx]++;
		return;
	}
	/* what `tpuctl ssh` will print: "[w3] line" */
	snprintf(pfx, sizeof pfx, "[w%d] ", tg[idx].worker);
	buf_puts(&s->out[idx][stream - 1], pfx);
	buf_append(&s->out[idx][stream - 1], d, len);
	buf_puts(&s->out[idx][stream - 1], "\n");
	if (flags & SSHPOOL_OUT_EOL)
		s->eol[idx][stream - 1]++;
	else
		s->noeol[idx][stream - 1]++;
	if (s->kill_on_output && stream == 1) {
		/* D8: the line is the pid of the sshd session process */
		long pid = strtol(d, NULL, 10);

		if (pid > 1)
			kill((pid_t)pid, SIGKILL);
	}
	if (s->stop_on_output && stream == 1 && s->stopped == 0) {
		/* the line is the pid of the sshd session process */
		long pid = strtol(d, NULL, 10);

		if (pid > 1 && kill((pid_t)pid, SIGSTOP) == 0)
			s->stopped = pid;
	}
}

static void
on_done(void *arg, size_t idx, const struct sshpool_result *r)
{
	struct seen *s = arg;

	(void)r;
	ck_assert_uint_lt(idx, NSRV);
	s->done[idx]++;
	/* D13: interrupt 1 s after worker 0 finished, mid-run */
	if (s->alarm_on_done && idx == 0)
		alarm(1);
}

/* Open file descriptors of this process: no fd may leak from a run. */
static int
count_fds(void)
{
	DIR *d = opendir("/proc/self/fd");
	int n = 0;

	while (d != NULL && readdir(d) != NULL)
		n++;
	if (d != NULL)
		closedir(d);
	return n;
}

static void
opts_init(struct sshpool_opts *o, const char *cmd)
{
	memset(o, 0, sizeof *o);
	o->command = cmd;
	o->keyfile = userkey;
	o->flags = SSHPOOL_F_LINES;
	o->on_output = on_output;
	o->on_done = on_done;
	o->arg = &seen;
	o->connect_timeout_ms = 5000;
}

static void
targets_init(void)
{
	int i;

	for (i = 0; i < NSRV; i++) {
		hk[i][0] = srv[i].hostpub;
		tg[i].worker = i;
		tg[i].host = srv[i].addr;
		tg[i].port = srv[i].port;
		tg[i].user = harness_user();
		tg[i].hostkeys = hk[i];
		tg[i].nhostkeys = 1;
	}
}

static void
fleet_setup(void)
{
	char *pub;
	int i;

	signal(SIGPIPE, SIG_DFL); /* a SIGPIPE must kill the test */
	snprintf(base, sizeof base, "/tmp/check_sshpool.XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(base));
	userkey = xasprintf("%s/id_ed25519", base);
	authkeys = xasprintf("%s/authorized_keys", base);
	ck_assert_int_eq(harness_keygen(userkey, "ed25519", ""), 0);
	pub = harness_publine(userkey);
	ck_assert_ptr_nonnull(pub);
	{
		char *line = xasprintf("%s\n", pub);

		ck_assert_int_eq(harness_write(authkeys, line, 0600), 0);
		free(line);
	}
	free(pub);
	for (i = 0; i < NSRV; i++)
		ck_assert_int_eq(
		    harness_sshd_start(&srv[i], base, i, authkeys), 0);
	targets_init();
}

static void
fleet_teardown(void)
{
	int i;

	for (i = 0; i < NSRV; i++)
		harness_sshd_stop(&srv[i]);
	harness_rmrf(base);
	free(userkey);
	free(authkeys);
}

static void
results_release(struct sshpool_result *r, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		sshpool_result_release(&r[i]);
}

/* D1: 8 workers, stdout and stderr lines, a partial last line, exit 0. */
START_TEST(test_d1_fanout_ok)
{
	struct sshpool_opts o;
	struct sshpool_result r[NSRV];
	struct tpu_err err;
	char want[64];
	int i;

	seen_init();
	int fds = count_fds();

	opts_init(&o, "echo out $TPU_WORKER_ID; echo err >&2; printf tail");
	ck_assert_int_eq(sshpool_run(tg, NSRV, &o, r, &err), 0);
	ck_assert_int_eq(count_fds(), fds);
	for (i = 0; i < NSRV; i++) {
		ck_assert_int_eq(r[i].status, SSHPOOL_S_OK);
		ck_assert_int_eq(r[i].exit_status, 0);
		ck_assert_int_eq(r[i].auth_attempts, 1);
		ck_assert(tpu_startswith(r[i].hostkey_fp, "SHA256:"));
		ck_assert_str_eq(r[i].hostkey, srv[i].hostpub);
		snprintf(
		    want, sizeof want, "[w%d] out %d\n[w%d] tail\n", i, i, i);
		ck_assert_str_eq(seen.out[i][0].data, want);
		snprintf(want, sizeof want, "[w%d] err\n", i);
		ck_assert_str_eq(seen.out[i][1].data, want);
		ck_assert_int_eq(seen.eol[i][0], 1);
		ck_assert_int_eq(seen.noeol[i][0], 1); /* "tail" flushed */
		ck_assert_int_eq(seen.done[i], 1);
		ck_assert_int_ge(r[i].duration_ms, 0);
	}
	results_release(r, NSRV);
}
END_TEST

/* D2: a wrong pinned key: refused before any userauth. */
START_TEST(test_d2_hostkey_mismatch)
{
	struct sshpool_opts o;
	struct sshpool_result r[NSRV];
	struct sshpool_target t[NSRV];
	const char *wrong[1];
	struct tpu_err err;
	char *marker, *cmd, *log;
	size_t off, i;

	seen_init();
	memcpy(t, tg, sizeof t);
	wrong[0] = srv[1].hostpub; /* worker 2 expects worker 1's key */
	t[2].hostkeys = wrong;
	marker = xasprintf("%s/marker-d2-$TPU_WORKER_ID", base);
	cmd = xasprintf("touch %s", marker);
	off = harness_fsize(srv[2].log);
	opts_init(&o, cmd);
	ck_assert_int_eq(sshpool_run(t, NSRV, &o, r, &err), TPU_E_PARTIAL);
	ck_assert_int_eq(r[2].status, SSHPOOL_S_HOSTKEY_MISMATCH);
	ck_assert_ptr_nonnull(strstr(r[2].msg, "expected ssh-ed25519 SHA256:"));
	ck_assert_ptr_nonnull(strstr(r[2].msg, "got ssh-ed25519 SHA256:"));
	ck_assert_ptr_nonnull(strstr(r[2].msg, r[2].hostkey_fp));
	ck_assert_int_eq(r[2].auth_attempts, 0);
	for (i = 0; i < NSRV; i++) {
		char *m = xasprintf("%s/marker-d2-%zu", base, i);

		ck_assert_int_eq(access(m, F_OK) == 0, i != 2);
		if (i != 2)
			ck_assert_int_eq(r[i].status, SSHPOOL_S_OK);
		free(m);
	}
	/* the sshd log shows a connection but no authentication attempt */
	usleep(200000);
	log = harness_slurp(srv[2].log, NULL);
	ck_assert_ptr_nonnull(log);
	ck_assert_uint_gt(strlen(log), off);
	ck_assert_ptr_null(strstr(log + off, "Accepted"));
	ck_assert_ptr_null(strstr(log + off, "publickey"));
	ck_assert_ptr_nonnull(strstr(log + off, "Connection from"));
	free(log);
	free(marker);
	free(cmd);
	results_release(r, NSRV);
}
END_TEST

/* A listening socket whose accept queue is full: SYNs are dropped. */
static int
blackhole(const char *addr, int *port, int *fill, int nfill)
{
	struct sockaddr_in sin;
	socklen_t sl = sizeof sin;
	int fd, i;

	fd = socket(AF_INET, SOCK_STREAM, 0);
	memset(&sin, 0, sizeof sin);
	sin.sin_family = AF_INET;
	inet_pton(AF_INET, addr, &sin.sin_addr);
	ck_assert_int_eq(bind(fd, (struct sockaddr *)&sin, sizeof sin), 0);
	ck_assert_int_eq(listen(fd, 0), 0);
	getsockname(fd, (struct sockaddr *)&sin, &sl);
	*port = ntohs(sin.sin_port);
	for (i = 0; i < nfill; i++) {
		fill[i] = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);
		connect(fill[i], (struct sockaddr *)&sin, sizeof sin);
	}
	usleep(100000);
	return fd;
}

/* D5: one black-holed worker times out; the 7 others finish. */
START_TEST(test_d5_blackhole)
{
	struct sshpool_opts o;
	struct sshpool_result r[NSRV];
	struct sshpool_target t[NSRV];
	struct tpu_err err;
	int fill[4], port, lfd, i;
	int64_t t0;

	seen_init();
	memcpy(t, tg, sizeof t);
	lfd = blackhole("127.0.0.1", &port, fill, 4);
	t[5].host = "127.0.0.1";
	t[5].port = port;
	opts_init(&o, "echo hi");
	o.connect_timeout_ms = 1000;
	t0 = tpu_now_ms();
	ck_assert_int_eq(sshpool_run(t, NSRV, &o, r, &err), TPU_E_PARTIAL);
	ck_assert_int_lt(tpu_now_ms() - t0, 8000);
	ck_assert_int_eq(r[5].status, SSHPOOL_S_CONNECT_TIMEOUT);
	ck_assert_ptr_nonnull(strstr(r[5].msg, "timeout"));
	ck_assert_int_ge(r[5].duration_ms, 900);
	for (i = 0; i < NSRV; i++)
		if (i != 5)
			ck_assert_int_eq(r[i].status, SSHPOOL_S_OK);
	ck_assert_str_eq(err.msg, "1 of 8 workers failed");
	for (i = 0; i < 4; i++)
		close(fill[i]);
	close(lfd);
	results_release(r, NSRV);
}
END_TEST

/* D6: worker 3 exits 3, the others 0. */
START_TEST(test_d6_one_nonzero)
{
	struct sshpool_opts o;
	struct sshpool_result r[NSRV];
	struct tpu_err err;
	int i;

	seen_init();
	opts_init(&o, "[ \"$TPU_WORKER_ID\" = 3 ] && exit 3; exit 0");
	ck_assert_int_eq(sshpool_run(tg, NSRV, &o, r, &err), TPU_E_PARTIAL);
	for (i = 0; i < NSRV; i++) {
		ck_assert_int_eq(r[i].status,
		    i == 3 ? SSHPOOL_S_REMOTE_NONZERO : SSHPOOL_S_OK);
		ck_assert_int_eq(r[i].exit_status, i == 3 ? 3 : 0);
	}
	ck_assert_str_eq(r[3].msg, "worker 3: exit status 3");
	results_release(r, NSRV);
}
END_TEST

/* D7: the remote shell killed by SIGKILL is never reported as 0. */
START_TEST(test_d7_signal)
{
	struct sshpool_opts o;
	struct sshpool_result r[1];
	struct tpu_err err;

	seen_init();
	opts_init(&o, "kill -9 $$");
	ck_assert_int_eq(sshpool_run(tg, 1, &o, r, &err), TPU_E_PARTIAL);
	ck_assert_int_eq(r[0].status, SSHPOOL_S_SIGNALED);
	ck_assert_str_eq(r[0].signal, "KILL");
	ck_assert_int_eq(r[0].exit_status, -1);
	ck_assert_ptr_nonnull(strstr(r[0].msg, "killed by SIGKILL"));
	results_release(r, 1);
}
END_TEST

/* D8: the sshd session process killed mid-command: error, no hang. */
START_TEST(test_d8_sshd_killed)
{
	struct sshpool_opts o;
	struct sshpool_result r[2];
	struct tpu_err err;
	int64_t t0;

	seen_init();
	seen.kill_on_output = 1;
	/* worker 0 prints its sshd's pid then sleeps; worker 1 is quiet */
	opts_init(&o, "[ \"$TPU_WORKER_ID\" = 0 ] && echo $PPID; sleep 2");
	t0 = tpu_now_ms();
	ck_assert_int_eq(sshpool_run(tg, 2, &o, r, &err), TPU_E_PARTIAL);
	ck_assert_int_lt(tpu_now_ms() - t0, 8000);
	ck_assert_int_eq(r[0].status, SSHPOOL_S_PROTOCOL);
	ck_assert_ptr_nonnull(strstr(r[0].msg, "connection lost"));
	ck_assert_int_eq(r[1].status, SSHPOOL_S_OK);
	results_release(r, 2);
}
END_TEST

/*
 * Keepalive: worker 0's sshd session process frozen (SIGSTOP: no FIN, no
 * RST, the kernel still acks) is lost after interval * (count + 1);
 * worker 1, quiet for longer than that but alive, answers the
 * keepalives and ends well.
 */
START_TEST(test_keepalive_lost)
{
	struct sshpool_opts o;
	struct sshpool_result r[2];
	struct tpu_err err;
	int64_t t0, dt;

	seen_init();
	seen.stop_on_output = 1;
	opts_init(&o,
	    "[ \"$TPU_WORKER_ID\" = 0 ] && { echo $PPID; sleep 30; }; "
	    "sleep 6");
	o.alive_interval_ms = 2000;
	o.alive_count_max = 1;
	t0 = tpu_now_ms();
	ck_assert_int_eq(sshpool_run(tg, 2, &o, r, &err), TPU_E_PARTIAL);
	dt = tpu_now_ms() - t0;
	if (seen.stopped > 0) {
		kill((pid_t)seen.stopped, SIGKILL);
		kill((pid_t)seen.stopped, SIGCONT);
	}
	ck_assert_int_gt(seen.stopped, 1);
	ck_assert_int_eq(r[0].status, SSHPOOL_S_PROTOCOL);
	ck_assert_ptr_nonnull(
	    strstr(r[0].msg, "no answer to 1 keepalives in 4 s"));
	ck_assert_int_ge(r[0].duration_ms, 3500);
	ck_assert_int_lt(r[0].duration_ms, 6000);
	ck_assert_int_eq(r[1].status, SSHPOOL_S_OK);
	ck_assert_int_lt(dt, 12000);
	results_release(r, 2);
}
END_TEST

/* D9: command timeout. */
START_TEST(test_d9_command_timeout)
{
	struct sshpool_opts o;
	struct sshpool_result r[2];
	struct tpu_err err;
	int64_t t0;

	seen_init();
	opts_init(&o, "sleep 60");
	o.command_timeout_ms = 1000;
	t0 = tpu_now_ms();
	ck_assert_int_eq(sshpool_run(tg, 2, &o, r, &err), TPU_E_PARTIAL);
	ck_assert_int_lt(tpu_now_ms() - t0, 8000);
	ck_assert_int_eq(r[0].status, SSHPOOL_S_TIMEOUT);
	ck_assert_int_eq(r[1].status, SSHPOOL_S_TIMEOUT);
	ck_assert_ptr_nonnull(strstr(r[0].msg, "timed out after 1000 ms"));
	ck_assert_str_eq(err.msg, "2 of 2 workers failed");
	results_release(r, 2);
}
END_TEST

/* D11: 50 MB of binary output without a trailing newline, raw mode:
 * every byte arrives, and the RSS does not grow with the output. */
START_TEST(test_d11_big_output_raw)
{
	struct sshpool_opts o;
	struct sshpool_result r[1];
	struct tpu_err err;
	struct rusage ru0, ru1;
	unsigned char md[32], want[32];
	unsigned int mdlen;
	char *cmd, *path, *data;
	size_t len;

	seen_init();
	path = xasprintf("%s/big", srv[0].home);
	cmd = xasprintf(
	    "head -c 50000000 /dev/urandom > %s && cat %s", path, path);
	seen.md = EVP_MD_CTX_new();
	EVP_DigestInit_ex(seen.md, EVP_sha256(), NULL);
	opts_init(&o, cmd);
	o.flags = 0;
	getrusage(RUSAGE_SELF, &ru0);
	ck_assert_int_eq(sshpool_run(tg, 1, &o, r, &err), 0);
	getrusage(RUSAGE_SELF, &ru1);
	ck_assert_uint_eq(seen.bytes[0], 50000000);
	/* ru_maxrss is in KiB; 50 MB accumulated would show (not under
	 * ASan, whose quarantine keeps freed memory) */
#ifndef __SANITIZE_ADDRESS__
	ck_assert_int_lt(ru1.ru_maxrss - ru0.ru_maxrss, 16 * 1024);
#else
	(void)ru0;
	(void)ru1;
#endif
	EVP_DigestFinal_ex(seen.md, md, &mdlen);
	EVP_MD_CTX_free(seen.md);
	data = harness_slurp(path, &len);
	ck_assert_uint_eq(len, 50000000);
	EVP_Digest(data, len, want, &mdlen, EVP_sha256(), NULL);
	ck_assert_int_eq(memcmp(md, want, 32), 0);
	free(data);
	unlink(path);
	free(path);
	free(cmd);
	results_release(r, 1);
}
END_TEST

/* D11 in line mode: binary data split into lines rebuilds exactly. */
START_TEST(test_d11_big_output_lines)
{
	struct sshpool_opts o;
	struct sshpool_result r[1];
	struct tpu_err err;
	unsigned char md[32], want[32];
	unsigned int mdlen;
	char *cmd, *path, *data;
	size_t len;

	seen_init();
	path = xasprintf("%s/big2", srv[1].home);
	cmd = xasprintf(
	    "head -c 8000000 /dev/urandom > %s && cat %s", path, path);
	seen.md = EVP_MD_CTX_new();
	EVP_DigestInit_ex(seen.md, EVP_sha256(), NULL);
	opts_init(&o, cmd);
	o.line_max = 100; /* long lines come in pieces */
	ck_assert_int_eq(sshpool_run(&tg[1], 1, &o, r, &err), 0);
	EVP_DigestFinal_ex(seen.md, md, &mdlen);
	EVP_MD_CTX_free(seen.md);
	data = harness_slurp(path, &len);
	ck_assert_uint_eq(seen.bytes[0], len);
	EVP_Digest(data, len, want, &mdlen, EVP_sha256(), NULL);
	ck_assert_int_eq(memcmp(md, want, 32), 0);
	free(data);
	unlink(path);
	free(path);
	free(cmd);
	results_release(r, 1);
}
END_TEST

/* D12: fanout 2, a failure in the first batch. */
START_TEST(test_d12_fanout_continue)
{
	struct sshpool_opts o;
	struct sshpool_result r[NSRV];
	struct tpu_err err;
	int i;

	seen_init();
	opts_init(&o, "[ \"$TPU_WORKER_ID\" = 0 ] && exit 1; sleep 0.2");
	o.fanout = 2;
	ck_assert_int_eq(sshpool_run(tg, NSRV, &o, r, &err), TPU_E_PARTIAL);
	for (i = 0; i < NSRV; i++) {
		ck_assert_int_eq(r[i].status,
		    i == 0 ? SSHPOOL_S_REMOTE_NONZERO : SSHPOOL_S_OK);
		ck_assert_int_eq(seen.done[i], 1);
	}
	results_release(r, NSRV);
}
END_TEST

START_TEST(test_d12_fanout_fail_fast)
{
	struct sshpool_opts o;
	struct sshpool_result r[NSRV];
	struct tpu_err err;
	int i;

	seen_init();
	opts_init(&o, "[ \"$TPU_WORKER_ID\" = 0 ] && exit 1; sleep 30");
	o.fanout = 2;
	o.flags |= SSHPOOL_F_FAIL_FAST;
	ck_assert_int_eq(sshpool_run(tg, NSRV, &o, r, &err), TPU_E_PARTIAL);
	ck_assert_int_eq(r[0].status, SSHPOOL_S_REMOTE_NONZERO);
	ck_assert_int_eq(r[1].status, SSHPOOL_S_ABORTED);
	ck_assert_ptr_nonnull(strstr(r[1].msg, "another worker failed"));
	ck_assert_int_lt(r[1].duration_ms, 10000);
	for (i = 2; i < NSRV; i++)
		ck_assert_int_eq(r[i].status, SSHPOOL_S_NOT_STARTED);
	for (i = 0; i < NSRV; i++)
		ck_assert_int_eq(seen.done[i], 1);
	results_release(r, NSRV);
}
END_TEST

static volatile sig_atomic_t abort_flag;

static void
on_alarm(int sig)
{
	(void)sig;
	abort_flag = 1;
}

/* D13: the abort flag (as set by a SIGINT handler) mid-run. */
START_TEST(test_d13_abort)
{
	struct sshpool_opts o;
	struct sshpool_result r[NSRV];
	struct tpu_err err;
	struct sigaction sa;
	int64_t t0;
	int i, fds;

	seen_init();
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = on_alarm;
	sigaction(SIGALRM, &sa, NULL);
	abort_flag = 0;
	opts_init(&o, "[ \"$TPU_WORKER_ID\" = 0 ] && exit 0; sleep 30");
	o.fanout = 4;
	o.abort = &abort_flag;
	seen.alarm_on_done = 1;
	t0 = tpu_now_ms();
	fds = count_fds();
	ck_assert_int_eq(sshpool_run(tg, NSRV, &o, r, &err), TPU_E_INTERRUPTED);
	ck_assert_int_eq(count_fds(), fds);
	ck_assert_int_lt(tpu_now_ms() - t0, 8000);
	ck_assert_str_eq(err.msg, "interrupted: 1 of 8 workers finished");
	/* worker 0 finished; 1-3 and the one started after 0 aborted */
	ck_assert_int_eq(r[0].status, SSHPOOL_S_OK);
	for (i = 1; i < 5; i++)
		ck_assert_int_eq(r[i].status, SSHPOOL_S_ABORTED);
	for (i = 5; i < NSRV; i++)
		ck_assert_int_eq(r[i].status, SSHPOOL_S_NOT_STARTED);
	for (i = 0; i < NSRV; i++)
		ck_assert_int_eq(seen.done[i], 1);
	results_release(r, NSRV);
}
END_TEST

START_TEST(test_refused_and_unknown)
{
	struct sshpool_opts o;
	struct sshpool_result r[3];
	struct sshpool_target t[3];
	struct tpu_err err;

	seen_init();
	memcpy(t, tg, sizeof t);
	t[0].port = harness_free_port(srv[0].addr); /* nobody listens */
	t[1].nhostkeys = 0;                         /* nothing pinned */
	t[2].hostkeys = (const char *const[]){ "ssh-ed25519 AAAA" };
	opts_init(&o, "true");
	ck_assert_int_eq(sshpool_run(t, 3, &o, r, &err), TPU_E_UNREACHABLE);
	ck_assert_int_eq(r[0].status, SSHPOOL_S_CONNECT_REFUSED);
	ck_assert_int_eq(r[1].status, SSHPOOL_S_HOSTKEY_UNKNOWN);
	ck_assert_int_eq(r[2].status, SSHPOOL_S_HOSTKEY_UNKNOWN);
	ck_assert_ptr_nonnull(strstr(r[0].msg, "refused"));
	ck_assert_ptr_nonnull(strstr(err.msg, "no worker could be reached"));
	results_release(r, 3);

	/* trust on first use, only when asked: the key is reported */
	o.flags |= SSHPOOL_F_ACCEPT_NEW_HOSTKEY;
	ck_assert_int_eq(sshpool_run(&t[1], 1, &o, r, &err), 0);
	ck_assert_str_eq(r[0].hostkey, srv[1].hostpub);
	results_release(r, 1);
}
END_TEST

/* D10: the key is authorised 3 s late: bounded retries succeed. */
START_TEST(test_d10_auth_retry)
{
	struct sshd_srv late;
	struct sshpool_opts o;
	struct sshpool_result r[1];
	struct sshpool_target t;
	const char *k[1];
	struct tpu_err err;
	char *ak, *pub, *line;
	pid_t pid;

	seen_init();
	ak = xasprintf("%s/late_keys", base);
	unlink(ak);
	ck_assert_int_eq(harness_sshd_start(&late, base, 20, ak), 0);
	k[0] = late.hostpub;
	t = tg[0];
	t.host = late.addr;
	t.port = late.port;
	t.hostkeys = k;
	/* never authorised: a clear error after the attempts */
	opts_init(&o, "echo in");
	o.auth_attempts = 3;
	o.auth_retry_ms = 100;
	ck_assert_int_eq(sshpool_run(&t, 1, &o, r, &err), TPU_E_UNREACHABLE);
	ck_assert_int_eq(r[0].status, SSHPOOL_S_AUTH_FAILED);
	ck_assert_int_eq(r[0].auth_attempts, 3);
	ck_assert_ptr_nonnull(
	    strstr(r[0].msg, "permission denied (publickey) for user"));
	ck_assert_ptr_nonnull(strstr(r[0].msg, "after 3 attempts"));
	results_release(r, 1);

	pub = harness_publine(userkey);
	line = xasprintf("%s\n", pub);
	if ((pid = fork()) == 0) {
		sleep(3);
		harness_write(ak, line, 0600);
		_exit(0);
	}
	o.auth_attempts = 10;
	o.auth_retry_ms = 250;
	o.auth_retry_max_ms = 1000;
	ck_assert_int_eq(sshpool_run(&t, 1, &o, r, &err), 0);
	ck_assert_int_gt(r[0].auth_attempts, 1);
	ck_assert_int_lt(r[0].auth_attempts, 10);
	ck_assert_int_ge(r[0].duration_ms, 2900);
	waitpid(pid, NULL, 0);
	results_release(r, 1);
	harness_sshd_stop(&late);
	free(pub);
	free(line);
	free(ak);
}
END_TEST

/* A passphrase-protected ed25519 key works; a wrong passphrase fails
 * at once, without retries. */
START_TEST(test_passphrase_key)
{
	struct sshpool_opts o;
	struct sshpool_result r[1];
	struct tpu_err err;
	char *key, *pub, *line, *ak;

	seen_init();
	key = xasprintf("%s/id_pass", base);
	ck_assert_int_eq(harness_keygen(key, "ed25519", "s3cret pass"), 0);
	pub = harness_publine(key);
	ak = harness_slurp(authkeys, NULL);
	line = xasprintf("%s%s\n", ak, pub);
	ck_assert_int_eq(harness_write(authkeys, line, 0600), 0);
	opts_init(&o, "echo ok");
	o.keyfile = key;
	o.passphrase = "s3cret pass";
	ck_assert_int_eq(sshpool_run(tg, 1, &o, r, &err), 0);
	results_release(r, 1);
	o.passphrase = "wrong";
	o.auth_attempts = 5;
	ck_assert_int_eq(sshpool_run(tg, 1, &o, r, &err), TPU_E_UNREACHABLE);
	ck_assert_int_eq(r[0].status, SSHPOOL_S_AUTH_FAILED);
	ck_assert_ptr_nonnull(strstr(r[0].msg, "wrong passphrase"));
	ck_assert_int_eq(r[0].auth_attempts, 1);
	results_release(r, 1);
	free(key);
	free(pub);
	free(line);
	free(ak);
}
END_TEST

START_TEST(test_validation)
{
	struct sshpool_opts o;
	struct sshpool_result r[1];
	struct sshpool_target t = tg[0];
	struct tpu_err err;

	opts_init(&o, "");
	ck_assert_int_eq(sshpool_run(&t, 1, &o, r, &err), TPU_E_USAGE);
	opts_init(&o, "true");
	o.fanout = -1;
	ck_assert_int_eq(sshpool_run(&t, 1, &o, r, &err), TPU_E_USAGE);
	ck_assert_str_eq(err.msg, "invalid fanout -1: must be at least 1");
	opts_init(&o, "true");
	t.port = 0;
	ck_assert_int_eq(sshpool_run(&t, 1, &o, r, &err), TPU_E_USAGE);
	ck_assert_str_eq(sshpool_status_name(SSHPOOL_S_HOSTKEY_MISMATCH),
	    "host key mismatch");
}
END_TEST

/*
 * Per-target command and environment: each worker runs its own command
 * with its own variables, the others keep opts->command; hostile values
 * arrive byte for byte; bad names and empty commands are refused.
 */
START_TEST(test_target_command_env)
{
	static const char *const env0[] = { "A=zero", "B_2=x y" };
	static const char *const env1[] = {
		"A=it's $HOME `id` \\ \"q\" ;&|<>*?",
		"EMPTY=",
		"NL=a\nb",
	};
	struct sshpool_opts o;
	struct sshpool_result r[3];
	struct sshpool_target t[3];
	struct tpu_err err;
	char *line;
	int i;

	seen_init();
	for (i = 0; i < 3; i++)
		t[i] = tg[i];
	t[0].env = env0;
	t[0].nenv = 2;
	t[1].command = "printf '%s|%s|%s|' \"$A\" \"${EMPTY-unset}\" "
	               "\"$NL\"; echo own";
	t[1].env = env1;
	t[1].nenv = 3;
	opts_init(&o, "echo \"[$A][${B_2-unset}]\"");
	ck_assert_int_eq(sshpool_run(t, 3, &o, r, &err), 0);
	ck_assert_str_eq(seen.out[0][0].data, "[w0] [zero][x y]\n");
	ck_assert_str_eq(seen.out[1][0].data,
	    "[w1] it's $HOME `id` \\ \"q\" ;&|<>*?||a\n[w1] b|own\n");
	ck_assert_str_eq(seen.out[2][0].data, "[w2] [][unset]\n");
	results_release(r, 3);

	/* the rendered line */
	ck_assert_int_eq(sshpool_command_line(&t[0], "cmd", &line, &err), 0);
	ck_assert_str_eq(line, "export A='zero' B_2='x y'; cmd");
	free(line);
	ck_assert_int_eq(sshpool_command_line(&t[2], "cmd", &line, &err), 0);
	ck_assert_str_eq(line, "cmd");
	free(line);

	/* refused before anything is sent */
	{
		static const char *const bad1[] = { "1A=x" };
		static const char *const bad2[] = { "A-B=x" };
		static const char *const bad3[] = { "NOEQUALS" };
		static const char *const bad4[] = { "=x" };
		static const char *const bad5[] = { "A=1; rm -rf /" };

		t[2].env = bad1;
		t[2].nenv = 1;
		ck_assert_int_eq(sshpool_run(t, 3, &o, r, &err), TPU_E_USAGE);
		ck_assert_str_eq(err.msg,
		    "worker 2: invalid environment name '1A': must be "
		    "letters, digits and '_', not starting with a digit");
		t[2].env = bad2;
		ck_assert_int_eq(sshpool_run(t, 3, &o, r, &err), TPU_E_USAGE);
		t[2].env = bad3;
		ck_assert_int_eq(sshpool_run(t, 3, &o, r, &err), TPU_E_USAGE);
		ck_assert_str_eq(err.msg,
		    "worker 2: invalid environment entry 'NOEQUALS': must be "
		    "KEY=VALUE");
		t[2].env = bad4;
		ck_assert_int_eq(sshpool_run(t, 3, &o, r, &err), TPU_E_USAGE);
		t[2].env = bad5;
		ck_assert_int_eq(
		    sshpool_command_line(&t[2], "c", &line, &err), 0);
		ck_assert_str_eq(line, "export A='1; rm -rf /'; c");
		free(line);
		t[2].env = NULL;
		t[2].nenv = 0;
		t[2].command = "";
		ck_assert_int_eq(sshpool_run(t, 3, &o, r, &err), TPU_E_USAGE);
		ck_assert_str_eq(err.msg, "worker 2: no remote command given");
		/* no opts->command: every target needs its own */
		t[2].command = NULL;
		opts_init(&o, NULL);
		t[0].command = t[1].command;
		ck_assert_int_eq(sshpool_run(t, 3, &o, r, &err), TPU_E_USAGE);
		ck_assert_str_eq(err.msg, "worker 2: no remote command given");
	}
}
END_TEST

/* The pid (= process group) the command printed first, "[wN] PID". */
static pid_t
printed_pid(size_t idx)
{
	const char *d = strchr(seen.out[idx][0].data, ' ');

	return d != NULL ? (pid_t)strtol(d + 1, NULL, 10) : 0;
}

/* 1 when process (pid > 0) or group (pid < 0) is gone within ms. */
static int
group_gone(pid_t pg, int ms)
{
	int64_t end = tpu_now_ms() + ms;

	while (kill(pg, 0) == 0)
		if (tpu_now_ms() > end)
			return 0;
		else
			usleep(50000);
	return 1;
}

/*
 * A command stopped by the command timeout does not outlive it: the
 * watcher kills its process group on the worker (SIGTERM, then SIGKILL
 * for one that ignores SIGTERM); SSHPOOL_F_NO_WATCH leaves it running.
 */
START_TEST(test_watch_kills_group)
{
	struct sshpool_opts o;
	struct sshpool_result r[2];
	struct tpu_err err;
	pid_t pg[2];
	int64_t t0;

	seen_init();
	opts_init(&o,
	    "echo $$; if [ $TPU_WORKER_ID = 1 ]; then trap '' TERM; fi; "
	    "sleep 30");
	o.command_timeout_ms = 1000;
	ck_assert_int_eq(sshpool_run(tg, 2, &o, r, &err), TPU_E_PARTIAL);
	t0 = tpu_now_ms();
	ck_assert_int_eq(r[0].status, SSHPOOL_S_TIMEOUT);
	pg[0] = printed_pid(0);
	pg[1] = printed_pid(1);
	ck_assert_int_gt(pg[0], 1);
	ck_assert_int_gt(pg[1], 1);
	/* the command at once (the watcher stays for the grace) */
	ck_assert_msg(group_gone(pg[0], 3000), "worker 0 still runs");
	/* SIGTERM ignored: only SIGKILL, after the 5 s grace */
	usleep(1000000);
	ck_assert_int_eq(kill(pg[1], 0), 0);
	ck_assert_msg(group_gone(pg[1], 8000), "worker 1 still runs");
	ck_assert_int_ge(tpu_now_ms() - t0, 3000);
	/* then nothing of either group, the watchers included */
	ck_assert_msg(group_gone(-pg[0], 3000), "group 0 still there");
	ck_assert_msg(group_gone(-pg[1], 3000), "group 1 still there");
	results_release(r, 2);

	seen_release();
	seen_init();
	opts_init(&o, "echo $$; sleep 30");
	o.command_timeout_ms = 500;
	o.flags |= SSHPOOL_F_NO_WATCH;
	ck_assert_int_eq(sshpool_run(tg, 1, &o, r, &err), TPU_E_PARTIAL);
	pg[0] = printed_pid(0);
	ck_assert_int_gt(pg[0], 1);
	usleep(1000000);
	ck_assert_int_eq(kill(pg[0], 0), 0); /* the old behaviour */
	kill(-pg[0], SIGKILL);
	results_release(r, 1);
}
END_TEST

/*
 * SSHPOOL_F_STDIN: the same bytes to every worker, then EOF; without
 * it the command's stdin is at EOF at once; a command that does not read
 * ends the run (no endless read of /dev/zero); a command stopped while
 * its stdin is open (no EOF yet) has its group killed by the watcher.
 */
START_TEST(test_stdin_forward)
{
	struct sshpool_opts o;
	struct sshpool_result r[2];
	struct tpu_err err;
	char path[] = "/tmp/check_sshpool_stdin.XXXXXX";
	char blob[100000];
	int fd, zero, pp[2];
	size_t i;
	pid_t pg;

	for (i = 0; i < sizeof blob; i++)
		blob[i] = (char)(i * 7 + i / 251);
	fd = mkstemp(path);
	ck_assert_int_ge(fd, 0);
	unlink(path);
	ck_assert_int_eq(write(fd, blob, sizeof blob), (ssize_t)sizeof blob);
	ck_assert_int_eq(lseek(fd, 0, SEEK_SET), 0);

	seen_init();
	opts_init(&o, "wc -c");
	o.flags |= SSHPOOL_F_STDIN;
	o.stdin_fd = fd;
	o.fanout = 1; /* raised: every worker takes each chunk */
	ck_assert_int_eq(sshpool_run(tg, 2, &o, r, &err), 0);
	for (i = 0; i < 2; i++) {
		char want[32];

		snprintf(want, sizeof want, "[w%zu] 100000\n", i);
		ck_assert_str_eq(seen.out[i][0].data, want);
	}
	results_release(r, 2);

	/* no forwarding: EOF at once */
	seen_release();
	seen_init();
	opts_init(&o, "wc -c");
	ck_assert_int_eq(sshpool_run(tg, 2, &o, r, &err), 0);
	ck_assert_str_eq(seen.out[1][0].data, "[w1] 0\n");
	results_release(r, 2);

	/* a command that does not read: ends, /dev/zero read boundedly */
	zero = open("/dev/zero", O_RDONLY);
	ck_assert_int_ge(zero, 0);
	seen_release();
	seen_init();
	opts_init(&o, "exit 4");
	o.flags |= SSHPOOL_F_STDIN;
	o.stdin_fd = zero;
	o.command_timeout_ms = 20000;
	ck_assert_int_eq(sshpool_run(tg, 1, &o, r, &err), TPU_E_PARTIAL);
	ck_assert_int_eq(r[0].status, SSHPOOL_S_REMOTE_NONZERO);
	ck_assert_int_eq(r[0].exit_status, 4);
	results_release(r, 1);
	close(zero);

	/* stdin open, no EOF: the command timeout's stop still kills */
	ck_assert_int_eq(pipe(pp), 0);
	ck_assert_int_eq(write(pp[1], "x\n", 2), 2);
	seen_release();
	seen_init();
	opts_init(&o, "read -r x; echo $$; sleep 30");
	o.flags |= SSHPOOL_F_STDIN;
	o.stdin_fd = pp[0];
	o.command_timeout_ms = 1500;
	ck_assert_int_eq(sshpool_run(tg, 1, &o, r, &err), TPU_E_PARTIAL);
	ck_assert_int_eq(r[0].status, SSHPOOL_S_TIMEOUT);
	pg = printed_pid(0);
	ck_assert_int_gt(pg, 1);
	ck_assert_msg(group_gone(pg, 4000), "the command still runs");
	/* the watcher too, after its grace */
	ck_assert_msg(group_gone(-pg, 8000), "the group still runs");
	results_release(r, 1);
	close(pp[0]);
	close(pp[1]);
	close(fd);
}
END_TEST

static int pty_master;
static volatile sig_atomic_t winch_flag;

static void
on_alarm_resize(int sig)
{
	struct winsize ws = { 30, 100, 0, 0 };

	(void)sig;
	ioctl(pty_master, TIOCSWINSZ, &ws);
	winch_flag = 1;
}

/* Interactive shell on a pty: raw mode, window-size change, exit status,
 * terminal restored. */
START_TEST(test_shell_pty)
{
	struct sshpool_opts o;
	struct sshpool_result r;
	struct sshpool_conn conn;
	struct sshpool_shell_opts so;
	struct tpu_err err;
	struct winsize ws = { 24, 80, 0, 0 };
	struct termios before, after;
	struct sigaction sa;
	char out[8192], sig[32];
	const char *in = "sleep 2.5; stty size; echo mark$((6*7)); exit 7\n";
	size_t len = 0;
	ssize_t n;
	int slave, status;

	ck_assert_int_eq(openpty(&pty_master, &slave, NULL, NULL, &ws), 0);
	ck_assert_int_eq(tcgetattr(slave, &before), 0);
	ck_assert_int_eq(
	    write(pty_master, in, strlen(in)), (ssize_t)strlen(in));
	opts_init(&o, NULL);
	ck_assert_int_eq(sshpool_connect(&tg[0], &o, &conn, &r, &err), 0);
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = on_alarm_resize;
	sigaction(SIGALRM, &sa, NULL);
	alarm(1);
	memset(&so, 0, sizeof so);
	so.in_fd = slave;
	so.out_fd = slave;
	so.err_fd = -1;
	so.winch = &winch_flag;
	ck_assert_int_eq(sshpool_shell(&conn, &so, &status, sig, &err), 0);
	ck_assert_int_eq(status, 7);
	ck_assert_str_eq(sig, "");
	sshpool_conn_close(&conn);
	sshpool_result_release(&r);
	/* the terminal is back in its mode */
	ck_assert_int_eq(tcgetattr(slave, &after), 0);
	ck_assert_int_eq(after.c_lflag & ICANON, before.c_lflag & ICANON);
	ck_assert(after.c_lflag & ICANON);
	fcntl(pty_master, F_SETFL, O_NONBLOCK);
	while (len < sizeof out - 1 &&
	       (n = read(pty_master, out + len, sizeof out - 1 - len)) > 0)
		len += (size_t)n;
	out[len] = '\0';
	ck_assert_msg(strstr(out, "30 100") != NULL, "no resize in: %s", out);
	ck_assert_ptr_nonnull(strstr(out, "mark42"));
	close(slave);
	close(pty_master);
}
END_TEST

/* A command with a pty and no stdin: exit signal through the shell API. */
START_TEST(test_shell_command_signal)
{
	struct sshpool_opts o;
	struct sshpool_result r;
	struct sshpool_conn conn;
	struct sshpool_shell_opts so;
	struct tpu_err err;
	char sig[32];
	int status, null = open("/dev/null", O_RDWR);

	opts_init(&o, NULL);
	ck_assert_int_eq(sshpool_connect(&tg[1], &o, &conn, &r, &err), 0);
	memset(&so, 0, sizeof so);
	so.command = "kill -9 $$";
	so.no_pty = 1;
	so.in_fd = null;
	so.out_fd = null;
	so.err_fd = null;
	ck_assert_int_eq(sshpool_shell(&conn, &so, &status, sig, &err), 0);
	ck_assert_int_eq(status, -1);
	ck_assert_str_eq(sig, "KILL");
	sshpool_conn_close(&conn);
	sshpool_result_release(&r);
	/* a wrong host key fails sshpool_connect with the message */
	{
		struct sshpool_target t = tg[1];

		t.hostkeys = hk[2];
		ck_assert_int_eq(sshpool_connect(&t, &o, &conn, &r, &err),
		    TPU_E_UNREACHABLE);
		ck_assert_ptr_nonnull(strstr(err.msg, "host key mismatch"));
		ck_assert_ptr_null(conn.session);
		sshpool_result_release(&r);
	}
	close(null);
}
END_TEST

static volatile sig_atomic_t child_done;

static void
on_chld(int sig)
{
	(void)sig;
	child_done = 1;
}

static int
listen_local(int *port)
{
	struct sockaddr_in sin;
	socklen_t sl = sizeof sin;
	int fd = socket(AF_INET, SOCK_STREAM, 0);

	memset(&sin, 0, sizeof sin);
	sin.sin_family = AF_INET;
	sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	ck_assert_int_eq(bind(fd, (struct sockaddr *)&sin, sizeof sin), 0);
	ck_assert_int_eq(listen(fd, 8), 0);
	getsockname(fd, (struct sockaddr *)&sin, &sl);
	*port = ntohs(sin.sin_port);
	return fd;
}

static int
read_n(int fd, char *p, size_t n)
{
	size_t got = 0;
	ssize_t r;

	while (got < n && (r = read(fd, p + got, n - got)) > 0)
		got += (size_t)r;
	return got == n ? 0 : -1;
}

/* Local forwarding: a client through the worker to a target server, both
 * ways, and the remote close reaching the client. */
START_TEST(test_forward)
{
	struct sshpool_opts o;
	struct sshpool_result r;
	struct sshpool_conn conn;
	struct sshpool_forward_opts fo;
	struct tpu_err err;
	struct sigaction sa;
	int lfd, lport, tfd, tport, status;
	pid_t pid;

	lfd = listen_local(&lport);
	tfd = listen_local(&tport);
	opts_init(&o, NULL);
	ck_assert_int_eq(sshpool_connect(&tg[3], &o, &conn, &r, &err), 0);
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = on_chld;
	sigaction(SIGCHLD, &sa, NULL);
	child_done = 0;
	if ((pid = fork()) == 0) {
		struct sockaddr_in sin;
		char b[8];
		int c, t;

		alarm(20);
		memset(&sin, 0, sizeof sin);
		sin.sin_family = AF_INET;
		sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
		sin.sin_port = htons((unsigned short)lport);
		c = socket(AF_INET, SOCK_STREAM, 0);
		if (connect(c, (struct sockaddr *)&sin, sizeof sin) != 0 ||
		    write(c, "hello", 5) != 5)
			_exit(1);
		if ((t = accept(tfd, NULL, NULL)) == -1 ||
		    read_n(t, b, 5) != 0 || memcmp(b, "hello", 5) != 0 ||
		    write(t, "world", 5) != 5)
			_exit(2);
		close(t);
		if (read_n(c, b, 5) != 0 || memcmp(b, "world", 5) != 0)
			_exit(3);
		if (read(c, b, 1) != 0) /* the target's close arrives */
			_exit(4);
		_exit(0);
	}
	memset(&fo, 0, sizeof fo);
	fo.listen_fd = lfd;
	fo.host = "127.0.0.1";
	fo.port = tport;
	fo.abort = &child_done;
	ck_assert_int_eq(sshpool_forward(&conn, &fo, &err), TPU_E_INTERRUPTED);
	ck_assert_int_eq(waitpid(pid, &status, 0), pid);
	ck_assert(WIFEXITED(status));
	ck_assert_int_eq(WEXITSTATUS(status), 0);
	fo.port = 0;
	ck_assert_int_eq(sshpool_forward(&conn, &fo, &err), TPU_E_USAGE);
	sshpool_conn_close(&conn);
	sshpool_result_release(&r);
	close(lfd);
	close(tfd);
}
END_TEST

/* SFTP put and get: content and mode preserved, temp file renamed,
 * missing files named in the error, one SFTP subsystem for every call
 * on the connection (ended by sshpool_conn_close). */
START_TEST(test_sftp)
{
	struct sshpool_opts o;
	struct sshpool_result r;
	struct sshpool_conn conn;
	struct tpu_err err;
	struct stat st;
	char *src, *dst, *back, *a, *b, *tmp, *missing;
	size_t alen, blen;
	const char *argv[] = { "sh", "-c", NULL, NULL };
	char *sh;
	void *sftp;

	src = xasprintf("%s/sftp-src", base);
	dst = xasprintf("%s/sftp-dst", srv[4].home);
	back = xasprintf("%s/sftp-back", base);
	tmp = xasprintf("%s.tpuctl-tmp", back);
	sh = xasprintf(
	    "head -c 3000001 /dev/urandom > %s && chmod 751 %s", src, src);
	argv[2] = sh;
	ck_assert_int_eq(harness_run(argv), 0);
	opts_init(&o, NULL);
	ck_assert_int_eq(sshpool_connect(&tg[4], &o, &conn, &r, &err), 0);
	ck_assert_ptr_null(conn.sftp);
	ck_assert_msg(
	    sshpool_sftp_put(&conn, src, dst, &err) == 0, "%s", err.msg);
	ck_assert_ptr_nonnull(sftp = conn.sftp);
	ck_assert_int_eq(sshpool_sftp_open(&conn, &err), 0);
	ck_assert_ptr_eq(conn.sftp, sftp);
	ck_assert_int_eq(stat(dst, &st), 0);
	ck_assert_uint_eq(st.st_mode & 07777, 0751);
	ck_assert_int_eq(chmod(dst, 0640), 0);
	ck_assert_msg(
	    sshpool_sftp_get(&conn, dst, back, &err) == 0, "%s", err.msg);
	ck_assert_int_eq(stat(back, &st), 0);
	ck_assert_uint_eq(st.st_mode & 07777, 0640);
	ck_assert_int_ne(access(tmp, F_OK), 0);
	a = harness_slurp(src, &alen);
	b = harness_slurp(back, &blen);
	ck_assert_uint_eq(alen, 3000001);
	ck_assert_uint_eq(alen, blen);
	ck_assert_int_eq(memcmp(a, b, alen), 0);
	/* errors */
	missing = xasprintf("%s/no/such/file", srv[4].home);
	ck_assert_int_eq(
	    sshpool_sftp_get(&conn, missing, back, &err), TPU_E_NOTFOUND);
	ck_assert_ptr_nonnull(strstr(err.msg, missing));
	ck_assert_int_ne(access(tmp, F_OK), 0);
	ck_assert_int_eq(
	    sshpool_sftp_put(&conn, src, missing, &err), TPU_E_NOTFOUND);
	ck_assert_int_eq(
	    sshpool_sftp_put(&conn, missing, dst, &err), TPU_E_NOTFOUND);
	/* the session still works after the errors, on the same subsystem */
	ck_assert_int_eq(sshpool_sftp_get(&conn, dst, back, &err), 0);
	ck_assert_ptr_eq(conn.sftp, sftp);
	/* a put over an existing file replaces it (SFTP v3 rename cannot:
	 * the destination is removed first), mode and content exact */
	{
		char *small = xasprintf("%s/sftp-small", base);
		char *rtmp = xasprintf("%s.tpuctl-tmp", dst);
		volatile sig_atomic_t stop = 0;
		size_t clen;
		char *c;

		ck_assert_int_eq(harness_write(small, "new\n", 0604), 0);
		ck_assert_msg(sshpool_sftp_put(&conn, small, dst, &err) == 0,
		    "%s", err.msg);
		c = harness_slurp(dst, &clen);
		ck_assert_uint_eq(clen, 4);
		ck_assert_int_eq(memcmp(c, "new\n", 4), 0);
		free(c);
		ck_assert_int_eq(stat(dst, &st), 0);
		ck_assert_uint_eq(st.st_mode & 07777, 0604);
		ck_assert_int_ne(access(rtmp, F_OK), 0);
		/* the abort flag stops a transfer inside the file: no partial
		 * file under either name, the old destination kept */
		conn.abort = &stop;
		stop = SIGTERM;
		ck_assert_int_eq(
		    sshpool_sftp_put(&conn, src, dst, &err), TPU_E_TERMINATED);
		ck_assert_str_eq(err.msg, "terminated");
		ck_assert_int_ne(access(rtmp, F_OK), 0);
		c = harness_slurp(dst, &clen);
		ck_assert_uint_eq(clen, 4);
		free(c);
		stop = SIGINT;
		ck_assert_int_eq(sshpool_sftp_get(&conn, dst, back, &err),
		    TPU_E_INTERRUPTED);
		ck_assert_int_ne(access(tmp, F_OK), 0);
		ck_assert_int_eq(stat(back, &st), 0); /* the earlier copy */
		ck_assert_uint_eq(st.st_size, 3000001);
		stop = 0;
		conn.abort = NULL;
		free(small);
		free(rtmp);
	}
	sshpool_conn_close(&conn);
	ck_assert_ptr_null(conn.sftp);
	sshpool_result_release(&r);
	free(src);
	free(dst);
	free(back);
	free(tmp);
	free(a);
	free(b);
	free(sh);
	free(missing);
}
END_TEST

/* Only an ecdsa key pinned, the server has ed25519 only: the handshake
 * offers only the pinned type, fails, and is reported as a mismatch. */
START_TEST(test_pinned_type_not_offered)
{
	struct sshpool_opts o;
	struct sshpool_result r[1];
	struct sshpool_target t = tg[6];
	struct tpu_err err;
	const char *k[1];
	char *path, *ec;

	seen_init();
	path = xasprintf("%s/ec_host", base);
	ck_assert_int_eq(harness_keygen(path, "ecdsa", ""), 0);
	ec = harness_publine(path);
	k[0] = ec;
	t.hostkeys = k;
	opts_init(&o, "true");
	ck_assert_int_eq(sshpool_run(&t, 1, &o, r, &err), TPU_E_UNREACHABLE);
	ck_assert_int_eq(r[0].status, SSHPOOL_S_HOSTKEY_MISMATCH);
	ck_assert_ptr_nonnull(strstr(r[0].msg, "ecdsa-sha2-nistp256"));
	ck_assert_int_eq(r[0].auth_attempts, 0);
	results_release(r, 1);
	free(path);
	free(ec);
}
END_TEST

/* ssh-agent: its identity authenticates without a key file; an agent
 * with only an unknown key gives a clear permission denied. */
START_TEST(test_agent)
{
	struct sshpool_opts o;
	struct sshpool_result r[2];
	struct tpu_err err;
	char *sock, *other;
	const char *add[] = { "ssh-add", "-q", NULL, NULL };
	const char *del[] = { "ssh-add", "-D", NULL };
	pid_t agent;
	int tries;

	seen_init();
	sock = xasprintf("%s/agent.sock", base);
	if ((agent = fork()) == 0) {
		const char *argv[] = { "ssh-agent", "-D", "-a", sock, NULL };
		int fd = open("/dev/null", O_RDWR);

		dup2(fd, 1);
		dup2(fd, 2);
		execvp(argv[0], (char *const *)argv);
		_exit(127);
	}
	for (tries = 0; tries < 300 && access(sock, F_OK) != 0; tries++)
		usleep(10000);
	setenv("SSH_AUTH_SOCK", sock, 1);
	add[2] = userkey;
	ck_assert_int_eq(harness_run(add), 0);
	opts_init(&o, "echo via-agent");
	o.keyfile = NULL;
	o.flags |= SSHPOOL_F_AGENT;
	ck_assert_int_eq(sshpool_run(tg, 2, &o, r, &err), 0);
	ck_assert_str_eq(seen.out[0][0].data, "[w0] via-agent\n");
	results_release(r, 2);

	/* only a key the workers do not know */
	ck_assert_int_eq(harness_run(del), 0);
	other = xasprintf("%s/other", base);
	ck_assert_int_eq(harness_keygen(other, "ed25519", ""), 0);
	add[2] = other;
	ck_assert_int_eq(harness_run(add), 0);
	ck_assert_int_eq(sshpool_run(tg, 1, &o, r, &err), TPU_E_UNREACHABLE);
	ck_assert_int_eq(r[0].status, SSHPOOL_S_AUTH_FAILED);
	ck_assert_ptr_nonnull(
	    strstr(r[0].msg, "permission denied (publickey)"));
	ck_assert_ptr_nonnull(strstr(r[0].msg, "(agent identities)"));
	results_release(r, 1);
	/* agent first, then the key file */
	o.keyfile = userkey;
	ck_assert_int_eq(sshpool_run(tg, 1, &o, r, &err), 0);
	results_release(r, 1);
	/* no agent at all: the key file alone */
	setenv("SSH_AUTH_SOCK", "/nonexistent/agent.sock", 1);
	ck_assert_int_eq(sshpool_run(tg, 1, &o, r, &err), 0);
	results_release(r, 1);
	unsetenv("SSH_AUTH_SOCK");
	kill(agent, SIGTERM);
	waitpid(agent, NULL, 0);
	free(sock);
	free(other);
}
END_TEST

/* One thread of test_sftp_threads: connect, put, get, compare. */
struct sftp_job {
	int n;
	int rc;
	struct tpu_err err;
};

static void *
sftp_job(void *arg)
{
	struct sftp_job *j = arg;
	struct sshpool_opts o;
	struct sshpool_result r;
	struct sshpool_conn conn;
	struct tpu_err err;
	char *src, *dst, *back, *a = NULL, *b = NULL;
	size_t alen = 0, blen = 0;
	FILE *f;

	tpu_err_init(&err);
	src = xasprintf("%s/thr-src-%d", base, j->n);
	dst = xasprintf("%s/thr-dst-%d", srv[4].home, j->n);
	back = xasprintf("%s/thr-back-%d", base, j->n);
	if ((f = fopen(src, "w")) != NULL) {
		fprintf(f, "thread %d\n", j->n);
		fclose(f);
	}
	opts_init(&o, NULL);
	j->rc = sshpool_connect(&tg[4], &o, &conn, &r, &err);
	if (j->rc == 0) {
		if ((j->rc = sshpool_sftp_put(&conn, src, dst, &err)) == 0)
			j->rc = sshpool_sftp_get(&conn, dst, back, &err);
		sshpool_conn_close(&conn);
	}
	sshpool_result_release(&r);
	if (j->rc == 0) {
		a = harness_slurp(src, &alen);
		b = harness_slurp(back, &blen);
		if (a == NULL || b == NULL || alen != blen ||
		    memcmp(a, b, alen) != 0)
			j->rc = tpu_error(&err, TPU_E_IO, "%s differs", back);
	}
	j->err = err;
	free(a);
	free(b);
	free(src);
	free(dst);
	free(back);
	return NULL;
}

/* Connections and SFTP from several threads at once, the first libssh2
 * use of the process among them (libssh2_init under pthread_once). */
START_TEST(test_sftp_threads)
{
	struct sftp_job j[8];
	pthread_t th[8];
	int i;

	for (i = 0; i < 8; i++) {
		memset(&j[i], 0, sizeof j[i]);
		j[i].n = i;
		ck_assert_int_eq(
		    pthread_create(&th[i], NULL, sftp_job, &j[i]), 0);
	}
	for (i = 0; i < 8; i++)
		ck_assert_int_eq(pthread_join(th[i], NULL), 0);
	for (i = 0; i < 8; i++)
		ck_assert_msg(j[i].rc == 0, "thread %d: %s", i, j[i].err.msg);
}
END_TEST

/* The pid of the sshd session process worker i's command ran under. */
static long
seen_ppid(int i)
{
	long pid = -1;
	char want[8];

	snprintf(want, sizeof want, "[w%d] ", i);
	ck_assert(tpu_startswith(seen.out[i][0].data, want));
	pid = strtol(seen.out[i][0].data + strlen(want), NULL, 10);
	ck_assert_int_gt(pid, 1);
	return pid;
}

/* The session cache (issue 18): a session is reused only for the same
 * host, port, user and pinned keys; a dead one is reopened. */
START_TEST(test_session_cache)
{
	struct sshpool_opts o;
	struct sshpool_result r[2];
	struct sshpool_target t2[2];
	const char *other_keys[2][2];
	struct tpu_err err;
	long p0, p1;
	int fds = count_fds();

	opts_init(&o, "echo $PPID");
	o.cache = sshpool_cache_new();
	seen_init();
	ck_assert_int_eq(sshpool_run(tg, 2, &o, r, &err), 0);
	results_release(r, 2);
	ck_assert_uint_eq(sshpool_cache_count(o.cache), 2);
	p0 = seen_ppid(0);
	p1 = seen_ppid(1);
	/* again: the same sessions, no new authentication */
	seen_release();
	seen_init();
	ck_assert_int_eq(sshpool_run(tg, 2, &o, r, &err), 0);
	ck_assert_int_eq(seen_ppid(0), p0);
	ck_assert_int_eq(seen_ppid(1), p1);
	ck_assert(tpu_startswith(r[0].hostkey_fp, "SHA256:"));
	results_release(r, 2);
	ck_assert_uint_eq(sshpool_cache_count(o.cache), 2);
	/* other pinned keys for the same hosts: new sessions */
	memcpy(t2, tg, sizeof t2);
	other_keys[0][0] = srv[0].hostpub;
	other_keys[0][1] = srv[1].hostpub;
	other_keys[1][0] = srv[1].hostpub;
	other_keys[1][1] = srv[0].hostpub;
	t2[0].hostkeys = other_keys[0];
	t2[0].nhostkeys = 2;
	t2[1].hostkeys = other_keys[1];
	t2[1].nhostkeys = 2;
	seen_release();
	seen_init();
	ck_assert_int_eq(sshpool_run(t2, 2, &o, r, &err), 0);
	ck_assert_int_ne(seen_ppid(0), p0);
	ck_assert_int_ne(seen_ppid(1), p1);
	results_release(r, 2);
	ck_assert_uint_eq(sshpool_cache_count(o.cache), 4);
	/* a held session killed: reopened within the run, command once */
	ck_assert_int_eq(kill((pid_t)p0, SIGKILL), 0);
	usleep(200000);
	seen_release();
	seen_init();
	ck_assert_int_eq(sshpool_run(tg, 2, &o, r, &err), 0);
	ck_assert_int_eq(r[0].status, SSHPOOL_S_OK);
	ck_assert_int_ne(seen_ppid(0), p0);
	ck_assert_int_eq(seen_ppid(1), p1);
	ck_assert_int_eq(seen.done[0], 1);
	ck_assert_int_eq(r[0].auth_attempts, 1);
	results_release(r, 2);
	seen_release();
	sshpool_cache_free(o.cache);
	ck_assert_int_eq(count_fds(), fds);
}
END_TEST

/* Lines of a file (0 when it does not exist). */
static int
file_lines(const char *path)
{
	FILE *f = fopen(path, "r");
	int n = 0, c;

	if (f == NULL)
		return 0;
	while ((c = fgetc(f)) != EOF)
		n += c == '\n';
	fclose(f);
	return n;
}

/*
 * SSHPOOL_F_SHELL (issue 18): short commands through one held sh per
 * cached session: the same shell ($$) from run to run, exit statuses
 * and output exactly the command's (a forged end marker is output), a
 * shell killed between runs or left out of step (a stray background
 * write) replaced, a shell lost mid-command: an idempotent command run
 * again on an exec channel, a SHELL_ONCE one reported, never rerun.
 */
START_TEST(test_held_shell)
{
	struct sshpool_opts o;
	struct sshpool_result r[2];
	struct sshpool_cache *c;
	struct tpu_err err;
	char *cmd, *mark = xasprintf("%s/ran", base);
	long p0, p1;
	int fds = count_fds();

	opts_init(&o, "echo $$; echo two; echo err >&2; printf tail");
	o.flags |= SSHPOOL_F_SHELL;
	o.cache = sshpool_cache_new();
	seen_init();
	ck_assert_int_eq(sshpool_run(tg, 2, &o, r, &err), 0);
	p0 = seen_ppid(0);
	p1 = seen_ppid(1);
	ck_assert(strstr(seen.out[0][0].data, "[w0] two\n[w0] tail\n") != NULL);
	ck_assert_str_eq(seen.out[0][1].data, "[w0] err\n");
	ck_assert_int_eq(seen.noeol[0][0], 1); /* "tail" has no newline */
	results_release(r, 2);
	ck_assert_uint_eq(sshpool_cache_count(o.cache), 2);
	/* the same shells, and a command's own status */
	seen_release();
	seen_init();
	o.command = "echo $$; exit 7";
	ck_assert_int_eq(sshpool_run(tg, 2, &o, r, &err), TPU_E_PARTIAL);
	ck_assert_int_eq(seen_ppid(0), p0);
	ck_assert_int_eq(seen_ppid(1), p1);
	ck_assert_int_eq(r[0].status, SSHPOOL_S_REMOTE_NONZERO);
	ck_assert_int_eq(r[0].exit_status, 7);
	results_release(r, 2);
	/* a command printing end-marker-like lines: they are its output */
	seen_release();
	seen_init();
	o.command = "printf '\\ntpuctl-end-%s 0\\n' "
	            "0123456789abcdef0123456789abcdef; "
	            "printf 'x\\ntpuctl-end-0123456789abcdef0123456789abcdef"
	            "\\n' >&2; exit 5";
	ck_assert_int_eq(sshpool_run(tg, 1, &o, r, &err), TPU_E_PARTIAL);
	ck_assert_int_eq(r[0].exit_status, 5);
	ck_assert_str_eq(seen.out[0][0].data,
	    "[w0] \n[w0] tpuctl-end-0123456789abcdef0123456789abcdef 0\n");
	ck_assert_str_eq(seen.out[0][1].data,
	    "[w0] x\n[w0] tpuctl-end-0123456789abcdef0123456789abcdef\n");
	results_release(r, 1);
	/* the held shell killed between two runs: a new one, run once */
	ck_assert_int_eq(kill((pid_t)p0, SIGKILL), 0);
	usleep(200000);
	seen_release();
	seen_init();
	o.command = "echo $$";
	ck_assert_int_eq(sshpool_run(tg, 2, &o, r, &err), 0);
	ck_assert_int_ne(seen_ppid(0), p0);
	ck_assert_int_eq(seen_ppid(1), p1);
	ck_assert_int_eq(seen.done[0], 1);
	ck_assert_int_eq(r[0].auth_attempts, 1);
	p0 = seen_ppid(0);
	results_release(r, 2);
	/* out of step: a stray write after the end; the next run finds it
	   and takes a new shell */
	seen_release();
	seen_init();
	o.command = "(sleep 0.3; echo stray) & echo $$";
	ck_assert_int_eq(sshpool_run(tg, 1, &o, r, &err), 0);
	ck_assert_int_eq(seen_ppid(0), p0);
	results_release(r, 1);
	usleep(600000);
	seen_release();
	seen_init();
	o.command = "echo $$";
	ck_assert_int_eq(sshpool_run(tg, 1, &o, r, &err), 0);
	ck_assert_int_ne(seen_ppid(0), p0);
	ck_assert(strstr(seen.out[0][0].data, "stray") == NULL);
	results_release(r, 1);
	/* lost mid-command, idempotent: run again on an exec channel
	   (there the login shell is killed: SIGNALED, as without the flag) */
	unlink(mark);
	cmd = xasprintf("echo ran >>%s; kill -9 $$", mark);
	o.command = cmd;
	seen_release();
	seen_init();
	ck_assert_int_eq(sshpool_run(tg, 1, &o, r, &err), TPU_E_PARTIAL);
	ck_assert_int_eq(r[0].status, SSHPOOL_S_SIGNALED);
	ck_assert_int_eq(file_lines(mark), 2);
	ck_assert_int_eq(seen.done[0], 1);
	results_release(r, 1);
	/* SHELL_ONCE: reported, not run again */
	unlink(mark);
	o.flags |= SSHPOOL_F_SHELL_ONCE;
	seen_release();
	seen_init();
	ck_assert_int_eq(sshpool_run(tg, 1, &o, r, &err), TPU_E_PARTIAL);
	ck_assert_int_eq(r[0].status, SSHPOOL_S_PROTOCOL);
	ck_assert(strstr(r[0].msg, "not run again") != NULL);
	ck_assert_int_eq(file_lines(mark), 1);
	results_release(r, 1);
	/* SHELL_ONCE with a shell killed before the run: run once */
	o.command = "echo $$";
	seen_release();
	seen_init();
	ck_assert_int_eq(sshpool_run(tg, 1, &o, r, &err), 0);
	p0 = seen_ppid(0);
	results_release(r, 1);
	ck_assert_int_eq(kill((pid_t)p0, SIGKILL), 0);
	usleep(200000);
	unlink(mark);
	free(cmd);
	cmd = xasprintf("echo ran >>%s; echo $$", mark);
	o.command = cmd;
	seen_release();
	seen_init();
	ck_assert_int_eq(sshpool_run(tg, 1, &o, r, &err), 0);
	ck_assert_int_ne(seen_ppid(0), p0);
	ck_assert_int_eq(file_lines(mark), 1);
	results_release(r, 1);
	/* without a cache the flag changes nothing: exec */
	c = o.cache;
	o.cache = NULL;
	seen_release();
	seen_init();
	ck_assert_int_eq(sshpool_run(tg, 1, &o, r, &err), 0);
	results_release(r, 1);
	seen_release();
	free(cmd);
	unlink(mark);
	free(mark);
	sshpool_cache_free(c);
	ck_assert_int_eq(count_fds(), fds);
}
END_TEST

/* A cached session lent as a conn (sshpool_conn_take, for SFTP) and
 * given back (sshpool_conn_keep): the next run's command runs on it, its
 * host key fingerprint kept; no cache: nothing to take, keep closes. */
START_TEST(test_conn_take_keep)
{
	struct sshpool_opts o;
	struct sshpool_result r[1];
	struct sshpool_conn conn;
	struct sshpool_cache *cache;
	struct tpu_err err;
	char *cmd, *src = xasprintf("%s/tk-src", base);
	char *dst = xasprintf("%s/tk-dst", srv[0].home);
	FILE *f;
	long p0;
	int fds = count_fds();

	ck_assert_ptr_nonnull(f = fopen(src, "w"));
	fputs("lent\n", f);
	fclose(f);
	ck_assert_int_eq(sshpool_conn_take(NULL, &tg[0], &conn), 0);
	opts_init(&o, "echo $PPID");
	o.cache = sshpool_cache_new();
	ck_assert_int_eq(sshpool_conn_take(o.cache, &tg[0], &conn), 0);
	seen_init();
	ck_assert_int_eq(sshpool_run(tg, 1, &o, r, &err), 0);
	results_release(r, 1);
	p0 = seen_ppid(0);
	seen_release();
	ck_assert_int_eq(sshpool_conn_take(o.cache, &tg[0], &conn), 1);
	ck_assert_uint_eq(sshpool_cache_count(o.cache), 0);
	ck_assert(tpu_startswith(conn.hostkey_fp, "SHA256:"));
	tpu_err_init(&err);
	ck_assert_msg(
	    sshpool_sftp_put(&conn, src, dst, &err) == 0, "%s", err.msg);
	sshpool_conn_keep(o.cache, &conn);
	ck_assert_ptr_null(conn.session);
	ck_assert_uint_eq(sshpool_cache_count(o.cache), 1);
	/* the same session again, its reads stamped (a quiet command
	   outlives the keepalive bound: not lost) */
	cache = o.cache;
	cmd = xasprintf("echo $PPID; sleep 5; cat '%s'", dst);
	opts_init(&o, cmd);
	o.cache = cache;
	o.alive_interval_ms = 1000;
	o.alive_count_max = 1;
	seen_init();
	ck_assert_msg(sshpool_run(tg, 1, &o, r, &err) == 0, "%s", r[0].msg);
	ck_assert(tpu_startswith(r[0].hostkey_fp, "SHA256:"));
	results_release(r, 1);
	ck_assert_int_eq(seen_ppid(0), p0);
	ck_assert_ptr_nonnull(strstr(seen.out[0][0].data, "\n[w0] lent\n"));
	seen_release();
	/* kept where the cache holds one already: closed */
	ck_assert_int_eq(sshpool_conn_take(o.cache, &tg[0], &conn), 1);
	seen_init();
	opts_init(&o, "true");
	o.cache = cache;
	ck_assert_int_eq(sshpool_run(tg, 1, &o, r, &err), 0);
	results_release(r, 1);
	seen_release();
	sshpool_conn_keep(o.cache, &conn);
	ck_assert_uint_eq(sshpool_cache_count(o.cache), 1);
	sshpool_cache_free(o.cache);
	ck_assert_int_eq(count_fds(), fds);
	free(cmd);
	free(src);
	free(dst);
}
END_TEST

static Suite *
sshpool_suite(void)
{
	Suite *s = suite_create("sshpool");
	TCase *tc = tcase_create("fleet");

	tcase_add_unchecked_fixture(tc, fleet_setup, fleet_teardown);
	tcase_set_timeout(tc, 30);
	tcase_add_test(tc, test_validation);
	tcase_add_test(tc, test_conn_take_keep);
	tcase_add_test(tc, test_d1_fanout_ok);
	tcase_add_test(tc, test_target_command_env);
	tcase_add_test(tc, test_watch_kills_group);
	tcase_add_test(tc, test_stdin_forward);
	tcase_add_test(tc, test_d2_hostkey_mismatch);
	tcase_add_test(tc, test_d5_blackhole);
	tcase_add_test(tc, test_d6_one_nonzero);
	tcase_add_test(tc, test_d7_signal);
	tcase_add_test(tc, test_d8_sshd_killed);
	tcase_add_test(tc, test_d9_command_timeout);
	tcase_add_test(tc, test_keepalive_lost);
	tcase_add_test(tc, test_d10_auth_retry);
	tcase_add_test(tc, test_d11_big_output_raw);
	tcase_add_test(tc, test_d11_big_output_lines);
	tcase_add_test(tc, test_d12_fanout_continue);
	tcase_add_test(tc, test_d12_fanout_fail_fast);
	tcase_add_test(tc, test_d13_abort);
	tcase_add_test(tc, test_refused_and_unknown);
	tcase_add_test(tc, test_passphrase_key);
	tcase_add_test(tc, test_shell_pty);
	tcase_add_test(tc, test_shell_command_signal);
	tcase_add_test(tc, test_forward);
	tcase_add_test(tc, test_sftp);
	tcase_add_test(tc, test_sftp_threads);
	tcase_add_test(tc, test_pinned_type_not_offered);
	tcase_add_test(tc, test_agent);
	tcase_add_test(tc, test_session_cache);
	tcase_add_test(tc, test_held_shell);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	SRunner *sr = srunner_create(sshpool_suite());
	int nf;

	srunner_run_all(sr, CK_NORMAL);
	nf = srunner_ntests_failed(sr);
	srunner_free(sr);
	return nf == 0 ? 0 : 1;
}
