/*
 * INTERIM (foundation helper replaces this): JSON output only.
 */
#include <stdlib.h>
#include <string.h>

#include "json.h"
#include "output.h"

void
output_init(struct output *o)
{
	memset(o, 0, sizeof *o);
	o->fp = stdout;
}

void
output_release(struct output *o)
{
	int i;

	for (i = 0; i < o->nfields; i++)
		free(o->fields[i]);
	free(o->fields);
	o->fields = NULL;
	o->nfields = 0;
}

int
output_parse_format(struct output *o, const char *s, struct tpu_err *err)
{
	if (strcmp(s, "json") == 0)
		o->fmt = OUTPUT_JSON;
	else if (strcmp(s, "table") == 0)
		o->fmt = OUTPUT_TABLE;
	else
		return tpu_error(err, TPU_E_USAGE, "invalid format '%s'", s);
	return 0;
}

int
output_emit(struct output *o, const cJSON *r, const char *columns,
    struct tpu_err *err)
{
	char *s = json_print(r, 1);

	(void)columns;
	fprintf(o->fp, "%s\n", s);
	cJSON_free(s);
	if (ferror(o->fp))
		return tpu_error(err, TPU_E_IO, "write error");
	return 0;
}
