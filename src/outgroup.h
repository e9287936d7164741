/*
 * The summary of a fan-out to many workers, grouped: identical outcomes
 * share one entry, workers are named wN (NODE/wN in a queued resource)
 * with consecutive numbers folded into ranges; the largest group, when it
 * has more than OUTGROUP_MAX_PIECES workers, and any group naming more
 * pieces than that, is shown by its count.  For example
 *   2041 workers: exit 0; w17, w903: exit 1; w1200-w1204: connect
 *   timeout (w1200: ...)
 * Pure: the caller prints it.
 */
#ifndef TPUCTL_OUTGROUP_H
#define TPUCTL_OUTGROUP_H

#include <stddef.h>

#include "buf.h"

/* More names or ranges (or workers in the largest group): a count. */
#define OUTGROUP_MAX_PIECES 8

struct outgroup_item {
	const char *node;   /* NULL or "" in a single slice, else its name */
	int worker;         /* its number in the node */
	const char *what;   /* the outcome, the grouping key ("exit 1") */
	const char *detail; /* NULL, "" or what the first one says */
};

/*
 * Append the grouped summary of the n items to out (no newline): the
 * groups by size, largest first (a tie: the group whose first item comes
 * first), separated by "; ".  Each is "NAMES: WHAT" or "N workers: WHAT",
 * followed by " (NAME: DETAIL)" for the group's lowest-numbered worker
 * when it has a detail.  0, or -1 when out's cap was reached.
 */
int outgroup_format(
    const struct outgroup_item *items, size_t n, struct buf *out);

#endif
