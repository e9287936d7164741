/*
 * Unit tests for src/fsutil.c: private directories and files whatever the
 * umask, symlinks refused, loose permissions fixed or refused, atomic
 * replacement leaving no temp file behind.
 */
#include <sys/stat.h>
#include <sys/types.h>

#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <check.h>

#include "buf.h"
#include "fsutil.h"
#include "xmalloc.h"

static char dir[64];

static void
setup(void)
{
	snprintf(dir, sizeof dir, "/tmp/check_fsutil.XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(dir));
}

static void
teardown(void)
{

	/* best effort: remove what the tests create */
	{
		DIR *d = opendir(dir);
		struct dirent *de;

		while (d != NULL && (de = readdir(d)) != NULL) {
			char *p;

			if (de->d_name[0] == '.')
				continue;
			p = xasprintf("%s/%s", dir, de->d_name);
			if (unlink(p) != 0)
				rmdir(p);
			free(p);
		}
		if (d != NULL)
			closedir(d);
	}
	rmdir(dir);
}

static mode_t
mode_of(const char *p)
{
	struct stat st;

	ck_assert_int_eq(lstat(p, &st), 0);
	return st.st_mode & 07777;
}

START_TEST(mkdir_private_umask0)
{
	struct tpu_err err;
	char *a = xasprintf("%s/a", dir), *ab = xasprintf("%s/a/b", dir);

	tpu_err_init(&err);
	umask(0);
	ck_assert_int_eq(fsutil_mkdir_private(ab, &err), 0);
	ck_assert_int_eq(mode_of(a), 0700);
	ck_assert_int_eq(mode_of(ab), 0700);
	/* an existing loose directory is tightened */
	chmod(ab, 0755);
	ck_assert_int_eq(fsutil_mkdir_private(ab, &err), 0);
	ck_assert_int_eq(mode_of(ab), 0700);
	rmdir(ab);
	free(a);
	free(ab);
}
END_TEST

START_TEST(mkdir_symlink_refused)
{
	struct tpu_err err;
	char *l = xasprintf("%s/link", dir);

	tpu_err_init(&err);
	ck_assert_int_eq(symlink("/tmp", l), 0);
	ck_assert_int_eq(fsutil_mkdir_private(l, &err), TPU_E_PERMISSION);
	ck_assert_ptr_nonnull(strstr(err.msg, "symbolic link"));
	free(l);
}
END_TEST

START_TEST(write_atomic_mode)
{
	struct tpu_err err;
	struct buf b;
	char *p = xasprintf("%s/f", dir);
	DIR *d;
	struct dirent *de;
	int n = 0;

	tpu_err_init(&err);
	umask(0);
	ck_assert_int_eq(fsutil_write_atomic(p, "one", 3, 0600, &err), 0);
	ck_assert_int_eq(mode_of(p), 0600);
	ck_assert_int_eq(fsutil_write_atomic(p, "second", 6, 0600, &err), 0);
	buf_init(&b, 100);
	ck_assert_int_eq(
	    fsutil_read_file(
	        p, FSUTIL_F_NOFOLLOW | FSUTIL_F_PRIVATE, &b, NULL, &err),
	    0);
	ck_assert_str_eq(b.data, "second");
	buf_release(&b);
	/* no temp files left */
	d = opendir(dir);
	while ((de = readdir(d)) != NULL)
		if (de->d_name[0] != '.')
			n++;
	closedir(d);
	ck_assert_int_eq(n, 1);
	free(p);
}
END_TEST

START_TEST(write_atomic_symlink_refused)
{
	struct tpu_err err;
	char *p = xasprintf("%s/f", dir), *t = xasprintf("%s/target", dir);

	tpu_err_init(&err);
	ck_assert_int_eq(symlink(t, p), 0);
	ck_assert_int_eq(
	    fsutil_write_atomic(p, "x", 1, 0600, &err), TPU_E_PERMISSION);
	ck_assert_int_eq(access(t, F_OK), -1);
	free(p);
	free(t);
}
END_TEST

START_TEST(read_loose_refused_or_fixed)
{
	struct tpu_err err;
	struct buf b;
	char *p = xasprintf("%s/f", dir);
	int fd, loose = 0;

	tpu_err_init(&err);
	fd = open(p, O_WRONLY | O_CREAT, 0644);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(write(fd, "tok", 3), 3);
	close(fd);
	chmod(p, 0644);
	buf_init(&b, 100);
	ck_assert_int_eq(
	    fsutil_read_file(p, FSUTIL_F_PRIVATE, &b, &loose, &err),
	    TPU_E_PERMISSION);
	ck_assert_int_eq(loose, 1);
	ck_assert_ptr_nonnull(strstr(err.msg, "644"));
	ck_assert_int_eq(mode_of(p), 0644);
	ck_assert_int_eq(fsutil_read_file(p, FSUTIL_F_PRIVATE | FSUTIL_F_FIX,
	                     &b, &loose, &err),
	    0);
	ck_assert_int_eq(mode_of(p), 0600);
	ck_assert_str_eq(b.data, "tok");
	buf_release(&b);
	free(p);
}
END_TEST

START_TEST(read_symlink_nofollow)
{
	struct tpu_err err;
	struct buf b;
	char *p = xasprintf("%s/f", dir), *l = xasprintf("%s/l", dir);

	tpu_err_init(&err);
	ck_assert_int_eq(fsutil_write_atomic(p, "x", 1, 0600, &err), 0);
	ck_assert_int_eq(symlink(p, l), 0);
	buf_init(&b, 100);
	ck_assert_int_eq(fsutil_read_file(l, FSUTIL_F_NOFOLLOW, &b, NULL, &err),
	    TPU_E_PERMISSION);
	ck_assert_int_eq(fsutil_read_file(l, 0, &b, NULL, &err), 0);
	ck_assert_int_eq(fsutil_read_file("/nonexistent/x", 0, &b, NULL, &err),
	    TPU_E_NOTFOUND);
	buf_release(&b);
	free(p);
	free(l);
}
END_TEST

START_TEST(read_cap)
{
	struct tpu_err err;
	struct buf b;
	char *p = xasprintf("%s/f", dir);

	tpu_err_init(&err);
	ck_assert_int_eq(
	    fsutil_write_atomic(p, "0123456789", 10, 0600, &err), 0);
	buf_init(&b, 5);
	ck_assert_int_eq(fsutil_read_file(p, 0, &b, NULL, &err), TPU_E_IO);
	buf_release(&b);
	free(p);
}
END_TEST

START_TEST(wipe)
{
	char s[] = "secret";

	fsutil_wipe(s, sizeof s);
	ck_assert_int_eq(s[0], 0);
	ck_assert_int_eq(s[5], 0);
	fsutil_wipe(NULL, 0);
}
END_TEST

/* touch dir/name with an mtime age seconds ago */
static void
plant(const char *name, int age)
{
	struct timespec ts[2];
	char *p = xasprintf("%s/%s", dir, name);
	int fd = open(p, O_WRONLY | O_CREAT | O_EXCL, 0600);

	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(write(fd, "x", 1), 1);
	clock_gettime(CLOCK_REALTIME, &ts[0]);
	ts[0].tv_sec -= age;
	ts[1] = ts[0];
	ck_assert_int_eq(futimens(fd, ts), 0);
	close(fd);
	free(p);
}

static int
present(const char *name)
{
	char *p = xasprintf("%s/%s", dir, name);
	struct stat st;
	int r = lstat(p, &st) == 0;

	free(p);
	return r;
}

/* issue 19 defect 9: a killed writer's temp is swept once stale, and
 * nothing else is touched */
START_TEST(sweep_stale_temps)
{
	char *sub = xasprintf("%s/d.tmp-0123456789ab", dir);
	char *link = xasprintf("%s/l.json.tmp-aaaaaaaaaaaa", dir);

	plant("a.json.tmp-0123456789ab", 3600);  /* stale: removed */
	plant("b.json.tmp-fedcba987654", 10);    /* a live writer's: kept */
	plant("c.json", 3600);                   /* a tracker: kept */
	plant("e.json.tmp-0123456789AB", 3600);  /* not our name: kept */
	plant("f.json.tmp-0123456789a", 3600);   /* 11 digits: kept */
	plant("g.json.tmp-0123456789abc", 3600); /* 13 digits: kept */
	ck_assert_int_eq(mkdir(sub, 0700), 0);
	ck_assert_int_eq(symlink("/nonexistent", link), 0);
	ck_assert_int_eq(fsutil_sweep_temps(dir, 300), 1);
	ck_assert(!present("a.json.tmp-0123456789ab"));
	ck_assert(present("b.json.tmp-fedcba987654"));
	ck_assert(present("c.json"));
	ck_assert(present("e.json.tmp-0123456789AB"));
	ck_assert(present("f.json.tmp-0123456789a"));
	ck_assert(present("g.json.tmp-0123456789abc"));
	ck_assert(present("d.tmp-0123456789ab"));
	ck_assert(present("l.json.tmp-aaaaaaaaaaaa"));
	ck_assert_int_eq(fsutil_sweep_temps(dir, 300), 0);
	/* a missing directory is nothing to do */
	ck_assert_int_eq(fsutil_sweep_temps("/nonexistent/x", 300), 0);
	rmdir(sub);
	free(sub);
	free(link);
}
END_TEST

/* one rule for data cp and scp: only a regular file is renamed over */
START_TEST(dest_kind)
{
	char *f = xasprintf("%s/file", dir), *fifo = xasprintf("%s/fifo", dir);
	char *lf = xasprintf("%s/lfile", dir), *ld = xasprintf("%s/ldir", dir);
	char *dang = xasprintf("%s/dangling", dir);
	char *sub = xasprintf("%s/sub", dir);

	ck_assert_int_eq(fsutil_dest_kind(f), FSUTIL_DEST_NONE);
	plant("file", 0);
	ck_assert_int_eq(fsutil_dest_kind(f), FSUTIL_DEST_FILE);
	ck_assert_int_eq(mkdir(sub, 0700), 0);
	ck_assert_int_eq(fsutil_dest_kind(sub), FSUTIL_DEST_DIR);
	ck_assert_int_eq(symlink(sub, ld), 0);
	ck_assert_int_eq(fsutil_dest_kind(ld), FSUTIL_DEST_DIR);
	ck_assert_int_eq(mkfifo(fifo, 0600), 0);
	ck_assert_int_eq(fsutil_dest_kind(fifo), FSUTIL_DEST_IN_PLACE);
	ck_assert_int_eq(fsutil_dest_kind("/dev/null"), FSUTIL_DEST_IN_PLACE);
	ck_assert_int_eq(fsutil_dest_kind("/dev/stdout"), FSUTIL_DEST_IN_PLACE);
	ck_assert_int_eq(symlink(f, lf), 0);
	ck_assert_int_eq(fsutil_dest_kind(lf), FSUTIL_DEST_IN_PLACE);
	ck_assert_int_eq(symlink("/nonexistent/x", dang), 0);
	ck_assert_int_eq(fsutil_dest_kind(dang), FSUTIL_DEST_IN_PLACE);
	rmdir(sub);
	free(f);
	free(fifo);
	free(lf);
	free(ld);
	free(dang);
	free(sub);
}
END_TEST

static Suite *
fsutil_suite(void)
{
	Suite *s = suite_create("fsutil");
	TCase *tc = tcase_create("files");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, mkdir_private_umask0);
	tcase_add_test(tc, mkdir_symlink_refused);
	tcase_add_test(tc, write_atomic_mode);
	tcase_add_test(tc, write_atomic_symlink_refused);
	tcase_add_test(tc, read_loose_refused_or_fixed);
	tcase_add_test(tc, read_symlink_nofollow);
	tcase_add_test(tc, read_cap);
	tcase_add_test(tc, wipe);
	tcase_add_test(tc, sweep_stale_temps);
	tcase_add_test(tc, dest_kind);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	SRunner *sr = srunner_create(fsutil_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
