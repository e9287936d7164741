/*
 * Fuzz gcs_object_from_json over hostile object resources (objects.get,
 * objects.list items, rewrite and compose replies).  No crash, no leak;
 * success means name and bucket are set and the integers are
 * non-negative; failure always sets an API error.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "gcs.h"
#include "json.h"

int LLVMFuzzerTestOneInput(const uint8_t *, size_t);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct gcs_object o;
	struct tpu_err err;
	cJSON *j;
	int rc;

	tpu_err_init(&err);
	j = json_parse((const char *)data, size, "reply", &err);
	if (j == NULL)
		return 0;
	rc = gcs_object_from_json(j, &o, &err);
	if (rc == 0) {
		if (o.name == NULL || o.bucket == NULL || *o.name == '\0' ||
		    o.size < 0 || o.generation < 0 || o.metageneration < 0 ||
		    o.json == NULL)
			abort();
	} else if (rc != TPU_E_API || err.msg[0] == '\0')
		abort();
	gcs_object_release(&o);
	cJSON_Delete(j);
	return 0;
}
