/*
 * "tpuctl list": TPU nodes of a zone, or of every zone with --zone -,
 * following every page, with gcloud's --filter, --sort-by, --limit,
 * --page-size and --uri.
 */
#include "cmd.h"
#include "tpucmd.h"

#define LIST_COLUMNS                                                           \
	"NAME=name,ZONE=zone,ACCELERATOR_TYPE=acceleratorType,"                \
	"STATE=state,HEALTH=health,RUNTIME_VERSION=runtimeVersion"

static int
list_exec(struct tpu_ctx *ctx, int argc, char **argv, struct tpu_err *err)
{
	static const struct tpucmd_list l = {
		.collection = "nodes",
		.field = "nodes",
		.columns = LIST_COLUMNS,
	};

	return tpucmd_list_run(ctx, &cmd_list_entry, &l, argc, argv, err);
}

const struct cmd_entry cmd_list_entry = {
	.name = "list",
	.alias = "ls",
	.usage = "list " TPUCMD_LIST_USAGE " [--zone zone|-]",
	.summary = "list TPU nodes in a zone, or in every zone",
	.min_args = 0,
	.max_args = 0,
	.flags = CMD_NEEDS_AUTH | CMD_NEEDS_ZONE | CMD_ZONE_ANY,
	.exec = list_exec,
};
