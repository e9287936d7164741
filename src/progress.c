/*
 * A shared byte count with a rate-limited display (see progress.h).
 */
#include <string.h>

#include "progress.h"
#include "util.h"

void
progress_init(struct progress *pr, int64_t now_ms, int64_t every_ms,
    void (*draw)(void *, int), void *arg)
{
	memset(pr, 0, sizeof *pr);
	pthread_mutex_init(&pr->mu, NULL);
	pr->start_ms = pr->last_ms = now_ms;
	pr->every_ms = every_ms;
	pr->draw = draw;
	pr->arg = arg;
}

void
progress_release(struct progress *pr)
{
	pthread_mutex_destroy(&pr->mu);
}

void
progress_add_at(struct progress *pr, int64_t n, int64_t now_ms)
{
	pthread_mutex_lock(&pr->mu);
	pr->done += n;
	if (pr->every_ms > 0 && now_ms - pr->last_ms >= pr->every_ms) {
		pr->last_ms = now_ms;
		pr->draw(pr->arg, 0);
	}
	pthread_mutex_unlock(&pr->mu);
}

void
progress_add(struct progress *pr, int64_t n)
{
	progress_add_at(pr, n, tpu_now_ms());
}

double
progress_rate(const struct progress *pr, int64_t now_ms)
{
	int64_t el = now_ms - pr->start_ms;

	return el > 0 ? (double)pr->done * 1000.0 / (double)el : 0;
}
