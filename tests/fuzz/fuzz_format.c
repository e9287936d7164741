/*
 * Fuzz the --format expression parser and every renderer: the first line
 * of the input is a --format value, the rest a JSON document rendered
 * with it (and with a column spec) into memory.  No crash, no leak, and a
 * rejected format always gets one line naming the bad part.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "json.h"
#include "output.h"
#include "xmalloc.h"

int LLVMFuzzerTestOneInput(const uint8_t *, size_t);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *nl = memchr(data, '\n', size);
	size_t flen = nl != NULL ? (size_t)(nl - (const char *)data) : size;
	struct output o;
	struct tpu_err err;
	char *fmt, *text = NULL;
	size_t textlen = 0;
	cJSON *r = NULL;

	fmt = xstrndup((const char *)data, flen);
	output_init(&o);
	tpu_err_init(&err);
	if (output_parse_format(&o, fmt, &err) != 0) {
		if (strncmp(err.msg, "invalid format '", 16) != 0 ||
		    strstr(err.msg, "*HERE*") == NULL ||
		    strchr(err.msg, '\n') != NULL)
			abort();
		goto out;
	}
	if (nl != NULL)
		r = json_parse(nl + 1, size - flen - 1, "fuzz", &err);
	if (r == NULL)
		goto out;
	o.fp = open_memstream(&text, &textlen);
	if (o.fp == NULL)
		goto out;
	if (output_emit(&o, r, "NAME=name,STATE=state,IP=a[0].ip", &err) != 0 &&
	    err.code != TPU_E_IO)
		abort();
	fclose(o.fp);
out:
	free(text);
	cJSON_Delete(r);
	output_release(&o);
	free(fmt);
	return 0;
}
