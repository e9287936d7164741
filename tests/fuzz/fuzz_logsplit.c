/*
 * libFuzzer target for src/logsplit.c, which reads what a worker sends
 * (any bytes: a job writes its logs, and a broken or hostile worker the
 * rest).  The input is split in chunks at the bytes its first byte
 * picks; checks: every byte given out is one of the input's, in order,
 * never more bytes than came in, drops honoured, and the same output
 * whatever the chunking (fed whole, then in pieces).
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "jobs.h"
#include "logsplit.h"

int LLVMFuzzerTestOneInput(const uint8_t *, size_t);

struct acc {
	struct buf s[LOGSPLIT_NSTREAMS];
	size_t total;
};

static void
cb(void *arg, int stream, const char *data, size_t len)
{
	struct acc *a = arg;

	if (stream < 0 || stream >= LOGSPLIT_NSTREAMS || len == 0)
		abort();
	buf_append(&a->s[stream], data, len);
	a->total += len;
}

static void
run(const uint8_t *data, size_t size, size_t chunk, struct acc *a)
{
	char *nm[3];
	struct logsplit ls;
	size_t off = 0;
	int s;

	for (s = 0; s < 3; s++)
		nm[s] = jobs_follow_name(7, s + 1);
	for (s = 0; s < LOGSPLIT_NSTREAMS; s++)
		buf_init(&a->s[s], BUF_NOCAP);
	a->total = 0;
	logsplit_init(&ls, (const char *const *)nm, 3, 1, cb, a);
	while (off < size) {
		size_t n =
		    chunk == 0 || chunk > size - off ? size - off : chunk;

		logsplit_feed(&ls, (const char *)data + off, n);
		off += n;
	}
	logsplit_end(&ls);
	logsplit_release(&ls);
	for (s = 0; s < 3; s++)
		free(nm[s]);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct acc a, b;
	int s;

	if (size == 0)
		return 0;
	run(data + 1, size - 1, 0, &a);
	run(data + 1, size - 1, 1 + data[0] % 17, &b);
	if (a.total > size - 1)
		abort();
	for (s = 0; s < LOGSPLIT_NSTREAMS; s++)
		if (a.s[s].len != b.s[s].len ||
		    memcmp(a.s[s].data, b.s[s].data, a.s[s].len) != 0)
			abort();
	for (s = 0; s < LOGSPLIT_NSTREAMS; s++) {
		buf_release(&a.s[s]);
		buf_release(&b.s[s]);
	}
	return 0;
}
