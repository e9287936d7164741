/*
 * "tpuctl list": TPU nodes of a zone, or of every zone with --zone -,
 * following every page; --filter keeps the nodes whose fields match.
 */
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#include "cmd.h"
#include "json.h"
#include "tpucmd.h"
#include "xmalloc.h"

#define LIST_COLUMNS                                                           \
	"NAME=name,ZONE=zone,ACCELERATOR_TYPE=acceleratorType,"                \
	"STATE=state,HEALTH=health,RUNTIME_VERSION=runtimeVersion"

static int
list_zone(struct tpucmd *tc, const char *zone, const char *filter, cJSON *all,
    struct tpu_err *err)
{
	cJSON *nodes = NULL, *it;
	char *parent;
	int rc;

	parent = xasprintf("projects/%s/locations/%s", tc->project, zone);
	rc = tpuapi_list(&tc->api, parent, "nodes", "nodes", &nodes, err);
	free(parent);
	if (rc != 0)
		return rc;
	cJSON_ArrayForEach(it, nodes) if (tpucmd_filter_match(it, filter))
	    cJSON_AddItemToArray(all, cJSON_Duplicate(it, 1));
	cJSON_Delete(nodes);
	return 0;
}

static int
list_exec(struct tpu_ctx *ctx, int argc, char **argv, struct tpu_err *err)
{
	static const struct option opts[] = {
		{ "filter", required_argument, NULL, 'f' },
		{ NULL, 0, NULL, 0 },
	};
	struct tpucmd tc;
	cJSON *all = NULL, *zones = NULL, *view = NULL;
	const cJSON *z;
	const char *filter = NULL;
	int ch, rc;

	while ((ch = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		if (ch == 'f')
			filter = optarg;
		else
			return cmd_bad_option(argv, ch, err);
	}
	if ((rc = cmd_check_operands(
	         &cmd_list_entry, argc - optind, argv + optind, err)) != 0)
		return rc;
	if ((rc = tpucmd_filter_check(filter, err)) != 0)
		return rc;
	if ((rc = tpucmd_open(ctx, &tc, TPUCMD_ZONE_ANY, err)) != 0)
		return rc;
	all = cJSON_CreateArray();
	if (strcmp(tc.zone, "-") != 0)
		rc = list_zone(&tc, tc.zone, filter, all, err);
	else if ((rc = tpuapi_zones(&tc.api, &zones, err)) == 0) {
		cJSON_ArrayForEach(z, zones)
		{
			if ((rc = list_zone(
			         &tc, z->valuestring, filter, all, err)) != 0)
				break;
		}
	}
	if (rc == 0) {
		if (ctx->out.fmt == OUTPUT_TABLE) {
			view = tpucmd_table_view(all);
			rc = output_emit(&ctx->out, view, LIST_COLUMNS, err);
		} else
			rc = output_emit(&ctx->out, all, LIST_COLUMNS, err);
	}
	cJSON_Delete(view);
	cJSON_Delete(zones);
	cJSON_Delete(all);
	tpucmd_close(&tc);
	return rc;
}

const struct cmd_entry cmd_list_entry = {
	.name = "list",
	.alias = "ls",
	.usage = "list [--filter field=value,...] [--zone zone|-]",
	.summary = "list TPU nodes in a zone, or in every zone",
	.min_args = 0,
	.max_args = 0,
	.flags = CMD_NEEDS_AUTH | CMD_NEEDS_ZONE,
	.exec = list_exec,
};
