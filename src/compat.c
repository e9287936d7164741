/*
 * The framework compatibility matrix: loading config/compat.json, lookup
 * and the refusals (see compat.h).  The matrix shape is checked as it is
 * used: a malformed file is TPU_E_INVALID naming the field.
 */
#include <sys/stat.h>

#include <ctype.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "buf.h"
#include "compat.h"
#include "fsutil.h"
#include "json.h"
#include "xmalloc.h"

#define COMPAT_MAX_BYTES (1 << 20)

static int
has_matrix(const char *dir)
{
	struct stat st;
	char p[PATH_MAX];

	if ((size_t)snprintf(p, sizeof p, "%s/compat.json", dir) >= sizeof p)
		return 0;
	return stat(p, &st) == 0 && S_ISREG(st.st_mode);
}

int
compat_config_dir(char *buf, size_t len, struct tpu_err *err)
{
	static const char *const rel[] = { "../share/tpuctl", "../config" };
	const char *env = getenv("TPUCTL_CONFIG_DIR");
	char exe[PATH_MAX], *slash;
	ssize_t n;
	size_t i;

	if (env != NULL && *env != '\0') {
		if (!has_matrix(env))
			return tpu_error(err, TPU_E_NOTFOUND,
			    "TPUCTL_CONFIG_DIR=%s has no compat.json", env);
		snprintf(buf, len, "%s", env);
		return 0;
	}
	n = readlink("/proc/self/exe", exe, sizeof exe - 1);
	if (n > 0) {
		exe[n] = '\0';
		if ((slash = strrchr(exe, '/')) != NULL)
			*slash = '\0';
		for (i = 0; i < sizeof rel / sizeof rel[0]; i++) {
			if ((size_t)snprintf(buf, len, "%s/%s", exe, rel[i]) <
			        len &&
			    has_matrix(buf))
				return 0;
		}
	}
	return tpu_error(err, TPU_E_NOTFOUND,
	    "no compatibility matrix: compat.json is neither in "
	    "TPUCTL_CONFIG_DIR nor in ../share/tpuctl or ../config next to "
	    "the tpuctl binary");
}

static int
check_shape(const cJSON *root, struct tpu_err *err)
{
	if (!cJSON_IsObject(root) ||
	    json_req_object(root, "frameworks", err) == NULL ||
	    json_req_object(root, "runtimes", err) == NULL ||
	    json_req_object(root, "no_tpu_backend", err) == NULL)
		return tpu_error_prefix(err, "compat.json"), TPU_E_INVALID;
	return 0;
}

int
compat_load_text(struct compat *c, const char *json, struct tpu_err *err)
{
	memset(c, 0, sizeof *c);
	c->root = json_parse(json, strlen(json), "compat.json", err);
	if (c->root == NULL)
		return TPU_E_INVALID;
	if (check_shape(c->root, err) != 0) {
		compat_release(c);
		return TPU_E_INVALID;
	}
	return 0;
}

int
compat_load(struct compat *c, const char *dir, struct tpu_err *err)
{
	char d[PATH_MAX], *p;
	struct buf b;
	int rc;

	memset(c, 0, sizeof *c);
	if (dir == NULL) {
		if ((rc = compat_config_dir(d, sizeof d, err)) != 0)
			return rc;
		dir = d;
	}
	p = xasprintf("%s/compat.json", dir);
	buf_init(&b, COMPAT_MAX_BYTES);
	rc = fsutil_read_file(p, 0, &b, NULL, err);
	free(p);
	if (rc == 0) {
		rc = compat_load_text(c, b.data, err);
		if (rc == 0)
			c->dir = xstrdup(dir);
	}
	buf_release(&b);
	return rc;
}

int
compat_recipe(const struct compat *c, const char *framework, char **out,
    struct tpu_err *err)
{
	const char *parts[2] = { framework, "common" };
	struct buf b;
	size_t i;
	int rc = 0;

	*out = NULL;
	if (c->dir == NULL)
		return tpu_error(err, TPU_E_NOTFOUND,
		    "no configuration directory: the recipes are not found");
	buf_init(&b, COMPAT_MAX_BYTES);
	for (i = 0; i < 2 && rc == 0; i++) {
		char *p = xasprintf("%s/recipes/%s.sh", c->dir, parts[i]);

		rc = fsutil_read_file(p, 0, &b, NULL, err);
		free(p);
		if (rc == 0 && b.len > 0 && b.data[b.len - 1] != '\n')
			buf_append(&b, "\n", 1);
	}
	if (rc != 0) {
		buf_release(&b);
		return rc;
	}
	*out = buf_detach(&b, NULL);
	return 0;
}

void
compat_release(struct compat *c)
{
	cJSON_Delete(c->root);
	free(c->dir);
	c->root = NULL;
	c->dir = NULL;
}

int
compat_version_cmp(const char *a, const char *b)
{
	while (*a != '\0' || *b != '\0') {
		char *ea, *eb;
		unsigned long x = strtoul(a, &ea, 10);
		unsigned long y = strtoul(b, &eb, 10);

		if (x != y)
			return x < y ? -1 : 1;
		if (ea == a || eb == b) /* a non-numeric part: compare text */
			return strcmp(a, b);
		a = ea;
		b = eb;
		if (*a == '.')
			a++;
		if (*b == '.')
			b++;
		if ((*a != '\0' && !isdigit((unsigned char)*a)) ||
		    (*b != '\0' && !isdigit((unsigned char)*b)))
			return strcmp(a, b);
	}
	return 0;
}

static const cJSON *
versions_of(const struct compat *c, const char *framework)
{
	const cJSON *fw =
	    cJSON_GetObjectItemCaseSensitive(c->root, "frameworks");
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(fw, framework);

	return cJSON_IsArray(v) ? v : NULL;
}

/* "jax, pytorch or tensorflow" */
static void
framework_names(const struct compat *c, char *out, size_t len)
{
	const cJSON *fw =
	    cJSON_GetObjectItemCaseSensitive(c->root, "frameworks");
	const cJSON *it;
	int n = cJSON_GetArraySize(fw), i = 0;
	size_t o = 0;

	out[0] = '\0';
	cJSON_ArrayForEach(it, fw)
	{
		int w = snprintf(out + o, len - o, "%s%s",
		    i == 0       ? ""
		    : i == n - 1 ? " or "
		                 : ", ",
		    it->string);

		if (w < 0 || (size_t)w >= len - o)
			break;
		o += (size_t)w;
		i++;
	}
}

/* "0.6.1, 0.4.34" */
static void
version_names(const cJSON *versions, char *out, size_t len)
{
	const cJSON *it;
	size_t o = 0;

	out[0] = '\0';
	cJSON_ArrayForEach(it, versions)
	{
		int w = snprintf(out + o, len - o, "%s%s", o ? ", " : "",
		    json_opt_string(it, "version", "?"));

		if (w < 0 || (size_t)w >= len - o)
			break;
		o += (size_t)w;
	}
}

static int
str_in(const cJSON *arr, const char *s)
{
	const cJSON *it;

	cJSON_ArrayForEach(it, arr)
	{
		if (cJSON_IsString(it) && strcmp(it->valuestring, s) == 0)
			return 1;
	}
	return 0;
}

static const cJSON *
find_version(const cJSON *versions, const char *version)
{
	const cJSON *it;

	cJSON_ArrayForEach(it, versions)
	{
		if (strcmp(json_opt_string(it, "version", ""), version) == 0)
			return it;
	}
	return NULL;
}

int
compat_check_framework(const struct compat *c, const char *framework,
    const char *version, struct tpu_err *err)
{
	const cJSON *no =
	    cJSON_GetObjectItemCaseSensitive(c->root, "no_tpu_backend");
	const cJSON *why, *versions, *it, *below = NULL, *above = NULL;
	char names[256], list[512];

	framework_names(c, names, sizeof names);
	why = cJSON_GetObjectItem(no, framework); /* MXNet, mxnet */
	if (cJSON_IsString(why))
		return tpu_error(err, TPU_E_USAGE,
		    "framework '%s' cannot run on a TPU: %s; use %s", framework,
		    why->valuestring, names);
	if ((versions = versions_of(c, framework)) == NULL)
		return tpu_error(err, TPU_E_USAGE,
		    "unknown framework '%s': use %s", framework, names);
	if (version == NULL || find_version(versions, version) != NULL)
		return 0;
	/* The nearest known version: the newest below, else the oldest
	 * above. */
	cJSON_ArrayForEach(it, versions)
	{
		const char *v = json_opt_string(it, "version", "");

		if (compat_version_cmp(v, version) < 0) {
			if (below == NULL ||
			    compat_version_cmp(
			        v, json_opt_string(below, "version", "")) > 0)
				below = it;
		} else if (above == NULL ||
		           compat_version_cmp(
		               v, json_opt_string(above, "version", "")) < 0)
			above = it;
	}
	version_names(versions, list, sizeof list);
	return tpu_error(err, TPU_E_USAGE,
	    "%s %s is not in tpuctl's compatibility matrix: use --version %s "
	    "(known: %s)",
	    framework, version,
	    json_opt_string(below != NULL ? below : above, "version", "?"),
	    list);
}

enum misfit { FIT_OK, FIT_GEN, FIT_RUNTIME, FIT_PYTHON };

static enum misfit
fits(const cJSON *entry, const char *gen, const char *runtime,
    const char *rt_python)
{
	const char *pmin = json_opt_string(entry, "python_min", "0");

	if (!str_in(
	        cJSON_GetObjectItemCaseSensitive(entry, "generations"), gen))
		return FIT_GEN;
	if (!str_in(
	        cJSON_GetObjectItemCaseSensitive(entry, "runtimes"), runtime))
		return FIT_RUNTIME;
	if (rt_python != NULL && compat_version_cmp(rt_python, pmin) < 0)
		return FIT_PYTHON;
	return FIT_OK;
}

static void
fill(struct compat_choice *out, const char *framework, const cJSON *e,
    const char *rt_python)
{
	out->framework = framework;
	out->version = json_opt_string(e, "version", "");
	out->python_min = json_opt_string(e, "python_min", "0");
	out->requirements = cJSON_GetObjectItemCaseSensitive(e, "requirements");
	out->packages = cJSON_GetObjectItemCaseSensitive(e, "packages");
	out->find_links = cJSON_GetObjectItemCaseSensitive(e, "find_links");
	out->runtime_python = rt_python;
}

/* The strings of entry's array key, "a, b" */
static void
list_of(const cJSON *entry, const char *key, char *out, size_t len)
{
	const cJSON *it;
	size_t o = 0;

	out[0] = '\0';
	cJSON_ArrayForEach(it, cJSON_GetObjectItemCaseSensitive(entry, key))
	{
		int w = snprintf(out + o, len - o, "%s%s", o ? ", " : "",
		    cJSON_IsString(it) ? it->valuestring : "?");

		if (w < 0 || (size_t)w >= len - o)
			break;
		o += (size_t)w;
	}
}

int
compat_resolve(const struct compat *c, const char *framework,
    const char *version, const char *gen, const char *runtime,
    struct compat_choice *out, struct tpu_err *err)
{
	const cJSON *versions, *rt, *it, *entry = NULL, *best = NULL;
	const char *rt_python = NULL, *rec;
	char rts[512];
	enum misfit why;
	int rc;

	memset(out, 0, sizeof *out);
	if ((rc = compat_check_framework(c, framework, version, err)) != 0)
		return rc;
	versions = versions_of(c, framework);
	rt = cJSON_GetObjectItemCaseSensitive(
	    cJSON_GetObjectItemCaseSensitive(c->root, "runtimes"), runtime);
	if (!cJSON_IsObject(rt))
		return tpu_error(err, TPU_E_USAGE,
		    "runtime version '%s' is not in tpuctl's compatibility "
		    "matrix: no framework is known to work on it (see 'tpuctl "
		    "versions list --framework %s')",
		    runtime, framework);
	rt_python = json_opt_string(rt, "python", NULL);
	rec = json_opt_string(c->root,
	    (snprintf(rts, sizeof rts, "recommended_runtime.%s", gen), rts),
	    "tpu-ubuntu2204-base");
	/* The newest entry that works: the suggestion, or the choice. */
	cJSON_ArrayForEach(it, versions)
	{
		if (fits(it, gen, runtime, rt_python) != FIT_OK)
			continue;
		if (best == NULL ||
		    compat_version_cmp(json_opt_string(it, "version", ""),
		        json_opt_string(best, "version", "")) > 0)
			best = it;
	}
	if (version == NULL) {
		if (best != NULL) {
			fill(out, framework, best, rt_python);
			return 0;
		}
		entry = cJSON_GetArrayItem(versions, 0);
	} else
		entry = find_version(versions, version);
	why = fits(entry, gen, runtime, rt_python);
	if (why == FIT_OK) {
		fill(out, framework, entry, rt_python);
		return 0;
	}
	version = json_opt_string(entry, "version", "?");
	if (best != NULL)
		return tpu_error(err, TPU_E_USAGE,
		    "%s %s is not known to work on %s with runtime %s%s%s%s: "
		    "use --version %s",
		    framework, version, gen, runtime,
		    why == FIT_PYTHON ? " (it needs Python >= " : "",
		    why == FIT_PYTHON ? json_opt_string(entry, "python_min", "")
		                      : "",
		    why == FIT_PYTHON ? ")" : "",
		    json_opt_string(best, "version", "?"));
	switch (why) {
	case FIT_GEN:
		return tpu_error(err, TPU_E_USAGE,
		    "no %s version of tpuctl's matrix supports %s: %s %s "
		    "supports %s only",
		    framework, gen, framework, version,
		    (list_of(entry, "generations", rts, sizeof rts), rts));
	case FIT_RUNTIME:
		list_of(entry, "runtimes", rts, sizeof rts);
		if (strcmp(framework, "tensorflow") == 0 &&
		    !cJSON_IsString(
		        cJSON_GetObjectItemCaseSensitive(rt, "tensorflow")))
			return tpu_error(err, TPU_E_USAGE,
			    "runtime %s has no TensorFlow support: create the "
			    "node with --version %s for tensorflow %s, or "
			    "install jax or pytorch",
			    runtime, rts, version);
		return tpu_error(err, TPU_E_USAGE,
		    "%s %s is not known to work with runtime %s: use a node "
		    "with runtime %s",
		    framework, version, runtime,
		    strcmp(framework, "tensorflow") == 0 ? rts : rec);
	case FIT_PYTHON:
	default:
		return tpu_error(err, TPU_E_USAGE,
		    "%s %s needs Python >= %s, and runtime %s has Python %s: "
		    "use a node with runtime %s",
		    framework, version,
		    json_opt_string(entry, "python_min", ""), runtime,
		    rt_python, rec);
	}
}

static void
add_rows(cJSON *rows, const char *framework, const cJSON *versions,
    const cJSON *runtimes)
{
	const cJSON *e, *g, *r;

	cJSON_ArrayForEach(e, versions)
	{
		cJSON_ArrayForEach(
		    g, cJSON_GetObjectItemCaseSensitive(e, "generations"))
		{
			cJSON_ArrayForEach(
			    r, cJSON_GetObjectItemCaseSensitive(e, "runtimes"))
			{
				cJSON *row = cJSON_CreateObject();
				const cJSON *rt;

				rt = cJSON_GetObjectItemCaseSensitive(runtimes,
				    cJSON_IsString(r) ? r->valuestring : "");
				cJSON_AddStringToObject(
				    row, "framework", framework);
				cJSON_AddStringToObject(row, "version",
				    json_opt_string(e, "version", ""));
				cJSON_AddStringToObject(row, "generation",
				    cJSON_IsString(g) ? g->valuestring : "");
				cJSON_AddStringToObject(row, "runtimeVersion",
				    cJSON_IsString(r) ? r->valuestring : "");
				cJSON_AddStringToObject(row, "runtimePython",
				    json_opt_string(rt, "python", ""));
				cJSON_AddStringToObject(row, "pythonMin",
				    json_opt_string(e, "python_min", ""));
				cJSON_AddItemToObject(row, "requirements",
				    cJSON_Duplicate(
				        cJSON_GetObjectItemCaseSensitive(
				            e, "requirements"),
				        1));
				cJSON_AddItemToObject(row, "packages",
				    cJSON_Duplicate(
				        cJSON_GetObjectItemCaseSensitive(
				            e, "packages"),
				        1));
				cJSON_AddItemToObject(row, "findLinks",
				    cJSON_Duplicate(
				        cJSON_GetObjectItemCaseSensitive(
				            e, "find_links"),
				        1));
				cJSON_AddStringToObject(row, "source",
				    json_opt_string(e, "source", ""));
				cJSON_AddItemToArray(rows, row);
			}
		}
	}
}

int
compat_rows(const struct compat *c, const char *framework, cJSON **out,
    struct tpu_err *err)
{
	const cJSON *fw =
	    cJSON_GetObjectItemCaseSensitive(c->root, "frameworks");
	const cJSON *runtimes =
	    cJSON_GetObjectItemCaseSensitive(c->root, "runtimes");
	const cJSON *it;
	int rc;

	*out = NULL;
	if (strcmp(framework, "all") != 0) {
		if ((rc = compat_check_framework(c, framework, NULL, err)) != 0)
			return rc;
	}
	*out = cJSON_CreateArray();
	cJSON_ArrayForEach(it, fw)
	{
		if (strcmp(framework, "all") == 0 ||
		    strcmp(framework, it->string) == 0)
			add_rows(*out, it->string, it, runtimes);
	}
	return 0;
}
