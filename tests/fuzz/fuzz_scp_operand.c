/*
 * Fuzz the scp operand parser (NODE:path), the download path-safety rule
 * and the remote listing parser: no crash, a node name is always valid,
 * and every listed name stays under the destination.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "sshxfer.h"
#include "xmalloc.h"

int LLVMFuzzerTestOneInput(const uint8_t *, size_t);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct sshxfer_operand op;
	struct sshxfer_list l;
	struct tpu_err err;
	char *s, *b;
	size_t i;

	s = xstrndup((const char *)data, size);
	if (sshxfer_parse_operand(s, &op, &err) == 0) {
		if (op.node != NULL &&
		    (op.node[0] < 'a' || op.node[0] > 'z' ||
		        strlen(op.node) > 63 ||
		        strspn(
		            op.node, "abcdefghijklmnopqrstuvwxyz0123456789-") !=
		            strlen(op.node)))
			abort();
		sshxfer_operand_release(&op);
	}
	b = sshxfer_basename(s);
	if (strchr(b, '/') != NULL)
		abort();
	free(b);
	if (sshxfer_relpath_safe(s) &&
	    (s[0] == '/' || strncmp(s, "../", 3) == 0 || strcmp(s, "..") == 0 ||
	        strstr(s, "/../") || strstr(s, "//")))
		abort();
	memset(&l, 0, sizeof l);
	sshxfer_parse_listing((const char *)data, size, "top", "src", &l, &err);
	for (i = 0; i < l.n; i++)
		if (strncmp(l.items[i].rel, "top/", 4) != 0 ||
		    strstr(l.items[i].rel, "/../") != NULL ||
		    strstr(l.items[i].rel, "//") != NULL ||
		    (l.items[i].rel[strlen(l.items[i].rel) - 1] == '.' &&
		        l.items[i].rel[strlen(l.items[i].rel) - 2] == '/'))
			abort();
	sshxfer_list_release(&l);
	free(s);
	return 0;
}
