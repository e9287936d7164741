/*
 * The declarative spec (spec.h): YAML through libyaml's event parser into
 * a cJSON tree (plain scalars typed as YAML 1.2's core schema, keeping
 * their text so a plain 123 may still be a string field), JSON through
 * cJSON, then one validation pass over a table of keys per mapping.  The
 * rules are the client's (catalog.h, tpuvalid.h, gcsurl.h, util.h): a spec
 * never accepts what the equivalent flags refuse.
 */
#include <sys/stat.h>

#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>
#include <yaml.h>

#include "buf.h"
#include "catalog.h"
#include "fsutil.h"
#include "gcsurl.h"
#include "json.h"
#include "shquote.h"
#include "spec.h"
#include "suggest.h"
#include "tpuvalid.h"
#include "util.h"
#include "xmalloc.h"

#define MAX_DEPTH 32

/* YAML */

struct yconv {
	yaml_parser_t p;
	struct tpu_err *err;
	const char *origin;
};

static int
ybad(struct yconv *y, const yaml_mark_t *m, const char *what)
{
	return tpu_error(y->err, TPU_E_USAGE, "%s:%zu:%zu: %s", y->origin,
	    m->line + 1, m->column + 1, what);
}

static int
ynext(struct yconv *y, yaml_event_t *ev)
{
	if (yaml_parser_parse(&y->p, ev))
		return 0;
	return tpu_error(y->err, TPU_E_USAGE, "%s:%zu:%zu: invalid YAML: %s",
	    y->origin, y->p.problem_mark.line + 1, y->p.problem_mark.column + 1,
	    y->p.problem != NULL ? y->p.problem : "syntax error");
}

/* A plain scalar typed by YAML 1.2's core schema; its text is kept. */
static cJSON *
yplain(const char *s)
{
	cJSON *it;
	const char *errstr;
	long long n;

	if (*s == '\0' || strcmp(s, "~") == 0 || strcmp(s, "null") == 0 ||
	    strcmp(s, "Null") == 0 || strcmp(s, "NULL") == 0)
		return cJSON_CreateNull();
	if (strcmp(s, "true") == 0 || strcmp(s, "True") == 0 ||
	    strcmp(s, "TRUE") == 0)
		it = cJSON_CreateTrue();
	else if (strcmp(s, "false") == 0 || strcmp(s, "False") == 0 ||
	         strcmp(s, "FALSE") == 0)
		it = cJSON_CreateFalse();
	else {
		n = tpu_strtonum(s, -(1LL << 53), 1LL << 53, &errstr);
		if (errstr != NULL || (s[0] == '0' && s[1] != '\0') ||
		    s[0] == '+')
			return cJSON_CreateString(s);
		it = cJSON_CreateNumber((double)n);
	}
	/* cJSON_Delete frees valuestring of any item type. */
	it->valuestring = xstrdup(s);
	return it;
}

static int ynode(struct yconv *, yaml_event_t *, int depth, cJSON **);

static int
ymapping(struct yconv *y, int depth, cJSON **out)
{
	yaml_event_t ev;
	cJSON *obj = cJSON_CreateObject(), *val = NULL;
	char *key = NULL;
	int rc;

	for (;;) {
		if ((rc = ynext(y, &ev)) != 0)
			goto fail;
		if (ev.type == YAML_MAPPING_END_EVENT) {
			yaml_event_delete(&ev);
			break;
		}
		if (ev.type != YAML_SCALAR_EVENT) {
			rc = ybad(y, &ev.start_mark,
			    "a mapping key must be a plain string");
			yaml_event_delete(&ev);
			goto fail;
		}
		key = xstrdup((const char *)ev.data.scalar.value);
		if (strlen(key) != ev.data.scalar.length) {
			rc = ybad(y, &ev.start_mark, "NUL byte in a key");
			yaml_event_delete(&ev);
			goto fail;
		}
		if (cJSON_GetObjectItemCaseSensitive(obj, key) != NULL) {
			char msg[160];

			snprintf(
			    msg, sizeof msg, "key '%.100s' given twice", key);
			rc = ybad(y, &ev.start_mark, msg);
			yaml_event_delete(&ev);
			goto fail;
		}
		yaml_event_delete(&ev);
		if ((rc = ynext(y, &ev)) != 0)
			goto fail;
		rc = ynode(y, &ev, depth + 1, &val);
		yaml_event_delete(&ev);
		if (rc != 0)
			goto fail;
		cJSON_AddItemToObject(obj, key, val);
		free(key);
		key = NULL;
	}
	*out = obj;
	return 0;
fail:
	free(key);
	cJSON_Delete(obj);
	return rc;
}

static int
ysequence(struct yconv *y, int depth, cJSON **out)
{
	yaml_event_t ev;
	cJSON *arr = cJSON_CreateArray(), *val;
	int rc;

	for (;;) {
		if ((rc = ynext(y, &ev)) != 0)
			goto fail;
		if (ev.type == YAML_SEQUENCE_END_EVENT) {
			yaml_event_delete(&ev);
			break;
		}
		rc = ynode(y, &ev, depth + 1, &val);
		yaml_event_delete(&ev);
		if (rc != 0)
			goto fail;
		cJSON_AddItemToArray(arr, val);
	}
	*out = arr;
	return 0;
fail:
	cJSON_Delete(arr);
	return rc;
}

/* The node that starts with ev (which the caller deletes). */
static int
ynode(struct yconv *y, yaml_event_t *ev, int depth, cJSON **out)
{
	*out = NULL;
	if (depth > MAX_DEPTH)
		return ybad(y, &ev->start_mark, "nested too deeply");
	switch (ev->type) {
	case YAML_ALIAS_EVENT:
		return ybad(y, &ev->start_mark,
		    "aliases (*name) are not supported in a spec");
	case YAML_SCALAR_EVENT:
		if (ev->data.scalar.anchor != NULL)
			return ybad(y, &ev->start_mark,
			    "anchors (&name) are not supported in a spec");
		if (strlen((const char *)ev->data.scalar.value) !=
		    ev->data.scalar.length)
			return ybad(y, &ev->start_mark, "NUL byte in a value");
		if (ev->data.scalar.plain_implicit &&
		    ev->data.scalar.style == YAML_PLAIN_SCALAR_STYLE)
			*out = yplain((const char *)ev->data.scalar.value);
		else
			*out = cJSON_CreateString(
			    (const char *)ev->data.scalar.value);
		return 0;
	case YAML_MAPPING_START_EVENT:
		if (ev->data.mapping_start.anchor != NULL)
			return ybad(y, &ev->start_mark,
			    "anchors (&name) are not supported in a spec");
		return ymapping(y, depth, out);
	case YAML_SEQUENCE_START_EVENT:
		if (ev->data.sequence_start.anchor != NULL)
			return ybad(y, &ev->start_mark,
			    "anchors (&name) are not supported in a spec");
		return ysequence(y, depth, out);
	default:
		return ybad(y, &ev->start_mark, "unexpected YAML event");
	}
}

static int
yaml_to_json(const char *text, size_t len, const char *origin, cJSON **out,
    struct tpu_err *err)
{
	struct yconv y;
	yaml_event_t ev;
	cJSON *root = NULL;
	int rc, docs = 0;

	*out = NULL;
	memset(&y, 0, sizeof y);
	y.err = err;
	y.origin = origin;
	if (!yaml_parser_initialize(&y.p))
		TPU_BUG("yaml_parser_initialize failed");
	yaml_parser_set_input_string(&y.p, (const unsigned char *)text, len);
	for (;;) {
		if ((rc = ynext(&y, &ev)) != 0)
			goto out;
		if (ev.type == YAML_STREAM_END_EVENT) {
			yaml_event_delete(&ev);
			break;
		}
		if (ev.type == YAML_DOCUMENT_START_EVENT) {
			if (++docs > 1) {
				rc = ybad(&y, &ev.start_mark,
				    "one YAML document per spec");
				yaml_event_delete(&ev);
				goto out;
			}
			yaml_event_delete(&ev);
			if ((rc = ynext(&y, &ev)) != 0)
				goto out;
			rc = ynode(&y, &ev, 0, &root);
			yaml_event_delete(&ev);
			if (rc != 0)
				goto out;
			continue;
		}
		yaml_event_delete(&ev);
	}
	if (root == NULL)
		rc = tpu_error(err, TPU_E_USAGE, "%s: empty spec", origin);
out:
	yaml_parser_delete(&y.p);
	if (rc != 0) {
		cJSON_Delete(root);
		return rc;
	}
	*out = root;
	return 0;
}

/* Validation */

struct vctx {
	struct spec *s;
	struct tpu_err *err;
	const char *dir;
};

/* "prefix.key" for messages. */
static void
path_of(char *buf, size_t len, const char *prefix, const char *key)
{
	if (prefix == NULL)
		snprintf(buf, len, "%.100s", key);
	else
		snprintf(buf, len, "%s.%.100s", prefix, key);
}

static int bad(struct vctx *v, const char *path, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static int
bad(struct vctx *v, const char *path, const char *fmt, ...)
{
	char msg[TPU_ERR_MSGLEN];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	return tpu_error(
	    v->err, TPU_E_USAGE, "%s: %s: %s", v->s->origin, path, msg);
}

/* A validator's error, prefixed with the spec and the field. */
static int
rebad(struct vctx *v, const char *path)
{
	v->err->code = TPU_E_USAGE;
	return tpu_error_prefix(v->err, "%s: %s", v->s->origin, path);
}

/* Every key of obj must be in keys (NULL-terminated). */
static int
check_keys(struct vctx *v, const cJSON *obj, const char *prefix,
    const char *const *keys)
{
	const cJSON *it;
	size_t i;

	cJSON_ArrayForEach(it, obj)
	{
		const char *best;
		char p[160], q[160];

		for (i = 0; keys[i] != NULL; i++)
			if (strcmp(it->string, keys[i]) == 0)
				break;
		if (keys[i] != NULL)
			continue;
		best = suggest_best(it->string, keys, i);
		path_of(p, sizeof p, prefix, it->string);
		if (best != NULL) {
			path_of(q, sizeof q, prefix, best);
			return tpu_error(v->err, TPU_E_USAGE,
			    "%s: unknown key '%s'; did you mean '%s'?",
			    v->s->origin, p, q);
		}
		return tpu_error(v->err, TPU_E_USAGE,
		    "%s: unknown key '%s' (see tpuctl-submit(5))", v->s->origin,
		    p);
	}
	return 0;
}

static const char *
type_name(const cJSON *it)
{
	if (cJSON_IsString(it))
		return "a string";
	if (cJSON_IsNumber(it))
		return "a number";
	if (cJSON_IsBool(it))
		return "a boolean";
	if (cJSON_IsNull(it))
		return "empty";
	if (cJSON_IsArray(it))
		return "a list";
	return "a mapping";
}

/* A string, or a YAML plain scalar read as a number or boolean (its
 * text). */
static const char *
as_text(const cJSON *it)
{
	if (cJSON_IsString(it))
		return it->valuestring;
	if ((cJSON_IsNumber(it) || cJSON_IsBool(it)) && it->valuestring != NULL)
		return it->valuestring;
	return NULL;
}

static int
get_string(struct vctx *v, const cJSON *obj, const char *prefix,
    const char *key, const char **out)
{
	const cJSON *it = cJSON_GetObjectItemCaseSensitive(obj, key);
	char p[160];

	*out = NULL;
	if (it == NULL)
		return 0;
	path_of(p, sizeof p, prefix, key);
	if ((*out = as_text(it)) == NULL)
		return bad(v, p, "must be a string, not %s", type_name(it));
	if (**out == '\0')
		return bad(v, p, "must not be empty");
	return 0;
}

static int
get_bool(struct vctx *v, const cJSON *obj, const char *prefix, const char *key,
    int *out)
{
	const cJSON *it = cJSON_GetObjectItemCaseSensitive(obj, key);
	char p[160];

	*out = 0;
	if (it == NULL)
		return 0;
	path_of(p, sizeof p, prefix, key);
	if (!cJSON_IsBool(it))
		return bad(v, p, "must be true or false, not %s%s%s%s",
		    type_name(it), as_text(it) ? " '" : "",
		    as_text(it) ? as_text(it) : "", as_text(it) ? "'" : "");
	*out = cJSON_IsTrue(it);
	return 0;
}

static int
get_int(struct vctx *v, const cJSON *obj, const char *prefix, const char *key,
    long long min, long long max, long long *out, int *given)
{
	const cJSON *it = cJSON_GetObjectItemCaseSensitive(obj, key);
	long long n;
	char p[160];

	*given = 0;
	if (it == NULL)
		return 0;
	path_of(p, sizeof p, prefix, key);
	if (!cJSON_IsNumber(it) || json_as_int64(it, &n) != 0)
		return bad(v, p,
		    "must be a whole number (%lld to %lld), not %s", min, max,
		    type_name(it));
	if (n < min || n > max)
		return bad(
		    v, p, "%lld is out of range: %lld to %lld", n, min, max);
	*out = n;
	*given = 1;
	return 0;
}

/* A mapping of strings; each pair goes through check (may be NULL). */
static int
get_map(struct vctx *v, const cJSON *obj, const char *prefix, const char *key,
    const cJSON **out)
{
	const cJSON *it = cJSON_GetObjectItemCaseSensitive(obj, key), *e;
	char p[160], q[320];

	*out = NULL;
	if (it == NULL)
		return 0;
	path_of(p, sizeof p, prefix, key);
	if (!cJSON_IsObject(it))
		return bad(v, p,
		    "must be a mapping of names to strings, not %s",
		    type_name(it));
	cJSON_ArrayForEach(e, it)
	{
		snprintf(q, sizeof q, "%s.%.100s", p, e->string);
		if (as_text(e) == NULL)
			return bad(
			    v, q, "must be a string, not %s", type_name(e));
		/* Normalize YAML plain numbers to strings in place. */
		if (!cJSON_IsString(e)) {
			cJSON *s = cJSON_CreateString(e->valuestring);

			/* (ReplaceItemInObject keeps the key.) */
			cJSON_ReplaceItemInObjectCaseSensitive(
			    (cJSON *)it, e->string, s);
			e = s;
		}
	}
	*out = it;
	return 0;
}

/* A list of non-empty strings without commas; a single string is a list
 * of one (kept as given: callers take both). */
static int
get_list(struct vctx *v, cJSON *obj, const char *prefix, const char *key,
    const cJSON **out)
{
	cJSON *it = cJSON_GetObjectItemCaseSensitive(obj, key), *e, *arr;
	char p[160];
	int i = 0;

	*out = NULL;
	if (it == NULL)
		return 0;
	path_of(p, sizeof p, prefix, key);
	if (as_text(it) != NULL) {
		arr = cJSON_CreateArray();
		cJSON_AddItemToArray(arr, cJSON_CreateString(as_text(it)));
		cJSON_ReplaceItemInObjectCaseSensitive(obj, key, arr);
		it = arr;
	}
	if (!cJSON_IsArray(it))
		return bad(
		    v, p, "must be a list of strings, not %s", type_name(it));
	if (cJSON_GetArraySize(it) == 0)
		return bad(v, p, "must not be an empty list");
	cJSON_ArrayForEach(e, it)
	{
		const char *t = as_text(e);

		if (t == NULL || *t == '\0')
			return bad(
			    v, p, "item %d must be a non-empty string", i);
		if (strchr(t, ',') != NULL)
			return bad(v, p,
			    "item %d '%s' has a comma: one item each", i, t);
		i++;
	}
	*out = it;
	return 0;
}

static int
valid_env_name(const char *s)
{
	const char *c;

	if (!(isalpha((unsigned char)*s) || *s == '_'))
		return 0;
	for (c = s; *c != '\0'; c++)
		if (!(isalnum((unsigned char)*c) || *c == '_'))
			return 0;
	return c - s <= 128;
}

static const char *const top_keys[] = {
	"checkpoint",
	"command",
	"delete-after",
	"env",
	"framework",
	"max-restarts",
	"name",
	"restart-backoff",
	"restart-on-failure",
	"slice",
	"stage",
	"timeout",
	"workdir",
	NULL,
};

static const char *const slice_keys[] = {
	"accelerator-type",
	"description",
	"guaranteed",
	"internal-ips",
	"labels",
	"metadata",
	"metadata-raw",
	"network",
	"node-count",
	"node-prefix",
	"preemptible",
	"reserved",
	"scopes",
	"service-account",
	"spot",
	"subnetwork",
	"tags",
	"topology",
	"type",
	"valid-until-duration",
	"version",
	"zones",
	NULL,
};

static const char *const framework_keys[] = {
	"name",
	"version",
	NULL,
};

static int
check_shape(struct vctx *v)
{
	struct spec *s = v->s;
	int rc;

	if (s->gen != NULL && s->topology == NULL)
		return bad(v, "slice.type", "goes with slice.topology");
	if (s->accel != NULL && s->gen != NULL)
		return bad(v, "slice.type",
		    "give slice.accelerator-type or slice.type with "
		    "slice.topology, not both");
	if (s->accel != NULL) {
		if ((rc = catalog_accel_parse(s->accel, &s->acc, v->err)) != 0)
			return rebad(v, "slice.accelerator-type");
		if (s->topology != NULL &&
		    (rc = catalog_accel_topology_match(
		         &s->acc, s->topology, v->err)) != 0)
			return rebad(v, "slice.topology");
		return 0;
	}
	if (s->topology != NULL) {
		if (s->gen == NULL)
			return bad(v, "slice.topology",
			    "goes with slice.type (the generation, e.g. v4) "
			    "or slice.accelerator-type");
		if (catalog_gen_find(s->gen) == NULL) {
			struct catalog_accel a;

			/* The catalog's message names the generations. */
			if (catalog_accel_from_topology(
			        s->gen, s->topology, &a, v->err) != 0)
				return rebad(v, "slice.type");
		}
		if ((rc = catalog_accel_from_topology(
		         s->gen, s->topology, &s->acc, v->err)) != 0)
			return rebad(v, "slice.topology");
		return 0;
	}
	return bad(v, "slice",
	    "missing slice shape: give accelerator-type (e.g. v4-32) or "
	    "type and topology (e.g. v4 and 2x2x4)");
}

static int
check_slice(struct vctx *v, cJSON *sl)
{
	struct spec *s = v->s;
	const cJSON *it;
	long long n = 0;
	int rc, given, i;

	if ((rc = check_keys(v, sl, "slice", slice_keys)) != 0)
		return rc;
	if ((rc = get_string(v, sl, "slice", "accelerator-type", &s->accel)) !=
	        0 ||
	    (rc = get_string(v, sl, "slice", "type", &s->gen)) != 0 ||
	    (rc = get_string(v, sl, "slice", "topology", &s->topology)) != 0 ||
	    (rc = get_string(v, sl, "slice", "version", &s->version)) != 0 ||
	    (rc = get_string(v, sl, "slice", "network", &s->network)) != 0 ||
	    (rc = get_string(v, sl, "slice", "subnetwork", &s->subnetwork)) !=
	        0 ||
	    (rc = get_string(v, sl, "slice", "service-account",
	         &s->service_account)) != 0 ||
	    (rc = get_string(v, sl, "slice", "node-prefix", &s->node_prefix)) !=
	        0 ||
	    (rc = get_string(v, sl, "slice", "valid-until-duration",
	         &s->valid_until)) != 0 ||
	    (rc = get_bool(v, sl, "slice", "spot", &s->spot)) != 0 ||
	    (rc = get_bool(v, sl, "slice", "preemptible", &s->preemptible)) !=
	        0 ||
	    (rc = get_bool(v, sl, "slice", "reserved", &s->reserved)) != 0 ||
	    (rc = get_bool(v, sl, "slice", "guaranteed", &s->guaranteed)) !=
	        0 ||
	    (rc = get_bool(v, sl, "slice", "internal-ips", &s->internal_ips)) !=
	        0 ||
	    (rc = get_bool(v, sl, "slice", "metadata-raw", &s->metadata_raw)) !=
	        0 ||
	    (rc = get_map(v, sl, "slice", "labels", &s->labels)) != 0 ||
	    (rc = get_map(v, sl, "slice", "metadata", &s->metadata)) != 0 ||
	    (rc = get_list(v, sl, "slice", "zones", &s->zones)) != 0 ||
	    (rc = get_list(v, sl, "slice", "tags", &s->tags)) != 0 ||
	    (rc = get_list(v, sl, "slice", "scopes", &s->scopes)) != 0 ||
	    (rc = get_int(v, sl, "slice", "node-count", 2, SPEC_MAX_SLICES, &n,
	         &given)) != 0)
		return rc;
	s->node_count = (int)n;
	/* The description may be empty (it clears one). */
	it = cJSON_GetObjectItemCaseSensitive(sl, "description");
	if (it != NULL) {
		if (!cJSON_IsString(it))
			return bad(v, "slice.description",
			    "must be a string, not %s", type_name(it));
		if (tpuvalid_description(it->valuestring, v->err) != 0)
			return rebad(v, "slice.description");
		s->description = it->valuestring;
	}
	if ((rc = check_shape(v)) != 0)
		return rc;
	if (s->spot + s->preemptible + s->reserved + s->guaranteed > 1)
		return bad(v, "slice.spot",
		    "spot, preemptible, reserved and guaranteed exclude each "
		    "other");
	if (s->preemptible && spec_queued(s))
		return bad(v, "slice.preemptible",
		    "is for a single node created directly; a queued resource "
		    "or multislice uses spot");
	if (s->node_prefix != NULL && s->node_count == 0)
		return bad(
		    v, "slice.node-prefix", "goes with slice.node-count");
	if (s->node_count > 0) {
		const char *prefix =
		    s->node_prefix != NULL ? s->node_prefix : s->name;
		char last[96];

		if (s->node_prefix != NULL &&
		    catalog_node_name_validate(s->node_prefix, v->err) != 0)
			return rebad(v, "slice.node-prefix");
		snprintf(
		    last, sizeof last, "%.70s-%d", prefix, s->node_count - 1);
		if (catalog_node_name_validate(last, v->err) != 0)
			return bad(v,
			    s->node_prefix != NULL ? "slice.node-prefix"
			                           : "name",
			    "node id '%s' would be longer than 63 characters",
			    last);
	}
	if (s->valid_until != NULL) {
		long long secs;

		if (tpu_parse_duration(
		        "valid-until-duration", s->valid_until, &secs, v->err))
			return rebad(v, "slice.valid-until-duration");
	}
	i = 0;
	cJSON_ArrayForEach(it, s->zones)
	{
		const struct catalog_zone *z;
		char p[64];

		snprintf(p, sizeof p, "slice.zones[%d]", i++);
		if (catalog_zone_validate(as_text(it), v->err) != 0)
			return rebad(v, p);
		z = catalog_zone_find(as_text(it));
		if (z != NULL && !catalog_zone_offers(z, s->acc.gen))
			return bad(v, p,
			    "zone %s does not offer %s TPUs (accelerator type "
			    "%s)",
			    as_text(it), s->acc.gen->name, s->acc.type);
	}
	if (s->labels != NULL) {
		if (cJSON_GetObjectItemCaseSensitive(
		        s->labels, SPEC_RUN_ID_LABEL) != NULL)
			return bad(v, "slice.labels." SPEC_RUN_ID_LABEL,
			    "the label is reserved for tpuctl");
		cJSON_ArrayForEach(it, s->labels)
		{
			char p[160];

			snprintf(
			    p, sizeof p, "slice.labels.%.100s", it->string);
			if (catalog_label_validate(
			        it->string, it->valuestring, v->err) != 0)
				return rebad(v, p);
		}
		if (catalog_labels_validate(s->labels, v->err) != 0)
			return rebad(v, "slice.labels");
	}
	cJSON_ArrayForEach(it, s->metadata)
	{
		char p[160];

		snprintf(p, sizeof p, "slice.metadata.%.100s", it->string);
		if (catalog_metadata_validate(it->string, it->valuestring,
		        s->metadata_raw, v->err) != 0)
			return rebad(v, p);
	}
	if (s->service_account != NULL &&
	    strchr(s->service_account, '@') == NULL)
		return bad(v, "slice.service-account",
		    "'%s' is not an email address", s->service_account);
	return 0;
}

static int
check_framework(struct vctx *v, const cJSON *fw)
{
	struct spec *s = v->s;
	const char *c;
	int rc;

	if (fw == NULL)
		return 0;
	if (cJSON_IsObject(fw)) {
		if ((rc = check_keys(v, fw, "framework", framework_keys)) !=
		        0 ||
		    (rc = get_string(
		         v, fw, "framework", "name", &s->framework)) != 0 ||
		    (rc = get_string(v, fw, "framework", "version",
		         &s->framework_version)) != 0)
			return rc;
		if (s->framework == NULL)
			return bad(v, "framework.name", "is required");
	} else if ((s->framework = as_text(fw)) == NULL || *s->framework == 0)
		return bad(v, "framework",
		    "must be a name (jax, pytorch, tensorflow) or a mapping "
		    "with name and version");
	for (c = s->framework; *c != '\0'; c++)
		if (!islower((unsigned char)*c))
			return bad(v,
			    cJSON_IsObject(fw) ? "framework.name" : "framework",
			    "'%s' is not a framework name (jax, pytorch, "
			    "tensorflow)",
			    s->framework);
	if (s->framework_version != NULL &&
	    strspn(s->framework_version, "0123456789.") !=
	        strlen(s->framework_version))
		return bad(v, "framework.version",
		    "'%s' is not a dotted version number",
		    s->framework_version);
	return 0;
}

static int
check_job(struct vctx *v, cJSON *root)
{
	struct spec *s = v->s;
	const cJSON *it;
	const char *t;
	int rc;

	if ((rc = check_framework(
	         v, cJSON_GetObjectItemCaseSensitive(root, "framework"))) != 0)
		return rc;
	if ((rc = get_string(v, root, NULL, "workdir", &s->workdir)) != 0 ||
	    (rc = get_string(v, root, NULL, "stage", &s->stage)) != 0 ||
	    (rc = get_map(v, root, NULL, "env", &s->env)) != 0 ||
	    (rc = get_int(v, root, NULL, "max-restarts", 0, SPEC_MAX_RESTARTS,
	         &s->max_restarts, &s->has_max_restarts)) != 0 ||
	    (rc = get_bool(v, root, NULL, "delete-after", &s->delete_after)) !=
	        0 ||
	    (rc = get_bool(v, root, NULL, "restart-on-failure",
	         &s->restart_on_failure)) != 0 ||
	    (rc = get_string(v, root, NULL, "checkpoint", &s->checkpoint)) != 0)
		return rc;
	/* run --restart-on-failure's rule: it goes with max-restarts (given
	   false, it says nothing) */
	if (s->restart_on_failure && !s->has_max_restarts)
		return bad(v, "restart-on-failure", "goes with max-restarts");
	if ((it = cJSON_GetObjectItemCaseSensitive(root, "restart-backoff")) !=
	    NULL) {
		if ((t = as_text(it)) == NULL)
			return bad(v, "restart-backoff",
			    "must be a duration (30s, 5m), not %s",
			    type_name(it));
		if (tpu_parse_duration(
		        "restart-backoff", t, &s->restart_backoff_secs, v->err))
			return rebad(v, "restart-backoff");
		if (s->restart_backoff_secs < 0 ||
		    s->restart_backoff_secs > 24 * 3600)
			return bad(v, "restart-backoff",
			    "'%s' must be between 0 s and 1 day", t);
		if (!s->has_max_restarts)
			return bad(
			    v, "restart-backoff", "goes with max-restarts");
	}
	if ((it = cJSON_GetObjectItemCaseSensitive(root, "timeout")) != NULL) {
		if ((t = as_text(it)) == NULL)
			return bad(v, "timeout",
			    "must be a duration (90s, 5m, 2h), not %s",
			    type_name(it));
		if (tpu_parse_duration("timeout", t, &s->timeout_secs, v->err))
			return rebad(v, "timeout");
		if (s->timeout_secs <= 0)
			return bad(v, "timeout", "must be longer than 0 s");
	}
	if (s->checkpoint != NULL) {
		struct gcs_url u;

		/* run --checkpoint's rule */
		if (!gcs_is_url(s->checkpoint))
			return bad(v, "checkpoint",
			    "'%s' must be a gs://BUCKET[/PREFIX] URL",
			    s->checkpoint);
		if (gcs_url_parse(s->checkpoint, &u, v->err) != 0)
			return rebad(v, "checkpoint");
		gcs_url_release(&u);
	}
	if (s->stage != NULL) {
		struct gcs_url u;

		if (!gcs_is_url(s->stage))
			return bad(v, "stage",
			    "'%s' is not a gs://BUCKET/PREFIX URL", s->stage);
		if (gcs_url_parse(s->stage, &u, v->err) != 0)
			return rebad(v, "stage");
		gcs_url_release(&u);
	}
	cJSON_ArrayForEach(it, s->env)
	{
		char p[160];

		snprintf(p, sizeof p, "env.%.100s", it->string);
		if (!valid_env_name(it->string))
			return bad(v, p,
			    "'%s' is not a variable name "
			    "([A-Za-z_][A-Za-z0-9_]*)",
			    it->string);
		if (strncmp(it->string, "TPUCTL_", 7) == 0)
			return bad(v, p,
			    "TPUCTL_* variables are set by tpuctl itself");
	}
	if ((it = cJSON_GetObjectItemCaseSensitive(root, "command")) != NULL) {
		const cJSON *e;
		int i = 0;

		if (cJSON_IsArray(it)) {
			if (cJSON_GetArraySize(it) == 0)
				return bad(
				    v, "command", "must not be an empty list");
			cJSON_ArrayForEach(e, it)
			{
				if (as_text(e) == NULL)
					return bad(v, "command",
					    "item %d must be a string, not %s",
					    i, type_name(e));
				i++;
			}
		} else if (as_text(it) == NULL || *as_text(it) == '\0')
			return bad(v, "command",
			    "must be a shell line or a list of arguments, not "
			    "%s",
			    type_name(it));
		s->command = it;
		s->has_job = 1;
	}
	if (!s->has_job) {
		static const char *const job_only[] = { "framework", "workdir",
			"stage", "env", "max-restarts", "restart-backoff",
			"restart-on-failure", "checkpoint", "timeout",
			"delete-after", NULL };
		size_t i;

		for (i = 0; job_only[i] != NULL; i++)
			if (cJSON_GetObjectItemCaseSensitive(
			        root, job_only[i]) != NULL)
				return bad(v, job_only[i],
				    "describes a job: give its command too");
	}
	if (s->workdir != NULL) {
		struct stat st;
		char *p;

		errno = 0;
		p = s->workdir[0] == '/' || v->dir == NULL
		        ? xstrdup(s->workdir)
		        : xasprintf("%s/%s", v->dir, s->workdir);

		if (stat(p, &st) != 0 || !S_ISDIR(st.st_mode)) {
			rc = bad(v, "workdir", "'%s' is not a directory%s%s", p,
			    errno != 0 ? ": " : "",
			    errno != 0 ? strerror(errno) : "");
			free(p);
			return rc;
		}
		/* from now on the path as resolved (what submit packs) */
		if (strcmp(p, s->workdir) != 0) {
			cJSON_ReplaceItemInObjectCaseSensitive(
			    root, "workdir", cJSON_CreateString(p));
			s->workdir =
			    cJSON_GetObjectItemCaseSensitive(root, "workdir")
			        ->valuestring;
		}
		free(p);
	}
	return 0;
}

int
spec_parse(struct spec *s, const char *text, size_t len, const char *origin,
    const char *dir, struct tpu_err *err)
{
	struct vctx v;
	cJSON *root = NULL, *sl;
	size_t i;
	int rc;

	memset(s, 0, sizeof *s);
	s->origin = origin;
	v.s = s;
	v.err = err;
	v.dir = dir;
	if (len > SPEC_MAX_SIZE)
		return tpu_error(err, TPU_E_USAGE,
		    "%s: larger than %d bytes: not a spec", origin,
		    SPEC_MAX_SIZE);
	if (memchr(text, '\0', len) != NULL)
		return tpu_error(
		    err, TPU_E_USAGE, "%s: NUL byte: not a text file", origin);
	for (i = 0; i < len && isspace((unsigned char)text[i]); i++)
		;
	if (i < len && text[i] == '{') {
		if ((root = json_parse(text, len, origin, err)) == NULL) {
			err->code = TPU_E_USAGE;
			return TPU_E_USAGE;
		}
	} else if ((rc = yaml_to_json(text, len, origin, &root, err)) != 0)
		return rc;
	s->root = root;
	if (!cJSON_IsObject(root)) {
		rc = tpu_error(err, TPU_E_USAGE,
		    "%s: a spec is a mapping of keys (name, slice, ...), not "
		    "%s",
		    origin, type_name(root));
		goto fail;
	}
	if ((rc = check_keys(&v, root, NULL, top_keys)) != 0 ||
	    (rc = get_string(&v, root, NULL, "name", &s->name)) != 0)
		goto fail;
	if (s->name == NULL) {
		rc = bad(
		    &v, "name", "is required (the node or queued resource)");
		goto fail;
	}
	if (catalog_node_name_validate(s->name, err) != 0) {
		rc = rebad(&v, "name");
		goto fail;
	}
	sl = cJSON_GetObjectItemCaseSensitive(root, "slice");
	if (sl == NULL) {
		rc = bad(&v, "slice", "is required (the TPU slice to create)");
		goto fail;
	}
	if (!cJSON_IsObject(sl)) {
		rc = bad(
		    &v, "slice", "must be a mapping, not %s", type_name(sl));
		goto fail;
	}
	if ((rc = check_slice(&v, sl)) != 0 || (rc = check_job(&v, root)) != 0)
		goto fail;
	return 0;
fail:
	spec_release(s);
	return rc;
}

int
spec_load(struct spec *s, const char *path, struct tpu_err *err)
{
	struct buf b;
	char *dir = NULL, *slash;
	int rc;

	memset(s, 0, sizeof *s);
	buf_init(&b, SPEC_MAX_SIZE + 1);
	if (strcmp(path, "-") == 0) {
		char chunk[8192];
		size_t n;
		int big = 0;

		/* A pipe is no regular file: read it here, capped. */
		while (!big && (n = fread(chunk, 1, sizeof chunk, stdin)) > 0)
			big = buf_append(&b, chunk, n) != 0;
		rc = big             ? tpu_error(err, TPU_E_USAGE,
		                           "-: larger than %d bytes: not a spec",
		                           SPEC_MAX_SIZE)
		     : ferror(stdin) ? tpu_error(err, TPU_E_USAGE,
		                           "spec: cannot read standard input")
		                     : 0;
		if (rc != 0) {
			buf_release(&b);
			return rc;
		}
	} else if ((rc = fsutil_read_file(path, 0, &b, NULL, err)) != 0) {
		buf_release(&b);
		if (rc == TPU_E_NOTFOUND || rc == TPU_E_IO)
			err->code = TPU_E_USAGE;
		return tpu_error_prefix(err, "spec");
	}
	if (strcmp(path, "-") != 0 && (slash = strrchr(path, '/')) != NULL)
		dir = xasprintf("%.*s", (int)(slash - path), path);
	rc = spec_parse(s, b.data != NULL ? b.data : "", b.len, path,
	    dir != NULL && *dir != '\0' ? dir : (dir != NULL ? "/" : NULL),
	    err);
	free(dir);
	buf_release(&b);
	return rc;
}

void
spec_release(struct spec *s)
{
	cJSON_Delete(s->root);
	memset(s, 0, sizeof *s);
}

int
spec_queued(const struct spec *s)
{
	return s->node_count > 0 || s->spot || s->reserved || s->guaranteed ||
	       s->valid_until != NULL;
}

cJSON *
spec_node_ids(const struct spec *s)
{
	cJSON *ids = cJSON_CreateArray();
	int i;

	if (s->node_count == 0) {
		cJSON_AddItemToArray(ids, cJSON_CreateString(s->name));
		return ids;
	}
	for (i = 0; i < s->node_count; i++) {
		char id[96];

		snprintf(id, sizeof id, "%s-%d",
		    s->node_prefix != NULL ? s->node_prefix : s->name, i);
		cJSON_AddItemToArray(ids, cJSON_CreateString(id));
	}
	return ids;
}

/* Diff */

static cJSON *
change(cJSON *changes, const char *op, const char *field, const char *from,
    const char *to, const char *immutable, const char *node)
{
	cJSON *c = cJSON_CreateObject();

	cJSON_AddStringToObject(c, "op", op);
	cJSON_AddStringToObject(c, "field", field);
	if (from != NULL)
		cJSON_AddStringToObject(c, "from", from);
	if (to != NULL)
		cJSON_AddStringToObject(c, "to", to);
	if (immutable != NULL)
		cJSON_AddStringToObject(c, "immutable", immutable);
	if (node != NULL)
		cJSON_AddStringToObject(c, "node", node);
	cJSON_AddItemToArray(changes, c);
	return c;
}

/* A map (labels or metadata) against the node's; skip names a key the
 * node may hold without the spec managing it. */
static int
diff_map(const cJSON *want, const cJSON *have, const char *what,
    const char *skip, int show_values, const char *node, cJSON *changes)
{
	const cJSON *it, *o;
	char f[192];
	int n = 0;

	cJSON_ArrayForEach(it, want)
	{
		o = cJSON_GetObjectItemCaseSensitive(have, it->string);
		snprintf(f, sizeof f, "%s.%.150s", what, it->string);
		if (!cJSON_IsString(o)) {
			change(changes, "+", f, NULL,
			    show_values ? it->valuestring : NULL, NULL, node);
			n++;
		} else if (strcmp(o->valuestring, it->valuestring) != 0) {
			change(changes, "~", f,
			    show_values ? o->valuestring : NULL,
			    show_values ? it->valuestring : NULL, NULL, node);
			n++;
		}
	}
	cJSON_ArrayForEach(it, have)
	{
		if (!cJSON_IsString(it) ||
		    (skip != NULL && strcmp(it->string, skip) == 0) ||
		    cJSON_GetObjectItemCaseSensitive(want, it->string) != NULL)
			continue;
		snprintf(f, sizeof f, "%s.%.150s", what, it->string);
		change(changes, "-", f, show_values ? it->valuestring : NULL,
		    NULL, NULL, node);
		n++;
	}
	return n;
}

static const char *
last_part(const char *s)
{
	const char *p = strrchr(s, '/');

	return p != NULL ? p + 1 : s;
}

#define RECREATE "the API fixes it at creation: delete and recreate"

int
spec_diff(const struct spec *s, const cJSON *node, const char *node_id,
    cJSON *changes)
{
	const char *have;
	int n = 0, b;

	/* Shape: acceleratorType, or acceleratorConfig.topology. */
	have = json_opt_string(node, "acceleratorType", NULL);
	if (s->topology != NULL &&
	    json_path(node, "acceleratorConfig.topology") != NULL) {
		have = json_opt_string(node, "acceleratorConfig.topology", "");
		if (strcmp(have, s->topology) != 0) {
			change(changes, "~", "topology", have, s->topology,
			    RECREATE, node_id);
			n++;
		}
	} else if (have != NULL && strcmp(have, s->acc.type) != 0) {
		change(changes, "~", "accelerator-type", have, s->acc.type,
		    RECREATE, node_id);
		n++;
	}
	have = json_opt_string(node, "runtimeVersion", NULL);
	if (s->version != NULL && have != NULL &&
	    strcmp(have, s->version) != 0) {
		change(changes, "~", "version", have, s->version,
		    "the runtime version is fixed at creation: delete and "
		    "recreate",
		    node_id);
		n++;
	}
	/* Scheduling of a node created directly; a queued resource's tier
	 * is compared by spec_diff_qr(). */
	if (!spec_queued(s) || s->reserved) {
		static const struct {
			const char *key, *path;
			size_t off;
		} sched[] = {
			{ "spot", "schedulingConfig.spot",
			    offsetof(struct spec, spot) },
			{ "preemptible", "schedulingConfig.preemptible",
			    offsetof(struct spec, preemptible) },
			{ "reserved", "schedulingConfig.reserved",
			    offsetof(struct spec, reserved) },
		};
		size_t i;

		for (i = 0; i < sizeof sched / sizeof sched[0]; i++) {
			int want =
			    *(const int *)(const void *)((const char *)s +
			                                 sched[i].off);

			if (spec_queued(s) && strcmp(sched[i].key, "spot") == 0)
				continue;
			b = json_opt_bool(node, sched[i].path, 0);
			if (b != want) {
				change(changes, "~", sched[i].key,
				    b ? "true" : "false",
				    want ? "true" : "false",
				    "the scheduling of a node is fixed at "
				    "creation: delete and recreate",
				    node_id);
				n++;
			}
		}
	}
	have = json_opt_string(node, "networkConfig.network", NULL);
	if (s->network != NULL && have != NULL &&
	    strcmp(last_part(have), last_part(s->network)) != 0) {
		change(changes, "~", "network", have, s->network,
		    "the network is fixed at creation: delete and recreate",
		    node_id);
		n++;
	}
	have = json_opt_string(node, "serviceAccount.email", NULL);
	if (s->service_account != NULL && have != NULL &&
	    strcmp(have, s->service_account) != 0) {
		change(changes, "~", "service-account", have,
		    s->service_account,
		    "the service account is fixed at creation: delete and "
		    "recreate",
		    node_id);
		n++;
	}
	if (s->description != NULL) {
		have = json_opt_string(node, "description", "");
		if (strcmp(have, s->description) != 0) {
			change(changes, *have == '\0' ? "+" : "~",
			    "description", *have == '\0' ? NULL : have,
			    s->description, NULL, node_id);
			n++;
		}
	}
	if (s->labels != NULL)
		n += diff_map(s->labels, json_path(node, "labels"), "labels",
		    SPEC_RUN_ID_LABEL, 1, node_id, changes);
	if (s->metadata != NULL)
		n += diff_map(s->metadata, json_path(node, "metadata"),
		    "metadata",
		    cJSON_GetObjectItemCaseSensitive(s->metadata, "ssh-keys")
		        ? NULL
		        : "ssh-keys",
		    0, node_id, changes);
	return n;
}

int
spec_diff_qr(const struct spec *s, const cJSON *qr, cJSON *changes)
{
	const cJSON *specs = json_path(qr, "tpu.nodeSpec.0"), *v;
	char want[16], have[16];
	long long count = 0;
	int n = 0, tier;
	const char *tiers[] = { "spot", "guaranteed" };
	size_t i;

	/* The node count: one node id, or multisliceParams.nodeCount (v2),
	 * or multiNodeParams.nodeCount (v2alpha1's name of the same; a
	 * multislice created there reads so) */
	if ((v = json_path(specs, "multisliceParams.nodeCount")) == NULL)
		v = json_path(specs, "multiNodeParams.nodeCount");
	if (v == NULL || json_as_int64(v, &count) != 0)
		count = 0;
	if (count != s->node_count) {
		snprintf(have, sizeof have, "%lld", count);
		snprintf(want, sizeof want, "%d", s->node_count);
		change(changes, "~", "node-count", count ? have : "(one node)",
		    s->node_count ? want : "(one node)",
		    "a queued resource cannot be changed: delete and recreate",
		    NULL);
		n++;
	}
	for (i = 0; i < 2; i++) {
		int want_t = i == 0 ? s->spot : s->guaranteed;

		tier = cJSON_GetObjectItemCaseSensitive(qr, tiers[i]) != NULL;
		if (tier != want_t) {
			change(changes, "~", tiers[i], tier ? "true" : "false",
			    want_t ? "true" : "false",
			    "a queued resource cannot be changed: delete and "
			    "recreate",
			    NULL);
			n++;
		}
	}
	return n;
}

char *
spec_command_line(const struct spec *s)
{
	const cJSON *e;
	struct buf b;
	int first = 1;

	if (s->command == NULL)
		return NULL;
	if (!cJSON_IsArray(s->command))
		return xstrdup(as_text(s->command));
	buf_init(&b, BUF_NOCAP);
	cJSON_ArrayForEach(e, s->command)
	{
		char *q = shquote(as_text(e));

		buf_printf(&b, "%s%s", first ? "" : " ", q);
		free(q);
		first = 0;
	}
	return buf_detach(&b, NULL);
}
