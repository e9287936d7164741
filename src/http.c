/*
 * The HTTP stack (see http.h): one reused libcurl easy handle, the retry
 * loop, error bodies, the redacted trace and dry runs.
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include <cjson/cJSON.h>
#include <curl/curl.h>
#include <openssl/rand.h>

#include "endpoint.h"
#include "http.h"
#include "log.h"
#include "redact.h"
#include "util.h"
#include "version.h"
#include "xmalloc.h"

#define HTTP_DEFAULT_MAX (64u << 20)
#define HTTP_HEADERS_MAX (256u << 10)
#define HTTP_TRACE_MAX (256u << 10)

struct http {
	CURL *curl;
	struct http_opts opts;
	int64_t deadline_ms;
	http_token_fn token_fn;
	void *token_arg;
	char *token; /* the current bearer token (a secret) */
	char errbuf[CURL_ERROR_SIZE];
	/* trace state for one attempt */
	struct buf trace_out, trace_in;
	const char *secret; /* the request's upload session id, or NULL */
};

/* Per-attempt transfer state given to the callbacks. */
#define UPLOAD_BUFSIZE (1024L * 1024)  /* libcurl's upload buffer */
#define DOWNLOAD_BUFSIZE (512L * 1024) /* libcurl's receive buffer */

struct xfer {
	struct http *h;
	const struct http_request *req;
	struct http_response *resp;
	int overflow;  /* the body cap was hit */
	int streaming; /* body goes to req->write_cb */
	int aborted;   /* write_cb refused */
};

static int global_done;

void
http_global_init(void)
{
	if (!global_done) {
		curl_global_init(CURL_GLOBAL_DEFAULT);
		global_done = 1;
	}
}

struct http *
http_new(const struct http_opts *opts, struct tpu_err *err)
{
	struct http *h;

	http_global_init();
	h = xcalloc(1, sizeof *h);
	h->opts = *opts;
	if (h->opts.retry.initial_ms == 0 && h->opts.retry.cap_ms == 0)
		retry_policy_default(&h->opts.retry);
	if (h->opts.connect_timeout_s <= 0)
		h->opts.connect_timeout_s = 10;
	if (h->opts.stall_timeout_s <= 0)
		h->opts.stall_timeout_s = 30;
	h->deadline_ms = h->opts.retry.deadline_ms;
	if ((h->curl = curl_easy_init()) == NULL) {
		free(h);
		tpu_error(
		    err, TPU_E_INTERNAL, "cannot create a libcurl handle");
		return NULL;
	}
	buf_init(&h->trace_out, HTTP_TRACE_MAX);
	buf_init(&h->trace_in, HTTP_TRACE_MAX);
	return h;
}

void
http_free(struct http *h)
{
	if (h == NULL)
		return;
	curl_easy_cleanup(h->curl);
	xfree_secret(h->token);
	buf_release_secret(&h->trace_out);
	buf_release_secret(&h->trace_in);
	free(h);
}

void
http_set_token_source(struct http *h, http_token_fn fn, void *arg)
{
	h->token_fn = fn;
	h->token_arg = arg;
}

void
http_set_deadline(struct http *h, int64_t ms)
{
	h->deadline_ms = ms;
}

int
http_dry_run(const struct http *h)
{
	return h->opts.dry_run;
}

void
http_response_init(struct http_response *r)
{
	memset(r, 0, sizeof *r);
	buf_init(&r->body, HTTP_DEFAULT_MAX);
	buf_init(&r->headers, HTTP_HEADERS_MAX);
}

void
http_response_release(struct http_response *r)
{
	buf_release_secret(&r->body);
	buf_release(&r->headers);
}

char *
http_response_header(const struct http_response *r, const char *name)
{
	const char *p = r->headers.data, *e, *v;
	size_t n = strlen(name);

	while (p != NULL && *p != '\0') {
		e = strchr(p, '\n');
		if (e == NULL)
			e = p + strlen(p);
		if ((size_t)(e - p) > n && strncasecmp(p, name, n) == 0 &&
		    p[n] == ':') {
			v = p + n + 1;
			while (v < e && (*v == ' ' || *v == '\t'))
				v++;
			while (e > v && (e[-1] == '\r' || e[-1] == ' ' ||
			                    e[-1] == '\t' || e[-1] == '\n'))
				e--;
			return xstrndup(v, (size_t)(e - v));
		}
		p = *e == '\0' ? e : e + 1;
	}
	return NULL;
}

const char *
http_reason(int status)
{
	static const struct {
		int code;
		const char *text;
	} t[] = {
		{ 200, "OK" },
		{ 204, "No Content" },
		{ 308, "Resume Incomplete" },
		{ 400, "Bad Request" },
		{ 401, "Unauthorized" },
		{ 403, "Forbidden" },
		{ 404, "Not Found" },
		{ 407, "Proxy Authentication Required" },
		{ 408, "Request Timeout" },
		{ 409, "Conflict" },
		{ 410, "Gone" },
		{ 412, "Precondition Failed" },
		{ 429, "Too Many Requests" },
		{ 500, "Internal Server Error" },
		{ 502, "Bad Gateway" },
		{ 503, "Service Unavailable" },
		{ 504, "Gateway Timeout" },
	};
	size_t i;

	for (i = 0; i < nitems(t); i++)
		if (t[i].code == status)
			return t[i].text;
	return "";
}

/* Copy s into dst (size n) without control characters, redacted. */
static void
clean_copy(char *dst, size_t n, const char *s, size_t len)
{
	char *r = redact_text(s, len);
	size_t i, j = 0;

	for (i = 0; r[i] != '\0' && j + 1 < n; i++) {
		unsigned char c = (unsigned char)r[i];

		if (c == '\n' || c == '\r' || c == '\t')
			c = ' ';
		else if (c < 0x20 || c == 0x7f)
			c = '?';
		dst[j++] = (char)c;
	}
	dst[j] = '\0';
	free(r);
}

static enum tpu_errc
errc_from_api_status(const char *s, int status)
{
	static const struct {
		const char *name;
		enum tpu_errc code;
	} t[] = {
		{ "INVALID_ARGUMENT", TPU_E_INVALID },
		{ "FAILED_PRECONDITION", TPU_E_PRECONDITION },
		{ "ALREADY_EXISTS", TPU_E_CONFLICT },
		{ "ABORTED", TPU_E_CONFLICT },
		{ "NOT_FOUND", TPU_E_NOTFOUND },
		{ "PERMISSION_DENIED", TPU_E_PERMISSION },
		{ "UNAUTHENTICATED", TPU_E_AUTH },
		{ "invalid_grant", TPU_E_AUTH },
		{ "invalid_client", TPU_E_AUTH },
		{ "unauthorized_client", TPU_E_AUTH },
		{ "access_denied", TPU_E_PERMISSION },
		{ "RESOURCE_EXHAUSTED", TPU_E_TRANSIENT },
		{ "UNAVAILABLE", TPU_E_TRANSIENT },
	};
	enum tpu_errc c = tpu_errc_from_http(status);
	size_t i;

	/* the HTTP status wins for retryable ones, the API status refines
	 * the 4xx family */
	if (status >= 500 || status == 408 || status == 429)
		return c;
	for (i = 0; i < nitems(t); i++)
		if (strcmp(s, t[i].name) == 0)
			return t[i].code;
	if (c == TPU_OK)
		return TPU_E_API;
	return c;
}

int
http_error_from_body(
    int status, const char *body, size_t len, struct tpu_err *err)
{
	cJSON *root = NULL;
	const cJSON *e, *m, *st;
	const char *end = NULL, *reason = http_reason(status);
	char msg[512], api[48];
	enum tpu_errc code;

	msg[0] = '\0';
	api[0] = '\0';
	if (len > 0 && body != NULL &&
	    (body[0] == '{' || isspace((unsigned char)body[0])))
		root = cJSON_ParseWithLengthOpts(body, len, &end, 0);
	if (root != NULL && cJSON_IsObject(root)) {
		e = cJSON_GetObjectItemCaseSensitive(root, "error");
		if (cJSON_IsObject(e)) {
			m = cJSON_GetObjectItemCaseSensitive(e, "message");
			st = cJSON_GetObjectItemCaseSensitive(e, "status");
			if (cJSON_IsString(m))
				clean_copy(msg, sizeof msg, m->valuestring,
				    strlen(m->valuestring));
			if (cJSON_IsString(st))
				clean_copy(api, sizeof api, st->valuestring,
				    strlen(st->valuestring));
		} else if (cJSON_IsString(e)) {
			/* OAuth 2.0 (RFC 6749 5.2) */
			m = cJSON_GetObjectItemCaseSensitive(
			    root, "error_description");
			clean_copy(api, sizeof api, e->valuestring,
			    strlen(e->valuestring));
			if (cJSON_IsString(m)) {
				char d[400];

				clean_copy(d, sizeof d, m->valuestring,
				    strlen(m->valuestring));
				snprintf(msg, sizeof msg, "%s: %s", api, d);
			} else
				snprintf(msg, sizeof msg, "%s", api);
		}
	}
	cJSON_Delete(root);
	code = errc_from_api_status(api, status);
	err->http_status = status;
	snprintf(err->api_status, sizeof err->api_status, "%s", api);
	if (msg[0] != '\0') {
		if (api[0] != '\0' && strstr(msg, api) != msg)
			return tpu_error(
			    err, code, "%s (HTTP %d %s)", msg, status, api);
		return tpu_error(err, code, "%s (HTTP %d)", msg, status);
	}
	if (len == 0)
		return tpu_error(err, code, "HTTP %d%s%s with an empty body",
		    status, *reason ? " " : "", reason);
	{
		/* not a Google error: name the status and show the start */
		char head[120];
		size_t i, n = len < 200 ? len : 200;
		const char *kind = "non-JSON";

		for (i = 0; i < n && isspace((unsigned char)body[i]); i++)
			;
		if (i < n && body[i] == '<')
			kind = "HTML";
		clean_copy(head, sizeof head, body + i, n - i);
		return tpu_error(err, code,
		    "HTTP %d%s%s with a %s body (%zu bytes): %s", status,
		    *reason ? " " : "", reason, kind, len, head);
	}
}

/* --- trace ------------------------------------------------------------ */

static FILE *
trace_fp(const struct http *h)
{
	return h->opts.trace_fp != NULL ? h->opts.trace_fp : stderr;
}

static int
is_text(const char *s, size_t n)
{
	size_t i, bad = 0;

	for (i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];

		if (c < 0x20 && c != '\n' && c != '\r' && c != '\t')
			bad++;
	}
	return bad == 0;
}

/* Print redacted text, each line prefixed. */
static void
trace_lines(struct http *h, const char *prefix, const char *s, size_t n)
{
	FILE *fp = trace_fp(h);
	char *r, *p, *e;

	if (n == 0)
		return;
	if (!is_text(s, n)) {
		fprintf(fp, "%s[%zu bytes of binary data]\n", prefix, n);
		return;
	}
	r = redact_text(s, n);
	if (h->secret != NULL && strstr(r, h->secret) != NULL) {
		char *r2 = redact_secret(r, h->secret);

		free(r);
		r = r2;
	}
	for (p = r; *p != '\0'; p = e) {
		e = strchr(p, '\n');
		if (e == NULL)
			e = p + strlen(p);
		{
			size_t l = (size_t)(e - p);

			if (l > 0 && p[l - 1] == '\r')
				l--;
			if (l > 0 || *e == '\n')
				fprintf(fp, "%s%.*s\n", prefix, (int)l, p);
		}
		if (*e == '\n')
			e++;
	}
	free(r);
}

static void
trace_flush_body(struct http *h, struct buf *b, const char *prefix)
{
	if (b->len > 0) {
		trace_lines(h, prefix, b->data, b->len);
		if (b->len == b->max)
			fprintf(trace_fp(h), "%s[trace truncated]\n", prefix);
	}
	if (b->len > 0)
		memset(b->data, 0, b->len);
	buf_clear(b);
}

static int
debug_cb(CURL *c, curl_infotype type, char *data, size_t n, void *arg)
{
	struct http *h = arg;
	size_t room;

	(void)c;
	switch (type) {
	case CURLINFO_TEXT:
		trace_lines(h, "* ", data, n);
		break;
	case CURLINFO_HEADER_OUT:
		trace_lines(h, "> ", data, n);
		break;
	case CURLINFO_DATA_OUT:
		room = h->trace_out.max - h->trace_out.len;
		buf_append(&h->trace_out, data, n < room ? n : room);
		break;
	case CURLINFO_HEADER_IN:
		trace_flush_body(h, &h->trace_out, "> ");
		trace_lines(h, "< ", data, n);
		break;
	case CURLINFO_DATA_IN:
		room = h->trace_in.max - h->trace_in.len;
		buf_append(&h->trace_in, data, n < room ? n : room);
		break;
	default:
		break;
	}
	return 0;
}

/* --- callbacks ---------------------------------------------------------- */

static size_t
header_cb(char *data, size_t size, size_t nmemb, void *arg)
{
	struct xfer *x = arg;
	size_t n = size * nmemb;

	if (n >= 5 && strncmp(data, "HTTP/", 5) == 0)
		buf_clear(
		    &x->resp->headers); /* a new response (100, CONNECT) */
	buf_append(&x->resp->headers, data, n);
	return n;
}

static size_t
write_cb(char *data, size_t size, size_t nmemb, void *arg)
{
	struct xfer *x = arg;
	size_t n = size * nmemb;
	long status = 0;

	if (x->req->write_cb != NULL) {
		curl_easy_getinfo(x->h->curl, CURLINFO_RESPONSE_CODE, &status);
		if (status >= 200 && status < 300) {
			x->streaming = 1;
			if (x->req->write_cb(data, n, x->req->write_arg) != n) {
				x->aborted = 1;
				return 0;
			}
			return n;
		}
	}
	if (buf_append(&x->resp->body, data, n) != 0) {
		x->overflow = 1;
		return 0;
	}
	return n;
}

/* libcurl rewinds a streamed body (origin is always SEEK_SET). */
static int
seek_cb(void *arg, curl_off_t off, int origin)
{
	struct xfer *x = arg;

	if (origin != SEEK_SET || off < 0)
		return CURL_SEEKFUNC_CANTSEEK;
	log_debug("%s: rewinding the request body to byte %lld", x->req->method,
	    (long long)off);
	return x->req->seek_cb(x->req->read_arg, (int64_t)off) == 0
	           ? CURL_SEEKFUNC_OK
	           : CURL_SEEKFUNC_FAIL;
}

static int
xferinfo_cb(
    void *arg, curl_off_t dt, curl_off_t dn, curl_off_t ut, curl_off_t un)
{
	(void)arg;
	(void)dt;
	(void)dn;
	(void)ut;
	(void)un;
	return retry_interrupted != 0;
}

/* --- one request ------------------------------------------------------- */

static void
make_uuid(char out[37])
{
	unsigned char b[16];
	static const char hex[] = "0123456789abcdef";
	size_t i, j = 0;

	if (RAND_bytes(b, sizeof b) != 1)
		memset(b, 0x5a, sizeof b);
	b[6] = (unsigned char)((b[6] & 0x0f) | 0x40);
	b[8] = (unsigned char)((b[8] & 0x3f) | 0x80);
	for (i = 0; i < 16; i++) {
		if (i == 4 || i == 6 || i == 8 || i == 10)
			out[j++] = '-';
		out[j++] = hex[b[i] >> 4];
		out[j++] = hex[b[i] & 15];
	}
	out[j] = '\0';
}

static int
is_read_method(const char *m)
{
	return strcmp(m, "GET") == 0 || strcmp(m, "HEAD") == 0;
}

static int
print_dry_run(
    struct http *h, const struct http_request *req, struct tpu_err *err)
{
	FILE *fp = h->opts.dry_run_fp != NULL ? h->opts.dry_run_fp : stdout;
	cJSON *o = cJSON_CreateObject(), *body = NULL;
	char *line = NULL, *red = NULL;
	int rc = 0;

	cJSON_AddBoolToObject(o, "dryRun", 1);
	cJSON_AddStringToObject(o, "method", req->method);
	cJSON_AddStringToObject(o, "url", req->url);
	if (req->body != NULL && req->body_len > 0) {
		body = cJSON_ParseWithLength(req->body, req->body_len);
		if (body != NULL)
			cJSON_AddItemToObject(o, "body", body);
		else if (is_text(req->body, req->body_len)) {
			char *s = xstrndup(req->body, req->body_len);

			cJSON_AddStringToObject(o, "body", s);
			free(s);
		} else
			cJSON_AddNumberToObject(
			    o, "bodyBytes", (double)req->body_len);
	} else if (req->read_cb != NULL)
		cJSON_AddNumberToObject(
		    o, "bodyBytes", (double)req->upload_size);
	line = cJSON_PrintUnformatted(o);
	red = redact_str(line);
	if (fprintf(fp, "%s\n", red) < 0 || fflush(fp) != 0)
		rc = tpu_error(err, TPU_E_IO, "cannot write the dry run");
	cJSON_free(line);
	free(red);
	cJSON_Delete(o);
	return rc;
}

/* Result of one attempt. */
struct attempt {
	CURLcode cc;
	long status;
	long connect_code;
	int overflow, aborted, streaming;
	int64_t retry_after_ms; /* -1: none */
};

static int
get_token(struct http *h, int force, struct tpu_err *err)
{
	char *t = NULL;
	int rc;

	if ((rc = h->token_fn(h->token_arg, force, &t, err)) != 0)
		return rc;
	xfree_secret(h->token);
	h->token = t;
	return 0;
}

static void
perform(struct http *h, const struct http_request *req,
    struct http_response *resp, const char *invocation, int attempt,
    int64_t remaining_ms, struct attempt *a)
{
	CURL *c = h->curl;
	struct curl_slist *hl = NULL;
	struct xfer x;
	char *line;
	const char *const *eh;
	int https = strncasecmp(req->url, "https://", 8) == 0;

	memset(&x, 0, sizeof x);
	x.h = h;
	x.req = req;
	x.resp = resp;
	buf_clear(&resp->body);
	buf_clear(&resp->headers);
	h->errbuf[0] = '\0';

	curl_easy_reset(c);
	curl_easy_setopt(c, CURLOPT_URL, req->url);
	if (req->flags & HTTP_F_ONCE)
		curl_easy_setopt(c, CURLOPT_FRESH_CONNECT, 1L);
	curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(c, CURLOPT_ERRORBUFFER, h->errbuf);
	curl_easy_setopt(c, CURLOPT_PROTOCOLS_STR, https ? "https" : "http");
	curl_easy_setopt(c, CURLOPT_REDIR_PROTOCOLS_STR, "https");
	curl_easy_setopt(c, CURLOPT_FOLLOWLOCATION, 0L);
	curl_easy_setopt(c, CURLOPT_HTTP_VERSION, (long)CURL_HTTP_VERSION_2TLS);
	curl_easy_setopt(c, CURLOPT_SSL_VERIFYPEER, 1L);
	curl_easy_setopt(c, CURLOPT_SSL_VERIFYHOST, 2L);
	if (h->opts.ca_file != NULL)
		curl_easy_setopt(c, CURLOPT_CAINFO, h->opts.ca_file);
	curl_easy_setopt(c, CURLOPT_CONNECTTIMEOUT,
	    req->connect_timeout_s > 0 ? req->connect_timeout_s
	                               : h->opts.connect_timeout_s);
	curl_easy_setopt(c, CURLOPT_LOW_SPEED_LIMIT, 1L);
	curl_easy_setopt(c, CURLOPT_LOW_SPEED_TIME, h->opts.stall_timeout_s);
	if (remaining_ms > 0)
		curl_easy_setopt(c, CURLOPT_TIMEOUT_MS, (long)remaining_ms);
	curl_easy_setopt(c, CURLOPT_TCP_KEEPALIVE, 1L);
	curl_easy_setopt(c, CURLOPT_TCP_NODELAY, 1L);
	curl_easy_setopt(c, CURLOPT_NOPROGRESS, 0L);
	curl_easy_setopt(c, CURLOPT_XFERINFOFUNCTION, xferinfo_cb);
	curl_easy_setopt(c, CURLOPT_HEADERFUNCTION, header_cb);
	curl_easy_setopt(c, CURLOPT_HEADERDATA, &x);
	curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, write_cb);
	curl_easy_setopt(c, CURLOPT_WRITEDATA, &x);
	curl_easy_setopt(c, CURLOPT_USERAGENT, "tpuctl/" TPUCTL_VERSION);
	curl_easy_setopt(c, CURLOPT_ACCEPT_ENCODING, "");
	if (h->opts.log_http) {
		curl_easy_setopt(c, CURLOPT_VERBOSE, 1L);
		curl_easy_setopt(c, CURLOPT_DEBUGFUNCTION, debug_cb);
		curl_easy_setopt(c, CURLOPT_DEBUGDATA, h);
	}

	/* a streamed download reads up to 512 KiB per recv() instead of
	   the 16 KiB default: a sixth of the system calls and callbacks */
	if (req->write_cb != NULL)
		curl_easy_setopt(c, CURLOPT_BUFFERSIZE, DOWNLOAD_BUFSIZE);
	if (strcmp(req->method, "GET") == 0)
		curl_easy_setopt(c, CURLOPT_HTTPGET, 1L);
	else if (strcmp(req->method, "HEAD") == 0)
		curl_easy_setopt(c, CURLOPT_NOBODY, 1L);
	if (req->read_cb != NULL) {
		curl_easy_setopt(c, CURLOPT_UPLOAD, 1L);
		curl_easy_setopt(c, CURLOPT_READFUNCTION, req->read_cb);
		curl_easy_setopt(c, CURLOPT_READDATA, req->read_arg);
		if (req->seek_cb != NULL) {
			curl_easy_setopt(c, CURLOPT_SEEKFUNCTION, seek_cb);
			curl_easy_setopt(c, CURLOPT_SEEKDATA, &x);
		}
		if (req->upload_size >= 0)
			curl_easy_setopt(c, CURLOPT_INFILESIZE_LARGE,
			    (curl_off_t)req->upload_size);
		/* fewer read callbacks and send() calls than the 64 KiB
		   default: a third less CPU time per byte sent */
		if (req->upload_size < 0 || req->upload_size > UPLOAD_BUFSIZE)
			curl_easy_setopt(
			    c, CURLOPT_UPLOAD_BUFFERSIZE, (long)UPLOAD_BUFSIZE);
		if (strcmp(req->method, "PUT") != 0)
			curl_easy_setopt(c, CURLOPT_CUSTOMREQUEST, req->method);
	} else if (req->body != NULL || !is_read_method(req->method)) {
		if (req->body != NULL || strcmp(req->method, "POST") == 0) {
			curl_easy_setopt(c, CURLOPT_POSTFIELDSIZE_LARGE,
			    (curl_off_t)(req->body != NULL ? req->body_len
			                                   : 0));
			curl_easy_setopt(c, CURLOPT_POSTFIELDS,
			    req->body != NULL ? req->body : "");
		}
		if (strcmp(req->method, "POST") != 0)
			curl_easy_setopt(c, CURLOPT_CUSTOMREQUEST, req->method);
	}

	line = xasprintf("x-goog-api-client: gl-c/11 tpuctl/%s "
	                 "gccl-invocation-id/%s gccl-attempt-count/%d",
	    TPUCTL_VERSION, invocation, attempt);
	hl = curl_slist_append(hl, line);
	free(line);
	hl = curl_slist_append(hl, "Expect:");
	if (req->body != NULL || req->read_cb != NULL) {
		line = xasprintf("Content-Type: %s", req->content_type != NULL
		                                         ? req->content_type
		                                         : "application/json");
		hl = curl_slist_append(hl, line);
		free(line);
	}
	{
		const char *tok = req->bearer != NULL            ? req->bearer
		                  : (req->flags & HTTP_F_NOAUTH) ? NULL
		                                                 : h->token;

		if (tok != NULL) {
			line = xasprintf("Authorization: Bearer %s", tok);
			hl = curl_slist_append(hl, line);
			xfree_secret(line);
		}
	}
	for (eh = req->headers; eh != NULL && *eh != NULL; eh++)
		hl = curl_slist_append(hl, *eh);
	curl_easy_setopt(c, CURLOPT_HTTPHEADER, hl);

	a->cc = curl_easy_perform(c);
	a->status = 0;
	a->connect_code = 0;
	curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &a->status);
	curl_easy_getinfo(c, CURLINFO_HTTP_CONNECTCODE, &a->connect_code);
	a->overflow = x.overflow;
	a->aborted = x.aborted;
	a->streaming = x.streaming;
	a->retry_after_ms = -1;
	{
		char *ra = http_response_header(resp, "Retry-After");

		if (ra != NULL) {
			int64_t ms;

			if (retry_parse_after(ra, time(NULL), &ms) == 0)
				a->retry_after_ms = ms;
			else
				log_debug("ignoring Retry-After '%.40s'", ra);
			free(ra);
		}
	}
	if (h->opts.log_http) {
		trace_flush_body(h, &h->trace_out, "> ");
		trace_flush_body(h, &h->trace_in, "< ");
		fflush(trace_fp(h));
	}
	/* the header list held the token: wipe it */
	{
		struct curl_slist *s;

		for (s = hl; s != NULL; s = s->next)
			if (strncasecmp(s->data, "Authorization:", 14) == 0)
				memset(s->data, 0, strlen(s->data));
	}
	curl_slist_free_all(hl);
	resp->status = (int)a->status;
}

/* A clear text for a transport failure. */
static void
describe_curl(struct http *h, const struct attempt *a, char *out, size_t n)
{
	const char *detail =
	    h->errbuf[0] != '\0' ? h->errbuf : curl_easy_strerror(a->cc);
	const char *hint = "";
	char *clean = redact_str(detail);
	size_t l = strlen(clean);

	while (l > 0 && (clean[l - 1] == '\n' || clean[l - 1] == '.'))
		clean[--l] = '\0';
	switch (a->cc) {
	case CURLE_COULDNT_RESOLVE_HOST:
		hint = "cannot resolve the host: ";
		break;
	case CURLE_COULDNT_CONNECT:
		hint = "cannot connect: ";
		break;
	case CURLE_PARTIAL_FILE:
		hint = "the reply was cut short: ";
		break;
	case CURLE_OPERATION_TIMEDOUT:
		hint = "timed out or stalled: ";
		break;
	case CURLE_GOT_NOTHING:
		hint = "the server closed the connection without a reply: ";
		break;
	case CURLE_SEND_ERROR:
	case CURLE_RECV_ERROR:
		hint = "the connection broke: ";
		break;
	case CURLE_PEER_FAILED_VERIFICATION:
		hint = "TLS certificate verify failed: ";
		break;
	default:
		break;
	}
	if ((a->cc == CURLE_PEER_FAILED_VERIFICATION ||
	        a->cc == CURLE_SSL_CONNECT_ERROR) &&
	    (strstr(detail, "not yet valid") != NULL ||
	        strstr(detail, "expired") != NULL)) {
		char now[32];
		time_t t = time(NULL);
		struct tm tm;

		gmtime_r(&t, &tm);
		strftime(now, sizeof now, "%Y-%m-%dT%H:%M:%SZ", &tm);
		snprintf(out, n,
		    "%s%s (curl %d); check the system clock: it says %s", hint,
		    clean, (int)a->cc, now);
	} else
		snprintf(out, n, "%s%s (curl %d)", hint, clean, (int)a->cc);
	free(clean);
}

/* Replace every occurrence of secret in the string buf (size n). */
static void
scrub(char *buf, size_t n, const char *secret)
{
	char *r;

	if (secret == NULL || strstr(buf, secret) == NULL)
		return;
	r = redact_secret(buf, secret);
	snprintf(buf, n, "%s", r);
	free(r);
}

int
http_request(struct http *h, const struct http_request *req,
    struct http_response *resp, struct tpu_err *err)
{
	struct retry_policy pol = h->opts.retry;
	struct retry_state rs;
	struct attempt a;
	char invocation[37], last[600];
	char *url = NULL, *sid = NULL;
	int64_t start, remaining, wait_ms, deadline;
	int rc = 0, refreshed = 0, progressed, i, retryable;

	resp->status = 0;
	resp->attempts = 0;
	resp->dry_run = 0;
	if (req->max_response > 0)
		resp->body.max = req->max_response;
	url = redact_str(req->url);
	/* the upload session id is a bearer credential for its upload: a
	 * server message quoting it ("The upload session ID is busy") must
	 * not carry it to the log or the error */
	sid = redact_url_param(req->url, "upload_id");
	h->secret = sid;
	if ((rc = endpoint_check_url(
	         req->url, (req->flags & HTTP_F_ALLOW_HTTP) != 0, err)) != 0)
		goto out;
	if (h->opts.dry_run && !is_read_method(req->method) &&
	    !(req->flags & HTTP_F_NODRYRUN)) {
		resp->dry_run = 1;
		rc = print_dry_run(h, req, err);
		goto out;
	}
	deadline = req->deadline_ms > 0 ? req->deadline_ms : h->deadline_ms;
	pol.deadline_ms = deadline;
	if (req->max_attempts > 0)
		pol.max_attempts = req->max_attempts;
	start = tpu_now_ms();
	retry_state_init(&rs, &pol, 0, start);
	make_uuid(invocation);
	/* ask every time: the source hands back its in-memory token until
	 * it nears expiry, so long waits never send a stale one */
	if (req->bearer == NULL && !(req->flags & HTTP_F_NOAUTH) &&
	    h->token_fn != NULL && (rc = get_token(h, 0, err)) != 0)
		goto out;

	for (i = 1;; i++) {
		remaining = deadline > 0 ? start + deadline - tpu_now_ms() : 0;
		if (deadline > 0 && remaining <= 0)
			remaining = 1;
		perform(h, req, resp, invocation, i, remaining, &a);
		resp->attempts = i;
		if (a.cc == CURLE_ABORTED_BY_CALLBACK && retry_interrupted) {
			rc = tpu_error(err,
			    retry_interrupted == 15 ? TPU_E_TERMINATED
			                            : TPU_E_INTERRUPTED,
			    "%s %s: interrupted", req->method, url);
			goto out;
		}
		if (a.overflow) {
			rc = tpu_error(err, TPU_E_API,
			    "%s %s: the reply is larger than %zu bytes",
			    req->method, url, resp->body.max);
			goto out;
		}
		if (a.aborted) {
			rc = tpu_error(err, TPU_E_IO,
			    "%s %s: the download could not be written",
			    req->method, url);
			goto out;
		}
		if (a.cc == CURLE_OK) {
			int s = (int)a.status;
			const int *ok;

			if (s >= 200 && s < 300) {
				rc = 0;
				goto out;
			}
			for (ok = req->accept_status; ok != NULL && *ok != 0;
			     ok++)
				if (*ok == s) {
					rc = 0;
					goto out;
				}
			if (s == 401 && !refreshed && req->bearer == NULL &&
			    !(req->flags & HTTP_F_NOAUTH) &&
			    h->token_fn != NULL) {
				/* one refresh and one replay (gcloud: 1) */
				refreshed = 1;
				log_info("%s %s: HTTP 401, refreshing the "
				         "access token and retrying once",
				    req->method, url);
				if ((rc = get_token(h, 1, err)) != 0)
					goto out;
				continue;
			}
			rc = http_error_from_body(
			    s, resp->body.data, resp->body.len, err);
			if (s == 401 && refreshed) {
				size_t n = strlen(err->msg);

				snprintf(err->msg + n, sizeof err->msg - n,
				    "; the credentials were rejected even "
				    "after a refresh: check 'tpuctl auth list' "
				    "and re-authenticate");
				rc = err->code = TPU_E_AUTH;
			} else if (s >= 300 && s < 400) {
				char *loc =
				    http_response_header(resp, "Location");
				char *rl = redact_str(loc != NULL ? loc : "?");

				tpu_error(err, TPU_E_API,
				    "unexpected redirect (HTTP %d) to '%s': "
				    "tpuctl does not follow redirects",
				    s, rl);
				free(loc);
				free(rl);
			}
			retryable = retry_status_retryable(s);
			snprintf(last, sizeof last, "%.590s", err->msg);
			if (!retryable)
				goto prefix;
			if (!(req->flags & HTTP_F_IDEMPOTENT))
				goto prefix;
		} else {
			int reset =
			    a.cc == CURLE_SSL_CONNECT_ERROR &&
			    (strstr(h->errbuf, "reset") != NULL ||
			        strstr(h->errbuf, "SSL_ERROR_SYSCALL") != NULL);

			describe_curl(h, &a, last, sizeof last);
			err->http_status = 0;
			err->api_status[0] = '\0';
			if (a.connect_code == 407 || a.connect_code == 401) {
				/* tinyproxy answers 401 where RFC 9110 says 407
				 */
				rc = tpu_error(err, TPU_E_AUTH,
				    "%s %s: the proxy refused the credentials "
				    "(HTTP %ld %s); check the user and "
				    "password "
				    "in HTTPS_PROXY",
				    req->method, url, a.connect_code,
				    http_reason((int)a.connect_code));
				goto out;
			}
			if (a.connect_code >= 400) {
				rc = tpu_error(err, TPU_E_API,
				    "%s %s: the proxy refused the tunnel (HTTP "
				    "%ld)",
				    req->method, url, a.connect_code);
				goto out;
			}
			rc = tpu_error(err,
			    retry_curl_retryable((int)a.cc, reset)
			        ? TPU_E_TRANSIENT
			        : TPU_E_API,
			    "%s", last);
			if (!retry_curl_retryable((int)a.cc, reset))
				goto prefix;
			if ((req->flags & HTTP_F_NO_CONNECT_RETRY) &&
			    (a.cc == CURLE_COULDNT_CONNECT ||
			        a.cc == CURLE_COULDNT_RESOLVE_HOST ||
			        (a.cc == CURLE_OPERATION_TIMEDOUT &&
			            a.status == 0)))
				goto prefix;
			/* a failure before anything was sent is always safe
			 * to retry; after, only idempotent calls */
			if (!(req->flags & HTTP_F_IDEMPOTENT) &&
			    a.cc != CURLE_COULDNT_CONNECT &&
			    a.cc != CURLE_COULDNT_RESOLVE_HOST)
				goto prefix;
		}
		/* retryable */
		if (a.streaming && req->before_retry == NULL) {
			/* bytes already went to the caller's sink */
			goto prefix;
		}
		scrub(last, sizeof last, sid);
		if (retry_next(&rs, a.retry_after_ms, tpu_now_ms(), &wait_ms) !=
		    0) {
			double el = (double)(tpu_now_ms() - start) / 1000.0;

			rc = tpu_error(err, TPU_E_TRANSIENT,
			    "%s %s: giving up after %d attempt%s in %.1f s: "
			    "last error: %s",
			    req->method, url, i, i == 1 ? "" : "s", el, last);
			goto out;
		}
		log_info("%s %s: %s; retrying in %.1f s (attempt %d)",
		    req->method, url, last, (double)wait_ms / 1000.0, i + 1);
		if ((rc = retry_sleep(wait_ms, err)) != 0) {
			tpu_error_prefix(err, "%s %s", req->method, url);
			goto out;
		}
		if (req->before_retry != NULL) {
			progressed = 0;
			if ((rc = req->before_retry(
			         req->retry_arg, &progressed, err)) != 0)
				goto out;
			if (progressed)
				retry_state_progress(&rs);
		}
		rc = 0;
	}
prefix:
	if (rc == 0)
		rc = TPU_E_API;
	if (err->http_status == 0)
		tpu_error_prefix(err, "%s %s", req->method, url);
out:
	if (rc != 0)
		scrub(err->msg, sizeof err->msg, sid);
	h->secret = NULL;
	free(sid);
	free(url);
	return rc;
}
