/*
 * Grouped fan-out summaries (see outgroup.h).
 */
#include <stdlib.h>
#include <string.h>

#include "outgroup.h"
#include "xmalloc.h"

static const char *
og_node(const struct outgroup_item *it)
{
	return it->node != NULL ? it->node : "";
}

/* Order of a group's members: node name, then worker number. */
static int
og_member_cmp(const struct outgroup_item *a, const struct outgroup_item *b)
{
	int c = strcmp(og_node(a), og_node(b));

	if (c != 0)
		return c;
	return (a->worker > b->worker) - (a->worker < b->worker);
}

/* By outcome, then member order, then place (pointers into one array). */
static int
og_cmp(const void *pa, const void *pb)
{
	const struct outgroup_item *a =
	    *(const struct outgroup_item *const *)pa;
	const struct outgroup_item *b =
	    *(const struct outgroup_item *const *)pb;
	int c = strcmp(a->what, b->what);

	if (c != 0)
		return c;
	c = og_member_cmp(a, b);
	if (c != 0)
		return c;
	return (a > b) - (a < b);
}

struct og_group {
	size_t start, len;                 /* in the sorted array */
	const struct outgroup_item *first; /* its earliest item */
};

static int
og_group_cmp(const void *pa, const void *pb)
{
	const struct og_group *a = pa, *b = pb;

	if (a->len != b->len)
		return a->len > b->len ? -1 : 1;
	return (a->first > b->first) - (a->first < b->first);
}

static int
og_name(struct buf *out, const struct outgroup_item *it)
{
	if (og_node(it)[0] != '\0')
		return buf_printf(out, "%s/w%d", it->node, it->worker);
	return buf_printf(out, "w%d", it->worker);
}

/* The pieces (names or ranges) of a sorted group; printed when out. */
static size_t
og_pieces(
    const struct outgroup_item *const *m, size_t len, struct buf *out, int *rc)
{
	size_t i = 0, np = 0;

	while (i < len) {
		const struct outgroup_item *a = m[i];
		size_t j = i;

		/* Run of consecutive numbers in one node (duplicates too). */
		while (j + 1 < len &&
		       strcmp(og_node(m[j + 1]), og_node(a)) == 0 &&
		       (m[j + 1]->worker == m[j]->worker + 1 ||
		           m[j + 1]->worker == m[j]->worker))
			j++;
		if (out != NULL) {
			if (np > 0 && buf_puts(out, ", ") != 0)
				*rc = -1;
			if (og_name(out, a) != 0)
				*rc = -1;
			if (m[j]->worker != a->worker &&
			    buf_printf(out, "-w%d", m[j]->worker) != 0)
				*rc = -1;
		}
		np++;
		i = j + 1;
	}
	return np;
}

int
outgroup_format(const struct outgroup_item *items, size_t n, struct buf *out)
{
	const struct outgroup_item **m;
	struct og_group *g;
	size_t i, ng = 0;
	int rc = 0;

	if (n == 0)
		return 0;
	m = xcalloc(n, sizeof *m);
	g = xcalloc(n, sizeof *g);
	for (i = 0; i < n; i++)
		m[i] = &items[i];
	qsort(m, n, sizeof *m, og_cmp);
	for (i = 0; i < n; i++) {
		if (i == 0 || strcmp(m[i]->what, m[i - 1]->what) != 0) {
			g[ng].start = i;
			g[ng].first = m[i];
			ng++;
		}
		g[ng - 1].len++;
		if (m[i] < g[ng - 1].first)
			g[ng - 1].first = m[i];
	}
	qsort(g, ng, sizeof *g, og_group_cmp);
	for (i = 0; i < ng && rc == 0; i++) {
		const struct outgroup_item *const *gm = m + g[i].start;
		const struct outgroup_item *low = gm[0];

		if (i > 0 && buf_puts(out, "; ") != 0)
			rc = -1;
		/* The largest group is counted when big: the rest name the
		   exceptions. */
		if ((i == 0 && g[i].len > OUTGROUP_MAX_PIECES) ||
		    og_pieces(gm, g[i].len, NULL, &rc) > OUTGROUP_MAX_PIECES) {
			if (buf_printf(out, "%zu workers", g[i].len) != 0)
				rc = -1;
		} else
			og_pieces(gm, g[i].len, out, &rc);
		if (buf_printf(out, ": %s", low->what) != 0)
			rc = -1;
		if (low->detail != NULL && low->detail[0] != '\0') {
			if (buf_puts(out, " (") != 0 ||
			    og_name(out, low) != 0 ||
			    buf_printf(out, ": %s)", low->detail) != 0)
				rc = -1;
		}
	}
	free(m);
	free(g);
	return rc;
}
