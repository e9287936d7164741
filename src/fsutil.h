/*
 * Files that hold secrets (token cache, trackers, keys): private
 * directories (0700), private files (0600, whatever the umask), no
 * symlink following, and atomic replacement (temp file + fsync + rename +
 * fsync of the directory), so a crash never leaves a half-written file
 * at the final path.  Other modules reuse these helpers.
 */
#ifndef TPUCTL_FSUTIL_H
#define TPUCTL_FSUTIL_H

#include <sys/types.h>

#include <stddef.h>
#include <stdint.h>

#include "buf.h"
#include "err.h"

enum fsutil_flags {
	FSUTIL_F_NOFOLLOW = (1 << 0), /* refuse a symlink at the path */
	FSUTIL_F_PRIVATE = (1 << 1),  /* the file must not be readable by
	                                 group or others */
	FSUTIL_F_FIX = (1 << 2),      /* with PRIVATE: chmod 0600 instead of
	                                 refusing (a warning is counted) */
};

/*
 * Create dir and its missing parents.  Directories created here get mode
 * 0700; the last component, new or not, must be a real directory (not a
 * symlink) owned by the user, and loses any group/other bits.  Returns 0
 * or TPU_E_IO naming the path.
 */
int fsutil_mkdir_private(const char *dir, struct tpu_err *);

/*
 * Read a whole file into out (initialised by the caller, whose cap
 * applies).  Flags: FSUTIL_F_NOFOLLOW opens with O_NOFOLLOW;
 * FSUTIL_F_PRIVATE refuses (TPU_E_PERMISSION) a file readable by group or
 * others, or fixes it to 0600 with FSUTIL_F_FIX.  *loose (may be NULL) is
 * set to 1 when the file was group/other-readable.  Returns 0,
 * TPU_E_NOTFOUND when missing, or another error naming the path.
 */
int fsutil_read_file(
    const char *path, int flags, struct buf *out, int *loose, struct tpu_err *);

/*
 * Replace path atomically with len bytes of data and the given mode
 * (applied with fchmod, so the umask does not matter): a temp file
 * "path.tmp-XXXXXX" created O_CREAT|O_EXCL|O_NOFOLLOW, written, fsynced,
 * renamed over path, then the directory fsynced.  A symlink at path is
 * refused (TPU_E_PERMISSION).  On error nothing is left behind.
 */
int fsutil_write_atomic(const char *path, const void *data, size_t len,
    mode_t mode, struct tpu_err *);

/*
 * Remove the temp files that fsutil_write_atomic leaves when its process
 * is killed (a SIGKILL between the create and the rename): the regular
 * files of dir named "*.tmp-" and 12 hex digits, owned by the caller and
 * last modified more than max_age seconds ago (a live writer renames its
 * temp within milliseconds).  Best effort; returns how many were removed.
 */
int fsutil_sweep_temps(const char *dir, int64_t max_age);

/* What a download destination is, by fsutil_dest_kind. */
enum fsutil_dest {
	FSUTIL_DEST_NONE,    /* missing: created (temp file + rename) */
	FSUTIL_DEST_FILE,    /* a regular file: replaced (temp + rename) */
	FSUTIL_DEST_DIR,     /* a directory, or a link to one */
	FSUTIL_DEST_IN_PLACE /* a device, FIFO, socket or symbolic link
	                        (/dev/stdout): opened O_WRONLY|O_TRUNC and
	                        written in one stream, as cp(1) does, never
	                        renamed over; a dangling link too (the open
	                        reports it) */
};

/*
 * Classify path as a destination to write a whole file to: a regular
 * file is replaced atomically, anything else that exists is written in
 * place (one rule for data cp and scp).
 */
enum fsutil_dest fsutil_dest_kind(const char *path);

/* Remove path if it exists (not following symlinks); 0 or TPU_E_IO. */
int fsutil_remove(const char *path, struct tpu_err *);

/* Wipe n bytes so the compiler cannot drop it (OPENSSL_cleanse). */
void fsutil_wipe(void *, size_t);

#endif
