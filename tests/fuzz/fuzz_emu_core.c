/*
 * Fuzz the emulator core's request-path parsers: fault specs
 * (emulator/core_util.c), JSON and form bodies, request-log redaction of
 * hostile queries and headers, and JWT assertions (emulator/auth.c) checked
 * against a fixed RSA key.  The first byte picks the target.  Checks
 * invariants: a parsed fault is well-formed, a log line is valid JSON and
 * never carries a redacted value.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>
#include <openssl/bio.h>
#include <openssl/evp.h>
#include <openssl/pem.h>

#include "emu.h"
#include "xmalloc.h"

int LLVMFuzzerTestOneInput(const uint8_t *, size_t);

static char *pub;

static void
init_key(void)
{
	EVP_PKEY *k;
	BIO *b;
	char *p;
	long n;

	if (pub != NULL)
		return;
	k = EVP_RSA_gen(1024);
	b = BIO_new(BIO_s_mem());
	if (k == NULL || b == NULL || PEM_write_bio_PUBKEY(b, k) != 1)
		abort();
	n = BIO_get_mem_data(b, &p);
	pub = xstrndup(p, (size_t)n);
	BIO_free(b);
	EVP_PKEY_free(k);
}

static void
fuzz_fault(const char *s)
{
	struct emu_fault_action a;
	char err[512];

	if (emu_fault_parse(s, &a, err, sizeof(err)) != 0)
		return;
	if ((a.kind == EMU_FK_RETURN || a.kind == EMU_FK_RETURN_AFTER) &&
	    (a.code < 100 || a.code > 599))
		abort();
	if (a.bytes < 0 || a.secs < 0)
		abort();
}

static void
fuzz_form_and_log(const char *s, size_t n)
{
	static const char *const keys[] = { "grant_type", "assertion",
		"access_token", "", "a" };
	cJSON *h = cJSON_CreateObject(), *line;
	char *v, *l, why[128];
	size_t i;

	line = emu_json_object(s, n, why, sizeof(why));
	if (line != NULL && !cJSON_IsObject(line))
		abort();
	cJSON_Delete(line);
	for (i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
		v = emu_form_get(s, n, keys[i]);
		if (v != NULL && strlen(v) > n)
			abort();
		free(v);
	}
	cJSON_AddStringToObject(h, "Authorization", s);
	cJSON_AddStringToObject(h, "X-Other", s);
	l = emu_log_line(0, "GET", s, s, 200, n, n, 0, s, h);
	line = cJSON_Parse(l);
	if (line == NULL)
		abort();
	cJSON_Delete(line);
	free(l);
	cJSON_Delete(h);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *s, err[256];

	if (size < 1)
		return 0;
	s = xstrndup((const char *)data + 1, size - 1);
	switch (data[0] % 3) {
	case 0:
		fuzz_fault(s);
		break;
	case 1:
		fuzz_form_and_log(s, strlen(s));
		break;
	default:
		init_key();
		if (emu_auth_jwt_verify(s, pub, "k", "iss", "aud", NULL,
		        1700000000, err, sizeof(err)) == 0)
			abort(); /* nobody can sign with this key */
		break;
	}
	free(s);
	return 0;
}
