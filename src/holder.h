/*
 * Where a tpuctl command finds the per-user connection holder of a
 * slice (issue 18, the warm pool), and how both ends make sure they
 * talk only to the same user: the rendezvous layer under the protocol
 * of holdproto.h.
 *
 * Directory: $XDG_RUNTIME_DIR/tpuctl when XDG_RUNTIME_DIR is an
 * absolute path, else /tmp/tpuctl-UID.  It is created 0700 and, found
 * existing, must be a real directory (not a symbolic link) owned by the
 * effective uid with no group or other permission bits: anything else
 * is refused, never repaired or used.
 *
 * In it, per slice: NAME.sock (the holder's listening socket, created
 * 0600) and NAME.lock (flock(2)ed by the live holder for its whole
 * life).  NAME comes from the slice key ("project/zone/node"), so it
 * fits sun_path whatever the key's length.
 *
 * Crash safety: the kernel drops a dead holder's flock, even after
 * kill -9; the socket file it leaves is stale (connect is refused) and
 * the next holder, holding the lock, replaces it.  Two holders starting
 * at once: one gets the lock, the other TPU_E_CONFLICT.
 *
 * Both ends check the other's uid with SO_PEERCRED: the holder refuses
 * a client of another uid (which the 0700 directory and 0600 socket
 * already keep out), the client a socket served by another uid.
 */
#ifndef TPUCTL_HOLDER_H
#define TPUCTL_HOLDER_H

#include <stddef.h>

#include "err.h"

/* Enough for the directory, "/", a name and ".sock". */
#define HOLDER_PATH_MAX 108

/*
 * The directory (created when missing) into out.  Returns 0, or
 * TPU_E_PERMISSION naming the directory and what is wrong with it, or
 * TPU_E_IO when it cannot be created or its path is too long for a
 * socket address.
 */
int holder_dir(char *out, size_t n, struct tpu_err *);

/* The per-slice name for a slice key: "h-" and 16 hex digits. */
void holder_name(const char *slice_key, char *out, size_t n);

/*
 * Become the holder of name in dir: take NAME.lock (without waiting),
 * replace a stale NAME.sock, bind and listen.  Returns 0 with *lock_fd
 * (keep it open while serving) and *listen_fd (non-blocking, close on
 * exec); TPU_E_CONFLICT when another holder has the lock or answers on
 * the socket; TPU_E_IO otherwise.
 */
int holder_listen(const char *dir, const char *name, int *lock_fd,
    int *listen_fd, struct tpu_err *);

/*
 * Accept one client on listen_fd: 0 with *fd (blocking, close on exec)
 * for a client of our uid; TPU_E_PERMISSION (connection closed) for
 * another uid; TPU_E_TRANSIENT when there is none waiting (EAGAIN);
 * TPU_E_IO.
 */
int holder_accept(int listen_fd, int *fd, struct tpu_err *);

/*
 * Connect to the holder of name in dir: 0 with *fd; TPU_E_NOTFOUND when
 * none runs (no socket, or a stale one: connection refused), which
 * costs the caller only a cold run; TPU_E_PERMISSION when the socket is
 * served by another uid; TPU_E_IO.
 */
int holder_connect(
    const char *dir, const char *name, int *fd, struct tpu_err *);

/*
 * 0 when the peer of the Unix socket fd runs as our effective uid;
 * TPU_E_PERMISSION naming its uid otherwise (or when it cannot be read).
 */
int holder_peer_check(int fd, struct tpu_err *);

/*
 * The pid of the peer of the Unix socket fd (for a client: the holder
 * that listens), or -1 when it cannot be read.  A client that finds
 * the holder stopped or hung past its deadline ends it (SIGKILL) by
 * this pid, after holder_peer_check said it is of our uid, so that the
 * next command replaces it instead of waiting for it again.
 */
int holder_peer_pid(int fd);

/* Enough for holder_identity's text with a key path of PATH_MAX. */
#define HOLDER_IDENTITY_MAX 4200

/*
 * What the sessions of a holder were (or will be) authenticated with,
 * as text that a client and the holder compare at HELLO: the key file's
 * path and the SHA-256 of its contents (not the key: a fingerprint, so
 * that a key replaced under the same name differs), whether the agent
 * is used and the connect timeout (not the authentication attempts: a
 * first command waiting for its key to propagate retries more).  A
 * client whose identity differs from the holder's does not use its
 * sessions (issue 18: a command with another key must not ride on
 * sessions authenticated with the old one).
 */
void holder_identity(const char *keyfile, int agent, int connect_timeout_ms,
    char *out, size_t n);

#endif
