/*
 * Fuzz the catalog validators (node names, zones, projects, accelerator
 * types, topologies, labels, metadata): no crash, every rejection is a
 * one-line TPU_E_USAGE message, and an accepted accelerator type is
 * self-consistent (its canonical name parses back to the same slice).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "catalog.h"
#include "xmalloc.h"

int LLVMFuzzerTestOneInput(const uint8_t *, size_t);

static void
check_rc(int rc, const struct tpu_err *err)
{
	if (rc != 0 && (rc != TPU_E_USAGE || strchr(err->msg, '\n') != NULL))
		abort();
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct catalog_accel a, b;
	struct tpu_err err;
	const struct catalog_gen *g;
	cJSON *labels = NULL;
	char *s, *eq;
	size_t i;

	s = xstrndup((const char *)data, size);
	tpu_err_init(&err);
	check_rc(catalog_node_name_validate_len((const char *)data, size, &err),
	    &err);
	check_rc(catalog_zone_validate(s, &err), &err);
	check_rc(catalog_project_validate(s, &err), &err);
	if (catalog_accel_parse(s, &a, &err) == 0) {
		if (catalog_accel_parse(a.type, &b, &err) != 0 ||
		    b.chips != a.chips || a.hosts < 1 || a.cores < a.chips ||
		    catalog_accel_topology_match(&a, a.topology, &err) != 0)
			abort();
	} else
		check_rc(err.code, &err);
	for (i = 0; (g = catalog_gen_at(i)) != NULL; i++) {
		if (catalog_accel_from_topology(g->name, s, &a, &err) == 0) {
			if (catalog_accel_parse(a.type, &b, &err) != 0 ||
			    b.chips != a.chips)
				abort();
		} else
			check_rc(err.code, &err);
	}
	if (catalog_labels_parse(s, &labels, &err) == 0) {
		if (catalog_labels_validate(labels, &err) != 0)
			abort();
		cJSON_Delete(labels);
	} else
		check_rc(err.code, &err);
	check_rc(catalog_ssh_key_entry_validate(s, &err), &err);
	eq = strchr(s, '=');
	if (eq != NULL) {
		*eq = '\0';
		check_rc(catalog_metadata_validate(s, eq + 1, 1, &err), &err);
	}
	free(s);
	return 0;
}
