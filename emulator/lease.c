/*
 * Machine-wide subnet leases of the emulator's fleet: see lease.h.
 * A lease file is never removed (removing would race with an emulator
 * that has it open but not yet locked); the files are empty.
 */
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/types.h>

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lease.h"
#include "xmalloc.h"

#define LEASE_BASE "/tmp/tpuctl-emu-leases"

/* mkdir -m 1777 dir; an existing directory is fine when others can add. */
static int
lease_mkdir(const char *dir, char *errbuf, size_t errlen)
{
	struct stat st;

	if (mkdir(dir, 01777) == 0) {
		/* umask took bits away: put them back. */
		if (chmod(dir, 01777) == -1) {
			snprintf(errbuf, errlen, "cannot chmod '%s': %s", dir,
			    strerror(errno));
			return -1;
		}
		return 0;
	}
	if (errno != EEXIST) {
		snprintf(errbuf, errlen, "cannot create '%s': %s", dir,
		    strerror(errno));
		return -1;
	}
	if (lstat(dir, &st) == -1 || !S_ISDIR(st.st_mode)) {
		snprintf(errbuf, errlen, "'%s' is not a directory", dir);
		return -1;
	}
	if (access(dir, W_OK | X_OK) == -1) {
		snprintf(errbuf, errlen,
		    "cannot add leases to '%s': %s (it must be mode 1777)", dir,
		    strerror(errno));
		return -1;
	}
	return 0;
}

char *
emu_lease_dir(char *errbuf, size_t errlen)
{
	struct stat st;
	char *dir;

	if (stat("/proc/self/ns/net", &st) == -1) {
		snprintf(errbuf, errlen, "cannot stat /proc/self/ns/net: %s",
		    strerror(errno));
		return NULL;
	}
	if (lease_mkdir(LEASE_BASE, errbuf, errlen) == -1)
		return NULL;
	dir =
	    xasprintf("%s/net-%llu", LEASE_BASE, (unsigned long long)st.st_ino);
	if (lease_mkdir(dir, errbuf, errlen) == -1) {
		free(dir);
		return NULL;
	}
	return dir;
}

/*
 * Open subnet s's lease file.  Opened without O_CREAT when it exists: in
 * a sticky world-writable directory, fs.protected_regular refuses
 * O_CREAT on another user's file even when its mode allows reading.
 */
static int
lease_open(const char *dir, int s)
{
	char *path = xasprintf("%s/s%d", dir, s);
	int fd = -1, i;

	for (i = 0; i < 4 && fd == -1; i++) {
		fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
		if (fd == -1 && errno == ENOENT) {
			fd = open(path,
			    O_RDONLY | O_CREAT | O_EXCL | O_NOFOLLOW |
			        O_CLOEXEC,
			    0644);
			if (fd == -1 && errno == EEXIST)
				continue; /* created meanwhile: open it */
			if (fd != -1)
				(void)fchmod(fd, 0644);
		}
		if (fd == -1)
			break;
	}
	free(path);
	return fd;
}

int
emu_lease_take(
    const char *dir, int first, int count, struct emu_lease *l, int *busy)
{
	int i, err;

	memset(l, 0, sizeof(*l));
	*busy = -1;
	l->fds = xcalloc((size_t)count, sizeof(*l->fds));
	for (i = 0; i < count; i++) {
		int fd = lease_open(dir, first + i);

		if (fd == -1)
			goto fail;
		if (flock(fd, LOCK_EX | LOCK_NB) == -1) {
			err = errno;
			close(fd);
			errno = err;
			if (errno == EWOULDBLOCK)
				*busy = first + i;
			goto fail;
		}
		l->fds[i] = fd;
	}
	l->first = first;
	l->count = count;
	return 0;
fail:
	err = errno;
	while (i-- > 0)
		close(l->fds[i]);
	free(l->fds);
	memset(l, 0, sizeof(*l));
	errno = err;
	return -1;
}

void
emu_lease_release(struct emu_lease *l)
{
	int i;

	for (i = 0; i < l->count; i++)
		close(l->fds[i]);
	free(l->fds);
	memset(l, 0, sizeof(*l));
}
