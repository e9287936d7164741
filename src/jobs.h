/*
 * The job model of `tpuctl run`, `logs`, `jobs` and `cancel`: the job
 * spec (name, where it runs, command, environment, workdir), the
 * environment every worker gets, the worker-side layout and the POSIX sh
 * scripts that launch, watch, follow and cancel a job there, the states a
 * worker reports, and the local job record.  No command knowledge: the
 * commands build specs, run the scripts through the SSH fan-out and
 * render the states.
 *
 * Worker side (only what a TPU VM image has: POSIX sh, coreutils, tar,
 * curl; never a tpuctl binary).  Everything of job NAME lives in
 * $HOME/.tpuctl/jobs/NAME/:
 *   env          "export K='V'" lines: the job's environment
 *   command      the shell line
 *   cwd          the directory it runs in (wd/ or $HOME), for users
 *   wd/          the workdir, extracted from $HOME/.tpuctl/wd/HASH.tar
 *   pgid         the job's session and process group id (the pid of its
 *                shell, started with setsid)
 *   stdout, stderr   the job's output
 *   start, end   empty; their mtimes are the start and end times
 *   status       "exit N" or "signal NAME", written once it has ended
 * Workdir archives are kept by hash in $HOME/.tpuctl/wd/HASH.tar, so an
 * unchanged workdir is never sent twice; beside each, HASH.tar.sha256
 * (its digest file: the hash, one line) is written once its sha256 was
 * found right (jobs_launch_cmd).
 *
 * The job runs in its own session and process group with no file
 * descriptor of the SSH session: a dropped connection or a killed client
 * does not stop it.  Its shell runs the command in a subshell and records
 * "exit N"; when the group is killed (cancel), the shell dies with it and
 * cancel records the signal it sent.  A job whose shell is gone without a
 * status is "lost" (the VM restarted, or it was killed from outside).
 */
#ifndef TPUCTL_JOBS_H
#define TPUCTL_JOBS_H

#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include <cjson/cJSON.h>

#include "err.h"

#define JOBS_NAME_MAX 63
#define JOBS_MASTER_PORT 29500     /* torch.distributed's default */
#define JOBS_COORDINATOR_PORT 8476 /* jax.distributed's on TPU */
#define JOBS_MEGASCALE_PORT 8080

struct jobs_spec {
	char *name;  /* the job's name (jobs_name_check) */
	char *slice; /* the node or queued resource as given */
	char *zone;
	int nslices;   /* 1 for a node */
	int nworkers;  /* per slice */
	char **nodes;  /* node id of each slice (nslices) */
	char *command; /* the shell line */
	char **env;    /* the user's "K=V" (--env, --env-file), in order */
	size_t nenv;
	char *workdir_hash; /* sha256 of the workdir archive, or NULL */
	char *stage_url;    /* media URL of the staged archive, or NULL */
	int master_port;
	int coordinator_port;
	int megascale_port;
	time_t start;      /* wall clock */
	int restart_count; /* TPUCTL_RESTART_COUNT: restarts so far */
	/* started by `tpuctl submit` from the startup-script of its queued
	 * resource (slice): its workers may not exist yet */
	int submitted;
	/* the SSH user of run/logs/cancel: the account a submitted job's
	 * startup-script (run as root) starts it as; NULL: not submitted */
	char *user;
	/* a submitted job's objects in the bucket ("gs://B/PREFIX/jobs/JOB/",
	 * jobs_upload), or NULL */
	char *log_url;
};

struct jobs_upload; /* below */

void jobs_spec_init(struct jobs_spec *);
void jobs_spec_release(struct jobs_spec *);

/*
 * 0 when name is a valid job name: 1 to 63 bytes of ASCII letters,
 * digits, '.', '_' and '-', starting with a letter or digit; else
 * TPU_E_USAGE naming the value and the rule.
 */
int jobs_name_check(const char *name, struct tpu_err *);

/*
 * The default name of a job running command: the basename of its first
 * word (lowercased, other bytes than [a-z0-9._-] dropped, at most 24
 * bytes; "job" when nothing is left), then "-YYYYMMDD-HHMMSS" (UTC of t)
 * and "-" with 4 hex digits of rnd.  Always valid; caller frees.
 */
char *jobs_default_name(const char *command, time_t t, unsigned rnd);

/*
 * Add one "K=V" of the user (what names where it came from: "--env" or
 * "FILE:LINE").  K must match [A-Za-z_][A-Za-z0-9_]* and not start with
 * TPUCTL_ (tpuctl's own); a later value of the same K replaces the
 * earlier.  TPU_E_USAGE on a bad entry.
 */
int jobs_env_add(
    struct jobs_spec *, const char *kv, const char *what, struct tpu_err *);

/*
 * Add the entries of an env file's text (named path in errors): one
 * K=V per line, the value taken literally to the end of the line (no
 * quotes, no expansion); blank lines and lines starting with '#' are
 * ignored, a leading "export " is allowed.  TPU_E_USAGE with path:line.
 */
int jobs_env_file(struct jobs_spec *, const char *path, const char *text,
    size_t len, struct tpu_err *);

/*
 * The environment of worker `worker` of slice `slice` (global rank
 * slice * nworkers + worker), as "K=V" strings in this order: TPUCTL_JOB,
 * TPUCTL_WORKER, TPUCTL_WORKERS, TPUCTL_SLICE, TPUCTL_SLICES,
 * TPUCTL_RESTART_COUNT, RANK, WORLD_SIZE, LOCAL_RANK, LOCAL_WORLD_SIZE,
 * MASTER_ADDR (master_addr: worker 0 of slice 0), MASTER_PORT,
 * JAX_COORDINATOR_ADDRESS (master_addr:coordinator_port), and with more
 * than one slice MEGASCALE_COORDINATOR_ADDRESS, MEGASCALE_NUM_SLICES,
 * MEGASCALE_SLICE_ID, MEGASCALE_PORT; then the user's entries (a user's
 * key replacing one of these keeps its place).  *n is the count; free
 * with jobs_env_free.
 */
char **jobs_worker_env(const struct jobs_spec *, const char *master_addr,
    int slice, int worker, size_t *n);
void jobs_env_free(char **env, size_t n);

/* "export K='V'\n" lines for env (shell-quoted); caller frees. */
char *jobs_env_script(char *const *env, size_t n);

/* What a worker reports about a job. */
enum jobs_state_kind {
	JOBS_UNKNOWN = 0, /* no answer yet */
	JOBS_RUNNING,
	JOBS_EXITED,  /* code */
	JOBS_KILLED,  /* signal */
	JOBS_LOST,    /* the worker, or the job's shell, is gone */
	JOBS_MISSING, /* no such job on the worker */
	/* submitted, its capacity not there yet: not started (not final) */
	JOBS_QUEUED,
};

struct jobs_state {
	enum jobs_state_kind kind;
	int code;        /* JOBS_EXITED: exit status */
	char signal[16]; /* JOBS_KILLED: "TERM" */
	time_t start;    /* 0: unknown */
	time_t end;      /* 0: not ended or unknown */
};

/*
 * Parse one line of the status script ("running 1700000000 -",
 * "exit 3 1700000000 1700000009", "signal TERM S E", "lost S E",
 * "none"), or a recorded state ("exited 3", "killed by TERM", "lost",
 * "running", "queued").  0, or -1 when malformed (st set to
 * JOBS_UNKNOWN).
 */
int jobs_state_parse(const char *line, struct jobs_state *st);

/* "running", "exited 3", "killed by TERM", "lost", "no such job",
 * "queued", "unknown": the words users see; into buf. */
const char *jobs_state_str(const struct jobs_state *, char *buf, size_t n);

/* 1 when the job is over on that worker (exited, killed, lost, missing). */
int jobs_state_final(const struct jobs_state *);

/* 1 when the state is a success (exited 0). */
int jobs_state_ok(const struct jobs_state *);

/*
 * 1 when the state is one the worker reported at the job's end (exited
 * N, killed by SIG): known for good, whatever happens to the worker
 * later.  Lost and missing are final but not known.
 */
int jobs_state_known(const struct jobs_state *);

/*
 * What to keep of a worker's state when it is asked again: the answer,
 * except that a known end (jobs_state_known) stays when the answer is
 * no answer at all (NULL: the worker cannot be reached), unknown, lost
 * or missing (the worker went away, or was wiped, after the job ended).
 */
void jobs_state_merge(struct jobs_state *st, const struct jobs_state *answer);

/*
 * The remote command lines (for the SSH exec channel), each a complete
 * `sh -c '...' tpuctl-job ARGS` with every argument shell-quoted; caller
 * frees.
 *
 * launch: create the job's directory (a name already used on the worker
 * fails with exit 97), write env and command, unpack the workdir archive
 * HASH if the spec has one (pulled first from the spec's stage URL, a
 * JSON API media URL, with curl when the worker lacks it, with a token of
 * its metadata server ($GCE_METADATA_HOST, else metadata.google.internal);
 * checked with sha256sum; exit 98 when the archive is missing or bad),
 * start the job detached.  An archive already on the worker is checked
 * before a new job uses it: it is taken as it is when its digest file
 * names HASH and is newer than the archive (a shell builtin compares the
 * mtimes: no process, no hashing), else it is hashed again as on
 * arrival (and the digest file rewritten when right).  The trade-off: a
 * write to the archive after its check makes it the newer and so is
 * caught, as is a missing, emptied or wrong digest file; what is not
 * caught is a change that leaves the archive's mtime older than its
 * digest file's (bit rot under the file system, or a write whose mtime
 * is then set back, as `touch -r` does), which no check short of hashing
 * the whole archive for every job would catch.  A bad one is removed
 * (with its digest file) and the launch exits JOBS_EXIT_REFETCH having
 * done nothing else (the client sends the archive again, or the
 * relaunch pulls it again).  With
 * JOBS_LAUNCH_FOLLOW, then go on as jobs_follow_cmd from offset 0.  With
 * JOBS_LAUNCH_RESUME, a job of that name already started on the worker (a
 * launch whose answer was lost) is followed from offset 0 instead of refused.
 */
#define JOBS_EXIT_REFETCH 95
enum jobs_launch_flags {
	JOBS_LAUNCH_FOLLOW = (1 << 0),
	JOBS_LAUNCH_RESUME = (1 << 1),
};
char *jobs_launch_cmd(
    const struct jobs_spec *, char *const *env, size_t nenv, int flags);

/*
 * The startup-script of a submitted job (`tpuctl submit`) for the one
 * node of s (s->nworkers workers, one slice): on every worker at boot it
 * reads agent-worker-number and worker-network-endpoints from the
 * metadata server ($GCE_METADATA_HOST, else metadata.google.internal),
 * takes worker 0's address as MASTER_ADDR, and launches the job as
 * jobs_launch_cmd does (same layout, workdir pulled from s->stage_url with
 * the worker's token), detached, with that worker's jobs_worker_env.  A
 * second boot finds the job's directory and launches nothing (exit 97).
 * A startup-script runs as root (on a TPU VM with no HOME): the job is
 * started as s->user, the account tpuctl's SSH commands log in as, so
 * that they find it in that user's home.  Run as root by another name,
 * the script creates the account when it is missing (useradd -m; the
 * guest agent may make it meanwhile), its passwd home when that is
 * missing (owned by it, mode 0750), and starts the launch with runuser
 * (setpriv where runuser is missing) and HOME, USER, LOGNAME of the
 * account.  Run as s->user itself, it keeps $HOME, else takes the passwd
 * home.  Run as another account than root: exit 1, naming both.
 * Caller frees.
 */
char *jobs_boot_script(const struct jobs_spec *, const struct jobs_upload *);

/*
 * Print the job's stdout from byte off_out and stderr from off_err (to
 * the channel's stdout and stderr); with wait, keep following until the
 * job has ended (GNU tail --pid on the job's shell) and everything written
 * was sent.  Exit status 0 when the job exited 0, 1 when it ended
 * otherwise, 96 when the worker has no such job.
 */
char *jobs_follow_cmd(
    const char *name, uint64_t off_out, uint64_t off_err, int wait);

/* One line "NAME STATUS" for job name; STATUS for jobs_state_parse. */
char *jobs_status_cmd(const char *name);

/*
 * SIGTERM to the job's process group, SIGKILL after grace_s seconds if
 * any of it is left, record the signal as the final state (unless the job
 * ended by itself meanwhile), then print its "NAME STATUS" line (as
 * jobs_status_cmd).
 */
char *jobs_cancel_cmd(const char *name, int grace_s);

/*
 * What the worker-side uploader of a submitted job does (jobs_upload_cmd,
 * jobs_boot_script).
 */
struct jobs_upload {
	const char *storage; /* the storage API base, no trailing '/' */
	const char *bucket;
	const char *prefix; /* the job's object prefix: "PREFIX/jobs/JOB/" */
	int period_s;       /* between two looks at the job */
	/* > 0: past it the worker ends the job (SIGTERM, SIGKILL after
	 * grace_s) and records "exit 124" */
	long long timeout_s;
	int grace_s;
	/* delete-after: the TPU API base (no trailing '/') and the queued
	 * resource's path ("projects/P/locations/Z/queuedResources/N"),
	 * else NULL */
	const char *tpu;
	const char *qr;
	int nslices, nworkers; /* whose states worker 0 waits for */
};

/*
 * The worker-side log uploader of job name on the worker tagged tag
 * ("wSLICE-WORKER"): every u->period_s seconds, when they changed, it
 * uploads the job's stdout, stderr and state (a status line of
 * jobs_state_parse, "running START -" until the job ends) to
 * STORAGE/upload/storage/v1/b/BUCKET as objects PREFIX TAG.out, .err and
 * .state (the logs first), with the metadata server's token
 * (GCE_METADATA_HOST-aware, kept 300 s at most).  With a timeout it ends
 * the job past it ("exit 124"); with delete-after, on w0-0, once every
 * worker's state object is final it deletes the queued resource with its
 * nodes.  Exits 0 once the final state is uploaded (and with
 * delete-after the slice deleted), 1 when the job never appears (30
 * periods), the final upload fails 10 times or the delete does.  Caller
 * frees.
 */
char *jobs_upload_cmd(
    const char *name, const struct jobs_upload *u, const char *tag);

/*
 * Check that a workdir archive HASH.tar is on the worker: prints "have"
 * or "need" (and makes $HOME/.tpuctl/wd).
 */
char *jobs_have_cmd(const char *hash);

/* Remove the worker-side directory of job name (an ended attempt), so
 * a restart can launch it again under the same name. */
char *jobs_clear_cmd(const char *name);

/* The worker-side path of an archive, relative to the SFTP home. */
char *jobs_archive_path(const char *hash);

/*
 * The local store: $XDG_STATE_HOME/tpuctl/jobs, else
 * ~/.local/state/tpuctl/jobs; one directory per job holding job.json
 * (the record) and the logs as they were received, s<S>-w<W>.out and
 * .err.  Caller frees.
 */
char *jobs_store_dir(void);
char *jobs_local_dir(const char *name);
char *jobs_local_log(const char *name, int slice, int worker, int stream);

/* The record of a spec (with per-worker states, nslices * nworkers, or
 * NULL for none known), and back.  Caller owns the cJSON. */
cJSON *jobs_record(const struct jobs_spec *, const struct jobs_state *states);
/* states: allocated (nslices * nworkers) when the record has them, else
 * NULL.  0 or TPU_E_API naming what is missing. */
int jobs_record_parse(const cJSON *, struct jobs_spec *,
    struct jobs_state **states, struct tpu_err *);

/*
 * The restart decision of `run --max-restarts` once an attempt has ended
 * everywhere.  The slice is lost when node_state is PREEMPTED or
 * TERMINATED, or NULL (the node is gone), and some worker did not exit 0
 * (lost, killed, failed): the node is recreated.  With the slice
 * healthy, a failure is rerun only with on_failure.  Workers with no
 * such job (JOBS_MISSING) were not part of it.  Nothing to do when
 * every worker exited 0.  A wanted restart past max_restarts is
 * EXHAUSTED.  cause gets the reason in a few words ("node n is
 * PREEMPTED") whenever a restart was wanted.
 */
enum jobs_restart {
	JOBS_RESTART_NONE = 0, /* the attempt's result is final */
	JOBS_RESTART_RECREATE, /* slice lost: recreate it, rerun */
	JOBS_RESTART_RERUN,    /* job failed, slice healthy: rerun */
	JOBS_RESTART_EXHAUSTED,
};
struct jobs_restart_in {
	const char *node;       /* its name, for the cause */
	const char *node_state; /* "READY", "PREEMPTED", ...; NULL: gone */
	const struct jobs_state *states;
	size_t n;
	int restarts, max_restarts, on_failure;
};
enum jobs_restart jobs_restart_decide(
    const struct jobs_restart_in *, char *cause, size_t n);

/*
 * The v2 Node body that recreates node (its description) with the same
 * spec: accelerator type (else config), runtime version, network,
 * service account, scheduling (spot...), labels (without run_label, the
 * tpuctl-run-id of the old creation), metadata, tags, data disks,
 * shielded VM config, description.  Caller deletes.
 */
cJSON *jobs_recreate_body(const cJSON *node, const char *run_label);

#endif
