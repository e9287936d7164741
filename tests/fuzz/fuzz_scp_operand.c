/*
 * Fuzz the scp operand parser (NODE:path), the download path-safety rule
 * and the check of names read from a remote directory: no crash, a node
 * name is always valid, and every name kept stays one component under
 * the destination directory.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <libssh2_sftp.h>

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
		/* op.node is [USER@]NODE or [USER@]projects/.../nodes/NODE:
		 * the user is checked later (sshcmd), the node here */
		const char *n = op.node;

		if (n != NULL && strchr(n, '@') != NULL)
			n = strchr(n, '@') + 1;
		if (n != NULL && strrchr(n, '/') != NULL)
			n = strrchr(n, '/') + 1;
		if (n != NULL &&
		    (n[0] < 'a' || n[0] > 'z' || strlen(n) > 63 ||
		        strspn(n, "abcdefghijklmnopqrstuvwxyz0123456789-") !=
		            strlen(n)))
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
	for (i = 0; i < 2; i++) {
		unsigned long type =
		    i == 0 ? LIBSSH2_SFTP_S_IFREG : LIBSSH2_SFTP_S_IFDIR;
		size_t j;

		memset(&l, 0, sizeof l);
		tpu_err_init(&err);
		(void)sshxfer_remote_entry(&l, "top", "src", (const char *)data,
		    size, type | 0644, &err);
		for (j = 0; j < l.n; j++)
			if (strncmp(l.items[j].rel, "top/", 4) != 0 ||
			    strchr(l.items[j].rel + 4, '/') != NULL ||
			    strcmp(l.items[j].rel, "top/.") == 0 ||
			    strcmp(l.items[j].rel, "top/..") == 0 ||
			    l.items[j].rel[4] == '\0')
				abort();
		sshxfer_list_release(&l);
	}
	free(s);
	return 0;
}
