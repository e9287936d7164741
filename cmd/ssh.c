/*
 * "tpuctl ssh NAME": an interactive shell on one worker, or a command on
 * any set of workers through the fan-out engine (src/sshpool.h), with
 * per-worker prefixed output, a summary and the exit contract of
 * DESIGN.md: one worker gives its own status; many give 0 (all ok),
 * 8 (partial) or 9 (none reachable).  NAME is a node ("[w3]" prefixes)
 * or a queued resource whose slices --node selects ("[s1/w3]").
 */

#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd.h"
#include "config.h"
#include "fanout.h"
#include "retry.h"
#include "shquote.h"
#include "ssh_pool.h"
#include "sshcmd.h"
#include "util.h"
#include "xmalloc.h"

enum {
	OPT_COMMAND = 0x300,
	OPT_TIMEOUT,
	OPT_OUTPUT,
	OPT_OUTPUT_DIR,
	OPT_FAIL_FAST,
	OPT_PERSIST,
	OPT_STDIN,
};

static volatile sig_atomic_t ssh_winch;

static void
on_winch(int sig)
{
	(void)sig;
	ssh_winch = 1;
}

static int
run_shell(struct sshcmd *sc, struct tpu_err *err)
{
	struct sshpool_conn conn;
	struct sshpool_result res;
	struct sshpool_shell_opts so;
	char signame[32] = "";
	int rc, status = -1;

	memset(&res, 0, sizeof res);
	memset(&so, 0, sizeof so);
	rc = sshpool_connect(&sc->targets[0], &sc->popts, &conn, &res, err);
	sshpool_result_release(&res);
	if (rc != 0)
		return rc;
	so.term = getenv("TERM");
	so.no_pty = !isatty(0);
	so.in_fd = 0;
	so.out_fd = 1;
	so.err_fd = 2;
	so.winch = &ssh_winch;
	so.abort = &retry_interrupted;
	rc = sshpool_shell(&conn, &so, &status, signame, err);
	sshpool_conn_close(&conn);
	if (rc != 0)
		return rc;
	if (status < 0)
		return fanout_signal_status(signame);
	return status;
}

static int
ssh_exec(struct tpu_ctx *ctx, int argc, char **argv, struct tpu_err *err)
{
	static const struct option opts[] = {
		SSHCMD_LONG_OPTIONS,
		SSHCMD_GCLOUD_OPTIONS,
		{ "command", required_argument, NULL, OPT_COMMAND },
		{ "timeout", required_argument, NULL, OPT_TIMEOUT },
		{ "output", required_argument, NULL, OPT_OUTPUT },
		{ "output-dir", required_argument, NULL, OPT_OUTPUT_DIR },
		/* gcloud's name */
		{ "output-directory", required_argument, NULL, OPT_OUTPUT_DIR },
		{ "fail-fast", no_argument, NULL, OPT_FAIL_FAST },
		{ "persist", required_argument, NULL, OPT_PERSIST },
		{ "stdin", no_argument, NULL, OPT_STDIN },
		{ NULL, 0, NULL, 0 },
	};
	struct sshcmd_opts so;
	struct sshcmd sc;
	struct sigaction sa, old_winch;
	struct fanout_spec fs;
	const char *command = NULL, *persist = NULL;
	char *built = NULL;
	long long timeout_s = 0;
	int ch, rc, saved_errno, want_stdin = 0;

	sshcmd_opts_init(&so);
	fanout_spec_init(&fs);
	while ((ch = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		if ((rc = sshcmd_opt(&so, ch, optarg, err)) < 0)
			return rc;
		if (rc == 1)
			continue;
		switch (ch) {
		case OPT_COMMAND:
			command = optarg;
			break;
		case OPT_TIMEOUT:
			if ((rc = tpu_parse_duration(
			         "--timeout", optarg, &timeout_s, err)) != 0)
				return rc;
			break;
		case OPT_OUTPUT:
			if ((rc = fanout_parse_output(optarg, &fs.mode, err)) !=
			    0)
				return rc;
			break;
		case OPT_OUTPUT_DIR:
			fs.outdir = optarg;
			break;
		case OPT_FAIL_FAST:
			fs.fail_fast = 1;
			break;
		case OPT_PERSIST:
			persist = optarg;
			break;
		case OPT_STDIN:
			want_stdin = 1;
			break;
		default:
			return cmd_bad_option(argv, ch, err);
		}
	}
	argc -= optind;
	argv += optind;
	if ((rc = cmd_check_operands(&cmd_ssh_entry, argc, argv, err)) != 0)
		return rc;
	/* The node may come before options: take the rest after it. */
	if (argc > 1) {
		int i = 1;

		if (strcmp(argv[1], "--") == 0)
			i = 2;
		if (command != NULL)
			return tpu_error(err, TPU_E_USAGE,
			    "give the remote command either with --command or "
			    "after --, not both");
		/* gcloud passes what follows -- to ssh(1): its -L, -R, -D
		 * forwarding flags would run as a remote command here */
		if (i < argc && argv[i][0] == '-' &&
		    strchr("LRD", argv[i][1]) != NULL && argv[i][1] != '\0')
			return tpu_error(err, TPU_E_USAGE,
			    "'%s' after the node: tpuctl runs what follows on "
			    "the workers; for port forwarding use 'tpuctl "
			    "forward NODE PORT' (tpuctl-forward(1))",
			    argv[i]);
		/* As ssh(1): one operand is a command line for the remote
		 * shell; several are each quoted, so they arrive as given. */
		if (argc - i == 1) {
			if (argv[i][0] == '\0')
				return tpu_error(err, TPU_E_USAGE,
				    "empty remote command after --");
			command = argv[i];
		} else if (i < argc) {
			if ((rc = shquote_argv(
			         argc - i, argv + i, &built, err)) != 0)
				return rc;
			command = built;
		}
	}
	if (command == NULL && want_stdin) {
		free(built);
		return tpu_error(err, TPU_E_USAGE,
		    "--stdin forwards stdin to a command given after --; an "
		    "interactive shell reads it anyway");
	}
	if ((rc = ssh_pool_parse_persist(
	         persist != NULL ? "--persist" : "ssh/persist",
	         persist != NULL ? persist
	                         : config_get(ctx->cfg, "ssh/persist"),
	         &fs.persist_s, err)) != 0) {
		free(built);
		return rc;
	}
	if (timeout_s > 24 * 3600) {
		free(built);
		return tpu_error(err, TPU_E_USAGE,
		    "--timeout: at most 24 hours for a remote command");
	}
	if (command != NULL) /* a queued resource's name: every slice */
		so.default_nodes = "all";
	/* tpuctl's global --dry-run (taken anywhere on the line) is
	 * gcloud's --dry-run here: reads only, nothing sent */
	so.dry_run |= ctx->dry_run;
	if ((rc = sshcmd_prepare(ctx, argv[0], &so, &sc, err)) != 0) {
		free(built);
		return rc;
	}
	if (command == NULL && sc.ntargets != 1) {
		rc = tpu_error(err, TPU_E_USAGE,
		    "an interactive shell needs exactly one worker (%zu "
		    "selected): give a command after --",
		    sc.ntargets);
		goto out;
	}
	if (so.dry_run) {
		char *what = command != NULL
		                 ? xasprintf("would run: %s", command)
		                 : xstrdup("would open an interactive shell");

		sshcmd_print_dry_run(&sc, what, NULL);
		free(what);
		rc = 0;
		goto out;
	}
	if (command != NULL) {
		fs.command = command;
		fs.timeout_s = (int)timeout_s;
		/* as ssh(1) with one worker; with several only when asked
		   (each gets the same bytes); the warm holder of --persist
		   cannot forward it: only with --stdin, then cold */
		if (want_stdin || (sc.ntargets == 1 && fs.persist_s == 0))
			fs.stdin_fd = 0;
		rc = fanout_run(ctx, &sc, &fs, err);
		goto out;
	}
	retry_install_signals();
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = on_winch;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGWINCH, &sa, &old_winch);
	rc = run_shell(&sc, err);
	sigaction(SIGWINCH, &old_winch, NULL);
out:
	saved_errno = errno; /* EPIPE after a closed stdout: see fanout.h */
	sshcmd_release(&sc);
	free(built);
	errno = saved_errno;
	return rc;
}

const struct cmd_entry cmd_ssh_entry = {
	.name = "ssh",
	.alias = NULL,
	.usage = "ssh [--fail-fast] " SSHCMD_USAGE_MANY SSHCMD_USAGE_GCLOUD
	         " [--timeout duration] [--persist no|duration] [--stdin] "
	         "[--output prefix|raw|jsonl] "
	         "[--output-dir dir] [--command string] name [-- command ...]",
	.summary = "run a command or a shell on a node's workers over SSH",
	.min_args = 1,
	.max_args = -1,
	.flags = CMD_NEEDS_AUTH | CMD_NEEDS_ZONE | CMD_SSH,
	.exec = ssh_exec,
};
