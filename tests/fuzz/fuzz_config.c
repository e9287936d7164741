/*
 * Fuzz tpuctl's config file parser (libinih with tpuctl's section, key,
 * profile and value rules): no crash, no leak, and a parse that succeeds
 * leaves only values that obey their key's rule.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "log.h"
#include "xmalloc.h"

int LLVMFuzzerTestOneInput(const uint8_t *, size_t);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const struct config_key *keys;
	struct config *c;
	struct tpu_err err;
	const char *v;
	size_t i, n;
	char *s;

	log_set_level(LOG_QUIET);
	s = xstrndup((const char *)data, size);
	c = config_new();
	tpu_err_init(&err);
	if (config_load_string(c, s, "fuzz",
	        size > 0 && data[0] & 1 ? "ci" : NULL, &err) == 0) {
		keys = config_keys(&n);
		for (i = 0; i < n; i++) {
			if ((v = config_get(c, keys[i].key)) == NULL)
				continue;
			if (config_validate(keys[i].key, v, &err) != 0)
				abort();
			if (config_source(c, keys[i].key) == NULL)
				abort();
		}
	} else if (strncmp(err.msg, "fuzz:", 5) != 0)
		abort(); /* every error names the file and line */
	config_free(c);
	free(s);
	return 0;
}
