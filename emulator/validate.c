/*
 * The emulator's own request rules (validate.h), each from the document
 * cited next to it.  Messages quote the offending value only as far as
 * it is printable ASCII, so a reply never carries a broken UTF-8
 * sequence or a control character the client did not expect.
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "util.h"
#include "validate.h"

static int vfail(char *, size_t, const char *, ...)
    __attribute__((format(printf, 3, 4)));

static int
vfail(char *msg, size_t msglen, const char *fmt, ...)
{
	va_list ap;

	if (msg != NULL && msglen > 0) {
		va_start(ap, fmt);
		vsnprintf(msg, msglen, fmt, ap);
		va_end(ap);
	}
	return -1;
}

/* s for a message: at most 64 bytes, anything but printable ASCII as '?'. */
static const char *
show(const char *s, char *out, size_t outlen)
{
	size_t i, n = 0;

	for (i = 0; s[i] != '\0' && n + 4 < outlen && i < 64; i++)
		out[n++] = s[i] >= 0x20 && s[i] < 0x7f ? s[i] : '?';
	if (s[i] != '\0' && n + 4 < outlen) {
		memcpy(out + n, "...", 3);
		n += 3;
	}
	out[n] = '\0';
	return out;
}

#define SHOW(s) show((s), shown, sizeof shown)

/* The code point of the valid UTF-8 sequence at p (*len bytes), or -1. */
static long
utf8_cp(const unsigned char *p, size_t *len)
{
	size_t n = tpu_utf8_len(p), i;
	long cp;

	*len = n;
	if (n == 0)
		return -1;
	if (n == 1)
		return p[0];
	cp = p[0] & (0x7f >> n);
	for (i = 1; i < n; i++)
		cp = cp << 6 | (p[i] & 0x3f);
	return cp;
}

/* Characters (code points) of a string that is valid UTF-8, or -1. */
static long
utf8_count(const char *s)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t n;
	long count = 0;

	while (*p != '\0') {
		if (utf8_cp(p, &n) < 0)
			return -1;
		p += n;
		count++;
	}
	return count;
}

/*
 * Resource names: Compute Engine's naming convention, "1-63 characters
 * long and match the regular expression [a-z]([-a-z0-9]*[a-z0-9])?"
 * (https://cloud.google.com/compute/docs/naming-resources#resource-name-format).
 * tpu.v2.json documents nodes.create's nodeId only as "the unqualified
 * resource name"; TPU nodes are named by that rule, and so are network
 * tags (https://cloud.google.com/vpc/docs/add-remove-network-tags).
 * XXX NodeSpec.nodeId and nodeIdPrefix of a queued resource "Should
 * follow the ^[A-Za-z0-9_.~+%-]+$ regex format" there, which would admit
 * "A" or "..": the emulator keeps one rule for every node id, this one,
 * as a node made by a queued resource is the same Node resource.
 */
static int
rfc1035(const char *s)
{
	size_t n = strlen(s), i;

	if (n < 1 || n > VALIDATE_NAME_MAX || !(s[0] >= 'a' && s[0] <= 'z'))
		return 0;
	for (i = 1; i < n; i++) {
		if (!((s[i] >= 'a' && s[i] <= 'z') ||
		        (s[i] >= '0' && s[i] <= '9') || s[i] == '-'))
			return 0;
	}
	return s[n - 1] != '-';
}

int
validate_node_id(const char *s, char *msg, size_t msglen)
{
	char shown[80];

	if (rfc1035(s))
		return 0;
	return vfail(msg, msglen,
	    "'%s' is not a valid name: an RFC 1035 name of 1-63 lowercase "
	    "letters, digits and '-', starting with a letter and not ending "
	    "with '-'",
	    SHOW(s));
}

int
validate_tag(const char *s, char *msg, size_t msglen)
{
	char shown[80];

	if (rfc1035(s))
		return 0;
	return vfail(msg, msglen,
	    "tag '%s' is not valid: each tag must be an RFC 1035 name of "
	    "1-63 lowercase letters, digits and '-'",
	    SHOW(s));
}

/*
 * queuedResources.create queuedResourceId, tpu.v2.json and
 * tpu.v2alpha1.json: "Should follow the `^[A-Za-z0-9_.~+%-]+$` regex
 * format."  No length is documented; the emulator takes what its path
 * parser holds.  (tpuctl asks for an RFC 1035 name: stricter.)
 */
int
validate_qr_id(const char *s, char *msg, size_t msglen)
{
	static const char ok[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
	                         "abcdefghijklmnopqrstuvwxyz"
	                         "0123456789_.~+%-";
	char shown[80];
	size_t n = strlen(s);

	if (n >= 1 && n <= VALIDATE_QR_ID_MAX && strspn(s, ok) == n)
		return 0;
	return vfail(msg, msglen,
	    "'%s' is not a valid name: queued resource ids follow "
	    "^[A-Za-z0-9_.~+%%-]+$ (at most %d characters here)",
	    SHOW(s), VALIDATE_QR_ID_MAX);
}

/* Node.description, tpu.v2.json: "Maximum of 512 characters." */
int
validate_description(const char *s, char *msg, size_t msglen)
{
	long n = utf8_count(s);

	if (n >= 0 && n <= VALIDATE_DESCRIPTION_MAX)
		return 0;
	if (n < 0)
		return vfail(msg, msglen, "the description is not valid UTF-8");
	return vfail(msg, msglen,
	    "the description has %ld characters, at most %d are allowed", n,
	    VALIDATE_DESCRIPTION_MAX);
}

/*
 * Label characters.  Google's "Requirements for labels"
 * (https://cloud.google.com/resource-manager/docs/labels-overview#requirements,
 * the same list in https://cloud.google.com/compute/docs/labeling-resources):
 * "Keys and values can contain only lowercase letters, numeric
 * characters, underscores, and dashes. All characters must use UTF-8
 * encoding, and international characters are allowed."  APIs that spell
 * it as a pattern write [\p{Ll}\p{Lo}\p{N}_-].  Without Unicode tables the
 * emulator takes every non-ASCII character as international except the
 * ones it can tell are not letters or digits in lower case: C1 controls
 * and Latin-1 signs (U+0080-U+00BF, U+00D7, U+00F7) and the capitals of
 * Latin-1, Greek and Cyrillic.  XXX other scripts' capitals and symbols
 * (U+2000 and up) pass.
 */
enum lchar {
	LC_BAD,
	LC_LOWER, /* a-z */
	LC_DIGIT,
	LC_MARK, /* '_' or '-' */
	LC_INTL,
};

static enum lchar
label_char(const unsigned char *p, size_t *len)
{
	long cp = utf8_cp(p, len);

	if (cp < 0)
		return LC_BAD;
	if (cp >= 'a' && cp <= 'z')
		return LC_LOWER;
	if (cp >= '0' && cp <= '9')
		return LC_DIGIT;
	if (cp == '_' || cp == '-')
		return LC_MARK;
	if (cp <= 0xde || cp == 0xf7 || (cp >= 0x391 && cp <= 0x3a9) ||
	    (cp >= 0x400 && cp <= 0x42f))
		return LC_BAD;
	return LC_INTL;
}

/* 0 if s is a valid label key (is_key) or value. */
static int
label_ok(const char *s, int is_key)
{
	const unsigned char *p = (const unsigned char *)s;
	enum lchar c;
	size_t n;
	long count = 0;

	/* "Keys must start with a lowercase letter or international
	 * character." */
	if (is_key && *p == '\0')
		return -1;
	for (; *p != '\0'; p += n, count++) {
		c = label_char(p, &n);
		if (c == LC_BAD)
			return -1;
		if (is_key && count == 0 && c != LC_LOWER && c != LC_INTL)
			return -1;
	}
	/* "Keys have a minimum length of 1 character and a maximum length
	 * of 63 characters ... Values can be empty, and have a maximum
	 * length of 63 characters." */
	return count <= VALIDATE_LABEL_MAX ? 0 : -1;
}

int
validate_labels(const cJSON *labels, char *msg, size_t msglen)
{
	const cJSON *a, *b;
	char shown[80], shown2[80];
	int n = 0;

	if (labels == NULL || cJSON_IsNull(labels))
		return 0;
	if (!cJSON_IsObject(labels))
		return vfail(msg, msglen, "labels must be a map of strings");
	cJSON_ArrayForEach(a, labels)
	{
		/* "Each resource can have multiple labels, up to a maximum
		 * of 64." */
		if (++n > VALIDATE_LABELS_MAX)
			return vfail(msg, msglen,
			    "%d labels given, at most %d are allowed",
			    cJSON_GetArraySize(labels), VALIDATE_LABELS_MAX);
		if (label_ok(a->string, 1) != 0)
			return vfail(msg, msglen,
			    "label key '%s' is not valid: keys are 1-63 "
			    "lowercase letters, digits, '_', '-' or "
			    "international characters, starting with a "
			    "lowercase letter or an international character",
			    show(a->string, shown, sizeof shown));
		if (!cJSON_IsString(a))
			return vfail(msg, msglen,
			    "the value of label '%s' must be a string",
			    show(a->string, shown, sizeof shown));
		if (label_ok(a->valuestring, 0) != 0)
			return vfail(msg, msglen,
			    "label value '%s' of key '%s' is not valid: values "
			    "are 0-63 lowercase letters, digits, '_', '-' or "
			    "international characters",
			    show(a->valuestring, shown, sizeof shown),
			    show(a->string, shown2, sizeof shown2));
		/* "The key portion of a label must be unique within a
		 * single resource." */
		for (b = labels->child; b != a; b = b->next) {
			if (strcmp(a->string, b->string) == 0)
				return vfail(msg, msglen,
				    "label key '%s' is given twice",
				    show(a->string, shown, sizeof shown));
		}
	}
	return 0;
}

/*
 * Node.metadata, tpu.v2.json: "additionalProperties": {"type":
 * "string"}, a map of strings; nothing there limits a value's content,
 * so ssh-keys, startup-script or any key may hold any string (tpuctl's
 * ssh-keys line check is its own).  The limits are Compute Engine's, on
 * whose VMs TPU workers run: Metadata.items[].key "must conform to the
 * following regexp: [a-zA-Z0-9-_]+, and be less than 128 bytes in
 * length"; a value's "size must be less than or equal to 262144 bytes
 * (256 KiB)"; "The total size of all keys and values must be less than
 * 512 KB" (https://cloud.google.com/compute/docs/reference/rest/v1/instances,
 * and "Limitations" in
 * https://cloud.google.com/compute/docs/metadata/setting-custom-metadata,
 * which gives keys "a maximum of 128 bytes": the emulator accepts 128).
 */
int
validate_metadata(const cJSON *md, char *msg, size_t msglen)
{
	static const char keych[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
	                            "abcdefghijklmnopqrstuvwxyz"
	                            "0123456789-_";
	const cJSON *a, *b;
	char shown[80];
	size_t total = 0, klen, vlen;

	if (md == NULL || cJSON_IsNull(md))
		return 0;
	if (!cJSON_IsObject(md))
		return vfail(msg, msglen, "metadata must be a map of strings");
	cJSON_ArrayForEach(a, md)
	{
		klen = strlen(a->string);
		if (klen == 0 || klen > VALIDATE_MD_KEY_MAX ||
		    strspn(a->string, keych) != klen)
			return vfail(msg, msglen,
			    "metadata key '%s' is not valid: keys are 1-%d "
			    "bytes of [a-zA-Z0-9-_]",
			    show(a->string, shown, sizeof shown),
			    VALIDATE_MD_KEY_MAX);
		if (!cJSON_IsString(a))
			return vfail(msg, msglen,
			    "the value of metadata key '%s' must be a string",
			    show(a->string, shown, sizeof shown));
		vlen = strlen(a->valuestring);
		if (vlen > VALIDATE_MD_VALUE_MAX)
			return vfail(msg, msglen,
			    "the value of metadata key '%s' has %zu bytes, at "
			    "most %d are allowed",
			    show(a->string, shown, sizeof shown), vlen,
			    VALIDATE_MD_VALUE_MAX);
		for (b = md->child; b != a; b = b->next) {
			if (strcmp(a->string, b->string) == 0)
				return vfail(msg, msglen,
				    "metadata key '%s' is given twice",
				    show(a->string, shown, sizeof shown));
		}
		total += klen + vlen;
	}
	if (total >= VALIDATE_MD_TOTAL_MAX)
		return vfail(msg, msglen,
		    "metadata keys and values total %zu bytes, they must be "
		    "less than %d",
		    total, VALIDATE_MD_TOTAL_MAX);
	return 0;
}

/*
 * Zones: "A zone name is the region name followed by a hyphen and a
 * letter" (https://cloud.google.com/compute/docs/regions-zones): region
 * [a-z]+-[a-z]+[0-9]+, so us-central2-b or europe-west4-a.
 */
int
validate_zone(const char *z, char *msg, size_t msglen)
{
	static const char lower[] = "abcdefghijklmnopqrstuvwxyz";
	const char *p = z;
	char shown[80];
	size_t n;

	n = strspn(p, lower);
	if (n > 0 && p[n] == '-') {
		p += n + 1;
		n = strspn(p, lower);
		if (n > 0) {
			p += n;
			n = strspn(p, "0123456789");
			if (n > 0 && p[n] == '-' && p[n + 1] >= 'a' &&
			    p[n + 1] <= 'z' && p[n + 2] == '\0' &&
			    strlen(z) <= VALIDATE_NAME_MAX)
				return 0;
		}
	}
	return vfail(msg, msglen,
	    "zone '%s' is not valid: a zone is REGION-LETTER, e.g. "
	    "us-central2-b",
	    SHOW(z));
}

/* 1 if s is an IPv4 address in dotted-decimal notation. */
static int
dotted_decimal(const char *s)
{
	int parts = 0, digits = 0;

	for (; *s != '\0'; s++) {
		if (*s >= '0' && *s <= '9') {
			if (++digits > 3)
				return 0;
		} else if (*s == '.' && digits > 0) {
			parts++;
			digits = 0;
		} else
			return 0;
	}
	return parts == 3 && digits > 0;
}

static int
bucket_alnum(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');
}

/*
 * Bucket names, "Bucket naming requirements"
 * (https://cloud.google.com/storage/docs/buckets#naming):
 *   "Bucket names can only contain lowercase letters, numeric
 *   characters, dashes (-), underscores (_), and dots (.)";
 *   "Bucket names must start and end with a number or letter";
 *   "Bucket names must contain 3-63 characters. Names containing dots
 *   can contain up to 222 characters, but each dot-separated component
 *   can be no longer than 63 characters";
 *   "Bucket names cannot be represented as an IP address in
 *   dotted-decimal notation (for example, 192.168.5.4)";
 *   "Bucket names cannot begin with the "goog" prefix";
 *   "Bucket names cannot contain "google" or close misspellings, such
 *   as "g00gle"" (the emulator knows only those two spellings).
 * Dotted names also need a verified domain, which the emulator cannot
 * ask for: it accepts them.
 */
int
validate_bucket(const char *name, char *msg, size_t msglen)
{
	size_t len = strlen(name), part = 0, i;
	char shown[80];
	int dots = 0;

	for (i = 0; i < len; i++) {
		if (name[i] == '.') {
			dots = 1;
			part = 0;
		} else if (!bucket_alnum(name[i]) && name[i] != '-' &&
		           name[i] != '_')
			return vfail(msg, msglen,
			    "'%s': bucket names contain only lowercase "
			    "letters, digits, '-', '_' and '.'",
			    SHOW(name));
		else if (++part > VALIDATE_BUCKET_MAX)
			return vfail(msg, msglen,
			    "'%s': each dot-separated component is at most "
			    "63 characters",
			    SHOW(name));
	}
	if (len < 3 ||
	    len > (dots ? VALIDATE_BUCKET_DOTTED_MAX : VALIDATE_BUCKET_MAX))
		return vfail(msg, msglen,
		    "'%s': bucket names are 3-63 characters (222 with dots)",
		    SHOW(name));
	if (!bucket_alnum(name[0]) || !bucket_alnum(name[len - 1]))
		return vfail(msg, msglen,
		    "'%s': bucket names start and end with a letter or digit",
		    SHOW(name));
	if (dotted_decimal(name))
		return vfail(msg, msglen,
		    "'%s': bucket names cannot be an IP address", SHOW(name));
	if (strncmp(name, "goog", 4) == 0)
		return vfail(msg, msglen,
		    "'%s': bucket names cannot begin with \"goog\"",
		    SHOW(name));
	if (strstr(name, "google") != NULL || strstr(name, "g00gle") != NULL)
		return vfail(msg, msglen,
		    "'%s': bucket names cannot contain \"google\" or close "
		    "misspellings",
		    SHOW(name));
	return 0;
}

/*
 * Object names, "Object naming requirements"
 * (https://cloud.google.com/storage/docs/naming-objects):
 *   "Object names can contain any sequence of valid Unicode characters,
 *   of length 1-1024 bytes when UTF-8 encoded";
 *   "Object names cannot contain Carriage Return or Line Feed
 *   characters";
 *   "Object names cannot start with .well-known/acme-challenge/";
 *   "Objects cannot be named . or ..".
 */
int
validate_object(const char *name, char *msg, size_t msglen)
{
	size_t len = strlen(name);
	long n;

	if (len == 0 || len > VALIDATE_OBJECT_MAX)
		return vfail(msg, msglen,
		    "Invalid object name: %zu bytes, object names are 1-%d "
		    "bytes of UTF-8",
		    len, VALIDATE_OBJECT_MAX);
	if (strchr(name, '\r') != NULL || strchr(name, '\n') != NULL)
		return vfail(msg, msglen,
		    "Invalid object name: object names cannot contain "
		    "carriage return or line feed characters");
	if ((n = utf8_count(name)) < 0)
		return vfail(msg, msglen,
		    "Invalid object name: object names must be valid UTF-8");
	if (strcmp(name, ".") == 0 || strcmp(name, "..") == 0)
		return vfail(msg, msglen,
		    "Invalid object name '%s': objects cannot be named . or ..",
		    name);
	if (strncmp(name, ".well-known/acme-challenge/", 27) == 0)
		return vfail(msg, msglen,
		    "Invalid object name: object names cannot start with "
		    ".well-known/acme-challenge/");
	return 0;
}

int
validate_cidr_block(const char *s, char *msg, size_t msglen)
{
	char shown[80];
	unsigned a[4], len;
	unsigned long addr;
	int n = -1, i;

	if (sscanf(s, "%3u.%3u.%3u.%3u/%2u%n", &a[0], &a[1], &a[2], &a[3], &len,
	        &n) == 5 &&
	    n > 0 && s[n] == '\0' && s[0] >= '0' && s[0] <= '9' && len <= 29) {
		for (i = 0, addr = 0; i < 4 && a[i] <= 255; i++)
			addr = addr << 8 | a[i];
		if (i == 4 && (addr & ((1UL << (32 - len)) - 1)) == 0)
			return 0;
	}
	return vfail(msg, msglen,
	    "'%s' is not a valid CIDR block: a /29 block such as "
	    "192.168.0.0/29 (or a larger one), its host bits zero",
	    SHOW(s));
}

int
validate_kms_key(const char *s, char *msg, size_t msglen)
{
	static const char *const part[] = { "projects", "locations", "keyRings",
		"cryptoKeys", "cryptoKeyVersions" };
	char shown[80];
	const char *p = s, *slash;
	size_t i, len;

	for (i = 0; i < nitems(part); i++) {
		len = strlen(part[i]);
		if (strncmp(p, part[i], len) != 0 || p[len] != '/')
			break;
		p += len + 1;
		slash = strchr(p, '/');
		if (*p == '\0' || slash == p)
			break;
		if (slash == NULL) {
			if (i >= 3)
				return 0;
			break;
		}
		p = slash + 1;
	}
	return vfail(msg, msglen,
	    "'%s' is not a Cloud KMS key name: projects/PROJECT/locations/"
	    "LOCATION/keyRings/RING/cryptoKeys/KEY",
	    SHOW(s));
}

/* One unknown field: Google's message (JSON transcoding) and its path. */
static int
unknown_field(const char *name, const char *at, char *atbuf, size_t atlen,
    char *msg, size_t msglen)
{
	snprintf(atbuf, atlen, "%s", at);
	return vfail(msg, msglen,
	    "Invalid JSON payload received. Unknown name \"%s\" at '%s': "
	    "Cannot find field.",
	    name, at);
}

static int
node_api_fields(const cJSON *node, int alpha, const char *at, char *atbuf,
    size_t atlen, char *msg, size_t msglen)
{
	static const char *const alpha_only[] = { "autocheckpointEnabled",
		"bootDiskConfig" };
	/* tpu-api.json 20250410: v2alpha1 SchedulingConfig's newer fields */
	static const char *const sc_alpha_only[] = { "provisioningModel",
		"reservationName" };
	const cJSON *sc;
	char path[128];
	size_t i;

	if (alpha || !cJSON_IsObject(node))
		return 0;
	for (i = 0; i < sizeof alpha_only / sizeof alpha_only[0]; i++)
		if (cJSON_GetObjectItemCaseSensitive(node, alpha_only[i]) !=
		    NULL)
			return unknown_field(
			    alpha_only[i], at, atbuf, atlen, msg, msglen);
	sc = cJSON_GetObjectItemCaseSensitive(node, "schedulingConfig");
	snprintf(path, sizeof path, "%s.scheduling_config", at);
	for (i = 0; cJSON_IsObject(sc) && i < nitems(sc_alpha_only); i++)
		if (cJSON_GetObjectItemCaseSensitive(sc, sc_alpha_only[i]) !=
		    NULL)
			return unknown_field(
			    sc_alpha_only[i], path, atbuf, atlen, msg, msglen);
	return 0;
}

/* s is one of the NULL-ended list. */
static int
one_of(const char *s, const char *const *list)
{
	for (; s != NULL && *list != NULL; list++)
		if (strcmp(s, *list) == 0)
			return 1;
	return 0;
}

int
validate_api_fields(const cJSON *body, int alpha, enum validate_body kind,
    char *at, size_t atlen, char *msg, size_t msglen)
{
	/* tpu-api.json 20250410, v2alpha1 QueuedResource.provisioningModel */
	static const char *const provisioning_models[] = {
		"PROVISIONING_MODEL_UNSPECIFIED", "STANDARD", "SPOT",
		"RESERVATION_BOUND", "FLEX_START", NULL
	};
	static const char *const qr_alpha_only[] = { "bestEffort",
		"provisioningModel", "runDuration" };
	const cJSON *specs, *spec, *g;
	char path[96], shown[80];
	int i = 0;

	if (kind == VALIDATE_BODY_NODE)
		return node_api_fields(
		    body, alpha, "node", at, atlen, msg, msglen);
	if (!cJSON_IsObject(body))
		return 0;
	/* bestEffort; provisioningModel, runDuration (tpu-api.json
	 * 20250410) */
	for (i = 0; !alpha && i < (int)nitems(qr_alpha_only); i++)
		if (cJSON_GetObjectItemCaseSensitive(body, qr_alpha_only[i]) !=
		    NULL)
			return unknown_field(qr_alpha_only[i],
			    "queued_resource", at, atlen, msg, msglen);
	i = 0;
	if ((g = cJSON_GetObjectItemCaseSensitive(body, "provisioningModel")) !=
	        NULL &&
	    !one_of(cJSON_GetStringValue(g), provisioning_models)) {
		snprintf(at, atlen, "queued_resource.provisioning_model");
		return vfail(msg, msglen,
		    "Invalid value at 'queued_resource.provisioning_model' "
		    "(type.googleapis.com/google.cloud.tpu.v2alpha1."
		    "QueuedResource.ProvisioningModel), \"%s\"",
		    cJSON_IsString(g) ? SHOW(g->valuestring) : "?");
	}
	g = cJSON_GetObjectItemCaseSensitive(body, "guaranteed");
	if (!alpha && cJSON_IsObject(g) &&
	    cJSON_GetObjectItemCaseSensitive(g, "reserved") != NULL)
		return unknown_field("reserved", "queued_resource.guaranteed",
		    at, atlen, msg, msglen);
	specs = cJSON_GetObjectItemCaseSensitive(
	    cJSON_GetObjectItemCaseSensitive(body, "tpu"), "nodeSpec");
	cJSON_ArrayForEach(spec, specs)
	{
		const char *other =
		    alpha ? "multisliceParams" : "multiNodeParams";

		snprintf(path, sizeof path, "queued_resource.tpu.node_spec[%d]",
		    i++);
		if (cJSON_IsObject(spec) &&
		    cJSON_GetObjectItemCaseSensitive(spec, other) != NULL)
			return unknown_field(
			    other, path, at, atlen, msg, msglen);
		if (!cJSON_IsObject(spec))
			continue;
		snprintf(
		    path + strlen(path), sizeof path - strlen(path), ".node");
		if (node_api_fields(
		        cJSON_GetObjectItemCaseSensitive(spec, "node"), alpha,
		        path, at, atlen, msg, msglen) != 0)
			return -1;
	}
	return 0;
}
