/*
 * Fuzz the emulator's Cloud Storage request parsers (emulator/gcs_util.c):
 * URL paths, multipart/related bodies, Content-Range, Range and
 * X-Goog-Hash.  Checks invariants too: multipart parts lie inside the
 * body and in order, ranges inside the object.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "gcs_util.h"
#include "xmalloc.h"

int LLVMFuzzerTestOneInput(const uint8_t *, size_t);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct gcsemu_path p;
	struct gcsemu_crange cr;
	struct gcsemu_mp mp;
	uint64_t off, len, osize;
	char *s, c[64], m[64], b[80];
	size_t nl;

	s = xstrndup((const char *)data, size);
	if (gcsemu_path_parse(s, "POST", &p) == 0) {
		if (p.kind >= GCSEMU_P_OBJECT && p.object == NULL)
			abort();
		gcsemu_path_release(&p);
	}
	if (gcsemu_crange_parse(s, &cr) == 0 && cr.has_range && !cr.open_end &&
	    cr.last < cr.first)
		abort();
	osize = size * 7;
	if (gcsemu_range_parse(s, osize, &off, &len) == 0 &&
	    (len == 0 || off + len > osize))
		abort();
	gcsemu_goog_hash_parse(s, c, sizeof(c), m, sizeof(m));
	gcsemu_mp_boundary(s, b, sizeof(b));
	/* Multipart: the first line is the boundary, the rest the body. */
	nl = strcspn(s, "\n");
	if (nl > 0 && nl < 70 && nl < size) {
		memcpy(b, s, nl);
		b[nl] = '\0';
		if (gcsemu_mp_parse((const char *)data + nl + 1, size - nl - 1,
		        b, &mp) == 0) {
			if (mp.json_off + mp.json_len > mp.data_off ||
			    mp.data_off + mp.data_len > size - nl - 1)
				abort();
		}
	}
	free(s);
	return 0;
}
