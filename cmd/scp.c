/*
 * "tpuctl scp [options] SRC... DST": copy files to or from TPU workers
 * over SFTP (src/sshxfer.h).  NODE:path on exactly one side.  Uploads go
 * to every selected worker in parallel; a download from several workers
 * lands in DST/w<N>/.  Exit status: 0, 8 when some workers failed, 9
 * when none could be reached; with one worker, that worker's error.
 */
#include <sys/stat.h>

#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "buf.h"
#include "cmd.h"
#include "progress.h"
#include "retry.h"
#include "sshcmd.h"
#include "sshxfer.h"
#include "tpucmd.h"
#include "util.h"
#include "xmalloc.h"

/*
 * The one line a successful copy ends with, on stderr: "Copied 3 files
 * (1.2 KiB) to 4 workers in 0.5 s" (sizes summed over the workers).
 */
static void
summary(int upload, const struct sshcmd *sc, const struct sshxfer_result *res,
    int64_t el)
{
	char size[32];
	size_t w, files = 0;
	int64_t bytes = 0;

	for (w = 0; w < sc->ntargets; w++) {
		files += res[w].files;
		bytes += res[w].bytes;
	}
	tpu_human_size((double)bytes, size, sizeof size);
	if (sc->ntargets == 1)
		fprintf(stderr,
		    "Copied %zu file%s (%s) %s worker %d in %.1f s\n", files,
		    files == 1 ? "" : "s", size, upload ? "to" : "from",
		    sc->targets[0].worker, (double)el / 1000.0);
	else
		fprintf(stderr,
		    "Copied %zu file%s (%s) %s %zu workers in %.1f s\n", files,
		    files == 1 ? "" : "s", size, upload ? "to" : "from",
		    sc->ntargets, (double)el / 1000.0);
}

/*
 * Progress on a terminal, as scp(1): one line on stderr redrawn at most
 * every 200 ms (bytes so far over every worker, the rate, and for an
 * upload the percentage of sizes x workers and the time left); nothing
 * when stderr is not a terminal or with -q.
 */
struct scp_prog {
	struct progress p; /* the bytes, under p.mu */
	int64_t total;     /* 0 when unknown */
	int drawn;         /* a line is on the screen */
};

static void
prog_draw(void *arg, int final)
{
	struct scp_prog *pr = arg;
	double rate = progress_rate(&pr->p, tpu_now_ms());
	char d[32], t[32], r[32];

	tpu_human_size((double)pr->p.done, d, sizeof d);
	tpu_human_size(rate, r, sizeof r);
	if (pr->total > 0) {
		double left =
		    rate > 0 ? (double)(pr->total - pr->p.done) / rate : 0;

		tpu_human_size((double)pr->total, t, sizeof t);
		fprintf(stderr, "\r\033[K%3d%% %s / %s  %s/s  ETA %ds",
		    (int)(pr->p.done * 100 / pr->total), d, t, r,
		    final ? 0 : (int)(left + 0.5));
	} else
		fprintf(stderr, "\r\033[K%s  %s/s", d, r);
	if (final)
		fputc('\n', stderr);
	fflush(stderr);
	pr->drawn = 1;
}

static void
prog_bytes(void *arg, int64_t n)
{
	struct scp_prog *pr = arg;

	progress_add(&pr->p, n);
}

/* An upload's bytes: the local sources' sizes times the workers. */
static int64_t
upload_total(const struct sshxfer_spec *spec, size_t nworkers)
{
	struct sshxfer_list l;
	struct tpu_err e;
	int64_t sum = 0;
	struct stat st;
	size_t i;

	memset(&l, 0, sizeof l);
	tpu_err_init(&e);
	if (sshxfer_list_local(spec->srcs, spec->nsrc, spec->recurse, &l, &e) ==
	    0)
		for (i = 0; i < l.n; i++)
			if (!l.items[i].is_dir &&
			    stat(l.items[i].src, &st) == 0)
				sum += (int64_t)st.st_size;
	sshxfer_list_release(&l);
	return sum * (int64_t)nworkers;
}

/* "worker N: msg" -> "msg" (the "[wN]" line names the worker). */
static const char *
own_msg(const char *msg, int worker)
{
	char w[32];
	size_t n = (size_t)snprintf(w, sizeof w, "worker %d: ", worker);

	return strncmp(msg, w, n) == 0 ? msg + n : msg;
}

static int
scp_exec(struct tpu_ctx *ctx, int argc, char **argv, struct tpu_err *err)
{
	static const struct option opts[] = {
		SSHCMD_LONG_OPTIONS,
		SSHCMD_GCLOUD_OPTIONS,
		{ "recurse", no_argument, NULL, 'r' },
		{ NULL, 0, NULL, 0 },
	};
	struct sshcmd_opts so;
	struct sshxfer_operand *ops = NULL;
	struct sshxfer_result *res = NULL;
	struct sshxfer_spec spec;
	struct sshcmd sc;
	struct scp_prog prog;
	const char **paths = NULL, *node = NULL;
	int ch, rc = 0, recurse = 0, nops, i, upload, prepared = 0;
	size_t w;
	int64_t t0 = 0;

	sshcmd_opts_init(&so);
	while ((ch = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		if (ch == 'r') {
			recurse = 1;
			continue;
		}
		if ((rc = sshcmd_opt(&so, ch, optarg, err)) < 0)
			return rc;
		if (rc == 0)
			return cmd_bad_option(argv, ch, err);
	}
	nops = argc - optind;
	if ((rc = cmd_check_operands(
	         &cmd_scp_entry, nops, argv + optind, err)) != 0)
		return rc;
	ops = xcalloc((size_t)nops, sizeof *ops);
	for (i = 0; i < nops; i++)
		if ((rc = sshxfer_parse_operand(
		         argv[optind + i], &ops[i], err)) != 0)
			goto out;
	upload = ops[nops - 1].node != NULL;
	for (i = 0; i < nops - 1; i++)
		if ((ops[i].node != NULL) == upload) {
			rc = tpu_error(err, TPU_E_USAGE,
			    "'%s': NODE:path must be on exactly one side "
			    "(the sources or the destination)",
			    argv[optind + i]);
			goto out;
		}
	node = upload ? ops[nops - 1].node : ops[0].node;
	if (!upload) /* dst/w<N>/ would mix the slices */
		so.one_slice = "a download reads one slice (give --node N)";
	else /* a queued resource's name: every slice */
		so.default_nodes = "all";
	for (i = 0; i < nops; i++)
		if (ops[i].node != NULL && strcmp(ops[i].node, node) != 0) {
			rc = tpu_error(err, TPU_E_USAGE,
			    "'%s': all remote operands must name the same "
			    "node ('%s')",
			    argv[optind + i], node);
			goto out;
		}
	paths = xcalloc((size_t)nops, sizeof *paths);
	for (i = 0; i < nops; i++)
		paths[i] = ops[i].path;
	/* tpuctl's global --dry-run (taken anywhere on the line) is
	 * gcloud's --dry-run here: reads only, nothing sent */
	so.dry_run |= ctx->dry_run;
	if ((rc = sshcmd_prepare(ctx, node, &so, &sc, err)) != 0)
		goto out;
	prepared = 1;
	if (so.dry_run) {
		struct buf b;

		buf_init(&b, BUF_NOCAP);
		buf_puts(&b, upload ? "would upload" : "would download");
		for (i = 0; i < nops - 1; i++)
			buf_printf(&b, " %s", paths[i]);
		if (upload || sc.ntargets == 1)
			buf_printf(&b, " to %s", paths[nops - 1]);
		sshcmd_print_dry_run(&sc, b.data,
		    upload || sc.ntargets == 1 ? NULL : paths[nops - 1]);
		buf_release(&b);
		goto out;
	}
	memset(&spec, 0, sizeof spec);
	spec.upload = upload;
	spec.recurse = recurse;
	spec.srcs = paths;
	spec.nsrc = (size_t)nops - 1;
	spec.dst = paths[nops - 1];
	spec.per_worker_dirs = !upload && sc.ntargets > 1;
	spec.popts = &sc.popts;
	spec.abort = &retry_interrupted;
	if (spec.per_worker_dirs && mkdir(spec.dst, 0777) != 0 &&
	    errno != EEXIST) {
		rc = tpu_error(err, TPU_E_IO, "cannot create '%s': %s",
		    spec.dst, strerror(errno));
		goto out;
	}
	retry_install_signals();
	t0 = tpu_now_ms();
	memset(&prog, 0, sizeof prog);
	progress_init(&prog.p, t0, 200, prog_draw, &prog);
	if (!ctx->quiet && isatty(STDERR_FILENO)) {
		spec.on_bytes = prog_bytes;
		spec.arg = &prog;
		if (upload)
			prog.total = upload_total(&spec, sc.ntargets);
	}
	res = xcalloc(sc.ntargets, sizeof *res);
	rc = sshxfer_run(&spec, sc.targets, sc.ntargets, res, err);
	if (rc == TPU_E_UNREACHABLE && sc.ntargets > 0 &&
	    sshcmd_refresh(ctx, &sc, err) == 1)
		rc = sshxfer_run(&spec, sc.targets, sc.ntargets, res, err);
	/* the last state (also of a copy quicker than one redraw, as
	   scp(1) ends every file's line), then the lines below */
	if (spec.on_bytes != NULL && (prog.drawn || prog.p.done > 0))
		prog_draw(&prog, 1);
	progress_release(&prog.p);
	if (sc.ntargets > 1)
		for (w = 0; w < sc.ntargets; w++) {
			if (res[w].rc != 0)
				fprintf(stderr, "[w%d] error: %s\n",
				    sc.targets[w].worker,
				    own_msg(
				        res[w].err.msg, sc.targets[w].worker));
			else if (res[w].skipped > 0)
				fprintf(stderr,
				    "[w%d] %zu symbolic links or special "
				    "files skipped\n",
				    sc.targets[w].worker, res[w].skipped);
		}
	else if (rc == 0 && res[0].skipped > 0)
		fprintf(stderr,
		    "tpuctl: %zu symbolic links or special files skipped\n",
		    res[0].skipped);
	if (rc == 0 && !ctx->quiet)
		summary(upload, &sc, res, tpu_now_ms() - t0);
out:
	if (prepared)
		sshcmd_release(&sc);
	for (i = 0; ops != NULL && i < nops; i++)
		sshxfer_operand_release(&ops[i]);
	free(ops);
	free(paths);
	free(res);
	return rc;
}

const struct cmd_entry cmd_scp_entry = {
	.name = "scp",
	.alias = NULL,
	.usage = "scp [--recurse] " SSHCMD_USAGE_MANY SSHCMD_USAGE_GCLOUD
	         " source ... destination",
	.summary = "copy files to or from TPU workers over SFTP",
	.min_args = 2,
	.max_args = -1,
	.flags = CMD_NEEDS_AUTH | CMD_NEEDS_ZONE | CMD_SSH,
	.exec = scp_exec,
};
