/*
 * libFuzzer target for src/spec.c: arbitrary bytes as a YAML or JSON
 * spec (parse, validate), and, when one is accepted, spec_diff() of it
 * against the document itself read as a node.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "err.h"
#include "spec.h"

int LLVMFuzzerTestOneInput(const uint8_t *, size_t);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct tpu_err e;
	struct spec s;
	cJSON *changes, *ids;

	tpu_err_init(&e);
	if (spec_parse(&s, (const char *)data, size, "fuzz", "/", &e) != 0) {
		if (e.code != TPU_E_USAGE || s.root != NULL)
			abort();
		return 0;
	}
	if (s.name == NULL || s.acc.gen == NULL)
		abort();
	changes = cJSON_CreateArray();
	(void)spec_diff(&s, s.root, s.name, changes);
	(void)spec_diff_qr(&s, s.root, changes);
	ids = spec_node_ids(&s);
	if (cJSON_GetArraySize(ids) < 1)
		abort();
	cJSON_Delete(ids);
	cJSON_Delete(changes);
	spec_release(&s);
	return 0;
}
