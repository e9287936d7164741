/*
 * Enough file descriptors for a fan-out: one socket per session in
 * flight, and with --output-dir one log file per worker, all open at
 * once.  The soft RLIMIT_NOFILE (1024 on most systems) is raised toward
 * the hard limit when that is needed; a hard limit that is too low is
 * an error naming both numbers, before any worker is contacted.
 */
#ifndef TPUCTL_FDLIMIT_H
#define TPUCTL_FDLIMIT_H

#include <stddef.h>

#include "err.h"

/* Descriptors kept free beyond the need (stdio, config, API, ...). */
#define FDLIMIT_SLACK 64
/* Raised at most this far when the hard limit is higher (fs.nr_open). */
#define FDLIMIT_CAP 1048576ULL

/*
 * The soft limit to set for need descriptors under limits soft/hard
 * for need plus FDLIMIT_SLACK: the current soft one when it is enough,
 * else the hard one (at most FDLIMIT_CAP, or the want when that is
 * more): 0 and *out, or -1 when even the hard limit is below it.
 */
int fdlimit_plan(unsigned long long soft, unsigned long long hard, size_t need,
    unsigned long long *out);

/*
 * Make room for need descriptors, raising the soft limit as
 * fdlimit_plan says.  0, or TPU_E_IO (exit 1) with a message
 * naming what (e.g. "--output-dir for 2048 workers"), the need and the
 * hard limit when it is too low.
 */
int fdlimit_ensure(size_t need, const char *what, struct tpu_err *err);

#endif
