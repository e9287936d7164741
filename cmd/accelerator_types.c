/*
 * "tpuctl accelerator-types list": list the accelerator types a zone offers
 */
#include <stdio.h>
#include <string.h>

#include "cmd.h"
#include "config.h"
#include "tpucmd.h"

static int accelerator_types_list(
    struct tpu_ctx *, int, char **, struct tpu_err *);

static const struct cmd_entry accelerator_types_children[] = {
	{
	    .name = "list",
	    .usage = "accelerator-types list [--filter field=value,...] "
	             "[--zone zone|-]",
	    .summary = "list the accelerator types a zone offers",
	    .min_args = 0,
	    .max_args = 0,
	    .flags = CMD_NEEDS_AUTH | CMD_NEEDS_ZONE,
	    .exec = accelerator_types_list,
	},
	{ .name = NULL },
};

/*
 * The zone's accelerator types, or with --zone - every zone's (locations.list,
 * then one list call per zone, as "tpuctl list --zone -" does) with a ZONE
 * column.
 */
static int
zone_list(struct tpu_ctx *ctx, const struct cmd_entry *e,
    const char *collection, const char *column, int argc, char **argv,
    struct tpu_err *err)
{
	const char *zone = config_get(ctx->cfg, "compute/zone");
	char columns[64];
	struct tpucmd_list l;

	memset(&l, 0, sizeof l);
	l.collection = collection;
	l.field = collection;
	l.flags = TPUCMD_ZONE | TPUCMD_ZONE_ANY;
	snprintf(columns, sizeof columns, "%s%s", column,
	    zone != NULL && strcmp(zone, "-") == 0 ? ",ZONE=zone" : "");
	l.columns = columns;
	return tpucmd_list_run(ctx, e, &l, argc, argv, err);
}

static int
accelerator_types_list(
    struct tpu_ctx *ctx, int argc, char **argv, struct tpu_err *err)
{
	return zone_list(ctx, &accelerator_types_children[0],
	    "acceleratorTypes", "ACCELERATOR_TYPE=type", argc, argv, err);
}

const struct cmd_entry cmd_accelerator_types_entry = {
	.name = "accelerator-types",
	.alias = NULL,
	.usage = "accelerator-types list ...",
	.summary = "list the accelerator types a zone offers",
	.min_args = 0,
	.max_args = -1,
	.flags = 0,
	.exec = NULL,
	.children = accelerator_types_children,
};
