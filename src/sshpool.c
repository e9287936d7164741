/*
 * The SSH fan-out engine (see sshpool.h): one poll() loop, one state
 * machine per worker, every libssh2 call non-blocking and driven until
 * it would block.  libssh2 1.10 has no timeouts of its own: every
 * deadline here is ours.
 */
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/types.h>

#include <netinet/in.h>
#include <netinet/tcp.h>

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <poll.h>
#include <pthread.h>
#include <termios.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <libssh2.h>
#include <libssh2_sftp.h>

#include "buf.h"
#include "fsutil.h"
#include "knownhosts.h"
#include "log.h"
#include "retry.h"
#include "shframe.h"
#include "shquote.h"
#include "sshpool.h"
#include "util.h"
#include "xmalloc.h"

#define SSHPOOL_CHUNK 32768
#define SSHPOOL_POLL_MAX_MS 200
#define SSHPOOL_MAX_KEYS 16
/* SSHPOOL_F_SHELL: buffered output per stream before the end marker */
#define SSHPOOL_SHELL_OUT_MAX (1u << 20)

/* Host-key algorithms in order of preference. */
static const char *const hostkey_order[] = {
	"ssh-ed25519",
	"ecdsa-sha2-nistp256",
	"ecdsa-sha2-nistp384",
	"ecdsa-sha2-nistp521",
	"rsa-sha2-512",
	"rsa-sha2-256",
	"ssh-rsa",
};
#define HOSTKEY_DEFAULT_PREF                                                   \
	"ssh-ed25519,ecdsa-sha2-nistp256,ecdsa-sha2-nistp384,"                 \
	"ecdsa-sha2-nistp521,rsa-sha2-512,rsa-sha2-256,ssh-rsa"

enum wstate {
	W_IDLE,
	W_CONNECT,
	W_HANDSHAKE,
	W_AUTH,
	W_AUTH_WAIT,
	W_OPEN,
	W_EXEC,
	W_READ,
	/* SSHPOOL_F_SHELL: the held shell (opened, started, fed, read) */
	W_SH_OPEN,
	W_SH_START,
	W_SH_SEND,
	W_SH_READ,
	W_CLOSE,
	W_WAIT_CLOSED,
	W_DONE,
};

struct linebuf {
	char *data;
	size_t len;
};

struct worker {
	size_t idx;
	const struct sshpool_target *t;
	struct sshpool_result *r;
	enum wstate st;
	int fd;
	LIBSSH2_SESSION *s;
	LIBSSH2_CHANNEL *ch;
	int64_t start_ms;
	int64_t deadline_ms; /* connect or command deadline; 0: none */
	int64_t retry_at_ms; /* W_AUTH_WAIT */
	int auth_delay_ms;
	struct knownhosts_key keys[SSHPOOL_MAX_KEYS];
	size_t nkeys;
	char *hostkey_pref;
	struct linebuf lb[2];
	char *cmdline;        /* sshpool_command_line, for W_EXEC */
	LIBSSH2_AGENT *agent; /* SSHPOOL_F_AGENT: identities being tried */
	struct libssh2_agent_publickey *ident;
	int agent_done; /* every agent identity tried (or no agent) */
	int zero[2];    /* stream read returned 0 (EOF) */
	int64_t rx_ms;  /* the last byte read from the server (keepalive) */
	int cached;     /* the session came from opts->cache */
	size_t in_off;  /* SSHPOOL_F_STDIN: bytes of pool.in sent */
	int in_done;    /* stdin: EOF sent, or no longer wanted */
	/* SSHPOOL_F_SHELL */
	char *bare;          /* the command line without the watcher */
	LIBSSH2_CHANNEL *sh; /* the held shell of this session */
	int sh_held;         /* sh came from the cache with the session */
	int sh_ok;           /* sh is in step: both end markers read */
	int noshell;         /* exec this command (no held shell) */
	int nocache;         /* a channel could not be freed: no reuse */
	struct buf shin;     /* the framed command */
	size_t shin_off;     /* bytes of shin the channel took */
	struct shframe_rd rd[2];
	int rd_init;
	struct buf ob[2]; /* output held until both end markers */
};

/* One session of a struct sshpool_cache, with what it was opened for. */
struct cache_ent {
	char *host, *user, *keys; /* keys: the pinned lines, '\n'-joined */
	int port;
	LIBSSH2_SESSION *s;
	LIBSSH2_CHANNEL *sh; /* SSHPOOL_F_SHELL: its held shell, or NULL */
	int fd;
	int auth_attempts;
	char hostkey_fp[64];
};

struct sshpool_cache {
	pthread_mutex_t mu; /* runs in several threads share a cache */
	struct cache_ent *e;
	size_t n, cap;
};

struct pool {
	const struct sshpool_opts *o;
	struct worker *w;
	size_t n;
	char *chunk;
	const char *pubkeyfile;
	int fanout, connect_ms, attempts, retry_ms, retry_max_ms;
	size_t line_max;
	int connect_only; /* sshpool_connect: stop after userauth */
	int stopping;     /* fail-fast or abort: start nothing, stop all */
	int aborted;
	int alive_s;      /* keepalive interval (s); 0: none */
	int alive_count;  /* unanswered keepalives before lost */
	int64_t alive_ms; /* silence after which a worker is lost */
	/* SSHPOOL_F_STDIN: the chunk of stdin being sent, to every worker */
	char *in;
	size_t in_len;
	int in_eof;
};

static ssize_t
send_nosig(
    libssh2_socket_t fd, const void *p, size_t len, int flags, void **abstract)
{
	ssize_t n;

	(void)abstract;
	n = send(fd, p, len, flags | MSG_NOSIGNAL);
	return n < 0 ? -errno : n;
}

static ssize_t
recv_plain(libssh2_socket_t fd, void *p, size_t len, int flags, void **abstract)
{
	ssize_t n;

	(void)abstract;
	n = recv(fd, p, len, flags);
	return n < 0 ? -errno : n;
}

/* recv_plain for a session of the pool: *abstract is its worker, whose
   rx_ms it stamps (keepalive).  A session handed over to a sshpool_conn
   goes back to recv_plain: the worker is gone then. */
static ssize_t
recv_stamp(libssh2_socket_t fd, void *p, size_t len, int flags, void **abstract)
{
	ssize_t n = recv_plain(fd, p, len, flags, abstract);

	if (n > 0 && abstract != NULL && *abstract != NULL)
		((struct worker *)*abstract)->rx_ms = tpu_now_ms();
	return n;
}

const char *
sshpool_status_name(enum sshpool_status s)
{
	switch (s) {
	case SSHPOOL_S_NOT_STARTED:
		return "not started";
	case SSHPOOL_S_OK:
		return "ok";
	case SSHPOOL_S_REMOTE_NONZERO:
		return "remote nonzero";
	case SSHPOOL_S_SIGNALED:
		return "killed by signal";
	case SSHPOOL_S_TIMEOUT:
		return "command timeout";
	case SSHPOOL_S_CONNECT_REFUSED:
		return "connection refused";
	case SSHPOOL_S_CONNECT_TIMEOUT:
		return "connect timeout";
	case SSHPOOL_S_CONNECT_ERROR:
		return "connect error";
	case SSHPOOL_S_HOSTKEY_MISMATCH:
		return "host key mismatch";
	case SSHPOOL_S_HOSTKEY_UNKNOWN:
		return "host key unknown";
	case SSHPOOL_S_AUTH_FAILED:
		return "auth failed";
	case SSHPOOL_S_PROTOCOL:
		return "ssh error";
	case SSHPOOL_S_ABORTED:
		return "aborted";
	}
	return "unknown";
}

int
sshpool_status_unreachable(enum sshpool_status s)
{
	return s == SSHPOOL_S_CONNECT_REFUSED ||
	       s == SSHPOOL_S_CONNECT_TIMEOUT || s == SSHPOOL_S_CONNECT_ERROR ||
	       s == SSHPOOL_S_HOSTKEY_MISMATCH ||
	       s == SSHPOOL_S_HOSTKEY_UNKNOWN || s == SSHPOOL_S_AUTH_FAILED;
}

int
sshpool_run_status(
    const struct sshpool_result *res, size_t n, int sig, struct tpu_err *err)
{
	size_t i, nfail = 0, nunreach = 0, nfinished = 0;

	for (i = 0; i < n; i++) {
		if (res[i].status != SSHPOOL_S_ABORTED &&
		    res[i].status != SSHPOOL_S_NOT_STARTED)
			nfinished++;
		if (res[i].status != SSHPOOL_S_OK) {
			nfail++;
			nunreach += sshpool_status_unreachable(res[i].status);
		}
	}
	if (sig != 0)
		return tpu_error(err, retry_interrupt_errc(sig),
		    "%s: %zu of %zu workers finished",
		    retry_interrupt_name(sig), nfinished, n);
	if (nfail == 0)
		return 0;
	if (nunreach == n)
		return tpu_error(err, TPU_E_UNREACHABLE,
		    "no worker could be reached or trusted (%zu of %zu)",
		    nunreach, n);
	return tpu_error(
	    err, TPU_E_PARTIAL, "%zu of %zu workers failed", nfail, n);
}

void
sshpool_result_release(struct sshpool_result *r)
{
	free(r->hostkey);
	r->hostkey = NULL;
}

static const char *
ssh_errmsg(LIBSSH2_SESSION *s)
{
	char *m = NULL;

	if (s == NULL || libssh2_session_last_error(s, &m, NULL, 0) == 0 ||
	    m == NULL)
		return "unknown error";
	return m;
}

static void
quickack(struct worker *w)
{
	int one = 1;

	if (w->fd != -1)
		setsockopt(w->fd, IPPROTO_TCP, TCP_QUICKACK, &one, sizeof one);
}

/* Emit data of one stream (0 stdout, 1 stderr) through on_output. */
static void
deliver(struct pool *p, struct worker *w, int stream, const char *d, size_t len)
{
	const struct sshpool_opts *o = p->o;
	struct linebuf *lb = &w->lb[stream];
	const char *nl;
	size_t take;

	if (o->on_output == NULL || len == 0)
		return;
	if (!(o->flags & SSHPOOL_F_LINES)) {
		o->on_output(o->arg, w->idx, stream + 1, d, len, 0);
		return;
	}
	if (lb->data == NULL)
		lb->data = xmalloc(p->line_max);
	while (len > 0) {
		nl = memchr(d, '\n', len);
		take = nl != NULL ? (size_t)(nl - d) : len;
		if (lb->len == 0 && nl != NULL && take <= p->line_max) {
			/* a whole line in the chunk: no copy */
			o->on_output(o->arg, w->idx, stream + 1, d, take,
			    SSHPOOL_OUT_EOL);
			d += take + 1;
			len -= take + 1;
			continue;
		}
		if (take > p->line_max - lb->len)
			take = p->line_max - lb->len;
		memcpy(lb->data + lb->len, d, take);
		lb->len += take;
		d += take;
		len -= take;
		if (len > 0 && *d == '\n') {
			o->on_output(o->arg, w->idx, stream + 1, lb->data,
			    lb->len, SSHPOOL_OUT_EOL);
			lb->len = 0;
			d++;
			len--;
		} else if (lb->len == p->line_max) {
			o->on_output(
			    o->arg, w->idx, stream + 1, lb->data, lb->len, 0);
			lb->len = 0;
		}
	}
}

static void
flush_lines(struct pool *p, struct worker *w)
{
	int i;

	for (i = 0; i < 2; i++) {
		if (w->lb[i].len > 0 && p->o->on_output != NULL)
			p->o->on_output(p->o->arg, w->idx, i + 1, w->lb[i].data,
			    w->lb[i].len, 0);
		w->lb[i].len = 0;
	}
}

static void
agent_end(struct worker *w)
{
	if (w->agent != NULL) {
		libssh2_agent_disconnect(w->agent);
		libssh2_agent_free(w->agent);
	}
	w->agent = NULL;
	w->ident = NULL;
}

/*
 * Try the agent's identities one by one: 1 authenticated, 0 would block,
 * -1 none left (w->agent_done set).
 */
static int
agent_auth(struct worker *w)
{
	struct libssh2_agent_publickey *next = NULL;
	int rc;

	if (w->agent == NULL) {
		w->agent = libssh2_agent_init(w->s);
		if (w->agent == NULL || libssh2_agent_connect(w->agent) != 0 ||
		    libssh2_agent_list_identities(w->agent) != 0 ||
		    libssh2_agent_get_identity(w->agent, &next, NULL) != 0) {
			agent_end(w);
			w->agent_done = 1;
			return -1;
		}
		w->ident = next;
	}
	for (;;) {
		rc = libssh2_agent_userauth(w->agent, w->t->user, w->ident);
		if (rc == LIBSSH2_ERROR_EAGAIN)
			return 0;
		if (rc == 0) {
			agent_end(w);
			return 1;
		}
		if (libssh2_agent_get_identity(w->agent, &next, w->ident) !=
		    0) {
			agent_end(w);
			w->agent_done = 1;
			return -1;
		}
		w->ident = next;
	}
}

/* Free the session and socket without ever blocking. */
/* Free a channel of a non-blocking session: 0, or -1 when it would
 * still block (the session's free frees it then). */
static int
chan_free(LIBSSH2_CHANNEL *ch)
{
	int i, rc = LIBSSH2_ERROR_EAGAIN;

	for (i = 0; i < 8 && rc == LIBSSH2_ERROR_EAGAIN; i++)
		rc = libssh2_channel_free(ch);
	return rc == 0 ? 0 : -1;
}

/* SSHPOOL_F_SHELL: what one command through the held shell used. */
static void
sh_reset(struct worker *w)
{
	int i;

	for (i = 0; i < 2; i++) {
		if (w->rd_init)
			shframe_rd_release(&w->rd[i]);
		buf_release(&w->ob[i]);
	}
	w->rd_init = 0;
	buf_release(&w->shin);
	w->shin_off = 0;
}

/* Drop w's held shell (out of step, dead, or not wanted). */
static void
sh_drop(struct worker *w)
{
	if (w->sh != NULL && chan_free(w->sh) != 0)
		w->nocache = 1;
	w->sh = NULL;
	w->sh_held = 0;
	w->sh_ok = 0;
	sh_reset(w);
}

static void
teardown(struct worker *w, int graceful)
{
	int i;

	if (!graceful && w->fd != -1)
		shutdown(w->fd, SHUT_RDWR); /* all further I/O fails fast */
	agent_end(w);
	sh_drop(w);
	if (w->ch != NULL) {
		if (libssh2_channel_free(w->ch) == LIBSSH2_ERROR_EAGAIN &&
		    w->fd != -1) {
			shutdown(w->fd, SHUT_RDWR);
			libssh2_channel_free(w->ch);
		}
		w->ch = NULL;
	}
	if (w->s != NULL) {
		if (graceful)
			libssh2_session_disconnect(w->s, "done");
		if (w->fd != -1)
			shutdown(w->fd, SHUT_RDWR);
		for (i = 0; i < 4; i++)
			if (libssh2_session_free(w->s) != LIBSSH2_ERROR_EAGAIN)
				break;
		w->s = NULL;
	}
	if (w->fd != -1)
		close(w->fd);
	w->fd = -1;
}

static char *
cache_keys(const struct sshpool_target *t)
{
	struct buf b;
	size_t i;

	buf_init(&b, 0);
	for (i = 0; i < t->nhostkeys; i++) {
		buf_puts(&b, t->hostkeys[i]);
		buf_append(&b, "\n", 1);
	}
	buf_append(&b, "", 1);
	return b.data;
}

static void
cache_ent_close(struct cache_ent *c)
{
	int i;

	if (c->s != NULL) {
		libssh2_session_disconnect(c->s, "done");
		if (c->fd != -1)
			shutdown(c->fd, SHUT_RDWR);
		for (i = 0; i < 4; i++)
			if (libssh2_session_free(c->s) != LIBSSH2_ERROR_EAGAIN)
				break;
	}
	if (c->fd != -1)
		close(c->fd);
	free(c->host);
	free(c->user);
	free(c->keys);
}

struct sshpool_cache *
sshpool_cache_new(void)
{
	struct sshpool_cache *c = xcalloc(1, sizeof *c);

	pthread_mutex_init(&c->mu, NULL);
	return c;
}

void
sshpool_cache_free(struct sshpool_cache *c)
{
	size_t i;

	if (c == NULL)
		return;
	for (i = 0; i < c->n; i++)
		cache_ent_close(&c->e[i]);
	free(c->e);
	pthread_mutex_destroy(&c->mu);
	free(c);
}

size_t
sshpool_cache_count(const struct sshpool_cache *c)
{
	size_t n;

	if (c == NULL)
		return 0;
	pthread_mutex_lock((pthread_mutex_t *)&c->mu);
	n = c->n;
	pthread_mutex_unlock((pthread_mutex_t *)&c->mu);
	return n;
}

/* The entry held for exactly this target (keys: cache_keys of it), or
 * c->n.  Under c->mu. */
static size_t
cache_find(const struct sshpool_cache *c, const struct sshpool_target *t,
    const char *keys)
{
	size_t i;

	for (i = 0; i < c->n; i++) {
		const struct cache_ent *e = &c->e[i];

		if (e->port == t->port && strcmp(e->host, t->host) == 0 &&
		    strcmp(e->user, t->user) == 0 && strcmp(e->keys, keys) == 0)
			break;
	}
	return i;
}

/* Take the session opened for exactly target t, if one is held: 1
 * with *s, *fd, and *auth_attempts and fp (when not NULL) as when it
 * was opened. */
static int
cache_take_session(struct sshpool_cache *c, const struct sshpool_target *t,
    LIBSSH2_SESSION **s, LIBSSH2_CHANNEL **sh, int *fd, int *auth_attempts,
    char *fp, size_t fpsz)
{
	char *keys = cache_keys(t);
	size_t i;

	pthread_mutex_lock(&c->mu);
	i = cache_find(c, t, keys);
	free(keys);
	if (i == c->n) {
		pthread_mutex_unlock(&c->mu);
		return 0;
	}
	*s = c->e[i].s;
	*sh = c->e[i].sh;
	*fd = c->e[i].fd;
	if (auth_attempts != NULL)
		*auth_attempts = c->e[i].auth_attempts;
	if (fp != NULL)
		snprintf(fp, fpsz, "%s", c->e[i].hostkey_fp);
	free(c->e[i].host);
	free(c->e[i].user);
	free(c->e[i].keys);
	c->e[i] = c->e[--c->n];
	pthread_mutex_unlock(&c->mu);
	return 1;
}

static int
cache_take(struct sshpool_cache *c, struct worker *w)
{
	int rc = cache_take_session(c, w->t, &w->s, &w->sh, &w->fd,
	    &w->r->auth_attempts, w->r->hostkey_fp, sizeof w->r->hostkey_fp);

	/* a held shell was in step when it was put back */
	w->sh_held = w->sh_ok = rc && w->sh != NULL;
	return rc;
}

/* Keep session s (no channel open but its held shell sh, or NULL)
 * opened for target t: 1 when kept (then the cache's), 0 when the cache
 * holds one for t already. */
static int
cache_put_session(struct sshpool_cache *c, const struct sshpool_target *t,
    LIBSSH2_SESSION *s, LIBSSH2_CHANNEL *sh, int fd, int auth_attempts,
    const char *fp)
{
	struct cache_ent *e;
	char *keys = cache_keys(t);

	pthread_mutex_lock(&c->mu);
	if (cache_find(c, t, keys) != c->n) {
		/* another run's session for it came back first */
		pthread_mutex_unlock(&c->mu);
		free(keys);
		return 0;
	}
	if (c->n == c->cap) {
		c->cap = c->cap == 0 ? 16 : c->cap * 2;
		c->e = xreallocarray(c->e, c->cap, sizeof *c->e);
	}
	e = &c->e[c->n++];
	e->host = xstrdup(t->host);
	e->user = xstrdup(t->user);
	e->keys = keys;
	e->port = t->port;
	e->s = s;
	e->sh = sh;
	e->fd = fd;
	/* its user goes with its run: nothing to stamp while held */
	*libssh2_session_abstract(e->s) = NULL;
	e->auth_attempts = auth_attempts;
	snprintf(e->hostkey_fp, sizeof e->hostkey_fp, "%s", fp);
	pthread_mutex_unlock(&c->mu);
	return 1;
}

/* Keep w's session (its channel is closed): 1 when kept. */
static int
cache_put(struct sshpool_cache *c, struct worker *w)
{
	if (w->ch != NULL) {
		if (chan_free(w->ch) != 0)
			return 0; /* teardown frees it */
		w->ch = NULL;
	}
	if (w->sh != NULL && !w->sh_ok)
		sh_drop(w); /* out of step: never reused */
	if (w->nocache)
		return 0;
	sh_reset(w);
	if (!cache_put_session(c, w->t, w->s, w->sh, w->fd, w->r->auth_attempts,
	        w->r->hostkey_fp))
		return 0;
	w->s = NULL;
	w->sh = NULL;
	w->fd = -1;
	return 1;
}

static void finish(struct pool *p, struct worker *w, enum sshpool_status st,
    const char *fmt, ...) __attribute__((format(printf, 4, 5)));

static void
finish(struct pool *p, struct worker *w, enum sshpool_status st,
    const char *fmt, ...)
{
	va_list ap;
	int i;

	w->r->status = st;
	if (fmt != NULL) {
		va_start(ap, fmt);
		vsnprintf(w->r->msg, sizeof w->r->msg, fmt, ap);
		va_end(ap);
	}
	if (st != SSHPOOL_S_NOT_STARTED)
		flush_lines(p, w);
	if (p->o->cache != NULL && w->s != NULL &&
	    (st == SSHPOOL_S_OK || st == SSHPOOL_S_REMOTE_NONZERO ||
	        st == SSHPOOL_S_SIGNALED))
		(void)cache_put(p->o->cache, w);
	teardown(w, st == SSHPOOL_S_OK || st == SSHPOOL_S_REMOTE_NONZERO ||
	                st == SSHPOOL_S_SIGNALED);
	for (i = 0; i < 2; i++) {
		free(w->lb[i].data);
		w->lb[i].data = NULL;
	}
	if (w->start_ms != 0)
		w->r->duration_ms = tpu_now_ms() - w->start_ms;
	w->st = W_DONE;
	if (st != SSHPOOL_S_OK && st != SSHPOOL_S_ABORTED &&
	    st != SSHPOOL_S_NOT_STARTED && (p->o->flags & SSHPOOL_F_FAIL_FAST))
		p->stopping = 1;
	if (p->o->on_done != NULL)
		p->o->on_done(p->o->arg, w->idx, w->r);
}

/* Build the host-key preference from the pinned key types. */
static char *
hostkey_pref(const struct worker *w)
{
	char *pref = NULL, *tmp;
	size_t i, j;

	for (i = 0; i < nitems(hostkey_order); i++) {
		for (j = 0; j < w->nkeys; j++) {
			const char *ty = w->keys[j].type;

			/* an ssh-rsa key is served as rsa-sha2-* too */
			if (strcmp(ty, hostkey_order[i]) == 0 ||
			    (strcmp(ty, "ssh-rsa") == 0 &&
			        tpu_startswith(hostkey_order[i], "rsa-sha2-")))
				break;
		}
		if (j == w->nkeys)
			continue;
		tmp = pref == NULL ? xstrdup(hostkey_order[i])
		                   : xasprintf("%s,%s", pref, hostkey_order[i]);
		free(pref);
		pref = tmp;
	}
	return pref;
}

static void
start_connect(struct pool *p, struct worker *w)
{
	struct addrinfo hints, *ai = NULL;
	char port[16];
	int one = 1, gai;

	memset(&hints, 0, sizeof hints);
	hints.ai_family = AF_UNSPEC;
	hints.ai_socktype = SOCK_STREAM;
	hints.ai_flags = AI_NUMERICSERV;
	snprintf(port, sizeof port, "%d", w->t->port);
	if ((gai = getaddrinfo(w->t->host, port, &hints, &ai)) != 0) {
		finish(p, w, SSHPOOL_S_CONNECT_ERROR,
		    "worker %d: cannot resolve '%s': %s", w->t->worker,
		    w->t->host, gai_strerror(gai));
		return;
	}
	w->fd = socket(
	    ai->ai_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (w->fd == -1) {
		finish(p, w, SSHPOOL_S_CONNECT_ERROR, "worker %d: socket: %s",
		    w->t->worker, strerror(errno));
		goto out;
	}
	setsockopt(w->fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
	w->deadline_ms = tpu_now_ms() + p->connect_ms;
	w->st = W_CONNECT;
	if (connect(w->fd, ai->ai_addr, ai->ai_addrlen) != 0 &&
	    errno != EINPROGRESS) {
		int e = errno;

		finish(p, w,
		    e == ECONNREFUSED ? SSHPOOL_S_CONNECT_REFUSED
		                      : SSHPOOL_S_CONNECT_ERROR,
		    "worker %d (%s:%d): connect: %s", w->t->worker, w->t->host,
		    w->t->port, strerror(e));
	}
out:
	freeaddrinfo(ai);
}

/*
 * Set the host-key preference, keeping only what this libssh2 supports:
 * libssh2 1.10 filters unsupported names itself with an overlapping
 * memcpy (undefined behaviour, caught by ASan).
 */
static void
set_hostkey_pref(LIBSSH2_SESSION *s, const char *want)
{
	const char **algs = NULL;
	char *copy = xstrdup(want), *name, *rest = copy, *pref = NULL, *tmp;
	int n, i;

	n = libssh2_session_supported_algs(s, LIBSSH2_METHOD_HOSTKEY, &algs);
	while ((name = strsep(&rest, ",")) != NULL) {
		for (i = 0; i < n; i++)
			if (strcmp(algs[i], name) == 0)
				break;
		if (i == n)
			continue;
		tmp = pref == NULL ? xstrdup(name)
		                   : xasprintf("%s,%s", pref, name);
		free(pref);
		pref = tmp;
	}
	if (pref != NULL)
		libssh2_session_method_pref(s, LIBSSH2_METHOD_HOSTKEY, pref);
	if (algs != NULL)
		libssh2_free(s, (void *)algs);
	free(pref);
	free(copy);
}

/* SSH sessions this process started: sshpool_sessions_started(). */
static unsigned long sessions_started;

unsigned long
sshpool_sessions_started(void)
{
	return __atomic_load_n(&sessions_started, __ATOMIC_RELAXED);
}

static int
new_session(struct pool *p, struct worker *w)
{
	__atomic_add_fetch(&sessions_started, 1, __ATOMIC_RELAXED);
	w->s = libssh2_session_init_ex(NULL, NULL, NULL, w);
	if (w->s == NULL) {
		finish(p, w, SSHPOOL_S_PROTOCOL,
		    "worker %d: cannot create an SSH session", w->t->worker);
		return -1;
	}
	libssh2_session_callback_set(
	    w->s, LIBSSH2_CALLBACK_SEND, (void *)send_nosig);
	libssh2_session_callback_set(
	    w->s, LIBSSH2_CALLBACK_RECV, (void *)recv_stamp);
	libssh2_session_set_blocking(w->s, 0);
	set_hostkey_pref(w->s,
	    w->hostkey_pref != NULL ? w->hostkey_pref : HOSTKEY_DEFAULT_PREF);
	return 0;
}

/* The host-key check, right after the handshake; 0 when trusted. */
static int
check_hostkey(struct pool *p, struct worker *w)
{
	struct knownhosts_key pk;
	const char *blob;
	size_t len;
	int type;
	char want[KNOWNHOSTS_FP_LEN];
	const char *tyname;
	char *enc;
	size_t best = 0;

	blob = libssh2_session_hostkey(w->s, &len, &type);
	if (blob == NULL || len < 4) {
		finish(p, w, SSHPOOL_S_PROTOCOL,
		    "worker %d: the server sent no host key", w->t->worker);
		return -1;
	}
	knownhosts_fingerprint(
	    (const unsigned char *)blob, len, w->r->hostkey_fp);
	enc = tpu_b64_encode((const unsigned char *)blob, len, 0);
	{
		uint32_t tl = (uint32_t)(unsigned char)blob[0] << 24 |
		              (uint32_t)(unsigned char)blob[1] << 16 |
		              (uint32_t)(unsigned char)blob[2] << 8 |
		              (unsigned char)blob[3];

		if (tl > len - 4 || tl > 40)
			tl = 0;
		free(w->r->hostkey);
		w->r->hostkey = xasprintf("%.*s %s", (int)tl, blob + 4, enc);
	}
	free(enc);
	tyname = w->r->hostkey;
	if (w->nkeys == 0)
		return 0; /* SSHPOOL_F_ACCEPT_NEW_HOSTKEY, checked at start */
	memset(&pk, 0, sizeof pk);
	snprintf(
	    pk.type, sizeof pk.type, "%.*s", (int)strcspn(tyname, " "), tyname);
	pk.blob = (unsigned char *)(uintptr_t)blob;
	pk.len = len;
	if (knownhosts_match(w->keys, w->nkeys, &pk, &best))
		return 0;
	knownhosts_fingerprint(w->keys[best].blob, w->keys[best].len, want);
	finish(p, w, SSHPOOL_S_HOSTKEY_MISMATCH,
	    "worker %d (%s:%d): host key mismatch: expected %s %s, got %.*s "
	    "%s; refusing to authenticate",
	    w->t->worker, w->t->host, w->t->port, w->keys[best].type, want,
	    (int)strcspn(tyname, " "), tyname, w->r->hostkey_fp);
	return -1;
}

static const char *
agent_note(const struct pool *p)
{
	if (!(p->o->flags & SSHPOOL_F_AGENT))
		return "";
	return p->o->keyfile != NULL ? " (agent, then key file)"
	                             : " (agent identities)";
}

static void
auth_failed(struct pool *p, struct worker *w, int rc)
{
	int64_t now = tpu_now_ms();

	/* the server refused the key: maybe not propagated yet */
	if (rc == LIBSSH2_ERROR_AUTHENTICATION_FAILED &&
	    w->r->auth_attempts < p->attempts && !p->stopping) {
		/* maybe not propagated yet: reconnect after a delay */
		teardown(w, 0);
		w->agent_done = 0;
		w->st = W_AUTH_WAIT;
		w->retry_at_ms = now + w->auth_delay_ms;
		w->auth_delay_ms *= 2;
		if (w->auth_delay_ms > p->retry_max_ms)
			w->auth_delay_ms = p->retry_max_ms;
		return;
	}
	if (rc == LIBSSH2_ERROR_AUTHENTICATION_FAILED)
		finish(p, w, SSHPOOL_S_AUTH_FAILED,
		    "worker %d (%s:%d): permission denied (publickey) for user "
		    "'%s' after %d attempt%s%s",
		    w->t->worker, w->t->host, w->t->port, w->t->user,
		    w->r->auth_attempts, w->r->auth_attempts == 1 ? "" : "s",
		    agent_note(p));
	else if (rc == LIBSSH2_ERROR_PUBLICKEY_UNVERIFIED)
		/* accepted by the server, but we could not sign */
		finish(p, w, SSHPOOL_S_AUTH_FAILED,
		    "worker %d (%s:%d): cannot sign with key '%s' (wrong "
		    "passphrase, or a key type libssh2 cannot use): %s",
		    w->t->worker, w->t->host, w->t->port, p->o->keyfile,
		    ssh_errmsg(w->s));
	else
		finish(p, w, SSHPOOL_S_AUTH_FAILED,
		    "worker %d (%s:%d): cannot authenticate with key '%s': %s",
		    w->t->worker, w->t->host, w->t->port, p->o->keyfile,
		    ssh_errmsg(w->s));
}

static void
read_exit(struct pool *p, struct worker *w)
{
	char *sig = NULL;
	size_t siglen = 0;
	int status;

	libssh2_channel_get_exit_signal(
	    w->ch, &sig, &siglen, NULL, NULL, NULL, NULL);
	if (sig != NULL && siglen > 0) {
		snprintf(w->r->signal, sizeof w->r->signal, "%.*s", (int)siglen,
		    sig);
		libssh2_free(w->s, sig);
		w->r->exit_status = -1;
		finish(p, w, SSHPOOL_S_SIGNALED, "worker %d: killed by SIG%s",
		    w->t->worker, w->r->signal);
		return;
	}
	if (sig != NULL)
		libssh2_free(w->s, sig);
	status = libssh2_channel_get_exit_status(w->ch);
	w->r->exit_status = status;
	if (status == 0)
		finish(p, w, SSHPOOL_S_OK, NULL);
	else
		finish(p, w, SSHPOOL_S_REMOTE_NONZERO,
		    "worker %d: exit status %d", w->t->worker, status);
}

/* SSHPOOL_F_SHELL honoured in this run. */
static int
shell_wanted(const struct pool *p)
{
	return (p->o->flags & SSHPOOL_F_SHELL) && p->o->cache != NULL &&
	       !(p->o->flags & SSHPOOL_F_STDIN) && !p->connect_only;
}

/*
 * The held shell failed (why): dropped.  Nothing of the command sent,
 * or an idempotent command: it runs on an exec channel of the same
 * session; else (SSHPOOL_F_SHELL_ONCE, sent) it is reported, not run
 * again.  w's next state is set.
 */
static void
sh_fail(struct pool *p, struct worker *w, const char *why)
{
	int sent = w->shin_off > 0;

	log_debug("worker %d: held shell dropped: %s", w->t->worker, why);
	sh_drop(w);
	if (sent && (p->o->flags & SSHPOOL_F_SHELL_ONCE)) {
		finish(p, w, SSHPOOL_S_PROTOCOL,
		    "worker %d: the held shell was lost while running the "
		    "command (%s); not run again: it may have run",
		    w->t->worker, why);
		return;
	}
	w->noshell = 1;
	w->st = W_OPEN;
}

/* shframe_rd_feed's emit: into the buffer, or on (SSHPOOL_F_SHELL_ONCE). */
struct sh_emit {
	struct pool *p;
	struct worker *w;
	int stream;
	int over;
};

static void
sh_emit(void *arg, const char *d, size_t len)
{
	struct sh_emit *e = arg;
	struct buf *b = &e->w->ob[e->stream];

	if (e->p->o->flags & SSHPOOL_F_SHELL_ONCE) {
		deliver(e->p, e->w, e->stream, d, len);
		return;
	}
	if (b->len + len > SSHPOOL_SHELL_OUT_MAX || buf_append(b, d, len) != 0)
		e->over = 1;
}

/*
 * Start one command on the held shell: a shell taken from the cache is
 * checked first (nothing may wait on it: bytes are out of step, EOF is
 * a dead shell; either is dropped and a new one opened, once), then the
 * framed command is built.  0, or -1 when w went elsewhere.
 */
static int
sh_begin(struct pool *p, struct worker *w)
{
	char marker[SHFRAME_MARKER_MAX];
	struct tpu_err err;
	int i;

	if (w->sh_held) {
		w->sh_held = 0;
		for (i = 0; i < 2; i++) {
			ssize_t n = libssh2_channel_read_ex(
			    w->sh, i, p->chunk, SSHPOOL_CHUNK);

			if (n != LIBSSH2_ERROR_EAGAIN ||
			    libssh2_channel_eof(w->sh) == 1) {
				log_debug("worker %d: held shell %s; opening "
				          "another",
				    w->t->worker,
				    n > 0 ? "out of step (stray output)"
				          : "gone");
				sh_drop(w);
				w->st = W_SH_OPEN;
				return -1;
			}
		}
	}
	tpu_err_init(&err);
	buf_init(&w->shin, BUF_NOCAP);
	if (shframe_marker(marker, &err) != 0 ||
	    shframe_wrap(&w->shin, marker, w->bare, &err) != 0) {
		sh_fail(p, w, err.msg);
		return -1;
	}
	w->shin_off = 0;
	w->sh_ok = 0;
	for (i = 0; i < 2; i++) {
		shframe_rd_init(&w->rd[i], marker, i == 0);
		buf_init(&w->ob[i], BUF_NOCAP);
	}
	w->rd_init = 1;
	return 0;
}

/*
 * Read the held shell's answer.  1 when w moved on (done, or dropped),
 * 0 when it would block.
 */
static int
sh_read(struct pool *p, struct worker *w, int *extra)
{
	int i, again = 0, st;

	for (i = 0; i < 2; i++) {
		ssize_t n;
		struct sh_emit e = { p, w, i, 0 };
		struct tpu_err err;

		if (w->rd[i].done)
			continue;
		n = libssh2_channel_read_ex(w->sh, i, p->chunk, SSHPOOL_CHUNK);
		if (n == LIBSSH2_ERROR_EAGAIN || n == 0)
			continue;
		if (n < 0) {
			finish(p, w, SSHPOOL_S_PROTOCOL,
			    "worker %d (%s:%d): connection lost while running "
			    "the command: %s",
			    w->t->worker, w->t->host, w->t->port,
			    ssh_errmsg(w->s));
			return 1;
		}
		again = 1;
		tpu_err_init(&err);
		if (shframe_rd_feed(&w->rd[i], p->chunk, (size_t)n, sh_emit, &e,
		        &err) < 0) {
			sh_fail(p, w, err.msg);
			return 1;
		}
		if (e.over) {
			sh_fail(
			    p, w, "output over 1 MiB: run on an exec channel");
			return 1;
		}
	}
	if (w->rd[0].done && w->rd[1].done) {
		st = w->rd[0].status;
		w->sh_ok = 1;
		for (i = 0; i < 2; i++)
			deliver(p, w, i, w->ob[i].data, w->ob[i].len);
		sh_reset(w);
		w->r->exit_status = st;
		if (st == 0)
			finish(p, w, SSHPOOL_S_OK, NULL);
		else
			finish(p, w, SSHPOOL_S_REMOTE_NONZERO,
			    "worker %d: exit status %d", w->t->worker, st);
		return 1;
	}
	if (again) {
		*extra = 0;
		return 1; /* read on */
	}
	if (libssh2_channel_eof(w->sh) == 1) {
		sh_fail(p, w, "it ended before the command's end");
		return 1;
	}
	{
		unsigned long avail = 0;

		libssh2_channel_window_read_ex(w->sh, &avail, NULL);
		if (avail > 0 && (*extra)++ < 2)
			return 1;
	}
	return 0;
}

/* Drive w until libssh2 would block or w is done. */
/*
 * A cached session found dead before its command started: drop it and
 * connect again from the start (host-key check, auth).  1 when done.
 */
static int
reopen(struct pool *p, struct worker *w)
{
	if (!w->cached)
		return 0;
	log_debug(
	    "worker %d: held session is gone; reconnecting", w->t->worker);
	teardown(w, 0);
	w->cached = 0;
	w->r->auth_attempts = 0;
	w->r->hostkey_fp[0] = '\0';
	start_connect(p, w);
	return 1;
}

/*
 * SSHPOOL_F_STDIN: send w what it has not had of the chunk in p->in,
 * then EOF once stdin ended.  1 when something was sent.  A write the
 * channel refuses (the command is gone) ends w's stdin: the reading side
 * reports a lost connection.
 */
static int
send_stdin(struct pool *p, struct worker *w)
{
	ssize_t n;
	int sent = 0;

	if (!(p->o->flags & SSHPOOL_F_STDIN) || w->in_done)
		return 0;
	while (w->in_off < p->in_len) {
		n = libssh2_channel_write(
		    w->ch, p->in + w->in_off, p->in_len - w->in_off);
		if (n == LIBSSH2_ERROR_EAGAIN)
			return sent;
		if (n < 0) {
			w->in_done = 1;
			return sent;
		}
		w->in_off += (size_t)n;
		sent = 1;
	}
	if (p->in_eof &&
	    libssh2_channel_send_eof(w->ch) != LIBSSH2_ERROR_EAGAIN)
		w->in_done = 1;
	return sent;
}

/*
 * SSHPOOL_F_STDIN: 1 when the next chunk of stdin is wanted: a command
 * runs somewhere, and every worker that may still take stdin has taken
 * the chunk there is.
 */
static int
stdin_wanted(const struct pool *p)
{
	size_t i;
	int running = 0;

	if (!(p->o->flags & SSHPOOL_F_STDIN) || p->in_eof)
		return 0;
	for (i = 0; i < p->n; i++) {
		const struct worker *w = &p->w[i];

		if (w->st == W_DONE || w->st > W_READ || w->in_done)
			continue;
		if (w->in_off < p->in_len)
			return 0;
		running |= w->st == W_READ;
	}
	return running;
}

/* Read the next chunk of stdin (EOF on an error) for every worker. */
static void
read_stdin(struct pool *p)
{
	ssize_t n;
	size_t i;

	n = read(p->o->stdin_fd, p->in, SSHPOOL_CHUNK);
	if (n < 0 && (errno == EINTR || errno == EAGAIN))
		return;
	p->in_len = n > 0 ? (size_t)n : 0;
	p->in_eof = n <= 0;
	for (i = 0; i < p->n; i++)
		p->w[i].in_off = 0;
}

/*
 * Open a channel on w's session into *ch: 1 opened; 0 would block, or
 * w is finished (failed); -1 when a dead held session is being
 * reconnected (w starts over).
 */
static int
chan_open(struct pool *p, struct worker *w, LIBSSH2_CHANNEL **ch)
{
	if ((*ch = libssh2_channel_open_session(w->s)) != NULL)
		return 1;
	if (libssh2_session_last_errno(w->s) == LIBSSH2_ERROR_EAGAIN)
		return 0;
	if (reopen(p, w))
		return -1;
	finish(p, w, SSHPOOL_S_PROTOCOL, "worker %d: cannot open a channel: %s",
	    w->t->worker, ssh_errmsg(w->s));
	return 0;
}

static void
step(struct pool *p, struct worker *w)
{
	ssize_t n;
	int rc, i, again, extra = 0;

	quickack(w);
	for (;;) {
		switch (w->st) {
		case W_IDLE:
		case W_DONE:
		case W_AUTH_WAIT:
			return;
		case W_CONNECT: {
			int soerr = 0;
			socklen_t sl = sizeof soerr;
			struct pollfd pfd = { w->fd, POLLOUT, 0 };

			if (poll(&pfd, 1, 0) <= 0)
				return;
			getsockopt(w->fd, SOL_SOCKET, SO_ERROR, &soerr, &sl);
			if (soerr != 0) {
				finish(p, w,
				    soerr == ECONNREFUSED
				        ? SSHPOOL_S_CONNECT_REFUSED
				        : SSHPOOL_S_CONNECT_ERROR,
				    "worker %d (%s:%d): connect: %s",
				    w->t->worker, w->t->host, w->t->port,
				    strerror(soerr));
				return;
			}
			if (new_session(p, w) != 0)
				return;
			w->st = W_HANDSHAKE;
			quickack(w);
			break;
		}
		case W_HANDSHAKE:
			rc = libssh2_session_handshake(w->s, w->fd);
			if (rc == LIBSSH2_ERROR_EAGAIN)
				return;
			if (rc == LIBSSH2_ERROR_KEX_FAILURE && w->nkeys > 0) {
				/* we offered only the pinned key types */
				finish(p, w, SSHPOOL_S_HOSTKEY_MISMATCH,
				    "worker %d (%s:%d): host key mismatch: the "
				    "server offers no host key of the pinned "
				    "type(s) %s; refusing to authenticate",
				    w->t->worker, w->t->host, w->t->port,
				    w->hostkey_pref != NULL ? w->hostkey_pref
				                            : "?");
				return;
			}
			if (rc != 0) {
				finish(p, w, SSHPOOL_S_PROTOCOL,
				    "worker %d (%s:%d): ssh handshake failed: "
				    "%s",
				    w->t->worker, w->t->host, w->t->port,
				    ssh_errmsg(w->s));
				return;
			}
			if (check_hostkey(p, w) != 0)
				return;
			w->st = W_AUTH;
			w->r->auth_attempts++;
			break;
		case W_AUTH:
			rc = LIBSSH2_ERROR_AUTHENTICATION_FAILED;
			if ((p->o->flags & SSHPOOL_F_AGENT) && !w->agent_done) {
				int a = agent_auth(w);

				if (a == 0)
					return;
				if (a == 1)
					rc = 0;
			}
			if (rc != 0 && p->o->keyfile != NULL)
				rc = libssh2_userauth_publickey_fromfile_ex(
				    w->s, w->t->user,
				    (unsigned)strlen(w->t->user), p->pubkeyfile,
				    p->o->keyfile, p->o->passphrase);
			if (rc == LIBSSH2_ERROR_EAGAIN)
				return;
			if (rc != 0) {
				auth_failed(p, w, rc);
				return;
			}
			if (p->connect_only) {
				/* the session is handed over as it is */
				w->r->status = SSHPOOL_S_OK;
				w->r->duration_ms = tpu_now_ms() - w->start_ms;
				w->deadline_ms = 0;
				w->st = W_DONE;
				return;
			}
			if (p->alive_s > 0) {
				/* a keepalive (want reply) after alive_s of
				   silence: a live server answers it */
				libssh2_keepalive_config(
				    w->s, 1, (unsigned)p->alive_s);
				w->rx_ms = tpu_now_ms();
			}
			w->st = W_OPEN;
			break;
		case W_OPEN:
			if (shell_wanted(p) && !w->noshell) {
				w->deadline_ms =
				    p->o->command_timeout_ms > 0
				        ? tpu_now_ms() +
				              p->o->command_timeout_ms
				        : 0;
				w->st = w->sh != NULL ? W_SH_SEND : W_SH_OPEN;
				break;
			}
			if ((rc = chan_open(p, w, &w->ch)) <= 0) {
				if (rc == 0)
					return;
				break;
			}
			w->st = W_EXEC;
			break;
		case W_EXEC:
			rc = libssh2_channel_exec(w->ch, w->cmdline);
			if (rc == LIBSSH2_ERROR_EAGAIN)
				return;
			if (rc != 0 && reopen(p, w))
				break;
			if (rc != 0) {
				finish(p, w, SSHPOOL_S_PROTOCOL,
				    "worker %d: cannot run the command: %s",
				    w->t->worker, ssh_errmsg(w->s));
				return;
			}
			w->deadline_ms =
			    p->o->command_timeout_ms > 0
			        ? tpu_now_ms() + p->o->command_timeout_ms
			        : 0;
			w->st = W_READ;
			break;
		case W_READ:
			/*
			 * A command that floods its output keeps this loop
			 * reading: give the pool a chance to see the abort
			 * flag (a signal, a closed stdout) or a fail-fast stop.
			 */
			if (p->stopping ||
			    (p->o->abort != NULL && *p->o->abort))
				return;
			again = 0;
			for (i = 0; i < 2; i++) {
				n = libssh2_channel_read_ex(
				    w->ch, i, p->chunk, SSHPOOL_CHUNK);
				if (n > 0) {
					deliver(p, w, i, p->chunk, (size_t)n);
					again = 1;
				} else if (n == 0)
					w->zero[i] = 1;
				else if (n != LIBSSH2_ERROR_EAGAIN) {
					finish(p, w, SSHPOOL_S_PROTOCOL,
					    "worker %d (%s:%d): connection "
					    "lost while running the command: "
					    "%s",
					    w->t->worker, w->t->host,
					    w->t->port, ssh_errmsg(w->s));
					return;
				}
			}
			if (send_stdin(p, w))
				again = 1;
			if (again) {
				w->zero[0] = w->zero[1] = 0;
				extra = 0;
				break;
			}
			if (libssh2_channel_eof(w->ch) == 1 && w->zero[0] &&
			    w->zero[1]) {
				flush_lines(p, w);
				w->in_done = 1;
				w->st = W_CLOSE;
				break;
			}
			/*
			 * Reading stream 1 may have pulled stream 0's data
			 * (or the EOF) off the socket into libssh2's queue
			 * after stream 0 said EAGAIN: the socket is then
			 * drained and poll() would wait forever.  Read again
			 * while libssh2 holds something for us.
			 */
			{
				unsigned long avail = 0;

				libssh2_channel_window_read_ex(
				    w->ch, &avail, NULL);
				if ((avail > 0 ||
				        libssh2_channel_eof(w->ch) == 1) &&
				    extra++ < 2)
					break;
			}
			w->zero[0] = w->zero[1] = 0;
			return;
		case W_SH_OPEN:
			if ((rc = chan_open(p, w, &w->sh)) <= 0) {
				if (rc == 0)
					return;
				break;
			}
			w->st = W_SH_START;
			break;
		case W_SH_START:
			rc = libssh2_channel_exec(w->sh, "exec sh");
			if (rc == LIBSSH2_ERROR_EAGAIN)
				return;
			if (rc != 0) {
				sh_fail(p, w, "cannot start it");
				break;
			}
			w->st = W_SH_SEND;
			break;
		case W_SH_SEND:
			if (w->shin.len == 0 && sh_begin(p, w) != 0)
				break; /* dropped: W_SH_OPEN or W_OPEN */
			while (w->shin_off < w->shin.len) {
				n = libssh2_channel_write(w->sh,
				    w->shin.data + w->shin_off,
				    w->shin.len - w->shin_off);
				if (n == LIBSSH2_ERROR_EAGAIN)
					return;
				if (n < 0) {
					sh_fail(p, w, "cannot write to it");
					break;
				}
				w->shin_off += (size_t)n;
			}
			if (w->st == W_SH_SEND)
				w->st = W_SH_READ;
			break;
		case W_SH_READ:
			if (p->stopping ||
			    (p->o->abort != NULL && *p->o->abort))
				return;
			rc = sh_read(p, w, &extra);
			if (rc == 0)
				return;
			break;
		case W_CLOSE:
			rc = libssh2_channel_close(w->ch);
			if (rc == LIBSSH2_ERROR_EAGAIN)
				return;
			w->st = W_WAIT_CLOSED;
			break;
		case W_WAIT_CLOSED:
			rc = libssh2_channel_wait_closed(w->ch);
			if (rc == LIBSSH2_ERROR_EAGAIN)
				return;
			read_exit(p, w);
			return;
		}
	}
}

static void
start_worker(struct pool *p, struct worker *w)
{
	size_t i;
	struct tpu_err err;

	w->start_ms = tpu_now_ms();
	w->auth_delay_ms = p->retry_ms;
	for (i = 0; i < w->t->nhostkeys && w->nkeys < SSHPOOL_MAX_KEYS; i++) {
		const char *k = w->t->hostkeys[i];

		if (knownhosts_parse_key(
		        k, strlen(k), &w->keys[w->nkeys], &err) == 0)
			w->nkeys++;
	}
	if (w->nkeys == 0 && !(p->o->flags & SSHPOOL_F_ACCEPT_NEW_HOSTKEY)) {
		finish(p, w, SSHPOOL_S_HOSTKEY_UNKNOWN,
		    "worker %d (%s:%d): no valid pinned host key: refusing to "
		    "connect",
		    w->t->worker, w->t->host, w->t->port);
		return;
	}
	w->hostkey_pref = hostkey_pref(w);
	if (p->o->cache != NULL && !p->connect_only &&
	    cache_take(p->o->cache, w)) {
		/* this run's worker is the one recv_stamp stamps now, with
		   this run's keepalive (none: 0), silent since now */
		*libssh2_session_abstract(w->s) = w;
		libssh2_keepalive_config(w->s, 1, (unsigned)p->alive_s);
		w->rx_ms = tpu_now_ms();
		w->cached = 1;
		w->deadline_ms = tpu_now_ms() + p->connect_ms;
		w->st = W_OPEN;
		return;
	}
	start_connect(p, w);
}

/* 1 when the n bytes at s are a shell variable name. */
static int
shell_name(const char *s, size_t n)
{
	size_t i;

	if (n == 0 || !(isalpha((unsigned char)s[0]) || s[0] == '_'))
		return 0;
	for (i = 1; i < n; i++)
		if (!(isalnum((unsigned char)s[i]) || s[i] == '_'))
			return 0;
	return 1;
}

int
sshpool_command_line(const struct sshpool_target *t, const char *opts_command,
    char **out, struct tpu_err *err)
{
	const char *cmd = t->command != NULL ? t->command : opts_command;
	struct buf b;
	size_t i;
	int rc = 0;

	*out = NULL;
	if (cmd == NULL || cmd[0] == '\0')
		return tpu_error(err, TPU_E_USAGE,
		    "worker %d: no remote command given", t->worker);
	if (t->nenv > 0 && t->env == NULL)
		return tpu_error(err, TPU_E_USAGE,
		    "worker %d: %zu environment entries but no array",
		    t->worker, t->nenv);
	buf_init(&b, BUF_NOCAP);
	for (i = 0; i < t->nenv && rc == 0; i++) {
		const char *e = t->env[i], *eq;

		if (e == NULL || (eq = strchr(e, '=')) == NULL)
			rc = tpu_error(err, TPU_E_USAGE,
			    "worker %d: invalid environment entry '%s': must "
			    "be KEY=VALUE",
			    t->worker, e != NULL ? e : "(null)");
		else if (!shell_name(e, (size_t)(eq - e)))
			rc = tpu_error(err, TPU_E_USAGE,
			    "worker %d: invalid environment name '%.*s': must "
			    "be letters, digits and '_', not starting with a "
			    "digit",
			    t->worker, (int)(eq - e), e);
		else {
			buf_puts(&b, i == 0 ? "export " : " ");
			buf_append(&b, e, (size_t)(eq - e) + 1);
			rc = shquote_append(&b, eq + 1, strlen(eq + 1), err);
		}
	}
	if (rc != 0) {
		buf_release(&b);
		return rc;
	}
	if (t->nenv > 0)
		buf_puts(&b, "; ");
	buf_puts(&b, cmd);
	*out = buf_detach(&b, NULL);
	return 0;
}

/*
 * Put before every command line (see sshpool.h, SSHPOOL_F_NO_WATCH).  The
 * login shell that sshd starts for a session without a pty is a session
 * and process group leader (sshd calls setsid()), so everything the
 * command starts is in the group $$ unless it makes its own.  A watcher,
 * forked twice (no child of the shell: a `wait` in the command does not
 * wait for it) and holding only the channel's stdin (fd 3 carries it
 * past the /dev/null an asynchronous list gets), reads until EOF: sshd
 * closes that pipe when the channel or the connection goes.  If the
 * shell still runs then, the client went away (interrupt, --timeout,
 * fail-fast, lost connection): the group gets SIGTERM, and SIGKILL
 * SSHPOOL_KILL_GRACE_S later (the watcher, in the group, goes with it).
 * The client closes the channel once both output streams ended, which
 * can be before sshd has reaped the exiting shell: so the watcher gives
 * the shell a second to go before it signals anything.  After a normal
 * end what the shell left in the background is left alone.  The command runs in
 * the login shell itself, as before: $$, $PPID, its exit status, and a
 * death by a signal (reported by sshd) are unchanged.
 */
#define SSHPOOL_KILL_GRACE_S "5"
static const char watch_prefix[] =
    "exec 3<&0\n"
    "( ( trap '' HUP INT TERM PIPE; exec 0<&3 3<&- >/dev/null 2>&1; "
    "while read -r _; do :; done; "
    "i=0; while kill -0 $$ 2>/dev/null && [ $i -lt 10 ]; do "
    "sleep 0.1; i=$((i + 1)); done; "
    "kill -0 $$ 2>/dev/null && { kill -TERM -$$; sleep " SSHPOOL_KILL_GRACE_S
    "; kill -KILL -$$; } ) & )\n"
    "exec 3<&- </dev/null\n";

/*
 * The watcher when stdin is forwarded (SSHPOOL_F_STDIN): the command
 * reads the channel's stdin, and its EOF is the data's end, not the
 * client's.  sshd's session process ($PPID of the login shell) lives as
 * long as the client's connection: the watcher polls it every second
 * (and does nothing when it cannot see it at all), then acts as above.
 */
static const char watch_prefix_stdin[] =
    "( ( trap '' HUP INT TERM PIPE; exec </dev/null >/dev/null 2>&1; "
    "kill -0 $PPID 2>/dev/null || exit 0; "
    "while kill -0 $$ 2>/dev/null && kill -0 $PPID 2>/dev/null; do "
    "sleep 1; done; "
    "i=0; while kill -0 $$ 2>/dev/null && [ $i -lt 10 ]; do "
    "sleep 0.1; i=$((i + 1)); done; "
    "kill -0 $$ 2>/dev/null && { kill -TERM -$$; sleep " SSHPOOL_KILL_GRACE_S
    "; kill -KILL -$$; } ) & )\n";

static int
validate(struct pool *p, const struct sshpool_target *t, size_t n,
    const struct sshpool_opts *o, int connect_only, struct tpu_err *err)
{
	size_t i;
	int rc;

	if (!connect_only)
		for (i = 0; i < n; i++) {
			char *line;

			if ((rc = sshpool_command_line(
			         &t[i], o->command, &line, err)) != 0)
				return rc;
			p->w[i].cmdline = o->flags & SSHPOOL_F_NO_WATCH
			                      ? line
			                      : xasprintf("%s%s",
			                            o->flags & SSHPOOL_F_STDIN
			                                ? watch_prefix_stdin
			                                : watch_prefix,
			                            line);
			if (shell_wanted(p))
				p->w[i].bare = p->w[i].cmdline != line
				                   ? line
				                   : xstrdup(line);
			else if (p->w[i].cmdline != line)
				free(line);
		}
	if (o->keyfile == NULL && !(o->flags & SSHPOOL_F_AGENT))
		return tpu_error(err, TPU_E_USAGE, "no ssh key file given");
	if ((o->flags & SSHPOOL_F_STDIN) && o->stdin_fd < 0)
		return tpu_error(err, TPU_E_USAGE,
		    "invalid stdin fd %d to forward", o->stdin_fd);
	if (o->fanout < 0)
		return tpu_error(err, TPU_E_USAGE,
		    "invalid fanout %d: must be at least 1", o->fanout);
	if (o->connect_timeout_ms < 0 || o->command_timeout_ms < 0 ||
	    o->auth_attempts < 0 || o->auth_retry_ms < 0 ||
	    o->auth_retry_max_ms < 0)
		return tpu_error(err, TPU_E_USAGE,
		    "invalid ssh timeouts: must not be negative");
	for (i = 0; i < n; i++) {
		if (t[i].host == NULL || t[i].host[0] == '\0' ||
		    t[i].port < 1 || t[i].port > 65535)
			return tpu_error(err, TPU_E_USAGE,
			    "worker %d: invalid address '%s' port %d",
			    t[i].worker, t[i].host ? t[i].host : "", t[i].port);
		if (t[i].user == NULL || t[i].user[0] == '\0')
			return tpu_error(err, TPU_E_USAGE,
			    "worker %d: no user name", t[i].worker);
	}
	return 0;
}

static pthread_once_t libssh2_once = PTHREAD_ONCE_INIT;
static int libssh2_init_rc;

static void
libssh2_init_once(void)
{
	libssh2_init_rc = libssh2_init(0);
}

/* libssh2_init once per process, whatever the thread (never undone). */
static int
libssh2_ready(struct tpu_err *err)
{
	pthread_once(&libssh2_once, libssh2_init_once);
	if (libssh2_init_rc != 0)
		return tpu_error(err, TPU_E_INTERNAL, "libssh2_init failed");
	return 0;
}

static int
run_pool(const struct sshpool_target *targets, size_t n,
    const struct sshpool_opts *o, struct sshpool_result *results,
    struct sshpool_conn *conn, struct tpu_err *err)
{
	struct pool p;
	struct pollfd *pfd = NULL;
	struct worker **pw = NULL;
	size_t i, next = 0, active;
	char *defpub = NULL;
	int rc;

	memset(&p, 0, sizeof p);
	for (i = 0; i < n; i++) {
		memset(&results[i], 0, sizeof results[i]);
		results[i].exit_status = -1;
	}
	p.o = o;
	p.n = n;
	p.connect_only = conn != NULL;
	p.fanout = o->fanout > 0 ? o->fanout : 64;
	p.connect_ms =
	    o->connect_timeout_ms > 0 ? o->connect_timeout_ms : 10000;
	p.attempts = o->auth_attempts > 0 ? o->auth_attempts : 1;
	p.retry_ms = o->auth_retry_ms > 0 ? o->auth_retry_ms : 1000;
	p.retry_max_ms = o->auth_retry_max_ms > 0 ? o->auth_retry_max_ms : 5000;
	p.line_max = o->line_max > 0 ? o->line_max : 16384;
	if ((o->flags & SSHPOOL_F_STDIN) && (size_t)p.fanout < n)
		p.fanout = (int)n; /* every worker takes each chunk */
	if (o->alive_interval_ms > 0) {
		/* whole seconds for libssh2, which takes 1 as 2 */
		p.alive_s = (o->alive_interval_ms + 999) / 1000;
		if (p.alive_s < 2)
			p.alive_s = 2;
		p.alive_count = o->alive_count_max > 0 ? o->alive_count_max : 3;
		/* as OpenSSH: lost at the interval after the last unanswered
		   keepalive */
		p.alive_ms = (int64_t)p.alive_s * 1000 * (p.alive_count + 1);
	}
	p.pubkeyfile = o->pubkeyfile;
	if (p.pubkeyfile == NULL && o->keyfile != NULL) {
		defpub = xasprintf("%s.pub", o->keyfile);
		if (access(defpub, R_OK) == 0)
			p.pubkeyfile = defpub;
	}
	p.chunk = xmalloc(SSHPOOL_CHUNK);
	if (o->flags & SSHPOOL_F_STDIN)
		p.in = xmalloc(SSHPOOL_CHUNK);
	p.w = xcalloc(n == 0 ? 1 : n, sizeof *p.w);
	pfd = xcalloc(n + 1, sizeof *pfd);
	pw = xcalloc(n == 0 ? 1 : n, sizeof *pw);
	for (i = 0; i < n; i++) {
		p.w[i].idx = i;
		p.w[i].t = &targets[i];
		p.w[i].r = &results[i];
		p.w[i].fd = -1;
	}
	if ((rc = validate(&p, targets, n, o, conn != NULL, err)) != 0 ||
	    (rc = libssh2_ready(err)) != 0)
		goto out;

	for (;;) {
		int64_t now, wake;
		nfds_t np = 0;
		int timeout, want_in;

		if (o->abort != NULL && *o->abort && !p.aborted) {
			p.aborted = 1;
			p.stopping = 1;
		}
		/* stop what runs when aborting or failing fast */
		if (p.stopping)
			for (i = 0; i < n; i++)
				if (p.w[i].st != W_IDLE && p.w[i].st != W_DONE)
					finish(&p, &p.w[i], SSHPOOL_S_ABORTED,
					    "worker %d: %s", p.w[i].t->worker,
					    p.aborted ? "interrupted"
					              : "stopped after another "
					                "worker failed");
		/* fill the window */
		active = 0;
		for (i = 0; i < n; i++)
			if (p.w[i].st != W_IDLE && p.w[i].st != W_DONE)
				active++;
		while (!p.stopping && next < n && active < (size_t)p.fanout) {
			struct worker *w = &p.w[next++];

			start_worker(&p, w);
			if (w->st != W_DONE) {
				step(&p, w);
				if (w->st != W_DONE)
					active++;
			}
		}
		if (active == 0 && (next == n || p.stopping))
			break;

		/* timers: deadlines and auth retries */
		now = tpu_now_ms();
		wake = now + SSHPOOL_POLL_MAX_MS;
		for (i = 0; i < n; i++) {
			struct worker *w = &p.w[i];

			if (w->st == W_IDLE || w->st == W_DONE)
				continue;
			if (w->st == W_AUTH_WAIT) {
				if (now >= w->retry_at_ms) {
					start_connect(&p, w);
					step(&p, w);
				} else if (w->retry_at_ms < wake)
					wake = w->retry_at_ms;
				continue;
			}
			if (w->deadline_ms != 0 && now >= w->deadline_ms) {
				if (w->st == W_CONNECT)
					finish(&p, w, SSHPOOL_S_CONNECT_TIMEOUT,
					    "worker %d (%s:%d): connect "
					    "timeout "
					    "after %d ms",
					    w->t->worker, w->t->host,
					    w->t->port, p.connect_ms);
				else if (w->st < W_READ)
					finish(&p, w, SSHPOOL_S_CONNECT_TIMEOUT,
					    "worker %d (%s:%d): no SSH session "
					    "within %d ms (stuck in %s)",
					    w->t->worker, w->t->host,
					    w->t->port, p.connect_ms,
					    w->st == W_HANDSHAKE ? "handshake"
					                         : "auth");
				else
					finish(&p, w, SSHPOOL_S_TIMEOUT,
					    "worker %d: command timed out "
					    "after %d ms",
					    w->t->worker,
					    o->command_timeout_ms);
				continue;
			}
			if (w->deadline_ms != 0 && w->deadline_ms < wake)
				wake = w->deadline_ms;
			if (p.alive_s > 0 && w->st >= W_OPEN &&
			    w->st <= W_WAIT_CLOSED) {
				int next = 0;

				if (now - w->rx_ms >= p.alive_ms) {
					finish(&p, w, SSHPOOL_S_PROTOCOL,
					    "worker %d (%s:%d): connection "
					    "lost: no answer to %d keepalives "
					    "in %lld s",
					    w->t->worker, w->t->host,
					    w->t->port, p.alive_count,
					    (long long)(p.alive_ms / 1000));
					continue;
				}
				/* an error shows on the next read */
				(void)libssh2_keepalive_send(w->s, &next);
				if (next > 0 && now + next * 1000LL < wake)
					wake = now + next * 1000LL;
				if (w->rx_ms + p.alive_ms < wake)
					wake = w->rx_ms + p.alive_ms;
			}
		}

		/* poll the sockets */
		np = 0;
		for (i = 0; i < n; i++) {
			struct worker *w = &p.w[i];
			int dir;

			if (w->st == W_IDLE || w->st == W_DONE ||
			    w->st == W_AUTH_WAIT || w->fd == -1)
				continue;
			pfd[np].fd = w->fd;
			pfd[np].revents = 0;
			if (w->st == W_CONNECT)
				pfd[np].events = POLLOUT;
			else {
				dir = libssh2_session_block_directions(w->s);
				pfd[np].events = 0;
				if (dir & LIBSSH2_SESSION_BLOCK_INBOUND)
					pfd[np].events |= POLLIN;
				if (dir & LIBSSH2_SESSION_BLOCK_OUTBOUND)
					pfd[np].events |= POLLOUT;
				if (pfd[np].events == 0)
					pfd[np].events = POLLIN;
			}
			pw[np++] = w;
		}
		want_in = stdin_wanted(&p);
		if (want_in) {
			pfd[np].fd = o->stdin_fd;
			pfd[np].events = POLLIN;
			pfd[np].revents = 0;
		}
		now = tpu_now_ms();
		timeout = wake > now ? (int)(wake - now) : 0;
		if (poll(pfd, np + (nfds_t)want_in, timeout) < 0 &&
		    errno != EINTR) {
			rc = tpu_error(
			    err, TPU_E_INTERNAL, "poll: %s", strerror(errno));
			p.stopping = 1;
		}
		if (want_in && pfd[np].revents != 0 && !p.stopping) {
			read_stdin(&p);
			for (i = 0; i < n; i++)
				if (p.w[i].st == W_READ)
					step(&p, &p.w[i]);
		}
		for (i = 0; i < np; i++) {
			unsigned long avail = 0;

			if (pw[i]->st == W_DONE)
				continue;
			/* data libssh2 already queued needs no poll event */
			if (pfd[i].revents == 0 &&
			    (pw[i]->st == W_READ || pw[i]->st == W_SH_READ)) {
				LIBSSH2_CHANNEL *ch =
				    pw[i]->st == W_READ ? pw[i]->ch : pw[i]->sh;

				libssh2_channel_window_read_ex(
				    ch, &avail, NULL);
				if (avail == 0 && libssh2_channel_eof(ch) != 1)
					continue;
			} else if (pfd[i].revents == 0)
				continue;
			step(&p, pw[i]);
		}
	}

	for (i = 0; i < n; i++) {
		struct worker *w = &p.w[i];
		size_t k;

		if (w->st == W_IDLE)
			finish(&p, w, SSHPOOL_S_NOT_STARTED, "worker %d: %s",
			    w->t->worker,
			    p.aborted
			        ? "not started (interrupted)"
			        : "not started (stopped after a failure)");
		for (k = 0; k < w->nkeys; k++)
			knownhosts_key_release(&w->keys[k]);
		free(w->hostkey_pref);
	}
	if (rc == 0) /* else poll failed: err is set */
		rc = sshpool_run_status(
		    results, n, p.aborted ? *o->abort : 0, err);
	if (conn != NULL && n == 1 && results[0].status == SSHPOOL_S_OK &&
	    p.w[0].s != NULL) {
		conn->session = p.w[0].s;
		conn->fd = p.w[0].fd;
		conn->target = &targets[0];
		conn->sftp = NULL;
		conn->auth_attempts = results[0].auth_attempts;
		memcpy(conn->hostkey_fp, results[0].hostkey_fp,
		    sizeof conn->hostkey_fp);
		libssh2_session_callback_set(
		    p.w[0].s, LIBSSH2_CALLBACK_RECV, (void *)recv_plain);
		p.w[0].s = NULL;
		p.w[0].fd = -1;
	}
out:
	for (i = 0; i < n; i++) {
		free(p.w[i].cmdline);
		free(p.w[i].bare);
	}
	free(p.chunk);
	free(p.in);
	free(p.w);
	free(pfd);
	free(pw);
	free(defpub);
	return rc;
}

int
sshpool_run(const struct sshpool_target *targets, size_t n,
    const struct sshpool_opts *o, struct sshpool_result *results,
    struct tpu_err *err)
{
	return run_pool(targets, n, o, results, NULL, err);
}

int
sshpool_connect(const struct sshpool_target *t, const struct sshpool_opts *o,
    struct sshpool_conn *conn, struct sshpool_result *r, struct tpu_err *err)
{
	int rc;

	memset(conn, 0, sizeof *conn);
	conn->fd = -1;
	rc = run_pool(t, 1, o, r, conn, err);
	conn->abort = o->abort;
	if (rc == 0 && conn->session == NULL)
		rc = tpu_error(err, TPU_E_INTERNAL, "no session to hand over");
	if (rc != 0 && r->msg[0] != '\0')
		tpu_error(err, rc, "%s", r->msg);
	return rc;
}

static int sftp_shutdown(struct sshpool_conn *);

int
sshpool_conn_take(struct sshpool_cache *c, const struct sshpool_target *t,
    struct sshpool_conn *conn)
{
	LIBSSH2_SESSION *s;
	LIBSSH2_CHANNEL *sh;
	int fd;

	int auth_attempts;
	char fp[64];

	if (c == NULL || !cache_take_session(
	                     c, t, &s, &sh, &fd, &auth_attempts, fp, sizeof fp))
		return 0;
	if (sh != NULL)
		(void)chan_free(sh); /* else the session's free frees it */
	memset(conn, 0, sizeof *conn);
	conn->auth_attempts = auth_attempts;
	memcpy(conn->hostkey_fp, fp, sizeof conn->hostkey_fp);
	conn->session = s;
	conn->fd = fd;
	conn->target = t;
	libssh2_session_callback_set(
	    s, LIBSSH2_CALLBACK_RECV, (void *)recv_plain);
	return 1;
}

void
sshpool_conn_keep(struct sshpool_cache *c, struct sshpool_conn *conn)
{
	LIBSSH2_SESSION *s = conn->session;

	if (c == NULL || s == NULL || sftp_shutdown(conn) != 0) {
		sshpool_conn_close(conn);
		return;
	}
	/* a run that takes it stamps its worker's reads again */
	libssh2_session_callback_set(
	    s, LIBSSH2_CALLBACK_RECV, (void *)recv_stamp);
	if (!cache_put_session(c, conn->target, s, NULL, conn->fd,
	        conn->auth_attempts, conn->hostkey_fp)) {
		libssh2_session_callback_set(
		    s, LIBSSH2_CALLBACK_RECV, (void *)recv_plain);
		sshpool_conn_close(conn);
		return;
	}
	memset(conn, 0, sizeof *conn);
	conn->fd = -1;
}

void
sshpool_conn_close(struct sshpool_conn *conn)
{
	struct worker w;

	sftp_shutdown(conn);
	memset(&w, 0, sizeof w);
	w.s = conn->session;
	w.fd = conn->fd;
	teardown(&w, 1);
	memset(conn, 0, sizeof *conn);
	conn->fd = -1;
}

/* Wait for the session socket in the directions libssh2 needs. */
static int
wait_session(LIBSSH2_SESSION *s, int fd, int64_t deadline)
{
	struct pollfd pfd = { fd, 0, 0 };
	int dir = libssh2_session_block_directions(s), ms;

	if (dir & LIBSSH2_SESSION_BLOCK_INBOUND)
		pfd.events |= POLLIN;
	if (dir & LIBSSH2_SESSION_BLOCK_OUTBOUND)
		pfd.events |= POLLOUT;
	if (pfd.events == 0)
		pfd.events = POLLIN;
	ms = (int)(deadline - tpu_now_ms());
	if (ms <= 0)
		return -1;
	if (ms > SSHPOOL_POLL_MAX_MS)
		ms = SSHPOOL_POLL_MAX_MS;
	poll(&pfd, 1, ms);
	return 0;
}

int
sshpool_conn_wait(struct sshpool_conn *c, int64_t deadline)
{
	return wait_session(c->session, c->fd, deadline);
}

static void
window_size(int fd, int *cols, int *rows)
{
	struct winsize ws;

	*cols = 80;
	*rows = 24;
	if (ioctl(fd, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 0 && ws.ws_row > 0) {
		*cols = ws.ws_col;
		*rows = ws.ws_row;
	}
}

int
sshpool_shell(struct sshpool_conn *conn, const struct sshpool_shell_opts *so,
    int *exit_status, char signame[32], struct tpu_err *err)
{
	LIBSSH2_SESSION *s = conn->session;
	LIBSSH2_CHANNEL *ch = NULL;
	struct termios saved;
	char *chunk = NULL, inbuf[4096];
	size_t inlen = 0, inoff = 0;
	int raw = 0, rc = 0, cols, rows, in_eof = 0, eof_sent = 0, i;
	int resizing = 0;
	int64_t deadline = tpu_now_ms() + 10000;
	const char *term = so->term != NULL ? so->term : "xterm";
	ssize_t n;

	*exit_status = -1;
	signame[0] = '\0';
	if (s == NULL)
		return tpu_error(err, TPU_E_INTERNAL, "no ssh session");
	chunk = xmalloc(SSHPOOL_CHUNK);
	/* open, pty, shell or command: each step until it stops blocking */
	while ((ch = libssh2_channel_open_session(s)) == NULL) {
		if (libssh2_session_last_errno(s) != LIBSSH2_ERROR_EAGAIN ||
		    wait_session(s, conn->fd, deadline) != 0) {
			rc = tpu_error(err, TPU_E_UNREACHABLE,
			    "cannot open a channel: %s", ssh_errmsg(s));
			goto out;
		}
	}
	window_size(so->out_fd, &cols, &rows);
	if (!so->no_pty) {
		while ((rc = libssh2_channel_request_pty_ex(ch, term,
		            (unsigned)strlen(term), NULL, 0, cols, rows, 0,
		            0)) == LIBSSH2_ERROR_EAGAIN)
			if (wait_session(s, conn->fd, deadline) != 0)
				break;
		if (rc != 0) {
			rc = tpu_error(err, TPU_E_UNREACHABLE,
			    "cannot get a remote terminal: %s", ssh_errmsg(s));
			goto out;
		}
	}
	while ((rc = so->command != NULL
	                 ? libssh2_channel_exec(ch, so->command)
	                 : libssh2_channel_shell(ch)) == LIBSSH2_ERROR_EAGAIN)
		if (wait_session(s, conn->fd, deadline) != 0)
			break;
	if (rc != 0) {
		rc = tpu_error(err, TPU_E_UNREACHABLE,
		    "cannot start the remote shell: %s", ssh_errmsg(s));
		goto out;
	}
	/* raw mode: keys go to the remote side as typed */
	if (!so->no_pty && isatty(so->in_fd) &&
	    tcgetattr(so->in_fd, &saved) == 0) {
		struct termios t = saved;

		cfmakeraw(&t);
		if (tcsetattr(so->in_fd, TCSADRAIN, &t) == 0)
			raw = 1;
	}
	for (;;) {
		struct pollfd pfd[2];
		int dir, got = 0, zero = 0;

		if (so->abort != NULL && *so->abort) {
			rc = tpu_error(err, retry_interrupt_errc(*so->abort),
			    "%s", retry_interrupt_name(*so->abort));
			goto out;
		}
		/* a new window size; a request that would block is
		 * resumed with the same size (libssh2 needs that) */
		if (!resizing && so->winch != NULL && *so->winch) {
			*so->winch = 0;
			window_size(so->out_fd, &cols, &rows);
			resizing = !so->no_pty;
		}
		if (resizing && libssh2_channel_request_pty_size(
		                    ch, cols, rows) != LIBSSH2_ERROR_EAGAIN)
			resizing = 0;
		/* remote to local */
		for (i = 0; i < 2; i++) {
			while ((n = libssh2_channel_read_ex(
			            ch, i, chunk, SSHPOOL_CHUNK)) > 0) {
				got = 1;
				if (tpu_write_all(
				        i == 0 ? so->out_fd
				               : (so->err_fd >= 0 ? so->err_fd
				                                  : so->out_fd),
				        chunk, (size_t)n) != 0) {
					rc = tpu_error(err, TPU_E_IO,
					    "cannot write the output: %s",
					    strerror(errno));
					goto out;
				}
			}
			if (n == 0)
				zero++;
			else if (n != LIBSSH2_ERROR_EAGAIN) {
				rc = tpu_error(err, TPU_E_UNREACHABLE,
				    "connection lost: %s", ssh_errmsg(s));
				goto out;
			}
		}
		if (zero == 2 && libssh2_channel_eof(ch) == 1)
			break;
		if (!got) {
			unsigned long avail = 0;

			libssh2_channel_window_read_ex(ch, &avail, NULL);
			if (avail > 0 || libssh2_channel_eof(ch) == 1)
				got = 1; /* queued in libssh2: go round */
		}
		/* local to remote */
		if (inoff < inlen) {
			n = libssh2_channel_write(
			    ch, inbuf + inoff, inlen - inoff);
			if (n > 0) {
				inoff += (size_t)n;
				got = 1;
			} else if (n != LIBSSH2_ERROR_EAGAIN) {
				rc = tpu_error(err, TPU_E_UNREACHABLE,
				    "connection lost: %s", ssh_errmsg(s));
				goto out;
			}
		}
		if (inoff == inlen && in_eof && !eof_sent) {
			if (libssh2_channel_send_eof(ch) == 0)
				eof_sent = 1;
		}
		if (got)
			continue;
		pfd[0].fd = conn->fd;
		dir = libssh2_session_block_directions(s);
		pfd[0].events = POLLIN;
		if (dir & LIBSSH2_SESSION_BLOCK_OUTBOUND)
			pfd[0].events |= POLLOUT;
		pfd[1].fd = so->in_fd;
		pfd[1].events = (!in_eof && inoff == inlen) ? POLLIN : 0;
		pfd[0].revents = pfd[1].revents = 0;
		if (poll(pfd, 2, SSHPOOL_POLL_MAX_MS) < 0 && errno != EINTR) {
			rc = tpu_error(
			    err, TPU_E_INTERNAL, "poll: %s", strerror(errno));
			goto out;
		}
		if (pfd[1].revents & (POLLIN | POLLHUP | POLLERR)) {
			n = read(so->in_fd, inbuf, sizeof inbuf);
			if (n > 0) {
				inlen = (size_t)n;
				inoff = 0;
			} else if (n == 0 ||
			           (errno != EINTR && errno != EAGAIN))
				in_eof = 1;
		}
	}
	/* close, then read the exit status */
	deadline = tpu_now_ms() + 5000;
	while (libssh2_channel_close(ch) == LIBSSH2_ERROR_EAGAIN)
		if (wait_session(s, conn->fd, deadline) != 0)
			break;
	while (libssh2_channel_wait_closed(ch) == LIBSSH2_ERROR_EAGAIN)
		if (wait_session(s, conn->fd, deadline) != 0)
			break;
	{
		char *sig = NULL;
		size_t siglen = 0;

		libssh2_channel_get_exit_signal(
		    ch, &sig, &siglen, NULL, NULL, NULL, NULL);
		if (sig != NULL && siglen > 0)
			snprintf(signame, 32, "%.*s", (int)siglen, sig);
		else
			*exit_status = libssh2_channel_get_exit_status(ch);
		if (sig != NULL)
			libssh2_free(s, sig);
	}
	rc = 0;
out:
	if (raw)
		tcsetattr(so->in_fd, TCSADRAIN, &saved);
	if (ch != NULL) {
		if (rc != 0)
			shutdown(conn->fd, SHUT_RDWR);
		libssh2_channel_free(ch);
	}
	free(chunk);
	return rc;
}

struct fwd {
	int fd;
	LIBSSH2_CHANNEL *ch;
	char buf[16384]; /* local to remote, not yet written */
	size_t len, off;
	int local_eof, eof_sent;
};

static void
fwd_close(struct fwd *f)
{
	if (f->ch != NULL)
		libssh2_channel_free(f->ch);
	if (f->fd != -1)
		close(f->fd);
	f->ch = NULL;
	f->fd = -1;
}

/* Move what can move for one forwarded connection; -1 when it is over,
 * -2 when the SSH connection itself failed. */
static int
fwd_step(LIBSSH2_SESSION *s, struct fwd *f, char *chunk,
    const struct sshpool_forward_opts *fo)
{
	ssize_t n;
	int i;

	if (f->ch == NULL) {
		f->ch = libssh2_channel_direct_tcpip_ex(
		    s, fo->host, fo->port, "127.0.0.1", 0);
		if (f->ch == NULL)
			return libssh2_session_last_errno(s) ==
			               LIBSSH2_ERROR_EAGAIN
			           ? 0
			           : -1; /* refused by the server: drop this one
			                  */
	}
	for (i = 0; i < 2; i++) {
		while ((n = libssh2_channel_read_ex(
		            f->ch, i, chunk, SSHPOOL_CHUNK)) > 0)
			if (tpu_write_all(f->fd, chunk, (size_t)n) != 0)
				return -1;
		if (n < 0 && n != LIBSSH2_ERROR_EAGAIN)
			return n == LIBSSH2_ERROR_SOCKET_RECV ||
			               n == LIBSSH2_ERROR_SOCKET_DISCONNECT
			           ? -2
			           : -1;
	}
	if (libssh2_channel_eof(f->ch) == 1)
		return -1;
	if (f->off == f->len && !f->local_eof) {
		n = read(f->fd, f->buf, sizeof f->buf);
		if (n > 0) {
			f->len = (size_t)n;
			f->off = 0;
		} else if (n == 0 || (errno != EAGAIN && errno != EINTR))
			f->local_eof = 1;
	}
	while (f->off < f->len) {
		n = libssh2_channel_write(
		    f->ch, f->buf + f->off, f->len - f->off);
		if (n == LIBSSH2_ERROR_EAGAIN)
			break;
		if (n < 0)
			return -1;
		f->off += (size_t)n;
	}
	if (f->local_eof && f->off == f->len && !f->eof_sent &&
	    libssh2_channel_send_eof(f->ch) == 0)
		f->eof_sent = 1;
	return 0;
}

int
sshpool_forward(struct sshpool_conn *conn,
    const struct sshpool_forward_opts *fo, struct tpu_err *err)
{
	LIBSSH2_SESSION *s = conn->session;
	struct fwd *f;
	struct pollfd *pfd;
	char *chunk;
	int max = fo->max_conns > 0 ? fo->max_conns : 64, nf = 0, i, rc = 0;

	if (s == NULL)
		return tpu_error(err, TPU_E_INTERNAL, "no ssh session");
	if (fo->host == NULL || fo->port < 1 || fo->port > 65535)
		return tpu_error(err, TPU_E_USAGE,
		    "invalid forward target '%s' port %d",
		    fo->host ? fo->host : "", fo->port);
	f = xcalloc((size_t)max, sizeof *f);
	pfd = xcalloc((size_t)max + 2, sizeof *pfd);
	chunk = xmalloc(SSHPOOL_CHUNK);
	for (;;) {
		int np = 0;

		if (fo->abort != NULL && *fo->abort) {
			rc = tpu_error(err, retry_interrupt_errc(*fo->abort),
			    "%s", retry_interrupt_name(*fo->abort));
			break;
		}
		for (i = 0; i < nf; i++) {
			int r = fwd_step(s, &f[i], chunk, fo);

			if (r == -2) {
				rc = tpu_error(err, TPU_E_UNREACHABLE,
				    "connection lost: %s", ssh_errmsg(s));
				goto out;
			}
			if (r == -1) {
				fwd_close(&f[i]);
				f[i--] = f[--nf];
			}
		}
		pfd[np].fd = conn->fd;
		pfd[np].events = POLLIN;
		if (libssh2_session_block_directions(s) &
		    LIBSSH2_SESSION_BLOCK_OUTBOUND)
			pfd[np].events |= POLLOUT;
		np++;
		pfd[np].fd = fo->listen_fd;
		pfd[np].events = nf < max ? POLLIN : 0;
		np++;
		for (i = 0; i < nf; i++) {
			pfd[np].fd = f[i].fd;
			pfd[np].events = f[i].off == f[i].len && !f[i].local_eof
			                     ? POLLIN
			                     : 0;
			np++;
		}
		for (i = 0; i < np; i++)
			pfd[i].revents = 0;
		if (poll(pfd, (nfds_t)np, SSHPOOL_POLL_MAX_MS) < 0 &&
		    errno != EINTR) {
			rc = tpu_error(
			    err, TPU_E_INTERNAL, "poll: %s", strerror(errno));
			break;
		}
		if ((pfd[1].revents & POLLIN) && nf < max) {
			int fd = accept4(fo->listen_fd, NULL, NULL,
			    SOCK_NONBLOCK | SOCK_CLOEXEC);

			if (fd != -1) {
				memset(&f[nf], 0, sizeof f[nf]);
				f[nf].fd = fd;
				nf++;
			}
		}
	}
out:
	for (i = 0; i < nf; i++)
		fwd_close(&f[i]);
	free(f);
	free(pfd);
	free(chunk);
	return rc;
}

#define SFTP_IO_TIMEOUT_MS 30000

/* The connection's abort flag is set: TPU_E_INTERRUPTED/TERMINATED. */
static int
sftp_aborted(struct sshpool_conn *c, struct tpu_err *err)
{
	int sig = c->abort != NULL ? *c->abort : 0;

	if (sig == 0)
		return 0;
	return tpu_error(
	    err, retry_interrupt_errc(sig), "%s", retry_interrupt_name(sig));
}

/* Wait for libssh2, failing after SFTP_IO_TIMEOUT_MS without progress. */
static int
sftp_wait(struct sshpool_conn *c, int64_t *deadline, const char *what,
    struct tpu_err *err)
{
	int rc;

	if ((rc = sftp_aborted(c, err)) != 0)
		return rc;
	if (wait_session(c->session, c->fd, *deadline) != 0)
		return tpu_error(err, TPU_E_TRANSIENT,
		    "sftp: no progress for %d s while %s",
		    SFTP_IO_TIMEOUT_MS / 1000, what);
	return 0;
}

static int
sftp_fail(LIBSSH2_SESSION *s, LIBSSH2_SFTP *sftp, const char *what,
    const char *path, struct tpu_err *err)
{
	unsigned long e = sftp != NULL && libssh2_session_last_errno(s) ==
	                                      LIBSSH2_ERROR_SFTP_PROTOCOL
	                      ? libssh2_sftp_last_error(sftp)
	                      : 0;

	if (e == LIBSSH2_FX_NO_SUCH_FILE || e == LIBSSH2_FX_NO_SUCH_PATH)
		return tpu_error(err, TPU_E_NOTFOUND,
		    "sftp: cannot %s '%s': "
		    "no such file or directory",
		    what, path);
	if (e == LIBSSH2_FX_PERMISSION_DENIED)
		return tpu_error(err, TPU_E_PERMISSION,
		    "sftp: cannot %s '%s': permission denied", what, path);
	if (e != 0)
		return tpu_error(err, TPU_E_IO,
		    "sftp: cannot %s '%s': SFTP status %lu", what, path, e);
	return tpu_error(err, TPU_E_UNREACHABLE, "sftp: cannot %s '%s': %s",
	    what, path, ssh_errmsg(s));
}

int
sshpool_sftp_open(struct sshpool_conn *c, struct tpu_err *err)
{
	int64_t deadline = tpu_now_ms() + SFTP_IO_TIMEOUT_MS;
	LIBSSH2_SFTP *sftp;
	int rc;

	if (c->sftp != NULL)
		return 0;
	while ((sftp = libssh2_sftp_init(c->session)) == NULL) {
		if (libssh2_session_last_errno(c->session) !=
		    LIBSSH2_ERROR_EAGAIN)
			return tpu_error(err, TPU_E_UNREACHABLE,
			    "sftp: cannot start the subsystem: %s",
			    ssh_errmsg(c->session));
		if ((rc = sftp_wait(c, &deadline, "starting", err)) != 0)
			return rc;
	}
	c->sftp = sftp;
	return 0;
}

/* End the SFTP subsystem of c, if it was started (5 s at most): 0, or
 * -1 when it did not end cleanly (the session is not to be reused). */
static int
sftp_shutdown(struct sshpool_conn *c)
{
	int64_t deadline = tpu_now_ms() + 5000;
	int rc;

	if (c->sftp == NULL)
		return 0;
	/* not sftp_wait: an abort must not leave the subsystem half-closed
	 * (libssh2 frees it only when the shutdown completes) */
	while ((rc = libssh2_sftp_shutdown(c->sftp)) == LIBSSH2_ERROR_EAGAIN)
		if (wait_session(c->session, c->fd, deadline) != 0)
			break;
	c->sftp = NULL;
	return rc == 0 ? 0 : -1;
}

/* Close one file handle (the subsystem stays for the next file). */
static void
sftp_close(struct sshpool_conn *c, LIBSSH2_SFTP_HANDLE *h)
{
	int64_t deadline = tpu_now_ms() + 5000;

	/* not sftp_wait: after an abort the handle is still closed (libssh2
	 * frees it only when the close completes; it leaked otherwise) */
	if (h != NULL)
		while (libssh2_sftp_close_handle(h) == LIBSSH2_ERROR_EAGAIN)
			if (wait_session(c->session, c->fd, deadline) != 0)
				break;
}

/* Open path; errors name shown (the user's name for a temp file). */
static LIBSSH2_SFTP_HANDLE *
sftp_open(struct sshpool_conn *c, LIBSSH2_SFTP *sftp, const char *path,
    const char *shown, unsigned long flags, long mode, struct tpu_err *err)
{
	LIBSSH2_SFTP_HANDLE *h;
	int64_t deadline = tpu_now_ms() + SFTP_IO_TIMEOUT_MS;

	while ((h = libssh2_sftp_open_ex(sftp, path, (unsigned)strlen(path),
	            flags, mode, LIBSSH2_SFTP_OPENFILE)) == NULL) {
		if (libssh2_session_last_errno(c->session) !=
		    LIBSSH2_ERROR_EAGAIN) {
			sftp_fail(c->session, sftp, "open", shown, err);
			return NULL;
		}
		if (sftp_wait(c, &deadline, "opening", err) != 0)
			return NULL;
	}
	return h;
}

/* Remove a remote file (best effort, 5 s at most). */
static void
sftp_unlink(struct sshpool_conn *c, const char *path)
{
	int64_t deadline = tpu_now_ms() + 5000;

	while (libssh2_sftp_unlink_ex(c->sftp, path, (unsigned)strlen(path)) ==
	       LIBSSH2_ERROR_EAGAIN)
		if (wait_session(c->session, c->fd, deadline) != 0)
			break;
}

/*
 * Rename from to to on the worker, replacing to.  SFTP version 3 (what
 * OpenSSH serves and libssh2 1.10 speaks) refuses to rename over an
 * existing file: then to is removed and the rename tried again.
 */
static int
sftp_rename(struct sshpool_conn *c, const char *from, const char *to,
    int64_t *deadline, struct tpu_err *err)
{
	int rc, tries;

	for (tries = 0; tries < 2; tries++) {
		while ((rc = libssh2_sftp_rename_ex(c->sftp, from,
		            (unsigned)strlen(from), to, (unsigned)strlen(to),
		            LIBSSH2_SFTP_RENAME_OVERWRITE |
		                LIBSSH2_SFTP_RENAME_ATOMIC |
		                LIBSSH2_SFTP_RENAME_NATIVE)) ==
		       LIBSSH2_ERROR_EAGAIN)
			if ((rc = sftp_wait(c, deadline, "renaming", err)) != 0)
				return rc;
		if (rc == 0)
			return 0;
		if (tries == 0)
			sftp_unlink(c, to);
	}
	return sftp_fail(c->session, c->sftp, "rename", to, err);
}

int
sshpool_sftp_put(struct sshpool_conn *c, const char *local, const char *remote,
    struct tpu_err *err)
{
	LIBSSH2_SFTP *sftp;
	LIBSSH2_SFTP_HANDLE *h = NULL;
	LIBSSH2_SFTP_ATTRIBUTES attrs;
	struct stat st;
	char *chunk = NULL, *tmp = NULL;
	int fd, rc = 0;
	int64_t deadline;
	ssize_t n, w;
	size_t off;

	if ((fd = open(local, O_RDONLY | O_CLOEXEC)) == -1)
		return tpu_error(err,
		    errno == ENOENT ? TPU_E_NOTFOUND : TPU_E_IO,
		    "cannot open '%s': %s", local, strerror(errno));
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
		rc = tpu_error(
		    err, TPU_E_INVALID, "'%s' is not a regular file", local);
		goto out;
	}
	if ((rc = sshpool_sftp_open(c, err)) != 0)
		goto out;
	sftp = c->sftp;
	/* a temp name beside the destination, renamed when complete: the
	 * destination never holds a partial file */
	tmp = xasprintf("%s.tpuctl-tmp", remote);
	if ((h = sftp_open(c, sftp, tmp, remote,
	         LIBSSH2_FXF_WRITE | LIBSSH2_FXF_CREAT | LIBSSH2_FXF_TRUNC,
	         (long)(st.st_mode & 0777), err)) == NULL) {
		rc = err->code != TPU_OK ? err->code : TPU_E_IO;
		free(tmp);
		tmp = NULL; /* not created */
		goto out;
	}
	chunk = xmalloc(SSHPOOL_CHUNK);
	deadline = tpu_now_ms() + SFTP_IO_TIMEOUT_MS;
	while ((n = read(fd, chunk, SSHPOOL_CHUNK)) != 0) {
		if (n < 0) {
			if (errno == EINTR)
				continue;
			rc = tpu_error(err, TPU_E_IO, "cannot read '%s': %s",
			    local, strerror(errno));
			goto out;
		}
		if ((rc = sftp_aborted(c, err)) != 0)
			goto out;
		for (off = 0; off < (size_t)n;) {
			w = libssh2_sftp_write(h, chunk + off, (size_t)n - off);
			if (w == LIBSSH2_ERROR_EAGAIN) {
				if ((rc = sftp_wait(
				         c, &deadline, "writing", err)) != 0)
					goto out;
				continue;
			}
			if (w < 0) {
				rc = sftp_fail(
				    c->session, sftp, "write", remote, err);
				goto out;
			}
			off += (size_t)w;
			deadline = tpu_now_ms() + SFTP_IO_TIMEOUT_MS;
			if (c->on_bytes != NULL)
				c->on_bytes(c->bytes_arg, (int64_t)w);
		}
	}
	/* the mode exactly, whatever the remote umask */
	memset(&attrs, 0, sizeof attrs);
	attrs.flags = LIBSSH2_SFTP_ATTR_PERMISSIONS;
	attrs.permissions = st.st_mode & 07777;
	while ((rc = libssh2_sftp_fsetstat(h, &attrs)) == LIBSSH2_ERROR_EAGAIN)
		if ((rc = sftp_wait(c, &deadline, "setting the mode", err)) !=
		    0)
			goto out;
	if (rc != 0) {
		rc = sftp_fail(c->session, sftp, "chmod", remote, err);
		goto out;
	}
	sftp_close(c, h);
	h = NULL;
	rc = sftp_rename(c, tmp, remote, &deadline, err);
out:
	sftp_close(c, h);
	if (rc != 0 && tmp != NULL && rc != TPU_E_UNREACHABLE)
		sftp_unlink(c, tmp);
	free(tmp);
	free(chunk);
	close(fd);
	return rc;
}

static int
sftp_get(struct sshpool_conn *c, const char *remote, const char *local,
    int replace_links, struct tpu_err *err)
{
	LIBSSH2_SFTP *sftp;
	LIBSSH2_SFTP_HANDLE *h = NULL;
	LIBSSH2_SFTP_ATTRIBUTES attrs;
	char *chunk = NULL, *tmp = NULL;
	int fd = -1, rc = 0, in_place = 0;
	struct stat lst;
	int64_t deadline;
	ssize_t n;

	if ((rc = sshpool_sftp_open(c, err)) != 0)
		goto out;
	sftp = c->sftp;
	if ((h = sftp_open(
	         c, sftp, remote, remote, LIBSSH2_FXF_READ, 0, err)) == NULL) {
		rc = err->code != TPU_OK ? err->code : TPU_E_IO;
		goto out;
	}
	deadline = tpu_now_ms() + SFTP_IO_TIMEOUT_MS;
	while (
	    (rc = libssh2_sftp_fstat_ex(h, &attrs, 0)) == LIBSSH2_ERROR_EAGAIN)
		if ((rc = sftp_wait(c, &deadline, "reading the mode", err)) !=
		    0)
			goto out;
	if (rc != 0) {
		rc = sftp_fail(c->session, sftp, "stat", remote, err);
		goto out;
	}
	if (fsutil_dest_kind(local) == FSUTIL_DEST_IN_PLACE &&
	    !(replace_links && lstat(local, &lst) == 0 &&
	        S_ISLNK(lst.st_mode))) {
		/* /dev/stdout, a FIFO, a device: one stream, never replaced */
		if ((fd = open(local,
		         O_WRONLY | O_TRUNC | O_NOCTTY | O_CLOEXEC)) == -1) {
			rc = tpu_error(err, TPU_E_IO, "cannot open '%s': %s",
			    local, strerror(errno));
			goto out;
		}
		in_place = 1;
	} else {
		/* R7: a temp file beside the destination, renamed when complete
		 */
		tmp = xasprintf("%s.tpuctl-tmp", local);
		if ((fd = open(tmp,
		         O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC,
		         0600)) == -1) {
			rc = tpu_error(err, TPU_E_IO, "cannot create '%s': %s",
			    tmp, strerror(errno));
			goto out;
		}
	}
	chunk = xmalloc(SSHPOOL_CHUNK);
	for (;;) {
		if ((rc = sftp_aborted(c, err)) != 0)
			goto out;
		n = libssh2_sftp_read(h, chunk, SSHPOOL_CHUNK);
		if (n == LIBSSH2_ERROR_EAGAIN) {
			if ((rc = sftp_wait(c, &deadline, "reading", err)) != 0)
				goto out;
			continue;
		}
		if (n < 0) {
			rc = sftp_fail(c->session, sftp, "read", remote, err);
			goto out;
		}
		if (n == 0)
			break;
		if (tpu_write_all(fd, chunk, (size_t)n) != 0) {
			rc = tpu_error(err, TPU_E_IO, "cannot write '%s': %s",
			    in_place ? local : tmp, strerror(errno));
			goto out;
		}
		deadline = tpu_now_ms() + SFTP_IO_TIMEOUT_MS;
		if (c->on_bytes != NULL)
			c->on_bytes(c->bytes_arg, (int64_t)n);
	}
	if (in_place) {
		/* a pipe or a device cannot be synced (EINVAL) */
		if (fsync(fd) != 0 && errno != EINVAL && errno != EROFS)
			rc = tpu_error(err, TPU_E_IO, "cannot write '%s': %s",
			    local, strerror(errno));
		if (close(fd) != 0 && rc == 0 && errno != EINTR)
			rc = tpu_error(err, TPU_E_IO, "cannot write '%s': %s",
			    local, strerror(errno));
		fd = -1;
		goto out;
	}
	if ((attrs.flags & LIBSSH2_SFTP_ATTR_PERMISSIONS) &&
	    fchmod(fd, (mode_t)(attrs.permissions & 0777)) != 0) {
		rc = tpu_error(err, TPU_E_IO, "cannot chmod '%s': %s", tmp,
		    strerror(errno));
		goto out;
	}
	if (fsync(fd) != 0 || close(fd) != 0) {
		fd = -1;
		rc = tpu_error(err, TPU_E_IO, "cannot write '%s': %s", tmp,
		    strerror(errno));
		goto out;
	}
	fd = -1;
	if (rename(tmp, local) != 0) {
		rc = tpu_error(err, TPU_E_IO, "cannot rename '%s' to '%s': %s",
		    tmp, local, strerror(errno));
		goto out;
	}
out:
	sftp_close(c, h);
	if (fd != -1)
		close(fd);
	if (rc != 0 && tmp != NULL)
		unlink(tmp);
	free(tmp);
	free(chunk);
	return rc;
}

int
sshpool_sftp_get(struct sshpool_conn *c, const char *remote, const char *local,
    struct tpu_err *err)
{
	return sftp_get(c, remote, local, 0, err);
}

int
sshpool_sftp_get_tree(struct sshpool_conn *c, const char *remote,
    const char *local, struct tpu_err *err)
{
	return sftp_get(c, remote, local, 1, err);
}
