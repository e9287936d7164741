/*
 * The fan-out result handling that the commands running remote commands
 * on many workers share (ssh, run; scp and forward use the naming and
 * exit helpers): per-worker output rendering ("[w3] " or "[s1/w3] "
 * prefixes, raw, jsonl), --output-dir log files, the per-worker summary
 * on stderr, the exit contract of DESIGN.md (one worker: its own status;
 * several: 0 all ok, 8 partial, 9 none reachable), one retry of the
 * workers that could not be reached when the node description came from
 * the cache (retry_fresh: a command never runs twice on a worker), and
 * SIGINT/SIGTERM while the command runs (the one interrupt flag of
 * src/retry.h).
 *
 * Typical use (a `run`-like command):
 *
 *	struct sshcmd sc;          (sshcmd_prepare: targets selected)
 *	struct fanout_spec fs;
 *
 *	for (i = 0; i < sc.ntargets; i++) {
 *		sc.targets[i].command = per_worker_cmd[i];   (or NULL)
 *		sc.targets[i].env = per_worker_env[i];       ("K=V" each)
 *		sc.targets[i].nenv = per_worker_nenv[i];
 *	}
 *	fanout_spec_init(&fs);
 *	fs.command = common_cmd;   (NULL when every target has its own)
 *	fs.timeout_s = 0;          (or --timeout)
 *	fs.fail_fast = 1;
 *	rc = fanout_run(ctx, &sc, &fs, err);
 *	(output printed with prefixes, summary printed when > 1 target,
 *	 rc is 0, a remote exit status (one worker), or TPU_E_PARTIAL (8),
 *	 TPU_E_UNREACHABLE (9), TPU_E_INTERRUPTED / TPU_E_TERMINATED,
 *	 TPU_E_TIMEOUT (one worker), TPU_E_USAGE; return it from exec)
 *
 * The per-target command and env survive the retry after a stale cache
 * (sshcmd_refresh keeps them).  Everything it prints goes to stdout
 * (command output) and stderr (remote stderr, summary).
 */
#ifndef TPUCTL_FANOUT_H
#define TPUCTL_FANOUT_H

#include <stddef.h>

#include "buf.h"
#include "ctx.h"
#include "err.h"
#include "sshcmd.h"
#include "sshpool.h"

enum fanout_output {
	FANOUT_OUT_PREFIX = 0, /* "[w3] line" / "[s1/w3] line" (default) */
	FANOUT_OUT_RAW,        /* the bytes as they come, no prefix */
	FANOUT_OUT_JSONL, /* {"node":..,"worker":3,"stream":..,"line":..} */
};

/* Who a target is, for prefixes, jsonl, messages and the summary. */
/* Up to this many workers a summary has a line for each; more: grouped
 * (src/outgroup.h). */
#define FANOUT_SUMMARY_LINES 16

struct fanout_who {
	int slice;     /* slice index; -1 when the name is a node */
	int worker;    /* worker index in its slice */
	char node[64]; /* node id */
};

struct fanout_spec {
	/* For targets without their own command (sshpool_target.command);
	 * NULL when every target has one. */
	const char *command;
	enum fanout_output mode;
	/* --output-dir: every worker's output (both streams) to
	 * DIR/wN.log, or DIR/NODE-wN.log in a queued resource; NULL: stdout
	 * and stderr. */
	const char *outdir;
	int timeout_s; /* per worker, from exec; 0: none */
	int fail_fast; /* stop every worker on the first failure */
	/*
	 * NULL, or an array of sc->ntargets results that fanout_run fills
	 * (the caller releases each with sshpool_result_release), for a
	 * caller that records per-worker states.  NULL: released inside.
	 */
	struct sshpool_result *results;
	/*
	 * NULL, or the name of a run that keeps the contract of several
	 * workers for one too (install, doctor, reset-workers): the summary
	 * is printed for one target as well, its total reads "WHAT: 3 of 4
	 * workers succeeded", and the exit is 0, TPU_E_PARTIAL ("WHAT: 1 of
	 * 4 workers FAILED") or TPU_E_UNREACHABLE, never a remote status.
	 */
	const char *what;
	const char *failed; /* with what: "failed" (NULL), "have findings" */
	/* Seconds a warm-pool connection holder keeps the sessions (issue
	 * 18, --persist / ssh/persist); 0: cold run, no holder. */
	int persist_s;
	/* -1 (fanout_spec_init): the remote stdin is /dev/null.  Else the
	 * fd forwarded to every worker's stdin, then EOF (SSHPOOL_F_STDIN:
	 * cold run, every worker at once, no retry of unreachable workers
	 * of several: they would miss what the others had). */
	int stdin_fd;
};

void fanout_spec_init(struct fanout_spec *);

/* Parse --output's value ("prefix", "raw", "jsonl"): 0 or TPU_E_USAGE. */
int fanout_parse_output(const char *, enum fanout_output *, struct tpu_err *);

/*
 * Run the command(s) on sc's targets as described above: output
 * rendered per fs->mode, the summary ("worker 3: exit 1 (0.2 s)" ...
 * "7 of 8 workers succeeded") on stderr when there are several targets,
 * SIGINT/SIGTERM stop every worker (retry_interrupted, installed here
 * if not yet: TPU_E_INTERRUPTED or TPU_E_TERMINATED).  Returns 0, the
 * remote exit status of a single worker (1..255; 128+N when killed by
 * signal N, after "tpuctl: worker 0: killed by signal KILL" on stderr),
 * or a negative enum tpu_errc with err set.
 *
 * Output that cannot be written stops the run on every worker (no
 * summary): TPU_E_IO "write error on standard output: ..." (exit 1, as
 * every command), or a log file of --output-dir named; a closed stdout
 * pipe returns 0 with errno EPIPE and stdout in error, which cmd/main.c
 * turns into a quiet death by SIGPIPE: return straight from exec,
 * keeping errno (as data cat does).
 */
int fanout_run(struct tpu_ctx *, struct sshcmd *sc, const struct fanout_spec *,
    struct tpu_err *);

/*
 * Append one line (or piece: eol 0) of stream 1 (stdout) or 2 (stderr)
 * of who to b as mode renders it: "[w3] line\n" (a piece ends the line
 * all the same), the bytes as they are (raw), or one jsonl object
 * ({"job":..,} first when job is not NULL; "eol":false for a piece).
 * jsonl goes to stdout whatever the stream; the caller picks the fd.
 */
void fanout_format(struct buf *, enum fanout_output, const struct fanout_who *,
    const char *job, int stream, const char *data, size_t len, int eol);

/*
 * Write to stdout through stdio, flushed at once (every line reaches a
 * pipe as it comes, ordered with stderr), so that its error state is the
 * one cmd/main.c checks: 0, or the errno of the failure (EPIPE for a
 * closed pipe).
 */
int fanout_write_stdout(const char *, size_t);

/* who[i] for each of sc's targets; free() it. */
struct fanout_who *fanout_who_make(const struct sshcmd *sc);

/* "worker 3", or "node ms-1 (slice 1) worker 3" in a queued resource. */
const char *fanout_who_name(const struct fanout_who *, char *buf, size_t);

/*
 * "exit 3", "signal KILL", or the failure's name and message (without
 * the message's own "worker N: "), for the summary line of a worker.
 */
void fanout_describe(const struct sshpool_result *, char *out, size_t n);

/*
 * One worker's outcome, for the summary and the exit contract that every
 * fan-out command shares: fanout_run's from an SSH result
 * (fanout_outcome_of), the job commands' from a job state (cmd/jobcmd.h).
 */
struct fanout_outcome {
	char what[64];      /* the grouping key: "exit 1", "exited 1", "lost" */
	const char *detail; /* NULL, or more (a failure's message) */
	long long duration_ms; /* shown after the line; -1: not shown */
	int ok;                /* succeeded */
	int reached;           /* the worker answered (ran the command) */
};

/* The outcome of an SSH result (its message stays in r). */
void fanout_outcome_of(const struct sshpool_result *, struct fanout_outcome *);

/*
 * The per-worker lines on stderr: up to FANOUT_SUMMARY_LINES one line
 * each ("worker 3: exit 1 (0.2 s)", "worker 3: exited 1"), more grouped
 * on one line by outcome (src/outgroup.h: "30 workers: exit 0; w3: exit
 * 1").
 */
void fanout_print_outcomes(
    const struct fanout_who *, const struct fanout_outcome *, size_t n);

/*
 * fanout_print_outcomes, then the total "N of M workers succeeded",
 * after "WHAT: " when what is set, with " (K nodes)" when nslices > 0
 * (a queued resource).
 */
void fanout_summary(const struct fanout_who *, const struct fanout_outcome *,
    size_t n, const char *what, size_t nslices);

/*
 * The exit contract of several workers (or of one, for a caller with
 * what): 0 when every one succeeded; TPU_E_UNREACHABLE "WHAT: no worker
 * could be reached (N of M)" when none was reached; else TPU_E_PARTIAL
 * "WHAT: N of M workers FAILED" (failed: NULL "failed", or e.g. "have
 * findings").  Without what, the messages have no "WHAT: ".
 */
int fanout_contract(const struct fanout_outcome *, size_t n, const char *what,
    const char *failed, struct tpu_err *);

/*
 * Room for a fan-out's file descriptors (src/fdlimit.h: the soft limit
 * raised toward the hard one): the sessions in flight (sc's --fanout, or
 * every target with all_sessions, for sessions kept open from one round
 * to the next) and files_per files per target open at once.  0, or
 * TPU_E_IO naming what ("a job on 2048 workers") when the hard limit is
 * too low, before any worker is contacted.
 */
int fanout_fd_room(const struct sshcmd *, int all_sessions, size_t files_per,
    const char *what, struct tpu_err *);

/* The exit status for a remote command killed by signal name ("KILL"):
 * 128 + its number, 255 when the name is unknown. */
int fanout_signal_status(const char *name);

/*
 * The warm path of fanout_run (cmd/ssh_pool.c): with fs->persist_s > 0
 * and one node, run sc's targets through the node's connection holder
 * (started when none runs), giving on_output/on_done calls, results
 * and the return code of sshpool_run.  1 when no holder could be used
 * before anything was sent (the caller runs cold).
 */
int fanout_warm_run(struct sshcmd *, const struct fanout_spec *,
    struct sshpool_result *, struct tpu_err *);

#endif
