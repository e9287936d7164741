/*
 * Private files and directories, atomic writes.  See fsutil.h.
 */
#include <sys/stat.h>
#include <sys/types.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <openssl/crypto.h>
#include <openssl/rand.h>

#include "fsutil.h"
#include "xmalloc.h"

void
fsutil_wipe(void *p, size_t n)
{
	if (p != NULL && n > 0)
		OPENSSL_cleanse(p, n);
}

static int
check_dir(const char *dir, struct tpu_err *err)
{
	struct stat st;

	if (lstat(dir, &st) != 0)
		return tpu_error(err, TPU_E_IO, "cannot stat '%s': %s", dir,
		    strerror(errno));
	if (S_ISLNK(st.st_mode))
		return tpu_error(err, TPU_E_PERMISSION,
		    "refusing '%s': it is a symbolic link, a private "
		    "directory must be a real one",
		    dir);
	if (!S_ISDIR(st.st_mode))
		return tpu_error(err, TPU_E_IO, "'%s' is not a directory", dir);
	if (st.st_uid != geteuid())
		return tpu_error(err, TPU_E_PERMISSION,
		    "refusing '%s': owned by uid %u, not by you", dir,
		    (unsigned)st.st_uid);
	if ((st.st_mode & 077) != 0 && chmod(dir, 0700) != 0)
		return tpu_error(err, TPU_E_IO, "cannot chmod 0700 '%s': %s",
		    dir, strerror(errno));
	return 0;
}

int
fsutil_mkdir_private(const char *dir, struct tpu_err *err)
{
	char *p = NULL, *s;
	int rc = 0;

	if (dir == NULL || *dir == '\0')
		return tpu_error(err, TPU_E_INTERNAL, "empty directory path");
	p = xstrdup(dir);
	for (s = p + 1; *s != '\0'; s++) {
		if (*s != '/')
			continue;
		*s = '\0';
		if (mkdir(p, 0700) != 0 && errno != EEXIST) {
			rc = tpu_error(err, TPU_E_IO, "cannot create '%s': %s",
			    p, strerror(errno));
			goto out;
		}
		*s = '/';
	}
	if (mkdir(p, 0700) != 0 && errno != EEXIST) {
		rc = tpu_error(err, TPU_E_IO, "cannot create '%s': %s", p,
		    strerror(errno));
		goto out;
	}
	rc = check_dir(p, err);
out:
	free(p);
	return rc;
}

int
fsutil_read_file(const char *path, int flags, struct buf *out, int *loose,
    struct tpu_err *err)
{
	struct stat st;
	char chunk[8192];
	ssize_t n;
	int fd = -1, rc = 0, oflags = O_RDONLY | O_CLOEXEC;

	if (loose != NULL)
		*loose = 0;
	if (flags & FSUTIL_F_NOFOLLOW)
		oflags |= O_NOFOLLOW;
	if ((fd = open(path, oflags)) < 0) {
		if (errno == ENOENT || errno == ENOTDIR)
			rc = tpu_error(
			    err, TPU_E_NOTFOUND, "'%s' does not exist", path);
		else if (errno == ELOOP)
			rc = tpu_error(err, TPU_E_PERMISSION,
			    "refusing '%s': it is a symbolic link", path);
		else
			rc = tpu_error(err, TPU_E_IO, "cannot open '%s': %s",
			    path, strerror(errno));
		goto out;
	}
	if (fstat(fd, &st) != 0) {
		rc = tpu_error(err, TPU_E_IO, "cannot stat '%s': %s", path,
		    strerror(errno));
		goto out;
	}
	if (!S_ISREG(st.st_mode)) {
		rc = tpu_error(
		    err, TPU_E_IO, "'%s' is not a regular file", path);
		goto out;
	}
	if ((st.st_mode & 077) != 0) {
		if (loose != NULL)
			*loose = 1;
		if ((flags & FSUTIL_F_PRIVATE) && (flags & FSUTIL_F_FIX)) {
			if (fchmod(fd, st.st_mode & 0700) != 0) {
				rc = tpu_error(err, TPU_E_IO,
				    "cannot chmod 0600 '%s': %s", path,
				    strerror(errno));
				goto out;
			}
		} else if (flags & FSUTIL_F_PRIVATE) {
			rc = tpu_error(err, TPU_E_PERMISSION,
			    "refusing '%s': mode %03o lets group or others "
			    "read it (chmod 600 it)",
			    path, (unsigned)(st.st_mode & 0777));
			goto out;
		}
	}
	for (;;) {
		n = read(fd, chunk, sizeof chunk);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			rc = tpu_error(err, TPU_E_IO, "cannot read '%s': %s",
			    path, strerror(errno));
			goto out;
		}
		if (n == 0)
			break;
		if (buf_append(out, chunk, (size_t)n) != 0) {
			rc = tpu_error(err, TPU_E_IO,
			    "'%s' is larger than %zu bytes", path, out->max);
			goto out;
		}
	}
out:
	fsutil_wipe(chunk, sizeof chunk);
	if (fd >= 0)
		close(fd);
	return rc;
}

static int
fsync_dir_of(const char *path)
{
	char *d = xstrdup(path), *slash;
	int fd, rc = 0;

	slash = strrchr(d, '/');
	if (slash == NULL) {
		free(d);
		d = xstrdup(".");
	} else if (slash == d)
		slash[1] = '\0';
	else
		*slash = '\0';
	if ((fd = open(d, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) < 0)
		rc = -1;
	else {
		if (fsync(fd) != 0 && errno != EINVAL)
			rc = -1;
		close(fd);
	}
	free(d);
	return rc;
}

int
fsutil_write_atomic(const char *path, const void *data, size_t len, mode_t mode,
    struct tpu_err *err)
{
	static const char hex[] = "0123456789abcdef";
	unsigned char rnd[6];
	char *tmp = NULL;
	const char *p = data;
	struct stat st;
	size_t off = 0, i;
	ssize_t n;
	int fd = -1, rc = 0, tries;

	if (lstat(path, &st) == 0 && S_ISLNK(st.st_mode))
		return tpu_error(err, TPU_E_PERMISSION,
		    "refusing to write '%s': it is a symbolic link", path);
	for (tries = 0; tries < 16; tries++) {
		char sfx[13];

		if (RAND_bytes(rnd, sizeof rnd) != 1)
			return tpu_error(err, TPU_E_INTERNAL,
			    "no random bytes for a temp file name");
		for (i = 0; i < sizeof rnd; i++) {
			sfx[2 * i] = hex[rnd[i] >> 4];
			sfx[2 * i + 1] = hex[rnd[i] & 15];
		}
		sfx[12] = '\0';
		free(tmp);
		tmp = xasprintf("%s.tmp-%s", path, sfx);
		fd = open(tmp,
		    O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
		if (fd >= 0 || errno != EEXIST)
			break;
	}
	if (fd < 0) {
		rc = tpu_error(err, TPU_E_IO, "cannot create '%s': %s", tmp,
		    strerror(errno));
		free(tmp);
		return rc;
	}
	if (fchmod(fd, mode) != 0) {
		rc = tpu_error(err, TPU_E_IO, "cannot chmod '%s': %s", tmp,
		    strerror(errno));
		goto out;
	}
	while (off < len) {
		n = write(fd, p + off, len - off);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			rc = tpu_error(err, TPU_E_IO, "cannot write '%s': %s",
			    tmp, strerror(errno));
			goto out;
		}
		off += (size_t)n;
	}
	if (fsync(fd) != 0) {
		rc = tpu_error(err, TPU_E_IO, "cannot fsync '%s': %s", tmp,
		    strerror(errno));
		goto out;
	}
	if (close(fd) != 0) {
		fd = -1;
		rc = tpu_error(err, TPU_E_IO, "cannot close '%s': %s", tmp,
		    strerror(errno));
		goto out;
	}
	fd = -1;
	if (rename(tmp, path) != 0) {
		rc = tpu_error(err, TPU_E_IO, "cannot rename '%s' to '%s': %s",
		    tmp, path, strerror(errno));
		goto out;
	}
	if (fsync_dir_of(path) != 0) {
		rc = tpu_error(err, TPU_E_IO,
		    "cannot fsync the directory of '%s': %s", path,
		    strerror(errno));
		free(tmp);
		return rc;
	}
out:
	if (fd >= 0)
		close(fd);
	if (rc != 0)
		unlink(tmp);
	free(tmp);
	return rc;
}

/* name ends in ".tmp-" and the 12 hex digits fsutil_write_atomic uses */
static int
is_atomic_temp(const char *name)
{
	size_t n = strlen(name), i;

	if (n < 5 + 12 + 1 || memcmp(name + n - 17, ".tmp-", 5) != 0)
		return 0;
	for (i = n - 12; i < n; i++)
		if (!((name[i] >= '0' && name[i] <= '9') ||
		        (name[i] >= 'a' && name[i] <= 'f')))
			return 0;
	return 1;
}

int
fsutil_sweep_temps(const char *dir, int64_t max_age)
{
	struct dirent *de;
	struct stat st;
	time_t now = time(NULL);
	DIR *d;
	int dfd, n = 0;

	dfd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (dfd < 0)
		return 0;
	if ((d = fdopendir(dfd)) == NULL) {
		close(dfd);
		return 0;
	}
	while ((de = readdir(d)) != NULL) {
		if (!is_atomic_temp(de->d_name) ||
		    fstatat(dfd, de->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0 ||
		    !S_ISREG(st.st_mode) || st.st_uid != geteuid() ||
		    (int64_t)(now - st.st_mtime) <= max_age)
			continue;
		if (unlinkat(dfd, de->d_name, 0) == 0)
			n++;
	}
	closedir(d);
	return n;
}

enum fsutil_dest
fsutil_dest_kind(const char *path)
{
	struct stat st;
	int link;

	if (lstat(path, &st) != 0)
		return FSUTIL_DEST_NONE;
	link = S_ISLNK(st.st_mode);
	if (link && stat(path, &st) != 0)
		return FSUTIL_DEST_IN_PLACE; /* dangling: open reports it */
	if (S_ISDIR(st.st_mode))
		return FSUTIL_DEST_DIR;
	if (link || !S_ISREG(st.st_mode))
		return FSUTIL_DEST_IN_PLACE;
	return FSUTIL_DEST_FILE;
}

int
fsutil_remove(const char *path, struct tpu_err *err)
{
	if (unlink(path) != 0 && errno != ENOENT)
		return tpu_error(err, TPU_E_IO, "cannot remove '%s': %s", path,
		    strerror(errno));
	return 0;
}
