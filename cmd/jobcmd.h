/*
 * Shared plumbing of the job commands (run, logs, jobs, cancel), on top
 * of the job model (src/jobs.h), the SSH targets (sshcmd.h) and the
 * fan-out naming helpers (fanout.h): the local job record and log store,
 * rounds of worker-side scripts over the fan-out engine with the output
 * appended to the local logs (the byte offsets a later `logs` resumes
 * from) and rendered with prefixes, following a job until it has ended
 * everywhere (a dropped stream is resumed from its offsets; a worker that
 * cannot be reached is lost), cancelling, and the per-worker summary and
 * exit contract (0 every worker exited 0; 8 some did not; 9 none could be
 * reached).
 */
#ifndef TPUCTL_JOBCMD_H
#define TPUCTL_JOBCMD_H

#include <signal.h>
#include <stddef.h>
#include <stdint.h>

#include "buf.h"
#include "ctx.h"
#include "err.h"
#include "fanout.h"
#include "jobs.h"
#include "sshcmd.h"

/* A line start held for its end is shown as a piece beyond this. */
#define JOBCMD_TAIL_MAX 16384

/* How often a dropped log stream of a running job is resumed. */
#define JOBCMD_REFOLLOW_MAX 5

struct jobcmd {
	struct jobs_spec spec;
	struct jobs_state *states; /* nslices * nworkers, by global rank */
	struct sshcmd sc;
	int prepared;
	struct fanout_who *who; /* per target */
	int *rank;              /* per target: index in states */
	int *fd[2];             /* per target: local .out and .err, or -1 */
	uint64_t *off[2];       /* per target: bytes in the local logs */
	uint64_t *lines[2];     /* per target: lines seen (for --since) */
	/* per target: the start of a line whose end is still to come (a
	   stream that dropped mid-line): shown whole once the rest comes
	   after the reconnect, or as it is when the stream ends */
	struct buf *tail[2];
	char **cap;             /* per target: first stdout line (capture) */
	unsigned char *reached; /* per target: answered once at least */
	unsigned char *skip;    /* per target: not part of the job */
	int capture;            /* a round whose stdout is parsed, not shown */
	/* A capture round of short commands (status, cancel): through a
	 * warm holder, they run on its held shells (SSHPOOL_F_SHELL, with
	 * SSHPOOL_F_SHELL_ONCE for what must not run twice); 0: exec. */
	int shell;
	enum fanout_output mode;
	uint64_t since;    /* show lines after the first `since` of a stream */
	const size_t *map; /* round index -> target index */
	/* A write to stdout failed (closed pipe, full disk): nothing more is
	 * shown, the round in flight is stopped through abort and
	 * jobcmd_follow returns TPU_E_IO; the job itself is left alone. */
	int out_errno;
	volatile sig_atomic_t *abort;
	/* Set by the caller: the signal its handler caught (0: none), so an
	 * abort of ours (below) is told from the user's. */
	volatile sig_atomic_t *signaled;
	/* The targets came from the node cache: in the first round, a worker
	 * that cannot be reached or trusted stops the round (its job never
	 * started), the description is read again and the job launched
	 * there once more, the others followed from their offsets. */
	struct tpu_ctx *ctx;
	int refresh_ok;
	int want_refresh;
	/* per target in a round: 0 connecting, 1 output seen, 2 done; the
	   round is stopped for the refresh only once none is connecting
	   (stopping a session in its handshake leaks in libssh2) */
	unsigned char *rstate;
	/* Called before that second launch with the targets it goes to
	 * (e.g. to send them the workdir); may be NULL. */
	void (*prelaunch)(struct jobcmd *, const unsigned char *mask, void *);
	void *prelaunch_arg;
	/* The workers' sessions, kept from one round to the next (the
	 * workdir check, launch + follow, status, cancel): one SSH
	 * connection per worker for the whole command, where it holds. */
	struct sshpool_cache *cache;
	/* Set by the caller (run --max-restarts): asked, while following,
	 * when a worker's job ended otherwise than with exit 0 or its stream
	 * dropped (the round is stopped for it); 1: the slice is lost, the
	 * follow stops at once with slice_lost set (TPU_E_PARTIAL) instead
	 * of waiting for the other workers. */
	int (*lost_check)(struct jobcmd *, void *);
	void *lost_arg;
	int want_check;
	int slice_lost;
};

void jobcmd_init(struct jobcmd *);
void jobcmd_release(struct jobcmd *);

/* Close the logs and drop the targets and the SSH setup (the spec and
 * the states stay), e.g. before the slice is recreated and the job run
 * there again (sshcmd_prepare and jobcmd_attach anew). */
void jobcmd_detach(struct jobcmd *);

/* The record of job name into jc->spec and jc->states (TPU_E_NOTFOUND
 * when there is none). */
int jobcmd_load(struct jobcmd *, const char *name, struct tpu_err *);
/* Write jc's record (job.json in the job's local directory). */
int jobcmd_save(const struct jobcmd *, struct tpu_err *);
/* The internal address of worker 0 of slice 0 (MASTER_ADDR) of the
 * resolved slice, borrowed from jc->sc. */
const char *jobcmd_master_addr(const struct jobcmd *);

/* Names of every recorded job, sorted; *n set.  Free with jobs_env_free. */
char **jobcmd_list(size_t *n);

/*
 * Resolve the job's slice (jc->spec.slice in jc->spec.zone unless --zone
 * was given) with so's worker selection, every slice of a queued
 * resource; set who/rank, open the local logs for appending.
 */
int jobcmd_connect(
    struct tpu_ctx *, struct jobcmd *, struct sshcmd_opts *, struct tpu_err *);
/* The second half of jobcmd_connect, after sshcmd_prepare into jc->sc
 * (jc->prepared set) and jc->spec's shape filled. */
int jobcmd_attach(struct jobcmd *, struct tpu_err *);

/*
 * One round: cmds[i] (per target; NULL: skip that target) through the
 * fan-out; results[i] filled for every target (NOT_STARTED for skipped
 * ones).  Output goes to the local logs and the screen, or with
 * jc->capture, the first stdout line of each into jc->cap.
 */
int jobcmd_round(struct jobcmd *, char **cmds, int timeout_s, int fail_fast,
    struct sshpool_result *results, struct tpu_err *);

/* Ask the targets in mask (NULL: all) for the job's state. */
void jobcmd_status(struct jobcmd *, const unsigned char *mask);

/*
 * Follow the job on the targets not yet final (first: the commands of
 * the first round, e.g. launch + follow; NULL: follow from the offsets)
 * until it has ended on each, resuming dropped streams.  Returns 0,
 * TPU_E_INTERRUPTED/TPU_E_TERMINATED (jc->abort), TPU_E_TIMEOUT,
 * TPU_E_PARTIAL when fail_fast stopped it on a failure, or TPU_E_IO when
 * stdout could not be written (jc->out_errno; err not set: see
 * jobcmd_out_error).
 */
int jobcmd_follow(struct jobcmd *, char **first, int timeout_s, int fail_fast,
    int wait, struct tpu_err *);

/*
 * After jobcmd_follow returned TPU_E_IO: what the command returns.  A
 * closed pipe (EPIPE) returns 0 with *epipe set: the caller sets errno to
 * EPIPE last, so that cmd/main.c's final check of stdout ends tpuctl
 * quietly by SIGPIPE, as cmd/fanout.c does; any other error is "write
 * error on standard output" (TPU_E_IO).
 */
int jobcmd_out_error(const struct jobcmd *, int *epipe, struct tpu_err *);

/* SIGTERM, SIGKILL after grace_s, on the targets whose job is not final;
 * states recorded. */
void jobcmd_cancel(struct jobcmd *, int grace_s);

/*
 * The state of each target not skipped on stderr: up to
 * FANOUT_SUMMARY_LINES one line each ("worker 3: exited 1"), more grouped
 * on one line by state (src/outgroup.h: "30 workers: exited 0; w3: exited
 * 1; w7: lost").
 */
void jobcmd_print_states(struct jobcmd *);

/*
 * The per-worker summary on stderr ("worker 3: exited 1", "N of M
 * workers succeeded") and the exit contract: 0, TPU_E_PARTIAL,
 * TPU_E_UNREACHABLE (no worker reached) with err set.
 */
int jobcmd_summary(struct jobcmd *, int print, struct tpu_err *);

/*
 * Show the local logs of worker `worker` of slice `slice` as who (the
 * prefix), counting lines in nlines[0] (stdout) and nlines[1] (stderr)
 * for jc->since.
 */
void jobcmd_replay(struct jobcmd *, const struct fanout_who *who, int slice,
    int worker, uint64_t nlines[2]);

/* The state of target i. */
struct jobs_state *jobcmd_state(struct jobcmd *, size_t i);

#endif
