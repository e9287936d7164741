/*
 * The emulator core's pure helpers: fault-spec parsing, Google error
 * vocabulary, form decoding, request-log lines with secrets redacted, the
 * env file, timestamps, random ids, options and small file I/O.  No
 * server state here, so unit tests and fuzz targets call them directly.
 */
#include <sys/stat.h>

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <openssl/evp.h>
#include <openssl/rand.h>

#include "buf.h"
#include "emu.h"
#include "util.h"
#include "xmalloc.h"

/* ---- faults ---- */

/* Parse "N" (decimal, bounded) at *p; advance *p.  -1 when none. */
static long long
num_at(const char **p, long long max)
{
	long long v = 0;
	const char *s = *p;

	if (!isdigit((unsigned char)*s))
		return -1;
	while (isdigit((unsigned char)*s)) {
		v = v * 10 + (*s - '0');
		if (v > max)
			return -1;
		s++;
	}
	*p = s;
	return v;
}

/* "-after-NK" at *p, consuming it; bytes in *out.  -1 when malformed. */
static int
after_k(const char **p, long long *out)
{
	long long n;

	if (strncmp(*p, "-after-", 7) != 0)
		return -1;
	*p += 7;
	if ((n = num_at(p, 1LL << 30)) < 0 || **p != 'K')
		return -1;
	(*p)++;
	*out = n * 1024;
	return 0;
}

int
emu_fault_parse(
    const char *spec, struct emu_fault_action *a, char *errbuf, size_t errlen)
{
	const char *p = spec, *s;
	long long n;

	memset(a, 0, sizeof(*a));
	if (spec == NULL || *spec == '\0' || strlen(spec) >= 128)
		goto bad_chars;
	for (s = spec; *s != '\0'; s++)
		if (!islower((unsigned char)*s) &&
		    !isdigit((unsigned char)*s) && *s != '-' && *s != 'K')
			goto bad_chars;
	if (strncmp(p, "return-", 7) == 0) {
		p += 7;
		if ((n = num_at(&p, 599)) < 100)
			goto bad;
		a->code = (int)n;
		a->kind = EMU_FK_RETURN;
		if (*p == '\0')
			return 0;
		if (after_k(&p, &a->bytes) != 0 || *p != '\0')
			goto bad;
		a->kind = EMU_FK_RETURN_AFTER;
		return 0;
	}
	if (strncmp(p, "retry-after-", 12) == 0) {
		p += 12;
		a->code = 429;
		if (strcmp(p, "garbage") == 0) {
			a->kind = EMU_FK_RETRY_GARBAGE;
			return 0;
		}
		if (strncmp(p, "date", 4) == 0) {
			p += 4;
			a->kind = EMU_FK_RETRY_DATE;
			a->secs = 3;
			if (*p == '\0')
				return 0;
			if (*p++ != '-' || (n = num_at(&p, 86400)) < 0 ||
			    *p != '\0')
				goto bad;
			a->secs = n;
			return 0;
		}
		if ((n = num_at(&p, 86400)) < 0 || *p != '\0')
			goto bad;
		a->kind = EMU_FK_RETRY_AFTER;
		a->secs = n;
		return 0;
	}
	if (strcmp(p, "reset-connection") == 0) {
		a->kind = EMU_FK_RESET;
		return 0;
	}
	if (strncmp(p, "broken-stream", 13) == 0) {
		p += 13;
		if (after_k(&p, &a->bytes) != 0 || *p != '\0')
			goto bad;
		a->kind = EMU_FK_BROKEN;
		return 0;
	}
	if (strncmp(p, "stall-", 6) == 0) {
		p += 6;
		if ((n = num_at(&p, 3600)) < 0 || *p++ != 's')
			goto bad;
		a->secs = n;
		if (after_k(&p, &a->bytes) != 0 || *p != '\0')
			goto bad;
		a->kind = EMU_FK_STALL;
		return 0;
	}
	if (strncmp(p, "corrupt-byte-", 13) == 0) {
		p += 13;
		if ((n = num_at(&p, 1LL << 50)) < 0 || *p != '\0')
			goto bad;
		a->kind = EMU_FK_CORRUPT;
		a->bytes = n;
		return 0;
	}
	a->kind = EMU_FK_MODULE;
	return 0;
bad_chars:
	snprintf(errbuf, errlen,
	    "invalid fault spec '%s': use 1 to 127 characters from [a-z0-9-] "
	    "(and K in sizes)",
	    spec != NULL ? spec : "");
	return -1;
bad:
	snprintf(errbuf, errlen,
	    "invalid fault spec '%s': expected return-CODE[-after-NK], "
	    "retry-after-N|date[-N]|garbage, reset-connection, "
	    "broken-stream-after-NK, stall-Ss-after-NK or corrupt-byte-OFF "
	    "(CODE 100-599)",
	    spec);
	return -1;
}

/* ---- Google's error vocabulary ---- */

static const struct {
	int code;
	const char *gstatus;
	const char *reason;
} http_codes[] = {
	{ 400, "INVALID_ARGUMENT", "badRequest" },
	{ 401, "UNAUTHENTICATED", "required" },
	{ 403, "PERMISSION_DENIED", "forbidden" },
	{ 404, "NOT_FOUND", "notFound" },
	{ 405, "INVALID_ARGUMENT", "methodNotAllowed" },
	{ 408, "DEADLINE_EXCEEDED", "requestTimeout" },
	{ 409, "ALREADY_EXISTS", "conflict" },
	{ 412, "FAILED_PRECONDITION", "conditionNotMet" },
	{ 413, "INVALID_ARGUMENT", "uploadTooLarge" },
	{ 429, "RESOURCE_EXHAUSTED", "rateLimitExceeded" },
	{ 499, "CANCELLED", "cancelled" },
	{ 500, "INTERNAL", "backendError" },
	{ 501, "UNIMPLEMENTED", "notImplemented" },
	{ 502, "UNAVAILABLE", "badGateway" },
	{ 503, "UNAVAILABLE", "backendError" },
	{ 504, "DEADLINE_EXCEEDED", "deadlineExceeded" },
};

const char *
emu_http_gstatus(int code)
{
	size_t i;

	for (i = 0; i < nitems(http_codes); i++)
		if (http_codes[i].code == code)
			return http_codes[i].gstatus;
	if (code >= 500)
		return "INTERNAL";
	if (code >= 400)
		return "FAILED_PRECONDITION";
	return "OK";
}

const char *
emu_http_reason(int code)
{
	size_t i;

	for (i = 0; i < nitems(http_codes); i++)
		if (http_codes[i].code == code)
			return http_codes[i].reason;
	return code >= 500 ? "backendError" : "invalid";
}

/* ---- forms ---- */

static int
hexval(int c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/* Decode one form component (+ is space, %XX a byte). */
static char *
form_decode(const char *s, size_t n)
{
	char *out = xmalloc(n + 1);
	size_t i, o = 0;
	int h, l;

	for (i = 0; i < n; i++) {
		if (s[i] == '+')
			out[o++] = ' ';
		else if (s[i] == '%' && i + 2 < n &&
		         (h = hexval((unsigned char)s[i + 1])) >= 0 &&
		         (l = hexval((unsigned char)s[i + 2])) >= 0) {
			out[o++] = (char)(h * 16 + l);
			i += 2;
		} else
			out[o++] = s[i];
	}
	out[o] = '\0';
	return out;
}

void
emu_sha256_hex(const char *s, char out[65])
{
	unsigned char md[EVP_MAX_MD_SIZE];
	unsigned int n = 0, i;

	EVP_Digest(s, strlen(s), md, &n, EVP_sha256(), NULL);
	for (i = 0; i < n && i < 32; i++)
		snprintf(out + 2 * i, 3, "%02x", md[i]);
	out[2 * i] = '\0';
}

char *
emu_form_get(const char *body, size_t len, const char *key)
{
	const char *p = body, *end = body + len, *amp, *eq;
	char *k, *v = NULL;

	if (body == NULL)
		return NULL;
	while (p < end) {
		amp = memchr(p, '&', (size_t)(end - p));
		if (amp == NULL)
			amp = end;
		eq = memchr(p, '=', (size_t)(amp - p));
		k = form_decode(p, (size_t)((eq != NULL ? eq : amp) - p));
		if (strcmp(k, key) == 0 && v == NULL)
			v = eq != NULL
			        ? form_decode(eq + 1, (size_t)(amp - eq - 1))
			        : xstrdup("");
		free(k);
		p = amp + 1;
	}
	return v;
}

/* ---- JSON bodies ---- */

cJSON *
emu_json_object(const char *body, size_t len, char *why, size_t whylen)
{
	const char *end = NULL;
	cJSON *j;

	if (body == NULL || len == 0)
		return cJSON_CreateObject();
	j = cJSON_ParseWithLengthOpts(body, len, &end, 0);
	if (j != NULL) {
		while (end < body + len && (*end == ' ' || *end == '\t' ||
		                               *end == '\r' || *end == '\n'))
			end++;
		if (end != body + len) {
			cJSON_Delete(j);
			j = NULL;
		}
	}
	if (j == NULL) {
		snprintf(why, whylen, "Unexpected token at offset %zu.",
		    end != NULL && end >= body && end <= body + len
		        ? (size_t)(end - body)
		        : (size_t)0);
		return NULL;
	}
	if (!cJSON_IsObject(j)) {
		cJSON_Delete(j);
		snprintf(why, whylen, "Root element must be a message.");
		return NULL;
	}
	return j;
}

/* ---- the request log ---- */

static const char *const secret_headers[] = {
	"authorization",
	"proxy-authorization",
	"cookie",
	"set-cookie",
	"x-goog-iam-authorization-token",
	"x-goog-api-key",
};

static const char *const secret_params[] = {
	"access_token",
	"refresh_token",
	"assertion",
	"client_secret",
	"subject_token",
	"id_token",
	"upload_id",
	"key",
};

/* "Bearer abc" -> "Bearer <redacted>"; a value without scheme -> "<redacted>".
 */
static char *
redact_header(const char *name, const char *value)
{
	char lname[64];
	size_t i, n;
	const char *sp;

	n = strlen(name);
	if (n >= sizeof(lname))
		return xstrdup(value);
	for (i = 0; i <= n; i++)
		lname[i] = (char)tolower((unsigned char)name[i]);
	for (i = 0; i < nitems(secret_headers); i++) {
		if (strcmp(lname, secret_headers[i]) != 0)
			continue;
		if ((i == 0 || i == 1) && (sp = strchr(value, ' ')) != NULL &&
		    sp - value < 32)
			return xasprintf(
			    "%.*s <redacted>", (int)(sp - value), value);
		return xstrdup("<redacted>");
	}
	return xstrdup(value);
}

/* The query with secret parameter values replaced. */
static char *
redact_query(const char *q)
{
	struct buf b;
	const char *p = q, *amp, *eq;
	size_t i, klen;
	int secret;

	buf_init(&b, BUF_NOCAP);
	while (*p != '\0') {
		amp = strchr(p, '&');
		if (amp == NULL)
			amp = p + strlen(p);
		eq = memchr(p, '=', (size_t)(amp - p));
		klen = (size_t)((eq != NULL ? eq : amp) - p);
		secret = 0;
		for (i = 0; i < nitems(secret_params); i++)
			if (strlen(secret_params[i]) == klen &&
			    strncmp(p, secret_params[i], klen) == 0)
				secret = 1;
		if (secret && eq != NULL) {
			buf_append(&b, p, klen);
			buf_puts(&b, "=<redacted>");
		} else
			buf_append(&b, p, (size_t)(amp - p));
		if (*amp == '\0')
			break;
		buf_puts(&b, "&");
		p = amp + 1;
	}
	return buf_detach(&b, NULL);
}

char *
emu_log_line(int64_t ts_ms, const char *method, const char *path,
    const char *query, int status, uint64_t req_bytes, uint64_t resp_bytes,
    int64_t duration_ms, const char *fault, const cJSON *headers)
{
	cJSON *o, *h;
	const cJSON *it;
	char ts[64], *q, *v, *out, *res;

	o = cJSON_CreateObject();
	emu_rfc3339(ts, sizeof(ts), ts_ms);
	cJSON_AddStringToObject(o, "ts", ts);
	cJSON_AddStringToObject(o, "method", method != NULL ? method : "");
	cJSON_AddStringToObject(o, "path", path != NULL ? path : "");
	if (query != NULL) {
		q = redact_query(query);
		cJSON_AddStringToObject(o, "query", q);
		free(q);
	} else
		cJSON_AddNullToObject(o, "query");
	cJSON_AddNumberToObject(o, "status", status);
	cJSON_AddNumberToObject(o, "request_bytes", (double)req_bytes);
	cJSON_AddNumberToObject(o, "response_bytes", (double)resp_bytes);
	cJSON_AddNumberToObject(o, "duration_ms", (double)duration_ms);
	if (fault != NULL)
		cJSON_AddStringToObject(o, "fault", fault);
	else
		cJSON_AddNullToObject(o, "fault");
	h = cJSON_AddObjectToObject(o, "headers");
	cJSON_ArrayForEach(it, headers)
	{
		if (!cJSON_IsString(it) || it->string == NULL)
			continue;
		v = redact_header(it->string, it->valuestring);
		cJSON_AddStringToObject(h, it->string, v);
		free(v);
	}
	out = cJSON_PrintUnformatted(o);
	cJSON_Delete(o);
	res = xstrdup(out != NULL ? out : "{}");
	cJSON_free(out);
	return res;
}

/* ---- env file ---- */

/* export NAME='value' with the value single-quoted for sh. */
static void
env_line(FILE *fp, const char *name, const char *value)
{
	const char *p;

	fprintf(fp, "export %s='", name);
	for (p = value; *p != '\0'; p++) {
		if (*p == '\'')
			fputs("'\\''", fp);
		else
			fputc(*p, fp);
	}
	fputs("'\n", fp);
}

const char *
emu_hostport(struct emu *e)
{
	const char *p = strstr(e->base_url, "://");

	return p != NULL ? p + 3 : e->base_url;
}

void
emu_env_write(struct emu *e, FILE *fp)
{
	char *v;

	v = xasprintf("%s/", e->base_url);
	env_line(fp, "CLOUDSDK_API_ENDPOINT_OVERRIDES_TPU", v);
	free(v);
	env_line(fp, "STORAGE_EMULATOR_HOST", e->base_url);
	v = xasprintf("%s/", e->base_url);
	env_line(fp, "CLOUDSDK_API_ENDPOINT_OVERRIDES_OSLOGIN", v);
	free(v);
	v = xasprintf("%s/compute/v1/", e->base_url);
	env_line(fp, "CLOUDSDK_API_ENDPOINT_OVERRIDES_COMPUTE", v);
	free(v);
	v = emu_state_path(e, "service-account.json");
	env_line(fp, "GOOGLE_APPLICATION_CREDENTIALS", v);
	free(v);
	env_line(fp, "GCE_METADATA_HOST",
	    e->metadata_host != NULL ? e->metadata_host : emu_hostport(e));
	env_line(fp, "CLOUDSDK_CORE_PROJECT", e->project);
	env_line(fp, "CLOUDSDK_COMPUTE_ZONE", e->zone);
	env_line(fp, "TPUCTL_EMULATOR_URL", e->base_url);
	if (e->tls) {
		v = emu_state_path(e, "ca.pem");
		env_line(fp, "TPUCTL_CA_BUNDLE", v);
		free(v);
	}
	emu_auth_env(e, fp);
	fleet_env(e, fp);
}

/* ---- small helpers ---- */

void
emu_rfc3339(char *out, size_t len, int64_t ms)
{
	time_t t = (time_t)(ms / 1000);
	struct tm tm;
	char d[32];

	if (ms < 0)
		t = 0, ms = 0;
	gmtime_r(&t, &tm);
	strftime(d, sizeof(d), "%Y-%m-%dT%H:%M:%S", &tm);
	snprintf(out, len, "%s.%09lldZ", d, (long long)(ms % 1000) * 1000000);
}

int64_t
emu_wall_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

void
emu_random_hex(char *out, size_t n)
{
	static const char hex[] = "0123456789abcdef";
	unsigned char b[64];
	size_t i, chunk;

	while (n > 0) {
		chunk = n > 2 * sizeof(b) ? sizeof(b) : (n + 1) / 2;
		if (RAND_bytes(b, (int)chunk) != 1)
			abort(); /* no randomness: ids would collide */
		for (i = 0; i < chunk * 2 && n > 0; i++, n--)
			*out++ = hex[(b[i / 2] >> (i % 2 ? 0 : 4)) & 0xf];
	}
	*out = '\0';
}

char *
emu_state_path(struct emu *e, const char *fmt, ...)
{
	va_list ap;
	char *rel, *p;

	va_start(ap, fmt);
	rel = xvasprintf(fmt, ap);
	va_end(ap);
	p = xasprintf("%s/%s", e->state_dir, rel);
	free(rel);
	return p;
}

const char *
emu_opt(struct emu *e, const char *key, const char *dflt)
{
	const char *v = dflt;
	size_t n = strlen(key), i;

	if (e->opts == NULL)
		return dflt;
	for (i = 0; e->opts[i] != NULL; i++)
		if (strncmp(e->opts[i], key, n) == 0 && e->opts[i][n] == '=')
			v = e->opts[i] + n + 1;
	return v;
}

long long
emu_opt_int(struct emu *e, const char *key, long long dflt)
{
	const char *v = emu_opt(e, key, NULL), *errstr;
	long long n;

	if (v == NULL)
		return dflt;
	n = tpu_strtonum(v, -(1LL << 53), 1LL << 53, &errstr);
	return errstr != NULL ? dflt : n;
}

void
emu_project_number(const char *project, char *out, size_t len)
{
	uint64_t h = 1469598103934665603ULL;
	const char *p;

	for (p = project; *p != '\0'; p++)
		h = (h ^ (unsigned char)*p) * 1099511628211ULL;
	snprintf(out, len, "%" PRIu64,
	    (uint64_t)(100000000000ULL + h % 900000000000ULL));
}

int
emu_project_allowed(struct emu *e, const char *project)
{
	const char *list = emu_opt(e, "auth.projects", ""), *p, *c;
	size_t n = strlen(project);

	if (strcmp(project, e->project) == 0)
		return 1;
	for (p = list; *p != '\0'; p = *c != '\0' ? c + 1 : c) {
		c = strchr(p, ',');
		if (c == NULL)
			c = p + strlen(p);
		if ((size_t)(c - p) == n && strncmp(p, project, n) == 0)
			return 1;
	}
	return 0;
}

int
emu_write_file(const char *path, const void *data, size_t len, int mode)
{
	char *tmp = xasprintf("%s.tmp.%ld", path, (long)getpid());
	const char *p = data;
	ssize_t n;
	int fd, rc = -1;

	fd = open(
	    tmp, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, mode);
	if (fd < 0)
		goto out;
	if (fchmod(fd, (mode_t)mode) != 0)
		goto out_close;
	while (len > 0) {
		n = write(fd, p, len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			goto out_close;
		p += n;
		len -= (size_t)n;
	}
	if (fsync(fd) != 0)
		goto out_close;
	if (close(fd) != 0) {
		fd = -1;
		goto out_unlink;
	}
	fd = -1;
	if (rename(tmp, path) != 0)
		goto out_unlink;
	rc = 0;
	goto out;
out_close:
	close(fd);
out_unlink:
	unlink(tmp);
out:
	free(tmp);
	return rc;
}

char *
emu_read_file(const char *path, size_t *lenp)
{
	struct buf b;
	char chunk[8192];
	ssize_t n;
	int fd;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return NULL;
	buf_init(&b, 16 << 20);
	for (;;) {
		n = read(fd, chunk, sizeof(chunk));
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 || (n > 0 && buf_append(&b, chunk, (size_t)n) != 0)) {
			close(fd);
			buf_release(&b);
			return NULL;
		}
		if (n == 0)
			break;
	}
	close(fd);
	return buf_detach(&b, lenp);
}
