/*
 * "tpuctl delete NODE...": delete TPU nodes.  On a terminal it asks first,
 * naming each node's accelerator type and chip count (a v5p-1024 is not
 * deleted by a stray Enter).  Every node is attempted; the exit status is
 * the first failure's.  Deliberately no alias: hard to hit by accident.
 * The node cache entry (nodecache.h) is dropped before the request.
 */
#include <stdlib.h>

#include "buf.h"
#include "catalog.h"
#include "cmd.h"
#include "json.h"
#include "tpucmd.h"

/* "n1 (v4-32, 16 chips)" lines for the prompt; GETs only on a terminal. */
static int
describe_for_prompt(
    struct tpucmd *tc, int n, char **names, struct buf *q, struct tpu_err *err)
{
	int i, rc;

	buf_printf(
	    q, "Delete %d TPU node%s in %s?", n, n == 1 ? "" : "s", tc->zone);
	for (i = 0; i < n; i++) {
		struct catalog_accel acc;
		struct tpu_err e2;
		cJSON *node = NULL;
		char *path = tpuapi_node_path(&tc->api, tc->zone, names[i]);

		rc = tpuapi_call(
		    &tc->api, "GET", path, NULL, NULL, 1, &node, err);
		free(path);
		if (rc == TPU_E_NOTFOUND) {
			buf_printf(q, "\n  %s (not found)", names[i]);
			continue;
		}
		if (rc != 0)
			return rc;
		tpu_err_init(&e2);
		if (catalog_accel_parse(
		        json_opt_string(node, "acceleratorType", "?"), &acc,
		        &e2) == 0)
			buf_printf(q, "\n  %s (%s, %d chip%s, %s)", names[i],
			    acc.type, acc.chips, acc.chips == 1 ? "" : "s",
			    json_opt_string(node, "state", "?"));
		else
			buf_printf(q, "\n  %s (%s)", names[i],
			    json_opt_string(node, "acceleratorType", "?"));
		cJSON_Delete(node);
	}
	buf_puts(q, "\n");
	return 0;
}

static int
delete_exec(struct tpu_ctx *ctx, int argc, char **argv, struct tpu_err *err)
{
	static const struct tpucmd_delete d = {
		.kind = "node",
		.collection = "nodes",
		.node_cache = 1,
	};
	struct tpucmd tc;
	struct buf q;
	int64_t deadline;
	int rc, async;

	if ((rc = tpucmd_node_verb_open(ctx, &cmd_delete_entry, &argc, &argv,
	         &async, &deadline, &tc, err)) != 0)
		return rc;
	buf_init(&q, 1 << 20);
	if (!ctx->quiet && ctx->interactive && !ctx->dry_run) {
		if ((rc = describe_for_prompt(&tc, argc, argv, &q, err)) != 0 ||
		    (rc = tpucmd_confirm(ctx, q.data, err)) != 0)
			goto out;
	}
	rc = tpucmd_delete_each(ctx, &tc, &d, argc, argv, async, deadline, err);
out:
	buf_release(&q);
	tpucmd_close(&tc);
	return rc;
}

const struct cmd_entry cmd_delete_entry = {
	.name = "delete",
	.alias = NULL, /* deliberately none: hard to hit by accident */
	.usage = "delete [--async] [--timeout duration] [--zone zone] node ...",
	.summary = "delete TPU nodes",
	.min_args = 1,
	.max_args = -1,
	.flags = CMD_NEEDS_AUTH | CMD_NEEDS_ZONE,
	.exec = delete_exec,
};
