/*
 * "tpuctl versions list": list the TPU runtime versions of a zone
 */
#include <stdio.h>
#include <string.h>

#include "cmd.h"
#include "config.h"
#include "compat.h"
#include "tpucmd.h"

static int versions_list(struct tpu_ctx *, int, char **, struct tpu_err *);

static const struct cmd_entry versions_children[] = {
	{
	    .name = "list",
	    .usage = "versions list " TPUCMD_LIST_USAGE
	             " [--framework name|all] [--zone zone|-]",
	    .summary = "list the TPU runtime versions of a zone",
	    .min_args = 0,
	    .max_args = 0,
	    .flags = CMD_NEEDS_AUTH | CMD_NEEDS_ZONE | CMD_ZONE_ANY,
	    .exec = versions_list,
	},
	{ .name = NULL },
};

/*
 * --framework F: the compatibility matrix (src/compat.h) for F, one row
 * per version, generation and runtime; local, no request.
 */
static int
framework_matrix(
    struct tpu_ctx *ctx, const char *fw, int others, struct tpu_err *err)
{
	struct compat c;
	cJSON *rows = NULL;
	int rc;

	if (others)
		return cmd_want_usage(),
		       tpu_error(err, TPU_E_USAGE,
		           "--framework takes no other option or operand");
	if ((rc = compat_load(&c, NULL, err)) != 0)
		return rc;
	if ((rc = compat_rows(&c, fw, &rows, err)) == 0)
		rc = output_emit(&ctx->out, rows,
		    "FRAMEWORK=framework,VERSION=version,"
		    "GENERATION=generation,RUNTIME_VERSION=runtimeVersion,"
		    "PYTHON=runtimePython,REQUIREMENTS=requirements.join(' ')",
		    err);
	cJSON_Delete(rows);
	compat_release(&c);
	return rc;
}

static int
versions_list(struct tpu_ctx *ctx, int argc, char **argv, struct tpu_err *err)
{
	int i;

	for (i = 1; i < argc && strcmp(argv[i], "--") != 0; i++) {
		if (strcmp(argv[i], "--framework") == 0) {
			if (i + 1 >= argc)
				return cmd_want_usage(),
				       tpu_error(err, TPU_E_USAGE,
				           "option '--framework' needs a "
				           "value");
			return framework_matrix(
			    ctx, argv[i + 1], argc != 3, err);
		}
		if (strncmp(argv[i], "--framework=", 12) == 0)
			return framework_matrix(
			    ctx, argv[i] + 12, argc != 2, err);
	}
	return tpucmd_list_collection(ctx, &versions_children[0],
	    "runtimeVersions", "runtimeVersions", "VERSION=version", 1, argc,
	    argv, err);
}

const struct cmd_entry cmd_versions_entry = {
	.name = "versions",
	.alias = NULL,
	.usage = "versions list ...",
	.summary = "list the TPU runtime versions of a zone",
	.min_args = 0,
	.max_args = -1,
	.flags = 0,
	.exec = NULL,
	.children = versions_children,
};
