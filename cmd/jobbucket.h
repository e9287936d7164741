/*
 * A submitted job's objects in its bucket (jobs_upload, src/jobs.h):
 * each worker's uploader keeps gs://B/PREFIX/jobs/JOB/wS-W.out, .err
 * and .state there.  When the slice is gone (delete-after deleted it),
 * jobs, logs and cancel read them instead of asking the workers.
 */
#ifndef TPUCTL_JOBBUCKET_H
#define TPUCTL_JOBBUCKET_H

#include "ctx.h"
#include "err.h"
#include "jobcmd.h"

/*
 * Read the objects of jc's job (jc->spec.log_url; none: 0, *found 0)
 * into its local record: a worker's .out and .err replace the local
 * copy of that worker's logs (they hold the whole stream), its .state
 * sets its state unless the record has a known end already
 * (jobs_state_known).  With gone (the slice is gone), a worker whose
 * state is not final there is lost: nothing runs it any more.  *found:
 * the workers with a state object.  The record is saved.  0 or the
 * storage error (the local record is left as it was for that worker).
 */
int jobbucket_sync(struct tpu_ctx *, struct jobcmd *, int gone, size_t *found,
    struct tpu_err *);

#endif
