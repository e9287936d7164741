/*
 * libFuzzer target for the parsers of src/jobs.c that read what others
 * wrote: a worker's status line (any bytes a worker, or a job writing
 * into its own directory, could leave there), an --env-file's text, and
 * a local job record (JSON).  Checks: a parsed state prints and parses
 * back to the same kind; env entries always have a valid name and '=';
 * a record that parses gives a valid-shaped spec.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "err.h"
#include "jobs.h"
#include "xmalloc.h"

int LLVMFuzzerTestOneInput(const uint8_t *, size_t);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *s = xstrndup((const char *)data, size), buf[64];
	struct jobs_state st, st2;
	struct jobs_spec spec, rec;
	struct jobs_state *states = NULL;
	struct tpu_err e;
	cJSON *o;
	size_t i;

	if (jobs_state_parse(s, &st) == 0) {
		jobs_state_str(&st, buf, sizeof buf);
		if (st.kind != JOBS_UNKNOWN &&
		    (jobs_state_parse(buf, &st2) != 0 || st2.kind != st.kind ||
		        st2.code != st.code ||
		        strcmp(st2.signal, st.signal) != 0))
			abort();
	} else if (st.kind != JOBS_UNKNOWN)
		abort();
	jobs_spec_init(&spec);
	tpu_err_init(&e);
	if (jobs_env_file(&spec, "f", (const char *)data, size, &e) != 0 &&
	    e.msg[0] == '\0')
		abort();
	for (i = 0; i < spec.nenv; i++)
		if (strchr(spec.env[i], '=') == NULL ||
		    strncmp(spec.env[i], "TPUCTL_", 7) == 0)
			abort();
	jobs_spec_release(&spec);
	o = cJSON_ParseWithOpts(s, NULL, 1);
	if (o != NULL) {
		if (jobs_record_parse(o, &rec, &states, &e) == 0) {
			if (rec.name == NULL || rec.nslices < 1 ||
			    rec.nworkers < 1)
				abort();
			jobs_spec_release(&rec);
		}
		free(states);
		cJSON_Delete(o);
	}
	free(s);
	return 0;
}
