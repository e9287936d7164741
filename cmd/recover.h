/*
 * run's recovery between attempts (--max-restarts): what it keeps from
 * one attempt to the next, and the decision after each one.
 *
 *	struct recover r;
 *
 *	recover_init(&r, &abort_flag, &signal_flag, &recovering_flag);
 *	r.max = N;                  (-1: no recovery)
 *	r.desc = node description;  (a copy, owned by r)
 *	... attempt ...
 *	rc = recover_maybe_restart(ctx, &jc, &r, err);
 *	(1: run it again; 0: the attempt's contract stands; else an error)
 *	recover_release(&r);
 *
 * The three flags are the command's signal state: abort set by its
 * handler, signal the signal that set it, recovering set here while the
 * API is deleting or recreating the node (the handler then sets
 * retry_interrupted so those waits stop).
 */
#ifndef TPUCTL_RECOVER_H
#define TPUCTL_RECOVER_H

#include <signal.h>

#include <cjson/cJSON.h>

#include "ctx.h"
#include "err.h"
#include "jobcmd.h"
#include "tpucmd.h"

struct recover {
	int max; /* -1: no recovery */
	long long backoff_s;
	int on_failure;
	cJSON *desc;    /* the node's description at the first attempt */
	cJSON *qr_desc; /* a queued resource's, likewise */
	/* the queued resource the slice is, or its node belongs to (the
	   node's queuedResource, whatever its name): recovered as one;
	   NULL for a node created directly */
	char *qr_name;
	char cause[192];
	char *checkpoint;     /* --checkpoint gs://..., or NULL */
	cJSON *zones;         /* --zones: where a recreation may go, or NULL */
	char lost_cause[192]; /* recover_lost_check's finding */
	int drained;          /* recover_end_attempt drained the job */
	volatile sig_atomic_t *abort;
	volatile sig_atomic_t *signal;
	volatile sig_atomic_t *recovering;
};

void recover_init(struct recover *r, volatile sig_atomic_t *abort_flag,
    volatile sig_atomic_t *signal_flag, volatile sig_atomic_t *recovering);
void recover_release(struct recover *r);

/*
 * Before the first attempt (after sshcmd_prepare): with --max-restarts,
 * keep the slice's description (a node's, or the queued resource's,
 * read now), what a recreation uses when the slice is gone.  The kind
 * comes from the API, not the name: a node whose queuedResource field
 * is set (a queued resource whose node id is its own id, say) is
 * recovered as that queued resource.  0 or the error of the read.
 */
int recover_start(struct tpu_ctx *ctx, struct recover *r, struct jobcmd *jc,
    struct tpu_err *err);

/*
 * After an attempt (its contract already printed): restart it or not.
 * Returns 1 to run it again (slice recreated when it was lost, jc
 * detached, jc->spec.restart_count incremented), 0 when the attempt's
 * contract stands, or an error (budget exhausted: TPU_E_PARTIAL naming
 * the cause; an interrupt during the backoff; a failed delete or
 * recreate, prefixed "restart").
 */
int recover_maybe_restart(struct tpu_ctx *ctx, struct jobcmd *jc,
    struct recover *r, struct tpu_err *err);

/*
 * jc->lost_check with r as its argument: reads the node (queued
 * resource and its nodes) and returns 1 when the slice is lost
 * (PREEMPTED, TERMINATED, gone; SUSPENDED or FAILED), logging it, so that
 * the attempt ends at once instead of when every worker has.
 */
int recover_lost_check(struct jobcmd *jc, void *arg);

/*
 * For a job followed without its own sessions (submit --wait): whether
 * the queued resource of jc (jc->spec.slice, in tc's zone) lost a slice
 * now (SUSPENDED, FAILED, gone, or a node PREEMPTED, TERMINATED or gone):
 * 1 with the cause in cause, else 0 (a failed read is no loss).
 */
int recover_qr_lost_now(
    struct tpucmd *tc, const struct jobcmd *jc, char *cause, size_t n);

/*
 * Delete the lost queued resource name (in tc's zone) with its nodes,
 * saying so with cause, and wait until it is gone: what holds quota
 * goes before a recreation.  0 or the error of the delete.
 */
int recover_delete_qr(struct tpu_ctx *ctx, struct tpucmd *tc, const char *name,
    const char *cause, struct tpu_err *err);

/*
 * Run the ended job jc (a submitted job: jc->spec filled, not connected)
 * again on its slice, which is still there (restart-on-failure): connect
 * to every worker, remove the ended attempt's directory, launch it
 * detached as run does (a staged workdir pulled again, the environment
 * with jc->spec.restart_count), record the workers RUNNING and save the
 * record; the caller follows it.  0, or the error of the connection; no
 * worker started is TPU_E_UNREACHABLE.
 */
int recover_relaunch(
    struct tpu_ctx *ctx, struct jobcmd *jc, struct tpu_err *err);

/* Keep the local logs of attempt k as s<S>-w<W>.out.<k> (and .err.<k>):
 * the next attempt's streams start at byte 0 on the workers. */
void recover_keep_attempt_logs(const struct jobcmd *jc, int k);

/*
 * After jobcmd_follow stopped on a lost slice (jc->slice_lost): wait for
 * the job on the lost slices' workers (run/drain_timeout, as after a
 * notice; a worker still running at the bound is marked lost and
 * named), then cancel it on the slices not lost (SIGTERM, SIGKILL 10 s
 * later), so the whole job restarts together.  recover_maybe_restart
 * then decides as after any attempt (without draining again).
 */
void recover_end_attempt(
    struct tpu_ctx *ctx, struct jobcmd *jc, struct recover *r);

/*
 * Set r->checkpoint from --checkpoint value (a gs:// URL, validated):
 * 0, or TPU_E_USAGE naming the value and the rule.
 */
int recover_set_checkpoint(
    struct recover *r, const char *value, struct tpu_err *err);

/*
 * Set r->zones from --zones value ("a,b,c", each validated): the zones a
 * recreation tries after the node's own, in order, while they are out
 * of capacity.  The node itself is still looked for in --zone (else the
 * configured zone; without one, the first of value).  0 or TPU_E_USAGE.
 */
int recover_set_zones(struct tpu_ctx *ctx, struct recover *r, const char *value,
    struct tpu_err *err);

/*
 * command with the preemption watcher (POSIX sh and curl on the worker)
 * started beside it: when the worker's metadata instance/preempted
 * turns TRUE it writes one line to the job's stderr and sends SIGTERM
 * to the job's process group.  recover_launch_cmd's, and what submit
 * gives a job with max-restarts or checkpoint in its boot script and
 * its reruns.  Caller frees.
 */
char *recover_notice_wrap(const char *command);

/*
 * jobs_launch_cmd for one worker, with what recovery adds when
 * --max-restarts or --checkpoint is given: TPUCTL_CHECKPOINT in the
 * job's environment, and the preemption watcher (POSIX sh and curl on
 * the worker) started beside the command: when the worker's metadata
 * instance/preempted turns TRUE it writes one line to the job's stderr
 * and sends SIGTERM to the job's process group, so the job can save a
 * checkpoint before the VM stops.  Without either option, exactly
 * jobs_launch_cmd.  Caller frees.
 */
char *recover_launch_cmd(const struct recover *r, struct jobs_spec *s,
    char *const *env, size_t nenv, int flags);

#endif
