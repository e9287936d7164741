/*
 * Allocation wrappers that abort on failure, with an optional injected
 * failure for allocation-torture runs (TPUCTL_FAIL_ALLOC_AT).
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/crypto.h>

#include "xmalloc.h"

static long fail_at = -1;
static long nalloc;

static void
fail_init(void)
{
	static int done;
	const char *s;
	char *end;

	if (done)
		return;
	done = 1;
	if ((s = getenv("TPUCTL_FAIL_ALLOC_AT")) == NULL || *s == '\0')
		return;
	errno = 0;
	fail_at = strtol(s, &end, 10);
	if (errno != 0 || *end != '\0' || fail_at < 1)
		fail_at = -1;
}

static void oom(size_t) __attribute__((noreturn));

static void
oom(size_t n)
{
	fprintf(stderr, "tpuctl: out of memory (allocating %zu bytes)\n", n);
	abort();
}

static int
injected(void)
{
	fail_init();
	return fail_at > 0 && ++nalloc == fail_at;
}

void *
xmalloc(size_t n)
{
	void *p;

	if (n == 0)
		n = 1;
	if (injected() || (p = malloc(n)) == NULL)
		oom(n);
	return p;
}

void *
xcalloc(size_t nmemb, size_t size)
{
	void *p;

	if (nmemb == 0 || size == 0)
		nmemb = size = 1;
	if (injected() || (p = calloc(nmemb, size)) == NULL)
		oom(nmemb * size);
	return p;
}

void *
xrealloc(void *ptr, size_t n)
{
	void *p;

	if (n == 0)
		n = 1;
	if (injected() || (p = realloc(ptr, n)) == NULL)
		oom(n);
	return p;
}

void *
xreallocarray(void *ptr, size_t nmemb, size_t size)
{
	if (size != 0 && nmemb > SIZE_MAX / size)
		oom(SIZE_MAX);
	return xrealloc(ptr, nmemb * size);
}

char *
xstrdup(const char *s)
{
	return xstrndup(s, strlen(s));
}

char *
xstrndup(const char *s, size_t n)
{
	char *p;
	size_t len;

	len = strnlen(s, n);
	p = xmalloc(len + 1);
	memcpy(p, s, len);
	p[len] = '\0';
	return p;
}

char *
xvasprintf(const char *fmt, va_list ap)
{
	va_list ap2;
	char *p;
	int n;

	va_copy(ap2, ap);
	n = vsnprintf(NULL, 0, fmt, ap2);
	va_end(ap2);
	if (n < 0) {
		fprintf(stderr, "tpuctl: bad format string '%s'\n", fmt);
		abort();
	}
	p = xmalloc((size_t)n + 1);
	vsnprintf(p, (size_t)n + 1, fmt, ap);
	return p;
}

char *
xasprintf(const char *fmt, ...)
{
	va_list ap;
	char *p;

	va_start(ap, fmt);
	p = xvasprintf(fmt, ap);
	va_end(ap);
	return p;
}

void
xfree_secret(char *s)
{
	if (s == NULL)
		return;
	OPENSSL_cleanse(s, strlen(s));
	free(s);
}
