/*
 * "tpuctl ssh NAME": an interactive shell on one worker, or a command on
 * any set of workers through the fan-out engine (src/sshpool.h), with
 * per-worker prefixed output, a summary and the exit contract of
 * DESIGN.md: one worker gives its own status; many give 0 (all ok),
 * 8 (partial) or 9 (none reachable).  NAME is a node ("[w3]" prefixes)
 * or a queued resource whose slices --node selects ("[s1/w3]").
 */
#include <sys/stat.h>

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cmd.h"
#include "log.h"
#include "shquote.h"
#include "sshcmd.h"
#include "sshsel.h"
#include "util.h"
#include "xmalloc.h"

enum ssh_output { OUT_PREFIX, OUT_RAW, OUT_JSONL };

enum {
	OPT_COMMAND = 0x300,
	OPT_TIMEOUT,
	OPT_OUTPUT,
	OPT_OUTPUT_DIR,
	OPT_FAIL_FAST,
};

/* Who a target is, for prefixes, jsonl and the summary. */
struct ssh_who {
	int slice; /* slice index; -1 when the name is a node */
	int worker;
	char node[64]; /* node id */
};

struct ssh_run {
	enum ssh_output mode;
	const struct ssh_who *who; /* per target */
	int *fds;                  /* per target, with --output-dir */
};

static volatile sig_atomic_t ssh_abort, ssh_winch;

static void
on_signal(int sig)
{
	if (sig == SIGWINCH)
		ssh_winch = 1;
	else
		ssh_abort = 1;
}

static void
write_all(int fd, const char *p, size_t n)
{
	while (n > 0) {
		ssize_t w = write(fd, p, n);

		if (w < 0) {
			if (errno == EINTR)
				continue;
			return;
		}
		p += w;
		n -= (size_t)w;
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

static void
on_output(
    void *arg, size_t idx, int stream, const char *data, size_t len, int flags)
{
	struct ssh_run *r = arg;
	const struct ssh_who *who = &r->who[idx];
	int fd = stream == 2 ? 2 : 1;
	struct buf b;
	char pre[48];

	if (r->fds != NULL)
		fd = r->fds[idx];
	buf_init(&b, 0);
	switch (r->mode) {
	case OUT_RAW:
		buf_append(&b, data, len);
		if (flags & SSHPOOL_OUT_EOL)
			addc(&b, '\n');
		break;
	case OUT_PREFIX:
		buf_puts(&b,
		    sshsel_prefix(pre, sizeof pre, who->slice, who->worker));
		buf_append(&b, data, len);
		addc(&b, '\n');
		break;
	case OUT_JSONL:
		buf_puts(&b, "{\"node\":");
		json_str(&b, who->node, strlen(who->node));
		if (who->slice >= 0)
			buf_printf(&b, ",\"slice\":%d", who->slice);
		buf_printf(&b, ",\"worker\":%d,\"stream\":", who->worker);
		buf_puts(&b, stream == 2 ? "\"stderr\"" : "\"stdout\"");
		buf_puts(&b, ",\"line\":");
		json_str(&b, data, len);
		buf_puts(&b,
		    (flags & SSHPOOL_OUT_EOL) ? "}\n" : ",\"eol\":false}\n");
		if (r->fds == NULL)
			fd = 1;
		break;
	}
	write_all(fd, b.data, b.len);
	buf_release(&b);
}

/*
 * "exit 3", "signal KILL", or the failure's name and message; the
 * summary line names the worker already, so the message's own "worker
 * N: " goes.
 */
static void
describe_result(const struct sshpool_result *res, char *out, size_t n)
{
	const char *m = res->msg;
	size_t d;

	if (strncmp(m, "worker ", 7) == 0 &&
	    (d = strspn(m + 7, "0123456789")) > 0 &&
	    strncmp(m + 7 + d, ": ", 2) == 0)
		m += 7 + d + 2;
	if (res->status == SSHPOOL_S_OK ||
	    res->status == SSHPOOL_S_REMOTE_NONZERO)
		snprintf(out, n, "exit %d", res->exit_status);
	else if (res->status == SSHPOOL_S_SIGNALED)
		snprintf(out, n, "signal %s", res->signal);
	else
		snprintf(out, n, "%s%s%s", sshpool_status_name(res->status),
		    m[0] != '\0' ? ": " : "", m);
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

/* "worker 3", or "node ms-1 (slice 1) worker 3" in a queued resource. */
static const char *
who_name(const struct ssh_who *who, char *buf, size_t size)
{
	if (who->slice < 0)
		snprintf(buf, size, "worker %d", who->worker);
	else
		snprintf(buf, size, "node %s (slice %d) worker %d", who->node,
		    who->slice, who->worker);
	return buf;
}

static struct ssh_who *
who_make(const struct sshcmd *sc)
{
	struct ssh_who *who = xcalloc(sc->ntargets, sizeof *who);
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
open_logs(const char *dir, const struct sshcmd *sc, const struct ssh_who *who,
    int **fdsp, struct tpu_err *err)
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
retry_fresh(struct tpu_ctx *ctx, struct sshcmd *sc, struct ssh_run *r,
    struct sshpool_result *res, int rc, struct tpu_err *err)
{
	struct sshpool_target *sub;
	struct sshpool_result *subres;
	struct ssh_who *subwho;
	struct ssh_run subrun = *r;
	struct tpu_err rerr;
	size_t i, k, n = sc->ntargets, nsub = 0, nok = 0, nreach = 0;
	int *subfds = NULL;

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
	if (sshpool_run(sub, nsub, &sc->popts, subres, &rerr) ==
	    TPU_E_INTERRUPTED)
		rc = TPU_E_INTERRUPTED;
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
	if (rc == TPU_E_INTERRUPTED)
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

static int
run_command(struct tpu_ctx *ctx, struct sshcmd *sc, const char *command,
    enum ssh_output mode, const char *outdir, int timeout_s, int fail_fast,
    struct tpu_err *err)
{
	struct sshpool_result *res;
	struct ssh_who *who = who_make(sc);
	struct ssh_run r = { mode, who, NULL };
	char name[128];
	size_t i;
	int rc, nok = 0;

	if (outdir != NULL &&
	    (rc = open_logs(outdir, sc, who, &r.fds, err)) != 0) {
		free(who);
		return rc;
	}
	res = xcalloc(sc->ntargets, sizeof *res);
	sc->popts.command = command;
	sc->popts.flags |=
	    SSHPOOL_F_LINES | (fail_fast ? SSHPOOL_F_FAIL_FAST : 0);
	if (mode == OUT_RAW && sc->ntargets == 1)
		sc->popts.flags &= ~SSHPOOL_F_LINES;
	sc->popts.command_timeout_ms = timeout_s * 1000;
	sc->popts.on_output = on_output;
	sc->popts.arg = &r;
	sc->popts.abort = &ssh_abort;
	rc = sshpool_run(sc->targets, sc->ntargets, &sc->popts, res, err);
	if (rc == TPU_E_USAGE)
		goto out;
	if (rc != 0 && rc != TPU_E_INTERRUPTED && sc->from_cache)
		rc = retry_fresh(ctx, sc, &r, res, rc, err);
	for (i = 0; i < sc->ntargets; i++)
		nok += res[i].status == SSHPOOL_S_OK;
	if (sc->ntargets > 1) {
		for (i = 0; i < sc->ntargets; i++) {
			char what[640];

			describe_result(&res[i], what, sizeof what);
			fprintf(stderr, "%s: %s (%.1f s)\n",
			    who_name(&who[i], name, sizeof name), what,
			    (double)res[i].duration_ms / 1000.0);
		}
		fprintf(
		    stderr, "%d of %zu workers succeeded", nok, sc->ntargets);
		if (sc->qr)
			fprintf(stderr, " (%zu node%s)", sc->nslices,
			    sc->nslices == 1 ? "" : "s");
		fputc('\n', stderr);
	}
	if (rc == TPU_E_INTERRUPTED)
		goto out;
	if (sc->ntargets == 1) {
		/* One worker: its own status. */
		tpu_err_init(err);
		switch (res[0].status) {
		case SSHPOOL_S_OK:
			rc = 0;
			break;
		case SSHPOOL_S_REMOTE_NONZERO:
			rc = res[0].exit_status;
			break;
		case SSHPOOL_S_SIGNALED: {
			int s = signal_number(res[0].signal);

			fprintf(stderr, "%s: %s: killed by signal %s\n",
			    "tpuctl", who_name(&who[0], name, sizeof name),
			    res[0].signal);
			rc = s > 0 ? 128 + s : 255;
			break;
		}
		case SSHPOOL_S_TIMEOUT:
			rc = tpu_error(err, TPU_E_TIMEOUT,
			    "%s: --timeout of %d s reached",
			    who_name(&who[0], name, sizeof name), timeout_s);
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
	} else if (rc == TPU_E_PARTIAL || rc == TPU_E_UNREACHABLE) {
		tpu_err_init(err);
		tpu_error(err, rc,
		    rc == TPU_E_PARTIAL
		        ? "%zu of %zu workers failed"
		        : "no worker could be reached (%zu of %zu)",
		    sc->ntargets - (size_t)nok, sc->ntargets);
	}
out:
	for (i = 0; i < sc->ntargets; i++) {
		sshpool_result_release(&res[i]);
		if (r.fds != NULL)
			close(r.fds[i]);
	}
	free(res);
	free(r.fds);
	free(who);
	return rc;
}

static int
run_shell(struct sshcmd *sc, struct tpu_err *err)
{
	struct sshpool_conn conn;
	struct sshpool_result res;
	struct sshpool_shell_opts so;
	char signame[32] = "";
	int rc, status = -1;

	memset(&res, 0, sizeof res);
	memset(&so, 0, sizeof so);
	rc = sshpool_connect(&sc->targets[0], &sc->popts, &conn, &res, err);
	sshpool_result_release(&res);
	if (rc != 0)
		return rc;
	so.term = getenv("TERM");
	so.no_pty = !isatty(0);
	so.in_fd = 0;
	so.out_fd = 1;
	so.err_fd = 2;
	so.winch = &ssh_winch;
	so.abort = &ssh_abort;
	rc = sshpool_shell(&conn, &so, &status, signame, err);
	sshpool_conn_close(&conn);
	if (rc != 0)
		return rc;
	if (status < 0) {
		int s = signal_number(signame);

		return s > 0 ? 128 + s : 255;
	}
	return status;
}

static int
ssh_exec(struct tpu_ctx *ctx, int argc, char **argv, struct tpu_err *err)
{
	static const struct option opts[] = {
		SSHCMD_LONG_OPTIONS,
		{ "command", required_argument, NULL, OPT_COMMAND },
		{ "timeout", required_argument, NULL, OPT_TIMEOUT },
		{ "output", required_argument, NULL, OPT_OUTPUT },
		{ "output-dir", required_argument, NULL, OPT_OUTPUT_DIR },
		{ "fail-fast", no_argument, NULL, OPT_FAIL_FAST },
		{ NULL, 0, NULL, 0 },
	};
	struct sshcmd_opts so;
	struct sshcmd sc;
	struct sigaction sa, old_int, old_term, old_winch;
	enum ssh_output mode = OUT_PREFIX;
	const char *command = NULL, *outdir = NULL;
	char *built = NULL;
	long long timeout_s = 0;
	int ch, rc, fail_fast = 0;

	sshcmd_opts_init(&so);
	while ((ch = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		if ((rc = sshcmd_opt(&so, ch, optarg, err)) < 0)
			return rc;
		if (rc == 1)
			continue;
		switch (ch) {
		case OPT_COMMAND:
			command = optarg;
			break;
		case OPT_TIMEOUT:
			if ((rc = tpu_parse_duration(
			         "--timeout", optarg, &timeout_s, err)) != 0)
				return rc;
			break;
		case OPT_OUTPUT:
			if (strcmp(optarg, "prefix") == 0)
				mode = OUT_PREFIX;
			else if (strcmp(optarg, "raw") == 0)
				mode = OUT_RAW;
			else if (strcmp(optarg, "jsonl") == 0)
				mode = OUT_JSONL;
			else
				return tpu_error(err, TPU_E_USAGE,
				    "--output '%s': expected prefix, raw or "
				    "jsonl",
				    optarg);
			break;
		case OPT_OUTPUT_DIR:
			outdir = optarg;
			break;
		case OPT_FAIL_FAST:
			fail_fast = 1;
			break;
		default:
			return cmd_bad_option(argv, ch, err);
		}
	}
	argc -= optind;
	argv += optind;
	if (argc < 1) {
		cmd_want_usage();
		return tpu_error(err, TPU_E_USAGE, "missing operand");
	}
	/* The node may come before options: take the rest after it. */
	if (argc > 1) {
		int i = 1;

		if (strcmp(argv[1], "--") == 0)
			i = 2;
		if (command != NULL)
			return tpu_error(err, TPU_E_USAGE,
			    "give the remote command either with --command or "
			    "after --, not both");
		if (i < argc &&
		    (rc = shquote_argv(argc - i, argv + i, &built, err)) != 0)
			return rc;
		command = built;
	}
	if (timeout_s > 24 * 3600) {
		free(built);
		return tpu_error(err, TPU_E_USAGE,
		    "--timeout: at most 24 hours for a remote command");
	}
	if (command != NULL) /* a queued resource's name: every slice */
		so.default_nodes = "all";
	if ((rc = sshcmd_prepare(ctx, argv[0], &so, &sc, err)) != 0) {
		free(built);
		return rc;
	}
	if (command == NULL && sc.ntargets != 1) {
		rc = tpu_error(err, TPU_E_USAGE,
		    "an interactive shell needs exactly one worker (%zu "
		    "selected): give a command after --",
		    sc.ntargets);
		goto out;
	}
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = on_signal;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, &old_int);
	sigaction(SIGTERM, &sa, &old_term);
	sigaction(SIGWINCH, &sa, &old_winch);
	if (command == NULL)
		rc = run_shell(&sc, err);
	else
		rc = run_command(ctx, &sc, command, mode, outdir,
		    (int)timeout_s, fail_fast, err);
	sigaction(SIGINT, &old_int, NULL);
	sigaction(SIGTERM, &old_term, NULL);
	sigaction(SIGWINCH, &old_winch, NULL);
	if (rc == TPU_E_INTERRUPTED && err->msg[0] == '\0')
		tpu_error(err, rc, "interrupted");
out:
	sshcmd_release(&sc);
	free(built);
	return rc;
}

const struct cmd_entry cmd_ssh_entry = {
	.name = "ssh",
	.alias = NULL,
	.usage =
	    "ssh [--zone zone] [--node all|0|0,2|0-3|node-id] "
	    "[--worker 0|all|1,3|0-7] [--internal-ip] "
	    "[--fanout n] [--timeout duration] [--output prefix|raw|jsonl] "
	    "[--output-dir dir] [--fail-fast] [--command string] "
	    "[--ssh-key-file file] [--strict-host-key-checking yes|no] "
	    "[--connect-timeout seconds] name [-- command ...]",
	.summary = "run a command or a shell on a node's workers over SSH",
	.min_args = 1,
	.max_args = -1,
	.flags = CMD_NEEDS_AUTH | CMD_NEEDS_ZONE | CMD_SSH,
	.exec = ssh_exec,
};
