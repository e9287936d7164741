/*
 * Shared plumbing of the framework commands (install, doctor,
 * reset-workers): the node's generation and runtime version from one
 * nodes.get (cached for the SSH side that follows), the scripts of the
 * configuration directory (compat.h), and one run of a remote command on
 * the selected workers with "[wN] " prefixed output, a line per worker
 * and a total on stderr, and the 0 / 8 / 9 exit contract.
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
 * cache.  0, TPU_E_NOTFOUND naming node and zone, or another error.
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
 * Run command on sc's targets (SIGINT/SIGTERM stop it: retry.h's
 * retry_interrupted, installed here).  what names the run in the total
 * ("jax 0.6.1: 3 of 4 workers succeeded"), failed says what a nonzero
 * exit means ("failed", "have findings").  Returns 0, TPU_E_PARTIAL,
 * TPU_E_UNREACHABLE, TPU_E_INTERRUPTED or TPU_E_TERMINATED with err set.
 */
int fwcmd_run(struct sshcmd *, const char *command, int timeout_s,
    const char *what, const char *failed, struct tpu_err *);

#endif
