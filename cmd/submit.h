/*
 * What `tpuctl submit` offers the job commands about a submitted job's
 * capacity (its queued resource).
 */
#ifndef TPUCTL_SUBMIT_H
#define TPUCTL_SUBMIT_H

#include "ctx.h"
#include "err.h"
#include "jobs.h"

/*
 * Whether the queued resource of submitted job s (s->slice, in s->zone)
 * can still bring the job's capacity: 0 when it is on its way or there
 * (ACCEPTED, WAITING_FOR_RESOURCES, PROVISIONING, ACTIVE, ...); else
 * TPU_E_OPERATION (exit 7) naming the job and why: the queued resource
 * is FAILED (e.g. still waiting at its valid-until), SUSPENDED,
 * SUSPENDING or gone.  Other errors as the API's GET gives them.
 */
int submit_capacity_lost(
    struct tpu_ctx *, const struct jobs_spec *s, struct tpu_err *);

#endif
