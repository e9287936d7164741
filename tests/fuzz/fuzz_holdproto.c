/*
 * Fuzz the connection holder's protocol decoder (src/holdproto.c) with
 * bytes as they could come from the socket: no crash, no leak, and every
 * frame a decoder accepts re-encodes to exactly the same bytes (nothing
 * is misread or silently dropped).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "holdproto.h"

int LLVMFuzzerTestOneInput(const uint8_t *, size_t);

/* Re-encode what was decoded; the frame's bytes must come back. */
static void
same(const struct buf *b, const uint8_t *orig, size_t used)
{
	if (b->len != used || memcmp(b->data, orig, used) != 0)
		abort();
}

static void
check_frame(const struct holdproto_frame *f, const uint8_t *orig, size_t used)
{
	struct holdproto_hello h;
	struct holdproto_run run;
	struct holdproto_out o;
	struct holdproto_done d;
	struct tpu_err err;
	struct buf b;
	int32_t rc;
	char *text;

	buf_init(&b, BUF_NOCAP);
	switch (f->type) {
	case HOLDPROTO_HELLO:
		if (holdproto_get_hello(f, &h, &err) == 0) {
			holdproto_put_hello(&b, &h);
			same(&b, orig, used);
			holdproto_hello_release(&h);
		}
		break;
	case HOLDPROTO_RUN:
		if (holdproto_get_run(f, &run, &err) == 0) {
			holdproto_put_run(&b, &run);
			same(&b, orig, used);
			holdproto_run_release(&run);
		}
		break;
	case HOLDPROTO_OUT:
		if (holdproto_get_out(f, &o, &err) == 0) {
			holdproto_put_out(
			    &b, o.idx, o.stream, o.flags, o.data, o.len);
			same(&b, orig, used);
		}
		break;
	case HOLDPROTO_DONE:
		if (holdproto_get_done(f, &d, &err) == 0) {
			holdproto_put_done(&b, &d);
			same(&b, orig, used);
		}
		break;
	case HOLDPROTO_END:
		if (holdproto_get_end(f, &rc, &err) == 0) {
			holdproto_put_end(&b, rc);
			same(&b, orig, used);
		}
		break;
	default:
		if (holdproto_get_textmsg(f, f->type, &text, &err) == 0) {
			holdproto_put_text(&b, f->type, text);
			same(&b, orig, used);
			free(text);
		}
	}
	buf_release(&b);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct holdproto_frame f;
	struct tpu_err err;
	size_t off = 0, used;

	while (holdproto_frame_next(data + off, size - off, &f, &used, &err) ==
	       1) {
		if (used > size - off || f.payload + f.len != data + off + used)
			abort();
		check_frame(&f, data + off, used);
		off += used;
	}
	return 0;
}
