/*
 * A scripted loopback HTTP server for unit tests: a forked child answers
 * n connections with canned replies, one each, and appends every request
 * (head and body) to logpath with a "\n=====\n" separator.  Only static
 * functions: every check_*.c is its own binary.
 */
#ifndef TPUCTL_CANNED_SERVER_H
#define TPUCTL_CANNED_SERVER_H

#include <sys/socket.h>
#include <sys/types.h>
#include <sys/wait.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <check.h>

#include "http.h"

static char logpath[64];
static pid_t server_pid;
static int server_port;

/*
 * A listening socket on a free loopback port (server_port); logpath is
 * named after this process and emptied.
 */
static int
canned_listen(void)
{
	struct sockaddr_in sa;
	socklen_t sl = sizeof sa;
	int s, one = 1;

	s = socket(AF_INET, SOCK_STREAM, 0);
	setsockopt(s, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
	memset(&sa, 0, sizeof sa);
	sa.sin_family = AF_INET;
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	ck_assert_int_eq(bind(s, (struct sockaddr *)&sa, sizeof sa), 0);
	ck_assert_int_eq(listen(s, 16), 0);
	getsockname(s, (struct sockaddr *)&sa, &sl);
	server_port = ntohs(sa.sin_port);
	snprintf(
	    logpath, sizeof logpath, "/tmp/check_canned.%d.log", (int)getpid());
	unlink(logpath);
	return s;
}

/*
 * Serve n canned replies, one connection each, appending every request
 * (head and body) to logpath with a "\n=====\n" separator.
 */
static void
serve(const char *const *replies, int n)
{
	int s = canned_listen(), i;

	if ((server_pid = fork()) != 0) {
		close(s);
		return;
	}
	for (i = 0; i < n; i++) {
		char req[65536];
		size_t len = 0;
		ssize_t r;
		char *e, *cl;
		long want = 0;
		FILE *fp;
		int c = accept(s, NULL, NULL);

		if (c < 0)
			_exit(1);
		for (;;) {
			r = read(c, req + len, sizeof req - 1 - len);
			if (r <= 0)
				break;
			len += (size_t)r;
			req[len] = '\0';
			if ((e = strstr(req, "\r\n\r\n")) != NULL) {
				cl = strcasestr(req, "Content-Length:");
				want =
				    cl != NULL ? strtol(cl + 15, NULL, 10) : 0;
				if ((long)len >= (e - req) + 4 + want)
					break;
			}
		}
		fp = fopen(logpath, "a");
		fprintf(fp, "%.*s\n=====\n", (int)len, req);
		fclose(fp);
		if (write(c, replies[i], strlen(replies[i])) < 0)
			_exit(1);
		shutdown(c, SHUT_WR);
		while (read(c, req, sizeof req) > 0)
			;
		close(c);
	}
	_exit(0);
}

static void
stop_server(void)
{
	if (server_pid > 0) {
		kill(server_pid, SIGKILL);
		waitpid(server_pid, NULL, 0);
		server_pid = 0;
	}
}

/* Stop the server and remove its request log (a checked teardown). */
static void
canned_cleanup(void)
{
	stop_server();
	if (logpath[0] != '\0')
		unlink(logpath);
}

/* Run suite s after http_global_init: a check binary's exit status. */
static int
canned_run(Suite *s)
{
	SRunner *sr = srunner_create(s);
	int failed;

	http_global_init();
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}

#endif
