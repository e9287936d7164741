/*
 * Fuzz the --filter parser and matcher, and --sort-by: the first line of
 * the input is a filter expression (and, as well, a --sort-by value), the
 * rest a JSON document (a list is matched item by item, then sorted).  No
 * crash, no leak, no unbounded recursion; a refused expression always gets one
 * line naming the bad part.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "json.h"
#include "resfilter.h"
#include "resproj.h"
#include "xmalloc.h"

int LLVMFuzzerTestOneInput(const uint8_t *, size_t);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *nl = memchr(data, '\n', size);
	size_t flen = nl != NULL ? (size_t)(nl - (const char *)data) : size;
	struct resfilter *f = NULL;
	struct resproj_sortby sb;
	struct tpu_err err;
	const cJSON *it;
	cJSON *r = NULL;
	char *expr;

	expr = xstrndup((const char *)data, flen);
	memset(&sb, 0, sizeof sb);
	tpu_err_init(&err);
	if (resproj_sortby_parse(&sb, expr, &err) != 0 &&
	    (strncmp(err.msg, "invalid sort-by '", 17) != 0 ||
	        strchr(err.msg, '\n') != NULL))
		abort();
	tpu_err_init(&err);
	if (resfilter_parse(expr, &f, &err) != 0) {
		if (f != NULL ||
		    strncmp(err.msg, "invalid filter '", 16) != 0 ||
		    strchr(err.msg, '\n') != NULL)
			abort();
		goto out;
	}
	if (nl != NULL)
		r = json_parse(nl + 1, size - flen - 1, "fuzz", &err);
	if (r == NULL)
		goto out;
	if (cJSON_IsArray(r)) {
		cJSON_ArrayForEach(it, r)
		{
			(void)resfilter_match(f, it);
		}
		resproj_sortby_apply(&sb, r);
	} else
		(void)resfilter_match(f, r);
out:
	cJSON_Delete(r);
	resfilter_free(f);
	resproj_sortby_release(&sb);
	free(expr);
	return 0;
}
