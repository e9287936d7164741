/*
 * "tpuctl start NODE": start a stopped TPU node and wait until it is ready.
 */
#include "cmd.h"
#include "tpucmd.h"

static int
start_exec(struct tpu_ctx *ctx, int argc, char **argv, struct tpu_err *err)
{
	return tpucmd_node_verb(
	    ctx, &cmd_start_entry, "start", argc, argv, err);
}

const struct cmd_entry cmd_start_entry = {
	.name = "start",
	.alias = NULL,
	.usage = "start [--async] [--timeout duration] [--zone zone] node",
	.summary = "start a stopped TPU node and wait until it is ready",
	.min_args = 1,
	.max_args = 1,
	.flags = CMD_NEEDS_AUTH | CMD_NEEDS_ZONE,
	.exec = start_exec,
};
