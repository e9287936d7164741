/*
 * A growable byte buffer with a hard cap.  Data is always NUL-terminated
 * (the terminator is not counted in len), so text can be used in place.
 * Growing past the cap is an error, not a reallocation: network data can
 * never make tpuctl grow without bound.
 */
#ifndef TPUCTL_BUF_H
#define TPUCTL_BUF_H

#include <stddef.h>

struct buf {
	char *data; /* never NULL after buf_init */
	size_t len;
	size_t size; /* allocated, including the terminator */
	size_t max;  /* cap on len; 0 means no cap */
};

#define BUF_NOCAP 0

void buf_init(struct buf *, size_t max);
void buf_release(struct buf *);
void buf_clear(struct buf *); /* len = 0, keeps the memory */
/* Append; -1 when the cap would be exceeded (buf unchanged), else 0. */
int buf_append(struct buf *, const void *, size_t);
int buf_puts(struct buf *, const char *);
int buf_printf(struct buf *, const char *, ...)
    __attribute__((format(printf, 2, 3)));
/* Hand the contents over to the caller (free() it); b is left released
 * (buf_init it again before reuse). */
char *buf_detach(struct buf *, size_t *);
/* Wipe the contents (for secrets) and release. */
void buf_release_secret(struct buf *);

#endif
