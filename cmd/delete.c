/*
 * "tpuctl delete NODE...": delete TPU nodes.  On a terminal it asks first,
 * naming each node's accelerator type and chip count (a v5p-1024 is not
 * deleted by a stray Enter).  Every node is attempted; the exit status is
 * the first failure's.  Deliberately no alias: hard to hit by accident.
 * The node cache entry (nodecache.h) is dropped before the request.
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "catalog.h"
#include "cmd.h"
#include "json.h"
#include "log.h"
#include "nodecache.h"
#include "tpucmd.h"
#include "xmalloc.h"

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
			buf_printf(q, "\n  %s (%s, %d chips, %s)", names[i],
			    acc.type, acc.chips,
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
	static const struct option opts[] = {
		{ "async", no_argument, NULL, 'a' },
		{ "timeout", required_argument, NULL, 't' },
		{ NULL, 0, NULL, 0 },
	};
	struct tpucmd tc;
	struct buf q;
	cJSON *ops = NULL;
	const char *timeout = NULL;
	int64_t deadline;
	int ch, rc, i, async = 0, first = 0;

	while ((ch = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		if (ch == 'a')
			async = 1;
		else if (ch == 't')
			timeout = optarg;
		else
			return cmd_bad_option(argv, ch, err);
	}
	argc -= optind;
	argv += optind;
	if ((rc = cmd_check_operands(&cmd_delete_entry, argc, argv, err)) != 0)
		return rc;
	for (i = 0; i < argc; i++)
		if ((rc = catalog_node_name_validate(argv[i], err)) != 0)
			return rc;
	if ((rc = tpucmd_deadline(timeout, &deadline, err)) != 0)
		return rc;
	if ((rc = tpucmd_open(ctx, &tc, TPUCMD_ZONE, err)) != 0)
		return rc;
	buf_init(&q, 1 << 20);
	if (!ctx->quiet && ctx->interactive && !ctx->dry_run) {
		if ((rc = describe_for_prompt(&tc, argc, argv, &q, err)) != 0 ||
		    (rc = tpucmd_confirm(ctx, q.data, err)) != 0)
			goto out;
	}
	ops = cJSON_CreateArray();
	for (i = 0; i < argc; i++) {
		struct tpuapi_wait w;
		struct tpu_err e2;
		cJSON *op = NULL;
		char *path = tpuapi_node_path(&tc.api, tc.zone, argv[i]);
		char *what = xasprintf("deleting node '%s'", argv[i]);

		tpu_err_init(&e2);
		if (!ctx->dry_run)
			nodecache_drop(tc.project, tc.zone, argv[i]);
		rc = tpuapi_call(
		    &tc.api, "DELETE", path, NULL, NULL, 1, &op, &e2);
		if (rc == TPU_E_NOTFOUND)
			tpu_error(&e2, rc, "node '%s' not found in zone %s",
			    argv[i], tc.zone);
		if (rc == 0 && op != NULL && !async) {
			tpucmd_wait_opts(ctx, &tc, &w, deadline, what);
			rc = tpuapi_op_wait(&tc.api,
			    json_opt_string(op, "name", ""), &w, NULL, &e2);
			if (rc == 0 && !ctx->quiet)
				fprintf(stderr, "tpuctl: deleted node '%s'\n",
				    argv[i]);
		}
		if (rc == 0 && op != NULL && async) {
			cJSON_AddItemToArray(ops, op);
			op = NULL;
		}
		if (rc != 0) {
			if (first == 0) {
				first = rc;
				*err = e2;
			} else
				log_warn("%s", e2.msg);
		}
		cJSON_Delete(op);
		free(path);
		free(what);
		if (rc == TPU_E_INTERRUPTED || rc == TPU_E_TERMINATED)
			break;
	}
	rc = first;
	if (async && cJSON_GetArraySize(ops) > 0) {
		int orc = output_emit(&ctx->out, ops, "OPERATION=name", err);

		if (rc == 0)
			rc = orc;
	}
out:
	cJSON_Delete(ops);
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
