/*
 * Growable, capped, NUL-terminated byte buffers.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/crypto.h>

#include "buf.h"
#include "xmalloc.h"

void
buf_init(struct buf *b, size_t max)
{
	b->size = 64;
	b->data = xmalloc(b->size);
	b->data[0] = '\0';
	b->len = 0;
	b->max = max;
}

void
buf_release(struct buf *b)
{
	free(b->data);
	b->data = NULL;
	b->len = b->size = 0;
}

void
buf_release_secret(struct buf *b)
{
	if (b->data != NULL)
		OPENSSL_cleanse(b->data, b->size);
	buf_release(b);
}

void
buf_clear(struct buf *b)
{
	b->len = 0;
	b->data[0] = '\0';
}

static int
reserve(struct buf *b, size_t n)
{
	size_t need;

	if (b->max != BUF_NOCAP && (n > b->max || b->len > b->max - n))
		return -1;
	need = b->len + n + 1;
	if (need < b->len)
		return -1;
	if (need > b->size) {
		size_t size = b->size;

		while (size < need)
			size = size > ((size_t)-1) / 2 ? need : size * 2;
		b->data = xrealloc(b->data, size);
		b->size = size;
	}
	return 0;
}

int
buf_append(struct buf *b, const void *p, size_t n)
{
	if (reserve(b, n) == -1)
		return -1;
	if (n > 0)
		memcpy(b->data + b->len, p, n);
	b->len += n;
	b->data[b->len] = '\0';
	return 0;
}

int
buf_puts(struct buf *b, const char *s)
{
	return buf_append(b, s, strlen(s));
}

int
buf_printf(struct buf *b, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	if (n < 0 || reserve(b, (size_t)n) == -1)
		return -1;
	va_start(ap, fmt);
	vsnprintf(b->data + b->len, (size_t)n + 1, fmt, ap);
	va_end(ap);
	b->len += (size_t)n;
	return 0;
}

char *
buf_detach(struct buf *b, size_t *lenp)
{
	char *p = b->data;

	if (lenp != NULL)
		*lenp = b->len;
	b->data = NULL;
	b->len = b->size = 0;
	return p;
}
