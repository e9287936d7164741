/*
 * Unit tests for src/holder.c: the private directory (created 0700;
 * a wrong mode, a symbolic link or a file refused), one holder per name
 * (the flock), a holder killed -9 leaves a stale socket that clients
 * see as "none runs" and the next holder replaces, and (as root) a
 * client of another uid refused by SO_PEERCRED even when the file
 * permissions let it reach the socket.
 */
#include <sys/stat.h>
#include <sys/wait.h>

#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <check.h>

#include "holder.h"

static char tmp[PATH_MAX];

static void
setup(void)
{
	snprintf(tmp, sizeof tmp, "/tmp/check_holder.XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(tmp));
	setenv("XDG_RUNTIME_DIR", tmp, 1);
}

static void
rm_rf(const char *d)
{
	char cmd[PATH_MAX + 16];
	pid_t pid;

	snprintf(cmd, sizeof cmd, "%s", d);
	if ((pid = fork()) == 0) {
		execlp("rm", "rm", "-rf", cmd, (char *)NULL);
		_exit(127);
	}
	waitpid(pid, NULL, 0);
}

static void
teardown(void)
{
	rm_rf(tmp);
}

START_TEST(dir_created_private)
{
	char dir[HOLDER_PATH_MAX], want[PATH_MAX + 8];
	struct tpu_err err;
	struct stat st;

	tpu_err_init(&err);
	ck_assert_int_eq(holder_dir(dir, sizeof dir, &err), 0);
	snprintf(want, sizeof want, "%s/tpuctl", tmp);
	ck_assert_str_eq(dir, want);
	ck_assert_int_eq(lstat(dir, &st), 0);
	ck_assert(S_ISDIR(st.st_mode));
	ck_assert_uint_eq(st.st_mode & 07777, 0700);
	/* again: found and accepted */
	ck_assert_int_eq(holder_dir(dir, sizeof dir, &err), 0);
}
END_TEST

START_TEST(dir_refused)
{
	char dir[HOLDER_PATH_MAX], p[PATH_MAX + 8], other[PATH_MAX + 16];
	struct tpu_err err;

	snprintf(p, sizeof p, "%s/tpuctl", tmp);
	ck_assert_int_eq(mkdir(p, 0755), 0);
	ck_assert_int_eq(chmod(p, 0755), 0);
	ck_assert_int_eq(holder_dir(dir, sizeof dir, &err), TPU_E_PERMISSION);
	ck_assert_ptr_nonnull(strstr(err.msg, "mode 0755"));
	ck_assert_int_eq(rmdir(p), 0);
	/* a symbolic link to a 0700 directory is not used */
	snprintf(other, sizeof other, "%s/elsewhere", tmp);
	ck_assert_int_eq(mkdir(other, 0700), 0);
	ck_assert_int_eq(symlink(other, p), 0);
	ck_assert_int_eq(holder_dir(dir, sizeof dir, &err), TPU_E_PERMISSION);
	ck_assert_ptr_nonnull(strstr(err.msg, "not a directory"));
}
END_TEST

START_TEST(dir_fallback)
{
	char dir[HOLDER_PATH_MAX], want[64];
	struct tpu_err err;

	/* unset or relative: /tmp/tpuctl-UID */
	setenv("XDG_RUNTIME_DIR", "relative/dir", 1);
	ck_assert_int_eq(holder_dir(dir, sizeof dir, &err), 0);
	snprintf(
	    want, sizeof want, "/tmp/tpuctl-%lu", (unsigned long)geteuid());
	ck_assert_str_eq(dir, want);
	unsetenv("XDG_RUNTIME_DIR");
	ck_assert_int_eq(holder_dir(dir, sizeof dir, &err), 0);
	ck_assert_str_eq(dir, want);
}
END_TEST

START_TEST(names)
{
	char a[32], b[32], c[32];

	holder_name("p/us-central2-b/n1", a, sizeof a);
	holder_name("p/us-central2-b/n1", b, sizeof b);
	holder_name("p/us-central2-b/n2", c, sizeof c);
	ck_assert_str_eq(a, b);
	ck_assert_str_ne(a, c);
	ck_assert_uint_eq(strlen(a), 18);
	ck_assert_int_eq(strncmp(a, "h-", 2), 0);
}
END_TEST

START_TEST(one_holder_and_stale_socket)
{
	char dir[HOLDER_PATH_MAX], sock[HOLDER_PATH_MAX + 16];
	struct tpu_err err;
	struct stat st;
	int lk, ls, lk2, ls2, c, s;
	pid_t pid;
	int pfd[2];

	ck_assert_int_eq(holder_dir(dir, sizeof dir, &err), 0);
	ck_assert_int_eq(holder_connect(dir, "h-x", &c, &err), TPU_E_NOTFOUND);
	ck_assert_int_eq(holder_listen(dir, "h-x", &lk, &ls, &err), 0);
	snprintf(sock, sizeof sock, "%s/h-x.sock", dir);
	ck_assert_int_eq(stat(sock, &st), 0);
	ck_assert_uint_eq(st.st_mode & 0777, 0600);
	/* a second holder of the same name: refused */
	ck_assert_int_eq(
	    holder_listen(dir, "h-x", &lk2, &ls2, &err), TPU_E_CONFLICT);
	/* nothing waiting yet */
	ck_assert_int_eq(holder_accept(ls, &s, &err), TPU_E_TRANSIENT);
	ck_assert_int_eq(holder_connect(dir, "h-x", &c, &err), 0);
	ck_assert_int_eq(holder_accept(ls, &s, &err), 0);
	ck_assert_int_eq(write(c, "x", 1), 1);
	{
		char ch;

		ck_assert_int_eq(read(s, &ch, 1), 1);
		ck_assert_int_eq(ch, 'x');
	}
	close(c);
	close(s);
	close(ls);
	close(lk);

	/* a holder in another process killed with -9: its socket file
	 * stays, stale; clients see no holder, the next one replaces it */
	ck_assert_int_eq(pipe(pfd), 0);
	if ((pid = fork()) == 0) {
		struct tpu_err e2;
		int a, b;

		tpu_err_init(&e2);
		if (holder_listen(dir, "h-y", &a, &b, &e2) != 0)
			_exit(1);
		(void)write(pfd[1], "r", 1);
		for (;;)
			pause();
	}
	{
		char ch;

		ck_assert_int_eq(read(pfd[0], &ch, 1), 1);
	}
	ck_assert_int_eq(
	    holder_listen(dir, "h-y", &lk2, &ls2, &err), TPU_E_CONFLICT);
	/* a client learns the holder's pid (to end it when it hangs) */
	ck_assert_int_eq(holder_connect(dir, "h-y", &c, &err), 0);
	ck_assert_int_eq(holder_peer_pid(c), (int)pid);
	close(c);
	ck_assert_int_eq(holder_peer_pid(-1), -1);
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	snprintf(sock, sizeof sock, "%s/h-y.sock", dir);
	ck_assert_int_eq(stat(sock, &st), 0); /* left behind */
	ck_assert_int_eq(holder_connect(dir, "h-y", &c, &err), TPU_E_NOTFOUND);
	ck_assert_int_eq(holder_listen(dir, "h-y", &lk2, &ls2, &err), 0);
	ck_assert_int_eq(holder_connect(dir, "h-y", &c, &err), 0);
	ck_assert_int_eq(holder_accept(ls2, &s, &err), 0);
	close(c);
	close(s);
	close(ls2);
	close(lk2);
	close(pfd[0]);
	close(pfd[1]);
}
END_TEST

START_TEST(other_uid_refused)
{
	char dir[HOLDER_PATH_MAX], sock[HOLDER_PATH_MAX + 16];
	struct tpu_err err;
	int lk, ls, s, status, rc;
	pid_t pid;

	if (geteuid() != 0) {
		fprintf(stderr, "other_uid_refused: not root, uid check not "
		                "exercised\n");
		return;
	}
	ck_assert_int_eq(holder_dir(dir, sizeof dir, &err), 0);
	ck_assert_int_eq(holder_listen(dir, "h-z", &lk, &ls, &err), 0);
	snprintf(sock, sizeof sock, "%s/h-z.sock", dir);
	/* open the file permissions on purpose: SO_PEERCRED must still
	 * refuse the other uid */
	ck_assert_int_eq(chmod(tmp, 0755), 0);
	ck_assert_int_eq(chmod(dir, 0755), 0);
	ck_assert_int_eq(chmod(sock, 0666), 0);
	if ((pid = fork()) == 0) {
		struct tpu_err e2;
		int c;

		if (setgid(65534) != 0 || setuid(65534) != 0)
			_exit(3);
		tpu_err_init(&e2);
		/* the client side refuses a root-served socket too */
		rc = holder_connect(dir, "h-z", &c, &e2);
		_exit(rc == TPU_E_PERMISSION ? 0 : 2);
	}
	do
		rc = holder_accept(ls, &s, &err);
	while (rc == TPU_E_TRANSIENT && (usleep(10000), 1));
	ck_assert_int_eq(rc, TPU_E_PERMISSION);
	ck_assert_ptr_nonnull(strstr(err.msg, "peer runs as uid 65534"));
	ck_assert_int_eq(waitpid(pid, &status, 0), pid);
	ck_assert(WIFEXITED(status));
	ck_assert_int_eq(WEXITSTATUS(status), 0);
	close(ls);
	close(lk);
}
END_TEST

/* write the key file path with text */
static void
put_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	ck_assert_ptr_nonnull(f);
	fputs(text, f);
	fclose(f);
}

START_TEST(identity)
{
	char key[PATH_MAX + 8], a[HOLDER_IDENTITY_MAX], b[HOLDER_IDENTITY_MAX];

	snprintf(key, sizeof key, "%s/id", tmp);
	put_file(key, "key one\n");
	holder_identity(key, 0, 20000, a, sizeof a);
	ck_assert_ptr_nonnull(strstr(a, key));
	ck_assert_ptr_nonnull(strstr(a, " SHA256:"));
	ck_assert_ptr_null(strstr(a, "key one"));
	/* the same file and options: the same identity */
	holder_identity(key, 0, 20000, b, sizeof b);
	ck_assert_str_eq(a, b);
	/* each of the options differs */
	holder_identity(key, 0, 5000, b, sizeof b);
	ck_assert_str_ne(a, b);
	holder_identity(key, 1, 20000, b, sizeof b);
	ck_assert_str_ne(a, b);
	holder_identity(NULL, 0, 20000, b, sizeof b);
	ck_assert_str_ne(a, b);
	/* another key under the same name differs */
	put_file(key, "key two\n");
	holder_identity(key, 0, 20000, b, sizeof b);
	ck_assert_str_ne(a, b);
	/* a missing file is an identity of its own, not a crash */
	unlink(key);
	holder_identity(key, 0, 20000, a, sizeof a);
	ck_assert_ptr_nonnull(strstr(a, "unreadable"));
	ck_assert_str_ne(a, b);
}
END_TEST

static Suite *
holder_suite(void)
{
	Suite *s = suite_create("holder");
	TCase *tc = tcase_create("dir");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, dir_created_private);
	tcase_add_test(tc, dir_refused);
	tcase_add_test(tc, dir_fallback);
	tcase_add_test(tc, names);
	tcase_add_test(tc, identity);
	suite_add_tcase(s, tc);
	tc = tcase_create("socket");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, one_holder_and_stale_socket);
	tcase_add_test(tc, other_uid_refused);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	SRunner *sr = srunner_create(holder_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
