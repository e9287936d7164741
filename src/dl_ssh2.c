/*
 * The libssh2.so.1 table of src/dl.h, loaded on first use.
 */
#define TPU_DL_IMPL
#include "dl.h"

#include <pthread.h>

#define NAME(f) #f,
#define ADDR(f) table.f = (__typeof__(table.f))addrs[i++];

static const char *const names[] = { TPU_DL_SSH2_SYMS(NAME) };
static void *addrs[sizeof names / sizeof names[0]];
static struct tpu_dl_ssh2 table;
static pthread_once_t once = PTHREAD_ONCE_INIT;

const struct tpu_dl_lib tpu_dl_ssh2_lib = {
	.soname = "libssh2.so.1",
	.package = "libssh2-1",
	.names = names,
	.addrs = addrs,
	.n = sizeof names / sizeof names[0],
};

static void
load(void)
{
	size_t i = 0;

	tpu_dl_need(&tpu_dl_ssh2_lib);
	TPU_DL_SSH2_SYMS(ADDR)
}

const struct tpu_dl_ssh2 *
tpu_dl_ssh2(void)
{
	pthread_once(&once, load);
	return &table;
}
