/*
 * "tpuctl stop NODE": stop a TPU node (its disks and configuration are kept).
 */
#include "cmd.h"
#include "tpucmd.h"

static int
stop_exec(struct tpu_ctx *ctx, int argc, char **argv, struct tpu_err *err)
{
	return tpucmd_node_verb(ctx, &cmd_stop_entry, "stop", argc, argv, err);
}

const struct cmd_entry cmd_stop_entry = {
	.name = "stop",
	.alias = NULL,
	.usage = "stop [--async] [--timeout duration] [--zone zone] node",
	.summary = "stop a TPU node (its disks and configuration are kept)",
	.min_args = 1,
	.max_args = 1,
	.flags = CMD_NEEDS_AUTH | CMD_NEEDS_ZONE,
	.exec = stop_exec,
};
