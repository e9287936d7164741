/*
 * "tpuctl reset-workers NODE": free the TPU on every worker, as after a
 * crashed run.  The worker probe (config/probes/tpu_probe.py) stops the
 * processes that hold the /dev/accel or /dev/vfio devices or a libtpu
 * lock (SIGTERM, then SIGKILL after --grace seconds), removes the
 * lockfiles no live process holds, and reports per worker what it did;
 * --dry-run (the global flag) only lists it.  Exit 0, 8 when a process
 * survived on some workers, 9 when none could be reached.
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd.h"
#include "compat.h"
#include "fwcmd.h"
#include "shquote.h"
#include "sshcmd.h"
#include "util.h"
#include "xmalloc.h"

enum { OPT_GRACE = 0x300 };

static int
reset_workers_exec(
    struct tpu_ctx *ctx, int argc, char **argv, struct tpu_err *err)
{
	static const struct option opts[] = {
		SSHCMD_LONG_OPTIONS,
		{ "grace", required_argument, NULL, OPT_GRACE },
		{ NULL, 0, NULL, 0 },
	};
	struct sshcmd_opts so;
	struct sshcmd sc;
	struct compat c;
	const char *errstr;
	char gen[32], runtime[128], grace[16] = "5";
	char *script = NULL, *command = NULL, *e_node = NULL;
	long long g;
	int ch, rc;

	sshcmd_opts_init(&so);
	so.workers = "all";
	so.default_nodes = "all";
	while ((ch = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		if ((rc = sshcmd_opt(&so, ch, optarg, err)) < 0)
			return rc;
		if (rc == 1)
			continue;
		if (ch != OPT_GRACE)
			return cmd_bad_option(argv, ch, err);
		g = tpu_strtonum(optarg, 0, 600, &errstr);
		if (errstr != NULL)
			return tpu_error(err, TPU_E_USAGE,
			    "--grace '%s': %s (seconds from 0 to 600)", optarg,
			    errstr);
		snprintf(grace, sizeof grace, "%lld", g);
	}
	argc -= optind;
	argv += optind;
	if ((rc = cmd_check_operands(
	         &cmd_reset_workers_entry, argc, argv, err)) != 0)
		return rc;
	{
		const char *n = argv[0];

		if ((rc = tpucmd_name(
		         ctx, TPUCMD_NAME_NODE | TPUCMD_NAME_QR, &n, err)) != 0)
			return rc;
		argv[0] += n - argv[0];
	}
	if ((rc = compat_load(&c, NULL, err)) != 0)
		return rc;
	/* the node must exist (and is cached for the SSH side) */
	if ((rc = fwcmd_read_node(ctx, argv[0], gen, sizeof gen, runtime,
	         sizeof runtime, err)) != 0)
		goto out;
	if ((rc = fwcmd_read_script(
	         c.dir, "probes/tpu_probe.py", &script, err)) != 0)
		goto out;
	e_node = xasprintf("TPUCTL_NODE=%s", argv[0]);
	{
		char *av[] = { (char *)"env", e_node, (char *)"python3",
			(char *)"-c", script, (char *)"reset",
			(char *)"--grace", grace,
			(char *)(ctx->dry_run ? "--dry-run" : NULL) };

		if ((rc = shquote_argv(
		         ctx->dry_run ? 9 : 8, av, &command, err)) != 0)
			goto out;
	}
	if ((rc = sshcmd_prepare(ctx, argv[0], &so, &sc, err)) != 0)
		goto out;
	rc = fwcmd_run(ctx, &sc, command, 0,
	    ctx->dry_run ? "reset-workers --dry-run" : "reset-workers",
	    "failed", err);
	sshcmd_release(&sc);
out:
	free(script);
	free(command);
	free(e_node);
	compat_release(&c);
	return rc;
}

const struct cmd_entry cmd_reset_workers_entry = {
	.name = "reset-workers",
	.alias = NULL,
	.usage = "reset-workers [--dry-run] [--grace seconds] [--zone zone] "
	         "[--node all|0|0,2|0-3|node-id] "
	         "[--worker 0|all|1,3|0-7] [--internal-ip] [--fanout n] "
	         "[--ssh-key-file file] [--strict-host-key-checking yes|no] "
	         "[--connect-timeout seconds] node",
	.summary = "stop what holds the TPU devices or the libtpu lock on a "
	           "node's workers",
	.min_args = 1,
	.max_args = 1,
	.flags = CMD_NEEDS_AUTH | CMD_NEEDS_ZONE | CMD_SSH,
	.exec = reset_workers_exec,
};
