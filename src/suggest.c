/*
 * Damerau-Levenshtein (optimal string alignment) for "did you mean".
 */
#include <stdint.h>
#include <string.h>

#include "suggest.h"

size_t
suggest_distance(const char *a, const char *b)
{
	size_t d[SUGGEST_MAXLEN + 1][SUGGEST_MAXLEN + 1];
	size_t la = strlen(a), lb = strlen(b), i, j, c, v;

	if (la > SUGGEST_MAXLEN || lb > SUGGEST_MAXLEN)
		return SIZE_MAX;
	for (i = 0; i <= la; i++)
		d[i][0] = i;
	for (j = 0; j <= lb; j++)
		d[0][j] = j;
	for (i = 1; i <= la; i++) {
		for (j = 1; j <= lb; j++) {
			c = a[i - 1] == b[j - 1] ? 0 : 1;
			v = d[i - 1][j] + 1;
			if (d[i][j - 1] + 1 < v)
				v = d[i][j - 1] + 1;
			if (d[i - 1][j - 1] + c < v)
				v = d[i - 1][j - 1] + c;
			if (i > 1 && j > 1 && a[i - 1] == b[j - 2] &&
			    a[i - 2] == b[j - 1] && d[i - 2][j - 2] + 1 < v)
				v = d[i - 2][j - 2] + 1;
			d[i][j] = v;
		}
	}
	return d[la][lb];
}

const char *
suggest_best(const char *word, const char *const *candidates, size_t n)
{
	size_t len = strlen(word), limit, best = SIZE_MAX, dist, i;
	const char *pick = NULL;

	limit = len <= 4 ? 1 : len <= 8 ? 2 : 3;
	if (limit >= len)
		limit = len > 0 ? len - 1 : 0;
	for (i = 0; i < n; i++) {
		if (candidates[i] == NULL)
			continue;
		dist = suggest_distance(word, candidates[i]);
		if (dist <= limit && dist < best) {
			best = dist;
			pick = candidates[i];
		}
	}
	return pick;
}
