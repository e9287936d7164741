/*
 * "tpuctl update NODE": change a node's labels, metadata, description,
 * network tags or external-IP setting (nodes.patch's updateMask fields).
 * The node is read, the change merged locally (metadata keys not named
 * keep their values), and sent as one PATCH whose updateMask names only
 * the fields that really change.  Everything the user gave is checked
 * before any request, with the same rules as create.  A 409 (someone
 * else changed the node meanwhile) re-reads the node and tries once more.
 * The node cache entry is dropped: the node changed.
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "catalog.h"
#include "cmd.h"
#include "json.h"
#include "log.h"
#include "nodecache.h"
#include "tpucmd.h"
#include "tpuvalid.h"
#include "util.h"
#include "xmalloc.h"

struct update_opts {
	const char *description, *timeout;
	cJSON *set_labels; /* object, or NULL */
	cJSON *rm_labels;  /* array, or NULL */
	cJSON *set_md;     /* object, or NULL */
	cJSON *rm_md;      /* array, or NULL */
	cJSON *add_tags;   /* array, or NULL */
	cJSON *rm_tags;    /* array, or NULL */
	int clear_labels, clear_md, clear_tags, internal_ips, async, md_raw;
};

static void
opts_free(struct update_opts *o)
{
	cJSON_Delete(o->set_labels);
	cJSON_Delete(o->rm_labels);
	cJSON_Delete(o->set_md);
	cJSON_Delete(o->rm_md);
	cJSON_Delete(o->add_tags);
	cJSON_Delete(o->rm_tags);
}

static int
in_array(const cJSON *a, const char *s)
{
	const cJSON *it;

	cJSON_ArrayForEach(it, a) if (strcmp(it->valuestring, s) == 0) return 1;
	return 0;
}

/* Checks that need every flag: conflicts and an empty request. */
static int
opts_check(struct update_opts *o, struct tpu_err *err)
{
	const cJSON *it;

	if (o->set_labels == NULL && o->rm_labels == NULL && !o->clear_labels &&
	    o->set_md == NULL && o->rm_md == NULL && !o->clear_md &&
	    o->description == NULL && o->add_tags == NULL &&
	    o->rm_tags == NULL && !o->clear_tags && !o->internal_ips)
		return tpu_error(err, TPU_E_USAGE,
		    "nothing to update: pass --description, --update-labels, "
		    "--remove-labels, --clear-labels, --metadata, "
		    "--metadata-from-file, --remove-metadata, "
		    "--clear-metadata, --add-tags, --remove-tags, --clear-tags "
		    "or --internal-ips");
	if (o->clear_labels && o->rm_labels != NULL)
		return tpu_error(err, TPU_E_USAGE,
		    "--clear-labels and --remove-labels exclude each other");
	if (o->clear_md && o->rm_md != NULL)
		return tpu_error(err, TPU_E_USAGE,
		    "--clear-metadata and --remove-metadata exclude each "
		    "other");
	if (o->clear_tags && o->rm_tags != NULL)
		return tpu_error(err, TPU_E_USAGE,
		    "--clear-tags and --remove-tags exclude each other");
	cJSON_ArrayForEach(
	    it, o->add_tags) if (in_array(o->rm_tags,
	                             it->valuestring)) return tpu_error(err,
	    TPU_E_USAGE, "tag '%s' is both added and removed", it->valuestring);
	if (o->set_labels != NULL) {
		if (cJSON_GetObjectItemCaseSensitive(
		        o->set_labels, TPUCMD_RUN_ID_LABEL) != NULL)
			return tpu_error(err, TPU_E_USAGE,
			    "label '%s' is reserved for tpuctl",
			    TPUCMD_RUN_ID_LABEL);
		cJSON_ArrayForEach(it,
		    o->set_labels) if (in_array(o->rm_labels,
		                           it->string)) return tpu_error(err,
		    TPU_E_USAGE, "label '%s' is both updated and removed",
		    it->string);
	}
	if (o->set_md != NULL)
		cJSON_ArrayForEach(
		    it, o->set_md) if (in_array(o->rm_md,
		                           it->string)) return tpu_error(err,
		    TPU_E_USAGE, "metadata key '%s' is both set and removed",
		    it->string);
	return 0;
}

/* A string map (labels or metadata) after the change; NULL stays NULL
 * when there is nothing in it and nothing was set. */
static cJSON *
merge_map(const cJSON *cur, int clear, const cJSON *set, const cJSON *rm,
    const char *what, const char *node)
{
	cJSON *m = cJSON_CreateObject();
	const cJSON *it;

	if (!clear && cJSON_IsObject(cur))
		cJSON_ArrayForEach(it, cur) if (cJSON_IsString(it))
		    cJSON_AddStringToObject(m, it->string, it->valuestring);
	cJSON_ArrayForEach(it, rm)
	{
		if (cJSON_GetObjectItemCaseSensitive(m, it->valuestring) ==
		    NULL)
			log_info("node '%s' has no %s '%s' to remove", node,
			    what, it->valuestring);
		cJSON_DeleteItemFromObjectCaseSensitive(m, it->valuestring);
	}
	cJSON_ArrayForEach(it, set)
	{
		if (cJSON_GetObjectItemCaseSensitive(m, it->string) != NULL)
			cJSON_ReplaceItemInObjectCaseSensitive(
			    m, it->string, cJSON_CreateString(it->valuestring));
		else
			cJSON_AddStringToObject(m, it->string, it->valuestring);
	}
	return m;
}

/* 1 when two string maps hold the same pairs (order does not matter). */
static int
same_map(const cJSON *a, const cJSON *b)
{
	const cJSON *it, *o;
	int na = 0, nb = 0;

	cJSON_ArrayForEach(it, a) if (cJSON_IsString(it)) na++;
	cJSON_ArrayForEach(it, b) if (cJSON_IsString(it)) nb++;
	if (na != nb)
		return 0;
	cJSON_ArrayForEach(it, a)
	{
		if (!cJSON_IsString(it))
			continue;
		o = cJSON_GetObjectItemCaseSensitive(b, it->string);
		if (!cJSON_IsString(o) ||
		    strcmp(o->valuestring, it->valuestring) != 0)
			return 0;
	}
	return 1;
}

/*
 * "t1,t2" (--add-tags, --remove-tags) into *dst (created on first use):
 * each a network tag (RFC 1035: 1-63 lowercase letters, digits and '-',
 * starting with a letter, as the API checks), kept once.
 */
static int
tags_parse(const char *flag, const char *arg, cJSON **dst, struct tpu_err *err)
{
	const char *p = arg, *e;
	struct tpu_err e2;
	char *t;

	if (*dst == NULL)
		*dst = cJSON_CreateArray();
	for (;;) {
		e = p + strcspn(p, ",");
		if (e == p)
			return tpu_error(
			    err, TPU_E_USAGE, "%s '%s': empty tag", flag, arg);
		t = xstrndup(p, (size_t)(e - p));
		tpu_err_init(&e2);
		if (catalog_node_name_validate(t, &e2) != 0) {
			tpu_error(err, TPU_E_USAGE,
			    "%s: invalid tag '%s': a tag is 1-63 lowercase "
			    "letters, digits and '-', starting with a letter "
			    "and not ending with '-'",
			    flag, t);
			free(t);
			return TPU_E_USAGE;
		}
		if (!in_array(*dst, t))
			cJSON_AddItemToArray(*dst, cJSON_CreateString(t));
		free(t);
		if (*e == '\0')
			return 0;
		p = e + 1;
	}
}

/* The node's tags after the change (an array, maybe empty). */
static cJSON *
merge_tags(const struct update_opts *o, const cJSON *cur, const char *node)
{
	cJSON *m = cJSON_CreateArray();
	const cJSON *it;

	if (!o->clear_tags)
		cJSON_ArrayForEach(
		    it, cur) if (cJSON_IsString(it) &&
		                 !in_array(o->rm_tags, it->valuestring))
		    cJSON_AddItemToArray(
		        m, cJSON_CreateString(it->valuestring));
	cJSON_ArrayForEach(it, o->rm_tags) if (!in_array(cur, it->valuestring))
	    log_info(
	        "node '%s' has no tag '%s' to remove", node, it->valuestring);
	cJSON_ArrayForEach(it, o->add_tags) if (!in_array(m, it->valuestring))
	    cJSON_AddItemToArray(m, cJSON_CreateString(it->valuestring));
	return m;
}

/* 1 when two string lists hold the same strings in the same order. */
static int
same_list(const cJSON *a, const cJSON *b)
{
	const cJSON *x, *y;

	x = cJSON_IsArray(a) ? a->child : NULL;
	y = cJSON_IsArray(b) ? b->child : NULL;
	for (; x != NULL && y != NULL; x = x->next, y = y->next)
		if (!cJSON_IsString(x) || !cJSON_IsString(y) ||
		    strcmp(x->valuestring, y->valuestring) != 0)
			return 0;
	return x == NULL && y == NULL;
}

/*
 * The PATCH body and updateMask for node as it is now.  Returns 0 with
 * *body NULL when nothing would change, or TPU_E_USAGE when the merged
 * node breaks a rule (too many labels).
 */
static int
build_patch(const struct update_opts *o, const cJSON *node, const char *name,
    cJSON **bodyp, struct buf *mask, struct tpu_err *err)
{
	cJSON *body = cJSON_CreateObject(), *m;
	const char *cur;
	int rc = 0;

	*bodyp = NULL;
	buf_clear(mask);
	if (o->description != NULL) {
		cur = json_opt_string(node, "description", "");
		if (strcmp(cur, o->description) != 0) {
			cJSON_AddStringToObject(
			    body, "description", o->description);
			buf_puts(mask, "description");
		}
	}
	if (o->set_labels != NULL || o->rm_labels != NULL || o->clear_labels) {
		const cJSON *cl = json_path(node, "labels");

		m = merge_map(cl, o->clear_labels, o->set_labels, o->rm_labels,
		    "label", name);
		if ((rc = catalog_labels_validate(m, err)) != 0) {
			cJSON_Delete(m);
			goto out;
		}
		if (!same_map(m, cl)) {
			cJSON_AddItemToObject(body, "labels", m);
			buf_printf(mask, "%slabels", mask->len ? "," : "");
		} else
			cJSON_Delete(m);
	}
	if (o->set_md != NULL || o->rm_md != NULL || o->clear_md) {
		const cJSON *cm = json_path(node, "metadata");

		m = merge_map(
		    cm, o->clear_md, o->set_md, o->rm_md, "metadata key", name);
		/* Keys already on the node may be any the server took. */
		if ((rc = catalog_metadata_validate_obj(m, 1, err)) != 0) {
			cJSON_Delete(m);
			goto out;
		}
		if (!same_map(m, cm)) {
			cJSON_AddItemToObject(body, "metadata", m);
			buf_printf(mask, "%smetadata", mask->len ? "," : "");
		} else
			cJSON_Delete(m);
	}
	if (o->add_tags != NULL || o->rm_tags != NULL || o->clear_tags) {
		const cJSON *ct = json_path(node, "tags");

		m = merge_tags(o, ct, name);
		if (!same_list(m, ct)) {
			/* an empty list is left out: the mask clears it */
			if (cJSON_GetArraySize(m) > 0)
				cJSON_AddItemToObject(body, "tags", m);
			else
				cJSON_Delete(m);
			buf_printf(mask, "%stags", mask->len ? "," : "");
		} else
			cJSON_Delete(m);
	}
	if (o->internal_ips &&
	    cJSON_IsTrue(json_path(node, "networkConfig.enableExternalIps"))) {
		m = cJSON_AddObjectToObject(body, "networkConfig");
		cJSON_AddFalseToObject(m, "enableExternalIps");
		buf_printf(mask, "%snetwork_config.enable_external_ips",
		    mask->len ? "," : "");
	}
out:
	if (rc != 0 || mask->len == 0) {
		cJSON_Delete(body);
		return rc;
	}
	*bodyp = body;
	return 0;
}

static int
parse_opts(struct update_opts *o, int argc, char **argv, struct tpu_err *err)
{
	static const struct option opts[] = {
		{ "add-tags", required_argument, NULL, 'T' },
		{ "async", no_argument, NULL, 'a' },
		{ "clear-labels", no_argument, NULL, 'c' },
		{ "clear-metadata", no_argument, NULL, 'C' },
		{ "clear-tags", no_argument, NULL, 'Z' },
		{ "internal-ips", no_argument, NULL, 'I' },
		{ "description", required_argument, NULL, 'd' },
		{ "metadata", required_argument, NULL, 'm' },
		{ "metadata-from-file", required_argument, NULL, 'f' },
		{ "metadata-raw", no_argument, NULL, 'R' },
		{ "remove-labels", required_argument, NULL, 'r' },
		{ "remove-metadata", required_argument, NULL, 'M' },
		{ "remove-tags", required_argument, NULL, 'X' },
		{ "timeout", required_argument, NULL, 't' },
		{ "update-labels", required_argument, NULL, 'u' },
		{ "update-metadata", required_argument, NULL, 'm' },
		{ NULL, 0, NULL, 0 },
	};
	const char *md[8], *mdf[8];
	int nmd = 0, nmdf = 0, ch, rc, i;
	cJSON *k = NULL, *it;

	while ((ch = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (ch) {
		case 'a':
			o->async = 1;
			break;
		case 'c':
			o->clear_labels = 1;
			break;
		case 'C':
			o->clear_md = 1;
			break;
		case 'Z':
			o->clear_tags = 1;
			break;
		case 'I':
			o->internal_ips = 1;
			break;
		case 'T':
		case 'X':
			if ((rc = tags_parse(
			         ch == 'T' ? "--add-tags" : "--remove-tags",
			         optarg, ch == 'T' ? &o->add_tags : &o->rm_tags,
			         err)) != 0)
				return rc;
			break;
		case 'd':
			if ((rc = tpuvalid_description(optarg, err)) != 0)
				return rc;
			o->description = optarg;
			break;
		case 'm':
		case 'f':
			if ((ch == 'm' ? nmd : nmdf) == (int)nitems(md))
				return tpu_error(err, TPU_E_USAGE,
				    "at most %zu %s options", nitems(md),
				    ch == 'm' ? "--metadata"
				              : "--metadata-from-file");
			if (ch == 'm')
				md[nmd++] = optarg;
			else
				mdf[nmdf++] = optarg;
			break;
		case 'R':
			o->md_raw = 1;
			break;
		case 'r':
		case 'M':
			if ((rc = tpuvalid_keys_parse(ch == 'r'
			                                  ? "--remove-labels"
			                                  : "--remove-metadata",
			         optarg,
			         ch == 'r' ? TPUVALID_LABEL_KEYS
			                   : TPUVALID_METADATA_KEYS,
			         &k, err)) != 0)
				return rc;
			if (ch == 'r' && o->rm_labels == NULL)
				o->rm_labels = cJSON_CreateArray();
			if (ch == 'M' && o->rm_md == NULL)
				o->rm_md = cJSON_CreateArray();
			cJSON_ArrayForEach(it, k)
			{
				cJSON *dst =
				    ch == 'r' ? o->rm_labels : o->rm_md;

				if (!in_array(dst, it->valuestring))
					cJSON_AddItemToArray(
					    dst, cJSON_CreateString(
					             it->valuestring));
			}
			cJSON_Delete(k);
			k = NULL;
			break;
		case 't':
			o->timeout = optarg;
			break;
		case 'u':
			if (o->set_labels != NULL)
				return tpu_error(err, TPU_E_USAGE,
				    "--update-labels given twice: list every "
				    "label in one k=v,... value");
			if (*optarg == '\0')
				return tpu_error(err, TPU_E_USAGE,
				    "--update-labels needs KEY=VALUE[,...]");
			if ((rc = catalog_labels_parse(
			         optarg, &o->set_labels, err)) != 0)
				return tpu_error_prefix(err, "--update-labels");
			break;
		default:
			return cmd_bad_option(argv, ch, err);
		}
	}
	/* Metadata after every flag, so --metadata-raw may come last. */
	if (nmd + nmdf > 0)
		o->set_md = cJSON_CreateObject();
	for (i = 0; i < nmd; i++)
		if ((rc = tpuvalid_metadata_parse(
		         md[i], 0, o->md_raw, o->set_md, err)) != 0)
			return rc;
	for (i = 0; i < nmdf; i++)
		if ((rc = tpuvalid_metadata_parse(
		         mdf[i], 1, o->md_raw, o->set_md, err)) != 0)
			return rc;
	return 0;
}

static int
update_exec(struct tpu_ctx *ctx, int argc, char **argv, struct tpu_err *err)
{
	struct update_opts o;
	struct tpucmd_wait w;
	struct tpucmd tc;
	struct buf mask;
	cJSON *node = NULL, *body = NULL, *op = NULL, *result = NULL;
	char *path = NULL, *query = NULL, *what = NULL;
	const char *name;
	int64_t deadline;
	int rc, attempt;

	memset(&o, 0, sizeof o);
	buf_init(&mask, 256);
	if ((rc = parse_opts(&o, argc, argv, err)) != 0)
		goto out;
	argc -= optind;
	argv += optind;
	if ((rc = cmd_check_operands(&cmd_update_entry, argc, argv, err)) != 0)
		goto out;
	name = argv[0];
	if ((rc = tpucmd_name(ctx, TPUCMD_NAME_NODE, &name, err)) != 0 ||
	    (rc = opts_check(&o, err)) != 0 ||
	    (rc = tpucmd_deadline(o.timeout, &deadline, err)) != 0)
		goto out;
	if ((rc = tpucmd_open(ctx, &tc, err)) != 0)
		goto out;
	path = tpuapi_node_path(&tc.api, tc.zone, name);
	for (attempt = 1;; attempt++) {
		cJSON_Delete(node);
		node = NULL;
		cJSON_Delete(body);
		body = NULL;
		if ((rc = tpuapi_call(&tc.api, "GET", path, NULL, NULL, 1,
		         &node, err)) != 0) {
			if (rc == TPU_E_NOTFOUND)
				tpu_error(err, rc,
				    "node '%s' not found in zone %s", name,
				    tc.zone);
			goto close;
		}
		if ((rc = build_patch(&o, node, name, &body, &mask, err)) != 0)
			goto close;
		if (body == NULL) {
			if (!ctx->quiet)
				fprintf(stderr,
				    "tpuctl: node '%s' already is as asked: "
				    "nothing to update\n",
				    name);
			rc = tpucmd_emit_result(ctx, node, err);
			goto close;
		}
		free(query);
		query = xasprintf("updateMask=%s", mask.data);
		if (!ctx->dry_run)
			nodecache_drop(tc.project, tc.zone, name);
		rc = tpuapi_call(
		    &tc.api, "PATCH", path, query, body, 0, &op, err);
		if (rc != TPU_E_CONFLICT || attempt >= 2)
			break;
		log_warn("node '%s' changed while updating it (%s); reading it "
		         "again",
		    name, err->msg);
		tpu_err_init(err);
	}
	if (rc != 0) {
		if (rc == TPU_E_CONFLICT)
			tpu_error_prefix(err,
			    "node '%s' keeps changing under this update", name);
		goto close;
	}
	if (op == NULL) /* --dry-run */
		goto close;
	if (o.async) {
		rc = output_emit(&ctx->out, op, NULL, err);
		goto close;
	}
	what = xasprintf("updating node '%s'", name);
	tpucmd_wait_opts(ctx, &tc, &w, deadline, what);
	rc = tpuapi_op_wait(
	    &tc.api, json_opt_string(op, "name", ""), &w.api, &result, err);
	nodecache_drop(tc.project, tc.zone, name);
	if (rc != 0)
		goto close;
	if (!ctx->quiet)
		fprintf(stderr, "tpuctl: updated node '%s' (%s)\n", name,
		    mask.data);
	rc = tpucmd_emit_result(ctx, result, err);
close:
	tpucmd_close(&tc);
out:
	cJSON_Delete(node);
	cJSON_Delete(body);
	cJSON_Delete(op);
	cJSON_Delete(result);
	free(path);
	free(query);
	free(what);
	buf_release(&mask);
	opts_free(&o);
	return rc;
}

const struct cmd_entry cmd_update_entry = {
	.name = "update",
	.alias = NULL,
	.usage = "update [--async] [--clear-labels] [--clear-metadata] "
	         "[--clear-tags] [--internal-ips] [--metadata-raw] "
	         "[--add-tags tag,...] "
	         "[--description text] [--metadata k=v,...] "
	         "[--metadata-from-file k=file,...] "
	         "[--remove-labels k,...] [--remove-metadata k,...] "
	         "[--remove-tags tag,...] "
	         "[--timeout duration] [--update-labels k=v,...] "
	         "[--update-metadata k=v,...] [--zone zone] node",
	.summary = "change a TPU node's labels, metadata, description, tags "
	           "or external IPs",
	.min_args = 1,
	.max_args = 1,
	.flags = CMD_NEEDS_AUTH | CMD_NEEDS_ZONE,
	.exec = update_exec,
};
