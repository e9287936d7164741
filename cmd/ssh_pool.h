/*
 * The warm pool's entry points for commands other than ssh (issue 18):
 * cmd/ssh_pool.c.  ssh itself goes through fanout_run (fanout.h's
 * fanout_warm_run).
 */
#ifndef TPUCTL_CMD_SSH_POOL_H
#define TPUCTL_CMD_SSH_POOL_H

#include <stddef.h>

#include "ctx.h"
#include "err.h"
#include "sshcmd.h"
#include "sshpool.h"

/*
 * --persist / ssh/persist (what names it in a message): "no" or NULL
 * is 0, else a duration of 1 s to 24 h into *secs.  0 or TPU_E_USAGE.
 */
int ssh_pool_parse_persist(
    const char *what, const char *v, int *secs, struct tpu_err *);

/*
 * The hook of the job commands' short remote commands (jobs' status
 * reads, cancel; cmd/util_job.c's jobcmd_round): run targets t[0..n)
 * of sc's node with o through the node's connection holder, as
 * sshpool_run would (on_output/on_done calls, results, return code).
 * A holder that already runs for the node is used; with ssh/persist a
 * duration one is started when none runs.  1 when no holder is used
 * (ssh/persist no and none runs, a queued resource, a passphrase, the
 * holder refused or gone before the run): the caller runs cold.
 */
int ssh_pool_job_run(struct tpu_ctx *, struct sshcmd *sc,
    const struct sshpool_target *t, size_t n, const struct sshpool_opts *o,
    struct sshpool_result *res, struct tpu_err *);

#endif
