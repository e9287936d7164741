/*
 * Fuzz the known_hosts parser and the public-key line parser: no crash
 * or leak, every parsed key re-encodes to a line that parses to the same
 * blob, and replacing an alias then looking it up gives exactly the new
 * keys.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "knownhosts.h"
#include "util.h"
#include "xmalloc.h"

int LLVMFuzzerTestOneInput(const uint8_t *, size_t);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct knownhosts kh;
	struct knownhosts_key key, again;
	struct tpu_err err;
	const struct knownhosts_key *found[8];
	char fp[KNOWNHOSTS_FP_LEN], *enc, *line, **lines;
	size_t i, n;

	knownhosts_init(&kh, NULL);
	knownhosts_parse(&kh, (const char *)data, size);
	for (i = 0; i < kh.n; i++) {
		if (kh.v[i].hosts == NULL)
			continue;
		knownhosts_fingerprint(kh.v[i].key.blob, kh.v[i].key.len, fp);
		n = knownhosts_lookup(&kh, kh.v[i].hosts, found, 8);
		if (n == 0 && strchr(kh.v[i].hosts, ',') == NULL)
			abort();
	}
	if (knownhosts_parse_key((const char *)data, size, &key, &err) == 0) {
		enc = tpu_b64_encode(key.blob, key.len, 0);
		line = xasprintf("%s %s", key.type, enc);
		if (knownhosts_parse_key(line, strlen(line), &again, &err) !=
		        0 ||
		    again.len != key.len ||
		    memcmp(again.blob, key.blob, key.len) != 0)
			abort();
		knownhosts_key_release(&again);
		if (knownhosts_replace(&kh, "tpu.fuzz-0",
		        (const char *const *)&line, 1, &err) != 0)
			abort();
		lines = knownhosts_lines(&kh, "tpu.fuzz-0", &n);
		if (n != 1 || strcmp(lines[0], line) != 0)
			abort();
		knownhosts_lines_free(lines);
		if (knownhosts_pinned(&kh, "tpu.fuzz-0") != 1 ||
		    !knownhosts_match(&kh.v[kh.n - 1].key, 1, &key, NULL))
			abort();
		free(line);
		free(enc);
		knownhosts_key_release(&key);
	}
	knownhosts_release(&kh);
	return 0;
}
