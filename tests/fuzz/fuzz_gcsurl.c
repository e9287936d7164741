/*
 * Fuzz gs:// URL parsing, name validation, percent-encoding and local
 * path mapping: no crash, and a mapped path always stays under the
 * destination directory.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "gcsurl.h"
#include "xmalloc.h"

int LLVMFuzzerTestOneInput(const uint8_t *, size_t);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct tpu_err err;
	struct gcs_url u;
	char *s, *enc, *path;

	s = xstrndup((const char *)data, size);
	if (gcs_url_parse(s, &u, &err) == 0)
		gcs_url_release(&u);
	gcs_bucket_validate(s, &err);
	gcs_object_validate(s, &err);
	enc = gcs_pct_encode(s);
	if (strspn(enc, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
	                "0123456789-._~%") != strlen(enc))
		abort();
	free(enc);
	path = gcs_local_path("/dst", "", s, &err);
	if (path != NULL) {
		if (strncmp(path, "/dst/", 5) != 0 ||
		    strstr(path, "/../") != NULL ||
		    strstr(path, "/./") != NULL || strstr(path, "//") != NULL)
			abort();
		free(path);
	}
	free(s);
	return 0;
}
