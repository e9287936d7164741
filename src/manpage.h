/*
 * One line per flag for "tpuctl COMMAND --help", read from the command's
 * own man page, so the descriptions have one source: the .It Fl lines of
 * the page's lists and the first sentence after each.
 */
#ifndef TPUCTL_MANPAGE_H
#define TPUCTL_MANPAGE_H

#include <stddef.h>

struct manpage_flag {
	char *spec; /* "--worker 0|all|1,3|0-7", as the .It line renders */
	char *desc; /* its first sentence, or "" */
};

struct manpage {
	struct manpage_flag *flags;
	size_t n;
};

/*
 * Parse mdoc source text: every ".It Fl ..." item of every list, in
 * order.  The result is approximate plain text (macros dropped, Fl, Ns,
 * Op, Pq, Dq, Sq, Ql, Xr and the common escapes rendered), good for one
 * terminal line.  Release with manpage_release().
 */
void manpage_parse(struct manpage *, const char *text);
void manpage_release(struct manpage *);

/* The first item naming flag ("--worker" or "-A") as a word of its spec,
 * or NULL.  Borrowed. */
const struct manpage_flag *manpage_find(const struct manpage *, const char *);

/* One mdoc line (a macro line or text) as plain text; caller frees. */
char *manpage_line_text(const char *line);

/*
 * The page "name.1" next to the binary: BIN/../man/name.1 (the source
 * tree) or BIN/../share/man/man1/name.1 (make install).  0 with the path
 * in buf, -1 when neither exists.
 */
int manpage_locate(const char *name, char *buf, size_t len);

#endif
