/*
 * The client side of a job's follow (src/jobs.h, jobs_follow_cmd): one
 * GNU tail on the worker prints the job's stdout, stderr and status
 * files into one stream, with a header "==> NAME <==\n" before the
 * first bytes of a file and "\n==> NAME <==\n" (tail's newline, not
 * the data's) whenever it goes on with another file.  The names carry
 * a random nonce of this follow (jobs_follow_name), so no byte a job
 * writes can be taken for a header.  logsplit takes the stream in
 * chunks of any size and gives each file's bytes back, unchanged and in
 * order, holding only what could still be the start of a header; a
 * header's bytes are never given out.  The first bytes of a stream may
 * be dropped (drop[]): the worker sent them again (one start offset for
 * both logs; the client had them already).
 */
#ifndef TPUCTL_LOGSPLIT_H
#define TPUCTL_LOGSPLIT_H

#include <stddef.h>
#include <stdint.h>

#include "buf.h"

/* The streams: bytes before any header (none from a worker that ran the
 * script), the job's stdout, stderr, and its status file. */
enum {
	LOGSPLIT_NONE = 0,
	LOGSPLIT_OUT = 1,
	LOGSPLIT_ERR = 2,
	LOGSPLIT_STATUS = 3,
	LOGSPLIT_NSTREAMS = 4,
};

typedef void (*logsplit_fn)(
    void *arg, int stream, const char *data, size_t len);

struct logsplit {
	char *mark[LOGSPLIT_NSTREAMS]; /* "\n==> NAME <==\n"; [0] unused */
	size_t mlen[LOGSPLIT_NSTREAMS];
	int cur;         /* the stream the bytes go to now */
	struct buf hold; /* a possible header's start */
	int virt;        /* hold starts with the virtual '\n' of the start */
	uint64_t drop[LOGSPLIT_NSTREAMS]; /* bytes still to drop */
	logsplit_fn fn;
	void *arg;
};

/*
 * names[0..2]: the names tail prints for stdout, stderr and status
 * (copied); drop_out and drop_err: how many first bytes of stdout and
 * stderr to drop.
 */
void logsplit_init(struct logsplit *, const char *const names[3],
    uint64_t drop_out, uint64_t drop_err, logsplit_fn, void *arg);
void logsplit_release(struct logsplit *);

/* The next chunk of the stream. */
void logsplit_feed(struct logsplit *, const char *data, size_t len);

/* The stream ended for good (not cut): what was held is data of the
 * current stream.  A cut stream is released without it (the held bytes
 * are sent again from the offsets). */
void logsplit_end(struct logsplit *);

#endif
