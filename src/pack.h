/*
 * Pack a job's working directory into one tar stream, content-hashed, so
 * that `tpuctl run --workdir DIR` sends an unchanged directory only once
 * (the worker keeps the archive under its hash).
 *
 * The archive is POSIX ustar; an entry whose name or link target does not
 * fit the ustar fields (longer than 100 bytes, or a name that cannot be
 * split at a '/' into 155 + 100 bytes) is preceded by a pax extended
 * header ('x') carrying "path" / "linkpath".  Names are stored as the
 * bytes the file system gave (spaces, newlines, non-ASCII: any byte but
 * NUL), in pax records too (GNU tar extracts them as they are).
 *
 * Deterministic: entries are walked depth first, a directory before its
 * contents, siblings sorted by strcmp(3) of their names; owner, group,
 * user and group names and mtime are always 0 / empty.  So the archive and
 * its hash depend only on the names, types, permission bits (mode & 07777),
 * file contents and symlink targets: touching a file does not change the
 * hash, editing it does.  Directories, regular files and symbolic links
 * (kept as links, never followed) are packed; other types (sockets,
 * fifos, devices) are skipped and counted.  Hard links are packed as
 * separate files.
 *
 * --exclude patterns are fnmatch(3) patterns (no flags) tried on the
 * relative path ("a/b/c.o") and on the last component ("c.o"); a match
 * leaves the entry out, and a directory's whole subtree.
 */
#ifndef TPUCTL_PACK_H
#define TPUCTL_PACK_H

#include <stddef.h>
#include <stdint.h>

#include "err.h"

/* Hex sha256 of the archive, NUL-terminated. */
#define PACK_HASH_LEN 64

struct pack_opts {
	const char *const *excludes; /* fnmatch patterns */
	size_t nexcludes;
};

struct pack_stats {
	uint64_t bytes; /* archive size */
	size_t files, dirs, links;
	size_t skipped; /* special files left out */
	size_t excluded;
};

/*
 * 1 when the relative path rel (or its last component) matches one of
 * opts' patterns, else 0.
 */
int pack_excluded(const struct pack_opts *, const char *rel);

/*
 * Write the archive of the contents of dir (not dir itself: names are
 * relative, "a", "a/b") to fd, and its sha256 to hash.  stats may be NULL.
 * Returns 0; TPU_E_NOTFOUND when dir is missing; TPU_E_USAGE when it is
 * not a directory; TPU_E_IO naming the path on a read or write error or
 * when a file changed size while being read.
 */
int pack_write(const char *dir, const struct pack_opts *, int fd,
    char hash[PACK_HASH_LEN + 1], struct pack_stats *, struct tpu_err *);

/*
 * Pack dir into cache_dir/<hash>.tar (created 0700 if missing): written
 * to a temporary file, then renamed; an archive already there for the
 * same hash is kept.  *path (caller frees) names the archive.  Errors as
 * pack_write.
 */
int pack_to_cache(const char *dir, const struct pack_opts *,
    const char *cache_dir, char hash[PACK_HASH_LEN + 1], char **path,
    struct pack_stats *, struct tpu_err *);

/* $XDG_CACHE_HOME/tpuctl/workdirs, else ~/.cache/tpuctl/workdirs. */
char *pack_cache_dir(void);

#endif
