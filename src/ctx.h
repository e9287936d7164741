/*
 * The per-invocation context handed to every command: resolved
 * configuration, output settings and the lazily created service clients.
 * cmd/main.c fills it from the global flags; commands read it.
 */
#ifndef TPUCTL_CTX_H
#define TPUCTL_CTX_H

#include "output.h"

struct config;
struct http;
struct auth;

struct tpu_ctx {
	const char *prog;	/* "tpuctl" */
	struct config *cfg;	/* flags > env > tpuctl file > gcloud */
	struct output out;	/* --format, stdout */
	int verbose;		/* -v count */
	int quiet;		/* --quiet: no prompts, no progress */
	int log_http;		/* --log-http: redacted trace on stderr */
	int dry_run;		/* --dry-run: print requests, send none */
	int interactive;	/* stdin and stderr are terminals */
	struct http *http;	/* created on first use; see ctx.c */
	struct auth *auth;	/* created on first use; see ctx.c */
};

#endif
