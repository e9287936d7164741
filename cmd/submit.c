/*
 * "tpuctl submit SPEC": a batch job from a spec file (tpuctl-submit(5)),
 * queued and left to run with no client attached.  The workdir archive is
 * staged in the bucket (jobstage.h), the slice is asked for as a queued
 * resource (specdiff_create, apply's code) whose node metadata carries a
 * startup-script (jobs_boot_script): when the capacity arrives, every
 * worker pulls the archive with its own metadata token and launches the
 * job in run's worker-side layout.  submit returns once the queued
 * resource is accepted and prints the job's name; a local job record
 * (marked submitted) lets jobs, logs and cancel find it.  With a bucket
 * the boot script also starts each worker's uploader (jobs_upload_cmd):
 * the job's logs and states go to gs://B/PREFIX/jobs/JOB/, where jobs,
 * logs and cancel read them once the slice is gone (cmd/jobbucket.h);
 * without --wait the workers then enforce the spec's timeout and, with
 * delete-after, worker 0 deletes the queued resource once every worker
 * has ended.  Everything is checked before anything is created (exit 2);
 * a failed creation leaves neither the archive it staged nor a record.
 */
#include <sys/stat.h>
#include <sys/time.h>

#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cmd.h"
#include "config.h"
#include "fwcmd.h"
#include "gcs.h"
#include "jobcmd.h"
#include "jobstage.h"
#include "json.h"
#include "log.h"
#include "nodecache.h"
#include "pack.h"
#include "recover.h"
#include "specdiff.h"
#include "sshcmd.h"
#include "submit.h"
#include "tpucmd.h"
#include "util.h"
#include "xmalloc.h"

enum {
	OPT_NAME = 0x300,
	OPT_WAIT,
};

/* --wait: SIGINT/SIGTERM while waiting for the capacity, and the
 * spec's timeout (SIGALRM, passed on as SIGTERM to the follow). */
static volatile sig_atomic_t submit_signal;
static volatile sig_atomic_t submit_timed_out;

static void
on_signal(int sig)
{
	submit_signal = sig;
}

static void
on_alarm(int sig)
{
	(void)sig;
	submit_timed_out = 1;
	/* the follow (logs) stops on SIGTERM with its own handler */
	kill(getpid(), SIGTERM);
}

/* What submit cannot do, refused before anything is created; staged:
 * a stage bucket is there (spec stage or run/staging_bucket). */
static int
refuse_unsupported(
    const struct spec *s, int wait, int staged, struct tpu_err *err)
{
	const char *field = NULL, *why = NULL;

	if (!s->has_job) {
		field = "command";
		why = "is required: submit runs a job";
	} else if (s->preemptible) {
		field = "slice.preemptible";
		why = "submit queues a queued resource, whose tier is its own "
		      "field (QueuedResource spot, guaranteed or "
		      "reservationName; queued-resources create has no "
		      "--preemptible): use spot";
	} else if (s->has_max_restarts && !wait) {
		field = "max-restarts";
		why = "needs --wait (without a client attached nothing can "
		      "recreate a preempted slice)";
	} else if (s->timeout_secs > 0 && !wait && !staged) {
		field = "timeout";
		why = "needs --wait or a stage bucket ('stage' or config "
		      "run/staging_bucket: the workers enforce it and record "
		      "the end there)";
	} else if (s->delete_after && !wait && !staged) {
		field = "delete-after";
		why = "needs --wait or a stage bucket ('stage' or config "
		      "run/staging_bucket: worker 0 reads there that every "
		      "worker has ended before it deletes the slice)";
	} else if (cJSON_GetObjectItemCaseSensitive(
	               s->metadata, "startup-script") != NULL ||
	           cJSON_GetObjectItemCaseSensitive(
	               s->metadata, "startup-script-url") != NULL) {
		field = "slice.metadata";
		why = "startup-script and startup-script-url are submit's own "
		      "(they launch the job)";
	}
	if (field == NULL)
		return 0;
	return tpu_error(err, TPU_E_USAGE, "%s: %s: %s", s->origin, field, why);
}

/* A command of tpuctl's own (argv NULL-terminated), quietly. */
static int
dispatch(struct tpu_ctx *ctx, char **argv, struct tpu_err *err)
{
	int argc = 0, rc, quiet = ctx->quiet;

	while (argv[argc] != NULL)
		argc++;
	ctx->quiet = 1;
	rc = cmd_dispatch(NULL, ctx, argc, argv, err);
	ctx->quiet = quiet;
	return rc;
}

/* Delete the queued resource name with its nodes (--force); says so.
 * The node cache forgets them there (so logs reads the local copy then). */
static int
delete_slice(struct tpu_ctx *ctx, const struct specdiff *d, const char *name,
    const char *why)
{
	char a0[] = "queued-resources", a1[] = "delete", a2[] = "--force";
	char a3[] = "--";
	char *v[] = { a0, a1, a2, a3, (char *)name, NULL };
	struct tpu_err e;
	int rc;

	fprintf(stderr, "deleting queued resource '%s' (%s)\n", name, why);
	tpu_err_init(&e);
	/* where it is now (use_zone), not where --zones began */
	config_set_flag(ctx->cfg, "compute/zone", d->zone);
	if ((rc = dispatch(ctx, v, &e)) != 0)
		log_warn("queued resource '%s' is left: %s", name, e.msg);
	return rc;
}

/* The job never started: its record says so (jobs: no such job). */
static void
record_not_started(struct jobcmd *jc)
{
	struct tpu_err e;
	int i;

	for (i = 0; i < jc->spec.nslices * jc->spec.nworkers; i++)
		jc->states[i].kind = JOBS_MISSING;
	tpu_err_init(&e);
	jobcmd_save(jc, &e);
}

/* A queued resource in a state it does not come back from unasked. */
static int
qr_lost_state(const char *state)
{
	return strcmp(state, "FAILED") == 0 ||
	       strcmp(state, "SUSPENDED") == 0 ||
	       strcmp(state, "SUSPENDING") == 0;
}

/* The capacity's words of a lost queued resource qr in state, into err. */
static int
qr_lost_error(const char *job, const char *name, const char *state,
    const cJSON *qr, struct tpu_err *err)
{
	const char *m =
	    json_opt_string(qr, "state.failedData.error.message", NULL);

	return tpu_error(err, TPU_E_OPERATION,
	    "job %s: queued resource '%s' is %s%s%s: the capacity never came",
	    job, name, state, m != NULL ? ": " : "", m != NULL ? m : "");
}

int
submit_capacity_lost(
    struct tpu_ctx *ctx, const struct jobs_spec *s, struct tpu_err *err)
{
	struct tpucmd tc;
	char *path;
	cJSON *qr = NULL;
	int rc;

	memset(&tc, 0, sizeof tc);
	if ((rc = tpucmd_open(ctx, &tc, err)) != 0)
		return rc;
	path = xasprintf("projects/%s/locations/%s/queuedResources/%s",
	    tc.project, s->zone, s->slice);
	rc = tpuapi_call(&tc.api, "GET", path, NULL, NULL, 1, &qr, err);
	if (rc == TPU_E_NOTFOUND) {
		tpu_err_init(err);
		rc = tpu_error(err, TPU_E_OPERATION,
		    "job %s: its queued resource '%s' is gone: the job never "
		    "started",
		    s->name, s->slice);
	} else if (rc == 0) {
		const char *st =
		    json_opt_string(qr, "state.state", "STATE_UNSPECIFIED");

		if (qr_lost_state(st))
			rc = qr_lost_error(s->name, s->slice, st, qr, err);
	}
	cJSON_Delete(qr);
	free(path);
	tpucmd_close(&tc);
	return rc;
}

/* The uploader of a submitted job (jobs_upload) and what it points to. */
struct submit_up {
	struct jobs_upload u;
	char *storage, *prefix, *tpu, *qr;
};

/* A URL's copy without its trailing '/'s. */
static char *
no_slash(const char *url)
{
	char *c = xstrdup(url);
	size_t n = strlen(c);

	while (n > 0 && c[n - 1] == '/')
		c[--n] = '\0';
	return c;
}

/*
 * The uploader of job jc in bucket su (objects PREFIX/jobs/JOB/...,
 * jc->spec.log_url set).  Without --wait it also enforces the spec's
 * timeout and, with delete-after, deletes the queued resource (the
 * workers reach the APIs at the client's endpoints: the emulator's on
 * loopback, Google's otherwise).  0 or the error of the storage client.
 */
static int
upload_setup(struct tpu_ctx *ctx, const struct specdiff *d, struct jobcmd *jc,
    const struct spec *s, const struct gcs_url *su, int wait,
    struct submit_up *up, struct tpu_err *err)
{
	struct gcs *g = NULL;
	char *base = no_slash(su->object);
	int rc;

	memset(up, 0, sizeof *up);
	if ((rc = ctx_gcs_open(ctx, &g, err)) != 0) {
		free(base);
		return rc;
	}
	up->storage = no_slash(gcs_base(g));
	gcs_close(g);
	up->prefix = *base != '\0'
	                 ? xasprintf("%s/jobs/%s/", base, jc->spec.name)
	                 : xasprintf("jobs/%s/", jc->spec.name);
	free(base);
	jc->spec.log_url = xasprintf("gs://%s/%s", su->bucket, up->prefix);
	up->u.storage = up->storage;
	up->u.bucket = su->bucket;
	up->u.prefix = up->prefix;
	up->u.period_s = 2;
	up->u.grace_s = 10;
	up->u.nslices = jc->spec.nslices;
	up->u.nworkers = jc->spec.nworkers;
	if (!wait) {
		up->u.timeout_s = s->timeout_secs;
		if (s->delete_after) {
			up->tpu = no_slash(d->tc.api.base);
			up->qr = xasprintf(
			    "projects/%s/locations/%s/queuedResources/%s",
			    d->tc.project, d->zone, s->name);
			up->u.tpu = up->tpu;
			up->u.qr = up->qr;
		}
	}
	return 0;
}

static void
upload_release(struct submit_up *up)
{
	free(up->storage);
	free(up->prefix);
	free(up->tpu);
	free(up->qr);
	memset(up, 0, sizeof *up);
}

/*
 * A job with max-restarts or a checkpoint gets the preemption notice, as
 * run --max-restarts or --checkpoint gives it (recover_notice_wrap).
 */
static int
wants_notice(const struct spec *s)
{
	return s->has_max_restarts || s->checkpoint != NULL;
}

/*
 * Queue the job's slice: the queued resource of d's spec (asynchronously,
 * quietly) with the boot script of job js as its nodes' startup-script,
 * beside the spec's own metadata; with notice, the job's command gets
 * the preemption watcher (recover_notice_wrap).  0 or the error of the create.
 */
static int
create_qr(struct tpu_ctx *ctx, struct specdiff *d, const struct jobs_spec *js,
    const struct jobs_upload *up, int notice, struct tpu_err *err)
{
	struct output quiet_out, saved_out;
	struct jobs_spec w = *js;
	char *script;
	cJSON *md = cJSON_CreateObject();
	const cJSON *it, *spec_md;
	int rc;

	if (notice)
		w.command = recover_notice_wrap(js->command);
	script = jobs_boot_script(&w, up);
	if (notice)
		free(w.command);

	cJSON_ArrayForEach(it, d->spec.metadata)
	    cJSON_AddStringToObject(md, it->string, it->valuestring);
	cJSON_AddStringToObject(md, "startup-script", script);
	spec_md = d->spec.metadata;
	d->spec.metadata = md;
	/* the queued resource's own output (its operation) is not ours */
	saved_out = ctx->out;
	output_init(&quiet_out);
	quiet_out.fmt = OUTPUT_NONE;
	ctx->out = quiet_out;
	rc = specdiff_create(
	    ctx, d, SPECDIFF_CREATE_QR | SPECDIFF_CREATE_ASYNC, err);
	output_release(&ctx->out);
	ctx->out = saved_out;
	d->spec.metadata = spec_md;
	cJSON_Delete(md);
	free(script);
	return rc;
}

/*
 * The slice is in zone now (one of d->zones): d->zone, the job's record
 * (jobs, logs, cancel find it there) and the zone of every command
 * submit runs from now on (logs --follow, cancel, queued-resources
 * delete: --zones made the first zone the command's).
 */
static void
use_zone(struct tpu_ctx *ctx, struct specdiff *d, struct jobcmd *jc,
    const char *zone)
{
	const cJSON *z;

	cJSON_ArrayForEach(z, d->zones)
	{
		if (strcmp(z->valuestring, zone) == 0)
			d->zone = z->valuestring;
	}
	free(jc->spec.zone);
	jc->spec.zone = xstrdup(d->zone);
	config_set_flag(ctx->cfg, "compute/zone", d->zone);
}

/* The zones a queueing tries, in order: the slice's zone now, then the
 * other zones of the spec (run --max-restarts --zones's order). */
static cJSON *
zone_order(const struct specdiff *d)
{
	cJSON *order = cJSON_CreateArray();
	const cJSON *z;

	cJSON_AddItemToArray(order, cJSON_CreateString(d->zone));
	cJSON_ArrayForEach(z, d->zones)
	{
		if (strcmp(z->valuestring, d->zone) != 0)
			cJSON_AddItemToArray(
			    order, cJSON_CreateString(z->valuestring));
	}
	return order;
}

/* create_qr in d->zone alone (with --async, queued-resources create
 * stays in the first zone it is given). */
static int
create_qr_here(struct tpu_ctx *ctx, struct specdiff *d,
    const struct jobs_spec *js, const struct jobs_upload *up, int notice,
    struct tpu_err *err)
{
	cJSON *all = d->zones, *one = cJSON_CreateArray();
	int rc;

	cJSON_AddItemToArray(one, cJSON_CreateString(d->zone));
	d->zones = one;
	rc = create_qr(ctx, d, js, up, notice, err);
	d->zones = all;
	cJSON_Delete(one);
	return rc;
}

/* Sleep ms, 50 ms at a time; 1 when a signal or the timeout came. */
static int
nap(int ms)
{
	int i;

	for (i = 0; i < ms / 50; i++) {
		if (submit_signal != 0 || submit_timed_out)
			return 1;
		tpu_sleep_ms(50);
	}
	return submit_signal != 0 || submit_timed_out;
}

/*
 * --wait, first part: until the queued resource is ACTIVE.  0 then; a
 * queued resource that ends FAILED or SUSPENDED (e.g. still WAITING at
 * its valid-until), or is gone, is TPU_E_OPERATION (7); the timeout
 * TPU_E_TIMEOUT, a signal TPU_E_INTERRUPTED/TERMINATED.  Except when it
 * is gone, the queued resource is deleted then: nothing holds quota.
 * FAILED out of capacity (code 8) with zones left in slice.zones (after
 * d->zone, zone_order): deleted, queued in the next zone, which becomes
 * the job's (use_zone), and waited for there.
 */
static int
wait_capacity(struct tpu_ctx *ctx, struct specdiff *d, struct jobcmd *jc,
    const struct spec *s, const struct jobs_upload *up, struct tpu_err *err)
{
	char *path = xasprintf("projects/%s/locations/%s/queuedResources/%s",
	    d->tc.project, d->zone, s->name);
	cJSON *order = zone_order(d);
	const char *said = NULL;
	char state[64] = "";
	int rc, at = 0;

	for (;;) {
		cJSON *qr = NULL;

		rc = tpuapi_call(
		    &d->tc.api, "GET", path, NULL, NULL, 1, &qr, err);
		if (rc == TPU_E_NOTFOUND) {
			rc = tpu_error(err, TPU_E_OPERATION,
			    "job %s: its queued resource '%s' is gone before "
			    "the job started",
			    jc->spec.name, s->name);
			record_not_started(jc);
			break;
		}
		if (rc != 0)
			break;
		snprintf(state, sizeof state, "%s",
		    json_opt_string(qr, "state.state", "STATE_UNSPECIFIED"));
		if (strcmp(state, "ACTIVE") == 0) {
			cJSON_Delete(qr);
			break;
		}
		if (strcmp(state, "FAILED") == 0 &&
		    json_opt_int64(qr, "state.failedData.error.code", 0) == 8 &&
		    at + 1 < cJSON_GetArraySize(order)) {
			const char *next =
			    cJSON_GetArrayItem(order, ++at)->valuestring;

			log_warn("job %s: queued resource '%s' in %s FAILED: "
			         "%s (code 8); trying %s (slice.zones)",
			    jc->spec.name, s->name, d->zone,
			    json_opt_string(qr,
			        "state.failedData.error.message", "stockout"),
			    next);
			cJSON_Delete(qr);
			if ((rc = delete_slice(ctx, d, s->name,
			         "out of capacity in its zone")) != 0) {
				tpu_error(err, rc,
				    "job %s: queued resource '%s' in %s could "
				    "not be deleted",
				    jc->spec.name, s->name, d->zone);
				record_not_started(jc);
				break;
			}
			use_zone(ctx, d, jc, next);
			if ((rc = create_qr_here(ctx, d, &jc->spec, up,
			         wants_notice(s), err)) != 0 ||
			    (rc = jobcmd_save(jc, err)) != 0) {
				record_not_started(jc);
				break;
			}
			free(path);
			path = xasprintf(
			    "projects/%s/locations/%s/queuedResources/%s",
			    d->tc.project, d->zone, s->name);
			said = NULL;
			continue;
		}
		if (qr_lost_state(state)) {
			rc = qr_lost_error(
			    jc->spec.name, s->name, state, qr, err);
			cJSON_Delete(qr);
			delete_slice(
			    ctx, d, s->name, "its capacity never came");
			record_not_started(jc);
			break;
		}
		cJSON_Delete(qr);
		if (said == NULL && !ctx->quiet)
			fprintf(stderr,
			    "job %s: waiting for the capacity (queued "
			    "resource '%s' is %s)\n",
			    jc->spec.name, s->name, state);
		said = "";
		if (nap(500)) {
			if (submit_timed_out)
				rc = tpu_error(err, TPU_E_TIMEOUT,
				    "job %s: timeout: the capacity did not "
				    "come within %llds (queued resource "
				    "'%s' is %s)",
				    jc->spec.name, s->timeout_secs, s->name,
				    state);
			else
				rc = tpu_error(err,
				    submit_signal == SIGINT ? TPU_E_INTERRUPTED
				                            : TPU_E_TERMINATED,
				    "job %s: interrupted while waiting for "
				    "the capacity",
				    jc->spec.name);
			delete_slice(ctx, d, s->name,
			    submit_timed_out ? "timeout" : "interrupted");
			record_not_started(jc);
			break;
		}
	}
	cJSON_Delete(order);
	free(path);
	return rc;
}

/*
 * --wait with max-restarts, after an attempt was followed to its end:
 * when the queued resource lost a slice and some worker did not succeed
 * (jobs_restart_decide, run's rule), delete it with its nodes (they hold
 * quota), wait restart-backoff, queue it again with the same spec and a
 * boot script whose TPUCTL_RESTART_COUNT is one more, and mark the job
 * queued: 1 then (follow it again).  0 when the attempt's contract
 * stands; the budget used up is TPU_E_PARTIAL naming the last cause; a
 * failed delete or create its error, prefixed "restart".
 */
static int
restart_lost(struct tpu_ctx *ctx, struct specdiff *d, struct jobcmd *jc,
    const struct spec *s, const struct jobs_upload *up, struct tpu_err *err)
{
	struct jobs_restart_in in;
	struct jobcmd now;
	struct tpucmd tc = d->tc;
	struct tpu_err e;
	enum jobs_restart what;
	char lost[192], cause[192];
	int i, rc, is_lost, n = jc->spec.nslices * jc->spec.nworkers;

	tc.zone = d->zone;
	is_lost = recover_qr_lost_now(&tc, jc, lost, sizeof lost);
	jobcmd_init(&now);
	tpu_err_init(&e);
	/* the workers' states as the follow recorded them */
	if (jobcmd_load(&now, jc->spec.name, &e) != 0 || now.states == NULL) {
		jobcmd_release(&now);
		return 0;
	}
	memset(&in, 0, sizeof in);
	in.node = jc->spec.slice;
	in.node_state = is_lost ? "PREEMPTED" : "READY";
	in.states = now.states;
	in.n = (size_t)n;
	in.restarts = jc->spec.restart_count;
	in.max_restarts = (int)s->max_restarts;
	in.on_failure = s->restart_on_failure;
	what = jobs_restart_decide(&in, cause, sizeof cause);
	jobcmd_release(&now);
	if (what == JOBS_RESTART_NONE)
		return 0;
	if (what == JOBS_RESTART_EXHAUSTED) {
		tpu_err_init(err);
		return tpu_error(err, TPU_E_PARTIAL,
		    "job %s: max-restarts %lld used up after %d restart%s; "
		    "last cause: %s",
		    jc->spec.name, s->max_restarts, jc->spec.restart_count,
		    jc->spec.restart_count == 1 ? "" : "s",
		    is_lost ? lost : cause);
	}
	if (what == JOBS_RESTART_RERUN) {
		/* restart-on-failure: the slice is fine, the job runs again
		   on it (run's rerun) */
		log_warn("job %s: attempt %d ended: %s; restart %d of %lld",
		    jc->spec.name, jc->spec.restart_count + 1, cause,
		    jc->spec.restart_count + 1, s->max_restarts);
		if (s->restart_backoff_secs > 0) {
			log_warn("job %s: waiting %lld s (restart-backoff)",
			    jc->spec.name, s->restart_backoff_secs);
			if (nap((int)(s->restart_backoff_secs * 1000)))
				return 0;
		}
		recover_keep_attempt_logs(jc, jc->spec.restart_count);
		jc->spec.restart_count++;
		tpu_err_init(err);
		if ((rc = recover_relaunch(ctx, jc, err)) != 0)
			return tpu_error_prefix(err, "restart");
		return 1;
	}
	log_warn("job %s: attempt %d ended: %s; restart %d of %lld, "
	         "recreating the queued resource",
	    jc->spec.name, jc->spec.restart_count + 1, lost,
	    jc->spec.restart_count + 1, s->max_restarts);
	tpu_err_init(err);
	if ((rc = recover_delete_qr(ctx, &tc, s->name, lost, err)) != 0)
		return tpu_error_prefix(err, "restart");
	if (s->restart_backoff_secs > 0) {
		log_warn("job %s: waiting %lld s (restart-backoff)",
		    jc->spec.name, s->restart_backoff_secs);
		if (nap((int)(s->restart_backoff_secs * 1000)))
			return 0; /* the follow's contract, then the stop's */
	}
	recover_keep_attempt_logs(jc, jc->spec.restart_count);
	jc->spec.restart_count++;
	/* queued again where it was; wait_capacity moves on from there */
	if ((rc = create_qr_here(
	         ctx, d, &jc->spec, up, wants_notice(s), err)) != 0)
		return tpu_error_prefix(err, "restart");
	for (i = 0; i < n; i++) {
		memset(&jc->states[i], 0, sizeof jc->states[i]);
		jc->states[i].kind = JOBS_QUEUED;
	}
	if ((rc = jobcmd_save(jc, err)) != 0)
		return rc;
	return 1;
}

/*
 * --wait: the capacity, then the job followed to its end (as `logs
 * --follow`), its exit contract returned; past the spec's timeout the
 * job is cancelled (124); a signal cancels it too (130/143).  With
 * delete-after the slice is deleted once the job has ended, however.
 */
static int
submit_wait(struct tpu_ctx *ctx, struct specdiff *d, struct jobcmd *jc,
    const struct spec *s, const struct jobs_upload *up, struct tpu_err *err)
{
	struct sigaction sa, old_int, old_term, old_alrm;
	struct itimerval it;
	int rc, started = 0;

	submit_signal = 0;
	submit_timed_out = 0;
	memset(&sa, 0, sizeof sa);
	sigemptyset(&sa.sa_mask);
	sa.sa_handler = on_signal;
	sigaction(SIGINT, &sa, &old_int);
	sigaction(SIGTERM, &sa, &old_term);
	sa.sa_handler = on_alarm;
	sigaction(SIGALRM, &sa, &old_alrm);
	memset(&it, 0, sizeof it);
	if (s->timeout_secs > 0) {
		it.it_value.tv_sec = (time_t)s->timeout_secs;
		setitimer(ITIMER_REAL, &it, NULL);
	}
	for (;;) {
		int rrc;

		started = 0;
		rc = wait_capacity(ctx, d, jc, s, up, err);
		if (rc == 0 && !submit_timed_out && submit_signal == 0) {
			char a0[] = "logs", a1[] = "--follow";
			char *v[] = { a0, a1, jc->spec.name, NULL };

			started = 1;
			/* logs prints the job's output and its summary */
			optind = 0;
			rc = cmd_dispatch(NULL, ctx, 3, v, err);
		}
		if (!started || !s->has_max_restarts || submit_timed_out ||
		    submit_signal != 0 || rc == TPU_E_INTERRUPTED ||
		    rc == TPU_E_TERMINATED)
			break;
		if ((rrc = restart_lost(ctx, d, jc, s, up, err)) != 1) {
			if (rrc != 0)
				rc = rrc;
			break;
		}
		tpu_err_init(err);
	}
	memset(&it, 0, sizeof it);
	setitimer(ITIMER_REAL, &it, NULL);
	if (started && (submit_timed_out || rc == TPU_E_INTERRUPTED ||
	                   rc == TPU_E_TERMINATED)) {
		char a0[] = "cancel";
		char *v[] = { a0, jc->spec.name, NULL };
		struct tpu_err e;

		tpu_err_init(&e);
		fprintf(stderr, "job %s: %s: cancelling it\n", jc->spec.name,
		    submit_timed_out ? "timeout" : "interrupted");
		if (dispatch(ctx, v, &e) != 0)
			log_warn("job %s: %s", jc->spec.name, e.msg);
		if (submit_timed_out) {
			tpu_err_init(err);
			rc = tpu_error(err, TPU_E_TIMEOUT,
			    "job %s: not ended after %llds: cancelled",
			    jc->spec.name, s->timeout_secs);
		}
	}
	if (started && s->delete_after) {
		int drc = delete_slice(ctx, d, s->name, "delete-after");

		if (drc != 0 && rc == 0)
			rc = tpu_error(err, drc,
			    "job %s: the queued resource '%s' could not be "
			    "deleted (delete-after)",
			    jc->spec.name, s->name);
	}
	sigaction(SIGALRM, &old_alrm, NULL);
	sigaction(SIGINT, &old_int, NULL);
	sigaction(SIGTERM, &old_term, NULL);
	return rc;
}

static int
submit_exec(struct tpu_ctx *ctx, int argc, char **argv, struct tpu_err *err)
{
	static const struct option opts[] = {
		{ "name", required_argument, NULL, OPT_NAME },
		{ "wait", no_argument, NULL, OPT_WAIT },
		{ NULL, 0, NULL, 0 },
	};
	struct spec s;
	struct specdiff d;
	struct jobcmd jc;
	struct gcs_url su;
	struct submit_up up;
	const char *name = NULL, *stage = NULL;
	char hash[PACK_HASH_LEN + 1], *tar = NULL, *object = NULL;
	cJSON *o;
	const cJSON *it;
	int ch, rc, i, have_s = 0, have_d = 0, have_su = 0, staged = 0;
	int wait = 0;

	jobcmd_init(&jc);
	memset(&d, 0, sizeof d);
	memset(&up, 0, sizeof up);
	while ((ch = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (ch) {
		case OPT_NAME:
			name = optarg;
			break;
		case OPT_WAIT:
			wait = 1;
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
	/* the spec is read twice (here, then by specdiff_open) */
	if (strcmp(argv[0], "-") == 0) {
		rc = tpu_error(err, TPU_E_USAGE,
		    "'-': submit reads a spec file, not standard input");
		goto out;
	}
	/* every refusal before the first request */
	if ((rc = spec_load(&s, argv[0], err)) != 0)
		goto out;
	have_s = 1;
	stage = s.stage;
	if (stage == NULL)
		stage = config_get(ctx->cfg, "run/staging_bucket");
	if (stage != NULL && *stage == '\0')
		stage = NULL;
	if ((rc = refuse_unsupported(&s, wait, stage != NULL, err)) != 0)
		goto out;
	if (s.workdir != NULL && stage == NULL) {
		rc = tpu_error(err, TPU_E_USAGE,
		    "%s: workdir: needs 'stage' (or config "
		    "run/staging_bucket): "
		    "the workers pull the workdir from a bucket",
		    s.origin);
		goto out;
	}
	if (stage != NULL) {
		if ((rc = gcs_url_parse(stage, &su, err)) != 0) {
			tpu_error_prefix(err, "run/staging_bucket");
			goto out;
		}
		have_su = 1;
	}
	if (name == NULL)
		name = s.name;
	if ((rc = jobs_name_check(name, err)) != 0)
		goto out;
	{
		char *dir = jobs_local_dir(name), *p;
		struct stat st;

		p = xasprintf("%s/job.json", dir);
		rc = stat(p, &st) == 0
		         ? tpu_error(err, TPU_E_CONFLICT,
		               "job '%s' exists already (%s): give another "
		               "--name",
		               name, dir)
		         : 0;
		free(p);
		free(dir);
		if (rc != 0)
			goto out;
	}
	jc.spec.name = xstrdup(name);
	jc.spec.slice = xstrdup(s.name);
	/* a multislice: every slice's node, in slice order */
	jc.spec.nslices = s.node_count > 0 ? s.node_count : 1;
	jc.spec.nworkers = s.acc.hosts;
	jc.spec.nodes = xcalloc((size_t)jc.spec.nslices, sizeof *jc.spec.nodes);
	{
		cJSON *ids = spec_node_ids(&s);

		for (i = 0; i < jc.spec.nslices; i++)
			jc.spec.nodes[i] =
			    xstrdup(cJSON_GetArrayItem(ids, i)->valuestring);
		cJSON_Delete(ids);
	}
	jc.spec.command = spec_command_line(&s);
	if (s.framework != NULL) {
		/* installed as run --framework does, first in the job: its
		   lines in the job's output, a failure the job's */
		struct fwcmd_install fi;
		char *inst = NULL, *c;
		const char *runtime =
		    s.version != NULL ? s.version : s.acc.gen->runtimes[0];

		fwcmd_install_init(&fi);
		fi.framework = s.framework;
		fi.version = s.framework_version;
		fi.version_flag = "framework.version";
		if ((rc = fwcmd_install_command(&fi, s.name, s.acc.gen->name,
		         runtime, &inst, NULL, 1, err)) != 0) {
			tpu_error_prefix(err, "%s: framework", s.origin);
			goto out;
		}
		c = xasprintf("%s || exit\n%s", inst, jc.spec.command);
		free(inst);
		free(jc.spec.command);
		jc.spec.command = c;
	}
	jc.spec.submitted = 1;
	/* the startup-script runs as root: it starts the job as the user
	   run, logs and cancel log in as */
	if ((rc = sshcmd_user(ctx, NULL, &jc.spec.user, err)) != 0)
		goto out;
	cJSON_ArrayForEach(it, s.env)
	{
		char *kv = xasprintf("%s=%s", it->string, it->valuestring);
		char what[160];

		snprintf(
		    what, sizeof what, "%s: env.%.100s", s.origin, it->string);
		rc = jobs_env_add(&jc.spec, kv, what, err);
		free(kv);
		if (rc != 0)
			goto out;
	}
	if (s.checkpoint != NULL) {
		/* run --checkpoint's: the job finds it in its environment */
		jc.spec.env = xreallocarray(
		    jc.spec.env, jc.spec.nenv + 1, sizeof *jc.spec.env);
		jc.spec.env[jc.spec.nenv++] =
		    xasprintf("TPUCTL_CHECKPOINT=%s", s.checkpoint);
	}
	if (s.workdir != NULL) {
		struct pack_opts po = { NULL, 0 };
		struct pack_stats ps;
		char *cache = pack_cache_dir();

		rc = pack_to_cache(s.workdir, &po, cache, hash, &tar, &ps, err);
		free(cache);
		if (rc != 0)
			goto out;
		log_info("workdir %s: %zu files, %zu links, %llu bytes, sha256 "
		         "%s",
		    s.workdir, ps.files, ps.links, (unsigned long long)ps.bytes,
		    hash);
		jc.spec.workdir_hash = xstrdup(hash);
	}
	/* the API: what exists (GETs), then the archive, then the QR */
	if ((rc = specdiff_open(ctx, argv[0], &d, err)) != 0)
		goto out;
	have_d = 1;
	if (d.found) {
		char what[160];

		rc = tpu_error(err, TPU_E_CONFLICT,
		    "%s exists already in %s: submit queues a new one (delete "
		    "it, or give the spec another name)",
		    specdiff_what(&d, what, sizeof what), d.zone);
		goto out;
	}
	jc.spec.zone = xstrdup(d.zone);
	if (have_su &&
	    (rc = upload_setup(ctx, &d, &jc, &s, &su, wait, &up, err)) != 0)
		goto out;
	if (tar != NULL &&
	    (rc = jobstage_upload(ctx, tar, hash, &su, "stage",
	         &jc.spec.stage_url, &object, &staged, err)) != 0)
		goto out;
	if ((rc = create_qr(ctx, &d, &jc.spec, have_su ? &up.u : NULL,
	         wants_notice(&s), err)) != 0) {
		if (staged) {
			struct tpu_err e;

			tpu_err_init(&e);
			if (jobstage_remove(ctx, su.bucket, object, &e) != 0)
				log_warn(
				    "the staged workdir gs://%s/%s is left: "
				    "%s",
				    su.bucket, object, e.msg);
		}
		goto out;
	}
	jc.spec.start = time(NULL);
	/* queued: the workers tell once they run it */
	jc.states = xcalloc(
	    (size_t)(jc.spec.nslices * jc.spec.nworkers), sizeof *jc.states);
	for (i = 0; i < jc.spec.nslices * jc.spec.nworkers; i++)
		jc.states[i].kind = JOBS_QUEUED;
	if ((rc = jobcmd_save(&jc, err)) != 0)
		goto out;
	o = cJSON_CreateObject();
	cJSON_AddStringToObject(o, "name", jc.spec.name);
	cJSON_AddStringToObject(o, "queuedResource", s.name);
	cJSON_AddStringToObject(o, "zone", jc.spec.zone);
	/* the name alone, for scripts: JOB=$(tpuctl submit spec); with
	   --wait stdout is the job's output */
	if (wait)
		rc = 0;
	else if (ctx->out.fmt == OUTPUT_TABLE && ctx->out.nfields == 0)
		rc = fprintf(ctx->out.fp, "%s\n", jc.spec.name) < 0
		         ? tpu_error(err, TPU_E_IO, "cannot write the output")
		         : 0;
	else
		rc = output_emit(&ctx->out, o, NULL, err);
	cJSON_Delete(o);
	if (rc == 0 && !ctx->quiet)
		fprintf(stderr,
		    "job %s submitted: queued resource '%s' in %s (%d "
		    "worker%s%s); it starts when the capacity arrives%s%s\n",
		    jc.spec.name, s.name, jc.spec.zone,
		    jc.spec.nslices * jc.spec.nworkers,
		    jc.spec.nslices * jc.spec.nworkers == 1 ? "" : "s",
		    jc.spec.nslices > 1 ? ", a multislice" : "",
		    wait ? "" : "; follow it with: tpuctl logs --follow ",
		    wait ? "" : jc.spec.name);
	if (rc == 0 && wait)
		rc = submit_wait(ctx, &d, &jc, &s, have_su ? &up.u : NULL, err);
out:
	upload_release(&up);
	free(object);
	free(tar);
	if (have_su)
		gcs_url_release(&su);
	if (have_d)
		specdiff_close(&d);
	if (have_s)
		spec_release(&s);
	jobcmd_release(&jc);
	return rc;
}

const struct cmd_entry cmd_submit_entry = {
	.name = "submit",
	.alias = NULL,
	.usage = "submit [--wait] [--name job] spec",
	.summary = "queue a job from a spec file; it starts on its own when "
	           "the capacity arrives",
	.min_args = 1,
	.max_args = -1,
	.flags = CMD_NEEDS_AUTH | CMD_NEEDS_ZONE | CMD_SSH,
	.exec = submit_exec,
};
