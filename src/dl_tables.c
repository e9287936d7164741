/*
 * The three tables of src/dl.h (libcurl, libssh2, libcrypto), each
 * filled once, on first use, from its library: every symbol of the
 * library's list is resolved at load time, so a missing one is reported
 * by name before any call is made.
 */
#define TPU_DL_IMPL
#include "dl.h"

#include <pthread.h>

#define DL_NAME(f) #f,
#define DL_ADDR(f) table.f = (__typeof__(table.f))addrs[i++];

/*
 * One library: its symbol names, the resolved addresses, the function
 * table, the tpu_dl_lib description and the accessor tpu_dl_<lib>().
 */
#define DL_TABLE(lib, SYMS, so, pkg)                                           \
	static const char *const lib##_names[] = { SYMS(DL_NAME) };            \
	static void *lib##_addrs[sizeof lib##_names / sizeof lib##_names[0]];  \
	static struct tpu_dl_##lib lib##_table;                                \
	static pthread_once_t lib##_once = PTHREAD_ONCE_INIT;                  \
                                                                               \
	const struct tpu_dl_lib tpu_dl_##lib##_lib = {                         \
		.soname = so,                                                  \
		.package = pkg,                                                \
		.names = lib##_names,                                          \
		.addrs = lib##_addrs,                                          \
		.n = sizeof lib##_names / sizeof lib##_names[0],               \
	};                                                                     \
                                                                               \
	static void lib##_load(void)                                           \
	{                                                                      \
		void **addrs = lib##_addrs;                                    \
		struct tpu_dl_##lib table;                                     \
		size_t i = 0;                                                  \
                                                                               \
		tpu_dl_need(&tpu_dl_##lib##_lib);                              \
		SYMS(DL_ADDR)                                                  \
		lib##_table = table;                                           \
	}                                                                      \
                                                                               \
	const struct tpu_dl_##lib *tpu_dl_##lib(void)                          \
	{                                                                      \
		pthread_once(&lib##_once, lib##_load);                         \
		return &lib##_table;                                           \
	}

DL_TABLE(curl, TPU_DL_CURL_SYMS, "libcurl.so.4", "libcurl4")
DL_TABLE(ssh2, TPU_DL_SSH2_SYMS, "libssh2.so.1", "libssh2-1")
DL_TABLE(crypto, TPU_DL_CRYPTO_SYMS, "libcrypto.so.3", "libssl3")
