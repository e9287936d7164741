/*
 * Splitting a follow's one stream back into the job's files (see
 * logsplit.h).
 */
#include <stdlib.h>
#include <string.h>

#include "logsplit.h"
#include "xmalloc.h"

void
logsplit_init(struct logsplit *ls, const char *const names[3],
    uint64_t drop_out, uint64_t drop_err, logsplit_fn fn, void *arg)
{
	int s;

	memset(ls, 0, sizeof *ls);
	for (s = 1; s < LOGSPLIT_NSTREAMS; s++) {
		ls->mark[s] = xasprintf("\n==> %s <==\n", names[s - 1]);
		ls->mlen[s] = strlen(ls->mark[s]);
	}
	ls->cur = LOGSPLIT_NONE;
	ls->drop[LOGSPLIT_OUT] = drop_out;
	ls->drop[LOGSPLIT_ERR] = drop_err;
	ls->fn = fn;
	ls->arg = arg;
	buf_init(&ls->hold, BUF_NOCAP);
	/* tail's first header has no newline before it: as if it had */
	buf_append(&ls->hold, "\n", 1);
	ls->virt = 1;
}

void
logsplit_release(struct logsplit *ls)
{
	int s;

	for (s = 0; s < LOGSPLIT_NSTREAMS; s++)
		free(ls->mark[s]);
	buf_release(&ls->hold);
	memset(ls, 0, sizeof *ls);
}

/* Bytes [a, b) of the hold to the current stream. */
static void
emit(struct logsplit *ls, size_t a, size_t b)
{
	const char *p;
	size_t n;
	uint64_t k;

	if (a == 0 && ls->virt && b > 0) {
		a = 1; /* the virtual newline is no data */
		ls->virt = 0;
	}
	if (a >= b)
		return;
	p = ls->hold.data + a;
	n = b - a;
	k = ls->drop[ls->cur] < n ? ls->drop[ls->cur] : n;
	ls->drop[ls->cur] -= k;
	p += k;
	n -= (size_t)k;
	if (n > 0 && ls->fn != NULL)
		ls->fn(ls->arg, ls->cur, p, n);
}

/* Keep [from, len) of the hold. */
static void
keep(struct logsplit *ls, size_t from)
{
	struct buf *h = &ls->hold;

	if (from > 0 && ls->virt)
		ls->virt = 0;
	memmove(h->data, h->data + from, h->len - from);
	h->len -= from;
	h->data[h->len] = '\0';
}

void
logsplit_feed(struct logsplit *ls, const char *data, size_t len)
{
	struct buf *h = &ls->hold;
	size_t e = 0, pos = 0;

	if (len > 0)
		buf_append(h, data, len);
	for (;;) {
		const char *nl = pos < h->len
		                     ? memchr(h->data + pos, '\n', h->len - pos)
		                     : NULL;
		size_t j, avail;
		int s, partial = 0, hit = 0;

		if (nl == NULL) {
			emit(ls, e, h->len);
			keep(ls, h->len);
			return;
		}
		j = (size_t)(nl - h->data);
		avail = h->len - j;
		for (s = 1; s < LOGSPLIT_NSTREAMS && !hit; s++) {
			if (avail >= ls->mlen[s]) {
				if (memcmp(h->data + j, ls->mark[s],
				        ls->mlen[s]) == 0) {
					emit(ls, e, j);
					ls->virt = 0;
					ls->cur = s;
					e = pos = j + ls->mlen[s];
					hit = 1;
				}
			} else if (memcmp(h->data + j, ls->mark[s], avail) == 0)
				partial = 1;
		}
		if (hit)
			continue;
		if (partial) {
			/* maybe a header: wait for its end */
			emit(ls, e, j);
			keep(ls, j);
			return;
		}
		pos = j + 1;
	}
}

void
logsplit_end(struct logsplit *ls)
{
	emit(ls, 0, ls->hold.len);
	keep(ls, ls->hold.len);
}
