/*
 * The SSH fan-out engine (see sshpool.h): one poll() loop, one state
 * machine per worker, every libssh2 call non-blocking and driven until
 * it would block.  libssh2 1.10 has no timeouts of its own: every
 * deadline here is ours.
 */
#include <sys/socket.h>
#include <sys/types.h>

#include <netinet/in.h>
#include <netinet/tcp.h>

#include <errno.h>
#include <netdb.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <libssh2.h>

#include "knownhosts.h"
#include "sshpool.h"
#include "util.h"
#include "xmalloc.h"

#define SSHPOOL_CHUNK 32768
#define SSHPOOL_POLL_MAX_MS 200
#define SSHPOOL_MAX_KEYS 16

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
	int zero[2]; /* stream read returned 0 (EOF) */
};

struct pool {
	const struct sshpool_opts *o;
	struct worker *w;
	size_t n;
	char *chunk;
	const char *pubkeyfile;
	int fanout, connect_ms, attempts, retry_ms, retry_max_ms;
	size_t line_max;
	int stopping; /* fail-fast or abort: start nothing, stop all */
	int aborted;
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

/* Free the session and socket without ever blocking. */
static void
teardown(struct worker *w, int graceful)
{
	int i;

	if (!graceful && w->fd != -1)
		shutdown(w->fd, SHUT_RDWR); /* all further I/O fails fast */
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

static int
new_session(struct pool *p, struct worker *w)
{
	w->s = libssh2_session_init();
	if (w->s == NULL) {
		finish(p, w, SSHPOOL_S_PROTOCOL,
		    "worker %d: cannot create an SSH session", w->t->worker);
		return -1;
	}
	libssh2_session_callback_set(
	    w->s, LIBSSH2_CALLBACK_SEND, (void *)send_nosig);
	libssh2_session_callback_set(
	    w->s, LIBSSH2_CALLBACK_RECV, (void *)recv_plain);
	libssh2_session_set_blocking(w->s, 0);
	if (libssh2_session_method_pref(w->s, LIBSSH2_METHOD_HOSTKEY,
	        w->hostkey_pref != NULL ? w->hostkey_pref
	                                : HOSTKEY_DEFAULT_PREF) != 0)
		libssh2_session_method_pref(
		    w->s, LIBSSH2_METHOD_HOSTKEY, HOSTKEY_DEFAULT_PREF);
	return 0;
}

/* The host-key check, right after the handshake; 0 when trusted. */
static int
check_hostkey(struct pool *p, struct worker *w)
{
	const char *blob;
	size_t len, i;
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
	enc = knownhosts_b64encode((const unsigned char *)blob, len);
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
	for (i = 0; i < w->nkeys; i++) {
		if (w->keys[i].len == len &&
		    memcmp(w->keys[i].blob, blob, len) == 0)
			return 0;
		if (strncmp(w->keys[i].type, tyname, strlen(w->keys[i].type)) ==
		    0)
			best = i;
	}
	knownhosts_fingerprint(w->keys[best].blob, w->keys[best].len, want);
	finish(p, w, SSHPOOL_S_HOSTKEY_MISMATCH,
	    "worker %d (%s:%d): host key mismatch: expected %s %s, got %.*s "
	    "%s; refusing to authenticate",
	    w->t->worker, w->t->host, w->t->port, w->keys[best].type, want,
	    (int)strcspn(tyname, " "), tyname, w->r->hostkey_fp);
	return -1;
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
		    "'%s' after %d attempt%s",
		    w->t->worker, w->t->host, w->t->port, w->t->user,
		    w->r->auth_attempts, w->r->auth_attempts == 1 ? "" : "s");
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

/* Drive w until libssh2 would block or w is done. */
static void
step(struct pool *p, struct worker *w)
{
	ssize_t n;
	int rc, i, again;

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
			rc = libssh2_userauth_publickey_fromfile_ex(w->s,
			    w->t->user, (unsigned)strlen(w->t->user),
			    p->pubkeyfile, p->o->keyfile, p->o->passphrase);
			if (rc == LIBSSH2_ERROR_EAGAIN)
				return;
			if (rc != 0) {
				auth_failed(p, w, rc);
				return;
			}
			w->st = W_OPEN;
			break;
		case W_OPEN:
			w->ch = libssh2_channel_open_session(w->s);
			if (w->ch == NULL) {
				if (libssh2_session_last_errno(w->s) ==
				    LIBSSH2_ERROR_EAGAIN)
					return;
				finish(p, w, SSHPOOL_S_PROTOCOL,
				    "worker %d: cannot open a channel: %s",
				    w->t->worker, ssh_errmsg(w->s));
				return;
			}
			w->st = W_EXEC;
			break;
		case W_EXEC:
			rc = libssh2_channel_exec(w->ch, p->o->command);
			if (rc == LIBSSH2_ERROR_EAGAIN)
				return;
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
			if (again) {
				w->zero[0] = w->zero[1] = 0;
				break;
			}
			if (libssh2_channel_eof(w->ch) == 1 && w->zero[0] &&
			    w->zero[1]) {
				flush_lines(p, w);
				w->st = W_CLOSE;
				break;
			}
			w->zero[0] = w->zero[1] = 0;
			return;
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
	start_connect(p, w);
}

static int
validate(const struct sshpool_target *t, size_t n, const struct sshpool_opts *o,
    struct tpu_err *err)
{
	size_t i;

	if (o->command == NULL || o->command[0] == '\0')
		return tpu_error(err, TPU_E_USAGE, "no remote command given");
	if (o->keyfile == NULL)
		return tpu_error(err, TPU_E_USAGE, "no ssh key file given");
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

static int
libssh2_ready(struct tpu_err *err)
{
	static int done;

	if (!done) {
		if (libssh2_init(0) != 0)
			return tpu_error(
			    err, TPU_E_INTERNAL, "libssh2_init failed");
		done = 1;
	}
	return 0;
}

int
sshpool_run(const struct sshpool_target *targets, size_t n,
    const struct sshpool_opts *o, struct sshpool_result *results,
    struct tpu_err *err)
{
	struct pool p;
	struct pollfd *pfd = NULL;
	struct worker **pw = NULL;
	size_t i, next = 0, active, nfail = 0, nunreach = 0, nok = 0;
	char *defpub = NULL;
	int rc;

	memset(&p, 0, sizeof p);
	for (i = 0; i < n; i++) {
		memset(&results[i], 0, sizeof results[i]);
		results[i].exit_status = -1;
	}
	if ((rc = validate(targets, n, o, err)) != 0)
		return rc;
	if ((rc = libssh2_ready(err)) != 0)
		return rc;
	p.o = o;
	p.n = n;
	p.fanout = o->fanout > 0 ? o->fanout : 64;
	p.connect_ms =
	    o->connect_timeout_ms > 0 ? o->connect_timeout_ms : 10000;
	p.attempts = o->auth_attempts > 0 ? o->auth_attempts : 1;
	p.retry_ms = o->auth_retry_ms > 0 ? o->auth_retry_ms : 1000;
	p.retry_max_ms = o->auth_retry_max_ms > 0 ? o->auth_retry_max_ms : 5000;
	p.line_max = o->line_max > 0 ? o->line_max : 16384;
	p.pubkeyfile = o->pubkeyfile;
	if (p.pubkeyfile == NULL) {
		defpub = xasprintf("%s.pub", o->keyfile);
		if (access(defpub, R_OK) == 0)
			p.pubkeyfile = defpub;
	}
	p.chunk = xmalloc(SSHPOOL_CHUNK);
	p.w = xcalloc(n == 0 ? 1 : n, sizeof *p.w);
	pfd = xcalloc(n == 0 ? 1 : n, sizeof *pfd);
	pw = xcalloc(n == 0 ? 1 : n, sizeof *pw);
	for (i = 0; i < n; i++) {
		p.w[i].idx = i;
		p.w[i].t = &targets[i];
		p.w[i].r = &results[i];
		p.w[i].fd = -1;
	}

	for (;;) {
		int64_t now, wake;
		nfds_t np = 0;
		int timeout;

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
		now = tpu_now_ms();
		timeout = wake > now ? (int)(wake - now) : 0;
		if (poll(pfd, np, timeout) < 0 && errno != EINTR) {
			rc = tpu_error(
			    err, TPU_E_INTERNAL, "poll: %s", strerror(errno));
			p.stopping = 1;
		}
		for (i = 0; i < np; i++)
			if (pfd[i].revents != 0 && pw[i]->st != W_DONE)
				step(&p, pw[i]);
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
		if (results[i].status == SSHPOOL_S_OK)
			nok++;
		else {
			nfail++;
			if (sshpool_status_unreachable(results[i].status))
				nunreach++;
		}
	}
	if (rc != 0)
		;
	else if (p.aborted)
		rc = tpu_error(err, TPU_E_INTERRUPTED,
		    "interrupted: %zu of %zu workers finished", nok, n);
	else if (nfail == 0)
		rc = 0;
	else if (nunreach == n)
		rc = tpu_error(err, TPU_E_UNREACHABLE,
		    "no worker could be reached or trusted (%zu of %zu)",
		    nunreach, n);
	else
		rc = tpu_error(
		    err, TPU_E_PARTIAL, "%zu of %zu workers failed", nfail, n);
	free(p.chunk);
	free(p.w);
	free(pfd);
	free(pw);
	free(defpub);
	return rc;
}
