/*
 * POSIX single-quote escaping (see shquote.h).  Quoting every word, even
 * a "safe" one, keeps the rule simple enough to check by eye.
 */
#include <string.h>

#include "shquote.h"
#include "xmalloc.h"

int
shquote_append(struct buf *out, const char *s, size_t len, struct tpu_err *err)
{
	size_t start = out->len, i;

	if (memchr(s, '\0', len) != NULL)
		return tpu_error(err, TPU_E_INVALID,
		    "argument contains a NUL byte at offset %zu: NUL cannot "
		    "be passed to a remote shell",
		    (size_t)((const char *)memchr(s, '\0', len) - s));
	if (buf_append(out, "'", 1) == -1)
		goto full;
	for (i = 0; i < len; i++) {
		if (s[i] == '\'') {
			if (buf_append(out, "'\\''", 4) == -1)
				goto full;
		} else if (buf_append(out, &s[i], 1) == -1)
			goto full;
	}
	if (buf_append(out, "'", 1) == -1)
		goto full;
	return 0;
full:
	out->len = start;
	out->data[start] = '\0';
	return tpu_error(err, TPU_E_INVALID,
	    "quoted command longer than %zu bytes", out->max);
}

char *
shquote(const char *s)
{
	struct buf b;
	struct tpu_err err;

	buf_init(&b, BUF_NOCAP);
	/* cannot fail: no NUL inside a C string, no cap */
	if (shquote_append(&b, s, strlen(s), &err) != 0)
		TPU_BUG("shquote_append failed without a cap");
	return buf_detach(&b, NULL);
}

int
shquote_argv(int argc, char *const argv[], char **out, struct tpu_err *err)
{
	struct buf b;
	int i;

	*out = NULL;
	if (argc < 1)
		return tpu_error(err, TPU_E_USAGE, "no remote command given");
	buf_init(&b, BUF_NOCAP);
	for (i = 0; i < argc; i++) {
		if (i > 0)
			buf_append(&b, " ", 1);
		if (shquote_append(&b, argv[i], strlen(argv[i]), err) != 0)
			TPU_BUG("shquote_append failed without a cap");
	}
	*out = buf_detach(&b, NULL);
	return 0;
}
