/*
 * The user's SSH key, as gcloud handles it: ~/.ssh/google_compute_engine
 * by default, generated (ed25519, OpenSSH format, 0600, with a .pub
 * beside it) when missing.  Loading refuses private keys readable by
 * group or others (the OpenSSH rule) and RSA keys (libssh2 1.10 can only
 * sign ssh-rsa with SHA-1, which OpenSSH >= 8.8 refuses).  The private
 * key itself is read by libssh2 from the file; this module only looks at
 * its header and public half, and wipes what it read.
 */
#ifndef TPUCTL_SSHKEY_H
#define TPUCTL_SSHKEY_H

#include <stddef.h>

#include "err.h"

enum sshkey_flags {
	SSHKEY_F_GENERATE = (1 << 0), /* create an ed25519 key if missing */
};

struct sshkey {
	char *path;       /* private key file */
	char *pubpath;    /* path + ".pub" (written if it was missing) */
	char *publine;    /* "keytype base64", no comment */
	char type[48];    /* "ssh-ed25519", "ecdsa-sha2-nistp256" */
	int encrypted;    /* needs a passphrase */
	char *passphrase; /* NULL, or set by sshkey_set_passphrase; wiped */
};

/* ~/.ssh/google_compute_engine, or NULL when HOME is unset; caller frees. */
char *sshkey_default_path(void);

/*
 * Generate an unencrypted ed25519 key at path (and path.pub) with
 * ssh-keygen, the parent directory created 0700 if missing.  Fails with
 * TPU_E_CONFLICT when path exists.
 */
int sshkey_generate(const char *path, const char *comment, struct tpu_err *);

/*
 * Load the key at path (generating it first with SSHKEY_F_GENERATE when
 * missing).  Returns 0 with key filled (sshkey_release it); or
 * TPU_E_NOTFOUND, TPU_E_PERMISSION (group/other-readable private key),
 * TPU_E_INVALID (RSA, unsupported type, not a key, CR/LF in the public
 * key, .pub not matching the private key), with a one-line message.
 */
int sshkey_load(struct sshkey *, const char *path, int flags, struct tpu_err *);

/* Keep a copy of the passphrase (wiped on release); turns core dumps off. */
void sshkey_set_passphrase(struct sshkey *, const char *);

/* Wipe and free everything. NULL-safe on the fields. */
void sshkey_release(struct sshkey *);

/*
 * Check a login name: 1 to 32 characters of [A-Za-z0-9_.-], not starting
 * with '-'.  CR and LF get their own message.  0 or TPU_E_INVALID.
 */
int sshkey_validate_user(const char *user, struct tpu_err *);

/*
 * The node metadata "ssh-keys" entry "USER:keytype base64 USER" (what
 * gcloud writes).  *out is the caller's.  0 or TPU_E_INVALID.
 */
int sshkey_metadata_entry(
    const struct sshkey *, const char *user, char **out, struct tpu_err *);

/*
 * With expire > 0 (Unix time), gcloud's entry of a key that expires (as
 * --ssh-key-expire-after writes it): "USER:keytype base64 google-ssh
 * {"userName":"USER","expireOn":"2026-08-29T18:52:51+0000"}"; with 0,
 * sshkey_metadata_entry().  0 or TPU_E_INVALID.
 */
int sshkey_metadata_entry_expiring(const struct sshkey *, const char *user,
    long long expire, char **out, struct tpu_err *);

/* Wipe n bytes at p in a way the compiler cannot drop (explicit_bzero). */
void sshkey_wipe(void *p, size_t n);

/*
 * Mark the process not dumpable (prctl PR_SET_DUMPABLE 0) while it holds
 * secrets: no core file, no ptrace by other users.  0 or -1.
 */
int sshkey_nodump(void);

#endif
