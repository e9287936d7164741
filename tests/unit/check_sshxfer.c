/*
 * Unit tests for src/sshxfer.c: NODE:path operands, the path-safety rule
 * for downloads, the remote listing parser and the local walk.
 */
#include <sys/stat.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <check.h>

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
	static const char *rows[] = { "file", "./a:b", "/x:y", "dir/f:g",
		"a/b" };
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
		"no_de:x", "a b:x", "n:a\nb",
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

START_TEST(listing_ok)
{
	static const char data[] = "d 755 sub\0f 644 sub/a\0l 777 link\0"
	                           "f 600 b c\0p 644 fifo\0";
	struct sshxfer_list l;
	struct tpu_err err;

	memset(&l, 0, sizeof l);
	tpu_err_init(&err);
	ck_assert_int_eq(sshxfer_parse_listing(
	                     data, sizeof data - 1, "top", "/r/top", &l, &err),
	    0);
	ck_assert_uint_eq(l.n, 3);
	ck_assert_uint_eq(l.skipped, 2);
	ck_assert_str_eq(l.items[0].rel, "top/sub");
	ck_assert_int_eq(l.items[0].is_dir, 1);
	ck_assert_uint_eq(l.items[0].mode, 0755);
	ck_assert_str_eq(l.items[1].src, "/r/top/sub/a");
	ck_assert_str_eq(l.items[2].rel, "top/b c");
	ck_assert_uint_eq(l.items[2].mode, 0600);
	sshxfer_list_release(&l);
}
END_TEST

START_TEST(listing_reject)
{
	static const struct {
		const char *d;
		size_t n;
	} rows[] = {
		{ "f 644 ../evil", 14 }, { "f 644 /etc/passwd", 18 },
		{ "f 644 a/../../b", 16 }, { "f 644 a//b", 11 },
		{ "f 644 x", 7 },                  /* no NUL */
		{ "f 9z9 x", 8 },                  /* bad mode */
		{ "f 77777 x", 10 },               /* mode too big */
		{ "fx644 x", 8 }, { "f 644 ", 7 }, /* empty name */
	};
	struct sshxfer_list l;
	struct tpu_err err;
	size_t i;

	for (i = 0; i < nitems(rows); i++) {
		memset(&l, 0, sizeof l);
		tpu_err_init(&err);
		ck_assert_msg(sshxfer_parse_listing(rows[i].d, rows[i].n, "t",
		                  "t", &l, &err) == TPU_E_API,
		    "row %zu accepted", i);
		ck_assert_uint_eq(l.n, 0);
		sshxfer_list_release(&l);
	}
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
	snprintf(p, sizeof p, "%s/tree/link", dir);
	ck_assert_int_eq(symlink("/etc", p), 0);

	snprintf(p, sizeof p, "%s/tree", dir);
	srcs[0] = p;
	memset(&l, 0, sizeof l);
	tpu_err_init(&err);
	ck_assert_int_eq(sshxfer_list_local(srcs, 1, 0, &l, &err), TPU_E_USAGE);
	ck_assert_ptr_nonnull(strstr(err.msg, "--recurse"));
	sshxfer_list_release(&l);

	ck_assert_int_eq(sshxfer_list_local(srcs, 1, 1, &l, &err), 0);
	ck_assert_uint_eq(l.n, 4);
	ck_assert_uint_eq(l.skipped, 1);
	ck_assert_str_eq(l.items[0].rel, "tree");
	ck_assert_uint_eq(l.items[0].mode, 0750);
	ck_assert_str_eq(l.items[1].rel, "tree/a");
	ck_assert_str_eq(l.items[2].rel, "tree/b");
	ck_assert_int_eq(l.items[2].is_dir, 1);
	ck_assert_str_eq(l.items[3].rel, "tree/b/x");
	ck_assert_uint_eq(l.items[3].mode, 0640);
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
	tcase_add_test(tc, listing_ok);
	tcase_add_test(tc, listing_reject);
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
