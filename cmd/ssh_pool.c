/*
 * The warm pool of issue 18: "tpuctl ssh-pool list|stop", the
 * connection holder ("tpuctl ssh-pool holder", started by tpuctl
 * itself) and the client side that "tpuctl ssh --worker=..." uses
 * through fanout_run (fanout_warm_run in cmd/fanout.h).
 *
 * The holder of a slice serves one client at a time on its socket
 * (src/holder.h): HELLO, then RUN, LIST or STOP (src/holdproto.h).  A
 * RUN is one sshpool_run with a session cache (src/sshpool.h): the
 * workers' authenticated sessions stay open between commands, and
 * every on_output and result of the run goes back to the client, which
 * feeds them to the same rendering as a cold run.  It exits after the
 * persist time without a client, on STOP, or when a client's HELLO
 * names another node id (the node was recreated).
 */
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "buf.h"
#include "cJSON.h"
#include "cmd.h"
#include "config.h"
#include "fanout.h"
#include "holder.h"
#include "holdproto.h"
#include "log.h"
#include "retry.h"
#include "ssh_pool.h"
#include "sshcmd.h"
#include "util.h"
#include "xmalloc.h"

/* Buffered frame reading from a socket. */
struct frd {
	int fd;
	struct buf b;
	size_t off;
};

static void
frd_init(struct frd *r, int fd)
{
	r->fd = fd;
	buf_init(&r->b, 0);
	r->off = 0;
}

/*
 * The next frame (valid until the next call): 0; TPU_E_UNREACHABLE when
 * the peer closed or failed; TPU_E_TRANSIENT after timeout_ms (-1:
 * none) or when *abort is set; TPU_E_API for bytes that are no frame.
 */
static int
frd_next(struct frd *r, struct holdproto_frame *f, int timeout_ms,
    volatile sig_atomic_t *abort, struct tpu_err *err)
{
	int64_t deadline = timeout_ms >= 0 ? tpu_now_ms() + timeout_ms : 0;
	char chunk[65536];

	for (;;) {
		size_t used;
		int rc = holdproto_frame_next(
		    r->b.data + r->off, r->b.len - r->off, f, &used, err);
		struct pollfd p = { r->fd, POLLIN, 0 };
		ssize_t n;
		int wait = 200;

		if (rc < 0)
			return rc;
		if (rc == 1) {
			r->off += used;
			return 0;
		}
		if (r->off > 0) {
			memmove(
			    r->b.data, r->b.data + r->off, r->b.len - r->off);
			r->b.len -= r->off;
			r->off = 0;
		}
		if (abort != NULL && *abort)
			return tpu_error(err, TPU_E_TRANSIENT, "interrupted");
		if (timeout_ms >= 0) {
			int64_t left = deadline - tpu_now_ms();

			if (left <= 0)
				return tpu_error(err, TPU_E_TRANSIENT,
				    "connection holder: no answer");
			if (left < wait)
				wait = (int)left;
		}
		if (poll(&p, 1, wait) <= 0)
			continue;
		n = read(r->fd, chunk, sizeof chunk);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return tpu_error(err, TPU_E_UNREACHABLE,
			    "connection holder: connection %s",
			    n == 0 ? "closed" : strerror(errno));
		buf_append(&r->b, chunk, (size_t)n);
	}
}

/* Send b and empty it: 0 or -1 (the peer is gone). */
static int
send_buf(int fd, struct buf *b)
{
	size_t off = 0;

	while (off < b->len) {
		ssize_t w = send(fd, b->data + off, b->len - off, MSG_NOSIGNAL);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0) {
			buf_clear(b);
			return -1;
		}
		off += (size_t)w;
	}
	buf_clear(b);
	return 0;
}

/* The pool's key of a node: "project/zone/node". */
static char *
slice_key(const char *project, const char *zone, const char *node)
{
	return xasprintf("%s/%s/%s", project, zone, node);
}

/* --- the holder ------------------------------------------------------- */

/*
 * The holder serves its clients concurrently, one thread each (a
 * command started while another runs does not wait for it); their runs
 * share the session cache, which gives a held session to one run at a
 * time.
 */
struct holder {
	char *slice, *node_id;
	char identity[HOLDER_IDENTITY_MAX]; /* holder_identity of po */
	struct sshpool_opts po;             /* what every run shares */
	struct sshpool_cache *cache;
	int64_t idle_ms;
	int wake[2]; /* a client thread wakes the accept loop */
	pthread_mutex_t mu;
	pthread_cond_t cv;
	int nclients; /* threads serving a client */
	int exiting;  /* STOP, or a HELLO with a new node id */
	int64_t last_ms;
};

/* One client being served, by its own thread. */
struct hclient {
	struct holder *h;
	int fd;
	struct sshpool_opts po;
	pthread_mutex_t send_mu; /* the run's frames and the keepalives */
	int client_gone;         /* a send failed */
	volatile sig_atomic_t abort;
	int stop[2]; /* the run ended: the watcher goes */
	struct buf out;
};

/* One byte into a wake-up pipe (full: it is awake anyway). */
static void
wake(int fd)
{
	while (write(fd, "x", 1) < 0 && errno == EINTR)
		;
}

/* Send b to the client under its send lock; a failure stops the run. */
static void
hc_send(struct hclient *c, struct buf *b)
{
	pthread_mutex_lock(&c->send_mu);
	if (!c->client_gone && send_buf(c->fd, b) != 0) {
		c->client_gone = 1;
		c->abort = SIGPIPE;
	}
	buf_clear(b);
	pthread_mutex_unlock(&c->send_mu);
}

static void
h_on_output(
    void *arg, size_t idx, int stream, const char *data, size_t len, int flags)
{
	struct hclient *c = arg;

	if (c->client_gone)
		return;
	holdproto_put_out(&c->out, (uint32_t)idx, (uint32_t)stream,
	    (uint32_t)flags, data, len);
	hc_send(c, &c->out);
}

static void
h_on_done(void *arg, size_t idx, const struct sshpool_result *r)
{
	struct hclient *c = arg;
	struct holdproto_done d;

	if (c->client_gone)
		return;
	memset(&d, 0, sizeof d);
	d.idx = (uint32_t)idx;
	d.status = (uint32_t)r->status;
	d.exit_status = r->exit_status;
	memcpy(d.signal, r->signal, sizeof d.signal);
	d.duration_ms = r->duration_ms > 0 ? (uint32_t)r->duration_ms : 0;
	d.auth_attempts = (uint32_t)r->auth_attempts;
	memcpy(d.hostkey_fp, r->hostkey_fp, sizeof d.hostkey_fp);
	memcpy(d.msg, r->msg, sizeof d.msg);
	holdproto_put_done(&c->out, &d);
	hc_send(c, &c->out);
}

/*
 * During a run: a client that goes away (Ctrl-C, kill) stops it (its
 * channels close and the workers' watchers end the commands), and a
 * PING every HOLDPROTO_KEEPALIVE_MS tells the client the holder is
 * alive.  Ends as soon as the run does (c->stop).
 */
static void *
h_watch(void *arg)
{
	struct hclient *c = arg;
	struct buf ping;
	int64_t next = tpu_now_ms() + HOLDPROTO_KEEPALIVE_MS;

	buf_init(&ping, 0);
	for (;;) {
		struct pollfd p[2] = { { c->fd, POLLIN, 0 },
			{ c->stop[0], POLLIN, 0 } };
		int64_t left = next - tpu_now_ms();
		int n = poll(p, 2, left > 0 ? (int)left : 0);

		if (n > 0 && p[1].revents != 0)
			break;
		if (n > 0 && (p[0].revents & (POLLIN | POLLHUP | POLLERR))) {
			char ch;

			if (recv(c->fd, &ch, 1, MSG_PEEK | MSG_DONTWAIT) != 1) {
				c->abort = SIGPIPE;
				break;
			}
			/* a stray byte: refused after the run; wait */
			(void)poll(&p[1], 1, 100);
		}
		if (tpu_now_ms() >= next) {
			size_t start;

			holdproto_begin(&ping, HOLDPROTO_PING, &start);
			(void)holdproto_end(&ping, start);
			hc_send(c, &ping);
			next = tpu_now_ms() + HOLDPROTO_KEEPALIVE_MS;
		}
	}
	buf_release(&ping);
	return NULL;
}

static void
h_run(struct hclient *c, const struct holdproto_frame *f)
{
	struct holdproto_run run;
	struct sshpool_target *t;
	struct sshpool_result *res;
	struct tpu_err err;
	pthread_t th;
	size_t i;
	int rc, watching;

	tpu_err_init(&err);
	if (holdproto_get_run(f, &run, &err) != 0) {
		holdproto_put_text(&c->out, HOLDPROTO_ERROR, err.msg);
		hc_send(c, &c->out);
		return;
	}
	t = xcalloc(run.ntargets + 1, sizeof *t);
	res = xcalloc(run.ntargets + 1, sizeof *res);
	for (i = 0; i < run.ntargets; i++) {
		t[i].worker = (int)run.targets[i].worker;
		t[i].host = run.targets[i].host;
		t[i].port = (int)run.targets[i].port;
		t[i].user = run.targets[i].user;
		t[i].hostkeys = (const char *const *)run.targets[i].hostkeys;
		t[i].nhostkeys = run.targets[i].nhostkeys;
		t[i].command = run.targets[i].command;
	}
	c->po = c->h->po;
	c->po.flags =
	    (int)(run.flags & (SSHPOOL_F_LINES | SSHPOOL_F_FAIL_FAST |
	                          SSHPOOL_F_AGENT | SSHPOOL_F_NO_WATCH |
	                          SSHPOOL_F_SHELL | SSHPOOL_F_SHELL_ONCE));
	c->po.fanout = (int)run.fanout;
	c->po.command_timeout_ms = (int)run.timeout_ms;
	c->po.on_output = h_on_output;
	c->po.on_done = h_on_done;
	c->po.arg = c;
	c->po.abort = &c->abort;
	c->abort = 0;
	c->client_gone = 0;
	watching = pipe2(c->stop, O_CLOEXEC) == 0;
	if (watching && pthread_create(&th, NULL, h_watch, c) != 0) {
		close(c->stop[0]);
		close(c->stop[1]);
		watching = 0;
	}
	rc = sshpool_run(t, run.ntargets, &c->po, res, &err);
	if (!c->client_gone) {
		holdproto_put_end(&c->out, rc);
		hc_send(c, &c->out);
	}
	if (watching) {
		wake(c->stop[1]);
		pthread_join(th, NULL);
		close(c->stop[0]);
		close(c->stop[1]);
	}
	for (i = 0; i < run.ntargets; i++)
		sshpool_result_release(&res[i]);
	free(res);
	free(t);
	holdproto_run_release(&run);
}

/* Set the holder exiting and wake its accept loop. */
static void
h_exit(struct holder *h)
{
	pthread_mutex_lock(&h->mu);
	h->exiting = 1;
	wake(h->wake[1]);
	pthread_mutex_unlock(&h->mu);
}

static void
h_client(struct hclient *c)
{
	struct holder *h = c->h;
	struct frd r;
	struct holdproto_frame f;
	struct holdproto_hello hello, me;
	struct tpu_err err;

	tpu_err_init(&err);
	frd_init(&r, c->fd);
	if (frd_next(&r, &f, 5000, NULL, &err) != 0 ||
	    holdproto_get_hello(&f, &hello, &err) != 0)
		goto out;
	if (hello.version != HOLDPROTO_VERSION ||
	    (hello.slice[0] != '\0' && strcmp(hello.slice, h->slice) != 0)) {
		holdproto_put_text(&c->out, HOLDPROTO_ERROR,
		    "connection holder: another protocol version or slice");
		hc_send(c, &c->out);
		/* a newer tpuctl: make room for a holder it can talk to */
		if (hello.version > HOLDPROTO_VERSION)
			h_exit(h);
		holdproto_hello_release(&hello);
		goto out;
	}
	if (hello.node_id[0] != '\0' &&
	    strcmp(hello.node_id, h->node_id) != 0) {
		/* the node was recreated: these sessions are not its */
		holdproto_put_text(&c->out, HOLDPROTO_ERROR,
		    "connection holder: the node was recreated");
		hc_send(c, &c->out);
		holdproto_hello_release(&hello);
		h_exit(h);
		goto out;
	}
	if (hello.identity[0] != '\0' &&
	    strcmp(hello.identity, h->identity) != 0) {
		/* another key file, agent use or connect timeout: these
		 * sessions were not authenticated as the client would; make
		 * room for a holder of the client's identity */
		holdproto_put_text(&c->out, HOLDPROTO_ERROR,
		    "connection holder: sessions of another key or connect "
		    "timeout");
		hc_send(c, &c->out);
		holdproto_hello_release(&hello);
		h_exit(h);
		goto out;
	}
	holdproto_hello_release(&hello);
	me.version = HOLDPROTO_VERSION;
	me.slice = h->slice;
	me.node_id = h->node_id;
	me.identity = h->identity;
	holdproto_put_hello(&c->out, &me);
	hc_send(c, &c->out);
	if (c->client_gone || frd_next(&r, &f, 5000, NULL, &err) != 0)
		goto out;
	if (f.type == HOLDPROTO_RUN)
		h_run(c, &f);
	else if (f.type == HOLDPROTO_LIST) {
		char *line = xasprintf("%s\t%s\t%ld\t%zu\t%lld", h->slice,
		    h->node_id[0] != '\0' ? h->node_id : "-", (long)getpid(),
		    sshpool_cache_count(h->cache),
		    (long long)h->idle_ms / 1000);

		holdproto_put_text(&c->out, HOLDPROTO_INFO, line);
		holdproto_put_end(&c->out, 0);
		hc_send(c, &c->out);
		free(line);
	} else if (f.type == HOLDPROTO_STOP) {
		holdproto_put_end(&c->out, 0);
		hc_send(c, &c->out);
		h_exit(h);
	}
out:
	buf_release(&r.b);
}

static void *
h_client_thread(void *arg)
{
	struct hclient *c = arg;
	struct holder *h = c->h;

	h_client(c);
	close(c->fd);
	buf_release(&c->out);
	pthread_mutex_destroy(&c->send_mu);
	free(c);
	pthread_mutex_lock(&h->mu);
	h->nclients--;
	h->last_ms = tpu_now_ms();
	pthread_cond_broadcast(&h->cv);
	wake(h->wake[1]); /* under mu: the pipe outlives the last client */
	pthread_mutex_unlock(&h->mu);
	return NULL;
}

/* Serve fd in a new thread (detached); on failure, in this one. */
static void
h_serve(struct holder *h, int fd)
{
	struct hclient *c = xcalloc(1, sizeof *c);
	pthread_attr_t a;
	pthread_t th;
	int ok;

	c->h = h;
	c->fd = fd;
	pthread_mutex_init(&c->send_mu, NULL);
	buf_init(&c->out, 0);
	pthread_mutex_lock(&h->mu);
	h->nclients++;
	pthread_mutex_unlock(&h->mu);
	pthread_attr_init(&a);
	pthread_attr_setdetachstate(&a, PTHREAD_CREATE_DETACHED);
	ok = pthread_create(&th, &a, h_client_thread, c) == 0;
	pthread_attr_destroy(&a);
	if (!ok)
		(void)h_client_thread(c);
}

static int
holder_exec(struct tpu_ctx *ctx, int argc, char **argv, struct tpu_err *err)
{
	enum {
		O_SLICE = 1,
		O_NODE_ID,
		O_IDLE,
		O_KEY,
		O_CONNECT,
		O_AUTH,
		O_AGENT
	};
	static const struct option opts[] = {
		{ "slice", required_argument, NULL, O_SLICE },
		{ "node-id", required_argument, NULL, O_NODE_ID },
		{ "persist", required_argument, NULL, O_IDLE },
		{ "key-file", required_argument, NULL, O_KEY },
		{ "connect-timeout-ms", required_argument, NULL, O_CONNECT },
		{ "auth-attempts", required_argument, NULL, O_AUTH },
		{ "agent", no_argument, NULL, O_AGENT },
		{ NULL, 0, NULL, 0 },
	};
	struct holder h;
	char dir[HOLDER_PATH_MAX], name[32], *sock;
	long long secs = 0;
	int ch, rc, lock_fd = -1, lfd = -1, agent = 0;

	(void)ctx;
	memset(&h, 0, sizeof h);
	h.po.auth_attempts = 1;
	while ((ch = getopt_long(argc, argv, "+", opts, NULL)) != -1) {
		switch (ch) {
		case O_SLICE:
			h.slice = optarg;
			break;
		case O_NODE_ID:
			h.node_id = optarg;
			break;
		case O_IDLE:
			if ((rc = tpu_parse_duration(
			         "--persist", optarg, &secs, err)) != 0)
				return rc;
			break;
		case O_KEY:
			h.po.keyfile = optarg;
			break;
		case O_CONNECT:
			h.po.connect_timeout_ms = (int)strtol(optarg, NULL, 10);
			break;
		case O_AUTH:
			h.po.auth_attempts = (int)strtol(optarg, NULL, 10);
			break;
		case O_AGENT:
			agent = 1;
			break;
		default:
			return cmd_bad_option(argv, ch, err);
		}
	}
	if (h.slice == NULL || h.node_id == NULL || secs <= 0)
		return tpu_error(err, TPU_E_USAGE,
		    "ssh-pool holder: --slice, --node-id and --persist are "
		    "required");
	holder_identity(h.po.keyfile, agent, h.po.connect_timeout_ms,
	    h.identity, sizeof h.identity);
	if ((rc = holder_dir(dir, sizeof dir, err)) != 0)
		return rc;
	holder_name(h.slice, name, sizeof name);
	if ((rc = holder_listen(dir, name, &lock_fd, &lfd, err)) != 0)
		return rc == TPU_E_CONFLICT ? 0 : rc; /* another one holds it */
	if (pipe2(h.wake, O_CLOEXEC | O_NONBLOCK) != 0) {
		rc = tpu_error(err, TPU_E_IO, "pipe: %s", strerror(errno));
		close(lfd);
		close(lock_fd);
		return rc;
	}
	signal(SIGPIPE, SIG_IGN);
	pthread_mutex_init(&h.mu, NULL);
	pthread_cond_init(&h.cv, NULL);
	h.cache = sshpool_cache_new();
	h.po.cache = h.cache;
	h.idle_ms = secs * 1000;
	h.last_ms = tpu_now_ms();
	for (;;) {
		struct pollfd p[2] = { { lfd, POLLIN, 0 },
			{ h.wake[0], POLLIN, 0 } };
		int64_t left;
		int fd, busy;
		struct tpu_err aerr;
		char drain[64];

		pthread_mutex_lock(&h.mu);
		left = h.last_ms + h.idle_ms - tpu_now_ms();
		busy = h.nclients > 0;
		if (h.exiting || (left <= 0 && !busy)) {
			pthread_mutex_unlock(&h.mu);
			break;
		}
		pthread_mutex_unlock(&h.mu);
		if (busy || left > 60000)
			left = 60000;
		if (poll(p, 2, (int)left) <= 0)
			continue;
		if (p[1].revents != 0)
			while (read(h.wake[0], drain, sizeof drain) > 0)
				;
		if (!(p[0].revents & POLLIN))
			continue;
		tpu_err_init(&aerr);
		if (holder_accept(lfd, &fd, &aerr) != 0)
			continue;
		h_serve(&h, fd);
	}
	/* the socket goes while the lock is still held: a new holder
	 * never loses its socket to us; the lock goes before the runs
	 * still going end, so that a new holder can start meanwhile */
	sock = xasprintf("%s/%s.sock", dir, name);
	unlink(sock);
	free(sock);
	close(lfd);
	close(lock_fd);
	pthread_mutex_lock(&h.mu);
	while (h.nclients > 0)
		pthread_cond_wait(&h.cv, &h.mu);
	pthread_mutex_unlock(&h.mu);
	sshpool_cache_free(h.cache);
	pthread_cond_destroy(&h.cv);
	pthread_mutex_destroy(&h.mu);
	close(h.wake[0]);
	close(h.wake[1]);
	return 0;
}

/* --- the client ------------------------------------------------------- */

/* Start a holder for the slice, detached: setsid, stdio /dev/null. */
static void
spawn_holder(const struct sshcmd *sc, const char *key, const char *node_id,
    int persist_s)
{
	char persist[32], ctimeout[32], attempts[32];
	pid_t pid;
	int st;

	snprintf(persist, sizeof persist, "%ds", persist_s);
	snprintf(ctimeout, sizeof ctimeout, "%d", sc->popts.connect_timeout_ms);
	snprintf(attempts, sizeof attempts, "%d", sc->popts.auth_attempts);
	fflush(stdout);
	fflush(stderr);
	pid = fork();
	if (pid < 0)
		return;
	if (pid == 0) {
		int fd;
		const char *av[20];
		int n = 0;

		if (setsid() < 0 || fork() != 0)
			_exit(0);
		fd = open("/dev/null", O_RDWR);
		if (fd >= 0) {
			dup2(fd, 0);
			dup2(fd, 1);
			dup2(fd, 2);
			if (fd > 2)
				close(fd);
		}
		av[n++] = "tpuctl";
		av[n++] = "ssh-pool";
		av[n++] = "holder";
		av[n++] = "--slice";
		av[n++] = key;
		av[n++] = "--node-id";
		av[n++] = node_id;
		av[n++] = "--persist";
		av[n++] = persist;
		av[n++] = "--connect-timeout-ms";
		av[n++] = ctimeout;
		av[n++] = "--auth-attempts";
		av[n++] = attempts;
		if (sc->popts.keyfile != NULL) {
			av[n++] = "--key-file";
			av[n++] = sc->popts.keyfile;
		}
		if (sc->popts.flags & SSHPOOL_F_AGENT)
			av[n++] = "--agent";
		av[n] = NULL;
		execv("/proc/self/exe", (char *const *)av);
		_exit(127);
	}
	while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
		;
}

/* Connect to the holder of key (starting one when none runs and
 * persist_s > 0). */
static int
connect_holder(const struct sshcmd *sc, const char *key, const char *node_id,
    int persist_s, int *fd)
{
	char dir[HOLDER_PATH_MAX], name[32];
	struct tpu_err err;
	int rc, i;

	tpu_err_init(&err);
	if ((rc = holder_dir(dir, sizeof dir, &err)) != 0) {
		log_warn("warm pool not used: %s", err.msg);
		return -1;
	}
	holder_name(key, name, sizeof name);
	rc = holder_connect(dir, name, fd, &err);
	if (rc == 0)
		return 0;
	if (rc != TPU_E_NOTFOUND) {
		log_warn("warm pool not used: %s", err.msg);
		return -1;
	}
	if (persist_s <= 0)
		return -1;
	spawn_holder(sc, key, node_id, persist_s);
	for (i = 0; i < 100; i++) {
		usleep(10000);
		tpu_err_init(&err);
		if (holder_connect(dir, name, fd, &err) == 0)
			return 0;
	}
	log_debug("no connection holder came up: %s", err.msg);
	return -1;
}

/*
 * The holder at fd did not answer within its deadline (stopped, hung):
 * end it, so that the next command replaces its socket and runs cold
 * instead of waiting for it again.  Its pid is the socket peer's, of
 * our uid (holder_connect checked it).
 */
static void
end_stuck_holder(int fd)
{
	int pid = holder_peer_pid(fd);

	if (pid > 0 && pid != getpid()) {
		log_warn("connection holder %d did not answer: ended", pid);
		(void)kill((pid_t)pid, SIGKILL);
	}
}

static const char *
node_id_of(const struct sshcmd_slice *sl)
{
	const cJSON *id = cJSON_GetObjectItemCaseSensitive(sl->node, "id");

	return cJSON_IsString(id) ? id->valuestring : "";
}

/*
 * Run targets t[0..n) (of sc's one node) with o through the node's
 * holder, as sshpool_run would; with persist_s > 0 one is started when
 * none runs, else only a running one is used.  1 when no holder could
 * be used before anything was sent (the caller runs cold).
 */
static int
warm_run(struct sshcmd *sc, const struct sshpool_target *targets, size_t n,
    const struct sshpool_opts *o, int persist_s, struct sshpool_result *res,
    struct tpu_err *err)
{
	const struct sshcmd_slice *sl;
	char identity[HOLDER_IDENTITY_MAX];
	struct holdproto_hello hello, their;
	struct holdproto_run run;
	struct holdproto_frame f;
	struct buf b;
	struct frd r;
	char *key;
	const char *node_id;
	unsigned char *done;
	size_t i;
	int fd = -1, rc = 1, lost = 0, stuck = 0, sig, frc = 0;
	int32_t end = 0;

	if (sc->qr || sc->nslices != 1 || n == 0 || n > HOLDPROTO_TARGETS_MAX ||
	    o->passphrase != NULL ||
	    (o->flags & SSHPOOL_F_ACCEPT_NEW_HOSTKEY) ||
	    sc->tc.project == NULL || sc->tc.zone == NULL)
		return 1;
	sl = sshcmd_slice_of(sc, 0);
	node_id = node_id_of(sl);
	key = slice_key(sc->tc.project, sc->tc.zone, sl->name);
	if (connect_holder(sc, key, node_id, persist_s, &fd) != 0) {
		free(key);
		return 1;
	}
	buf_init(&b, 0);
	frd_init(&r, fd);
	hello.version = HOLDPROTO_VERSION;
	hello.slice = key;
	hello.node_id = (char *)node_id;
	holder_identity(o->keyfile, o->flags & SSHPOOL_F_AGENT,
	    o->connect_timeout_ms, identity, sizeof identity);
	hello.identity = identity;
	log_debug("identity: %s", identity);
	holdproto_put_hello(&b, &hello);
	tpu_err_init(err);
	f.type = 0;
	if (send_buf(fd, &b) != 0 ||
	    (frc = frd_next(&r, &f, 5000, NULL, err)) != 0 ||
	    f.type != HOLDPROTO_HELLO ||
	    holdproto_get_hello(&f, &their, err) != 0) {
		/* a holder of another node id or identity says so and
		 * exits: cold */
		char *why = NULL;

		if (f.type == HOLDPROTO_ERROR)
			(void)holdproto_get_textmsg(
			    &f, HOLDPROTO_ERROR, &why, err);
		log_debug("connection holder not used: %s",
		    why != NULL ? why : err->msg);
		free(why);
		if (frc == TPU_E_TRANSIENT)
			end_stuck_holder(fd);
		tpu_err_init(err);
		goto out;
	}
	holdproto_hello_release(&their);
	log_debug("through connection holder %d", holder_peer_pid(fd));
	memset(&run, 0, sizeof run);
	run.flags = (uint32_t)o->flags;
	run.timeout_ms = (uint32_t)o->command_timeout_ms;
	run.fanout = (uint32_t)(o->fanout > 0 ? o->fanout : 64);
	run.ntargets = n;
	run.targets = xcalloc(n, sizeof *run.targets);
	for (i = 0; i < n; i++) {
		const struct sshpool_target *t = &targets[i];

		run.targets[i].worker = (uint32_t)t->worker;
		run.targets[i].host = (char *)t->host;
		run.targets[i].port = (uint32_t)t->port;
		run.targets[i].user = (char *)t->user;
		run.targets[i].hostkeys = (char **)t->hostkeys;
		run.targets[i].nhostkeys = t->nhostkeys;
		if (sshpool_command_line(
		        t, o->command, &run.targets[i].command, err) != 0) {
			while (i-- > 0)
				free(run.targets[i].command);
			free(run.targets);
			rc = TPU_E_USAGE;
			goto out;
		}
	}
	holdproto_put_run(&b, &run);
	for (i = 0; i < n; i++)
		free(run.targets[i].command);
	free(run.targets);
	for (i = 0; i < n; i++) {
		memset(&res[i], 0, sizeof res[i]);
		res[i].exit_status = -1;
	}
	if (send_buf(fd, &b) != 0) {
		log_debug("connection holder gone before the run: cold");
		goto out;
	}
	/* from here the command may run: never run it cold again */
	done = xcalloc(n, 1);
	for (;;) {
		struct holdproto_out out;
		struct holdproto_done d;
		struct tpu_err ferr;

		tpu_err_init(&ferr);
		frc = frd_next(&r, &f, HOLDPROTO_DEADLINE_MS, o->abort, &ferr);
		if (frc != 0) {
			lost = 1;
			stuck = frc == TPU_E_TRANSIENT &&
			        (o->abort == NULL || *o->abort == 0);
			break;
		}
		if (f.type == HOLDPROTO_PING)
			continue;
		if (f.type == HOLDPROTO_OUT &&
		    holdproto_get_out(&f, &out, &ferr) == 0 && out.idx < n) {
			if (o->on_output != NULL)
				o->on_output(o->arg, out.idx, (int)out.stream,
				    out.data, out.len, (int)out.flags);
		} else if (f.type == HOLDPROTO_DONE &&
		           holdproto_get_done(&f, &d, &ferr) == 0 &&
		           d.idx < n) {
			struct sshpool_result *x = &res[d.idx];

			x->status = (enum sshpool_status)d.status;
			x->exit_status = d.exit_status;
			memcpy(x->signal, d.signal, sizeof x->signal);
			x->duration_ms = d.duration_ms;
			x->auth_attempts = (int)d.auth_attempts;
			memcpy(
			    x->hostkey_fp, d.hostkey_fp, sizeof x->hostkey_fp);
			memcpy(x->msg, d.msg, sizeof x->msg);
			done[d.idx] = 1;
			if (o->on_done != NULL)
				o->on_done(o->arg, d.idx, x);
		} else if (f.type == HOLDPROTO_END &&
		           holdproto_get_end(&f, &end, &ferr) == 0)
			break;
		else {
			lost = 1;
			break;
		}
	}
	sig = o->abort != NULL ? *o->abort : 0;
	for (i = 0; i < n; i++) {
		if (!done[i]) {
			res[i].status =
			    sig != 0 ? SSHPOOL_S_ABORTED : SSHPOOL_S_PROTOCOL;
			if (sig != 0)
				snprintf(res[i].msg, sizeof res[i].msg,
				    "worker %d: interrupted",
				    targets[i].worker);
			else if (stuck)
				snprintf(res[i].msg, sizeof res[i].msg,
				    "worker %d: connection holder lost while "
				    "running the command (no answer for %d s)",
				    targets[i].worker,
				    HOLDPROTO_DEADLINE_MS / 1000);
			else
				snprintf(res[i].msg, sizeof res[i].msg,
				    "worker %d: connection holder lost while "
				    "running the command",
				    targets[i].worker);
		}
	}
	free(done);
	/* the messages of sshpool_run */
	tpu_err_init(err);
	rc = sshpool_run_status(res, n, sig, err);
	if (lost && sig == 0)
		log_debug("connection holder lost mid-run");
	if (stuck)
		end_stuck_holder(fd);
out:
	buf_release(&b);
	buf_release(&r.b);
	close(fd);
	free(key);
	return rc;
}

int
fanout_warm_run(struct sshcmd *sc, const struct fanout_spec *fs,
    struct sshpool_result *res, struct tpu_err *err)
{
	if (fs->persist_s <= 0)
		return 1;
	return warm_run(
	    sc, sc->targets, sc->ntargets, &sc->popts, fs->persist_s, res, err);
}

int
ssh_pool_parse_persist(
    const char *what, const char *v, int *secs, struct tpu_err *err)
{
	long long s = 0;
	int rc;

	*secs = 0;
	if (v == NULL || strcmp(v, "no") == 0)
		return 0;
	if ((rc = tpu_parse_duration(what, v, &s, err)) != 0)
		return rc;
	if (s < 1 || s > 24 * 3600)
		return tpu_error(err, TPU_E_USAGE,
		    "%s '%s': want no or a duration of 1s to 24h", what, v);
	*secs = (int)s;
	return 0;
}

int
ssh_pool_job_run(struct tpu_ctx *ctx, struct sshcmd *sc,
    const struct sshpool_target *t, size_t n, const struct sshpool_opts *o,
    struct sshpool_result *res, struct tpu_err *err)
{
	struct tpu_err perr;
	int persist_s = 0;

	if (ctx == NULL)
		return 1;
	tpu_err_init(&perr);
	if (ssh_pool_parse_persist("ssh/persist",
	        config_get(ctx->cfg, "ssh/persist"), &persist_s, &perr) != 0) {
		log_warn("warm pool not used: %s", perr.msg);
		return 1;
	}
	return warm_run(sc, t, n, o, persist_s, res, err);
}

/* --- list, stop ------------------------------------------------------- */

/* Ask one socket: LIST (print its line) or STOP.  0, or -1 when no
 * holder answers there. */
static int
ask(const char *dir, const char *name, int type)
{
	struct holdproto_hello hello = { HOLDPROTO_VERSION, (char *)"",
		(char *)"", (char *)"" };
	struct holdproto_frame f;
	struct tpu_err err;
	struct buf b;
	struct frd r;
	int fd, rc = -1;

	tpu_err_init(&err);
	if (holder_connect(dir, name, &fd, &err) != 0)
		return -1;
	buf_init(&b, 0);
	frd_init(&r, fd);
	holdproto_put_hello(&b, &hello);
	{
		size_t start;

		holdproto_begin(&b, type, &start);
		holdproto_end(&b, start);
	}
	if (send_buf(fd, &b) != 0 || frd_next(&r, &f, 5000, NULL, &err) != 0 ||
	    f.type != HOLDPROTO_HELLO)
		goto out;
	for (;;) {
		char *text;

		if (frd_next(&r, &f, 5000, NULL, &err) != 0)
			goto out;
		if (f.type == HOLDPROTO_END)
			break;
		if (f.type == HOLDPROTO_INFO &&
		    holdproto_get_textmsg(&f, HOLDPROTO_INFO, &text, &err) ==
		        0) {
			char *p = text, *slice = strsep(&p, "\t");
			char *id = strsep(&p, "\t"), *pid = strsep(&p, "\t");
			char *ns = strsep(&p, "\t"), *idle = p;

			printf("%-40s %-20s %8s %8s %8ss\n", slice,
			    id != NULL ? id : "-", pid != NULL ? pid : "-",
			    ns != NULL ? ns : "-", idle != NULL ? idle : "-");
			free(text);
		}
	}
	rc = 0;
out:
	buf_release(&b);
	buf_release(&r.b);
	close(fd);
	return rc;
}

static int
each_holder(int type, struct tpu_err *err)
{
	char dir[HOLDER_PATH_MAX];
	DIR *d;
	struct dirent *de;
	int rc;

	if ((rc = holder_dir(dir, sizeof dir, err)) != 0)
		return rc;
	if ((d = opendir(dir)) == NULL)
		return tpu_error(err, TPU_E_IO, "%s: %s", dir, strerror(errno));
	while ((de = readdir(d)) != NULL) {
		size_t l = strlen(de->d_name);
		char name[32];

		if (l < 6 || l - 5 >= sizeof name ||
		    strcmp(de->d_name + l - 5, ".sock") != 0)
			continue;
		memcpy(name, de->d_name, l - 5);
		name[l - 5] = '\0';
		(void)ask(dir, name, type);
	}
	closedir(d);
	return 0;
}

static const struct cmd_entry ssh_pool_children[];

static int
list_exec(struct tpu_ctx *ctx, int argc, char **argv, struct tpu_err *err)
{
	int ch;

	(void)ctx;
	while (
	    (ch = getopt_long(argc, argv, "+",
	         (const struct option[]){ { NULL, 0, NULL, 0 } }, NULL)) != -1)
		return cmd_bad_option(argv, ch, err);
	if ((ch = cmd_check_operands(&ssh_pool_children[0], argc - optind,
	         argv + optind, err)) != 0)
		return ch;
	printf("%-40s %-20s %8s %8s %9s\n", "SLICE", "NODE_ID", "PID",
	    "SESSIONS", "PERSIST");
	return each_holder(HOLDPROTO_LIST, err);
}

static int
stop_exec(struct tpu_ctx *ctx, int argc, char **argv, struct tpu_err *err)
{
	char dir[HOLDER_PATH_MAX], name[32], *key;
	const char *project, *zone;
	int ch, rc;

	while (
	    (ch = getopt_long(argc, argv, "+",
	         (const struct option[]){ { NULL, 0, NULL, 0 } }, NULL)) != -1)
		return cmd_bad_option(argv, ch, err);
	if ((rc = cmd_check_operands(&ssh_pool_children[1], argc - optind,
	         argv + optind, err)) != 0)
		return rc;
	if (argc - optind == 0)
		return each_holder(HOLDPROTO_STOP, err);
	project = config_get(ctx->cfg, "core/project");
	zone = config_get(ctx->cfg, "compute/zone");
	if (project == NULL || zone == NULL)
		return tpu_error(err, TPU_E_USAGE,
		    "ssh-pool stop %s: core/project and compute/zone must be "
		    "set (or stop every holder: tpuctl ssh-pool stop)",
		    argv[optind]);
	if ((rc = holder_dir(dir, sizeof dir, err)) != 0)
		return rc;
	key = slice_key(project, zone, argv[optind]);
	holder_name(key, name, sizeof name);
	free(key);
	if (ask(dir, name, HOLDPROTO_STOP) != 0)
		return tpu_error(err, TPU_E_NOTFOUND,
		    "ssh-pool stop: no connection holder for %s", argv[optind]);
	return 0;
}

static const struct cmd_entry ssh_pool_children[] = {
	{
	    .name = "list",
	    .usage = "ssh-pool list",
	    .summary = "list the connection holders of this user",
	    .min_args = 0,
	    .max_args = 0,
	    .exec = list_exec,
	},
	{
	    .name = "stop",
	    .usage = "ssh-pool stop [name]",
	    .summary = "stop the connection holder of a node, or all of them",
	    .min_args = 0,
	    .max_args = 1,
	    .exec = stop_exec,
	},
	{
	    .name = "holder",
	    .usage = "ssh-pool holder --slice key --node-id id --persist "
	             "duration [--key-file file] [--connect-timeout-ms ms] "
	             "[--auth-attempts n] [--agent]",
	    .summary = "internal: the connection holder tpuctl ssh starts",
	    .min_args = 0,
	    .max_args = 0,
	    .flags = CMD_SSH,
	    .exec = holder_exec,
	},
	{
	    .name = NULL,
	},
};

const struct cmd_entry cmd_ssh_pool_entry = {
	.name = "ssh-pool",
	.alias = NULL,
	.usage = "ssh-pool list|stop|holder",
	.summary = "list or stop the warm SSH connection holders",
	.min_args = 0,
	.max_args = -1,
	.flags = 0,
	.children = ssh_pool_children,
};
