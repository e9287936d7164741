/*
 * Framing of short commands through one long-lived remote shell
 * (shframe.h).
 */
#include <stdio.h>
#include <string.h>

#include <openssl/rand.h>

#include "shframe.h"
#include "shquote.h"

#define MARKER_PREFIX "tpuctl-end-"
#define MARKER_HEX 32

int
shframe_marker(char *out, struct tpu_err *err)
{
	unsigned char r[MARKER_HEX / 2];
	size_t i;
	int n;

	if (RAND_bytes(r, (int)sizeof r) != 1)
		return tpu_error(err, TPU_E_IO,
		    "no random bytes for a shell marker (RAND_bytes)");
	n = snprintf(out, SHFRAME_MARKER_MAX, "%s", MARKER_PREFIX);
	for (i = 0; i < sizeof r; i++)
		n += snprintf(
		    out + n, SHFRAME_MARKER_MAX - (size_t)n, "%02x", r[i]);
	return 0;
}

/* A marker of shframe_marker's form: it goes into the shell unquoted. */
static int
marker_ok(const char *m)
{
	size_t pl = sizeof MARKER_PREFIX - 1, i;

	if (strncmp(m, MARKER_PREFIX, pl) != 0 || strlen(m) != pl + MARKER_HEX)
		return 0;
	for (i = pl; m[i] != '\0'; i++)
		if (strchr("0123456789abcdef", m[i]) == NULL)
			return 0;
	return 1;
}

int
shframe_wrap(
    struct buf *out, const char *marker, const char *cmd, struct tpu_err *err)
{
	size_t len0 = out->len;
	int rc;

	if (!marker_ok(marker))
		return tpu_error(err, TPU_E_INVALID,
		    "shell marker '%s': want %s and %d lowercase hex digits",
		    marker, MARKER_PREFIX, MARKER_HEX);
	if (buf_puts(out, "(eval ") != 0)
		goto cap;
	if ((rc = shquote_append(out, cmd, strlen(cmd), err)) != 0) {
		out->len = len0;
		out->data[len0] = '\0';
		return rc;
	}
	if (buf_printf(out,
	        ") </dev/null; s=$?; printf '\\n%%s %%d\\n' %s \"$s\"; "
	        "printf '\\n%%s\\n' %s >&2\n",
	        marker, marker) != 0)
		goto cap;
	return 0;
cap:
	out->len = len0;
	out->data[len0] = '\0';
	return tpu_error(err, TPU_E_INVALID,
	    "framed shell command: longer than the buffer's cap");
}

void
shframe_rd_init(struct shframe_rd *r, const char *marker, int want_status)
{
	memset(r, 0, sizeof *r);
	snprintf(r->marker, sizeof r->marker, "%s", marker);
	r->want_status = want_status;
	buf_init(&r->hold, BUF_NOCAP);
}

void
shframe_rd_release(struct shframe_rd *r)
{
	buf_release(&r->hold);
}

/*
 * The trailer starting at d[0] ("\n" MARKER ...), n bytes present: 1
 * complete (*tlen its length, *status), 0 a prefix of one, -1 none, -2
 * the marker followed by anything but the trailer's end.
 */
static int
trailer(const struct shframe_rd *r, const char *d, size_t n, size_t *tlen,
    int *status)
{
	size_t ml = strlen(r->marker), i, k;
	int v = 0;

	for (i = 0; i < n && i < ml + 1; i++)
		if (d[i] != (i == 0 ? '\n' : r->marker[i - 1]))
			return -1;
	if (i < ml + 1)
		return 0;
	if (!r->want_status) {
		if (n == i)
			return 0;
		if (d[i] != '\n')
			return -2;
		*tlen = i + 1;
		*status = 0;
		return 1;
	}
	if (n == i)
		return 0;
	if (d[i++] != ' ')
		return -2;
	for (k = 0; i < n && d[i] >= '0' && d[i] <= '9'; i++, k++) {
		if (k == 3 || (k == 1 && v == 0))
			return -2; /* printf %d: no more, no leading 0 */
		v = v * 10 + (d[i] - '0');
	}
	if (i == n)
		return 0;
	if (k == 0 || d[i] != '\n' || v > 255)
		return -2;
	*tlen = i + 1;
	*status = v;
	return 1;
}

int
shframe_rd_feed(struct shframe_rd *r, const char *data, size_t len,
    void (*emit)(void *, const char *, size_t), void *arg, struct tpu_err *err)
{
	const char *d;
	size_t n, i, tlen = 0;
	int st = 0;

	if (r->done)
		return tpu_error(err, TPU_E_API,
		    "remote shell: %zu bytes after the command's end", len);
	if (buf_append(&r->hold, data, len) != 0)
		return tpu_error(err, TPU_E_API, "remote shell: out of memory");
	d = r->hold.data;
	n = r->hold.len;
	for (i = 0; i < n; i++) {
		int t;

		if (d[i] != '\n')
			continue;
		t = trailer(r, d + i, n - i, &tlen, &st);
		if (t == -1)
			continue; /* an ordinary newline of the output */
		if (t == -2) {
			r->done = 1;
			return tpu_error(err, TPU_E_API,
			    "remote shell out of step: a malformed end marker");
		}
		if (i > 0 && emit != NULL)
			emit(arg, d, i);
		if (t == 0) {
			/* hold the possible trailer for the next bytes */
			memmove(r->hold.data, d + i, n - i);
			r->hold.len = n - i;
			r->hold.data[r->hold.len] = '\0';
			return 0;
		}
		if (i + tlen != n) {
			r->done = 1;
			return tpu_error(err, TPU_E_API,
			    "remote shell out of step: %zu bytes after the "
			    "command's end marker",
			    n - i - tlen);
		}
		r->done = 1;
		r->status = st;
		buf_clear(&r->hold);
		return 1;
	}
	if (n > 0 && emit != NULL)
		emit(arg, d, n);
	buf_clear(&r->hold);
	return 0;
}
