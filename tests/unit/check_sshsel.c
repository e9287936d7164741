/*
 * Unit tests for src/sshsel.c (the pure logic of ssh, scp and forward):
 * the --worker and --node selection parsers (lists, ranges, duplicates,
 * ranges out of order, overflow, blanks, empty items, node ids, slices
 * that do not exist), the node ids of a queued resource, the merge of a
 * key into the ssh-keys metadata value, the output prefixes; and the
 * queued-resource membership entries of src/nodecache.c that keep a warm
 * "tpuctl ssh QR" free of API calls.
 */
#include <sys/stat.h>

#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <check.h>
#include <cjson/cJSON.h>

#include "nodecache.h"
#include "sshsel.h"
#include "xmalloc.h"

/* The selection of spec over n workers as a string of 0/1, or "ERR". */
static const char *
workers(const char *spec, int n)
{
	static char out[64];
	unsigned char sel[64];
	struct tpu_err err;
	int i;

	memset(sel, 0, sizeof sel);
	tpu_err_init(&err);
	if (sshsel_workers(spec, n, sel, &err) != 0) {
		ck_assert_int_eq(err.code, TPU_E_USAGE);
		ck_assert_ptr_nonnull(strstr(err.msg, "--worker '"));
		return "ERR";
	}
	for (i = 0; i < n; i++)
		out[i] = (char)('0' + sel[i]);
	out[n < 0 ? 0 : n] = '\0';
	return out;
}

START_TEST(workers_valid)
{
	ck_assert_str_eq(workers("0", 4), "1000");
	ck_assert_str_eq(workers("3", 4), "0001");
	ck_assert_str_eq(workers("all", 4), "1111");
	ck_assert_str_eq(workers("1,3", 4), "0101");
	ck_assert_str_eq(workers("0-2", 4), "1110");
	ck_assert_str_eq(workers("2-2", 4), "0010");
	ck_assert_str_eq(workers("0-1,3", 4), "1101");
	/* duplicates and overlaps are one set */
	ck_assert_str_eq(workers("1,1,0-1,1-2", 4), "1110");
	ck_assert_str_eq(workers("3,0", 4), "1001");
	ck_assert_str_eq(workers("007", 8), "00000001");
}
END_TEST

START_TEST(workers_bad_syntax)
{
	static const char *const bad[] = { "", ",", "1,", ",1", "1,,2", " 1",
		"1 ", "1, 3", "-1", "1-", "-", "3-1", "a", "all,1", "1,all",
		"ALL", "+1", "1.5", "0x1", "1-2-3", "4096", "0-4096",
		"99999999999999999999", "1-99999999999999999999", "1\n" };
	size_t i;

	for (i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		ck_assert_msg(strcmp(workers(bad[i], -1), "ERR") == 0,
		    "'%s' accepted", bad[i]);
		ck_assert_msg(strcmp(workers(bad[i], 8), "ERR") == 0,
		    "'%s' accepted with 8 workers", bad[i]);
	}
	/* the syntax alone: any number below the cap */
	ck_assert_str_eq(workers("4095", -1), "");
}
END_TEST

START_TEST(workers_out_of_range)
{
	unsigned char sel[4] = { 0 };
	struct tpu_err err;

	ck_assert_int_eq(sshsel_workers("4", 4, sel, &err), TPU_E_USAGE);
	ck_assert_str_eq(err.msg,
	    "--worker '4': worker 4 does not exist (the node has 4 workers: "
	    "0-3)");
	ck_assert_int_eq(sshsel_workers("0-7", 1, sel, &err), TPU_E_USAGE);
	ck_assert_ptr_nonnull(strstr(err.msg, "the node has 1 worker: 0-0"));
	ck_assert_int_eq(sshsel_workers("0,5", 4, sel, &err), TPU_E_USAGE);
}
END_TEST

static const char *const ids4[] = { "ms-0", "ms-1", "ms-2", "ms-3" };

static const char *
nodes(const char *spec, int n)
{
	static char out[64];
	unsigned char sel[64];
	struct tpu_err err;
	int i;

	memset(sel, 0, sizeof sel);
	tpu_err_init(&err);
	if (sshsel_nodes(spec, n < 0 ? NULL : ids4, n, sel, &err) != 0) {
		ck_assert_int_eq(err.code, TPU_E_USAGE);
		ck_assert_ptr_nonnull(strstr(err.msg, "--node '"));
		return "ERR";
	}
	for (i = 0; i < n; i++)
		out[i] = (char)('0' + sel[i]);
	out[n < 0 ? 0 : n] = '\0';
	return out;
}

START_TEST(nodes_valid)
{
	ck_assert_str_eq(nodes("all", 4), "1111");
	ck_assert_str_eq(nodes("0", 4), "1000");
	ck_assert_str_eq(nodes("2", 4), "0010");
	ck_assert_str_eq(nodes("1-3", 4), "0111");
	ck_assert_str_eq(nodes("ms-1", 4), "0100");
	ck_assert_str_eq(nodes("ms-3,0", 4), "1001");
	/* a node id and its index: one slice */
	ck_assert_str_eq(nodes("ms-2,2,ms-2", 4), "0010");
	ck_assert_str_eq(nodes("0-1,ms-3", 4), "1101");
	/* syntax only: any RFC 1035 name is a possible node id */
	ck_assert_str_eq(nodes("other-7", -1), "");
	ck_assert_str_eq(nodes("a", -1), "");
}
END_TEST

START_TEST(nodes_bad_syntax)
{
	static const char *const bad[] = { "", ",", "0,", ",0", "0,,1", " 0",
		"ms-1 ", "0, 1", "-1", "1-", "2-1", "ALL", "all,0", "0,all",
		"Ms-1", "ms-", "ms_1", "ms.1", "ms-1,", "4096",
		"99999999999999999999", "1a",
		"a2345678901234567890123456789012345678901234567890123456789012"
		"3"
		"4" };
	size_t i;

	for (i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		ck_assert_msg(strcmp(nodes(bad[i], -1), "ERR") == 0,
		    "'%s' accepted", bad[i]);
		ck_assert_msg(strcmp(nodes(bad[i], 4), "ERR") == 0,
		    "'%s' accepted with 4 slices", bad[i]);
	}
}
END_TEST

START_TEST(nodes_unknown)
{
	static const char *const many[] = { "p-0", "p-1", "p-2", "p-3", "p-4",
		"p-5" };
	unsigned char sel[8] = { 0 };
	struct tpu_err err;

	ck_assert_int_eq(sshsel_nodes("4", ids4, 4, sel, &err), TPU_E_USAGE);
	ck_assert_str_eq(err.msg,
	    "--node '4': slice 4 does not exist (the queued resource has 4 "
	    "slices: 0-3)");
	ck_assert_int_eq(
	    sshsel_nodes("0,ms-9", ids4, 4, sel, &err), TPU_E_USAGE);
	ck_assert_str_eq(err.msg,
	    "--node '0,ms-9': 'ms-9' is not a node of the queued resource "
	    "(its nodes: ms-0, ms-1, ms-2, ms-3)");
	ck_assert_int_eq(sshsel_nodes("q-1", many, 6, sel, &err), TPU_E_USAGE);
	ck_assert_ptr_nonnull(
	    strstr(err.msg, "(its nodes: p-0, p-1, ..., p-5 (6 nodes))"));
	/* a prefix of a node id is not that node */
	ck_assert_int_eq(sshsel_nodes("ms", ids4, 4, sel, &err), TPU_E_USAGE);
	ck_assert_int_eq(sshsel_nodes("1", ids4, 1, sel, &err), TPU_E_USAGE);
	ck_assert_ptr_nonnull(strstr(err.msg, "has 1 slice: 0-0"));
}
END_TEST

static cJSON *
qr_json(const char *text)
{
	cJSON *j = cJSON_Parse(text);

	ck_assert_ptr_nonnull(j);
	return j;
}

START_TEST(qr_nodes)
{
	cJSON *qr;
	char **ids;
	int n;
	struct tpu_err err;

	qr = qr_json("{\"tpu\":{\"nodeSpec\":[{\"multisliceParams\":"
	             "{\"nodeCount\":3,\"nodeIdPrefix\":\"ms\"}}]}}");
	ck_assert_int_eq(sshsel_qr_nodes(qr, &ids, &n, &err), 0);
	ck_assert_int_eq(n, 3);
	ck_assert_str_eq(ids[0], "ms-0");
	ck_assert_str_eq(ids[2], "ms-2");
	sshsel_ids_free(ids, n);
	cJSON_Delete(qr);

	/* single-node specs, in order, then a multislice one */
	qr = qr_json("{\"tpu\":{\"nodeSpec\":[{\"nodeId\":\"b\"},"
	             "{\"nodeId\":\"a\"},{\"multiNodeParams\":"
	             "{\"nodeCount\":\"2\",\"nodeIdPrefix\":\"c\"}}]}}");
	ck_assert_int_eq(sshsel_qr_nodes(qr, &ids, &n, &err), 0);
	ck_assert_int_eq(n, 4);
	ck_assert_str_eq(ids[0], "b");
	ck_assert_str_eq(ids[1], "a");
	ck_assert_str_eq(ids[3], "c-1");
	sshsel_ids_free(ids, n);
	cJSON_Delete(qr);
}
END_TEST

START_TEST(qr_nodes_bad)
{
	static const char *const bad[] = {
		"{}",
		"{\"tpu\":{\"nodeSpec\":[]}}",
		"{\"tpu\":{\"nodeSpec\":[{}]}}",
		"{\"tpu\":{\"nodeSpec\":[{\"nodeId\":\"../x\"}]}}",
		"{\"tpu\":{\"nodeSpec\":[{\"nodeId\":\"Up\"}]}}",
		"{\"tpu\":{\"nodeSpec\":[{\"multisliceParams\":{\"nodeCount\":"
		"0,"
		"\"nodeIdPrefix\":\"p\"}}]}}",
		"{\"tpu\":{\"nodeSpec\":[{\"multisliceParams\":{\"nodeCount\":"
		"5000,\"nodeIdPrefix\":\"p\"}}]}}",
		"{\"tpu\":{\"nodeSpec\":[{\"multisliceParams\":{\"nodeCount\":"
		"2}}"
		"]}}",
		/* the ids would be longer than 63 characters */
		"{\"tpu\":{\"nodeSpec\":[{\"multisliceParams\":{\"nodeCount\":"
		"2,"
		"\"nodeIdPrefix\":\"p1234567890123456789012345678901234567890"
		"123456789012345678901\"}}]}}",
	};
	size_t i;
	cJSON *qr;
	char **ids = (char **)1;
	int n = 7;
	struct tpu_err err;

	for (i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		qr = qr_json(bad[i]);
		ck_assert_msg(sshsel_qr_nodes(qr, &ids, &n, &err) == TPU_E_API,
		    "accepted %s", bad[i]);
		ck_assert_ptr_null(ids);
		ck_assert_int_eq(n, 0);
		cJSON_Delete(qr);
	}
}
END_TEST

#define KEY "alice:ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIK alice@host"

START_TEST(keys_merge)
{
	char *v;

	ck_assert(!sshsel_keys_has(NULL, KEY));
	ck_assert(!sshsel_keys_has("", KEY));
	/* the comment does not matter, the key does */
	ck_assert(sshsel_keys_has(
	    "alice:ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIK other", KEY));
	ck_assert(sshsel_keys_has(
	    "alice:ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIK", KEY));
	ck_assert(
	    sshsel_keys_has("bob:ssh-rsa AAAB bob\r\n"
	                    "alice:ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIK "
	                    "x\r\n",
	        KEY));
	/* another user, another key, a longer key, a key inside a line */
	ck_assert(!sshsel_keys_has(
	    "bob:ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIK alice@host", KEY));
	ck_assert(!sshsel_keys_has(
	    "alice:ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIKX alice", KEY));
	ck_assert(!sshsel_keys_has(
	    "alice:ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAA alice", KEY));
	ck_assert(!sshsel_keys_has(
	    "x alice:ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIK alice", KEY));

	ck_assert_ptr_null(sshsel_keys_add(
	    "root:ssh-rsa AAAB r\n" KEY "\nz:ssh-ed25519 AAAAz z", KEY));
	v = sshsel_keys_add(NULL, KEY);
	ck_assert_str_eq(v, KEY);
	free(v);
	v = sshsel_keys_add("", KEY);
	ck_assert_str_eq(v, KEY);
	free(v);
	v = sshsel_keys_add("bob:ssh-rsa AAAB bob", KEY);
	ck_assert_str_eq(v, "bob:ssh-rsa AAAB bob\n" KEY);
	free(v);
	v = sshsel_keys_add("bob:ssh-rsa AAAB bob\n", KEY);
	ck_assert_str_eq(v, "bob:ssh-rsa AAAB bob\n" KEY);
	free(v);
	/* drop: every line of the key (any comment, CRLF), others kept */
	v = sshsel_keys_drop(
	    "bob:ssh-rsa AAAB bob\r\n" KEY "\r\nalice:ssh-ed25519 "
	    "AAAAC3NzaC1lZDI1NTE5AAAAIK google-ssh "
	    "{\"userName\":\"alice\"}\nz:ssh-ed25519 AAAAz z\n",
	    KEY);
	ck_assert_str_eq(v, "bob:ssh-rsa AAAB bob\nz:ssh-ed25519 AAAAz z");
	free(v);
	v = sshsel_keys_drop(KEY, KEY);
	ck_assert_str_eq(v, "");
	free(v);
	v = sshsel_keys_drop(NULL, KEY);
	ck_assert_str_eq(v, "");
	free(v);
}
END_TEST

START_TEST(prefixes)
{
	char b[32], small[6];

	ck_assert_str_eq(sshsel_prefix(b, sizeof b, -1, 3), "[w3] ");
	ck_assert_str_eq(sshsel_prefix(b, sizeof b, 1, 3), "[s1/w3] ");
	ck_assert_str_eq(sshsel_prefix(b, sizeof b, 63, 4095), "[s63/w4095] ");
	ck_assert_str_eq(sshsel_prefix(small, sizeof small, 12, 3), "[s12/");
	ck_assert_ptr_eq(sshsel_prefix(small, 0, 1, 1), small);
}
END_TEST

static char dir[64];

static void
setup(void)
{
	snprintf(dir, sizeof dir, "/tmp/check_sshsel.XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(dir));
	setenv("TPUCTL_CACHE_DIR", dir, 1);
}

static int
rm_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	return remove(path);
}

static void
teardown(void)
{
	ck_assert_int_eq(nftw(dir, rm_entry, 8, FTW_DEPTH | FTW_PHYS), 0);
}

START_TEST(qr_cache)
{
	cJSON *ids = cJSON_CreateArray(), *got = NULL;
	struct stat st;
	char *path;

	cJSON_AddItemToArray(ids, cJSON_CreateString("ms-0"));
	cJSON_AddItemToArray(ids, cJSON_CreateString("ms-1"));
	ck_assert_int_eq(nodecache_qr_get("p", "z", "ms", 60000, &got), -1);
	nodecache_qr_put("p", "z", "ms", ids);
	ck_assert_int_eq(nodecache_qr_get("p", "z", "ms", 60000, &got), 0);
	ck_assert(cJSON_Compare(ids, got, 1));
	cJSON_Delete(got);
	/* private file, not a node entry, other names miss */
	path = xasprintf("%s/qrs/p/z/ms.json", dir);
	ck_assert_int_eq(stat(path, &st), 0);
	ck_assert_int_eq(st.st_mode & 0777, 0600);
	ck_assert_int_eq(nodecache_get("p", "z", "ms", 60000, &got), -1);
	ck_assert_int_eq(nodecache_qr_get("p", "z2", "ms", 60000, &got), -1);
	ck_assert_int_eq(nodecache_qr_get("p", "z", "ms2", 60000, &got), -1);
	/* too old: a miss */
	ck_assert_int_eq(nodecache_qr_get("p", "z", "ms", 0, &got), -1);
	/* readable by others: a miss */
	ck_assert_int_eq(chmod(path, 0644), 0);
	ck_assert_int_eq(nodecache_qr_get("p", "z", "ms", 60000, &got), -1);
	ck_assert_int_eq(chmod(path, 0600), 0);
	nodecache_qr_drop("p", "z", "ms");
	ck_assert_int_eq(nodecache_qr_get("p", "z", "ms", 60000, &got), -1);
	ck_assert_int_ne(access(path, F_OK), 0);
	/* unsafe names are never written */
	nodecache_qr_put("p", "z", "../x", ids);
	ck_assert_int_eq(nodecache_qr_get("p", "z", "../x", 60000, &got), -1);
	free(path);
	cJSON_Delete(ids);
}
END_TEST

START_TEST(qr_cache_corrupt)
{
	static const char *const bad[] = { "{",
		"{\"storedAt\":1,\"name\":\"ms\",\"nodes\":[\"a\"]}", /* old */
		"{\"storedAt\":NOW,\"name\":\"other\",\"nodes\":[\"a\"]}",
		"{\"storedAt\":NOW,\"name\":\"ms\",\"nodes\":[]}",
		"{\"storedAt\":NOW,\"name\":\"ms\",\"nodes\":[\"../a\"]}",
		"{\"storedAt\":NOW,\"name\":\"ms\",\"nodes\":[1]}",
		"{\"storedAt\":NOW,\"name\":\"ms\",\"nodes\":\"a\"}",
		"{\"name\":\"ms\",\"nodes\":[\"a\"]}" };
	cJSON *ids = cJSON_CreateArray(), *got = NULL;
	char *path = xasprintf("%s/qrs/p/z/ms.json", dir), now[32], *text;
	size_t i;
	FILE *fp;

	cJSON_AddItemToArray(ids, cJSON_CreateString("a"));
	nodecache_qr_put("p", "z", "ms", ids); /* creates the directory */
	snprintf(now, sizeof now, "%lld", (long long)time(NULL) * 1000);
	for (i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		const char *at = strstr(bad[i], "NOW");

		text = at == NULL ? xstrdup(bad[i])
		                  : xasprintf("%.*s%s%s", (int)(at - bad[i]),
		                        bad[i], now, at + 3);
		ck_assert_ptr_nonnull(fp = fopen(path, "w"));
		fputs(text, fp);
		fclose(fp);
		ck_assert_msg(
		    nodecache_qr_get("p", "z", "ms", 600000, &got) == -1,
		    "hit on %s", text);
		free(text);
	}
	free(path);
	cJSON_Delete(ids);
}
END_TEST

static Suite *
sshsel_suite(void)
{
	Suite *s = suite_create("sshsel");
	TCase *tc = tcase_create("sshsel");
	TCase *tq = tcase_create("qr membership cache");

	tcase_add_test(tc, workers_valid);
	tcase_add_test(tc, workers_bad_syntax);
	tcase_add_test(tc, workers_out_of_range);
	tcase_add_test(tc, nodes_valid);
	tcase_add_test(tc, nodes_bad_syntax);
	tcase_add_test(tc, nodes_unknown);
	tcase_add_test(tc, qr_nodes);
	tcase_add_test(tc, qr_nodes_bad);
	tcase_add_test(tc, keys_merge);
	tcase_add_test(tc, prefixes);
	suite_add_tcase(s, tc);
	tcase_add_checked_fixture(tq, setup, teardown);
	tcase_add_test(tq, qr_cache);
	tcase_add_test(tq, qr_cache_corrupt);
	suite_add_tcase(s, tq);
	return s;
}

int
main(void)
{
	SRunner *sr = srunner_create(sshsel_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
