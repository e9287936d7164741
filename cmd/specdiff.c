/*
 * The part of "tpuctl diff" and "tpuctl apply" that only reads: the spec
 * loaded and validated (nothing is sent before it passes), the API opened
 * on the spec's zones through the same code as "create --zones", the node
 * (or the queued resource and its nodes) looked up zone by zone with
 * GETs, and the differences listed by spec_diff().
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "json.h"
#include "log.h"
#include "output.h"
#include "specdiff.h"
#include "xmalloc.h"

const char *
specdiff_what(const struct specdiff *d, char *buf, size_t len)
{
	snprintf(buf, len, "%s '%s'",
	    spec_queued(&d->spec) ? "queued resource" : "node", d->spec.name);
	return buf;
}

/* GET path: 0 with *out, 1 when absent, or an errc. */
static int
get(struct specdiff *d, const char *path, cJSON **out, struct tpu_err *err)
{
	struct tpu_err e2;
	int rc;

	tpu_err_init(&e2);
	rc = tpuapi_call(&d->tc.api, "GET", path, NULL, NULL, 1, out, &e2);
	if (rc == TPU_E_NOTFOUND)
		return 1;
	if (rc != 0)
		*err = e2;
	return rc;
}

/* Look in every zone in turn; stop at the first that has it. */
static int
find(struct specdiff *d, struct tpu_err *err)
{
	const cJSON *z, *id;
	cJSON *res = NULL;
	char *path;
	int rc = 0;

	cJSON_ArrayForEach(z, d->zones)
	{
		if (spec_queued(&d->spec))
			path = xasprintf(
			    "projects/%s/locations/%s/queuedResources/%s",
			    d->tc.project, z->valuestring, d->spec.name);
		else
			path = tpuapi_node_path(
			    &d->tc.api, z->valuestring, d->spec.name);
		rc = get(d, path, &res, err);
		free(path);
		if (rc < 0)
			return rc;
		if (rc == 1)
			continue;
		d->found = 1;
		d->zone = z->valuestring;
		if (spec_queued(&d->spec))
			d->qr = res;
		else {
			cJSON_AddItemToObject(d->nodes, d->spec.name, res);
			return 0;
		}
		break;
	}
	if (!d->found)
		return 0;
	/* The nodes of the queued resource that exist already. */
	cJSON_ArrayForEach(id, d->ids)
	{
		path = tpuapi_node_path(&d->tc.api, d->zone, id->valuestring);
		res = NULL;
		rc = get(d, path, &res, err);
		free(path);
		if (rc < 0)
			return rc;
		if (rc == 0)
			cJSON_AddItemToObject(d->nodes, id->valuestring, res);
	}
	return 0;
}

static void
diff_all(struct specdiff *d)
{
	const cJSON *id, *node, *c;
	char what[128];

	if (!d->found) {
		c = cJSON_CreateObject();
		cJSON_AddStringToObject((cJSON *)c, "op", "+");
		cJSON_AddStringToObject((cJSON *)c, "field",
		    spec_queued(&d->spec) ? "queued-resource" : "node");
		if (d->spec.node_count > 0)
			snprintf(what, sizeof what, "%s (%d x %s in %s)",
			    d->spec.name, d->spec.node_count, d->spec.acc.type,
			    d->zone);
		else
			snprintf(what, sizeof what, "%s (%s in %s)",
			    d->spec.name, d->spec.acc.type, d->zone);
		cJSON_AddStringToObject((cJSON *)c, "to", what);
		cJSON_AddItemToArray(d->changes, (cJSON *)c);
		return;
	}
	if (d->qr != NULL)
		spec_diff_qr(&d->spec, d->qr, d->changes);
	cJSON_ArrayForEach(id, d->ids)
	{
		node =
		    cJSON_GetObjectItemCaseSensitive(d->nodes, id->valuestring);
		if (node != NULL)
			spec_diff(&d->spec, node,
			    d->qr != NULL ? id->valuestring : NULL, d->changes);
		else
			log_info("node '%s' of queued resource '%s' does not "
			         "exist yet (state %s)",
			    id->valuestring, d->spec.name,
			    json_opt_string(d->qr, "state.state", "unknown"));
	}
	cJSON_ArrayForEach(c, d->changes) d->immutable +=
	    cJSON_GetObjectItemCaseSensitive(c, "immutable") != NULL;
}

int
specdiff_open(struct tpu_ctx *ctx, const char *path, struct specdiff *d,
    struct tpu_err *err)
{
	struct buf zs;
	const cJSON *z;
	int rc;

	memset(d, 0, sizeof *d);
	d->nodes = cJSON_CreateObject();
	d->changes = cJSON_CreateArray();
	if ((rc = spec_load(&d->spec, path, err)) != 0)
		return rc;
	d->ids = spec_node_ids(&d->spec);
	/* The zones as "create --zones" takes them. */
	buf_init(&zs, 1 << 16);
	cJSON_ArrayForEach(z, d->spec.zones)
	    buf_printf(&zs, "%s%s", zs.len ? "," : "", z->valuestring);
	rc = tpucmd_create_zones(
	    ctx, &d->tc, zs.len ? zs.data : NULL, &d->spec.acc, &d->zones, err);
	buf_release(&zs);
	if (rc != 0)
		return rc;
	d->opened = 1;
	d->zone = cJSON_GetArrayItem(d->zones, 0)->valuestring;
	if ((rc = find(d, err)) != 0)
		return rc;
	diff_all(d);
	return 0;
}

void
specdiff_close(struct specdiff *d)
{
	if (d->opened)
		tpucmd_close(&d->tc);
	cJSON_Delete(d->zones);
	cJSON_Delete(d->qr);
	cJSON_Delete(d->ids);
	cJSON_Delete(d->nodes);
	cJSON_Delete(d->changes);
	spec_release(&d->spec);
	memset(d, 0, sizeof *d);
}

/* A value for a diff line: descriptions quoted (they may hold blanks or
 * newlines), the rest as they are. */
static char *
shown(const char *field, const char *v)
{
	cJSON *s;
	char *out, *q;

	if (strcmp(field, "description") != 0)
		return xstrdup(v);
	s = cJSON_CreateString(v);
	q = cJSON_PrintUnformatted(s);
	out = xstrdup(q);
	cJSON_free(q);
	cJSON_Delete(s);
	return out;
}

void
specdiff_lines(FILE *fp, const char *prefix, const struct specdiff *d)
{
	const cJSON *c;

	cJSON_ArrayForEach(c, d->changes)
	{
		const char *op = json_opt_string(c, "op", "?");
		const char *field = json_opt_string(c, "field", "?");
		const char *from = json_opt_string(c, "from", NULL);
		const char *to = json_opt_string(c, "to", NULL);
		const char *imm = json_opt_string(c, "immutable", NULL);
		const char *node = json_opt_string(c, "node", NULL);
		char *f = from ? shown(field, from) : NULL;
		char *t = to ? shown(field, to) : NULL;

		fprintf(fp, "%s%s %s", prefix, op, field);
		if (*op == '~' && f != NULL && t != NULL)
			fprintf(fp, ": %s -> %s", f, t);
		else if (*op == '+' && t != NULL)
			fprintf(fp, ": %s", t);
		if (node != NULL)
			fprintf(fp, " (node %s)", node);
		if (imm != NULL)
			fprintf(fp, " [cannot change in place: %s]", imm);
		fputc('\n', fp);
		free(f);
		free(t);
	}
}

int
specdiff_print(
    struct tpu_ctx *ctx, const struct specdiff *d, struct tpu_err *err)
{
	if (ctx->out.fmt != OUTPUT_TABLE)
		return output_emit(&ctx->out, d->changes, NULL, err);
	specdiff_lines(ctx->out.fp, "", d);
	if (ferror(ctx->out.fp))
		return tpu_error(err, TPU_E_IO, "write error");
	return 0;
}
