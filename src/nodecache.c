/*
 * The node description cache (see nodecache.h).
 *
 * File format: {"storedAt": <ms since the epoch>, "node": {...API JSON}}.
 * Freshness is measured on the wall clock because entries outlive the
 * process; an entry stored "in the future" (the clock went back) or older
 * than the caller's limit is a miss, so a clock jump can only make the
 * cache miss, never serve an old description.
 */
#include <sys/types.h>

#include <dirent.h>

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cjson/cJSON.h>

#include "buf.h"
#include "err.h"
#include "fsutil.h"
#include "json.h"
#include "log.h"
#include "nodecache.h"
#include "xmalloc.h"

/* A cached description larger than this is not ours: a miss. */
#define NODECACHE_MAX_FILE (1024 * 1024)

/*
 * A name that can be one path component: 1-128 characters of [A-Za-z0-9]
 * and "-_.:", not starting with '.' (so never "." or ".."), no '/'.
 * Project ids may hold ':' and '.' (domain-scoped projects).
 */
static int
safe_component(const char *s)
{
	size_t i;

	if (s == NULL || s[0] == '\0' || s[0] == '.')
		return 0;
	for (i = 0; s[i] != '\0'; i++) {
		unsigned char c = (unsigned char)s[i];

		if (i >= 128)
			return 0;
		if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
		    (c >= '0' && c <= '9') || c == '-' || c == '_' ||
		    c == '.' || c == ':')
			continue;
		return 0;
	}
	return 1;
}

/* The "tpuctl" cache directory, or NULL when there is none. */
static char *
base_dir(void)
{
	const char *x;

	if ((x = getenv("TPUCTL_CACHE_DIR")) != NULL && *x == '/')
		return xstrdup(x);
	if ((x = getenv("XDG_CACHE_HOME")) != NULL && *x == '/')
		return xasprintf("%s/tpuctl", x);
	if ((x = getenv("HOME")) != NULL && *x == '/')
		return xasprintf("%s/.cache/tpuctl", x);
	return NULL;
}

/* The entry's directory and file under kind ("nodes", "qrs"), or -1
 * when the names are unsafe. */
static int
kind_paths(const char *kind, const char *project, const char *zone,
    const char *node, char **dir, char **file)
{
	char *base;

	*dir = *file = NULL;
	if (!safe_component(project) || !safe_component(zone) ||
	    !safe_component(node)) {
		log_debug("nodecache: refusing unsafe names");
		return -1;
	}
	if ((base = base_dir()) == NULL)
		return -1;
	*dir = xasprintf("%s/%s/%s/%s", base, kind, project, zone);
	*file = xasprintf("%s/%s.json", *dir, node);
	free(base);
	return 0;
}

static int64_t
wall_ms(void)
{
	struct timespec ts;

	if (clock_gettime(CLOCK_REALTIME, &ts) != 0)
		return 0;
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/*
 * Store {"storedAt": now, ["name": name,] key: a copy of item} as the
 * entry kind/project/zone/id; a failure is only logged.
 */
static void
entry_store(const char *kind, const char *project, const char *zone,
    const char *id, const char *name, const char *key, const cJSON *item)
{
	struct tpu_err e;
	char *dir, *file, *text = NULL;
	cJSON *root, *copy;

	if (kind_paths(kind, project, zone, id, &dir, &file) != 0)
		return;
	tpu_err_init(&e);
	root = cJSON_CreateObject();
	copy = cJSON_Duplicate(item, 1);
	if (root == NULL || copy == NULL ||
	    cJSON_AddNumberToObject(root, "storedAt", (double)wall_ms()) ==
	        NULL ||
	    (name != NULL &&
	        cJSON_AddStringToObject(root, "name", name) == NULL) ||
	    !cJSON_AddItemToObject(root, key, copy)) {
		cJSON_Delete(copy);
		log_info("node cache: out of memory");
		goto out;
	}
	if ((text = json_print(root, 0)) == NULL) {
		log_info("node cache: cannot serialise %s", id);
		goto out;
	}
	if (fsutil_mkdir_private(dir, &e) != 0 ||
	    fsutil_write_atomic(file, text, strlen(text), 0600, &e) != 0)
		log_info("node cache not written: %s", e.msg);
out:
	if (text != NULL)
		cJSON_free(text);
	cJSON_Delete(root);
	free(dir);
	free(file);
}

/* Remove the entry kind/project/zone/id, if any. */
static void
entry_remove(
    const char *kind, const char *project, const char *zone, const char *id)
{
	struct tpu_err e;
	char *dir, *file;

	if (kind_paths(kind, project, zone, id, &dir, &file) != 0)
		return;
	tpu_err_init(&e);
	if (fsutil_remove(file, &e) != 0)
		log_info("node cache: %s", e.msg);
	free(dir);
	free(file);
}

/* 1 if desc's "name" is absent or ends in "/<node>" (or is node). */
static int
name_matches(const cJSON *desc, const char *node)
{
	const char *name = json_opt_string(desc, "name", NULL);
	size_t nl, l;

	if (name == NULL)
		return 1;
	nl = strlen(node);
	l = strlen(name);
	if (l == nl)
		return strcmp(name, node) == 0;
	return l > nl && name[l - nl - 1] == '/' &&
	       strcmp(name + l - nl, node) == 0;
}

/*
 * The stored root of entry kind/project/zone/id when it is readable,
 * carries storedAt and is younger than max_age_ms; NULL otherwise (a
 * miss, logged).
 */
static cJSON *
entry_load(const char *kind, const char *project, const char *zone,
    const char *id, int64_t max_age_ms)
{
	struct tpu_err e;
	struct buf b;
	char *dir, *file;
	cJSON *root = NULL;
	long long stored;
	int64_t age;

	if (kind_paths(kind, project, zone, id, &dir, &file) != 0)
		return NULL;
	tpu_err_init(&e);
	buf_init(&b, NODECACHE_MAX_FILE);
	if (fsutil_read_file(file, FSUTIL_F_NOFOLLOW | FSUTIL_F_PRIVATE, &b,
	        NULL, &e) != 0) {
		if (e.code != TPU_E_NOTFOUND)
			log_info("node cache: %s", e.msg);
		goto miss;
	}
	if ((root = json_parse(b.data, b.len, "node cache", &e)) == NULL ||
	    json_req_int64(root, "storedAt", &stored, &e) != 0) {
		log_info("node cache '%s': malformed entry", file);
		goto miss;
	}
	age = wall_ms() - (int64_t)stored;
	if (age < 0 || age >= max_age_ms) {
		log_debug("node cache: entry for %s %s is %lld ms old", kind,
		    id, (long long)age);
		goto miss;
	}
	log_debug("node cache: hit for %s %s (%lld ms old)", kind, id,
	    (long long)age);
	goto out;
miss:
	cJSON_Delete(root);
	root = NULL;
out:
	buf_release(&b);
	free(dir);
	free(file);
	return root;
}

int
nodecache_get(const char *project, const char *zone, const char *node,
    int64_t max_age_ms, cJSON **out)
{
	cJSON *root, *desc;

	*out = NULL;
	if ((root = entry_load("nodes", project, zone, node, max_age_ms)) ==
	    NULL)
		return -1;
	desc = cJSON_GetObjectItemCaseSensitive(root, "node");
	if (!cJSON_IsObject(desc) ||
	    strcmp(json_opt_string(desc, "state", ""), "READY") != 0 ||
	    !name_matches(desc, node)) {
		log_debug(
		    "node cache: entry for %s is not a READY %s", node, node);
		cJSON_Delete(root);
		return -1;
	}
	*out = cJSON_DetachItemViaPointer(root, desc);
	cJSON_Delete(root);
	return 0;
}

void
nodecache_put(
    const char *project, const char *zone, const char *node, const cJSON *desc)
{
	if (desc == NULL || !cJSON_IsObject(desc) ||
	    strcmp(json_opt_string(desc, "state", ""), "READY") != 0 ||
	    !name_matches(desc, node)) {
		nodecache_drop(project, zone, node);
		return;
	}
	entry_store("nodes", project, zone, node, NULL, "node", desc);
}

void
nodecache_drop(const char *project, const char *zone, const char *node)
{
	entry_remove("nodes", project, zone, node);
}

int
nodecache_qr_get(const char *project, const char *zone, const char *qr,
    int64_t max_age_ms, cJSON **ids)
{
	const cJSON *id;
	cJSON *root, *nodes;

	*ids = NULL;
	if ((root = entry_load("qrs", project, zone, qr, max_age_ms)) == NULL)
		return -1;
	if (cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(root, "pending"))) {
		log_debug("node cache: queued resource %s is pending", qr);
		cJSON_Delete(root);
		return -1;
	}
	nodes = cJSON_GetObjectItemCaseSensitive(root, "nodes");
	if (strcmp(json_opt_string(root, "name", ""), qr) != 0 ||
	    !cJSON_IsArray(nodes) || cJSON_GetArraySize(nodes) == 0)
		goto malformed;
	cJSON_ArrayForEach(id, nodes)
	{
		if (!cJSON_IsString(id) || !safe_component(id->valuestring))
			goto malformed;
	}
	*ids = cJSON_DetachItemViaPointer(root, nodes);
	cJSON_Delete(root);
	return 0;
malformed:
	log_info("node cache: malformed entry for queued resource %s", qr);
	cJSON_Delete(root);
	return -1;
}

void
nodecache_qr_put(
    const char *project, const char *zone, const char *qr, const cJSON *ids)
{
	if (!cJSON_IsArray(ids) || cJSON_GetArraySize(ids) == 0)
		return;
	entry_store("qrs", project, zone, qr, qr, "nodes", ids);
}

void
nodecache_qr_drop(const char *project, const char *zone, const char *qr)
{
	entry_remove("qrs", project, zone, qr);
}

/* 1 when desc's "queuedResource" is qr or ends in "/queuedResources/<qr>". */
static int
qr_owns(const cJSON *desc, const char *qr)
{
	static const char sep[] = "/queuedResources/";
	const char *q = json_opt_string(desc, "queuedResource", NULL);
	size_t ql, l, sl = sizeof sep - 1;

	if (q == NULL)
		return 0;
	ql = strlen(qr);
	l = strlen(q);
	if (l == ql)
		return strcmp(q, qr) == 0;
	return l > ql + sl && strcmp(q + l - ql, qr) == 0 &&
	       strncmp(q + l - ql - sl, sep, sl) == 0;
}

void
nodecache_qr_nodes_drop(const char *project, const char *zone, const char *qr)
{
	cJSON *names = nodecache_names(project, zone, 0);
	const cJSON *n;

	cJSON_ArrayForEach(n, names)
	{
		cJSON *root = entry_load(
		    "nodes", project, zone, n->valuestring, INT64_MAX);

		if (root != NULL &&
		    qr_owns(cJSON_GetObjectItemCaseSensitive(root, "node"), qr))
			entry_remove("nodes", project, zone, n->valuestring);
		cJSON_Delete(root);
	}
	cJSON_Delete(names);
}

void
nodecache_qr_pending(const char *project, const char *zone, const char *qr)
{
	cJSON *t = cJSON_CreateTrue();

	if (t != NULL)
		entry_store("qrs", project, zone, qr, qr, "pending", t);
	cJSON_Delete(t);
}

/* 1 when a fresh entry (pending or with membership) names qr in zone. */
static int
qr_known(
    const char *project, const char *zone, const char *qr, int64_t max_age_ms)
{
	cJSON *root = entry_load("qrs", project, zone, qr, max_age_ms);
	int hit =
	    root != NULL && strcmp(json_opt_string(root, "name", ""), qr) == 0;

	cJSON_Delete(root);
	return hit;
}

/* Add the "<name>.json" entries of dir to the sorted array names. */
static void
add_names(const char *dir, cJSON *names)
{
	struct dirent *d;
	DIR *dp;

	if ((dp = opendir(dir)) == NULL)
		return;
	while ((d = readdir(dp)) != NULL) {
		size_t n = strlen(d->d_name);
		cJSON *it;
		char *name;
		int i = 0, c = 1;

		if (n <= 5 || strcmp(d->d_name + n - 5, ".json") != 0)
			continue;
		name = xstrndup(d->d_name, n - 5);
		if (!safe_component(name)) {
			free(name);
			continue;
		}
		cJSON_ArrayForEach(it, names)
		{
			if ((c = strcmp(it->valuestring, name)) >= 0)
				break;
			i++;
		}
		if (c != 0)
			cJSON_InsertItemInArray(
			    names, i, cJSON_CreateString(name));
		free(name);
	}
	closedir(dp);
}

cJSON *
nodecache_names(const char *project, const char *zone, int qrs)
{
	cJSON *names = cJSON_CreateArray();
	const char *kind = qrs ? "qrs" : "nodes";
	struct dirent *d;
	char *base, *dir;
	DIR *dp;

	if (!safe_component(project) || (base = base_dir()) == NULL)
		return names;
	if (zone != NULL && strcmp(zone, "-") != 0) {
		if (safe_component(zone)) {
			dir =
			    xasprintf("%s/%s/%s/%s", base, kind, project, zone);
			add_names(dir, names);
			free(dir);
		}
		free(base);
		return names;
	}
	dir = xasprintf("%s/%s/%s", base, kind, project);
	if ((dp = opendir(dir)) != NULL) {
		while ((d = readdir(dp)) != NULL) {
			char *zd;

			if (!safe_component(d->d_name))
				continue;
			zd = xasprintf("%s/%s", dir, d->d_name);
			add_names(zd, names);
			free(zd);
		}
		closedir(dp);
	}
	free(dir);
	free(base);
	return names;
}

cJSON *
nodecache_zones(
    const char *project, const char *name, int qrs, int64_t max_age_ms)
{
	cJSON *zones = cJSON_CreateArray(), *got = NULL, *it;
	struct dirent *d;
	char *base, *dir;
	DIR *dp;

	if (!safe_component(project) || !safe_component(name) ||
	    (base = base_dir()) == NULL)
		return zones;
	dir = xasprintf("%s/%s/%s", base, qrs ? "qrs" : "nodes", project);
	free(base);
	if ((dp = opendir(dir)) == NULL) {
		free(dir);
		return zones;
	}
	while ((d = readdir(dp)) != NULL) {
		int i = 0, c = 1, hit;

		if (!safe_component(d->d_name))
			continue;
		/* the entry's own checks: fresh, private, READY, this name */
		hit = qrs ? qr_known(project, d->d_name, name, max_age_ms)
		          : nodecache_get(project, d->d_name, name, max_age_ms,
		                &got) == 0;
		cJSON_Delete(got);
		got = NULL;
		if (!hit)
			continue;
		cJSON_ArrayForEach(it, zones)
		{
			if ((c = strcmp(it->valuestring, d->d_name)) >= 0)
				break;
			i++;
		}
		if (c != 0)
			cJSON_InsertItemInArray(
			    zones, i, cJSON_CreateString(d->d_name));
	}
	closedir(dp);
	free(dir);
	return zones;
}
