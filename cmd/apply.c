/*
 * "tpuctl apply SPEC": make a long-lived slice match its spec.  What is
 * missing is created through "create" (one node) or "queued-resources
 * create" (a multislice, spot, reserved, guaranteed or valid-until spec),
 * with every safeguard of those commands (R4 retries, --zones fallback,
 * cleanup of a failed creation); labels, metadata and description are
 * changed in place through "update" (one PATCH per node whose updateMask
 * names what changes).  What the API cannot change in place (accelerator
 * type, runtime version, scheduling, node count...) is refused before any
 * change, naming the field and the reason (exit 4).  A spec that already
 * matches changes nothing and says so.  With --dry-run the GETs are sent
 * and the mutating requests printed.
 */
#include <sys/stat.h>

#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "buf.h"
#include "cmd.h"
#include "config.h"
#include "json.h"
#include "log.h"
#include "specdiff.h"
#include "xmalloc.h"

#define MAX_ARGS 64

/* An argv for cmd_dispatch(), and the metadata files it names. */
struct apply_argv {
	char *v[MAX_ARGS + 1];
	int n;
	char *tmpdir; /* metadata values, one file each */
	int nfiles;
};

static void
add(struct apply_argv *a, const char *s)
{
	if (a->n == MAX_ARGS)
		TPU_BUG("apply: too many arguments");
	a->v[a->n++] = xstrdup(s);
	a->v[a->n] = NULL;
}

static void
add2(struct apply_argv *a, const char *flag, const char *value)
{
	add(a, flag);
	add(a, value);
}

static void
argv_release(struct apply_argv *a)
{
	int i;

	for (i = 0; i < a->n; i++)
		free(a->v[i]);
	if (a->tmpdir != NULL) {
		for (i = 0; i < a->nfiles; i++) {
			char *p = xasprintf("%s/m%d", a->tmpdir, i);

			unlink(p);
			free(p);
		}
		rmdir(a->tmpdir);
		free(a->tmpdir);
	}
	memset(a, 0, sizeof *a);
}

/* "k=v,..." of an object (labels: their rules allow no comma). */
static void
add_pairs(struct apply_argv *a, const char *flag, const cJSON *obj)
{
	struct buf b;
	const cJSON *it;

	buf_init(&b, 1 << 20);
	cJSON_ArrayForEach(it, obj) buf_printf(
	    &b, "%s%s=%s", b.len ? "," : "", it->string, it->valuestring);
	if (b.len > 0)
		add2(a, flag, b.data);
	buf_release(&b);
}

static void
add_list(struct apply_argv *a, const char *flag, const cJSON *arr)
{
	struct buf b;
	const cJSON *it;

	buf_init(&b, 1 << 20);
	cJSON_ArrayForEach(it, arr)
	    buf_printf(&b, "%s%s", b.len ? "," : "", it->valuestring);
	if (b.len > 0)
		add2(a, flag, b.data);
	buf_release(&b);
}

/*
 * Metadata values may hold commas and newlines, which "--metadata k=v,..."
 * cannot carry: each value goes to a file of a private directory, passed
 * as --metadata-from-file k=FILE,...  keys NULL: every key of md.
 */
static int
add_metadata(struct apply_argv *a, const cJSON *md, const cJSON *keys,
    struct tpu_err *err)
{
	const char *tmp = getenv("TMPDIR");
	struct buf b;
	const cJSON *it;
	int rc = 0;

	if (tmp == NULL || *tmp == '\0' || strpbrk(tmp, ",=") != NULL)
		tmp = "/tmp";
	buf_init(&b, 1 << 20);
	cJSON_ArrayForEach(it, md)
	{
		char *p;
		FILE *fp;
		size_t len = strlen(it->valuestring);

		if (keys != NULL &&
		    cJSON_GetObjectItemCaseSensitive(keys, it->string) == NULL)
			continue;
		if (a->tmpdir == NULL) {
			char *t = xasprintf("%s/tpuctl-apply.XXXXXX", tmp);

			if (mkdtemp(t) == NULL) {
				rc = tpu_error(err, TPU_E_IO,
				    "cannot create a directory in %s: %s", tmp,
				    strerror(errno));
				free(t);
				goto out;
			}
			a->tmpdir = t;
		}
		p = xasprintf("%s/m%d", a->tmpdir, a->nfiles);
		fp = fopen(p, "wx");
		if (fp == NULL || fwrite(it->valuestring, 1, len, fp) != len ||
		    fclose(fp) != 0) {
			rc = tpu_error(err, TPU_E_IO, "cannot write %s: %s", p,
			    strerror(errno));
			free(p);
			goto out;
		}
		a->nfiles++;
		buf_printf(&b, "%s%s=%s", b.len ? "," : "", it->string, p);
		free(p);
	}
	if (b.len > 0)
		add2(a, "--metadata-from-file", b.data);
out:
	buf_release(&b);
	return rc;
}

/* The slice flags "create" and "queued-resources create" share. */
static int
add_node_flags(
    struct apply_argv *a, const struct specdiff *d, struct tpu_err *err)
{
	const struct spec *s = &d->spec;
	struct buf zs;
	const cJSON *z;

	buf_init(&zs, 1 << 16);
	cJSON_ArrayForEach(z, d->zones)
	    buf_printf(&zs, "%s%s", zs.len ? "," : "", z->valuestring);
	add2(a, "--zones", zs.data);
	buf_release(&zs);
	if (s->accel != NULL)
		add2(a, "--accelerator-type", s->accel);
	if (s->gen != NULL)
		add2(a, "--type", s->gen);
	if (s->topology != NULL)
		add2(a, "--topology", s->topology);
	if (s->version != NULL)
		add2(a, "--version", s->version);
	if (s->description != NULL)
		add2(a, "--description", s->description);
	if (s->network != NULL)
		add2(a, "--network", s->network);
	if (s->subnetwork != NULL)
		add2(a, "--subnetwork", s->subnetwork);
	if (s->service_account != NULL)
		add2(a, "--service-account", s->service_account);
	if (s->internal_ips)
		add(a, "--internal-ips");
	if (s->metadata_raw)
		add(a, "--metadata-raw");
	add_list(a, "--tags", s->tags);
	add_list(a, "--scopes", s->scopes);
	add_pairs(a, "--labels", s->labels);
	return add_metadata(a, s->metadata, NULL, err);
}

int
specdiff_create(struct tpu_ctx *ctx, const struct specdiff *d, int flags,
    struct tpu_err *err)
{
	const struct spec *s = &d->spec;
	struct apply_argv a;
	char n[16];
	int rc;

	memset(&a, 0, sizeof a);
	if (spec_queued(s) || (flags & SPECDIFF_CREATE_QR)) {
		add(&a, "queued-resources");
		add(&a, "create");
		if (flags & SPECDIFF_CREATE_ASYNC)
			add(&a, "--async");
		if (s->node_count > 0) {
			snprintf(n, sizeof n, "%d", s->node_count);
			add2(&a, "--node-count", n);
			if (s->node_prefix != NULL)
				add2(&a, "--node-prefix", s->node_prefix);
		} else
			add2(&a, "--node-id", s->name);
		if (s->spot)
			add(&a, "--spot");
		if (s->guaranteed)
			add(&a, "--guaranteed");
		if (s->reserved)
			add(&a, "--reserved");
		if (s->valid_until != NULL)
			add2(&a, "--valid-until-duration", s->valid_until);
	} else {
		add(&a, "create");
		if (s->preemptible)
			add(&a, "--preemptible");
	}
	if ((rc = add_node_flags(&a, d, err)) == 0) {
		add(&a, "--");
		add(&a, s->name);
		log_info("%s not found: creating it", s->name);
		rc = cmd_dispatch(NULL, ctx, a.n, a.v, err);
	}
	argv_release(&a);
	return rc;
}

/* One "update" of node id with the changes that name it. */
static int
update_node(struct tpu_ctx *ctx, const struct specdiff *d, const char *id,
    struct tpu_err *err)
{
	const struct spec *s = &d->spec;
	struct apply_argv a;
	cJSON *set_l = cJSON_CreateObject(), *rm_l = cJSON_CreateArray();
	cJSON *set_m = cJSON_CreateObject(), *rm_m = cJSON_CreateArray();
	const cJSON *c;
	int rc = 0, any = 0, desc = 0;

	memset(&a, 0, sizeof a);
	cJSON_ArrayForEach(c, d->changes)
	{
		const char *node = json_opt_string(c, "node", NULL);
		const char *field = json_opt_string(c, "field", "");
		const char *op = json_opt_string(c, "op", "");

		if (node != NULL && strcmp(node, id) != 0)
			continue;
		if (node == NULL && d->qr != NULL)
			continue; /* the queued resource's own fields */
		any = 1;
		if (strcmp(field, "description") == 0)
			desc = 1;
		else if (strncmp(field, "labels.", 7) == 0) {
			if (*op == '-')
				cJSON_AddItemToArray(
				    rm_l, cJSON_CreateString(field + 7));
			else
				cJSON_AddStringToObject(set_l, field + 7,
				    json_opt_string(s->labels, field + 7, ""));
		} else if (strncmp(field, "metadata.", 9) == 0) {
			if (*op == '-')
				cJSON_AddItemToArray(
				    rm_m, cJSON_CreateString(field + 9));
			else
				cJSON_AddTrueToObject(set_m, field + 9);
		}
	}
	if (!any)
		goto out;
	add(&a, "update");
	if (s->metadata_raw)
		add(&a, "--metadata-raw");
	if (desc)
		add2(&a, "--description", s->description);
	add_pairs(&a, "--update-labels", set_l);
	add_list(&a, "--remove-labels", rm_l);
	add_list(&a, "--remove-metadata", rm_m);
	if (cJSON_GetArraySize(set_m) > 0 &&
	    (rc = add_metadata(&a, s->metadata, set_m, err)) != 0)
		goto out;
	add(&a, "--");
	add(&a, id);
	/* "update" takes its zone from the configuration. */
	config_set_flag(ctx->cfg, "compute/zone", d->zone);
	rc = cmd_dispatch(NULL, ctx, a.n, a.v, err);
out:
	argv_release(&a);
	cJSON_Delete(set_l);
	cJSON_Delete(rm_l);
	cJSON_Delete(set_m);
	cJSON_Delete(rm_m);
	return rc;
}

static int
apply_exec(struct tpu_ctx *ctx, int argc, char **argv, struct tpu_err *err)
{
	static const struct option opts[] = {
		{ NULL, 0, NULL, 0 },
	};
	struct specdiff d;
	const cJSON *c, *id;
	char what[128];
	int ch, rc;

	while ((ch = getopt_long(argc, argv, "", opts, NULL)) != -1)
		return cmd_bad_option(argv, ch, err);
	argc -= optind;
	argv += optind;
	if ((rc = cmd_check_operands(&cmd_apply_entry, argc, argv, err)) != 0)
		return rc;
	if ((rc = specdiff_open(ctx, argv[0], &d, err)) != 0)
		goto out;
	specdiff_what(&d, what, sizeof what);
	if (d.immutable > 0) {
		/* Name every one; nothing is changed. */
		cJSON_ArrayForEach(c, d.changes)
		{
			const char *imm = json_opt_string(c, "immutable", NULL);
			const char *node = json_opt_string(c, "node", NULL);

			if (imm == NULL)
				continue;
			if (rc == 0)
				rc = tpu_error(err, TPU_E_PRECONDITION,
				    "cannot apply %s: %s of %s%s%s is %s, the "
				    "spec says %s: %s",
				    d.spec.origin,
				    json_opt_string(c, "field", "?"), what,
				    node ? ", node " : "", node ? node : "",
				    json_opt_string(c, "from", "?"),
				    json_opt_string(c, "to", "?"), imm);
			else
				log_warn("also %s: %s -> %s (%s)",
				    json_opt_string(c, "field", "?"),
				    json_opt_string(c, "from", "?"),
				    json_opt_string(c, "to", "?"), imm);
		}
		{
			char msg[TPU_ERR_MSGLEN];

			snprintf(msg, sizeof msg, "%s", err->msg);
			tpu_error(err, TPU_E_PRECONDITION,
			    "%.900s; nothing changed", msg);
		}
		goto out;
	}
	if (cJSON_GetArraySize(d.changes) == 0) {
		int missing =
		    cJSON_GetArraySize(d.ids) - cJSON_GetArraySize(d.nodes);

		if (d.qr != NULL && missing > 0) {
			if (!ctx->quiet)
				fprintf(stderr,
				    "tpuctl: %s in %s is %s: %d of its nodes "
				    "do not exist yet; nothing to do\n",
				    what, d.zone,
				    json_opt_string(d.qr, "state.state",
				        "in no known state"),
				    missing);
		} else if (!ctx->quiet)
			fprintf(stderr,
			    "tpuctl: %s in %s matches %s: nothing to do\n",
			    what, d.zone, d.spec.origin);
		goto out;
	}
	if (!d.found) {
		rc = specdiff_create(ctx, &d, 0, err);
		goto out;
	}
	if (!ctx->quiet)
		specdiff_lines(stderr, "tpuctl: apply: ", &d);
	cJSON_ArrayForEach(id, d.ids)
	{
		if (cJSON_GetObjectItemCaseSensitive(
		        d.nodes, id->valuestring) == NULL)
			continue;
		if ((rc = update_node(ctx, &d, id->valuestring, err)) != 0)
			break;
	}
out:
	specdiff_close(&d);
	return rc;
}

const struct cmd_entry cmd_apply_entry = {
	.name = "apply",
	.alias = NULL,
	.usage = "apply [--dry-run] [-q] [--zone zone] spec",
	.summary = "create or update a TPU slice to match a spec file",
	.min_args = 1,
	.max_args = 1,
	.flags = CMD_NEEDS_AUTH | CMD_NEEDS_ZONE,
	.exec = apply_exec,
};
