/*
 * Node field validation shared by the commands (see tpuvalid.h).
 */
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "buf.h"
#include "catalog.h"
#include "err.h"
#include "fsutil.h"
#include "tpuvalid.h"
#include "util.h"
#include "xmalloc.h"

static int
read_value_file(
    const char *flag, const char *path, char **out, struct tpu_err *err)
{
	struct buf b;
	int rc;

	*out = NULL;
	buf_init(&b, TPUVALID_MAX_METADATA_FILE);
	if ((rc = fsutil_read_file(path, 0, &b, NULL, err)) != 0) {
		buf_release(&b);
		if (rc == TPU_E_NOTFOUND || rc == TPU_E_IO)
			err->code = TPU_E_USAGE;
		return tpu_error_prefix(err, "%s", flag);
	}
	if (memchr(b.data, '\0', b.len) != NULL) {
		buf_release(&b);
		return tpu_error(err, TPU_E_USAGE,
		    "%s: file '%s' holds a NUL byte: metadata values are text",
		    flag, path);
	}
	*out = buf_detach(&b, NULL);
	return 0;
}

/*
 * The next comma-separated item of *p (NULL at the end); empty items are
 * returned as "" so the caller can refuse them.  The caller frees.
 */
static char *
next_item(const char **p)
{
	const char *s = *p, *c;
	char *it;

	if (s == NULL)
		return NULL;
	c = strchr(s, ',');
	if (c == NULL) {
		it = xstrdup(s);
		*p = NULL;
	} else {
		it = xstrndup(s, (size_t)(c - s));
		*p = c + 1;
	}
	return it;
}

int
tpuvalid_metadata_parse(
    const char *arg, int from_file, int raw, cJSON *obj, struct tpu_err *err)
{
	const char *flag = from_file ? "--metadata-from-file" : "--metadata";
	const char *p = arg;
	char *item, *value = NULL;
	int rc = 0;

	if (arg == NULL || *arg == '\0')
		return tpu_error(err, TPU_E_USAGE, "%s needs KEY=%s[,...]",
		    flag, from_file ? "FILE" : "VALUE");
	while (rc == 0 && (item = next_item(&p)) != NULL) {
		char *eq = strchr(item, '=');

		if (eq == NULL || eq == item) {
			rc = tpu_error(err, TPU_E_USAGE,
			    "invalid %s item '%s': expected KEY=%s", flag, item,
			    from_file ? "FILE" : "VALUE");
		} else {
			*eq = '\0';
			if (from_file)
				rc = read_value_file(flag, eq + 1, &value, err);
			else
				value = xstrdup(eq + 1);
			if (rc == 0)
				rc = catalog_metadata_validate(
				    item, value, raw, err);
			if (rc == 0 &&
			    cJSON_GetObjectItemCaseSensitive(obj, item) != NULL)
				rc = tpu_error(err, TPU_E_USAGE,
				    "metadata key '%s' given twice", item);
			if (rc == 0)
				cJSON_AddStringToObject(obj, item, value);
			free(value);
			value = NULL;
		}
		free(item);
	}
	return rc;
}

int
tpuvalid_keys_parse(const char *flag, const char *arg, enum tpuvalid_keys kind,
    cJSON **out, struct tpu_err *err)
{
	cJSON *keys = cJSON_CreateArray(), *k;
	const char *p = arg;
	char *item;
	int rc = 0;

	*out = NULL;
	if (arg == NULL || *arg == '\0') {
		cJSON_Delete(keys);
		return tpu_error(
		    err, TPU_E_USAGE, "%s needs KEY[,KEY...]", flag);
	}
	while (rc == 0 && (item = next_item(&p)) != NULL) {
		int seen = 0;

		if (*item == '\0')
			rc = tpu_error(err, TPU_E_USAGE,
			    "invalid %s '%s': empty key", flag, arg);
		else if (kind == TPUVALID_LABEL_KEYS)
			rc = catalog_label_validate(item, "", err);
		else
			rc = catalog_metadata_validate(item, "", 1, err);
		if (rc != 0)
			tpu_error_prefix(err, "%s", flag);
		cJSON_ArrayForEach(
		    k, keys) if (strcmp(k->valuestring, item) == 0) seen = 1;
		if (rc == 0 && !seen)
			cJSON_AddItemToArray(keys, cJSON_CreateString(item));
		free(item);
	}
	if (rc != 0) {
		cJSON_Delete(keys);
		return rc;
	}
	*out = keys;
	return 0;
}

int
tpuvalid_description(const char *d, struct tpu_err *err)
{
	const unsigned char *s = (const unsigned char *)d;
	size_t len = strlen(d), n;

	if (len > TPUVALID_MAX_DESCRIPTION)
		return tpu_error(err, TPU_E_USAGE,
		    "invalid --description: %zu bytes, at most %d are allowed",
		    len, TPUVALID_MAX_DESCRIPTION);
	while (*s != '\0') {
		if ((*s < 0x20 && *s != '\t' && *s != '\n') || *s == 0x7f)
			return tpu_error(err, TPU_E_USAGE,
			    "invalid --description: control character 0x%02x "
			    "at byte %zu (only tab and newline are allowed)",
			    *s, (size_t)(s - (const unsigned char *)d));
		if ((n = tpu_utf8_len(s)) == 0)
			return tpu_error(err, TPU_E_USAGE,
			    "invalid --description: not UTF-8 at byte %zu",
			    (size_t)(s - (const unsigned char *)d));
		s += n;
	}
	return 0;
}
