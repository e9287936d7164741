/*
 * "tpuctl cancel JOB": SIGTERM to the job's process group on every
 * worker, SIGKILL after the grace period to whatever of it is left,
 * then the final states recorded and shown: nothing of the job keeps
 * running.  A worker whose end is recorded already (exited N, killed by
 * SIG: jobs_state_known) is not contacted and keeps that state, even
 * when it cannot be reached now.  The exit contract is the fan-out's
 * (fanout_contract): 0 when the job has ended on every worker, 8 when
 * some could not be cancelled (lost), 9 when no worker to cancel could
 * be reached.
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd.h"
#include "config.h"
#include "fanout.h"
#include "fwcmd.h"
#include "jobbucket.h"
#include "jobcmd.h"
#include "jobs.h"
#include "util.h"
#include "xmalloc.h"

enum {
	OPT_GRACE = 0x300,
};

/*
 * A submitted job whose queued resource is not ACTIVE yet has not
 * started anywhere: cancelling it is deleting the queued resource
 * (--force: with any node it has), so it never starts.
 */
static int
cancel_queued(struct tpu_ctx *ctx, struct jobcmd *jc, struct tpu_err *err)
{
	char a0[] = "queued-resources", a1[] = "delete", a2[] = "--force";
	char a3[] = "--";
	char *v[] = { a0, a1, a2, a3, jc->spec.slice, NULL };
	struct tpu_err e;
	int rc, quiet = ctx->quiet, i;

	fprintf(stderr,
	    "job %s has not started (%s): deleting its queued resource "
	    "'%s'\n",
	    jc->spec.name, err->msg, jc->spec.slice);
	tpu_err_init(err);
	/* the user asked for it: no second question */
	ctx->quiet = 1;
	rc = cmd_dispatch(NULL, ctx, 5, v, err);
	ctx->quiet = quiet;
	if (rc != 0)
		return rc;
	for (i = 0; i < jc->spec.nslices * jc->spec.nworkers; i++)
		jc->states[i].kind = JOBS_MISSING;
	tpu_err_init(&e);
	jobcmd_save(jc, &e);
	fprintf(stderr, "job %s cancelled before it started\n", jc->spec.name);
	return 0;
}

/*
 * A submitted job whose slice is gone (delete-after deleted it once the
 * job had ended): nothing is left to signal.  Its states are read from
 * its bucket (a worker whose end is not there is lost) and shown; the
 * contract is the fan-out's: 0 when the job has ended on every worker
 * (nothing to cancel), 8 when some worker's end is not known (lost), 9
 * when no worker's state is known at all (none ever reported).
 */
static int
cancel_gone(struct tpu_ctx *ctx, struct jobcmd *jc, struct tpu_err *err)
{
	struct fanout_outcome *oc;
	struct tpu_err e;
	size_t n = (size_t)jc->spec.nslices * (size_t)jc->spec.nworkers, i;
	size_t found = 0, nended = 0;
	char *what;
	int rc;

	tpu_err_init(&e);
	if ((rc = jobbucket_sync(ctx, jc, 1, &found, &e)) != 0) {
		*err = e;
		return tpu_error_prefix(
		    err, "job %s: its slice is gone", jc->spec.name);
	}
	fprintf(stderr,
	    "job %s: its slice is gone: nothing left to cancel (states from "
	    "%s)\n",
	    jc->spec.name, jc->spec.log_url);
	oc = xcalloc(n > 0 ? n : 1, sizeof *oc);
	for (i = 0; i < n; i++) {
		const struct jobs_state *st = &jc->states[i];
		char b[64];

		oc[i].ok = jobs_state_final(st) && st->kind != JOBS_LOST &&
		           st->kind != JOBS_MISSING;
		/* its state came from somewhere: lost is 8, not 9 */
		oc[i].reached = st->kind != JOBS_QUEUED &&
		                st->kind != JOBS_MISSING &&
		                st->kind != JOBS_UNKNOWN;
		nended += oc[i].ok != 0;
		if (jc->spec.nslices > 1)
			fprintf(stderr, "slice %zu worker %zu: %s\n",
			    i / (size_t)jc->spec.nworkers,
			    i % (size_t)jc->spec.nworkers,
			    jobs_state_str(st, b, sizeof b));
		else
			fprintf(stderr, "worker %zu: %s\n", i,
			    jobs_state_str(st, b, sizeof b));
	}
	fprintf(stderr, "job %s: ended on %zu of %zu workers\n", jc->spec.name,
	    nended, n);
	what = xasprintf("job %s", jc->spec.name);
	rc = fanout_contract(oc, n, what, "could not be cancelled", err);
	free(what);
	free(oc);
	return rc;
}

static int
cancel_exec(struct tpu_ctx *ctx, int argc, char **argv, struct tpu_err *err)
{
	static const struct option opts[] = {
		{ "grace", required_argument, NULL, OPT_GRACE },
		{ NULL, 0, NULL, 0 },
	};
	struct sshcmd_opts so;
	struct jobcmd jc;
	struct fanout_outcome *oc;
	unsigned char *known;
	long long grace = 10;
	size_t i, n, nended = 0;
	int ch, rc;

	jobcmd_init(&jc);
	sshcmd_opts_init(&so);
	while ((ch = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (ch) {
		case OPT_GRACE:
			if ((rc = tpu_parse_duration(
			         "--grace", optarg, &grace, err)) != 0)
				goto out;
			if (grace > 3600) {
				rc = tpu_error(err, TPU_E_USAGE,
				    "--grace '%s': at most 1 hour", optarg);
				goto out;
			}
			break;
		default:
			rc = cmd_bad_option(argv, ch, err);
			goto out;
		}
	}
	argc -= optind;
	argv += optind;
	if ((rc = cmd_want_operands(argc, argv, 1, 1, err)) != 0)
		goto out;
	if ((rc = jobcmd_load(&jc, argv[0], err)) != 0)
		goto out;
	so.workers = "all";
	if (ctx->dry_run) { /* the slice of its record; nothing signalled */
		char *what = xasprintf("would cancel job %s (SIGTERM, SIGKILL "
		                       "after %llds)",
		    jc.spec.name, grace);

		if (jc.spec.zone != NULL && jc.spec.zone[0] != '\0' &&
		    config_layer_of(ctx->cfg, "compute/zone") != CONFIG_FLAG)
			config_set_flag(ctx->cfg, "compute/zone", jc.spec.zone);
		so.default_nodes = "all";
		rc = fwcmd_dry_run(ctx, jc.spec.slice, &so, what, err);
		free(what);
		goto out;
	}
	if ((rc = jobcmd_connect(ctx, &jc, &so, err)) == TPU_E_PRECONDITION &&
	    jc.spec.submitted) {
		rc = cancel_queued(ctx, &jc, err);
		goto out;
	}
	if (rc == TPU_E_NOTFOUND && jc.spec.submitted &&
	    jc.spec.log_url != NULL) {
		rc = cancel_gone(ctx, &jc, err);
		goto out;
	}
	if (rc != 0)
		goto out;
	n = jc.sc.ntargets;
	known = xcalloc(n > 0 ? n : 1, 1);
	/* ask every worker but those whose end is recorded (jobcmd_cancel
	   leaves them alone: not contacted, their state kept) */
	for (i = 0; i < n; i++) {
		known[i] = jobs_state_known(jobcmd_state(&jc, i));
		if (!known[i])
			jobcmd_state(&jc, i)->kind = JOBS_RUNNING;
	}
	jobcmd_cancel(&jc, (int)grace);
	{
		struct tpu_err e;

		tpu_err_init(&e);
		jobcmd_save(&jc, &e);
	}
	jobcmd_print_states(&jc);
	oc = xcalloc(n > 0 ? n : 1, sizeof *oc);
	for (i = 0; i < n; i++) {
		const struct jobs_state *st = jobcmd_state(&jc, i);

		oc[i].ok = jobs_state_final(st) && st->kind != JOBS_LOST;
		/* a recorded end needs no answer: not unreachable */
		oc[i].reached = known[i] || jc.reached[i];
		nended += oc[i].ok != 0;
	}
	fprintf(stderr, "job %s: ended on %zu of %zu workers\n", jc.spec.name,
	    nended, n);
	{
		char *what = xasprintf("job %s", jc.spec.name);

		rc =
		    fanout_contract(oc, n, what, "could not be cancelled", err);
		free(what);
	}
	free(oc);
	free(known);
out:
	jobcmd_release(&jc);
	return rc;
}

const struct cmd_entry cmd_cancel_entry = {
	.name = "cancel",
	.alias = NULL,
	.usage = "cancel [--grace duration] job",
	.summary = "stop a job on every worker",
	.min_args = 1,
	.max_args = -1,
	.flags = CMD_NEEDS_AUTH | CMD_NEEDS_ZONE | CMD_SSH,
	.exec = cancel_exec,
};
