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
	    .usage = "accelerator-types list " TPUCMD_LIST_USAGE " "
	             "[--zone zone|-]",
	    .summary = "list the accelerator types a zone offers",
	    .min_args = 0,
	    .max_args = 0,
	    .flags = CMD_NEEDS_AUTH | CMD_NEEDS_ZONE | CMD_ZONE_ANY,
	    .exec = accelerator_types_list,
	},
	{ .name = NULL },
};

static int
accelerator_types_list(
    struct tpu_ctx *ctx, int argc, char **argv, struct tpu_err *err)
{
	return tpucmd_list_collection(ctx, &accelerator_types_children[0],
	    "acceleratorTypes", "acceleratorTypes", "ACCELERATOR_TYPE=type", 1,
	    argc, argv, err);
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
