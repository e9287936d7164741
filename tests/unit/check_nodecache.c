/*
 * Unit tests for src/nodecache.c: hits within the TTL only, non-READY
 * nodes never returned, private modes whatever the umask, atomic writes,
 * corrupt or foreign files are misses, the directory chosen from
 * TPUCTL_CACHE_DIR / XDG_CACHE_HOME / HOME, and names that could escape
 * the directory refused.
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
#include <cjson/cJSON.h>

#include "nodecache.h"
#include "xmalloc.h"

static char dir[64];

static void
rm_rf(const char *p)
{
	DIR *d = opendir(p);
	struct dirent *de;

	if (d == NULL) {
		unlink(p);
		return;
	}
	while ((de = readdir(d)) != NULL) {
		char *q;

		if (strcmp(de->d_name, ".") == 0 ||
		    strcmp(de->d_name, "..") == 0)
			continue;
		q = xasprintf("%s/%s", p, de->d_name);
		rm_rf(q);
		free(q);
	}
	closedir(d);
	rmdir(p);
}

static void
setup(void)
{
	snprintf(dir, sizeof dir, "/tmp/check_nodecache.XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(dir));
	setenv("TPUCTL_CACHE_DIR", dir, 1);
	unsetenv("XDG_CACHE_HOME");
}

static void
teardown(void)
{
	rm_rf(dir);
}

static cJSON *
mknode(const char *name, const char *state)
{
	cJSON *n = cJSON_CreateObject();
	char *full = xasprintf("projects/p/locations/z/nodes/%s", name);

	cJSON_AddStringToObject(n, "name", full);
	cJSON_AddStringToObject(n, "state", state);
	cJSON_AddStringToObject(n, "acceleratorType", "v4-8");
	free(full);
	return n;
}

static char *
entry(const char *base, const char *node)
{
	return xasprintf("%s/nodes/p/us-central2-b/%s.json", base, node);
}

static mode_t
mode_of(const char *p)
{
	struct stat st;

	ck_assert_int_eq(lstat(p, &st), 0);
	return st.st_mode & 07777;
}

/* mkdir -p */
static void
mkdirs(const char *d)
{
	char *p = xstrdup(d), *s;

	for (s = p + 1; *s != '\0'; s++) {
		if (*s != '/')
			continue;
		*s = '\0';
		mkdir(p, 0700);
		*s = '/';
	}
	mkdir(p, 0700);
	free(p);
}

static void
write_raw(const char *node, const char *text, mode_t mode)
{
	char *d = xasprintf("%s/nodes/p/us-central2-b", dir);
	char *p = entry(dir, node);
	FILE *f;

	mkdirs(d);
	f = fopen(p, "w");
	ck_assert_ptr_nonnull(f);
	fputs(text, f);
	fclose(f);
	ck_assert_int_eq(chmod(p, mode), 0);
	free(d);
	free(p);
}

static long long
now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

START_TEST(put_get_hit)
{
	cJSON *n = mknode("n1", "READY"), *got = NULL;

	nodecache_put("p", "us-central2-b", "n1", n);
	ck_assert_int_eq(
	    nodecache_get("p", "us-central2-b", "n1", NODECACHE_TTL_MS, &got),
	    0);
	ck_assert_ptr_nonnull(got);
	ck_assert_int_eq(cJSON_Compare(n, got, 1), 1);
	cJSON_Delete(got);
	/* another zone or node is a miss */
	ck_assert_int_eq(
	    nodecache_get("p", "us-central1-a", "n1", NODECACHE_TTL_MS, &got),
	    -1);
	ck_assert_ptr_null(got);
	ck_assert_int_eq(
	    nodecache_get("p", "us-central2-b", "n2", NODECACHE_TTL_MS, &got),
	    -1);
	cJSON_Delete(n);
}
END_TEST

START_TEST(ttl)
{
	cJSON *n = mknode("n1", "READY"), *got = NULL;
	char *text;

	nodecache_put("p", "us-central2-b", "n1", n);
	/* max age 0: everything is too old */
	ck_assert_int_eq(
	    nodecache_get("p", "us-central2-b", "n1", 0, &got), -1);
	/* stored 11 minutes ago: stale for the default TTL, fresh for 1 h */
	text = xasprintf("{\"storedAt\":%lld,\"node\":{\"name\":\"n1\","
	                 "\"state\":\"READY\"}}",
	    now_ms() - 11 * 60 * 1000);
	write_raw("n1", text, 0600);
	free(text);
	ck_assert_int_eq(
	    nodecache_get("p", "us-central2-b", "n1", NODECACHE_TTL_MS, &got),
	    -1);
	ck_assert_int_eq(
	    nodecache_get("p", "us-central2-b", "n1", 3600 * 1000, &got), 0);
	cJSON_Delete(got);
	/* stored in the future (the clock went back): a miss */
	text = xasprintf("{\"storedAt\":%lld,\"node\":{\"name\":\"n1\","
	                 "\"state\":\"READY\"}}",
	    now_ms() + 3600 * 1000);
	write_raw("n1", text, 0600);
	free(text);
	ck_assert_int_eq(
	    nodecache_get("p", "us-central2-b", "n1", 86400000, &got), -1);
	cJSON_Delete(n);
}
END_TEST

START_TEST(not_ready_never_returned)
{
	cJSON *n = mknode("n1", "READY"), *s = mknode("n1", "STOPPED");
	cJSON *got = NULL;
	char *p = entry(dir, "n1");
	char *text;

	nodecache_put("p", "us-central2-b", "n1", n);
	ck_assert_int_eq(access(p, F_OK), 0);
	/* storing a non-READY description drops the entry */
	nodecache_put("p", "us-central2-b", "n1", s);
	ck_assert_int_eq(access(p, F_OK), -1);
	ck_assert_int_eq(
	    nodecache_get("p", "us-central2-b", "n1", NODECACHE_TTL_MS, &got),
	    -1);
	/* a file holding a non-READY node (written by hand) is a miss */
	text = xasprintf("{\"storedAt\":%lld,\"node\":{\"name\":\"n1\","
	                 "\"state\":\"CREATING\"}}",
	    now_ms());
	write_raw("n1", text, 0600);
	free(text);
	ck_assert_int_eq(
	    nodecache_get("p", "us-central2-b", "n1", NODECACHE_TTL_MS, &got),
	    -1);
	/* a description of another node is a miss too */
	text = xasprintf("{\"storedAt\":%lld,\"node\":{\"name\":"
	                 "\"projects/p/locations/z/nodes/other\","
	                 "\"state\":\"READY\"}}",
	    now_ms());
	write_raw("n1", text, 0600);
	free(text);
	ck_assert_int_eq(
	    nodecache_get("p", "us-central2-b", "n1", NODECACHE_TTL_MS, &got),
	    -1);
	ck_assert_ptr_null(got);
	free(p);
	cJSON_Delete(n);
	cJSON_Delete(s);
}
END_TEST

START_TEST(private_modes)
{
	cJSON *n = mknode("n1", "READY");
	char *p = entry(dir, "n1");
	char *d1 = xasprintf("%s/nodes", dir);
	char *d2 = xasprintf("%s/nodes/p", dir);
	char *d3 = xasprintf("%s/nodes/p/us-central2-b", dir);
	mode_t old = umask(0);

	nodecache_put("p", "us-central2-b", "n1", n);
	umask(old);
	ck_assert_int_eq(mode_of(p), 0600);
	ck_assert_int_eq(mode_of(d1), 0700);
	ck_assert_int_eq(mode_of(d2), 0700);
	ck_assert_int_eq(mode_of(d3), 0700);
	free(p);
	free(d1);
	free(d2);
	free(d3);
	cJSON_Delete(n);
}
END_TEST

START_TEST(atomic_no_temp_left)
{
	cJSON *n = mknode("n1", "READY");
	char *d = xasprintf("%s/nodes/p/us-central2-b", dir);
	DIR *dd;
	struct dirent *de;
	int files = 0, i;

	for (i = 0; i < 3; i++)
		nodecache_put("p", "us-central2-b", "n1", n);
	dd = opendir(d);
	ck_assert_ptr_nonnull(dd);
	while ((de = readdir(dd)) != NULL) {
		if (de->d_name[0] == '.')
			continue;
		ck_assert_str_eq(de->d_name, "n1.json");
		files++;
	}
	closedir(dd);
	ck_assert_int_eq(files, 1);
	free(d);
	cJSON_Delete(n);
}
END_TEST

START_TEST(corrupt_is_miss)
{
	static const char *bad[] = {
		"",
		"{",
		"not json",
		"[]",
		"{\"node\":{\"name\":\"n1\",\"state\":\"READY\"}}",
		"{\"storedAt\":\"x\",\"node\":{\"name\":\"n1\",\"state\":"
		"\"READY\"}}",
		"{\"storedAt\":1,\"node\":\"READY\"}",
	};
	cJSON *got = NULL;
	size_t i;

	for (i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		write_raw("n1", bad[i], 0600);
		ck_assert_int_eq(nodecache_get("p", "us-central2-b", "n1",
		                     NODECACHE_TTL_MS, &got),
		    -1);
		ck_assert_ptr_null(got);
	}
}
END_TEST

START_TEST(loose_or_symlink_is_miss)
{
	cJSON *n = mknode("n1", "READY"), *got = NULL;
	char *p = entry(dir, "n1");
	char *other = xasprintf("%s/other.json", dir);
	char *text = xasprintf("{\"storedAt\":%lld,\"node\":{\"name\":\"n1\","
	                       "\"state\":\"READY\"}}",
	    now_ms());

	write_raw("n1", text, 0644);
	ck_assert_int_eq(
	    nodecache_get("p", "us-central2-b", "n1", NODECACHE_TTL_MS, &got),
	    -1);
	unlink(p);
	write_raw("x", text, 0600);
	{
		char *x = entry(dir, "x");

		ck_assert_int_eq(rename(x, other), 0);
		free(x);
	}
	ck_assert_int_eq(symlink(other, p), 0);
	ck_assert_int_eq(
	    nodecache_get("p", "us-central2-b", "n1", NODECACHE_TTL_MS, &got),
	    -1);
	/* put refuses to write through the symlink */
	nodecache_put("p", "us-central2-b", "n1", n);
	ck_assert_int_eq(mode_of(other), 0600);
	free(p);
	free(other);
	free(text);
	cJSON_Delete(n);
}
END_TEST

START_TEST(drop_removes)
{
	cJSON *n = mknode("n1", "READY"), *got = NULL;
	char *p = entry(dir, "n1");

	nodecache_put("p", "us-central2-b", "n1", n);
	ck_assert_int_eq(access(p, F_OK), 0);
	nodecache_drop("p", "us-central2-b", "n1");
	ck_assert_int_eq(access(p, F_OK), -1);
	ck_assert_int_eq(
	    nodecache_get("p", "us-central2-b", "n1", NODECACHE_TTL_MS, &got),
	    -1);
	/* dropping a missing entry is fine */
	nodecache_drop("p", "us-central2-b", "n1");
	nodecache_drop("p", "us-central2-b", "never");
	free(p);
	cJSON_Delete(n);
}
END_TEST

/* A queued resource's nodes go with it, membership cached or not; a
 * node of another queued resource (a longer name ending alike) stays. */
START_TEST(qr_nodes_drop_by_owner)
{
	static const char *const ids[] = { "q-0", "q-1", "xq-0", "solo" };
	static const char *const owner[] = { "q", "q", "xq", NULL };
	char *p[4];
	int i;

	for (i = 0; i < 4; i++) {
		cJSON *n = mknode(ids[i], "READY");

		if (owner[i] != NULL) {
			char *q = xasprintf(
			    "projects/p/locations/z/queuedResources/%s",
			    owner[i]);

			cJSON_AddStringToObject(n, "queuedResource", q);
			free(q);
		}
		nodecache_put("p", "us-central2-b", ids[i], n);
		cJSON_Delete(n);
		p[i] = entry(dir, ids[i]);
		ck_assert_int_eq(access(p[i], F_OK), 0);
	}
	nodecache_qr_nodes_drop("p", "us-central2-b", "q");
	ck_assert_int_eq(access(p[0], F_OK), -1);
	ck_assert_int_eq(access(p[1], F_OK), -1);
	ck_assert_int_eq(access(p[2], F_OK), 0);
	ck_assert_int_eq(access(p[3], F_OK), 0);
	/* another zone's cache is not touched; nothing cached is fine */
	nodecache_qr_nodes_drop("p", "us-east1-d", "xq");
	ck_assert_int_eq(access(p[2], F_OK), 0);
	nodecache_qr_nodes_drop("p", "us-central2-b", "xq");
	ck_assert_int_eq(access(p[2], F_OK), -1);
	ck_assert_int_eq(access(p[3], F_OK), 0);
	for (i = 0; i < 4; i++)
		free(p[i]);
}
END_TEST

START_TEST(dir_from_env)
{
	cJSON *n = mknode("n1", "READY"), *got = NULL;
	char *xdg = xasprintf("%s/xdg", dir);
	char *home = xasprintf("%s/home", dir);
	char *p;

	/* XDG_CACHE_HOME/tpuctl when TPUCTL_CACHE_DIR is unset */
	unsetenv("TPUCTL_CACHE_DIR");
	setenv("XDG_CACHE_HOME", xdg, 1);
	nodecache_put("p", "us-central2-b", "n1", n);
	p = xasprintf("%s/tpuctl/nodes/p/us-central2-b/n1.json", xdg);
	ck_assert_int_eq(access(p, F_OK), 0);
	free(p);
	/* a relative XDG_CACHE_HOME is ignored: HOME/.cache/tpuctl */
	setenv("XDG_CACHE_HOME", "relative", 1);
	setenv("HOME", home, 1);
	nodecache_put("p", "us-central2-b", "n1", n);
	p = xasprintf("%s/.cache/tpuctl/nodes/p/us-central2-b/n1.json", home);
	ck_assert_int_eq(access(p, F_OK), 0);
	ck_assert_int_eq(
	    nodecache_get("p", "us-central2-b", "n1", NODECACHE_TTL_MS, &got),
	    0);
	cJSON_Delete(got);
	free(p);
	/* TPUCTL_CACHE_DIR wins over both */
	setenv("TPUCTL_CACHE_DIR", dir, 1);
	setenv("XDG_CACHE_HOME", xdg, 1);
	nodecache_drop("p", "us-central2-b", "n1");
	p = xasprintf("%s/tpuctl/nodes/p/us-central2-b/n1.json", xdg);
	ck_assert_int_eq(access(p, F_OK), 0); /* not the one dropped */
	free(p);
	nodecache_put("p", "us-central2-b", "n1", n);
	p = entry(dir, "n1");
	ck_assert_int_eq(access(p, F_OK), 0);
	free(p);
	free(xdg);
	free(home);
	cJSON_Delete(n);
}
END_TEST

START_TEST(unsafe_names_refused)
{
	static const char *names[] = {
		"",
		".",
		"..",
		"../x",
		"a/b",
		"/abs",
		".hidden",
		"a b",
		"a\nb",
	};
	cJSON *got = NULL;
	size_t i;
	DIR *d;
	struct dirent *de;
	int entries = 0;

	for (i = 0; i < sizeof names / sizeof names[0]; i++) {
		cJSON *n = mknode(names[i], "READY");

		nodecache_put("p", "z", names[i], n);
		nodecache_put(names[i], "z", "n", n);
		nodecache_put("p", names[i], "n", n);
		ck_assert_int_eq(
		    nodecache_get("p", "z", names[i], NODECACHE_TTL_MS, &got),
		    -1);
		ck_assert_int_eq(
		    nodecache_get(names[i], "z", "n", NODECACHE_TTL_MS, &got),
		    -1);
		nodecache_drop("p", "z", names[i]);
		cJSON_Delete(n);
	}
	/* a 129-character name is refused as well */
	{
		char longname[130];
		cJSON *n;

		memset(longname, 'a', 129);
		longname[129] = '\0';
		n = mknode(longname, "READY");
		nodecache_put("p", "z", longname, n);
		cJSON_Delete(n);
	}
	ck_assert_ptr_null(got);
	/* nothing at all was written */
	d = opendir(dir);
	ck_assert_ptr_nonnull(d);
	while ((de = readdir(d)) != NULL)
		if (strcmp(de->d_name, ".") != 0 &&
		    strcmp(de->d_name, "..") != 0)
			entries++;
	closedir(d);
	ck_assert_int_eq(entries, 0);
}
END_TEST

START_TEST(names_for_completion)
{
	cJSON *n, *ids, *names;
	char *out;

	names = nodecache_names("p", "us-central2-b", 0);
	ck_assert_int_eq(cJSON_GetArraySize(names), 0); /* no cache yet */
	cJSON_Delete(names);
	n = mknode("zeta", "READY");
	nodecache_put("p", "us-central2-b", "zeta", n);
	cJSON_Delete(n);
	n = mknode("alpha", "READY");
	nodecache_put("p", "us-central2-b", "alpha", n);
	cJSON_Delete(n);
	n = mknode("alpha", "READY");
	nodecache_put("p", "us-west4-a", "alpha", n);
	cJSON_Delete(n);
	n = mknode("west", "READY");
	nodecache_put("p", "us-west4-a", "west", n);
	cJSON_Delete(n);
	n = mknode("other", "READY");
	nodecache_put("q", "us-central2-b", "other", n);
	cJSON_Delete(n);
	ids = cJSON_CreateArray();
	cJSON_AddItemToArray(ids, cJSON_CreateString("qr-0"));
	nodecache_qr_put("p", "us-central2-b", "qr", ids);
	cJSON_Delete(ids);
	write_raw("bad name", "{}", 0600); /* not a safe name: skipped */

	names = nodecache_names("p", "us-central2-b", 0);
	out = cJSON_PrintUnformatted(names);
	ck_assert_str_eq(out, "[\"alpha\",\"zeta\"]");
	cJSON_free(out);
	cJSON_Delete(names);
	/* every zone: sorted, each name once */
	names = nodecache_names("p", "-", 0);
	out = cJSON_PrintUnformatted(names);
	ck_assert_str_eq(out, "[\"alpha\",\"west\",\"zeta\"]");
	cJSON_free(out);
	cJSON_Delete(names);
	names = nodecache_names("p", NULL, 1);
	out = cJSON_PrintUnformatted(names);
	ck_assert_str_eq(out, "[\"qr\"]");
	cJSON_free(out);
	cJSON_Delete(names);
	names = nodecache_names("../p", NULL, 0);
	ck_assert_int_eq(cJSON_GetArraySize(names), 0);
	cJSON_Delete(names);
}
END_TEST

START_TEST(qr_pending)
{
	cJSON *ids = NULL, *zones;
	char *out;

	/* created, not ACTIVE: its zone known, no membership */
	nodecache_qr_pending("p", "us-west4-a", "ms");
	ck_assert_int_eq(
	    nodecache_qr_get("p", "us-west4-a", "ms", NODECACHE_TTL_MS, &ids),
	    -1);
	ck_assert_ptr_null(ids);
	zones = nodecache_zones("p", "ms", 1, NODECACHE_TTL_MS);
	out = cJSON_PrintUnformatted(zones);
	ck_assert_str_eq(out, "[\"us-west4-a\"]");
	cJSON_free(out);
	cJSON_Delete(zones);
	/* stale: no hint */
	zones = nodecache_zones("p", "ms", 1, 0);
	ck_assert_int_eq(cJSON_GetArraySize(zones), 0);
	cJSON_Delete(zones);
	/* the membership replaces it */
	ids = cJSON_CreateArray();
	cJSON_AddItemToArray(ids, cJSON_CreateString("ms-0"));
	nodecache_qr_put("p", "us-west4-a", "ms", ids);
	cJSON_Delete(ids);
	ck_assert_int_eq(
	    nodecache_qr_get("p", "us-west4-a", "ms", NODECACHE_TTL_MS, &ids),
	    0);
	out = cJSON_PrintUnformatted(ids);
	ck_assert_str_eq(out, "[\"ms-0\"]");
	cJSON_free(out);
	cJSON_Delete(ids);
	/* dropped: no hint either */
	nodecache_qr_drop("p", "us-west4-a", "ms");
	zones = nodecache_zones("p", "ms", 1, NODECACHE_TTL_MS);
	ck_assert_int_eq(cJSON_GetArraySize(zones), 0);
	cJSON_Delete(zones);
}
END_TEST

START_TEST(zones_of_a_name)
{
	cJSON *n, *ids, *zones;
	char *out;

	zones = nodecache_zones("p", "alpha", 0, NODECACHE_TTL_MS);
	ck_assert_int_eq(cJSON_GetArraySize(zones), 0); /* no cache yet */
	cJSON_Delete(zones);
	n = mknode("alpha", "READY");
	nodecache_put("p", "us-west4-a", "alpha", n);
	nodecache_put("p", "europe-west4-b", "alpha", n);
	nodecache_put("q", "us-central2-b", "alpha", n);
	cJSON_Delete(n);
	n = mknode("beta", "READY");
	nodecache_put("p", "us-central2-b", "beta", n);
	cJSON_Delete(n);
	ids = cJSON_CreateArray();
	cJSON_AddItemToArray(ids, cJSON_CreateString("qr-0"));
	nodecache_qr_put("p", "us-east1-d", "qr", ids);
	cJSON_Delete(ids);

	zones = nodecache_zones("p", "alpha", 0, NODECACHE_TTL_MS);
	out = cJSON_PrintUnformatted(zones);
	ck_assert_str_eq(out, "[\"europe-west4-b\",\"us-west4-a\"]");
	cJSON_free(out);
	cJSON_Delete(zones);
	zones = nodecache_zones("p", "qr", 1, NODECACHE_TTL_MS);
	out = cJSON_PrintUnformatted(zones);
	ck_assert_str_eq(out, "[\"us-east1-d\"]");
	cJSON_free(out);
	cJSON_Delete(zones);
	/* a node is not a queued resource, nor an unknown name anything */
	zones = nodecache_zones("p", "qr", 0, NODECACHE_TTL_MS);
	ck_assert_int_eq(cJSON_GetArraySize(zones), 0);
	cJSON_Delete(zones);
	zones = nodecache_zones("p", "gamma", 0, NODECACHE_TTL_MS);
	ck_assert_int_eq(cJSON_GetArraySize(zones), 0);
	cJSON_Delete(zones);
	/* unsafe names are never looked up */
	zones = nodecache_zones("p", "../p", 0, NODECACHE_TTL_MS);
	ck_assert_int_eq(cJSON_GetArraySize(zones), 0);
	cJSON_Delete(zones);
	zones = nodecache_zones("../q", "alpha", 0, NODECACHE_TTL_MS);
	ck_assert_int_eq(cJSON_GetArraySize(zones), 0);
	cJSON_Delete(zones);
}
END_TEST

static Suite *
nodecache_suite(void)
{
	Suite *s = suite_create("nodecache");
	TCase *tc = tcase_create("cache");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, put_get_hit);
	tcase_add_test(tc, ttl);
	tcase_add_test(tc, not_ready_never_returned);
	tcase_add_test(tc, private_modes);
	tcase_add_test(tc, atomic_no_temp_left);
	tcase_add_test(tc, corrupt_is_miss);
	tcase_add_test(tc, loose_or_symlink_is_miss);
	tcase_add_test(tc, drop_removes);
	tcase_add_test(tc, qr_nodes_drop_by_owner);
	tcase_add_test(tc, dir_from_env);
	tcase_add_test(tc, unsafe_names_refused);
	tcase_add_test(tc, names_for_completion);
	tcase_add_test(tc, zones_of_a_name);
	tcase_add_test(tc, qr_pending);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	SRunner *sr = srunner_create(nodecache_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
