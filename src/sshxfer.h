/*
 * File transfer to and from TPU workers over SFTP (tpuctl scp): operand
 * parsing (NODE:path), path safety for downloads, the local walk of
 * upload sources, and the per-worker transfers, run in parallel with one
 * thread and one SSH connection per worker (at most `fanout` at once) on
 * top of sshpool_connect() and sshpool_sftp_put/get.  Every SFTP request
 * of a worker goes through one SFTP subsystem on its connection
 * (sshpool_sftp_open), started once per transfer, not once per file.
 *
 * Remote trees are read over SFTP (opendir/readdir), not with a remote
 * command, so nothing depends on the worker's userland and any byte but
 * '/' and NUL may appear in a name (spaces, newlines, UTF-8).
 *
 * Symbolic links inside a tree, both ways, are treated as scp -r treats
 * links to files and as sftp treats links to directories: a link to a
 * regular file is copied as a regular file (the target's content and
 * mode); a link to a directory, a dangling link and special files are
 * skipped and counted, so a walk never leaves the tree and never loops.
 * No link is ever created at the destination.
 *
 * Both ways, each file is written to "<destination>.tpuctl-tmp" beside
 * its destination and renamed when complete (sshpool_sftp_put/get), so
 * a failed or interrupted copy never leaves a partial file under the
 * destination's name (and removes its temp file, unless the connection
 * to the worker is lost).  Files completed before stay.  Remote names that
 * could escape the destination (holding a '/', empty, or a remote operand
 * without a file name) are refused; an existing local link is never written
 * through.
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
	char *node; /* [USER@]NODE; NULL for a local path */
	char *path; /* the path; "" for "NODE:" (the remote HOME) */
};

/*
 * Split arg into node and path.  It is remote when it has a ':' before
 * any '/', and the text before the ':' is a node name (a lowercase
 * letter, then lowercase letters, digits and '-', at most 63 bytes, not
 * ending with '-').  "./a:b" and "/x:y" are local; so is a name with no
 * ':'.  A full resource name "projects/P/locations/Z/nodes/N:path"
 * (or .../queuedResources/Q:path) is remote too, node set to the whole
 * name, the rule applying to its last component (the command checks the
 * rest).  "USER@NODE:path" names the login user too: node is then
 * "USER@NODE" (the command checks USER).  Returns 0, or TPU_E_USAGE with one
 * line for an empty operand, an empty or invalid node name before ':' or a path
 * holding a newline.
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
 * sorted by name).  Inside a tree, a symbolic link to a regular file is
 * one file item (with the target's mode); other links and special files
 * are skipped (counted in skipped).  Returns 0, TPU_E_NOTFOUND for a missing
 * source, TPU_E_USAGE for a directory without recurse or a source with
 * no usable name ("/", "."), TPU_E_IO otherwise.
 */
int sshxfer_list_local(const char *const *srcs, size_t nsrc, int recurse,
    struct sshxfer_list *, struct tpu_err *);

/*
 * One entry read from the remote directory src_dir (SFTP readdir):
 * name is len bytes as the server sent it, perms its mode with the file
 * type (a link already resolved by the caller when it is to be copied).
 * "." and ".." are ignored; a directory or regular file is added to l
 * as rel_dir/name (source src_dir/name); other types are counted in
 * skipped.  Returns 0, or TPU_E_API for a name that is empty or holds a
 * '/' or a NUL (nothing may land outside the destination).
 */
int sshxfer_remote_entry(struct sshxfer_list *, const char *rel_dir,
    const char *src_dir, const char *name, size_t len, unsigned long perms,
    struct tpu_err *);

/* One worker's outcome. */
struct sshxfer_result {
	int rc;                   /* 0 or a tpu_errc */
	enum sshpool_status conn; /* connection status */
	struct tpu_err err;       /* message when rc != 0 */
	size_t files, dirs;       /* copied */
	int64_t bytes;            /* of the files copied */
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
	/* &retry_interrupted: checked between files and inside each one
	 * (every chunk); SIGTERM gives TPU_E_TERMINATED. */
	volatile sig_atomic_t *abort;
	/* NULL, or told the bytes of every chunk any worker moved (from
	 * the workers' threads, at once: the callee locks). */
	void (*on_bytes)(void *arg, int64_t n);
	void *arg;
	/* NULL, or the caller's session cache (sshpool_cache_new): a
	 * worker's session held there is used instead of a new connection
	 * (one found dead: connected again), and every worker's session
	 * goes back there after a transfer that succeeded, for the
	 * caller's next sshpool_run. */
	struct sshpool_cache *cache;
};

/*
 * Copy on the n targets in parallel (results[0..n-1]).  Returns 0 when
 * every worker succeeded; with one target its error code; otherwise
 * TPU_E_UNREACHABLE when no worker could be connected, TPU_E_INTERRUPTED
 * (TPU_E_TERMINATED when it holds SIGTERM) when *abort was set, TPU_E_PARTIAL
 * when some failed.  Local source problems (missing file, directory without
 * recurse) are found before any connection and returned as such.
 */
int sshxfer_run(const struct sshxfer_spec *,
    const struct sshpool_target *targets, size_t n,
    struct sshxfer_result *results, struct tpu_err *);

#endif
