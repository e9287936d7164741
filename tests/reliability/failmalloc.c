/*
 * An LD_PRELOAD allocation failer for allocation torture (RELIABILITY.md
 * G1): FAILMALLOC_AT=n makes the n-th malloc, calloc, realloc or
 * posix_memalign of the process return NULL (ENOMEM), once; the others
 * go to glibc.  FAILMALLOC_COUNT=FILE writes the number of allocations
 * made to FILE at exit (to choose the n to try).  FAILMALLOC_SPARE=LIB
 * never fails (nor counts) an allocation called from the shared object
 * whose path contains LIB: libcrypto, whose lazy initialisation (OpenSSL
 * 3.0) does not check a failed lock allocation and later crashes in
 * CRYPTO_THREAD_read_lock(NULL) under EVP_MD_fetch.  Built by t271.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

extern void *__libc_malloc(size_t);
extern void *__libc_calloc(size_t, size_t);
extern void *__libc_realloc(void *, size_t);
extern void *__libc_memalign(size_t, size_t);

static long fail_at = -1;
static long count;
static int ready;
static const char *spare;

__attribute__((constructor)) static void
failmalloc_init(void)
{
	const char *s = getenv("FAILMALLOC_AT");

	if (s != NULL && *s != '\0')
		fail_at = strtol(s, NULL, 10);
	if ((s = getenv("FAILMALLOC_SPARE")) != NULL && *s != '\0')
		spare = s;
	ready = 1;
}

__attribute__((destructor)) static void
failmalloc_fini(void)
{
	const char *f = getenv("FAILMALLOC_COUNT");
	char b[32];
	int fd, n;

	if (f == NULL || (fd = open(f, O_WRONLY | O_CREAT | O_TRUNC, 0600)) < 0)
		return;
	n = snprintf(b, sizeof(b), "%ld\n", count);
	if (write(fd, b, (size_t)n) < 0)
		n = 0;
	close(fd);
}

/* Is the allocation (made from the code at ret) one to spare? */
static int
spared(void *ret)
{
	Dl_info info;

	return spare != NULL && dladdr(ret, &info) != 0 &&
	       info.dli_fname != NULL && strstr(info.dli_fname, spare) != NULL;
}

static int
fail_now_from(void *ret)
{
	if (!ready || spared(ret))
		return 0;
	return __atomic_add_fetch(&count, 1, __ATOMIC_RELAXED) == fail_at;
}

void *
malloc(size_t n)
{
	if (fail_now_from(__builtin_return_address(0))) {
		errno = ENOMEM;
		return NULL;
	}
	return __libc_malloc(n);
}

void *
calloc(size_t a, size_t b)
{
	if (fail_now_from(__builtin_return_address(0))) {
		errno = ENOMEM;
		return NULL;
	}
	return __libc_calloc(a, b);
}

void *
realloc(void *p, size_t n)
{
	if (fail_now_from(__builtin_return_address(0))) {
		errno = ENOMEM;
		return NULL;
	}
	return __libc_realloc(p, n);
}

int
posix_memalign(void **p, size_t align, size_t n)
{
	if (fail_now_from(__builtin_return_address(0)))
		return ENOMEM;
	*p = __libc_memalign(align, n);
	return *p == NULL ? ENOMEM : 0;
}
