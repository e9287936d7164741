/*
 * "tpuctl diff SPEC": what "tpuctl apply SPEC" would change, read with
 * GETs only: one line per field in a diff-like form ("~ labels.env: dev
 * -> prod", "+ metadata.startup-script", "- labels.owner"), the fields
 * the API cannot change in place marked with the reason.  Exit status as
 * diff(1): 0 when the slice matches the spec, 1 when it differs, more for
 * errors.
 */
#include <getopt.h>
#include <stdio.h>

#include "cmd.h"
#include "err.h"
#include "specdiff.h"

static int
diff_exec(struct tpu_ctx *ctx, int argc, char **argv, struct tpu_err *err)
{
	static const struct option opts[] = {
		{ NULL, 0, NULL, 0 },
	};
	struct specdiff d;
	int ch, rc;

	while ((ch = getopt_long(argc, argv, "", opts, NULL)) != -1)
		return cmd_bad_option(argv, ch, err);
	argc -= optind;
	argv += optind;
	if ((rc = cmd_check_operands(&cmd_diff_entry, argc, argv, err)) != 0)
		return rc;
	if ((rc = specdiff_open(ctx, argv[0], &d, err)) == 0 &&
	    (rc = specdiff_print(ctx, &d, err)) == 0)
		rc = cJSON_GetArraySize(d.changes) > 0 ? 1 : 0;
	specdiff_close(&d);
	/* diff(1): 1 means "different", so trouble is 2 at least. */
	if (rc < 0 && tpu_exit_status((enum tpu_errc)rc) == 1) {
		fprintf(stderr, "tpuctl: %s\n", err->msg);
		return 2;
	}
	return rc;
}

const struct cmd_entry cmd_diff_entry = {
	.name = "diff",
	.alias = NULL,
	.usage = "diff [--zone zone] spec",
	.summary = "show how a TPU slice differs from its spec file",
	.min_args = 1,
	.max_args = 1,
	.flags = CMD_NEEDS_AUTH | CMD_NEEDS_ZONE,
	.exec = diff_exec,
};
