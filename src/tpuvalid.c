/*
 * Node field validation shared by the commands (see tpuvalid.h).
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

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

int
tpuvalid_bool(const char *flag, const char *key, const char *val, int *out,
    struct tpu_err *err)
{
	static const char *const yes[] = { "true", "yes", "1", "on" };
	static const char *const no[] = { "false", "no", "0", "off" };
	size_t i;

	for (i = 0; i < nitems(yes); i++) {
		if (strcasecmp(val, yes[i]) == 0) {
			*out = 1;
			return 0;
		}
		if (strcasecmp(val, no[i]) == 0) {
			*out = 0;
			return 0;
		}
	}
	return tpu_error(err, TPU_E_USAGE,
	    "invalid %s %s '%s': expected true or false", flag, key, val);
}

int
tpuvalid_cidr29(const char *flag, const char *arg, struct tpu_err *err)
{
	unsigned a[4];
	int n = -1, i;

	if (sscanf(arg, "%3u.%3u.%3u.%3u/29%n", &a[0], &a[1], &a[2], &a[3],
	        &n) != 4 ||
	    n < 0 || arg[n] != '\0' || !isdigit((unsigned char)arg[0]))
		goto bad;
	for (i = 0; i < 4; i++)
		if (a[i] > 255)
			goto bad;
	if ((a[3] & 7) != 0)
		return tpu_error(err, TPU_E_USAGE,
		    "invalid %s '%s': the address of a /29 block ends in a "
		    "multiple of 8 (e.g. %u.%u.%u.%u/29)",
		    flag, arg, a[0], a[1], a[2], a[3] & ~7u);
	return 0;
bad:
	return tpu_error(err, TPU_E_USAGE,
	    "invalid %s '%s': expected a /29 CIDR block such as "
	    "192.168.0.0/29",
	    flag, arg);
}

int
tpuvalid_kms_key(const char *flag, const char *arg, struct tpu_err *err)
{
	static const char *const part[] = { "projects", "locations", "keyRings",
		"cryptoKeys" };
	const char *p = arg, *slash;
	size_t i, len;

	for (i = 0; i < nitems(part); i++) {
		len = strlen(part[i]);
		if (strncmp(p, part[i], len) != 0 || p[len] != '/')
			goto bad;
		p += len + 1;
		slash = strchr(p, '/');
		if (slash == p || *p == '\0')
			goto bad;
		if (i + 1 == nitems(part)) {
			if (slash != NULL)
				goto bad;
		} else {
			if (slash == NULL)
				goto bad;
			p = slash + 1;
		}
	}
	return 0;
bad:
	return tpu_error(err, TPU_E_USAGE,
	    "invalid %s '%s': expected a Cloud KMS key "
	    "projects/PROJECT/locations/LOCATION/keyRings/RING/cryptoKeys/KEY",
	    flag, arg);
}

/* Split "k=v,k2=v2" calling item(key, value) for each; 0 or an errc. */
static int
kv_items(const char *flag, const char *arg,
    int (*item)(void *, const char *, const char *, struct tpu_err *),
    void *arg2, struct tpu_err *err)
{
	char *copy = xstrdup(arg), *it, *save = NULL, *eq;
	int rc = 0;

	if (*arg == '\0')
		rc = tpu_error(
		    err, TPU_E_USAGE, "%s needs KEY=VALUE items", flag);
	for (it = strtok_r(copy, ",", &save); rc == 0 && it != NULL;
	     it = strtok_r(NULL, ",", &save)) {
		if ((eq = strchr(it, '=')) == NULL || eq == it) {
			rc = tpu_error(err, TPU_E_USAGE,
			    "invalid %s item '%s': expected KEY=VALUE", flag,
			    it);
			break;
		}
		*eq = '\0';
		rc = item(arg2, it, eq + 1, err);
	}
	free(copy);
	return rc;
}

struct boot_disk {
	int confidential, have_conf;
	char *kms;
};

static int
boot_disk_item(void *arg, const char *k, const char *v, struct tpu_err *err)
{
	struct boot_disk *b = arg;
	int rc;

	if (strcmp(k, "confidential-compute") == 0) {
		b->have_conf = 1;
		return tpuvalid_bool(
		    "--boot-disk", k, v, &b->confidential, err);
	}
	if (strcmp(k, "kms-key") == 0) {
		if ((rc = tpuvalid_kms_key("--boot-disk kms-key", v, err)) != 0)
			return rc;
		free(b->kms);
		b->kms = xstrdup(v);
		return 0;
	}
	return tpu_error(err, TPU_E_USAGE,
	    "invalid --boot-disk key '%s': the keys are confidential-compute "
	    "and kms-key",
	    k);
}

int
tpuvalid_boot_disk(const char *arg, cJSON **out, struct tpu_err *err)
{
	struct boot_disk b = { 0, 0, NULL };
	cJSON *x;
	int rc;

	*out = NULL;
	if ((rc = kv_items("--boot-disk", arg, boot_disk_item, &b, err)) != 0)
		goto out;
	if (b.confidential && b.kms == NULL) {
		rc = tpu_error(err, TPU_E_USAGE,
		    "--boot-disk confidential-compute=true needs kms-key=KEY "
		    "(a confidential boot disk is encrypted with a "
		    "customer-managed key)");
		goto out;
	}
	*out = cJSON_CreateObject();
	if (b.have_conf)
		cJSON_AddBoolToObject(
		    *out, "enableConfidentialCompute", b.confidential);
	if (b.kms != NULL) {
		x = cJSON_AddObjectToObject(*out, "customerEncryptionKey");
		cJSON_AddStringToObject(x, "kmsKeyName", b.kms);
	}
out:
	free(b.kms);
	return rc;
}

static int
network_config_item(
    void *arg, const char *k, const char *v, struct tpu_err *err)
{
	cJSON *nc = arg;
	int ext;

	if (strcmp(k, "network") == 0 || strcmp(k, "subnetwork") == 0) {
		if (*v == '\0')
			return tpu_error(err, TPU_E_USAGE,
			    "invalid --network-config %s: empty", k);
		cJSON_DeleteItemFromObjectCaseSensitive(nc, k);
		cJSON_AddStringToObject(nc, k, v);
		return 0;
	}
	if (strcmp(k, "external-ips") == 0) {
		if (tpuvalid_bool("--network-config", k, v, &ext, err) != 0)
			return err->code;
		cJSON_DeleteItemFromObjectCaseSensitive(
		    nc, "enableExternalIps");
		cJSON_AddBoolToObject(nc, "enableExternalIps", ext);
		return 0;
	}
	return tpu_error(err, TPU_E_USAGE,
	    "invalid --network-config key '%s': the keys are network, "
	    "subnetwork and external-ips",
	    k);
}

int
tpuvalid_network_config(const char *arg, cJSON **out, struct tpu_err *err)
{
	cJSON *nc = cJSON_CreateObject();
	int rc;

	*out = NULL;
	if ((rc = kv_items(
	         "--network-config", arg, network_config_item, nc, err)) != 0) {
		cJSON_Delete(nc);
		return rc;
	}
	if (cJSON_GetObjectItemCaseSensitive(nc, "network") == NULL &&
	    cJSON_GetObjectItemCaseSensitive(nc, "subnetwork") == NULL) {
		cJSON_Delete(nc);
		return tpu_error(err, TPU_E_USAGE,
		    "--network-config '%s' needs network=NETWORK or "
		    "subnetwork=SUBNETWORK",
		    arg);
	}
	if (cJSON_GetObjectItemCaseSensitive(nc, "enableExternalIps") == NULL)
		cJSON_AddBoolToObject(nc, "enableExternalIps", 0);
	*out = nc;
	return 0;
}
