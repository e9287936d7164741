/*
 * Fuzz the emulator's own request rules (emulator/validate.c) and its
 * percent-encoding: no crash; a refusal is one printable line; what is
 * accepted keeps the documented limits (object names 1-1024 bytes with
 * no CR or LF, bucket names 3-222 bytes of [a-z0-9._-], RFC 1035 node
 * ids); encoding decodes back to the input.  The input is also tried as
 * a labels and a metadata JSON object.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "gcs_util.h"
#include "validate.h"
#include "xmalloc.h"

int LLVMFuzzerTestOneInput(const uint8_t *, size_t);

static void
one_line(int rc, const char *msg)
{
	const unsigned char *p;

	if (rc == 0)
		return;
	if (msg[0] == '\0')
		abort();
	for (p = (const unsigned char *)msg; *p != '\0'; p++)
		if (*p < 0x20 || *p == 0x7f)
			abort();
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *s, *enc, *dec, msg[512];
	cJSON *j;
	size_t n;
	int rc;

	s = xstrndup((const char *)data, size);
	n = strlen(s);
	msg[0] = '\0';
	rc = validate_object(s, msg, sizeof msg);
	one_line(rc, msg);
	if (rc == 0 && (n < 1 || n > 1024 || strpbrk(s, "\r\n") != NULL ||
	                   strcmp(s, ".") == 0 || strcmp(s, "..") == 0))
		abort();
	msg[0] = '\0';
	rc = validate_bucket(s, msg, sizeof msg);
	one_line(rc, msg);
	if (rc == 0 &&
	    (n < 3 || n > 222 ||
	        strspn(s, "abcdefghijklmnopqrstuvwxyz0123456789._-") != n))
		abort();
	msg[0] = '\0';
	rc = validate_node_id(s, msg, sizeof msg);
	one_line(rc, msg);
	if (rc == 0 &&
	    (n < 1 || n > 63 || s[0] < 'a' || s[0] > 'z' || s[n - 1] == '-' ||
	        strspn(s, "abcdefghijklmnopqrstuvwxyz0123456789-") != n))
		abort();
	msg[0] = '\0';
	one_line(validate_qr_id(s, msg, sizeof msg), msg);
	msg[0] = '\0';
	one_line(validate_tag(s, msg, sizeof msg), msg);
	msg[0] = '\0';
	one_line(validate_description(s, msg, sizeof msg), msg);
	msg[0] = '\0';
	one_line(validate_zone(s, msg, sizeof msg), msg);
	one_line(validate_cidr_block(s, msg, sizeof msg), msg);
	one_line(validate_kms_key(s, msg, sizeof msg), msg);
	if ((j = cJSON_ParseWithOpts(s, NULL, 1)) != NULL) {
		msg[0] = '\0';
		one_line(validate_labels(j, msg, sizeof msg), msg);
		msg[0] = '\0';
		one_line(validate_metadata(j, msg, sizeof msg), msg);
		cJSON_Delete(j);
	}
	enc = gcsemu_pct_encode(s);
	if (strspn(enc, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
	                "0123456789-._~%") != strlen(enc))
		abort();
	dec = gcsemu_pct_decode(enc, strlen(enc));
	if (dec == NULL || strcmp(dec, s) != 0)
		abort();
	free(dec);
	free(enc);
	free(s);
	return 0;
}
