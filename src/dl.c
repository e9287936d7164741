/*
 * The loader behind src/dl.h: dlopen a library by soname, resolve a list
 * of symbols, and say in one line what is missing when that fails.
 */
#define TPU_DL_IMPL
#include "dl.h"

#include <dlfcn.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>

int
tpu_dl_open(const struct tpu_dl_lib *lib, char *msg, size_t len)
{
	const char *why;
	void *h;
	size_t i;

	(void)dlerror();
	h = dlopen(lib->soname, RTLD_NOW | RTLD_LOCAL);
	if (h == NULL) {
		why = dlerror();
		snprintf(msg, len,
		    "cannot load %s (install the Debian package %s): %s",
		    lib->soname, lib->package, why != NULL ? why : "unknown");
		return -1;
	}
	for (i = 0; i < lib->n; i++) {
		(void)dlerror();
		lib->addrs[i] = dlsym(h, lib->names[i]);
		if (lib->addrs[i] == NULL) {
			snprintf(msg, len,
			    "%s has no symbol %s (the Debian package %s is "
			    "too old or too new for this tpuctl)",
			    lib->soname, lib->names[i], lib->package);
			/* The handle stays open: a library that was
			 * already loaded by the program must stay. */
			return -1;
		}
	}
	/* Never dlclose()d: the functions are used until exit. */
	return 0;
}

void
tpu_dl_need(const struct tpu_dl_lib *lib)
{
	char msg[1024];

	if (tpu_dl_open(lib, msg, sizeof msg) == 0)
		return;
	fflush(stdout);
	fprintf(stderr, "tpuctl: %s\n", msg);
	exit(1);
}

void
tpu_dl_cleanse(void *p, size_t n)
{
	if (p != NULL && n > 0)
		explicit_bzero(p, n);
}

int
tpu_dl_rand_bytes(unsigned char *p, int n)
{
	size_t want, got = 0;
	ssize_t r;

	if (n < 0)
		return 0;
	want = (size_t)n;
	while (got < want) {
		r = getrandom(p + got, want - got, 0);
		if (r < 0) {
			if (errno == EINTR)
				continue;
			return 0;
		}
		got += (size_t)r;
	}
	return 1;
}
