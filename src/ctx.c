/*
 * Lazy creation of the per-invocation service clients (ctx->http,
 * ctx->auth, Cloud Storage handles) from the configuration, and their
 * release.  The top of src/ (see ctx.h): it includes the services, none
 * of them includes ctx.h.
 *
 * CA bundle, highest first: --ca-file (core/custom_ca_certs_file as a
 * flag), TPUCTL_CA_BUNDLE, core/custom_ca_certs_file from the
 * environment or config files, then the system bundle.  libcurl ignores
 * CURL_CA_BUNDLE (only the curl program reads it) and so does tpuctl; a
 * warning says so when it is set to another file than the one in use.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "auth.h"
#include "config.h"
#include "ctx.h"
#include "endpoint.h"
#include "gcs.h"
#include "http.h"
#include "log.h"
#include "util.h"
#include "xmalloc.h"

static long
cfg_num(const struct config *c, const char *key, long dflt, long min, long max,
    struct tpu_err *err, int *rc)
{
	const char *v = config_get(c, key), *errstr, *env;
	long long n;

	/* until the config module knows the http/ keys: TPUCTL_HTTP_... */
	if (v == NULL && (env = strchr(key, '/')) != NULL) {
		char name[64];
		size_t i, k = 0;

		for (i = 0; key[i] != '\0' && k + 8 < sizeof name; i++)
			name[k++] = key[i] == '/'
			                ? '_'
			                : (char)(key[i] >= 'a' && key[i] <= 'z'
			                             ? key[i] - 'a' + 'A'
			                             : key[i]);
		name[k] = '\0';
		{
			char full[80];

			snprintf(full, sizeof full, "TPUCTL_%s", name);
			v = getenv(full);
		}
	}

	if (v == NULL || *v == '\0')
		return dflt;
	n = tpu_strtonum(v, min, max, &errstr);
	if (errstr != NULL) {
		*rc = tpu_error(err, TPU_E_USAGE,
		    "invalid %s '%s': must be an integer from %ld to %ld", key,
		    v, min, max);
		return dflt;
	}
	return (long)n;
}

static int
token_cb(void *arg, int force, char **token, struct tpu_err *err)
{
	struct tpu_ctx *ctx = arg;
	struct auth *a;
	int rc;

	if ((rc = ctx_auth(ctx, &a, err)) != 0)
		return rc;
	return auth_token(a, force, token, err);
}

const char *
ctx_ca_file(const struct tpu_ctx *ctx)
{
	const char *v = config_get(ctx->cfg, "core/custom_ca_certs_file");
	const char *env = getenv("TPUCTL_CA_BUNDLE");

	if (v != NULL && *v != '\0' &&
	    config_layer_of(ctx->cfg, "core/custom_ca_certs_file") ==
	        CONFIG_FLAG)
		return v;
	if (env != NULL && *env != '\0')
		return env;
	if (v != NULL && *v != '\0')
		return v;
	return NULL;
}

/* The http options of the configuration (validated), shared by every
 * handle of this invocation. */
static int
http_opts_of(struct tpu_ctx *ctx, struct http_opts *o, struct tpu_err *err)
{
	const char *ca, *cb;
	long att;
	int rc = 0;

	memset(o, 0, sizeof *o);
	retry_policy_default(&o->retry);
	ca = ctx_ca_file(ctx);
	if (ca != NULL && access(ca, R_OK) != 0)
		return tpu_error(err, TPU_E_USAGE,
		    "cannot read the CA bundle '%s': %s", ca, strerror(errno));
	if ((cb = getenv("CURL_CA_BUNDLE")) != NULL && *cb != '\0' &&
	    (ca == NULL || strcmp(ca, cb) != 0) &&
	    ctx->http == NULL /* said once */)
		log_warn("CURL_CA_BUNDLE is ignored by tpuctl (libcurl does "
		         "not read it): use --ca-file or TPUCTL_CA_BUNDLE");
	o->ca_file = ca;
	o->log_http = ctx->log_http;
	o->dry_run = ctx->dry_run;
	o->dry_run_fp = ctx->out.fp;
	o->connect_timeout_s =
	    cfg_num(ctx->cfg, "http/connect_timeout", 10, 1, 600, err, &rc);
	o->stall_timeout_s =
	    cfg_num(ctx->cfg, "http/stall_timeout", 30, 1, 3600, err, &rc);
	att = cfg_num(ctx->cfg, "http/max_attempts", 10, 1, 1000, err, &rc);
	if (rc != 0)
		return rc;
	o->retry.max_attempts = (int)att;
	return 0;
}

int
ctx_http(struct tpu_ctx *ctx, struct http **out, struct tpu_err *err)
{
	struct http_opts o;
	int rc;

	if (ctx->http != NULL) {
		*out = ctx->http;
		return 0;
	}
	if ((rc = http_opts_of(ctx, &o, err)) != 0)
		return rc;
	if ((ctx->http = http_new(&o, err)) == NULL)
		return err->code;
	http_set_token_source(ctx->http, token_cb, ctx);
	*out = ctx->http;
	return 0;
}

int
ctx_auth(struct tpu_ctx *ctx, struct auth **out, struct tpu_err *err)
{
	struct auth_opts o;
	struct http *h;
	char *iam = NULL, *tok = NULL;
	int rc;

	if (ctx->auth != NULL) {
		*out = ctx->auth;
		return 0;
	}
	if ((rc = ctx_http(ctx, &h, err)) != 0)
		return rc;
	memset(&o, 0, sizeof o);
	o.access_token_file = config_get(ctx->cfg, "auth/access_token_file");
	o.impersonate =
	    config_get(ctx->cfg, "auth/impersonate_service_account");
	if ((iam = endpoint_base(ctx->cfg, ENDPOINT_IAMCREDENTIALS, err)) ==
	        NULL ||
	    (tok = endpoint_base(ctx->cfg, ENDPOINT_OAUTH2_TOKEN, err)) ==
	        NULL) {
		free(iam);
		return err->code;
	}
	o.iam_base = iam;
	o.token_uri = tok;
	ctx->auth = auth_new(h, &o);
	free(iam);
	free(tok);
	*out = ctx->auth;
	return 0;
}

int
ctx_gcs_open(struct tpu_ctx *ctx, struct gcs **out, struct tpu_err *err)
{
	struct http_opts o;
	struct http *h;
	char *base;
	int rc;

	*out = NULL;
	if ((base = endpoint_base(ctx->cfg, ENDPOINT_STORAGE, err)) == NULL)
		return err->code;
	/* ctx->http first: it validates the CA bundle and http/ settings */
	if ((rc = ctx_http(ctx, &h, err)) == 0 &&
	    (rc = http_opts_of(ctx, &o, err)) == 0)
		rc = gcs_open(base, &o, token_cb, ctx, out, err);
	free(base);
	return rc;
}

void
ctx_release(struct tpu_ctx *ctx)
{
	auth_free(ctx->auth);
	ctx->auth = NULL;
	http_free(ctx->http);
	ctx->http = NULL;
}
