/*
 * "Did you mean": the nearest known word to a mistyped one, by
 * Damerau-Levenshtein distance (optimal string alignment: insertions,
 * deletions, substitutions and swaps of two adjacent characters).
 */
#ifndef TPUCTL_SUGGEST_H
#define TPUCTL_SUGGEST_H

#include <stddef.h>

/*
 * The optimal-string-alignment distance between a and b; strings longer
 * than SUGGEST_MAXLEN count as far from everything (SIZE_MAX).
 */
#define SUGGEST_MAXLEN 64
size_t suggest_distance(const char *a, const char *b);

/*
 * The candidate nearest to word, or NULL when none is close enough: the
 * distance may be at most 1 for words of up to 4 characters, 2 up to 8
 * and 3 beyond, and must be below the word's length (so "ab" does not
 * suggest "xy").  A tie goes to the earlier candidate.  NULL entries in
 * candidates are skipped.  The result is borrowed from candidates.
 */
const char *suggest_best(
    const char *word, const char *const *candidates, size_t n);

#endif
