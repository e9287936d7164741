/*
 * File transfer to and from TPU workers over SFTP (tpuctl scp): operand
 * parsing (NODE:path), path safety for downloads, the local walk of
 * upload sources, and the per-worker transfers, run in parallel with one
 * thread and one SSH connection per worker (at most `fanout` at once) on
 * top of sshpool_connect() and sshpool_sftp_put/get.
 *
 * Downloads write each file to a temporary name beside its destination
 * and rename it when complete (sshpool_sftp_get), so a failed copy never
 * leaves a partial file.  Remote names that could escape the destination
 * (absolute, "..", empty components) are refused; remote symbolic links
 * are skipped, never recreated locally.
 *
 * Nothing is printed: per-worker results go to the caller's array.
 */
#ifndef TPUCTL_SSHXFER_H
#define TPUCTL_SSHXFER_H

#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "err.h"
#include "sshpool.h"

/* One command-line operand: NODE:path (node set) or a local path. */
struct sshxfer_operand {
	char *node; /* NULL for a local path */
	char *path; /* the path; "" for "NODE:" (the remote HOME) */
};

/*
 * Split arg into node and path.  It is remote when it has a ':' before
 * any '/', and the text before the ':' is a node name (a lowercase
 * letter, then lowercase letters, digits and '-', at most 63 bytes, not
 * ending with '-').  "./a:b" and "/x:y" are local; so is a name with no
 * ':'.  Returns 0, or TPU_E_USAGE with one line for an empty operand, an
 * empty or invalid node name before ':' or a path holding a newline.
 */
int sshxfer_parse_operand(
    const char *arg, struct sshxfer_operand *, struct tpu_err *);
void sshxfer_operand_release(struct sshxfer_operand *);

/*
 * 1 when rel is a safe relative path to create under a destination
 * directory: not empty, not absolute, no "." or ".." component, no empty
 * component ("a//b", trailing '/'), no newline; else 0.
 */
int sshxfer_relpath_safe(const char *rel);

/*
 * The last component of path, ignoring trailing slashes ("a/b/" -> "b",
 * "/" -> "", "" -> "").  Returned in a new string.
 */
char *sshxfer_basename(const char *path);

/* dir + "/" + rel, or rel alone when dir is "" (remote HOME). */
char *sshxfer_join(const char *dir, const char *rel);

/* One file or directory to copy, relative to the destination. */
struct sshxfer_item {
	char *rel;   /* relative name under the destination (safe) */
	char *src;   /* the source path (local or remote) */
	int is_dir;  /* 1: a directory, created before its contents */
	mode_t mode; /* permission bits */
};

struct sshxfer_list {
	struct sshxfer_item *items;
	size_t n, cap;
	size_t skipped; /* symbolic links and special files left out */
};

void sshxfer_list_add(struct sshxfer_list *, const char *rel, const char *src,
    int is_dir, mode_t mode);
void sshxfer_list_release(struct sshxfer_list *);

/*
 * The upload list for local sources: a regular file is one item named
 * by its basename; a directory needs recurse, and gives the directory
 * then everything under it (depth first, parents before children,
 * sorted by name).  Symbolic links inside a tree and special files are
 * skipped (counted in skipped).  Returns 0, TPU_E_NOTFOUND for a missing
 * source, TPU_E_USAGE for a directory without recurse or a source with
 * no usable name ("/", "."), TPU_E_IO otherwise.
 */
int sshxfer_list_local(const char *const *srcs, size_t nsrc, int recurse,
    struct sshxfer_list *, struct tpu_err *);

/*
 * Parse the output of the remote listing command (records
 * "<type> <octal mode> <relative path>\0", type f, d, l or other, as
 * GNU find -printf '%y %m %P\0' writes them) into list, with rel and src
 * under the given prefixes.  Symbolic links and other types are skipped
 * (counted).  Returns 0, or TPU_E_API for a malformed record or an
 * unsafe relative path (nothing may land outside the destination).
 */
int sshxfer_parse_listing(const char *data, size_t len, const char *rel_prefix,
    const char *src_prefix, struct sshxfer_list *, struct tpu_err *);

/* One worker's outcome. */
struct sshxfer_result {
	int rc;                   /* 0 or a tpu_errc */
	enum sshpool_status conn; /* connection status */
	struct tpu_err err;       /* message when rc != 0 */
	size_t files, dirs;       /* copied */
	size_t skipped;           /* links and special files left out */
	int64_t duration_ms;
};

struct sshxfer_spec {
	int upload;              /* 1: local to remote, 0: remote to local */
	int recurse;             /* --recurse */
	const char *const *srcs; /* local (upload) or remote paths */
	size_t nsrc;
	const char *dst;                  /* remote (upload) or local path */
	int per_worker_dirs;              /* download: into dst/w<N>/ */
	const struct sshpool_opts *popts; /* keys, timeouts, fanout */
	volatile sig_atomic_t *abort;
};

/*
 * Copy on the n targets in parallel (results[0..n-1]).  Returns 0 when
 * every worker succeeded; with one target its error code; otherwise
 * TPU_E_UNREACHABLE when no worker could be connected, TPU_E_INTERRUPTED
 * when *abort was set, TPU_E_PARTIAL when some failed.  Local source
 * problems (missing file, directory without recurse) are found before
 * any connection and returned as such.
 */
int sshxfer_run(const struct sshxfer_spec *,
    const struct sshpool_target *targets, size_t n,
    struct sshxfer_result *results, struct tpu_err *);

#endif
