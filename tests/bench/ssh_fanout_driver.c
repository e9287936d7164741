/*
 * Benchmark driver over src/sshpool: run a command on every target of a
 * host file (lines "address port keytype base64") with the given fanout,
 * then print one line: wall time, client CPU per host and peak RSS.
 *   ssh_fanout_driver -k KEY -u USER -f FANOUT -c COMMAND HOSTFILE
 *   ssh_fanout_driver -p ADDRESS      print a free TCP port on ADDRESS
 *   ssh_fanout_driver -w HOSTFILE     wait (10 s at most) until every
 *                                     target accepts TCP connections
 * Exit status: 0 when every host succeeded, 1 otherwise.
 */
#include <sys/resource.h>
#include <sys/socket.h>

#include <arpa/inet.h>
#include <netinet/in.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sshpool.h"
#include "util.h"
#include "xmalloc.h"

static int
free_port(const char *addr)
{
	struct sockaddr_in sin;
	socklen_t sl = sizeof sin;
	int fd, port = -1;

	if ((fd = socket(AF_INET, SOCK_STREAM, 0)) == -1)
		return -1;
	memset(&sin, 0, sizeof sin);
	sin.sin_family = AF_INET;
	if (inet_pton(AF_INET, addr, &sin.sin_addr) == 1 &&
	    bind(fd, (struct sockaddr *)&sin, sizeof sin) == 0 &&
	    getsockname(fd, (struct sockaddr *)&sin, &sl) == 0)
		port = ntohs(sin.sin_port);
	close(fd);
	return port;
}

static int
can_connect(const char *addr, int port)
{
	struct sockaddr_in sin;
	int fd, ok;

	if ((fd = socket(AF_INET, SOCK_STREAM, 0)) == -1)
		return 0;
	memset(&sin, 0, sizeof sin);
	sin.sin_family = AF_INET;
	sin.sin_port = htons((unsigned short)port);
	ok = inet_pton(AF_INET, addr, &sin.sin_addr) == 1 &&
	     connect(fd, (struct sockaddr *)&sin, sizeof sin) == 0;
	close(fd);
	return ok;
}

/* Wait until every "address port ..." line of path accepts. */
static int
wait_all(const char *path)
{
	char line[4096], host[64];
	int port, tries;
	FILE *f = fopen(path, "r");

	if (f == NULL) {
		perror(path);
		return 2;
	}
	while (fgets(line, sizeof line, f) != NULL) {
		if (sscanf(line, "%63s %d", host, &port) != 2)
			continue;
		for (tries = 0; !can_connect(host, port); tries++) {
			if (tries == 1000) {
				fprintf(stderr, "%s:%d does not accept\n", host,
				    port);
				fclose(f);
				return 1;
			}
			usleep(10000);
		}
	}
	fclose(f);
	return 0;
}

static double
tv_ms(struct timeval tv)
{
	return (double)tv.tv_sec * 1000.0 + (double)tv.tv_usec / 1000.0;
}

int
main(int argc, char **argv)
{
	struct sshpool_target *t = NULL;
	struct sshpool_result *r = NULL;
	struct sshpool_opts o;
	struct tpu_err err;
	struct rusage ru;
	const char *key = NULL, *user = "root", *cmd = "true", *errstr;
	char line[4096], **hk = NULL;
	size_t n = 0, i, nok = 0;
	int ch, fanout = 64, rc;
	int64_t t0;
	FILE *f;

	while ((ch = getopt(argc, argv, "c:f:k:p:u:w:")) != -1) {
		switch (ch) {
		case 'c':
			cmd = optarg;
			break;
		case 'f':
			fanout = (int)tpu_strtonum(optarg, 1, 100000, &errstr);
			if (errstr != NULL) {
				fprintf(stderr, "invalid fanout '%s': %s\n",
				    optarg, errstr);
				return 2;
			}
			break;
		case 'k':
			key = optarg;
			break;
		case 'p':
			printf("%d\n", free_port(optarg));
			return 0;
		case 'u':
			user = optarg;
			break;
		case 'w':
			return wait_all(optarg);
		default:
			goto usage;
		}
	}
	if (key == NULL || argc - optind != 1)
		goto usage;
	if ((f = fopen(argv[optind], "r")) == NULL) {
		perror(argv[optind]);
		return 2;
	}
	while (fgets(line, sizeof line, f) != NULL) {
		char host[64], type[64], b64[2048];
		int port;

		if (sscanf(line, "%63s %d %63s %2047s", host, &port, type,
		        b64) != 4)
			continue;
		t = xreallocarray(t, n + 1, sizeof *t);
		hk = xreallocarray(hk, n + 1, sizeof *hk);
		memset(&t[n], 0, sizeof t[n]);
		hk[n] = xasprintf("%s %s", type, b64);
		t[n].worker = (int)n;
		t[n].host = xstrdup(host);
		t[n].port = port;
		t[n].user = user;
		t[n].hostkeys = (const char *const *)&hk[n];
		t[n].nhostkeys = 1;
		n++;
	}
	fclose(f);
	/* hk may have moved while growing: fix the pointers */
	for (i = 0; i < n; i++)
		t[i].hostkeys = (const char *const *)&hk[i];
	r = xcalloc(n + 1, sizeof *r);
	memset(&o, 0, sizeof o);
	o.command = cmd;
	o.keyfile = key;
	o.fanout = fanout;
	t0 = tpu_now_ms();
	rc = sshpool_run(t, n, &o, r, &err);
	getrusage(RUSAGE_SELF, &ru);
	for (i = 0; i < n; i++) {
		if (r[i].status == SSHPOOL_S_OK)
			nok++;
		else
			fprintf(stderr, "%s\n", r[i].msg);
		sshpool_result_release(&r[i]);
		free((char *)t[i].host);
		free(hk[i]);
	}
	printf("sshpool: %zu hosts, fanout %d: wall %.3f s, client cpu "
	       "%.2f ms/host, max rss %.1f MB, %zu ok\n",
	    n, fanout, (double)(tpu_now_ms() - t0) / 1000.0,
	    n ? (tv_ms(ru.ru_utime) + tv_ms(ru.ru_stime)) / (double)n : 0.0,
	    (double)ru.ru_maxrss / 1024.0, nok);
	if (rc != 0)
		fprintf(stderr, "sshpool: %s\n", err.msg);
	free(t);
	free(hk);
	free(r);
	return rc == 0 ? 0 : 1;
usage:
	fprintf(stderr, "usage: ssh_fanout_driver -k key [-u user] [-f fanout] "
	                "[-c command] hostfile\n"
	                "       ssh_fanout_driver -p address\n"
	                "       ssh_fanout_driver -w hostfile\n");
	return 2;
}
