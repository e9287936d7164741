/*
 * Unit tests for src/http.c against a scripted loopback server forked by
 * each test: the retry policy (R1, R2), 401 refresh and replay (A5),
 * Retry-After (A2), Google and non-JSON error bodies (A4, A11), no
 * redirects (S9), URL rules (S10), response caps, --dry-run and the
 * redacted --log-http trace (S3).
 */
#include <sys/socket.h>
#include <sys/types.h>
#include <sys/wait.h>

#include <netinet/in.h>
#include <arpa/inet.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <check.h>

#include "buf.h"
#include "canned_server.h"
#include "http.h"
#include "log.h"
#include "util.h"
#include "xmalloc.h"

static char *
slurp(const char *p)
{
	FILE *fp = fopen(p, "r");
	struct buf b;
	char chunk[4096];
	size_t n;

	buf_init(&b, BUF_NOCAP);
	while (fp != NULL && (n = fread(chunk, 1, sizeof chunk, fp)) > 0)
		buf_append(&b, chunk, n);
	if (fp != NULL)
		fclose(fp);
	return buf_detach(&b, NULL);
}

static int
count(const char *hay, const char *needle)
{
	int n = 0;

	while ((hay = strstr(hay, needle)) != NULL) {
		n++;
		hay += strlen(needle);
	}
	return n;
}

static struct http *
client(int log_http, FILE *trace, int dry, FILE *dryfp)
{
	struct http_opts o;
	struct tpu_err err;
	struct http *h;

	memset(&o, 0, sizeof o);
	retry_policy_default(&o.retry);
	o.retry.initial_ms = 20;
	o.retry.cap_ms = 100;
	o.retry.max_attempts = 4;
	o.log_http = log_http;
	o.trace_fp = trace;
	o.dry_run = dry;
	o.dry_run_fp = dryfp;
	tpu_err_init(&err);
	h = http_new(&o, &err);
	ck_assert_ptr_nonnull(h);
	return h;
}

static char *
url(const char *path)
{
	return xasprintf("http://127.0.0.1:%d%s", server_port, path);
}

#define R503                                                                   \
	"HTTP/1.1 503 Service Unavailable\r\nContent-Type: "                   \
	"application/json\r\nContent-Length: 58\r\nConnection: close\r\n\r\n"  \
	"{\"error\":{\"code\":503,\"message\":\"busy\",\"status\":"            \
	"\"UNAVAIL\"}}"
#define R200                                                                   \
	"HTTP/1.1 200 OK\r\nContent-Type: "                                    \
	"application/json\r\nContent-Length: "                                 \
	"11\r\nConnection: close\r\n\r\n{\"ok\":true}"

static int
do_req(struct http *h, const char *method, const char *path, int flags,
    const char *body, struct http_response *resp, struct tpu_err *err)
{
	struct http_request r;
	char *u = url(path);
	int rc;

	memset(&r, 0, sizeof r);
	r.method = method;
	r.url = u;
	r.flags = flags;
	r.body = body;
	r.body_len = body != NULL ? strlen(body) : 0;
	tpu_err_init(err);
	http_response_init(resp);
	rc = http_request(h, &r, resp, err);
	free(u);
	return rc;
}

START_TEST(retry_503_then_200_same_invocation)
{
	static const char *const rep[] = { R503, R503, R200 };
	struct http *h = client(0, NULL, 0, NULL);
	struct http_response resp;
	struct tpu_err err;
	char *log, *id1, id[64];
	int rc;

	serve(rep, 3);
	rc = do_req(h, "GET", "/v2/x", HTTP_F_IDEMPOTENT | HTTP_F_NOAUTH, NULL,
	    &resp, &err);
	stop_server();
	ck_assert_msg(rc == 0, "rc %d: %s", rc, err.msg);
	ck_assert_int_eq(resp.status, 200);
	ck_assert_int_eq(resp.attempts, 3);
	ck_assert_str_eq(resp.body.data, "{\"ok\":true}");
	log = slurp(logpath);
	ck_assert_int_eq(count(log, "GET /v2/x"), 3);
	id1 = strstr(log, "gccl-invocation-id/");
	ck_assert_ptr_nonnull(id1);
	snprintf(id, sizeof id, "%.55s", id1);
	ck_assert_int_eq(count(log, id), 3);
	ck_assert_int_eq(count(log, "gccl-attempt-count/3"), 1);
	free(log);
	http_response_release(&resp);
	http_free(h);
}
END_TEST

START_TEST(post_not_idempotent_not_retried)
{
	static const char *const rep[] = { R503, R200 };
	struct http *h = client(0, NULL, 0, NULL);
	struct http_response resp;
	struct tpu_err err;
	char *log;

	serve(rep, 2);
	ck_assert_int_eq(
	    do_req(h, "POST", "/v2/x", HTTP_F_NOAUTH, "{}", &resp, &err),
	    TPU_E_TRANSIENT);
	ck_assert_int_eq(resp.attempts, 1);
	ck_assert_int_eq(err.http_status, 503);
	stop_server();
	log = slurp(logpath);
	ck_assert_int_eq(count(log, "POST /v2/x"), 1);
	free(log);
	http_response_release(&resp);
	http_free(h);
}
END_TEST

/* issue 19 defect 6: a 503 quoting the upload session id (as GCS's "The
 * upload session ID is busy") reaches neither the -v retry line, nor the
 * trace, nor the final error */
#define RBUSY                                                                  \
	"HTTP/1.1 503 Service Unavailable\r\nContent-Type: "                   \
	"application/json\r\nX-GUploader-UploadID: CANARYSESSION77\r\n"        \
	"Content-Length: 108\r\nConnection: close\r\n\r\n"                     \
	"{\"error\":{\"code\":503,\"message\":\"The upload session "           \
	"CANARYSESSION77 is busy; retry.\",\"status\":\"UNAVAILABLE\"}}"
START_TEST(upload_session_id_redacted)
{
	static const char *const rep[] = { RBUSY, RBUSY, RBUSY, RBUSY };
	FILE *fp = tmpfile();
	struct http *h = client(1, fp, 0, NULL);
	struct http_response resp;
	struct tpu_err err;
	struct buf b;
	char chunk[4096];
	size_t n;
	int lvl = log_get_level(), saved = dup(2);
	FILE *errfp = tmpfile();

	/* the -v lines go to stderr: catch them */
	fflush(stderr);
	dup2(fileno(errfp), 2);
	log_set_level(2);
	serve(rep, 4);
	ck_assert_int_eq(
	    do_req(h, "PUT",
	        "/upload/storage/v1/b/b/o?uploadType=resumable&"
	        "upload_id=CANARYSESSION77",
	        HTTP_F_IDEMPOTENT | HTTP_F_NOAUTH, "x", &resp, &err),
	    TPU_E_TRANSIENT);
	stop_server();
	log_set_level(lvl);
	fflush(stderr);
	dup2(saved, 2);
	close(saved);
	ck_assert_int_eq(resp.attempts, 4);
	ck_assert_msg(strstr(err.msg, "CANARY") == NULL, "error: %s", err.msg);
	ck_assert_ptr_nonnull(strstr(err.msg, "session <redacted> is busy"));
	rewind(errfp);
	buf_init(&b, BUF_NOCAP);
	while ((n = fread(chunk, 1, sizeof chunk, errfp)) > 0)
		buf_append(&b, chunk, n);
	fclose(errfp);
	ck_assert_ptr_nonnull(strstr(b.data, "retrying in"));
	ck_assert_msg(strstr(b.data, "CANARY") == NULL, "log:\n%s", b.data);
	buf_release(&b);
	rewind(fp);
	buf_init(&b, BUF_NOCAP);
	while ((n = fread(chunk, 1, sizeof chunk, fp)) > 0)
		buf_append(&b, chunk, n);
	ck_assert_ptr_nonnull(
	    strstr(b.data, "X-GUploader-UploadID: <redacted>"));
	ck_assert_msg(strstr(b.data, "CANARY") == NULL, "trace:\n%s", b.data);
	buf_release(&b);
	fclose(fp);
	http_response_release(&resp);
	http_free(h);
}
END_TEST

START_TEST(google_404_not_retried)
{
	static const char *const rep[] = {
		"HTTP/1.1 404 Not Found\r\nContent-Length: 95\r\n\r\n"
		"{\"error\":{\"code\":404,\"message\":\"Resource 'n1' was not "
		"found\",\"status\":\"NOT_FOUND\",\"x\":[1,2,3]}}",
		R200
	};
	struct http *h = client(0, NULL, 0, NULL);
	struct http_response resp;
	struct tpu_err err;

	serve(rep, 2);
	ck_assert_int_eq(
	    do_req(h, "GET", "/n", HTTP_F_IDEMPOTENT | HTTP_F_NOAUTH, NULL,
	        &resp, &err),
	    TPU_E_NOTFOUND);
	stop_server();
	ck_assert_int_eq(resp.attempts, 1);
	ck_assert_int_eq(err.http_status, 404);
	ck_assert_str_eq(err.api_status, "NOT_FOUND");
	ck_assert_ptr_nonnull(strstr(err.msg, "Resource 'n1' was not found"));
	http_response_release(&resp);
	http_free(h);
}
END_TEST

START_TEST(html_502_exhausts)
{
	static const char *const rep[] = {
		"HTTP/1.1 502 Bad Gateway\r\nContent-Type: text/html\r\n"
		"Content-Length: 32\r\n\r\n<html><h1>Bad gateway</h1></html",
		"HTTP/1.1 502 Bad Gateway\r\nContent-Type: text/html\r\n"
		"Content-Length: 32\r\n\r\n<html><h1>Bad gateway</h1></html",
		"HTTP/1.1 502 Bad Gateway\r\nContent-Type: text/html\r\n"
		"Content-Length: 32\r\n\r\n<html><h1>Bad gateway</h1></html",
		"HTTP/1.1 502 Bad Gateway\r\nContent-Type: text/html\r\n"
		"Content-Length: 32\r\n\r\n<html><h1>Bad gateway</h1></html",
	};
	struct http *h = client(0, NULL, 0, NULL);
	struct http_response resp;
	struct tpu_err err;

	serve(rep, 4);
	ck_assert_int_eq(
	    do_req(h, "GET", "/n", HTTP_F_IDEMPOTENT | HTTP_F_NOAUTH, NULL,
	        &resp, &err),
	    TPU_E_TRANSIENT);
	stop_server();
	ck_assert_int_eq(resp.attempts, 4);
	ck_assert_ptr_nonnull(strstr(err.msg, "giving up after 4 attempts"));
	ck_assert_ptr_nonnull(strstr(err.msg, "HTML"));
	ck_assert_ptr_nonnull(strstr(err.msg, "502"));
	http_response_release(&resp);
	http_free(h);
}
END_TEST

static int ntoken;

static int
token_fn(void *arg, int force, char **tok, struct tpu_err *err)
{
	(void)arg;
	(void)err;
	ntoken++;
	*tok = xasprintf("tok%d%s", ntoken, force ? "f" : "");
	return 0;
}

#define R401                                                                   \
	"HTTP/1.1 401 Unauthorized\r\nContent-Length: 77\r\n\r\n{\"error\":{"  \
	"\"code\":401,\"message\":\"bad credentials\",\"status\":"             \
	"\"UNAUTHENTICATED\"}}"

START_TEST(refresh_once_on_401)
{
	static const char *const rep[] = { R401, R200 };
	struct http *h = client(0, NULL, 0, NULL);
	struct http_response resp;
	struct tpu_err err;
	char *log;

	ntoken = 0;
	http_set_token_source(h, token_fn, NULL);
	serve(rep, 2);
	ck_assert_int_eq(do_req(h, "POST", "/v2/x", 0, "{}", &resp, &err), 0);
	stop_server();
	ck_assert_int_eq(ntoken, 2);
	log = slurp(logpath);
	ck_assert_int_eq(count(log, "Authorization: Bearer tok1\r\n"), 1);
	ck_assert_int_eq(count(log, "Authorization: Bearer tok2f\r\n"), 1);
	free(log);
	http_response_release(&resp);
	http_free(h);
}
END_TEST

START_TEST(second_401_is_auth_error)
{
	static const char *const rep[] = { R401, R401, R200 };
	struct http *h = client(0, NULL, 0, NULL);
	struct http_response resp;
	struct tpu_err err;

	ntoken = 0;
	http_set_token_source(h, token_fn, NULL);
	serve(rep, 3);
	ck_assert_int_eq(
	    do_req(h, "GET", "/v2/x", HTTP_F_IDEMPOTENT, NULL, &resp, &err),
	    TPU_E_AUTH);
	stop_server();
	ck_assert_int_eq(ntoken, 2);
	ck_assert_int_eq(resp.attempts, 2);
	ck_assert_ptr_nonnull(strstr(err.msg, "after a refresh"));
	http_response_release(&resp);
	http_free(h);
}
END_TEST

START_TEST(retry_after_honoured)
{
	static const char *const rep[] = {
		"HTTP/1.1 429 Too Many Requests\r\nRetry-After: 1\r\n"
		"Content-Length: 0\r\n\r\n",
		R200
	};
	struct http *h = client(0, NULL, 0, NULL);
	struct http_response resp;
	struct tpu_err err;
	int64_t t0 = tpu_now_ms();

	serve(rep, 2);
	ck_assert_int_eq(
	    do_req(h, "GET", "/x", HTTP_F_IDEMPOTENT | HTTP_F_NOAUTH, NULL,
	        &resp, &err),
	    0);
	stop_server();
	ck_assert_int_ge(tpu_now_ms() - t0, 1000);
	http_response_release(&resp);
	http_free(h);
}
END_TEST

START_TEST(no_redirects)
{
	static const char *const rep[] = {
		"HTTP/1.1 302 Found\r\nLocation: http://127.0.0.1:1/steal?"
		"upload_id=SECRET\r\nContent-Length: 0\r\n\r\n",
	};
	struct http *h = client(0, NULL, 0, NULL);
	struct http_response resp;
	struct tpu_err err;

	ntoken = 0;
	http_set_token_source(h, token_fn, NULL);
	serve(rep, 1);
	ck_assert_int_eq(
	    do_req(h, "GET", "/x", HTTP_F_IDEMPOTENT, NULL, &resp, &err),
	    TPU_E_API);
	stop_server();
	ck_assert_ptr_nonnull(strstr(err.msg, "does not follow redirects"));
	ck_assert_ptr_null(strstr(err.msg, "SECRET"));
	ck_assert_int_eq(resp.attempts, 1);
	http_response_release(&resp);
	http_free(h);
}
END_TEST

START_TEST(url_rules)
{
	struct http *h = client(0, NULL, 0, NULL);
	struct http_request r;
	struct http_response resp;
	struct tpu_err err;
	static const char *const bad[] = { "http://example.com/x",
		"file:///etc/passwd", "ftp://127.0.0.1/", "gopher://x",
		"http://10.0.0.1/" };
	size_t i;

	for (i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		memset(&r, 0, sizeof r);
		r.method = "GET";
		r.url = bad[i];
		r.flags = HTTP_F_NOAUTH;
		tpu_err_init(&err);
		http_response_init(&resp);
		ck_assert_int_eq(http_request(h, &r, &resp, &err), TPU_E_USAGE);
		ck_assert_int_eq(resp.attempts, 0);
		http_response_release(&resp);
	}
	http_free(h);
}
END_TEST

START_TEST(response_cap)
{
	static const char *const rep[] = { R200 };
	struct http *h = client(0, NULL, 0, NULL);
	struct http_request r;
	struct http_response resp;
	struct tpu_err err;
	char *u;

	serve(rep, 1);
	u = url("/x");
	memset(&r, 0, sizeof r);
	r.method = "GET";
	r.url = u;
	r.flags = HTTP_F_NOAUTH;
	r.max_response = 5;
	tpu_err_init(&err);
	http_response_init(&resp);
	ck_assert_int_eq(http_request(h, &r, &resp, &err), TPU_E_API);
	ck_assert_ptr_nonnull(strstr(err.msg, "larger than 5 bytes"));
	stop_server();
	free(u);
	http_response_release(&resp);
	http_free(h);
}
END_TEST

START_TEST(dry_run_prints_not_sends)
{
	FILE *fp = tmpfile();
	struct http *h = client(0, NULL, 1, fp);
	struct http_response resp;
	struct tpu_err err;
	char line[512];

	server_port = 9; /* nothing listens: a request would fail */
	ck_assert_int_eq(do_req(h, "POST", "/v2/nodes?nodeId=n1", 0,
	                     "{\"acceleratorType\":\"v4-8\"}", &resp, &err),
	    0);
	ck_assert_int_eq(resp.dry_run, 1);
	ck_assert_int_eq(resp.attempts, 0);
	rewind(fp);
	ck_assert_ptr_nonnull(fgets(line, sizeof line, fp));
	ck_assert_ptr_nonnull(strstr(line, "\"dryRun\":true"));
	ck_assert_ptr_nonnull(strstr(line, "\"method\":\"POST\""));
	ck_assert_ptr_nonnull(strstr(line, "nodeId=n1"));
	ck_assert_ptr_nonnull(strstr(line, "\"acceleratorType\":\"v4-8\""));
	http_response_release(&resp);
	/* a GET is still sent (and fails here: nothing listens) */
	ck_assert_int_ne(
	    do_req(h, "GET", "/v2/x", HTTP_F_NOAUTH, NULL, &resp, &err), 0);
	ck_assert_int_eq(resp.dry_run, 0);
	http_response_release(&resp);
	fclose(fp);
	http_free(h);
}
END_TEST

START_TEST(trace_redacted)
{
	static const char *const rep[] = {
		"HTTP/1.1 200 OK\r\nSet-Cookie: s=CANARY5\r\nContent-Length: "
		"50\r\n\r\n{\"access_token\":\"ya29.CANARY3\",\"expires_in\":"
		"3599}x",
	};
	FILE *fp = tmpfile();
	struct http *h = client(1, fp, 0, NULL);
	struct http_request r;
	struct http_response resp;
	struct tpu_err err;
	char *u, *t;
	struct buf b;
	char chunk[4096];
	size_t n;

	serve(rep, 1);
	u = url("/token?upload_id=CANARY4");
	memset(&r, 0, sizeof r);
	r.method = "POST";
	r.url = u;
	r.bearer = "ya29.CANARY1";
	r.body = "grant_type=refresh_token&refresh_token=CANARY2";
	r.body_len = strlen(r.body);
	r.content_type = "application/x-www-form-urlencoded";
	r.flags = HTTP_F_NOAUTH;
	tpu_err_init(&err);
	http_response_init(&resp);
	http_request(h, &r, &resp, &err);
	stop_server();
	rewind(fp);
	buf_init(&b, BUF_NOCAP);
	while ((n = fread(chunk, 1, sizeof chunk, fp)) > 0)
		buf_append(&b, chunk, n);
	t = b.data;
	ck_assert_ptr_nonnull(strstr(t, "Authorization: Bearer <redacted>"));
	ck_assert_ptr_nonnull(strstr(t, "> POST /token"));
	ck_assert_msg(strstr(t, "CANARY") == NULL, "leak in trace:\n%s", t);
	buf_release(&b);
	free(u);
	fclose(fp);
	http_response_release(&resp);
	http_free(h);
}
END_TEST

START_TEST(error_bodies)
{
	struct tpu_err err;
	const char *b;

	tpu_err_init(&err);
	b = "{\"error\":\"invalid_grant\",\"error_description\":\"Token has "
	    "been expired or revoked.\"}";
	ck_assert_int_eq(
	    http_error_from_body(400, b, strlen(b), &err), TPU_E_AUTH);
	ck_assert_str_eq(err.api_status, "invalid_grant");
	ck_assert_ptr_nonnull(strstr(err.msg, "expired or revoked"));
	b = "{\"error\":{\"code\":400,\"message\":\"no\",\"status\":"
	    "\"FAILED_PRECONDITION\"}}";
	ck_assert_int_eq(
	    http_error_from_body(400, b, strlen(b), &err), TPU_E_PRECONDITION);
	b = "{\"error\":{\"code\":409,\"message\":\"exists\",\"status\":"
	    "\"ALREADY_EXISTS\"}}";
	ck_assert_int_eq(
	    http_error_from_body(409, b, strlen(b), &err), TPU_E_CONFLICT);
	ck_assert_int_eq(
	    http_error_from_body(403, "", 0, &err), TPU_E_PERMISSION);
	ck_assert_ptr_nonnull(strstr(err.msg, "empty body"));
	b = "{\"error\":{\"message\":\"a\\u001b[31mb\\nc\"}}";
	ck_assert_int_eq(
	    http_error_from_body(400, b, strlen(b), &err), TPU_E_INVALID);
	ck_assert_ptr_null(strchr(err.msg, '\033'));
	ck_assert_ptr_null(strchr(err.msg, '\n'));
	b = "{\"error\":{\"message\":\"token ya29.CANARY leaked\"}}";
	http_error_from_body(400, b, strlen(b), &err);
	ck_assert_ptr_null(strstr(err.msg, "CANARY"));
	b = "upstream connect error";
	ck_assert_int_eq(
	    http_error_from_body(503, b, strlen(b), &err), TPU_E_TRANSIENT);
	ck_assert_ptr_nonnull(strstr(err.msg, "non-JSON"));
	b = "{\"error\": [1, 2]}";
	ck_assert_int_eq(
	    http_error_from_body(500, b, strlen(b), &err), TPU_E_TRANSIENT);
}
END_TEST

START_TEST(response_header_lookup)
{
	struct http_response r;
	char *v;

	http_response_init(&r);
	buf_puts(&r.headers, "HTTP/1.1 308 Resume Incomplete\r\nRange: "
	                     "bytes=0-262143\r\nX-A:  b \r\n\r\n");
	v = http_response_header(&r, "range");
	ck_assert_str_eq(v, "bytes=0-262143");
	free(v);
	v = http_response_header(&r, "X-A");
	ck_assert_str_eq(v, "b");
	free(v);
	ck_assert_ptr_null(http_response_header(&r, "Location"));
	http_response_release(&r);
}
END_TEST

/*
 * Rewinding a streamed upload: a keep-alive server answers the first
 * request, then reads the whole second request on the same connection and
 * closes it without a reply.  libcurl retries such a request on a fresh
 * connection, which needs the body from byte 0 again: with seek_cb it
 * rewinds and the second connection gets the complete body, without it
 * the transfer fails (CURLE_SEND_FAIL_REWIND).
 */
#define UPLEN (300 * 1024)

/* Read one request (head and Content-Length body) into b: its length, or
 * -1 at EOF. */
static long
read_request(int c, char *b, size_t cap)
{
	size_t len = 0;
	ssize_t r;
	char *e, *cl;
	long want;

	for (;;) {
		if ((r = read(c, b + len, cap - 1 - len)) <= 0)
			return -1;
		len += (size_t)r;
		b[len] = '\0';
		if ((e = strstr(b, "\r\n\r\n")) == NULL)
			continue;
		cl = strcasestr(b, "Content-Length:");
		want = cl != NULL ? strtol(cl + 15, NULL, 10) : 0;
		if ((long)len >= (e - b) + 4 + want)
			return (long)len;
	}
}

static void
serve_dying_keepalive(void)
{
	static const char ka[] =
	    "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\n{}";
	int s = canned_listen(), c;
	char *b;
	long n;
	FILE *fp;

	if ((server_pid = fork()) != 0) {
		close(s);
		return;
	}
	b = malloc(2 * UPLEN);
	if (b == NULL || (c = accept(s, NULL, NULL)) < 0 ||
	    read_request(c, b, 2 * UPLEN) < 0 ||
	    write(c, ka, sizeof ka - 1) < 0)
		_exit(1);
	read_request(c, b, 2 * UPLEN); /* then drop it, no reply */
	close(c);
	if ((c = accept(s, NULL, NULL)) < 0 ||
	    (n = read_request(c, b, 2 * UPLEN)) < 0)
		_exit(1);
	fp = fopen(logpath, "w");
	fwrite(b, 1, (size_t)n, fp);
	fclose(fp);
	if (write(c, R200, strlen(R200)) < 0)
		_exit(1);
	close(c);
	_exit(0);
}

struct upsrc {
	int64_t pos;
	int seeks;
};

static size_t
up_read(char *p, size_t size, size_t nmemb, void *arg)
{
	struct upsrc *u = arg;
	size_t n = size * nmemb, i;

	for (i = 0; i < n && u->pos < UPLEN; i++, u->pos++)
		p[i] = (char)('a' + u->pos % 23);
	return i;
}

static int
up_seek(void *arg, int64_t off)
{
	struct upsrc *u = arg;

	if (off > UPLEN)
		return -1;
	u->pos = off;
	u->seeks++;
	return 0;
}

static int
rewind_upload(int with_seek, struct upsrc *u, struct tpu_err *err)
{
	struct http *h = client(0, NULL, 0, NULL);
	struct http_response resp;
	struct http_request r;
	char *u1, *u2;
	int rc;

	serve_dying_keepalive();
	u1 = url("/first");
	u2 = url("/upload");
	memset(u, 0, sizeof *u);
	memset(&r, 0, sizeof r);
	r.method = "GET";
	r.url = u1;
	r.flags = HTTP_F_NOAUTH;
	tpu_err_init(err);
	http_response_init(&resp);
	ck_assert_msg(http_request(h, &r, &resp, err) == 0, "%s", err->msg);
	http_response_release(&resp);
	memset(&r, 0, sizeof r);
	r.method = "PUT";
	r.url = u2;
	r.flags = HTTP_F_NOAUTH;
	r.max_attempts = 1; /* only libcurl's own retry on a new connection */
	r.read_cb = up_read;
	r.read_arg = u;
	r.upload_size = UPLEN;
	r.seek_cb = with_seek ? up_seek : NULL;
	r.content_type = "application/octet-stream";
	http_response_init(&resp);
	rc = http_request(h, &r, &resp, err);
	http_response_release(&resp);
	stop_server();
	http_free(h);
	free(u1);
	free(u2);
	return rc;
}

START_TEST(upload_rewound_by_seek)
{
	struct upsrc u;
	struct tpu_err err;
	char *log, *body;
	int64_t i;

	ck_assert_msg(rewind_upload(1, &u, &err) == 0, "%s", err.msg);
	ck_assert_int_ge(u.seeks, 1);
	log = slurp(logpath);
	ck_assert_ptr_nonnull(strstr(log, "PUT /upload"));
	body = strstr(log, "\r\n\r\n");
	ck_assert_ptr_nonnull(body);
	body += 4;
	ck_assert_int_eq((int64_t)strlen(body), UPLEN);
	for (i = 0; i < UPLEN; i++)
		ck_assert_int_eq(body[i], 'a' + i % 23);
	free(log);
}
END_TEST

START_TEST(upload_without_seek_cannot_rewind)
{
	struct upsrc u;
	struct tpu_err err;

	ck_assert_int_ne(rewind_upload(0, &u, &err), 0);
	ck_assert_int_eq(u.seeks, 0);
	ck_assert_ptr_nonnull(strcasestr(err.msg, "rewind"));
}
END_TEST

static Suite *
http_suite(void)
{
	Suite *s = suite_create("http");
	TCase *tc = tcase_create("server");

	tcase_set_timeout(tc, 20);
	tcase_add_checked_fixture(tc, NULL, canned_cleanup);
	tcase_add_test(tc, retry_503_then_200_same_invocation);
	tcase_add_test(tc, post_not_idempotent_not_retried);
	tcase_add_test(tc, upload_session_id_redacted);
	tcase_add_test(tc, google_404_not_retried);
	tcase_add_test(tc, html_502_exhausts);
	tcase_add_test(tc, refresh_once_on_401);
	tcase_add_test(tc, second_401_is_auth_error);
	tcase_add_test(tc, retry_after_honoured);
	tcase_add_test(tc, no_redirects);
	tcase_add_test(tc, url_rules);
	tcase_add_test(tc, response_cap);
	tcase_add_test(tc, dry_run_prints_not_sends);
	tcase_add_test(tc, trace_redacted);
	tcase_add_test(tc, upload_rewound_by_seek);
	tcase_add_test(tc, upload_without_seek_cannot_rewind);
	suite_add_tcase(s, tc);
	tc = tcase_create("parsing");
	tcase_add_test(tc, error_bodies);
	tcase_add_test(tc, response_header_lookup);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	return canned_run(http_suite());
}
