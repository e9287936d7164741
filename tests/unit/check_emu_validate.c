/*
 * The emulator's own request rules (emulator/validate.c) against Google's
 * documentation, side by side with tpuctl's validators (src/catalog.c,
 * src/tpuvalid.c, src/gcsurl.c).  Each row is a value, what the emulator
 * must answer (Google's rule), what tpuctl answers, and the rule it
 * comes from.  Where the two differ the row says why: tpuctl stricter
 * on purpose (its ssh-keys line format, RFC 1035 queued resource ids,
 * ASCII labels), or a gap of the client that the emulator does not copy.
 *
 * Inputs may hold "{N*c}": the character c repeated N times.
 *
 * The rules, by the key each row cites:
 *   CE-NAME  Compute Engine resource names, 1-63 chars,
 *            [a-z]([-a-z0-9]*[a-z0-9])?:
 *            https://cloud.google.com/compute/docs/naming-resources
 *   QR-ID    tpu.v2.json queuedResources.create queuedResourceId: "Should
 *            follow the ^[A-Za-z0-9_.~+%-]+$ regex format"
 *   TAG      network tags, RFC 1035 as CE-NAME:
 *            https://cloud.google.com/vpc/docs/add-remove-network-tags
 *   DESC     tpu.v2.json Node.description: "Maximum of 512 characters."
 *   LABEL    "Requirements for labels": at most 64; keys 1-63 chars,
 *            values 0-63; lowercase letters, digits, '_', '-',
 *            international characters; keys start with a lowercase
 *            letter or an international character; keys unique:
 *            https://cloud.google.com/resource-manager/docs/labels-overview
 *   MD       tpu.v2.json Node.metadata: a map of strings; Compute Engine
 *            metadata items: keys [a-zA-Z0-9-_]+ of at most 128 bytes,
 *            values at most 262144 bytes, keys and values together less
 *            than 512 KB:
 *            https://cloud.google.com/compute/docs/metadata/setting-custom-metadata
 *   ZONE     zone = region-letter:
 *            https://cloud.google.com/compute/docs/regions-zones
 *   BUCKET   https://cloud.google.com/storage/docs/buckets#naming
 *   OBJECT   https://cloud.google.com/storage/docs/naming-objects
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <check.h>
#include <cjson/cJSON.h>

#include "catalog.h"
#include "gcsurl.h"
#include "tpu_logic.h"
#include "tpuvalid.h"
#include "validate.h"

enum kind {
	K_NODE_ID,
	K_QR_ID,
	K_TAG,
	K_DESC,
	K_LABELS,   /* input: a JSON object */
	K_LABELS_N, /* input: a count of labels "k0":"v" .. */
	K_METADATA, /* input: a JSON object */
	K_ZONE,
	K_BUCKET,
	K_OBJECT,
};

#define NONE (-1) /* tpuctl has no check of its own for this */

struct row {
	enum kind kind;
	const char *in;
	int emu_ok;    /* Google's answer, the emulator's */
	int client_ok; /* tpuctl's, or NONE */
	const char *rule;
};

static const struct row rows[] = {
	/* Node ids. */
	{ K_NODE_ID, "n1", 1, 1, "CE-NAME" },
	{ K_NODE_ID, "a", 1, 1, "CE-NAME: 1 character" },
	{ K_NODE_ID, "a-b-9", 1, 1, "CE-NAME: dashes and digits inside" },
	{ K_NODE_ID, "{63*a}", 1, 1, "CE-NAME: 63 characters" },
	{ K_NODE_ID, "{64*a}", 0, 0, "CE-NAME: at most 63" },
	{ K_NODE_ID, "", 0, 0, "CE-NAME: at least 1" },
	{ K_NODE_ID, "Bad_Name", 0, 0, "CE-NAME: lowercase, no '_'" },
	{ K_NODE_ID, "1abc", 0, 0, "CE-NAME: starts with a letter" },
	{ K_NODE_ID, "abc-", 0, 0, "CE-NAME: does not end with '-'" },
	/* Queued resource ids: tpuctl asks for an RFC 1035 name, stricter
	 * than the discovery document's pattern. */
	{ K_QR_ID, "qr1", 1, 1, "QR-ID" },
	{ K_QR_ID, "Bad", 1, 0, "QR-ID: A-Z allowed (tpuctl: RFC 1035)" },
	{ K_QR_ID, "a.b~c+d%2_e", 1, 0,
	    "QR-ID: . ~ + % _ allowed (tpuctl: RFC 1035)" },
	{ K_QR_ID, "bad@id", 0, 0, "QR-ID: '@' is not in the set" },
	{ K_QR_ID, "sp ace", 0, 0, "QR-ID: ' ' is not in the set" },
	{ K_QR_ID, "", 0, 0, "QR-ID: '+', at least one character" },
	/* Network tags. */
	{ K_TAG, "web-server", 1, NONE, "TAG" },
	{ K_TAG, "Bad Tag", 0, NONE, "TAG: lowercase, no blank" },
	{ K_TAG, "{64*t}", 0, NONE, "TAG: at most 63" },
	/* Descriptions: tpuctl allows 2048 bytes, more than the API's 512
	 * characters (a client gap). */
	{ K_DESC, "{512*d}", 1, 1, "DESC: 512 characters" },
	{ K_DESC, "{513*d}", 0, 1,
	    "DESC: at most 512 (tpuctl: 2048 bytes, a client gap)" },
	{ K_DESC, "{512*\xc3\xa9}", 1, 1,
	    "DESC: characters, not bytes (1024 bytes of UTF-8)" },
	/* Labels: tpuctl takes ASCII only (stricter). */
	{ K_LABELS, "{\"env\":\"prod\"}", 1, 1, "LABEL" },
	{ K_LABELS, "{\"k\":\"\"}", 1, 1, "LABEL: values can be empty" },
	{ K_LABELS, "{\"k\":\"1-2_3\"}", 1, 1,
	    "LABEL: a value may start with a digit" },
	{ K_LABELS, "{\"{63*k}\":\"{63*v}\"}", 1, 1,
	    "LABEL: 63-character key and value" },
	{ K_LABELS,
	    "{\"\\u043a\\u043b\\u044e\\u0447\":"
	    "\"\\u0437\\u043d\\u0430\\u0447\\u0435\\u043d\\u0438\\u0435\"}",
	    1, 0,
	    "LABEL: international characters (Cyrillic) allowed "
	    "(tpuctl: ASCII only)" },
	{ K_LABELS, "{\"\\u65e5\\u672c\":\"\\u6771\\u4eac\"}", 1, 0,
	    "LABEL: a key may start with an international character "
	    "(tpuctl: ASCII only)" },
	{ K_LABELS, "{\"{63*\xc3\xa9}\":\"v\"}", 1, 0,
	    "LABEL: 63 characters, not bytes (126 bytes; tpuctl: ASCII)" },
	{ K_LABELS, "{\"{64*\xc3\xa9}\":\"v\"}", 0, 0,
	    "LABEL: at most 63 characters" },
	{ K_LABELS, "{\"Env\":\"x\"}", 0, 0, "LABEL: lowercase letters" },
	{ K_LABELS, "{\"\\u041a\\u043b\":\"x\"}", 0, 0,
	    "LABEL: lowercase, also in Cyrillic" },
	{ K_LABELS, "{\"k\":\"Has Space\"}", 0, 0,
	    "LABEL: no capitals or blanks in values" },
	{ K_LABELS, "{\"1k\":\"v\"}", 0, 0, "LABEL: keys start with a letter" },
	{ K_LABELS, "{\"_k\":\"v\"}", 0, 0, "LABEL: keys start with a letter" },
	{ K_LABELS, "{\"\":\"v\"}", 0, 0, "LABEL: keys cannot be empty" },
	{ K_LABELS, "{\"{64*k}\":\"v\"}", 0, 0, "LABEL: keys at most 63" },
	{ K_LABELS, "{\"k\":\"{64*v}\"}", 0, 0, "LABEL: values at most 63" },
	{ K_LABELS, "{\"k.x\":\"v\"}", 0, 0, "LABEL: no '.'" },
	{ K_LABELS, "{\"k\":1}", 0, 0,
	    "LABEL: Node.labels is a map of strings" },
	{ K_LABELS, "{\"a\":\"x\",\"a\":\"y\"}", 0, 0, "LABEL: keys unique" },
	{ K_LABELS, "[]", 0, 0, "LABEL: Node.labels is an object" },
	{ K_LABELS_N, "64", 1, 1, "LABEL: up to 64 labels" },
	{ K_LABELS_N, "65", 0, 0, "LABEL: at most 64 labels" },
	/* Metadata: a map of strings.  tpuctl checks ssh-keys lines as
	 * "user:type base64 [comment]" with no CR: its own local check,
	 * stricter than Google, who stores any string. */
	{ K_METADATA, "{\"ssh-keys\":\"any text, not an ssh key line\"}", 1, 0,
	    "MD: any string under ssh-keys (tpuctl: its key line format)" },
	{ K_METADATA,
	    "{\"ssh-keys\":\"a:ssh-ed25519 AAAA\\r\\nb:ssh-ed25519 BBBB\"}", 1,
	    0, "MD: CR in ssh-keys is a string like any (tpuctl: no CR)" },
	{ K_METADATA, "{\"startup-script\":\"#!/bin/sh\\necho hi\\n\"}", 1, 1,
	    "MD" },
	{ K_METADATA, "{\"my_Key-1\":\"anything\"}", 1, 1,
	    "MD: keys [a-zA-Z0-9-_]" },
	{ K_METADATA, "{\"{128*k}\":\"v\"}", 1, 1, "MD: keys up to 128 bytes" },
	{ K_METADATA, "{\"{129*k}\":\"v\"}", 0, 0,
	    "MD: keys at most 128 bytes" },
	{ K_METADATA, "{\"bad key\":\"x\"}", 0, 0, "MD: no blank in keys" },
	{ K_METADATA, "{\"k.dot\":\"x\"}", 0, 0, "MD: no '.' in keys" },
	{ K_METADATA, "{\"\":\"x\"}", 0, 0, "MD: keys '+', not empty" },
	{ K_METADATA, "{\"k\":\"{262144*x}\"}", 1, 1,
	    "MD: values up to 262144 bytes" },
	{ K_METADATA, "{\"k\":\"{262145*x}\"}", 0, 0,
	    "MD: values at most 262144 bytes" },
	{ K_METADATA, "{\"a\":\"{262000*x}\",\"b\":\"{262000*x}\"}", 1, 1,
	    "MD: 524002 bytes in all, under 512 KB" },
	{ K_METADATA, "{\"a\":\"{262144*x}\",\"b\":\"{262144*x}\"}", 0, 1,
	    "MD: less than 512 KB in all (tpuctl: no total, a client gap)" },
	{ K_METADATA, "{\"k\":1}", 0, 0, "MD: a map of strings" },
	/* Zones. */
	{ K_ZONE, "us-central2-b", 1, 1, "ZONE" },
	{ K_ZONE, "europe-west4-a", 1, 1, "ZONE" },
	{ K_ZONE, "us-central2", 0, 0, "ZONE: a region is not a zone" },
	{ K_ZONE, "US-central2-b", 0, 0, "ZONE: lowercase" },
	/* Buckets. */
	{ K_BUCKET, "my-bucket", 1, 1, "BUCKET" },
	{ K_BUCKET, "my_bucket", 1, 1, "BUCKET: '_' allowed" },
	{ K_BUCKET, "abc", 1, 1, "BUCKET: 3 characters" },
	{ K_BUCKET, "ab", 0, 0, "BUCKET: at least 3" },
	{ K_BUCKET, "{63*b}", 1, 1, "BUCKET: 63 characters" },
	{ K_BUCKET, "{64*b}", 0, 0, "BUCKET: at most 63 without dots" },
	{ K_BUCKET, "a.{63*b}.c", 1, 1, "BUCKET: 63-character component" },
	{ K_BUCKET, "a.{64*b}", 0, 0, "BUCKET: components at most 63" },
	{ K_BUCKET, "{63*a}.{63*b}.{63*c}.{30*d}", 1, 1,
	    "BUCKET: 222 characters with dots" },
	{ K_BUCKET, "{63*a}.{63*b}.{63*c}.{31*d}", 0, 0,
	    "BUCKET: at most 222 with dots" },
	{ K_BUCKET, "My-Bucket", 0, 0, "BUCKET: lowercase" },
	{ K_BUCKET, "bucket with space", 0, 0, "BUCKET: no blanks" },
	{ K_BUCKET, "-bucket", 0, 0, "BUCKET: starts with a letter or digit" },
	{ K_BUCKET, "bucket_", 0, 0, "BUCKET: ends with a letter or digit" },
	{ K_BUCKET, "192.168.5.4", 0, 0, "BUCKET: not an IP address" },
	{ K_BUCKET, "1.2.3.4.5", 1, 1, "BUCKET: five numbers are no address" },
	{ K_BUCKET, "goog-data", 0, 0, "BUCKET: no goog prefix" },
	{ K_BUCKET, "my-google-data", 0, 0, "BUCKET: no \"google\"" },
	{ K_BUCKET, "my-g00gle-data", 0, 1,
	    "BUCKET: no close misspelling such as g00gle (tpuctl: a client "
	    "gap)" },
	/* Objects. */
	{ K_OBJECT, "a", 1, 1, "OBJECT: 1 byte" },
	{ K_OBJECT, "dir/a.txt", 1, 1, "OBJECT" },
	{ K_OBJECT,
	    "\xc3\xbcn\xc3\xaf"
	    "c\xc3\xb8"
	    "d\xc3\xa9/\xe6\x96\x87.bin",
	    1, 1, "OBJECT: any Unicode" },
	{ K_OBJECT, "a?b#c%2F with space+plus", 1, 1, "OBJECT: any Unicode" },
	{ K_OBJECT, "...", 1, 1, "OBJECT: only . and .. are refused" },
	{ K_OBJECT, "{1024*n}", 1, 1, "OBJECT: 1024 bytes" },
	{ K_OBJECT, "{512*\xc3\xa9}", 1, 1, "OBJECT: 1024 bytes of UTF-8" },
	{ K_OBJECT, "x{512*\xc3\xa9}", 0, 0, "OBJECT: at most 1024 bytes" },
	{ K_OBJECT, "{1025*n}", 0, 0, "OBJECT: at most 1024 bytes" },
	{ K_OBJECT, "", 0, 0, "OBJECT: at least 1 byte" },
	{ K_OBJECT, "x\ny", 0, 0, "OBJECT: no line feed" },
	{ K_OBJECT, "x\ry", 0, 0, "OBJECT: no carriage return" },
	{ K_OBJECT, ".", 0, 0, "OBJECT: not ." },
	{ K_OBJECT, "..", 0, 0, "OBJECT: not .." },
	{ K_OBJECT, "x\xff", 0, 0, "OBJECT: valid UTF-8" },
	{ K_OBJECT, ".well-known/acme-challenge/token", 0, 1,
	    "OBJECT: no .well-known/acme-challenge/ prefix (tpuctl: a client "
	    "gap)" },
	{ K_OBJECT, ".well-known/acme-challenge", 1, 1,
	    "OBJECT: the prefix ends with '/'" },
};

/* in with every "{N*c}" expanded (c one UTF-8 character). */
static char *
expand(const char *in)
{
	size_t cap = strlen(in) + 1, len = 0, n, cl;
	char *out = malloc(cap), *end;
	const char *p = in;

	ck_assert_ptr_nonnull(out);
	while (*p != '\0') {
		if (p[0] == '{' && p[1] >= '0' && p[1] <= '9' &&
		    (n = strtoul(p + 1, &end, 10), *end == '*')) {
			const char *c = end + 1;

			cl = 1;
			while ((c[cl] & 0xc0) == 0x80)
				cl++;
			ck_assert_msg(c[cl] == '}', "bad repeat in '%s'", in);
			cap += n * cl;
			out = realloc(out, cap);
			ck_assert_ptr_nonnull(out);
			while (n-- > 0) {
				memcpy(out + len, c, cl);
				len += cl;
			}
			p = c + cl + 1;
		} else
			out[len++] = *p++;
	}
	out[len] = '\0';
	return out;
}

static cJSON *
parse(const char *s)
{
	cJSON *j = cJSON_Parse(s);

	ck_assert_msg(j != NULL, "row JSON does not parse: %.60s", s);
	return j;
}

static cJSON *
n_labels(const char *count)
{
	cJSON *j = cJSON_CreateObject();
	char k[16];
	int i, n = (int)strtol(count, NULL, 10);

	for (i = 0; i < n; i++) {
		snprintf(k, sizeof k, "k%d", i);
		cJSON_AddStringToObject(j, k, "v");
	}
	return j;
}

/* The emulator's answer (1 accept) and tpuctl's (1, 0 or NONE). */
static void
judge(const struct row *r, const char *in, char *msg, size_t msglen, int *emu,
    int *client)
{
	struct tpu_err err;
	cJSON *j = NULL;

	tpu_err_init(&err);
	switch (r->kind) {
	case K_NODE_ID:
		*emu = validate_node_id(in, msg, msglen) == 0;
		*client = catalog_node_name_validate(in, &err) == 0;
		break;
	case K_QR_ID:
		*emu = validate_qr_id(in, msg, msglen) == 0;
		*client = catalog_node_name_validate(in, &err) == 0;
		break;
	case K_TAG:
		*emu = validate_tag(in, msg, msglen) == 0;
		*client = NONE;
		break;
	case K_DESC:
		*emu = validate_description(in, msg, msglen) == 0;
		*client = tpuvalid_description(in, &err) == 0;
		break;
	case K_LABELS:
	case K_LABELS_N:
		j = r->kind == K_LABELS ? parse(in) : n_labels(in);
		*emu = validate_labels(j, msg, msglen) == 0;
		*client = catalog_labels_validate(j, &err) == 0;
		break;
	case K_METADATA:
		j = parse(in);
		*emu = validate_metadata(j, msg, msglen) == 0;
		*client = catalog_metadata_validate_obj(j, 1, &err) == 0;
		break;
	case K_ZONE:
		*emu = validate_zone(in, msg, msglen) == 0;
		*client = catalog_zone_validate(in, &err) == 0;
		break;
	case K_BUCKET:
		*emu = validate_bucket(in, msg, msglen) == 0;
		*client = gcs_bucket_validate(in, &err) == 0;
		break;
	case K_OBJECT:
		*emu = validate_object(in, msg, msglen) == 0;
		*client = gcs_object_validate(in, &err) == 0;
		break;
	}
	cJSON_Delete(j);
}

START_TEST(table)
{
	const struct row *r = &rows[_i];
	char *in = expand(r->in), msg[512];
	int emu, client;

	msg[0] = '\0';
	judge(r, in, msg, sizeof msg, &emu, &client);
	ck_assert_msg(emu == r->emu_ok, "row %d (%s): the emulator %s '%.60s'",
	    _i, r->rule, emu ? "accepts" : "refuses", r->in);
	ck_assert_msg(client == r->client_ok,
	    "row %d (%s): tpuctl %s '%.60s'; update the row", _i, r->rule,
	    client ? "accepts" : "refuses", r->in);
	/* A refusal says why, in one line. */
	if (!emu) {
		ck_assert_msg(msg[0] != '\0', "row %d: no message", _i);
		ck_assert_msg(
		    strchr(msg, '\n') == NULL && strchr(msg, '\r') == NULL,
		    "row %d: message of more than one line: %s", _i, msg);
	}
	free(in);
}
END_TEST

/* The nodes of a multislice are prefix-0 .. prefix-(N-1): each must be
 * a valid node id (CE-NAME), so the prefix's length depends on N. */
START_TEST(qr_node_prefix)
{
	static const struct {
		const char *prefix;
		int count, ok;
		const char *word; /* in the message of a refusal */
	} cases[] = {
		{ "ms", 2, 1, NULL },
		{ "{61*p}", 2, 1, NULL },              /* "ppp...-1": 63 */
		{ "{61*p}", 11, 0, "node_id_prefix" }, /* "ppp...-10": 64 */
		{ "{62*p}", 2, 0, "node_id_prefix" },  /* "ppp...-0": 64 */
		{ "Bad", 2, 0, "node_id_prefix" },
		/* tpu.v2.json nodeCount: "This needs to be > 1". */
		{ "ms", 1, 0, "node_count" },
	};
	char body[256], msg[512], *p;
	cJSON *spec, *ids;
	size_t i;

	for (i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		p = expand(cases[i].prefix);
		snprintf(body, sizeof body,
		    "{\"multisliceParams\":{\"nodeCount\":%d,"
		    "\"nodeIdPrefix\":\"%s\"}}",
		    cases[i].count, p);
		spec = parse(body);
		msg[0] = '\0';
		ids = tpu_qr_node_ids(spec, TPU_API_V2, msg, sizeof msg);
		ck_assert_msg((ids != NULL) == cases[i].ok,
		    "prefix %s count %d: %s", cases[i].prefix, cases[i].count,
		    msg);
		if (ids != NULL)
			ck_assert_int_eq(
			    cJSON_GetArraySize(ids), cases[i].count);
		else
			ck_assert_ptr_nonnull(strstr(msg, cases[i].word));
		cJSON_Delete(ids);
		cJSON_Delete(spec);
		free(p);
	}
}
END_TEST

/* Messages quote values as printable ASCII only. */
START_TEST(messages)
{
	char msg[512];

	ck_assert_int_eq(
	    validate_bucket("Bad\x01\xc3\xa9", msg, sizeof msg), -1);
	ck_assert_ptr_nonnull(strstr(msg, "'Bad\x3f\x3f\x3f'"));
	ck_assert_int_eq(validate_node_id("Bad_Name", msg, sizeof msg), -1);
	ck_assert_ptr_nonnull(strstr(msg, "RFC 1035"));
	ck_assert_int_eq(validate_labels(NULL, msg, sizeof msg), 0);
	ck_assert_int_eq(validate_metadata(NULL, msg, sizeof msg), 0);
}
END_TEST

/* Node.cidrBlock "must be a /29 block" (tpu.v2.json); kmsKeyName's
 * examples in tpu.v2alpha1.json, with or without a key version. */
START_TEST(cidr_kms)
{
	char msg[512];

	ck_assert_int_eq(
	    validate_cidr_block("10.0.0.8/29", msg, sizeof msg), 0);
	ck_assert_int_eq(
	    validate_cidr_block("10.0.0.9/29", msg, sizeof msg), -1);
	ck_assert_ptr_nonnull(strstr(msg, "/29 block"));
	ck_assert_int_eq(
	    validate_cidr_block("10.0.0.0/30", msg, sizeof msg), -1);
	ck_assert_int_eq(
	    validate_cidr_block("10.0.0.256/29", msg, sizeof msg), -1);
	ck_assert_int_eq(validate_cidr_block("", msg, sizeof msg), -1);
	ck_assert_int_eq(validate_kms_key("projects/p/locations/l/keyRings/r/"
	                                  "cryptoKeys/k",
	                     msg, sizeof msg),
	    0);
	ck_assert_int_eq(validate_kms_key("projects/p/locations/l/keyRings/r/"
	                                  "cryptoKeys/k/cryptoKeyVersions/1",
	                     msg, sizeof msg),
	    0);
	ck_assert_int_eq(validate_kms_key("projects/p/locations/l/keyRings/r",
	                     msg, sizeof msg),
	    -1);
	ck_assert_int_eq(validate_kms_key("projects/p/locations/l/keyRings/r/"
	                                  "cryptoKeys/k/x/1",
	                     msg, sizeof msg),
	    -1);
	ck_assert_ptr_nonnull(strstr(msg, "Cloud KMS key"));
}
END_TEST

/* validate_api_fields: each version's own fields on the other's route. */
static const struct {
	const char *body;
	int alpha;
	enum validate_body kind;
	const char *at;   /* NULL: accepted */
	const char *name; /* the unknown field */
} api_rows[] = {
	{ "{\"autocheckpointEnabled\":true}", 0, VALIDATE_BODY_NODE, "node",
	    "autocheckpointEnabled" },
	{ "{\"autocheckpointEnabled\":true}", 1, VALIDATE_BODY_NODE, NULL,
	    NULL },
	{ "{\"bootDiskConfig\":{}}", 0, VALIDATE_BODY_NODE, "node",
	    "bootDiskConfig" },
	{ "{\"networkConfig\":{\"queueCount\":4}}", 0, VALIDATE_BODY_NODE, NULL,
	    NULL },
	{ "{\"schedulingConfig\":{\"reserved\":true,\"reservationName\":"
	  "\"r\"}}",
	    0, VALIDATE_BODY_NODE, "node.scheduling_config",
	    "reservationName" },
	{ "{\"schedulingConfig\":{\"reserved\":true,\"reservationName\":"
	  "\"r\"}}",
	    1, VALIDATE_BODY_NODE, NULL, NULL },
	{ "{\"bestEffort\":{}}", 0, VALIDATE_BODY_QR, "queued_resource",
	    "bestEffort" },
	{ "{\"bestEffort\":{}}", 1, VALIDATE_BODY_QR, NULL, NULL },
	{ "{\"runDuration\":{\"maxRunDuration\":\"60s\"}}", 0, VALIDATE_BODY_QR,
	    "queued_resource", "runDuration" },
	{ "{\"runDuration\":{\"maxRunDuration\":\"60s\"}}", 1, VALIDATE_BODY_QR,
	    NULL, NULL },
	{ "{\"provisioningModel\":\"FLEX_START\"}", 0, VALIDATE_BODY_QR,
	    "queued_resource", "provisioningModel" },
	{ "{\"provisioningModel\":\"FLEX_START\"}", 1, VALIDATE_BODY_QR, NULL,
	    NULL },
	{ "{\"guaranteed\":{\"reserved\":true}}", 0, VALIDATE_BODY_QR,
	    "queued_resource.guaranteed", "reserved" },
	{ "{\"guaranteed\":{}}", 0, VALIDATE_BODY_QR, NULL, NULL },
	{ "{\"tpu\":{\"nodeSpec\":[{\"node\":{}},{\"multiNodeParams\":{}}]}}",
	    0, VALIDATE_BODY_QR, "queued_resource.tpu.node_spec[1]",
	    "multiNodeParams" },
	{ "{\"tpu\":{\"nodeSpec\":[{\"multisliceParams\":{}}]}}", 1,
	    VALIDATE_BODY_QR, "queued_resource.tpu.node_spec[0]",
	    "multisliceParams" },
	{ "{\"tpu\":{\"nodeSpec\":[{\"multisliceParams\":{}}]}}", 0,
	    VALIDATE_BODY_QR, NULL, NULL },
	{ "{\"tpu\":{\"nodeSpec\":[{\"node\":{\"bootDiskConfig\":{}}}]}}", 0,
	    VALIDATE_BODY_QR, "queued_resource.tpu.node_spec[0].node",
	    "bootDiskConfig" },
	{ "{\"tpu\":{\"nodeSpec\":[{\"node\":{\"bootDiskConfig\":{}}}]}}", 1,
	    VALIDATE_BODY_QR, NULL, NULL },
	{ "[]", 0, VALIDATE_BODY_QR, NULL, NULL },
};

START_TEST(api_fields)
{
	cJSON *b = cJSON_Parse(api_rows[_i].body);
	char at[128] = "", msg[512] = "", want[512];
	int rc;

	ck_assert_ptr_nonnull(b);
	rc = validate_api_fields(b, api_rows[_i].alpha, api_rows[_i].kind, at,
	    sizeof at, msg, sizeof msg);
	cJSON_Delete(b);
	if (api_rows[_i].at == NULL) {
		ck_assert_int_eq(rc, 0);
		return;
	}
	ck_assert_int_eq(rc, -1);
	ck_assert_str_eq(at, api_rows[_i].at);
	snprintf(want, sizeof want,
	    "Invalid JSON payload received. Unknown name \"%s\" at '%s': "
	    "Cannot find field.",
	    api_rows[_i].name, api_rows[_i].at);
	ck_assert_str_eq(msg, want);
}
END_TEST

/* v2alpha1 QueuedResource.provisioningModel: its enum only. */
START_TEST(api_provisioning_model)
{
	cJSON *b = cJSON_Parse("{\"provisioningModel\":\"CHEAP\"}");
	char at[128] = "", msg[512] = "";

	ck_assert_ptr_nonnull(b);
	ck_assert_int_eq(validate_api_fields(b, 1, VALIDATE_BODY_QR, at,
	                     sizeof at, msg, sizeof msg),
	    -1);
	ck_assert_str_eq(at, "queued_resource.provisioning_model");
	ck_assert_str_eq(msg,
	    "Invalid value at 'queued_resource.provisioning_model' "
	    "(type.googleapis.com/google.cloud.tpu.v2alpha1.QueuedResource."
	    "ProvisioningModel), \"CHEAP\"");
	cJSON_Delete(b);
}
END_TEST

static Suite *
emu_validate_suite(void)
{
	Suite *s = suite_create("emu_validate");
	TCase *tc = tcase_create("rules");

	tcase_add_loop_test(tc, table, 0, (int)(sizeof rows / sizeof rows[0]));
	tcase_add_test(tc, qr_node_prefix);
	tcase_add_test(tc, messages);
	tcase_add_test(tc, cidr_kms);
	tcase_add_loop_test(
	    tc, api_fields, 0, (int)(sizeof api_rows / sizeof api_rows[0]));
	tcase_add_test(tc, api_provisioning_model);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	SRunner *sr = srunner_create(emu_validate_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
