/*
 * A client of the Cloud OS Login API (oslogin.googleapis.com v1), the
 * part an SSH client needs: import a public key into the caller's login
 * profile (POST v1/users/EMAIL:importSshPublicKey, body {"key",
 * "expirationTimeUsec"?}) and read the POSIX username of the profile's
 * primary account (loginProfile.posixAccounts[].username), the user to
 * log in as.  Importing the same key again is idempotent on Google's
 * side (the key's fingerprint is its identity).
 */
#ifndef TPUCTL_OSLOGIN_H
#define TPUCTL_OSLOGIN_H

#include <stddef.h>
#include <stdint.h>

#include "err.h"

struct http;

/*
 * 1 when an enable-oslogin metadata value turns OS Login on (TRUE in any
 * case, as the guest agent reads it), else 0.  NULL is 0.
 */
int oslogin_enabled(const char *value);

/*
 * The username of a LoginProfile JSON (profile is the object itself, or
 * an ImportSshPublicKeyResponse holding it under loginProfile): the
 * posixAccounts entry with primary true, else the only entry.  Returns
 * 0 with *user (caller frees), or TPU_E_API naming what is missing.
 */
int oslogin_parse_username(
    const char *body, size_t len, char **user, struct tpu_err *);

/*
 * Import key (one OpenSSH public key line) for email on base (ending in
 * '/'), with project as projectId (NULL: none) and expire_usec as the
 * key's expiry (0: never).  On success *user gets the POSIX username
 * (caller frees); under --dry-run (the http handle's) the request is
 * printed, nothing is sent and *user is NULL.  TPU_E_USAGE for an email
 * with characters an account name cannot have; else http_request's.
 */
int oslogin_import(struct http *, const char *base, const char *email,
    const char *project, const char *key, int64_t expire_usec, char **user,
    struct tpu_err *);

#endif
