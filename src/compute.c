/*
 * Compute Engine API client: see compute.h.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "compute.h"
#include "endpoint.h"
#include "http.h"
#include "json.h"
#include "xmalloc.h"

/* A Project reply is small (metadata values are at most 256 KB each,
 * 512 KB in all): anything larger is not one. */
#define COMPUTE_MAX_REPLY (4 << 20)

int
compute_metadata_value(const char *body, size_t len, const char *key,
    char **value, struct tpu_err *err)
{
	cJSON *j;
	const cJSON *md, *items, *it;
	int rc = 0;

	*value = NULL;
	if ((j = json_parse(body, len, "Compute projects.get reply", err)) ==
	    NULL)
		return err->code;
	md = cJSON_GetObjectItemCaseSensitive(j, "commonInstanceMetadata");
	items = cJSON_GetObjectItemCaseSensitive(md, "items");
	if (!cJSON_IsObject(j) || (md != NULL && !cJSON_IsObject(md)) ||
	    (items != NULL && !cJSON_IsArray(items))) {
		cJSON_Delete(j);
		return tpu_error(err, TPU_E_API,
		    "Compute projects.get reply is no Project "
		    "(commonInstanceMetadata.items)");
	}
	cJSON_ArrayForEach(it, items)
	{
		const char *k = json_opt_string(it, "key", NULL);
		const cJSON *v = cJSON_GetObjectItemCaseSensitive(it, "value");

		if (k == NULL) {
			rc = tpu_error(err, TPU_E_API,
			    "Compute projects.get reply: a metadata item "
			    "without a key");
			break;
		}
		if (strcmp(k, key) == 0) {
			*value =
			    xstrdup(cJSON_IsString(v) ? v->valuestring : "");
			break;
		}
	}
	cJSON_Delete(j);
	return rc;
}

int
compute_project_metadata(struct http *h, const char *base, const char *project,
    const char *key, char **value, struct tpu_err *err)
{
	struct http_request req;
	struct http_response resp;
	char *rel, *url;
	int rc;

	*value = NULL;
	rel = xasprintf("projects/%s", project);
	url = endpoint_join(base, rel);
	memset(&req, 0, sizeof req);
	req.method = "GET";
	req.url = url;
	req.flags = HTTP_F_IDEMPOTENT | HTTP_F_NODRYRUN;
	req.max_response = COMPUTE_MAX_REPLY;
	http_response_init(&resp);
	rc = http_request(h, &req, &resp, err);
	if (rc == 0)
		rc = compute_metadata_value(
		    resp.body.data, resp.body.len, key, value, err);
	http_response_release(&resp);
	free(rel);
	free(url);
	return rc;
}
