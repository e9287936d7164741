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

/* TPUCTL_GCS_CHUNK_SIZE (bytes): tests and benchmarks; 0 otherwise. */
static int64_t
env_chunk(void)
{
	const char *v = getenv("TPUCTL_GCS_CHUNK_SIZE"), *errstr;
	long long n;

	if (v == NULL || *v == '\0')
		return 0;
	n = tpu_strtonum(v, GCSX_QUANTUM, INT64_MAX / 2, &errstr);
	if (errstr != NULL) {
		log_warn("ignoring TPUCTL_GCS_CHUNK_SIZE '%.40s': %s (at least "
		         "%d bytes)",
		    v, errstr, GCSX_QUANTUM);
		return 0;
	}
	return n;
}

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
	o->chunk = env_chunk();
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

size_t
gcsx_slice_streams(int parallel, long ncpu)
{
	size_t n = parallel > 1 ? (size_t)parallel : 1;

	if (ncpu < 2)
		ncpu = 2;
	if (n > (size_t)ncpu)
		n = (size_t)ncpu;
	return n < GCSX_MAX_PARTS ? n : GCSX_MAX_PARTS;
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

/*
 * A tracker's JSON with the fields every version has: the object, or
 * NULL with err set (not JSON, or a field missing or bad, or another
 * version).
 */
static cJSON *
tracker_open(const char *text, size_t len, double version, const char **src,
    const char **dst, int64_t *size, int64_t *mtime_ns, uint32_t *crc32c,
    struct tpu_err *err)
{
	cJSON *o = cJSON_ParseWithLength(text, len);
	const cJSON *v;
	const char *crc;

	if (o == NULL || !cJSON_IsObject(o)) {
		cJSON_Delete(o);
		tpu_error(err, TPU_E_INVALID, "tracker: not JSON");
		return NULL;
	}
	v = cJSON_GetObjectItemCaseSensitive(o, "version");
	crc = jstr(o, "crc32c");
	*src = jstr(o, "src");
	*dst = jstr(o, "dst");
	if (!cJSON_IsNumber(v) || v->valuedouble != version || *src == NULL ||
	    *dst == NULL || crc == NULL || jint(o, "size", size) != 0 ||
	    jint(o, "mtime_ns", mtime_ns) != 0 ||
	    crc32c_parse_base64(crc, crc32c) != 0) {
		cJSON_Delete(o);
		tpu_error(err, TPU_E_INVALID, "tracker: missing or bad fields");
		return NULL;
	}
	return o;
}

/* Where a tracker's session URLs must point: base/upload/storage/v1/b/. */
static char *
session_prefix(const char *base)
{
	size_t n = strlen(base);

	while (n > 0 && base[n - 1] == '/')
		n--;
	return xasprintf("%.*s/upload/storage/v1/b/", (int)n, base);
}

/* 1 when a recorded session URL is under prefix and one clean line. */
static int
session_ok(const char *ses, const char *prefix)
{
	return ses != NULL && strncmp(ses, prefix, strlen(prefix)) == 0 &&
	       strpbrk(ses, " \t\r\n") == NULL;
}

int
gcsx_tracker_parse(const char *text, size_t len, const char *base,
    struct gcsx_tracker *t, struct tpu_err *err)
{
	const char *src, *dst, *ses;
	char *want;
	cJSON *o;
	int rc = 0;

	memset(t, 0, sizeof *t);
	if ((o = tracker_open(text, len, 1, &src, &dst, &t->size, &t->mtime_ns,
	         &t->crc32c, err)) == NULL)
		return err->code;
	if ((ses = jstr(o, "session")) == NULL) {
		cJSON_Delete(o);
		return tpu_error(
		    err, TPU_E_INVALID, "tracker: missing or bad fields");
	}
	want = session_prefix(base);
	if (!session_ok(ses, want))
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
	/* progress while sending: *shown is what was reported so far,
	   shown_base the session offset of data byte 0 (NULL: none) */
	const struct gcsx_opts *o;
	int64_t *shown, shown_base;
	/* a session chunk: libcurl may not re-send bytes on its own, the
	   session query re-sends fewer (C6) */
	int no_resend;
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
			if (s->shown != NULL &&
			    s->shown_base + in + r > *s->shown) {
				progress(
				    s->o, s->shown_base + in + r - *s->shown);
				*s->shown = s->shown_base + in + r;
			}
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

/* libcurl rewinds the body (http.h seek_cb) */
static int
src_seek(void *arg, int64_t off)
{
	struct src *s = arg;

	if (off < 0 || off > (int64_t)s->prelen + s->len + (int64_t)s->postlen)
		return -1;
	if (s->no_resend && off != s->pos)
		return -1;
	s->pos = off;
	return 0;
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
 * retryable, such as a reset while sending (curl 65: a chunk refuses
 * libcurl's own rewind, since the query re-sends only what the server
 * lacks).
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
	req.seek_cb = src_seek;
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
	int64_t base;  /* file offset of byte 0 of this upload */
	int64_t size;  /* bytes in this upload */
	int64_t chunk; /* bytes per PUT, a multiple of 256 KiB */
	int64_t shown; /* bytes reported to the progress callback */
	const struct gcsx_opts *o;
};

/* Report progress up to byte at of the session (may go back). */
static void
session_shown(struct session *ss, int64_t at)
{
	progress(ss->o, at - ss->shown);
	ss->shown = at;
}

/* The bytes per PUT of o: a multiple of 256 KiB. */
static int64_t
chunk_size(const struct gcsx_opts *o)
{
	int64_t c = opt_or(o->chunk, GCSX_CHUNK);

	return (c + GCSX_QUANTUM - 1) / GCSX_QUANTUM * GCSX_QUANTUM;
}

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
	s.o = ss->o;
	s.shown = &ss->shown;
	s.shown_base = off;
	s.no_resend = 1;
	memset(&req, 0, sizeof req);
	req.method = "PUT";
	req.url = ss->url;
	req.content_type = "application/octet-stream";
	req.read_cb = src_read;
	req.read_arg = &s;
	req.upload_size = len;
	req.seek_cb = src_seek;
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
	session_shown(ss, off);
	for (;;) {
		if (off == ss->size && ss->size > 0) {
			/* all persisted but not finalised: ask */
			rc = session_query(ss, &next, out, err);
		} else
			rc = session_put(ss, off, &next, out, err);
		if (rc == 1)
			break;
		if (rc == 0) {
			session_shown(ss, next);
			if (next != off) {
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
		session_shown(ss, next);
		off = next;
	}
	session_shown(ss, ss->size);
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

/*
 * The tracker of path -> dst: 0 with *dir, *tpath and *abs set, or -1
 * when none applies (no_tracker, a dry run, no absolute path).
 */
static int
tracker_where(struct gcs *g, const char *path, const char *dst,
    const struct gcsx_opts *o, char **dir, char **tpath, char **abs)
{
	*dir = *tpath = *abs = NULL;
	if (o->no_tracker || http_dry_run(gcs_http(g)) ||
	    (*abs = realpath(path, NULL)) == NULL)
		return -1;
	*dir = o->tracker_dir != NULL ? xstrdup(o->tracker_dir)
	                              : gcsx_tracker_dir();
	*tpath = gcsx_tracker_path(*dir, *abs, dst);
	/* a run killed while writing a tracker left its temp (0600, live
	 * session URLs): no writer keeps one for minutes */
	fsutil_sweep_temps(*dir, GCSX_TRACKER_TEMP_AGE);
	return 0;
}

/* Write a tracker (0600, atomically); a failure is only a warning. */
static void
tracker_write(
    const char *dir, const char *tpath, const struct buf *b, const char *path)
{
	struct tpu_err e;

	tpu_err_init(&e);
	if (fsutil_mkdir_private(dir, &e) != 0 ||
	    fsutil_write_atomic(tpath, b->data, b->len, 0600, &e) != 0)
		log_warn("%s: no resume tracker: %s", path, e.msg);
}

/* A rerun can finish what failed with rc: keep its tracker (and parts). */
static int
rerun_helps(int rc, const struct tpu_err *err)
{
	return is_transient(rc, err) || rc == TPU_E_INTERRUPTED ||
	       rc == TPU_E_TERMINATED;
}

static void parts_delete(struct gcs *, const char *bucket, const char *name,
    const struct gcsx_ctracker *, int all);

/*
 * The tracker left for this source and destination is a composite
 * upload's (an earlier run with --parallel > 1): this run replaces it,
 * so its temporary parts go now rather than stay in the bucket.
 */
static void
drop_composite(struct gcs *g, const char *text, size_t len, const char *bucket,
    const char *name, const char *path)
{
	struct gcsx_ctracker t;
	struct tpu_err e;

	tpu_err_init(&e);
	memset(&t, 0, sizeof t);
	if (gcsx_ctracker_parse(text, len, gcs_base(g), &t, &e) != 0)
		return;
	log_info("%s: an interrupted parallel upload is replaced by a "
	         "single-stream one; deleting its parts",
	    path);
	parts_delete(g, bucket, name, &t, 1);
	gcsx_ctracker_release(&t);
}

static int
upload_resumable(struct gcs *g, int fd, const char *path, int64_t size,
    int64_t mtime_ns, const char *bucket, const char *name, const char *ctype,
    const struct gcsx_opts *o, struct gcs_object *out, struct tpu_err *err)
{
	struct session ss;
	struct gcsx_tracker t;
	struct buf b;
	char *dir = NULL, *tpath = NULL, *abs = NULL, *dst;
	uint32_t crc;
	int64_t start = 0;
	int rc, q, restarted = 0;

	/* crc32c only: md5 would cost a pass at a third of the link speed,
	   and the server checks the crc32c of the session metadata */
	if ((rc = hash_range(fd, path, 0, size, &crc, NULL, err)) != 0)
		return rc;
	memset(&ss, 0, sizeof ss);
	ss.g = g;
	ss.path = path;
	ss.fd = fd;
	ss.size = size;
	ss.chunk = chunk_size(o);
	ss.o = o;
	dst = xasprintf("gs://%s/%s", bucket, name);
	if (tracker_where(g, path, dst, o, &dir, &tpath, &abs) == 0) {
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
		} else if (b.len > 0)
			drop_composite(g, b.data, b.len, bucket, name, path);
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
		if ((rc = session_start(g, bucket, name, ctype, size, crc, NULL,
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
			if (gcsx_tracker_format(&t, &b) == 0)
				tracker_write(dir, tpath, &b, path);
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
		if (tpath != NULL && !rerun_helps(rc, err))
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

/* --- parallel work ---------------------------------------------------------
 */

/* One item of a parallel loop, on the worker's own handle. */
typedef int (*work_fn)(void *arg, struct gcs *, size_t i, struct tpu_err *);

struct workq {
	struct gcs *g;
	work_fn fn;
	void *arg;
	size_t n, next;
	int rc;
	struct tpu_err err;
	pthread_mutex_t mu;
};

static void *
workq_thread(void *p)
{
	struct workq *q = p;
	struct gcs *g = NULL;
	struct tpu_err err;
	size_t i;
	int rc;

	tpu_err_init(&err);
	if ((rc = gcs_clone(q->g, &g, &err)) != 0)
		goto fail;
	for (;;) {
		pthread_mutex_lock(&q->mu);
		i = q->next++;
		if (q->rc != 0 || retry_interrupted)
			i = q->n;
		pthread_mutex_unlock(&q->mu);
		if (i >= q->n)
			break;
		if ((rc = q->fn(q->arg, g, i, &err)) != 0)
			goto fail;
	}
	gcs_close(g);
	return NULL;
fail:
	pthread_mutex_lock(&q->mu);
	if (q->rc == 0) {
		q->rc = rc;
		q->err = err;
	}
	pthread_mutex_unlock(&q->mu);
	gcs_close(g);
	return NULL;
}

/*
 * fn(arg, handle, i) for every i < n on nth threads, each with a clone of
 * g; the first failure stops the others from taking more items and is
 * returned (with err).
 */
static int
workq_run(struct gcs *g, size_t n, size_t nth, work_fn fn, void *arg,
    struct tpu_err *err)
{
	pthread_t th[GCSX_MAX_PARTS];
	struct workq q;
	size_t i;

	if (nth > n)
		nth = n;
	if (nth > GCSX_MAX_PARTS)
		nth = GCSX_MAX_PARTS;
	memset(&q, 0, sizeof q);
	q.g = g;
	q.fn = fn;
	q.arg = arg;
	q.n = n;
	tpu_err_init(&q.err);
	pthread_mutex_init(&q.mu, NULL);
	for (i = 0; i < nth; i++)
		if (pthread_create(&th[i], NULL, workq_thread, &q) != 0)
			TPU_BUG("pthread_create");
	for (i = 0; i < nth; i++)
		pthread_join(th[i], NULL);
	pthread_mutex_destroy(&q.mu);
	if (q.rc != 0)
		*err = q.err;
	return q.rc;
}

/* --- parallel composite -------------------------------------------------- */

void
gcsx_ctracker_release(struct gcsx_ctracker *t)
{
	size_t i;

	free(t->src);
	free(t->dst);
	for (i = 0; i < GCSX_MAX_PARTS; i++)
		free(t->sessions[i]);
	memset(t, 0, sizeof *t);
}

int
gcsx_ctracker_format(const struct gcsx_ctracker *t, struct buf *out)
{
	cJSON *o = cJSON_CreateObject(), *arr, *p;
	char crc[CRC32C_B64LEN], n[32];
	size_t i;
	char *s;
	int rc;

	crc32c_base64(t->crc32c, crc);
	cJSON_AddNumberToObject(o, "version", 2);
	cJSON_AddStringToObject(o, "src", t->src);
	cJSON_AddStringToObject(o, "dst", t->dst);
	cJSON_AddStringToObject(o, "crc32c", crc);
	snprintf(n, sizeof n, "%" PRId64, t->size);
	cJSON_AddStringToObject(o, "size", n);
	snprintf(n, sizeof n, "%" PRId64, t->mtime_ns);
	cJSON_AddStringToObject(o, "mtime_ns", n);
	cJSON_AddStringToObject(o, "id", t->id);
	arr = cJSON_AddArrayToObject(o, "parts");
	for (i = 0; i < t->n; i++) {
		p = cJSON_CreateObject();
		snprintf(n, sizeof n, "%" PRId64, t->parts[i].off);
		cJSON_AddStringToObject(p, "off", n);
		snprintf(n, sizeof n, "%" PRId64, t->parts[i].len);
		cJSON_AddStringToObject(p, "len", n);
		crc32c_base64(t->crcs[i], crc);
		cJSON_AddStringToObject(p, "crc32c", crc);
		if (t->gens[i] > 0) {
			snprintf(n, sizeof n, "%" PRId64, t->gens[i]);
			cJSON_AddStringToObject(p, "generation", n);
		}
		if (t->sessions[i] != NULL)
			cJSON_AddStringToObject(p, "session", t->sessions[i]);
		cJSON_AddItemToArray(arr, p);
	}
	s = cJSON_PrintUnformatted(o);
	cJSON_Delete(o);
	if (s == NULL)
		TPU_BUG("cJSON_PrintUnformatted");
	rc = buf_puts(out, s) == 0 && buf_puts(out, "\n") == 0 ? 0 : -1;
	cJSON_free(s);
	return rc;
}

/* One part of a v2 tracker: 0 or -1. */
static int
ctracker_part(
    const cJSON *p, const char *want, struct gcsx_ctracker *t, size_t i)
{
	const char *crc = jstr(p, "crc32c"), *ses = jstr(p, "session");

	if (!cJSON_IsObject(p) || jint(p, "off", &t->parts[i].off) != 0 ||
	    jint(p, "len", &t->parts[i].len) != 0 || crc == NULL ||
	    crc32c_parse_base64(crc, &t->crcs[i]) != 0)
		return -1;
	if (cJSON_GetObjectItemCaseSensitive(p, "generation") != NULL &&
	    (jint(p, "generation", &t->gens[i]) != 0 || t->gens[i] == 0))
		return -1;
	if (cJSON_GetObjectItemCaseSensitive(p, "session") != NULL) {
		if (!session_ok(ses, want))
			return -1;
		t->sessions[i] = xstrdup(ses);
	}
	return 0;
}

/* The parts tile [0, size): in order, 256 KiB multiples but the last. */
static int
ctracker_plan_ok(const struct gcsx_ctracker *t)
{
	int64_t off = 0;
	size_t i;

	if (t->n == 0 || t->n > GCSX_MAX_PARTS || t->size <= 0)
		return 0;
	for (i = 0; i < t->n; i++) {
		if (t->parts[i].off != off || t->parts[i].len <= 0 ||
		    t->parts[i].len > t->size - off)
			return 0;
		if (i + 1 < t->n && t->parts[i].len % GCSX_QUANTUM != 0)
			return 0;
		off += t->parts[i].len;
	}
	return off == t->size;
}

int
gcsx_ctracker_parse(const char *text, size_t len, const char *base,
    struct gcsx_ctracker *t, struct tpu_err *err)
{
	const cJSON *arr, *p;
	cJSON *o;
	const char *src, *dst, *id;
	char *want;
	size_t n, i;
	int bad = 0;

	memset(t, 0, sizeof *t);
	if ((o = tracker_open(text, len, 2, &src, &dst, &t->size, &t->mtime_ns,
	         &t->crc32c, err)) == NULL)
		return err->code;
	id = jstr(o, "id");
	arr = cJSON_GetObjectItemCaseSensitive(o, "parts");
	if (id == NULL || strlen(id) != sizeof t->id - 1 ||
	    strspn(id, "0123456789abcdef") != sizeof t->id - 1 ||
	    !cJSON_IsArray(arr) || (n = (size_t)cJSON_GetArraySize(arr)) == 0 ||
	    n > GCSX_MAX_PARTS) {
		cJSON_Delete(o);
		return tpu_error(
		    err, TPU_E_INVALID, "tracker: missing or bad fields");
	}
	want = session_prefix(base);
	t->n = n;
	i = 0;
	cJSON_ArrayForEach(p, arr)
	{
		if (ctracker_part(p, want, t, i++) != 0)
			bad = 1;
	}
	free(want);
	if (bad || !ctracker_plan_ok(t)) {
		cJSON_Delete(o);
		gcsx_ctracker_release(t);
		return tpu_error(err, TPU_E_INVALID,
		    "tracker: a part is malformed, does not tile the file or "
		    "has a session URL elsewhere");
	}
	snprintf(t->id, sizeof t->id, "%s", id);
	t->src = xstrdup(src);
	t->dst = xstrdup(dst);
	cJSON_Delete(o);
	return 0;
}

char *
gcsx_part_name(const char *name, const char *id, size_t i)
{
	return xasprintf("%s.tpuctl-part-%s-%zu", name, id, i);
}

struct cjob {
	int fd;
	const char *path, *bucket, *ctype;
	const struct gcsx_opts *o;
	struct gcsx_ctracker t; /* the plan, the parts' state */
	char *names[GCSX_MAX_PARTS];
	size_t todo[GCSX_MAX_PARTS]; /* part indices still to upload */
	const char *dir, *tpath;     /* NULL: no tracker */
	pthread_mutex_t mu;          /* t, the tracker file */
};

/* Record the tracker (mu held). */
static void
cjob_save(struct cjob *j)
{
	struct buf b;

	if (j->tpath == NULL)
		return;
	buf_init(&b, BUF_NOCAP);
	if (gcsx_ctracker_format(&j->t, &b) == 0)
		tracker_write(j->dir, j->tpath, &b, j->path);
	buf_release(&b);
}

static int
part_upload(void *arg, struct gcs *g, size_t k, struct tpu_err *err)
{
	struct cjob *j = arg;
	size_t i = j->todo[k];
	struct session ss;
	struct gcs_object obj;
	int64_t start = 0;
	int rc = 0, q;

	memset(&ss, 0, sizeof ss);
	memset(&obj, 0, sizeof obj);
	ss.g = g;
	ss.path = j->path;
	ss.fd = j->fd;
	ss.base = j->t.parts[i].off;
	ss.size = j->t.parts[i].len;
	ss.chunk = chunk_size(j->o);
	ss.o = j->o;
	pthread_mutex_lock(&j->mu);
	if (j->t.sessions[i] != NULL)
		ss.url = xstrdup(j->t.sessions[i]);
	pthread_mutex_unlock(&j->mu);
	if (ss.url != NULL) {
		/* a session of the interrupted run: where does it stand? */
		q = session_query(&ss, &start, &obj, err);
		if (q == 1)
			goto uploaded;
		if (q == 0)
			log_info("%s: part %zu: resuming its session at byte "
			         "%" PRId64,
			    j->path, i, start);
		if (q != 0) {
			log_info("%s: part %zu: the recorded session is "
			         "unusable (%s); a new one",
			    j->path, i, err->msg);
			tpu_err_init(err);
			free(ss.url);
			ss.url = NULL;
			start = 0;
		}
	}
	if (ss.url == NULL) {
		if ((rc = session_start(g, j->bucket, j->names[i], j->ctype,
		         ss.size, j->t.crcs[i], NULL, 0, &ss.url, err)) != 0)
			return rc;
		if (ss.url == NULL) { /* dry run */
			progress(j->o, ss.size);
			return 0;
		}
		pthread_mutex_lock(&j->mu);
		free(j->t.sessions[i]);
		j->t.sessions[i] = xstrdup(ss.url);
		cjob_save(j);
		pthread_mutex_unlock(&j->mu);
	}
	rc = session_run(&ss, start, &obj, err);
	if (rc != 0)
		goto out;
uploaded:
	session_shown(&ss, ss.size);
	if ((rc = verify_uploaded(g, &obj, j->t.crcs[i], j->path, err)) == 0 &&
	    obj.size != ss.size)
		rc = tpu_error(err, TPU_E_INTEGRITY,
		    "%s: part %zu has %" PRId64 " bytes, want %" PRId64,
		    j->path, i, obj.size, ss.size);
	pthread_mutex_lock(&j->mu);
	free(j->t.sessions[i]);
	j->t.sessions[i] = NULL;
	if (rc == 0)
		j->t.gens[i] = obj.generation;
	cjob_save(j);
	pthread_mutex_unlock(&j->mu);
out:
	free(ss.url);
	gcs_object_release(&obj);
	return rc;
}

/*
 * A part recorded as uploaded is still there, pinned to its generation,
 * with the size and crc32c of the local bytes: 1.  Else 0, and whatever
 * has the part's name is deleted (the name is this upload's own), so it
 * can be uploaded again under ifGenerationMatch=0.
 */
static int
part_still_good(struct gcs *g, struct cjob *j, size_t i)
{
	struct gcs_object obj;
	struct tpu_err e;
	int ok;

	tpu_err_init(&e);
	memset(&obj, 0, sizeof obj);
	if (gcs_stat(g, j->bucket, j->names[i], j->t.gens[i], &obj, &e) != 0) {
		log_info("%s: part %zu (gs://%s/%s#%" PRId64 ") is gone: %s",
		    j->path, i, j->bucket, j->names[i], j->t.gens[i], e.msg);
		ok = 0;
	} else if (!(ok = obj.generation == j->t.gens[i] &&
	                  obj.size == j->t.parts[i].len && obj.has_crc32c &&
	                  obj.crc32c == j->t.crcs[i]))
		log_info("%s: part %zu on the server does not match the "
		         "source; uploading it again",
		    j->path, i);
	gcs_object_release(&obj);
	tpu_err_init(&e);
	if (!ok && gcs_delete(g, j->bucket, j->names[i], -1, &e) != 0 &&
	    e.code != TPU_E_NOTFOUND)
		log_warn("could not delete the temporary part gs://%s/%s: %s",
		    j->bucket, j->names[i], e.msg);
	return ok;
}

/*
 * Delete the part objects of t (best effort): those recorded as uploaded,
 * by generation, and with all also the others, by name (a part may have
 * been finalised after its generation could be recorded).
 */
static void
parts_delete(struct gcs *g, const char *bucket, const char *name,
    const struct gcsx_ctracker *t, int all)
{
	struct tpu_err e;
	char *pn;
	size_t i;

	for (i = 0; i < t->n; i++) {
		if (!all && t->gens[i] <= 0)
			continue;
		tpu_err_init(&e);
		pn = gcsx_part_name(name, t->id, i);
		if (gcs_delete(g, bucket, pn, t->gens[i] > 0 ? t->gens[i] : -1,
		        &e) != 0 &&
		    e.code != TPU_E_NOTFOUND)
			log_warn("could not delete the temporary part "
			         "gs://%s/%s: %s",
			    bucket, pn, e.msg);
		free(pn);
	}
}

/*
 * The tracker of an interrupted composite upload of this source, if its
 * plan still applies: 0 with t filled (the plan, part crcs of the
 * interrupted run), -1 otherwise (t empty; a stale tracker's parts are
 * deleted).
 */
static int
ctracker_load(struct gcs *g, const char *tpath, const char *abs,
    const char *dst, const char *bucket, const char *name, int64_t size,
    int64_t mtime_ns, struct gcsx_ctracker *t)
{
	struct buf b;
	struct tpu_err e;
	int rc = -1;

	tpu_err_init(&e);
	buf_init(&b, 64 * 1024);
	if (fsutil_read_file(tpath, FSUTIL_F_NOFOLLOW | FSUTIL_F_PRIVATE, &b,
	        NULL, &e) == 0 &&
	    gcsx_ctracker_parse(b.data, b.len, gcs_base(g), t, &e) == 0) {
		if (strcmp(t->src, abs) == 0 && strcmp(t->dst, dst) == 0 &&
		    t->size == size && t->mtime_ns == mtime_ns)
			rc = 0;
		else {
			log_info("%s: the source changed since the interrupted "
			         "upload; starting over",
			    abs);
			parts_delete(g, bucket, name, t, 1);
			gcsx_ctracker_release(t);
		}
	}
	buf_release(&b);
	return rc;
}

/* crc32c of every part of t, and of the whole file. */
static int
hash_parts(int fd, const char *path, struct gcsx_ctracker *t, uint32_t *crcs,
    struct tpu_err *err)
{
	size_t i;
	int rc;

	for (i = 0; i < t->n; i++)
		if ((rc = hash_range(fd, path, t->parts[i].off, t->parts[i].len,
		         &crcs[i], NULL, err)) != 0)
			return rc;
	t->crc32c = gcsx_combine(crcs, t->parts, t->n);
	return 0;
}

/* A fresh plan for size bytes into t, with a new part id. */
static void
ctracker_plan(struct gcsx_ctracker *t, int64_t size, const struct gcsx_opts *o)
{
	int64_t minpart =
	    opt_or(o->composite_min, GCSX_COMPOSITE_MIN) / GCSX_MAX_PARTS;

	t->n = gcsx_plan_parts(size, minpart,
	    (size_t)(o->parallel < GCSX_MAX_PARTS / 2 ? o->parallel * 2
	                                              : GCSX_MAX_PARTS),
	    t->parts);
	rand_hex(t->id, 8);
}

/* Prepare the plan: resume a matching tracker, else start afresh. */
static int
composite_prepare(struct gcs *g, struct cjob *j, int64_t size, int64_t mtime_ns,
    const char *abs, const char *dst, const char *name, struct tpu_err *err)
{
	uint32_t crcs[GCSX_MAX_PARTS];
	struct gcsx_ctracker *t = &j->t;
	size_t i, resumed = 0;
	uint32_t old;
	int rc, same;

	memset(t, 0, sizeof *t);
	if (j->tpath != NULL && ctracker_load(g, j->tpath, abs, dst, j->bucket,
	                            name, size, mtime_ns, t) == 0) {
		old = t->crc32c;
		if ((rc = hash_parts(j->fd, j->path, t, crcs, err)) != 0)
			return rc;
		same = t->crc32c == old;
		for (i = 0; i < t->n; i++)
			if (crcs[i] != t->crcs[i])
				same = 0;
		if (same) {
			for (i = 0; i < t->n; i++)
				j->names[i] = gcsx_part_name(name, t->id, i);
			for (i = 0; i < t->n; i++) {
				if (t->gens[i] <= 0)
					continue;
				if (part_still_good(g, j, i)) {
					resumed++;
					continue;
				}
				t->gens[i] = 0;
			}
			log_info("%s: resuming the upload recorded in %s: %zu "
			         "of %zu parts already uploaded",
			    j->path, j->tpath, resumed, t->n);
			return 0;
		}
		log_info("%s: the source changed since the interrupted "
		         "upload; starting over",
		    j->path);
		parts_delete(g, j->bucket, name, t, 1);
		gcsx_ctracker_release(t);
	}
	ctracker_plan(t, size, j->o);
	if ((rc = hash_parts(j->fd, j->path, t, t->crcs, err)) != 0)
		return rc;
	for (i = 0; i < t->n; i++)
		j->names[i] = gcsx_part_name(name, t->id, i);
	t->size = size;
	t->mtime_ns = mtime_ns;
	t->src = xstrdup(abs != NULL ? abs : j->path);
	t->dst = xstrdup(dst);
	pthread_mutex_lock(&j->mu);
	cjob_save(j);
	pthread_mutex_unlock(&j->mu);
	return 0;
}

static int
upload_composite(struct gcs *g, int fd, const char *path, int64_t size,
    int64_t mtime_ns, const char *bucket, const char *name, const char *ctype,
    const struct gcsx_opts *o, struct gcs_object *out, struct tpu_err *err)
{
	int64_t gens[GCSX_MAX_PARTS];
	char *dir = NULL, *tpath = NULL, *abs = NULL, *dst;
	struct cjob j;
	size_t i, ntodo = 0;
	int rc, keep;

	memset(&j, 0, sizeof j);
	j.fd = fd;
	j.path = path;
	j.bucket = bucket;
	j.ctype = ctype;
	j.o = o;
	pthread_mutex_init(&j.mu, NULL);
	dst = xasprintf("gs://%s/%s", bucket, name);
	if (tracker_where(g, path, dst, o, &dir, &tpath, &abs) == 0) {
		j.dir = dir;
		j.tpath = tpath;
	}
	if ((rc = composite_prepare(
	         g, &j, size, mtime_ns, abs, dst, name, err)) != 0)
		goto out;
	for (i = 0; i < j.t.n; i++) {
		if (j.t.gens[i] > 0)
			progress(o, j.t.parts[i].len);
		else
			j.todo[ntodo++] = i;
	}
	rc = workq_run(g, ntodo, o->parallel > 0 ? (size_t)o->parallel : 1,
	    part_upload, &j, err);
	if (rc == 0 && http_dry_run(gcs_http(g)))
		goto out;
	if (rc == 0) {
		for (i = 0; i < j.t.n; i++)
			gens[i] = j.t.gens[i];
		if ((rc = gcs_compose(g, bucket, (const char *const *)j.names,
		         gens, j.t.n, name, ctype, o->if_generation_match, out,
		         err)) == 0)
			rc = verify_uploaded(g, out, j.t.crc32c, path, err);
	}
	/*
	 * The parts go once composed, or when a rerun cannot help (a
	 * permanent error, no tracker); after a transient failure or an
	 * interruption they stay for the rerun the tracker names.
	 */
	keep = rc != 0 && j.tpath != NULL && rerun_helps(rc, err);
	if (keep)
		log_info("%s: the uploaded parts are kept; run the same copy "
		         "again to resume",
		    path);
	else {
		parts_delete(g, bucket, name, &j.t, rc != 0);
		if (j.tpath != NULL)
			fsutil_remove(j.tpath, NULL);
	}
out:
	for (i = 0; i < GCSX_MAX_PARTS; i++)
		free(j.names[i]);
	gcsx_ctracker_release(&j.t);
	pthread_mutex_destroy(&j.mu);
	free(dir);
	free(tpath);
	free(abs);
	free(dst);
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
		rc = upload_composite(g, fd, path, size, mtime_ns, bucket, name,
		    ctype, o, out, err);
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
	int werr;        /* errno of a failed write */
	int overflow;    /* the server sent more than asked */
	int seq;         /* fd cannot seek (pipe, tty): write(), not pwrite() */
	int64_t flushed; /* writeback started up to here */
	const struct gcsx_opts *o;
};

/* Start writeback every 8 MiB, so that the final fsync has little left. */
#define SINK_FLUSH ((int64_t)8 << 20)

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
		ssize_t w;

		if (k->seq)
			w = write(k->fd, p + done, n - done);
		else
			w = pwrite(k->fd, p + done, n - done, k->off);
		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0 && errno == ESPIPE && !k->seq) {
			/* a stream: the bytes go out in order anyway */
			k->seq = 1;
			continue;
		}
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
	if (!k->seq && k->off - k->flushed >= SINK_FLUSH) {
		/* errors show at the fsync before the rename */
		(void)sync_file_range(k->fd, k->flushed, k->off - k->flushed,
		    SYNC_FILE_RANGE_WRITE);
		k->flushed = k->off;
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
	k.flushed = off;
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
		if (rc == TPU_E_NOTFOUND && obj->generation > 0) {
			/* C5: never stitch two generations together */
			rc = tpu_error(err, TPU_E_NOTFOUND,
			    "gs://%s/%s: generation %" PRId64 " is gone (the "
			    "object was replaced or deleted during the "
			    "download); %s was not written",
			    obj->bucket, obj->name, obj->generation, dest);
			break;
		}
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
	const struct gcs_object *obj;
	const char *dest;
	int fd;
	const struct gcsx_opts *o;
	struct gcsx_part *parts;
	uint32_t *crcs;
};

static int
slice_fetch(void *arg, struct gcs *g, size_t i, struct tpu_err *err)
{
	struct djob *j = arg;

	return fetch_range(g, j->obj, j->fd, j->parts[i].off,
	    j->parts[i].off + j->parts[i].len, j->dest, NULL, &j->crcs[i], j->o,
	    err);
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

/*
 * A destination that is not a regular file (a device, a FIFO, a symbolic
 * link such as /dev/stdout): written in place in one stream, as cp(1)
 * does, never replaced.  The checksums are still verified, but the bytes
 * are out by then: a mismatch says so.
 */
static int
download_in_place(struct gcs *g, const struct gcs_object *obj, const char *dest,
    const struct gcsx_opts *o, struct tpu_err *err)
{
	unsigned char md[EVP_MAX_MD_SIZE];
	unsigned int mdlen = 0;
	char md5[MD5_B64LEN];
	EVP_MD_CTX *m = NULL;
	uint32_t crc = 0;
	int fd, rc;

	fd = open(dest, O_WRONLY | O_TRUNC | O_NOCTTY | O_CLOEXEC);
	if (fd < 0)
		return io_error(err, "open", dest, errno);
	if (!obj->has_crc32c && obj->md5_b64 != NULL) {
		if ((m = EVP_MD_CTX_new()) == NULL ||
		    EVP_DigestInit_ex(m, EVP_md5(), NULL) != 1)
			TPU_BUG("md5 init");
	}
	rc = fetch_range(g, obj, fd, 0, obj->size, dest, m, &crc, o, err);
	if (rc == 0 && obj->has_crc32c && crc != obj->crc32c) {
		char a[CRC32C_B64LEN], b[CRC32C_B64LEN];

		crc32c_base64(crc, a);
		crc32c_base64(obj->crc32c, b);
		rc = tpu_error(err, TPU_E_INTEGRITY,
		    "gs://%s/%s: crc32c mismatch: received %s, expected %s; "
		    "the bytes written to %s are corrupt",
		    obj->bucket, obj->name, a, b, dest);
	}
	if (rc == 0 && m != NULL) {
		EVP_DigestFinal_ex(m, md, &mdlen);
		EVP_EncodeBlock((unsigned char *)md5, md, (int)mdlen);
		if (strcmp(md5, obj->md5_b64) != 0)
			rc = tpu_error(err, TPU_E_INTEGRITY,
			    "gs://%s/%s: md5 mismatch: received %s, expected "
			    "%s; the bytes written to %s are corrupt",
			    obj->bucket, obj->name, md5, obj->md5_b64, dest);
	}
	/* a pipe or a device cannot be synced (EINVAL): nothing to flush */
	if (rc == 0 && fsync(fd) != 0 && errno != EINVAL && errno != EROFS)
		rc = io_error(err, "fsync", dest, errno);
	if (close(fd) != 0 && rc == 0 && errno != EINTR)
		rc = io_error(err, "close", dest, errno);
	EVP_MD_CTX_free(m);
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
	size_t n = 1;
	int fd, rc = 0;

	if (http_dry_run(gcs_http(g))) {
		progress(o, obj->size);
		return 0;
	}
	switch (fsutil_dest_kind(dest)) {
	case FSUTIL_DEST_DIR:
		return tpu_error(err, TPU_E_IO, "%s: is a directory", dest);
	case FSUTIL_DEST_IN_PLACE:
		return download_in_place(g, obj, dest, o, err);
	case FSUTIL_DEST_NONE:
	case FSUTIL_DEST_FILE:
		break;
	}
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
		    gcsx_slice_streams(
		        o->parallel, sysconf(_SC_NPROCESSORS_ONLN)),
		    parts);
	if (n > 1) {
		struct djob j;

		if (ftruncate(fd, obj->size) != 0) {
			rc = io_error(err, "truncate", tmp, errno);
			goto fail;
		}
		memset(&j, 0, sizeof j);
		j.obj = obj;
		j.dest = dest;
		j.fd = fd;
		j.o = o;
		j.parts = parts;
		j.crcs = crcs;
		if ((rc = workq_run(g, n, n, slice_fetch, &j, err)) != 0)
			goto fail;
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
