/*
 * "tpuctl api": an authenticated raw call to the TPU API (default) or the
 * Cloud Storage JSON API through the full HTTP stack (retries, tracing,
 * dry run), like "gh api".  The JSON reply is printed through
 * output_emit.
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <cjson/cJSON.h>

#include "buf.h"
#include "cmd.h"
#include "ctx.h"
#include "endpoint.h"
#include "fsutil.h"
#include "http.h"
#include "json.h"
#include "output.h"
#include "redact.h"
#include "retry.h"
#include "util.h"
#include "xmalloc.h"

#define API_DATA_MAX (16u << 20)

static const char *const methods[] = { "GET", "POST", "PUT", "PATCH", "DELETE",
	"HEAD" };

/* Read --data: inline JSON, @file or @- (stdin); checked as JSON. */
static int
load_data(const char *arg, struct buf *b, struct tpu_err *err)
{
	cJSON *j;
	int rc = 0;

	if (arg[0] == '@') {
		if (strcmp(arg, "@-") == 0) {
			char chunk[8192];
			size_t n;

			while ((n = fread(chunk, 1, sizeof chunk, stdin)) > 0)
				if (buf_append(b, chunk, n) != 0)
					return tpu_error(err, TPU_E_USAGE,
					    "--data from stdin is larger than "
					    "%u bytes",
					    API_DATA_MAX);
		} else if ((rc = fsutil_read_file(arg + 1, 0, b, NULL, err)) !=
		           0) {
			if (rc == TPU_E_NOTFOUND)
				err->code = TPU_E_USAGE;
			return tpu_error_prefix(err, "--data");
		}
	} else
		buf_puts(b, arg);
	if ((j = json_parse(b->data, b->len, "--data", err)) == NULL) {
		err->code = TPU_E_USAGE;
		return TPU_E_USAGE;
	}
	cJSON_Delete(j);
	return 0;
}

/* The URL for path: relative to the service base, or a full URL that
 * must be on that base. */
static int
make_url(const char *base, const char *service, const char *path, char **url,
    struct tpu_err *err)
{
	const unsigned char *p;
	char *r = redact_str(path);
	int rc = 0;

	for (p = (const unsigned char *)path; *p != '\0'; p++)
		if (*p <= 0x20 || *p == 0x7f) {
			rc = tpu_error(err, TPU_E_USAGE,
			    "invalid path '%s': no spaces or control "
			    "characters (percent-encode them)",
			    r);
			goto out;
		}
	if (*path == '\0') {
		rc = tpu_error(err, TPU_E_USAGE, "empty path");
		goto out;
	}
	if (strstr(path, "://") != NULL) {
		if (strncmp(path, base, strlen(base)) != 0) {
			rc = tpu_error(err, TPU_E_USAGE,
			    "URL '%s' is not on the configured %s endpoint "
			    "'%s'",
			    r, service, base);
			goto out;
		}
		*url = xstrdup(path);
		goto out;
	}
	*url = endpoint_join(base, path);
out:
	free(r);
	return rc;
}

static int
api_exec(struct tpu_ctx *ctx, int argc, char **argv, struct tpu_err *err)
{
	static const struct option opts[] = {
		{ "data", required_argument, NULL, 'd' },
		{ "idempotent", no_argument, NULL, 'i' },
		{ "method", required_argument, NULL, 'X' },
		{ "service", required_argument, NULL, 's' },
		{ "timeout", required_argument, NULL, 't' },
		{ NULL, 0, NULL, 0 },
	};
	const char *method = NULL, *data = NULL, *service = "tpu";
	struct http_request req;
	struct http_response resp;
	struct http *h;
	struct buf body;
	char *base = NULL, *url = NULL;
	cJSON *j = NULL;
	long long secs = 0;
	int ch, rc = 0, idem = 0;
	size_t i;

	buf_init(&body, API_DATA_MAX);
	http_response_init(&resp);
	while ((ch = getopt_long(argc, argv, "+", opts, NULL)) != -1) {
		switch (ch) {
		case 'd':
			data = optarg;
			break;
		case 'i':
			idem = 1;
			break;
		case 'X':
			method = optarg;
			break;
		case 's':
			service = optarg;
			break;
		case 't':
			if ((rc = tpu_parse_duration(
			         "--timeout", optarg, &secs, err)) != 0)
				goto out;
			if (secs <= 0) {
				rc = tpu_error(err, TPU_E_USAGE,
				    "invalid --timeout '%s': must be more "
				    "than 0 s",
				    optarg);
				goto out;
			}
			break;
		default:
			rc = cmd_bad_option(argv, ch, err);
			goto out;
		}
	}
	if ((rc = cmd_check_operands(
	         &cmd_api_entry, argc - optind, argv + optind, err)) != 0)
		goto out;
	if (method == NULL)
		method = data != NULL ? "POST" : "GET";
	for (i = 0; i < nitems(methods); i++)
		if (strcasecmp(method, methods[i]) == 0)
			break;
	if (i == nitems(methods)) {
		rc = tpu_error(err, TPU_E_USAGE,
		    "invalid --method '%s': use GET, POST, PUT, PATCH, DELETE "
		    "or HEAD",
		    method);
		goto out;
	}
	method = methods[i];
	if (strcmp(service, "tpu") == 0)
		base = endpoint_base(ctx->cfg, ENDPOINT_TPU, err);
	else if (strcmp(service, "storage") == 0)
		base = endpoint_base(ctx->cfg, ENDPOINT_STORAGE, err);
	else {
		rc = tpu_error(err, TPU_E_USAGE,
		    "invalid --service '%s': use tpu or storage", service);
		goto out;
	}
	if (base == NULL) {
		rc = err->code;
		goto out;
	}
	if ((rc = make_url(base, service, argv[optind], &url, err)) != 0)
		goto out;
	if (data != NULL && (rc = load_data(data, &body, err)) != 0)
		goto out;
	if ((rc = ctx_http(ctx, &h, err)) != 0)
		goto out;
	if (secs > 0)
		http_set_deadline(h, secs * 1000);
	retry_install_signals();

	memset(&req, 0, sizeof req);
	req.method = method;
	req.url = url;
	if (data != NULL) {
		req.body = body.data;
		req.body_len = body.len;
	}
	req.flags = idem || strcmp(method, "GET") == 0 ||
	                    strcmp(method, "HEAD") == 0 ||
	                    strcmp(method, "DELETE") == 0
	                ? HTTP_F_IDEMPOTENT
	                : 0;
	if ((rc = http_request(h, &req, &resp, err)) != 0) {
		if (err->http_status != 0) {
			char *r = redact_str(argv[optind]);

			tpu_error_prefix(err, "%s %s", method, r);
			free(r);
		}
		goto out;
	}
	if (resp.dry_run || resp.body.len == 0)
		goto out;
	if ((j = json_parse(resp.body.data, resp.body.len, "reply", err)) ==
	    NULL) {
		char *r = redact_str(argv[optind]);

		rc = tpu_error(err, TPU_E_API,
		    "%s %s: HTTP %d with a reply that is not JSON", method, r,
		    resp.status);
		free(r);
		goto out;
	}
	rc = output_emit(&ctx->out, j, NULL, err);
out:
	cJSON_Delete(j);
	http_response_release(&resp);
	buf_release(&body);
	free(base);
	free(url);
	return rc;
}

const struct cmd_entry cmd_api_entry = {
	.name = "api",
	.alias = NULL,
	.usage = "api [--idempotent] [--data json|@file] [--method method] "
	         "[--service tpu|storage] [--timeout duration] path",
	.summary = "make an authenticated raw call to the TPU or storage API",
	.min_args = 1,
	.max_args = 1,
	.flags = CMD_NEEDS_AUTH,
	.exec = api_exec,
};
