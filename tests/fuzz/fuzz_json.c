/*
 * Fuzz json_parse and the typed getters over hostile server replies: the
 * first line is a dotted path, the rest the reply.  No crash, no leak; a
 * failed parse always sets an API error naming the reply.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "json.h"
#include "xmalloc.h"

int LLVMFuzzerTestOneInput(const uint8_t *, size_t);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *nl = memchr(data, '\n', size);
	size_t plen = nl != NULL ? (size_t)(nl - (const char *)data) : 0;
	const char *body = nl != NULL ? nl + 1 : (const char *)data;
	size_t blen = nl != NULL ? size - plen - 1 : size;
	struct tpu_err err;
	const cJSON *it;
	long long v;
	char *path, *s;
	cJSON *r;

	path = xstrndup((const char *)data, plen);
	tpu_err_init(&err);
	r = json_parse(body, blen, "reply", &err);
	if (r == NULL) {
		if (err.code != TPU_E_API ||
		    strncmp(err.msg, "reply: ", 7) != 0)
			abort();
		goto out;
	}
	it = json_path(r, path);
	if (*path == '\0' && it != r)
		abort();
	json_as_int64(it, &v);
	json_req_string(r, path, &err);
	json_req_object(r, path, &err);
	json_req_array(r, path, &err);
	json_req_int64(r, path, &v, &err);
	json_opt_string(r, path, NULL);
	json_opt_int64(r, path, 0);
	json_opt_bool(r, path, 0);
	/* What we print parses back (numbers out of range print as null,
	 * so the trees may differ there). */
	s = json_print(r, 0);
	{
		cJSON *back = json_parse(s, strlen(s), "again", &err);

		if (back == NULL)
			abort();
		cJSON_Delete(back);
	}
	cJSON_free(s);
out:
	cJSON_Delete(r);
	free(path);
	return 0;
}
