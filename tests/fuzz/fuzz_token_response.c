/*
 * Fuzz the token-reply parser (OAuth, STS, metadata and iamcredentials
 * shapes): no crash or leak; a token it accepts has no whitespace.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "auth.h"
#include "xmalloc.h"

int LLVMFuzzerTestOneInput(const uint8_t *, size_t);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct tpu_err err;
	char *tok = NULL;
	time_t exp = 0;

	tpu_err_init(&err);
	if (auth_parse_token_response(
	        (const char *)data, size, 1000000000, &tok, &exp, &err) == 0) {
		if (tok == NULL || strpbrk(tok, " \r\n") != NULL)
			abort();
		xfree_secret(tok);
	} else if (tok != NULL)
		abort();
	return 0;
}
