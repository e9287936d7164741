/*
 * Unit tests for emulator/fleet.c: drives the sshd worker fleet directly
 * with a minimal struct emu (a temporary state dir, no HTTP server) and
 * checks it with the real OpenSSH client: authorized keys applied after
 * the agent delay, per-worker identity and HOME, host-key pinning, faults
 * (rekey, worker down, sshd crash), stop/start, delete and restart.
 */
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <check.h>

#include "fleet.h"
#include "md.h"
#include "util.h"
#include "xmalloc.h"

#define NODE "projects/p1/locations/us-central2-b/nodes/n1"
#define NODE_ID "1234567890"
#define NW 4
/* A worker's number from its HOME (.../nS/wI/home): no TPU_* variable. */
#define WORKER_NO "h=${HOME%/home}; echo ${h##*/w}"
/* Workers get namespaces: root, and not turned off (TPUCTL_FLEET_NS=0). */
#define WITH_NS (geteuid() == 0 && opts[2] == NULL)

static char tmpdir[256];
static char clientkey[512];
static char clientpub[1024]; /* "ssh-ed25519 AAAA..." */
/* No port-443 listener for Google's hosts: these tests serve no routes. */
static char *opts[] = { (char *)"fleet.key_delay_ms=800",
	(char *)"fleet.google_tls=0", NULL, NULL };
static struct emu emu;
static char user[64];
static int port;

/* Run argv, stdout+stderr into out (NUL-terminated); the exit status. */
static int
run(char *const argv[], char *out, size_t outlen)
{
	int pfd[2], status = 0;
	size_t len = 0;
	pid_t pid;

	ck_assert_int_eq(pipe(pfd), 0);
	pid = fork();
	ck_assert_int_ne(pid, -1);
	if (pid == 0) {
		int nul = open("/dev/null", O_RDONLY);

		dup2(nul, 0);
		dup2(pfd[1], 1);
		dup2(pfd[1], 2);
		close(pfd[0]);
		execvp(argv[0], argv);
		_exit(127);
	}
	close(pfd[1]);
	for (;;) {
		char junk[256];
		ssize_t n;

		if (len + 1 < outlen)
			n = read(pfd[0], out + len, outlen - len - 1);
		else
			n = read(pfd[0], junk, sizeof(junk));
		if (n == -1 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		if (len + 1 < outlen)
			len += (size_t)n;
	}
	close(pfd[0]);
	out[len] = '\0';
	while (waitpid(pid, &status, 0) == -1 && errno == EINTR)
		;
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128;
}

static void
emu_setup(void)
{
	memset(&emu, 0, sizeof(emu));
	pthread_mutex_init(&emu.lock, NULL);
	emu.state_dir = tmpdir;
	emu.base_url = (char *)"http://127.0.0.1:9";
	emu.opts = opts;
	/*
	 * TPUCTL_FLEET_NS=0: no worker namespaces even as root, the
	 * fallback of ordinary users (the bench compares both).
	 */
	if (getenv("TPUCTL_FLEET_NS") != NULL &&
	    strcmp(getenv("TPUCTL_FLEET_NS"), "0") == 0)
		opts[2] = (char *)"fleet.namespaces=0";
	ck_assert_int_eq(fleet_init(&emu), 0);
}

static void
setup(void)
{
	char out[4096];
	FILE *fp;

	snprintf(tmpdir, sizeof(tmpdir), "/tmp/check_emu_fleet.XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(tmpdir));
	snprintf(clientkey, sizeof(clientkey), "%s/id_ed25519", tmpdir);
	{
		char *argv[] = { (char *)"ssh-keygen", (char *)"-q",
			(char *)"-t", (char *)"ed25519", (char *)"-N",
			(char *)"", (char *)"-C", (char *)"tester",
			(char *)"-f", clientkey, NULL };

		ck_assert_int_eq(run(argv, out, sizeof(out)), 0);
	}
	snprintf(out, sizeof(out), "%s.pub", clientkey);
	fp = fopen(out, "r");
	ck_assert_ptr_nonnull(fp);
	ck_assert_ptr_nonnull(fgets(clientpub, sizeof(clientpub), fp));
	fclose(fp);
	/* Keep "type base64" only. */
	*strchr(strchr(clientpub, ' ') + 1, ' ') = '\0';
	emu_setup();
	fp = tmpfile();
	fleet_env(&emu, fp);
	rewind(fp);
	memset(out, 0, sizeof(out));
	ck_assert_uint_gt(fread(out, 1, sizeof(out) - 1, fp), 0);
	fclose(fp);
	ck_assert_int_eq(sscanf(out,
	                     "export TPUCTL_SSH_PORT='%d'\n"
	                     "export TPUCTL_SSH_USER='%63[^']'\n",
	                     &port, user),
	    2);
	ck_assert_int_gt(port, 0);
}

static void
teardown(void)
{
	char *argv[] = { (char *)"rm", (char *)"-rf", tmpdir, NULL };
	char out[256];

	fleet_fini(&emu);
	run(argv, out, sizeof(out));
}

/* Node metadata whose ssh-keys holds the given text. */
static cJSON *
md_keys(const char *keys)
{
	cJSON *md = cJSON_CreateObject();

	cJSON_AddStringToObject(md, "ssh-keys", keys);
	return md;
}

static cJSON *
md_good(void)
{
	char *s = xasprintf("%s:%s %s", user, clientpub, user);
	cJSON *md = md_keys(s);

	free(s);
	return md;
}

static int
create(const char *key, const char *id, int n, const cJSON *md)
{
	char err[256] = "";
	int rc;

	pthread_mutex_lock(&emu.lock);
	rc = fleet_node_create(&emu, key, id, n, "v4-32", md, err, sizeof(err));
	pthread_mutex_unlock(&emu.lock);
	if (rc != 0)
		fprintf(stderr, "fleet_node_create: %s\n", err);
	return rc;
}

static int
wait_ready(const char *key, int ms)
{
	int64_t deadline = tpu_now_ms() + ms;

	while (tpu_now_ms() < deadline) {
		if (fleet_node_ready(&emu, key))
			return 1;
		tpu_sleep_ms(20);
	}
	return 0;
}

/* known_hosts from the published keys; returns the file name. */
static char *
write_known_hosts(const char *key, struct fleet_worker_info *wi, int n)
{
	char *path = xasprintf("%s/known_hosts", tmpdir);
	FILE *fp;
	int i;

	ck_assert_int_eq(fleet_node_workers(&emu, key, wi, n), n);
	fp = fopen(path, "w");
	ck_assert_ptr_nonnull(fp);
	for (i = 0; i < n; i++) {
		ck_assert(tpu_startswith(wi[i].hostkey, "ssh-ed25519 AAAA"));
		fprintf(
		    fp, "[%s]:%d %s\n", wi[i].addr, wi[i].port, wi[i].hostkey);
	}
	fclose(fp);
	return path;
}

static int
ssh(const struct fleet_worker_info *w, const char *kh, const char *cmd,
    char *out, size_t outlen)
{
	char portbuf[16], dest[128], khopt[600];
	char *argv[] = { (char *)"ssh", (char *)"-F", (char *)"/dev/null",
		(char *)"-i", clientkey, (char *)"-o", (char *)"BatchMode=yes",
		(char *)"-o", (char *)"IdentitiesOnly=yes", (char *)"-o",
		(char *)"StrictHostKeyChecking=yes", (char *)"-o", khopt,
		(char *)"-o", (char *)"GlobalKnownHostsFile=/dev/null",
		(char *)"-o", (char *)"ConnectTimeout=10", (char *)"-p",
		portbuf, dest, (char *)cmd, NULL };

	snprintf(portbuf, sizeof(portbuf), "%d", w->port);
	snprintf(dest, sizeof(dest), "%s@%s", user, w->addr);
	snprintf(khopt, sizeof(khopt), "UserKnownHostsFile=%s", kh);
	return run(argv, out, outlen);
}

static pid_t
worker_pid(int subnet, int w)
{
	char path[512], buf[32] = "";
	FILE *fp;

	snprintf(
	    path, sizeof(path), "%s/fleet/n%d/w%d/sshd.pid", tmpdir, subnet, w);
	fp = fopen(path, "r");
	if (fp == NULL)
		return -1;
	if (fgets(buf, sizeof(buf), fp) == NULL)
		buf[0] = '\0';
	fclose(fp);
	return (pid_t)strtol(buf, NULL, 10);
}

/* Entries left in the fleet dir besides fleet.json. */
static int
trash_count(void)
{
	char path[512];
	struct dirent *de;
	DIR *d;
	int n = 0;

	snprintf(path, sizeof(path), "%s/fleet", tmpdir);
	d = opendir(path);
	ck_assert_ptr_nonnull(d);
	while ((de = readdir(d)) != NULL)
		if (strncmp(de->d_name, "trash.", 6) == 0 ||
		    strncmp(de->d_name, "n", 1) == 0)
			n++;
	closedir(d);
	return n;
}

/* Number of zombie children of this process. */
static int
zombies(void)
{
	struct dirent *de;
	DIR *d = opendir("/proc");
	int n = 0;

	ck_assert_ptr_nonnull(d);
	while ((de = readdir(d)) != NULL) {
		char path[300], buf[512], st;
		const char *rp;
		long ppid;
		FILE *fp;

		if (de->d_name[0] < '1' || de->d_name[0] > '9')
			continue;
		snprintf(path, sizeof(path), "/proc/%s/stat", de->d_name);
		fp = fopen(path, "r");
		if (fp == NULL)
			continue;
		if (fgets(buf, sizeof(buf), fp) != NULL &&
		    (rp = strrchr(buf, ')')) != NULL &&
		    sscanf(rp + 1, " %c %ld", &st, &ppid) == 2 &&
		    ppid == (long)getpid() && st == 'Z')
			n++;
		fclose(fp);
	}
	closedir(d);
	return n;
}

/* /proc/pid/stat and HOME of pid, for failure messages. */
static const char *
proc_stat(pid_t pid)
{
	static char line[1024];
	char path[64], env[8192];
	size_t n = 0, off;
	FILE *fp;

	line[0] = '\0';
	snprintf(path, sizeof(path), "/proc/%ld/stat", (long)pid);
	if ((fp = fopen(path, "r")) != NULL) {
		if (fgets(line, sizeof(line) / 2, fp) == NULL)
			line[0] = '\0';
		fclose(fp);
	}
	snprintf(path, sizeof(path), "/proc/%ld/environ", (long)pid);
	if ((fp = fopen(path, "r")) != NULL) {
		n = fread(env, 1, sizeof(env) - 1, fp);
		fclose(fp);
	}
	env[n] = '\0';
	for (off = 0; off < n; off += strlen(env + off) + 1)
		if (strncmp(env + off, "HOME=", 5) == 0)
			snprintf(line + strlen(line),
			    sizeof(line) - strlen(line), " %.400s (self %ld)",
			    env + off, (long)getpid());
	return line;
}

/* Start "sleep 300" in the background on a worker; its pid. */
static pid_t
daemonise(const struct fleet_worker_info *w, const char *kh)
{
	char out[256];
	pid_t pid;

	ck_assert_int_eq(ssh(w, kh, "nohup sleep 300 >/dev/null 2>&1 & echo $!",
	                     out, sizeof(out)),
	    0);
	pid = (pid_t)strtol(out, NULL, 10);
	ck_assert_int_gt(pid, 1);
	ck_assert_int_eq(kill(pid, 0), 0);
	return pid;
}

/* 1 once pid no longer exists (killed and reaped), within 5 s. */
static int
gone(pid_t pid)
{
	int i;

	for (i = 0; i < 250; i++) {
		if (kill(pid, 0) == -1)
			return 1;
		tpu_sleep_ms(20);
	}
	return 0;
}

static int
wait_no_zombies(void)
{
	int i, z = 0;

	for (i = 0; i < 150; i++) {
		if ((z = zombies()) == 0)
			break;
		tpu_sleep_ms(20);
	}
	return z;
}

START_TEST(keys_identity_home)
{
	struct fleet_worker_info wi[NW];
	char out[4096], want[1024];
	int64_t t0;
	cJSON *md;
	char *kh;
	int i, rc;

	md = md_keys("");
	ck_assert_int_eq(create(NODE, NODE_ID, NW, md), 0);
	cJSON_Delete(md);
	ck_assert_int_eq(fleet_node_ready(&emu, NODE), 0);
	ck_assert(wait_ready(NODE, 30000));
	kh = write_known_hosts(NODE, wi, NW);
	for (i = 0; i < NW; i++) {
		char addr[64];

		snprintf(addr, sizeof(addr), "127.1.0.%d", i + 1);
		ck_assert_str_eq(wi[i].addr, addr);
		ck_assert_int_eq(wi[i].port, port);
	}
	/* No key in metadata yet: publickey authentication fails. */
	ck_assert_int_eq(ssh(&wi[0], kh, "true", out, sizeof(out)), 255);
	ck_assert_ptr_nonnull(strstr(out, "Permission denied"));

	md = md_good();
	pthread_mutex_lock(&emu.lock);
	fleet_node_metadata(&emu, NODE, md);
	pthread_mutex_unlock(&emu.lock);
	cJSON_Delete(md);
	/*
	 * Still refused until the agent delay (800 ms) has passed (checked
	 * only when the machine was fast enough to ask in time).
	 */
	t0 = tpu_now_ms();
	rc = ssh(&wi[1], kh, "true", out, sizeof(out));
	if (tpu_now_ms() - t0 < 700)
		ck_assert_int_eq(rc, 255);
	tpu_sleep_ms(1000);
	for (i = 0; i < NW; i++) {
		/*
		 * A TPU VM's login: its own HOME, a system PATH (python3 is
		 * Debian's), no TPU_* variable (identity is metadata's).
		 */
		ck_assert_int_eq(ssh(&wi[i], kh,
		                     "pwd; echo $HOME; echo $PATH; "
		                     "env | grep -c '^TPU_'; "
		                     "command -v python3",
		                     out, sizeof(out)),
		    0);
		snprintf(want, sizeof(want),
		    "%s/fleet/n0/w%d/home\n%s/fleet/n0/w%d/home\n"
		    "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:"
		    "/bin:/usr/games:/usr/local/games:/snap/bin\n0\n"
		    "/usr/bin/python3\n",
		    tmpdir, i, tmpdir, i);
		ck_assert_str_eq(out, want);
	}
	/* Files written on worker 0 are not on worker 1. */
	ck_assert_int_eq(ssh(&wi[0], kh, "echo w0 > f0", out, sizeof(out)), 0);
	ck_assert_int_eq(ssh(&wi[0], kh, "cat f0", out, sizeof(out)), 0);
	ck_assert_str_eq(out, "w0\n");
	ck_assert_int_eq(ssh(&wi[1], kh, "test -e f0", out, sizeof(out)), 1);
	/* The remote exit status comes back. */
	ck_assert_int_eq(ssh(&wi[2], kh, "exit 7", out, sizeof(out)), 7);
	free(kh);
}
END_TEST

START_TEST(key_filtering)
{
	char path[512], *s, *text;
	int64_t t0;
	FILE *fp;
	cJSON *md;
	long len;

	/*
	 * Only well-formed entries of the login user are applied: another
	 * user, a CR inside the entry, bad base64, a type that does not
	 * match the blob, and a line without a key are skipped.
	 */
	s = xasprintf("other:%s other\n"
	              "%s:%s ok-one\n"
	              "%s:%s with-cr\r\n"
	              "%s:ssh-ed25519 AAAA!!!! bad\n"
	              "%s:ssh-rsa %s wrongtype\n"
	              "%s:ssh-ed25519\n"
	              "garbage\n"
	              "%s:%s",
	    clientpub, user, clientpub, user, clientpub, user, user,
	    strchr(clientpub, ' ') + 1, user, user, clientpub);
	md = md_keys(s);
	free(s);
	ck_assert_int_eq(create(NODE, NODE_ID, 1, md), 0);
	t0 = tpu_now_ms();
	cJSON_Delete(md);
	snprintf(path, sizeof(path), "%s/fleet/n0/w0/authorized_keys", tmpdir);
	tpu_sleep_ms(300);
	if (access(path, F_OK) == 0) /* not before the delay */
		ck_assert_int_ge(tpu_now_ms() - t0, 800);
	tpu_sleep_ms(1000);
	fp = fopen(path, "r");
	ck_assert_ptr_nonnull(fp);
	fseek(fp, 0, SEEK_END);
	len = ftell(fp);
	rewind(fp);
	text = xcalloc(1, (size_t)len + 1);
	ck_assert_int_eq(fread(text, 1, (size_t)len, fp), len);
	fclose(fp);
	s = xasprintf("%s ok-one\n%s\n", clientpub, clientpub);
	ck_assert_str_eq(text, s);
	free(s);
	free(text);
}
END_TEST

START_TEST(rekey_down_crash)
{
	struct fleet_worker_info wi[NW], after[NW];
	char out[4096];
	pid_t pid, d2, d3;
	cJSON *md;
	char *kh;
	int i;

	md = md_good();
	ck_assert_int_eq(create(NODE, NODE_ID, NW, md), 0);
	cJSON_Delete(md);
	ck_assert(wait_ready(NODE, 30000));
	kh = write_known_hosts(NODE, wi, NW);
	tpu_sleep_ms(900);
	ck_assert_int_eq(ssh(&wi[1], kh, "true", out, sizeof(out)), 0);

	/* Rekey worker 1: pinning fails there only; the old key stays
	 * published. */
	pthread_mutex_lock(&emu.lock);
	ck_assert_int_eq(fleet_worker_rekey(&emu, NODE, 1), 0);
	ck_assert_int_eq(fleet_worker_rekey(&emu, NODE, NW), -1);
	pthread_mutex_unlock(&emu.lock);
	ck_assert(wait_ready(NODE, 30000));
	ck_assert_int_eq(ssh(&wi[1], kh, "true", out, sizeof(out)), 255);
	ck_assert_ptr_nonnull(strstr(out, "Host key verification failed"));
	ck_assert_int_eq(ssh(&wi[0], kh, "true", out, sizeof(out)), 0);
	ck_assert_int_eq(fleet_node_workers(&emu, NODE, after, NW), NW);
	for (i = 0; i < NW; i++)
		ck_assert_str_eq(after[i].hostkey, wi[i].hostkey);

	/*
	 * Worker 2 down: refused at once, node not ready, its daemons die
	 * with it (those of worker 3 do not); then back.
	 */
	d2 = daemonise(&wi[2], kh);
	d3 = daemonise(&wi[3], kh);
	pthread_mutex_lock(&emu.lock);
	ck_assert_int_eq(fleet_worker_down(&emu, NODE, 2, 1), 0);
	pthread_mutex_unlock(&emu.lock);
	if (!gone(d2))
		ck_abort_msg(
		    "daemon of a down worker survived: %s", proc_stat(d2));
	ck_assert_int_eq(kill(d3, 0), 0);
	ck_assert_int_eq(fleet_node_ready(&emu, NODE), 0);
	ck_assert_int_eq(ssh(&wi[2], kh, "true", out, sizeof(out)), 255);
	ck_assert_ptr_nonnull(strstr(out, "Connection refused"));
	tpu_sleep_ms(300); /* stays down: no automatic restart */
	ck_assert_int_eq(fleet_node_ready(&emu, NODE), 0);
	ck_assert_int_eq(ssh(&wi[3], kh, "true", out, sizeof(out)), 0);
	pthread_mutex_lock(&emu.lock);
	ck_assert_int_eq(fleet_worker_down(&emu, NODE, 2, 0), 0);
	pthread_mutex_unlock(&emu.lock);
	ck_assert(wait_ready(NODE, 30000));
	ck_assert_int_eq(ssh(&wi[2], kh, "true", out, sizeof(out)), 0);

	/* An sshd that dies on its own is restarted. */
	pid = worker_pid(0, 3);
	ck_assert_int_gt(pid, 1);
	ck_assert_int_eq(kill(pid, SIGKILL), 0);
	for (i = 0; i < 1500; i++) {
		pid_t now = worker_pid(0, 3);

		if (now > 1 && now != pid)
			break;
		tpu_sleep_ms(20);
	}
	ck_assert_int_ne(worker_pid(0, 3), pid);
	ck_assert(wait_ready(NODE, 30000));
	ck_assert_int_eq(ssh(&wi[3], kh, "true", out, sizeof(out)), 0);
	ck_assert_int_eq(wait_no_zombies(), 0);
	free(kh);
}
END_TEST

START_TEST(stop_start_delete)
{
	struct fleet_worker_info wi[NW];
	pid_t pids[NW], bg;
	char out[4096], path[512];
	struct stat st;
	cJSON *md;
	char *kh;
	int i;

	md = md_good();
	ck_assert_int_eq(create(NODE, NODE_ID, NW, md), 0);
	cJSON_Delete(md);
	ck_assert(wait_ready(NODE, 30000));
	kh = write_known_hosts(NODE, wi, NW);
	tpu_sleep_ms(900);
	ck_assert_int_eq(
	    ssh(&wi[0], kh, "echo keep > kept", out, sizeof(out)), 0);
	/* A process that outlives its session (daemonised). */
	ck_assert_int_eq(
	    ssh(&wi[0], kh, "nohup sleep 300 >/dev/null 2>&1 & echo $!", out,
	        sizeof(out)),
	    0);
	bg = (pid_t)strtol(out, NULL, 10);
	ck_assert_int_gt(bg, 1);
	ck_assert_int_eq(kill(bg, 0), 0);
	for (i = 0; i < NW; i++) {
		pids[i] = worker_pid(0, i);
		ck_assert_int_gt(pids[i], 1);
	}
	pthread_mutex_lock(&emu.lock);
	fleet_node_stop(&emu, NODE);
	pthread_mutex_unlock(&emu.lock);
	ck_assert_int_eq(fleet_node_ready(&emu, NODE), 0);
	for (i = 0; i < NW; i++)
		ck_assert(gone(pids[i]));
	/* The daemonised process went down with its worker. */
	if (!gone(bg))
		ck_abort_msg(
		    "daemonised process survived stop: %s", proc_stat(bg));
	ck_assert_int_eq(ssh(&wi[0], kh, "true", out, sizeof(out)), 255);
	ck_assert_ptr_nonnull(strstr(out, "Connection refused"));

	pthread_mutex_lock(&emu.lock);
	fleet_node_start(&emu, NODE);
	pthread_mutex_unlock(&emu.lock);
	ck_assert(wait_ready(NODE, 30000));
	/* Same host keys, same authorized keys, HOME kept. */
	ck_assert_int_eq(ssh(&wi[0], kh, "cat kept", out, sizeof(out)), 0);
	ck_assert_str_eq(out, "keep\n");
	for (i = 0; i < NW; i++)
		pids[i] = worker_pid(0, i);

	pthread_mutex_lock(&emu.lock);
	fleet_node_delete(&emu, NODE);
	pthread_mutex_unlock(&emu.lock);
	ck_assert_int_eq(fleet_node_ready(&emu, NODE), 0);
	ck_assert_int_eq(fleet_node_workers(&emu, NODE, wi, NW), -1);
	for (i = 0; i < NW; i++)
		ck_assert(gone(pids[i]));
	snprintf(path, sizeof(path), "%s/fleet/n0", tmpdir);
	ck_assert_int_eq(stat(path, &st), -1);
	/* The files go too (moved aside at once, removed by the monitor). */
	for (i = 0; i < 250 && trash_count() > 0; i++)
		tpu_sleep_ms(20);
	ck_assert_int_eq(trash_count(), 0);
	ck_assert_int_eq(wait_no_zombies(), 0);
	free(kh);
}
END_TEST

START_TEST(restart_keeps_keys)
{
	struct fleet_worker_info wi[NW], wi2[NW], other[2];
	char out[4096];
	pid_t pid, bg;
	cJSON *md;
	char *kh;
	int i, port0 = port;

	md = md_good();
	ck_assert_int_eq(create(NODE, NODE_ID, NW, md), 0);
	ck_assert_int_eq(
	    create("projects/p1/locations/z/nodes/n2", "77", 2, md), 0);
	cJSON_Delete(md);
	ck_assert(wait_ready(NODE, 30000));
	kh = write_known_hosts(NODE, wi, NW);
	ck_assert_int_eq(fleet_node_workers(&emu,
	                     "projects/p1/locations/z/nodes/n2", other, 2),
	    2);
	ck_assert_str_eq(other[0].addr, "127.1.1.1");
	tpu_sleep_ms(900);
	pid = worker_pid(0, 0);
	bg = daemonise(&wi[1], kh);

	fleet_fini(&emu);
	ck_assert_int_eq(kill(pid, 0), -1);
	if (kill(bg, 0) == 0) /* fini waits: no polling here */
		ck_abort_msg("daemon survived fini: %s", proc_stat(bg));
	ck_assert_int_eq(wait_no_zombies(), 0);
	emu_setup();
	/* Known but not re-created yet: not ready, nothing running. */
	ck_assert_int_eq(fleet_node_ready(&emu, NODE), 0);
	md = md_good();
	ck_assert_int_eq(create(NODE, NODE_ID, NW, md), 0);
	cJSON_Delete(md);
	ck_assert(wait_ready(NODE, 30000));
	ck_assert_int_eq(fleet_node_workers(&emu, NODE, wi2, NW), NW);
	for (i = 0; i < NW; i++) {
		ck_assert_str_eq(wi2[i].addr, wi[i].addr);
		ck_assert_str_eq(wi2[i].hostkey, wi[i].hostkey);
		ck_assert_int_eq(wi2[i].port, port0);
		/* authorized_keys survived too: works at once. */
		ck_assert_int_eq(
		    ssh(&wi2[i], kh, WORKER_NO, out, sizeof(out)), 0);
		ck_assert_int_eq((int)strtol(out, NULL, 10), i);
	}
	/* The other node is still allocated (not re-created: stopped). */
	ck_assert_int_eq(fleet_node_workers(&emu,
	                     "projects/p1/locations/z/nodes/n2", other, 2),
	    2);
	ck_assert_str_eq(other[0].addr, "127.1.1.1");
	/* A new incarnation of the name gets new keys. */
	md = md_good();
	ck_assert_int_eq(create(NODE, "999", NW, md), 0);
	cJSON_Delete(md);
	ck_assert(wait_ready(NODE, 30000));
	ck_assert_int_eq(fleet_node_workers(&emu, NODE, wi2, NW), NW);
	ck_assert_str_ne(wi2[0].hostkey, wi[0].hostkey);
	free(kh);
}
END_TEST

START_TEST(bad_input)
{
	char err[256] = "";

	pthread_mutex_lock(&emu.lock);
	ck_assert_int_eq(fleet_node_create(&emu, NODE, NODE_ID, 0, "v4-8", NULL,
	                     err, sizeof(err)),
	    -1);
	ck_assert_ptr_nonnull(strstr(err, "invalid worker count 0"));
	ck_assert_int_eq(fleet_node_create(&emu, NODE, NODE_ID, 1, "v4 8\"x",
	                     NULL, err, sizeof(err)),
	    -1);
	ck_assert_ptr_nonnull(strstr(err, "accelerator type"));
	ck_assert_int_eq(fleet_worker_down(&emu, "nope", 0, 1), -1);
	ck_assert_int_eq(fleet_node_ready(&emu, "nope"), 0);
	pthread_mutex_unlock(&emu.lock);
}
END_TEST

START_TEST(hostname_form)
{
	char a[64], b[64], c[64];
	unsigned hex;
	int w, used = 0;

	emu_md_hostname(NODE, NODE_ID, 0, a, sizeof(a));
	ck_assert_int_eq(sscanf(a, "t1v-n-%8x-w-%d%n", &hex, &w, &used), 2);
	ck_assert_int_eq(w, 0);
	ck_assert_uint_eq(strlen(a), (size_t)used);
	ck_assert_uint_eq(strlen(a), strlen("t1v-n-12345678-w-0"));
	/* Lowercase hex, stable, the worker number at the end. */
	ck_assert_str_eq(a + strspn(a, "t1v-n-0123456789abcdef"), "w-0");
	emu_md_hostname(NODE, NODE_ID, 0, b, sizeof(b));
	ck_assert_str_eq(a, b);
	emu_md_hostname(NODE, NODE_ID, 255, b, sizeof(b));
	ck_assert_int_eq(memcmp(a, b, 14), 0);
	ck_assert_str_eq(b + 14, "-w-255");
	/* Another node id: other hex digits. */
	emu_md_hostname(NODE, "1234567891", 0, c, sizeof(c));
	ck_assert_str_ne(a, c);
}
END_TEST

START_TEST(chips_per_host)
{
	static const struct {
		const char *type;
		int chips;
	} t[] = {
		{ "v2-8", 4 },
		{ "v2-32", 4 },
		{ "v3-8", 4 },
		{ "v3-2048", 4 },
		{ "v4-8", 4 },
		{ "v4-32", 4 },
		{ "v4-4096", 4 },
		{ "v5p-8", 4 },
		{ "v5p-128", 4 },
		{ "v5litepod-1", 1 },
		{ "v5litepod-4", 4 },
		{ "v5litepod-8", 8 },
		{ "v5litepod-16", 4 },
		{ "v5litepod-256", 4 },
		{ "v6e-1", 1 },
		{ "v6e-4", 4 },
		{ "v6e-8", 8 },
		{ "v6e-16", 4 },
		{ "v7-8", -1 },
		{ "v4", -1 },
		{ "v4-", -1 },
		{ "v4-x", -1 },
		{ "v4-0", -1 },
		{ "-8", -1 },
		{ "", -1 },
	};
	size_t i;

	for (i = 0; i < sizeof(t) / sizeof(t[0]); i++)
		ck_assert_msg(fleet_chips_per_host(t[i].type) == t[i].chips,
		    "%s: %d chips per host, want %d", t[i].type,
		    fleet_chips_per_host(t[i].type), t[i].chips);
	ck_assert_int_eq(fleet_chips_per_host(NULL), -1);
}
END_TEST

/* Wait until file contains needle (at least count times): 1, or 0. */
static int
wait_file(const char *path, const char *needle, int count, int ms)
{
	int64_t deadline = tpu_now_ms() + ms;

	while (tpu_now_ms() < deadline) {
		char buf[65536];
		const char *p = buf;
		size_t len;
		FILE *fp = fopen(path, "r");
		int n = 0;

		if (fp != NULL) {
			len = fread(buf, 1, sizeof(buf) - 1, fp);
			buf[len] = '\0';
			fclose(fp);
			while ((p = strstr(p, needle)) != NULL) {
				n++;
				p++;
			}
			if (n >= count)
				return 1;
		}
		tpu_sleep_ms(50);
	}
	return 0;
}

/*
 * Root: each worker in its own UTS and mount namespace (hostname, /tmp,
 * /dev/accel*, /etc/hosts).  Not root: the documented fallback, the
 * host's hostname and /tmp.
 */
START_TEST(worker_namespaces)
{
	struct fleet_worker_info wi[NW];
	char out[4096], want[4096], host[256], *kh;
	cJSON *md;
	int i;

	md = md_good();
	ck_assert_int_eq(create(NODE, NODE_ID, NW, md), 0);
	cJSON_Delete(md);
	ck_assert(wait_ready(NODE, 30000));
	kh = write_known_hosts(NODE, wi, NW);
	tpu_sleep_ms(900); /* key delay */
	if (!WITH_NS) {
		printf("SKIP: worker_namespaces: no namespaces (not root or "
		       "TPUCTL_FLEET_NS=0), workers share the host's hostname "
		       "and /tmp\n");
		ck_assert_int_eq(gethostname(host, sizeof(host)), 0);
		ck_assert_int_eq(
		    ssh(&wi[0], kh, "hostname", out, sizeof(out)), 0);
		snprintf(want, sizeof(want), "%s\n", host);
		ck_assert_str_eq(out, want);
		free(kh);
		return;
	}
	for (i = 0; i < NW; i++) {
		char name[64];

		emu_md_hostname(NODE, NODE_ID, i, name, sizeof(name));
		ck_assert_int_eq(
		    ssh(&wi[i], kh,
		        "hostname; cat /etc/hostname; "
		        "getent hosts metadata.google.internal "
		        "storage.googleapis.com; "
		        "ls /dev/accel*; test -f /dev/accel0 && "
		        "echo >/dev/accel3 && "
		        "echo x >/dev/null && head -c1 /dev/zero | "
		        "wc -c",
		        out, sizeof(out)),
		    0);
		snprintf(want, sizeof(want),
		    "%s\n%s\n%-15s metadata.google.internal metadata\n"
		    "127.0.0.1       storage.googleapis.com "
		    "oauth2.googleapis.com tpu.googleapis.com\n"
		    "/dev/accel0\n/dev/accel1\n/dev/accel2\n/dev/accel3\n1\n",
		    name, name, wi[i].addr);
		ck_assert_str_eq(out, want);
	}
	/* /tmp is the worker's own: worker 1 does not see worker 0's. */
	ck_assert_int_eq(
	    ssh(&wi[0], kh, "echo w0 > /tmp/only-w0", out, sizeof(out)), 0);
	ck_assert_int_eq(
	    ssh(&wi[0], kh, "cat /tmp/only-w0", out, sizeof(out)), 0);
	ck_assert_str_eq(out, "w0\n");
	ck_assert_int_eq(
	    ssh(&wi[1], kh, "test -e /tmp/only-w0", out, sizeof(out)), 1);
	ck_assert_int_eq(access("/tmp/only-w0", F_OK), -1);
	/* The host's own hostname and /dev are untouched. */
	ck_assert_int_eq(access("/dev/accel0", F_OK), -1);
	free(kh);
}
END_TEST

/*
 * The node's startup-script runs on every worker at boot, in its
 * namespaces, logged as the guest agent logs it, and again after a stop
 * and start; a patch changes the script of the next boot.
 */
START_TEST(startup_scripts)
{
	char path[512], name[64];
	cJSON *md;
	int i;

	md = md_good();
	cJSON_AddStringToObject(md, "startup-script",
	    "#!/bin/sh\necho \"boot on $(hostname)\"\necho to-stderr >&2\n"
	    /* as root (namespaces) no HOME: the account's home is in the
	       worker's /etc/passwd */
	    "h=${HOME:-$(getent passwd \"$(id -un)\" | cut -d: -f6)}\n"
	    "d=${h%/home}; echo \"worker ${d##*/w}\" >>\"$h/boots\"\n"
	    "exit 3\n");
	ck_assert_int_eq(create(NODE, NODE_ID, NW, md), 0);
	cJSON_Delete(md);
	ck_assert(wait_ready(NODE, 30000));
	for (i = 0; i < NW; i++) {
		char want[256];

		snprintf(path, sizeof(path),
		    "%s/fleet/n0/w%d/startup-script.log", tmpdir, i);
		emu_md_hostname(NODE, NODE_ID, i, name, sizeof(name));
		ck_assert_msg(
		    wait_file(
		        path, "Finished running startup scripts.", 1, 20000),
		    "worker %d: no startup-script log", i);
		ck_assert(
		    wait_file(path, "google_metadata_script_runner[", 5, 100));
		ck_assert(wait_file(
		    path, "Found startup-script in metadata.", 1, 100));
		ck_assert(wait_file(path, "startup-script: to-stderr", 1, 100));
		ck_assert(
		    wait_file(path, "startup-script exit status 3", 1, 100));
		snprintf(want, sizeof(want),
		    "%s google_metadata_script_runner[", name);
		ck_assert(wait_file(path, want, 5, 100));
		if (WITH_NS) {
			snprintf(want, sizeof(want),
			    "startup-script: boot on %s\n", name);
			ck_assert_msg(wait_file(path, want, 1, 100),
			    "worker %d: not in its namespace", i);
		}
		snprintf(path, sizeof(path), "%s/fleet/n0/w%d/home/boots",
		    tmpdir, i);
		snprintf(want, sizeof(want), "worker %d\n", i);
		ck_assert(wait_file(path, want, 1, 100));
	}
	/* A stop and start is a boot: the (patched) script runs again. */
	md = md_good();
	cJSON_AddStringToObject(md, "startup-script", "echo second boot");
	pthread_mutex_lock(&emu.lock);
	fleet_node_metadata(&emu, NODE, md);
	fleet_node_stop(&emu, NODE);
	fleet_node_start(&emu, NODE);
	pthread_mutex_unlock(&emu.lock);
	cJSON_Delete(md);
	ck_assert(wait_ready(NODE, 30000));
	for (i = 0; i < NW; i++) {
		snprintf(path, sizeof(path),
		    "%s/fleet/n0/w%d/startup-script.log", tmpdir, i);
		ck_assert(wait_file(
		    path, "Finished running startup scripts.", 2, 20000));
		ck_assert(
		    wait_file(path, "startup-script: second boot\n", 1, 100));
	}
	/* Without scripts the agent says so. */
	md = md_good();
	pthread_mutex_lock(&emu.lock);
	fleet_node_metadata(&emu, NODE, md);
	fleet_node_stop(&emu, NODE);
	fleet_node_start(&emu, NODE);
	pthread_mutex_unlock(&emu.lock);
	cJSON_Delete(md);
	ck_assert(wait_ready(NODE, 30000));
	snprintf(
	    path, sizeof(path), "%s/fleet/n0/w3/startup-script.log", tmpdir);
	ck_assert(wait_file(path, "No startup scripts to run.", 1, 20000));
	ck_assert(wait_file(path, "Finished running startup scripts.", 3, 100));
}
END_TEST

/* Proportional set size of pid in KiB (0 when unknown). */
static long
pss_kb(pid_t pid)
{
	char path[64], line[256];
	long kb = 0;
	FILE *fp;

	snprintf(path, sizeof(path), "/proc/%ld/smaps_rollup", (long)pid);
	fp = fopen(path, "r");
	if (fp == NULL)
		return 0;
	while (fgets(line, sizeof(line), fp) != NULL)
		if (sscanf(line, "Pss: %ld kB", &kb) == 1)
			break;
	fclose(fp);
	return kb;
}

/*
 * Benchmark, run only with TPUCTL_FLEET_BENCH="16 64 256" (see
 * tests/bench/bench_emu_fleet.sh): time from fleet_node_create() to
 * fleet_node_ready() for each size, one ssh to the last worker, and the
 * time fleet_node_delete() takes.
 */
START_TEST(bench_ready)
{
	const char *sizes = getenv("TPUCTL_FLEET_BENCH");
	char *dup, *tok, *save = NULL;

	ck_assert_ptr_nonnull(sizes);
	dup = xstrdup(sizes);
	for (tok = strtok_r(dup, " ,", &save); tok != NULL;
	     tok = strtok_r(NULL, " ,", &save)) {
		const char *errstr;
		struct fleet_worker_info *wi;
		char out[4096], key[128], *kh;
		int64_t t0, t1, t2, t3, t4;
		long pss;
		int i, n, ok;
		cJSON *md;

		n = (int)tpu_strtonum(tok, 1, 4096, &errstr);
		ck_assert_ptr_null(errstr);
		snprintf(
		    key, sizeof(key), "projects/p/locations/z/nodes/b%d", n);
		md = md_good();
		t0 = tpu_now_ms();
		ck_assert_int_eq(create(key, tok, n, md), 0);
		t1 = tpu_now_ms();
		cJSON_Delete(md);
		ok = wait_ready(key, 120000);
		t2 = tpu_now_ms();
		ck_assert_msg(ok, "%d workers not ready in 120 s", n);
		wi = xcalloc((size_t)n, sizeof(*wi));
		kh = write_known_hosts(key, wi, n);
		tpu_sleep_ms(900); /* key delay */
		ck_assert_int_eq(
		    ssh(&wi[n - 1], kh, WORKER_NO, out, sizeof(out)), 0);
		ck_assert_int_eq((int)strtol(out, NULL, 10), n - 1);
		pss = 0;
		for (i = 0; i < n; i++)
			pss += pss_kb(worker_pid(0, i));
		pthread_mutex_lock(&emu.lock);
		t3 = tpu_now_ms();
		fleet_node_delete(&emu, key);
		t4 = tpu_now_ms();
		pthread_mutex_unlock(&emu.lock);
		printf("fleet bench: %4d workers%s: create call %lld ms, ready "
		       "after %.2f s, sshd PSS %.1f MB, delete %lld ms\n",
		    n, opts[2] != NULL ? " (no namespaces)" : "",
		    (long long)(t1 - t0), (double)(t2 - t0) / 1000.0,
		    (double)pss / 1024.0, (long long)(t4 - t3));
		fflush(stdout);
		free(kh);
		free(wi);
	}
	free(dup);
}
END_TEST

static Suite *
fleet_suite(void)
{
	Suite *s = suite_create("emu_fleet");
	TCase *tc;

	tc = tcase_create("ssh");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, keys_identity_home);
	tcase_add_test(tc, key_filtering);
	tcase_add_test(tc, rekey_down_crash);
	tcase_add_test(tc, stop_start_delete);
	tcase_add_test(tc, restart_keeps_keys);
	tcase_add_test(tc, bad_input);
	tcase_add_test(tc, worker_namespaces);
	tcase_add_test(tc, startup_scripts);
	suite_add_tcase(s, tc);
	tc = tcase_create("pure");
	tcase_add_test(tc, hostname_form);
	tcase_add_test(tc, chips_per_host);
	suite_add_tcase(s, tc);
	if (getenv("TPUCTL_FLEET_BENCH") != NULL) {
		tc = tcase_create("bench");
		tcase_add_checked_fixture(tc, setup, teardown);
		tcase_set_timeout(tc, 900);
		tcase_add_test(tc, bench_ready);
		suite_add_tcase(s, tc);
	}
	return s;
}

int
main(void)
{
	SRunner *sr = srunner_create(fleet_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
