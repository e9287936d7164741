/*
 * "tpuctl forward NAME LOCAL_PORT[:REMOTE_HOST:REMOTE_PORT]": local port
 * forwarding through one worker's sshd (ssh -L), for TensorBoard, a
 * notebook or a profiler on a worker; NAME is a node, or a queued
 * resource whose slice --node picks (default 0).  Listens on 127.0.0.1
 * only.  Runs until Ctrl-C, its normal end: exit 0.
 */
#include <sys/socket.h>

#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cmd.h"
#include "sshcmd.h"
#include "tpucmd.h"
#include "util.h"
#include "xmalloc.h"

static volatile sig_atomic_t fwd_abort;

static void
on_signal(int sig)
{
	(void)sig;
	fwd_abort = 1;
}

static int
parse_port(const char *s, size_t len, const char *spec, struct tpu_err *err)
{
	char buf[8];
	long long v;

	if (len == 0 || len >= sizeof buf || strspn(s, "0123456789") < len)
		return tpu_error(err, TPU_E_USAGE,
		    "bad port '%.*s' in '%s': want 1-65535", (int)len, s, spec);
	memcpy(buf, s, len);
	buf[len] = '\0';
	v = atoll(buf);
	if (v < 1 || v > 65535)
		return tpu_error(err, TPU_E_USAGE,
		    "bad port '%s' in '%s': want 1-65535", buf, spec);
	return (int)v;
}

/* LOCAL_PORT or LOCAL_PORT:HOST:PORT; host is allocated. */
static int
parse_spec(
    const char *spec, int *lport, char **host, int *rport, struct tpu_err *err)
{
	const char *c1 = strchr(spec, ':'), *c2;
	int rc;

	*host = NULL;
	if (c1 == NULL) {
		if ((rc = parse_port(spec, strlen(spec), spec, err)) < 0)
			return rc;
		*lport = *rport = rc;
		*host = xstrdup("localhost");
		return 0;
	}
	c2 = strrchr(spec, ':');
	if (c2 == c1 || c2 == c1 + 1)
		return tpu_error(err, TPU_E_USAGE,
		    "bad forward '%s': want LOCAL_PORT or "
		    "LOCAL_PORT:REMOTE_HOST:REMOTE_PORT",
		    spec);
	if ((rc = parse_port(spec, (size_t)(c1 - spec), spec, err)) < 0)
		return rc;
	*lport = rc;
	if ((rc = parse_port(c2 + 1, strlen(c2 + 1), spec, err)) < 0)
		return rc;
	*rport = rc;
	*host = xstrndup(c1 + 1, (size_t)(c2 - c1 - 1));
	if ((*host)[0] == '[' && (*host)[strlen(*host) - 1] == ']') {
		char *h = xstrndup(*host + 1, strlen(*host) - 2);

		free(*host);
		*host = h;
	}
	return 0;
}

static int
forward_exec(struct tpu_ctx *ctx, int argc, char **argv, struct tpu_err *err)
{
	static const struct option opts[] = {
		SSHCMD_LONG_OPTIONS,
		{ NULL, 0, NULL, 0 },
	};
	struct sshcmd_opts so;
	struct sshcmd sc;
	struct sshpool_conn conn;
	struct sshpool_result pr;
	struct sshpool_forward_opts fo;
	struct sockaddr_in sin;
	struct sigaction sa, oint, oterm;
	char *host = NULL;
	int ch, rc, lport = 0, rport = 0, fd = -1, one = 1, prepared = 0;

	sshcmd_opts_init(&so);
	while ((ch = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		if (ch == SSHCMD_OPT_FANOUT) {
			cmd_want_usage();
			return tpu_error(err, TPU_E_USAGE,
			    "--fanout %s: forward goes through one worker",
			    optarg);
		}
		if ((rc = sshcmd_opt(&so, ch, optarg, err)) < 0)
			return rc;
		if (rc == 0)
			return cmd_bad_option(argv, ch, err);
	}
	if ((rc = cmd_check_operands(
	         &cmd_forward_entry, argc - optind, argv + optind, err)) != 0)
		return rc;
	if (strcmp(so.workers, "all") == 0 || strchr(so.workers, ',') ||
	    strchr(so.workers, '-'))
		return tpu_error(err, TPU_E_USAGE,
		    "--worker %s: forward goes through one worker", so.workers);
	so.one_slice = "forward goes through one worker";
	if ((rc = parse_spec(argv[optind + 1], &lport, &host, &rport, err)) !=
	    0)
		return rc;
	/* bind first: a port in use is reported before any API call */
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
	if ((rc = sshcmd_prepare(ctx, argv[optind], &so, &sc, err)) != 0)
		goto out;
	prepared = 1;
	memset(&pr, 0, sizeof pr);
	rc = sshpool_connect(&sc.targets[0], &sc.popts, &conn, &pr, err);
	if (rc == TPU_E_UNREACHABLE && sshcmd_refresh(ctx, &sc, err) == 1) {
		sshpool_result_release(&pr);
		memset(&pr, 0, sizeof pr);
		rc =
		    sshpool_connect(&sc.targets[0], &sc.popts, &conn, &pr, err);
	}
	sshpool_result_release(&pr);
	if (rc != 0)
		goto out;
	fprintf(stderr,
	    "tpuctl: forwarding 127.0.0.1:%d to %s:%d on worker %d; Ctrl-C "
	    "to stop\n",
	    lport, host, rport, sc.targets[0].worker);
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = on_signal;
	sigaction(SIGINT, &sa, &oint);
	sigaction(SIGTERM, &sa, &oterm);
	memset(&fo, 0, sizeof fo);
	fo.listen_fd = fd;
	fo.host = host;
	fo.port = rport;
	fo.abort = &fwd_abort;
	rc = sshpool_forward(&conn, &fo, err);
	sigaction(SIGINT, &oint, NULL);
	sigaction(SIGTERM, &oterm, NULL);
	sshpool_conn_close(&conn);
	if (rc == TPU_E_INTERRUPTED) /* Ctrl-C: the normal end */
		rc = 0;
out:
	if (prepared)
		sshcmd_release(&sc);
	if (fd != -1)
		close(fd);
	free(host);
	return rc;
}

const struct cmd_entry cmd_forward_entry = {
	.name = "forward",
	.alias = NULL,
	.usage = "forward " SSHCMD_USAGE(
	    "n|node-id", "n", "") " name local_port[:remote_host:remote_port]",
	.summary = "forward a local port to a port on a TPU worker",
	.min_args = 2,
	.max_args = 2,
	.flags = CMD_NEEDS_AUTH | CMD_NEEDS_ZONE | CMD_SSH,
	.exec = forward_exec,
};
