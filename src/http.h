/*
 * The one HTTP stack: a libcurl easy handle reused for the whole process
 * (keep-alive, HTTP/2 over TLS when offered), with connect and stall
 * timeouts, a per-call deadline, capped response buffers, the retry
 * policy of retry.h, Google error bodies turned into struct tpu_err, one
 * token refresh and replay on 401, the redacted --log-http trace and
 * --dry-run.
 *
 * Transport rules: https only, plain http only to loopback hosts (or, with
 * HTTP_F_ALLOW_HTTP, to the metadata server); TLS verification is always
 * on, with the CA bundle from http_opts.ca_file or the system default.
 * libcurl itself ignores CURL_CA_BUNDLE and SSL_CERT_FILE (only the curl
 * program reads CURL_CA_BUNDLE): tpuctl reads TPUCTL_CA_BUNDLE, --ca-file
 * and core/custom_ca_certs_file instead (see ctx.c).  Redirects are never
 * followed.  Proxies come from libcurl's own environment rules:
 * https_proxy/HTTPS_PROXY for https URLs, http_proxy (lowercase only) for
 * http, no_proxy/NO_PROXY to bypass; proxy credentials in those URLs are
 * used but never printed.
 */
#ifndef TPUCTL_HTTP_H
#define TPUCTL_HTTP_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "buf.h"
#include "err.h"
#include "retry.h"

struct http;

struct http_opts {
	const char *ca_file;       /* PEM bundle; NULL: the system's */
	int log_http;              /* redacted trace on trace_fp */
	int dry_run;               /* mutating calls printed on dry_run_fp */
	FILE *trace_fp;            /* NULL: stderr */
	FILE *dry_run_fp;          /* NULL: stdout */
	long connect_timeout_s;    /* 0: 10 s */
	long stall_timeout_s;      /* below 1 byte/s for this long: 0 = 30 s */
	struct retry_policy retry; /* zeroed: retry_policy_default */
};

/*
 * Where bearer tokens come from (auth.c provides one): fill *token with a
 * string the caller wipes and frees (xfree_secret); force asks for a fresh
 * token, not a cached one.  Returns 0 or a negative errc with err set.
 */
typedef int (*http_token_fn)(
    void *arg, int force, char **token, struct tpu_err *);

enum http_flags {
	HTTP_F_IDEMPOTENT = (1 << 0), /* safe to retry after bytes were sent */
	HTTP_F_NOAUTH = (1 << 1),   /* no Authorization from the token source */
	HTTP_F_NODRYRUN = (1 << 2), /* sent even with --dry-run (token calls) */
	HTTP_F_ALLOW_HTTP = (1 << 3), /* http to any host (metadata server) */
	HTTP_F_NO_CONNECT_RETRY =
	    (1 << 4), /* a failed connect is final (probes) */
	/* sent at most once: on a connection of its own, since libcurl
	 * silently re-sends a request whose reused connection died before
	 * the reply ("Connection died, retrying a fresh connect"), which a
	 * mutation that is not idempotent (a create) must never be */
	HTTP_F_ONCE = (1 << 5),
};

struct http_request {
	const char *method; /* "GET", "POST", ... */
	const char *url;
	const char *body; /* NULL: no body (or read_cb) */
	size_t body_len;
	const char *content_type;   /* NULL: application/json with a body */
	const char *const *headers; /* extra "Name: value", NULL-ended */
	const char *bearer;         /* explicit token instead of the source */
	int flags;                  /* enum http_flags */
	size_t max_response;        /* cap on the buffered body; 0: 64 MiB */
	int64_t deadline_ms;        /* 0: http_set_deadline's value */
	int max_attempts;           /* 0: the policy's */
	long connect_timeout_s;     /* 0: the handle's */
	const int *accept_status;   /* non-2xx statuses that are success,
	                               0-terminated (308 for resumable uploads) */
	/* streaming upload: body from read_cb, upload_size bytes (-1 unknown)
	 */
	size_t (*read_cb)(char *, size_t, size_t, void *); /* as curl's */
	void *read_arg;
	int64_t upload_size;
	/*
	 * Move read_cb's source to byte offset of the body (libcurl rewinds
	 * a streamed body after a redirect or when a reused connection broke
	 * before the request went out); 0 on success.  NULL: libcurl cannot
	 * rewind and such an attempt fails with CURLE_SEND_FAIL_REWIND.
	 */
	int (*seek_cb)(void *read_arg, int64_t offset);
	/* streaming download: a 2xx body goes to write_cb, not resp->body;
	   return n to continue, anything else aborts the transfer */
	size_t (*write_cb)(const char *, size_t, void *);
	void *write_arg;
	/*
	 * Called before each retry: rewind the upload source, query a
	 * resumable session, adjust headers ...; set *progressed to 1 when
	 * the transfer moved forward, which resets the attempt counter (R3).
	 * A non-zero return stops the retries with that error.
	 */
	int (*before_retry)(void *arg, int *progressed, struct tpu_err *);
	void *retry_arg;
};

struct http_response {
	int status;         /* last HTTP status; 0 if none (or dry run) */
	int attempts;       /* attempts made, replays included */
	int dry_run;        /* 1: printed, not sent */
	struct buf body;    /* the final response's body (capped) */
	struct buf headers; /* the final response's header lines */
};

/* curl_global_init once (call from main before any thread; idempotent). */
void http_global_init(void);

/* A handle; opts is copied (strings are borrowed). NULL with err set. */
struct http *http_new(const struct http_opts *, struct tpu_err *);
void http_free(struct http *);

/* The token source for requests without HTTP_F_NOAUTH or a bearer. */
void http_set_token_source(struct http *, http_token_fn, void *);

/* The overall deadline of each call (the command's --timeout), in ms. */
void http_set_deadline(struct http *, int64_t ms);

/* 1 if --dry-run is on for this handle. */
int http_dry_run(const struct http *);

void http_response_init(struct http_response *);
void http_response_release(struct http_response *);

/*
 * The value of the first header called name in the final response (case
 * insensitive), trimmed; NULL when absent.  Caller frees.
 */
char *http_response_header(const struct http_response *, const char *name);

/*
 * Perform a request with the retry policy.  Returns 0 when the final
 * status is 2xx or in accept_status (resp->status says which), else a
 * negative errc with err filled (http_status, api_status, the server's
 * message): TPU_E_TRANSIENT when retries or the deadline ran out,
 * TPU_E_INTERRUPTED on SIGINT, the mapped code otherwise.  resp keeps the
 * last reply's status, headers and body either way.
 */
int http_request(struct http *, const struct http_request *,
    struct http_response *, struct tpu_err *);

/*
 * Turn an error reply into err: Google's {"error": {"code", "message",
 * "status"}}, OAuth's {"error": "invalid_grant", "error_description"}, or a
 * non-JSON body (an HTML 502 from a proxy), named by its status.  The
 * message is sanitised (no control characters) and redacted.  Returns the
 * errc (from the API status when known, else tpu_errc_from_http).
 */
int http_error_from_body(
    int status, const char *body, size_t len, struct tpu_err *);

/* "Not Found" for 404 ...; "" when unknown. */
const char *http_reason(int status);

#endif
