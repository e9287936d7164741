/*
 * A byte count that transfer threads add to, with a display redrawn at
 * most every so many milliseconds: scp's and data cp's line on a
 * terminal, data cp's JSON lines.  progress_add takes the lock, adds,
 * and when every_ms have passed since the last draw calls the owner's
 * draw function (still under the lock, so it may read the owner's other
 * fields that are kept under mu).  The owner draws the final state
 * itself, once the threads are done.
 */
#ifndef TPUCTL_PROGRESS_H
#define TPUCTL_PROGRESS_H

#include <pthread.h>
#include <stdint.h>

struct progress {
	pthread_mutex_t mu;
	int64_t start_ms; /* tpu_now_ms() at progress_init */
	int64_t last_ms;  /* the last draw; start_ms after init, 0: at once */
	int64_t every_ms; /* 0: progress_add never draws */
	int64_t done;     /* bytes so far */
	void (*draw)(void *arg, int final);
	void *arg;
};

/*
 * Set up pr at now_ms (start_ms and last_ms), drawing through
 * draw(arg, 0) at most every every_ms; draw may be NULL when every_ms
 * is 0.  progress_release frees the lock.
 */
void progress_init(struct progress *pr, int64_t now_ms, int64_t every_ms,
    void (*draw)(void *, int), void *arg);
void progress_release(struct progress *pr);

/* Add n bytes (at tpu_now_ms(), or at now_ms) and draw when it is time. */
void progress_add(struct progress *pr, int64_t n);
void progress_add_at(struct progress *pr, int64_t n, int64_t now_ms);

/* Bytes per second from start_ms to now_ms (0 when no time has passed). */
double progress_rate(const struct progress *pr, int64_t now_ms);

#endif
