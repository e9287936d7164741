/*
 * The sshd worker fleet of tpuctl-emulator.  Every worker of every node is
 * its own OpenSSH sshd process (one process per worker, because HostKey is
 * per process) listening on its own loopback address and the emulator's
 * single fleet port, with its own ed25519 host key, HOME, authorized_keys
 * and identity (SetEnv TPU_WORKER_ID, TPU_WORKER_HOSTNAMES, ...).
 *
 * Layout under the state dir (kept across emulator restarts):
 *   fleet/fleet.json        port and node table (key, id, subnet, workers)
 *   fleet/nS/wI/            worker I of the node whose block starts at S:
 *     hostkey, hostkey.pub  the key sshd serves
 *     published.pub         the key fleet_node_workers() publishes (differs
 *                           from hostkey.pub after fleet_worker_rekey)
 *     authorized_keys       written by the "guest agent" (metadata ssh-keys)
 *     sshd_config, sshd.pid, sshd.log, home/
 *
 * Addresses: the loopback space 127.1.0.0 - 127.255.255.255 is cut into
 * /24 "subnets" s = 0..65279 (127.(1 + s / 256).(s % 256).0/24).  A node
 * of n workers gets ceil(n / 254) consecutive subnets, first fit; worker w
 * is 127.a.b.(1 + w % 254) in subnet (first + w / 254).  The subnets
 * are leased machine-wide (emulator/lease.c: one flock'd file per subnet,
 * shared by every emulator of the network namespace), so first fit skips
 * what another emulator holds, and a restart that finds its persisted
 * subnets held elsewhere moves the node (its directory, keys and HOMEs
 * with it) to free ones: the workers' addresses change, their keys not.
 *
 * Root versus an ordinary user: sshd can only authenticate the account it
 * runs as unless it runs as root.  So the login user (TPUCTL_SSH_USER) is
 * always the account the emulator runs as: root in CI, the current user
 * otherwise.  As root sshd also needs /run/sshd (created here if missing);
 * as another user it runs without privilege separation chroot, on the
 * fleet's high port.  Either way the account's password field must not be
 * locked ('!'); '*' is fine, since UsePAM is off.
 *
 * HOME: sshd sets HOME from SetEnv (after its own HOME=pw_dir) but starts
 * the shell in the account's passwd home, so the worker's minimal .bashrc
 * and .profile cd to $HOME (bash reads ~/.bashrc for commands run by
 * sshd; with a non-bash login shell, commands start in the passwd home).
 * sftp (and scp, which uses sftp) starts in the worker's HOME through
 * "internal-sftp -d".  No AcceptEnv: the client's environment is not
 * passed, as on a default sshd.
 *
 * Concurrency: the API functions run with emu->lock held (tpu.c) and take
 * the fleet's own mutex; a monitor thread takes only the fleet mutex.  It
 * generates host keys (ssh-keygen children), starts sshd processes, probes
 * readiness with non-blocking connects, writes authorized_keys when the
 * agent delay expires, reaps children and restarts sshds that died.  The
 * emulator is made a child subreaper so that session processes orphaned by
 * a dying sshd come back to it and are reaped here, not left as zombies.
 */
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>

#include <netinet/in.h>
#include <arpa/inet.h>

#include <dirent.h>
#include <sched.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <poll.h>
#include <pwd.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>

#include <cjson/cJSON.h>
#include <openssl/bio.h>
#include <openssl/bn.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>

#include "buf.h"
#include "core.h"
#include "fleet.h"
#include "fsutil.h"
#include "lease.h"
#include "log.h"
#include "md.h"
#include "util.h"
#include "xmalloc.h"

#define FLEET_HOSTS_PER_SUBNET 254
#define FLEET_MAX_SUBNETS (255 * 256)
#define FLEET_MAX_WORKERS 4096
#define FLEET_MAX_KEYGEN 8    /* ssh-keygen children at once */
#define FLEET_MAX_STARTING 48 /* sshd spawned but not yet accepting */
#define FLEET_TICK_MS 50
#define FLEET_KILL_WAIT_MS 3000
#define FLEET_ENV_CAP 65536 /* bytes of /proc/PID/environ looked at */
#define FLEET_DEFAULT_SSHD "/usr/sbin/sshd"
#define FLEET_CA_BUNDLE "/etc/ssl/certs/ca-certificates.crt"
#define FLEET_HOLE_CONNS 256 /* connections a silent black hole holds */
#define FLEET_HOLE_FILL 8    /* connections tried to fill a drop queue */

struct fleet_worker {
	int idx;
	char addr[64];
	char *dir;
	char *home;
	pid_t pid;             /* sshd listener, 0 when none */
	pid_t kpid;            /* ssh-keygen, 0 when none */
	int setup;             /* dir, HOME and published key loaded */
	int keyok;             /* hostkey exists */
	int rekey;             /* a new host key is wanted */
	int ready;             /* the port accepted a connection */
	int down;              /* fault: kept stopped */
	int hole;              /* fault: black hole, FLEET_HOLE_* */
	int hole_fd;           /* the black hole's listener, or -1 */
	int *hole_conns;       /* drop: our fillers; silent: accepted */
	int nhole_conns;       /* entries in hole_conns */
	int probe_fd;          /* in-flight non-blocking connect, or -1 */
	int fails;             /* consecutive unexpected exits */
	int64_t not_before_ms; /* backoff before the next spawn */
	int64_t ready_ms;
	pid_t spid;        /* the startup-script runner, 0 when none */
	int booted;        /* startup scripts launched since the last boot */
	char hostname[64]; /* t1v-n-<8 hex>-w-<N> */
	char pubkey[512];  /* published host key, "" until generated */
};

struct fleet_node {
	struct fleet_node *next;
	char *key; /* projects/P/locations/Z/nodes/N */
	char *id;
	char *name; /* N */
	char *accel;
	int nworkers;
	int subnet;
	int nsubnets;
	struct emu_lease lease; /* of the subnets, for the node's lifetime */
	int run; /* sshds wanted (created or started, not stopped) */
	char *dir;
	char *mdhost; /* GCE_METADATA_HOST for the workers, or NULL */
	struct fleet_worker *w;
	char *keys; /* authorized_keys to apply, NULL when none */
	int64_t keys_due_ms;
	char *script;     /* metadata startup-script, NULL when none */
	char *script_url; /* metadata startup-script-url, NULL when none */
	int chips;        /* TPU chips per host: /dev/accel0..chips-1 */
	int oslogin;      /* metadata enable-oslogin TRUE (at boot) */
};

struct fleet {
	pthread_mutex_t mu;
	pthread_cond_t cv;
	pthread_t thr;
	int thr_started;
	int stop;
	char *dir;
	char *lease_dir; /* machine-wide subnet leases (lease.h) */
	char *sshd;
	int port;
	char user[64];
	char *pwdir; /* the login user's passwd home */
	/* OS Login nodes: the emulator's API URL for the worker's
	 * AuthorizedKeysCommand, the POSIX user of the emulator's service
	 * account (oslogin.c) and its uid */
	char *osl_url;
	char osl_user[64];
	unsigned osl_uid;
	long long key_delay_ms;
	pid_t self;
	int subreaper;
	struct fleet_node *nodes;
	struct fleet_dying *dying;
	size_t ndying;
	size_t capdying;
	char **trash; /* dirs of deleted nodes, removed by the monitor */
	size_t ntrash;
	unsigned trashseq;
	pid_t sid; /* our session: children outside it are adopted */
	int64_t orphan_scan_ms;
	int64_t sweep_until_ms; /* look for leftovers of killed workers */
	int64_t sweep_next_ms;
	/* Worker namespaces (root only; see fleet_ns_ops). */
	int ns; /* each sshd in its own UTS + mount namespace */
	struct fleet_op *devops; /* what the worker's /dev gets from it */
	size_t ndevops;
	int etc_hostname; /* /etc/hostname exists: bind the worker's */
	char *emu_addr;   /* the emulator's address ("127.0.0.1") */
	char *base_url;   /* the emulator's API base URL */
	char *ca_pem;     /* its CA (--tls or gfd), else NULL */
	char *bundle;     /* system CA bundle + ca_pem, or NULL */
	/* Google's API hosts on ADDR:443 (root; see fleet_google_init). */
	int gfd;            /* the listener, -1 when none */
	char *gkey, *gcert; /* its key and certificate (PEM) */
	struct core_server *gsrv;
};

/*
 * A process we signalled and wait for: reaped by the monitor, SIGKILLed
 * at kill_at.  addr is the address its sshd listened on ("" for others):
 * no new sshd is started there until it is gone.
 */
struct fleet_dying {
	pid_t pid;
	int64_t kill_at;
	char addr[64];
};

/* A process table snapshot from /proc: pid, parent, session. */
struct fleet_proc {
	pid_t pid;
	pid_t ppid;
	pid_t sid;
	char state;    /* R, S, Z, ... from /proc/PID/stat */
	char comm[16]; /* its command name, as in /proc/PID/stat */
};

static struct fleet *
fleet_of(struct emu *e)
{
	return e->fleet;
}

static int64_t
fleet_now(void)
{
	return tpu_now_ms();
}

static void fleet_seterr(char *buf, size_t len, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static void
fleet_seterr(char *buf, size_t len, const char *fmt, ...)
{
	va_list ap;

	if (buf == NULL || len == 0)
		return;
	va_start(ap, fmt);
	vsnprintf(buf, len, fmt, ap);
	va_end(ap);
}

/* mkdir that accepts an existing directory. */
static int
fleet_mkdir(const char *path, mode_t mode)
{
	if (mkdir(path, mode) == 0 || errno == EEXIST)
		return 0;
	return -1;
}

/*
 * Replace path atomically (temp file, rename): readers (sshd) see the old
 * or the new content, never a partial file.  No fsync: these files are
 * cheap to regenerate, and 256 fsyncs would hold the fleet lock too long.
 */
static int
fleet_write_file(const char *path, const char *data, size_t len, mode_t mode)
{
	char *tmp = NULL;
	int fd = -1, rc = -1;
	size_t off = 0;

	tmp = xasprintf("%s.tmp", path);
	fd = open(
	    tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, mode);
	if (fd == -1)
		goto out;
	while (off < len) {
		ssize_t n = write(fd, data + off, len - off);

		if (n == -1 && errno == EINTR)
			continue;
		if (n <= 0)
			goto out;
		off += (size_t)n;
	}
	if (fchmod(fd, mode) == -1)
		goto out;
	if (close(fd) == -1) {
		fd = -1;
		goto out;
	}
	fd = -1;
	if (rename(tmp, path) == -1)
		goto out;
	rc = 0;
out:
	if (fd != -1)
		close(fd);
	if (rc != 0)
		unlink(tmp);
	free(tmp);
	return rc;
}

/* Read a small file into a NUL-terminated string; NULL on error. */
static char *
fleet_read_file(const char *path, size_t cap)
{
	char *buf = NULL;
	size_t len = 0;
	int fd;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd == -1)
		return NULL;
	buf = xmalloc(cap + 1);
	for (;;) {
		ssize_t n = read(fd, buf + len, cap - len);

		if (n == -1 && errno == EINTR)
			continue;
		if (n == -1) {
			free(buf);
			buf = NULL;
			goto out;
		}
		if (n == 0)
			break;
		len += (size_t)n;
		if (len == cap)
			break;
	}
	buf[len] = '\0';
out:
	close(fd);
	return buf;
}

/* "ssh-ed25519 AAAA... comment\n" -> "ssh-ed25519 AAAA..." into out. */
static int
fleet_pubkey_fields(const char *line, char *out, size_t outlen)
{
	const char *sp1, *end;
	size_t n;

	sp1 = strchr(line, ' ');
	if (sp1 == NULL)
		return -1;
	end = sp1 + 1;
	while (*end != '\0' && *end != ' ' && *end != '\n' && *end != '\r')
		end++;
	n = (size_t)(end - line);
	if (end == sp1 + 1 || n >= outlen)
		return -1;
	memcpy(out, line, n);
	out[n] = '\0';
	return 0;
}

static int
fleet_load_pubkey(const char *path, char *out, size_t outlen)
{
	char *s;
	int rc;

	s = fleet_read_file(path, 4096);
	if (s == NULL)
		return -1;
	rc = fleet_pubkey_fields(s, out, outlen);
	free(s);
	return rc;
}

static int
fleet_rmtree_cb(
    const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)ftw;
	if (flag == FTW_DP)
		rmdir(path);
	else
		unlink(path);
	return 0;
}

static void
fleet_rmtree(const char *path)
{
	nftw(path, fleet_rmtree_cb, 16, FTW_DEPTH | FTW_PHYS);
}

/* Characters we allow in paths and values written into sshd_config. */
static int
fleet_config_safe(const char *s)
{
	for (; *s != '\0'; s++) {
		unsigned char c = (unsigned char)*s;

		if (c <= ' ' || c == '"' || c == '\'' || c == '\\' ||
		    c == '#' || c == 0x7f)
			return 0;
	}
	return 1;
}

/* --- worker identity (pure) ---------------------------------------- */

/*
 * TPU chips per host (per TPU VM) of an accelerator type, from Google's
 * system architecture pages (cloud.google.com/tpu/docs/v2, v3, v4, v5p,
 * v5e, v6e, and system-architecture-tpu-vm):
 *   type            name counts  chips per host
 *   v2-N, v3-N      TensorCores  4 (a v2-8/v3-8 host has 4 chips, 8 cores)
 *   v4-N            TensorCores  4
 *   v5p-N           TensorCores  4
 *   v5litepod-N     chips        N when N <= 8 (one host: 1x1, 2x2, 2x4),
 *   (v5e-N), v6e-N               else 4 (multi-host slices use 4-chip
 *                                VMs: v5litepod-16 is 4 hosts of 4)
 * -1 for a type we do not know.
 */
int
fleet_chips_per_host(const char *accel_type)
{
	static const struct {
		const char *gen;
		int single_max; /* chips a single host holds, 0: always 4 */
	} gens[] = {
		{ "v2", 0 },
		{ "v3", 0 },
		{ "v4", 0 },
		{ "v5p", 0 },
		{ "v5litepod", 8 },
		{ "v5e", 8 },
		{ "v6e", 8 },
	};
	const char *dash, *p;
	size_t glen, i;
	long size = 0;

	if (accel_type == NULL || (dash = strrchr(accel_type, '-')) == NULL ||
	    dash[1] == '\0')
		return -1;
	for (p = dash + 1; *p != '\0'; p++) {
		if (*p < '0' || *p > '9' || size > 1000000)
			return -1;
		size = size * 10 + (*p - '0');
	}
	if (size < 1)
		return -1;
	glen = (size_t)(dash - accel_type);
	for (i = 0; i < nitems(gens); i++) {
		if (strlen(gens[i].gen) != glen ||
		    memcmp(gens[i].gen, accel_type, glen) != 0)
			continue;
		if (gens[i].single_max == 0)
			return 4;
		return size <= gens[i].single_max ? (int)size : 4;
	}
	return -1;
}

/* --- addresses and persistence ------------------------------------ */

static void
fleet_worker_addr(int subnet, int w, char *out, size_t len)
{
	int s = subnet + w / FLEET_HOSTS_PER_SUBNET;

	snprintf(out, len, "127.%d.%d.%d", 1 + s / 256, s % 256,
	    1 + w % FLEET_HOSTS_PER_SUBNET);
}

static int
fleet_nsubnets(int nworkers)
{
	return (nworkers + FLEET_HOSTS_PER_SUBNET - 1) / FLEET_HOSTS_PER_SUBNET;
}

/* Does [s, s + k) overlap a subnet of one of our nodes (but skip)? */
static int
fleet_subnet_used(struct fleet *f, int s, int k, const struct fleet_node *skip)
{
	struct fleet_node *n;

	for (n = f->nodes; n != NULL; n = n->next)
		if (n != skip && s < n->subnet + n->nsubnets &&
		    n->subnet < s + k)
			return n->subnet + n->nsubnets;
	return -1;
}

/*
 * First fit of k consecutive subnets that none of our nodes uses and no
 * other emulator holds; they are leased into *l.  -1 when the space is
 * full (errbuf says why when a lease file cannot be used).
 */
static int
fleet_alloc_subnet(struct fleet *f, int k, struct emu_lease *l)
{
	int s = 0, next, busy;

	memset(l, 0, sizeof(*l));
	while (s + k <= FLEET_MAX_SUBNETS) {
		if ((next = fleet_subnet_used(f, s, k, NULL)) != -1) {
			s = next;
			continue;
		}
		if (f->lease_dir == NULL)
			return s;
		if (emu_lease_take(f->lease_dir, s, k, l, &busy) == 0)
			return s;
		if (busy == -1) {
			log_warn("fleet: cannot lease subnet %d in '%s': %s", s,
			    f->lease_dir, strerror(errno));
			return -1;
		}
		s = busy + 1;
	}
	return -1;
}

static void
fleet_save(struct fleet *f)
{
	cJSON *root, *arr;
	struct fleet_node *n;
	char *text = NULL, *path = NULL;

	root = cJSON_CreateObject();
	cJSON_AddNumberToObject(root, "port", f->port);
	arr = cJSON_AddArrayToObject(root, "nodes");
	for (n = f->nodes; n != NULL; n = n->next) {
		cJSON *o = cJSON_CreateObject();

		cJSON_AddStringToObject(o, "key", n->key);
		cJSON_AddStringToObject(o, "id", n->id);
		cJSON_AddStringToObject(o, "accel", n->accel);
		cJSON_AddNumberToObject(o, "workers", n->nworkers);
		cJSON_AddNumberToObject(o, "subnet", n->subnet);
		cJSON_AddItemToArray(arr, o);
	}
	text = cJSON_Print(root);
	path = xasprintf("%s/fleet.json", f->dir);
	if (text == NULL ||
	    fleet_write_file(path, text, strlen(text), 0600) == -1)
		log_warn("fleet: cannot write '%s': %s", path, strerror(errno));
	cJSON_free(text);
	cJSON_Delete(root);
	free(path);
}

static const char *
fleet_short_name(const char *key)
{
	const char *p = strrchr(key, '/');

	return p != NULL ? p + 1 : key;
}

/* Allocate the in-memory node (not linked, nothing on disk). */
static struct fleet_node *
fleet_node_new(struct fleet *f, const char *key, const char *id,
    const char *accel, int nworkers, int subnet)
{
	struct fleet_node *n;
	int i;

	n = xcalloc(1, sizeof(*n));
	n->key = xstrdup(key);
	n->id = xstrdup(id);
	n->name = xstrdup(fleet_short_name(key));
	n->accel = xstrdup(accel);
	n->nworkers = nworkers;
	n->subnet = subnet;
	n->nsubnets = fleet_nsubnets(nworkers);
	n->dir = xasprintf("%s/n%d", f->dir, subnet);
	n->chips = fleet_chips_per_host(accel);
	if (n->chips < 0)
		n->chips = 0;
	n->w = xcalloc((size_t)nworkers, sizeof(*n->w));
	for (i = 0; i < nworkers; i++) {
		struct fleet_worker *w = &n->w[i];

		w->idx = i;
		w->probe_fd = -1;
		w->hole_fd = -1;
		fleet_worker_addr(subnet, i, w->addr, sizeof(w->addr));
		w->dir = xasprintf("%s/w%d", n->dir, i);
		w->home = xasprintf("%s/home", w->dir);
		emu_md_hostname(key, id, i, w->hostname, sizeof(w->hostname));
	}
	return n;
}

/* Close a worker's black hole: its listener and every connection. */
static void
fleet_hole_close(struct fleet_worker *w)
{
	int i;

	for (i = 0; i < w->nhole_conns; i++)
		close(w->hole_conns[i]);
	free(w->hole_conns);
	w->hole_conns = NULL;
	w->nhole_conns = 0;
	if (w->hole_fd != -1)
		close(w->hole_fd);
	w->hole_fd = -1;
	w->hole = FLEET_HOLE_NONE;
}

static void
fleet_node_free(struct fleet_node *n)
{
	int i;

	if (n == NULL)
		return;
	for (i = 0; i < n->nworkers; i++) {
		fleet_hole_close(&n->w[i]);
		if (n->w[i].probe_fd != -1)
			close(n->w[i].probe_fd);
		free(n->w[i].dir);
		free(n->w[i].home);
	}
	free(n->w);
	emu_lease_release(&n->lease);
	free(n->key);
	free(n->id);
	free(n->name);
	free(n->accel);
	free(n->dir);
	free(n->mdhost);
	free(n->keys);
	free(n->script);
	free(n->script_url);
	free(n);
}

static struct fleet_node *
fleet_find(struct fleet *f, const char *key)
{
	struct fleet_node *n;

	for (n = f->nodes; n != NULL; n = n->next)
		if (strcmp(n->key, key) == 0)
			return n;
	return NULL;
}

static void
fleet_unlink_node(struct fleet *f, struct fleet_node *n)
{
	struct fleet_node **pp;

	for (pp = &f->nodes; *pp != NULL; pp = &(*pp)->next) {
		if (*pp == n) {
			*pp = n->next;
			return;
		}
	}
}

/* --- processes ------------------------------------------------------ */

/*
 * What a child does between fork and exec, beyond fleet_spawn's basics.
 * Every string and fd is prepared by the parent: the child only makes
 * system calls (async-signal-safe), so a multi-threaded parent is fine.
 */
enum fleet_op_kind {
	FLEET_OP_TMPFS,   /* mount a tmpfs on dst, options in src */
	FLEET_OP_BIND,    /* bind src on dst (a file or a whole tree) */
	FLEET_OP_MKDIR,   /* mkdir dst (an existing one is fine) */
	FLEET_OP_MKDIRS,  /* mkdir -p dst (a writable copy) */
	FLEET_OP_MKFILE,  /* create an empty file dst (mode 0666) */
	FLEET_OP_SYMLINK, /* symlink src at dst */
	FLEET_OP_OPEN,    /* open dir src as fd number fd (O_PATH) */
};

/*
 * A bind source must be in the child's new mount namespace: what the
 * child covers (/dev, /tmp) is opened there first (FLEET_OP_OPEN) at
 * these fixed numbers, and bound from /proc/self/fd/N.
 */
#define FLEET_CHILD_DEVFD 3
#define FLEET_CHILD_DIRFD 4

struct fleet_op {
	enum fleet_op_kind kind;
	char *src;
	char *dst;
	int fd;
};

struct fleet_child {
	/* New UTS and mount namespaces: hostname, then the ops. */
	int unshare;
	const char *hostname;
	const struct fleet_op *ops;
	size_t nops;
	/* Or join the namespaces of a running worker (fds, -1 when not). */
	int uts_fd;
	int mnt_fd;
	int setsid;        /* own session instead of own process group */
	const char *chdir; /* NULL: stay */
	char *const *envp; /* NULL: the emulator's environment */
};

/* Write "fleet: what 'path': errno N" to fd 2 (async-signal-safe). */
static void
fleet_child_fail(const char *what, const char *path)
{
	char num[16];
	int e = errno, i = (int)sizeof(num);

	num[--i] = '\n';
	do {
		num[--i] = (char)('0' + e % 10);
		e /= 10;
	} while (e > 0 && i > 0);
	(void)!write(2, "fleet: worker namespace: ", 25);
	(void)!write(2, what, strlen(what));
	(void)!write(2, " '", 2);
	(void)!write(2, path, strlen(path));
	(void)!write(2, "': errno ", 9);
	(void)!write(2, num + i, sizeof(num) - (size_t)i);
}

/* mkdir -p of a writable path copy (restored on return). */
static int
fleet_child_mkdirs(char *path)
{
	char *p;

	for (p = path + 1; *p != '\0'; p++) {
		if (*p != '/')
			continue;
		*p = '\0';
		if (mkdir(path, 0755) == -1 && errno != EEXIST) {
			*p = '/';
			return -1;
		}
		*p = '/';
	}
	return mkdir(path, 0755) == -1 && errno != EEXIST ? -1 : 0;
}

/* The namespace part of a child; 0, or -1 after writing why to fd 2. */
static int
fleet_child_ns(const struct fleet_child *ch)
{
	size_t i;
	int fd;

	if (ch->uts_fd != -1 && setns(ch->uts_fd, CLONE_NEWUTS) == -1) {
		fleet_child_fail("setns", "uts");
		return -1;
	}
	if (ch->mnt_fd != -1 && setns(ch->mnt_fd, CLONE_NEWNS) == -1) {
		fleet_child_fail("setns", "mnt");
		return -1;
	}
	if (!ch->unshare)
		return 0;
	if (unshare(CLONE_NEWUTS | CLONE_NEWNS) == -1) {
		fleet_child_fail("unshare", "uts+mnt");
		return -1;
	}
	/* Nothing mounted here may propagate back to the host. */
	if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) == -1) {
		fleet_child_fail("make private", "/");
		return -1;
	}
	if (sethostname(ch->hostname, strlen(ch->hostname)) == -1) {
		fleet_child_fail("sethostname", ch->hostname);
		return -1;
	}
	for (i = 0; i < ch->nops; i++) {
		const struct fleet_op *op = &ch->ops[i];
		int rc = 0;

		switch (op->kind) {
		case FLEET_OP_TMPFS:
			rc = mount("tmpfs", op->dst, "tmpfs",
			    MS_NOSUID | MS_NODEV, op->src);
			break;
		case FLEET_OP_BIND:
			rc = mount(
			    op->src, op->dst, NULL, MS_BIND | MS_REC, NULL);
			break;
		case FLEET_OP_MKDIR:
			rc = mkdir(op->dst, 0755) == -1 && errno != EEXIST ? -1
			                                                   : 0;
			break;
		case FLEET_OP_MKDIRS:
			rc = fleet_child_mkdirs(op->dst);
			break;
		case FLEET_OP_MKFILE:
			fd =
			    open(op->dst, O_WRONLY | O_CREAT | O_CLOEXEC, 0666);
			if (fd == -1 || fchmod(fd, 0666) == -1)
				rc = -1;
			if (fd != -1)
				close(fd);
			break;
		case FLEET_OP_SYMLINK:
			rc = symlink(op->src, op->dst);
			break;
		case FLEET_OP_OPEN:
			fd = open(op->src, O_PATH | O_DIRECTORY);
			if (fd != op->fd &&
			    (fd == -1 || dup2(fd, op->fd) == -1 || close(fd)))
				rc = -1;
			break;
		}
		if (rc == -1) {
			fleet_child_fail(op->kind == FLEET_OP_TMPFS
			                     ? "mount tmpfs"
			                 : op->kind == FLEET_OP_BIND ? "bind"
			                 : op->kind == FLEET_OP_OPEN ? "open"
			                                             : "create",
			    op->kind == FLEET_OP_OPEN ? op->src : op->dst);
			return -1;
		}
	}
	return 0;
}

/*
 * Start argv[0] (an absolute path, or a name looked up in PATH) in its own
 * process group (or session) with stdin on /dev/null and stdout/stderr
 * appended to outpath, set up as ch says (NULL: nothing more).  Only
 * async-signal-safe calls between fork and exec.  The child gets SIGTERM
 * if the spawning (monitor) thread goes away.  Returns the pid or -1.
 */
static pid_t
fleet_spawn_child(
    char *const argv[], const char *outpath, const struct fleet_child *ch)
{
	sigset_t all, old;
	pid_t parent = getpid(), pid;
	int nullfd, outfd;

	nullfd = open("/dev/null", O_RDONLY | O_CLOEXEC);
	if (nullfd == -1)
		return -1;
	outfd = open(outpath, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
	if (outfd == -1) {
		close(nullfd);
		return -1;
	}
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	pid = fork();
	if (pid == 0) {
		struct sigaction sa;
		sigset_t none;
		int sig;

		if (ch != NULL && ch->setsid)
			setsid();
		else
			setpgid(0, 0);
		prctl(PR_SET_PDEATHSIG, SIGTERM);
		if (getppid() != parent)
			_exit(127);
		memset(&sa, 0, sizeof(sa));
		sa.sa_handler = SIG_DFL;
		for (sig = 1; sig < NSIG; sig++)
			sigaction(sig, &sa, NULL);
		sigemptyset(&none);
		sigprocmask(SIG_SETMASK, &none, NULL);
		if (dup2(nullfd, 0) == -1 || dup2(outfd, 1) == -1 ||
		    dup2(outfd, 2) == -1)
			_exit(127);
		if (ch != NULL && fleet_child_ns(ch) == -1)
			_exit(126);
		if (ch != NULL && ch->chdir != NULL && chdir(ch->chdir) == -1)
			_exit(126);
		closefrom(3);
		if (ch != NULL && ch->envp != NULL)
			execve(argv[0], argv, ch->envp);
		else
			execvp(argv[0], argv);
		_exit(127);
	}
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (pid > 0 && (ch == NULL || !ch->setsid))
		setpgid(pid, pid);
	close(nullfd);
	close(outfd);
	return pid;
}

static pid_t
fleet_spawn(char *const argv[], const char *outpath)
{
	return fleet_spawn_child(argv, outpath, NULL);
}

/* Snapshot pid/ppid of every process; the caller frees *out. */
static size_t
fleet_proc_scan(struct fleet_proc **out)
{
	struct fleet_proc *v = NULL;
	size_t n = 0, cap = 0;
	struct dirent *de;
	DIR *d;

	*out = NULL;
	d = opendir("/proc");
	if (d == NULL)
		return 0;
	while ((de = readdir(d)) != NULL) {
		char path[64], buf[512], state;
		const char *rp, *lp;
		size_t cl;
		ssize_t len;
		long ppid, sid;
		int fd;

		long pid;
		char *endp;

		if (de->d_name[0] < '1' || de->d_name[0] > '9')
			continue;
		pid = strtol(de->d_name, &endp, 10);
		if (*endp != '\0')
			continue;
		snprintf(path, sizeof(path), "/proc/%ld/stat", pid);
		fd = open(path, O_RDONLY | O_CLOEXEC);
		if (fd == -1)
			continue;
		len = read(fd, buf, sizeof(buf) - 1);
		close(fd);
		if (len <= 0)
			continue;
		buf[len] = '\0';
		rp = strrchr(buf, ')');
		lp = strchr(buf, '(');
		if (rp == NULL || lp == NULL || lp > rp ||
		    sscanf(rp + 1, " %c %ld %*d %ld", &state, &ppid, &sid) != 3)
			continue;
		if (n == cap) {
			cap = cap ? cap * 2 : 256;
			v = xreallocarray(v, cap, sizeof(*v));
		}
		v[n].pid = (pid_t)pid;
		v[n].ppid = (pid_t)ppid;
		v[n].sid = (pid_t)sid;
		v[n].state = state;
		cl = (size_t)(rp - lp - 1);
		if (cl >= sizeof(v[n].comm))
			cl = sizeof(v[n].comm) - 1;
		memcpy(v[n].comm, lp + 1, cl);
		v[n].comm[cl] = '\0';
		n++;
	}
	closedir(d);
	*out = v;
	return n;
}

/* SIGKILL every descendant of root (not root itself). */
static void
fleet_kill_descendants(const struct fleet_proc *p, size_t np, pid_t root)
{
	pid_t *queue;
	size_t head = 0, tail = 0, i;

	queue = xreallocarray(NULL, np + 1, sizeof(*queue));
	queue[tail++] = root;
	while (head < tail) {
		pid_t cur = queue[head++];

		for (i = 0; i < np; i++) {
			if (p[i].ppid == cur && tail < np + 1) {
				queue[tail++] = p[i].pid;
				kill(p[i].pid, SIGKILL);
			}
		}
	}
	free(queue);
}

/*
 * The HOME in /proc/pid/environ, pointing into buf (cap bytes, reused by
 * the caller across calls), or NULL.
 */
static const char *
fleet_proc_home(pid_t pid, char *buf, size_t cap)
{
	const char *p, *home = NULL;
	char path[64];
	size_t len = 0;
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/%ld/environ", (long)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd == -1)
		return NULL;
	while (len < cap - 1 && (n = read(fd, buf + len, cap - 1 - len)) > 0)
		len += (size_t)n;
	close(fd);
	buf[len] = '\0';
	for (p = buf; p < buf + len; p += strlen(p) + 1)
		if (strncmp(p, "HOME=", 5) == 0)
			home = p + 5;
	return home;
}

static int fleet_is_known(struct fleet *, pid_t);

/* Handle the exit of a fleet child; 1 if pid was ours. */
static int fleet_child_exited(struct fleet *, pid_t, int status);

/* Reap pid if it exited; 1 when it did (and was dispatched). */
static int
fleet_reap_pid(struct fleet *f, pid_t pid)
{
	int status;

	if (pid <= 0 || waitpid(pid, &status, WNOHANG) != pid)
		return 0;
	fleet_child_exited(f, pid, status);
	return 1;
}

/*
 * Reap zombie children that are not ours by pid but were adopted as
 * subreaper: processes of worker sessions (another session id than the
 * emulator's).  Children other modules fork stay in our session and are
 * left to them.  At most every 250 ms: it scans /proc.
 */
static void
fleet_reap_orphans(struct fleet *f)
{
	struct fleet_proc *p;
	int64_t now = fleet_now();
	size_t n, i;
	int status;

	if (now < f->orphan_scan_ms)
		return;
	f->orphan_scan_ms = now + 250;
	n = fleet_proc_scan(&p);
	for (i = 0; i < n; i++)
		if (p[i].state == 'Z' && p[i].ppid == f->self &&
		    p[i].sid != f->sid)
			waitpid(p[i].pid, &status, WNOHANG);
	free(p);
}

/*
 * Reap exited children without blocking: the fleet's own by pid
 * (dispatched to their worker), then adopted session orphans.  Never
 * waitpid(-1): children of other modules are theirs to reap.
 */
static void
fleet_reap(struct fleet *f)
{
	struct fleet_node *n;
	siginfo_t si;
	size_t j;
	int i;

	memset(&si, 0, sizeof(si));
	if (waitid(P_ALL, 0, &si, WEXITED | WNOHANG | WNOWAIT) == -1 ||
	    si.si_pid == 0)
		return; /* no zombie child at all: the common case */
	for (n = f->nodes; n != NULL; n = n->next) {
		for (i = 0; i < n->nworkers; i++) {
			fleet_reap_pid(f, n->w[i].pid);
			fleet_reap_pid(f, n->w[i].kpid);
			fleet_reap_pid(f, n->w[i].spid);
		}
	}
	for (j = 0; j < f->ndying;)
		if (!fleet_reap_pid(f, f->dying[j].pid))
			j++;
	fleet_reap_orphans(f);
}

static void
fleet_add_dying(struct fleet *f, pid_t pid, const char *addr)
{
	struct fleet_dying *d;

	if (f->ndying == f->capdying) {
		f->capdying = f->capdying ? f->capdying * 2 : 64;
		f->dying = xreallocarray(f->dying, f->capdying, sizeof(*d));
	}
	d = &f->dying[f->ndying++];
	d->pid = pid;
	d->kill_at = fleet_now() + FLEET_KILL_WAIT_MS;
	snprintf(d->addr, sizeof(d->addr), "%s", addr);
}

static int
fleet_is_dying(struct fleet *f, pid_t pid)
{
	size_t i;

	for (i = 0; i < f->ndying; i++)
		if (f->dying[i].pid == pid)
			return 1;
	return 0;
}

/* Is an old sshd still holding addr? */
static int
fleet_addr_busy(struct fleet *f, const char *addr)
{
	size_t i;

	for (i = 0; i < f->ndying; i++)
		if (strcmp(f->dying[i].addr, addr) == 0)
			return 1;
	return 0;
}

/*
 * SIGKILL dying processes past their deadline; forget those that are
 * gone without us reaping them (SIGCHLD ignored by someone).
 */
static void
fleet_kill_overdue(struct fleet *f, int64_t now)
{
	size_t i;

	for (i = 0; i < f->ndying; i++) {
		struct fleet_dying *d = &f->dying[i];

		if (kill(d->pid, 0) == -1 && errno == ESRCH) {
			f->dying[i--] = f->dying[--f->ndying];
			continue;
		}
		if (now < d->kill_at)
			continue;
		if (d->addr[0] != '\0')
			log_warn("fleet: sshd %ld (%s) still running 3 s "
			         "after SIGTERM; sending SIGKILL",
			    (long)d->pid, d->addr);
		kill(-d->pid, SIGKILL);
		kill(d->pid, SIGKILL);
		d->kill_at = INT64_MAX;
	}
}

/*
 * Wait until the dying pid (or, with pid 0, every dying process) is
 * reaped, SIGKILLing at the deadlines.  Used only where the caller must
 * see the process gone: worker-down, fini.
 */
static void
fleet_wait_dying(struct fleet *f, pid_t pid)
{
	for (;;) {
		fleet_reap(f);
		if (pid != 0 ? !fleet_is_dying(f, pid) : f->ndying == 0)
			return;
		fleet_kill_overdue(f, fleet_now());
		tpu_sleep_ms(1);
	}
}

/*
 * Stop the processes of the given workers of n (all when worker < 0):
 * descendants (sessions) get SIGKILL, the listener SIGTERM (SIGKILL after
 * FLEET_KILL_WAIT_MS), running ssh-keygens SIGKILL.  Processes that
 * escaped into the subreaper (daemonised by a session) are found by their
 * HOME and killed as well.  Does not wait: the monitor reaps them, and
 * starts no new sshd on an address until its old one is gone.
 */
static void
fleet_kill_workers(struct fleet *f, struct fleet_node *n, int worker)
{
	struct fleet_proc *procs = NULL;
	size_t np;
	int lo, hi, k;

	lo = worker < 0 ? 0 : worker;
	hi = worker < 0 ? n->nworkers : worker + 1;
	np = fleet_proc_scan(&procs);
	/*
	 * Processes that left their session (daemonised, re-parented to us,
	 * or in transit while this snapshot was taken) are left to the
	 * sweep, which finds them by the HOME the worker's sshd gave them.
	 */
	f->sweep_until_ms = fleet_now() + 3000;
	for (k = lo; k < hi; k++) {
		struct fleet_worker *w = &n->w[k];

		if (w->pid > 0) {
			fleet_kill_descendants(procs, np, w->pid);
			kill(w->pid, SIGTERM);
		}
		if (w->kpid > 0)
			kill(w->kpid, SIGKILL);
		if (w->spid > 0) {
			/* The startup scripts: their session, then them. */
			fleet_kill_descendants(procs, np, w->spid);
			kill(-w->spid, SIGKILL);
			kill(w->spid, SIGKILL);
		}
	}
	free(procs);
	for (k = lo; k < hi; k++) {
		struct fleet_worker *w = &n->w[k];

		if (w->kpid > 0)
			fleet_add_dying(f, w->kpid, "");
		if (w->spid > 0)
			fleet_add_dying(f, w->spid, "");
		w->spid = 0;
		if (w->pid > 0)
			fleet_add_dying(f, w->pid, w->addr);
		w->pid = 0;
		w->kpid = 0;
		w->ready = 0;
		if (w->probe_fd != -1) {
			close(w->probe_fd);
			w->probe_fd = -1;
		}
	}
	fleet_reap(f);
}

/*
 * The worker a HOME belongs to ("DIR/nS/wI/home"), or NULL.  *np gets
 * its node.
 */
static struct fleet_worker *
fleet_home_worker(struct fleet *f, const char *home, struct fleet_node **np)
{
	struct fleet_node *n;
	size_t dlen = strlen(f->dir);
	int subnet, w, used = 0;

	if (strncmp(home, f->dir, dlen) != 0 ||
	    sscanf(home + dlen, "/n%d/w%d/home%n", &subnet, &w, &used) != 2 ||
	    home[dlen + (size_t)used] != '\0')
		return NULL;
	for (n = f->nodes; n != NULL; n = n->next) {
		if (n->subnet == subnet && w >= 0 && w < n->nworkers) {
			*np = n;
			return &n->w[w];
		}
	}
	*np = NULL;
	return NULL;
}

/* A process adopted from a worker session, and its HOME. */
struct fleet_adopted {
	pid_t pid;
	char *home;
};

/*
 * The sweep, part 1 (no lock held: only /proc and immutable fields):
 * a process snapshot and our adopted children from other sessions that
 * have a HOME under the fleet dir.
 */
static size_t
fleet_sweep_collect(struct fleet *f, struct fleet_proc **procs, size_t *np,
    struct fleet_adopted **out)
{
	struct fleet_adopted *v = NULL;
	size_t i, n = 0, dlen = strlen(f->dir);
	char *envbuf;

	*np = fleet_proc_scan(procs);
	envbuf = xmalloc(FLEET_ENV_CAP);
	for (i = 0; i < *np; i++) {
		const struct fleet_proc *p = &(*procs)[i];
		const char *home;

		if (p->ppid != f->self || p->sid == f->sid)
			continue;
		home = fleet_proc_home(p->pid, envbuf, FLEET_ENV_CAP);
		if (home == NULL || strncmp(home, f->dir, dlen) != 0)
			continue;
		v = xreallocarray(v, n + 1, sizeof(*v));
		v[n].pid = p->pid;
		v[n].home = xstrdup(home);
		n++;
	}
	free(envbuf);
	*out = v;
	return n;
}

/*
 * The sweep, part 2 (fleet lock held): kill the adopted processes whose
 * worker is gone, stopped or down.  For a few seconds after workers were
 * killed, this catches what the kill's snapshot could not see: daemons
 * re-parented to us, processes in the middle of exec or whose parent was
 * exiting.  Daemons of running workers are left alone.
 */
static void
fleet_sweep_apply(struct fleet *f, const struct fleet_proc *procs, size_t np,
    struct fleet_adopted *v, size_t nv)
{
	size_t i;

	for (i = 0; i < nv; i++) {
		struct fleet_node *n = NULL;
		struct fleet_worker *w;

		if (!fleet_is_known(f, v[i].pid) &&
		    !fleet_is_dying(f, v[i].pid)) {
			w = fleet_home_worker(f, v[i].home, &n);
			if (w == NULL || !n->run || w->down) {
				/* its group at once, as a power cut: a job's
				   wrapper must not see its child die first */
				kill(-v[i].pid, SIGKILL);
				fleet_kill_descendants(procs, np, v[i].pid);
				kill(v[i].pid, SIGKILL);
				fleet_add_dying(f, v[i].pid, "");
			}
		}
		free(v[i].home);
	}
	free(v);
}

/* Move a deleted node's dir aside; the monitor removes it. */
static void
fleet_trash_dir(struct fleet *f, const char *dir)
{
	char *to;

	to = xasprintf("%s/trash.%ld.%u", f->dir, (long)f->self, f->trashseq++);
	if (rename(dir, to) == -1) {
		free(to);
		if (errno != ENOENT)
			fleet_rmtree(dir);
		return;
	}
	f->trash = xreallocarray(f->trash, f->ntrash + 1, sizeof(*f->trash));
	f->trash[f->ntrash++] = to;
}

/* --- keys ------------------------------------------------------------- */

/* Decode base64 (with optional '=' padding); -1 when malformed. */
static long
fleet_b64decode(const char *s, size_t len, unsigned char *out, size_t cap)
{
	unsigned int acc = 0;
	size_t i, o = 0, pad = 0;
	int bits = 0;

	if (len == 0 || len % 4 != 0)
		return -1;
	for (i = 0; i < len; i++) {
		int v;

		if (s[i] == '=') {
			pad++;
			continue;
		}
		if (pad > 0)
			return -1;
		v = tpu_b64_value((unsigned char)s[i], 0);
		if (v < 0)
			return -1;
		acc = (acc << 6) | (unsigned int)v;
		bits += 6;
		if (bits >= 8) {
			bits -= 8;
			if (o == cap)
				return -1;
			out[o++] = (unsigned char)(acc >> bits);
			acc &= (1u << bits) - 1;
		}
	}
	if (pad > 2)
		return -1;
	return (long)o;
}

static const char *const fleet_key_types[] = {
	"ssh-ed25519",
	"ecdsa-sha2-nistp256",
	"ecdsa-sha2-nistp384",
	"ecdsa-sha2-nistp521",
	"ssh-rsa",
	"sk-ssh-ed25519@openssh.com",
	"sk-ecdsa-sha2-nistp256@openssh.com",
};

/*
 * Check one "user:type base64 [comment]" entry.  On success writes the
 * authorized_keys line ("type base64 comment") to out and returns 1;
 * returns 0 for entries to skip (malformed, control characters, another
 * user).
 */
static int
fleet_parse_key_entry(
    const char *entry, size_t len, const char *user, char *out, size_t outlen)
{
	unsigned char blob[4096];
	const char *colon, *type, *b64, *sp, *end = entry + len;
	size_t ulen, tlen, blen, i;
	long dlen;
	int known = 0;
	uint32_t slen;

	for (i = 0; i < len; i++) {
		unsigned char c = (unsigned char)entry[i];

		if (c < ' ' || c == 0x7f)
			return 0; /* CR, LF, NUL, other controls */
	}
	colon = memchr(entry, ':', len);
	if (colon == NULL)
		return 0;
	ulen = (size_t)(colon - entry);
	if (ulen != strlen(user) || memcmp(entry, user, ulen) != 0)
		return 0;
	type = colon + 1;
	sp = memchr(type, ' ', (size_t)(end - type));
	if (sp == NULL)
		return 0;
	tlen = (size_t)(sp - type);
	for (i = 0; i < nitems(fleet_key_types); i++)
		if (strlen(fleet_key_types[i]) == tlen &&
		    memcmp(fleet_key_types[i], type, tlen) == 0)
			known = 1;
	if (!known)
		return 0;
	b64 = sp + 1;
	sp = memchr(b64, ' ', (size_t)(end - b64));
	blen = sp != NULL ? (size_t)(sp - b64) : (size_t)(end - b64);
	dlen = fleet_b64decode(b64, blen, blob, sizeof(blob));
	if (dlen < 4)
		return 0;
	slen = (uint32_t)blob[0] << 24 | (uint32_t)blob[1] << 16 |
	       (uint32_t)blob[2] << 8 | blob[3];
	if (slen != tlen || (long)(4 + slen) > dlen ||
	    memcmp(blob + 4, type, tlen) != 0)
		return 0;
	if ((size_t)snprintf(out, outlen, "%.*s%s%.*s\n",
	        (int)(tlen + 1 + blen), type, sp != NULL ? " " : "",
	        sp != NULL ? (int)(end - sp - 1) : 0,
	        sp != NULL ? sp + 1 : "") >= outlen)
		return 0;
	return 1;
}

/* authorized_keys text for user from the metadata ssh-keys / sshKeys. */
static char *
fleet_keys_text(const cJSON *md, const char *user)
{
	static const char *const fields[] = { "ssh-keys", "sshKeys" };
	char *text;
	size_t len = 0, cap = 1;
	size_t fi;

	text = xmalloc(cap);
	text[0] = '\0';
	for (fi = 0; fi < nitems(fields); fi++) {
		const cJSON *v;
		const char *s, *nl;

		v = cJSON_GetObjectItemCaseSensitive(md, fields[fi]);
		if (!cJSON_IsString(v) || v->valuestring == NULL)
			continue;
		for (s = v->valuestring; *s != '\0'; s = nl + 1) {
			char line[8192];
			size_t l;

			nl = strchr(s, '\n');
			if (nl == NULL)
				nl = s + strlen(s);
			if (fleet_parse_key_entry(s, (size_t)(nl - s), user,
			        line, sizeof(line))) {
				l = strlen(line);
				text = xrealloc(text, cap + l);
				cap += l;
				memcpy(text + len, line, l + 1);
				len += l;
			}
			if (*nl == '\0')
				break;
		}
	}
	return text;
}

static void
fleet_schedule_keys(struct fleet *f, struct fleet_node *n, const cJSON *md)
{
	free(n->keys);
	n->keys = fleet_keys_text(md, f->user);
	n->keys_due_ms = fleet_now() + f->key_delay_ms;
}

/* --- workers ------------------------------------------------------ */

/*
 * The worker's minimal shell setup (no pyenv, nothing slow), starting in
 * its own HOME as on a TPU VM: sshd itself starts the shell in the
 * account's passwd home (between the two parts), so they cd from there only,
 * without a variable of their own in the login environment.  The dotfiles
 * of state dirs made before (they exported TPU_EMULATOR_CD) are replaced.
 */
static const char fleet_bashrc_head[] =
    "# tpuctl-emulator worker: a minimal shell setup (no pyenv, nothing\n"
    "# slow), starting in the worker's own HOME as on a TPU VM (sshd\n"
    "# itself starts in the account's passwd home).\n"
    "if [ \"$PWD\" = '";

static const char fleet_profile_head[] =
    "# tpuctl-emulator worker login profile.\n"
    "if [ -n \"${BASH_VERSION:-}\" ] && [ -f \"$HOME/.bashrc\" ]; then\n"
    "\t. \"$HOME/.bashrc\"\n"
    "elif [ \"$PWD\" = '";

static const char fleet_dotfile_tail[] = "' ]; then\n"
                                         "\tcd \"$HOME\" 2>/dev/null || true\n"
                                         "fi\n";

/* Write a dotfile unless the worker has its own (any but the old one). */
static int
fleet_write_dotfile(const char *path, const char *head, const char *pwdir)
{
	char *text, *old;
	int rc = 0;

	if (strchr(pwdir, '\'') != NULL)
		pwdir = "/nonexistent";
	old = fleet_read_file(path, 4096);
	if (old == NULL || strstr(old, "TPU_EMULATOR_CD") != NULL) {
		text = xasprintf("%s%s%s", head, pwdir, fleet_dotfile_tail);
		rc = fleet_write_file(path, text, strlen(text), 0644);
		free(text);
	}
	free(old);
	return rc;
}

/* Directories, HOME dotfiles, published key: idempotent. */
static int
fleet_worker_setup(
    struct fleet *f, struct fleet_node *n, struct fleet_worker *w)
{
	char *p = NULL;
	struct stat st;
	int rc = -1;

	if (fleet_mkdir(n->dir, 0700) == -1 ||
	    fleet_mkdir(w->dir, 0700) == -1 || fleet_mkdir(w->home, 0755) == -1)
		goto out;
	p = xasprintf("%s/.bashrc", w->home);
	if (fleet_write_dotfile(p, fleet_bashrc_head, f->pwdir) == -1)
		goto out;
	free(p);
	p = xasprintf("%s/.profile", w->home);
	if (fleet_write_dotfile(p, fleet_profile_head, f->pwdir) == -1)
		goto out;
	free(p);
	p = xasprintf("%s/hostkey", w->dir);
	w->keyok = stat(p, &st) == 0;
	free(p);
	p = xasprintf("%s/published.pub", w->dir);
	if (fleet_load_pubkey(p, w->pubkey, sizeof(w->pubkey)) == -1)
		w->pubkey[0] = '\0';
	if (w->keyok && w->pubkey[0] == '\0') {
		/* Published key lost: publish the served one again. */
		free(p);
		p = xasprintf("%s/hostkey.pub", w->dir);
		if (fleet_load_pubkey(p, w->pubkey, sizeof(w->pubkey)) == -1)
			w->keyok = 0;
	}
	w->setup = 1;
	rc = 0;
out:
	if (rc != 0)
		log_warn(
		    "fleet: cannot set up '%s': %s", w->dir, strerror(errno));
	free(p);
	return rc;
}

static void
fleet_write_keys(struct fleet *f, struct fleet_node *n)
{
	int i;

	for (i = 0; i < n->nworkers; i++) {
		struct fleet_worker *w = &n->w[i];
		char *p;

		if (!w->setup && fleet_worker_setup(f, n, w) == -1)
			continue;
		p = xasprintf("%s/authorized_keys", w->dir);
		if (fleet_write_file(p, n->keys, strlen(n->keys), 0600) == -1)
			log_warn(
			    "fleet: cannot write '%s': %s", p, strerror(errno));
		free(p);
	}
	free(n->keys);
	n->keys = NULL;
}

static pid_t
fleet_start_keygen(struct fleet_node *n, struct fleet_worker *w)
{
	char *path, *pub, *log;
	pid_t pid;

	path = xasprintf("%s/hostkey.new", w->dir);
	pub = xasprintf("%s/hostkey.new.pub", w->dir);
	log = xasprintf("%s/sshd.log", w->dir);
	unlink(path);
	unlink(pub);
	{
		char *argv[] = { (char *)"ssh-keygen", (char *)"-q",
			(char *)"-t", (char *)"ed25519", (char *)"-N",
			(char *)"", (char *)"-C", (char *)"", (char *)"-f",
			path, NULL };

		pid = fleet_spawn(argv, log);
	}
	if (pid == -1)
		log_warn("fleet: cannot run ssh-keygen for %s worker %d: %s",
		    n->name, w->idx, strerror(errno));
	free(path);
	free(pub);
	free(log);
	return pid;
}

/* ssh-keygen finished well: install the new key (publish it unless rekey). */
static void
fleet_keygen_done(struct fleet_node *n, struct fleet_worker *w)
{
	char *nk, *npub, *k, *pub, *publ = NULL;
	char key[512];

	nk = xasprintf("%s/hostkey.new", w->dir);
	npub = xasprintf("%s/hostkey.new.pub", w->dir);
	k = xasprintf("%s/hostkey", w->dir);
	pub = xasprintf("%s/hostkey.pub", w->dir);
	if (fleet_load_pubkey(npub, key, sizeof(key)) == -1 ||
	    rename(nk, k) == -1 || rename(npub, pub) == -1) {
		log_warn("fleet: cannot install the host key of %s worker %d",
		    n->name, w->idx);
		w->fails++;
		w->not_before_ms = fleet_now() + 1000;
		goto out;
	}
	w->keyok = 1;
	if (!w->rekey || w->pubkey[0] == '\0') {
		size_t l = strlen(key);

		publ = xasprintf("%s/published.pub", w->dir);
		key[l] = '\n';
		if (fleet_write_file(publ, key, l + 1, 0644) == -1)
			log_warn("fleet: cannot write '%s'", publ);
		key[l] = '\0';
		snprintf(w->pubkey, sizeof(w->pubkey), "%s", key);
	}
	w->rekey = 0;
out:
	free(nk);
	free(npub);
	free(k);
	free(pub);
	free(publ);
}

/*
 * The PATH of a worker's login: a TPU VM image's (Ubuntu), so python3 is
 * the system's /usr/bin/python3, never the emulator account's pyenv.
 */
#define FLEET_PATH                                                             \
	"/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin:"        \
	"/usr/games:/usr/local/games:/snap/bin"

/*
 * The variables every process of worker w starts with (its sshd's
 * SetEnv, the startup-script runner): what a TPU VM login has, no TPU_*
 * identity (that comes from the metadata server), plus HOME (each
 * worker's own; also how the sweep tells whose a process is) and the
 * metadata server's address.  A NULL-terminated array of "NAME=value";
 * the caller frees it with fleet_strv_free.
 */
static char **
fleet_worker_environ(struct fleet_node *n, struct fleet_worker *w)
{
	char **v = xcalloc(8, sizeof(*v));
	int k = 0;

	v[k++] = xasprintf("HOME=%s", w->home);
	v[k++] = xasprintf("PATH=%s", FLEET_PATH);
	if (n->mdhost != NULL) {
		/* The worker's own metadata server: its address, our port. */
		const char *port = strrchr(n->mdhost, ':');

		if (port == NULL)
			port = "";
		v[k++] = xasprintf("GCE_METADATA_HOST=%s%s", w->addr, port);
		v[k++] = xasprintf("GCE_METADATA_IP=%s%s", w->addr, port);
	}
	v[k] = NULL;
	return v;
}

static void
fleet_strv_free(char **v)
{
	size_t i;

	for (i = 0; v != NULL && v[i] != NULL; i++)
		free(v[i]);
	free(v);
}

static int
fleet_write_config(
    struct fleet *f, struct fleet_node *n, struct fleet_worker *w)
{
	char *cfg = NULL, *path = NULL, *env = NULL, *akc, **v;
	size_t i;
	int rc;

	/*
	 * OS Login: sshd asks the emulator for the login user's imported
	 * keys (loopback, no token), as the guest agent's
	 * google_authorized_keys asks the metadata server.  curl is run by
	 * path (sshd wants a root-owned command); the key file stays too.
	 */
	if (n->oslogin && f->osl_url != NULL)
		akc = xasprintf("AuthorizedKeysCommand /usr/bin/curl -sf "
		                "--max-time 5 %s%s "
		                "%s/_oslogin/authorizedKeys?username=%%u\n"
		                "AuthorizedKeysCommandUser %s\n",
		    f->ca_pem != NULL ? "--cacert " : "",
		    f->ca_pem != NULL ? f->ca_pem : "", f->osl_url,
		    geteuid() == 0 ? "nobody" : f->user);
	else
		akc = xstrdup("");
	v = fleet_worker_environ(n, w);
	env = xstrdup("SetEnv");
	for (i = 0; v[i] != NULL; i++) {
		char *t = xasprintf("%s \"%s\"", env, v[i]);

		free(env);
		env = t;
	}
	fleet_strv_free(v);
	cfg = xasprintf("# Generated by tpuctl-emulator: %s worker %d.\n"
	                "ListenAddress %s:%d\n"
	                "HostKey %s/hostkey\n"
	                "PidFile %s/sshd.pid\n"
	                "AuthorizedKeysFile %s/authorized_keys\n"
	                "PasswordAuthentication no\n"
	                "KbdInteractiveAuthentication no\n"
	                "PubkeyAuthentication yes\n"
	                "PermitRootLogin prohibit-password\n"
	                "UsePAM no\n"
	                "StrictModes no\n"
	                "MaxStartups 1024:30:2048\n"
	                "MaxSessions 64\n"
	                "LogLevel VERBOSE\n"
	                "AllowTcpForwarding yes\n"
	                "X11Forwarding no\n"
	                "PrintMotd no\n"
	                "PrintLastLog no\n"
	                "UseDNS no\n"
	                "Subsystem sftp internal-sftp -d %s\n"
	                "%s%s\n",
	    n->key, w->idx, w->addr, f->port, w->dir, w->dir, w->dir, w->home,
	    akc, env);
	path = xasprintf("%s/sshd_config", w->dir);
	rc = fleet_write_file(path, cfg, strlen(cfg), 0600);
	if (rc == -1)
		log_warn("fleet: cannot write '%s': %s", path, strerror(errno));
	free(cfg);
	free(path);
	free(env);
	free(akc);
	return rc;
}

/* "projects/P/locations/Z/nodes/N": the text after "/what/" (up to '/'). */
static char *
fleet_key_part(const char *key, const char *what)
{
	size_t wl = strlen(what);
	const char *p = key;

	while (p != NULL && *p != '\0') {
		if (strncmp(p, what, wl) == 0 && p[wl] == '/')
			return xstrndup(p + wl + 1, strcspn(p + wl + 1, "/"));
		p = strchr(p, '/');
		if (p != NULL)
			p++;
	}
	return xstrdup("");
}

/*
 * The worker's /etc/hosts and /etc/hostname (bound over the host's in its
 * mount namespace): its own name as GCE's /etc/hosts has it, the
 * metadata server's names on the worker's own address (its metadata
 * address), Google's API names on the emulator's.
 */
/*
 * The worker's /etc/passwd: the host's, with the login account's home
 * field set to the worker's HOME, as a TPU VM's passwd names the user's
 * /home/USER.  What runs without sshd's SetEnv (the startup scripts, as
 * root with no HOME) finds the account's home there.  0 or -1.
 */
static int
fleet_write_passwd(
    struct fleet *f, struct fleet_node *n, struct fleet_worker *w)
{
	struct buf in, out;
	struct tpu_err err;
	char *path;
	const char *p, *end;
	size_t ulen = strlen(f->user);
	int rc;

	buf_init(&in, BUF_NOCAP);
	buf_init(&out, BUF_NOCAP);
	if (fsutil_read_file("/etc/passwd", 0, &in, NULL, &err) != 0) {
		buf_release(&in);
		return -1;
	}
	for (p = in.data; p < in.data + in.len; p = end) {
		const char *nl =
		    memchr(p, '\n', (size_t)(in.data + in.len - p));
		const char *f5 = p;
		int i;

		end = nl != NULL ? nl + 1 : in.data + in.len;
		if ((size_t)(end - p) <= ulen ||
		    memcmp(p, f->user, ulen) != 0 || p[ulen] != ':') {
			buf_append(&out, p, (size_t)(end - p));
			continue;
		}
		/* name:pw:uid:gid:gecos:HOME:shell */
		for (i = 0; i < 5 && f5 != NULL; i++) {
			f5 = memchr(f5, ':', (size_t)(end - f5));
			if (f5 != NULL)
				f5++;
		}
		if (f5 == NULL) {
			buf_append(&out, p, (size_t)(end - p));
			continue;
		}
		buf_append(&out, p, (size_t)(f5 - p));
		buf_puts(&out, w->home);
		p = memchr(f5, ':', (size_t)(end - f5));
		buf_append(&out, p != NULL ? p : "\n",
		    p != NULL ? (size_t)(end - p) : 1);
	}
	/*
	 * An OS Login node: its login user, as the guest agent's NSS module
	 * answers it, with the worker's HOME (handed over to it).
	 */
	if (n->oslogin && f->osl_user[0] != '\0') {
		char *line = xasprintf("%s:*:%u:%u::%s:/bin/bash\n",
		    f->osl_user, f->osl_uid, f->osl_uid, w->home);

		buf_puts(&out, line);
		free(line);
		/* its HOME: its own, reachable (the worker's dir is
		 * what the worker's /tmp shows of the state dir) */
		if (chown(w->home, f->osl_uid, f->osl_uid) == -1 ||
		    chmod(w->dir, 0711) == -1)
			log_warn("fleet: cannot hand '%s' to %s: %s", w->home,
			    f->osl_user, strerror(errno));
	}
	path = xasprintf("%s/passwd", w->dir);
	rc = fleet_write_file(path, out.data, out.len, 0644);
	free(path);
	buf_release(&in);
	buf_release(&out);
	return rc;
}

static int
fleet_write_etc(struct fleet *f, struct fleet_node *n, struct fleet_worker *w)
{
	char *proj, *zone, *text, *path;
	int rc;

	proj = fleet_key_part(n->key, "projects");
	zone = fleet_key_part(n->key, "locations");
	text = xasprintf("# Generated by tpuctl-emulator: %s worker %d.\n"
	                 "127.0.0.1\tlocalhost\n"
	                 "::1\tlocalhost ip6-localhost ip6-loopback\n"
	                 "%s\t%s.%s.c.%s.internal %s\n"
	                 "%s\tmetadata.google.internal metadata\n"
	                 "%s\tstorage.googleapis.com oauth2.googleapis.com "
	                 "tpu.googleapis.com\n",
	    n->key, w->idx, w->addr, w->hostname, zone, proj, w->hostname,
	    w->addr, f->emu_addr != NULL ? f->emu_addr : "127.0.0.1");
	path = xasprintf("%s/hosts", w->dir);
	rc = fleet_write_file(path, text, strlen(text), 0644);
	free(path);
	free(text);
	if (rc == 0) {
		text = xasprintf("%s\n", w->hostname);
		path = xasprintf("%s/hostname", w->dir);
		rc = fleet_write_file(path, text, strlen(text), 0644);
		free(path);
		free(text);
	}
	if (rc == 0)
		rc = fleet_write_passwd(f, n, w);
	if (rc == -1)
		log_warn("fleet: cannot write the /etc files of '%s': %s",
		    w->dir, strerror(errno));
	free(proj);
	free(zone);
	return rc;
}

static void
fleet_op_add(struct fleet_op **ops, size_t *nops, enum fleet_op_kind kind,
    char *src, char *dst)
{
	*ops = xreallocarray(*ops, *nops + 1, sizeof(**ops));
	(*ops)[*nops].kind = kind;
	(*ops)[*nops].src = src;
	(*ops)[*nops].dst = dst;
	(*ops)[*nops].fd = -1;
	(*nops)++;
}

static void
fleet_ops_free(struct fleet_op *ops, size_t nops)
{
	size_t i;

	for (i = 0; i < nops; i++) {
		free(ops[i].src);
		free(ops[i].dst);
	}
	free(ops);
}

/*
 * What a worker's sshd child mounts in its new mount namespace (after
 * unshare, hostname): a private tmpfs /tmp (the worker's dir bound back
 * in when the state dir is under /tmp: sshd reads its config, keys and
 * HOME there), a /dev of its own (a tmpfs with the host's null, zero,
 * random, tty, ptmx, pts, ... bound in, a private /dev/shm and regular
 * files /dev/accel0..K-1 standing in for the TPU chips), and the worker's
 * /etc/hosts, /etc/hostname and (under --tls) CA bundle.
 */
static void
fleet_ns_ops(struct fleet *f, struct fleet_node *n, struct fleet_worker *w,
    struct fleet_op **ops, size_t *nops)
{
	int under_tmp = strncmp(w->dir, "/tmp/", 5) == 0;
	size_t i;
	int c;

	*ops = NULL;
	*nops = 0;
	/* First what comes from the state dir, before /tmp is covered. */
	fleet_op_add(ops, nops, FLEET_OP_BIND, xasprintf("%s/hosts", w->dir),
	    xstrdup("/etc/hosts"));
	fleet_op_add(ops, nops, FLEET_OP_BIND, xasprintf("%s/passwd", w->dir),
	    xstrdup("/etc/passwd"));
	if (f->etc_hostname)
		fleet_op_add(ops, nops, FLEET_OP_BIND,
		    xasprintf("%s/hostname", w->dir), xstrdup("/etc/hostname"));
	if (f->bundle != NULL)
		fleet_op_add(ops, nops, FLEET_OP_BIND, xstrdup(f->bundle),
		    xstrdup(FLEET_CA_BUNDLE));
	fleet_op_add(ops, nops, FLEET_OP_OPEN, xstrdup("/dev"), NULL);
	(*ops)[*nops - 1].fd = FLEET_CHILD_DEVFD;
	if (under_tmp) {
		fleet_op_add(ops, nops, FLEET_OP_OPEN, xstrdup(w->dir), NULL);
		(*ops)[*nops - 1].fd = FLEET_CHILD_DIRFD;
	}
	fleet_op_add(
	    ops, nops, FLEET_OP_TMPFS, xstrdup("mode=1777"), xstrdup("/tmp"));
	if (under_tmp) {
		fleet_op_add(ops, nops, FLEET_OP_MKDIRS, NULL, xstrdup(w->dir));
		fleet_op_add(ops, nops, FLEET_OP_BIND,
		    xasprintf("/proc/self/fd/%d", FLEET_CHILD_DIRFD),
		    xstrdup(w->dir));
	}
	fleet_op_add(ops, nops, FLEET_OP_TMPFS, xstrdup("mode=755,size=1m"),
	    xstrdup("/dev"));
	for (i = 0; i < f->ndevops; i++)
		fleet_op_add(ops, nops, f->devops[i].kind,
		    f->devops[i].src != NULL ? xstrdup(f->devops[i].src) : NULL,
		    f->devops[i].dst != NULL ? xstrdup(f->devops[i].dst)
		                             : NULL);
	fleet_op_add(ops, nops, FLEET_OP_MKDIR, NULL, xstrdup("/dev/shm"));
	fleet_op_add(ops, nops, FLEET_OP_TMPFS, xstrdup("mode=1777"),
	    xstrdup("/dev/shm"));
	for (c = 0; c < n->chips; c++)
		fleet_op_add(ops, nops, FLEET_OP_MKFILE, NULL,
		    xasprintf("/dev/accel%d", c));
}

static pid_t
fleet_start_sshd(struct fleet *f, struct fleet_node *n, struct fleet_worker *w)
{
	struct fleet_child ch;
	struct fleet_op *ops = NULL;
	char *cfg, *log, *pidf;
	size_t nops = 0;
	pid_t pid = -1;

	cfg = xasprintf("%s/sshd_config", w->dir);
	log = xasprintf("%s/sshd.log", w->dir);
	pidf = xasprintf("%s/sshd.pid", w->dir);
	if (fleet_write_config(f, n, w) == -1)
		goto out;
	memset(&ch, 0, sizeof(ch));
	ch.uts_fd = ch.mnt_fd = -1;
	if (f->ns) {
		if (fleet_write_etc(f, n, w) == -1)
			goto out;
		fleet_ns_ops(f, n, w, &ops, &nops);
		ch.unshare = 1;
		ch.hostname = w->hostname;
		ch.ops = ops;
		ch.nops = nops;
	}
	unlink(pidf);
	{
		char *argv[] = { f->sshd, (char *)"-D", (char *)"-r",
			(char *)"-f", cfg, (char *)"-E", log, NULL };

		pid = fleet_spawn_child(argv, log, &ch);
	}
	if (pid == -1)
		log_warn("fleet: cannot start sshd for %s worker %d: %s",
		    n->name, w->idx, strerror(errno));
out:
	fleet_ops_free(ops, nops);
	free(cfg);
	free(log);
	free(pidf);
	return pid;
}

/* --- startup scripts ------------------------------------------------ */

/*
 * The guest agent's google_metadata_script_runner, in bash: logs in the
 * agent's syslog form ("<time> <host> google_metadata_script_runner[pid]:
 * <key>: <line>"), runs startup-script and then startup-script-url (the
 * agent's order on Linux), each through "/bin/bash -c FILE" as the agent
 * does (a #! line picks another interpreter), stdin /dev/null, and logs
 * its exit status.  The URL is fetched with the metadata server's token.
 * $1 hostname, $2 the startup-script file ("" when none), $3 the URL to
 * fetch startup-script-url from ("" when none), $4 a CA file for it.
 */
static const char fleet_runner[] =
    "h=$1 file=$2 url=$3 ca=$4\n"
    "log() { printf '%(%b %d %H:%M:%S)T %s "
    "google_metadata_script_runner[%d]: %s\\n' -1 \"$h\" \"$$\" \"$1\"; }\n"
    "run() {\n"
    "\t/bin/bash -c \"$2\" </dev/null 2>&1 | while IFS= read -r l ||\n"
    "\t    [ -n \"$l\" ]; do log \"$1: $l\"; done\n"
    "\tlog \"$1 exit status ${PIPESTATUS[0]}\"\n"
    "}\n"
    "log 'Starting startup scripts (version tpuctl-emulator).'\n"
    "if [ -n \"$file\" ]; then\n"
    "\tlog 'Found startup-script in metadata.'\n"
    "\trun startup-script \"$file\"\n"
    "fi\n"
    "if [ -n \"$url\" ]; then\n"
    "\tlog 'Found startup-script-url in metadata.'\n"
    "\ttok=$(curl -sf -H 'Metadata-Flavor: Google' "
    "\"http://$GCE_METADATA_HOST/computeMetadata/v1/instance/"
    "service-accounts/default/token\" |\n"
    "\t    sed -n "
    "'s/.*\"access_token\"[[:space:]]*:[[:space:]]*\"\\([^\"]*\\)\".*/\\1/p')\n"
    "\tif curl -sSf ${ca:+--cacert \"$ca\"} "
    "-H \"Authorization: Bearer $tok\" \\\n"
    "\t    -o \"$0.url\" \"$url\" 2>\"$0.err\"; then\n"
    "\t\tchmod 700 \"$0.url\"\n"
    "\t\trun startup-script-url \"$0.url\"\n"
    "\telse\n"
    "\t\tlog \"startup-script-url: download failed: $(cat \"$0.err\")\"\n"
    "\tfi\n"
    "fi\n"
    "[ -n \"$file$url\" ] || log 'No startup scripts to run.'\n"
    "log 'Finished running startup scripts.'\n";

/* Percent-encode everything but RFC 3986 unreserved characters. */
static char *
fleet_pct(const char *s, size_t len)
{
	static const char hex[] = "0123456789ABCDEF";
	char *out = xmalloc(len * 3 + 1), *o = out;
	size_t i;

	for (i = 0; i < len; i++) {
		unsigned char c = (unsigned char)s[i];

		if ((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') ||
		    (c >= '0' && c <= '9') || c == '-' || c == '.' ||
		    c == '_' || c == '~') {
			*o++ = (char)c;
		} else {
			*o++ = '%';
			*o++ = hex[c >> 4];
			*o++ = hex[c & 15];
		}
	}
	*o = '\0';
	return out;
}

/*
 * Where the runner fetches a startup-script-url: gs://BUCKET/OBJECT (and
 * https://storage.googleapis.com/BUCKET/OBJECT, the other form the agent
 * takes) from the emulator's Cloud Storage; any other URL as it is.
 */
static char *
fleet_script_fetch_url(struct fleet *f, const char *url)
{
	static const char *const prefixes[] = {
		"gs://",
		"https://storage.googleapis.com/",
		"https://storage.cloud.google.com/",
	};
	const char *b, *slash;
	char *bk, *obj, *out;
	size_t i;

	for (i = 0; i < nitems(prefixes); i++) {
		if (strncmp(url, prefixes[i], strlen(prefixes[i])) != 0)
			continue;
		b = url + strlen(prefixes[i]);
		slash = strchr(b, '/');
		if (slash == NULL || slash == b || slash[1] == '\0' ||
		    f->base_url == NULL)
			break;
		bk = fleet_pct(b, (size_t)(slash - b));
		obj = fleet_pct(slash + 1, strlen(slash + 1));
		out = xasprintf(
		    "%s/storage/v1/b/%s/o/%s?alt=media", f->base_url, bk, obj);
		free(bk);
		free(obj);
		return out;
	}
	return xstrdup(url);
}

/* Append the agent's lines for a boot without startup scripts. */
static void
fleet_script_log_none(struct fleet_worker *w)
{
	static const char *const lines[] = {
		"Starting startup scripts (version tpuctl-emulator).",
		"No startup scripts to run.",
		"Finished running startup scripts.",
	};
	char stamp[64], *path;
	struct tm tm;
	time_t now = time(NULL);
	FILE *fp;
	size_t i;

	path = xasprintf("%s/startup-script.log", w->dir);
	fp = fopen(path, "ae");
	if (fp == NULL) {
		log_warn("fleet: cannot write '%s': %s", path, strerror(errno));
		free(path);
		return;
	}
	localtime_r(&now, &tm);
	strftime(stamp, sizeof(stamp), "%b %d %H:%M:%S", &tm);
	for (i = 0; i < nitems(lines); i++)
		fprintf(fp, "%s %s google_metadata_script_runner[%ld]: %s\n",
		    stamp, w->hostname, (long)getpid(), lines[i]);
	fclose(fp);
	free(path);
}

/*
 * Boot: run the node's startup scripts on worker w, in its namespaces
 * (joined through its sshd's /proc/PID/ns), in a session of its own,
 * output appended to w->dir/startup-script.log.  0 or -1.
 */
static int
fleet_start_scripts(
    struct fleet *f, struct fleet_node *n, struct fleet_worker *w)
{
	struct fleet_child ch;
	char *file = NULL, *url = NULL, *log = NULL, *runner = NULL, **env;
	char path[64];
	size_t k;
	int rc = -1;

	if (n->script == NULL && n->script_url == NULL) {
		fleet_script_log_none(w);
		return 0;
	}
	memset(&ch, 0, sizeof(ch));
	ch.uts_fd = ch.mnt_fd = -1;
	ch.setsid = 1;
	ch.chdir = "/";
	runner = xasprintf("%s/startup-script.runner", w->dir);
	if (n->script != NULL) {
		file = xasprintf("%s/startup-script", w->dir);
		if (fleet_write_file(
		        file, n->script, strlen(n->script), 0700) == -1) {
			log_warn("fleet: cannot write '%s': %s", file,
			    strerror(errno));
			goto out;
		}
	}
	if (n->script_url != NULL)
		url = fleet_script_fetch_url(f, n->script_url);
	log = xasprintf("%s/startup-script.log", w->dir);
	if (f->ns) {
		snprintf(path, sizeof(path), "/proc/%ld/ns/uts", (long)w->pid);
		ch.uts_fd = open(path, O_RDONLY | O_CLOEXEC);
		snprintf(path, sizeof(path), "/proc/%ld/ns/mnt", (long)w->pid);
		ch.mnt_fd = open(path, O_RDONLY | O_CLOEXEC);
		if (ch.uts_fd == -1 || ch.mnt_fd == -1) {
			log_warn("fleet: cannot open the namespaces of %s "
			         "worker %d: %s",
			    n->name, w->idx, strerror(errno));
			goto out;
		}
	}
	/*
	 * The worker's environment.  As root (worker namespaces), what the
	 * guest agent's systemd service gives on a TPU VM: root, no HOME,
	 * USER or LOGNAME (no User= in the unit), cwd /; the login account's
	 * home is in the worker's /etc/passwd.  Otherwise the runner is the
	 * login account itself and keeps its worker HOME and names.
	 */
	env = fleet_worker_environ(n, w);
	for (k = 0; env[k] != NULL; k++)
		;
	if (f->ns) {
		free(env[0]); /* HOME= */
		memmove(env, env + 1, k * sizeof(*env));
		k--;
	}
	env = xreallocarray(env, k + 4, sizeof(*env));
	if (!f->ns) {
		env[k++] = xasprintf("USER=%s", f->user);
		env[k++] = xasprintf("LOGNAME=%s", f->user);
	}
	env[k++] = xstrdup("SHELL=/bin/bash");
	env[k] = NULL;
	ch.envp = env;
	{
		char *argv[] = { (char *)"/bin/bash", (char *)"-c",
			(char *)fleet_runner, runner, w->hostname,
			file != NULL ? file : (char *)"",
			url != NULL ? url : (char *)"",
			f->ca_pem != NULL ? f->ca_pem : (char *)"", NULL };

		w->spid = fleet_spawn_child(argv, log, &ch);
	}
	fleet_strv_free(env);
	if (w->spid == -1) {
		w->spid = 0;
		log_warn("fleet: cannot run the startup scripts of %s worker "
		         "%d: %s",
		    n->name, w->idx, strerror(errno));
		goto out;
	}
	rc = 0;
out:
	if (ch.uts_fd != -1)
		close(ch.uts_fd);
	if (ch.mnt_fd != -1)
		close(ch.mnt_fd);
	free(file);
	free(url);
	free(log);
	free(runner);
	return rc;
}

/* Keep the node's startup-script and startup-script-url metadata. */
static void
fleet_take_scripts(struct fleet_node *n, const cJSON *md)
{
	const cJSON *v;

	free(n->script);
	free(n->script_url);
	n->script = n->script_url = NULL;
	v = cJSON_GetObjectItemCaseSensitive(md, "enable-oslogin");
	n->oslogin =
	    cJSON_IsString(v) && strcasecmp(v->valuestring, "true") == 0;
	v = cJSON_GetObjectItemCaseSensitive(md, "startup-script");
	if (cJSON_IsString(v) && v->valuestring[0] != '\0')
		n->script = xstrdup(v->valuestring);
	v = cJSON_GetObjectItemCaseSensitive(md, "startup-script-url");
	if (cJSON_IsString(v) && v->valuestring[0] != '\0')
		n->script_url = xstrdup(v->valuestring);
}

/* Non-blocking readiness probe: 1 once the port accepted a connection. */
static int
fleet_probe(struct fleet *f, struct fleet_worker *w)
{
	struct sockaddr_in sin;
	int err = 0;
	socklen_t elen = sizeof(err);

	if (w->probe_fd == -1) {
		memset(&sin, 0, sizeof(sin));
		sin.sin_family = AF_INET;
		sin.sin_port = htons((uint16_t)f->port);
		if (inet_pton(AF_INET, w->addr, &sin.sin_addr) != 1)
			return 0;
		w->probe_fd = socket(
		    AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
		if (w->probe_fd == -1)
			return 0;
		if (connect(
		        w->probe_fd, (struct sockaddr *)&sin, sizeof(sin)) == 0)
			goto connected;
		if (errno != EINPROGRESS)
			goto failed;
		return 0;
	}
	{
		struct pollfd pfd = { w->probe_fd, POLLOUT, 0 };

		if (poll(&pfd, 1, 0) <= 0)
			return 0;
	}
	if (getsockopt(w->probe_fd, SOL_SOCKET, SO_ERROR, &err, &elen) == -1 ||
	    err != 0)
		goto failed;
connected:
	close(w->probe_fd);
	w->probe_fd = -1;
	return 1;
failed:
	close(w->probe_fd);
	w->probe_fd = -1;
	return 0;
}

static int
fleet_is_known(struct fleet *f, pid_t pid)
{
	struct fleet_node *n;
	int i;

	for (n = f->nodes; n != NULL; n = n->next)
		for (i = 0; i < n->nworkers; i++)
			if (n->w[i].pid == pid || n->w[i].kpid == pid ||
			    n->w[i].spid == pid)
				return 1;
	return 0;
}

static int
fleet_child_exited(struct fleet *f, pid_t pid, int status)
{
	struct fleet_node *n;
	int i;

	for (n = f->nodes; n != NULL; n = n->next) {
		for (i = 0; i < n->nworkers; i++) {
			struct fleet_worker *w = &n->w[i];

			if (w->spid == pid) {
				w->spid = 0;
				return 1;
			}
			if (w->kpid == pid) {
				w->kpid = 0;
				if (WIFEXITED(status) &&
				    WEXITSTATUS(status) == 0) {
					fleet_keygen_done(n, w);
				} else if (!f->stop) {
					w->fails++;
					w->not_before_ms = fleet_now() + 1000;
					log_warn("fleet: ssh-keygen failed for "
					         "%s worker %d",
					    n->name, i);
				}
				return 1;
			}
			if (w->pid == pid) {
				int64_t now = fleet_now();

				w->pid = 0;
				if (w->probe_fd != -1) {
					close(w->probe_fd);
					w->probe_fd = -1;
				}
				if (w->ready && now - w->ready_ms > 10000)
					w->fails = 0;
				w->ready = 0;
				w->fails++;
				w->not_before_ms =
				    now +
				    (w->fails > 5 ? 5000 : 100 << w->fails);
				if (n->run && !w->down && !f->stop &&
				    (w->fails & (w->fails - 1)) == 0)
					log_warn("fleet: sshd of %s worker %d "
					         "(%s) exited (status %d); "
					         "restarting, see %s/sshd.log",
					    n->name, i, w->addr, status,
					    w->dir);
				return 1;
			}
		}
	}
	for (size_t j = 0; j < f->ndying; j++) {
		if (f->dying[j].pid == pid) {
			f->dying[j] = f->dying[--f->ndying];
			return 1;
		}
	}
	return 0;
}

/* --- black holes ---------------------------------------------------- */

/*
 * A silent black hole: take the connections the kernel completed and
 * hold them, reading and discarding what the client sends (its SSH
 * banner) and never writing a byte; close those the client closed.
 * Called by the monitor on every tick.
 */
static void
fleet_hole_service(struct fleet_worker *w)
{
	char buf[4096];
	int i, k, fd;

	while (w->nhole_conns < FLEET_HOLE_CONNS &&
	       (fd = accept4(w->hole_fd, NULL, NULL,
	            SOCK_NONBLOCK | SOCK_CLOEXEC)) != -1) {
		w->hole_conns = xreallocarray(w->hole_conns,
		    (size_t)w->nhole_conns + 1, sizeof(*w->hole_conns));
		w->hole_conns[w->nhole_conns++] = fd;
	}
	for (i = 0; i < w->nhole_conns;) {
		ssize_t r = -1;

		/* A bounded drain: a client that streams cannot hog us. */
		for (k = 0; k < 16; k++)
			if ((r = read(w->hole_conns[i], buf, sizeof(buf))) <= 0)
				break;
		if (r == 0 || (r == -1 && errno != EAGAIN && errno != EINTR)) {
			close(w->hole_conns[i]);
			w->hole_conns[i] = w->hole_conns[--w->nhole_conns];
			continue;
		}
		i++;
	}
}

/* Wait until no dying sshd holds addr any more. */
static void
fleet_wait_addr(struct fleet *f, const char *addr)
{
	size_t i;

	for (;;) {
		for (i = 0; i < f->ndying; i++)
			if (strcmp(f->dying[i].addr, addr) == 0)
				break;
		if (i == f->ndying)
			return;
		fleet_wait_dying(f, f->dying[i].pid);
	}
}

/*
 * Drop mode: a listener with backlog 0 whose accept queue holds one of
 * our own connections that is never accepted.  Linux then drops every
 * further SYN, so clients hang in connect() as behind a firewall drop
 * rule.  Connects until one SYN goes unanswered for 300 ms (the queue is
 * full), keeping every socket: 0, or -1 with errno set.
 */
static int
fleet_hole_fill(struct fleet_worker *w, const struct sockaddr_in *sin)
{
	int i, fd;

	for (i = 0; i < FLEET_HOLE_FILL; i++) {
		struct pollfd pfd;

		fd = socket(
		    AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
		if (fd == -1)
			return -1;
		w->hole_conns = xreallocarray(w->hole_conns,
		    (size_t)w->nhole_conns + 1, sizeof(*w->hole_conns));
		w->hole_conns[w->nhole_conns++] = fd;
		if (connect(fd, (const struct sockaddr *)sin, sizeof(*sin)) ==
		        -1 &&
		    errno != EINPROGRESS)
			return -1;
		pfd.fd = fd;
		pfd.events = POLLOUT;
		pfd.revents = 0;
		if (poll(&pfd, 1, i == 0 ? 2000 : 300) == 0 && i > 0)
			return 0; /* unanswered: the queue is full */
	}
	errno = EAGAIN;
	return -1;
}

/*
 * Bind the black hole's listener on the worker's address and port (its
 * sshd is gone) and, in drop mode, fill its accept queue.
 */
static int
fleet_hole_open(struct fleet *f, struct fleet_worker *w, int mode, char *errbuf,
    size_t errlen)
{
	struct sockaddr_in sin;
	const char *what = "bind";
	int one = 1, tries;

	memset(&sin, 0, sizeof(sin));
	sin.sin_family = AF_INET;
	sin.sin_port = htons((uint16_t)f->port);
	if (inet_pton(AF_INET, w->addr, &sin.sin_addr) != 1) {
		errno = EINVAL;
		goto fail;
	}
	w->hole_fd =
	    socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (w->hole_fd == -1)
		goto fail;
	setsockopt(w->hole_fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	/* A session of the old sshd may hold the port for a moment. */
	for (tries = 0;; tries++) {
		if (bind(w->hole_fd, (struct sockaddr *)&sin, sizeof(sin)) == 0)
			break;
		if (errno != EADDRINUSE || tries == 200)
			goto fail;
		tpu_sleep_ms(10);
	}
	what = "listen";
	if (listen(w->hole_fd, mode == FLEET_HOLE_DROP ? 0 : 128) == -1)
		goto fail;
	what = "fill the accept queue";
	if (mode == FLEET_HOLE_DROP && fleet_hole_fill(w, &sin) == -1)
		goto fail;
	w->hole = mode;
	return 0;
fail:
	fleet_seterr(errbuf, errlen, "cannot %s for a black hole on %s:%d: %s",
	    what, w->addr, f->port, strerror(errno));
	fleet_hole_close(w);
	return -1;
}

/* One monitor pass over every worker; returns 1 while work is pending. */
static int
fleet_tick(struct fleet *f)
{
	struct fleet_node *n;
	int nkeygen = 0, nstarting = 0, budget = 16, busy = 0;
	int64_t now = fleet_now();

	fleet_reap(f);
	if (now < f->sweep_until_ms)
		busy = 1;
	fleet_kill_overdue(f, now);
	if (f->ndying > 0)
		busy = 1;
	for (n = f->nodes; n != NULL; n = n->next) {
		int i;

		for (i = 0; i < n->nworkers; i++) {
			if (n->w[i].kpid > 0)
				nkeygen++;
			if (n->w[i].pid > 0 && !n->w[i].ready)
				nstarting++;
		}
	}
	for (n = f->nodes; n != NULL; n = n->next) {
		int i;

		for (i = 0; i < n->nworkers; i++)
			if (n->w[i].hole == FLEET_HOLE_SILENT)
				fleet_hole_service(&n->w[i]);
		if (n->keys != NULL) {
			busy = 1;
			if (now >= n->keys_due_ms)
				fleet_write_keys(f, n);
		}
		if (!n->run)
			continue;
		for (i = 0; i < n->nworkers; i++) {
			struct fleet_worker *w = &n->w[i];

			if (w->down)
				continue;
			if (w->pid > 0 && !w->ready) {
				busy = 1;
				if (fleet_probe(f, w)) {
					w->ready = 1;
					w->ready_ms = now;
					nstarting--;
				}
				continue;
			}
			if (w->pid > 0 && !w->booted) {
				/* Booted: the guest agent's startup scripts. */
				busy = 1;
				if (budget <= 0)
					continue;
				budget--;
				w->booted = 1;
				fleet_start_scripts(f, n, w);
				continue;
			}
			if (w->pid > 0 || w->kpid > 0) {
				busy |= w->kpid > 0;
				continue;
			}
			busy = 1;
			if (budget <= 0 || now < w->not_before_ms)
				continue;
			if (!w->setup) {
				budget--;
				if (fleet_worker_setup(f, n, w) == -1) {
					w->not_before_ms = now + 1000;
					continue;
				}
			}
			if (!w->keyok || w->rekey) {
				if (nkeygen >= FLEET_MAX_KEYGEN)
					continue;
				budget--;
				w->kpid = fleet_start_keygen(n, w);
				if (w->kpid == -1) {
					w->kpid = 0;
					w->not_before_ms = now + 1000;
				} else {
					nkeygen++;
				}
				continue;
			}
			if (nstarting >= FLEET_MAX_STARTING ||
			    fleet_addr_busy(f, w->addr))
				continue;
			budget--;
			w->pid = fleet_start_sshd(f, n, w);
			if (w->pid == -1) {
				w->pid = 0;
				w->not_before_ms = now + 1000;
			} else {
				nstarting++;
			}
		}
	}
	return busy;
}

static void *
fleet_main(void *arg)
{
	struct fleet *f = arg;

	pthread_mutex_lock(&f->mu);
	while (!f->stop) {
		struct timespec ts;
		int64_t now = fleet_now();
		int busy;

		if (now < f->sweep_until_ms && now >= f->sweep_next_ms) {
			struct fleet_proc *procs = NULL;
			struct fleet_adopted *v = NULL;
			size_t np = 0, nv;

			f->sweep_next_ms = now + 200;
			pthread_mutex_unlock(&f->mu);
			nv = fleet_sweep_collect(f, &procs, &np, &v);
			pthread_mutex_lock(&f->mu);
			fleet_sweep_apply(f, procs, np, v, nv);
			free(procs);
		}
		busy = fleet_tick(f);
		while (f->ntrash > 0 && !f->stop) {
			char *dir = f->trash[--f->ntrash];

			pthread_mutex_unlock(&f->mu);
			fleet_rmtree(dir);
			free(dir);
			pthread_mutex_lock(&f->mu);
		}
		clock_gettime(CLOCK_REALTIME, &ts);
		ts.tv_nsec +=
		    (long)(busy ? FLEET_TICK_MS : 4 * FLEET_TICK_MS) * 1000000L;
		if (ts.tv_nsec >= 1000000000L) {
			ts.tv_sec++;
			ts.tv_nsec -= 1000000000L;
		}
		pthread_cond_timedwait(&f->cv, &f->mu, &ts);
	}
	pthread_mutex_unlock(&f->mu);
	return NULL;
}

/* --- startup ------------------------------------------------------ */

/* Kill an sshd left running by a previous emulator that died hard. */
static void
fleet_kill_stale(struct fleet_node *n)
{
	int i;

	for (i = 0; i < n->nworkers; i++) {
		char *pidf, *s, *cmdline, *cfg;
		const char *errstr;
		char path[64];
		long long pid;
		int j;

		pidf = xasprintf("%s/sshd.pid", n->w[i].dir);
		s = fleet_read_file(pidf, 64);
		free(pidf);
		if (s == NULL)
			continue;
		s[strcspn(s, "\n")] = '\0';
		pid = tpu_strtonum(s, 2, 1 << 30, &errstr);
		free(s);
		if (errstr != NULL)
			continue;
		snprintf(path, sizeof(path), "/proc/%lld/cmdline", pid);
		cmdline = fleet_read_file(path, 4096);
		if (cmdline == NULL)
			continue;
		cfg = xasprintf("%s/sshd_config", n->w[i].dir);
		/* cmdline is NUL-separated: look at every argument. */
		for (s = cmdline; *s != '\0'; s += strlen(s) + 1) {
			if (strcmp(s, cfg) == 0) {
				kill((pid_t)pid, SIGTERM);
				for (j = 0; j < 100 && kill((pid_t)pid, 0) == 0;
				     j++)
					tpu_sleep_ms(10);
				kill((pid_t)pid, SIGKILL);
				break;
			}
		}
		free(cfg);
		free(cmdline);
	}
}

/*
 * A persisted node, on its subnets when it can lease them again, else
 * moved to free ones: its sshds of an earlier run are stopped and its
 * directory renamed (keys and HOMEs kept; fleet_write_config writes the
 * new address at the next start).  NULL when no subnet is free.
 */
static struct fleet_node *
fleet_load_node(struct fleet *f, const char *key, const char *id,
    const char *accel, int nworkers, int subnet)
{
	struct emu_lease lease;
	struct fleet_node *n;
	int k = fleet_nsubnets(nworkers), busy = -1, to;
	char *from;

	memset(&lease, 0, sizeof(lease));
	if (fleet_subnet_used(f, subnet, k, NULL) == -1 &&
	    (f->lease_dir == NULL ||
	        emu_lease_take(f->lease_dir, subnet, k, &lease, &busy) == 0)) {
		n = fleet_node_new(f, key, id, accel, nworkers, subnet);
		n->lease = lease;
		return n;
	}
	to = fleet_alloc_subnet(f, k, &lease);
	if (to < 0) {
		log_warn("fleet: node '%s' dropped: its subnet %d is held by "
		         "another emulator and no other subnet is free",
		    key, subnet);
		return NULL;
	}
	log_warn("fleet: node '%s': subnet %d is held by another emulator; "
	         "moved to subnet %d (worker addresses change)",
	    key, subnet, to);
	/* Stop what an earlier run of ours left on the old addresses. */
	n = fleet_node_new(f, key, id, accel, nworkers, subnet);
	fleet_kill_stale(n);
	from = xstrdup(n->dir);
	fleet_node_free(n);
	n = fleet_node_new(f, key, id, accel, nworkers, to);
	n->lease = lease;
	fleet_rmtree(n->dir); /* leftovers of a lost node */
	if (rename(from, n->dir) == -1 && errno != ENOENT)
		log_warn("fleet: cannot move '%s' to '%s': %s", from, n->dir,
		    strerror(errno));
	free(from);
	return n;
}

static void
fleet_load(struct fleet *f)
{
	char *path, *text;
	cJSON *root = NULL, *item;
	const cJSON *arr;
	int i, moved = 0;

	path = xasprintf("%s/fleet.json", f->dir);
	text = fleet_read_file(path, 16 << 20);
	if (text == NULL)
		goto out;
	root = cJSON_ParseWithOpts(text, NULL, 1);
	if (!cJSON_IsObject(root)) {
		log_warn("fleet: ignoring malformed '%s'", path);
		goto out;
	}
	item = cJSON_GetObjectItemCaseSensitive(root, "port");
	if (cJSON_IsNumber(item) && item->valuedouble >= 1 &&
	    item->valuedouble <= 65535)
		f->port = item->valueint;
	arr = cJSON_GetObjectItemCaseSensitive(root, "nodes");
	cJSON_ArrayForEach(item, arr)
	{
		const cJSON *k, *id, *ac, *nw, *sn;
		struct fleet_node *n;

		k = cJSON_GetObjectItemCaseSensitive(item, "key");
		id = cJSON_GetObjectItemCaseSensitive(item, "id");
		ac = cJSON_GetObjectItemCaseSensitive(item, "accel");
		nw = cJSON_GetObjectItemCaseSensitive(item, "workers");
		sn = cJSON_GetObjectItemCaseSensitive(item, "subnet");
		if (!cJSON_IsString(k) || !cJSON_IsString(id) ||
		    !cJSON_IsString(ac) || !cJSON_IsNumber(nw) ||
		    !cJSON_IsNumber(sn) || nw->valueint < 1 ||
		    nw->valueint > FLEET_MAX_WORKERS || sn->valueint < 0 ||
		    sn->valueint + fleet_nsubnets(nw->valueint) >
		        FLEET_MAX_SUBNETS ||
		    fleet_find(f, k->valuestring) != NULL)
			continue;
		n = fleet_load_node(f, k->valuestring, id->valuestring,
		    ac->valuestring, nw->valueint, sn->valueint);
		if (n == NULL)
			continue;
		n->next = f->nodes;
		f->nodes = n;
		moved |= n->subnet != sn->valueint;
		/* Publish the kept host keys even before a restart. */
		for (i = 0; i < n->nworkers; i++) {
			char *pub = xasprintf("%s/published.pub", n->w[i].dir);

			if (fleet_load_pubkey(pub, n->w[i].pubkey,
			        sizeof(n->w[i].pubkey)) == -1)
				n->w[i].pubkey[0] = '\0';
			free(pub);
		}
		fleet_kill_stale(n);
	}
	if (moved)
		fleet_save(f);
out:
	cJSON_Delete(root);
	free(text);
	free(path);
}

/*
 * Can sshd listen on port?  Binds the wildcard address with SO_REUSEADDR
 * (as sshd does), so only a listener on that port, not TIME_WAIT left by
 * earlier connections, makes it busy.
 */
static int
fleet_port_free(int port)
{
	struct sockaddr_in sin;
	int fd, ok, one = 1;

	fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd == -1)
		return 0;
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	memset(&sin, 0, sizeof(sin));
	sin.sin_family = AF_INET;
	sin.sin_port = htons((uint16_t)port);
	sin.sin_addr.s_addr = htonl(INADDR_ANY);
	ok = bind(fd, (struct sockaddr *)&sin, sizeof(sin)) == 0 &&
	     listen(fd, 1) == 0;
	close(fd);
	return ok;
}

/* A free TCP port in 20000-32767 (below Linux's ephemeral range). */
static int
fleet_pick_port(void)
{
	int i;

	for (i = 0; i < 200; i++) {
		int port = 20000 + (int)((unsigned)rand() % 12768u);

		if (fleet_port_free(port))
			return port;
	}
	return -1;
}

/* Can this process make UTS and mount namespaces?  (A child tries.) */
static int
fleet_ns_possible(void)
{
	pid_t pid;
	int status;

	pid = fork();
	if (pid == 0)
		_exit(unshare(CLONE_NEWUTS | CLONE_NEWNS) == 0 ? 0 : 1);
	if (pid == -1 || waitpid(pid, &status, 0) != pid)
		return 0;
	return WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

/* The hosts a worker's /etc/hosts gives the emulator's address. */
#define FLEET_GOOGLE_SAN                                                       \
	"DNS:storage.googleapis.com,DNS:oauth2.googleapis.com,"                \
	"DNS:tpu.googleapis.com"

static int
fleet_x509_ext(X509 *x, X509 *issuer, int nid, const char *value)
{
	X509V3_CTX ctx;
	X509_EXTENSION *ext;
	int ok;

	X509V3_set_ctx_nodb(&ctx);
	X509V3_set_ctx(&ctx, issuer, x, NULL, NULL, 0);
	ext = X509V3_EXT_conf_nid(NULL, &ctx, nid, value);
	if (ext == NULL)
		return -1;
	ok = X509_add_ext(x, ext, -1);
	X509_EXTENSION_free(ext);
	return ok == 1 ? 0 : -1;
}

static char *
fleet_bio_text(BIO *b)
{
	char *p = NULL;
	long n = BIO_get_mem_data(b, &p);

	return n > 0 ? xstrndup(p, (size_t)n) : NULL;
}

/*
 * A key and certificate for Google's API hosts and addr, signed by the
 * emulator's CA (DIR/ca.pem, DIR/ca-key.pem, made by core_tls_material),
 * into f->gkey and f->gcert (the chain).  0 or -1.
 */
static int
fleet_google_cert(struct emu *e, struct fleet *f, const char *addr)
{
	char *cap = emu_state_path(e, "ca.pem"),
	     *cakp = emu_state_path(e, "ca-key.pem"), *san = NULL;
	EVP_PKEY *cak = NULL, *key = NULL;
	X509 *ca = NULL, *x = NULL;
	BIGNUM *bn = NULL;
	BIO *b = NULL;
	FILE *fp;
	int rc = -1;

	if ((fp = fopen(cap, "re")) != NULL) {
		ca = PEM_read_X509(fp, NULL, NULL, NULL);
		fclose(fp);
	}
	if ((fp = fopen(cakp, "re")) != NULL) {
		cak = PEM_read_PrivateKey(fp, NULL, NULL, NULL);
		fclose(fp);
	}
	key = EVP_EC_gen("P-256");
	x = X509_new();
	bn = BN_new();
	if (ca == NULL || cak == NULL || key == NULL || x == NULL ||
	    bn == NULL || X509_set_version(x, 2) != 1 ||
	    BN_rand(bn, 120, 0, 0) != 1 ||
	    BN_to_ASN1_INTEGER(bn, X509_get_serialNumber(x)) == NULL)
		goto out;
	X509_gmtime_adj(X509_getm_notBefore(x), -3600);
	X509_gmtime_adj(X509_getm_notAfter(x), 825L * 86400);
	san = xasprintf("%s,IP:%s", FLEET_GOOGLE_SAN, addr);
	if (X509_set_pubkey(x, key) != 1 ||
	    X509_NAME_add_entry_by_txt(X509_get_subject_name(x), "CN",
	        MBSTRING_ASC, (const unsigned char *)"storage.googleapis.com",
	        -1, -1, 0) != 1 ||
	    X509_set_issuer_name(x, X509_get_subject_name(ca)) != 1 ||
	    fleet_x509_ext(x, ca, NID_basic_constraints, "critical,CA:FALSE") ||
	    fleet_x509_ext(x, ca, NID_key_usage,
	        "critical,digitalSignature,keyEncipherment") ||
	    fleet_x509_ext(x, ca, NID_ext_key_usage, "serverAuth") ||
	    fleet_x509_ext(x, ca, NID_subject_alt_name, san) ||
	    fleet_x509_ext(
	        x, ca, NID_authority_key_identifier, "keyid:always") ||
	    X509_sign(x, cak, EVP_sha256()) == 0)
		goto out;
	if ((b = BIO_new(BIO_s_mem())) == NULL ||
	    PEM_write_bio_PrivateKey(b, key, NULL, NULL, 0, NULL, NULL) != 1 ||
	    (f->gkey = fleet_bio_text(b)) == NULL)
		goto out;
	BIO_free(b);
	if ((b = BIO_new(BIO_s_mem())) == NULL ||
	    PEM_write_bio_X509(b, x) != 1 || PEM_write_bio_X509(b, ca) != 1 ||
	    (f->gcert = fleet_bio_text(b)) == NULL)
		goto out;
	rc = 0;
out:
	BIO_free(b);
	BN_free(bn);
	X509_free(x);
	X509_free(ca);
	EVP_PKEY_free(key);
	EVP_PKEY_free(cak);
	free(san);
	free(cap);
	free(cakp);
	return rc;
}

/*
 * As root: a loopback address of the emulator's own in 127.0.2.1 -
 * 127.0.255.254 (the workers' start at 127.1.0.0) listening on port 443,
 * the https port Google's API hosts are reached on, with a certificate
 * for those names from the emulator's CA.  The workers' /etc/hosts names
 * it for storage.googleapis.com, oauth2.googleapis.com and
 * tpu.googleapis.com, their CA bundle trusts the CA, and
 * fleet_google_serve() serves the emulator's routes on it once every
 * module is up.  Without it (not root, fleet.google_tls=0, no free
 * address) those names map to the emulator's base address.
 */
static void
fleet_google_init(struct emu *e, struct fleet *f)
{
	char errbuf[256], *k = NULL, *c = NULL, addr[32];
	struct sockaddr_in sin;
	int i, fd = -1, one = 1;

	if (emu_opt_int(e, "fleet.google_tls", 1) == 0)
		return;
	if (core_tls_material(e, &k, &c, errbuf, sizeof(errbuf)) != 0) {
		log_warn("fleet: no TLS for Google's API hosts: %s", errbuf);
		return;
	}
	xfree_secret(k);
	free(c);
	for (i = 0; i < 64 && fd == -1; i++) {
		unsigned r = (unsigned)rand() % (254u * 254u);

		snprintf(addr, sizeof(addr), "127.0.%u.%u", 2 + r / 254,
		    1 + r % 254);
		memset(&sin, 0, sizeof(sin));
		sin.sin_family = AF_INET;
		sin.sin_port = htons(443);
		inet_pton(AF_INET, addr, &sin.sin_addr);
		fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
		if (fd == -1)
			break;
		setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
		if (bind(fd, (struct sockaddr *)&sin, sizeof(sin)) == -1 ||
		    listen(fd, 128) == -1) {
			close(fd);
			fd = -1;
		}
	}
	if (fd == -1) {
		log_warn("fleet: no loopback address free on port 443 for "
		         "Google's API hosts");
		return;
	}
	if (fleet_google_cert(e, f, addr) == -1) {
		log_warn("fleet: cannot make a certificate for Google's API "
		         "hosts");
		close(fd);
		xfree_secret(f->gkey);
		free(f->gcert);
		f->gkey = f->gcert = NULL;
		return;
	}
	f->gfd = fd;
	free(f->emu_addr);
	f->emu_addr = xstrdup(addr);
	if (f->ca_pem == NULL)
		f->ca_pem = emu_state_path(e, "ca.pem");
}

int
fleet_google_serve(struct emu *e)
{
	struct fleet *f = fleet_of(e);
	char errbuf[256];

	if (f == NULL || f->gfd == -1 || f->gsrv != NULL)
		return 0;
	f->gsrv = core_server_start(
	    e, f->gfd, f->gkey, f->gcert, 1, errbuf, sizeof(errbuf));
	if (f->gsrv == NULL) {
		log_warn("fleet: cannot serve Google's API hosts on %s:443: %s",
		    f->emu_addr, errbuf);
		return -1;
	}
	f->gfd = -1; /* the server owns it now */
	return 0;
}

void
fleet_google_stop(struct emu *e)
{
	struct fleet *f = fleet_of(e);

	if (f == NULL)
		return;
	if (f->gsrv != NULL)
		core_server_stop(e, f->gsrv);
	f->gsrv = NULL;
	if (f->gfd != -1)
		close(f->gfd);
	f->gfd = -1;
}

/*
 * The emulator's own address and URL for the workers' /etc/hosts and
 * startup-script-url, and, as root, the worker namespaces: the listener
 * for Google's API hosts, what of the host's /dev a worker receives (the
 * few nodes programs need; the rest, disks included, stays the host's)
 * and the CA bundle that trusts the emulator.  Without root, or with
 * fleet.namespaces=0, workers share the host's hostname, /tmp and /dev
 * (the fallback).
 */
static void
fleet_ns_init(struct emu *e, struct fleet *f)
{
	static const char *const devs[] = { "null", "zero", "full", "random",
		"urandom", "tty", "ptmx", "pts", "fd", "stdin", "stdout",
		"stderr", "log", "mqueue" };
	const char *u = e->base_url, *h;
	size_t i;

	if (u != NULL) {
		f->osl_url = xstrdup(u);
		f->base_url = xstrdup(u);
		h = strstr(u, "://");
		h = h != NULL ? h + 3 : u;
		if (*h == '[')
			f->emu_addr = xstrndup(h + 1, strcspn(h + 1, "]"));
		else
			f->emu_addr = xstrndup(h, strcspn(h, ":/"));
	}
	if (e->tls)
		f->ca_pem = emu_state_path(e, "ca.pem");
	emu_oslogin_sa_user(e, f->osl_user, sizeof(f->osl_user));
	f->osl_uid = emu_oslogin_uid(f->osl_user);
	if (geteuid() != 0 || emu_opt_int(e, "fleet.namespaces", 1) == 0)
		return;
	if (!fleet_ns_possible()) {
		log_warn("fleet: cannot create UTS and mount namespaces (%s): "
		         "workers share the host's hostname, /tmp and /dev",
		    strerror(EPERM));
		return;
	}
	fleet_google_init(e, f);
	for (i = 0; i < nitems(devs); i++) {
		char *src = xasprintf(
		    "/proc/self/fd/%d/%s", FLEET_CHILD_DEVFD, devs[i]);
		char *dst = xasprintf("/dev/%s", devs[i]);
		char link[256];
		struct stat st;
		ssize_t l;

		if (lstat(dst, &st) == -1) {
			free(src);
			free(dst);
			continue;
		}
		if (strcmp(devs[i], "ptmx") == 0) {
			/*
			 * A bound /dev/ptmx would find no devpts next to it:
			 * the pts/ptmx of the bound /dev/pts, as containers do.
			 */
			free(src);
			fleet_op_add(&f->devops, &f->ndevops, FLEET_OP_SYMLINK,
			    xstrdup("pts/ptmx"), dst);
			continue;
		}
		if (S_ISLNK(st.st_mode)) {
			l = readlink(dst, link, sizeof(link) - 1);
			free(src);
			if (l <= 0) {
				free(dst);
				continue;
			}
			link[l] = '\0';
			fleet_op_add(&f->devops, &f->ndevops, FLEET_OP_SYMLINK,
			    xstrdup(link), dst);
			continue;
		}
		fleet_op_add(&f->devops, &f->ndevops,
		    S_ISDIR(st.st_mode) ? FLEET_OP_MKDIR : FLEET_OP_MKFILE,
		    NULL, xstrdup(dst));
		fleet_op_add(&f->devops, &f->ndevops, FLEET_OP_BIND, src, dst);
	}
	f->etc_hostname = access("/etc/hostname", F_OK) == 0;
	if (f->ca_pem != NULL && access(FLEET_CA_BUNDLE, F_OK) == 0) {
		char *sys = fleet_read_file(FLEET_CA_BUNDLE, 16 << 20);
		char *ca = fleet_read_file(f->ca_pem, 1 << 20);
		char *text, *path = xasprintf("%s/ca-certificates.crt", f->dir);

		if (sys != NULL && ca != NULL) {
			text =
			    xasprintf("%s\n# tpuctl-emulator CA\n%s", sys, ca);
			if (fleet_write_file(path, text, strlen(text), 0644) ==
			    0)
				f->bundle = xstrdup(path);
			free(text);
		}
		if (f->bundle == NULL)
			log_warn("fleet: cannot make the workers' CA bundle "
			         "'%s'",
			    path);
		free(sys);
		free(ca);
		free(path);
	}
	f->ns = 1;
}

int
fleet_init(struct emu *e)
{
	struct fleet *f = NULL;
	struct passwd pw, *pwp = NULL;
	char pwbuf[4096];
	const char *opt, *errstr;
	sigset_t all, old;
	int rc = -1;

	f = xcalloc(1, sizeof(*f));
	pthread_mutex_init(&f->mu, NULL);
	pthread_cond_init(&f->cv, NULL);
	f->self = getpid();
	f->sid = getsid(0);
	f->gfd = -1;
	f->dir = emu_state_path(e, "fleet");
	f->sshd = xstrdup(emu_opt(e, "fleet.sshd", FLEET_DEFAULT_SSHD));
	f->key_delay_ms = emu_opt_int(e, "fleet.key_delay_ms", 2000);
	if (f->key_delay_ms < 0)
		f->key_delay_ms = 0;
	e->fleet = f;
	if (!fleet_config_safe(f->dir)) {
		log_warn("fleet: state dir '%s' must not contain spaces, "
		         "quotes, '#' or backslashes (it goes into "
		         "sshd_config)",
		    f->dir);
		goto out;
	}
	if (fleet_mkdir(f->dir, 0700) == -1) {
		log_warn(
		    "fleet: cannot create '%s': %s", f->dir, strerror(errno));
		goto out;
	}
	if (access(f->sshd, X_OK) == -1) {
		log_warn("fleet: sshd '%s' is not executable: %s (install "
		         "openssh-server or set fleet.sshd)",
		    f->sshd, strerror(errno));
		goto out;
	}
	if (getpwuid_r(geteuid(), &pw, pwbuf, sizeof(pwbuf), &pwp) != 0 ||
	    pwp == NULL || strlen(pw.pw_name) >= sizeof(f->user)) {
		log_warn("fleet: cannot find the account of uid %ld",
		    (long)geteuid());
		goto out;
	}
	snprintf(f->user, sizeof(f->user), "%s", pw.pw_name);
	f->pwdir = xstrdup(pw.pw_dir);
	/* As root sshd wants its privilege separation dir. */
	if (geteuid() == 0 && fleet_mkdir("/run/sshd", 0755) == -1)
		log_warn("fleet: cannot create /run/sshd: %s", strerror(errno));
	{
		char err[512];

		f->lease_dir = emu_lease_dir(err, sizeof(err));
		if (f->lease_dir == NULL) {
			log_warn(
			    "fleet: no machine-wide subnet leases: %s", err);
			goto out;
		}
	}
	srand((unsigned)(getpid() ^ (int)fleet_now()));
	fleet_load(f);
	{
		/* Dirs of nodes deleted just before a crash. */
		DIR *d = opendir(f->dir);
		struct dirent *de;

		while (d != NULL && (de = readdir(d)) != NULL) {
			char *p;

			if (strncmp(de->d_name, "trash.", 6) != 0)
				continue;
			p = xasprintf("%s/%s", f->dir, de->d_name);
			f->trash = xreallocarray(
			    f->trash, f->ntrash + 1, sizeof(*f->trash));
			f->trash[f->ntrash++] = p;
		}
		if (d != NULL)
			closedir(d);
	}
	opt = emu_opt(e, "fleet.port", NULL);
	if (opt != NULL) {
		f->port = (int)tpu_strtonum(opt, 1, 65535, &errstr);
		if (errstr != NULL) {
			log_warn("fleet: invalid fleet.port '%s': %s (want "
			         "1-65535)",
			    opt, errstr);
			goto out;
		}
	} else {
		if (f->port != 0 && !fleet_port_free(f->port)) {
			log_warn("fleet: port %d of the previous run is taken; "
			         "picking another one",
			    f->port);
			f->port = 0;
		}
		if (f->port == 0 && (f->port = fleet_pick_port()) == -1) {
			log_warn("fleet: cannot find a free port for the "
			         "workers");
			goto out;
		}
	}
	fleet_save(f);
	fleet_ns_init(e, f);
	/* Sessions orphaned by a dying sshd come back to us: reap them. */
	f->subreaper = prctl(PR_SET_CHILD_SUBREAPER, 1) == 0;
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	if (pthread_create(&f->thr, NULL, fleet_main, f) != 0) {
		pthread_sigmask(SIG_SETMASK, &old, NULL);
		log_warn("fleet: cannot start the monitor thread");
		goto out;
	}
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	f->thr_started = 1;
	rc = 0;
out:
	return rc;
}

void
fleet_fini(struct emu *e)
{
	struct fleet *f = fleet_of(e);
	struct fleet_node *n;
	int i;

	if (f == NULL)
		return;
	pthread_mutex_lock(&f->mu);
	f->stop = 1;
	pthread_cond_broadcast(&f->cv);
	pthread_mutex_unlock(&f->mu);
	if (f->thr_started)
		pthread_join(f->thr, NULL);
	pthread_mutex_lock(&f->mu);
	for (n = f->nodes; n != NULL; n = n->next) {
		n->run = 0;
		fleet_kill_workers(f, n, -1);
	}
	/* Daemons of the workers, re-parented to us: a few sweeps. */
	for (i = 0; i < 3; i++) {
		struct fleet_proc *procs = NULL;
		struct fleet_adopted *v = NULL;
		size_t np = 0, nv;

		fleet_wait_dying(f, 0);
		nv = fleet_sweep_collect(f, &procs, &np, &v);
		fleet_sweep_apply(f, procs, np, v, nv);
		free(procs);
		if (nv == 0)
			break;
	}
	fleet_wait_dying(f, 0);
	while ((n = f->nodes) != NULL) {
		f->nodes = n->next;
		fleet_node_free(n);
	}
	while (f->ntrash > 0) {
		char *dir = f->trash[--f->ntrash];

		fleet_rmtree(dir);
		free(dir);
	}
	pthread_mutex_unlock(&f->mu);
	free(f->trash);
	free(f->dying);
	pthread_mutex_destroy(&f->mu);
	pthread_cond_destroy(&f->cv);
	free(f->dir);
	free(f->lease_dir);
	free(f->sshd);
	free(f->pwdir);
	fleet_ops_free(f->devops, f->ndevops);
	fleet_google_stop(e);
	xfree_secret(f->gkey);
	free(f->gcert);
	free(f->emu_addr);
	free(f->base_url);
	free(f->osl_url);
	free(f->ca_pem);
	free(f->bundle);
	free(f);
	e->fleet = NULL;
}

void
fleet_env(struct emu *e, FILE *fp)
{
	struct fleet *f = fleet_of(e);
	const char *p;

	if (f == NULL || f->port == 0)
		return;
	/* The same "export NAME='value'" form as the core's lines. */
	fprintf(fp, "export TPUCTL_SSH_PORT='%d'\n", f->port);
	fputs("export TPUCTL_SSH_USER='", fp);
	for (p = f->user; *p != '\0'; p++) {
		if (*p == '\'')
			fputs("'\\''", fp);
		else
			fputc(*p, fp);
	}
	fputs("'\n", fp);
}

/* --- the API (emu->lock held by the caller) ---------------------- */

/*
 * The plain-HTTP metadata "host:port" the workers' GCE_METADATA_HOST
 * names: emu->metadata_host under --tls (metadata clients speak plain
 * HTTP only), else the host part of base_url ("http://127.0.0.1:8080"
 * -> "127.0.0.1:8080"). NULL when unknown.
 */
static char *
fleet_md_host(struct emu *e)
{
	const char *u = e->metadata_host != NULL ? e->metadata_host
	                                         : e->base_url,
	           *p;

	if (u == NULL)
		return NULL;
	p = strstr(u, "://");
	p = p != NULL ? p + 3 : u;
	if (*p == '\0' || !fleet_config_safe(p))
		return NULL;
	return xstrndup(p, strcspn(p, "/"));
}

int
fleet_node_create(struct emu *e, const char *node_key, const char *node_id,
    int nworkers, const char *accel_type, const cJSON *metadata, char *errbuf,
    size_t errlen)
{
	struct fleet *f = fleet_of(e);
	struct fleet_node *n;
	int subnet, rc = -1;

	if (f == NULL) {
		fleet_seterr(errbuf, errlen, "the sshd fleet is not running");
		return -1;
	}
	if (nworkers < 1 || nworkers > FLEET_MAX_WORKERS) {
		fleet_seterr(errbuf, errlen,
		    "invalid worker count %d for node '%s' (want 1-%d)",
		    nworkers, node_key, FLEET_MAX_WORKERS);
		return -1;
	}
	if (!fleet_config_safe(node_key) || !fleet_config_safe(accel_type) ||
	    node_id == NULL || *node_id == '\0') {
		fleet_seterr(errbuf, errlen,
		    "invalid node '%s' or accelerator type '%s' (no spaces, "
		    "quotes, '#' or backslashes)",
		    node_key, accel_type);
		return -1;
	}
	pthread_mutex_lock(&f->mu);
	n = fleet_find(f, node_key);
	if (n != NULL &&
	    (strcmp(n->id, node_id) != 0 || n->nworkers != nworkers)) {
		/* Another incarnation of the name: start from scratch. */
		fleet_kill_workers(f, n, -1);
		fleet_trash_dir(f, n->dir);
		fleet_unlink_node(f, n);
		fleet_node_free(n);
		n = NULL;
	}
	if (n == NULL) {
		struct emu_lease lease;

		subnet =
		    fleet_alloc_subnet(f, fleet_nsubnets(nworkers), &lease);
		if (subnet < 0) {
			fleet_seterr(errbuf, errlen,
			    "no loopback addresses left for %d workers of "
			    "node '%s' (subnets in use here or leased by "
			    "other emulators in '%s')",
			    nworkers, node_key,
			    f->lease_dir != NULL ? f->lease_dir : "-");
			goto out;
		}
		n = fleet_node_new(
		    f, node_key, node_id, accel_type, nworkers, subnet);
		n->lease = lease;
		fleet_trash_dir(f, n->dir); /* leftovers of a lost node */
		if (fleet_mkdir(n->dir, 0700) == -1) {
			fleet_seterr(errbuf, errlen, "cannot create '%s': %s",
			    n->dir, strerror(errno));
			fleet_node_free(n);
			goto out;
		}
		n->next = f->nodes;
		f->nodes = n;
		fleet_save(f);
	} else if (strcmp(n->accel, accel_type) != 0) {
		free(n->accel);
		n->accel = xstrdup(accel_type);
		n->chips = fleet_chips_per_host(accel_type);
		if (n->chips < 0)
			n->chips = 0;
		fleet_save(f);
	}
	free(n->mdhost);
	n->mdhost = fleet_md_host(e);
	n->run = 1;
	if (metadata != NULL) {
		fleet_schedule_keys(f, n, metadata);
		fleet_take_scripts(n, metadata);
	}
	pthread_cond_broadcast(&f->cv);
	rc = 0;
out:
	pthread_mutex_unlock(&f->mu);
	return rc;
}

int
fleet_node_ready(struct emu *e, const char *node_key)
{
	struct fleet *f = fleet_of(e);
	struct fleet_node *n;
	int i, ready = 0;

	if (f == NULL)
		return 0;
	pthread_mutex_lock(&f->mu);
	n = fleet_find(f, node_key);
	if (n != NULL && n->run) {
		ready = 1;
		for (i = 0; i < n->nworkers; i++)
			if (!n->w[i].ready || n->w[i].down)
				ready = 0;
	}
	pthread_mutex_unlock(&f->mu);
	return ready;
}

int
fleet_node_workers(
    struct emu *e, const char *node_key, struct fleet_worker_info *out, int max)
{
	struct fleet *f = fleet_of(e);
	struct fleet_node *n;
	int i, count = -1;

	if (f == NULL)
		return -1;
	pthread_mutex_lock(&f->mu);
	n = fleet_find(f, node_key);
	if (n != NULL) {
		count = n->nworkers;
		for (i = 0; i < n->nworkers && i < max; i++) {
			snprintf(out[i].addr, sizeof(out[i].addr), "%s",
			    n->w[i].addr);
			out[i].port = f->port;
			snprintf(out[i].hostkey, sizeof(out[i].hostkey), "%s",
			    n->w[i].pubkey);
		}
	}
	pthread_mutex_unlock(&f->mu);
	return count;
}

void
fleet_node_metadata(struct emu *e, const char *node_key, const cJSON *metadata)
{
	struct fleet *f = fleet_of(e);
	struct fleet_node *n;
	cJSON *empty = NULL;

	if (f == NULL)
		return;
	if (metadata == NULL)
		metadata = empty = cJSON_CreateObject();
	pthread_mutex_lock(&f->mu);
	n = fleet_find(f, node_key);
	if (n != NULL) {
		fleet_schedule_keys(f, n, metadata);
		fleet_take_scripts(n, metadata); /* for the next boot */
		pthread_cond_broadcast(&f->cv);
	}
	pthread_mutex_unlock(&f->mu);
	cJSON_Delete(empty);
}

/* Stop every worker of a node; with remove, forget the node too. */
static void
fleet_node_halt(struct emu *e, const char *node_key, int remove)
{
	struct fleet *f = fleet_of(e);
	struct fleet_node *n;

	if (f == NULL)
		return;
	pthread_mutex_lock(&f->mu);
	n = fleet_find(f, node_key);
	if (n != NULL) {
		int i;

		n->run = 0;
		fleet_kill_workers(f, n, -1);
		for (i = 0; i < n->nworkers; i++)
			n->w[i].booted = 0; /* the next start is a boot */
		if (remove) {
			fleet_trash_dir(f, n->dir);
			fleet_unlink_node(f, n);
			fleet_node_free(n);
			fleet_save(f);
		}
	}
	pthread_mutex_unlock(&f->mu);
}

void
fleet_node_stop(struct emu *e, const char *node_key)
{
	fleet_node_halt(e, node_key, 0);
}

void
fleet_node_start(struct emu *e, const char *node_key)
{
	struct fleet *f = fleet_of(e);
	struct fleet_node *n;
	int i;

	if (f == NULL)
		return;
	pthread_mutex_lock(&f->mu);
	n = fleet_find(f, node_key);
	if (n != NULL) {
		n->run = 1;
		if (n->mdhost == NULL)
			n->mdhost = fleet_md_host(e);
		for (i = 0; i < n->nworkers; i++) {
			n->w[i].fails = 0;
			n->w[i].not_before_ms = 0;
		}
		pthread_cond_broadcast(&f->cv);
	}
	pthread_mutex_unlock(&f->mu);
}

void
fleet_node_delete(struct emu *e, const char *node_key)
{
	fleet_node_halt(e, node_key, 1);
}

int
fleet_worker_down(struct emu *e, const char *node_key, int worker, int down)
{
	struct fleet *f = fleet_of(e);
	struct fleet_node *n;
	int rc = -1;

	if (f == NULL)
		return -1;
	pthread_mutex_lock(&f->mu);
	n = fleet_find(f, node_key);
	if (n == NULL || worker < 0 || worker >= n->nworkers)
		goto out;
	fleet_hole_close(&n->w[worker]);
	n->w[worker].down = down != 0;
	if (down) {
		pid_t pid = n->w[worker].pid;

		/* Wait for this one: connections are refused on return. */
		fleet_kill_workers(f, n, worker);
		if (pid > 0)
			fleet_wait_dying(f, pid);
	} else {
		n->w[worker].fails = 0;
		n->w[worker].not_before_ms = 0;
		pthread_cond_broadcast(&f->cv);
	}
	rc = 0;
out:
	pthread_mutex_unlock(&f->mu);
	return rc;
}

/* Kill the daemons of worker w (fleet lock held), which the sweep
 * leaves to a worker that is up: each one's group at once, as a power
 * cut (a job's wrapper must not see its child die first). */
static void
fleet_kill_daemons(struct fleet *f, const struct fleet_worker *w)
{
	struct fleet_proc *procs = NULL;
	struct fleet_adopted *v = NULL;
	size_t i, np, nv;

	nv = fleet_sweep_collect(f, &procs, &np, &v);
	for (i = 0; i < nv; i++) {
		struct fleet_node *hn = NULL;

		if (fleet_home_worker(f, v[i].home, &hn) == w) {
			kill(-v[i].pid, SIGKILL);
			fleet_kill_descendants(procs, np, v[i].pid);
			kill(v[i].pid, SIGKILL);
			fleet_add_dying(f, v[i].pid, "");
		}
		free(v[i].home);
	}
	free(v);
	free(procs);
}

int
fleet_worker_reboot(struct emu *e, const char *node_key, int worker)
{
	struct fleet *f = fleet_of(e);
	struct fleet_node *n;

	/* down: its sshd, sessions and startup scripts ended */
	if (fleet_worker_down(e, node_key, worker, 1) != 0)
		return -1;
	pthread_mutex_lock(&f->mu);
	n = fleet_find(f, node_key);
	if (n != NULL && worker < n->nworkers) {
		fleet_kill_daemons(f, &n->w[worker]);
		n->w[worker].booted = 0; /* its startup scripts run again */
	}
	pthread_mutex_unlock(&f->mu);
	/* up: sshd again, then the startup scripts, as at a boot */
	return fleet_worker_down(e, node_key, worker, 0);
}

int
fleet_worker_rekey(struct emu *e, const char *node_key, int worker)
{
	struct fleet *f = fleet_of(e);
	struct fleet_node *n;
	int rc = -1;

	if (f == NULL)
		return -1;
	pthread_mutex_lock(&f->mu);
	n = fleet_find(f, node_key);
	if (n == NULL || worker < 0 || worker >= n->nworkers)
		goto out;
	fleet_kill_workers(f, n, worker);
	n->w[worker].rekey = 1;
	n->w[worker].fails = 0;
	n->w[worker].not_before_ms = 0;
	pthread_cond_broadcast(&f->cv);
	rc = 0;
out:
	pthread_mutex_unlock(&f->mu);
	return rc;
}

/*
 * SIGKILL the sshd processes of the connection whose per-connection sshd
 * is root: root and its descendants that are sshd too (the privilege
 * separated child), not the shells and commands they started, nor what
 * those started.
 */
static int
fleet_cut_session(const struct fleet_proc *p, size_t np, size_t root)
{
	pid_t *queue;
	size_t head = 0, tail = 0, i;
	int nk = 0;

	queue = xreallocarray(NULL, np + 1, sizeof(*queue));
	queue[tail++] = p[root].pid;
	while (head < tail) {
		pid_t cur = queue[head++];

		if (kill(cur, SIGKILL) == 0)
			nk++;
		for (i = 0; i < np; i++)
			if (p[i].ppid == cur && tail < np + 1 &&
			    strncmp(p[i].comm, "sshd", 4) == 0)
				queue[tail++] = p[i].pid;
	}
	free(queue);
	return nk;
}

int
fleet_worker_sshcut(struct emu *e, const char *node_key, int worker,
    char *errbuf, size_t errlen)
{
	struct fleet *f = fleet_of(e);
	struct fleet_node *n;
	struct fleet_proc *procs = NULL;
	size_t np, i;
	int rc = -1, ncut = 0;
	pid_t lpid;

	if (f == NULL) {
		fleet_seterr(errbuf, errlen, "the sshd fleet is not running");
		return -1;
	}
	pthread_mutex_lock(&f->mu);
	n = fleet_find(f, node_key);
	if (n == NULL || worker < 0 || worker >= n->nworkers) {
		fleet_seterr(errbuf, errlen, "node '%s' has no worker %d",
		    node_key, worker);
		goto out;
	}
	lpid = n->w[worker].pid;
	if (lpid > 0) {
		np = fleet_proc_scan(&procs);
		/* The listener's children are its connections (a child
		   not yet renamed is one too: it is about to serve one). */
		for (i = 0; i < np; i++)
			if (procs[i].ppid == lpid &&
			    strncmp(procs[i].comm, "sshd", 4) == 0 &&
			    fleet_cut_session(procs, np, i) > 0)
				ncut++;
		free(procs);
	}
	log_info("fleet: ssh-cut of %s worker %d: %d connection%s cut", n->name,
	    worker, ncut, ncut == 1 ? "" : "s");
	rc = 0;
out:
	pthread_mutex_unlock(&f->mu);
	return rc;
}

int
fleet_worker_blackhole(struct emu *e, const char *node_key, int worker,
    int mode, char *errbuf, size_t errlen)
{
	struct fleet *f = fleet_of(e);
	struct fleet_node *n;
	struct fleet_worker *w;
	int rc = -1;

	if (f == NULL) {
		fleet_seterr(errbuf, errlen, "the sshd fleet is not running");
		return -1;
	}
	pthread_mutex_lock(&f->mu);
	n = fleet_find(f, node_key);
	if (n == NULL || worker < 0 || worker >= n->nworkers) {
		fleet_seterr(errbuf, errlen, "node '%s' has no worker %d",
		    node_key, worker);
		goto out;
	}
	w = &n->w[worker];
	fleet_hole_close(w);
	if (mode != FLEET_HOLE_NONE) {
		/* Stop its sshd for good, then take its address:port. */
		w->down = 1;
		fleet_kill_workers(f, n, worker);
		fleet_wait_addr(f, w->addr);
		if (fleet_hole_open(f, w, mode, errbuf, errlen) == 0) {
			pthread_cond_broadcast(&f->cv);
			rc = 0;
			goto out;
		}
	}
	/* Cleared, or the hole failed: the sshd comes back. */
	w->down = 0;
	w->fails = 0;
	w->not_before_ms = 0;
	pthread_cond_broadcast(&f->cv);
	if (mode == FLEET_HOLE_NONE)
		rc = 0;
out:
	pthread_mutex_unlock(&f->mu);
	return rc;
}
