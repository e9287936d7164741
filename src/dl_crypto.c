/*
 * The libcrypto.so.3 table of src/dl.h, loaded on first use.
 */
#define TPU_DL_IMPL
#include "dl.h"

#include <pthread.h>

#define NAME(f) #f,
#define ADDR(f) table.f = (__typeof__(table.f))addrs[i++];

static const char *const names[] = { TPU_DL_CRYPTO_SYMS(NAME) };
static void *addrs[sizeof names / sizeof names[0]];
static struct tpu_dl_crypto table;
static pthread_once_t once = PTHREAD_ONCE_INIT;

const struct tpu_dl_lib tpu_dl_crypto_lib = {
	.soname = "libcrypto.so.3",
	.package = "libssl3",
	.names = names,
	.addrs = addrs,
	.n = sizeof names / sizeof names[0],
};

static void
load(void)
{
	size_t i = 0;

	tpu_dl_need(&tpu_dl_crypto_lib);
	TPU_DL_CRYPTO_SYMS(ADDR)
}

const struct tpu_dl_crypto *
tpu_dl_crypto(void)
{
	pthread_once(&once, load);
	return &table;
}
