/*
 * The per-invocation context handed to every command: resolved
 * configuration, output settings and the lazily created service clients.
 * cmd/main.c fills it from the global flags; commands read it.
 *
 * Layer: the top of src/, above the services it opens (http, auth, gcs,
 * endpoint, config).  Only cmd/ and tests include this header; no other
 * src/ module does (they take the handle or field they need, e.g.
 * gcs_open takes a base URL, http options and a token source).
 */
#ifndef TPUCTL_CTX_H
#define TPUCTL_CTX_H

#include "err.h"
#include "output.h"

struct config;
struct http;
struct auth;
struct gcs;

struct tpu_ctx {
	const char *prog;   /* "tpuctl" */
	struct config *cfg; /* flags > env > tpuctl file > gcloud */
	struct output out;  /* --format, stdout */
	int verbose;        /* -v count */
	int quiet;          /* --quiet: no prompts, no progress */
	int log_http;       /* --log-http: redacted trace on stderr */
	int dry_run;        /* --dry-run: print requests, send none */
	int interactive;    /* stdin and stderr are terminals */
	struct http *http;  /* created on first use; see ctx.c */
	struct auth *auth;  /* created on first use; see ctx.c */
};

/*
 * The HTTP client, created on first use from the configuration (CA
 * bundle, timeouts, --log-http, --dry-run), with the credential chain as
 * its token source.  Returns 0 or a negative errc (see ctx.c).
 */
int ctx_http(struct tpu_ctx *, struct http **, struct tpu_err *);
/* The credential chain, created on first use. */
int ctx_auth(struct tpu_ctx *, struct auth **, struct tpu_err *);
/*
 * A Cloud Storage handle (gcs.h) for the storage endpoint of the
 * configuration, with the http settings of ctx_http and the credential
 * chain as its token source.  The caller closes it before ctx_release.
 */
int ctx_gcs_open(struct tpu_ctx *, struct gcs **, struct tpu_err *);
/* The CA bundle in use (flag > TPUCTL_CA_BUNDLE > config), or NULL. */
const char *ctx_ca_file(const struct tpu_ctx *);
/* Free ctx->http and ctx->auth; called by main before config_free. */
void ctx_release(struct tpu_ctx *);

#endif
