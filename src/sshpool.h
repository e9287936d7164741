/*
 * The SSH fan-out engine: run one remote command on many workers from one
 * thread, with one poll() loop over non-blocking libssh2 sessions and at
 * most `fanout` sessions in flight (the next starts as one finishes).
 *
 * Per worker: TCP connect (TCP_NODELAY; TCP_QUICKACK before every round
 * of libssh2 calls), SSH handshake preferring the pinned host-key types
 * (ssh-ed25519 first), host-key check right after the handshake and
 * BEFORE any userauth (a mismatch fails the worker with both SHA256
 * fingerprints, and nothing is sent to authenticate), public-key auth
 * from a key file with bounded retries (for a key not yet propagated to
 * the worker), exec, output streamed through a callback, exit status and
 * exit signal read after the channel is closed.
 *
 * Memory per worker is bounded (two line buffers of line_max bytes)
 * whatever the output size.  Writes use MSG_NOSIGNAL: a dropped
 * connection is an error on that worker, never a SIGPIPE.
 *
 * Nothing is printed: results go to the caller's array and callbacks.
 */
#ifndef TPUCTL_SSHPOOL_H
#define TPUCTL_SSHPOOL_H

#include <signal.h>
#include <stddef.h>
#include <stdint.h>

#include "err.h"

enum sshpool_status {
	SSHPOOL_S_NOT_STARTED = 0,  /* never started (abort, fail-fast) */
	SSHPOOL_S_OK,               /* remote exit status 0 */
	SSHPOOL_S_REMOTE_NONZERO,   /* remote exit status 1..255 */
	SSHPOOL_S_SIGNALED,         /* remote command killed by a signal */
	SSHPOOL_S_TIMEOUT,          /* command timeout: channel closed */
	SSHPOOL_S_CONNECT_REFUSED,  /* TCP connection refused */
	SSHPOOL_S_CONNECT_TIMEOUT,  /* no TCP connection or SSH handshake in
	                               the connect timeout */
	SSHPOOL_S_CONNECT_ERROR,    /* other connect errors (unreachable,
	                               unknown host) */
	SSHPOOL_S_HOSTKEY_MISMATCH, /* presented key is not the pinned one */
	SSHPOOL_S_HOSTKEY_UNKNOWN,  /* no pinned key (fail closed) */
	SSHPOOL_S_AUTH_FAILED,      /* permission denied (publickey) */
	SSHPOOL_S_PROTOCOL,         /* SSH error, connection lost mid-run */
	SSHPOOL_S_ABORTED,          /* stopped: abort flag or fail-fast */
};

enum sshpool_flags {
	SSHPOOL_F_LINES = (1 << 0),     /* output as complete lines */
	SSHPOOL_F_FAIL_FAST = (1 << 1), /* stop everything on a failure */
	/* Accept any host key when none is pinned (trust on first use),
	 * recording it in the result.  Insecure: the caller must warn. */
	SSHPOOL_F_ACCEPT_NEW_HOSTKEY = (1 << 2),
	/* Try the identities of ssh-agent ($SSH_AUTH_SOCK) first, then
	 * keyfile if given (keyfile may be NULL with this flag). */
	SSHPOOL_F_AGENT = (1 << 3),
	/*
	 * Do not put the watcher before the command lines.  By default
	 * every command runs under a small POSIX sh watcher on the worker
	 * (in the login shell itself, which must be a POSIX shell): when
	 * the channel goes away while the command still runs (abort,
	 * fail-fast, command timeout, lost client or connection), its
	 * process group gets SIGTERM, then SIGKILL 5 s later, so nothing
	 * of it keeps running; after a normal end, what it left in the
	 * background is left alone.  The watcher reads the channel's
	 * stdin to see it close, and the command's stdin is /dev/null
	 * (it reads EOF at once), unless SSHPOOL_F_STDIN.  Exit status
	 * and signal reporting are unchanged.
	 */
	SSHPOOL_F_NO_WATCH = (1 << 4),
	/*
	 * Forward opts->stdin_fd to the command's stdin on every worker
	 * (the same bytes to each), then EOF, as ssh(1) does.  Read one
	 * chunk at a time, and the next only when every worker still
	 * running has taken the last (flow control: a command that does
	 * not read stops the reading once the channel's window is full;
	 * a worker whose command ended, or that failed, no longer
	 * counts); nothing is read before a command has started.  All
	 * workers run at once (fanout is raised to n).  The watcher then
	 * does not use the channel's stdin: it polls, every second, that
	 * the worker's sshd session process (the login shell's parent)
	 * still runs, which it does as long as the client's connection
	 * does; when it goes while the command runs, the group is stopped
	 * as above.  An error reading stdin_fd ends it as EOF would.
	 */
	SSHPOOL_F_STDIN = (1 << 5),
	/*
	 * Short commands with a session cache (opts->cache; ignored
	 * without one, and with SSHPOOL_F_STDIN): run the command through
	 * a long-lived sh held on the worker's cached session (opened on
	 * first use, kept with the session in the cache, reused by the
	 * next run) instead of a new channel and exec (src/shframe.h: a
	 * fresh random end marker per command, stdin /dev/null, a
	 * subshell; no watcher).  The output is buffered until the
	 * command's end markers came on both streams (at most 1 MiB per
	 * stream), then given to on_output; a command killed by a signal
	 * reports exit status 128+N, not SIGNALED.  The command must be
	 * idempotent: when the held shell is found dead or out of step,
	 * or its output is too large, the shell is dropped, the buffered
	 * output discarded and the command run again on a fresh exec
	 * channel (with the watcher), as without the flag.
	 */
	SSHPOOL_F_SHELL = (1 << 6),
	/*
	 * With SSHPOOL_F_SHELL, for a command that must not run twice
	 * (cancel's kill): its output is not buffered, and a held shell
	 * lost once the command was sent is reported (SSHPOOL_S_PROTOCOL,
	 * "may have run"), never run again; a shell found dead before
	 * anything was sent still falls back to a new shell or an exec.
	 */
	SSHPOOL_F_SHELL_ONCE = (1 << 7),
};

/* Output flags given to on_output. */
#define SSHPOOL_OUT_EOL 1 /* the line ended with '\n' (not included) */

struct sshpool_result;

struct sshpool_target {
	int worker;       /* worker index, for messages ("worker 3") */
	const char *host; /* numeric address or host name */
	int port;
	const char *user;
	/* pinned keys, "keytype base64 [comment]" each (knownhosts_lines) */
	const char *const *hostkeys;
	size_t nhostkeys;
	/* This worker's remote command line; NULL: opts->command. */
	const char *command;
	/* Environment for the command, "KEY=VALUE" each (KEY a shell name:
	 * [A-Za-z_][A-Za-z0-9_]*).  sshd refuses env requests by default
	 * (AcceptEnv), so it travels in the command line itself:
	 * "export KEY='VALUE' ...; command" (see sshpool_command_line). */
	const char *const *env;
	size_t nenv;
};

struct sshpool_opts {
	const char *command;    /* the remote command line (shquote_argv) for
	                           targets without their own */
	const char *keyfile;    /* private key (sshkey.path) */
	const char *pubkeyfile; /* NULL: keyfile + ".pub" if it exists */
	const char *passphrase; /* NULL when the key is not encrypted */
	int flags;              /* enum sshpool_flags */
	int fanout;             /* sessions in flight; 0: 64 */
	int connect_timeout_ms; /* TCP + handshake + auth; 0: 10000 */
	int command_timeout_ms; /* from exec to channel close; 0: none */
	int auth_attempts;      /* 0 or 1: no retry */
	int auth_retry_ms;      /* first delay between attempts; 0: 1000 */
	int auth_retry_max_ms;  /* delay cap (doubling); 0: 5000 */
	size_t line_max;        /* line buffer per stream; 0: 16384 */
	int stdin_fd;           /* with SSHPOOL_F_STDIN: what is forwarded */
	/*
	 * Keepalive (OpenSSH's ServerAliveInterval / ServerAliveCountMax):
	 * once a session runs its command, a keepalive asking for a reply
	 * goes to a server silent for alive_interval_ms (whole seconds, at
	 * least 2); a server from which nothing came for interval *
	 * (alive_count_max + 1) is lost: SSHPOOL_S_PROTOCOL "connection
	 * lost: no answer to N keepalives" (a frozen worker, packets
	 * dropped without a FIN or RST).  0: no keepalive; count 0: 3.
	 */
	int alive_interval_ms;
	int alive_count_max;
	/*
	 * Output of target idx on stream 1 (stdout) or 2 (stderr): a line
	 * (SSHPOOL_F_LINES; longer lines come in line_max pieces, a last
	 * line without '\n' is flushed at EOF) or a raw chunk.  data is only
	 * valid during the call.
	 */
	void (*on_output)(void *arg, size_t idx, int stream, const char *data,
	    size_t len, int flags);
	/* Called once per target when it is finished (any status). */
	void (*on_done)(void *arg, size_t idx, const struct sshpool_result *);
	void *arg;
	/* Set (e.g. from a SIGINT handler) to stop: channels are closed,
	 * unfinished workers reported ABORTED or NOT_STARTED. */
	volatile sig_atomic_t *abort;
	/* Opt-in session cache (the warm pool's holder): see
	 * sshpool_cache_new.  NULL: every session is closed after its run. */
	struct sshpool_cache *cache;
};

struct sshpool_result {
	enum sshpool_status status;
	int exit_status;     /* remote exit status, -1 when none */
	char signal[32];     /* "KILL" when killed by a signal, else "" */
	int64_t duration_ms; /* from the first connect to the end */
	int auth_attempts;   /* publickey attempts made */
	char hostkey_fp[64]; /* presented key: "SHA256:..." or "" */
	char *hostkey;       /* presented key "type base64", or NULL */
	char msg[512];       /* one line for humans ("" when OK) */
};

/*
 * Run each target's command line (sshpool_command_line: its own command
 * or opts->command, with its env) on the n targets, filling
 * results[0..n-1] (release
 * each with sshpool_result_release).  Returns 0 when every worker
 * exited 0; TPU_E_USAGE for bad options (nothing sent); TPU_E_INTERRUPTED
 * when the abort flag stopped the run; TPU_E_UNREACHABLE when no worker
 * could be reached, trusted or authenticated; TPU_E_PARTIAL otherwise.
 */
int sshpool_run(const struct sshpool_target *targets, size_t n,
    const struct sshpool_opts *, struct sshpool_result *results,
    struct tpu_err *);

void sshpool_result_release(struct sshpool_result *);

/*
 * A session cache (issue 18, used by the connection holder only): with
 * opts->cache set, sshpool_run keeps the authenticated session of a
 * worker whose command ran to its end (exit status or signal) instead of
 * disconnecting it, and a later run takes it for a target only when
 * host, port, user and the pinned host keys are exactly those it was
 * opened with; any other target opens a new session, with the normal
 * host-key check and authentication.  A cached session that is found
 * dead when its channel is opened (the server closed it, the worker was
 * restarted or rekeyed) is dropped and the worker reconnected in the
 * same run, again with the full host-key check: the command had not
 * started.  A session is used by one run at a time: runs in several
 * threads may share one cache (it has its own lock); a target whose
 * session another run has taken opens a new one, and when both end the
 * cache keeps one session per target (the other is closed).
 */
struct sshpool_cache;

struct sshpool_cache *sshpool_cache_new(void);
/* Disconnect and free every session held; NULL is allowed. */
void sshpool_cache_free(struct sshpool_cache *);
/* Sessions held now. */
size_t sshpool_cache_count(const struct sshpool_cache *);

/*
 * The command line for target t: its command (or opts_command when
 * t->command is NULL), preceded by "export K='v' K2='v2'; " when t->env
 * is not empty, every value quoted with shquote.  sshpool_run executes
 * it after the watcher's lines (SSHPOOL_F_NO_WATCH), which end with a
 * newline and leave the shell state as it was.  *out is the caller's to free.
 * Returns 0, or TPU_E_USAGE (no or empty command, an entry without '=', a key
 * that is not a shell name, a NUL byte cannot occur in a C string).
 */
int sshpool_command_line(const struct sshpool_target *t,
    const char *opts_command, char **out, struct tpu_err *);

/* One authenticated session, for interactive use. */
struct sshpool_conn {
	void *session; /* LIBSSH2_SESSION *, non-blocking */
	int fd;
	const struct sshpool_target *target;
	void *sftp; /* LIBSSH2_SFTP *: sshpool_sftp_open(), else NULL */
	/* opts->abort (sshpool_connect); the caller may change it.  Set
	 * (to the signal number, e.g. &retry_interrupted), it stops SFTP
	 * calls within a chunk or 200 ms: TPU_E_INTERRUPTED, or
	 * TPU_E_TERMINATED for SIGTERM. */
	volatile sig_atomic_t *abort;
	/* Set by the caller (NULL after sshpool_connect): told the bytes of
	 * every chunk sshpool_sftp_put/get moved (scp's progress line). */
	void (*on_bytes)(void *arg, int64_t n);
	void *bytes_arg;
	/* what the session's connect found (kept with it in a cache) */
	int auth_attempts;
	char hostkey_fp[64];
};

/*
 * Connect to one target and authenticate, with the same host-key check,
 * timeouts and auth retries as sshpool_run (opts->command and the
 * callbacks are not used).  Returns 0 with conn open (close it with
 * sshpool_conn_close), or the sshpool_run error with r->msg copied into
 * err.
 */
int sshpool_connect(const struct sshpool_target *, const struct sshpool_opts *,
    struct sshpool_conn *conn, struct sshpool_result *r, struct tpu_err *);
void sshpool_conn_close(struct sshpool_conn *);
/*
 * With a session cache (sshpool_cache_new): take the session it holds
 * for exactly target t (as sshpool_run would: host, port, user and the
 * pinned host keys) as conn, authenticated already, instead of
 * connecting: 1 when taken, 0 (conn untouched) when none is held.  It
 * may have died meanwhile: a first call failing is the caller's sign to
 * close it and sshpool_connect.  c may be NULL (0).
 */
int sshpool_conn_take(struct sshpool_cache *c, const struct sshpool_target *t,
    struct sshpool_conn *conn);
/*
 * End conn's SFTP subsystem and give its session to cache c for the
 * next run or take (what it matches on is copied);
 * closed instead when c is NULL, when the subsystem did not end cleanly
 * or when c holds a session for that target already.  conn is closed
 * either way.
 */
void sshpool_conn_keep(struct sshpool_cache *c, struct sshpool_conn *conn);
/*
 * Wait (at most 200 ms, and not past deadline) until the connection's
 * socket is ready in the directions libssh2 is blocked on; -1 when the
 * deadline has passed.
 */
int sshpool_conn_wait(struct sshpool_conn *, int64_t deadline);

struct sshpool_shell_opts {
	const char *command; /* NULL: the login shell */
	const char *term;    /* TERM for the pty; NULL: "xterm" */
	int no_pty;          /* 1: no pty, no raw mode (piped use) */
	int in_fd;           /* local input, e.g. 0 */
	int out_fd;          /* local output, e.g. 1; its size is the pty's */
	int err_fd;          /* remote stderr (-1: out_fd; with a pty the
	                        remote side merges it anyway) */
	volatile sig_atomic_t *winch; /* set by a SIGWINCH handler: the new
	                                 size of out_fd is sent */
	volatile sig_atomic_t *abort; /* set by a SIGINT/SIGTERM handler */
};

/*
 * Run an interactive shell (or so->command) on conn with a pty of
 * out_fd's size, in_fd in raw mode while it runs (restored on every
 * path), relaying bytes both ways until the remote side closes.  Local
 * EOF on in_fd is passed on.  On return *exit_status is the remote exit
 * status, or -1 with signame set ("KILL") when a signal killed it.
 * Returns 0, TPU_E_INTERRUPTED, TPU_E_UNREACHABLE (channel or connection
 * failure) or TPU_E_IO.
 */
int sshpool_shell(struct sshpool_conn *, const struct sshpool_shell_opts *,
    int *exit_status, char signame[32], struct tpu_err *);

/* A short name for a status: "ok", "exit 3"-like names are built by
 * callers; this gives "remote nonzero", "host key mismatch", ... */
const char *sshpool_status_name(enum sshpool_status);

/* 1 for statuses where the worker was never reached or trusted. */
int sshpool_status_unreachable(enum sshpool_status);

/*
 * The return of a run of n workers from their results, as sshpool_run
 * gives it: 0 when all are OK; sig (SIGINT/SIGTERM, 0 for none) ->
 * TPU_E_INTERRUPTED/TERMINATED "... M of N workers finished";
 * TPU_E_UNREACHABLE when none was reached or trusted; else
 * TPU_E_PARTIAL "M of N workers failed".  For who relays a run (the
 * connection holder's client).
 */
int sshpool_run_status(
    const struct sshpool_result *, size_t n, int sig, struct tpu_err *);

struct sshpool_forward_opts {
	int listen_fd;    /* a listening local socket (the caller binds it) */
	const char *host; /* where the worker connects (e.g. "localhost") */
	int port;
	int max_conns;                /* 0: 64 at once */
	volatile sig_atomic_t *abort; /* the only way to stop */
};

/*
 * Local port forwarding (ssh -L): accept connections on listen_fd and
 * relay each through a direct-tcpip channel to host:port as seen from
 * the worker, all in one poll loop, until *abort is set
 * (TPU_E_INTERRUPTED) or the SSH connection fails (TPU_E_UNREACHABLE).
 * A connection the server refuses is closed and the loop goes on.
 */
int sshpool_forward(struct sshpool_conn *, const struct sshpool_forward_opts *,
    struct tpu_err *);

/*
 * Start the SFTP subsystem on conn (conn->sftp), unless it runs already:
 * one channel and one SFTP session serve every later SFTP call on conn,
 * until sshpool_conn_close ends it.  Returns 0 or TPU_E_UNREACHABLE /
 * TPU_E_TRANSIENT (30 s without progress).
 */
int sshpool_sftp_open(struct sshpool_conn *, struct tpu_err *);

/*
 * SFTP copy of one regular file over conn, on its SFTP subsystem
 * (started by the first call, kept for the next files).  Both ways the
 * data goes to "<destination>.tpuctl-tmp" beside the destination, which
 * is replaced only when the copy is complete, so the destination never
 * holds a partial file; on failure or interrupt the temp file is
 * removed (on the worker: unless the connection itself is lost).
 * put: local to remote, the remote temp file given the local mode
 * exactly, then renamed over the destination (SFTP v3 cannot rename
 * over a file: an existing destination is removed first).
 * get: remote to "<local>.tpuctl-tmp", the remote mode applied, fsync,
 * then renamed to local; a local that exists and is not a regular file
 * (fsutil_dest_kind: /dev/stdout, a FIFO, a device) is opened and
 * written in place instead, never renamed over.  30 s without progress
 * is an error (TPU_E_TRANSIENT).  conn->abort is checked for every chunk
 * (TPU_E_INTERRUPTED / TPU_E_TERMINATED).  Errors name the path:
 * TPU_E_NOTFOUND, TPU_E_PERMISSION, TPU_E_IO, TPU_E_UNREACHABLE.
 */
int sshpool_sftp_put(struct sshpool_conn *, const char *local,
    const char *remote, struct tpu_err *);
int sshpool_sftp_get(struct sshpool_conn *, const char *remote,
    const char *local, struct tpu_err *);
/*
 * sshpool_sftp_get for a file of a tree copy (scp --recurse): a symbolic
 * link already at local is replaced like a regular file, never written
 * through, so a tree cannot write outside its destination.
 */
int sshpool_sftp_get_tree(struct sshpool_conn *, const char *remote,
    const char *local, struct tpu_err *);

/*
 * How many SSH sessions this process has started (counted before the
 * session exists, so a failed start counts too).  cmd_dispatch checks by
 * it that only a command whose entry declares CMD_SSH opens any.
 */
unsigned long sshpool_sessions_started(void);

#endif
