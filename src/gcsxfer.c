/*
 * The Cloud Storage transfer engine.  See gcsxfer.h.
 */
#include <sys/stat.h>
#include <sys/types.h>

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cjson/cJSON.h>
#include <curl/curl.h>
#include <openssl/evp.h>
#include <openssl/rand.h>

#include "crc32c.h"
#include "fsutil.h"
#include "gcs.h"
#include "gcsurl.h"
#include "gcsxfer.h"
#include "http.h"
#include "log.h"
#include "retry.h"
#include "util.h"
#include "xmalloc.h"

#define IOBLOCK (1 << 20)
#define MD5_B64LEN 25

/* 0666 less the umask, read once by gcsx_opts_init on the main thread. */
static mode_t file_mode_bits = 0644;

void
gcsx_opts_init(struct gcsx_opts *o)
{
	static int once;
	mode_t mask;

	if (!once) {
		once = 1;
		mask = umask(022);
		umask(mask);
		file_mode_bits = 0666 & ~mask;
	}
	memset(o, 0, sizeof *o);
	o->if_generation_match = -1;
	o->parallel = 1;
}

/* --- separable logic ---------------------------------------------------- */

static int
parse_i64(const char *s, const char **end, int64_t *v)
{
	int64_t n = 0;
	const char *p = s;

	if (*p < '0' || *p > '9')
		return -1;
	for (; *p >= '0' && *p <= '9'; p++) {
		if (n > (INT64_MAX - (*p - '0')) / 10)
			return -1;
		n = n * 10 + (*p - '0');
	}
	*v = n;
	*end = p;
	return 0;
}

int64_t
gcsx_parse_range(const char *hdr)
{
	const char *p;
	int64_t last;

	if (hdr == NULL)
		return 0;
	if (strncmp(hdr, "bytes=0-", 8) != 0)
		return -1;
	if (parse_i64(hdr + 8, &p, &last) != 0 || *p != '\0' ||
	    last == INT64_MAX)
		return -1;
	return last + 1;
}

int
gcsx_parse_content_range(
    const char *hdr, int64_t *start, int64_t *end, int64_t *total)
{
	const char *p;

	if (hdr == NULL || strncmp(hdr, "bytes ", 6) != 0)
		return -1;
	if (parse_i64(hdr + 6, &p, start) != 0 || *p != '-')
		return -1;
	if (parse_i64(p + 1, &p, end) != 0 || *p != '/')
		return -1;
	if (parse_i64(p + 1, &p, total) != 0 || *p != '\0')
		return -1;
	if (*end < *start || *end >= *total)
		return -1;
	return 0;
}

size_t
gcsx_plan_parts(
    int64_t size, int64_t min_part, size_t maxparts, struct gcsx_part *parts)
{
	int64_t psize, off;
	size_t n = 0;

	if (maxparts == 0)
		TPU_BUG("gcsx_plan_parts: no room");
	if (size <= 0) {
		parts[0].off = 0;
		parts[0].len = 0;
		return 1;
	}
	if (min_part < GCSX_QUANTUM)
		min_part = GCSX_QUANTUM;
	psize = (size + (int64_t)maxparts - 1) / (int64_t)maxparts;
	if (psize < min_part)
		psize = min_part;
	psize = (psize + GCSX_QUANTUM - 1) / GCSX_QUANTUM * GCSX_QUANTUM;
	for (off = 0; off < size && n < maxparts; n++) {
		parts[n].off = off;
		parts[n].len = size - off < psize ? size - off : psize;
		off += parts[n].len;
	}
	if (off != size)
		TPU_BUG("gcsx_plan_parts: size not covered");
	return n;
}

uint32_t
gcsx_combine(const uint32_t *crcs, const struct gcsx_part *parts, size_t n)
{
	uint32_t crc = 0;
	size_t i;

	for (i = 0; i < n; i++)
		crc = i == 0 ? crcs[0]
		             : crc32c_combine(
		                   crc, crcs[i], (uint64_t)parts[i].len);
	return crc;
}

void
gcsx_tracker_release(struct gcsx_tracker *t)
{
	free(t->src);
	free(t->dst);
	free(t->session);
	memset(t, 0, sizeof *t);
}

int
gcsx_tracker_format(const struct gcsx_tracker *t, struct buf *out)
{
	cJSON *o = cJSON_CreateObject();
	char crc[CRC32C_B64LEN];
	char *s;
	int rc;

	crc32c_base64(t->crc32c, crc);
	cJSON_AddNumberToObject(o, "version", 1);
	cJSON_AddStringToObject(o, "src", t->src);
	cJSON_AddStringToObject(o, "dst", t->dst);
	cJSON_AddStringToObject(o, "session", t->session);
	cJSON_AddStringToObject(o, "crc32c", crc);
	{
		char n[32];

		snprintf(n, sizeof n, "%" PRId64, t->size);
		cJSON_AddStringToObject(o, "size", n);
		snprintf(n, sizeof n, "%" PRId64, t->mtime_ns);
		cJSON_AddStringToObject(o, "mtime_ns", n);
	}
	s = cJSON_PrintUnformatted(o);
	cJSON_Delete(o);
	if (s == NULL)
		TPU_BUG("cJSON_PrintUnformatted");
	rc = buf_puts(out, s) == 0 && buf_puts(out, "\n") == 0 ? 0 : -1;
	cJSON_free(s);
	return rc;
}

static const char *
jstr(const cJSON *o, const char *k)
{
	const cJSON *it = cJSON_GetObjectItemCaseSensitive(o, k);

	return cJSON_IsString(it) && it->valuestring[0] != '\0'
	           ? it->valuestring
	           : NULL;
}

static int
jint(const cJSON *o, const char *k, int64_t *v)
{
	const char *s = jstr(o, k), *end;

	if (s == NULL || parse_i64(s, &end, v) != 0 || *end != '\0')
		return -1;
	return 0;
}

int
gcsx_tracker_parse(const char *text, size_t len, const char *base,
    struct gcsx_tracker *t, struct tpu_err *err)
{
	cJSON *o = cJSON_ParseWithLength(text, len);
	const cJSON *v;
	const char *src, *dst, *ses, *crc;
	char *want;
	int rc = 0;

	memset(t, 0, sizeof *t);
	if (o == NULL || !cJSON_IsObject(o)) {
		cJSON_Delete(o);
		return tpu_error(err, TPU_E_INVALID, "tracker: not JSON");
	}
	v = cJSON_GetObjectItemCaseSensitive(o, "version");
	src = jstr(o, "src");
	dst = jstr(o, "dst");
	ses = jstr(o, "session");
	crc = jstr(o, "crc32c");
	if (!cJSON_IsNumber(v) || v->valuedouble != 1 || src == NULL ||
	    dst == NULL || ses == NULL || crc == NULL ||
	    jint(o, "size", &t->size) != 0 ||
	    jint(o, "mtime_ns", &t->mtime_ns) != 0 ||
	    crc32c_parse_base64(crc, &t->crc32c) != 0) {
		cJSON_Delete(o);
		return tpu_error(
		    err, TPU_E_INVALID, "tracker: missing or bad fields");
	}
	{
		size_t n = strlen(base);

		while (n > 0 && base[n - 1] == '/')
			n--;
		want = xasprintf("%.*s/upload/storage/v1/b/", (int)n, base);
	}
	if (strncmp(ses, want, strlen(want)) != 0 ||
	    strpbrk(ses, " \t\r\n") != NULL)
		rc = tpu_error(err, TPU_E_INVALID,
		    "tracker: the session URL is not under %s", want);
	free(want);
	if (rc == 0) {
		t->src = xstrdup(src);
		t->dst = xstrdup(dst);
		t->session = xstrdup(ses);
	}
	cJSON_Delete(o);
	return rc;
}

int
gcsx_tracker_matches(const struct gcsx_tracker *t, const char *src,
    const char *dst, int64_t size, int64_t mtime_ns, uint32_t crc)
{
	return strcmp(t->src, src) == 0 && strcmp(t->dst, dst) == 0 &&
	       t->size == size && t->mtime_ns == mtime_ns && t->crc32c == crc;
}

char *
gcsx_tracker_dir(void)
{
	const char *x;

	if ((x = getenv("TPUCTL_CACHE_DIR")) != NULL && *x == '/')
		return xasprintf("%s/uploads", x);
	if ((x = getenv("XDG_CACHE_HOME")) != NULL && *x == '/')
		return xasprintf("%s/tpuctl/uploads", x);
	if ((x = getenv("HOME")) != NULL && *x == '/')
		return xasprintf("%s/.cache/tpuctl/uploads", x);
	return xstrdup("/tmp/tpuctl-uploads");
}

char *
gcsx_tracker_path(const char *dir, const char *src, const char *dst)
{
	unsigned char md[EVP_MAX_MD_SIZE];
	unsigned int mdlen = 0;
	char hex[2 * EVP_MAX_MD_SIZE + 1];
	EVP_MD_CTX *c = EVP_MD_CTX_new();
	unsigned int i;

	if (c == NULL || EVP_DigestInit_ex(c, EVP_sha256(), NULL) != 1 ||
	    EVP_DigestUpdate(c, src, strlen(src)) != 1 ||
	    EVP_DigestUpdate(c, "\n", 1) != 1 ||
	    EVP_DigestUpdate(c, dst, strlen(dst)) != 1 ||
	    EVP_DigestFinal_ex(c, md, &mdlen) != 1)
		TPU_BUG("sha256");
	EVP_MD_CTX_free(c);
	for (i = 0; i < mdlen; i++)
		snprintf(hex + 2 * i, 3, "%02x", md[i]);
	return xasprintf("%s/%s.json", dir, hex);
}

const char *
gcsx_guess_type(const char *name)
{
	static const struct {
		const char *ext, *type;
	} t[] = {
		{ ".txt", "text/plain" },
		{ ".json", "application/json" },
		{ ".html", "text/html" },
		{ ".csv", "text/csv" },
		{ ".py", "text/x-python" },
		{ ".sh", "text/x-sh" },
		{ ".yaml", "application/yaml" },
		{ ".yml", "application/yaml" },
		{ ".png", "image/png" },
		{ ".jpg", "image/jpeg" },
		{ ".jpeg", "image/jpeg" },
		{ ".gz", "application/gzip" },
		{ ".tar", "application/x-tar" },
		{ ".zip", "application/zip" },
	};
	const char *dot = strrchr(name, '.');
	size_t i;

	if (dot != NULL && strchr(dot, '/') == NULL)
		for (i = 0; i < nitems(t); i++)
			if (strcasecmp(dot, t[i].ext) == 0)
				return t[i].type;
	return "application/octet-stream";
}

/* --- local files ---------------------------------------------------------- */

static int
io_error(struct tpu_err *err, const char *what, const char *path, int e)
{
	return tpu_error(err, TPU_E_IO, "%s %s: %s", what, path, strerror(e));
}

/* Hash [off, off+len) of fd: crc32c, and md5 (base64) when md5 != NULL. */
static int
hash_range(int fd, const char *path, int64_t off, int64_t len, uint32_t *crc,
    char *md5, struct tpu_err *err)
{
	unsigned char *b = xmalloc(IOBLOCK), md[EVP_MAX_MD_SIZE];
	unsigned int mdlen = 0;
	EVP_MD_CTX *m = NULL;
	uint32_t c = 0;
	int rc = 0;

	if (md5 != NULL && ((m = EVP_MD_CTX_new()) == NULL ||
	                       EVP_DigestInit_ex(m, EVP_md5(), NULL) != 1))
		TPU_BUG("md5 init");
	while (len > 0) {
		size_t want = len < IOBLOCK ? (size_t)len : IOBLOCK;
		ssize_t n = pread(fd, b, want, off);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			rc = io_error(err, "read", path, errno);
			break;
		}
		if (n == 0) {
			rc = tpu_error(err, TPU_E_IO,
			    "read %s: the file shrank while being read", path);
			break;
		}
		c = crc32c_update(c, b, (size_t)n);
		if (m != NULL)
			EVP_DigestUpdate(m, b, (size_t)n);
		off += n;
		len -= n;
	}
	if (m != NULL) {
		EVP_DigestFinal_ex(m, md, &mdlen);
		EVP_EncodeBlock((unsigned char *)md5, md, (int)mdlen);
		EVP_MD_CTX_free(m);
	}
	free(b);
	*crc = c;
	return rc;
}

int
gcsx_file_crc32c(
    const char *path, uint32_t *crc, int64_t *size, struct tpu_err *err)
{
	struct stat st;
	int fd, rc;

	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
		return io_error(err, "open", path, errno);
	if (fstat(fd, &st) != 0) {
		rc = io_error(err, "stat", path, errno);
		close(fd);
		return rc;
	}
	*size = st.st_size;
	rc = hash_range(fd, path, 0, st.st_size, crc, NULL, err);
	close(fd);
	return rc;
}

static int64_t
opt_or(int64_t v, int64_t def)
{
	return v > 0 ? v : def;
}

/* gcs_base() without its trailing '/'.  Caller frees. */
static char *
base_url(const struct gcs *g)
{
	const char *b = gcs_base(g);
	size_t n = strlen(b);

	while (n > 0 && b[n - 1] == '/')
		n--;
	return xstrndup(b, n);
}

static void
progress(const struct gcsx_opts *o, int64_t delta)
{
	if (o->progress != NULL && delta != 0)
		o->progress(o->progress_arg, delta);
}

static void
rand_hex(char *out, size_t nbytes)
{
	unsigned char b[32];
	size_t i;

	if (nbytes > sizeof b)
		nbytes = sizeof b;
	if (RAND_bytes(b, (int)nbytes) != 1)
		TPU_BUG("RAND_bytes failed");
	for (i = 0; i < nbytes; i++)
		snprintf(out + 2 * i, 3, "%02x", b[i]);
}

/* --- streaming upload source ---------------------------------------------- */

struct src {
	int fd;
	const char *path;
	const char *pre, *post; /* multipart framing around the data */
	size_t prelen, postlen;
	int64_t off, len; /* file range */
	int64_t pos;      /* position in pre + data + post */
	int err;          /* errno of a failed read; -1: short file */
};

static size_t
src_read(char *p, size_t size, size_t nmemb, void *arg)
{
	struct src *s = arg;
	size_t room = size * nmemb, done = 0;
	int64_t total = (int64_t)s->prelen + s->len + (int64_t)s->postlen;

	while (done < room && s->pos < total) {
		if (s->pos < (int64_t)s->prelen) {
			size_t n = s->prelen - (size_t)s->pos;

			if (n > room - done)
				n = room - done;
			memcpy(p + done, s->pre + s->pos, n);
			done += n;
			s->pos += (int64_t)n;
		} else if (s->pos < (int64_t)s->prelen + s->len) {
			int64_t in = s->pos - (int64_t)s->prelen;
			size_t n = (size_t)(s->len - in);
			ssize_t r;

			if (n > room - done)
				n = room - done;
			r = pread(s->fd, p + done, n, s->off + in);
			if (r < 0 && errno == EINTR)
				continue;
			if (r <= 0) {
				s->err = r < 0 ? errno : -1;
				return CURL_READFUNC_ABORT;
			}
			done += (size_t)r;
			s->pos += r;
		} else {
			int64_t in = s->pos - (int64_t)s->prelen - s->len;
			size_t n = s->postlen - (size_t)in;

			if (n > room - done)
				n = room - done;
			memcpy(p + done, s->post + in, n);
			done += n;
			s->pos += (int64_t)n;
		}
	}
	return done;
}

static int
src_rewind(void *arg, int *progressed, struct tpu_err *err)
{
	struct src *s = arg;

	(void)err;
	s->pos = 0;
	*progressed = 0;
	return 0;
}

static int
src_failed(const struct src *s, struct tpu_err *err)
{
	if (s->err > 0)
		return io_error(err, "read", s->path, s->err);
	if (s->err < 0)
		return tpu_error(err, TPU_E_IO,
		    "read %s: the file shrank during the upload", s->path);
	return 0;
}

/* --- replies ----------------------------------------------------------------
 */

static int
parse_object(const struct http_response *resp, struct gcs_object *obj,
    struct tpu_err *err)
{
	cJSON *j = cJSON_ParseWithLength(resp->body.data, resp->body.len);
	int rc;

	if (j == NULL)
		return tpu_error(err, TPU_E_API,
		    "the object reply (HTTP %d) is not JSON", resp->status);
	rc = gcs_object_from_json(j, obj, err);
	cJSON_Delete(j);
	return rc;
}

/* A 400 about the checksums we sent is an integrity failure (C2). */
static int
map_upload_error(int rc, struct tpu_err *err)
{
	if (err->http_status == 400 &&
	    (strcasestr(err->msg, "crc32c") != NULL ||
	        strcasestr(err->msg, "md5") != NULL))
		return err->code = TPU_E_INTEGRITY;
	return rc;
}

static int
is_transient(int rc, const struct tpu_err *err)
{
	return rc == TPU_E_TRANSIENT ||
	       (err->http_status != 0 &&
	           retry_status_retryable(err->http_status));
}

/*
 * Inside a resumable session every connection-level failure is followed
 * by a status query (R1, C6): also those libcurl does not class as
 * retryable, such as a reset while sending (curl 65, it cannot rewind a
 * streamed body).
 */
static int
chunk_transient(int rc, const struct tpu_err *err)
{
	return is_transient(rc, err) ||
	       (rc == TPU_E_API && err->http_status == 0);
}

/*
 * The object we wrote must carry the crc32c we computed (C1); otherwise
 * delete exactly that generation and fail.
 */
static int
verify_uploaded(struct gcs *g, const struct gcs_object *obj, uint32_t crc,
    const char *what, struct tpu_err *err)
{
	struct tpu_err e2;
	char a[CRC32C_B64LEN], b[CRC32C_B64LEN];

	if (obj->has_crc32c && obj->crc32c == crc)
		return 0;
	crc32c_base64(crc, a);
	if (obj->has_crc32c)
		crc32c_base64(obj->crc32c, b);
	else
		snprintf(b, sizeof b, "none");
	tpu_err_init(&e2);
	if (gcs_delete(g, obj->bucket, obj->name, obj->generation, &e2) != 0)
		log_warn("could not delete the bad object gs://%s/%s#%" PRId64
		         ": %s",
		    obj->bucket, obj->name, obj->generation, e2.msg);
	return tpu_error(err, TPU_E_INTEGRITY,
	    "%s: crc32c mismatch: local %s, server %s; the object was "
	    "deleted",
	    what, a, b);
}

/* --- multipart ---------------------------------------------------------- */

static char *
upload_url(struct gcs *g, const char *bucket, const char *type,
    const char *name, int64_t ifgen)
{
	char *eb = gcs_pct_encode(bucket), *en = NULL, *u, *base = base_url(g);
	char gen[48] = "";

	if (ifgen >= 0)
		snprintf(gen, sizeof gen, "&ifGenerationMatch=%" PRId64, ifgen);
	if (name != NULL)
		en = gcs_pct_encode(name);
	u = xasprintf("%s/upload/storage/v1/b/%s/o?uploadType=%s%s%s%s", base,
	    eb, type, en != NULL ? "&name=" : "", en != NULL ? en : "", gen);
	free(base);
	free(eb);
	free(en);
	return u;
}

static cJSON *
metadata(const char *name, const char *ctype, uint32_t crc, const char *md5)
{
	cJSON *m = cJSON_CreateObject();
	char c[CRC32C_B64LEN];

	crc32c_base64(crc, c);
	cJSON_AddStringToObject(m, "name", name);
	cJSON_AddStringToObject(m, "contentType", ctype);
	cJSON_AddStringToObject(m, "crc32c", c);
	if (md5 != NULL)
		cJSON_AddStringToObject(m, "md5Hash", md5);
	return m;
}

static int
upload_multipart(struct gcs *g, int fd, const char *path, int64_t size,
    const char *bucket, const char *name, const char *ctype,
    const struct gcsx_opts *o, struct gcs_object *out, struct tpu_err *err)
{
	struct http_request req;
	struct http_response resp;
	struct src s;
	char bnd[33], md5[MD5_B64LEN], *pre, *post, *meta, *url, *ct;
	uint32_t crc;
	cJSON *m;
	int rc;

	if ((rc = hash_range(fd, path, 0, size, &crc, md5, err)) != 0)
		return rc;
	rand_hex(bnd, 16);
	m = metadata(name, ctype, crc, md5);
	meta = cJSON_PrintUnformatted(m);
	cJSON_Delete(m);
	pre = xasprintf("--%s\r\nContent-Type: application/json; "
	                "charset=UTF-8\r\n\r\n%s\r\n--%s\r\nContent-Type: "
	                "%s\r\n\r\n",
	    bnd, meta, bnd, ctype);
	cJSON_free(meta);
	post = xasprintf("\r\n--%s--\r\n", bnd);
	ct = xasprintf("multipart/related; boundary=%s", bnd);
	url = upload_url(g, bucket, "multipart", NULL, o->if_generation_match);

	memset(&s, 0, sizeof s);
	s.fd = fd;
	s.path = path;
	s.pre = pre;
	s.prelen = strlen(pre);
	s.post = post;
	s.postlen = strlen(post);
	s.off = 0;
	s.len = size;
	memset(&req, 0, sizeof req);
	req.method = "POST";
	req.url = url;
	req.content_type = ct;
	req.read_cb = src_read;
	req.read_arg = &s;
	req.upload_size = (int64_t)s.prelen + size + (int64_t)s.postlen;
	req.before_retry = src_rewind;
	req.retry_arg = &s;
	/* R1: an upload is retried only under a generation precondition */
	req.flags = o->if_generation_match >= 0 ? HTTP_F_IDEMPOTENT : 0;
	http_response_init(&resp);
	rc = http_request(gcs_http(g), &req, &resp, err);
	if (rc != 0 && s.err != 0)
		rc = src_failed(&s, err);
	else if (rc != 0)
		rc = map_upload_error(rc, err);
	else if (!resp.dry_run && (rc = parse_object(&resp, out, err)) == 0)
		rc = verify_uploaded(g, out, crc, path, err);
	if (rc == 0)
		progress(o, size);
	http_response_release(&resp);
	free(url);
	free(ct);
	free(pre);
	free(post);
	return rc;
}

/* --- resumable ---------------------------------------------------------- */

struct session {
	struct gcs *g;
	const char *path;
	int fd;
	char *url;
	int64_t base; /* file offset of byte 0 of this upload */
	int64_t size; /* bytes in this upload */
	int64_t chunk;
	const struct gcsx_opts *o;
};

static int
session_start(struct gcs *g, const char *bucket, const char *name,
    const char *ctype, int64_t size, uint32_t crc, const char *md5,
    int64_t ifgen, char **session, struct tpu_err *err)
{
	struct http_request req;
	struct http_response resp;
	char *url = upload_url(g, bucket, "resumable", NULL, ifgen), *body;
	char h1[160], h2[64], *want;
	const char *hdrs[3];
	cJSON *m = metadata(name, ctype, crc, md5);
	int rc;

	body = cJSON_PrintUnformatted(m);
	cJSON_Delete(m);
	snprintf(h1, sizeof h1, "X-Upload-Content-Type: %.130s", ctype);
	snprintf(h2, sizeof h2, "X-Upload-Content-Length: %" PRId64, size);
	hdrs[0] = h1;
	hdrs[1] = h2;
	hdrs[2] = NULL;
	memset(&req, 0, sizeof req);
	req.method = "POST";
	req.url = url;
	req.body = body;
	req.body_len = strlen(body);
	req.content_type = "application/json; charset=UTF-8";
	req.headers = hdrs;
	req.flags = HTTP_F_IDEMPOTENT; /* a session alone writes nothing */
	http_response_init(&resp);
	*session = NULL;
	if ((rc = http_request(gcs_http(g), &req, &resp, err)) == 0 &&
	    !resp.dry_run) {
		char *base = base_url(g);

		*session = http_response_header(&resp, "Location");
		want = xasprintf("%s/upload/storage/v1/b/", base);
		free(base);
		if (*session == NULL ||
		    strncmp(*session, want, strlen(want)) != 0) {
			rc = tpu_error(err, TPU_E_API,
			    "the resumable upload reply has no usable "
			    "Location");
			free(*session);
			*session = NULL;
		}
		free(want);
	} else if (rc != 0)
		rc = map_upload_error(rc, err);
	http_response_release(&resp);
	cJSON_free(body);
	free(url);
	return rc;
}

/*
 * Ask where the session stands: 0 with *next set (308), 1 with out filled
 * (the object exists), or an error (404/410: the session is gone).
 */
static int
session_query(struct session *ss, int64_t *next, struct gcs_object *out,
    struct tpu_err *err)
{
	static const int ok308[] = { 308, 0 };
	struct http_request req;
	struct http_response resp;
	char cr[64], *range;
	const char *hdrs[2];
	int rc;

	snprintf(cr, sizeof cr, "Content-Range: bytes */%" PRId64, ss->size);
	hdrs[0] = cr;
	hdrs[1] = NULL;
	memset(&req, 0, sizeof req);
	req.method = "PUT";
	req.url = ss->url;
	req.body = "";
	req.body_len = 0;
	req.headers = hdrs;
	req.accept_status = ok308;
	req.flags = HTTP_F_IDEMPOTENT | HTTP_F_NODRYRUN;
	http_response_init(&resp);
	rc = http_request(gcs_http(ss->g), &req, &resp, err);
	if (rc == 0 && resp.status == 308) {
		range = http_response_header(&resp, "Range");
		*next = gcsx_parse_range(range);
		if (*next < 0 || *next > ss->size)
			rc = tpu_error(err, TPU_E_API,
			    "bad Range '%s' in the session status",
			    range != NULL ? range : "");
		free(range);
	} else if (rc == 0) {
		if ((rc = parse_object(&resp, out, err)) == 0)
			rc = 1;
	}
	http_response_release(&resp);
	return rc;
}

/* One chunk PUT: 0 with *next (308), 1 with out (done), or an error. */
static int
session_put(struct session *ss, int64_t off, int64_t *next,
    struct gcs_object *out, struct tpu_err *err)
{
	static const int ok308[] = { 308, 0 };
	struct http_request req;
	struct http_response resp;
	struct src s;
	char cr[96], *range;
	const char *hdrs[2];
	int64_t len = ss->size - off;
	int rc;

	if (len > ss->chunk) {
		/* non-final chunks end on a 256 KiB boundary, also after a
		   rewind to an unaligned offset (C8) */
		len = (off + ss->chunk) / GCSX_QUANTUM * GCSX_QUANTUM - off;
	}
	if (len == 0)
		snprintf(
		    cr, sizeof cr, "Content-Range: bytes */%" PRId64, ss->size);
	else
		snprintf(cr, sizeof cr,
		    "Content-Range: bytes %" PRId64 "-%" PRId64 "/%" PRId64,
		    off, off + len - 1, ss->size);
	hdrs[0] = cr;
	hdrs[1] = NULL;
	memset(&s, 0, sizeof s);
	s.fd = ss->fd;
	s.path = ss->path;
	s.off = ss->base + off;
	s.len = len;
	memset(&req, 0, sizeof req);
	req.method = "PUT";
	req.url = ss->url;
	req.content_type = "application/octet-stream";
	req.read_cb = src_read;
	req.read_arg = &s;
	req.upload_size = len;
	req.headers = hdrs;
	req.accept_status = ok308;
	req.max_attempts = 1; /* we query and resume ourselves (C6) */
	req.flags = HTTP_F_IDEMPOTENT;
	http_response_init(&resp);
	rc = http_request(gcs_http(ss->g), &req, &resp, err);
	if (rc != 0 && s.err != 0)
		rc = src_failed(&s, err);
	else if (rc != 0)
		rc = map_upload_error(rc, err);
	else if (resp.dry_run)
		rc = 1;
	else if (resp.status == 308) {
		range = http_response_header(&resp, "Range");
		*next = gcsx_parse_range(range);
		if (*next < 0 || *next > ss->size)
			rc = tpu_error(err, TPU_E_API,
			    "bad Range '%s' in a chunk reply",
			    range != NULL ? range : "");
		free(range);
	} else if ((rc = parse_object(&resp, out, err)) == 0)
		rc = 1;
	http_response_release(&resp);
	return rc;
}

/*
 * Send [start, size) of the session, resuming after failures.  0 with out
 * filled, or an error.
 */
static int
session_run(struct session *ss, int64_t start, struct gcs_object *out,
    struct tpu_err *err)
{
	struct retry_policy pol;
	struct retry_state rs;
	int64_t off = start, next = 0, wait;
	int rc;

	retry_policy_default(&pol);
	retry_state_init(&rs, &pol, 0, tpu_now_ms());
	progress(ss->o, off);
	for (;;) {
		if (off == ss->size && ss->size > 0) {
			/* all persisted but not finalised: ask */
			rc = session_query(ss, &next, out, err);
		} else
			rc = session_put(ss, off, &next, out, err);
		if (rc == 1)
			break;
		if (rc == 0) {
			if (next != off) {
				progress(ss->o, next - off);
				retry_state_progress(&rs);
			} else if (retry_next(&rs, -1, tpu_now_ms(), &wait) !=
			           0) {
				return tpu_error(err, TPU_E_TRANSIENT,
				    "resumable upload of %s makes no progress "
				    "at byte %" PRId64,
				    ss->path, off);
			} else if ((rc = retry_sleep(wait, err)) != 0)
				return rc;
			if (next < off)
				log_info("%s: the server kept %" PRId64
				         " bytes, rewinding",
				    ss->path, next);
			off = next;
			continue;
		}
		if (!chunk_transient(rc, err))
			return rc;
		if (retry_next(&rs, -1, tpu_now_ms(), &wait) != 0)
			return tpu_error(err, TPU_E_TRANSIENT,
			    "resumable upload of %s: giving up: %s", ss->path,
			    err->msg);
		log_info("%s: %s; querying the session in %.1f s", ss->path,
		    err->msg, (double)wait / 1000.0);
		if ((rc = retry_sleep(wait, err)) != 0)
			return rc;
		tpu_err_init(err);
		rc = session_query(ss, &next, out, err);
		if (rc == 1)
			break;
		if (rc != 0)
			return rc;
		if (next > off)
			retry_state_progress(&rs);
		progress(ss->o, next - off);
		off = next;
	}
	if (off < ss->size)
		progress(ss->o, ss->size - off);
	return 0;
}

static int
stat_mtime(int fd, const char *path, int64_t *size, int64_t *mtime_ns,
    struct tpu_err *err)
{
	struct stat st;

	if (fstat(fd, &st) != 0)
		return io_error(err, "stat", path, errno);
	*size = st.st_size;
	*mtime_ns =
	    (int64_t)st.st_mtim.tv_sec * 1000000000 + st.st_mtim.tv_nsec;
	return 0;
}

static int
upload_resumable(struct gcs *g, int fd, const char *path, int64_t size,
    int64_t mtime_ns, const char *bucket, const char *name, const char *ctype,
    const struct gcsx_opts *o, struct gcs_object *out, struct tpu_err *err)
{
	struct session ss;
	struct gcsx_tracker t;
	struct buf b;
	char md5[MD5_B64LEN], *dir = NULL, *tpath = NULL, *abs = NULL, *dst;
	uint32_t crc;
	int64_t start = 0;
	int rc, q, restarted = 0;

	if ((rc = hash_range(fd, path, 0, size, &crc, md5, err)) != 0)
		return rc;
	memset(&ss, 0, sizeof ss);
	ss.g = g;
	ss.path = path;
	ss.fd = fd;
	ss.size = size;
	ss.chunk = opt_or(o->chunk, GCSX_CHUNK);
	ss.chunk = (ss.chunk + GCSX_QUANTUM - 1) / GCSX_QUANTUM * GCSX_QUANTUM;
	ss.o = o;
	dst = xasprintf("gs://%s/%s", bucket, name);
	if (!o->no_tracker && !http_dry_run(gcs_http(g)) &&
	    (abs = realpath(path, NULL)) != NULL) {
		dir = o->tracker_dir != NULL ? xstrdup(o->tracker_dir)
		                             : gcsx_tracker_dir();
		tpath = gcsx_tracker_path(dir, abs, dst);
		buf_init(&b, 64 * 1024);
		if (fsutil_read_file(tpath,
		        FSUTIL_F_NOFOLLOW | FSUTIL_F_PRIVATE, &b, NULL,
		        err) == 0 &&
		    gcsx_tracker_parse(b.data, b.len, gcs_base(g), &t, err) ==
		        0) {
			if (gcsx_tracker_matches(
			        &t, abs, dst, size, mtime_ns, crc))
				ss.url = xstrdup(t.session);
			else
				log_info("%s: the source changed since the "
				         "interrupted upload; starting over",
				    path);
			gcsx_tracker_release(&t);
		}
		buf_release(&b);
		tpu_err_init(err);
	}
	if (ss.url != NULL) {
		q = session_query(&ss, &start, out, err);
		if (q == 1) {
			progress(o, size);
			goto done;
		}
		if (q == 0)
			log_info("%s: resuming the upload recorded in %s at "
			         "byte %" PRId64,
			    path, tpath, start);
		if (q != 0) {
			log_info("%s: the recorded session is unusable (%s); "
			         "starting over",
			    path, err->msg);
			tpu_err_init(err);
			free(ss.url);
			ss.url = NULL;
			start = 0;
		}
	}
again:
	if (ss.url == NULL) {
		if ((rc = session_start(g, bucket, name, ctype, size, crc, md5,
		         o->if_generation_match, &ss.url, err)) != 0)
			goto out;
		if (ss.url == NULL) { /* dry run */
			progress(o, size);
			goto out;
		}
		if (tpath != NULL) {
			memset(&t, 0, sizeof t);
			t.src = abs;
			t.dst = dst;
			t.session = ss.url;
			t.size = size;
			t.mtime_ns = mtime_ns;
			t.crc32c = crc;
			buf_init(&b, BUF_NOCAP);
			if (gcsx_tracker_format(&t, &b) != 0 ||
			    fsutil_mkdir_private(dir, err) != 0 ||
			    fsutil_write_atomic(
			        tpath, b.data, b.len, 0600, err) != 0) {
				log_warn("%s: no resume tracker: %s", path,
				    err->msg);
				tpu_err_init(err);
			}
			buf_release(&b);
		}
	}
	rc = session_run(&ss, start, out, err);
	if (rc != 0 && (err->http_status == 404 || err->http_status == 410) &&
	    o->if_generation_match >= 0 && !restarted) {
		/* C9: the session is gone; a new one is safe only under a
		   generation precondition */
		log_info("%s: the upload session is gone (HTTP %d); starting "
		         "a new one",
		    path, err->http_status);
		restarted = 1;
		tpu_err_init(err);
		free(ss.url);
		ss.url = NULL;
		start = 0;
		goto again;
	}
	if (rc != 0) {
		/* keep the tracker for a rerun unless resuming cannot help */
		if (tpath != NULL && !is_transient(rc, err) &&
		    rc != TPU_E_INTERRUPTED && rc != TPU_E_TERMINATED)
			fsutil_remove(tpath, NULL);
		goto out;
	}
done:
	if (tpath != NULL)
		fsutil_remove(tpath, NULL);
	rc = verify_uploaded(g, out, crc, path, err);
out:
	free(ss.url);
	free(dir);
	free(tpath);
	free(abs);
	free(dst);
	return rc;
}

/* --- parallel composite -------------------------------------------------- */

struct pjob {
	struct gcs *g;
	int fd;
	const char *path, *bucket, *ctype;
	const struct gcsx_opts *o;
	struct gcsx_part *parts;
	uint32_t *crcs;
	char **names;
	int *done;
	size_t n, next;
	int rc;
	struct tpu_err err;
	pthread_mutex_t mu;
};

static void *
part_worker(void *arg)
{
	struct pjob *j = arg;
	struct gcs *g = NULL;
	struct tpu_err err;
	size_t i;
	int rc;

	tpu_err_init(&err);
	if ((rc = gcs_clone(j->g, &g, &err)) != 0)
		goto fail;
	for (;;) {
		struct session ss;
		struct gcs_object obj;

		pthread_mutex_lock(&j->mu);
		i = j->next++;
		if (j->rc != 0 || retry_interrupted)
			i = j->n;
		pthread_mutex_unlock(&j->mu);
		if (i >= j->n)
			break;
		memset(&ss, 0, sizeof ss);
		memset(&obj, 0, sizeof obj);
		ss.g = g;
		ss.path = j->path;
		ss.fd = j->fd;
		ss.base = j->parts[i].off;
		ss.size = j->parts[i].len;
		ss.chunk = opt_or(j->o->chunk, GCSX_CHUNK);
		ss.o = j->o;
		if ((rc = session_start(g, j->bucket, j->names[i], j->ctype,
		         ss.size, j->crcs[i], NULL, 0, &ss.url, &err)) != 0)
			goto fail;
		rc = session_run(&ss, 0, &obj, &err);
		free(ss.url);
		if (rc == 0) {
			pthread_mutex_lock(&j->mu);
			j->done[i] = 1;
			pthread_mutex_unlock(&j->mu);
			rc =
			    verify_uploaded(g, &obj, j->crcs[i], j->path, &err);
		}
		gcs_object_release(&obj);
		if (rc != 0)
			goto fail;
	}
	gcs_close(g);
	return NULL;
fail:
	pthread_mutex_lock(&j->mu);
	if (j->rc == 0) {
		j->rc = rc;
		j->err = err;
	}
	pthread_mutex_unlock(&j->mu);
	gcs_close(g);
	return NULL;
}

static int
upload_composite(struct gcs *g, int fd, const char *path, int64_t size,
    const char *bucket, const char *name, const char *ctype,
    const struct gcsx_opts *o, struct gcs_object *out, struct tpu_err *err)
{
	struct gcsx_part parts[GCSX_MAX_PARTS];
	uint32_t crcs[GCSX_MAX_PARTS], crc;
	char *names[GCSX_MAX_PARTS], id[17];
	int done[GCSX_MAX_PARTS];
	pthread_t th[GCSX_MAX_PARTS];
	struct pjob j;
	size_t n, i, nth;
	int rc = 0;
	int64_t minpart =
	    opt_or(o->composite_min, GCSX_COMPOSITE_MIN) / GCSX_MAX_PARTS;

	n = gcsx_plan_parts(size, minpart,
	    (size_t)(o->parallel < GCSX_MAX_PARTS ? o->parallel * 2
	                                          : GCSX_MAX_PARTS),
	    parts);
	if (n > GCSX_MAX_PARTS)
		n = GCSX_MAX_PARTS;
	for (i = 0; i < n; i++)
		if ((rc = hash_range(fd, path, parts[i].off, parts[i].len,
		         &crcs[i], NULL, err)) != 0)
			return rc;
	crc = gcsx_combine(crcs, parts, n);
	rand_hex(id, 8);
	for (i = 0; i < n; i++) {
		names[i] = xasprintf("%s.tpuctl-part-%s-%zu", name, id, i);
		done[i] = 0;
	}
	memset(&j, 0, sizeof j);
	j.g = g;
	j.fd = fd;
	j.path = path;
	j.bucket = bucket;
	j.ctype = ctype;
	j.o = o;
	j.parts = parts;
	j.crcs = crcs;
	j.names = names;
	j.done = done;
	j.n = n;
	tpu_err_init(&j.err);
	pthread_mutex_init(&j.mu, NULL);
	nth = (size_t)o->parallel < n ? (size_t)o->parallel : n;
	for (i = 0; i < nth; i++)
		if (pthread_create(&th[i], NULL, part_worker, &j) != 0)
			TPU_BUG("pthread_create");
	for (i = 0; i < nth; i++)
		pthread_join(th[i], NULL);
	pthread_mutex_destroy(&j.mu);
	if (j.rc != 0) {
		*err = j.err;
		rc = j.rc;
	} else if (http_dry_run(gcs_http(g)))
		goto clean;
	else if ((rc = gcs_compose(g, bucket, (const char *const *)names, n,
	              name, ctype, o->if_generation_match, out, err)) == 0)
		rc = verify_uploaded(g, out, crc, path, err);
clean:
	for (i = 0; i < n; i++) {
		struct tpu_err e2;

		tpu_err_init(&e2);
		if (done[i] && gcs_delete(g, bucket, names[i], -1, &e2) != 0 &&
		    e2.code != TPU_E_NOTFOUND)
			log_warn("could not delete the temporary part "
			         "gs://%s/%s: %s",
			    bucket, names[i], e2.msg);
		free(names[i]);
	}
	return rc;
}

int
gcsx_upload(struct gcs *g, const char *path, const char *bucket,
    const char *name, const struct gcsx_opts *o, struct gcs_object *out,
    struct tpu_err *err)
{
	struct gcs_object tmp;
	const char *ctype;
	int64_t size = 0, mtime_ns = 0;
	struct stat st;
	int fd, rc;

	if (out == NULL)
		out = &tmp;
	memset(out, 0, sizeof *out);
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
		return io_error(err, "open", path, errno);
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
		close(fd);
		return tpu_error(err, TPU_E_IO, "%s: not a regular file", path);
	}
	if ((rc = stat_mtime(fd, path, &size, &mtime_ns, err)) != 0)
		goto out;
	ctype =
	    o->content_type != NULL ? o->content_type : gcsx_guess_type(name);
	if (size <= opt_or(o->multipart_max, GCSX_MULTIPART_MAX))
		rc = upload_multipart(
		    g, fd, path, size, bucket, name, ctype, o, out, err);
	else if (size >= opt_or(o->composite_min, GCSX_COMPOSITE_MIN) &&
	         o->parallel > 1)
		rc = upload_composite(
		    g, fd, path, size, bucket, name, ctype, o, out, err);
	else
		rc = upload_resumable(g, fd, path, size, mtime_ns, bucket, name,
		    ctype, o, out, err);
out:
	close(fd);
	if (out == &tmp)
		gcs_object_release(&tmp);
	return rc;
}

/* --- downloads ------------------------------------------------------------ */

struct sink {
	int fd;
	int64_t off, end; /* next write position, end of the range */
	uint32_t crc;
	EVP_MD_CTX *md5;
	int werr;     /* errno of a failed write */
	int overflow; /* the server sent more than asked */
	const struct gcsx_opts *o;
};

static size_t
sink_write(const char *p, size_t n, void *arg)
{
	struct sink *k = arg;
	size_t done = 0;

	if ((int64_t)n > k->end - k->off) {
		k->overflow = 1;
		return 0;
	}
	while (done < n) {
		ssize_t w = pwrite(k->fd, p + done, n - done, k->off);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0) {
			k->werr = w < 0 ? errno : EIO;
			return 0;
		}
		k->crc = crc32c_update(k->crc, p + done, (size_t)w);
		if (k->md5 != NULL)
			EVP_DigestUpdate(k->md5, p + done, (size_t)w);
		done += (size_t)w;
		k->off += w;
	}
	progress(k->o, (int64_t)n);
	return n;
}

/*
 * Fetch [off, end) of obj into fd at the same offsets, resuming with Range
 * after transient failures; *crc gets the range's crc32c.
 */
static int
fetch_range(struct gcs *g, const struct gcs_object *obj, int fd, int64_t off,
    int64_t end, const char *dest, EVP_MD_CTX *md5, uint32_t *crc,
    const struct gcsx_opts *o, struct tpu_err *err)
{
	struct retry_policy pol;
	struct retry_state rs;
	struct http_request req;
	struct http_response resp;
	struct sink k;
	char range[80], *url;
	const char *hdrs[2];
	int64_t wait, before;
	int rc;

	url = gcs_media_url(g, obj->bucket, obj->name, obj->generation);
	memset(&k, 0, sizeof k);
	k.fd = fd;
	k.off = off;
	k.end = end;
	k.md5 = md5;
	k.o = o;
	retry_policy_default(&pol);
	retry_state_init(&rs, &pol, 0, tpu_now_ms());
	for (;;) {
		int ranged = k.off > 0 || end < obj->size;

		if (end == 0 || k.off == end) {
			rc = 0;
			if (end > 0 || obj->size > 0)
				break;
		}
		snprintf(range, sizeof range,
		    "Range: bytes=%" PRId64 "-%" PRId64, k.off, end - 1);
		hdrs[0] = range;
		hdrs[1] = NULL;
		memset(&req, 0, sizeof req);
		req.method = "GET";
		req.url = url;
		req.headers = ranged ? hdrs : NULL;
		req.flags = HTTP_F_IDEMPOTENT;
		req.max_attempts = 1;
		req.write_cb = sink_write;
		req.write_arg = &k;
		before = k.off;
		http_response_init(&resp);
		rc = http_request(gcs_http(g), &req, &resp, err);
		if (rc == 0 && ranged && resp.status == 200 && before > 0) {
			rc = tpu_error(err, TPU_E_API,
			    "GET %s: the server ignored the Range", obj->name);
			http_response_release(&resp);
			break;
		}
		http_response_release(&resp);
		if (k.werr != 0) {
			rc = tpu_error(err, TPU_E_IO, "write %s: %s", dest,
			    strerror(k.werr));
			break;
		}
		if (k.overflow) {
			rc = tpu_error(err, TPU_E_API,
			    "GET gs://%s/%s: more bytes than the object has",
			    obj->bucket, obj->name);
			break;
		}
		if (rc == 0 && (k.off == end || end == 0))
			break;
		if (rc == 0) /* a short body without an error */
			tpu_error(err, TPU_E_TRANSIENT,
			    "GET gs://%s/%s: the stream ended at byte %" PRId64,
			    obj->bucket, obj->name, k.off);
		else if (!is_transient(rc, err))
			break;
		if (k.off > before)
			retry_state_progress(&rs);
		if (retry_next(&rs, -1, tpu_now_ms(), &wait) != 0) {
			rc = tpu_error(err, TPU_E_TRANSIENT,
			    "download of gs://%s/%s: giving up at byte %" PRId64
			    ": %s",
			    obj->bucket, obj->name, k.off, err->msg);
			break;
		}
		log_info("gs://%s/%s: %s; resuming at byte %" PRId64
		         " in %.1f s",
		    obj->bucket, obj->name, err->msg, k.off,
		    (double)wait / 1000.0);
		if ((rc = retry_sleep(wait, err)) != 0)
			break;
		tpu_err_init(err);
	}
	free(url);
	*crc = k.crc;
	return rc;
}

struct djob {
	struct gcs *g;
	const struct gcs_object *obj;
	const char *dest;
	int fd;
	const struct gcsx_opts *o;
	struct gcsx_part *parts;
	uint32_t *crcs;
	size_t n, next;
	int rc;
	struct tpu_err err;
	pthread_mutex_t mu;
};

static void *
slice_worker(void *arg)
{
	struct djob *j = arg;
	struct gcs *g = NULL;
	struct tpu_err err;
	size_t i;
	int rc;

	tpu_err_init(&err);
	if ((rc = gcs_clone(j->g, &g, &err)) != 0)
		goto fail;
	for (;;) {
		pthread_mutex_lock(&j->mu);
		i = j->next++;
		if (j->rc != 0 || retry_interrupted)
			i = j->n;
		pthread_mutex_unlock(&j->mu);
		if (i >= j->n)
			break;
		if ((rc = fetch_range(g, j->obj, j->fd, j->parts[i].off,
		         j->parts[i].off + j->parts[i].len, j->dest, NULL,
		         &j->crcs[i], j->o, &err)) != 0)
			goto fail;
	}
	gcs_close(g);
	return NULL;
fail:
	pthread_mutex_lock(&j->mu);
	if (j->rc == 0) {
		j->rc = rc;
		j->err = err;
	}
	pthread_mutex_unlock(&j->mu);
	gcs_close(g);
	return NULL;
}

static mode_t
file_mode(void)
{
	return file_mode_bits;
}

static int
fsync_dir(const char *path, struct tpu_err *err)
{
	char *d = xstrdup(path), *slash = strrchr(d, '/');
	int fd, rc = 0;

	if (slash == d)
		slash[1] = '\0';
	else if (slash != NULL)
		*slash = '\0';
	else
		snprintf(d, strlen(d) + 1, ".");
	if ((fd = open(d, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) >= 0) {
		if (fsync(fd) != 0 && errno != EINVAL)
			rc = io_error(err, "fsync", d, errno);
		close(fd);
	}
	free(d);
	return rc;
}

int
gcsx_download(struct gcs *g, const struct gcs_object *obj, const char *dest,
    const struct gcsx_opts *o, struct tpu_err *err)
{
	struct gcsx_part parts[GCSX_MAX_PARTS];
	uint32_t crcs[GCSX_MAX_PARTS], crc = 0;
	unsigned char md[EVP_MAX_MD_SIZE];
	unsigned int mdlen = 0;
	char *tmp, md5[MD5_B64LEN];
	EVP_MD_CTX *m = NULL;
	struct stat st;
	size_t n = 1, i;
	int fd, rc = 0;

	if (http_dry_run(gcs_http(g))) {
		progress(o, obj->size);
		return 0;
	}
	if (lstat(dest, &st) == 0 && S_ISDIR(st.st_mode))
		return tpu_error(err, TPU_E_IO, "%s: is a directory", dest);
	tmp = xasprintf("%s%s", dest, GCSX_TMP_SUFFIX);
	unlink(tmp);
	fd = open(
	    tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0) {
		rc = io_error(err, "create", tmp, errno);
		free(tmp);
		return rc;
	}
	if (o->parallel > 1 &&
	    obj->size >= opt_or(o->slice_min, GCSX_SLICE_MIN))
		n = gcsx_plan_parts(obj->size,
		    opt_or(o->slice_min, GCSX_SLICE_MIN) / 4,
		    (size_t)(o->parallel < GCSX_MAX_PARTS ? o->parallel
		                                          : GCSX_MAX_PARTS),
		    parts);
	if (n > 1) {
		struct djob j;
		pthread_t th[GCSX_MAX_PARTS];

		if (ftruncate(fd, obj->size) != 0) {
			rc = io_error(err, "truncate", tmp, errno);
			goto fail;
		}
		memset(&j, 0, sizeof j);
		j.g = g;
		j.obj = obj;
		j.dest = dest;
		j.fd = fd;
		j.o = o;
		j.parts = parts;
		j.crcs = crcs;
		j.n = n;
		tpu_err_init(&j.err);
		pthread_mutex_init(&j.mu, NULL);
		for (i = 0; i < n; i++)
			if (pthread_create(&th[i], NULL, slice_worker, &j) != 0)
				TPU_BUG("pthread_create");
		for (i = 0; i < n; i++)
			pthread_join(th[i], NULL);
		pthread_mutex_destroy(&j.mu);
		if (j.rc != 0) {
			*err = j.err;
			rc = j.rc;
			goto fail;
		}
		crc = gcsx_combine(crcs, parts, n);
	} else {
		if (!obj->has_crc32c && obj->md5_b64 != NULL) {
			if ((m = EVP_MD_CTX_new()) == NULL ||
			    EVP_DigestInit_ex(m, EVP_md5(), NULL) != 1)
				TPU_BUG("md5 init");
		}
		if ((rc = fetch_range(
		         g, obj, fd, 0, obj->size, dest, m, &crc, o, err)) != 0)
			goto fail;
	}
	if (obj->has_crc32c && crc != obj->crc32c) {
		char a[CRC32C_B64LEN], b[CRC32C_B64LEN];

		crc32c_base64(crc, a);
		crc32c_base64(obj->crc32c, b);
		rc = tpu_error(err, TPU_E_INTEGRITY,
		    "gs://%s/%s: crc32c mismatch: received %s, expected %s; "
		    "%s was not written",
		    obj->bucket, obj->name, a, b, dest);
		goto fail;
	}
	if (m != NULL) {
		EVP_DigestFinal_ex(m, md, &mdlen);
		EVP_EncodeBlock((unsigned char *)md5, md, (int)mdlen);
		if (strcmp(md5, obj->md5_b64) != 0) {
			rc = tpu_error(err, TPU_E_INTEGRITY,
			    "gs://%s/%s: md5 mismatch: received %s, expected "
			    "%s; %s was not written",
			    obj->bucket, obj->name, md5, obj->md5_b64, dest);
			goto fail;
		}
	}
	if (fchmod(fd, file_mode()) != 0) {
		rc = io_error(err, "chmod", tmp, errno);
		goto fail;
	}
	if (fsync(fd) != 0) {
		rc = io_error(err, "fsync", tmp, errno);
		goto fail;
	}
	if (close(fd) != 0) {
		fd = -1;
		rc = io_error(err, "close", tmp, errno);
		goto fail;
	}
	fd = -1;
	if (rename(tmp, dest) != 0) {
		rc = io_error(err, "rename", tmp, errno);
		goto fail;
	}
	rc = fsync_dir(dest, err);
	EVP_MD_CTX_free(m);
	free(tmp);
	return rc;
fail:
	EVP_MD_CTX_free(m);
	if (fd >= 0)
		close(fd);
	unlink(tmp);
	free(tmp);
	return rc;
}
