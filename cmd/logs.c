/*
 * "tpuctl logs JOB": a job's output, from the local copy first, then
 * what the workers wrote since (fetched from the byte offsets the local
 * copy ends at, so every line is shown once); with --follow, until the
 * job has ended on every selected worker, then the per-worker summary and
 * the job's exit contract (0 / 8 / 9).  Ctrl-C stops the following only.
 * When the slice is gone the local copy is shown alone.  A stdout that
 * cannot be written stops the following (the job goes on): quietly by
 * SIGPIPE for a closed pipe, as the ssh fan-out (cmd/fanout.c).
 * --timeout bounds the following (and a submitted job's wait for its
 * start): exit 124, the job goes on.
 */
#include <sys/time.h>

#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd.h"
#include "jobbucket.h"
#include "jobcmd.h"
#include "log.h"
#include "sshsel.h"
#include "submit.h"
#include "util.h"
#include "xmalloc.h"

enum {
	OPT_FOLLOW = 0x300,
	OPT_SINCE,
	OPT_OUTPUT,
	OPT_TIMEOUT,
};

static volatile sig_atomic_t logs_abort;
static volatile sig_atomic_t logs_signal;
static volatile sig_atomic_t logs_timed_out;

static void
on_signal(int sig)
{
	logs_abort = 1;
	logs_signal = sig;
}

/* --timeout: stops whatever is under way (API wait, SSH round) as
   Ctrl-C does, told apart by logs_timed_out */
static void
on_alarm(int sig)
{
	logs_timed_out = 1;
	logs_signal = sig;
	logs_abort = 1;
}

static int
timed_out(const struct jobcmd *jc, struct tpu_err *err)
{
	tpu_err_init(err);
	return tpu_error(err, TPU_E_TIMEOUT,
	    "job %s: --timeout reached; stopped following (it goes on "
	    "running)",
	    jc->spec.name);
}

/* The job ran on a queued resource: its slices are other names. */
static int
record_qr(const struct jobs_spec *s)
{
	return s->nslices > 1 ||
	       (s->nodes != NULL && strcmp(s->nodes[0], s->slice) != 0);
}

/*
 * A submitted job (`tpuctl submit`) starts from its queued resource's
 * startup-script once the capacity arrives: with --follow, wait until
 * the slice can be reached and every worker has the job (asking every
 * few seconds, saying so once).  0 connected; an errc when the slice is
 * gone (e.g. deleted) or the wait was interrupted.
 */
static int
wait_started(struct tpu_ctx *ctx, struct jobcmd *jc, struct sshcmd_opts *so,
    struct tpu_err *err)
{
	int said = 0, rc;

	for (;;) {
		struct tpu_err cerr;
		size_t i, nmiss = 0;

		tpu_err_init(&cerr);
		rc = jobcmd_connect(ctx, jc, so, &cerr);
		if (rc == 0) {
			jobcmd_status(jc, NULL);
			for (i = 0; i < jc->sc.ntargets; i++)
				nmiss +=
				    jobcmd_state(jc, i)->kind == JOBS_MISSING;
			if (nmiss == 0)
				return 0;
			snprintf(cerr.msg, sizeof cerr.msg,
			    "not started yet on %zu of %zu workers", nmiss,
			    jc->sc.ntargets);
			jobcmd_detach(jc);
		} else if (rc != TPU_E_PRECONDITION &&
		           rc != TPU_E_UNREACHABLE) {
			*err = cerr;
			return rc;
		} else if ((rc = submit_capacity_lost(ctx, &jc->spec, err)) !=
		           0)
			return rc; /* its queued resource will not bring it */
		if (!said)
			log_warn(
			    "job %s (submitted): waiting for it to start: %s",
			    jc->spec.name, cerr.msg);
		said = 1;
		for (i = 0; i < 20 && !logs_abort; i++)
			tpu_sleep_ms(100);
		if (logs_timed_out)
			return tpu_error(err, TPU_E_TIMEOUT,
			    "job %s: --timeout reached before it started; "
			    "stopped waiting (it stays queued)",
			    jc->spec.name);
		if (logs_abort)
			return tpu_error(err, TPU_E_INTERRUPTED,
			    "stopped waiting for job %s (it stays queued)",
			    jc->spec.name);
	}
}

/* The local copy only (the slice is gone or unreachable). */
static int
offline(struct jobcmd *jc, const char *workers, struct tpu_err *err)
{
	unsigned char *sel = xcalloc((size_t)jc->spec.nworkers, 1);
	size_t n = (size_t)jc->spec.nslices * (size_t)jc->spec.nworkers, i;
	size_t nok = 0, nfinal = 0, nsel = 0;
	int rc;

	if ((rc = sshsel_workers(workers, jc->spec.nworkers, sel, err)) != 0) {
		free(sel);
		return rc;
	}
	for (i = 0; i < n; i++) {
		struct fanout_who who;
		int s = (int)i / jc->spec.nworkers,
		    w = (int)i % jc->spec.nworkers;
		uint64_t nl[2] = { 0, 0 };

		if (!sel[w] || jc->states[i].kind == JOBS_MISSING)
			continue;
		memset(&who, 0, sizeof who);
		who.slice = record_qr(&jc->spec) ? s : -1;
		who.worker = w;
		snprintf(who.node, sizeof who.node, "%s",
		    jc->spec.nodes != NULL ? jc->spec.nodes[s]
		                           : jc->spec.slice);
		jobcmd_replay(jc, &who, s, w, nl);
		nsel++;
		nok += jobs_state_ok(&jc->states[i]);
		nfinal += jobs_state_final(&jc->states[i]);
	}
	free(sel);
	for (i = 0; i < n && jc->states[i].kind != JOBS_QUEUED; i++)
		;
	if (i < n) /* submitted, its capacity not there yet */
		log_warn(
		    "job %s is queued: it has not started yet", jc->spec.name);
	if (nfinal < nsel)
		return 0;
	if (nok == nsel)
		return 0;
	return tpu_error(err, TPU_E_PARTIAL,
	    "job %s: %zu of %zu workers failed (recorded)", jc->spec.name,
	    nsel - nok, nsel);
}

/* 1 unless the record says the job never started anywhere (cancelled
 * or lost before its capacity came). */
static int
ran_somewhere(const struct jobcmd *jc)
{
	size_t n = (size_t)jc->spec.nslices * (size_t)jc->spec.nworkers, i;

	for (i = 0; i < n; i++)
		if (jc->states[i].kind != JOBS_MISSING)
			return 1;
	return 0;
}

/*
 * The slice of submitted job jc is gone (rc of the connect, why its
 * words): with objects in its bucket (the uploader's), read them into
 * the local copy first; then the local copy (offline).  A worker whose
 * end is not there is lost.
 */
static int
from_bucket(struct tpu_ctx *ctx, struct jobcmd *jc, const char *workers, int rc,
    const char *why, struct tpu_err *err)
{
	struct tpu_err e;
	size_t found = 0;

	tpu_err_init(&e);
	if (jc->spec.log_url != NULL &&
	    jobbucket_sync(ctx, jc, rc == TPU_E_NOTFOUND, &found, &e) != 0)
		log_warn("cannot reach the slice of job %s (%s), nor read "
		         "%s (%s): showing the logs kept locally",
		    jc->spec.name, why, jc->spec.log_url, e.msg);
	else if (found == 0)
		log_warn("cannot reach the slice of job %s (%s): showing the "
		         "logs kept locally",
		    jc->spec.name, why);
	else
		log_info("cannot reach the slice of job %s (%s): logs of %zu "
		         "worker%s from %s",
		    jc->spec.name, why, found, found == 1 ? "" : "s",
		    jc->spec.log_url);
	return offline(jc, workers, err);
}

static int
logs_exec(struct tpu_ctx *ctx, int argc, char **argv, struct tpu_err *err)
{
	static const struct option opts[] = {
		{ "follow", no_argument, NULL, OPT_FOLLOW },
		{ "output", required_argument, NULL, OPT_OUTPUT },
		{ "since", required_argument, NULL, OPT_SINCE },
		{ "timeout", required_argument, NULL, OPT_TIMEOUT },
		{ "worker", required_argument, NULL, SSHCMD_OPT_WORKER },
		{ NULL, 0, NULL, 0 },
	};
	struct sshcmd_opts so;
	struct jobcmd jc;
	struct sigaction sa, old_int, old_term, old_alrm;
	struct itimerval it;
	const char *workers = "all", *es = NULL;
	long long timeout_s = 0;
	size_t i;
	int ch, rc, follow = 0, sig_set = 0, alarm_set = 0, epipe = 0;

	jobcmd_init(&jc);
	sshcmd_opts_init(&so);
	while ((ch = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (ch) {
		case OPT_FOLLOW:
			follow = 1;
			break;
		case OPT_OUTPUT:
			if ((rc = fanout_parse_output(optarg, &jc.mode, err)) !=
			    0)
				goto out;
			break;
		case OPT_SINCE:
			jc.since =
			    (uint64_t)tpu_strtonum(optarg, 0, 1LL << 50, &es);
			if (es != NULL) {
				rc = tpu_error(err, TPU_E_USAGE,
				    "--since '%s': a line count, 0 or more "
				    "(%s)",
				    optarg, es);
				goto out;
			}
			break;
		case OPT_TIMEOUT:
			if ((rc = tpu_parse_job_timeout(
			         optarg, &timeout_s, err)) != 0)
				goto out;
			break;
		case SSHCMD_OPT_WORKER:
			if ((rc = sshcmd_opt(&so, ch, optarg, err)) < 0)
				goto out;
			workers = optarg;
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
	if (timeout_s > 0 && !follow) {
		rc = tpu_error(err, TPU_E_USAGE,
		    "--timeout: only with --follow (logs without it do not "
		    "wait)");
		goto out;
	}
	if ((rc = jobcmd_load(&jc, argv[0], err)) != 0)
		goto out;
	logs_abort = logs_signal = logs_timed_out = 0;
	jc.abort = &logs_abort;
	jc.signaled = &logs_signal;
	if (timeout_s > 0) {
		memset(&sa, 0, sizeof sa);
		sa.sa_handler = on_alarm;
		sigemptyset(&sa.sa_mask);
		sigaction(SIGALRM, &sa, &old_alrm);
		memset(&it, 0, sizeof it);
		it.it_value.tv_sec = (time_t)timeout_s;
		setitimer(ITIMER_REAL, &it, NULL);
		alarm_set = 1;
	}
	so.workers = workers;
	if (jc.spec.submitted && follow) {
		memset(&sa, 0, sizeof sa);
		sa.sa_handler = on_signal;
		sigemptyset(&sa.sa_mask);
		sigaction(SIGINT, &sa, &old_int);
		sigaction(SIGTERM, &sa, &old_term);
		sig_set = 1;
		if ((rc = wait_started(ctx, &jc, &so, err)) != 0) {
			/* gone after it ran (delete-after): its bucket */
			if (rc == TPU_E_NOTFOUND && jc.spec.log_url != NULL &&
			    ran_somewhere(&jc)) {
				char why[sizeof err->msg];

				snprintf(why, sizeof why, "%s", err->msg);
				tpu_err_init(err);
				rc = from_bucket(
				    ctx, &jc, workers, rc, why, err);
				if (jc.out_errno != 0)
					rc = jobcmd_out_error(&jc, &epipe, err);
			}
			goto out;
		}
	} else {
		struct tpu_err cerr;

		tpu_err_init(&cerr);
		rc = jobcmd_connect(ctx, &jc, &so, &cerr);
		if (rc == TPU_E_USAGE) {
			*err = cerr;
			goto out;
		}
		if (rc != 0 && logs_timed_out) {
			rc = timed_out(&jc, err);
			goto out;
		}
		if (rc != 0) {
			rc = from_bucket(ctx, &jc, workers, rc, cerr.msg, err);
			if (jc.out_errno != 0)
				rc = jobcmd_out_error(&jc, &epipe, err);
			goto out;
		}
	}
	for (i = 0; i < jc.sc.ntargets; i++) {
		int r = jc.rank[i];
		uint64_t nl[2] = { 0, 0 };

		jobcmd_replay(&jc, &jc.who[i], r / jc.spec.nworkers,
		    r % jc.spec.nworkers, nl);
		jc.lines[0][i] = nl[0];
		jc.lines[1][i] = nl[1];
		/* ask again: the record may be behind, unless it has the
		   end the worker reported (exited N, killed by SIG: kept
		   even when that worker is gone now); a worker that never
		   ran it is left out */
		if (jobcmd_state(&jc, i)->kind == JOBS_MISSING)
			jc.skip[i] = 1;
		else if (!jobs_state_known(jobcmd_state(&jc, i)))
			jobcmd_state(&jc, i)->kind = JOBS_RUNNING;
	}
	if (!sig_set) {
		memset(&sa, 0, sizeof sa);
		sa.sa_handler = on_signal;
		sigemptyset(&sa.sa_mask);
		sigaction(SIGINT, &sa, &old_int);
		sigaction(SIGTERM, &sa, &old_term);
		sig_set = 1;
	}
	rc = jobcmd_follow(&jc, NULL, 0, 0, follow, err);
	if (rc == TPU_E_IO && jc.out_errno != 0) {
		struct tpu_err e;

		/* the reader is gone: stop following, the job goes on */
		jobcmd_save(&jc, &e);
		rc = jobcmd_out_error(&jc, &epipe, err);
		goto out;
	}
	if (rc == TPU_E_INTERRUPTED && logs_timed_out) {
		struct tpu_err e;

		jobcmd_save(&jc, &e);
		rc = timed_out(&jc, err);
		goto out;
	}
	if (rc == TPU_E_INTERRUPTED) {
		struct tpu_err e;

		jobcmd_save(&jc, &e);
		rc = tpu_error(err,
		    logs_signal == SIGTERM ? TPU_E_TERMINATED
		                           : TPU_E_INTERRUPTED,
		    "stopped following job %s (it goes on running)",
		    jc.spec.name);
		goto out;
	}
	{
		struct tpu_err e;
		size_t nfinal = 0;

		tpu_err_init(&e);
		jobcmd_save(&jc, &e);
		for (i = 0; i < jc.sc.ntargets; i++)
			nfinal += jc.skip[i] ||
			          jobs_state_final(jobcmd_state(&jc, i));
		if (nfinal == jc.sc.ntargets)
			rc = jobcmd_summary(&jc, follow, err);
	}
out:
	if (alarm_set) {
		memset(&it, 0, sizeof it);
		setitimer(ITIMER_REAL, &it, NULL);
		sigaction(SIGALRM, &old_alrm, NULL);
	}
	if (sig_set) {
		sigaction(SIGINT, &old_int, NULL);
		sigaction(SIGTERM, &old_term, NULL);
	}
	jobcmd_release(&jc);
	if (epipe)
		errno = EPIPE; /* see jobcmd_out_error */
	return rc;
}

const struct cmd_entry cmd_logs_entry = {
	.name = "logs",
	.alias = NULL,
	.usage = "logs [--follow] [--timeout duration] "
	         "[--worker 0|all|1,3|0-7] [--since n] "
	         "[--output prefix|raw|jsonl] job",
	.summary = "show or follow the output of a job",
	.min_args = 1,
	.max_args = -1,
	.flags = CMD_NEEDS_AUTH | CMD_NEEDS_ZONE | CMD_SSH,
	.exec = logs_exec,
};
