/*
 * Typed getters and dotted-path lookup over cJSON.
 */
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "json.h"
#include "xmalloc.h"

cJSON *
json_parse(const char *text, size_t len, const char *what, struct tpu_err *err)
{
	const char *end = NULL;
	cJSON *root;

	if (text == NULL || len == 0) {
		tpu_error(err, TPU_E_API,
		    "%s: empty reply where JSON was expected", what);
		return NULL;
	}
	root = cJSON_ParseWithLengthOpts(text, len, &end, 0);
	if (root == NULL) {
		size_t off =
		    end != NULL && end >= text ? (size_t)(end - text) : 0;

		tpu_error(err, TPU_E_API, "%s: invalid JSON at offset %zu",
		    what, off);
		return NULL;
	}
	/* Only white space may follow the value. */
	while (end != NULL && (size_t)(end - text) < len &&
	       strchr(" \t\r\n", *end) != NULL && *end != '\0')
		end++;
	if (end != NULL && (size_t)(end - text) < len) {
		tpu_error(err, TPU_E_API,
		    "%s: invalid JSON: trailing data at offset %zu", what,
		    (size_t)(end - text));
		cJSON_Delete(root);
		return NULL;
	}
	return root;
}

static int
is_index(const char *s, size_t n, int *idx)
{
	long v = 0;
	size_t i;

	if (n == 0 || n > 9)
		return 0;
	for (i = 0; i < n; i++) {
		if (s[i] < '0' || s[i] > '9')
			return 0;
		v = v * 10 + (s[i] - '0');
	}
	*idx = (int)v;
	return 1;
}

const cJSON *
json_path(const cJSON *node, const char *path)
{
	const char *p = path, *dot;
	char key[256];
	size_t n;
	int idx;

	while (node != NULL && *p != '\0') {
		dot = strchr(p, '.');
		n = dot != NULL ? (size_t)(dot - p) : strlen(p);
		if (n >= sizeof key)
			return NULL;
		memcpy(key, p, n);
		key[n] = '\0';
		if (cJSON_IsArray(node) && is_index(key, n, &idx))
			node = cJSON_GetArrayItem(node, idx);
		else if (cJSON_IsObject(node))
			node = cJSON_GetObjectItemCaseSensitive(node, key);
		else
			return NULL;
		p += n;
		if (*p == '.')
			p++;
	}
	return node;
}

static const cJSON *
req(const cJSON *root, const char *path, const char *type, int ok,
    const cJSON *item, struct tpu_err *err)
{
	(void)root;
	if (item == NULL) {
		tpu_error(err, TPU_E_API, "field '%s' is missing", path);
		return NULL;
	}
	if (!ok) {
		tpu_error(err, TPU_E_API, "field '%s' is not %s", path, type);
		return NULL;
	}
	return item;
}

const char *
json_req_string(const cJSON *root, const char *path, struct tpu_err *err)
{
	const cJSON *it = json_path(root, path);

	if (req(root, path, "a string", cJSON_IsString(it), it, err) == NULL)
		return NULL;
	return it->valuestring;
}

const cJSON *
json_req_object(const cJSON *root, const char *path, struct tpu_err *err)
{
	const cJSON *it = json_path(root, path);

	return req(root, path, "an object", cJSON_IsObject(it), it, err);
}

const cJSON *
json_req_array(const cJSON *root, const char *path, struct tpu_err *err)
{
	const cJSON *it = json_path(root, path);

	return req(root, path, "an array", cJSON_IsArray(it), it, err);
}

int
json_as_int64(const cJSON *it, long long *out)
{
	const char *s;
	char *end;
	long long v;

	if (cJSON_IsNumber(it)) {
		double d = it->valuedouble;

		if (d != d || d < (double)LLONG_MIN || d >= (double)LLONG_MAX ||
		    (double)(long long)d != d)
			return -1;
		*out = (long long)d;
		return 0;
	}
	if (!cJSON_IsString(it))
		return -1;
	s = it->valuestring;
	if (*s == '\0' || (*s != '-' && (*s < '0' || *s > '9')))
		return -1;
	errno = 0;
	v = strtoll(s, &end, 10);
	if (errno != 0 || *end != '\0')
		return -1;
	*out = v;
	return 0;
}

int
json_req_int64(
    const cJSON *root, const char *path, long long *out, struct tpu_err *err)
{
	const cJSON *it = json_path(root, path);

	if (it == NULL)
		return tpu_error(err, TPU_E_API, "field '%s' is missing", path);
	if (json_as_int64(it, out) == -1)
		return tpu_error(
		    err, TPU_E_API, "field '%s' is not an integer", path);
	return 0;
}

const char *
json_opt_string(const cJSON *root, const char *path, const char *dflt)
{
	const cJSON *it = json_path(root, path);

	return cJSON_IsString(it) ? it->valuestring : dflt;
}

long long
json_opt_int64(const cJSON *root, const char *path, long long dflt)
{
	long long v;

	if (json_as_int64(json_path(root, path), &v) == -1)
		return dflt;
	return v;
}

int
json_opt_bool(const cJSON *root, const char *path, int dflt)
{
	const cJSON *it = json_path(root, path);

	if (!cJSON_IsBool(it))
		return dflt;
	return cJSON_IsTrue(it);
}

char *
json_print(const cJSON *root, int pretty)
{
	char *s = pretty ? cJSON_Print(root) : cJSON_PrintUnformatted(root);

	if (s == NULL) {
		/* cJSON fails only when an allocation fails. */
		TPU_BUG("cJSON_Print failed");
	}
	return s;
}
