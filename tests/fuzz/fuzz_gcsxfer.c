/*
 * Fuzz the parsers of the transfer engine: the resume tracker file (read
 * back from disk, so it may be anything), the Range of 308 replies and
 * Content-Range.  No crash; an accepted tracker's session URL stays under
 * the base; a parsed Range never goes negative.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "gcsxfer.h"
#include "xmalloc.h"

int LLVMFuzzerTestOneInput(const uint8_t *, size_t);

#define BASE "http://127.0.0.1:9023"

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct gcsx_tracker t, u;
	struct tpu_err err;
	struct buf b;
	int64_t s, e, tot, r;
	char *str = xstrndup((const char *)data, size);

	r = gcsx_parse_range(str);
	if (r < -1)
		abort();
	if (gcsx_parse_content_range(str, &s, &e, &tot) == 0 &&
	    (s < 0 || e < s || tot <= e))
		abort();
	if (gcsx_tracker_parse((const char *)data, size, BASE, &t, &err) == 0) {
		if (strncmp(t.session, BASE "/upload/storage/v1/b/",
		        strlen(BASE "/upload/storage/v1/b/")) != 0 ||
		    t.size < 0 || t.mtime_ns < 0)
			abort();
		/* what we write, we read back identically */
		buf_init(&b, BUF_NOCAP);
		if (gcsx_tracker_format(&t, &b) != 0 ||
		    gcsx_tracker_parse(b.data, b.len, BASE, &u, &err) != 0)
			abort();
		if (strcmp(u.src, t.src) != 0 || strcmp(u.dst, t.dst) != 0 ||
		    strcmp(u.session, t.session) != 0 || u.size != t.size ||
		    u.mtime_ns != t.mtime_ns || u.crc32c != t.crc32c)
			abort();
		gcsx_tracker_release(&u);
		buf_release(&b);
		gcsx_tracker_release(&t);
	}
	free(str);
	return 0;
}
