/*
 * "tpuctl notebook NODE": the Colab convenience on a TPU VM.  Start
 * Jupyter on one worker (config/probes/notebook.sh: installed with pip
 * if missing, bound to the worker's 127.0.0.1, with a token chosen
 * here), forward a local port to it through the worker's sshd, print
 * the local URL with the token, and on Ctrl-C (or SIGTERM) stop the
 * server on the worker.  Exit 0 on that normal end.
 */
#include <sys/socket.h>

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cmd.h"
#include "compat.h"
#include "fwcmd.h"
#include "retry.h"
#include "shquote.h"
#include "sshcmd.h"
#include "util.h"
#include "xmalloc.h"

enum {
	OPT_PORT = 0x300,
	OPT_LOCAL_PORT,
	OPT_PYTHON,
};

static int
port_opt(const char *flag, const char *arg, int *out, struct tpu_err *err)
{
	const char *errstr;
	long long v = tpu_strtonum(arg, 1, 65535, &errstr);

	if (errstr != NULL)
		return tpu_error(err, TPU_E_USAGE,
		    "%s '%s': %s (a port from 1 to 65535)", flag, arg, errstr);
	*out = (int)v;
	return 0;
}

/* 48 hex digits from /dev/urandom. */
static int
make_token(char out[49], struct tpu_err *err)
{
	static const char hex[] = "0123456789abcdef";
	unsigned char b[24];
	ssize_t n = -1;
	int fd, i;

	if ((fd = open("/dev/urandom", O_RDONLY | O_CLOEXEC)) >= 0) {
		n = read(fd, b, sizeof b);
		close(fd);
	}
	if (n != (ssize_t)sizeof b)
		return tpu_error(err, TPU_E_IO, "cannot read /dev/urandom");
	for (i = 0; i < 24; i++) {
		out[2 * i] = hex[b[i] >> 4];
		out[2 * i + 1] = hex[b[i] & 15];
	}
	out[48] = '\0';
	return 0;
}

static int
helper_command(const char *script, const char *python, const char *mode,
    int port, const char *token, char **out, struct tpu_err *err)
{
	char p[8], *e_py = xasprintf("TPUCTL_PYTHON=%s", python);
	char *e_tok = xasprintf("JUPYTER_TOKEN=%s", token);
	char *av[] = { (char *)"env", e_py, e_tok, (char *)"sh", (char *)"-c",
		(char *)script, (char *)"notebook", (char *)mode, p };
	int rc;

	snprintf(p, sizeof p, "%d", port);
	rc = shquote_argv(9, av, out, err);
	free(e_py);
	free(e_tok);
	return rc;
}

static int
notebook_exec(struct tpu_ctx *ctx, int argc, char **argv, struct tpu_err *err)
{
	static const struct option opts[] = {
		SSHCMD_LONG_OPTIONS,
		{ "local-port", required_argument, NULL, OPT_LOCAL_PORT },
		{ "port", required_argument, NULL, OPT_PORT },
		{ "python", required_argument, NULL, OPT_PYTHON },
		{ NULL, 0, NULL, 0 },
	};
	struct sshcmd_opts so;
	struct sshcmd sc;
	struct compat c;
	struct sshpool_conn conn;
	struct sshpool_result pr;
	struct sshpool_forward_opts fo;
	struct sockaddr_in sin;
	struct tpu_err serr;
	const char *python = "python3";
	char token[49], *script = NULL, *start = NULL, *stop = NULL;
	int ch, rc, port = 8888, lport = 0, fd = -1, one = 1, prepared = 0;
	int started = 0, loaded = 0;

	sshcmd_opts_init(&so);
	while ((ch = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		if ((rc = sshcmd_opt(&so, ch, optarg, err)) < 0)
			return rc;
		if (rc == 1)
			continue;
		rc = 0;
		switch (ch) {
		case OPT_PORT:
			rc = port_opt("--port", optarg, &port, err);
			break;
		case OPT_LOCAL_PORT:
			rc = port_opt("--local-port", optarg, &lport, err);
			break;
		case OPT_PYTHON:
			if (*optarg == '\0' || strpbrk(optarg, " \t\n") != NULL)
				rc = tpu_error(err, TPU_E_USAGE,
				    "--python '%s': an interpreter name or "
				    "path",
				    optarg);
			python = optarg;
			break;
		default:
			return cmd_bad_option(argv, ch, err);
		}
		if (rc != 0)
			return rc;
	}
	if ((rc = cmd_check_operands(
	         &cmd_notebook_entry, argc - optind, argv + optind, err)) != 0)
		return rc;
	if (strcmp(so.workers, "all") == 0 || strchr(so.workers, ',') ||
	    strchr(so.workers, '-'))
		return tpu_error(err, TPU_E_USAGE,
		    "--worker %s: the notebook runs on one worker", so.workers);
	so.one_slice = "the notebook runs on one worker";
	if (lport == 0)
		lport = port;
	if ((rc = make_token(token, err)) != 0)
		return rc;
	if ((rc = compat_load(&c, NULL, err)) != 0)
		return rc;
	loaded = 1;
	if ((rc = fwcmd_read_script(
	         c.dir, "probes/notebook.sh", &script, err)) != 0)
		goto out;
	if ((rc = helper_command(
	         script, python, "start", port, token, &start, err)) != 0 ||
	    (rc = helper_command(
	         script, python, "stop", port, "-", &stop, err)) != 0)
		goto out;
	/* bind first: a port in use is reported before anything starts */
	memset(&sin, 0, sizeof sin);
	sin.sin_family = AF_INET;
	sin.sin_port = htons((uint16_t)lport);
	sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if ((fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0)) == -1 ||
	    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one) != 0 ||
	    bind(fd, (struct sockaddr *)&sin, sizeof sin) != 0 ||
	    listen(fd, 64) != 0) {
		rc = tpu_error(err, TPU_E_IO,
		    "cannot listen on 127.0.0.1:%d: %s", lport,
		    strerror(errno));
		goto out;
	}
	if (ctx->dry_run) {
		char *what = xasprintf("would start Jupyter on port %d, "
		                       "forwarded to 127.0.0.1:%d",
		    port, lport);

		rc = fwcmd_dry_run(ctx, argv[optind], &so, what, err);
		free(what);
		goto out;
	}
	if ((rc = sshcmd_prepare(ctx, argv[optind], &so, &sc, err)) != 0)
		goto out;
	prepared = 1;
	if ((rc = fwcmd_run(ctx, &sc, start, 0, "notebook", "failed", err)) !=
	    0)
		goto out;
	started = 1;
	memset(&pr, 0, sizeof pr);
	rc = sshpool_connect(&sc.targets[0], &sc.popts, &conn, &pr, err);
	sshpool_result_release(&pr);
	if (rc != 0)
		goto out;
	printf("http://127.0.0.1:%d/?token=%s\n", lport, token);
	fflush(stdout);
	fprintf(stderr,
	    "tpuctl: Jupyter on worker %d (port %d) at 127.0.0.1:%d; Ctrl-C "
	    "stops it\n",
	    sc.targets[0].worker, port, lport);
	retry_install_signals();
	memset(&fo, 0, sizeof fo);
	fo.listen_fd = fd;
	fo.host = "127.0.0.1";
	fo.port = port;
	fo.abort = &retry_interrupted;
	rc = sshpool_forward(&conn, &fo, err);
	sshpool_conn_close(&conn);
	/* Ctrl-C or SIGTERM: the normal end; the stop below must still run */
	if (rc == TPU_E_INTERRUPTED || rc == TPU_E_TERMINATED) {
		retry_interrupted = 0;
		tpu_err_init(err);
		rc = 0;
	}
out:
	if (started) {
		/* stop it on every path once it runs */
		tpu_err_init(&serr);
		if (fwcmd_run(ctx, &sc, stop, 30, "notebook stop", "failed",
		        &serr) != 0 &&
		    rc == 0)
			rc = tpu_error(err, TPU_E_PARTIAL, "%s", serr.msg);
	}
	if (prepared)
		sshcmd_release(&sc);
	if (fd != -1)
		close(fd);
	free(script);
	free(start);
	free(stop);
	if (loaded)
		compat_release(&c);
	return rc;
}

const struct cmd_entry cmd_notebook_entry = {
	.name = "notebook",
	.alias = NULL,
	.usage = "notebook [--port port] [--local-port port] [--python path] "
	         "[--zone zone] [--worker n] [--internal-ip] "
	         "[--ssh-key-file file] [--strict-host-key-checking yes|no] "
	         "[--connect-timeout seconds] node",
	.summary = "run Jupyter on a worker and forward it here, until Ctrl-C",
	.min_args = 1,
	.max_args = 1,
	.flags = CMD_NEEDS_AUTH | CMD_NEEDS_ZONE | CMD_SSH,
	.exec = notebook_exec,
};
