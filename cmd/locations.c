/*
 * "tpuctl locations list": list the locations (zones) that offer Cloud TPUs
 */
#include "cmd.h"
#include "tpucmd.h"

static int locations_list(struct tpu_ctx *, int, char **, struct tpu_err *);

static const struct cmd_entry locations_children[] = {
	{
	    .name = "list",
	    .usage = "locations list " TPUCMD_LIST_USAGE,
	    .summary = "list the locations (zones) that offer Cloud TPUs",
	    .min_args = 0,
	    .max_args = 0,
	    .flags = CMD_NEEDS_AUTH | CMD_NEEDS_PROJECT,
	    .exec = locations_list,
	},
	{ .name = NULL },
};

static int
locations_list(struct tpu_ctx *ctx, int argc, char **argv, struct tpu_err *err)
{
	return tpucmd_list_collection(ctx, &locations_children[0], "locations",
	    "locations", "LOCATION=locationId", 0, argc, argv, err);
}

const struct cmd_entry cmd_locations_entry = {
	.name = "locations",
	.alias = NULL,
	.usage = "locations list ...",
	.summary = "list the locations (zones) that offer Cloud TPUs",
	.min_args = 0,
	.max_args = -1,
	.flags = 0,
	.exec = NULL,
	.children = locations_children,
};
