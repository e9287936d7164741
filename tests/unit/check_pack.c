/*
 * Unit tests for src/pack.c: the archive of an awkward tree (spaces,
 * newlines, UTF-8 and non-UTF-8 names, names and link targets past the
 * ustar fields, modes, symlinks, an empty file, a fifo, excludes)
 * extracts with GNU tar to the same tree byte for byte; the hash is
 * stable across runs and mtimes and changes with content and modes.
 */
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <check.h>

#include "buf.h"
#include "fsutil.h"
#include "pack.h"
#include "xmalloc.h"

static char top[64];

static void
run(const char *const argv[])
{
	pid_t p = fork();
	int st;

	ck_assert_int_ge(p, 0);
	if (p == 0) {
		execvp(argv[0], (char *const *)argv);
		_exit(127);
	}
	ck_assert_int_eq(waitpid(p, &st, 0), p);
	ck_assert_msg(
	    WIFEXITED(st) && WEXITSTATUS(st) == 0, "%s failed", argv[0]);
}

static void
setup(void)
{
	snprintf(top, sizeof top, "/tmp/check_pack.XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(top));
}

static void
teardown(void)
{
	const char *argv[] = { "rm", "-rf", top, NULL };

	run(argv);
}

static void
put_file(
    const char *dir, const char *rel, const char *data, size_t n, mode_t mode)
{
	char *p = xasprintf("%s/%s", dir, rel);
	int fd = open(p, O_WRONLY | O_CREAT | O_TRUNC, 0600);

	ck_assert_msg(fd >= 0, "%s: %s", p, strerror(errno));
	ck_assert_int_eq(write(fd, data, n), (ssize_t)n);
	close(fd);
	ck_assert_int_eq(chmod(p, mode), 0);
	free(p);
}

static void
put_dir(const char *dir, const char *rel)
{
	char *p = xasprintf("%s/%s", dir, rel);

	ck_assert_msg(mkdir(p, 0755) == 0, "%s: %s", p, strerror(errno));
	free(p);
}

static void
put_link(const char *dir, const char *rel, const char *target)
{
	char *p = xasprintf("%s/%s", dir, rel);

	ck_assert_int_eq(symlink(target, p), 0);
	free(p);
}

static char long_dir[300], long_file[300], long_target[400];

/* The awkward tree, in top/src. */
static char *
make_tree(void)
{
	char *src = xasprintf("%s/src", top), *big, *p;
	size_t i;

	ck_assert_int_eq(mkdir(src, 0755), 0);
	put_file(src, "plain.txt", "hello\n", 6, 0644);
	put_file(src, "with space.py", "print(1)\n", 9, 0755);
	put_file(src, "new\nline", "x", 1, 0600);
	put_file(
	    src, "caf\xc3\xa9-\xe6\x97\xa5\xe6\x9c\xac.txt", "utf8", 4, 0644);
	put_file(src, "bad\xff\xfe-bytes", "latin", 5, 0640);
	put_file(src, "empty", "", 0, 0644);
	put_file(src, "a.o", "obj", 3, 0644);
	put_dir(src, "dir");
	put_dir(src, "dir/sub dir");
	put_file(src, "dir/sub dir/x y", "deep\n", 5, 0644);
	put_dir(src, "build");
	put_file(src, "build/out", "junk", 4, 0644);
	put_link(src, "link-rel", "plain.txt");
	put_link(src, "dir/link-up", "../with space.py");
	put_link(src, "dangling", "does/not/exist");
	/* a directory name > 100 bytes, a file under it > 255 bytes in all */
	memset(long_dir, 'd', 120);
	long_dir[120] = '\0';
	put_dir(src, long_dir);
	memset(long_file, 0, sizeof long_file);
	memcpy(long_file, long_dir, 120);
	long_file[120] = '/';
	memset(long_file + 121, 'f', 150);
	memcpy(long_file + 121 + 150, "\xc3\xa9", 2);
	put_file(src, long_file, "long", 4, 0644);
	/* a long non-ASCII link target */
	memset(long_target, 'T', 200);
	memcpy(long_target + 200, "\xe2\x82\xac/x", 5);
	long_target[205] = '\0';
	put_link(src, "longlink", long_target);
	/* 1 MiB + 3 bytes of varied content */
	big = xmalloc((1 << 20) + 3);
	for (i = 0; i < (1u << 20) + 3; i++)
		big[i] = (char)(i * 7 + (i >> 9));
	put_file(src, "big.bin", big, (1 << 20) + 3, 0644);
	free(big);
	p = xasprintf("%s/fifo", src);
	ck_assert_int_eq(mkfifo(p, 0644), 0);
	free(p);
	return src;
}

/* Compare a and b recursively: names, types, modes, bytes, targets. */
static size_t
compare(const char *a, const char *b)
{
	DIR *d = opendir(a);
	struct dirent *de;
	size_t n = 0;

	ck_assert_ptr_nonnull(d);
	while ((de = readdir(d)) != NULL) {
		char *pa, *pb;
		struct stat sa, sb;

		if (strcmp(de->d_name, ".") == 0 ||
		    strcmp(de->d_name, "..") == 0)
			continue;
		pa = xasprintf("%s/%s", a, de->d_name);
		pb = xasprintf("%s/%s", b, de->d_name);
		ck_assert_int_eq(lstat(pa, &sa), 0);
		if (S_ISFIFO(sa.st_mode) || strcmp(de->d_name, "a.o") == 0 ||
		    strcmp(de->d_name, "build") == 0) {
			ck_assert_msg(lstat(pb, &sb) != 0, "%s was packed", pb);
			free(pa);
			free(pb);
			continue;
		}
		ck_assert_msg(lstat(pb, &sb) == 0, "%s missing", pb);
		ck_assert_int_eq(sa.st_mode & S_IFMT, sb.st_mode & S_IFMT);
		if (!S_ISLNK(sa.st_mode))
			ck_assert_int_eq(
			    sa.st_mode & 07777, sb.st_mode & 07777);
		if (S_ISDIR(sa.st_mode))
			n += compare(pa, pb);
		else if (S_ISLNK(sa.st_mode)) {
			char ta[PATH_MAX], tb[PATH_MAX];
			ssize_t ka = readlink(pa, ta, sizeof ta);
			ssize_t kb = readlink(pb, tb, sizeof tb);

			ck_assert_int_eq(ka, kb);
			ck_assert(memcmp(ta, tb, (size_t)ka) == 0);
		} else {
			struct buf ba, bb;
			struct tpu_err err;

			buf_init(&ba, BUF_NOCAP);
			buf_init(&bb, BUF_NOCAP);
			ck_assert_int_eq(
			    fsutil_read_file(pa, 0, &ba, NULL, &err), 0);
			ck_assert_int_eq(
			    fsutil_read_file(pb, 0, &bb, NULL, &err), 0);
			ck_assert_uint_eq(ba.len, bb.len);
			ck_assert(memcmp(ba.data, bb.data, ba.len) == 0);
			buf_release(&ba);
			buf_release(&bb);
		}
		n++;
		free(pa);
		free(pb);
	}
	closedir(d);
	return n;
}

static const char *const excl[] = { "*.o", "build" };
static const struct pack_opts opts = { excl, 2 };

static void
pack_file_to(const char *src, const char *tar, char hash[PACK_HASH_LEN + 1],
    struct pack_stats *st)
{
	struct tpu_err err;
	int fd = open(tar, O_WRONLY | O_CREAT | O_TRUNC, 0600);

	ck_assert_int_ge(fd, 0);
	tpu_err_init(&err);
	ck_assert_msg(
	    pack_write(src, &opts, fd, hash, st, &err) == 0, "%s", err.msg);
	close(fd);
}

START_TEST(test_gnu_tar_extracts_byte_for_byte)
{
	char *src = make_tree(), *tar = xasprintf("%s/w.tar", top);
	char *out = xasprintf("%s/out", top), hash[PACK_HASH_LEN + 1];
	struct pack_stats st;
	const char *argv[] = { "tar", "-x", "-p", "-f", tar, "-C", out, NULL };
	struct stat s;

	pack_file_to(src, tar, hash, &st);
	ck_assert_uint_eq(strlen(hash), 64);
	ck_assert_int_eq(mkdir(out, 0755), 0);
	run(argv);
	/* 9 files, 4 links, 3 directories */
	ck_assert_uint_eq(compare(src, out), 16);
	ck_assert_uint_eq(st.skipped, 1);  /* the fifo */
	ck_assert_uint_eq(st.excluded, 2); /* a.o, build */
	ck_assert_uint_eq(st.links, 4);
	ck_assert_int_eq(stat(tar, &s), 0);
	ck_assert_uint_eq((uint64_t)s.st_size, st.bytes);
	ck_assert_uint_eq(st.bytes % 512, 0);
	free(src);
	free(tar);
	free(out);
}
END_TEST

START_TEST(test_hash_stable_mtime_independent)
{
	char *src = make_tree(), *t1 = xasprintf("%s/1.tar", top);
	char *t2 = xasprintf("%s/2.tar", top), *f;
	char h1[PACK_HASH_LEN + 1], h2[PACK_HASH_LEN + 1];
	struct timespec ts[2] = { { 12345, 0 }, { 12345, 0 } };
	struct buf a, b;
	struct tpu_err err;

	pack_file_to(src, t1, h1, NULL);
	f = xasprintf("%s/plain.txt", src);
	ck_assert_int_eq(utimensat(AT_FDCWD, f, ts, 0), 0);
	pack_file_to(src, t2, h2, NULL);
	ck_assert_str_eq(h1, h2);
	/* the archives themselves are identical */
	buf_init(&a, BUF_NOCAP);
	buf_init(&b, BUF_NOCAP);
	ck_assert_int_eq(fsutil_read_file(t1, 0, &a, NULL, &err), 0);
	ck_assert_int_eq(fsutil_read_file(t2, 0, &b, NULL, &err), 0);
	ck_assert_uint_eq(a.len, b.len);
	ck_assert(memcmp(a.data, b.data, a.len) == 0);
	buf_release(&a);
	buf_release(&b);
	/* content changes the hash */
	put_file(src, "plain.txt", "hellO\n", 6, 0644);
	pack_file_to(src, t2, h2, NULL);
	ck_assert_str_ne(h1, h2);
	/* so does a mode */
	put_file(src, "plain.txt", "hello\n", 6, 0644);
	pack_file_to(src, t2, h2, NULL);
	ck_assert_str_eq(h1, h2);
	ck_assert_int_eq(chmod(f, 0600), 0);
	pack_file_to(src, t2, h2, NULL);
	ck_assert_str_ne(h1, h2);
	free(f);
	free(src);
	free(t1);
	free(t2);
}
END_TEST

START_TEST(test_known_hash_empty_dir)
{
	/* an empty directory is 1024 zero bytes: a fixed, known sha256 */
	char *src = xasprintf("%s/e", top), *t = xasprintf("%s/e.tar", top);
	char h[PACK_HASH_LEN + 1];
	struct pack_stats st;

	ck_assert_int_eq(mkdir(src, 0755), 0);
	pack_file_to(src, t, h, &st);
	ck_assert_uint_eq(st.bytes, 1024);
	ck_assert_str_eq(h, "5f70bf18a086007016e948b04aed3b82103a36bea41755b6cd"
	                    "dfaf10ace3c6ef");
	free(src);
	free(t);
}
END_TEST

START_TEST(test_to_cache_and_errors)
{
	char *src = make_tree(), *cache = xasprintf("%s/cache", top), *path;
	char h[PACK_HASH_LEN + 1], *want, *nf = xasprintf("%s/nope", top);
	struct tpu_err err;
	struct stat s;

	tpu_err_init(&err);
	ck_assert_int_eq(
	    pack_to_cache(src, &opts, cache, h, &path, NULL, &err), 0);
	want = xasprintf("%s/%s.tar", cache, h);
	ck_assert_str_eq(path, want);
	ck_assert_int_eq(stat(path, &s), 0);
	free(path);
	ck_assert_int_eq(pack_to_cache(nf, &opts, cache, h, &path, NULL, &err),
	    TPU_E_NOTFOUND);
	ck_assert_ptr_null(path);
	ck_assert_ptr_nonnull(strstr(err.msg, "nope"));
	free(nf);
	nf = xasprintf("%s/plain.txt", src);
	ck_assert_int_eq(
	    pack_to_cache(nf, &opts, cache, h, &path, NULL, &err), TPU_E_USAGE);
	free(nf);
	free(want);
	free(cache);
	free(src);
}
END_TEST

START_TEST(test_excluded)
{
	ck_assert_int_eq(pack_excluded(&opts, "a.o"), 1);
	ck_assert_int_eq(pack_excluded(&opts, "x/y/z.o"), 1);
	ck_assert_int_eq(pack_excluded(&opts, "build"), 1);
	ck_assert_int_eq(pack_excluded(&opts, "src/build"), 1);
	ck_assert_int_eq(pack_excluded(&opts, "builder"), 0);
	ck_assert_int_eq(pack_excluded(&opts, "a.oo"), 0);
	ck_assert_int_eq(pack_excluded(NULL, "a.o"), 0);
}
END_TEST

static Suite *
pack_suite(void)
{
	Suite *s = suite_create("pack");
	TCase *tc = tcase_create("archive");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 30);
	tcase_add_test(tc, test_gnu_tar_extracts_byte_for_byte);
	tcase_add_test(tc, test_hash_stable_mtime_independent);
	tcase_add_test(tc, test_known_hash_empty_dir);
	tcase_add_test(tc, test_to_cache_and_errors);
	tcase_add_test(tc, test_excluded);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	SRunner *sr = srunner_create(pack_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? 0 : 1;
}
