/*
 * Rendering of command results on stdout, byte for byte as gcloud prints
 * them: aligned tables (box, title, pad, no-heading, column align and
 * width, :sort), value/get/csv records (delimiter, separator,
 * terminator, quote), flattened key: value lines, list, and JSON and YAML
 * with sorted keys (gcloud's printers sort them) through a projection
 * when one is given; plus tpuctl's jsonl.
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <yaml.h>

#include "buf.h"
#include "json.h"
#include "output.h"
#include "resproj.h"
#include "util.h"
#include "xmalloc.h"

void
output_init(struct output *o)
{
	memset(o, 0, sizeof *o);
	resproj_init(&o->proj);
	o->fp = stdout;
}

void
output_release(struct output *o)
{
	resproj_release(&o->proj);
	o->nfields = 0;
}

int
output_parse_format(struct output *o, const char *s, struct tpu_err *err)
{
	static const struct {
		const char *name;
		enum output_format fmt;
	} names[] = {
		{ "csv", OUTPUT_CSV },
		{ "default", OUTPUT_YAML },
		{ "disable", OUTPUT_NONE },
		{ "flattened", OUTPUT_FLAT },
		{ "get", OUTPUT_VALUE },
		{ "json", OUTPUT_JSON },
		{ "jsonl", OUTPUT_JSONL },
		{ "list", OUTPUT_LIST },
		{ "none", OUTPUT_NONE },
		{ "table", OUTPUT_TABLE },
		{ "text", OUTPUT_FLAT },
		{ "value", OUTPUT_VALUE },
		{ "yaml", OUTPUT_YAML },
	};
	struct resproj p;
	size_t i;
	int rc;

	resproj_init(&p);
	if ((rc = resproj_parse(&p, s, err)) != 0)
		return rc;
	o->fmt = OUTPUT_TABLE;
	for (i = 0; p.name != NULL && i < sizeof names / sizeof names[0]; i++)
		if (strcmp(names[i].name, p.name) == 0)
			o->fmt = names[i].fmt;
	resproj_release(&o->proj);
	o->proj = p;
	o->nfields = p.ncols;
	return 0;
}

static int
check_fp(FILE *fp, struct tpu_err *err)
{
	if (ferror(fp))
		return tpu_error(
		    err, TPU_E_IO, "write error on standard output");
	return 0;
}

/* The projection to render with: the user's, else the command's columns
 * ("HEADER=key,...") with the user's attributes. */
static int
effective(const struct output *o, const char *columns, struct resproj *p,
    struct tpu_err *err)
{
	struct buf b;
	const char *c, *q, *eq;
	int i, rc;

	resproj_init(p);
	buf_init(&b, BUF_NOCAP);
	buf_puts(&b, "table");
	if (o->proj.nattrs > 0) {
		buf_puts(&b, "[");
		for (i = 0; i < o->proj.nattrs; i++) {
			const struct resproj_attr *a = &o->proj.attrs[i];
			const char *v;

			buf_printf(&b, "%s%s%s", i > 0 ? "," : "",
			    a->no ? "no-" : "", a->name);
			if (a->value == NULL)
				continue;
			buf_puts(&b, "='");
			for (v = a->value; *v != '\0'; v++) {
				if (*v == '\'' || *v == '\\')
					buf_puts(&b, "\\");
				if (*v == '\n')
					buf_puts(&b, "\\n");
				else if (*v == '\t')
					buf_puts(&b, "\\t");
				else
					buf_append(&b, v, 1);
			}
			buf_puts(&b, "'");
		}
		buf_puts(&b, "]");
	}
	buf_puts(&b, "(");
	for (c = columns; *c != '\0'; c = *q != '\0' ? q + 1 : q) {
		q = c + strcspn(c, ",");
		eq = memchr(c, '=', (size_t)(q - c));
		if (eq == NULL || eq == c || eq + 1 == q) {
			buf_release(&b);
			return tpu_error(err, TPU_E_INTERNAL,
			    "bad column spec '%s'", columns);
		}
		buf_printf(&b, "%s%.*s:label='%.*s'", c != columns ? "," : "",
		    (int)(q - eq - 1), eq + 1, (int)(eq - c), c);
	}
	buf_puts(&b, ")");
	rc = resproj_parse(p, b.data, err);
	buf_release(&b);
	return rc;
}

/* The terminal width of code point c, as gcloud's DisplayWidth: 0 for
 * combining marks and zero-width spaces, 2 for East Asian wide and full
 * width characters (the main blocks), 1 otherwise. */
static int
cp_width(unsigned long c)
{
	static const unsigned long zero[][2] = { { 0x300, 0x36f },
		{ 0x483, 0x489 }, { 0x591, 0x5bd }, { 0x610, 0x61a },
		{ 0x64b, 0x65f }, { 0x1ab0, 0x1aff }, { 0x1dc0, 0x1dff },
		{ 0x200b, 0x200f }, { 0x20d0, 0x20ff }, { 0xfe00, 0xfe0f },
		{ 0xfe20, 0xfe2f } };
	static const unsigned long wide[][2] = { { 0x1100, 0x115f },
		{ 0x231a, 0x231b }, { 0x2329, 0x232a }, { 0x23e9, 0x23ec },
		{ 0x25fd, 0x25fe }, { 0x2614, 0x2615 }, { 0x2648, 0x2653 },
		{ 0x26aa, 0x26ab }, { 0x26bd, 0x26be }, { 0x26c4, 0x26c5 },
		{ 0x2705, 0x2705 }, { 0x270a, 0x270b }, { 0x2728, 0x2728 },
		{ 0x274c, 0x274c }, { 0x2753, 0x2757 }, { 0x2795, 0x2797 },
		{ 0x2b1b, 0x2b1c }, { 0x2b50, 0x2b55 }, { 0x2e80, 0x303e },
		{ 0x3041, 0x33ff }, { 0x3400, 0x4dbf }, { 0x4e00, 0x9fff },
		{ 0xa000, 0xa4cf }, { 0xa960, 0xa97f }, { 0xac00, 0xd7a3 },
		{ 0xf900, 0xfaff }, { 0xfe10, 0xfe19 }, { 0xfe30, 0xfe6f },
		{ 0xff00, 0xff60 }, { 0xffe0, 0xffe6 }, { 0x1f004, 0x1f004 },
		{ 0x1f18e, 0x1f18e }, { 0x1f191, 0x1f19a },
		{ 0x1f200, 0x1f251 }, { 0x1f300, 0x1f64f },
		{ 0x1f680, 0x1f6ff }, { 0x1f900, 0x1f9ff },
		{ 0x20000, 0x2fffd }, { 0x30000, 0x3fffd } };
	size_t i;

	for (i = 0; i < sizeof zero / sizeof zero[0]; i++)
		if (c >= zero[i][0] && c <= zero[i][1])
			return 0;
	for (i = 0; i < sizeof wide / sizeof wide[0]; i++)
		if (c >= wide[i][0] && c <= wide[i][1])
			return 2;
	return 1;
}

/* The next code point of UTF-8 text at *s (advanced); an invalid byte
 * counts as one character. */
static unsigned long
next_cp(const char **s)
{
	const unsigned char *p = (const unsigned char *)*s;
	size_t n = tpu_utf8_len(p), i;
	unsigned long c;

	if (n <= 1) {
		(*s)++;
		return *p;
	}
	c = *p & (0xff >> (n + 1));
	for (i = 1; i < n; i++)
		c = (c << 6) | (p[i] & 0x3f);
	*s += n;
	return c;
}

/* Code points of UTF-8 text (Python's len(), which flattened pads by). */
static size_t
ncp(const char *s)
{
	size_t n = 0;

	while (*s != '\0') {
		next_cp(&s);
		n++;
	}
	return n;
}

/* Display width of a line of text. */
static size_t
width(const char *s)
{
	size_t n = 0;

	while (*s != '\0')
		n += (size_t)cp_width(next_cp(&s));
	return n;
}

static void
pad(struct buf *b, size_t n)
{
	while (n-- > 0)
		buf_append(b, " ", 1);
}

/* Python's str.center(w). */
static void
center(struct buf *b, const char *s, size_t w)
{
	size_t len = width(s), marg, left;

	if (len >= w) {
		buf_puts(b, s);
		return;
	}
	marg = w - len;
	left = marg / 2 + (marg & w & 1);
	pad(b, left);
	buf_puts(b, s);
	pad(b, marg - left);
}

static void
justify(struct buf *b, const char *s, size_t w, enum resproj_align a)
{
	size_t len = width(s);

	if (a == RESPROJ_CENTER)
		center(b, s, w);
	else if (a == RESPROJ_RIGHT) {
		pad(b, len < w ? w - len : 0);
		buf_puts(b, s);
	} else {
		buf_puts(b, s);
		pad(b, len < w ? w - len : 0);
	}
}

/* A table cell: str() of the value, floats as gcloud's float(). */
static char *
cell(const cJSON *v)
{
	struct buf b;
	char *p;

	buf_init(&b, BUF_NOCAP);
	if (v != NULL && !cJSON_IsNull(v))
		resproj_str(&b, v, 1);
	/* A cell with newlines takes several lines, as in gcloud (a final
	 * newline adds none).  XXX: tabs and CRs print as spaces. */
	for (p = b.data; *p != '\0'; p++)
		if (*p == '\r' || *p == '\t')
			*p = ' ';
	if (b.len > 0 && b.data[b.len - 1] == '\n')
		b.data[--b.len] = '\0';
	return buf_detach(&b, NULL);
}

/* The widest line of a cell. */
static size_t
cell_width(const char *s)
{
	size_t w = 0, n = 0;

	while (*s != '\0') {
		if (*s == '\n') {
			w = n > w ? n : w;
			n = 0;
			s++;
		} else
			n += (size_t)cp_width(next_cp(&s));
	}
	return n > w ? n : w;
}

/* Line k of a cell into b ("" past its end); 1 when there are more. */
static int
cell_line(struct buf *b, const char *s, int k)
{
	const char *e;

	buf_clear(b);
	for (; k > 0 && s != NULL; k--)
		if ((s = strchr(s, '\n')) != NULL)
			s++;
	if (s == NULL)
		return 0;
	e = strchr(s, '\n');
	buf_append(b, s, e != NULL ? (size_t)(e - s) : strlen(s));
	return e != NULL;
}

struct row {
	char **cells;
	const cJSON *rec;
	size_t seq;
};

static const struct resproj *sort_proj;
static int sort_col;

static int
row_cmp(const void *pa, const void *pb)
{
	const struct row *a = pa, *b = pb;
	const char *x = a->cells[sort_col], *y = b->cells[sort_col];
	int r = strcmp(x, y);

	/* gcloud sorts numbers before strings, by value */
	{
		char *ex, *ey;
		double dx = strtod(x, &ex), dy = strtod(y, &ey);
		int nx = *x != '\0' && *ex == '\0',
		    ny = *y != '\0' && *ey == '\0';

		if (nx && ny)
			r = (dx > dy) - (dx < dy);
		else if (nx != ny)
			r = nx ? -1 : 1;
	}
	if (r == 0)
		r = (a->seq > b->seq) - (a->seq < b->seq);
	return r;
}

static void
table_sort(const struct resproj *p, struct row *rows, size_t n)
{
	int order, i, maxo = 0;
	size_t k;

	for (i = 0; i < p->ncols; i++)
		if (p->cols[i].sort > maxo)
			maxo = p->cols[i].sort;
	/* stable sorts from the least significant key to the most */
	for (order = maxo; order >= 1; order--)
		for (i = p->ncols - 1; i >= 0; i--) {
			if (p->cols[i].sort != order)
				continue;
			for (k = 0; k < n; k++)
				rows[k].seq = p->cols[i].reverse ? n - k : k;
			sort_proj = p;
			sort_col = i;
			qsort(rows, n, sizeof *rows, row_cmp);
			if (p->cols[i].reverse)
				for (k = 0; k < n / 2; k++) {
					struct row t = rows[k];

					rows[k] = rows[n - 1 - k];
					rows[n - 1 - k] = t;
				}
		}
}

static void
box_rule(struct buf *b, const size_t *w, int ncol, const char *l, const char *m,
    const char *r)
{
	int j;
	size_t k;

	for (j = 0; j < ncol; j++) {
		buf_puts(b, j == 0 ? l : m);
		for (k = 0; k < w[j] + 2; k++)
			buf_puts(b, "\xe2\x94\x80");
	}
	buf_puts(b, r);
	buf_puts(b, "\n");
}

static void
emit_table(FILE *fp, const struct resproj *p, const cJSON *r)
{
	const char *V = "\xe2\x94\x82", *title = NULL, *padv = NULL;
	int single = !cJSON_IsArray(r), ncol = p->ncols, j, box, heading;
	int colpad = 2, allbox;
	const cJSON *rec;
	struct row *rows = NULL;
	size_t nrow = 0, i, *w;
	char **hdr;
	struct buf b, line;

	allbox = resproj_attr(p, "all-box", NULL);
	box = allbox || resproj_attr(p, "box", NULL);
	heading = !resproj_attr(p, "no-heading", NULL);
	resproj_attr(p, "title", &title);
	if (resproj_attr(p, "pad", &padv) && padv != NULL) {
		const char *bad = NULL;
		long long n = tpu_strtonum(padv, 0, 100, &bad);

		if (bad == NULL)
			colpad = (int)n;
	}
	if (box)
		colpad = 1;
	for (rec = single ? r : r->child; rec != NULL;
	     rec = single ? NULL : rec->next) {
		rows = xreallocarray(rows, nrow + 1, sizeof *rows);
		rows[nrow].cells = xcalloc((size_t)ncol, sizeof(char *));
		rows[nrow].rec = rec;
		rows[nrow].seq = nrow;
		for (j = 0; j < ncol; j++) {
			cJSON *v = resproj_eval(&p->cols[j].key, rec);

			rows[nrow].cells[j] = cell(v);
			cJSON_Delete(v);
		}
		nrow++;
	}
	if (nrow == 0) {
		free(rows);
		return;
	}
	table_sort(p, rows, nrow);
	w = xcalloc((size_t)ncol, sizeof *w);
	hdr = resproj_labels(p);
	for (j = 0; j < ncol; j++) {
		for (i = 0; i < nrow; i++)
			if (cell_width(rows[i].cells[j]) > w[j])
				w[j] = cell_width(rows[i].cells[j]);
		if (heading && width(hdr[j]) > w[j])
			w[j] = width(hdr[j]);
		if (p->cols[j].width > 0 && w[j] < (size_t)p->cols[j].width)
			w[j] = (size_t)p->cols[j].width;
	}
	buf_init(&b, BUF_NOCAP);
	if (title != NULL) {
		size_t tw = 0, tl = width(title), add;

		for (j = 0; j < ncol; j++)
			tw += w[j];
		if (tw < tl) {
			add = (tl + (size_t)ncol - 1) / (size_t)ncol;
			tw += (size_t)ncol * add;
			for (j = 0; j < ncol; j++)
				w[j] += add;
		}
		if (box) {
			size_t k;

			buf_puts(&b, "\xe2\x94\x8c");
			for (k = 0; k < tw + 3 * (size_t)ncol - 1; k++)
				buf_puts(&b, "\xe2\x94\x80");
			buf_puts(&b, "\xe2\x94\x90\n");
			buf_puts(&b, V);
			center(&b, title, tw + 3 * (size_t)ncol - 1);
			buf_puts(&b, V);
		} else {
			tw += (size_t)colpad * (size_t)(ncol - 1);
			center(&b, title, tw);
			while (b.len > 0 && b.data[b.len - 1] == ' ')
				b.data[--b.len] = '\0';
		}
		buf_puts(&b, "\n");
	}
	if (box) {
		if (title != NULL)
			box_rule(&b, w, ncol, "\xe2\x94\x9c", "\xe2\x94\xac",
			    "\xe2\x94\xa4");
		else
			box_rule(&b, w, ncol, "\xe2\x94\x8c", "\xe2\x94\xac",
			    "\xe2\x94\x90");
		if (heading) {
			for (j = 0; j < ncol; j++) {
				buf_puts(&b, V);
				buf_puts(&b, " ");
				center(&b, hdr[j], w[j]);
				buf_puts(&b, " ");
			}
			buf_puts(&b, V);
			buf_puts(&b, "\n");
			box_rule(&b, w, ncol, "\xe2\x94\x9c", "\xe2\x94\xbc",
			    "\xe2\x94\xa4");
		}
	}
	buf_init(&line, BUF_NOCAP);
	for (i = 0; i < nrow + (heading && !box); i++) {
		int hrow = heading && !box && i == 0, k, more = 1;
		char **cells = hrow ? hdr : rows[i - (heading && !box)].cells;

		if (box && allbox && i > 0)
			box_rule(&b, w, ncol, "\xe2\x94\x9c", "\xe2\x94\xbc",
			    "\xe2\x94\xa4");
		for (k = 0; more; k++) {
			size_t pend = 0;

			more = 0;
			for (j = 0; j < ncol; j++) {
				enum resproj_align a = p->cols[j].align;
				struct buf c;
				size_t stripped;

				more |= cell_line(&line, cells[j], k);
				if (box) {
					buf_puts(&b, V);
					buf_puts(&b, " ");
					justify(&b, line.data, w[j], a);
					pad(&b, (size_t)colpad);
					continue;
				}
				buf_init(&c, BUF_NOCAP);
				justify(&c, line.data, w[j], a);
				stripped = c.len;
				while (
				    stripped > 0 && c.data[stripped - 1] == ' ')
					stripped--;
				if (stripped > 0) {
					pad(&b, pend);
					buf_append(&b, c.data, stripped);
					pend =
					    (size_t)colpad + (c.len - stripped);
				} else
					pend += (size_t)colpad + width(c.data);
				buf_release(&c);
			}
			if (box)
				buf_puts(&b, V);
			buf_puts(&b, "\n");
		}
	}
	buf_release(&line);
	if (box)
		box_rule(&b, w, ncol, "\xe2\x94\x94", "\xe2\x94\xb4",
		    "\xe2\x94\x98");
	fputs(b.data, fp);
	buf_release(&b);
	for (i = 0; i < nrow; i++) {
		for (j = 0; j < ncol; j++)
			free(rows[i].cells[j]);
		free(rows[i].cells);
	}
	free(rows);
	for (j = 0; j < ncol; j++)
		free(hdr[j]);
	free(hdr);
	free(w);
}

/* value(), get() and csv: one record per resource. */
static void
emit_csv(FILE *fp, const struct resproj *p, const cJSON *r, int csv)
{
	const char *delim = ";", *sep = csv ? "," : "\t", *term = "\n", *v;
	int single = !cJSON_IsArray(r), j, quote = csv;
	const cJSON *rec, *it;
	struct buf line, f;

	if (resproj_attr(p, "delimiter", &v) && v != NULL)
		delim = v;
	if (resproj_attr(p, "separator", &v) && v != NULL)
		sep = v;
	if (resproj_attr(p, "terminator", &v) && v != NULL)
		term = v;
	if (csv && resproj_attr(p, "no-quote", NULL))
		quote = 0;
	for (j = 0; j < p->nattrs; j++)
		if (strcmp(p->attrs[j].name, "quote") == 0)
			quote = !p->attrs[j].no;
	buf_init(&line, BUF_NOCAP);
	buf_init(&f, BUF_NOCAP);
#define QUOTED(s)                                                              \
	do {                                                                   \
		const char *s_ = (s);                                          \
		size_t n_ = strlen(s_);                                        \
		if (quote && n_ > 0 &&                                         \
		    (strstr(s_, delim) || strchr(s_, '"') ||                   \
		        strstr(s_, sep) || strstr(s_, term) ||                 \
		        isspace((unsigned char)s_[0]) ||                       \
		        isspace((unsigned char)s_[n_ - 1]))) {                 \
			const char *c_;                                        \
			buf_puts(&line, "\"");                                 \
			for (c_ = s_; *c_ != '\0'; c_++)                       \
				buf_puts(&line,                                \
				    *c_ == '"' ? "\"\"" : (char[]){ *c_, 0 }); \
			buf_puts(&line, "\"");                                 \
		} else                                                         \
			buf_puts(&line, s_);                                   \
	} while (0)
	if (csv && !resproj_attr(p, "no-heading", NULL)) {
		char **labels = resproj_labels(p);

		for (j = 0; j < p->ncols; j++) {
			char *l = labels[j], *c;

			for (c = l; *c != '\0'; c++)
				*c = (char)tolower((unsigned char)*c);
			if (j > 0)
				buf_puts(&line, sep);
			QUOTED(l);
		}
		resproj_labels_free(labels);
		buf_puts(&line, term);
	}
	for (rec = single ? r : r->child; rec != NULL;
	     rec = single ? NULL : rec->next) {
		for (j = 0; j < p->ncols; j++) {
			cJSON *val = resproj_eval(&p->cols[j].key, rec);
			cJSON *sorted = NULL;

			if (j > 0)
				buf_puts(&line, sep);
			buf_clear(&f);
			if (val == NULL || cJSON_IsNull(val))
				;
			else if (cJSON_IsObject(val)) {
				sorted = resproj_sorted(val);
				cJSON_ArrayForEach(it, sorted)
				{
					char *kv;

					buf_clear(&f);
					buf_printf(&f, "%s=", it->string);
					resproj_str(&f, it, 0);
					kv = xstrdup(f.data);
					if (it != sorted->child)
						buf_puts(&line, delim);
					QUOTED(kv);
					free(kv);
				}
				buf_clear(&f);
			} else if (cJSON_IsArray(val)) {
				cJSON_ArrayForEach(it, val)
				{
					char *s;

					if (it != val->child)
						buf_puts(&line, delim);
					if (!resproj_truthy(it))
						continue;
					buf_clear(&f);
					resproj_str(&f, it, 0);
					s = xstrdup(f.data);
					QUOTED(s);
					free(s);
				}
				buf_clear(&f);
			} else {
				resproj_str(&f, val, 1);
				QUOTED(f.data);
			}
			cJSON_Delete(sorted);
			cJSON_Delete(val);
		}
		buf_puts(&line, term);
		fwrite(line.data, 1, line.len, fp);
		buf_clear(&line);
	}
#undef QUOTED
	fwrite(line.data, 1, line.len, fp);
	buf_release(&line);
	buf_release(&f);
}

/* Copy the part of src that key segments seg[0..n) select into *dst
 * (created as needed); the transforms apply at the leaf. */
static void
project_into(
    cJSON **dst, const cJSON *src, const struct resproj_key *key, int i)
{
	const struct resproj_seg *seg = &key->segs[i];
	const cJSON *it;
	cJSON *child;
	int k, size;

	if (src == NULL)
		return;
	if (i == key->nsegs) {
		struct resproj_key leaf = *key;

		leaf.segs = NULL;
		leaf.nsegs = 0;
		cJSON_Delete(*dst);
		*dst = resproj_eval(&leaf, src);
		return;
	}
	if (seg->kind == RESPROJ_NAME && cJSON_IsObject(src)) {
		if ((it = cJSON_GetObjectItemCaseSensitive(src, seg->name)) ==
		    NULL)
			return;
		if (!cJSON_IsObject(*dst)) {
			cJSON_Delete(*dst);
			*dst = cJSON_CreateObject();
		}
		child =
		    cJSON_DetachItemFromObjectCaseSensitive(*dst, seg->name);
		project_into(&child, it, key, i + 1);
		if (child != NULL)
			cJSON_AddItemToObject(*dst, seg->name, child);
		return;
	}
	if (!cJSON_IsArray(src))
		return;
	size = cJSON_GetArraySize(src);
	if (!cJSON_IsArray(*dst)) {
		cJSON_Delete(*dst);
		*dst = cJSON_CreateArray();
	}
	while (cJSON_GetArraySize(*dst) < size)
		cJSON_AddItemToArray(*dst, cJSON_CreateNull());
	for (k = 0; k < size; k++) {
		long want = seg->index < 0 ? seg->index + size : seg->index;

		if (seg->kind == RESPROJ_INDEX && k != want)
			continue;
		child = cJSON_DetachItemFromArray(*dst, k);
		if (cJSON_IsNull(child)) {
			cJSON_Delete(child);
			child = NULL;
		}
		project_into(&child, cJSON_GetArrayItem(src, k), key,
		    i + (seg->kind == RESPROJ_NAME ? 0 : 1));
		cJSON_InsertItemInArray(
		    *dst, k, child != NULL ? child : cJSON_CreateNull());
	}
}

/* A resource through a projection: the selected keys at their places
 * (json(name,labels.env) and the like). */
static cJSON *
project(const struct resproj *p, char **labels, const cJSON *rec)
{
	cJSON *out = cJSON_CreateObject();
	int j;

	for (j = 0; j < p->ncols; j++) {
		const struct resproj_key *key = &p->cols[j].key;

		if (key->nsegs == 0) {
			cJSON *v = resproj_eval(key, rec);

			if (v != NULL)
				cJSON_AddItemToObject(out, labels[j], v);
			continue;
		}
		project_into(&out, rec, key, 0);
	}
	return out;
}

/* The result as json/yaml/flattened print it: projected, keys sorted. */
static cJSON *
prepared(const struct resproj *p, const cJSON *r)
{
	cJSON *out, *tmp;
	const cJSON *it;
	char **labels;

	if (p->ncols == 0)
		return resproj_sorted(r);
	labels = resproj_labels(p);
	if (!cJSON_IsArray(r)) {
		tmp = project(p, labels, r);
		out = resproj_sorted(tmp);
		cJSON_Delete(tmp);
		resproj_labels_free(labels);
		return out;
	}
	out = cJSON_CreateArray();
	cJSON_ArrayForEach(it, r)
	{
		tmp = project(p, labels, it);
		cJSON_AddItemToArray(out, resproj_sorted(tmp));
		cJSON_Delete(tmp);
	}
	resproj_labels_free(labels);
	return out;
}

/* Pretty JSON with two-space indents, as gcloud prints it. */
static void
pretty(struct buf *b, const cJSON *it, int depth)
{
	const cJSON *c;
	char *s;
	int open = cJSON_IsObject(it) ? '{' : cJSON_IsArray(it) ? '[' : 0;

	if (open == 0 || it->child == NULL) {
		s = json_print(it, 0);
		buf_puts(b, s);
		cJSON_free(s);
		return;
	}
	buf_printf(b, "%c\n", open);
	cJSON_ArrayForEach(c, it)
	{
		buf_printf(b, "%*s", 2 * (depth + 1), "");
		if (open == '{') {
			cJSON key = { 0 };

			key.type = cJSON_String;
			key.valuestring = c->string;
			s = json_print(&key, 0);
			buf_printf(b, "%s: ", s);
			cJSON_free(s);
		}
		pretty(b, c, depth + 1);
		buf_puts(b, c->next != NULL ? ",\n" : "\n");
	}
	buf_printf(b, "%*s%c", 2 * depth, "", open == '{' ? '}' : ']');
}

static void
emit_json(FILE *fp, const cJSON *r, int lines)
{
	const cJSON *c;
	char *s;

	if (!lines) {
		struct buf b;

		buf_init(&b, BUF_NOCAP);
		pretty(&b, r, 0);
		fputs(b.data, fp);
		fputc('\n', fp);
		buf_release(&b);
		return;
	}
	if (!cJSON_IsArray(r)) {
		s = json_print(r, 0);
		fputs(s, fp);
		fputc('\n', fp);
		cJSON_free(s);
		return;
	}
	cJSON_ArrayForEach(c, r)
	{
		s = json_print(c, 0);
		fputs(s, fp);
		fputc('\n', fp);
		cJSON_free(s);
	}
}

/* flattened: key paths and values, one per line. */
static void
flat_collect(
    const cJSON *v, struct buf *key, char ***keys, char ***vals, size_t *n)
{
	const cJSON *c;
	size_t keep = key->len;
	struct buf b;

	if (v == NULL || cJSON_IsNull(v))
		return;
	if ((cJSON_IsObject(v) || cJSON_IsArray(v)) && v->child != NULL) {
		int i = 0;

		cJSON_ArrayForEach(c, v)
		{
			if (cJSON_IsObject(v))
				buf_printf(key, "%s%s", keep > 0 ? "." : "",
				    c->string);
			else
				buf_printf(key, "[%d]", i);
			i++;
			flat_collect(c, key, keys, vals, n);
			key->len = keep;
			key->data[keep] = '\0';
		}
		return;
	}
	buf_init(&b, BUF_NOCAP);
	resproj_str(&b, v, 1);
	if (strchr(b.data, '\n') != NULL ||
	    (b.len > 0 && (isspace((unsigned char)b.data[0]) ||
	                      isspace((unsigned char)b.data[b.len - 1])))) {
		/* gcloud's _StringQuote */
		struct buf q;
		const char *c;

		buf_init(&q, BUF_NOCAP);
		buf_puts(&q, "\"");
		for (c = b.data; *c != '\0'; c++) {
			if (*c == '\\' || *c == '"')
				buf_printf(&q, "\\%c", *c);
			else if (*c == '\n')
				buf_puts(&q, "\\n");
			else if (*c == '\r')
				buf_puts(&q, "\\r");
			else if (*c == '\t')
				buf_puts(&q, "\\t");
			else if (*c == '\f')
				buf_puts(&q, "\\f");
			else
				buf_append(&q, c, 1);
		}
		buf_puts(&q, "\"");
		buf_release(&b);
		b = q;
	}
	*keys = xreallocarray(*keys, *n + 1, sizeof **keys);
	*vals = xreallocarray(*vals, *n + 1, sizeof **vals);
	(*keys)[*n] = xstrdup(key->data);
	(*vals)[*n] = buf_detach(&b, NULL);
	(*n)++;
}

/* gcloud's GetKeyName: a.b[0].c, [] for every item. */
static char *
key_name(const struct resproj_key *k)
{
	struct buf b;
	int i;

	buf_init(&b, BUF_NOCAP);
	for (i = 0; i < k->nsegs; i++) {
		const struct resproj_seg *s = &k->segs[i];

		if (s->kind == RESPROJ_NAME)
			buf_printf(&b, "%s%s", b.len > 0 ? "." : "", s->name);
		else if (s->kind == RESPROJ_INDEX)
			buf_printf(&b, "[%ld]", s->index);
		else
			buf_puts(&b, "[]");
	}
	return buf_detach(&b, NULL);
}

static void
emit_flat(FILE *fp, const struct resproj *p, const cJSON *r)
{
	const char *sep = ": ";
	int single = !cJSON_IsArray(r), nopad, j;
	char **labels, **names;
	const cJSON *rec;
	struct buf key;

	if (resproj_attr(p, "separator", &sep) && sep != NULL)
		;
	else
		sep = ": ";
	nopad = resproj_attr(p, "no-pad", NULL);
	labels = resproj_labels(p);
	names = xcalloc((size_t)p->ncols + 1, sizeof *names);
	for (j = 0; j < p->ncols; j++)
		names[j] = key_name(&p->cols[j].key);
	buf_init(&key, BUF_NOCAP);
	for (rec = single ? r : r->child; rec != NULL;
	     rec = single ? NULL : rec->next) {
		char **keys = NULL, **vals = NULL;
		size_t n = 0, i, w = 0;

		buf_clear(&key);
		flat_collect(rec, &key, &keys, &vals, &n);
		/* a key that is a projection key prints as its label */
		for (i = 0; i < n; i++)
			for (j = 0; j < p->ncols; j++) {
				char *c;

				if (strcmp(names[j], keys[i]) != 0)
					continue;
				free(keys[i]);
				keys[i] = xstrdup(labels[j]);
				for (c = keys[i]; *c != '\0'; c++)
					*c = (char)tolower((unsigned char)*c);
				break;
			}
		if (!single)
			fputs("---\n", fp);
		for (i = 0; i < n; i++)
			if (ncp(keys[i]) + ncp(sep) > w)
				w = ncp(keys[i]) + ncp(sep);
		for (i = 0; i < n; i++) {
			size_t k = ncp(keys[i]) + ncp(sep);

			fprintf(fp, "%s%s", keys[i], sep);
			for (; !nopad && k < w; k++)
				fputc(' ', fp);
			fprintf(fp, "%s\n", vals[i]);
			free(keys[i]);
			free(vals[i]);
		}
		free(keys);
		free(vals);
	}
	buf_release(&key);
	resproj_labels_free(labels);
	resproj_labels_free(names);
}

static int
child_cmp(const void *a, const void *b)
{
	return strcmp((*(const cJSON *const *)a)->string,
	    (*(const cJSON *const *)b)->string);
}

static cJSON *
list_sorted(const cJSON *r)
{
	const cJSON **kids = NULL, *it;
	size_t n = 0, i;
	cJSON *out;

	if (cJSON_IsArray(r)) {
		out = cJSON_CreateArray();
		cJSON_ArrayForEach(it, r)
		{
			cJSON_AddItemToArray(out, list_sorted(it));
		}
		return out;
	}
	if (!cJSON_IsObject(r))
		return cJSON_Duplicate(r, 1);
	cJSON_ArrayForEach(it, r)
	{
		kids = xreallocarray(kids, n + 1, sizeof *kids);
		kids[n++] = it;
	}
	if (n > 0)
		qsort(kids, n, sizeof *kids, child_cmp);
	out = cJSON_CreateObject();
	for (i = 0; i < n; i++)
		cJSON_AddItemToObject(
		    out, kids[i]->string, cJSON_Duplicate(kids[i], 1));
	free(kids);
	return out;
}

/* list: " - key: value" records (compact: one line). */
static void
emit_list(FILE *fp, const cJSON *r)
{
	int single = !cJSON_IsArray(r);
	const cJSON *rec, *c;
	struct buf b;

	buf_init(&b, BUF_NOCAP);
	for (rec = single ? r : r->child; rec != NULL;
	     rec = single ? NULL : rec->next) {
		if (!cJSON_IsObject(rec)) {
			buf_puts(&b, " - ");
			resproj_str(&b, rec, 0);
			buf_puts(&b, "\n");
			continue;
		}
		cJSON_ArrayForEach(c, rec)
		{
			if (cJSON_IsNull(c))
				continue;
			buf_printf(&b,
			    "%s%s: ", c == rec->child ? " - " : "   ",
			    c->string);
			resproj_str(&b, c, 0);
			buf_puts(&b, "\n");
		}
	}
	fputs(b.data, fp);
	buf_release(&b);
}

/* n or more digits (and '_' when us) at *p; advances. */
static int
digits(const char **p, const char *set, int n)
{
	int k = 0;

	while (**p != '\0' && strchr(set, **p) != NULL) {
		(*p)++;
		k++;
	}
	return k >= n;
}

/*
 * 1 if gcloud's YAML resolver (ruamel, YAML 1.2 with its int and
 * timestamp forms) would read the plain scalar s as something other than
 * a string: such strings are quoted, as gcloud quotes them.
 */
static int
yaml_ambiguous(const char *s)
{
	static const char *const words[] = { "true", "True", "TRUE", "false",
		"False", "FALSE", "null", "Null", "NULL", "~", ".nan", ".NaN",
		".NAN", "<<", "=" };
	const char *p = s, *q;
	size_t i;

	if (*s == '\0')
		return 1;
	for (i = 0; i < sizeof words / sizeof words[0]; i++)
		if (strcmp(s, words[i]) == 0)
			return 1;
	/* timestamps: YYYY-M-D... */
	q = s;
	if (isdigit((unsigned char)q[0]) && isdigit((unsigned char)q[1]) &&
	    isdigit((unsigned char)q[2]) && isdigit((unsigned char)q[3]) &&
	    q[4] == '-') {
		q += 5;
		if (digits(&q, "0123456789", 1) && *q == '-' &&
		    (q++, digits(&q, "0123456789", 1)) &&
		    (*q == '\0' || *q == 'T' || *q == 't' || *q == ' '))
			return 1;
	}
	if (*p == '+' || *p == '-')
		p++;
	if (strcmp(p, ".inf") == 0 || strcmp(p, ".Inf") == 0 ||
	    strcmp(p, ".INF") == 0)
		return 1;
	q = p;
	if (q[0] == '0' && (q[1] == 'x' || q[1] == 'b' || q[1] == 'o')) {
		const char *set = q[1] == 'x'   ? "0123456789abcdefABCDEF_"
		                  : q[1] == 'b' ? "01_"
		                                : "01234567_";

		q += 2;
		if (digits(&q, set, 1) && *q == '\0')
			return 1;
		q = p;
	}
	if (isdigit((unsigned char)*q)) {
		digits(&q, "0123456789_", 1);
		if (*q == '\0')
			return 1; /* int */
		if (*q == '.') {
			q++;
			digits(&q, "0123456789_", 0);
		}
		if (*q == 'e' || *q == 'E') {
			const char *e = q + 1;

			if (*e == '+' || *e == '-')
				e++;
			if (!digits(&e, "0123456789", 1) || *e != '\0')
				return 0;
			return 1;
		}
		return *q == '\0' && strchr(p, '.') != NULL;
	}
	if (*q == '.' && isdigit((unsigned char)q[1])) {
		q++;
		digits(&q, "0123456789_", 1);
		if (*q == '\0')
			return 1;
		if ((*q == 'e' || *q == 'E') && (q[1] == '+' || q[1] == '-')) {
			q += 2;
			return digits(&q, "0123456789", 1) && *q == '\0';
		}
	}
	return 0;
}

static int
yaml_write(void *data, unsigned char *buffer, size_t size)
{
	FILE *fp = data;

	return fwrite(buffer, 1, size, fp) == size && !ferror(fp);
}

/* s with invalid UTF-8 bytes replaced by U+FFFD, or NULL if valid. */
static char *
utf8_fix(const char *s)
{
	const unsigned char *p = (const unsigned char *)s;
	struct buf b;
	size_t n;

	for (; *p != '\0'; p += n)
		if ((n = tpu_utf8_len(p)) == 0)
			break;
	if (*p == '\0')
		return NULL;
	buf_init(&b, BUF_NOCAP);
	for (p = (const unsigned char *)s; *p != '\0'; p += n) {
		if ((n = tpu_utf8_len(p)) == 0) {
			buf_puts(&b, "\xef\xbf\xbd");
			n = 1;
		} else
			buf_append(&b, p, n);
	}
	return buf_detach(&b, NULL);
}

static int
yscalar(yaml_emitter_t *e, const char *s, int plain)
{
	yaml_scalar_style_t style = YAML_ANY_SCALAR_STYLE;
	yaml_event_t ev;
	char *fixed = utf8_fix(s);
	int ok;

	if (fixed != NULL)
		s = fixed;

	if (!plain) {
		if (*s == '\'')
			style = YAML_DOUBLE_QUOTED_SCALAR_STYLE;
		else if (yaml_ambiguous(s))
			style = YAML_SINGLE_QUOTED_SCALAR_STYLE;
		else if (strchr(s, '\n') != NULL)
			style = YAML_LITERAL_SCALAR_STYLE;
	}
	ok = yaml_scalar_event_initialize(&ev, NULL, NULL, (yaml_char_t *)s,
	         (int)strlen(s), 1, 1, style) &&
	     yaml_emitter_emit(e, &ev);
	free(fixed);
	return ok;
}

static int
ynode(yaml_emitter_t *e, const cJSON *it)
{
	yaml_event_t ev;
	const cJSON *c;
	char *s;
	int ok;

	if (cJSON_IsObject(it)) {
		if (!yaml_mapping_start_event_initialize(&ev, NULL, NULL, 1,
		        it->child == NULL ? YAML_FLOW_MAPPING_STYLE
		                          : YAML_BLOCK_MAPPING_STYLE) ||
		    !yaml_emitter_emit(e, &ev))
			return 0;
		cJSON_ArrayForEach(c, it)
		{
			if (!yscalar(e, c->string, 0) || !ynode(e, c))
				return 0;
		}
		return yaml_mapping_end_event_initialize(&ev) &&
		       yaml_emitter_emit(e, &ev);
	}
	if (cJSON_IsArray(it)) {
		if (!yaml_sequence_start_event_initialize(&ev, NULL, NULL, 1,
		        it->child == NULL ? YAML_FLOW_SEQUENCE_STYLE
		                          : YAML_BLOCK_SEQUENCE_STYLE) ||
		    !yaml_emitter_emit(e, &ev))
			return 0;
		cJSON_ArrayForEach(c, it)
		{
			if (!ynode(e, c))
				return 0;
		}
		return yaml_sequence_end_event_initialize(&ev) &&
		       yaml_emitter_emit(e, &ev);
	}
	if (cJSON_IsString(it))
		return yscalar(e, it->valuestring, 0);
	if (cJSON_IsBool(it))
		return yscalar(e, cJSON_IsTrue(it) ? "true" : "false", 1);
	if (cJSON_IsNumber(it)) {
		s = json_print(it, 0);
		ok = yscalar(e, s, 1);
		cJSON_free(s);
		return ok;
	}
	return yscalar(e, "null", 1);
}

static int
emit_yaml(FILE *fp, const cJSON *r, struct tpu_err *err)
{
	yaml_emitter_t e;
	yaml_event_t ev;
	const cJSON *doc;
	int single = !cJSON_IsArray(r), ok = 0, rc = 0;

	if (!yaml_emitter_initialize(&e))
		TPU_BUG("yaml_emitter_initialize failed");
	yaml_emitter_set_output(&e, yaml_write, fp);
	yaml_emitter_set_unicode(&e, 1);
	yaml_emitter_set_width(&e, -1);
	yaml_emitter_set_indent(&e, 2);
	if (!yaml_stream_start_event_initialize(&ev, YAML_UTF8_ENCODING) ||
	    !yaml_emitter_emit(&e, &ev))
		goto out;
	/* A list is a stream of documents, as gcloud prints it. */
	for (doc = single ? r : r->child; doc != NULL;
	     doc = single ? NULL : doc->next) {
		if (!yaml_document_start_event_initialize(
		        &ev, NULL, NULL, NULL, single) ||
		    !yaml_emitter_emit(&e, &ev) || !ynode(&e, doc) ||
		    !yaml_document_end_event_initialize(&ev, 1) ||
		    !yaml_emitter_emit(&e, &ev))
			goto out;
	}
	if (!yaml_stream_end_event_initialize(&ev) ||
	    !yaml_emitter_emit(&e, &ev) || !yaml_emitter_flush(&e))
		goto out;
	ok = 1;
out:
	if (!ok && e.error != YAML_WRITER_ERROR && e.problem != NULL)
		rc = tpu_error(err, TPU_E_INTERNAL, "yaml: %s", e.problem);
	else if (!ok)
		rc = tpu_error(err, TPU_E_IO, "write error on standard output");
	yaml_emitter_delete(&e);
	return rc;
}

int
output_emit(
    struct output *o, const cJSON *r, const char *columns, struct tpu_err *err)
{
	struct resproj eff;
	cJSON *prep = NULL;
	int rc = 0;

	resproj_init(&eff);
	switch (o->fmt) {
	case OUTPUT_NONE:
		break;
	case OUTPUT_JSON:
	case OUTPUT_JSONL:
		prep = prepared(&o->proj, r);
		emit_json(o->fp, prep, o->fmt == OUTPUT_JSONL);
		break;
	case OUTPUT_YAML:
		prep = prepared(&o->proj, r);
		rc = emit_yaml(o->fp, prep, err);
		break;
	case OUTPUT_FLAT:
		prep = prepared(&o->proj, r);
		emit_flat(o->fp, &o->proj, prep);
		break;
	case OUTPUT_LIST:
		/* list sorts the top-level keys only */
		prep =
		    o->proj.ncols > 0 ? prepared(&o->proj, r) : list_sorted(r);
		emit_list(o->fp, prep);
		break;
	case OUTPUT_VALUE:
	case OUTPUT_CSV:
		emit_csv(o->fp, &o->proj, r, o->fmt == OUTPUT_CSV);
		break;
	case OUTPUT_TABLE:
		if (o->proj.ncols > 0)
			emit_table(o->fp, &o->proj, r);
		else if (columns != NULL) {
			if ((rc = effective(o, columns, &eff, err)) == 0)
				emit_table(o->fp, &eff, r);
		} else {
			/* describe: YAML, keys sorted as gcloud prints */
			prep = resproj_sorted(r);
			rc = emit_yaml(o->fp, prep, err);
		}
		break;
	}
	cJSON_Delete(prep);
	resproj_release(&eff);
	if (rc != 0)
		return rc;
	return check_fp(o->fp, err);
}
