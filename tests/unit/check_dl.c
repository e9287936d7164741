/*
 * Unit tests for src/dl*.c: every symbol of the libcurl, libssh2 and
 * libcrypto tables resolves to the very function the linker gives this
 * (directly linked) test program; the macro redirections of src/dl.h and
 * the symbol lists agree; a missing library or symbol is one line naming
 * it and exit status 1, never a crash; the two local stand-ins
 * (OPENSSL_cleanse, RAND_bytes) work without libcrypto.
 */
#define TPU_DL_IMPL
#include "dl.h"

#include <sys/wait.h>

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <check.h>

static void
check_slot(void *slot, const char *name)
{
	void *real = dlsym(RTLD_DEFAULT, name);

	ck_assert_msg(slot != NULL, "%s not resolved", name);
	ck_assert_msg(real != NULL, "%s not linked into the test", name);
	ck_assert_msg(slot == real, "%s resolved to another copy", name);
}

#define CHECK_CURL(f) check_slot((void *)curl->f, #f);
#define CHECK_SSH2(f) check_slot((void *)ssh2->f, #f);
#define CHECK_CRYPTO(f) check_slot((void *)crypto->f, #f);
#define COUNT(f) +1

START_TEST(tables_resolve_every_symbol)
{
	const struct tpu_dl_curl *curl = tpu_dl_curl();
	const struct tpu_dl_ssh2 *ssh2 = tpu_dl_ssh2();
	const struct tpu_dl_crypto *crypto = tpu_dl_crypto();
	size_t i;

	TPU_DL_CURL_SYMS(CHECK_CURL)
	TPU_DL_SSH2_SYMS(CHECK_SSH2)
	TPU_DL_CRYPTO_SYMS(CHECK_CRYPTO)
	/* The name lists are the X() lists, in order. */
	ck_assert_uint_eq(tpu_dl_curl_lib.n, 0 TPU_DL_CURL_SYMS(COUNT));
	ck_assert_uint_eq(tpu_dl_ssh2_lib.n, 0 TPU_DL_SSH2_SYMS(COUNT));
	ck_assert_uint_eq(tpu_dl_crypto_lib.n, 0 TPU_DL_CRYPTO_SYMS(COUNT));
	for (i = 0; i < tpu_dl_curl_lib.n; i++)
		ck_assert_ptr_eq(tpu_dl_curl_lib.addrs[i],
		    dlsym(RTLD_DEFAULT, tpu_dl_curl_lib.names[i]));
	/* Same table on every call; and it works. */
	ck_assert_ptr_eq(tpu_dl_curl(), curl);
	ck_assert_str_eq(curl->curl_version_info(CURLVERSION_NOW)->version,
	    curl_version_info(CURLVERSION_NOW)->version);
	ck_assert_str_eq(ssh2->libssh2_version(0), libssh2_version(0));
	ck_assert_str_eq(crypto->OpenSSL_version(OPENSSL_VERSION),
	    OpenSSL_version(OPENSSL_VERSION));
}
END_TEST

/* Is name among lib's symbols? */
static int
listed(const struct tpu_dl_lib *lib, const char *name)
{
	size_t i;

	for (i = 0; i < lib->n; i++)
		if (strcmp(lib->names[i], name) == 0)
			return 1;
	return 0;
}

/*
 * src/dl.h's "#define f TPU_DL_<LIB>_(f)" lines and the X() lists: one
 * redirection per listed symbol, to the right table, and none for a
 * symbol that is not resolved.
 */
START_TEST(redirections_match_lists)
{
	static const struct {
		const char *macro;
		const struct tpu_dl_lib *lib;
	} libs[] = {
		{ "TPU_DL_CURL_", &tpu_dl_curl_lib },
		{ "TPU_DL_SSH2_", &tpu_dl_ssh2_lib },
		{ "TPU_DL_CRYPTO_", &tpu_dl_crypto_lib },
	};
	const char *srcdir = getenv("TPUCTL_TEST_SRCDIR");
	char path[4096], line[512], name[128], macro[64], arg[128];
	size_t seen[3] = { 0, 0, 0 }, i;
	FILE *fp;

	snprintf(
	    path, sizeof path, "%s/src/dl.h", srcdir != NULL ? srcdir : ".");
	fp = fopen(path, "r");
	ck_assert_msg(fp != NULL, "cannot open %s", path);
	while (fgets(line, sizeof line, fp) != NULL) {
		size_t n = strlen(line);

		/* Join continued lines (clang-format wraps long ones). */
		while (
		    n >= 2 && line[n - 2] == '\\' && line[n - 1] == '\n' &&
		    fgets(line + n - 2, (int)(sizeof line - n + 2), fp) != NULL)
			n = strlen(line);
		if (sscanf(line, "#define %127s %63[A-Z0-9_](%127[^)])", name,
		        macro, arg) != 3)
			continue;
		for (i = 0; i < 3; i++)
			if (strcmp(macro, libs[i].macro) == 0)
				break;
		if (i == 3)
			continue;
		ck_assert_msg(
		    strcmp(name, arg) == 0, "%s redirected to %s", name, arg);
		ck_assert_msg(listed(libs[i].lib, name),
		    "%s is redirected to %s but not in its list", name,
		    libs[i].lib->soname);
		seen[i]++;
	}
	fclose(fp);
	for (i = 0; i < 3; i++)
		ck_assert_msg(seen[i] == libs[i].lib->n,
		    "%s: %zu redirections for %zu symbols", libs[i].lib->soname,
		    seen[i], libs[i].lib->n);
}
END_TEST

START_TEST(missing_library_named)
{
	static const char *const names[] = { "curl_easy_init" };
	void *addrs[1];
	const struct tpu_dl_lib lib = {
		.soname = "libtpuctl-no-such-lib.so.7",
		.package = "tpuctl-no-such-package",
		.names = names,
		.addrs = addrs,
		.n = 1,
	};
	char msg[1024];

	ck_assert_int_eq(tpu_dl_open(&lib, msg, sizeof msg), -1);
	ck_assert_ptr_nonnull(
	    strstr(msg, "cannot load libtpuctl-no-such-lib.so.7"));
	ck_assert_ptr_nonnull(
	    strstr(msg, "Debian package tpuctl-no-such-package"));
	ck_assert_ptr_null(strchr(msg, '\n'));
}
END_TEST

static const char *const bad_names[] = { "curl_easy_init",
	"curl_tpuctl_no_such_function", "curl_easy_cleanup" };
static void *bad_addrs[3];
static const struct tpu_dl_lib bad_lib = {
	.soname = "libcurl.so.4",
	.package = "libcurl4",
	.names = bad_names,
	.addrs = bad_addrs,
	.n = 3,
};

START_TEST(missing_symbol_named)
{
	char msg[1024];

	ck_assert_int_eq(tpu_dl_open(&bad_lib, msg, sizeof msg), -1);
	ck_assert_ptr_nonnull(strstr(
	    msg, "libcurl.so.4 has no symbol curl_tpuctl_no_such_function"));
	ck_assert_ptr_nonnull(strstr(msg, "libcurl4"));
	ck_assert_ptr_nonnull(bad_addrs[0]);
}
END_TEST

/* tpu_dl_need: one "tpuctl: " line on stderr naming the symbol, exit 1. */
START_TEST(need_exits_with_one_line)
{
	char out[2048];
	size_t len = 0;
	ssize_t r;
	int fds[2], status;
	pid_t pid;

	ck_assert_int_eq(pipe(fds), 0);
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		dup2(fds[1], STDERR_FILENO);
		close(fds[0]);
		tpu_dl_need(&bad_lib);
		_exit(99); /* not reached */
	}
	close(fds[1]);
	while (len < sizeof out - 1 &&
	       (r = read(fds[0], out + len, sizeof out - 1 - len)) > 0)
		len += (size_t)r;
	out[len] = '\0';
	close(fds[0]);
	ck_assert_int_eq(waitpid(pid, &status, 0), pid);
	ck_assert(WIFEXITED(status));
	ck_assert_int_eq(WEXITSTATUS(status), 1);
	ck_assert_msg(strncmp(out,
	                  "tpuctl: libcurl.so.4 has no symbol "
	                  "curl_tpuctl_no_such_function",
	                  62) == 0,
	    "got: %s", out);
	ck_assert_ptr_eq(strchr(out, '\n'), out + len - 1);
}
END_TEST

START_TEST(local_cleanse_and_random)
{
	unsigned char a[64], b[64], zero[64];
	size_t i, nonzero = 0;

	memset(a, 0xa5, sizeof a);
	tpu_dl_cleanse(a, sizeof a);
	memset(zero, 0, sizeof zero);
	ck_assert_int_eq(memcmp(a, zero, sizeof a), 0);
	tpu_dl_cleanse(NULL, 0);

	ck_assert_int_eq(tpu_dl_rand_bytes(a, sizeof a), 1);
	ck_assert_int_eq(tpu_dl_rand_bytes(b, sizeof b), 1);
	ck_assert_int_ne(memcmp(a, b, sizeof a), 0);
	for (i = 0; i < sizeof a; i++)
		nonzero += a[i] != 0;
	ck_assert_uint_gt(nonzero, 32);
	ck_assert_int_eq(tpu_dl_rand_bytes(a, 0), 1);
	ck_assert_int_eq(tpu_dl_rand_bytes(a, -1), 0);
}
END_TEST

static Suite *
dl_suite(void)
{
	Suite *s = suite_create("dl");
	TCase *tc = tcase_create("dl");

	tcase_add_test(tc, tables_resolve_every_symbol);
	tcase_add_test(tc, redirections_match_lists);
	tcase_add_test(tc, missing_library_named);
	tcase_add_test(tc, missing_symbol_named);
	tcase_add_test(tc, need_exits_with_one_line);
	tcase_add_test(tc, local_cleanse_and_random);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	SRunner *sr = srunner_create(dl_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
