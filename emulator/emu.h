/*
 * tpuctl-emulator's core contract, shared by its modules:
 *   core.c    libmicrohttpd server, routing, body spooling, auth check,
 *             fault injection, request log, state dir, env file
 *   auth.c    OAuth2 token, STS, iamcredentials, metadata server routes
 *   tpu.c     Cloud TPU v2/v2alpha1 routes, node and queued-resource
 *             state machine, operations
 *   gcs.c     Cloud Storage JSON API routes (objects on disk)
 *   fleet.c   the sshd worker fleet (see fleet.h)
 * One global mutex (emu->lock) guards all state; handlers run with it
 * held, except while streaming a request or response body.
 */
#ifndef TPUCTL_EMU_H
#define TPUCTL_EMU_H

#include <pthread.h>
#include <stddef.h>
#include <stdio.h>
#include <stdint.h>
#include <sys/types.h>

#include <cjson/cJSON.h>

struct MHD_Connection;
struct MHD_Response;
struct emu;
struct emu_req;

/* A fault scripted through the control endpoint or "inject". */
struct emu_fault {
	char method[16]; /* "" matches any */
	char path[512];  /* prefix match on the path; "" any */
	char spec[128];  /* "return-503", "lro-pending-5", ... */
	int remaining;   /* matches left; -1 forever */
};

struct emu_req {
	const char *method;  /* "GET" */
	const char *path;    /* percent-decoded by MHD, no query */
	const char *raw_url; /* as received, with the query */
	struct MHD_Connection *conn;
	/* The body: in memory (NUL-terminated) unless the route had a sink. */
	const char *body;
	size_t body_len;
	uint64_t body_sunk; /* bytes written to the sink fd */
	int sink_fd;        /* -1 when no sink */
	void *sink_ctx;     /* the route's own state for this request */
	/* Who called: set by the auth check (core calls auth.c). */
	const char *principal; /* service account email, or "" */
	/* The fault that matched this request, if any (core-owned copy). */
	struct emu_fault *fault;
	/* The response the handler builds (see emu_reply_*). */
	struct MHD_Response *resp;
	int status;
	int64_t start_ms;
	/*
	 * wait_for_change (emu_req_wait, added by the core): the ETag being
	 * waited on and the deadline; "" and 0 until the handler first waits.
	 */
	char wait_etag[40];
	int64_t wait_until_ms;
	int wait; /* set by emu_req_wait for this run of the handler */
};

enum emu_route_flags {
	EMU_R_AUTH = (1 << 0), /* requires a Bearer token we issued */
};

struct emu_route {
	const char *prefix; /* path prefix: "/v2/", "/storage/v1/" */
	int flags;
	/* Build the response with emu_reply_*(); return 0, or -1 to drop. */
	int (*handle)(struct emu *, struct emu_req *);
	/*
	 * Optional: called with the headers in and the lock held, before any
	 * body byte; return an fd to stream the body into (core writes, the
	 * route closes it in handle), or -1 to buffer it in memory (capped at
	 * 64 MiB: larger in-memory bodies get 413).
	 */
	int (*sink)(struct emu *, struct emu_req *);
	/*
	 * Optional: the request ended without handle (the client went away
	 * mid-body, or the body could not be stored) while sink_ctx was set:
	 * undo what the sink started and free sink_ctx.  Lock held.
	 */
	void (*sink_abort)(struct emu *, struct emu_req *);
};

struct emu {
	pthread_mutex_t lock;
	char *state_dir;
	char *base_url; /* "http://127.0.0.1:PORT" (https with --tls) */
	char *project;  /* default project */
	char *zone;     /* default zone */
	int tls;
	/* Module state, owned by each module. */
	void *auth;
	void *tpu;
	void *gcs;
	void *fleet;
	/* Faults. */
	struct emu_fault *faults;
	size_t nfaults;
	FILE *reqlog; /* DIR/requests.jsonl */
	char **opts;  /* "key=value" from --set; NULL-terminated */
	volatile int stopping;
	/* Added by the core: "127.0.0.1:PORT" of the plain-HTTP metadata
	 * listener (the main port with --tls, which metadata clients can't
	 * speak); NULL without --tls. */
	char *metadata_host;
	/* Added by the core: the per-worker metadata listeners (core.c). */
	void *workers;
};

/* Request helpers (valid during handle/sink). */
const char *emu_query(struct emu_req *, const char *key);
const char *emu_header(struct emu_req *, const char *name);
/* Parse the body as a JSON object; NULL after replying 400 itself. */
cJSON *emu_body_json(struct emu *, struct emu_req *);

/* Replies: each sets req->resp/status once.  json is consumed. */
int emu_reply_json(struct emu_req *, int status, cJSON *json);
int emu_reply_data(
    struct emu_req *, int status, const char *ctype, const void *, size_t);
/* Google error JSON {"error":{"code","message","status","errors":[...]}}. */
int emu_reply_error(struct emu_req *, int status, const char *gstatus,
    const char *fmt, ...) __attribute__((format(printf, 4, 5)));
/*
 * Stream len bytes from off of the concatenation of n open files (fds
 * with their sizes; the core takes both arrays and closes the fds).
 */
int emu_reply_files(struct emu_req *, int status, const char *ctype, int *fds,
    uint64_t *sizes, size_t n, uint64_t off, uint64_t len);
void emu_add_header(struct emu_req *, const char *name, const char *value);

/*
 * Fault lookup for module-specific faults (lro-pending, lro-error,
 * corrupt-byte...): the matched fault's spec when it starts with prefix,
 * else NULL.  Generic faults (return-, retry-after-, reset-connection,
 * broken-stream-after-, stall-) are applied by the core itself.
 */
const char *emu_fault_spec(struct emu_req *, const char *prefix);

/* RFC 3339 UTC timestamp with nanoseconds, as Google sends them. */
void emu_rfc3339(char *, size_t, int64_t unix_ms);
int64_t emu_wall_ms(void);
/* A random lowercase hex id of n chars into out (n+1 bytes). */
void emu_random_hex(char *, size_t n);

/* Paths under the state dir; the caller frees. */
char *emu_state_path(struct emu *, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/*
 * Tunables from "serve --set key=value" (e.g. tpu.create_ms=3000,
 * fleet.key_delay_ms=2000): the value, or dflt when not set.
 */
const char *emu_opt(struct emu *, const char *key, const char *dflt);
long long emu_opt_int(struct emu *, const char *key, long long dflt);

/*
 * Node events from "POST /_emulator/events" and "tpuctl-emulator event":
 * {"event":"preempt|stockout|maintenance|worker-down|worker-up|rekey|
 *  blackhole|ssh-cut|reboot", "node":"projects/P/locations/Z/nodes/N",
 *  "zone":"...", "worker":3, "mode":"drop|silent" (blackhole)}.
 * Implemented by tpu.c (which calls fleet.c); 0, or -1 with errbuf set.
 */
int tpu_event(struct emu *, const cJSON *ev, char *errbuf, size_t errlen);

/* Module hooks, called by core.c in this order at start and at stop. */
int emu_auth_init(struct emu *);
int fleet_init(struct emu *);
int tpu_init(struct emu *);
int gcs_init(struct emu *);
void tpu_tick(struct emu *); /* every 100 ms, lock held: advance state */
void gcs_fini(struct emu *);
void tpu_fini(struct emu *);
void fleet_fini(struct emu *);
void emu_auth_fini(struct emu *);

/* The auth check for EMU_R_AUTH routes: 0 ok, else it replied 401/403. */
int emu_auth_check(struct emu *, struct emu_req *);
/* Extra export lines for DIR/env, from each module (auth, fleet). */
void emu_auth_env(struct emu *, FILE *);
void fleet_env(struct emu *, FILE *);

extern const struct emu_route emu_auth_routes[]; /* NULL-prefix terminated */
extern const struct emu_route tpu_routes[];
extern const struct emu_route gcs_routes[];

/*
 * Additions by the core (core*.c, auth.c).  Other modules may use them;
 * nothing above this line changed.
 */

/* Parsed form of a fault spec (emu_fault_parse). */
enum emu_fault_kind {
	EMU_FK_MODULE,        /* not generic: left to the module */
	EMU_FK_RETURN,        /* return-CODE: reply CODE, no handler */
	EMU_FK_RETURN_AFTER,  /* return-CODE-after-NK: handler, then CODE */
	EMU_FK_RETRY_AFTER,   /* retry-after-N: 429, Retry-After: N */
	EMU_FK_RETRY_DATE,    /* retry-after-date[-N]: 429, HTTP-date */
	EMU_FK_RETRY_GARBAGE, /* retry-after-garbage: 429, bad header */
	EMU_FK_RESET,         /* reset-connection: handler, then RST */
	EMU_FK_BROKEN,        /* broken-stream-after-NK */
	EMU_FK_STALL,         /* stall-Ss-after-NK */
	EMU_FK_CORRUPT,       /* corrupt-byte-OFF */
};

struct emu_fault_action {
	enum emu_fault_kind kind;
	int code;        /* HTTP status for return-* */
	long long bytes; /* N KiB as bytes, or the corrupt offset */
	long long secs;  /* stall or retry-after seconds */
};

/*
 * Parse a fault spec.  Returns 0 (kind EMU_FK_MODULE for specs the core
 * does not know, which must still be lowercase [a-z0-9-]), or -1 with a
 * one-line reason in errbuf.
 */
int emu_fault_parse(
    const char *spec, struct emu_fault_action *, char *errbuf, size_t errlen);
/* Google's status string and reason for an HTTP code ("NOT_FOUND"). */
const char *emu_http_gstatus(int code);
const char *emu_http_reason(int code);

/*
 * Parse a request body as one JSON object (empty -> {}); trailing bytes
 * other than whitespace are an error.  NULL with why set to the reason
 * ("Unexpected token at offset 3.").  The caller frees the tree.
 */
cJSON *emu_json_object(const char *body, size_t len, char *why, size_t whylen);

/*
 * The value of key in an application/x-www-form-urlencoded body, decoded;
 * the caller frees.  NULL when absent.
 */
char *emu_form_get(const char *body, size_t len, const char *key);
/* The hex SHA-256 of s, NUL-terminated. */
void emu_sha256_hex(const char *s, char out[65]);

/*
 * One request log line (JSON, no newline; the caller frees).  headers is
 * an object of name -> value, redacted here; query is the raw query
 * string or NULL; fault the matched spec or NULL.
 */
char *emu_log_line(int64_t ts_ms, const char *method, const char *path,
    const char *query, int status, uint64_t req_bytes, uint64_t resp_bytes,
    int64_t duration_ms, const char *fault, const cJSON *headers);

/* Write the export lines of DIR/env (core's own, then auth's, fleet's). */
void emu_env_write(struct emu *, FILE *);
/* "host:port" of the server (for GCE_METADATA_HOST). */
const char *emu_hostport(struct emu *);
/* A stable 12-digit project number for a project id, into out (>= 13). */
void emu_project_number(const char *project, char *out, size_t len);
/* 1 when project is one of the allowed ones (default + auth.projects). */
int emu_project_allowed(struct emu *, const char *project);
/* Write len bytes to path atomically (temp + rename), with mode. */
int emu_write_file(const char *path, const void *, size_t, int mode);
/* Read a whole (small) file; NULL on error.  The caller frees. */
char *emu_read_file(const char *path, size_t *len);

/* The plain "GET /" metadata-server probe (auth.c). */
int emu_auth_root(struct emu *, struct emu_req *);
/*
 * Verify an RS256 JWT bearer assertion against the PEM public key.
 * iss and aud are the expected issuer and audience (aud2 an alternative
 * or NULL); now_s the current time.  Returns 0, or -1 (invalid_grant)
 * or -2 (invalid_scope: no scope claim) with errbuf set to Google's
 * error_description.  Exported for the unit tests and the fuzzer.
 */
int emu_auth_jwt_verify(const char *jwt, const char *pubkey_pem,
    const char *kid, const char *iss, const char *aud, const char *aud2,
    int64_t now_s, char *errbuf, size_t errlen);

/*
 * Per-worker metadata servers (core.c).  Every worker address ("127.A.B.C")
 * gets its own listening sockets: the plain-HTTP port (the main port, or
 * the metadata port under --tls) and, when the emulator runs as root,
 * port 80 (option metadata.port80=0 turns that off).  A separate
 * libmicrohttpd daemon serves them (only "/" and /computeMetadata/), so
 * that a wait_for_change request is a suspended connection, not a thread.
 * Call with emu->lock held.
 */
/* Bind addr for worker of node_key (again: just remap). 0, or -1. */
int emu_md_listen(
    struct emu *, const char *node_key, int worker, const char *addr);
/* Close every listener of node_key. */
void emu_md_unlisten(struct emu *, const char *node_key);
/* The port worker addresses serve metadata on (0 when unknown). */
int emu_md_port(struct emu *);
/*
 * The worker a request was sent to, by the local address it reached:
 * the worker index with its node key in node (len bytes), -1 for the
 * main address (the host's view), -2 for a worker address whose node
 * was deleted meanwhile.
 */
int emu_req_worker(struct emu_req *, char *node, size_t len);
/*
 * wait_for_change: instead of replying, park the request until
 * emu_md_changed() or deadline (ms, tpu_now_ms clock); then the handler
 * runs again with r->wait_etag and r->wait_until_ms set.  Returns 0.
 */
int emu_req_wait(struct emu_req *, const char *etag, int64_t deadline_ms);
/* A metadata value may have changed: rerun every waiting request. */
void emu_md_changed(struct emu *);

/*
 * The OS Login API (oslogin.c): its routes, the POSIX username Google
 * derives for an account email (out gets at most 32 characters), and
 * whether a key is an OpenSSH public key line.
 */
extern const struct emu_route oslogin_routes[];
void emu_oslogin_username(const char *email, char *out, size_t len);
/* The POSIX username of the emulator's own service account (auth.c's
 * emu-sa@PROJECT), and the uid its profile gives a username. */
void emu_oslogin_sa_user(struct emu *, char *out, size_t len);
unsigned emu_oslogin_uid(const char *username);
int emu_oslogin_key_ok(const char *key);

#endif
