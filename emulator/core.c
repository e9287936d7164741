/*
 * The emulator's HTTP server: libmicrohttpd with an internal polling
 * thread and one thread per connection (a stalled reply blocks only its
 * own connection), routing by path prefix over the module route tables,
 * request bodies buffered (64 MiB cap) or streamed into a route's sink fd,
 * the generic faults applied around the handlers, the /_emulator control
 * endpoints and the JSONL request log.  Modules see only emu.h.
 */
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>

#include <arpa/inet.h>
#include <netinet/in.h>

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cjson/cJSON.h>
#include <microhttpd.h>

#include "buf.h"
#include "core.h"
#include "emu.h"
#include "log.h"
#include "util.h"
#include "xmalloc.h"

#define CORE_BODY_MAX (64ULL << 20)

struct core_hdr {
	char *name;
	char *value;
	struct core_hdr *next;
};

/* One request; the emu_req handed to modules is its first member. */
struct core_req {
	struct emu_req r;
	struct emu *e;
	char *raw_url;
	char *method;
	char *path;
	int started;
	int internal;  /* /_emulator/ */
	int on_worker; /* arrived on a worker metadata address */
	int root;      /* exactly "/" */
	const struct emu_route *route;
	int prereplied; /* reply set before the body was read */
	int too_large;
	struct buf body;
	uint64_t body_total; /* bytes received */
	uint64_t body_limit; /* bytes passed on (return-N-after-K) */
	int have_fault;
	struct emu_fault fault;
	struct emu_fault_action act;
	cJSON *log_headers;
	/* The reply, turned into an MHD response at the end. */
	int have_reply;
	int status;
	char *ctype;
	char *data;
	size_t len;
	/* a file body: len bytes from off of the concatenation of nfd
	   open files (emu_reply_files, emu_reply_fd) */
	int *fds;
	uint64_t *fsize;
	size_t nfd;
	uint64_t off;
	uint64_t flen;
	struct core_hdr *hdrs;
	/* Streaming the reply body with faults. */
	uint64_t sent;
	int refs; /* request + streaming response */
};

static pthread_mutex_t core_ref_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t core_log_lock = PTHREAD_MUTEX_INITIALIZER;

static struct core_req *
CR(struct emu_req *r)
{
	return (struct core_req *)r;
}

static void
reply_reset(struct core_req *c)
{
	struct core_hdr *h, *n;

	free(c->ctype);
	c->ctype = NULL;
	free(c->data);
	c->data = NULL;
	while (c->nfd > 0)
		close(c->fds[--c->nfd]);
	free(c->fds);
	free(c->fsize);
	c->fds = NULL;
	c->fsize = NULL;
	for (h = c->hdrs; h != NULL; h = n) {
		n = h->next;
		free(h->name);
		free(h->value);
		free(h);
	}
	c->hdrs = NULL;
	c->have_reply = 0;
	c->len = 0;
}

static void
req_unref(struct core_req *c)
{
	int left;

	pthread_mutex_lock(&core_ref_lock);
	left = --c->refs;
	pthread_mutex_unlock(&core_ref_lock);
	if (left > 0)
		return;
	reply_reset(c);
	if (c->r.sink_fd >= 0)
		close(c->r.sink_fd);
	buf_release(&c->body);
	cJSON_Delete(c->log_headers);
	free(c->raw_url);
	free(c->method);
	free(c->path);
	free(c);
}

/* ---- the request API (emu.h) ---- */

const char *
emu_query(struct emu_req *r, const char *key)
{
	return MHD_lookup_connection_value(r->conn, MHD_GET_ARGUMENT_KIND, key);
}

const char *
emu_header(struct emu_req *r, const char *name)
{
	return MHD_lookup_connection_value(r->conn, MHD_HEADER_KIND, name);
}

cJSON *
emu_body_json(struct emu *e, struct emu_req *r)
{
	char why[128];
	cJSON *j;

	(void)e;
	j = emu_json_object(r->body, r->body_len, why, sizeof(why));
	if (j == NULL)
		emu_reply_error(r, 400, "INVALID_ARGUMENT",
		    "Invalid JSON payload received. %s", why);
	return j;
}

static void
reply_set(struct core_req *c, int status, const char *ctype)
{
	struct core_hdr *keep = c->hdrs;

	/* A second reply replaces the first; headers added so far stay. */
	c->hdrs = NULL;
	reply_reset(c);
	c->hdrs = keep;
	c->have_reply = 1;
	c->status = status;
	c->r.status = status;
	c->ctype = xstrdup(ctype);
}

int
emu_reply_json(struct emu_req *r, int status, cJSON *json)
{
	struct core_req *c = CR(r);
	char *s;

	reply_set(c, status, "application/json; charset=UTF-8");
	s = cJSON_Print(json);
	cJSON_Delete(json);
	if (s == NULL) {
		c->data = xstrdup("{}");
	} else {
		c->data = xasprintf("%s\n", s);
		cJSON_free(s);
	}
	c->len = strlen(c->data);
	return 0;
}

int
emu_reply_data(struct emu_req *r, int status, const char *ctype,
    const void *data, size_t len)
{
	struct core_req *c = CR(r);

	reply_set(
	    c, status, ctype != NULL ? ctype : "application/octet-stream");
	c->data = xmalloc(len + 1);
	if (len > 0)
		memcpy(c->data, data, len);
	c->data[len] = '\0';
	c->len = len;
	return 0;
}

int
emu_reply_error(
    struct emu_req *r, int status, const char *gstatus, const char *fmt, ...)
{
	cJSON *root, *err, *errs, *one;
	va_list ap;
	char *msg;

	va_start(ap, fmt);
	msg = xvasprintf(fmt, ap);
	va_end(ap);
	root = cJSON_CreateObject();
	err = cJSON_AddObjectToObject(root, "error");
	cJSON_AddNumberToObject(err, "code", status);
	cJSON_AddStringToObject(err, "message", msg);
	errs = cJSON_AddArrayToObject(err, "errors");
	one = cJSON_CreateObject();
	cJSON_AddStringToObject(one, "message", msg);
	cJSON_AddStringToObject(one, "domain", "global");
	cJSON_AddStringToObject(one, "reason", emu_http_reason(status));
	cJSON_AddItemToArray(errs, one);
	cJSON_AddStringToObject(err, "status",
	    gstatus != NULL ? gstatus : emu_http_gstatus(status));
	free(msg);
	return emu_reply_json(r, status, root);
}

int
emu_reply_files(struct emu_req *r, int status, const char *ctype, int *fds,
    uint64_t *sizes, size_t n, uint64_t off, uint64_t len)
{
	struct core_req *c = CR(r);

	reply_set(
	    c, status, ctype != NULL ? ctype : "application/octet-stream");
	c->fds = fds;
	c->fsize = sizes;
	c->nfd = n;
	c->off = off;
	c->flen = len;
	return 0;
}

/* Read up to n bytes at offset at of a file body, from the file holding at. */
static ssize_t
body_pread(struct core_req *c, char *out, size_t n, uint64_t at)
{
	uint64_t start = 0;
	size_t i;

	for (i = 0; i < c->nfd && at >= start + c->fsize[i]; i++)
		start += c->fsize[i];
	if (i == c->nfd)
		return 0;
	if (n > start + c->fsize[i] - at)
		n = (size_t)(start + c->fsize[i] - at);
	return pread(c->fds[i], out, n, (off_t)(at - start));
}

void
emu_add_header(struct emu_req *r, const char *name, const char *value)
{
	struct core_req *c = CR(r);
	struct core_hdr *h, **pp;

	h = xcalloc(1, sizeof(*h));
	h->name = xstrdup(name);
	h->value = xstrdup(value);
	for (pp = &c->hdrs; *pp != NULL; pp = &(*pp)->next)
		;
	*pp = h;
}

const char *
emu_fault_spec(struct emu_req *r, const char *prefix)
{
	if (r->fault == NULL ||
	    strncmp(r->fault->spec, prefix, strlen(prefix)) != 0)
		return NULL;
	return r->fault->spec;
}

/* ---- faults ---- */

/* DIR/faults.json, rewritten after every change (lock held). */
static void
faults_save(struct emu *e)
{
	cJSON *arr = core_faults_json(e);
	char *s = cJSON_Print(arr), *path = emu_state_path(e, "faults.json");

	if (s != NULL)
		emu_write_file(path, s, strlen(s), 0600);
	cJSON_free(s);
	cJSON_Delete(arr);
	free(path);
}

cJSON *
core_faults_json(struct emu *e)
{
	cJSON *arr = cJSON_CreateArray(), *o;
	size_t i;

	for (i = 0; i < e->nfaults; i++) {
		o = cJSON_CreateObject();
		cJSON_AddStringToObject(o, "method", e->faults[i].method);
		cJSON_AddStringToObject(o, "path", e->faults[i].path);
		cJSON_AddStringToObject(o, "spec", e->faults[i].spec);
		cJSON_AddNumberToObject(o, "count", e->faults[i].remaining);
		cJSON_AddItemToArray(arr, o);
	}
	return arr;
}

int
core_fault_add(struct emu *e, const cJSON *j, char *errbuf, size_t errlen)
{
	struct emu_fault f;
	struct emu_fault_action a;
	const cJSON *m, *p, *s, *n;

	memset(&f, 0, sizeof(f));
	m = cJSON_GetObjectItemCaseSensitive(j, "method");
	p = cJSON_GetObjectItemCaseSensitive(j, "path");
	s = cJSON_GetObjectItemCaseSensitive(j, "spec");
	n = cJSON_GetObjectItemCaseSensitive(j, "count");
	if (!cJSON_IsString(s)) {
		snprintf(errbuf, errlen, "fault: field 'spec' is required");
		return -1;
	}
	if (emu_fault_parse(s->valuestring, &a, errbuf, errlen) != 0)
		return -1;
	if ((m != NULL && !cJSON_IsString(m) && !cJSON_IsNull(m)) ||
	    (cJSON_IsString(m) && strlen(m->valuestring) >= sizeof(f.method))) {
		snprintf(errbuf, errlen,
		    "fault: 'method' must be an HTTP method or \"\"");
		return -1;
	}
	if ((p != NULL && !cJSON_IsString(p) && !cJSON_IsNull(p)) ||
	    (cJSON_IsString(p) && strlen(p->valuestring) >= sizeof(f.path))) {
		snprintf(errbuf, errlen,
		    "fault: 'path' must be a path prefix shorter than %zu "
		    "bytes",
		    sizeof(f.path));
		return -1;
	}
	f.remaining = 1;
	if (n != NULL) {
		if (!cJSON_IsNumber(n) ||
		    n->valuedouble != (double)n->valueint || n->valueint < -1 ||
		    n->valueint == 0) {
			snprintf(errbuf, errlen,
			    "fault: 'count' must be a positive integer or -1 "
			    "(forever)");
			return -1;
		}
		f.remaining = n->valueint;
	}
	if (cJSON_IsString(m))
		snprintf(f.method, sizeof(f.method), "%s", m->valuestring);
	if (cJSON_IsString(p))
		snprintf(f.path, sizeof(f.path), "%s", p->valuestring);
	snprintf(f.spec, sizeof(f.spec), "%s", s->valuestring);
	e->faults = xreallocarray(e->faults, e->nfaults + 1, sizeof(f));
	e->faults[e->nfaults++] = f;
	faults_save(e);
	return 0;
}

void
core_faults_clear(struct emu *e)
{
	free(e->faults);
	e->faults = NULL;
	e->nfaults = 0;
	faults_save(e);
}

void
core_faults_load(struct emu *e)
{
	char *path = emu_state_path(e, "faults.json"), *text;
	char errbuf[256];
	cJSON *arr;
	const cJSON *it;

	text = emu_read_file(path, NULL);
	free(path);
	if (text == NULL)
		return;
	arr = cJSON_Parse(text);
	free(text);
	cJSON_ArrayForEach(it, arr)
	{
		if (core_fault_add(e, it, errbuf, sizeof(errbuf)) != 0)
			fprintf(stderr, "tpuctl-emulator: faults.json: %s\n",
			    errbuf);
	}
	cJSON_Delete(arr);
}

/* Take the first fault matching this request (lock held). */
static void
fault_take(struct emu *e, struct core_req *c)
{
	struct emu_fault *f;
	size_t i, n;
	char errbuf[256];

	for (i = 0; i < e->nfaults; i++) {
		f = &e->faults[i];
		if (f->method[0] != '\0' &&
		    strcasecmp(f->method, c->method) != 0)
			continue;
		n = strlen(f->path);
		if (n > 0 && strncmp(c->path, f->path, n) != 0 &&
		    strncmp(c->raw_url, f->path, n) != 0)
			continue;
		c->fault = *f;
		c->have_fault = 1;
		c->r.fault = &c->fault;
		if (emu_fault_parse(f->spec, &c->act, errbuf, sizeof(errbuf)) !=
		    0)
			c->act.kind = EMU_FK_MODULE;
		if (f->remaining > 0 && --f->remaining == 0) {
			memmove(f, f + 1, (e->nfaults - i - 1) * sizeof(*f));
			e->nfaults--;
		}
		faults_save(e);
		return;
	}
}

/* Replace the reply by an injected error (no handler, or after it). */
static void
fault_reply(struct core_req *c)
{
	char v[64];
	time_t t;
	struct tm tm;

	/* Drop the handler's reply and headers entirely. */
	reply_reset(c);
	switch (c->act.kind) {
	case EMU_FK_RETRY_AFTER:
	case EMU_FK_RETRY_DATE:
	case EMU_FK_RETRY_GARBAGE:
		emu_reply_error(&c->r, 429, "RESOURCE_EXHAUSTED",
		    "Quota exceeded (injected fault %s).", c->fault.spec);
		if (c->act.kind == EMU_FK_RETRY_AFTER)
			snprintf(v, sizeof(v), "%lld", c->act.secs);
		else if (c->act.kind == EMU_FK_RETRY_GARBAGE)
			snprintf(v, sizeof(v), "soon-ish");
		else {
			t = time(NULL) + (time_t)c->act.secs;
			gmtime_r(&t, &tm);
			strftime(
			    v, sizeof(v), "%a, %d %b %Y %H:%M:%S GMT", &tm);
		}
		emu_add_header(&c->r, "Retry-After", v);
		break;
	default:
		emu_reply_error(&c->r, c->act.code,
		    emu_http_gstatus(c->act.code), "Injected fault %s.",
		    c->fault.spec);
		break;
	}
}

/* ---- the control endpoints ---- */

static int
control(struct emu *e, struct core_req *c)
{
	struct emu_req *r = &c->r;
	char errbuf[512];
	cJSON *j, *o;

	if (strcmp(c->path, "/_emulator/faults") == 0) {
		if (strcmp(c->method, "GET") == 0) {
			o = cJSON_CreateObject();
			cJSON_AddItemToObject(o, "faults", core_faults_json(e));
			return emu_reply_json(r, 200, o);
		}
		if (strcmp(c->method, "DELETE") == 0) {
			core_faults_clear(e);
			return emu_reply_json(r, 200, cJSON_CreateObject());
		}
		if (strcmp(c->method, "POST") == 0) {
			if ((j = emu_body_json(e, r)) == NULL)
				return 0;
			if (core_fault_add(e, j, errbuf, sizeof(errbuf)) != 0) {
				cJSON_Delete(j);
				return emu_reply_error(
				    r, 400, "INVALID_ARGUMENT", "%s", errbuf);
			}
			return emu_reply_json(r, 200, j);
		}
		return emu_reply_error(r, 405, "INVALID_ARGUMENT",
		    "method %s not allowed on %s", c->method, c->path);
	}
	if (strcmp(c->path, "/_emulator/events") == 0) {
		if (strcmp(c->method, "POST") != 0)
			return emu_reply_error(r, 405, "INVALID_ARGUMENT",
			    "method %s not allowed on %s", c->method, c->path);
		if ((j = emu_body_json(e, r)) == NULL)
			return 0;
		errbuf[0] = '\0';
		if (tpu_event(e, j, errbuf, sizeof(errbuf)) != 0) {
			cJSON_Delete(j);
			return emu_reply_error(r, 400, "INVALID_ARGUMENT", "%s",
			    errbuf[0] != '\0' ? errbuf : "event rejected");
		}
		return emu_reply_json(r, 200, j);
	}
	if (strcmp(c->path, "/_emulator/health") == 0) {
		o = cJSON_CreateObject();
		cJSON_AddStringToObject(o, "status", "ok");
		cJSON_AddStringToObject(o, "project", e->project);
		cJSON_AddStringToObject(o, "zone", e->zone);
		return emu_reply_json(r, 200, o);
	}
	return emu_reply_error(
	    r, 404, "NOT_FOUND", "unknown control endpoint %s", c->path);
}

/* ---- per-worker metadata listeners ---- */

/*
 * One listening socket of a worker address.  The acceptor thread polls
 * them all and hands each accepted connection to the metadata daemon
 * (MHD_add_connection).  A deleted node's sockets are marked dead and
 * closed by the acceptor (never under a poll() that may be using them);
 * a dead socket whose address comes back is reused as it is.
 */
struct core_wl {
	struct in_addr in;
	int port;
	int fd;
	int dead;
	char *node;
	int worker;
};

/* A request parked by emu_req_wait on the metadata daemon. */
struct core_waiter {
	struct core_waiter *next;
	struct MHD_Connection *conn;
	struct core_req *c;
	int64_t until_ms;
};

struct core_workers {
	pthread_mutex_t mu;
	struct core_wl *v;
	size_t n;
	size_t cap;
	int port; /* the plain-HTTP port, 0 until known */
	int port80;
	int wake[2];
	struct MHD_Daemon *d; /* the metadata daemon, NULL when not serving */
	pthread_t thr;
	int thr_started;
	volatile int stop;
	struct core_waiter *waiters;
	volatile unsigned long gen; /* emu_md_changed() count */
};

static struct core_workers *
workers_of(struct emu *e)
{
	struct core_workers *w = e->workers;

	if (w != NULL)
		return w;
	w = xcalloc(1, sizeof(*w));
	pthread_mutex_init(&w->mu, NULL);
	w->wake[0] = w->wake[1] = -1;
	if (pipe2(w->wake, O_CLOEXEC | O_NONBLOCK) != 0)
		w->wake[0] = w->wake[1] = -1;
	w->port80 = geteuid() == 0 && emu_opt_int(e, "metadata.port80", 1);
	/* One fd per worker address and port: 2048 workers need room. */
	{
		struct rlimit rl;

		if (getrlimit(RLIMIT_NOFILE, &rl) == 0 &&
		    rl.rlim_cur < rl.rlim_max) {
			rl.rlim_cur = rl.rlim_max;
			setrlimit(RLIMIT_NOFILE, &rl);
		}
	}
	e->workers = w;
	return w;
}

static void
workers_wake(struct core_workers *w)
{
	char b = 1;

	if (w->wake[1] >= 0 && write(w->wake[1], &b, 1) < 0) {
		/* full: the acceptor is awake anyway */
	}
}

int
emu_md_port(struct emu *e)
{
	struct core_workers *w = workers_of(e);
	const char *u = e->metadata_host != NULL ? e->metadata_host
	                                         : e->base_url,
	           *p;
	long long v;

	if (w->port != 0 || u == NULL)
		return w->port;
	if ((p = strstr(u, "://")) != NULL)
		u = p + 3;
	if ((p = strrchr(u, ':')) == NULL)
		return 0;
	v = strtoll(p + 1, NULL, 10);
	if (v > 0 && v < 65536)
		w->port = (int)v;
	return w->port;
}

static int
wl_bind(struct in_addr in, int port)
{
	struct sockaddr_in sa;
	int fd, one = 1;

	fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0)
		return -1;
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	memset(&sa, 0, sizeof(sa));
	sa.sin_family = AF_INET;
	sa.sin_addr = in;
	sa.sin_port = htons((uint16_t)port);
	if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) != 0 ||
	    listen(fd, 128) != 0) {
		int saved = errno;

		close(fd);
		errno = saved;
		return -1;
	}
	return fd;
}

/* Listen on in:port for worker of node (w->mu held). 0, or -1. */
static int
wl_add(struct core_workers *w, struct in_addr in, int port, const char *node,
    int worker)
{
	struct core_wl *l;
	size_t i;
	int fd;

	for (i = 0; i < w->n; i++) {
		l = &w->v[i];
		if (l->in.s_addr == in.s_addr && l->port == port) {
			free(l->node);
			l->node = xstrdup(node);
			l->worker = worker;
			l->dead = 0;
			return 0;
		}
	}
	if ((fd = wl_bind(in, port)) < 0)
		return -1;
	if (w->n == w->cap) {
		w->cap = w->cap == 0 ? 64 : w->cap * 2;
		w->v = xreallocarray(w->v, w->cap, sizeof(*w->v));
	}
	l = &w->v[w->n++];
	memset(l, 0, sizeof(*l));
	l->in = in;
	l->port = port;
	l->fd = fd;
	l->node = xstrdup(node);
	l->worker = worker;
	return 0;
}

int
emu_md_listen(struct emu *e, const char *node_key, int worker, const char *addr)
{
	struct core_workers *w = workers_of(e);
	struct in_addr in;
	char ip[INET_ADDRSTRLEN];
	int port = emu_md_port(e), rc = 0;

	if (inet_pton(AF_INET, addr, &in) != 1 ||
	    (ntohl(in.s_addr) >> 24) != 127 || port == 0) {
		log_warn("metadata: no listener for worker address '%s'", addr);
		return -1;
	}
	inet_ntop(AF_INET, &in, ip, sizeof(ip));
	pthread_mutex_lock(&w->mu);
	if (wl_add(w, in, port, node_key, worker) != 0) {
		log_warn("metadata: cannot listen on %s:%d: %s", ip, port,
		    strerror(errno));
		rc = -1;
	}
	if (w->port80 && port != 80 && wl_add(w, in, 80, node_key, worker) != 0)
		log_warn("metadata: cannot listen on %s:80: %s", ip,
		    strerror(errno));
	pthread_mutex_unlock(&w->mu);
	workers_wake(w);
	return rc;
}

static void waiters_resume(struct core_workers *, int);

/* Drop the dead listeners (w->mu held; only while nothing polls them). */
static void
wl_reap(struct core_workers *w)
{
	size_t i, k = 0;

	for (i = 0; i < w->n; i++) {
		if (w->v[i].dead) {
			close(w->v[i].fd);
			free(w->v[i].node);
			continue;
		}
		w->v[k++] = w->v[i];
	}
	w->n = k;
}

void
emu_md_unlisten(struct emu *e, const char *node_key)
{
	struct core_workers *w = workers_of(e);
	size_t i;

	pthread_mutex_lock(&w->mu);
	for (i = 0; i < w->n; i++)
		if (strcmp(w->v[i].node, node_key) == 0)
			w->v[i].dead = 1;
	if (!w->thr_started)
		wl_reap(w);
	/* Its waiters run again and find their worker gone. */
	waiters_resume(w, 1);
	pthread_mutex_unlock(&w->mu);
	workers_wake(w);
}

int
emu_req_worker(struct emu_req *r, char *node, size_t len)
{
	struct core_req *c = CR(r);
	struct core_workers *w = c->e->workers;
	const union MHD_ConnectionInfo *ci;
	struct sockaddr_in sa;
	socklen_t sl = sizeof(sa);
	size_t i;
	int idx = -2;

	if (w == NULL || !c->on_worker)
		return -1;
	ci =
	    MHD_get_connection_info(r->conn, MHD_CONNECTION_INFO_CONNECTION_FD);
	if (ci == NULL ||
	    getsockname(ci->connect_fd, (struct sockaddr *)&sa, &sl) != 0 ||
	    sa.sin_family != AF_INET)
		return -2;
	pthread_mutex_lock(&w->mu);
	for (i = 0; i < w->n; i++) {
		if (!w->v[i].dead && w->v[i].in.s_addr == sa.sin_addr.s_addr &&
		    w->v[i].port == ntohs(sa.sin_port)) {
			snprintf(node, len, "%s", w->v[i].node);
			idx = w->v[i].worker;
			break;
		}
	}
	pthread_mutex_unlock(&w->mu);
	return idx;
}

int
emu_req_wait(struct emu_req *r, const char *etag, int64_t deadline_ms)
{
	snprintf(r->wait_etag, sizeof(r->wait_etag), "%s", etag);
	r->wait_until_ms = deadline_ms;
	r->wait = 1;
	return 0;
}

/* Resume the waiters whose time came, or all (w->mu held). */
static void
waiters_resume(struct core_workers *w, int all)
{
	struct core_waiter **pp = &w->waiters, *x;
	int64_t now = tpu_now_ms();

	while ((x = *pp) != NULL) {
		if (!all && x->until_ms > now) {
			pp = &x->next;
			continue;
		}
		*pp = x->next;
		MHD_resume_connection(x->conn);
		free(x);
	}
}

void
emu_md_changed(struct emu *e)
{
	struct core_workers *w = workers_of(e);

	pthread_mutex_lock(&w->mu);
	w->gen++;
	waiters_resume(w, 1);
	pthread_mutex_unlock(&w->mu);
}

/* Forget a finished request's waiter, if it still has one. */
static void
waiter_forget(struct emu *e, struct core_req *c)
{
	struct core_workers *w = e->workers;
	struct core_waiter **pp, *x;

	if (w == NULL || !c->on_worker)
		return;
	pthread_mutex_lock(&w->mu);
	for (pp = &w->waiters; (x = *pp) != NULL; pp = &x->next) {
		if (x->c == c) {
			*pp = x->next;
			free(x);
			break;
		}
	}
	pthread_mutex_unlock(&w->mu);
}

/* Park a waiting request of the metadata daemon (from its handler). */
static void
waiter_park(struct emu *e, struct core_req *c)
{
	struct core_workers *w = e->workers;
	struct core_waiter *x = xcalloc(1, sizeof(*x));

	x->conn = c->r.conn;
	x->c = c;
	x->until_ms = c->r.wait_until_ms;
	pthread_mutex_lock(&w->mu);
	MHD_suspend_connection(c->r.conn);
	x->next = w->waiters;
	w->waiters = x;
	pthread_mutex_unlock(&w->mu);
}

/*
 * A waiting request on the main daemon (thread per connection: the host's
 * view): sleep in its own thread until a change or the deadline.
 */
static void
waiter_sleep(struct emu *e, struct core_req *c)
{
	struct core_workers *w = workers_of(e);
	unsigned long gen = w->gen;

	while (
	    !e->stopping && w->gen == gen && tpu_now_ms() < c->r.wait_until_ms)
		tpu_sleep_ms(100);
}

static void *
acceptor_main(void *arg)
{
	struct emu *e = arg;
	struct core_workers *w = e->workers;
	struct pollfd *pfd = NULL;
	size_t n, i, cap = 0;
	char b[64];

	while (!w->stop) {
		pthread_mutex_lock(&w->mu);
		wl_reap(w);
		waiters_resume(w, 0);
		n = w->n;
		if (n + 1 > cap) {
			cap = n + 64;
			pfd = xreallocarray(pfd, cap, sizeof(*pfd));
		}
		pfd[0].fd = w->wake[0];
		pfd[0].events = POLLIN;
		for (i = 0; i < n; i++) {
			pfd[i + 1].fd = w->v[i].fd;
			pfd[i + 1].events = POLLIN;
		}
		pthread_mutex_unlock(&w->mu);
		if (poll(pfd, n + 1, 100) <= 0)
			continue;
		if (pfd[0].revents != 0)
			while (read(w->wake[0], b, sizeof(b)) > 0)
				;
		for (i = 1; i <= n; i++) {
			struct sockaddr_in sa;
			socklen_t sl = sizeof(sa);
			int fd;

			if (!(pfd[i].revents & POLLIN))
				continue;
			/* Only the acceptor closes listeners: fd is valid. */
			fd = accept4(pfd[i].fd, (struct sockaddr *)&sa, &sl,
			    SOCK_CLOEXEC | SOCK_NONBLOCK);
			if (fd < 0)
				continue;
			if (MHD_add_connection(w->d, fd,
			        (const struct sockaddr *)&sa, sl) != MHD_YES)
				/* MHD closed it */
				continue;
		}
	}
	free(pfd);
	return NULL;
}

/* ---- routing ---- */

static const struct emu_route *
route_find(const char *path)
{
	const struct emu_route *tables[] = { emu_auth_routes, tpu_routes,
		gcs_routes, oslogin_routes };
	const struct emu_route *rt;
	size_t i;

	for (i = 0; i < nitems(tables); i++)
		for (rt = tables[i]; rt->prefix != NULL; rt++)
			if (tpu_startswith(path, rt->prefix))
				return rt;
	return NULL;
}

static int
client_is_loopback(struct MHD_Connection *conn)
{
	const union MHD_ConnectionInfo *ci;
	const struct sockaddr *sa;

	ci = MHD_get_connection_info(conn, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
	if (ci == NULL || (sa = ci->client_addr) == NULL)
		return 0;
	if (sa->sa_family == AF_INET)
		return (ntohl(((const struct sockaddr_in *)(const void *)sa)
		                  ->sin_addr.s_addr) >>
		           24) == 127;
	if (sa->sa_family == AF_INET6)
		return IN6_IS_ADDR_LOOPBACK(
		    &((const struct sockaddr_in6 *)(const void *)sa)
		         ->sin6_addr);
	return 0;
}

static enum MHD_Result
collect_header(
    void *cls, enum MHD_ValueKind kind, const char *key, const char *value)
{
	cJSON *h = cls;

	(void)kind;
	if (key != NULL && value != NULL && cJSON_GetObjectItem(h, key) == NULL)
		cJSON_AddStringToObject(h, key, value);
	return MHD_YES;
}

/* Headers are in: pick the fault, check auth, open the sink (locked). */
static void
req_start(struct emu *e, struct core_req *c)
{
	struct emu_req *r = &c->r;

	c->log_headers = cJSON_CreateObject();
	MHD_get_connection_values(
	    r->conn, MHD_HEADER_KIND, collect_header, c->log_headers);
	c->internal = tpu_startswith(c->path, "/_emulator/") ||
	              strcmp(c->path, "/_emulator") == 0;
	c->root = strcmp(c->path, "/") == 0;
	if (c->on_worker && !c->root &&
	    !tpu_startswith(c->path, "/computeMetadata/")) {
		/* A worker address is a metadata server, nothing else. */
		emu_add_header(r, "Metadata-Flavor", "Google");
		emu_reply_data(
		    r, 404, "text/html; charset=UTF-8", "Not Found\n", 10);
		c->prereplied = 1;
		return;
	}
	if (c->internal) {
		if (!client_is_loopback(r->conn)) {
			emu_reply_error(r, 403, "PERMISSION_DENIED",
			    "the control endpoints answer loopback clients "
			    "only");
			c->prereplied = 1;
		}
		return;
	}
	pthread_mutex_lock(&e->lock);
	fault_take(e, c);
	if (c->have_fault && (c->act.kind == EMU_FK_RETURN ||
	                         c->act.kind == EMU_FK_RETRY_AFTER ||
	                         c->act.kind == EMU_FK_RETRY_DATE ||
	                         c->act.kind == EMU_FK_RETRY_GARBAGE)) {
		fault_reply(c);
		c->prereplied = 1;
		goto out;
	}
	if (c->have_fault && c->act.kind == EMU_FK_RETURN_AFTER)
		c->body_limit = (uint64_t)c->act.bytes;
	if (c->root)
		goto out;
	c->route = route_find(c->path);
	if (c->route == NULL) {
		emu_reply_error(r, 404, "NOT_FOUND",
		    "The requested URL %s was not found on this server.",
		    c->path);
		c->prereplied = 1;
		goto out;
	}
	if ((c->route->flags & EMU_R_AUTH) && emu_auth_check(e, r) != 0) {
		if (!c->have_reply)
			emu_reply_error(r, 401, "UNAUTHENTICATED",
			    "Request is missing required authentication "
			    "credential.");
		c->prereplied = 1;
		goto out;
	}
	if (c->route->sink != NULL)
		r->sink_fd = c->route->sink(e, r);
out:
	pthread_mutex_unlock(&e->lock);
}

static void
req_body(struct core_req *c, const char *data, size_t n)
{
	uint64_t take = n;

	c->body_total += n;
	if (c->prereplied || c->too_large)
		return;
	if (c->body_limit != UINT64_MAX) {
		uint64_t have = c->body_total - n;

		take = have >= c->body_limit      ? 0
		       : c->body_limit - have < n ? c->body_limit - have
		                                  : n;
	}
	if (take == 0)
		return;
	if (c->r.sink_fd >= 0) {
		if (tpu_write_all(c->r.sink_fd, data, (size_t)take) != 0)
			c->too_large = 2; /* disk trouble: 500 */
		else
			c->r.body_sunk += take;
		return;
	}
	if (c->body.len + take > CORE_BODY_MAX ||
	    buf_append(&c->body, data, (size_t)take) != 0)
		c->too_large = 1;
}

/* The body is in: run the handler (locked). */
static void
req_handle(struct emu *e, struct core_req *c)
{
	struct emu_req *r = &c->r;

	/* Again after a wait: a fresh reply (and headers). */
	reply_reset(c);
	r->wait = 0;
	r->body = c->body.data;
	r->body_len = c->body.len;
	if (c->too_large == 1) {
		emu_reply_error(r, 413, "INVALID_ARGUMENT",
		    "Request body larger than %llu bytes.",
		    (unsigned long long)CORE_BODY_MAX);
		return;
	}
	if (c->too_large == 2) {
		emu_reply_error(r, 500, "INTERNAL",
		    "Cannot store the request body: %s.", strerror(errno));
		return;
	}
	pthread_mutex_lock(&e->lock);
	if (c->internal)
		control(e, c);
	else if (c->root)
		emu_auth_root(e, r);
	else if (c->route->handle(e, r) != 0 && !c->have_reply)
		emu_reply_error(r, 500, "INTERNAL", "Internal error.");
	pthread_mutex_unlock(&e->lock);
	if (r->sink_fd >= 0 && c->route != NULL) {
		/* The route should have closed it; never leak it. */
		close(r->sink_fd);
		r->sink_fd = -1;
	}
	if (!c->have_reply && !r->wait)
		emu_reply_error(r, 500, "INTERNAL", "No reply was produced.");
}

/* ---- response bodies ---- */

static uint64_t
reply_size(const struct core_req *c)
{
	return c->nfd > 0 ? c->flen : c->len;
}

static void
sleep_stall(struct core_req *c)
{
	int64_t end = tpu_now_ms() + c->act.secs * 1000;

	while (!c->e->stopping && tpu_now_ms() < end)
		tpu_sleep_ms(100);
}

static ssize_t
body_reader(void *cls, uint64_t pos, char *out, size_t max)
{
	struct core_req *c = cls;
	uint64_t total = reply_size(c), n, stop = total;
	ssize_t got;
	int faulty = c->have_fault;

	if (pos >= total)
		return MHD_CONTENT_READER_END_OF_STREAM;
	if (faulty && c->act.kind == EMU_FK_BROKEN) {
		if (pos >= (uint64_t)c->act.bytes)
			return MHD_CONTENT_READER_END_WITH_ERROR;
		stop = (uint64_t)c->act.bytes;
	}
	if (faulty && c->act.kind == EMU_FK_STALL) {
		if (pos == (uint64_t)c->act.bytes)
			sleep_stall(c);
		else if (pos < (uint64_t)c->act.bytes)
			stop = (uint64_t)c->act.bytes;
	}
	if (stop > total)
		stop = total;
	if (stop <= pos)
		stop = total;
	n = stop - pos;
	if (n > max)
		n = max;
	if (c->nfd > 0) {
		got = body_pread(c, out, (size_t)n, c->off + pos);
		if (got <= 0)
			return MHD_CONTENT_READER_END_WITH_ERROR;
		n = (uint64_t)got;
	} else
		memcpy(out, c->data + pos, (size_t)n);
	if (faulty && c->act.kind == EMU_FK_CORRUPT &&
	    (uint64_t)c->act.bytes >= pos && (uint64_t)c->act.bytes < pos + n)
		out[c->act.bytes - (long long)pos] ^= 0x20;
	c->sent += n;
	return (ssize_t)n;
}

static void
body_free(void *cls)
{
	req_unref(cls);
}

static struct MHD_Response *
response_build(struct core_req *c)
{
	struct MHD_Response *resp;
	struct core_hdr *h;
	int streamed;

	streamed =
	    c->nfd > 0 || (c->have_fault && (c->act.kind == EMU_FK_BROKEN ||
	                                        c->act.kind == EMU_FK_STALL ||
	                                        c->act.kind == EMU_FK_CORRUPT));
	if (streamed) {
		pthread_mutex_lock(&core_ref_lock);
		c->refs++;
		pthread_mutex_unlock(&core_ref_lock);
		resp = MHD_create_response_from_callback(
		    reply_size(c), 64 * 1024, body_reader, c, body_free);
	} else {
		resp = MHD_create_response_from_buffer(
		    c->len, c->data, MHD_RESPMEM_MUST_COPY);
		c->sent = c->len;
	}
	if (resp == NULL)
		return NULL;
	MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE, c->ctype);
	for (h = c->hdrs; h != NULL; h = h->next)
		MHD_add_response_header(resp, h->name, h->value);
	if (c->have_fault && c->act.kind == EMU_FK_BROKEN)
		MHD_add_response_header(
		    resp, MHD_HTTP_HEADER_CONNECTION, "close");
	return resp;
}

/* Abort the TCP connection with an RST. */
static void
conn_reset(struct core_req *c)
{
	const union MHD_ConnectionInfo *ci;
	struct linger lg = { 1, 0 };

	ci = MHD_get_connection_info(
	    c->r.conn, MHD_CONNECTION_INFO_CONNECTION_FD);
	struct sockaddr sa;

	if (ci == NULL)
		return;
	setsockopt(ci->connect_fd, SOL_SOCKET, SO_LINGER, &lg, sizeof(lg));
	/*
	 * MHD shuts the write side down before closing, which would send a
	 * FIN first; on Linux, connecting to AF_UNSPEC disconnects with an
	 * RST at once.
	 */
	memset(&sa, 0, sizeof(sa));
	sa.sa_family = AF_UNSPEC;
	if (connect(ci->connect_fd, &sa, sizeof(sa)) != 0) {
		/* the close with SO_LINGER 0 still resets */
	}
}

/* ---- libmicrohttpd callbacks ---- */

static void *
on_uri(void *cls, const char *uri, struct MHD_Connection *conn)
{
	struct core_req *c = xcalloc(1, sizeof(*c));

	c->e = cls;
	c->raw_url = xstrdup(uri != NULL ? uri : "/");
	c->refs = 1;
	c->body_limit = UINT64_MAX;
	buf_init(&c->body, BUF_NOCAP);
	c->r.raw_url = c->raw_url;
	c->r.conn = conn;
	c->r.sink_fd = -1;
	c->r.principal = "";
	c->r.start_ms = tpu_now_ms();
	{
		struct core_workers *w = c->e->workers;
		const union MHD_ConnectionInfo *ci =
		    MHD_get_connection_info(conn, MHD_CONNECTION_INFO_DAEMON);

		c->on_worker = w != NULL && w->d != NULL && ci != NULL &&
		               ci->daemon == w->d;
	}
	return c;
}

static enum MHD_Result
on_request(void *cls, struct MHD_Connection *conn, const char *url,
    const char *method, const char *version, const char *upload_data,
    size_t *upload_data_size, void **con_cls)
{
	struct emu *e = cls;
	struct core_req *c = *con_cls;
	struct MHD_Response *resp;
	enum MHD_Result ret;

	(void)version;
	if (c == NULL) /* no URI callback: cannot happen, be safe */
		return MHD_NO;
	if (!c->started) {
		c->started = 1;
		c->method = xstrdup(method);
		c->path = xstrdup(url != NULL ? url : "/");
		c->r.method = c->method;
		c->r.path = c->path;
		c->r.conn = conn;
		req_start(e, c);
		return MHD_YES;
	}
	if (*upload_data_size > 0) {
		req_body(c, upload_data, *upload_data_size);
		*upload_data_size = 0;
		return MHD_YES;
	}
	if (!c->prereplied) {
		req_handle(e, c);
		while (c->r.wait && !e->stopping) {
			if (c->on_worker) {
				/* resumed by emu_md_changed or the deadline */
				waiter_park(e, c);
				return MHD_YES;
			}
			waiter_sleep(e, c);
			req_handle(e, c);
		}
		if (c->r.wait)
			emu_reply_error(&c->r, 503, "UNAVAILABLE",
			    "The emulator is stopping.");
	}
	if (c->have_fault && c->act.kind == EMU_FK_RETURN_AFTER)
		fault_reply(c);
	if (c->have_fault && c->act.kind == EMU_FK_RESET) {
		c->status = 0;
		conn_reset(c);
		return MHD_NO;
	}
	resp = response_build(c);
	if (resp == NULL)
		return MHD_NO;
	ret = MHD_queue_response(conn, (unsigned int)c->status, resp);
	MHD_destroy_response(resp);
	return ret;
}

static void
on_completed(void *cls, struct MHD_Connection *conn, void **con_cls,
    enum MHD_RequestTerminationCode toe)
{
	struct emu *e = cls;
	struct core_req *c = *con_cls;
	const char *q;
	char *line;

	(void)conn;
	if (c == NULL)
		return;
	*con_cls = NULL;
	waiter_forget(e, c);
	if (c->r.sink_ctx != NULL && c->route != NULL &&
	    c->route->sink_abort != NULL) {
		pthread_mutex_lock(&e->lock);
		c->route->sink_abort(e, &c->r);
		pthread_mutex_unlock(&e->lock);
	}
	if (c->started && e->reqlog != NULL) {
		q = strchr(c->raw_url, '?');
		line = emu_log_line(emu_wall_ms(), c->method, c->path,
		    q != NULL ? q + 1 : NULL,
		    toe == MHD_REQUEST_TERMINATED_COMPLETED_OK || c->status != 0
		        ? c->status
		        : 0,
		    c->body_total, c->sent, tpu_now_ms() - c->r.start_ms,
		    c->have_fault ? c->fault.spec : NULL, c->log_headers);
		pthread_mutex_lock(&core_log_lock);
		fprintf(e->reqlog, "%s\n", line);
		fflush(e->reqlog);
		pthread_mutex_unlock(&core_log_lock);
		free(line);
	}
	req_unref(c);
}

static void on_mhd_log(void *, const char *, va_list)
    __attribute__((format(printf, 2, 0)));

static void
on_mhd_log(void *cls, const char *fmt, va_list ap)
{
	(void)cls;
	fputs("tpuctl-emulator: libmicrohttpd: ", stderr);
	vfprintf(stderr, fmt, ap);
}

/* ---- the server ---- */

struct core_server {
	struct MHD_Daemon *d;
	pthread_t ticker;
	int ticker_started;
	int workers; /* started the worker metadata daemon */
};

/*
 * The worker metadata daemon: no listen socket of its own (the acceptor
 * adds connections), one internal polling thread, suspend/resume for
 * wait_for_change.  Started with the first plain-HTTP server.
 */
static int
workers_start(struct emu *e, char *errbuf, size_t errlen)
{
	struct core_workers *w = workers_of(e);

	w->d = MHD_start_daemon(
	    MHD_USE_AUTO_INTERNAL_THREAD | MHD_USE_NO_LISTEN_SOCKET |
	        MHD_ALLOW_SUSPEND_RESUME | MHD_USE_ERROR_LOG,
	    0, NULL, NULL, on_request, e, MHD_OPTION_EXTERNAL_LOGGER,
	    on_mhd_log, e, MHD_OPTION_URI_LOG_CALLBACK, on_uri, e,
	    MHD_OPTION_NOTIFY_COMPLETED, on_completed, e,
	    MHD_OPTION_CONNECTION_TIMEOUT, (unsigned int)120,
	    MHD_OPTION_CONNECTION_LIMIT, (unsigned int)16384, MHD_OPTION_END);
	if (w->d == NULL) {
		snprintf(errbuf, errlen, "cannot start the metadata server");
		return -1;
	}
	w->stop = 0;
	if (pthread_create(&w->thr, NULL, acceptor_main, e) != 0) {
		snprintf(errbuf, errlen, "cannot start the metadata acceptor");
		MHD_stop_daemon(w->d);
		w->d = NULL;
		return -1;
	}
	pthread_mutex_lock(&w->mu);
	w->thr_started = 1;
	pthread_mutex_unlock(&w->mu);
	return 0;
}

static void
workers_stop(struct emu *e)
{
	struct core_workers *w = e->workers;
	size_t i;

	if (w == NULL)
		return;
	if (w->thr_started) {
		w->stop = 1;
		workers_wake(w);
		pthread_join(w->thr, NULL);
	}
	pthread_mutex_lock(&w->mu);
	w->thr_started = 0;
	waiters_resume(w, 1);
	pthread_mutex_unlock(&w->mu);
	if (w->d != NULL)
		MHD_stop_daemon(w->d);
	w->d = NULL;
	for (i = 0; i < w->n; i++) {
		close(w->v[i].fd);
		free(w->v[i].node);
	}
	free(w->v);
	if (w->wake[0] >= 0)
		close(w->wake[0]);
	if (w->wake[1] >= 0)
		close(w->wake[1]);
	pthread_mutex_destroy(&w->mu);
	free(w);
	e->workers = NULL;
}

static void *
ticker_main(void *arg)
{
	struct emu *e = arg;

	while (!e->stopping) {
		tpu_sleep_ms(100);
		if (e->stopping)
			break;
		pthread_mutex_lock(&e->lock);
		tpu_tick(e);
		pthread_mutex_unlock(&e->lock);
	}
	return NULL;
}

struct core_server *
core_server_start(struct emu *e, int listen_fd, const char *tls_key,
    const char *tls_cert, int no_ticker, char *errbuf, size_t errlen)
{
	struct core_server *s = xcalloc(1, sizeof(*s));
	/* poll, not select: worker listeners push fds past FD_SETSIZE. */
	unsigned int flags = MHD_USE_INTERNAL_POLLING_THREAD |
	                     MHD_USE_THREAD_PER_CONNECTION | MHD_USE_POLL |
	                     MHD_USE_ERROR_LOG;

	if (tls_key != NULL)
		flags |= MHD_USE_TLS;
	if (tls_key != NULL)
		s->d = MHD_start_daemon(flags, 0, NULL, NULL, on_request, e,
		    MHD_OPTION_EXTERNAL_LOGGER, on_mhd_log, e,
		    MHD_OPTION_LISTEN_SOCKET, listen_fd,
		    MHD_OPTION_URI_LOG_CALLBACK, on_uri, e,
		    MHD_OPTION_NOTIFY_COMPLETED, on_completed, e,
		    MHD_OPTION_CONNECTION_TIMEOUT, (unsigned int)120,
		    MHD_OPTION_HTTPS_MEM_KEY, tls_key,
		    MHD_OPTION_HTTPS_MEM_CERT, tls_cert, MHD_OPTION_END);
	else
		s->d = MHD_start_daemon(flags, 0, NULL, NULL, on_request, e,
		    MHD_OPTION_EXTERNAL_LOGGER, on_mhd_log, e,
		    MHD_OPTION_LISTEN_SOCKET, listen_fd,
		    MHD_OPTION_URI_LOG_CALLBACK, on_uri, e,
		    MHD_OPTION_NOTIFY_COMPLETED, on_completed, e,
		    MHD_OPTION_CONNECTION_TIMEOUT, (unsigned int)120,
		    MHD_OPTION_END);
	if (s->d == NULL) {
		snprintf(errbuf, errlen, "cannot start the HTTP server");
		free(s);
		return NULL;
	}
	if (tls_key == NULL &&
	    (e->workers == NULL ||
	        ((struct core_workers *)e->workers)->d == NULL)) {
		if (workers_start(e, errbuf, errlen) != 0) {
			MHD_stop_daemon(s->d);
			free(s);
			return NULL;
		}
		s->workers = 1;
	}
	if (no_ticker)
		return s;
	if (pthread_create(&s->ticker, NULL, ticker_main, e) != 0) {
		snprintf(errbuf, errlen, "cannot start the ticker thread");
		MHD_stop_daemon(s->d);
		free(s);
		return NULL;
	}
	s->ticker_started = 1;
	return s;
}

void
core_server_stop(struct emu *e, struct core_server *s)
{
	if (s == NULL)
		return;
	e->stopping = 1;
	if (s->workers)
		workers_stop(e);
	MHD_stop_daemon(s->d);
	if (s->ticker_started)
		pthread_join(s->ticker, NULL);
	free(s);
}
