/*
 * libFuzzer target for src/sshsel.c: --worker and --node values straight
 * from the command line, and the ssh-keys metadata value of a node (any
 * text a project member wrote).  The first byte picks the number of
 * workers or slices; the rest is the string.  Checks: a selection only
 * marks items below n, the syntax check agrees with the full parse, and
 * a merged ssh-keys value holds the key afterwards and keeps every
 * existing byte.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "err.h"
#include "sshsel.h"

int LLVMFuzzerTestOneInput(const uint8_t *, size_t);

#define ENTRY "u:ssh-ed25519 AAAAC3Nz u"

static const char *const ids[] = { "p-0", "p-1", "p-2", "a", "b-7", "z" };

static void
check_sel(const unsigned char *sel, int n, size_t size)
{
	size_t i;

	for (i = (size_t)n; i < size; i++)
		if (sel[i] != 0)
			abort(); /* marked past the end */
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	unsigned char sel[80];
	struct tpu_err e;
	char *s, *merged;
	int n, syntax, full;

	if (size == 0)
		return 0;
	n = data[0] % 70;
	s = malloc(size);
	if (s == NULL)
		abort();
	memcpy(s, data + 1, size - 1);
	s[size - 1] = '\0';
	tpu_err_init(&e);

	memset(sel, 0, sizeof sel);
	syntax = sshsel_workers(s, -1, NULL, &e);
	full = sshsel_workers(s, n, sel, &e);
	check_sel(sel, n, sizeof sel);
	if (syntax != 0 && full == 0)
		abort(); /* bad syntax accepted against n workers */

	memset(sel, 0, sizeof sel);
	n = n % 7;
	syntax = sshsel_nodes(s, NULL, -1, NULL, &e);
	full = sshsel_nodes(s, ids, n, sel, &e);
	check_sel(sel, n, sizeof sel);
	if (syntax != 0 && full == 0)
		abort();

	merged = sshsel_keys_add(s, ENTRY);
	if (merged != NULL) {
		if (!sshsel_keys_has(merged, ENTRY) ||
		    strncmp(merged, s, strlen(s)) != 0)
			abort();
		free(merged);
	} else if (!sshsel_keys_has(s, ENTRY))
		abort();
	free(s);
	return 0;
}
