/*
 * "tpuctl versions list": list the TPU runtime versions of a zone
 */
#include "cmd.h"
#include "tpucmd.h"

static int versions_list(struct tpu_ctx *, int, char **, struct tpu_err *);

static const struct cmd_entry versions_children[] = {
	{
	    .name = "list",
	    .usage = "versions list " TPUCMD_LIST_USAGE " [--zone zone]",
	    .summary = "list the TPU runtime versions of a zone",
	    .min_args = 0,
	    .max_args = 0,
	    .flags = CMD_NEEDS_AUTH | CMD_NEEDS_ZONE,
	    .exec = versions_list,
	},
	{ .name = NULL },
};

static int
versions_list(struct tpu_ctx *ctx, int argc, char **argv, struct tpu_err *err)
{
	return tpucmd_list_collection(ctx, &versions_children[0],
	    "runtimeVersions", "runtimeVersions", "VERSION=version", 1, argc,
	    argv, err);
}

const struct cmd_entry cmd_versions_entry = {
	.name = "versions",
	.alias = NULL,
	.usage = "versions list ...",
	.summary = "list the TPU runtime versions of a zone",
	.min_args = 0,
	.max_args = -1,
	.flags = 0,
	.exec = NULL,
	.children = versions_children,
};
