/*
 * Fuzz the parsers of the transfer engine: the resume tracker files of
 * resumable and composite uploads (read back from disk, so they may be
 * anything), the Range of 308 replies and Content-Range.  No crash; an
 * accepted tracker's session URLs stay under the base, a composite plan
 * tiles the file; a parsed Range never goes negative.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "gcsxfer.h"
#include "xmalloc.h"

int LLVMFuzzerTestOneInput(const uint8_t *, size_t);

#define BASE "http://127.0.0.1:9023"

/* An accepted composite tracker is sound and reads back identically. */
static void
check_ctracker(const struct gcsx_ctracker *t)
{
	static const char pre[] = BASE "/upload/storage/v1/b/";
	struct gcsx_ctracker u;
	struct tpu_err err;
	struct buf b;
	int64_t off = 0;
	size_t i;

	if (t->n == 0 || t->n > GCSX_MAX_PARTS || strlen(t->id) != 16)
		abort();
	for (i = 0; i < t->n; i++) {
		if (t->parts[i].off != off || t->parts[i].len <= 0 ||
		    t->gens[i] < 0 ||
		    (t->sessions[i] != NULL &&
		        strncmp(t->sessions[i], pre, sizeof pre - 1) != 0))
			abort();
		off += t->parts[i].len;
	}
	if (off != t->size)
		abort();
	buf_init(&b, BUF_NOCAP);
	if (gcsx_ctracker_format(t, &b) != 0 ||
	    gcsx_ctracker_parse(b.data, b.len, BASE, &u, &err) != 0)
		abort();
	if (strcmp(u.src, t->src) != 0 || u.n != t->n ||
	    u.crc32c != t->crc32c || strcmp(u.id, t->id) != 0)
		abort();
	for (i = 0; i < t->n; i++)
		if (u.parts[i].len != t->parts[i].len ||
		    u.crcs[i] != t->crcs[i] || u.gens[i] != t->gens[i] ||
		    (u.sessions[i] == NULL) != (t->sessions[i] == NULL))
			abort();
	gcsx_ctracker_release(&u);
	buf_release(&b);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct gcsx_tracker t, u;
	struct gcsx_ctracker ct;
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
	if (gcsx_ctracker_parse((const char *)data, size, BASE, &ct, &err) ==
	    0) {
		check_ctracker(&ct);
		gcsx_ctracker_release(&ct);
	}
	free(str);
	return 0;
}
