/*
 * RLIMIT_NOFILE for fan-outs (see fdlimit.h).
 */
#include <sys/resource.h>

#include <errno.h>
#include <string.h>

#include "fdlimit.h"

int
fdlimit_plan(unsigned long long soft, unsigned long long hard, size_t need,
    unsigned long long *out)
{
	unsigned long long want = (unsigned long long)need + FDLIMIT_SLACK;

	if (want <= soft) {
		*out = soft;
		return 0;
	}
	if (want > hard)
		return -1;
	/* All we may (later growth fits too), but no more than the kernel's
	   usual fs.nr_open: setrlimit refuses beyond it. */
	*out = hard > FDLIMIT_CAP ? (want > FDLIMIT_CAP ? want : FDLIMIT_CAP)
	                          : hard;
	return 0;
}

int
fdlimit_ensure(size_t need, const char *what, struct tpu_err *err)
{
	struct rlimit rl;
	unsigned long long soft, hard, to;

	if (getrlimit(RLIMIT_NOFILE, &rl) != 0)
		return 0; /* cannot tell: let open() say so */
	soft = rl.rlim_cur == RLIM_INFINITY ? ~0ULL : rl.rlim_cur;
	hard = rl.rlim_max == RLIM_INFINITY ? ~0ULL : rl.rlim_max;
	if (fdlimit_plan(soft, hard, need, &to) != 0)
		return tpu_error(err, TPU_E_IO,
		    "%s needs %zu open files, but the limit is %llu (hard "
		    "limit, ulimit -Hn): raise it or use fewer workers",
		    what, need + FDLIMIT_SLACK, hard);
	if (to == soft)
		return 0;
	rl.rlim_cur = to == ~0ULL ? RLIM_INFINITY : (rlim_t)to;
	if (setrlimit(RLIMIT_NOFILE, &rl) != 0)
		return tpu_error(err, TPU_E_IO,
		    "%s needs %zu open files, but the limit is %llu and "
		    "cannot be raised: %s",
		    what, need + FDLIMIT_SLACK, soft, strerror(errno));
	return 0;
}
