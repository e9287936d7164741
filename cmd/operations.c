/*
 * "tpuctl operations describe|list|wait": the long-running operations of
 * the Cloud TPU API.  "wait" is how a --timeout or Ctrl-C'd command is
 * resumed; it never cancels anything.
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd.h"
#include "json.h"
#include "tpucmd.h"
#include "xmalloc.h"

/* An operation id ("operation-...") or full name, checked before use. */
static int
op_path(struct tpucmd *tc, const char *op, char **path, struct tpu_err *err)
{
	const char *p;

	if (strncmp(op, "projects/", 9) == 0) {
		if (strstr(op, "/operations/") == NULL || strstr(op, "..") ||
		    strpbrk(op, "?#% \t\r\n") != NULL)
			return tpu_error(err, TPU_E_USAGE,
			    "invalid operation name '%s': expected "
			    "projects/P/locations/Z/operations/ID or an ID",
			    op);
		*path = xstrdup(op);
		return 0;
	}
	for (p = op; *p != '\0'; p++)
		if (!((*p >= 'a' && *p <= 'z') || (*p >= '0' && *p <= '9') ||
		        *p == '-' || *p == '_' || (*p >= 'A' && *p <= 'Z')))
			break;
	if (*op == '\0' || *p != '\0' || strlen(op) > 200)
		return tpu_error(err, TPU_E_USAGE,
		    "invalid operation id '%s': letters, digits, '-' and '_' "
		    "only",
		    op);
	*path = xasprintf("projects/%s/locations/%s/operations/%s", tc->project,
	    tc->zone, op);
	return 0;
}

static int
no_options(int argc, char **argv, struct tpu_err *err)
{
	static const struct option opts[] = {
		{ NULL, 0, NULL, 0 },
	};
	int ch;

	while ((ch = getopt_long(argc, argv, "", opts, NULL)) != -1)
		return cmd_bad_option(argv, ch, err);
	return 0;
}

static int
ops_describe(struct tpu_ctx *ctx, int argc, char **argv, struct tpu_err *err)
{
	extern const struct cmd_entry operations_children[];
	struct tpucmd tc;
	cJSON *op = NULL;
	char *path = NULL;
	int rc;

	if ((rc = no_options(argc, argv, err)) != 0)
		return rc;
	if ((rc = cmd_check_operands(&operations_children[0], argc - optind,
	         argv + optind, err)) != 0)
		return rc;
	if ((rc = tpucmd_open(ctx, &tc, err)) != 0)
		return rc;
	if ((rc = op_path(&tc, argv[optind], &path, err)) == 0 &&
	    (rc = tpuapi_call(&tc.api, "GET", path, NULL, NULL, 1, &op, err)) ==
	        0)
		rc = output_emit(&ctx->out, op, NULL, err);
	cJSON_Delete(op);
	free(path);
	tpucmd_close(&tc);
	return rc;
}

/* Table rows: an operation still running has no "done" yet. */
static cJSON *
ops_view(const cJSON *ops)
{
	cJSON *view = tpucmd_table_view(ops), *it;

	cJSON_ArrayForEach(it, view)
	{
		if (!cJSON_HasObjectItem(it, "done"))
			cJSON_AddBoolToObject(it, "done", 0);
	}
	return view;
}

static int
ops_list(struct tpu_ctx *ctx, int argc, char **argv, struct tpu_err *err)
{
	extern const struct cmd_entry operations_children[];
	static const struct tpucmd_list l = {
		.collection = "operations",
		.field = "operations",
		.columns = "NAME=name,VERB=metadata.verb,"
		           "TARGET=metadata.target,DONE=done",
		.view = ops_view,
	};

	return tpucmd_list_run(
	    ctx, &operations_children[1], &l, argc, argv, err);
}

/*
 * One line on stderr after a successful wait: "operation OP done", and
 * what it left: "node 'n1' is READY" (the response's name and state).
 */
static void
wait_summary(const char *op, const cJSON *result)
{
	const char *name = json_opt_string(result, "name", "");
	const char *state = json_opt_string(result, "state", "");
	const char *slash = strrchr(name, '/'), *kind = NULL;

	if (slash != NULL) {
		size_t n = (size_t)(slash - name);

		if (n >= 6 && strncmp(slash - 6, "/nodes", 6) == 0)
			kind = "node";
		else if (n >= 16 &&
		         strncmp(slash - 16, "/queuedResources", 16) == 0)
			kind = "queued resource";
	}
	if (cJSON_IsObject(cJSON_GetObjectItemCaseSensitive(result, "state")))
		state = json_opt_string(
		    cJSON_GetObjectItemCaseSensitive(result, "state"), "state",
		    "");
	if (kind != NULL && *state != '\0')
		fprintf(stderr, "tpuctl: operation %s done: %s '%s' is %s\n",
		    op, kind, slash + 1, state);
	else if (kind != NULL)
		fprintf(stderr, "tpuctl: operation %s done: %s '%s'\n", op,
		    kind, slash + 1);
	else
		fprintf(stderr, "tpuctl: operation %s done\n", op);
}

static int
ops_wait(struct tpu_ctx *ctx, int argc, char **argv, struct tpu_err *err)
{
	extern const struct cmd_entry operations_children[];
	static const struct option opts[] = {
		{ "timeout", required_argument, NULL, 't' },
		{ NULL, 0, NULL, 0 },
	};
	struct tpucmd_wait w;
	struct tpucmd tc;
	cJSON *result = NULL;
	const char *timeout = NULL;
	char *path = NULL, *what = NULL;
	int64_t deadline;
	int ch, rc;

	while ((ch = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		if (ch == 't')
			timeout = optarg;
		else
			return cmd_bad_option(argv, ch, err);
	}
	if ((rc = cmd_check_operands(&operations_children[2], argc - optind,
	         argv + optind, err)) != 0)
		return rc;
	if ((rc = tpucmd_deadline(timeout, &deadline, err)) != 0)
		return rc;
	if ((rc = tpucmd_open(ctx, &tc, err)) != 0)
		return rc;
	if ((rc = op_path(&tc, argv[optind], &path, err)) != 0)
		goto out;
	what = xasprintf("waiting for %s", tpuapi_basename(path));
	tpucmd_wait_opts(ctx, &tc, &w, deadline, what);
	if ((rc = tpuapi_op_wait(&tc.api, path, &w.api, &result, err)) == 0 &&
	    !ctx->quiet)
		wait_summary(tpuapi_basename(path), result);
	if (rc == 0 && result != NULL)
		rc = tpucmd_emit_result(ctx, result, err);
out:
	cJSON_Delete(result);
	free(path);
	free(what);
	tpucmd_close(&tc);
	return rc;
}

const struct cmd_entry operations_children[] = {
	{
	    .name = "describe",
	    .usage = "operations describe [--zone zone] operation",
	    .summary = "show a long-running operation",
	    .min_args = 1,
	    .max_args = 1,
	    .flags = CMD_NEEDS_AUTH | CMD_NEEDS_ZONE,
	    .exec = ops_describe,
	},
	{
	    .name = "list",
	    .usage = "operations list " TPUCMD_LIST_USAGE " [--zone zone]",
	    .summary = "list the operations of a zone",
	    .min_args = 0,
	    .max_args = 0,
	    .flags = CMD_NEEDS_AUTH | CMD_NEEDS_ZONE,
	    .exec = ops_list,
	},
	{
	    .name = "wait",
	    .usage = "operations wait [--timeout duration] [--zone zone] "
	             "operation",
	    .summary = "wait for an operation to finish (never cancels it)",
	    .min_args = 1,
	    .max_args = 1,
	    .flags = CMD_NEEDS_AUTH | CMD_NEEDS_ZONE,
	    .exec = ops_wait,
	},
	{ .name = NULL },
};

const struct cmd_entry cmd_operations_entry = {
	.name = "operations",
	.alias = "op",
	.usage = "operations describe|list|wait ...",
	.summary = "inspect and wait for long-running operations",
	.min_args = 0,
	.max_args = -1,
	.flags = 0,
	.exec = NULL,
	.children = operations_children,
};
