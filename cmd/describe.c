/*
 * "tpuctl describe NODE": the node as the API returns it, including its
 * per-worker network endpoints and health (YAML by default, as gcloud).
 * Describe always asks the API; it refreshes the node cache (nodecache.h)
 * that ssh and scp read.
 */
#include <getopt.h>
#include <stdlib.h>

#include "catalog.h"
#include "cmd.h"
#include "nodecache.h"
#include "tpucmd.h"
#include "xmalloc.h"

static int
describe_exec(struct tpu_ctx *ctx, int argc, char **argv, struct tpu_err *err)
{
	static const struct option opts[] = {
		{ NULL, 0, NULL, 0 },
	};
	struct tpucmd tc;
	cJSON *node = NULL;
	char *path = NULL;
	int ch, rc;

	while ((ch = getopt_long(argc, argv, "", opts, NULL)) != -1)
		return cmd_bad_option(argv, ch, err);
	argc -= optind;
	argv += optind;
	if ((rc = cmd_check_operands(&cmd_describe_entry, argc, argv, err)) !=
	    0)
		return rc;
	{
		const char *n = argv[0];

		if ((rc = tpucmd_name(ctx, TPUCMD_NAME_NODE, &n, err)) != 0)
			return rc;
		argv[0] += n - argv[0];
	}
	if ((rc = tpucmd_open(ctx, &tc, err)) != 0)
		return rc;
	path = tpuapi_node_path(&tc.api, tc.zone, argv[0]);
	if ((rc = tpuapi_call(
	         &tc.api, "GET", path, NULL, NULL, 1, &node, err)) == 0) {
		/* Describe is the refresh: a READY node is stored for ssh,
		 * any other state drops the entry. */
		nodecache_put(tc.project, tc.zone, argv[0], node);
		rc = output_emit(&ctx->out, node, NULL, err);
	} else if (rc == TPU_E_NOTFOUND) {
		nodecache_drop(tc.project, tc.zone, argv[0]);
		tpu_error(err, rc,
		    "node '%s' not found in zone %s of project %s", argv[0],
		    tc.zone, tc.project);
	}
	cJSON_Delete(node);
	free(path);
	tpucmd_close(&tc);
	return rc;
}

const struct cmd_entry cmd_describe_entry = {
	.name = "describe",
	.alias = NULL,
	.usage = "describe [--zone zone] node",
	.summary = "show a TPU node, its workers' endpoints and health",
	.min_args = 1,
	.max_args = 1,
	.flags = CMD_NEEDS_AUTH | CMD_NEEDS_ZONE,
	.exec = describe_exec,
};
