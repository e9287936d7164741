/*
 * Real OpenSSH servers for unit tests, as the current user: each server
 * gets its own temp directory with an ed25519 host key made by
 * ssh-keygen, an sshd_config (UsePAM no, StrictModes no, raised
 * MaxStartups, LogLevel VERBOSE, its own HOME so the login shell does
 * not run root's ~/.bashrc) and listens on 127.x.y.z:PORT with a free
 * port.  Only static functions: every check_*.c is its own binary.
 */
#ifndef TPUCTL_SSHD_HARNESS_H
#define TPUCTL_SSHD_HARNESS_H

#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>

#include <arpa/inet.h>
#include <netinet/in.h>

#include <errno.h>
#include <fcntl.h>
#include <pwd.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "xmalloc.h"

#define HARNESS_SSHD "/usr/sbin/sshd"

struct sshd_srv {
	char *dir;      /* server directory */
	char *home;     /* HOME of sessions */
	char *log;      /* sshd -E log */
	char *authkeys; /* AuthorizedKeysFile */
	char *hostpub;  /* "ssh-ed25519 AAAA..." of the host key */
	char addr[32];
	int port;
	int worker;
	pid_t pid;
};

/* Run argv, stdout/stderr to /dev/null; returns the exit status or -1. */
static __attribute__((unused)) int
harness_run(const char *const argv[])
{
	pid_t pid;
	int st, fd;

	if ((pid = fork()) == -1)
		return -1;
	if (pid == 0) {
		if ((fd = open("/dev/null", O_RDWR)) != -1) {
			dup2(fd, 0);
			dup2(fd, 1);
			dup2(fd, 2);
		}
		execvp(argv[0], (char *const *)argv);
		_exit(127);
	}
	while (waitpid(pid, &st, 0) == -1)
		if (errno != EINTR)
			return -1;
	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

/* Whole file as a string (caller frees), or NULL. */
static __attribute__((unused)) char *
harness_slurp(const char *path, size_t *lenp)
{
	FILE *f = fopen(path, "rb");
	char *d = NULL;
	size_t len = 0, cap = 0, n;

	if (f == NULL)
		return NULL;
	do {
		if (cap - len < 4096) {
			cap = cap * 2 + 8192;
			d = xrealloc(d, cap);
		}
		n = fread(d + len, 1, cap - len - 1, f);
		len += n;
	} while (n > 0);
	fclose(f);
	d[len] = '\0';
	if (lenp != NULL)
		*lenp = len;
	return d;
}

static __attribute__((unused)) int
harness_write(const char *path, const char *s, mode_t mode)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, mode);
	size_t len = strlen(s);

	if (fd == -1)
		return -1;
	if (write(fd, s, len) != (ssize_t)len) {
		close(fd);
		return -1;
	}
	return close(fd);
}

/* Generate an ed25519 key (pass may be ""); 0 or -1. */
static __attribute__((unused)) int
harness_keygen(const char *path, const char *type, const char *pass)
{
	const char *argv[] = { "ssh-keygen", "-q", "-t", type, "-N", pass, "-C",
		"harness", "-f", path, NULL };

	unlink(path);
	return harness_run(argv) == 0 ? 0 : -1;
}

/* The first line of path.pub as "type base64" (caller frees). */
static __attribute__((unused)) char *
harness_publine(const char *keypath)
{
	char *p = xasprintf("%s.pub", keypath), *d, *sp;

	d = harness_slurp(p, NULL);
	free(p);
	if (d == NULL)
		return NULL;
	d[strcspn(d, "\n")] = '\0';
	if ((sp = strchr(d, ' ')) != NULL && (sp = strchr(sp + 1, ' ')) != NULL)
		*sp = '\0';
	return d;
}

/* A free TCP port on addr, or -1. */
static __attribute__((unused)) int
harness_free_port(const char *addr)
{
	struct sockaddr_in sin;
	socklen_t sl = sizeof sin;
	int fd, port = -1;

	if ((fd = socket(AF_INET, SOCK_STREAM, 0)) == -1)
		return -1;
	memset(&sin, 0, sizeof sin);
	sin.sin_family = AF_INET;
	inet_pton(AF_INET, addr, &sin.sin_addr);
	if (bind(fd, (struct sockaddr *)&sin, sizeof sin) == 0 &&
	    getsockname(fd, (struct sockaddr *)&sin, &sl) == 0)
		port = ntohs(sin.sin_port);
	close(fd);
	return port;
}

static __attribute__((unused)) int
harness_can_connect(const char *addr, int port)
{
	struct sockaddr_in sin;
	int fd, ok;

	if ((fd = socket(AF_INET, SOCK_STREAM, 0)) == -1)
		return 0;
	memset(&sin, 0, sizeof sin);
	sin.sin_family = AF_INET;
	sin.sin_port = htons((unsigned short)port);
	inet_pton(AF_INET, addr, &sin.sin_addr);
	ok = connect(fd, (struct sockaddr *)&sin, sizeof sin) == 0;
	close(fd);
	return ok;
}

/* A base address 127.A.B.0 unlikely to collide with other tests. */
static __attribute__((unused)) void
harness_addr(char *out, size_t size, int i)
{
	static int a = -1, b;

	if (a == -1) {
		a = 100 + (int)(getpid() % 100);
		b = (int)((getpid() / 100 + time(NULL)) % 250) + 1;
	}
	snprintf(out, size, "127.%d.%d.%d", a, b, i + 1);
}

/*
 * Start sshd number i under base (a directory).  authkeys is the
 * AuthorizedKeysFile path (need not exist yet).  Returns 0 once the
 * server accepts connections, -1 on failure.
 */
static __attribute__((unused)) int
harness_sshd_start(
    struct sshd_srv *s, const char *base, int i, const char *authkeys)
{
	char *cfg = NULL, *key = NULL, *text = NULL;
	int tries, rc = -1;

	memset(s, 0, sizeof *s);
	s->worker = i;
	s->dir = xasprintf("%s/sshd%d", base, i);
	s->home = xasprintf("%s/home", s->dir);
	s->log = xasprintf("%s/sshd.log", s->dir);
	s->authkeys = xstrdup(authkeys);
	mkdir(s->dir, 0700);
	mkdir(s->home, 0700);
	key = xasprintf("%s/hostkey", s->dir);
	if (harness_keygen(key, "ed25519", "") != 0)
		goto out;
	s->hostpub = harness_publine(key);
	harness_addr(s->addr, sizeof s->addr, i);
	if ((s->port = harness_free_port(s->addr)) <= 0)
		goto out;
	text = xasprintf("ListenAddress %s:%d\n"
	                 "HostKey %s\n"
	                 "PidFile %s/sshd.pid\n"
	                 "AuthorizedKeysFile %s\n"
	                 "PasswordAuthentication no\n"
	                 "KbdInteractiveAuthentication no\n"
	                 "PubkeyAuthentication yes\n"
	                 "PermitRootLogin prohibit-password\n"
	                 "UsePAM no\n"
	                 "StrictModes no\n"
	                 "MaxStartups 1024:30:2048\n"
	                 "MaxAuthTries 20\n"
	                 "LogLevel VERBOSE\n"
	                 "UseDNS no\n"
	                 "PrintMotd no\n"
	                 "Subsystem sftp internal-sftp\n"
	                 "SetEnv \"HOME=%s\" \"TPU_WORKER_ID=%d\"\n",
	    s->addr, s->port, key, s->dir, authkeys, s->home, i);
	cfg = xasprintf("%s/sshd_config", s->dir);
	if (harness_write(cfg, text, 0600) != 0)
		goto out;
	if ((s->pid = fork()) == -1)
		goto out;
	if (s->pid == 0) {
		const char *argv[] = { HARNESS_SSHD, "-D", "-r", "-f", cfg,
			"-E", s->log, NULL };
		int fd = open("/dev/null", O_RDWR);

		if (fd != -1) {
			dup2(fd, 0);
			dup2(fd, 1);
		}
		setpgid(0, 0);
		execv(argv[0], (char *const *)argv);
		_exit(127);
	}
	for (tries = 0; tries < 500; tries++) {
		if (harness_can_connect(s->addr, s->port)) {
			rc = 0;
			break;
		}
		if (waitpid(s->pid, NULL, WNOHANG) == s->pid) {
			s->pid = 0;
			break;
		}
		usleep(10000);
	}
out:
	free(cfg);
	free(key);
	free(text);
	return rc;
}

static __attribute__((unused)) void
harness_sshd_stop(struct sshd_srv *s)
{
	if (s->pid > 0) {
		kill(-s->pid, SIGTERM);
		kill(s->pid, SIGTERM);
		waitpid(s->pid, NULL, 0);
	}
	free(s->dir);
	free(s->home);
	free(s->log);
	free(s->authkeys);
	free(s->hostpub);
	memset(s, 0, sizeof *s);
}

/* Length of a file, or 0. */
static __attribute__((unused)) size_t
harness_fsize(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0 ? (size_t)st.st_size : 0;
}

/* The user sshd must authenticate: the current one. */
static __attribute__((unused)) const char *
harness_user(void)
{
	struct passwd *pw = getpwuid(getuid());

	return pw != NULL ? pw->pw_name : "root";
}

/* rm -rf dir (test scratch only). */
static __attribute__((unused)) void
harness_rmrf(const char *dir)
{
	const char *argv[] = { "rm", "-rf", dir, NULL };

	if (dir != NULL && strncmp(dir, "/tmp/", 5) == 0)
		harness_run(argv);
}

#endif
