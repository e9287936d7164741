/*
 * tpuctl-emulator: the Cloud Storage JSON API (storage.v1.json), served
 * under /storage/v1/..., the bare /b/... form that @google-cloud/storage
 * uses with STORAGE_EMULATOR_HOST, /upload/storage/v1/... (media,
 * multipart and resumable uploads) and /download/storage/v1/....
 *
 * Objects live on disk under STATE/gcs/buckets/BUCKET/objects/ as
 * KEY.data (the bytes) and KEY.json (the resource), KEY being the SHA-256
 * of the name; an in-memory index sorted by name serves lists.  A
 * composite has no KEY.data: its bytes are KEY.GEN.s0, .s1, ..., hard
 * links to its components' files (no object's file is ever written once
 * stored), so compose copies nothing, as on Cloud Storage.  Request
 * bodies of uploads stream into anonymous temporary files through the
 * route's sink and are hashed (crc32c, md5) on a second pass made without
 * the global lock; nothing holds a whole object in memory.  Resumable
 * sessions are STATE/gcs/uploads/ID.json + ID.data, so they survive a
 * restart.  Response shapes follow the recorded exchanges in
 * shared/api/samples/gcs_*.
 *
 * Faults (emu_fault_spec): "gcs-rewrite-crc" stores a wrong crc32c with
 * the object the request writes; "gcs-drop-after-NK" keeps only N KiB of
 * a resumable chunk and answers 308 with that Range;
 * "gcs-corrupt-upload-byte-OFF" flips a byte of the uploaded data before
 * it is hashed, so the checksums the client sent fail as on GCS;
 * "gcs-new-generation" overwrites the object a media GET reads first.
 */
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/types.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cjson/cJSON.h>
#include <openssl/evp.h>

#include "crc32c.h"
#include "emu.h"
#include "gcs_util.h"
#include "util.h"
#include "validate.h"
#include "xmalloc.h"

#define GCS_CHUNK_ALIGN (256 * 1024)
#define GCS_MAX_COMPOSE 32
#define GCS_MAX_LIST 1000
#define GCS_JSON_CAP (16 << 20)
#define GCS_IO_BLOCK (1 << 20)

struct gcs_obj {
	char *name;
	char key[65]; /* hex SHA-256 of name: the file names */
	int64_t gen, metagen;
	uint64_t size;
	cJSON *meta; /* the resource; links and etag are rendered */
	/* A composite's bytes: nseg files KEY.GEN.sI (hard links to the
	   data of its components, listed in meta as GCS_SEGMENTS), no
	   KEY.data.  0 for every other object. */
	size_t nseg;
	uint64_t *seg; /* their sizes */
};

/* The internal meta field of a composite's segment sizes (not rendered). */
#define GCS_SEGMENTS "x-emulator-segments"

struct gcs_bkt {
	char *name;
	char *project;
	cJSON *meta;
	struct gcs_obj **objs; /* sorted by name (bytes) */
	size_t n, cap;
};

struct gcs_state {
	struct gcs_bkt **b; /* sorted by name */
	size_t n, cap;
	int64_t last_gen;
	char **busy; /* resumable sessions a request works on unlocked */
	size_t nbusy;
};

/* Preconditions: ifGenerationMatch, ...NotMatch, ifMetageneration... */
enum { GCS_PRE_GM, GCS_PRE_GNM, GCS_PRE_MGM, GCS_PRE_MGNM, GCS_PRE_N };
static const char *const gcs_pre_names[GCS_PRE_N] = { "GenerationMatch",
	"GenerationNotMatch", "MetagenerationMatch", "MetagenerationNotMatch" };

struct gcs_pre {
	int has[GCS_PRE_N];
	int64_t v[GCS_PRE_N];
};

/* Fields a client may set on an object (insert, patch, update). */
static const char *const gcs_mutable[] = { "contentType", "contentEncoding",
	"contentDisposition", "contentLanguage", "cacheControl", "customTime",
	"metadata", "temporaryHold", "eventBasedHold" };

static struct gcs_state *
gcs_st(struct emu *e)
{
	return e->gcs;
}

/* ---- replies ---- */

static int gcs_err(struct emu_req *, int, const char *, const char *, ...)
    __attribute__((format(printf, 4, 5)));

/* The GCS error body: {"error":{"code","message","errors":[...]}}. */
static int
gcs_err(struct emu_req *r, int status, const char *reason, const char *fmt, ...)
{
	char msg[1536];
	cJSON *root, *err, *errs, *one;
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	root = cJSON_CreateObject();
	err = cJSON_AddObjectToObject(root, "error");
	cJSON_AddNumberToObject(err, "code", status);
	cJSON_AddStringToObject(err, "message", msg);
	errs = cJSON_AddArrayToObject(err, "errors");
	one = cJSON_CreateObject();
	cJSON_AddStringToObject(one, "message", msg);
	cJSON_AddStringToObject(one, "domain", "global");
	cJSON_AddStringToObject(one, "reason", reason);
	cJSON_AddItemToArray(errs, one);
	emu_reply_json(r, status, root);
	return -1;
}

static int
gcs_err_io(struct emu_req *r, const char *what, const char *path)
{
	return gcs_err(r, 500, "backendError", "%s '%s': %s", what,
	    path != NULL ? path : "", strerror(errno));
}

static int
gcs_no_bucket(struct emu_req *r)
{
	return gcs_err(
	    r, 404, "notFound", "The specified bucket does not exist.");
}

static int
gcs_no_object(struct emu_req *r, const char *b, const char *o)
{
	return gcs_err(r, 404, "notFound", "No such object: %s/%s", b, o);
}

/* ---- small helpers ---- */

static void
gcs_set(cJSON *obj, const char *key, cJSON *val)
{
	if (cJSON_GetObjectItemCaseSensitive(obj, key) != NULL)
		cJSON_ReplaceItemInObjectCaseSensitive(obj, key, val);
	else
		cJSON_AddItemToObject(obj, key, val);
}

static void
gcs_set_str(cJSON *obj, const char *key, const char *val)
{
	gcs_set(obj, key, cJSON_CreateString(val));
}

static void
gcs_set_i64(cJSON *obj, const char *key, int64_t v)
{
	char num[32];

	snprintf(num, sizeof(num), "%" PRId64, v);
	gcs_set_str(obj, key, num);
}

static const char *
gcs_jstr(const cJSON *obj, const char *key)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);

	return cJSON_IsString(v) ? v->valuestring : NULL;
}

/* A decimal int64 in a JSON string or number; 0, or -1 when absent/bad. */
static int
gcs_jint(const cJSON *obj, const char *key, int64_t *out)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);
	const char *errstr;
	long long x;

	if (cJSON_IsNumber(v) && v->valuedouble >= 0 &&
	    v->valuedouble < 9.0e15) {
		*out = (int64_t)v->valuedouble;
		return 0;
	}
	if (!cJSON_IsString(v))
		return -1;
	x = tpu_strtonum(v->valuestring, 0, INT64_MAX, &errstr);
	if (errstr != NULL)
		return -1;
	*out = x;
	return 0;
}

static void
gcs_now(char *buf, size_t len)
{
	emu_rfc3339(buf, len, emu_wall_ms());
}

static int64_t
gcs_next_gen(struct gcs_state *st)
{
	struct timespec ts;
	int64_t g;

	clock_gettime(CLOCK_REALTIME, &ts);
	g = (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
	if (g <= st->last_gen)
		g = st->last_gen + 1;
	st->last_gen = g;
	return g;
}

static int
gcs_mkdirs(const char *path)
{
	char *p = xstrdup(path), *s;
	int rc = 0;

	for (s = p + 1; *s != '\0'; s++) {
		if (*s != '/')
			continue;
		*s = '\0';
		if (mkdir(p, 0700) != 0 && errno != EEXIST)
			rc = -1;
		*s = '/';
	}
	if (mkdir(p, 0700) != 0 && errno != EEXIST)
		rc = -1;
	free(p);
	return rc;
}

/* Read a small file into a NUL-terminated buffer; NULL with errno. */
static char *
gcs_slurp(const char *path, size_t *lenp)
{
	struct stat sb;
	char *buf = NULL;
	ssize_t n;
	size_t off = 0;
	int fd;

	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
		return NULL;
	if (fstat(fd, &sb) != 0 || sb.st_size > GCS_JSON_CAP) {
		if (errno == 0)
			errno = EFBIG;
		goto out;
	}
	buf = xmalloc((size_t)sb.st_size + 1);
	while (off < (size_t)sb.st_size) {
		n = read(fd, buf + off, (size_t)sb.st_size - off);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		off += (size_t)n;
	}
	buf[off] = '\0';
	if (lenp != NULL)
		*lenp = off;
out:
	close(fd);
	return buf;
}

static cJSON *
gcs_load_json(const char *path)
{
	char *buf;
	size_t len;
	cJSON *j;

	if ((buf = gcs_slurp(path, &len)) == NULL)
		return NULL;
	j = cJSON_ParseWithLength(buf, len);
	free(buf);
	return j;
}

/* Write JSON to path through path.tmp + rename; 0 or -1 with errno. */
static int
gcs_save_json(const char *path, const cJSON *j)
{
	char *text = cJSON_PrintUnformatted(j), *tmp;
	int fd, rc = -1, saved;

	tmp = xasprintf("%s.tmp", path);
	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0)
		goto out;
	if (tpu_write_all(fd, text, strlen(text)) != 0) {
		saved = errno;
		close(fd);
		unlink(tmp);
		errno = saved;
		goto out;
	}
	if (close(fd) != 0 || rename(tmp, path) != 0) {
		saved = errno;
		unlink(tmp);
		errno = saved;
		goto out;
	}
	rc = 0;
out:
	cJSON_free(text);
	free(tmp);
	return rc;
}

/* An anonymous temporary file under STATE/gcs/tmp; -1 with errno. */
static int
gcs_tmp_open(struct emu *e)
{
	char *dir = emu_state_path(e, "gcs/tmp"), *path = NULL;
	char rnd[17];
	int fd;

	fd = open(dir, O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
	if (fd < 0) {
		/* No O_TMPFILE here: a named file, unlinked at once. */
		emu_random_hex(rnd, 16);
		path = xasprintf("%s/anon-%s", dir, rnd);
		fd = open(path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
		if (fd >= 0)
			unlink(path);
	}
	free(path);
	free(dir);
	return fd;
}

/* A fresh unique path under STATE/gcs/tmp; the caller frees. */
static char *
gcs_tmp_path(struct emu *e)
{
	char rnd[17];

	emu_random_hex(rnd, 16);
	return emu_state_path(e, "gcs/tmp/%s", rnd);
}

/* Copy len bytes of in from off to the end of out; 0 or -1. */
static int
gcs_copy(int in, uint64_t off, uint64_t len, int out)
{
	char *buf = NULL;
	loff_t o = (loff_t)off;
	ssize_t n;
	size_t want;
	int rc = -1;

	while (len > 0) {
		want = len > (1u << 30) ? (1u << 30) : (size_t)len;
		n = copy_file_range(in, &o, out, NULL, want, 0);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && (errno == EXDEV || errno == ENOSYS ||
		                 errno == EOPNOTSUPP || errno == EINVAL))
			break;
		if (n <= 0)
			goto out;
		len -= (uint64_t)n;
	}
	if (len > 0) {
		buf = xmalloc(GCS_IO_BLOCK);
		while (len > 0) {
			want = len > GCS_IO_BLOCK ? GCS_IO_BLOCK : (size_t)len;
			n = pread(in, buf, want, (off_t)o);
			if (n < 0 && errno == EINTR)
				continue;
			if (n <= 0 || tpu_write_all(out, buf, (size_t)n) != 0)
				goto out;
			o += n;
			len -= (uint64_t)n;
		}
	}
	rc = 0;
out:
	free(buf);
	return rc;
}

/* Give the (anonymous) file behind fd the name path; 0 or -1. */
static int
gcs_fd_link(int fd, const char *path)
{
	char proc[64];
	struct stat sb;
	int out, rc;

	snprintf(proc, sizeof(proc), "/proc/self/fd/%d", fd);
	if (linkat(AT_FDCWD, proc, AT_FDCWD, path, AT_SYMLINK_FOLLOW) == 0)
		return 0;
	if (fstat(fd, &sb) != 0)
		return -1;
	out = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	if (out < 0)
		return -1;
	rc = gcs_copy(fd, 0, (uint64_t)sb.st_size, out);
	if (close(out) != 0)
		rc = -1;
	if (rc != 0)
		unlink(path);
	return rc;
}

/*
 * crc32c and md5 of len bytes of fd from off, also copied to out when out
 * is not -1.  0 or -1 with errno.
 */
static int
gcs_hash(int fd, uint64_t off, uint64_t len, int out, uint32_t *crc,
    unsigned char md5[16])
{
	EVP_MD_CTX *md = EVP_MD_CTX_new();
	char *buf = xmalloc(GCS_IO_BLOCK);
	unsigned int mdlen = 0;
	uint32_t c = 0;
	ssize_t n;
	size_t want;
	int rc = -1;

	if (md == NULL || EVP_DigestInit_ex(md, EVP_md5(), NULL) != 1)
		goto out;
	while (len > 0) {
		want = len > GCS_IO_BLOCK ? GCS_IO_BLOCK : (size_t)len;
		n = pread(fd, buf, want, (off_t)off);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			if (n == 0)
				errno = EIO;
			goto out;
		}
		c = crc32c_update(c, buf, (size_t)n);
		EVP_DigestUpdate(md, buf, (size_t)n);
		if (out >= 0 && tpu_write_all(out, buf, (size_t)n) != 0)
			goto out;
		off += (uint64_t)n;
		len -= (uint64_t)n;
	}
	EVP_DigestFinal_ex(md, md5, &mdlen);
	*crc = c;
	rc = 0;
out:
	EVP_MD_CTX_free(md);
	free(buf);
	return rc;
}

/* The same, with the global lock released (no state is touched). */
static int
gcs_hash_unlocked(struct emu *e, int fd, uint64_t off, uint64_t len, int out,
    uint32_t *crc, unsigned char md5[16])
{
	int rc;

	pthread_mutex_unlock(&e->lock);
	rc = gcs_hash(fd, off, len, out, crc, md5);
	pthread_mutex_lock(&e->lock);
	return rc;
}

/* The request body as an fd (the sink's, or a temp file holding it). */
static int
gcs_body_fd(struct emu *e, struct emu_req *r, uint64_t *size)
{
	struct stat sb;
	int fd;

	if (r->sink_fd >= 0) {
		if (fstat(r->sink_fd, &sb) != 0)
			return -1;
		*size = (uint64_t)sb.st_size;
		return r->sink_fd;
	}
	if ((fd = gcs_tmp_open(e)) < 0)
		return -1;
	if (r->body_len > 0 && tpu_write_all(fd, r->body, r->body_len) != 0) {
		close(fd);
		return -1;
	}
	r->sink_fd = fd; /* closed with the sink fd at the end of handle */
	*size = r->body_len;
	return fd;
}

/* ---- the index ---- */

static struct gcs_bkt *
gcs_bkt_find(struct gcs_state *st, const char *name, size_t *pos)
{
	size_t lo = 0, hi = st->n, mid;
	int c;

	while (lo < hi) {
		mid = (lo + hi) / 2;
		c = strcmp(st->b[mid]->name, name);
		if (c == 0) {
			if (pos != NULL)
				*pos = mid;
			return st->b[mid];
		}
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (pos != NULL)
		*pos = lo;
	return NULL;
}

/* The first index whose name is >= name (or > name when after). */
static size_t
gcs_obj_bound(const struct gcs_bkt *b, const char *name, int after)
{
	size_t lo = 0, hi = b->n, mid;
	int c;

	while (lo < hi) {
		mid = (lo + hi) / 2;
		c = strcmp(b->objs[mid]->name, name);
		if (c < 0 || (after && c == 0))
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

static struct gcs_obj *
gcs_obj_find(const struct gcs_bkt *b, const char *name, size_t *pos)
{
	size_t i = gcs_obj_bound(b, name, 0);

	if (pos != NULL)
		*pos = i;
	if (i < b->n && strcmp(b->objs[i]->name, name) == 0)
		return b->objs[i];
	return NULL;
}

static void
gcs_obj_free(struct gcs_obj *o)
{
	if (o == NULL)
		return;
	free(o->name);
	cJSON_Delete(o->meta);
	free(o->seg);
	free(o);
}

static void
gcs_bkt_free(struct gcs_bkt *b)
{
	size_t i;

	if (b == NULL)
		return;
	for (i = 0; i < b->n; i++)
		gcs_obj_free(b->objs[i]);
	free(b->objs);
	free(b->name);
	free(b->project);
	cJSON_Delete(b->meta);
	free(b);
}

static void
gcs_obj_insert(struct gcs_bkt *b, size_t pos, struct gcs_obj *o)
{
	if (b->n == b->cap) {
		b->cap = b->cap == 0 ? 16 : b->cap * 2;
		b->objs = xreallocarray(b->objs, b->cap, sizeof(*b->objs));
	}
	memmove(
	    b->objs + pos + 1, b->objs + pos, (b->n - pos) * sizeof(*b->objs));
	b->objs[pos] = o;
	b->n++;
}

static void
gcs_obj_remove(struct gcs_bkt *b, size_t pos)
{
	gcs_obj_free(b->objs[pos]);
	memmove(b->objs + pos, b->objs + pos + 1,
	    (b->n - pos - 1) * sizeof(*b->objs));
	b->n--;
}

static char *
gcs_obj_path(
    struct emu *e, const struct gcs_bkt *b, const char *key, const char *ext)
{
	return emu_state_path(
	    e, "gcs/buckets/%s/objects/%s.%s", b->name, key, ext);
}

/* The path of a composite's segment i. */
static char *
gcs_seg_path(
    struct emu *e, const struct gcs_bkt *b, const struct gcs_obj *o, size_t i)
{
	return emu_state_path(e, "gcs/buckets/%s/objects/%s.%" PRId64 ".s%zu",
	    b->name, o->key, o->gen, i);
}

/*
 * The files that hold o's bytes, in order, and their sizes: its data
 * file, or a composite's segments.  Returns their count; *paths and
 * *sizes are the caller's to free.
 */
static size_t
gcs_obj_files(struct emu *e, const struct gcs_bkt *b, const struct gcs_obj *o,
    char ***paths, uint64_t **sizes)
{
	size_t i, n = o->nseg > 0 ? o->nseg : 1;

	*paths = xreallocarray(NULL, n, sizeof(**paths));
	*sizes = xreallocarray(NULL, n, sizeof(**sizes));
	if (o->nseg == 0) {
		(*paths)[0] = gcs_obj_path(e, b, o->key, "data");
		(*sizes)[0] = o->size;
		return 1;
	}
	for (i = 0; i < n; i++) {
		(*paths)[i] = gcs_seg_path(e, b, o, i);
		(*sizes)[i] = o->seg[i];
	}
	return n;
}

static void
gcs_files_free(char **paths, uint64_t *sizes, size_t n)
{
	while (n > 0)
		free(paths[--n]);
	free(paths);
	free(sizes);
}

/* Remove the files of o's bytes (ENOENT is fine: never written). */
static void
gcs_obj_unlink_data(
    struct emu *e, const struct gcs_bkt *b, const struct gcs_obj *o)
{
	char **paths;
	uint64_t *sizes;
	size_t i, n = gcs_obj_files(e, b, o, &paths, &sizes);

	for (i = 0; i < n; i++)
		unlink(paths[i]);
	gcs_files_free(paths, sizes, n);
}

/*
 * Open every file of o's bytes: their count, with *fds and *sizes the
 * caller's, or 0 with errno.
 */
static size_t
gcs_obj_open(struct emu *e, const struct gcs_bkt *b, const struct gcs_obj *o,
    int **fds, uint64_t **sizes)
{
	char **paths;
	size_t i, n = gcs_obj_files(e, b, o, &paths, sizes);

	*fds = xreallocarray(NULL, n, sizeof(**fds));
	for (i = 0; i < n; i++)
		if (((*fds)[i] = open(paths[i], O_RDONLY | O_CLOEXEC)) < 0)
			break;
	if (i < n) {
		while (i > 0)
			close((*fds)[--i]);
		free(*fds);
		*fds = NULL;
	}
	gcs_files_free(paths, i < n ? *sizes : NULL, n);
	if (i < n) {
		*sizes = NULL;
		return 0;
	}
	return n;
}

/* Copy o's bytes to out (at its file offset); 0 or -1 with errno. */
static int
gcs_obj_copy_to(
    struct emu *e, const struct gcs_bkt *b, const struct gcs_obj *o, int out)
{
	uint64_t *sizes;
	size_t i, n;
	int *fds, rc = 0;

	if ((n = gcs_obj_open(e, b, o, &fds, &sizes)) == 0)
		return -1;
	for (i = 0; i < n; i++) {
		if (rc == 0)
			rc = gcs_copy(fds[i], 0, sizes[i], out);
		close(fds[i]);
	}
	free(fds);
	free(sizes);
	return rc;
}

/* o's segment sizes from its meta (a loaded or committed composite). */
static void
gcs_obj_load_segs(struct gcs_obj *o)
{
	const cJSON *a =
	    cJSON_GetObjectItemCaseSensitive(o->meta, GCS_SEGMENTS);
	const cJSON *it;
	const char *errstr;
	size_t n = 0;

	free(o->seg);
	o->seg = NULL;
	o->nseg = 0;
	if (!cJSON_IsArray(a) || cJSON_GetArraySize(a) < 1)
		return;
	o->seg =
	    xreallocarray(NULL, (size_t)cJSON_GetArraySize(a), sizeof(*o->seg));
	cJSON_ArrayForEach(it, a)
	{
		if (!cJSON_IsString(it))
			break;
		o->seg[n++] = (uint64_t)tpu_strtonum(
		    it->valuestring, 0, INT64_MAX, &errstr);
		if (errstr != NULL)
			break;
	}
	if (n == (size_t)cJSON_GetArraySize(a))
		o->nseg = n;
}

/* ---- rendering ---- */

static cJSON *
gcs_obj_render(struct emu *e, const struct gcs_bkt *b, const struct gcs_obj *o)
{
	cJSON *j = cJSON_Duplicate(o->meta, 1);
	char *enc = gcsemu_pct_encode(o->name), *s;
	char etag[48];

	cJSON_DeleteItemFromObjectCaseSensitive(j, GCS_SEGMENTS);
	s = xasprintf("%s/%s/%" PRId64, b->name, o->name, o->gen);
	gcs_set_str(j, "id", s);
	free(s);
	s = xasprintf("%s/storage/v1/b/%s/o/%s", e->base_url, b->name, enc);
	gcs_set_str(j, "selfLink", s);
	free(s);
	s = xasprintf("%s/download/storage/v1/b/%s/o/%s?generation=%" PRId64
	              "&alt=media",
	    e->base_url, b->name, enc, o->gen);
	gcs_set_str(j, "mediaLink", s);
	free(s);
	gcsemu_etag(o->gen, o->metagen, etag, sizeof(etag));
	gcs_set_str(j, "etag", etag);
	free(enc);
	return j;
}

/* A bucket ACL entry of a project team, as the real API renders it. */
static void
gcs_team_acl(cJSON *arr, struct emu *e, const struct gcs_bkt *b,
    const char *pnum, const char *team, const char *role)
{
	cJSON *a = cJSON_CreateObject(), *pt;
	char *ent = xasprintf("project-%s-%s", team, pnum), *s;

	if (b != NULL) {
		cJSON_AddStringToObject(
		    a, "kind", "storage#bucketAccessControl");
		cJSON_AddStringToObject(a, "bucket", b->name);
		s = xasprintf("%s/%s", b->name, ent);
		cJSON_AddStringToObject(a, "id", s);
		free(s);
		s = xasprintf(
		    "%s/storage/v1/b/%s/acl/%s", e->base_url, b->name, ent);
		cJSON_AddStringToObject(a, "selfLink", s);
		free(s);
	} else {
		cJSON_AddStringToObject(
		    a, "kind", "storage#objectAccessControl");
	}
	cJSON_AddStringToObject(a, "entity", ent);
	pt = cJSON_AddObjectToObject(a, "projectTeam");
	cJSON_AddStringToObject(pt, "projectNumber", pnum);
	cJSON_AddStringToObject(pt, "team", team);
	cJSON_AddStringToObject(a, "role", role);
	cJSON_AddStringToObject(a, "etag", "CAE=");
	cJSON_AddItemToArray(arr, a);
	free(ent);
}

/*
 * A bucket as the API answers it (samples/gcs_bucket_crud): with the
 * default softDeletePolicy (7 days from creation) and, for
 * projection=full (r may be NULL), the project-team ACLs and owner the
 * emulator's fixed ACL model implies (ACLs cannot be changed here).
 */
static cJSON *
gcs_bkt_render(struct emu *e, struct emu_req *r, const struct gcs_bkt *b)
{
	cJSON *j = cJSON_Duplicate(b->meta, 1), *sd, *arr, *own;
	char *s = xasprintf("%s/storage/v1/b/%s", e->base_url, b->name);
	const char *proj = r != NULL ? emu_query(r, "projection") : NULL;
	char pnum[32];

	gcs_set_str(j, "selfLink", s);
	free(s);
	if (cJSON_GetObjectItemCaseSensitive(j, "softDeletePolicy") == NULL) {
		sd = cJSON_AddObjectToObject(j, "softDeletePolicy");
		cJSON_AddStringToObject(
		    sd, "retentionDurationSeconds", "604800");
		cJSON_AddStringToObject(sd, "effectiveTime",
		    gcs_jstr(b->meta, "timeCreated") != NULL
		        ? gcs_jstr(b->meta, "timeCreated")
		        : "");
	}
	if (proj != NULL && strcmp(proj, "full") == 0) {
		emu_project_number(b->project, pnum, sizeof(pnum));
		arr = cJSON_AddArrayToObject(j, "acl");
		gcs_team_acl(arr, e, b, pnum, "owners", "OWNER");
		gcs_team_acl(arr, e, b, pnum, "editors", "OWNER");
		gcs_team_acl(arr, e, b, pnum, "viewers", "READER");
		arr = cJSON_AddArrayToObject(j, "defaultObjectAcl");
		gcs_team_acl(arr, e, NULL, pnum, "owners", "OWNER");
		gcs_team_acl(arr, e, NULL, pnum, "editors", "OWNER");
		gcs_team_acl(arr, e, NULL, pnum, "viewers", "READER");
		own = cJSON_AddObjectToObject(j, "owner");
		s = xasprintf("project-owners-%s", pnum);
		cJSON_AddStringToObject(own, "entity", s);
		free(s);
	}
	return j;
}

static int
gcs_obj_save(struct emu *e, const struct gcs_bkt *b, const struct gcs_obj *o)
{
	char *path = gcs_obj_path(e, b, o->key, "json");
	int rc = gcs_save_json(path, o->meta);

	free(path);
	return rc;
}

/* ---- preconditions ---- */

/* Read if<kind>GenerationMatch... from the query; 0, or -1 after 400. */
static int
gcs_pre_parse(struct emu_req *r, const char *kind, struct gcs_pre *p)
{
	char key[64];
	const char *v, *errstr;
	int i;

	memset(p, 0, sizeof(*p));
	for (i = 0; i < GCS_PRE_N; i++) {
		snprintf(key, sizeof(key), "if%s%s", kind, gcs_pre_names[i]);
		if ((v = emu_query(r, key)) == NULL)
			continue;
		p->v[i] = tpu_strtonum(v, 0, INT64_MAX, &errstr);
		if (errstr != NULL)
			return gcs_err(r, 400, "invalid",
			    "Invalid argument for %s: '%s' (a generation "
			    "number is a non-negative integer)",
			    key, v);
		p->has[i] = 1;
	}
	return 0;
}

/*
 * Check p against o (NULL: no live object).  Reads answer 304 for a
 * failed NotMatch on an existing object, as GCS does.  0, or -1 after
 * replying.
 */
static int
gcs_pre_check(struct emu_req *r, const struct gcs_pre *p,
    const struct gcs_obj *o, int is_read)
{
	int ok = 1, notmod = 0;

	if (p->has[GCS_PRE_GM]) {
		if (p->v[GCS_PRE_GM] == 0)
			ok &= o == NULL;
		else
			ok &= o != NULL && o->gen == p->v[GCS_PRE_GM];
	}
	if (ok && p->has[GCS_PRE_MGM])
		ok &= o != NULL && o->metagen == p->v[GCS_PRE_MGM];
	if (ok && p->has[GCS_PRE_GNM] && o != NULL &&
	    o->gen == p->v[GCS_PRE_GNM]) {
		ok = 0;
		notmod = 1;
	}
	if (ok && p->has[GCS_PRE_MGNM] && o != NULL &&
	    o->metagen == p->v[GCS_PRE_MGNM]) {
		ok = 0;
		notmod = 1;
	}
	if (ok)
		return 0;
	if (is_read && notmod) {
		emu_reply_data(r, 304, "text/html; charset=UTF-8", "", 0);
		return -1;
	}
	return gcs_err(r, 412, "conditionNotMet",
	    "At least one of the pre-conditions you specified did not hold.");
}

static cJSON *
gcs_pre_to_json(const struct gcs_pre *p)
{
	cJSON *j = cJSON_CreateObject();
	int i;

	for (i = 0; i < GCS_PRE_N; i++)
		if (p->has[i])
			gcs_set_i64(j, gcs_pre_names[i], p->v[i]);
	return j;
}

static void
gcs_pre_from_json(const cJSON *j, struct gcs_pre *p)
{
	int i;

	memset(p, 0, sizeof(*p));
	for (i = 0; i < GCS_PRE_N; i++)
		if (gcs_jint(j, gcs_pre_names[i], &p->v[i]) == 0)
			p->has[i] = 1;
}

/* ---- writing objects ---- */

/*
 * "gcs-corrupt-upload-byte-OFF": flip byte OFF of the len uploaded bytes
 * at off of fd (the request's spooled body) before anything hashes them,
 * as a bad link would.  The server's own checksum check then answers the
 * 400 GCS gives; without client checksums the corrupt data is stored.
 */
static void
gcs_fault_corrupt_upload(struct emu_req *r, int fd, uint64_t off, uint64_t len)
{
	const char *f = emu_fault_spec(r, "gcs-corrupt-upload-byte-");
	const char *errstr;
	unsigned char c;
	long long at;

	if (f == NULL)
		return;
	at = tpu_strtonum(f + 24, 0, INT64_MAX, &errstr);
	if (errstr != NULL || (uint64_t)at >= len)
		return;
	off += (uint64_t)at;
	if (pread(fd, &c, 1, (off_t)off) == 1) {
		c ^= 0xff;
		if (pwrite(fd, &c, 1, (off_t)off) != 1)
			fprintf(stderr,
			    "tpuctl-emulator: fault %s: cannot write the "
			    "body: %s\n",
			    f, strerror(errno));
	}
}

struct gcs_new {
	const char *bucket, *name;
	char *datapath; /* renamed into place on success */
	uint64_t size;
	uint32_t crc;
	const char *md5;   /* base64; NULL for composites */
	int components;    /* 0 unless composite */
	const cJSON *user; /* the client's metadata, or NULL */
	const char *ctype; /* from headers, or NULL */
	struct gcs_pre pre;
	/* instead of datapath: a composite linked to these files */
	char **segpaths;
	uint64_t *segsizes;
	size_t nseg;
};

/* Check the client's crc32c/md5Hash (JSON or X-Goog-Hash); -1 after 400. */
static int
gcs_check_sums(
    struct emu_req *r, const cJSON *user, uint32_t crc, const char *md5)
{
	char hcrc[64], hmd5[64], mine[CRC32C_B64LEN];
	const char *want, *h;

	crc32c_base64(crc, mine);
	hcrc[0] = hmd5[0] = '\0';
	if ((h = emu_header(r, "x-goog-hash")) != NULL &&
	    gcsemu_goog_hash_parse(h, hcrc, sizeof(hcrc), hmd5, sizeof(hmd5)) !=
	        0)
		return gcs_err(r, 400, "invalid",
		    "Invalid X-Goog-Hash header: '%s' (want "
		    "crc32c=BASE64,md5=BASE64)",
		    h);
	want = gcs_jstr(user, "crc32c");
	if (want == NULL && hcrc[0] != '\0')
		want = hcrc;
	if (want != NULL && strcmp(want, mine) != 0)
		return gcs_err(r, 400, "invalid",
		    "Provided CRC32C \"%s\" doesn't match calculated CRC32C "
		    "\"%s\".",
		    want, mine);
	want = gcs_jstr(user, "md5Hash");
	if (want == NULL && hmd5[0] != '\0')
		want = hmd5;
	if (want != NULL && md5 != NULL && strcmp(want, md5) != 0)
		return gcs_err(r, 400, "invalid",
		    "Provided MD5 hash \"%s\" doesn't match calculated MD5 "
		    "hash \"%s\".",
		    want, md5);
	return 0;
}

static void
gcs_copy_mutable(cJSON *dst, const cJSON *src)
{
	const cJSON *v;
	size_t i;

	for (i = 0; i < nitems(gcs_mutable); i++) {
		v = cJSON_GetObjectItemCaseSensitive(src, gcs_mutable[i]);
		if (v != NULL && !cJSON_IsNull(v))
			gcs_set(dst, gcs_mutable[i], cJSON_Duplicate(v, 1));
	}
}

/*
 * Store a new generation of nw->name from nw->datapath, checking the
 * bucket, the name and the preconditions first.  On success *out is the
 * rendered resource (caller owns) and 0 is returned; else -1 after the
 * reply, and datapath is left for the caller to remove.
 */
static int
gcs_obj_commit(
    struct emu *e, struct emu_req *r, struct gcs_new *nw, cJSON **out)
{
	struct gcs_state *st = gcs_st(e);
	struct gcs_bkt *b;
	struct gcs_obj *old, *o = NULL;
	char why[256];
	char now[64], crcb[CRC32C_B64LEN], *data = NULL;
	const char *ctype = NULL;
	uint32_t crc = nw->crc;
	size_t pos;
	cJSON *m;
	int rc = -1;

	if ((b = gcs_bkt_find(st, nw->bucket, NULL)) == NULL)
		return gcs_no_bucket(r);
	if (validate_object(nw->name, why, sizeof(why)) != 0)
		return gcs_err(r, 400, "invalid", "%s", why);
	old = gcs_obj_find(b, nw->name, &pos);
	if (gcs_pre_check(r, &nw->pre, old, 0) != 0)
		return -1;
	if (emu_fault_spec(r, "gcs-rewrite-crc") != NULL)
		crc ^= 0x5a5a5a5a; /* the stored checksum lies */
	o = xcalloc(1, sizeof(*o));
	o->name = xstrdup(nw->name);
	emu_sha256_hex(nw->name, o->key);
	o->gen = gcs_next_gen(st);
	o->metagen = 1;
	o->size = nw->size;
	gcs_now(now, sizeof(now));
	crc32c_base64(crc, crcb);
	if (nw->user != NULL)
		ctype = gcs_jstr(nw->user, "contentType");
	if (ctype == NULL)
		ctype = nw->ctype;
	if (ctype == NULL && nw->components == 0)
		ctype = "application/octet-stream";
	m = o->meta = cJSON_CreateObject();
	cJSON_AddStringToObject(m, "kind", "storage#object");
	cJSON_AddStringToObject(m, "id", "");
	cJSON_AddStringToObject(m, "selfLink", "");
	cJSON_AddStringToObject(m, "mediaLink", "");
	cJSON_AddStringToObject(m, "name", o->name);
	cJSON_AddStringToObject(m, "bucket", b->name);
	gcs_set_i64(m, "generation", o->gen);
	gcs_set_i64(m, "metageneration", o->metagen);
	if (ctype != NULL)
		cJSON_AddStringToObject(m, "contentType", ctype);
	cJSON_AddStringToObject(m, "storageClass", "STANDARD");
	gcs_set_i64(m, "size", (int64_t)o->size);
	if (nw->md5 != NULL)
		cJSON_AddStringToObject(m, "md5Hash", nw->md5);
	cJSON_AddStringToObject(m, "crc32c", crcb);
	if (nw->components > 0)
		cJSON_AddNumberToObject(m, "componentCount", nw->components);
	cJSON_AddStringToObject(m, "etag", "");
	cJSON_AddStringToObject(m, "timeCreated", now);
	cJSON_AddStringToObject(m, "updated", now);
	cJSON_AddStringToObject(m, "timeStorageClassUpdated", now);
	if (nw->user != NULL)
		gcs_copy_mutable(m, nw->user);
	if (ctype != NULL)
		gcs_set_str(m, "contentType", ctype);

	data = gcs_obj_path(e, b, o->key, "data");
	if (nw->nseg > 0) {
		/* a composite: its segments are new names for the bytes of
		   its components, which no object ever changes in place */
		cJSON *a = cJSON_AddArrayToObject(m, GCS_SEGMENTS);
		char num[32], *sp;
		size_t i;

		for (i = 0; i < nw->nseg; i++) {
			snprintf(num, sizeof(num), "%" PRIu64, nw->segsizes[i]);
			cJSON_AddItemToArray(a, cJSON_CreateString(num));
		}
		gcs_obj_load_segs(o);
		for (i = 0; i < nw->nseg; i++) {
			sp = gcs_seg_path(e, b, o, i);
			if (link(nw->segpaths[i], sp) != 0) {
				gcs_err_io(r, "cannot store object data", sp);
				free(sp);
				while (i > 0) {
					sp = gcs_seg_path(e, b, o, --i);
					unlink(sp);
					free(sp);
				}
				goto out;
			}
			free(sp);
		}
	} else if (rename(nw->datapath, data) != 0) {
		gcs_err_io(r, "cannot store object data", data);
		goto out;
	}
	if (gcs_obj_save(e, b, o) != 0) {
		gcs_err_io(r, "cannot store object metadata", o->name);
		gcs_obj_unlink_data(e, b, o);
		goto out;
	}
	if (old != NULL) {
		/* rename replaced a plain one's data file; anything else of
		   the old generation goes */
		if (old->nseg > 0 || o->nseg > 0)
			gcs_obj_unlink_data(e, b, old);
		gcs_obj_remove(b, pos);
		old = NULL;
	}
	gcs_obj_insert(b, pos, o);
	if (out != NULL)
		*out = gcs_obj_render(e, b, o);
	o = NULL;
	rc = 0;
out:
	gcs_obj_free(o);
	free(data);
	return rc;
}

/* Remove an object's files and index entry. */
static void
gcs_obj_delete(struct emu *e, struct gcs_bkt *b, size_t pos)
{
	struct gcs_obj *o = b->objs[pos];
	char *p;

	p = gcs_obj_path(e, b, o->key, "json");
	unlink(p);
	free(p);
	gcs_obj_unlink_data(e, b, o);
	gcs_obj_remove(b, pos);
}

/* ---- buckets ---- */

/* 403 unless the caller may use project (default + auth.projects). */
static int
gcs_project_check(
    struct emu *e, struct emu_req *r, const char *project, const char *perm)
{
	if (emu_project_allowed(e, project))
		return 0;
	return gcs_err(r, 403, "forbidden",
	    "%s does not have %s access to the Google Cloud project. "
	    "Permission '%s' denied on resource (or it may not exist).",
	    r->principal != NULL && r->principal[0] != '\0' ? r->principal
	                                                    : "The caller",
	    perm, perm);
}

static int
gcs_bkt_insert_h(struct emu *e, struct emu_req *r)
{
	struct gcs_state *st = gcs_st(e);
	struct gcs_bkt *b = NULL, *other;
	char why[256];
	const char *project = emu_query(r, "project"), *name, *v;
	char now[64], pnum[32], *dir = NULL, *path = NULL;
	cJSON *body, *m, *iam, *file;
	size_t pos;
	int rc = -1;

	if (project == NULL || *project == '\0')
		return gcs_err(
		    r, 400, "required", "Required parameter: project");
	if (gcs_project_check(e, r, project, "storage.buckets.create") != 0)
		return -1;
	if ((body = emu_body_json(e, r)) == NULL)
		return -1;
	name = gcs_jstr(body, "name");
	if (name == NULL) {
		gcs_err(r, 400, "required", "Required field: name");
		goto out;
	}
	if (validate_bucket(name, why, sizeof(why)) != 0) {
		gcs_err(r, 400, "invalid", "Invalid bucket name: %s", why);
		goto out;
	}
	if ((other = gcs_bkt_find(st, name, &pos)) != NULL) {
		if (strcmp(other->project, project) == 0)
			gcs_err(r, 409, "conflict",
			    "You already own this bucket. Please select "
			    "another name.");
		else
			gcs_err(r, 409, "conflict",
			    "The requested bucket name is not available. The "
			    "bucket namespace is shared by all users of the "
			    "system. Please select a different name and try "
			    "again.");
		goto out;
	}
	b = xcalloc(1, sizeof(*b));
	b->name = xstrdup(name);
	b->project = xstrdup(project);
	gcs_now(now, sizeof(now));
	m = b->meta = cJSON_CreateObject();
	cJSON_AddStringToObject(m, "kind", "storage#bucket");
	cJSON_AddStringToObject(m, "selfLink", "");
	cJSON_AddStringToObject(m, "id", name);
	cJSON_AddStringToObject(m, "name", name);
	emu_project_number(project, pnum, sizeof(pnum));
	cJSON_AddStringToObject(m, "projectNumber", pnum);
	gcs_set_i64(m, "generation", gcs_next_gen(st));
	cJSON_AddStringToObject(m, "metageneration", "1");
	v = gcs_jstr(body, "location");
	cJSON_AddStringToObject(m, "location", v != NULL ? v : "US");
	v = gcs_jstr(body, "storageClass");
	cJSON_AddStringToObject(m, "storageClass", v != NULL ? v : "STANDARD");
	cJSON_AddStringToObject(m, "etag", "CAE=");
	cJSON_AddStringToObject(m, "timeCreated", now);
	cJSON_AddStringToObject(m, "updated", now);
	iam = cJSON_AddObjectToObject(m, "iamConfiguration");
	cJSON_AddBoolToObject(
	    cJSON_AddObjectToObject(iam, "bucketPolicyOnly"), "enabled", 0);
	cJSON_AddBoolToObject(
	    cJSON_AddObjectToObject(iam, "uniformBucketLevelAccess"), "enabled",
	    0);
	cJSON_AddStringToObject(iam, "publicAccessPrevention", "inherited");
	cJSON_AddStringToObject(m, "locationType",
	    v != NULL && strchr(gcs_jstr(m, "location"), '-') != NULL
	        ? "region"
	        : "multi-region");
	cJSON_AddStringToObject(m, "rpo", "DEFAULT");
	if (cJSON_IsObject(cJSON_GetObjectItemCaseSensitive(body, "labels")))
		cJSON_AddItemToObject(m, "labels",
		    cJSON_Duplicate(
		        cJSON_GetObjectItemCaseSensitive(body, "labels"), 1));

	dir = emu_state_path(e, "gcs/buckets/%s/objects", name);
	path = emu_state_path(e, "gcs/buckets/%s/bucket.json", name);
	file = cJSON_CreateObject();
	cJSON_AddStringToObject(file, "project", project);
	cJSON_AddItemToObject(file, "resource", cJSON_Duplicate(m, 1));
	if (gcs_mkdirs(dir) != 0 || gcs_save_json(path, file) != 0) {
		cJSON_Delete(file);
		gcs_err_io(r, "cannot store bucket", name);
		goto out;
	}
	cJSON_Delete(file);
	if (st->n == st->cap) {
		st->cap = st->cap == 0 ? 8 : st->cap * 2;
		st->b = xreallocarray(st->b, st->cap, sizeof(*st->b));
	}
	memmove(st->b + pos + 1, st->b + pos, (st->n - pos) * sizeof(*st->b));
	st->b[pos] = b;
	st->n++;
	emu_reply_json(r, 200, gcs_bkt_render(e, r, b));
	b = NULL;
	rc = 0;
out:
	gcs_bkt_free(b);
	cJSON_Delete(body);
	free(dir);
	free(path);
	return rc;
}

/* maxResults in [1, 1000] (larger is clamped, as GCS does); -1 on 400. */
static int
gcs_max_results(struct emu_req *r, size_t *out)
{
	const char *v = emu_query(r, "maxResults"), *errstr;
	long long n;

	*out = GCS_MAX_LIST;
	if (v == NULL)
		return 0;
	n = tpu_strtonum(v, 1, INT32_MAX, &errstr);
	if (errstr != NULL)
		return gcs_err(r, 400, "invalid",
		    "Invalid value for maxResults: '%s' (a positive integer)",
		    v);
	*out = n > GCS_MAX_LIST ? GCS_MAX_LIST : (size_t)n;
	return 0;
}

/* Page tokens are the hex of the last name (or prefix) returned. */
static char *
gcs_token_encode(const char *s)
{
	size_t n = strlen(s), i;
	char *out = xmalloc(2 * n + 1);

	for (i = 0; i < n; i++)
		snprintf(out + 2 * i, 3, "%02x", (unsigned char)s[i]);
	out[2 * n] = '\0';
	return out;
}

static char *
gcs_token_decode(const char *s)
{
	size_t n = strlen(s), i;
	char *out;
	unsigned int c;

	if (n == 0 || n % 2 != 0 || !gcsemu_is_hex(s, n))
		return NULL;
	out = xmalloc(n / 2 + 1);
	for (i = 0; i < n / 2; i++) {
		if (sscanf(s + 2 * i, "%2x", &c) != 1 || c == 0) {
			free(out);
			return NULL;
		}
		out[i] = (char)c;
	}
	out[n / 2] = '\0';
	return out;
}

static int
gcs_bkt_list_h(struct emu *e, struct emu_req *r)
{
	struct gcs_state *st = gcs_st(e);
	const char *project = emu_query(r, "project");
	const char *prefix = emu_query(r, "prefix");
	const char *tok = emu_query(r, "pageToken");
	char *after = NULL, *next;
	const char *last = NULL;
	cJSON *root, *items = NULL;
	size_t i, max, count = 0;

	if (project == NULL || *project == '\0')
		return gcs_err(
		    r, 400, "required", "Required parameter: project");
	if (gcs_project_check(e, r, project, "storage.buckets.list") != 0)
		return -1;
	if (gcs_max_results(r, &max) != 0)
		return -1;
	if (tok != NULL && *tok != '\0' &&
	    (after = gcs_token_decode(tok)) == NULL)
		return gcs_err(
		    r, 400, "invalid", "Invalid pageToken: '%s'", tok);
	root = cJSON_CreateObject();
	cJSON_AddStringToObject(root, "kind", "storage#buckets");
	for (i = 0; i < st->n; i++) {
		if (strcmp(st->b[i]->project, project) != 0)
			continue;
		if (prefix != NULL && !tpu_startswith(st->b[i]->name, prefix))
			continue;
		if (after != NULL && strcmp(st->b[i]->name, after) <= 0)
			continue;
		if (count == max) {
			next = gcs_token_encode(last);
			cJSON_AddStringToObject(root, "nextPageToken", next);
			free(next);
			break;
		}
		if (items == NULL)
			items = cJSON_AddArrayToObject(root, "items");
		cJSON_AddItemToArray(items, gcs_bkt_render(e, r, st->b[i]));
		last = st->b[i]->name;
		count++;
	}
	free(after);
	return emu_reply_json(r, 200, root);
}

static int
gcs_bkt_get_h(struct emu *e, struct emu_req *r, const char *name)
{
	struct gcs_bkt *b = gcs_bkt_find(gcs_st(e), name, NULL);

	if (b == NULL)
		return gcs_no_bucket(r);
	return emu_reply_json(r, 200, gcs_bkt_render(e, r, b));
}

/*
 * buckets.patch: labels (merged, null deletes a label) and versioning
 * {enabled:false}. Keeping noncurrent object generations is not
 * emulated, so versioning.enabled=true and every other bucket field
 * (ACLs, lifecycle, retention, cors, ...) answer 501 notImplemented
 * with the API's error shape instead of being silently ignored.
 */
static int
gcs_bkt_patch_h(struct emu *e, struct emu_req *r, const char *name)
{
	struct gcs_bkt *b = gcs_bkt_find(gcs_st(e), name, NULL);
	cJSON *body, *m = NULL, *v, *kv, *lab, *file;
	char now[64], *path;
	int64_t mg = 0;
	int rc = -1;

	if (b == NULL)
		return gcs_no_bucket(r);
	if ((body = emu_body_json(e, r)) == NULL)
		return -1;
	if (!cJSON_IsObject(body)) {
		gcs_err(r, 400, "invalid", "The request body must be a bucket");
		goto out;
	}
	cJSON_ArrayForEach(v, body)
	{
		if (strcmp(v->string, "labels") == 0) {
			if (cJSON_IsNull(v))
				continue;
			if (!cJSON_IsObject(v)) {
				gcs_err(r, 400, "invalid",
				    "Invalid value for field 'labels'");
				goto out;
			}
			cJSON_ArrayForEach(kv, v)
			{
				if (!cJSON_IsString(kv) && !cJSON_IsNull(kv)) {
					gcs_err(r, 400, "invalid",
					    "Invalid value for label '%s'",
					    kv->string);
					goto out;
				}
			}
		} else if (strcmp(v->string, "versioning") == 0) {
			kv = cJSON_GetObjectItemCaseSensitive(v, "enabled");
			if (!cJSON_IsObject(v) ||
			    (kv != NULL && !cJSON_IsBool(kv))) {
				gcs_err(r, 400, "invalid",
				    "Invalid value for field 'versioning'");
				goto out;
			}
			if (cJSON_IsTrue(kv)) {
				gcs_err(r, 501, "notImplemented",
				    "Object versioning is not emulated by "
				    "tpuctl-emulator (see tpuctl-emulator(1) "
				    "CAVEATS)");
				goto out;
			}
		} else if (strcmp(v->string, "name") != 0 &&
		           strcmp(v->string, "kind") != 0) {
			gcs_err(r, 501, "notImplemented",
			    "Bucket field '%s' cannot be changed in "
			    "tpuctl-emulator (see tpuctl-emulator(1) CAVEATS)",
			    v->string);
			goto out;
		}
	}
	m = cJSON_Duplicate(b->meta, 1);
	v = cJSON_GetObjectItemCaseSensitive(body, "labels");
	if (cJSON_IsNull(v))
		cJSON_DeleteItemFromObjectCaseSensitive(m, "labels");
	else if (cJSON_IsObject(v)) {
		lab = cJSON_GetObjectItemCaseSensitive(m, "labels");
		if (!cJSON_IsObject(lab)) {
			lab = cJSON_CreateObject();
			gcs_set(m, "labels", lab);
		}
		cJSON_ArrayForEach(kv, v)
		{
			if (cJSON_IsNull(kv))
				cJSON_DeleteItemFromObjectCaseSensitive(
				    lab, kv->string);
			else
				gcs_set(
				    lab, kv->string, cJSON_Duplicate(kv, 1));
		}
		if (lab->child == NULL)
			cJSON_DeleteItemFromObjectCaseSensitive(m, "labels");
	}
	if (cJSON_GetObjectItemCaseSensitive(body, "versioning") != NULL) {
		v = cJSON_CreateObject();
		cJSON_AddBoolToObject(v, "enabled", 0);
		gcs_set(m, "versioning", v);
	}
	if (gcs_jint(m, "metageneration", &mg) != 0)
		mg = 1;
	gcs_set_i64(m, "metageneration", mg + 1);
	gcs_now(now, sizeof(now));
	gcs_set_str(m, "updated", now);
	path = emu_state_path(e, "gcs/buckets/%s/bucket.json", name);
	file = cJSON_CreateObject();
	cJSON_AddStringToObject(file, "project", b->project);
	cJSON_AddItemToObject(file, "resource", cJSON_Duplicate(m, 1));
	if (gcs_save_json(path, file) != 0) {
		free(path);
		cJSON_Delete(file);
		gcs_err_io(r, "cannot store bucket", name);
		goto out;
	}
	free(path);
	cJSON_Delete(file);
	cJSON_Delete(b->meta);
	b->meta = m;
	m = NULL;
	emu_reply_json(r, 200, gcs_bkt_render(e, r, b));
	rc = 0;
out:
	cJSON_Delete(m);
	cJSON_Delete(body);
	return rc;
}

/* Remove the plain files in dir (not recursive). */
static void
gcs_rm_contents(const char *dir)
{
	struct dirent *de;
	DIR *d;

	if ((d = opendir(dir)) == NULL)
		return;
	while ((de = readdir(d)) != NULL)
		if (strcmp(de->d_name, ".") != 0 &&
		    strcmp(de->d_name, "..") != 0)
			unlinkat(dirfd(d), de->d_name, 0);
	closedir(d);
}

static int
gcs_bkt_delete_h(struct emu *e, struct emu_req *r, const char *name)
{
	struct gcs_state *st = gcs_st(e);
	struct gcs_bkt *b;
	char *p;
	size_t pos;

	if ((b = gcs_bkt_find(st, name, &pos)) == NULL)
		return gcs_no_bucket(r);
	if (b->n > 0)
		return gcs_err(r, 409, "conflict",
		    "The bucket you tried to delete is not empty.");
	p = emu_state_path(e, "gcs/buckets/%s/bucket.json", name);
	unlink(p);
	free(p);
	p = emu_state_path(e, "gcs/buckets/%s/objects", name);
	gcs_rm_contents(p); /* orphans of a crash, if any */
	rmdir(p);
	free(p);
	p = emu_state_path(e, "gcs/buckets/%s", name);
	if (rmdir(p) != 0 && errno != ENOENT) {
		gcs_err_io(r, "cannot remove bucket directory", p);
		free(p);
		return -1;
	}
	free(p);
	gcs_bkt_free(b);
	memmove(
	    st->b + pos, st->b + pos + 1, (st->n - pos - 1) * sizeof(*st->b));
	st->n--;
	return emu_reply_data(r, 204, "application/json; charset=UTF-8", "", 0);
}

/* ---- object reads ---- */

/*
 * The live object for a read, honouring generation=; NULL after replying
 * 404.
 */
static struct gcs_obj *
gcs_obj_lookup(struct emu *e, struct emu_req *r, const char *bucket,
    const char *name, const char *genparam, struct gcs_bkt **bp)
{
	struct gcs_bkt *b;
	struct gcs_obj *o;
	const char *g = emu_query(r, genparam), *errstr;
	long long gen;

	if ((b = gcs_bkt_find(gcs_st(e), bucket, NULL)) == NULL) {
		gcs_no_bucket(r);
		return NULL;
	}
	o = gcs_obj_find(b, name, NULL);
	if (g != NULL) {
		gen = tpu_strtonum(g, 0, INT64_MAX, &errstr);
		if (errstr != NULL) {
			gcs_err(r, 400, "invalid",
			    "Invalid argument for %s: '%s' (a generation "
			    "number is a non-negative integer)",
			    genparam, g);
			return NULL;
		}
		if (o != NULL && o->gen != gen)
			o = NULL;
	}
	if (o == NULL) {
		gcs_no_object(r, bucket, name);
		return NULL;
	}
	*bp = b;
	return o;
}

/*
 * "gcs-new-generation": before the request reads it, the object is
 * replaced by a new generation of the same size with every byte inverted,
 * as if another writer had overwritten it between two reads.  0, or -1
 * after an error reply.
 */
static int
gcs_fault_new_generation(
    struct emu *e, struct emu_req *r, const char *bucket, const char *name)
{
	struct gcs_bkt *b;
	struct gcs_obj *o;
	struct gcs_new nw;
	unsigned char md5[16], *buf = NULL;
	char md5b[32];
	cJSON *user = NULL;
	uint64_t off = 0;
	ssize_t n, i;
	int out = -1, rc = -1;

	if ((b = gcs_bkt_find(gcs_st(e), bucket, NULL)) == NULL ||
	    (o = gcs_obj_find(b, name, NULL)) == NULL)
		return 0; /* nothing to replace: the handler answers 404 */
	memset(&nw, 0, sizeof(nw));
	if ((out = gcs_tmp_open(e)) < 0 || gcs_obj_copy_to(e, b, o, out) != 0) {
		gcs_err_io(r, "cannot overwrite the object", name);
		goto out;
	}
	/* every byte inverted, in place */
	buf = xmalloc(GCS_IO_BLOCK);
	while (off < o->size) {
		n = pread(out, buf, GCS_IO_BLOCK, (off_t)off);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			if (n == 0)
				errno = EIO;
			gcs_err_io(r, "cannot overwrite the object", name);
			goto out;
		}
		for (i = 0; i < n; i++)
			buf[i] ^= 0xff;
		if (pwrite(out, buf, (size_t)n, (off_t)off) != n) {
			gcs_err_io(r, "cannot overwrite the object", name);
			goto out;
		}
		off += (uint64_t)n;
	}
	if (gcs_hash(out, 0, o->size, -1, &nw.crc, md5) != 0) {
		gcs_err_io(r, "cannot overwrite the object", name);
		goto out;
	}
	tpu_b64_encode_to(md5b, md5, 16, 0);
	user = cJSON_Duplicate(o->meta, 1);
	nw.bucket = bucket;
	nw.name = name;
	nw.size = o->size;
	nw.md5 = md5b;
	nw.user = user;
	nw.datapath = gcs_tmp_path(e);
	if (gcs_fd_link(out, nw.datapath) != 0) {
		gcs_err_io(r, "cannot overwrite the object", name);
		goto out;
	}
	if (gcs_obj_commit(e, r, &nw, NULL) != 0) {
		unlink(nw.datapath);
		goto out;
	}
	rc = 0;
out:
	if (out >= 0)
		close(out);
	free(buf);
	free(nw.datapath);
	cJSON_Delete(user);
	return rc;
}

static int
gcs_obj_media_h(
    struct emu *e, struct emu_req *r, const char *bucket, const char *name)
{
	struct gcs_bkt *b;
	struct gcs_obj *o;
	struct gcs_pre pre;
	const char *range = emu_header(r, "range"), *ctype, *crc, *md5;
	const char *enc;
	char hdr[160];
	uint64_t off = 0, len, *sizes;
	int *fds, rr = 1, status = 200;
	size_t n;

	if (emu_fault_spec(r, "gcs-new-generation") != NULL &&
	    gcs_fault_new_generation(e, r, bucket, name) != 0)
		return -1;
	if ((o = gcs_obj_lookup(e, r, bucket, name, "generation", &b)) == NULL)
		return -1;
	if (gcs_pre_parse(r, "", &pre) != 0 || gcs_pre_check(r, &pre, o, 1))
		return -1;
	len = o->size;
	if (range != NULL && o->size > 0) {
		rr = gcsemu_range_parse(range, o->size, &off, &len);
		if (rr < 0) {
			gcs_err(r, 416, "requestedRangeNotSatisfiable",
			    "Request range not satisfiable");
			snprintf(hdr, sizeof(hdr), "bytes */%" PRIu64, o->size);
			emu_add_header(r, "Content-Range", hdr);
			return -1;
		}
		if (rr == 0)
			status = 206;
		else {
			off = 0;
			len = o->size;
		}
	}
	ctype = gcs_jstr(o->meta, "contentType");
	if (ctype == NULL)
		ctype = "application/octet-stream";
	/* opened now: the reply streams this generation's bytes even when
	   the object is replaced or deleted meanwhile */
	if ((n = gcs_obj_open(e, b, o, &fds, &sizes)) == 0)
		return gcs_err_io(r, "cannot open object data", o->name);
	emu_reply_files(r, status, ctype, fds, sizes, n, off, len);
	if (status == 206) {
		snprintf(hdr, sizeof(hdr),
		    "bytes %" PRIu64 "-%" PRIu64 "/%" PRIu64, off,
		    off + len - 1, o->size);
		emu_add_header(r, "Content-Range", hdr);
	} else {
		crc = gcs_jstr(o->meta, "crc32c");
		md5 = gcs_jstr(o->meta, "md5Hash");
		if (md5 != NULL)
			snprintf(
			    hdr, sizeof(hdr), "crc32c=%s,md5=%s", crc, md5);
		else
			snprintf(hdr, sizeof(hdr), "crc32c=%s", crc);
		emu_add_header(r, "X-Goog-Hash", hdr);
	}
	snprintf(hdr, sizeof(hdr), "%" PRId64, o->gen);
	emu_add_header(r, "X-Goog-Generation", hdr);
	snprintf(hdr, sizeof(hdr), "%" PRId64, o->metagen);
	emu_add_header(r, "X-Goog-Metageneration", hdr);
	snprintf(hdr, sizeof(hdr), "%" PRIu64, o->size);
	emu_add_header(r, "X-Goog-Stored-Content-Length", hdr);
	enc = gcs_jstr(o->meta, "contentEncoding");
	emu_add_header(r, "X-Goog-Stored-Content-Encoding",
	    enc != NULL ? enc : "identity");
	emu_add_header(r, "X-Goog-Storage-Class", "STANDARD");
	gcsemu_etag(o->gen, o->metagen, hdr, sizeof(hdr));
	emu_add_header(r, "ETag", hdr);
	emu_add_header(r, "Accept-Ranges", "bytes");
	return 0;
}

static int
gcs_obj_get_h(
    struct emu *e, struct emu_req *r, const char *bucket, const char *name)
{
	struct gcs_bkt *b;
	struct gcs_obj *o;
	struct gcs_pre pre;

	if ((o = gcs_obj_lookup(e, r, bucket, name, "generation", &b)) == NULL)
		return -1;
	if (gcs_pre_parse(r, "", &pre) != 0 || gcs_pre_check(r, &pre, o, 1))
		return -1;
	return emu_reply_json(r, 200, gcs_obj_render(e, b, o));
}

static int
gcs_obj_list_h(struct emu *e, struct emu_req *r, const char *bucket)
{
	struct gcs_bkt *b;
	const char *prefix = emu_query(r, "prefix");
	const char *delim = emu_query(r, "delimiter");
	const char *tok = emu_query(r, "pageToken");
	const char *start = emu_query(r, "startOffset");
	const char *end = emu_query(r, "endOffset");
	char *after = NULL, *lastpfx = NULL, *pfx, *next;
	const char *name, *d, *last = NULL;
	cJSON *root, *items = NULL, *prefixes = NULL;
	size_t i, max, count = 0, plen, dlen;

	if ((b = gcs_bkt_find(gcs_st(e), bucket, NULL)) == NULL)
		return gcs_no_bucket(r);
	if (gcs_max_results(r, &max) != 0)
		return -1;
	if (tok != NULL && *tok != '\0' &&
	    (after = gcs_token_decode(tok)) == NULL)
		return gcs_err(
		    r, 400, "invalid", "Invalid pageToken: '%s'", tok);
	if (prefix == NULL)
		prefix = "";
	if (delim != NULL && *delim == '\0')
		delim = NULL;
	plen = strlen(prefix);
	dlen = delim != NULL ? strlen(delim) : 0;
	root = cJSON_CreateObject();
	cJSON_AddStringToObject(root, "kind", "storage#objects");
	i = gcs_obj_bound(b, prefix, 0);
	if (after != NULL && gcs_obj_bound(b, after, 1) > i)
		i = gcs_obj_bound(b, after, 1);
	if (start != NULL && gcs_obj_bound(b, start, 0) > i)
		i = gcs_obj_bound(b, start, 0);
	for (; i < b->n; i++) {
		name = b->objs[i]->name;
		if (strncmp(name, prefix, plen) != 0)
			break;
		if (end != NULL && *end != '\0' && strcmp(name, end) >= 0)
			break;
		pfx = NULL;
		if (delim != NULL && (d = strstr(name + plen, delim)) != NULL) {
			pfx = xstrndup(name, (size_t)(d - name) + dlen);
			if ((lastpfx != NULL && strcmp(pfx, lastpfx) == 0) ||
			    (after != NULL && strcmp(pfx, after) <= 0)) {
				free(pfx);
				continue;
			}
		}
		if (count == max) {
			free(pfx);
			next = gcs_token_encode(last);
			cJSON_AddStringToObject(root, "nextPageToken", next);
			free(next);
			break;
		}
		count++;
		if (pfx != NULL) {
			if (prefixes == NULL)
				prefixes = cJSON_CreateArray();
			cJSON_AddItemToArray(prefixes, cJSON_CreateString(pfx));
			free(lastpfx);
			last = lastpfx = pfx;
			continue;
		}
		if (items == NULL)
			items = cJSON_CreateArray();
		cJSON_AddItemToArray(items, gcs_obj_render(e, b, b->objs[i]));
		last = name;
	}
	if (prefixes != NULL)
		cJSON_AddItemToObject(root, "prefixes", prefixes);
	if (items != NULL)
		cJSON_AddItemToObject(root, "items", items);
	free(lastpfx);
	free(after);
	return emu_reply_json(r, 200, root);
}

/* ---- object metadata writes ---- */

static int
gcs_obj_delete_h(
    struct emu *e, struct emu_req *r, const char *bucket, const char *name)
{
	struct gcs_bkt *b;
	struct gcs_obj *o;
	struct gcs_pre pre;
	size_t pos;

	if ((o = gcs_obj_lookup(e, r, bucket, name, "generation", &b)) == NULL)
		return -1;
	if (gcs_pre_parse(r, "", &pre) != 0 || gcs_pre_check(r, &pre, o, 0))
		return -1;
	gcs_obj_find(b, name, &pos);
	gcs_obj_delete(e, b, pos);
	return emu_reply_data(r, 204, "application/json; charset=UTF-8", "", 0);
}

/* PATCH merges (null deletes), PUT replaces the mutable fields. */
static int
gcs_obj_patch_h(struct emu *e, struct emu_req *r, const char *bucket,
    const char *name, int replace)
{
	struct gcs_bkt *b;
	struct gcs_obj *o;
	struct gcs_pre pre;
	cJSON *body, *m, *v, *md, *kv;
	char now[64];
	size_t i;
	int rc = -1;

	if ((o = gcs_obj_lookup(e, r, bucket, name, "generation", &b)) == NULL)
		return -1;
	if (gcs_pre_parse(r, "", &pre) != 0 || gcs_pre_check(r, &pre, o, 0))
		return -1;
	if ((body = emu_body_json(e, r)) == NULL)
		return -1;
	m = cJSON_Duplicate(o->meta, 1);
	for (i = 0; i < nitems(gcs_mutable); i++) {
		v = cJSON_GetObjectItemCaseSensitive(body, gcs_mutable[i]);
		if (v == NULL) {
			if (replace && strcmp(gcs_mutable[i], "contentType"))
				cJSON_DeleteItemFromObjectCaseSensitive(
				    m, gcs_mutable[i]);
			continue;
		}
		if (cJSON_IsNull(v)) {
			cJSON_DeleteItemFromObjectCaseSensitive(
			    m, gcs_mutable[i]);
			continue;
		}
		if (!replace && strcmp(gcs_mutable[i], "metadata") == 0 &&
		    cJSON_IsObject(v)) {
			md = cJSON_GetObjectItemCaseSensitive(m, "metadata");
			if (!cJSON_IsObject(md)) {
				md = cJSON_CreateObject();
				gcs_set(m, "metadata", md);
			}
			cJSON_ArrayForEach(kv, v)
			{
				if (cJSON_IsNull(kv))
					cJSON_DeleteItemFromObjectCaseSensitive(
					    md, kv->string);
				else
					gcs_set(md, kv->string,
					    cJSON_Duplicate(kv, 1));
			}
			continue;
		}
		gcs_set(m, gcs_mutable[i], cJSON_Duplicate(v, 1));
	}
	o->metagen++;
	gcs_set_i64(m, "metageneration", o->metagen);
	gcs_now(now, sizeof(now));
	gcs_set_str(m, "updated", now);
	cJSON_Delete(o->meta);
	o->meta = m;
	if (gcs_obj_save(e, b, o) != 0) {
		gcs_err_io(r, "cannot store object metadata", o->name);
		goto out;
	}
	emu_reply_json(r, 200, gcs_obj_render(e, b, o));
	rc = 0;
out:
	cJSON_Delete(body);
	return rc;
}

/* ---- uploads ---- */

static int
gcs_upload_media(struct emu *e, struct emu_req *r, const char *bucket)
{
	struct gcs_new nw;
	const char *name = emu_query(r, "name");
	unsigned char md5[16];
	char md5b[32];
	uint64_t size;
	cJSON *res = NULL;
	int fd;

	memset(&nw, 0, sizeof(nw));
	if (name == NULL || *name == '\0')
		return gcs_err(r, 400, "required", "Required parameter: name");
	if (gcs_bkt_find(gcs_st(e), bucket, NULL) == NULL)
		return gcs_no_bucket(r);
	if (gcs_pre_parse(r, "", &nw.pre) != 0)
		return -1;
	if ((fd = gcs_body_fd(e, r, &size)) < 0)
		return gcs_err_io(r, "cannot spool the upload", name);
	gcs_fault_corrupt_upload(r, fd, 0, size);
	if (gcs_hash_unlocked(e, fd, 0, size, -1, &nw.crc, md5) != 0)
		return gcs_err_io(r, "cannot read the upload", name);
	tpu_b64_encode_to(md5b, md5, 16, 0);
	if (gcs_check_sums(r, NULL, nw.crc, md5b) != 0)
		return -1;
	nw.bucket = bucket;
	nw.name = name;
	nw.size = size;
	nw.md5 = md5b;
	nw.ctype = emu_header(r, "content-type");
	nw.datapath = gcs_tmp_path(e);
	if (gcs_fd_link(fd, nw.datapath) != 0) {
		gcs_err_io(r, "cannot store the upload", name);
		goto out;
	}
	if (gcs_obj_commit(e, r, &nw, &res) != 0) {
		unlink(nw.datapath);
		goto out;
	}
	emu_reply_json(r, 200, res);
out:
	free(nw.datapath);
	return 0;
}

static int
gcs_upload_multipart(struct emu *e, struct emu_req *r, const char *bucket)
{
	struct gcs_new nw;
	struct gcsemu_mp mp;
	const char *name, *ctype = emu_header(r, "content-type");
	unsigned char md5[16];
	char md5b[32], boundary[80];
	uint64_t size;
	cJSON *user = NULL, *res = NULL;
	void *map = MAP_FAILED;
	int fd, out = -1;

	memset(&nw, 0, sizeof(nw));
	if (gcsemu_mp_boundary(ctype, boundary, sizeof(boundary)) != 0)
		return gcs_err(r, 400, "invalid",
		    "Invalid Content-Type for a multipart upload: '%s' (want "
		    "multipart/related; boundary=...)",
		    ctype != NULL ? ctype : "");
	if (gcs_bkt_find(gcs_st(e), bucket, NULL) == NULL)
		return gcs_no_bucket(r);
	if (gcs_pre_parse(r, "", &nw.pre) != 0)
		return -1;
	if ((fd = gcs_body_fd(e, r, &size)) < 0)
		return gcs_err_io(r, "cannot spool the upload", bucket);
	if (size == 0 || size > SIZE_MAX ||
	    (map = mmap(NULL, (size_t)size, PROT_READ, MAP_PRIVATE, fd, 0)) ==
	        MAP_FAILED ||
	    gcsemu_mp_parse(map, (size_t)size, boundary, &mp) != 0) {
		gcs_err(r, 400, "invalid",
		    "Invalid multipart upload body: want a JSON part then a "
		    "media part, separated by boundary '%s'",
		    boundary);
		goto out;
	}
	if (mp.json_len == 0)
		user = cJSON_CreateObject();
	else
		user = cJSON_ParseWithLength(
		    (const char *)map + mp.json_off, mp.json_len);
	if (!cJSON_IsObject(user)) {
		gcs_err(r, 400, "parseError",
		    "Invalid JSON in the metadata part of the multipart "
		    "upload");
		goto out;
	}
	name = emu_query(r, "name");
	if (name == NULL || *name == '\0')
		name = gcs_jstr(user, "name");
	if (name == NULL || *name == '\0') {
		gcs_err(r, 400, "required", "Required parameter: name");
		goto out;
	}
	if ((out = gcs_tmp_open(e)) < 0) {
		gcs_err_io(r, "cannot store the upload", name);
		goto out;
	}
	gcs_fault_corrupt_upload(r, fd, mp.data_off, mp.data_len);
	if (gcs_hash_unlocked(
	        e, fd, mp.data_off, mp.data_len, out, &nw.crc, md5) != 0) {
		gcs_err_io(r, "cannot store the upload", name);
		goto out;
	}
	tpu_b64_encode_to(md5b, md5, 16, 0);
	if (gcs_check_sums(r, user, nw.crc, md5b) != 0)
		goto out;
	nw.bucket = bucket;
	nw.name = name;
	nw.size = mp.data_len;
	nw.md5 = md5b;
	nw.user = user;
	nw.ctype = mp.data_ctype[0] != '\0' ? mp.data_ctype : NULL;
	nw.datapath = gcs_tmp_path(e);
	if (gcs_fd_link(out, nw.datapath) != 0) {
		gcs_err_io(r, "cannot store the upload", name);
		goto out;
	}
	if (gcs_obj_commit(e, r, &nw, &res) != 0) {
		unlink(nw.datapath);
		goto out;
	}
	emu_reply_json(r, 200, res);
out:
	if (map != MAP_FAILED)
		munmap(map, (size_t)size);
	if (out >= 0)
		close(out);
	cJSON_Delete(user);
	free(nw.datapath);
	return 0;
}

static char *
gcs_session_path(struct emu *e, const char *id, const char *ext)
{
	return emu_state_path(e, "gcs/uploads/%s.%s", id, ext);
}

static int
gcs_upload_start(struct emu *e, struct emu_req *r, const char *bucket)
{
	struct gcs_bkt *b;
	struct gcs_pre pre;
	char why[256];
	const char *name, *ctype;
	char id[33], *enc = NULL, *loc = NULL, *jpath = NULL, *dpath = NULL;
	cJSON *user = NULL, *s = NULL;
	int fd, rc = -1;

	if ((b = gcs_bkt_find(gcs_st(e), bucket, NULL)) == NULL)
		return gcs_no_bucket(r);
	if (gcs_pre_parse(r, "", &pre) != 0)
		return -1;
	if (r->body_len > 0) {
		if ((user = emu_body_json(e, r)) == NULL)
			return -1;
	} else
		user = cJSON_CreateObject();
	name = emu_query(r, "name");
	if (name == NULL || *name == '\0')
		name = gcs_jstr(user, "name");
	if (name == NULL || *name == '\0') {
		gcs_err(r, 400, "required", "Required parameter: name");
		goto out;
	}
	if (validate_object(name, why, sizeof(why)) != 0) {
		gcs_err(r, 400, "invalid", "%s", why);
		goto out;
	}
	if (gcs_pre_check(r, &pre, gcs_obj_find(b, name, NULL), 0) != 0)
		goto out;
	ctype = gcs_jstr(user, "contentType");
	if (ctype == NULL)
		ctype = emu_header(r, "x-upload-content-type");
	emu_random_hex(id, 32);
	s = cJSON_CreateObject();
	cJSON_AddStringToObject(s, "bucket", bucket);
	cJSON_AddStringToObject(s, "name", name);
	cJSON_AddStringToObject(s, "state", "active");
	if (ctype != NULL)
		cJSON_AddStringToObject(s, "contentType", ctype);
	cJSON_AddItemToObject(s, "metadata", user);
	user = NULL;
	cJSON_AddItemToObject(s, "preconditions", gcs_pre_to_json(&pre));
	jpath = gcs_session_path(e, id, "json");
	dpath = gcs_session_path(e, id, "data");
	fd = open(dpath, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	if (fd < 0 || close(fd) != 0 || gcs_save_json(jpath, s) != 0) {
		gcs_err_io(r, "cannot create the upload session", name);
		unlink(dpath);
		goto out;
	}
	enc = gcsemu_pct_encode(name);
	loc = xasprintf("%s/upload/storage/v1/b/%s/o?uploadType=resumable&"
	                "name=%s&upload_id=%s",
	    e->base_url, bucket, enc, id);
	emu_reply_data(r, 200, "text/plain; charset=utf-8", "", 0);
	emu_add_header(r, "Location", loc);
	emu_add_header(r, "X-GUploader-UploadID", id);
	rc = 0;
out:
	cJSON_Delete(user);
	cJSON_Delete(s);
	free(enc);
	free(loc);
	free(jpath);
	free(dpath);
	return rc;
}

static int
gcs_busy(struct gcs_state *st, const char *id, int set)
{
	size_t i;

	for (i = 0; i < st->nbusy; i++)
		if (strcmp(st->busy[i], id) == 0) {
			if (set < 0) {
				free(st->busy[i]);
				st->busy[i] = st->busy[--st->nbusy];
			}
			return 1;
		}
	if (set > 0) {
		st->busy =
		    xreallocarray(st->busy, st->nbusy + 1, sizeof(*st->busy));
		st->busy[st->nbusy++] = xstrdup(id);
	}
	return 0;
}

/* 308 Resume Incomplete, with Range when anything is persisted. */
static int
gcs_reply_308(struct emu_req *r, uint64_t persisted)
{
	char hdr[64];

	emu_reply_data(r, 308, "text/plain; charset=utf-8", "", 0);
	if (persisted > 0) {
		snprintf(hdr, sizeof(hdr), "bytes=0-%" PRIu64, persisted - 1);
		emu_add_header(r, "Range", hdr);
	}
	return 0;
}

/* Hash the session's bytes and store them as the object. */
static int
gcs_upload_finish(
    struct emu *e, struct emu_req *r, const char *id, cJSON *s, uint64_t size)
{
	struct gcs_state *st = gcs_st(e);
	struct gcs_new nw;
	unsigned char md5[16];
	char md5b[32], *dpath = gcs_session_path(e, id, "data");
	char *jpath = gcs_session_path(e, id, "json");
	const cJSON *user = cJSON_GetObjectItemCaseSensitive(s, "metadata");
	cJSON *res = NULL;
	int fd = -1, rc = -1;

	memset(&nw, 0, sizeof(nw));
	if ((fd = open(dpath, O_RDONLY | O_CLOEXEC)) < 0) {
		gcs_err_io(r, "cannot open the upload session", id);
		goto out;
	}
	gcs_busy(st, id, 1);
	rc = gcs_hash_unlocked(e, fd, 0, size, -1, &nw.crc, md5);
	gcs_busy(st, id, -1);
	if (rc != 0) {
		gcs_err_io(r, "cannot read the upload session", id);
		goto out;
	}
	rc = -1;
	tpu_b64_encode_to(md5b, md5, 16, 0);
	if (gcs_check_sums(r, user, nw.crc, md5b) != 0)
		goto out;
	nw.bucket = gcs_jstr(s, "bucket");
	nw.name = gcs_jstr(s, "name");
	nw.size = size;
	nw.md5 = md5b;
	nw.user = user;
	nw.ctype = gcs_jstr(s, "contentType");
	nw.datapath = dpath;
	gcs_pre_from_json(
	    cJSON_GetObjectItemCaseSensitive(s, "preconditions"), &nw.pre);
	if (nw.bucket == NULL || nw.name == NULL) {
		gcs_err(
		    r, 500, "backendError", "corrupt upload session %s", id);
		goto out;
	}
	if (gcs_obj_commit(e, r, &nw, &res) != 0)
		goto out;
	gcs_set_str(s, "state", "done");
	gcs_set(s, "resource", cJSON_Duplicate(res, 1));
	gcs_save_json(jpath, s);
	emu_reply_json(r, 200, res);
	rc = 0;
out:
	if (fd >= 0)
		close(fd);
	free(dpath);
	free(jpath);
	return rc;
}

/*
 * A resumable chunk that the sink wrote straight into its session's data
 * file (see gcs_sink_session): the session is busy from the headers to
 * the handler, and the file is cut back to first unless the chunk is
 * accepted whole.
 */
struct gcs_direct {
	char id[33];
	uint64_t first; /* the session's size before this body */
};

static int
gcs_upload_chunk(struct emu *e, struct emu_req *r, const char *id)
{
	struct gcs_state *st = gcs_st(e);
	struct gcsemu_crange cr;
	struct stat sb;
	const char *state, *hdr, *fault;
	char *jpath = NULL, *dpath = NULL;
	uint64_t persisted, blen = 0, last, total = 0, skip, add, keep;
	struct gcs_direct *dr = r->sink_ctx;
	cJSON *s = NULL;
	int bfd = -1, dfd = -1, final = 0, partial = 0, stored = 0;

	r->sink_ctx = NULL;
	if (dr != NULL)
		gcs_busy(st, dr->id, -1); /* the body is in */
	if (!gcsemu_is_hex(id, 32)) {
		gcs_err(r, 404, "notFound", "No such upload session: '%s'", id);
		goto out;
	}
	jpath = gcs_session_path(e, id, "json");
	dpath = gcs_session_path(e, id, "data");
	if ((s = gcs_load_json(jpath)) == NULL) {
		gcs_err(r, 404, "notFound", "No such upload session: '%s'", id);
		goto out;
	}
	state = gcs_jstr(s, "state");
	if (state != NULL && strcmp(state, "cancelled") == 0) {
		gcs_err(
		    r, 410, "gone", "The upload session %s was cancelled.", id);
		goto out;
	}
	if (state != NULL && strcmp(state, "done") == 0) {
		emu_reply_json(r, 200,
		    cJSON_Duplicate(
		        cJSON_GetObjectItemCaseSensitive(s, "resource"), 1));
		goto out;
	}
	if (gcs_busy(st, id, 0)) {
		gcs_err(r, 503, "backendError",
		    "The upload session %s is busy with another request; "
		    "retry.",
		    id);
		goto out;
	}
	if (strcmp(r->method, "DELETE") == 0) {
		gcs_set_str(s, "state", "cancelled");
		gcs_save_json(jpath, s);
		unlink(dpath);
		emu_reply_data(r, 499, "text/plain; charset=utf-8", "", 0);
		goto out;
	}
	if (dr != NULL) {
		persisted = dr->first;
		blen = r->body_sunk;
	} else if (stat(dpath, &sb) != 0) {
		gcs_err_io(r, "cannot open the upload session", id);
		goto out;
	} else {
		persisted = (uint64_t)sb.st_size;
		if ((bfd = gcs_body_fd(e, r, &blen)) < 0) {
			gcs_err_io(r, "cannot spool the chunk", id);
			goto out;
		}
	}
	hdr = emu_header(r, "content-range");
	if (hdr == NULL) {
		/* A single-request upload: the body is the whole object. */
		memset(&cr, 0, sizeof(cr));
		cr.total_known = 1;
		cr.total = blen;
		if (blen > 0) {
			cr.has_range = 1;
			cr.last = blen - 1;
		}
	} else if (gcsemu_crange_parse(hdr, &cr) != 0) {
		gcs_err(r, 400, "invalid",
		    "Invalid Content-Range: '%s' (want bytes FIRST-LAST/TOTAL, "
		    "bytes FIRST-LAST/*, bytes */TOTAL or bytes */*)",
		    hdr);
		goto out;
	}
	if (!cr.has_range) {
		/* A status query (or finalising an empty/complete upload). */
		if (blen != 0) {
			gcs_err(r, 400, "invalid",
			    "Content-Range '%s' has no byte range but the body "
			    "has %" PRIu64 " bytes",
			    hdr != NULL ? hdr : "", blen);
			goto out;
		}
		if (cr.total_known && cr.total < persisted) {
			gcs_err(r, 400, "invalid",
			    "Content-Range total %" PRIu64 " is less than the "
			    "%" PRIu64 " bytes already uploaded",
			    cr.total, persisted);
			goto out;
		}
		if (cr.total_known && cr.total == persisted)
			gcs_upload_finish(e, r, id, s, persisted);
		else
			gcs_reply_308(r, persisted);
		goto out;
	}
	if (cr.open_end) {
		last = cr.first + blen - 1;
		if (blen == 0)
			last = cr.first - 1; /* nothing more: total = first */
		total = cr.first + blen;
		final = 1;
	} else {
		last = cr.last;
		if (blen < cr.last - cr.first + 1 &&
		    emu_fault_spec(r, "return-") != NULL) {
			/*
			 * The core cut the body short (return-CODE-after-NK)
			 * and replaces our reply: keep what arrived in whole
			 * 256 KiB units, as GCS does when a connection breaks.
			 */
			partial = 1;
			last = (cr.first + blen) / GCS_CHUNK_ALIGN *
			           GCS_CHUNK_ALIGN -
			       1;
		} else if (cr.last - cr.first + 1 != blen) {
			gcs_err(r, 400, "invalid",
			    "Content-Range '%s' says %" PRIu64
			    " bytes but the body has %" PRIu64,
			    hdr, cr.last - cr.first + 1, blen);
			goto out;
		}
		if (cr.total_known && !partial) {
			total = cr.total;
			final = last + 1 == total;
		}
	}
	if (cr.first > persisted) {
		gcs_err(r, 400, "invalid",
		    "Invalid request. According to the Content-Range header, "
		    "the upload offset is %" PRIu64 " byte(s), which exceeds "
		    "already uploaded size of %" PRIu64 " byte(s).",
		    cr.first, persisted);
		goto out;
	}
	if (!final && !partial && (last + 1) % GCS_CHUNK_ALIGN != 0) {
		gcs_err(r, 400, "invalid",
		    "Invalid request. The number of bytes uploaded is required "
		    "to be a multiple of 262144 (256 KiB), except for the "
		    "final request; this chunk ends at offset %" PRIu64 ".",
		    last + 1);
		goto out;
	}
	skip = persisted - cr.first;
	add = blen > skip ? blen - skip : 0;
	if (partial)
		add = last + 1 > persisted ? last + 1 - persisted : 0;
	keep = add;
	if ((fault = emu_fault_spec(r, "gcs-drop-after-")) != NULL) {
		const char *errstr;
		char num[32];
		size_t n = strcspn(fault + 15, "K");

		if (n < sizeof(num)) {
			memcpy(num, fault + 15, n);
			num[n] = '\0';
			keep =
			    (uint64_t)tpu_strtonum(num, 0, 1 << 30, &errstr) *
			    1024;
			if (errstr != NULL || keep > add)
				keep = add;
		}
	}
	if (dr != NULL && (skip != 0 || keep != blen)) {
		gcs_err(r, 500, "backendError",
		    "upload session %s: a chunk written in place does not "
		    "start at the persisted size",
		    id);
		goto out;
	}
	gcs_fault_corrupt_upload(r, bfd, skip, keep);
	if (keep > 0 && dr == NULL) {
		int bad;

		/* No O_APPEND: copy_file_range() refuses such fds.  The copy
		   runs without the global lock (other sessions and requests
		   go on); the session is busy meanwhile. */
		dfd = open(dpath, O_WRONLY | O_CLOEXEC);
		bad = dfd < 0 || lseek(dfd, (off_t)persisted, SEEK_SET) < 0;
		if (!bad) {
			gcs_busy(st, id, 1);
			pthread_mutex_unlock(&e->lock);
			bad = gcs_copy(bfd, skip, keep, dfd) != 0;
			pthread_mutex_lock(&e->lock);
			gcs_busy(st, id, -1);
		}
		if (bad) {
			gcs_err_io(
			    r, "cannot append to the upload session", id);
			goto out;
		}
	}
	persisted += keep;
	stored = 1;
	if (final && keep == add && persisted == total)
		gcs_upload_finish(e, r, id, s, persisted);
	else
		gcs_reply_308(r, persisted);
out:
	if (dr != NULL && !stored && ftruncate(r->sink_fd, (off_t)dr->first))
		fprintf(stderr,
		    "tpuctl-emulator: upload session %s: cannot cut a refused "
		    "chunk: %s\n",
		    dr->id, strerror(errno));
	free(dr);
	if (dfd >= 0)
		close(dfd);
	cJSON_Delete(s);
	free(jpath);
	free(dpath);
	return 0;
}

/* ---- compose, rewrite, copy ---- */

static int
gcs_compose_h(
    struct emu *e, struct emu_req *r, const char *bucket, const char *name)
{
	struct gcs_bkt *b;
	struct gcs_obj *src[GCS_MAX_COMPOSE];
	struct gcs_new nw;
	const cJSON *srcs, *it, *pre, *dest;
	const char *sname;
	int64_t g;
	uint32_t crc = 0;
	uint64_t size = 0;
	cJSON *body, *res = NULL;
	int n = 0, i, comps = 0;

	memset(&nw, 0, sizeof(nw));
	if ((b = gcs_bkt_find(gcs_st(e), bucket, NULL)) == NULL)
		return gcs_no_bucket(r);
	if (gcs_pre_parse(r, "", &nw.pre) != 0)
		return -1;
	if ((body = emu_body_json(e, r)) == NULL)
		return -1;
	srcs = cJSON_GetObjectItemCaseSensitive(body, "sourceObjects");
	n = cJSON_GetArraySize(srcs);
	if (!cJSON_IsArray(srcs) || n == 0) {
		gcs_err(r, 400, "required",
		    "You must provide at least one source component.");
		goto out;
	}
	if (n > GCS_MAX_COMPOSE) {
		gcs_err(r, 400, "invalid",
		    "The number of source components provided (%d) exceeds the "
		    "maximum (%d)",
		    n, GCS_MAX_COMPOSE);
		goto out;
	}
	i = 0;
	cJSON_ArrayForEach(it, srcs)
	{
		sname = gcs_jstr(it, "name");
		if (sname == NULL) {
			gcs_err(r, 400, "required",
			    "Required field: sourceObjects[%d].name", i);
			goto out;
		}
		src[i] = gcs_obj_find(b, sname, NULL);
		if (src[i] != NULL && gcs_jint(it, "generation", &g) == 0 &&
		    g != src[i]->gen)
			src[i] = NULL;
		if (src[i] == NULL) {
			gcs_no_object(r, bucket, sname);
			goto out;
		}
		pre =
		    cJSON_GetObjectItemCaseSensitive(it, "objectPreconditions");
		if (gcs_jint(pre, "ifGenerationMatch", &g) == 0 &&
		    g != src[i]->gen) {
			gcs_err(r, 412, "conditionNotMet",
			    "At least one of the pre-conditions you specified "
			    "did not hold.");
			goto out;
		}
		i++;
	}
	/*
	 * The composite is linked to its sources' files, a composite
	 * source's segments flattened (Cloud Storage composes without
	 * copying bytes either); the checksum combines theirs.
	 */
	for (i = 0; i < n; i++) {
		char **fp;
		uint64_t *fs;
		uint32_t c;
		size_t k, nf;

		if (crc32c_parse_base64(gcs_jstr(src[i]->meta, "crc32c") != NULL
		                            ? gcs_jstr(src[i]->meta, "crc32c")
		                            : "",
		        &c) != 0)
			c = 0;
		nf = gcs_obj_files(e, b, src[i], &fp, &fs);
		nw.segpaths = xreallocarray(
		    nw.segpaths, nw.nseg + nf, sizeof(*nw.segpaths));
		nw.segsizes = xreallocarray(
		    nw.segsizes, nw.nseg + nf, sizeof(*nw.segsizes));
		for (k = 0; k < nf; k++) {
			nw.segpaths[nw.nseg] = fp[k];
			nw.segsizes[nw.nseg++] = fs[k];
		}
		free(fp);
		free(fs);
		crc = crc32c_combine(crc, c, src[i]->size);
		size += src[i]->size;
		g = 0;
		if (gcs_jint(src[i]->meta, "componentCount", &g) != 0 || g < 1)
			g = 1;
		comps += (int)g;
	}
	dest = cJSON_GetObjectItemCaseSensitive(body, "destination");
	nw.bucket = bucket;
	nw.name = name;
	nw.size = size;
	nw.crc = crc;
	nw.md5 = NULL;
	nw.components = comps;
	nw.user = cJSON_IsObject(dest) ? dest : NULL;
	if (gcs_obj_commit(e, r, &nw, &res) != 0)
		goto out;
	emu_reply_json(r, 200, res);
out:
	gcs_files_free(nw.segpaths, nw.segsizes, nw.nseg);
	cJSON_Delete(body);
	return 0;
}

/*
 * The rewriteToken loop: with maxBytesRewrittenPerCall (a multiple of
 * 1 MiB, as GCS wants) smaller than what is left, answer done=false with
 * a token carrying the source generation and the progress.  0 when this
 * call should finish the copy, -1 after replying.
 */
static int
gcs_rewrite_step(struct emu_req *r, const struct gcs_obj *so)
{
	const char *max = emu_query(r, "maxBytesRewrittenPerCall");
	const char *tok = emu_query(r, "rewriteToken"), *errstr;
	long long per = 0, gen = 0;
	unsigned long long done = 0;
	char *dec = NULL, buf[64], num[32];
	cJSON *root;
	int n = 0;

	if (max != NULL) {
		per = tpu_strtonum(max, 1, INT64_MAX, &errstr);
		if (errstr != NULL || per % 1048576 != 0)
			return gcs_err(r, 400, "invalid",
			    "Invalid maxBytesRewrittenPerCall: '%s' (a "
			    "positive "
			    "multiple of 1048576)",
			    max);
	}
	if (tok != NULL && *tok != '\0') {
		dec = gcs_token_decode(tok);
		if (dec == NULL ||
		    sscanf(dec, "%lld:%llu%n", &gen, &done, &n) != 2 ||
		    dec[n] != '\0' || gen != so->gen || done > so->size) {
			free(dec);
			return gcs_err(r, 400, "invalid",
			    "Invalid rewriteToken: '%s' (from another rewrite, "
			    "or the source object changed)",
			    tok);
		}
		free(dec);
	}
	if (per == 0 || done + (unsigned long long)per >= so->size)
		return 0;
	done += (unsigned long long)per;
	root = cJSON_CreateObject();
	cJSON_AddStringToObject(root, "kind", "storage#rewriteResponse");
	snprintf(num, sizeof(num), "%llu", done);
	cJSON_AddStringToObject(root, "totalBytesRewritten", num);
	snprintf(num, sizeof(num), "%" PRIu64, so->size);
	cJSON_AddStringToObject(root, "objectSize", num);
	cJSON_AddBoolToObject(root, "done", 0);
	snprintf(buf, sizeof(buf), "%" PRId64 ":%llu", so->gen, done);
	dec = gcs_token_encode(buf);
	cJSON_AddStringToObject(root, "rewriteToken", dec);
	free(dec);
	emu_reply_json(r, 200, root);
	return -1;
}

static int
gcs_rewrite_h(
    struct emu *e, struct emu_req *r, const struct gcsemu_path *p, int rewrite)
{
	struct gcs_bkt *sb;
	struct gcs_obj *so;
	struct gcs_pre spre;
	struct gcs_new nw;
	cJSON *body = NULL, *user = NULL, *res = NULL, *root;
	char num[32];
	int64_t comps = 0;
	int out = -1;

	memset(&nw, 0, sizeof(nw));
	if ((so = gcs_obj_lookup(
	         e, r, p->bucket, p->object, "sourceGeneration", &sb)) == NULL)
		return -1;
	if (gcs_pre_parse(r, "Source", &spre) != 0 ||
	    gcs_pre_check(r, &spre, so, 0) != 0)
		return -1;
	if (gcs_pre_parse(r, "", &nw.pre) != 0)
		return -1;
	if (gcs_bkt_find(gcs_st(e), p->dbucket, NULL) == NULL)
		return gcs_no_bucket(r);
	if (rewrite && gcs_rewrite_step(r, so) != 0)
		return 0; /* answered: not done yet, or 400 */
	if (r->body_len > 0 && (body = emu_body_json(e, r)) == NULL)
		return -1;
	user = cJSON_CreateObject();
	gcs_copy_mutable(user, so->meta);
	if (body != NULL)
		gcs_copy_mutable(user, body);
	if ((out = gcs_tmp_open(e)) < 0 ||
	    gcs_obj_copy_to(e, sb, so, out) != 0) {
		gcs_err_io(r, "cannot copy", p->object);
		goto out;
	}
	if (crc32c_parse_base64(gcs_jstr(so->meta, "crc32c") != NULL
	                            ? gcs_jstr(so->meta, "crc32c")
	                            : "",
	        &nw.crc) != 0)
		nw.crc = 0;
	if (gcs_jint(so->meta, "componentCount", &comps) != 0)
		comps = 0;
	nw.bucket = p->dbucket;
	nw.name = p->dobject;
	nw.size = so->size;
	nw.md5 = gcs_jstr(so->meta, "md5Hash");
	nw.components = (int)comps;
	nw.user = user;
	nw.datapath = gcs_tmp_path(e);
	if (gcs_fd_link(out, nw.datapath) != 0) {
		gcs_err_io(r, "cannot copy", p->object);
		goto out;
	}
	if (gcs_obj_commit(e, r, &nw, &res) != 0) {
		unlink(nw.datapath);
		goto out;
	}
	if (!rewrite) {
		emu_reply_json(r, 200, res);
		goto out;
	}
	/* The recorded real rewrite answers carry the resource's owner
	 * (samples/gcs_rewrite_copy): the project's owners here. */
	if (cJSON_GetObjectItemCaseSensitive(res, "owner") == NULL) {
		const struct gcs_bkt *db =
		    gcs_bkt_find(gcs_st(e), p->dbucket, NULL);
		char pnum[32], *ent;
		cJSON *own = cJSON_AddObjectToObject(res, "owner");

		emu_project_number(
		    (db != NULL ? db : sb)->project, pnum, sizeof(pnum));
		ent = xasprintf("project-owners-%s", pnum);
		cJSON_AddStringToObject(own, "entity", ent);
		free(ent);
	}
	root = cJSON_CreateObject();
	cJSON_AddStringToObject(root, "kind", "storage#rewriteResponse");
	snprintf(num, sizeof(num), "%" PRIu64, so->size);
	cJSON_AddStringToObject(root, "totalBytesRewritten", num);
	cJSON_AddStringToObject(root, "objectSize", num);
	cJSON_AddBoolToObject(root, "done", 1);
	cJSON_AddItemToObject(root, "resource", res);
	emu_reply_json(r, 200, root);
out:
	if (out >= 0)
		close(out);
	free(nw.datapath);
	cJSON_Delete(user);
	cJSON_Delete(body);
	return 0;
}

/* ---- dispatch ---- */

static int
gcs_method_not_allowed(struct emu_req *r)
{
	return gcs_err(r, 405, "methodNotAllowed",
	    "Method %s is not supported on %s by tpuctl-emulator", r->method,
	    r->path);
}

static int
gcs_dispatch(struct emu *e, struct emu_req *r, const struct gcsemu_path *p)
{
	const char *m = r->method, *t, *alt, *id;
	int get = strcmp(m, "GET") == 0, post = strcmp(m, "POST") == 0;
	int put = strcmp(m, "PUT") == 0, del = strcmp(m, "DELETE") == 0;
	int patch = strcmp(m, "PATCH") == 0;

	if (p->api == GCSEMU_API_UPLOAD) {
		if (p->kind != GCSEMU_P_OBJECTS)
			return gcs_err(r, 404, "notFound", "Not Found");
		id = emu_query(r, "upload_id");
		if (id != NULL && (put || post || del))
			return gcs_upload_chunk(e, r, id);
		if (!post)
			return gcs_method_not_allowed(r);
		t = emu_query(r, "uploadType");
		if (t != NULL && strcmp(t, "media") == 0)
			return gcs_upload_media(e, r, p->bucket);
		if (t != NULL && strcmp(t, "multipart") == 0)
			return gcs_upload_multipart(e, r, p->bucket);
		if (t != NULL && strcmp(t, "resumable") == 0)
			return gcs_upload_start(e, r, p->bucket);
		return gcs_err(r, 400, "invalid",
		    "Invalid uploadType: '%s' (want media, multipart or "
		    "resumable)",
		    t != NULL ? t : "");
	}
	alt = emu_query(r, "alt");
	switch (p->kind) {
	case GCSEMU_P_BUCKETS:
		if (get)
			return gcs_bkt_list_h(e, r);
		if (post)
			return gcs_bkt_insert_h(e, r);
		break;
	case GCSEMU_P_BUCKET:
		if (get)
			return gcs_bkt_get_h(e, r, p->bucket);
		if (del)
			return gcs_bkt_delete_h(e, r, p->bucket);
		if (patch)
			return gcs_bkt_patch_h(e, r, p->bucket);
		break;
	case GCSEMU_P_OBJECTS:
		if (get)
			return gcs_obj_list_h(e, r, p->bucket);
		break;
	case GCSEMU_P_OBJECT:
		if (get && (p->api == GCSEMU_API_DOWNLOAD ||
		               (alt != NULL && strcmp(alt, "media") == 0)))
			return gcs_obj_media_h(e, r, p->bucket, p->object);
		if (get)
			return gcs_obj_get_h(e, r, p->bucket, p->object);
		if (del)
			return gcs_obj_delete_h(e, r, p->bucket, p->object);
		if (patch || put)
			return gcs_obj_patch_h(e, r, p->bucket, p->object, put);
		break;
	case GCSEMU_P_COMPOSE:
		return gcs_compose_h(e, r, p->bucket, p->object);
	case GCSEMU_P_REWRITE:
	case GCSEMU_P_COPY:
		if (post)
			return gcs_rewrite_h(
			    e, r, p, p->kind == GCSEMU_P_REWRITE);
		break;
	}
	return gcs_method_not_allowed(r);
}

/*
 * Parts of the JSON API that exist but are not emulated (documented in
 * tpuctl-emulator(1) CAVEATS): bucket/object ACLs, bucket IAM,
 * notifications, retention locks, HMAC keys, the project service
 * account and batch requests. 1 (after a 501 in the API's error shape)
 * when raw_url is one of them, else 0.
 */
static int
gcs_unemulated(struct emu_req *r)
{
	static const char *const bsub[] = { "iam", "acl", "defaultObjectAcl",
		"notificationConfigs", "lockRetentionPolicy" };
	const char *u = r->raw_url, *seg[6];
	size_t len[6], n = 0, i;

	if (strncmp(u, "/batch/", 7) == 0)
		goto no;
	if (strncmp(u, "/storage/v1/", 12) == 0)
		u += 11;
	while (*u == '/' && n < nitems(seg)) {
		u++;
		seg[n] = u;
		len[n] = strcspn(u, "/?");
		u += len[n++];
		if (*u == '?' || *u == '\0')
			break;
	}
#define SEG(k, s)                                                              \
	(n > (k) && len[k] == strlen(s) && !strncmp(seg[k], s, len[k]))
	if (SEG(0, "projects") &&
	    (SEG(2, "hmacKeys") || SEG(2, "serviceAccount")))
		goto no;
	if (SEG(0, "b") && n >= 3) {
		for (i = 0; i < nitems(bsub); i++)
			if (SEG(2, bsub[i]))
				goto no;
		if (SEG(2, "o") && SEG(4, "acl"))
			goto no;
	}
#undef SEG
	return 0;
no:
	gcs_err(r, 501, "notImplemented",
	    "%s %s is not emulated by tpuctl-emulator (see "
	    "tpuctl-emulator(1) CAVEATS)",
	    r->method, r->path);
	return 1;
}

static int
gcs_handle(struct emu *e, struct emu_req *r)
{
	struct gcsemu_path p;

	if (gcs_unemulated(r))
		;
	else if (gcsemu_path_parse(r->raw_url, r->method, &p) != 0 ||
	         (p.api == GCSEMU_API_DOWNLOAD && p.kind != GCSEMU_P_OBJECT))
		gcs_err(r, 404, "notFound", "Not Found");
	else {
		gcs_dispatch(e, r, &p);
		gcsemu_path_release(&p);
	}
	if (r->sink_fd >= 0) {
		close(r->sink_fd);
		r->sink_fd = -1;
	}
	return 0;
}

/*
 * A resumable chunk whose Content-Range starts where its session ends
 * (or, without Content-Range, a whole object into an empty session), with
 * a Content-Length to match and no fault armed, goes straight into
 * the session's data file at that offset: one copy of the bytes instead
 * of a spool and a second copy.  The session is busy until the handler
 * (or gcs_sink_abort) is done with it.  -1: spool as usual.
 */
static int
gcs_sink_session(struct emu *e, struct emu_req *r, const char *id)
{
	struct gcs_state *st = gcs_st(e);
	struct gcsemu_crange cr;
	struct gcs_direct *dr;
	struct stat sb;
	const char *hdr = emu_header(r, "content-range"), *len, *state, *errstr;
	char *jpath = NULL, *dpath = NULL;
	cJSON *s = NULL;
	uint64_t clen;
	int fd = -1;

	if (r->fault != NULL || !gcsemu_is_hex(id, 32) ||
	    (len = emu_header(r, "content-length")) == NULL)
		return -1;
	clen = (uint64_t)tpu_strtonum(len, 1, INT64_MAX, &errstr);
	if (errstr != NULL)
		return -1;
	if (hdr == NULL) {
		/* a single-request upload: the body is the whole object */
		memset(&cr, 0, sizeof(cr));
		cr.last = clen - 1;
	} else if (gcsemu_crange_parse(hdr, &cr) != 0 || !cr.has_range ||
	           cr.open_end || clen != cr.last - cr.first + 1)
		return -1;
	if (gcs_busy(st, id, 0))
		return -1;
	jpath = gcs_session_path(e, id, "json");
	dpath = gcs_session_path(e, id, "data");
	if ((s = gcs_load_json(jpath)) == NULL ||
	    ((state = gcs_jstr(s, "state")) != NULL &&
	        strcmp(state, "active") != 0))
		goto out;
	if ((fd = open(dpath, O_WRONLY | O_CLOEXEC)) < 0)
		goto out;
	if (fstat(fd, &sb) != 0 || (uint64_t)sb.st_size != cr.first ||
	    lseek(fd, (off_t)cr.first, SEEK_SET) < 0) {
		close(fd);
		fd = -1;
		goto out;
	}
	dr = xcalloc(1, sizeof(*dr));
	snprintf(dr->id, sizeof(dr->id), "%s", id);
	dr->first = cr.first;
	r->sink_ctx = dr;
	gcs_busy(st, id, 1);
out:
	cJSON_Delete(s);
	free(jpath);
	free(dpath);
	return fd;
}

/*
 * The chunk was not taken (the client went away mid-body, or the request
 * never reached gcs_upload_chunk): nothing of it is persisted.  By path:
 * the sink fd may be closed already.
 */
static void
gcs_sink_abort(struct emu *e, struct emu_req *r)
{
	struct gcs_direct *dr = r->sink_ctx;
	char *dpath = gcs_session_path(e, dr->id, "data");

	r->sink_ctx = NULL;
	if (truncate(dpath, (off_t)dr->first) != 0)
		fprintf(stderr,
		    "tpuctl-emulator: upload session %s: cannot cut a broken "
		    "chunk: %s\n",
		    dr->id, strerror(errno));
	free(dpath);
	gcs_busy(gcs_st(e), dr->id, -1);
	free(dr);
}

/* Uploads stream into an anonymous temp file; everything else buffers. */
static int
gcs_sink(struct emu *e, struct emu_req *r)
{
	const char *t, *id;
	int fd;

	if (strcmp(r->method, "PUT") != 0 && strcmp(r->method, "POST") != 0)
		return -1;
	if ((id = emu_query(r, "upload_id")) != NULL &&
	    strcmp(r->method, "PUT") == 0 &&
	    (fd = gcs_sink_session(e, r, id)) >= 0)
		return fd;
	if (emu_query(r, "upload_id") == NULL) {
		t = emu_query(r, "uploadType");
		if (strcmp(r->method, "POST") != 0 || t == NULL ||
		    (strcmp(t, "media") != 0 && strcmp(t, "multipart") != 0))
			return -1;
	}
	return gcs_tmp_open(e);
}

const struct emu_route gcs_routes[] = {
	{ "/batch/storage/v1", EMU_R_AUTH, gcs_handle, NULL, NULL },
	{ "/storage/v1/projects/", EMU_R_AUTH, gcs_handle, NULL, NULL },
	{ "/storage/v1/b", EMU_R_AUTH, gcs_handle, NULL, NULL },
	{ "/upload/storage/v1/b", EMU_R_AUTH, gcs_handle, gcs_sink,
	    gcs_sink_abort },
	{ "/download/storage/v1/b", EMU_R_AUTH, gcs_handle, NULL, NULL },
	{ "/b", EMU_R_AUTH, gcs_handle, NULL, NULL },
	{ NULL, 0, NULL, NULL, NULL },
};

/* ---- start and stop ---- */

static int
gcs_obj_cmp(const void *a, const void *b)
{
	return strcmp((*(struct gcs_obj *const *)a)->name,
	    (*(struct gcs_obj *const *)b)->name);
}

static int
gcs_bkt_cmp(const void *a, const void *b)
{
	return strcmp((*(struct gcs_bkt *const *)a)->name,
	    (*(struct gcs_bkt *const *)b)->name);
}

static void
gcs_load_objects(struct emu *e, struct gcs_state *st, struct gcs_bkt *b)
{
	char *dir = emu_state_path(e, "gcs/buckets/%s/objects", b->name), *p;
	struct dirent *de;
	struct gcs_obj *o;
	const char *name;
	int64_t v;
	size_t l;
	cJSON *m;
	DIR *d;

	if ((d = opendir(dir)) == NULL)
		goto out;
	while ((de = readdir(d)) != NULL) {
		l = strlen(de->d_name);
		if (l != 64 + 5 || strcmp(de->d_name + 64, ".json") != 0)
			continue;
		p = xasprintf("%s/%s", dir, de->d_name);
		m = gcs_load_json(p);
		free(p);
		if ((name = gcs_jstr(m, "name")) == NULL) {
			cJSON_Delete(m);
			continue;
		}
		o = xcalloc(1, sizeof(*o));
		o->name = xstrdup(name);
		emu_sha256_hex(name, o->key);
		o->meta = m;
		if (gcs_jint(m, "generation", &o->gen) != 0)
			o->gen = 1;
		if (gcs_jint(m, "metageneration", &o->metagen) != 0)
			o->metagen = 1;
		if (gcs_jint(m, "size", &v) == 0)
			o->size = (uint64_t)v;
		gcs_obj_load_segs(o);
		if (o->gen > st->last_gen)
			st->last_gen = o->gen;
		if (b->n == b->cap) {
			b->cap = b->cap == 0 ? 16 : b->cap * 2;
			b->objs =
			    xreallocarray(b->objs, b->cap, sizeof(*b->objs));
		}
		b->objs[b->n++] = o;
	}
	closedir(d);
	if (b->n > 1)
		qsort(b->objs, b->n, sizeof(*b->objs), gcs_obj_cmp);
out:
	free(dir);
}

int
gcs_init(struct emu *e)
{
	struct gcs_state *st = xcalloc(1, sizeof(*st));
	char *dir, *p;
	struct dirent *de;
	struct gcs_bkt *b;
	const char *proj;
	cJSON *j, *res;
	DIR *d;
	int rc = -1;

	e->gcs = st;
	dir = emu_state_path(e, "gcs/tmp");
	p = emu_state_path(e, "gcs/uploads");
	if (gcs_mkdirs(dir) != 0 || gcs_mkdirs(p) != 0)
		goto out;
	/* Leftovers of a crash in the temp dir are garbage. */
	if ((d = opendir(dir)) != NULL) {
		while ((de = readdir(d)) != NULL)
			if (de->d_name[0] != '.')
				unlinkat(dirfd(d), de->d_name, 0);
		closedir(d);
	}
	free(dir);
	/* Sessions live a week on GCS: drop older ones. */
	if ((d = opendir(p)) != NULL) {
		struct stat sb;
		time_t old = time(NULL) - 7 * 24 * 3600;

		while ((de = readdir(d)) != NULL)
			if (de->d_name[0] != '.' &&
			    fstatat(dirfd(d), de->d_name, &sb, 0) == 0 &&
			    sb.st_mtime < old)
				unlinkat(dirfd(d), de->d_name, 0);
		closedir(d);
	}
	dir = emu_state_path(e, "gcs/buckets");
	if (gcs_mkdirs(dir) != 0)
		goto out;
	if ((d = opendir(dir)) == NULL)
		goto out;
	while ((de = readdir(d)) != NULL) {
		if (de->d_name[0] == '.')
			continue;
		free(p);
		p = xasprintf("%s/%s/bucket.json", dir, de->d_name);
		j = gcs_load_json(p);
		res = cJSON_GetObjectItemCaseSensitive(j, "resource");
		proj = gcs_jstr(j, "project");
		if (!cJSON_IsObject(res) || proj == NULL) {
			cJSON_Delete(j);
			continue;
		}
		b = xcalloc(1, sizeof(*b));
		b->name = xstrdup(de->d_name);
		b->project = xstrdup(proj);
		b->meta = cJSON_DetachItemViaPointer(j, res);
		cJSON_Delete(j);
		gcs_load_objects(e, st, b);
		if (st->n == st->cap) {
			st->cap = st->cap == 0 ? 8 : st->cap * 2;
			st->b = xreallocarray(st->b, st->cap, sizeof(*st->b));
		}
		st->b[st->n++] = b;
	}
	closedir(d);
	if (st->n > 1)
		qsort(st->b, st->n, sizeof(*st->b), gcs_bkt_cmp);
	rc = 0;
out:
	free(dir);
	free(p);
	return rc;
}

void
gcs_fini(struct emu *e)
{
	struct gcs_state *st = e->gcs;
	size_t i;

	if (st == NULL)
		return;
	for (i = 0; i < st->n; i++)
		gcs_bkt_free(st->b[i]);
	for (i = 0; i < st->nbusy; i++)
		free(st->busy[i]);
	free(st->busy);
	free(st->b);
	free(st);
	e->gcs = NULL;
}
