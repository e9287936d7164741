/*
 * libFuzzer target for src/tpuvalid.c: metadata items, key lists and
 * descriptions, and create's --range, --boot-disk, --network-config and
 * booleans from arbitrary flag values (never from files).
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "err.h"
#include "tpuvalid.h"

int LLVMFuzzerTestOneInput(const uint8_t *, size_t);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct tpu_err e;
	char *s = malloc(size + 1);
	cJSON *obj = cJSON_CreateObject(), *keys = NULL;

	if (s == NULL || obj == NULL)
		abort();
	memcpy(s, data, size);
	s[size] = '\0';
	tpu_err_init(&e);
	(void)tpuvalid_metadata_parse(s, 0, size & 1, obj, &e);
	if (tpuvalid_keys_parse(
	        "--remove-labels", s, TPUVALID_LABEL_KEYS, &keys, &e) == 0 &&
	    keys == NULL)
		abort();
	cJSON_Delete(keys);
	keys = NULL;
	if (tpuvalid_keys_parse("--remove-metadata", s, TPUVALID_METADATA_KEYS,
	        &keys, &e) == 0 &&
	    keys == NULL)
		abort();
	cJSON_Delete(keys);
	(void)tpuvalid_description(s, &e);
	{
		cJSON *x = NULL;
		int b;

		(void)tpuvalid_cidr29("--range", s, &e);
		(void)tpuvalid_kms_key("--boot-disk kms-key", s, &e);
		(void)tpuvalid_bool("--f", "k", s, &b, &e);
		/* an object exactly when it succeeds */
		if ((tpuvalid_boot_disk(s, &x, &e) == 0) != (x != NULL))
			abort();
		cJSON_Delete(x);
		x = NULL;
		if ((tpuvalid_network_config(s, &x, &e) == 0) != (x != NULL))
			abort();
		cJSON_Delete(x);
	}
	cJSON_Delete(obj);
	free(s);
	return 0;
}
