/*
 * The libcurl.so.4 table of src/dl.h, loaded on first use.
 */
#define TPU_DL_IMPL
#include "dl.h"

#include <pthread.h>

#define NAME(f) #f,
#define ADDR(f) table.f = (__typeof__(table.f))addrs[i++];

static const char *const names[] = { TPU_DL_CURL_SYMS(NAME) };
static void *addrs[sizeof names / sizeof names[0]];
static struct tpu_dl_curl table;
static pthread_once_t once = PTHREAD_ONCE_INIT;

const struct tpu_dl_lib tpu_dl_curl_lib = {
	.soname = "libcurl.so.4",
	.package = "libcurl4",
	.names = names,
	.addrs = addrs,
	.n = sizeof names / sizeof names[0],
};

static void
load(void)
{
	size_t i = 0;

	tpu_dl_need(&tpu_dl_curl_lib);
	TPU_DL_CURL_SYMS(ADDR)
}

const struct tpu_dl_curl *
tpu_dl_curl(void)
{
	pthread_once(&once, load);
	return &table;
}
