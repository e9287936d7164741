/*
 * Fuzz credential-file checking (every type of the ADC chain): no crash;
 * an accepted file names one of the supported types.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "auth.h"

int LLVMFuzzerTestOneInput(const uint8_t *, size_t);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct tpu_err err;
	const char *type = NULL;
	cJSON *j = cJSON_ParseWithLength((const char *)data, size);

	if (j == NULL)
		return 0;
	tpu_err_init(&err);
	if (auth_check_credentials(j, &type, &err) == 0) {
		if (type == NULL ||
		    (strcmp(type, "service_account") != 0 &&
		        strcmp(type, "authorized_user") != 0 &&
		        strcmp(type, "external_account") != 0 &&
		        strcmp(type, "external_account_authorized_user") != 0 &&
		        strcmp(type, "impersonated_service_account") != 0))
			abort();
	}
	cJSON_Delete(j);
	return 0;
}
