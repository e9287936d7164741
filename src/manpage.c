/*
 * A small mdoc reader for "--help": the .It Fl items of a man page and
 * the first sentence of each.
 */
#include <sys/stat.h>

#include <ctype.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "buf.h"
#include "manpage.h"
#include "xmalloc.h"

#define DESC_MAX 400

/* Escapes: \& \- \e \(lq \(rq \(aq \(em; others dropped. */
static void
put_escaped(struct buf *b, const char *s, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++) {
		if (s[i] != '\\' || i + 1 >= n) {
			buf_printf(b, "%c", s[i]);
			continue;
		}
		i++;
		if (s[i] == '-')
			buf_puts(b, "-");
		else if (s[i] == 'e')
			buf_puts(b, "\\");
		else if (s[i] == '(' && i + 2 < n) {
			if (strncmp(s + i + 1, "lq", 2) == 0 ||
			    strncmp(s + i + 1, "rq", 2) == 0)
				buf_puts(b, "\"");
			else if (strncmp(s + i + 1, "aq", 2) == 0)
				buf_puts(b, "'");
			else if (strncmp(s + i + 1, "em", 2) == 0)
				buf_puts(b, "--");
			i += 2;
		} else if (s[i] == 'f' && i + 1 < n)
			i++; /* \fB, \fR: fonts */
		             /* \& and the rest: nothing */
	}
}

static int
is_macro(const char *t)
{
	size_t n = strlen(t);

	return n >= 2 && n <= 3 && isupper((unsigned char)t[0]) &&
	       islower((unsigned char)t[1]) &&
	       (n == 2 || islower((unsigned char)t[2]));
}

static int
is_delim(const char *t)
{
	return *t != '\0' && strspn(t, ".,;:)]?!") == strlen(t);
}

/* Split a macro line into words; "quoted words" stay one. */
static size_t
split(char *s, char **w, size_t max)
{
	size_t n = 0;

	while (*s != '\0' && n < max) {
		while (*s == ' ' || *s == '\t')
			s++;
		if (*s == '\0')
			break;
		if (*s == '"') {
			w[n++] = ++s;
			while (*s != '\0' && *s != '"')
				s++;
		} else {
			w[n++] = s;
			while (*s != '\0' && *s != ' ' && *s != '\t')
				s++;
		}
		if (*s != '\0')
			*s++ = '\0';
	}
	return n;
}

char *
manpage_line_text(const char *line)
{
	struct buf b;
	char *copy, *w[64];
	const char *close[16];
	size_t n, i, depth = 0;
	int space = 0, nospace = 0, dash = 0;

	buf_init(&b, 1 << 16);
	if (line[0] != '.' && line[0] != '\'') {
		put_escaped(&b, line, strlen(line));
		return b.data;
	}
	copy = xstrdup(line + 1);
	n = split(copy, w, 64);
	for (i = 0; i < n; i++) { /* w[0]: the line's own macro */
		const char *t = w[i];

		if (is_macro(t)) {
			if (strcmp(t, "Fl") == 0)
				dash = 1;
			else if (strcmp(t, "Ns") == 0)
				nospace = 1;
			else if (strcmp(t, "Xr") == 0 && i + 2 < n) {
				if (space && !nospace)
					buf_puts(&b, " ");
				buf_printf(&b, "%s(%s)", w[i + 1], w[i + 2]);
				i += 2;
				space = 1;
				nospace = 0;
			} else {
				const char *o = NULL, *c = NULL;

				if (!strcmp(t, "Op") || !strcmp(t, "Bq"))
					o = "[", c = "]";
				else if (!strcmp(t, "Pq"))
					o = "(", c = ")";
				else if (!strcmp(t, "Dq") || !strcmp(t, "Qq"))
					o = "\"", c = "\"";
				else if (!strcmp(t, "Sq") || !strcmp(t, "Ql"))
					o = "'", c = "'";
				else if (!strcmp(t, "Brq"))
					o = "{", c = "}";
				else if (!strcmp(t, "Po") || !strcmp(t, "Oo") ||
				         !strcmp(t, "Bo") || !strcmp(t, "Do")) {
					/* Explicit: may close lines later. */
					if (space && !nospace)
						buf_puts(&b, " ");
					buf_puts(&b, t[0] == 'P'   ? "("
					             : t[0] == 'D' ? "\""
					                           : "[");
					space = nospace = 0;
				} else if (!strcmp(t, "Oc") ||
				           !strcmp(t, "Pc") ||
				           !strcmp(t, "Bc") ||
				           !strcmp(t, "Dc")) {
					buf_puts(&b, t[0] == 'P'   ? ")"
					             : t[0] == 'D' ? "\""
					                           : "]");
					space = 1;
					nospace = 0;
				}
				if (o != NULL) {
					if (space && !nospace)
						buf_puts(&b, " ");
					buf_puts(&b, o);
					space = nospace = 0;
					if (depth < 16)
						close[depth++] = c;
				}
			}
			continue;
		}
		if (is_delim(t)) {
			/* Trailing punctuation goes after the enclosures. */
			size_t j = i;

			while (j < n && is_delim(w[j]))
				j++;
			if (j == n)
				while (depth > 0)
					buf_puts(&b, close[--depth]);
			buf_puts(&b, t);
			space = 1;
			nospace = 0;
			continue;
		}
		if (space && !nospace)
			buf_puts(&b, " ");
		if (dash)
			buf_puts(&b, "-");
		put_escaped(&b, t, strlen(t));
		space = 1;
		nospace = dash = 0;
	}
	if (dash) {
		if (space && !nospace)
			buf_puts(&b, " ");
		buf_puts(&b, "-");
	}
	while (depth > 0)
		buf_puts(&b, close[--depth]);
	free(copy);
	return b.data;
}

/* t ends with "e.g." or "i.e.": not a sentence's end. */
static int
abbrev(const char *t, size_t n)
{
	return n >= 4 && (strcmp(t + n - 4, "e.g.") == 0 ||
	                     strcmp(t + n - 4, "i.e.") == 0);
}

/* The line ends the current item's description. */
static int
ends_item(const char *line, int nest)
{
	if (strncmp(line, ".Sh", 3) == 0 || strncmp(line, ".Ss", 3) == 0)
		return 1;
	return nest == 0 &&
	       (strncmp(line, ".It", 3) == 0 || strncmp(line, ".El", 3) == 0);
}

static void
add_flag(struct manpage *m, char *spec, char *desc)
{
	m->flags = xreallocarray(m->flags, m->n + 1, sizeof *m->flags);
	m->flags[m->n].spec = spec;
	m->flags[m->n].desc = desc;
	m->n++;
}

void
manpage_parse(struct manpage *m, const char *text)
{
	const char *p = text, *nl;
	char *spec = NULL, *line;
	struct buf desc;
	int done = 0, nest = 0;

	memset(m, 0, sizeof *m);
	buf_init(&desc, DESC_MAX * 2);
	for (; *p != '\0'; p = nl != NULL ? nl + 1 : p + strlen(p)) {
		size_t len;

		nl = strchr(p, '\n');
		len = nl != NULL ? (size_t)(nl - p) : strlen(p);
		line = xstrndup(p, len);
		if (strncmp(line, ".\\\"", 3) == 0) {
			free(line);
			continue;
		}
		if (spec != NULL && ends_item(line, nest)) {
			add_flag(m, spec, xstrdup(desc.data));
			spec = NULL;
		}
		if (spec != NULL) {
			if (strncmp(line, ".Bl", 3) == 0) {
				nest++;
				done = 1; /* a nested list ends the sentence */
			} else if (strncmp(line, ".El", 3) == 0)
				nest--;
			else if (!done && strncmp(line, ".Pp", 3) != 0) {
				char *t = manpage_line_text(line);
				size_t tl = strlen(t);

				if (tl > 0) {
					/* "(" and ")" of .Po/.Pc hug their
					 * neighbours. */
					if (desc.len > 0 &&
					    strchr(").,;:", t[0]) == NULL &&
					    strchr("([",
					        desc.data[desc.len - 1]) ==
					        NULL)
						buf_puts(&desc, " ");
					buf_puts(&desc, t);
				}
				/* One sentence per source line (mdoc). */
				if (tl > 0 && strchr(".:", t[tl - 1]) != NULL &&
				    !abbrev(t, tl))
					done = 1;
				if (desc.len > DESC_MAX)
					done = 1;
				free(t);
			}
		}
		if (spec == NULL && strncmp(line, ".It Fl ", 7) == 0) {
			spec = manpage_line_text(line);
			buf_release(&desc);
			buf_init(&desc, DESC_MAX * 2);
			done = 0;
			nest = 0;
		}
		free(line);
	}
	if (spec != NULL)
		add_flag(m, spec, xstrdup(desc.data));
	buf_release(&desc);
}

void
manpage_release(struct manpage *m)
{
	size_t i;

	for (i = 0; i < m->n; i++) {
		free(m->flags[i].spec);
		free(m->flags[i].desc);
	}
	free(m->flags);
	memset(m, 0, sizeof *m);
}

const struct manpage_flag *
manpage_find(const struct manpage *m, const char *flag)
{
	size_t i, n = strlen(flag);

	for (i = 0; i < m->n; i++) {
		const char *s = m->flags[i].spec;

		while ((s = strstr(s, flag)) != NULL) {
			int before = s == m->flags[i].spec ||
			             strchr(" ,|[(", s[-1]) != NULL;
			char after = s[n];

			if (before &&
			    (after == '\0' || after == ' ' || after == ',' ||
			        after == '=' || after == ']' || after == '|'))
				return &m->flags[i];
			s += n;
		}
	}
	return NULL;
}

int
manpage_locate(const char *name, char *buf, size_t len)
{
	char exe[PATH_MAX], *slash;
	struct stat st;
	ssize_t n;
	int i, w;

	n = readlink("/proc/self/exe", exe, sizeof exe - 1);
	if (n <= 0)
		return -1;
	exe[n] = '\0';
	if ((slash = strrchr(exe, '/')) != NULL)
		*slash = '\0';
	for (i = 0; i < 2; i++) {
		w = i == 0 ? snprintf(buf, len, "%s/../man/%s.1", exe, name)
		           : snprintf(buf, len, "%s/../share/man/man1/%s.1",
		                 exe, name);
		if (w > 0 && (size_t)w < len && stat(buf, &st) == 0 &&
		    S_ISREG(st.st_mode))
			return 0;
	}
	return -1;
}
