/*
 * The holder's wire protocol (holdproto.h): frames of u32 and string
 * fields, bounds-checked decoding of untrusted bytes.
 */
#include <stdlib.h>
#include <string.h>

#include "holdproto.h"
#include "xmalloc.h"

static uint32_t
rd32(const unsigned char *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 |
	       (uint32_t)p[2] << 8 | (uint32_t)p[3];
}

static int
known_type(int t)
{
	return t >= HOLDPROTO_HELLO && t <= HOLDPROTO_PING;
}

int
holdproto_frame_next(const void *data, size_t n, struct holdproto_frame *f,
    size_t *used, struct tpu_err *err)
{
	const unsigned char *p = data;
	uint32_t len;

	if (n < 4)
		return 0;
	len = rd32(p);
	if (len == 0 || len > HOLDPROTO_FRAME_MAX)
		return tpu_error(err, TPU_E_API,
		    "connection holder: frame length %lu (1..%u)",
		    (unsigned long)len, HOLDPROTO_FRAME_MAX);
	if (n >= 5 && !known_type(p[4]))
		return tpu_error(err, TPU_E_API,
		    "connection holder: unknown frame type %u", p[4]);
	if (n - 4 < len)
		return 0;
	f->type = p[4];
	f->payload = p + 5;
	f->len = len - 1;
	*used = 4 + (size_t)len;
	return 1;
}

void
holdproto_begin(struct buf *b, int type, size_t *start)
{
	unsigned char h[5] = { 0, 0, 0, 0, (unsigned char)type };

	*start = b->len;
	buf_append(b, h, sizeof h);
}

void
holdproto_put_u32(struct buf *b, uint32_t v)
{
	unsigned char p[4] = { (unsigned char)(v >> 24),
		(unsigned char)(v >> 16), (unsigned char)(v >> 8),
		(unsigned char)v };

	buf_append(b, p, sizeof p);
}

void
holdproto_put_str(struct buf *b, const char *s, size_t len)
{
	holdproto_put_u32(b, (uint32_t)len);
	buf_append(b, s, len);
}

void
holdproto_put_cstr(struct buf *b, const char *s)
{
	holdproto_put_str(b, s != NULL ? s : "", s != NULL ? strlen(s) : 0);
}

int
holdproto_end(struct buf *b, size_t start)
{
	size_t len = b->len - start - 4;
	unsigned char *p = (unsigned char *)b->data + start;

	if (len > HOLDPROTO_FRAME_MAX)
		return -1;
	p[0] = (unsigned char)(len >> 24);
	p[1] = (unsigned char)(len >> 16);
	p[2] = (unsigned char)(len >> 8);
	p[3] = (unsigned char)len;
	return 0;
}

void
holdproto_rd_init(struct holdproto_rd *r, const struct holdproto_frame *f)
{
	r->p = f->payload;
	r->left = f->len;
}

int
holdproto_get_u32(struct holdproto_rd *r, uint32_t *v)
{
	if (r->left < 4)
		return -1;
	*v = rd32(r->p);
	r->p += 4;
	r->left -= 4;
	return 0;
}

int
holdproto_get_str(struct holdproto_rd *r, const char **s, size_t *len)
{
	uint32_t n;

	if (r->left < 4 || (n = rd32(r->p)) > r->left - 4)
		return -1;
	*s = (const char *)r->p + 4;
	*len = n;
	r->p += 4 + (size_t)n;
	r->left -= 4 + (size_t)n;
	return 0;
}

int
holdproto_get_text(struct holdproto_rd *r, size_t max, char **out)
{
	const char *s;
	size_t n;
	char *t;

	if (holdproto_get_str(r, &s, &n) != 0 || n > max ||
	    memchr(s, 0, n) != NULL)
		return -1;
	t = xmalloc(n + 1);
	memcpy(t, s, n);
	t[n] = '\0';
	*out = t;
	return 0;
}

/* A text field into a fixed array (DONE's short strings). */
static int
get_fixed(struct holdproto_rd *r, char *out, size_t size)
{
	const char *s;
	size_t n;

	if (holdproto_get_str(r, &s, &n) != 0 || n >= size ||
	    memchr(s, 0, n) != NULL)
		return -1;
	memcpy(out, s, n);
	out[n] = '\0';
	return 0;
}

static int
bad(struct tpu_err *err, const struct holdproto_frame *f, const char *what)
{
	return tpu_error(err, TPU_E_API,
	    "connection holder: malformed frame of type %d: %s", f->type, what);
}

static int
want(const struct holdproto_frame *f, int type, struct tpu_err *err)
{
	if (f->type != type)
		return tpu_error(err, TPU_E_API,
		    "connection holder: frame of type %d where %d was expected",
		    f->type, type);
	return 0;
}

void
holdproto_put_hello(struct buf *b, const struct holdproto_hello *h)
{
	size_t st;

	holdproto_begin(b, HOLDPROTO_HELLO, &st);
	holdproto_put_u32(b, h->version);
	holdproto_put_cstr(b, h->slice);
	holdproto_put_cstr(b, h->node_id);
	holdproto_put_cstr(b, h->identity != NULL ? h->identity : "");
	holdproto_end(b, st);
}

void
holdproto_hello_release(struct holdproto_hello *h)
{
	free(h->slice);
	free(h->node_id);
	free(h->identity);
	memset(h, 0, sizeof *h);
}

int
holdproto_get_hello(const struct holdproto_frame *f, struct holdproto_hello *h,
    struct tpu_err *err)
{
	struct holdproto_rd r;

	memset(h, 0, sizeof *h);
	if (want(f, HOLDPROTO_HELLO, err) != 0)
		return TPU_E_API;
	holdproto_rd_init(&r, f);
	if (holdproto_get_u32(&r, &h->version) != 0 ||
	    holdproto_get_text(&r, 1024, &h->slice) != 0 ||
	    holdproto_get_text(&r, 256, &h->node_id) != 0 ||
	    holdproto_get_text(&r, 8192, &h->identity) != 0 || r.left != 0) {
		holdproto_hello_release(h);
		return bad(err, f, "hello");
	}
	return 0;
}

void
holdproto_put_run(struct buf *b, const struct holdproto_run *run)
{
	size_t st, i, k;

	holdproto_begin(b, HOLDPROTO_RUN, &st);
	holdproto_put_u32(b, run->flags);
	holdproto_put_u32(b, run->timeout_ms);
	holdproto_put_u32(b, run->fanout);
	holdproto_put_u32(b, (uint32_t)run->ntargets);
	for (i = 0; i < run->ntargets; i++) {
		const struct holdproto_target *t = &run->targets[i];

		holdproto_put_u32(b, t->worker);
		holdproto_put_cstr(b, t->host);
		holdproto_put_u32(b, t->port);
		holdproto_put_cstr(b, t->user);
		holdproto_put_u32(b, (uint32_t)t->nhostkeys);
		for (k = 0; k < t->nhostkeys; k++)
			holdproto_put_cstr(b, t->hostkeys[k]);
		holdproto_put_cstr(b, t->command);
	}
	holdproto_end(b, st);
}

void
holdproto_run_release(struct holdproto_run *run)
{
	size_t i, k;

	for (i = 0; i < run->ntargets; i++) {
		struct holdproto_target *t = &run->targets[i];

		free(t->host);
		free(t->user);
		for (k = 0; k < t->nhostkeys; k++)
			free(t->hostkeys[k]);
		free(t->hostkeys);
		free(t->command);
	}
	free(run->targets);
	memset(run, 0, sizeof *run);
}

/* Each target takes at least this many payload bytes: worker, host,
 * port, user, nhostkeys, command. */
#define TARGET_MIN_BYTES (6 * 4)

static int
get_target(struct holdproto_rd *r, struct holdproto_target *t)
{
	uint32_t nk;
	size_t k;

	if (holdproto_get_u32(r, &t->worker) != 0 ||
	    holdproto_get_text(r, 1024, &t->host) != 0 ||
	    holdproto_get_u32(r, &t->port) != 0 || t->port == 0 ||
	    t->port > 65535 || holdproto_get_text(r, 256, &t->user) != 0 ||
	    holdproto_get_u32(r, &nk) != 0 || nk > HOLDPROTO_KEYS_MAX ||
	    (size_t)nk * 4 > r->left)
		return -1;
	t->hostkeys = xcalloc(nk > 0 ? nk : 1, sizeof *t->hostkeys);
	for (k = 0; k < nk; k++) {
		if (holdproto_get_text(r, 16384, &t->hostkeys[k]) != 0)
			return -1;
		t->nhostkeys = k + 1;
	}
	return holdproto_get_text(r, HOLDPROTO_FRAME_MAX, &t->command);
}

int
holdproto_get_run(const struct holdproto_frame *f, struct holdproto_run *run,
    struct tpu_err *err)
{
	struct holdproto_rd r;
	uint32_t n;
	size_t i;

	memset(run, 0, sizeof *run);
	if (want(f, HOLDPROTO_RUN, err) != 0)
		return TPU_E_API;
	holdproto_rd_init(&r, f);
	if (holdproto_get_u32(&r, &run->flags) != 0 ||
	    holdproto_get_u32(&r, &run->timeout_ms) != 0 ||
	    holdproto_get_u32(&r, &run->fanout) != 0 ||
	    holdproto_get_u32(&r, &n) != 0)
		return bad(err, f, "run header");
	if (n == 0 || n > HOLDPROTO_TARGETS_MAX ||
	    (size_t)n * TARGET_MIN_BYTES > r.left)
		return bad(err, f, "worker count");
	run->targets = xcalloc(n, sizeof *run->targets);
	for (i = 0; i < n; i++) {
		run->ntargets = i + 1;
		if (get_target(&r, &run->targets[i]) != 0) {
			holdproto_run_release(run);
			return bad(err, f, "worker");
		}
	}
	if (r.left != 0) {
		holdproto_run_release(run);
		return bad(err, f, "trailing bytes");
	}
	return 0;
}

void
holdproto_put_out(struct buf *b, uint32_t idx, uint32_t stream, uint32_t flags,
    const char *data, size_t len)
{
	size_t st;

	holdproto_begin(b, HOLDPROTO_OUT, &st);
	holdproto_put_u32(b, idx);
	holdproto_put_u32(b, stream);
	holdproto_put_u32(b, flags);
	holdproto_put_str(b, data, len);
	holdproto_end(b, st);
}

int
holdproto_get_out(const struct holdproto_frame *f, struct holdproto_out *o,
    struct tpu_err *err)
{
	struct holdproto_rd r;

	memset(o, 0, sizeof *o);
	if (want(f, HOLDPROTO_OUT, err) != 0)
		return TPU_E_API;
	holdproto_rd_init(&r, f);
	if (holdproto_get_u32(&r, &o->idx) != 0 ||
	    holdproto_get_u32(&r, &o->stream) != 0 ||
	    (o->stream != 1 && o->stream != 2) ||
	    holdproto_get_u32(&r, &o->flags) != 0 || o->flags > 1 ||
	    holdproto_get_str(&r, &o->data, &o->len) != 0 || r.left != 0)
		return bad(err, f, "output");
	return 0;
}

void
holdproto_put_done(struct buf *b, const struct holdproto_done *d)
{
	size_t st;

	holdproto_begin(b, HOLDPROTO_DONE, &st);
	holdproto_put_u32(b, d->idx);
	holdproto_put_u32(b, d->status);
	holdproto_put_u32(b, (uint32_t)d->exit_status);
	holdproto_put_cstr(b, d->signal);
	holdproto_put_u32(b, d->duration_ms);
	holdproto_put_u32(b, d->auth_attempts);
	holdproto_put_cstr(b, d->hostkey_fp);
	holdproto_put_cstr(b, d->msg);
	holdproto_end(b, st);
}

int
holdproto_get_done(const struct holdproto_frame *f, struct holdproto_done *d,
    struct tpu_err *err)
{
	struct holdproto_rd r;
	uint32_t es;

	memset(d, 0, sizeof *d);
	if (want(f, HOLDPROTO_DONE, err) != 0)
		return TPU_E_API;
	holdproto_rd_init(&r, f);
	if (holdproto_get_u32(&r, &d->idx) != 0 ||
	    holdproto_get_u32(&r, &d->status) != 0 ||
	    holdproto_get_u32(&r, &es) != 0 ||
	    get_fixed(&r, d->signal, sizeof d->signal) != 0 ||
	    holdproto_get_u32(&r, &d->duration_ms) != 0 ||
	    holdproto_get_u32(&r, &d->auth_attempts) != 0 ||
	    get_fixed(&r, d->hostkey_fp, sizeof d->hostkey_fp) != 0 ||
	    get_fixed(&r, d->msg, sizeof d->msg) != 0 || r.left != 0)
		return bad(err, f, "worker result");
	d->exit_status = (int32_t)es;
	if (d->exit_status < -1 || d->exit_status > 255)
		return bad(err, f, "exit status");
	return 0;
}

void
holdproto_put_end(struct buf *b, int32_t rc)
{
	size_t st;

	holdproto_begin(b, HOLDPROTO_END, &st);
	holdproto_put_u32(b, (uint32_t)rc);
	holdproto_end(b, st);
}

int
holdproto_get_end(
    const struct holdproto_frame *f, int32_t *rc, struct tpu_err *err)
{
	struct holdproto_rd r;
	uint32_t v;

	if (want(f, HOLDPROTO_END, err) != 0)
		return TPU_E_API;
	holdproto_rd_init(&r, f);
	if (holdproto_get_u32(&r, &v) != 0 || r.left != 0)
		return bad(err, f, "end");
	*rc = (int32_t)v;
	return 0;
}

void
holdproto_put_text(struct buf *b, int type, const char *text)
{
	size_t st;

	holdproto_begin(b, type, &st);
	holdproto_put_cstr(b, text);
	holdproto_end(b, st);
}

int
holdproto_get_textmsg(
    const struct holdproto_frame *f, int type, char **text, struct tpu_err *err)
{
	struct holdproto_rd r;

	*text = NULL;
	if (want(f, type, err) != 0)
		return TPU_E_API;
	holdproto_rd_init(&r, f);
	if (holdproto_get_text(&r, 65536, text) != 0 || r.left != 0) {
		free(*text);
		*text = NULL;
		return bad(err, f, "text");
	}
	return 0;
}
