/*
 * tpuctl's own known_hosts file.  Host keys of TPU workers are pinned
 * from the node's guest attributes (namespace "hostkeys") under the alias
 * "tpu.<node_id>-<worker>", one line per key type, in the OpenSSH format
 * ("alias keytype base64 [comment]"), so `ssh -o UserKnownHostsFile=`
 * can read the same file.  The default path is
 * $XDG_CONFIG_HOME/tpuctl/known_hosts, else ~/.config/tpuctl/known_hosts
 * (the config key ssh/known_hosts_file overrides it).  The file is
 * written atomically, mode 0600, in a 0700 directory.  A recreated node
 * has a new id, hence a new alias: its entries never collide with the
 * old node's, which are left untouched.
 *
 * Lines this module does not understand (comments, markers, hashed
 * hosts, broken lines) are kept verbatim and never match.  A line naming
 * several hosts ("host1,tpu.1-0 ...") matches each of them but is not
 * ours: knownhosts_replace keeps it (tpuctl only writes one alias per
 * line).
 *
 * Guest attributes win for the workers tpuctl pins itself: the lines it
 * writes end with the comment KNOWNHOSTS_MARK, and only such a line (one
 * alias, that comment) is a pinned key (knownhosts_pinned,
 * knownhosts_lines).  A line appended by someone else (ssh's
 * accept-new, ssh-keyscan, an editor) for a worker's alias is never
 * trusted: it neither spares the guest attributes read nor is given to
 * the connection, and knownhosts_replace drops it when the worker is
 * pinned.
 */
#ifndef TPUCTL_KNOWNHOSTS_H
#define TPUCTL_KNOWNHOSTS_H

#include <stddef.h>

#include "err.h"

/* "SHA256:" + 43 base64 characters + NUL */
#define KNOWNHOSTS_FP_LEN 64
#define KNOWNHOSTS_TYPE_LEN 48
/* the comment of the lines tpuctl pins from guest attributes */
#define KNOWNHOSTS_MARK "tpuctl-guest-attributes"

/* One public key: its type name and the SSH wire-format blob. */
struct knownhosts_key {
	char type[KNOWNHOSTS_TYPE_LEN]; /* "ssh-ed25519" */
	unsigned char *blob;
	size_t len;
};

struct knownhosts_line {
	char *text;  /* the line as read or written, without '\n' */
	char *hosts; /* host field, NULL when the line is not a key */
	int own;     /* one alias and the comment KNOWNHOSTS_MARK */
	struct knownhosts_key key;
};

struct knownhosts {
	char *path; /* NULL for a parsed-only set */
	struct knownhosts_line *v;
	size_t n;
};

/* The default path (see above), or NULL when HOME is unset; caller frees. */
char *knownhosts_default_path(void);

/*
 * The alias of a worker: "tpu.<node_id>-<worker>".  node_id must be
 * 1..64 characters of [A-Za-z0-9_.-] and worker in 0..99999.  Returns 0
 * and *out (caller frees), or TPU_E_INVALID naming the value.
 */
int knownhosts_alias(
    const char *node_id, int worker, char **out, struct tpu_err *);

/*
 * Parse a public key line "keytype base64 [comment]" (len bytes, no NUL
 * needed), checking that the blob decodes and names the same type.
 * Returns 0 with key filled (release it), or TPU_E_INVALID.
 */
int knownhosts_parse_key(
    const char *s, size_t len, struct knownhosts_key *key, struct tpu_err *);
void knownhosts_key_release(struct knownhosts_key *);

/* The OpenSSH fingerprint "SHA256:<base64 without padding>" of a blob. */
void knownhosts_fingerprint(
    const unsigned char *blob, size_t len, char out[KNOWNHOSTS_FP_LEN]);

/* Initialise kh as empty, remembering path (may be NULL). */
void knownhosts_init(struct knownhosts *, const char *path);
void knownhosts_release(struct knownhosts *);

/*
 * Load kh->path: a missing file is an empty set.  Symlinks are refused,
 * and so are a file, its directory or a parent directory up to HOME
 * that is writable by group or others or owned by someone other than the
 * user or root (OpenSSH's StrictModes): anyone could pin a key there.
 * Returns 0, or TPU_E_IO / TPU_E_PERMISSION naming the path.
 */
int knownhosts_load(struct knownhosts *, struct tpu_err *);

/* Append the lines of text (len bytes) to kh; never fails. */
void knownhosts_parse(struct knownhosts *, const char *text, size_t len);

/*
 * Borrowed pointers to the keys pinned for alias (at most max).  Returns
 * how many there are (which may be more than max).
 */
size_t knownhosts_lookup(const struct knownhosts *, const char *alias,
    const struct knownhosts_key **keys, size_t max);

/* How many keys tpuctl pinned itself for alias (own lines only). */
size_t knownhosts_pinned(const struct knownhosts *, const char *alias);

/*
 * The one host-key comparison (sshpool's check after the handshake):
 * is presented, blob for blob, one of the n pinned keys?  Returns 1 on a
 * match.  Otherwise 0, and *best (may be NULL) gets the index of the
 * pinned key to name in the mismatch message: the first of the
 * presented key's type, else 0.  n == 0 never matches.
 */
int knownhosts_match(const struct knownhosts_key *pinned, size_t n,
    const struct knownhosts_key *presented, size_t *best);

/*
 * Replace every entry of alias by the n key lines given ("keytype base64
 * [comment]"; the comment is replaced by KNOWNHOSTS_MARK).  All lines are
 * validated first: on TPU_E_INVALID kh is unchanged.  Other aliases are
 * untouched.
 */
int knownhosts_replace(struct knownhosts *, const char *alias,
    const char *const *keylines, size_t n, struct tpu_err *);

/*
 * The keys tpuctl pinned for alias (own lines only) as "keytype base64"
 * lines, NULL-terminated
 * (free with knownhosts_lines_free); *n gets the count.
 */
char **knownhosts_lines(
    const struct knownhosts *, const char *alias, size_t *n);
void knownhosts_lines_free(char **);

/*
 * Write kh to kh->path atomically (mode 0600; missing directories are
 * created 0700).  Returns 0 or an error naming the path.
 */
int knownhosts_save(const struct knownhosts *, struct tpu_err *);

#endif
