/*
 * The connection holder's rendezvous: its private directory, the
 * per-slice socket and lock, and the uid checks of both ends
 * (holder.h).
 */
#include <sys/file.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "buf.h"
#include "fsutil.h"
#include "holder.h"
#include "knownhosts.h"

/* lstat'ed dir must be ours alone. */
static int
dir_ok(const char *dir, struct tpu_err *err)
{
	struct stat st;

	if (lstat(dir, &st) != 0)
		return tpu_error(err, TPU_E_IO, "%s: %s", dir, strerror(errno));
	if (!S_ISDIR(st.st_mode))
		return tpu_error(err, TPU_E_PERMISSION,
		    "%s: not a directory (a symbolic link or a file): the "
		    "connection holder needs a private directory",
		    dir);
	if (st.st_uid != geteuid())
		return tpu_error(err, TPU_E_PERMISSION,
		    "%s: owned by uid %lu, not by uid %lu: the connection "
		    "holder needs a directory of its own user",
		    dir, (unsigned long)st.st_uid, (unsigned long)geteuid());
	if ((st.st_mode & 077) != 0)
		return tpu_error(err, TPU_E_PERMISSION,
		    "%s: mode %04o: the connection holder needs mode 0700 (no "
		    "group or other access)",
		    dir, (unsigned)(st.st_mode & 07777));
	return 0;
}

int
holder_dir(char *out, size_t n, struct tpu_err *err)
{
	const char *xdg = getenv("XDG_RUNTIME_DIR");
	int len;

	if (xdg != NULL && xdg[0] == '/')
		len = snprintf(out, n, "%s/tpuctl", xdg);
	else
		len = snprintf(
		    out, n, "/tmp/tpuctl-%lu", (unsigned long)geteuid());
	/* room for "/h-" + 16 hex + ".sock" in a sun_path */
	if (len < 0 || (size_t)len >= n ||
	    (size_t)len + 25 > sizeof(((struct sockaddr_un *)0)->sun_path))
		return tpu_error(err, TPU_E_IO,
		    "connection holder directory under '%s': path too long "
		    "for a socket",
		    xdg != NULL ? xdg : "/tmp");
	if (mkdir(out, 0700) != 0 && errno != EEXIST)
		return tpu_error(err, TPU_E_IO, "%s: %s", out, strerror(errno));
	return dir_ok(out, err);
}

void
holder_name(const char *key, char *out, size_t n)
{
	uint64_t h = 0xcbf29ce484222325ULL; /* FNV-1a 64 */

	for (; *key != '\0'; key++) {
		h ^= (unsigned char)*key;
		h *= 0x100000001b3ULL;
	}
	snprintf(out, n, "h-%016llx", (unsigned long long)h);
}

static int
sock_addr(const char *dir, const char *name, struct sockaddr_un *sa,
    struct tpu_err *err)
{
	int len;

	memset(sa, 0, sizeof *sa);
	sa->sun_family = AF_UNIX;
	len = snprintf(
	    sa->sun_path, sizeof sa->sun_path, "%s/%s.sock", dir, name);
	if (len < 0 || (size_t)len >= sizeof sa->sun_path)
		return tpu_error(err, TPU_E_IO,
		    "%s/%s.sock: path too long for a socket", dir, name);
	return 0;
}

int
holder_peer_check(int fd, struct tpu_err *err)
{
	struct ucred uc;
	socklen_t len = sizeof uc;

	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &uc, &len) != 0)
		return tpu_error(err, TPU_E_PERMISSION,
		    "connection holder socket: cannot read the peer's "
		    "credentials: %s",
		    strerror(errno));
	if (uc.uid != geteuid())
		return tpu_error(err, TPU_E_PERMISSION,
		    "connection holder socket: peer runs as uid %lu, not as "
		    "uid %lu: refused",
		    (unsigned long)uc.uid, (unsigned long)geteuid());
	return 0;
}

int
holder_peer_pid(int fd)
{
	struct ucred uc;
	socklen_t len = sizeof uc;

	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &uc, &len) != 0 ||
	    uc.pid <= 0 || uc.uid != geteuid())
		return -1;
	return (int)uc.pid;
}

/* A connected socket to sa, or -1 with errno. */
static int
try_connect(const struct sockaddr_un *sa)
{
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);

	if (fd < 0)
		return -1;
	if (connect(fd, (const struct sockaddr *)sa, sizeof *sa) != 0) {
		int e = errno;

		close(fd);
		errno = e;
		return -1;
	}
	return fd;
}

int
holder_listen(const char *dir, const char *name, int *lock_fd, int *listen_fd,
    struct tpu_err *err)
{
	struct sockaddr_un sa;
	char lock[HOLDER_PATH_MAX + 8];
	mode_t old;
	int lfd, fd, rc;

	if ((rc = sock_addr(dir, name, &sa, err)) != 0)
		return rc;
	snprintf(lock, sizeof lock, "%s/%s.lock", dir, name);
	lfd = open(lock, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
	if (lfd < 0)
		return tpu_error(
		    err, TPU_E_IO, "%s: %s", lock, strerror(errno));
	if (flock(lfd, LOCK_EX | LOCK_NB) != 0) {
		int e = errno;

		close(lfd);
		if (e == EWOULDBLOCK)
			return tpu_error(err, TPU_E_CONFLICT,
			    "%s: another connection holder runs", lock);
		return tpu_error(err, TPU_E_IO, "%s: %s", lock, strerror(e));
	}
	/* Under the lock: a socket file left here is a dead holder's,
	 * unless something answers on it (a holder started before the
	 * lock existed): never take over a live one. */
	if ((fd = try_connect(&sa)) >= 0) {
		close(fd);
		close(lfd);
		return tpu_error(err, TPU_E_CONFLICT,
		    "%s: another connection holder answers", sa.sun_path);
	}
	if (unlink(sa.sun_path) != 0 && errno != ENOENT) {
		rc = tpu_error(
		    err, TPU_E_IO, "%s: %s", sa.sun_path, strerror(errno));
		close(lfd);
		return rc;
	}
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0) {
		rc = tpu_error(err, TPU_E_IO, "socket: %s", strerror(errno));
		close(lfd);
		return rc;
	}
	old = umask(0177); /* the socket file 0600 from the start */
	rc = bind(fd, (struct sockaddr *)&sa, sizeof sa);
	umask(old);
	if (rc != 0 || listen(fd, 64) != 0) {
		rc = tpu_error(
		    err, TPU_E_IO, "%s: %s", sa.sun_path, strerror(errno));
		close(fd);
		close(lfd);
		return rc;
	}
	*lock_fd = lfd;
	*listen_fd = fd;
	return 0;
}

int
holder_accept(int listen_fd, int *fd, struct tpu_err *err)
{
	int c = accept4(listen_fd, NULL, NULL, SOCK_CLOEXEC), rc;

	if (c < 0) {
		if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)
			return tpu_error(
			    err, TPU_E_TRANSIENT, "no connection waiting");
		return tpu_error(err, TPU_E_IO, "accept: %s", strerror(errno));
	}
	if ((rc = holder_peer_check(c, err)) != 0) {
		close(c);
		return rc;
	}
	*fd = c;
	return 0;
}

int
holder_connect(const char *dir, const char *name, int *fd, struct tpu_err *err)
{
	struct sockaddr_un sa;
	int c, rc;

	if ((rc = sock_addr(dir, name, &sa, err)) != 0)
		return rc;
	if ((c = try_connect(&sa)) < 0) {
		if (errno == ENOENT || errno == ECONNREFUSED)
			return tpu_error(err, TPU_E_NOTFOUND,
			    "%s: no connection holder runs", sa.sun_path);
		return tpu_error(
		    err, TPU_E_IO, "%s: %s", sa.sun_path, strerror(errno));
	}
	if ((rc = holder_peer_check(c, err)) != 0) {
		close(c);
		return rc;
	}
	*fd = c;
	return 0;
}

void
holder_identity(
    const char *keyfile, int agent, int connect_timeout_ms, char *out, size_t n)
{
	char fp[KNOWNHOSTS_FP_LEN] = "-";
	struct buf b;
	struct tpu_err err;

	if (keyfile != NULL) {
		buf_init(&b, 1u << 20);
		tpu_err_init(&err);
		if (fsutil_read_file(keyfile, 0, &b, NULL, &err) == 0)
			knownhosts_fingerprint(
			    (const unsigned char *)b.data, b.len, fp);
		else
			snprintf(fp, sizeof fp, "unreadable");
		explicit_bzero(b.data, b.len);
		buf_release(&b);
	}
	snprintf(out, n, "key=%s %s agent=%d connect=%d",
	    keyfile != NULL ? keyfile : "-", fp, agent != 0,
	    connect_timeout_ms);
}
