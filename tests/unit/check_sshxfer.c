/*
 * Unit tests for src/sshxfer.c: NODE:path operands, the path-safety rule
 * for downloads, the check of entries read from a remote directory
 * (SFTP readdir) and the local walk.
 */
#include <sys/stat.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <check.h>
#include <libssh2_sftp.h>

#include "sshxfer.h"
#include "util.h"

START_TEST(operand_remote)
{
	static const struct {
		const char *arg, *node, *path;
	} rows[] = {
		{ "my-node:/tmp/x", "my-node", "/tmp/x" },
		{ "n1:", "n1", "" },
		{ "n:a:b", "n", "a:b" },
		{ "node-2:dir/file", "node-2", "dir/file" },
		{ "projects/p/locations/z/nodes/n1:/tmp/x",
		    "projects/p/locations/z/nodes/n1", "/tmp/x" },
		{ "bob@n1:/tmp/x", "bob@n1", "/tmp/x" },
		{ "a.b_c@projects/p/locations/z/nodes/n1:x",
		    "a.b_c@projects/p/locations/z/nodes/n1", "x" },
		{ "projects/p/locations/z/queuedResources/q:",
		    "projects/p/locations/z/queuedResources/q", "" },
		/* ~ is the home, where SFTP paths start */
		{ "n1:~/train.py", "n1", "train.py" },
		{ "n1:~", "n1", "" },
		{ "n1:~//a/b", "n1", "a/b" },
		{ "n1:/tmp/~x", "n1", "/tmp/~x" },
		{ "n1:logs/*.txt", "n1", "logs/*.txt" },
	};
	struct sshxfer_operand op;
	struct tpu_err err;
	size_t i;

	for (i = 0; i < nitems(rows); i++) {
		tpu_err_init(&err);
		ck_assert_msg(
		    sshxfer_parse_operand(rows[i].arg, &op, &err) == 0,
		    "%s: %s", rows[i].arg, err.msg);
		ck_assert_ptr_nonnull(op.node);
		ck_assert_str_eq(op.node, rows[i].node);
		ck_assert_str_eq(op.path, rows[i].path);
		sshxfer_operand_release(&op);
	}
}
END_TEST

START_TEST(operand_local)
{
	static const char *rows[] = { "file", "./a:b", "/x:y", "dir/f:g", "a/b",
		"projects/p/locations/z/nodes/n1/x:y", "projects/a:b", "a@b",
		"a@b/c:d" };
	struct sshxfer_operand op;
	struct tpu_err err;
	size_t i;

	for (i = 0; i < nitems(rows); i++) {
		tpu_err_init(&err);
		ck_assert_int_eq(sshxfer_parse_operand(rows[i], &op, &err), 0);
		ck_assert_ptr_null(op.node);
		ck_assert_str_eq(op.path, rows[i]);
		sshxfer_operand_release(&op);
	}
}
END_TEST

START_TEST(operand_reject)
{
	static const char *rows[] = { "", ":x", "Node:x", "1node:x", "node-:x",
		"no_de:x", "a b:x", "n:a\nb", "@n:x", "u@Node:x", "n1:~bob/x",
		"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
		"aa:x" };
	struct sshxfer_operand op;
	struct tpu_err err;
	size_t i;

	for (i = 0; i < nitems(rows); i++) {
		tpu_err_init(&err);
		ck_assert_msg(
		    sshxfer_parse_operand(rows[i], &op, &err) == TPU_E_USAGE,
		    "accepted '%s'", rows[i]);
		ck_assert_ptr_null(strchr(err.msg, '\n'));
		sshxfer_operand_release(&op);
	}
}
END_TEST

START_TEST(relpath)
{
	static const char *ok[] = { "a", "a/b", "..a", "a..", ".x/y", "a/...",
		"a b/c" };
	static const char *bad[] = { "", "/", "/a", "..", ".", "a/..", "../a",
		"a/../b", "a//b", "a/", "./a", "a/.", "a\nb" };
	size_t i;

	for (i = 0; i < nitems(ok); i++)
		ck_assert_msg(sshxfer_relpath_safe(ok[i]), "%s", ok[i]);
	for (i = 0; i < nitems(bad); i++)
		ck_assert_msg(!sshxfer_relpath_safe(bad[i]), "%s", bad[i]);
}
END_TEST

START_TEST(basename_join)
{
	char *s;

	s = sshxfer_basename("a/b/");
	ck_assert_str_eq(s, "b");
	free(s);
	s = sshxfer_basename("/");
	ck_assert_str_eq(s, "");
	free(s);
	s = sshxfer_basename("file");
	ck_assert_str_eq(s, "file");
	free(s);
	s = sshxfer_join("", "x");
	ck_assert_str_eq(s, "x");
	free(s);
	s = sshxfer_join("d/", "x");
	ck_assert_str_eq(s, "d/x");
	free(s);
	s = sshxfer_join("d", "x/y");
	ck_assert_str_eq(s, "d/x/y");
	free(s);
}
END_TEST

/* Entries as SFTP readdir gives them: kept, skipped or refused. */
START_TEST(remote_entry)
{
	static const char odd[] = "new\nline \xc3\xa9t\xc3\xa9";
	static const struct {
		const char *name;
		size_t len;
		unsigned long perms;
		int rc;
		const char *rel; /* NULL: not listed */
	} rows[] = {
		{ ".", 1, LIBSSH2_SFTP_S_IFDIR | 0755, 0, NULL },
		{ "..", 2, LIBSSH2_SFTP_S_IFDIR | 0755, 0, NULL },
		{ "sub", 3, LIBSSH2_SFTP_S_IFDIR | 0750, 0, "top/sub" },
		{ "a b", 3, LIBSSH2_SFTP_S_IFREG | 0640, 0, "top/a b" },
		{ odd, sizeof odd - 1, LIBSSH2_SFTP_S_IFREG | 0600, 0,
		    "top/new\nline \xc3\xa9t\xc3\xa9" },
		{ "...", 3, LIBSSH2_SFTP_S_IFREG | 0644, 0, "top/..." },
		{ "link", 4, LIBSSH2_SFTP_S_IFLNK | 0777, 0, NULL },
		{ "fifo", 4, LIBSSH2_SFTP_S_IFIFO | 0644, 0, NULL },
		{ "notype", 6, 0644, 0, NULL },
		{ "../evil", 7, LIBSSH2_SFTP_S_IFREG | 0644, TPU_E_API, NULL },
		{ "/etc/passwd", 11, LIBSSH2_SFTP_S_IFREG | 0644, TPU_E_API,
		    NULL },
		{ "a/b", 3, LIBSSH2_SFTP_S_IFDIR | 0755, TPU_E_API, NULL },
		{ "", 0, LIBSSH2_SFTP_S_IFREG | 0644, TPU_E_API, NULL },
		{ "x\0y", 3, LIBSSH2_SFTP_S_IFREG | 0644, TPU_E_API, NULL },
	};
	struct sshxfer_list l;
	struct tpu_err err;
	char src[64];
	size_t i, n;

	memset(&l, 0, sizeof l);
	for (i = 0; i < nitems(rows); i++) {
		tpu_err_init(&err);
		n = l.n;
		ck_assert_msg(
		    sshxfer_remote_entry(&l, "top", "/r/top", rows[i].name,
		        rows[i].len, rows[i].perms, &err) == rows[i].rc,
		    "row %zu: %s", i, err.msg);
		if (rows[i].rc != 0)
			ck_assert_ptr_nonnull(strstr(err.msg, "refused"));
		if (rows[i].rel == NULL) {
			ck_assert_uint_eq(l.n, n);
			continue;
		}
		ck_assert_uint_eq(l.n, n + 1);
		ck_assert_str_eq(l.items[n].rel, rows[i].rel);
		snprintf(src, sizeof src, "/r/%s", rows[i].rel);
		ck_assert_str_eq(l.items[n].src, src);
		ck_assert_int_eq(l.items[n].is_dir,
		    LIBSSH2_SFTP_S_ISDIR(rows[i].perms) ? 1 : 0);
		ck_assert_uint_eq(l.items[n].mode, rows[i].perms & 07777);
	}
	ck_assert_uint_eq(l.n, 4);
	ck_assert_uint_eq(l.skipped, 3);
	ck_assert_str_eq(l.items[0].src, "/r/top/sub");
	ck_assert_str_eq(l.items[1].src, "/r/top/a b");
	sshxfer_list_release(&l);
}
END_TEST

START_TEST(local_walk)
{
	char dir[] = "/tmp/check_sshxfer.XXXXXX", p[512];
	const char *srcs[1];
	struct sshxfer_list l;
	struct tpu_err err;
	FILE *f;

	ck_assert_ptr_nonnull(mkdtemp(dir));
	snprintf(p, sizeof p, "%s/tree", dir);
	ck_assert_int_eq(mkdir(p, 0750), 0);
	snprintf(p, sizeof p, "%s/tree/b", dir);
	ck_assert_int_eq(mkdir(p, 0700), 0);
	snprintf(p, sizeof p, "%s/tree/b/x", dir);
	ck_assert_ptr_nonnull(f = fopen(p, "w"));
	fclose(f);
	ck_assert_int_eq(chmod(p, 0640), 0);
	snprintf(p, sizeof p, "%s/tree/a", dir);
	ck_assert_ptr_nonnull(f = fopen(p, "w"));
	fclose(f);
	ck_assert_int_eq(chmod(p, 0604), 0);
	snprintf(p, sizeof p, "%s/tree/link", dir);
	ck_assert_int_eq(symlink("/etc", p), 0);
	snprintf(p, sizeof p, "%s/tree/flink", dir);
	ck_assert_int_eq(symlink("a", p), 0);
	snprintf(p, sizeof p, "%s/tree/dangling", dir);
	ck_assert_int_eq(symlink("no-such-file", p), 0);

	snprintf(p, sizeof p, "%s/tree", dir);
	srcs[0] = p;
	memset(&l, 0, sizeof l);
	tpu_err_init(&err);
	ck_assert_int_eq(sshxfer_list_local(srcs, 1, 0, &l, &err), TPU_E_USAGE);
	ck_assert_ptr_nonnull(strstr(err.msg, "--recurse"));
	sshxfer_list_release(&l);

	ck_assert_int_eq(sshxfer_list_local(srcs, 1, 1, &l, &err), 0);
	ck_assert_uint_eq(l.n, 5);
	ck_assert_uint_eq(l.skipped, 2); /* link to a directory, dangling */
	ck_assert_str_eq(l.items[0].rel, "tree");
	ck_assert_uint_eq(l.items[0].mode, 0750);
	ck_assert_str_eq(l.items[1].rel, "tree/a");
	ck_assert_str_eq(l.items[2].rel, "tree/b");
	ck_assert_int_eq(l.items[2].is_dir, 1);
	ck_assert_str_eq(l.items[3].rel, "tree/b/x");
	ck_assert_uint_eq(l.items[3].mode, 0640);
	/* a link to a file: the file, with the target's mode */
	ck_assert_str_eq(l.items[4].rel, "tree/flink");
	ck_assert_int_eq(l.items[4].is_dir, 0);
	ck_assert_uint_eq(l.items[4].mode, 0604);
	sshxfer_list_release(&l);

	snprintf(p, sizeof p, "%s/missing", dir);
	ck_assert_int_eq(
	    sshxfer_list_local(srcs, 1, 1, &l, &err), TPU_E_NOTFOUND);
	sshxfer_list_release(&l);
	srcs[0] = "/";
	ck_assert_int_eq(sshxfer_list_local(srcs, 1, 1, &l, &err), TPU_E_USAGE);
	sshxfer_list_release(&l);

	snprintf(p, sizeof p, "rm -rf '%s'", dir);
	ck_assert_int_eq(system(p), 0);
}
END_TEST

static Suite *
sshxfer_suite(void)
{
	Suite *s = suite_create("sshxfer");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, operand_remote);
	tcase_add_test(tc, operand_local);
	tcase_add_test(tc, operand_reject);
	tcase_add_test(tc, relpath);
	tcase_add_test(tc, basename_join);
	tcase_add_test(tc, remote_entry);
	tcase_add_test(tc, local_walk);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	SRunner *sr = srunner_create(sshxfer_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
