/*
 * Fuzz the reader of commands framed through a long-lived remote shell
 * (src/shframe.c) with bytes as a worker's shell could send them: no
 * crash or leak; the first input byte picks the stream (stdout with the
 * exit status, or stderr) and where the rest is split; fed whole or in
 * two pieces the reader gives the same answer and output; what it emits
 * is a prefix of the input, and a complete trailer is exactly the bytes
 * after it.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "shframe.h"

int LLVMFuzzerTestOneInput(const uint8_t *, size_t);

#define M "tpuctl-end-0123456789abcdef0123456789abcdef"

static void
collect(void *arg, const char *d, size_t n)
{
	if (buf_append(arg, d, n) != 0)
		abort();
}

/* Feed d[0..n) cut at `cut`: the reader's answer, output in out. */
static int
feed(const char *d, size_t n, size_t cut, int want_status, struct buf *out,
    int *status)
{
	struct shframe_rd r;
	struct tpu_err err;
	int rc;

	tpu_err_init(&err);
	shframe_rd_init(&r, M, want_status);
	rc = shframe_rd_feed(&r, d, cut, collect, out, &err);
	if (rc == 0 || (rc == 1 && cut < n))
		rc = shframe_rd_feed(&r, d + cut, n - cut, collect, out, &err);
	*status = r.status;
	shframe_rd_release(&r);
	return rc;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *d = (const char *)data + 1;
	size_t n, cut;
	int want_status, rc1, rc2, st1, st2;
	struct buf a, b, t;

	if (size == 0)
		return 0;
	n = size - 1;
	want_status = data[0] & 1;
	cut = n > 0 ? (size_t)(data[0] >> 1) % (n + 1) : 0;
	buf_init(&a, BUF_NOCAP);
	buf_init(&b, BUF_NOCAP);
	buf_init(&t, BUF_NOCAP);
	rc1 = feed(d, n, n, want_status, &a, &st1);
	rc2 = feed(d, n, cut, want_status, &b, &st2);
	if (rc1 != rc2)
		abort();
	if (rc1 >= 0 && (a.len != b.len || memcmp(a.data, b.data, a.len) != 0))
		abort();
	if (a.len > n || memcmp(a.data, d, a.len) != 0)
		abort();
	if (rc1 == 1) {
		if (st1 != st2)
			abort();
		if (want_status)
			buf_printf(&t, "\n%s %d\n", M, st1);
		else
			buf_printf(&t, "\n%s\n", M);
		if (a.len + t.len != n || memcmp(d + a.len, t.data, t.len) != 0)
			abort();
	}
	buf_release(&a);
	buf_release(&b);
	buf_release(&t);
	return 0;
}
