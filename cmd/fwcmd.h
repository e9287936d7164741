/*
 * Shared plumbing of the framework commands (install, doctor,
 * reset-workers, and run --framework): the node's generation and runtime
 * version from one nodes.get (cached for the SSH side that follows), the
 * scripts of the configuration directory (compat.h), and one run of a remote
 * command on the selected workers with "[wN] " prefixed output, a line per
 * worker and a total on stderr, and the 0 / 8 / 9 exit contract.
 */
#ifndef TPUCTL_FWCMD_H
#define TPUCTL_FWCMD_H

#include <stddef.h>

#include "ctx.h"
#include "err.h"
#include "sshcmd.h"

/*
 * Read node name: its generation (catalog name, "v4") and runtime
 * version into gen and runtime; the description goes into the node
 * cache.  A name that is no node may be a queued resource: every node of
 * it is read (and cached, with its membership), and all must have the
 * same generation and runtime (else TPU_E_PRECONDITION); it must be
 * ACTIVE.  0, TPU_E_NOTFOUND naming name and zone, or another error.
 */
int fwcmd_read_node(struct tpu_ctx *, const char *name, char *gen,
    size_t genlen, char *runtime, size_t rtlen, struct tpu_err *);

/*
 * The text of dir/rel (a recipe or a probe) into *out (caller frees).
 * 0 or an error naming the path.
 */
int fwcmd_read_script(
    const char *dir, const char *rel, char **out, struct tpu_err *);

/*
 * Run command on sc's targets through fanout_run (fanout.h): its stderr
 * joins its stdout, "[wN] " prefixed; a line per worker and the total
 * ("jax 0.6.1: 3 of 4 workers succeeded") on stderr, for one worker too;
 * SIGINT/SIGTERM stop it (retry.h's retry_interrupted).  failed says
 * what a nonzero exit means ("failed", "have findings").  Returns 0,
 * TPU_E_PARTIAL, TPU_E_UNREACHABLE, TPU_E_INTERRUPTED or
 * TPU_E_TERMINATED with err set (a remote status is never returned).
 */
int fwcmd_run(struct tpu_ctx *, struct sshcmd *, const char *command,
    int timeout_s, const char *what, const char *failed, struct tpu_err *);

/*
 * The global --dry-run of a command that runs something on the workers
 * (install, run, notebook, cancel): resolve the slice name with reads
 * only (no ssh-keys patch, no host key pinned), print on stdout one line
 * per selected worker, "[wN] USER@HOST:PORT: WHAT" (as ssh --dry-run
 * does), and open no SSH session.  Returns 0 or the resolution's error.
 */
int fwcmd_dry_run(struct tpu_ctx *, const char *name,
    const struct sshcmd_opts *, const char *what, struct tpu_err *);

/* What fwcmd_install installs, and how. */
struct fwcmd_install {
	const char *framework;    /* "jax", or what the user gave ("mxnet") */
	const char *version;      /* NULL: the newest that works */
	const char *python;       /* the workers' interpreter ("python3") */
	const char *const *links; /* --find-links, or NULL: the matrix's */
	int nlinks;
	int no_index;  /* pip --no-index */
	int timeout_s; /* per worker; 0: none */
	/* the option that gives version, for the refusals' advice
	   ("--version"; run: "--framework-version") */
	const char *version_flag;
};

void fwcmd_install_init(struct fwcmd_install *);

/*
 * "tpuctl install": fi's framework on the workers of name selected by so
 * (cmd/install.c; "tpuctl run --framework" calls it too).  The matrix
 * and the node's generation and runtime are checked first: a refusal
 * (TPU_E_USAGE, one line with the nearest working choice) happens before
 * anything runs on any worker.  Then the recipe runs through fwcmd_run:
 * 0, TPU_E_PARTIAL, TPU_E_UNREACHABLE, TPU_E_INTERRUPTED,
 * TPU_E_TERMINATED, or another error.
 */
/*
 * The matrix's part of fwcmd_install, no request: fi's framework and
 * version checked (TPU_E_USAGE with advice); with gen NULL only that.
 * Else resolved for generation gen and runtime version runtime, and
 * *command the worker-side install line (the recipe, run by sh as the
 * SSH user), *what (when not NULL) "FRAMEWORK VERSION"; say: log which
 * (name, the node, in the line).  Caller frees both.
 */
int fwcmd_install_command(const struct fwcmd_install *, const char *name,
    const char *gen, const char *runtime, char **command, char **what, int say,
    struct tpu_err *);

int fwcmd_install(struct tpu_ctx *, const char *name,
    const struct sshcmd_opts *, const struct fwcmd_install *, struct tpu_err *);

#endif
