/*
 * Fan-out result handling shared by the commands that run remote
 * commands on many workers (cmd/fanout.h).
 */
#include <sys/stat.h>

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "buf.h"
#include "fanout.h"
#include "fdlimit.h"
#include "log.h"
#include "outgroup.h"
#include "retry.h"
#include "sshsel.h"
#include "util.h"
#include "xmalloc.h"

/* What the output callback needs. */
struct fanout_rx {
	enum fanout_output mode;
	const struct fanout_who *who; /* per target */
	int *fds;                     /* per target, with --output-dir */
	int out_errno;                /* a write to stdout failed */
	int log_errno;                /* a write to a log file failed */
	size_t log_idx;               /* its target */
};

void
fanout_spec_init(struct fanout_spec *fs)
{
	memset(fs, 0, sizeof *fs);
	fs->mode = FANOUT_OUT_PREFIX;
	fs->stdin_fd = -1;
}

int
fanout_parse_output(
    const char *arg, enum fanout_output *mode, struct tpu_err *err)
{
	if (strcmp(arg, "prefix") == 0)
		*mode = FANOUT_OUT_PREFIX;
	else if (strcmp(arg, "raw") == 0)
		*mode = FANOUT_OUT_RAW;
	else if (strcmp(arg, "jsonl") == 0)
		*mode = FANOUT_OUT_JSONL;
	else
		return tpu_error(err, TPU_E_USAGE,
		    "--output '%s': expected prefix, raw or jsonl", arg);
	return 0;
}

/*
 * Output that cannot be written (stdout closed or full, a log file on a
 * full disk) stops the run, as any command stops on a write error: the
 * pool's abort flag is raised with SIGPIPE as the marker (taken back
 * after the run; a real SIGINT or SIGTERM keeps its own number).
 */
static void
output_failed(void)
{
	if (retry_interrupted == 0)
		retry_interrupted = SIGPIPE;
}

/*
 * stdout goes through stdio, flushed at once (every line reaches a pipe
 * as it comes, ordered with stderr), so that its error state is the one
 * cmd/main.c checks for every command; remote stderr goes to fd 2 (a
 * failure there is ignored, as everywhere).
 */
int
fanout_write_stdout(const char *p, size_t n)
{
	errno = 0;
	if (fwrite(p, 1, n, stdout) != n || fflush(stdout) != 0)
		return errno != 0 ? errno : EIO;
	return 0;
}

static void
emit(struct fanout_rx *r, size_t idx, int fd, const char *p, size_t n)
{
	int e;

	if (fd == 1) {
		if (r->out_errno != 0)
			return;
		if ((e = fanout_write_stdout(p, n)) != 0) {
			r->out_errno = e;
			output_failed();
		}
	} else if (fd == 2)
		(void)tpu_write_all(fd, p, n);
	else if (r->log_errno == 0 && (e = tpu_write_all(fd, p, n)) != 0) {
		r->log_errno = e;
		r->log_idx = idx;
		output_failed();
	}
}

static void
addc(struct buf *b, char c)
{
	buf_append(b, &c, 1);
}

static void
json_str(struct buf *b, const char *s, size_t n)
{
	static const char hex[] = "0123456789abcdef";
	size_t i;

	addc(b, '"');
	for (i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];

		if (c == '"' || c == '\\') {
			addc(b, '\\');
			addc(b, (char)c);
		} else if (c < 0x20 || c == 0x7f) {
			char e[7] = { '\\', 'u', '0', '0', hex[c >> 4],
				hex[c & 15], 0 };

			buf_puts(b, e);
		} else
			addc(b, (char)c);
	}
	addc(b, '"');
}

void
fanout_format(struct buf *b, enum fanout_output mode,
    const struct fanout_who *who, const char *job, int stream, const char *data,
    size_t len, int eol)
{
	char pre[48];

	switch (mode) {
	case FANOUT_OUT_RAW:
		buf_append(b, data, len);
		if (eol)
			addc(b, '\n');
		break;
	case FANOUT_OUT_PREFIX:
		buf_puts(
		    b, sshsel_prefix(pre, sizeof pre, who->slice, who->worker));
		buf_append(b, data, len);
		addc(b, '\n');
		break;
	case FANOUT_OUT_JSONL:
		buf_puts(b, "{");
		if (job != NULL) {
			buf_puts(b, "\"job\":");
			json_str(b, job, strlen(job));
			addc(b, ',');
		}
		buf_puts(b, "\"node\":");
		json_str(b, who->node, strlen(who->node));
		if (who->slice >= 0)
			buf_printf(b, ",\"slice\":%d", who->slice);
		buf_printf(b, ",\"worker\":%d,\"stream\":", who->worker);
		buf_puts(b, stream == 2 ? "\"stderr\"" : "\"stdout\"");
		buf_puts(b, ",\"line\":");
		json_str(b, data, len);
		buf_puts(b, eol ? "}\n" : ",\"eol\":false}\n");
		break;
	}
}

static void
on_output(
    void *arg, size_t idx, int stream, const char *data, size_t len, int flags)
{
	struct fanout_rx *r = arg;
	int fd = stream == 2 ? 2 : 1;
	struct buf b;
	enum fanout_output mode = r->mode;

	if (r->fds != NULL) {
		fd = r->fds[idx];
		/* a worker's own file holds its raw lines: no "[wN] " */
		if (mode == FANOUT_OUT_PREFIX)
			mode = FANOUT_OUT_RAW;
	} else if (r->mode == FANOUT_OUT_JSONL)
		fd = 1;
	buf_init(&b, 0);
	fanout_format(&b, mode, &r->who[idx], NULL, stream, data, len,
	    (flags & SSHPOOL_OUT_EOL) != 0);
	emit(r, idx, fd, b.data, b.len);
	buf_release(&b);
}

/*
 * --output jsonl: after the run, one exit record per worker (to its
 * --output-dir file, else stdout), in worker order:
 * {"node":..,["slice":..,]"worker":N,"status":"ok","exit":0}; "exit" is
 * null when no exit status came back ("signal" then names a signal).
 */
static void
exit_records(struct fanout_rx *r, const struct sshpool_result *res, size_t n)
{
	const struct fanout_who *who;
	struct buf b;
	size_t i;

	for (i = 0; i < n; i++) {
		who = &r->who[i];
		buf_init(&b, 0);
		buf_puts(&b, "{\"node\":");
		json_str(&b, who->node, strlen(who->node));
		if (who->slice >= 0)
			buf_printf(&b, ",\"slice\":%d", who->slice);
		buf_printf(&b,
		    ",\"worker\":%d,\"status\":\"%s\",\"exit\":", who->worker,
		    sshpool_status_name(res[i].status));
		if (res[i].exit_status >= 0)
			buf_printf(&b, "%d", res[i].exit_status);
		else
			buf_puts(&b, "null");
		if (res[i].signal[0] != '\0') {
			buf_puts(&b, ",\"signal\":");
			json_str(&b, res[i].signal, strlen(res[i].signal));
		}
		buf_puts(&b, "}\n");
		emit(r, i, r->fds != NULL ? r->fds[i] : 1, b.data, b.len);
		buf_release(&b);
	}
}

/* The message without its "worker N: " (the summary names the worker). */
static const char *
msg_of(const struct sshpool_result *res)
{
	const char *m = res->msg;
	size_t d;

	if (strncmp(m, "worker ", 7) == 0 &&
	    (d = strspn(m + 7, "0123456789")) > 0 &&
	    strncmp(m + 7 + d, ": ", 2) == 0)
		m += 7 + d + 2;
	return m;
}

static int never_ran(enum sshpool_status);

/* The summary line names the worker already: the message's own "worker
 * N: " goes. */
void
fanout_describe(const struct sshpool_result *res, char *out, size_t n)
{
	struct fanout_outcome o;

	fanout_outcome_of(res, &o);
	snprintf(out, n, "%s%s%s", o.what,
	    o.detail != NULL && o.detail[0] != '\0' ? ": " : "",
	    o.detail != NULL ? o.detail : "");
}

static int
signal_number(const char *name)
{
	static const struct {
		const char *n;
		int s;
	} sigs[] = { { "HUP", SIGHUP }, { "INT", SIGINT }, { "QUIT", SIGQUIT },
		{ "ILL", SIGILL }, { "ABRT", SIGABRT }, { "FPE", SIGFPE },
		{ "KILL", SIGKILL }, { "SEGV", SIGSEGV }, { "PIPE", SIGPIPE },
		{ "ALRM", SIGALRM }, { "TERM", SIGTERM }, { "USR1", SIGUSR1 },
		{ "USR2", SIGUSR2 } };
	size_t i;

	for (i = 0; i < sizeof sigs / sizeof sigs[0]; i++)
		if (strcmp(name, sigs[i].n) == 0)
			return sigs[i].s;
	return 0;
}

int
fanout_signal_status(const char *name)
{
	int s = signal_number(name);

	return s > 0 ? 128 + s : 255;
}

const char *
fanout_who_name(const struct fanout_who *who, char *buf, size_t size)
{
	if (who->slice < 0)
		snprintf(buf, size, "worker %d", who->worker);
	else
		snprintf(buf, size, "node %s (slice %d) worker %d", who->node,
		    who->slice, who->worker);
	return buf;
}

struct fanout_who *
fanout_who_make(const struct sshcmd *sc)
{
	struct fanout_who *who = xcalloc(sc->ntargets, sizeof *who);
	size_t i;

	for (i = 0; i < sc->ntargets; i++) {
		const struct sshcmd_slice *sl = sshcmd_slice_of(sc, i);

		who[i].slice = sc->qr ? sl->index : -1;
		who[i].worker = sc->targets[i].worker;
		snprintf(who[i].node, sizeof who[i].node, "%s", sl->name);
	}
	return who;
}

/* dir/wN.log, or dir/NODE-wN.log in a queued resource. */
static int
open_logs(const char *dir, const struct sshcmd *sc,
    const struct fanout_who *who, int **fdsp, struct tpu_err *err)
{
	int *fds;
	size_t i;

	if (mkdir(dir, 0700) != 0 && errno != EEXIST)
		return tpu_error(
		    err, TPU_E_IO, "--output-dir %s: %s", dir, strerror(errno));
	fds = xcalloc(sc->ntargets, sizeof *fds);
	for (i = 0; i < sc->ntargets; i++) {
		char *p = who[i].slice < 0
		              ? xasprintf("%s/w%d.log", dir, who[i].worker)
		              : xasprintf("%s/%s-w%d.log", dir, who[i].node,
		                    who[i].worker);

		fds[i] =
		    open(p, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
		if (fds[i] < 0) {
			int e = errno;

			while (i-- > 0)
				close(fds[i]);
			free(fds);
			tpu_error(err, TPU_E_IO, "%s: %s", p, strerror(e));
			free(p);
			return TPU_E_IO;
		}
		free(p);
	}
	*fdsp = fds;
	return 0;
}

/* A worker that failed before its command could start. */
static int
never_ran(enum sshpool_status st)
{
	/* refused, timed out, untrusted host key, key not accepted */
	return sshpool_status_unreachable(st);
}

/*
 * The node description came from the cache and some workers could not be
 * reached or trusted: the node may have changed (recreated, restarted
 * with new addresses or host keys).  Drop the entry, read the node again
 * and run the command once more on those workers only; the others keep
 * their results (their command ran: it is never run twice).
 */
static int
retry_fresh(struct tpu_ctx *ctx, struct sshcmd *sc, struct fanout_rx *r,
    struct sshpool_result *res, int rc, struct tpu_err *err)
{
	struct sshpool_target *sub;
	struct sshpool_result *subres;
	struct fanout_who *subwho;
	struct fanout_rx subrun = *r;
	struct tpu_err rerr;
	size_t i, k, n = sc->ntargets, nsub = 0, nok = 0, nreach = 0;
	int *subfds = NULL, src;

	for (i = 0; i < n; i++)
		nsub += never_ran(res[i].status);
	if (nsub == 0)
		return rc;
	tpu_err_init(&rerr);
	if (sshcmd_refresh(ctx, sc, &rerr) < 0 || sc->ntargets != n)
		return rc; /* keep the first answer */
	log_debug("ssh: %zu workers failed with a cached description; "
	          "retrying them with a fresh one",
	    nsub);
	sub = xcalloc(nsub, sizeof *sub);
	subres = xcalloc(nsub, sizeof *subres);
	subwho = xcalloc(nsub, sizeof *subwho);
	if (r->fds != NULL)
		subfds = xcalloc(nsub, sizeof *subfds);
	for (i = 0, k = 0; i < n; i++) {
		if (!never_ran(res[i].status))
			continue;
		sub[k] = sc->targets[i];
		subwho[k] = r->who[i];
		if (subfds != NULL)
			subfds[k] = r->fds[i];
		k++;
	}
	subrun.who = subwho;
	subrun.fds = subfds;
	sc->popts.arg = &subrun;
	tpu_err_init(&rerr);
	src = sshpool_run(sub, nsub, &sc->popts, subres, &rerr);
	r->out_errno = subrun.out_errno;
	for (i = 0, k = 0; i < n && subrun.log_errno != 0; i++) {
		if (!never_ran(res[i].status))
			continue;
		if (k++ == subrun.log_idx) {
			r->log_errno = subrun.log_errno;
			r->log_idx = i;
			break;
		}
	}
	if (src == TPU_E_INTERRUPTED || src == TPU_E_TERMINATED) {
		rc = src;
		*err = rerr;
	}
	sc->popts.arg = r;
	for (i = 0, k = 0; i < n; i++) {
		if (!never_ran(res[i].status))
			continue;
		sshpool_result_release(&res[i]);
		res[i] = subres[k++];
	}
	free(sub);
	free(subres);
	free(subwho);
	free(subfds);
	if (rc == TPU_E_INTERRUPTED || rc == TPU_E_TERMINATED)
		return rc;
	for (i = 0; i < n; i++) {
		nok += res[i].status == SSHPOOL_S_OK;
		nreach += !never_ran(res[i].status);
	}
	tpu_err_init(err);
	if (nok == n)
		return 0;
	return nreach == 0 ? TPU_E_UNREACHABLE : TPU_E_PARTIAL;
}

/* After a write error stopped the run: what the command returns. */
static int
output_error(const struct fanout_spec *fs, const struct fanout_rx *r,
    struct tpu_err *err)
{
	const struct fanout_who *who = &r->who[r->log_idx];

	if (retry_interrupted == SIGPIPE)
		retry_interrupted = 0;
	tpu_err_init(err);
	if (r->out_errno == EPIPE) {
		/* stdout is in error: main's final check ends quietly by
		   SIGPIPE, like any filter writing to a closed pipe */
		errno = EPIPE;
		return 0;
	}
	if (r->out_errno != 0)
		return tpu_error(err, TPU_E_IO,
		    "write error on standard output: %s",
		    strerror(r->out_errno));
	if (who->slice < 0)
		return tpu_error(err, TPU_E_IO, "cannot write %s/w%d.log: %s",
		    fs->outdir, who->worker, strerror(r->log_errno));
	return tpu_error(err, TPU_E_IO, "cannot write %s/%s-w%d.log: %s",
	    fs->outdir, who->node, who->worker, strerror(r->log_errno));
}

int
fanout_fd_room(const struct sshcmd *sc, int all_sessions, size_t files_per,
    const char *what, struct tpu_err *err)
{
	size_t inflight = sc->popts.fanout > 0 ? (size_t)sc->popts.fanout : 64;

	if (all_sessions || inflight > sc->ntargets)
		inflight = sc->ntargets;
	return fdlimit_ensure(inflight + files_per * sc->ntargets, what, err);
}

/* File descriptors for the sessions in flight and the log files. */
static int
fd_room(
    const struct sshcmd *sc, const struct fanout_spec *fs, struct tpu_err *err)
{
	char what[64];

	if (fs->outdir != NULL)
		snprintf(what, sizeof what, "--output-dir for %zu workers",
		    sc->ntargets);
	else
		snprintf(what, sizeof what, "a fan-out to %zu workers",
		    sc->ntargets);
	return fanout_fd_room(sc, 0, fs->outdir != NULL ? 1 : 0, what, err);
}

void
fanout_outcome_of(const struct sshpool_result *res, struct fanout_outcome *o)
{
	memset(o, 0, sizeof *o);
	if (res->status == SSHPOOL_S_OK ||
	    res->status == SSHPOOL_S_REMOTE_NONZERO)
		snprintf(o->what, sizeof o->what, "exit %d", res->exit_status);
	else if (res->status == SSHPOOL_S_SIGNALED)
		snprintf(o->what, sizeof o->what, "signal %s", res->signal);
	else {
		snprintf(o->what, sizeof o->what, "%s",
		    sshpool_status_name(res->status));
		o->detail = msg_of(res);
	}
	o->duration_ms = res->duration_ms;
	o->ok = res->status == SSHPOOL_S_OK;
	o->reached = !never_ran(res->status);
}

void
fanout_print_outcomes(
    const struct fanout_who *who, const struct fanout_outcome *o, size_t n)
{
	char name[128];
	size_t i;

	if (n <= FANOUT_SUMMARY_LINES) {
		for (i = 0; i < n; i++) {
			const char *d = o[i].detail != NULL ? o[i].detail : "";

			fprintf(stderr, "%s: %s%s%s",
			    fanout_who_name(&who[i], name, sizeof name),
			    o[i].what, d[0] != '\0' ? ": " : "", d);
			if (o[i].duration_ms >= 0)
				fprintf(stderr, " (%.1f s)",
				    (double)o[i].duration_ms / 1000.0);
			fputc('\n', stderr);
		}
	} else {
		struct outgroup_item *it = xcalloc(n, sizeof *it);
		struct buf b;

		for (i = 0; i < n; i++) {
			it[i].node = who[i].slice < 0 ? NULL : who[i].node;
			it[i].worker = who[i].worker;
			it[i].what = o[i].what;
			it[i].detail = o[i].detail;
		}
		buf_init(&b, BUF_NOCAP);
		(void)outgroup_format(it, n, &b);
		fprintf(stderr, "%s\n", b.data);
		buf_release(&b);
		free(it);
	}
}

void
fanout_summary(const struct fanout_who *who, const struct fanout_outcome *o,
    size_t n, const char *what, size_t nslices)
{
	size_t i, nok = 0;

	for (i = 0; i < n; i++)
		nok += o[i].ok != 0;
	fanout_print_outcomes(who, o, n);
	if (what != NULL)
		fprintf(stderr, "%s: ", what);
	fprintf(
	    stderr, "%zu of %zu worker%s succeeded", nok, n, n == 1 ? "" : "s");
	if (nslices > 0)
		fprintf(
		    stderr, " (%zu node%s)", nslices, nslices == 1 ? "" : "s");
	fputc('\n', stderr);
}

int
fanout_contract(const struct fanout_outcome *o, size_t n, const char *what,
    const char *failed, struct tpu_err *err)
{
	size_t i, nok = 0, nreach = 0;

	for (i = 0; i < n; i++) {
		nok += o[i].ok != 0;
		nreach += o[i].reached != 0;
	}
	if (nok == n)
		return 0;
	tpu_err_init(err);
	if (nreach == 0)
		return tpu_error(err, TPU_E_UNREACHABLE,
		    "%s%sno worker could be reached (%zu of %zu)",
		    what != NULL ? what : "", what != NULL ? ": " : "", n - nok,
		    n);
	return tpu_error(err, TPU_E_PARTIAL, "%s%s%zu of %zu workers %s",
	    what != NULL ? what : "", what != NULL ? ": " : "", n - nok, n,
	    failed != NULL ? failed : "failed");
}

int
fanout_run(struct tpu_ctx *ctx, struct sshcmd *sc, const struct fanout_spec *fs,
    struct tpu_err *err)
{
	struct sshpool_result *res;
	struct fanout_who *who = fanout_who_make(sc);
	struct fanout_rx r = { fs->mode, who, NULL, 0, 0, 0 };
	struct fanout_outcome *oc = NULL;
	char name[128];
	size_t i;
	int rc, saved_errno;

	if ((rc = fd_room(sc, fs, err)) != 0 ||
	    (fs->outdir != NULL &&
	        (rc = open_logs(fs->outdir, sc, who, &r.fds, err)) != 0)) {
		free(who);
		return rc;
	}
	res = fs->results != NULL ? fs->results
	                          : xcalloc(sc->ntargets, sizeof *res);
	sc->popts.command = fs->command;
	sc->popts.flags |=
	    SSHPOOL_F_LINES | (fs->fail_fast ? SSHPOOL_F_FAIL_FAST : 0);
	if (fs->mode == FANOUT_OUT_RAW && sc->ntargets == 1)
		sc->popts.flags &= ~SSHPOOL_F_LINES;
	sc->popts.command_timeout_ms = fs->timeout_s * 1000;
	sc->popts.on_output = on_output;
	sc->popts.arg = &r;
	retry_install_signals();
	sc->popts.abort = &retry_interrupted;
	if (fs->stdin_fd >= 0) {
		sc->popts.flags |= SSHPOOL_F_STDIN;
		sc->popts.stdin_fd = fs->stdin_fd;
		rc = 1; /* the holder cannot forward it */
	} else
		rc = fanout_warm_run(sc, fs, res, err);
	if (rc == 1)
		rc = sshpool_run(
		    sc->targets, sc->ntargets, &sc->popts, res, err);
	if (rc == TPU_E_USAGE)
		goto out;
	if (rc != 0 && rc != TPU_E_INTERRUPTED && rc != TPU_E_TERMINATED &&
	    r.out_errno == 0 && r.log_errno == 0 && sc->from_cache &&
	    (fs->stdin_fd < 0 || sc->ntargets == 1))
		rc = retry_fresh(ctx, sc, &r, res, rc, err);
	if (fs->mode == FANOUT_OUT_JSONL && r.out_errno == 0)
		exit_records(&r, res, sc->ntargets);
	if (r.out_errno != 0 || r.log_errno != 0) {
		rc = output_error(fs, &r, err);
		goto out;
	}
	oc = xcalloc(sc->ntargets > 0 ? sc->ntargets : 1, sizeof *oc);
	for (i = 0; i < sc->ntargets; i++)
		fanout_outcome_of(&res[i], &oc[i]);
	if (sc->ntargets > 1 || fs->what != NULL)
		fanout_summary(
		    who, oc, sc->ntargets, fs->what, sc->qr ? sc->nslices : 0);
	if (rc == TPU_E_INTERRUPTED || rc == TPU_E_TERMINATED)
		goto out;
	if (sc->ntargets == 1 && fs->what == NULL) {
		/* One worker: its own status. */
		tpu_err_init(err);
		switch (res[0].status) {
		case SSHPOOL_S_OK:
			rc = 0;
			break;
		case SSHPOOL_S_REMOTE_NONZERO:
			rc = res[0].exit_status;
			break;
		case SSHPOOL_S_SIGNALED:
			fprintf(stderr, "%s: %s: killed by signal %s\n",
			    "tpuctl",
			    fanout_who_name(&who[0], name, sizeof name),
			    res[0].signal);
			rc = fanout_signal_status(res[0].signal);
			break;
		case SSHPOOL_S_TIMEOUT:
			rc = tpu_error(err, TPU_E_TIMEOUT,
			    "%s: --timeout of %d s reached",
			    fanout_who_name(&who[0], name, sizeof name),
			    fs->timeout_s);
			break;
		default:
			rc = tpu_error(err,
			    sshpool_status_unreachable(res[0].status)
			        ? TPU_E_UNREACHABLE
			        : TPU_E_PARTIAL,
			    "%s",
			    res[0].msg[0] != '\0'
			        ? res[0].msg
			        : sshpool_status_name(res[0].status));
		}
	} else if (rc == TPU_E_PARTIAL || rc == TPU_E_UNREACHABLE)
		rc = fanout_contract(
		    oc, sc->ntargets, fs->what, fs->failed, err);
out:
	saved_errno = errno; /* EPIPE for main, see output_error */
	for (i = 0; i < sc->ntargets; i++) {
		if (fs->results == NULL)
			sshpool_result_release(&res[i]);
		if (r.fds != NULL)
			close(r.fds[i]);
	}
	if (fs->results == NULL)
		free(res);
	free(oc);
	free(r.fds);
	free(who);
	sc->popts.flags &= ~SSHPOOL_F_STDIN;
	sc->popts.on_output = NULL;
	sc->popts.arg = NULL;
	sc->popts.abort = NULL;
	errno = saved_errno;
	return rc;
}
