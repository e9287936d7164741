/*
 * Pure helpers of the emulator's Cloud TPU API: request paths, enum
 * numbers (checked against @google-cloud/tpu's protos.json, v2), page
 * tokens, fault specs, request validation and Google's error texts.
 */
#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "json.h"
#include "offer.h"
#include "tpu_logic.h"
#include "util.h"
#include "validate.h"

struct enum_val {
	const char *ctx;   /* parent key, or "" for any */
	const char *field; /* key */
	const char *name;
	int num;
};

static const struct enum_val enums[] = {
	/* Node.State */
	{ "", "state", "STATE_UNSPECIFIED", 0 },
	{ "", "state", "CREATING", 1 },
	{ "", "state", "READY", 2 },
	{ "", "state", "RESTARTING", 3 },
	{ "", "state", "REIMAGING", 4 },
	{ "", "state", "DELETING", 5 },
	{ "", "state", "REPAIRING", 6 },
	{ "", "state", "STOPPED", 8 },
	{ "", "state", "STOPPING", 9 },
	{ "", "state", "STARTING", 10 },
	{ "", "state", "PREEMPTED", 11 },
	{ "", "state", "TERMINATED", 12 },
	{ "", "state", "HIDING", 13 },
	{ "", "state", "HIDDEN", 14 },
	{ "", "state", "UNHIDING", 15 },
	{ "", "state", "UNKNOWN", 16 },
	/* QueuedResourceState.State: "state" inside the "state" object. */
	{ "state", "state", "STATE_UNSPECIFIED", 0 },
	{ "state", "state", "CREATING", 1 },
	{ "state", "state", "ACCEPTED", 2 },
	{ "state", "state", "PROVISIONING", 3 },
	{ "state", "state", "FAILED", 4 },
	{ "state", "state", "DELETING", 5 },
	{ "state", "state", "ACTIVE", 6 },
	{ "state", "state", "SUSPENDING", 7 },
	{ "state", "state", "SUSPENDED", 8 },
	{ "state", "state", "WAITING_FOR_RESOURCES", 9 },
	{ "state", "stateInitiator", "STATE_INITIATOR_UNSPECIFIED", 0 },
	{ "state", "stateInitiator", "USER", 1 },
	{ "state", "stateInitiator", "SERVICE", 2 },
	/* Node.Health */
	{ "", "health", "HEALTH_UNSPECIFIED", 0 },
	{ "", "health", "HEALTHY", 1 },
	{ "", "health", "TIMEOUT", 3 },
	{ "", "health", "UNHEALTHY_TENSORFLOW", 4 },
	{ "", "health", "UNHEALTHY_MAINTENANCE", 5 },
	/* Node.ApiVersion (OperationMetadata.apiVersion is a plain "v2"). */
	{ "", "apiVersion", "API_VERSION_UNSPECIFIED", 0 },
	{ "", "apiVersion", "V1_ALPHA1", 1 },
	{ "", "apiVersion", "V1", 2 },
	{ "", "apiVersion", "V2_ALPHA1", 3 },
	{ "", "apiVersion", "V2", 4 },
	/* AcceleratorConfig.Type */
	{ "acceleratorConfig", "type", "TYPE_UNSPECIFIED", 0 },
	{ "acceleratorConfig", "type", "V2", 2 },
	{ "acceleratorConfig", "type", "V3", 4 },
	{ "acceleratorConfig", "type", "V4", 7 },
	{ "acceleratorConfig", "type", "V5LITE_POD", 9 },
	{ "acceleratorConfig", "type", "V5P", 10 },
	{ "acceleratorConfig", "type", "V6E", 11 },
	{ "acceleratorConfigs", "type", "TYPE_UNSPECIFIED", 0 },
	{ "acceleratorConfigs", "type", "V2", 2 },
	{ "acceleratorConfigs", "type", "V3", 4 },
	{ "acceleratorConfigs", "type", "V4", 7 },
	{ "acceleratorConfigs", "type", "V5LITE_POD", 9 },
	{ "acceleratorConfigs", "type", "V5P", 10 },
	{ "acceleratorConfigs", "type", "V6E", 11 },
	/* Symptom.SymptomType, AttachedDisk.DiskMode */
	{ "", "symptomType", "SYMPTOM_TYPE_UNSPECIFIED", 0 },
	{ "", "symptomType", "LOW_MEMORY", 1 },
	{ "", "symptomType", "OUT_OF_MEMORY", 2 },
	{ "", "symptomType", "EXECUTE_TIMED_OUT", 3 },
	{ "", "symptomType", "MESH_BUILD_FAIL", 4 },
	{ "", "symptomType", "HBM_OUT_OF_MEMORY", 5 },
	{ "", "symptomType", "PROJECT_ABUSE", 6 },
	{ "dataDisks", "mode", "DISK_MODE_UNSPECIFIED", 0 },
	{ "dataDisks", "mode", "READ_WRITE", 1 },
	{ "dataDisks", "mode", "READ_ONLY", 2 },
};

static int
ctx_match(const struct enum_val *v, const char *ctx)
{
	if (v->ctx[0] == '\0')
		return strcmp(ctx, "state") != 0 ||
		       strcmp(v->field, "state") != 0;
	return strcmp(v->ctx, ctx) == 0;
}

int
tpu_enum_num(const char *ctx, const char *field, const char *value)
{
	size_t i;

	for (i = 0; i < nitems(enums); i++) {
		if (strcmp(enums[i].field, field) == 0 &&
		    strcmp(enums[i].name, value) == 0 &&
		    ctx_match(&enums[i], ctx))
			return enums[i].num;
	}
	return -1;
}

static const char *
enum_name(const char *ctx, const char *field, int num)
{
	size_t i;

	for (i = 0; i < nitems(enums); i++) {
		if (strcmp(enums[i].field, field) == 0 && enums[i].num == num &&
		    ctx_match(&enums[i], ctx))
			return enums[i].name;
	}
	return NULL;
}

/* Replace it by v under the same key. */
static void
replace(cJSON *obj, cJSON *it, cJSON *v)
{
	v->string = it->string;
	v->type |= it->type & cJSON_StringIsConst;
	it->string = NULL;
	cJSON_ReplaceItemViaPointer(obj, it, v);
}

static void
enums_walk(cJSON *obj, const char *ctx, int to_int)
{
	cJSON *it, *next;

	for (it = obj->child; it != NULL; it = next) {
		const char *key = it->string != NULL ? it->string : ctx;

		/* it may be replaced (freed) below. */
		next = it->next;
		if (cJSON_IsObject(it) || cJSON_IsArray(it)) {
			/* Array elements keep the array's key as context. */
			enums_walk(it, cJSON_IsArray(obj) ? ctx : key, to_int);
			continue;
		}
		if (it->string == NULL)
			continue;
		if (to_int && cJSON_IsString(it)) {
			int n = tpu_enum_num(ctx, it->string, it->valuestring);

			if (n >= 0)
				replace(obj, it, cJSON_CreateNumber(n));
		} else if (!to_int && cJSON_IsNumber(it)) {
			const char *s =
			    enum_name(ctx, it->string, it->valueint);

			if (s != NULL)
				replace(obj, it, cJSON_CreateString(s));
		}
	}
}

void
tpu_enums_to_int(cJSON *root)
{
	if (root != NULL)
		enums_walk(root, "", 1);
}

void
tpu_enums_to_str(cJSON *root)
{
	if (root != NULL)
		enums_walk(root, "", 0);
}

void
tpu_strip_private(cJSON *root)
{
	cJSON *it, *next;

	if (root == NULL)
		return;
	for (it = root->child; it != NULL; it = next) {
		next = it->next;
		if (it->string != NULL && it->string[0] == '_') {
			cJSON_Delete(cJSON_DetachItemViaPointer(root, it));
			continue;
		}
		if (cJSON_IsObject(it) || cJSON_IsArray(it))
			tpu_strip_private(it);
	}
}

const char *
tpu_api_name(enum tpu_api api)
{
	return api == TPU_API_V2ALPHA1 ? "v2alpha1" : "v2";
}

/* Copy the next path segment (up to '/') into out; the rest, or NULL. */
static const char *
segment(const char *p, char *out, size_t outlen)
{
	size_t n = strcspn(p, "/");

	if (n == 0 || n >= outlen)
		return NULL;
	memcpy(out, p, n);
	out[n] = '\0';
	return p + n;
}

/* Split "name:verb" in place. */
static void
split_verb(char *id, char *verb, size_t verblen)
{
	char *c = strchr(id, ':');

	verb[0] = '\0';
	if (c != NULL) {
		snprintf(verb, verblen, "%s", c + 1);
		*c = '\0';
	}
}

int
tpu_path_parse(const char *path, struct tpu_path *tp)
{
	const char *p;

	memset(tp, 0, sizeof *tp);
	if (tpu_startswith(path, "/v2/")) {
		tp->api = TPU_API_V2;
		p = path + 4;
	} else if (tpu_startswith(path, "/v2alpha1/")) {
		tp->api = TPU_API_V2ALPHA1;
		p = path + 10;
	} else
		return -1;
	if (!tpu_startswith(p, "projects/"))
		return -1;
	p = segment(p + 9, tp->project, sizeof tp->project);
	if (p == NULL || !tpu_startswith(p, "/locations"))
		return -1;
	p += 10;
	if (*p == '\0')
		return 0;
	if (*p != '/')
		return -1;
	p = segment(p + 1, tp->zone, sizeof tp->zone);
	if (p == NULL)
		return -1;
	split_verb(tp->zone, tp->verb, sizeof tp->verb);
	if (*p == '\0')
		return tp->zone[0] != '\0' ? 0 : -1;
	if (tp->verb[0] != '\0')
		return -1;
	p = segment(p + 1, tp->coll, sizeof tp->coll);
	if (p == NULL)
		return -1;
	if (*p == '\0')
		return 0;
	p = segment(p + 1, tp->id, sizeof tp->id);
	if (p == NULL || *p != '\0')
		return -1;
	split_verb(tp->id, tp->verb, sizeof tp->verb);
	return tp->id[0] != '\0' ? 0 : -1;
}

/* Tokens look opaque but are just a scrambled offset. */
#define TOKEN_KEY 0x5a17c3e9UL

void
tpu_page_token(size_t off, char *out, size_t outlen)
{
	snprintf(out, outlen, "CgT%08lx",
	    ((unsigned long)off ^ TOKEN_KEY) & 0xffffffffUL);
}

long
tpu_page_token_parse(const char *s)
{
	unsigned long v = 0;
	size_t i;

	if (s == NULL || strlen(s) != 11 || strncmp(s, "CgT", 3) != 0)
		return -1;
	for (i = 3; i < 11; i++) {
		int c = (unsigned char)s[i];

		if (!isxdigit(c) || isupper(c))
			return -1;
		v = v * 16 +
		    (unsigned long)(isdigit(c) ? c - '0' : c - 'a' + 10);
	}
	v ^= TOKEN_KEY;
	return v > 100000000UL ? -1 : (long)v;
}

enum tpu_lro_kind
tpu_lro_spec(const char *spec, long *n)
{
	const char *errstr;

	if (spec == NULL)
		return TPU_LRO_NONE;
	if (tpu_startswith(spec, "lro-pending-")) {
		spec += 12;
		if (strcmp(spec, "inf") == 0 || strcmp(spec, "forever") == 0) {
			*n = -1;
			return TPU_LRO_PENDING;
		}
		*n = (long)tpu_strtonum(spec, 0, 1000000, &errstr);
		return errstr == NULL ? TPU_LRO_PENDING : TPU_LRO_NONE;
	}
	if (tpu_startswith(spec, "lro-error-")) {
		*n = (long)tpu_strtonum(spec + 10, 1, 16, &errstr);
		return errstr == NULL ? TPU_LRO_ERROR : TPU_LRO_NONE;
	}
	return TPU_LRO_NONE;
}

static const char *const code_names[] = { "OK", "CANCELLED", "UNKNOWN",
	"INVALID_ARGUMENT", "DEADLINE_EXCEEDED", "NOT_FOUND", "ALREADY_EXISTS",
	"PERMISSION_DENIED", "RESOURCE_EXHAUSTED", "FAILED_PRECONDITION",
	"ABORTED", "OUT_OF_RANGE", "UNIMPLEMENTED", "INTERNAL", "UNAVAILABLE",
	"DATA_LOSS", "UNAUTHENTICATED" };

const char *
tpu_code_name(int code)
{
	if (code < 0 || (size_t)code >= nitems(code_names))
		return "UNKNOWN";
	return code_names[code];
}

void
tpu_op_error_message(int code, const char *zone, unsigned long long eid,
    char *out, size_t outlen)
{
	switch (code) {
	case 8:
		snprintf(out, outlen,
		    "There is no more capacity in the zone \"%s\"; you can try "
		    "in another zone where Cloud TPU Nodes are offered (see "
		    "https://cloud.google.com/tpu/docs/regions) [EID: 0x%llx]",
		    zone, eid);
		break;
	case 1:
		snprintf(out, outlen, "Operation was cancelled.");
		break;
	case 4:
		snprintf(out, outlen,
		    "The operation did not complete before its deadline.");
		break;
	case 13:
		snprintf(out, outlen,
		    "Internal error. Please try again or contact Google "
		    "Support. [EID: 0x%llx]",
		    eid);
		break;
	case 14:
		snprintf(out, outlen,
		    "The service is currently unavailable. [EID: 0x%llx]", eid);
		break;
	default:
		snprintf(out, outlen, "Operation failed: %s (emulated fault)",
		    tpu_code_name(code));
		break;
	}
}

static int fail(char *msg, size_t msglen, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static int
fail(char *msg, size_t msglen, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, msglen, fmt, ap);
	va_end(ap);
	return -1;
}

static void
zone_gens(const struct offer_zone *z, char *out, size_t outlen)
{
	size_t i, o = 0;

	out[0] = '\0';
	for (i = 0; i < nitems(z->gens) && z->gens[i] != NULL; i++) {
		int n = snprintf(
		    out + o, outlen - o, "%s%s", i ? ", " : "", z->gens[i]);

		if (n < 0 || (size_t)n >= outlen - o)
			break;
		o += (size_t)n;
	}
}

static void
set_string(cJSON *obj, const char *key, const char *value)
{
	cJSON *s = cJSON_CreateString(value);

	if (cJSON_GetObjectItemCaseSensitive(obj, key) != NULL)
		cJSON_ReplaceItemInObjectCaseSensitive(obj, key, s);
	else
		cJSON_AddItemToObject(obj, key, s);
}

static int
check_accel(cJSON *node, const struct offer_zone *z, const char *zone,
    struct offer_accel *a, char *msg, size_t msglen)
{
	const cJSON *type =
	    cJSON_GetObjectItemCaseSensitive(node, "acceleratorType");
	cJSON *cfg =
	    cJSON_GetObjectItemCaseSensitive(node, "acceleratorConfig");
	const cJSON *ctype, *topo;
	char list[128], why[512];

	if (cfg != NULL && !cJSON_IsObject(cfg))
		return fail(msg, msglen,
		    "Invalid value at 'node.accelerator_config': must be an "
		    "object");
	if (cJSON_IsString(type) && type->valuestring[0] != '\0') {
		if (offer_accel_parse(type->valuestring, a, why, sizeof why) !=
		    0)
			return fail(msg, msglen,
			    "Invalid value for field 'node.accelerator_type': "
			    "%s",
			    why);
	} else if (cfg != NULL) {
		const struct offer_gen *g = NULL;

		ctype = cJSON_GetObjectItemCaseSensitive(cfg, "type");
		topo = cJSON_GetObjectItemCaseSensitive(cfg, "topology");
		if (cJSON_IsString(ctype))
			g = offer_gen_by_config(ctype->valuestring, 0);
		else if (cJSON_IsNumber(ctype))
			g = offer_gen_by_config(NULL, ctype->valueint);
		if (g == NULL)
			return fail(msg, msglen,
			    "Invalid value for field "
			    "'node.accelerator_config.type': use V2, V3, V4, "
			    "V5LITE_POD, V5P or V6E");
		if (!cJSON_IsString(topo))
			return fail(msg, msglen,
			    "Field 'node.accelerator_config.topology' is "
			    "required");
		if (offer_accel_from_topology(
		        g, topo->valuestring, a, why, sizeof why) != 0)
			return fail(msg, msglen,
			    "Invalid value for field "
			    "'node.accelerator_config.topology': %s",
			    why);
	} else
		return fail(msg, msglen,
		    "Either 'node.accelerator_type' or "
		    "'node.accelerator_config' must be specified");
	if (cfg != NULL && cJSON_IsString(type) && type->valuestring[0]) {
		topo = cJSON_GetObjectItemCaseSensitive(cfg, "topology");
		if (cJSON_IsString(topo) &&
		    offer_accel_set_topology(
		        a, topo->valuestring, why, sizeof why) != 0)
			return fail(msg, msglen,
			    "Invalid value for field "
			    "'node.accelerator_config.topology': %s",
			    why);
	}
	if (!offer_zone_has(z, a->gen)) {
		zone_gens(z, list, sizeof list);
		return fail(msg, msglen,
		    "Accelerator type \"%s\" is not available in zone \"%s\" "
		    "(available generations there: %s)",
		    a->type, zone, list);
	}
	return 0;
}

/* A boolean field of obj, when present, must be a JSON boolean. */
static int
check_bool(const cJSON *obj, const char *key, const char *field, char *msg,
    size_t msglen)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);

	if (v != NULL && !cJSON_IsBool(v))
		return fail(msg, msglen,
		    "Invalid value for field '%s': must be a boolean", field);
	return 0;
}

/*
 * The fields create takes besides the shape, labels and metadata:
 * cidrBlock (validate_cidr_block), networkConfig.queueCount (int32),
 * shieldedInstanceConfig.enableSecureBoot, autocheckpointEnabled and
 * bootDiskConfig (tpu.v2alpha1.json; on a v2 route tpu.c refuses the
 * last two first, as "Unknown name": validate_api_fields).
 */
static int
check_node_extras(const cJSON *node, char *msg, size_t msglen)
{
	const cJSON *v, *x, *k;
	char detail[256];

	v = cJSON_GetObjectItemCaseSensitive(node, "cidrBlock");
	if (v != NULL &&
	    (!cJSON_IsString(v) || validate_cidr_block(v->valuestring, detail,
	                               sizeof detail) != 0))
		return fail(msg, msglen,
		    "Invalid value for field 'node.cidr_block': %s",
		    cJSON_IsString(v) ? detail : "must be a string");
	x = cJSON_GetObjectItemCaseSensitive(node, "networkConfig");
	v = cJSON_GetObjectItemCaseSensitive(x, "queueCount");
	if (v != NULL && (!cJSON_IsNumber(v) || v->valuedouble < 1 ||
	                     v->valuedouble > 2147483647.0 ||
	                     v->valuedouble != (double)(long)v->valuedouble))
		return fail(msg, msglen,
		    "Invalid value for field "
		    "'node.network_config.queue_count': "
		    "a positive int32");
	x = cJSON_GetObjectItemCaseSensitive(node, "shieldedInstanceConfig");
	if (x != NULL && !cJSON_IsObject(x))
		return fail(msg, msglen,
		    "Invalid value for field 'node.shielded_instance_config'");
	if (check_bool(x, "enableSecureBoot",
	        "node.shielded_instance_config.enable_secure_boot", msg,
	        msglen) != 0 ||
	    check_bool(node, "autocheckpointEnabled",
	        "node.autocheckpoint_enabled", msg, msglen) != 0)
		return -1;
	x = cJSON_GetObjectItemCaseSensitive(node, "bootDiskConfig");
	if (x == NULL)
		return 0;
	if (!cJSON_IsObject(x))
		return fail(msg, msglen,
		    "Invalid value for field 'node.boot_disk_config'");
	if (check_bool(x, "enableConfidentialCompute",
	        "node.boot_disk_config.enable_confidential_compute", msg,
	        msglen) != 0)
		return -1;
	k = cJSON_GetObjectItemCaseSensitive(
	    cJSON_GetObjectItemCaseSensitive(x, "customerEncryptionKey"),
	    "kmsKeyName");
	if (k != NULL &&
	    (!cJSON_IsString(k) ||
	        validate_kms_key(k->valuestring, detail, sizeof detail) != 0))
		return fail(msg, msglen,
		    "Invalid value for field "
		    "'node.boot_disk_config.customer_encryption_key."
		    "kms_key_name': %s",
		    cJSON_IsString(k) ? detail : "must be a string");
	/* gcloud: "CMEK layer is required" for a confidential boot disk */
	if (cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(
	        x, "enableConfidentialCompute")) &&
	    k == NULL)
		return fail(msg, msglen,
		    "Invalid value for field 'node.boot_disk_config': a "
		    "confidential compute boot disk needs "
		    "customer_encryption_key.kms_key_name");
	return 0;
}

int
tpu_node_check(
    cJSON *node, const char *zone, int *nworkers, char *msg, size_t msglen)
{
	const struct offer_zone *z = offer_zone_find(zone);
	struct offer_accel a;
	const cJSON *rv, *sc, *desc, *tags, *it;
	cJSON *cfg;
	char detail[512];

	if (z == NULL)
		return fail(msg, msglen, "Location %s is not found", zone);
	if (!cJSON_IsObject(node))
		return fail(msg, msglen, "The node must be a JSON object");
	tpu_enums_to_str(node);
	if (check_accel(node, z, zone, &a, msg, msglen) != 0)
		return -1;
	rv = cJSON_GetObjectItemCaseSensitive(node, "runtimeVersion");
	if (!cJSON_IsString(rv) || rv->valuestring[0] == '\0')
		return fail(msg, msglen,
		    "Field 'node.runtime_version' is required (for %s, e.g. "
		    "\"%s\")",
		    a.gen->name, a.gen->rvs[0]);
	if (!offer_runtime_known(a.gen, rv->valuestring))
		return fail(msg, msglen,
		    "Runtime version \"%s\" is not supported for accelerator "
		    "type \"%s\" (e.g. \"%s\")",
		    rv->valuestring, a.type, a.gen->rvs[0]);
	if (validate_labels(cJSON_GetObjectItemCaseSensitive(node, "labels"),
	        detail, sizeof detail) != 0)
		return fail(msg, msglen,
		    "Invalid value for field 'node.labels': %s", detail);
	if (validate_metadata(
	        cJSON_GetObjectItemCaseSensitive(node, "metadata"), detail,
	        sizeof detail) != 0)
		return fail(msg, msglen,
		    "Invalid value for field 'node.metadata': %s", detail);
	desc = cJSON_GetObjectItemCaseSensitive(node, "description");
	if (desc != NULL && !cJSON_IsNull(desc) &&
	    (!cJSON_IsString(desc) || validate_description(desc->valuestring,
	                                  detail, sizeof detail) != 0))
		return fail(msg, msglen,
		    "Invalid value for field 'node.description': %s",
		    cJSON_IsString(desc) ? detail : "must be a string");
	tags = cJSON_GetObjectItemCaseSensitive(node, "tags");
	if (tags != NULL) {
		if (!cJSON_IsArray(tags))
			return fail(msg, msglen,
			    "Invalid value for field 'node.tags': must be a "
			    "list of strings");
		cJSON_ArrayForEach(it, tags)
		{
			if (!cJSON_IsString(it))
				return fail(msg, msglen,
				    "Invalid value for field 'node.tags': must "
				    "be a list of strings");
			if (validate_tag(
			        it->valuestring, detail, sizeof detail) != 0)
				return fail(msg, msglen,
				    "Invalid value for field 'node.tags': %s",
				    detail);
		}
	}
	sc = cJSON_GetObjectItemCaseSensitive(node, "schedulingConfig");
	if (sc != NULL && !cJSON_IsObject(sc))
		return fail(msg, msglen,
		    "Invalid value for field 'node.scheduling_config'");
	if (sc != NULL &&
	    (cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(sc, "spot")) ||
	        cJSON_IsTrue(
	            cJSON_GetObjectItemCaseSensitive(sc, "preemptible"))) &&
	    cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(sc, "reserved")))
		return fail(msg, msglen,
		    "Invalid value for field 'node.scheduling_config': spot or "
		    "preemptible nodes cannot also be reserved");
	if (check_node_extras(node, msg, msglen) != 0)
		return -1;
	/* Normalise: both the type name and the config. */
	set_string(node, "acceleratorType", a.type);
	cfg = cJSON_CreateObject();
	cJSON_AddStringToObject(cfg, "topology", a.topology);
	cJSON_AddStringToObject(cfg, "type", a.gen->config);
	if (cJSON_GetObjectItemCaseSensitive(node, "acceleratorConfig") != NULL)
		cJSON_ReplaceItemInObjectCaseSensitive(
		    node, "acceleratorConfig", cfg);
	else
		cJSON_AddItemToObject(node, "acceleratorConfig", cfg);
	*nworkers = a.hosts;
	return 0;
}

int
tpu_update_mask_check(
    const char *mask, unsigned *fields, char *msg, size_t msglen)
{
	/* tpu.v2.json nodes.patch: "Supported fields: [description, tags,
	 * labels, metadata, network_config.enable_external_ips]"; a field
	 * mask path may be given in snake_case or lowerCamelCase. */
	static const struct {
		const char *path;
		unsigned bit;
	} ok[] = {
		{ "description", TPU_MASK_DESCRIPTION },
		{ "labels", TPU_MASK_LABELS },
		{ "metadata", TPU_MASK_METADATA },
		{ "tags", TPU_MASK_TAGS },
		{ "network_config.enable_external_ips", TPU_MASK_EXTERNAL_IPS },
		{ "networkConfig.enableExternalIps", TPU_MASK_EXTERNAL_IPS },
	};
	const char *p = mask, *c;
	size_t n, i;
	unsigned bits = 0, found;

	if (mask == NULL || *mask == '\0')
		return fail(msg, msglen,
		    "Field 'update_mask' is required (one or more of "
		    "description, tags, labels, metadata, "
		    "network_config.enable_external_ips)");
	while (*p != '\0') {
		c = strchr(p, ',');
		n = c != NULL ? (size_t)(c - p) : strlen(p);
		found = 0;
		for (i = 0; i < nitems(ok); i++) {
			if (strlen(ok[i].path) == n &&
			    strncmp(ok[i].path, p, n) == 0)
				found = ok[i].bit;
		}
		if (!found)
			return fail(msg, msglen,
			    "Invalid update_mask path \"%.*s\": supported "
			    "fields are description, tags, labels, metadata, "
			    "network_config.enable_external_ips",
			    (int)(n > 64 ? 64 : n), p);
		bits |= found;
		p += n;
		if (*p == ',')
			p++;
	}
	if (fields != NULL)
		*fields = bits;
	return 0;
}

cJSON *
tpu_qr_node_ids(const cJSON *spec, enum tpu_api api, char *msg, size_t msglen)
{
	const char *pkey =
	    api == TPU_API_V2 ? "multisliceParams" : "multiNodeParams";
	const cJSON *id = cJSON_GetObjectItemCaseSensitive(spec, "nodeId");
	const cJSON *params = cJSON_GetObjectItemCaseSensitive(spec, pkey);
	const cJSON *count, *prefix;
	cJSON *ids = NULL;
	char name[128], detail[512];
	long long n = 0, i;

	if (cJSON_IsString(id) && params != NULL) {
		fail(msg, msglen,
		    "Only one of 'node_id' and '%s' may be set in a node spec",
		    pkey);
		return NULL;
	}
	if (cJSON_IsString(id)) {
		if (validate_node_id(id->valuestring, detail, sizeof detail) !=
		    0) {
			fail(msg, msglen, "Invalid node_id: %s", detail);
			return NULL;
		}
		ids = cJSON_CreateArray();
		cJSON_AddItemToArray(ids, cJSON_CreateString(id->valuestring));
		return ids;
	}
	if (!cJSON_IsObject(params)) {
		fail(msg, msglen,
		    "A node spec needs 'node_id' or '%s' {nodeCount, "
		    "nodeIdPrefix}",
		    pkey);
		return NULL;
	}
	count = cJSON_GetObjectItemCaseSensitive(params, "nodeCount");
	prefix = cJSON_GetObjectItemCaseSensitive(params, "nodeIdPrefix");
	/* tpu.v2.json MultisliceParams.nodeCount: "This needs to be > 1"
	 * (one node is a nodeId); 64 is the emulator's own bound. */
	if (count == NULL || json_as_int64(count, &n) != 0 || n < 2 || n > 64) {
		fail(msg, msglen,
		    "Invalid value for '%s.node_count': an integer from 2 to "
		    "64 (one node is a node_id)",
		    pkey);
		return NULL;
	}
	if (!cJSON_IsString(prefix) ||
	    validate_node_id(prefix->valuestring, detail, sizeof detail) != 0) {
		fail(msg, msglen, "Invalid value for '%s.node_id_prefix': %s",
		    pkey, cJSON_IsString(prefix) ? detail : "must be a string");
		return NULL;
	}
	/* The nodes are named prefix-0 .. prefix-(N-1): each a node id. */
	ids = cJSON_CreateArray();
	for (i = 0; i < n; i++) {
		snprintf(name, sizeof name, "%s-%lld", prefix->valuestring, i);
		if (validate_node_id(name, detail, sizeof detail) != 0) {
			fail(msg, msglen,
			    "Invalid value for '%s.node_id_prefix': node %s",
			    pkey, detail);
			cJSON_Delete(ids);
			return NULL;
		}
		cJSON_AddItemToArray(ids, cJSON_CreateString(name));
	}
	return ids;
}

long long
tpu_duration_ms(const char *s)
{
	long long whole = 0, frac = 0, scale = 1000;
	const char *p = s;
	int digits = 0;

	if (s == NULL)
		return -1;
	while (*p >= '0' && *p <= '9' && digits < 12) {
		whole = whole * 10 + (*p++ - '0');
		digits++;
	}
	if (digits == 0)
		return -1;
	if (*p == '.') {
		p++;
		while (*p >= '0' && *p <= '9') {
			if (scale > 1) {
				scale /= 10;
				frac += (*p - '0') * scale;
			}
			p++;
		}
	}
	if (strcmp(p, "s") != 0)
		return -1;
	return whole * 1000 + frac;
}

long long
tpu_time_ms(const char *s)
{
	struct tm tm;
	const char *p;
	long long ms = 0;
	int scale = 100;
	time_t t;

	if (s == NULL)
		return -1;
	memset(&tm, 0, sizeof tm);
	p = strptime(s, "%Y-%m-%dT%H:%M:%S", &tm);
	if (p == NULL)
		return -1;
	if (*p == '.') {
		for (p++; *p >= '0' && *p <= '9'; p++) {
			ms += (*p - '0') * scale;
			scale /= 10;
		}
	}
	if (strcmp(p, "Z") != 0)
		return -1;
	t = timegm(&tm);
	if (t == (time_t)-1)
		return -1;
	return (long long)t * 1000 + ms;
}
