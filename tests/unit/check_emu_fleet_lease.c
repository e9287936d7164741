/*
 * Unit tests for the machine-wide subnet leases (emulator/lease.c) and
 * their use by the fleet (emulator/fleet.c): a lease is exclusive across
 * processes and within one, dies with its holder, a range stops at the
 * first held subnet; the fleet skips subnets another emulator holds and
 * a restart finding its persisted subnet held moves the node, keys kept.
 */
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <check.h>

#include "fleet.h"
#include "lease.h"
#include "util.h"
#include "xmalloc.h"

#define NODE "projects/p1/locations/us-central2-b/nodes/n1"
#define NODE_ID "1234567890"

static char tmpdir[256];
static char *opts[] = { (char *)"fleet.key_delay_ms=100",
	(char *)"fleet.google_tls=0", NULL };
static struct emu emu;

static void
mk_tmp(void)
{
	snprintf(tmpdir, sizeof(tmpdir), "/tmp/check_emu_lease.XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(tmpdir));
}

static void
rm_tmp(void)
{
	char cmd[300];
	pid_t pid;
	int st;

	snprintf(cmd, sizeof(cmd), "%s", tmpdir);
	pid = fork();
	ck_assert_int_ne(pid, -1);
	if (pid == 0) {
		execlp("rm", "rm", "-rf", cmd, (char *)NULL);
		_exit(127);
	}
	waitpid(pid, &st, 0);
}

/* A child that leases [first, first + count) and waits; its pid. */
static pid_t
holder(const char *dir, int first, int count)
{
	int pfd[2];
	char c = 0;
	pid_t pid;

	ck_assert_int_eq(pipe(pfd), 0);
	pid = fork();
	ck_assert_int_ne(pid, -1);
	if (pid == 0) {
		struct emu_lease l;
		int busy;

		close(pfd[0]);
		c = emu_lease_take(dir, first, count, &l, &busy) == 0 ? 'y'
		                                                      : 'n';
		if (write(pfd[1], &c, 1) != 1)
			_exit(1);
		pause();
		_exit(0);
	}
	close(pfd[1]);
	ck_assert_int_eq(read(pfd[0], &c, 1), 1);
	close(pfd[0]);
	ck_assert_int_eq(c, 'y');
	return pid;
}

static void
reap(pid_t pid)
{
	int st;

	kill(pid, SIGKILL);
	ck_assert_int_eq(waitpid(pid, &st, 0), pid);
}

START_TEST(lease_exclusive)
{
	struct emu_lease a, b;
	int busy;
	pid_t pid;

	mk_tmp();
	ck_assert_int_eq(emu_lease_take(tmpdir, 3, 2, &a, &busy), 0);
	ck_assert_int_eq(a.first, 3);
	ck_assert_int_eq(a.count, 2);
	/* Taken in this process: a second open file is refused too. */
	ck_assert_int_eq(emu_lease_take(tmpdir, 4, 1, &b, &busy), -1);
	ck_assert_int_eq(busy, 4);
	ck_assert_int_eq(b.count, 0);
	/* A range stops at the first held subnet, nothing kept. */
	ck_assert_int_eq(emu_lease_take(tmpdir, 1, 4, &b, &busy), -1);
	ck_assert_int_eq(busy, 3);
	ck_assert_int_eq(emu_lease_take(tmpdir, 1, 2, &b, &busy), 0);
	emu_lease_release(&b);
	emu_lease_release(&a);
	emu_lease_release(&a); /* twice is harmless */
	ck_assert_int_eq(emu_lease_take(tmpdir, 3, 2, &a, &busy), 0);
	emu_lease_release(&a);

	/* Another process: held while it lives, free once it is killed. */
	pid = holder(tmpdir, 7, 1);
	ck_assert_int_eq(emu_lease_take(tmpdir, 6, 3, &a, &busy), -1);
	ck_assert_int_eq(busy, 7);
	reap(pid);
	ck_assert_int_eq(emu_lease_take(tmpdir, 6, 3, &a, &busy), 0);
	emu_lease_release(&a);

	/* A directory we cannot use: -1, busy -1, errno set. */
	ck_assert_int_eq(
	    emu_lease_take("/nonexistent/leases", 0, 1, &a, &busy), -1);
	ck_assert_int_eq(busy, -1);
	ck_assert_int_eq(errno, ENOENT);
	rm_tmp();
}
END_TEST

START_TEST(lease_dir_shared)
{
	char err[256] = "", want[128];
	struct stat st, ns;
	char *dir;

	dir = emu_lease_dir(err, sizeof(err));
	ck_assert_msg(dir != NULL, "%s", err);
	ck_assert_int_eq(stat("/proc/self/ns/net", &ns), 0);
	snprintf(want, sizeof(want), "/tmp/tpuctl-emu-leases/net-%llu",
	    (unsigned long long)ns.st_ino);
	ck_assert_str_eq(dir, want);
	ck_assert_int_eq(stat(dir, &st), 0);
	ck_assert_int_eq(st.st_mode & 07777, 01777);
	ck_assert_int_eq(stat("/tmp/tpuctl-emu-leases", &st), 0);
	ck_assert_int_eq(st.st_mode & 07777, 01777);
	free(dir);
}
END_TEST

static void
emu_setup(void)
{
	memset(&emu, 0, sizeof(emu));
	pthread_mutex_init(&emu.lock, NULL);
	emu.state_dir = tmpdir;
	emu.base_url = (char *)"http://127.0.0.1:9";
	emu.opts = opts;
	ck_assert_int_eq(fleet_init(&emu), 0);
}

static int
create(const char *key, const char *id, int n)
{
	char err[256] = "";
	int rc;

	pthread_mutex_lock(&emu.lock);
	rc = fleet_node_create(
	    &emu, key, id, n, "v4-16", NULL, err, sizeof(err));
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

/* The subnet of a worker address 127.A.B.x. */
static int
subnet_of(const char *addr)
{
	int a, b, c;

	ck_assert_int_eq(sscanf(addr, "127.%d.%d.%d", &a, &b, &c), 3);
	return (a - 1) * 256 + b;
}

static int
is_dir(int s, const char *sub)
{
	char path[512];
	struct stat st;

	snprintf(path, sizeof(path), "%s/fleet/n%d%s", tmpdir, s, sub);
	return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

START_TEST(fleet_moves_held_subnet)
{
	struct fleet_worker_info wi[2], wi2[2], wo[1];
	struct emu_lease l;
	char err[256];
	char *dir;
	int s0, s1, busy;
	pid_t pid;

	dir = emu_lease_dir(err, sizeof(err));
	ck_assert_ptr_nonnull(dir);
	mk_tmp();
	emu_setup();
	ck_assert_int_eq(create(NODE, NODE_ID, 2), 0);
	ck_assert(wait_ready(NODE, 30000));
	ck_assert_int_eq(fleet_node_workers(&emu, NODE, wi, 2), 2);
	s0 = subnet_of(wi[0].addr);
	/* Our node's subnet is leased machine-wide. */
	ck_assert_int_eq(emu_lease_take(dir, s0, 1, &l, &busy), -1);
	ck_assert_int_eq(busy, s0);
	fleet_fini(&emu);

	/* Another emulator takes it while we are down. */
	pid = holder(dir, s0, 1);
	emu_setup();
	ck_assert_int_eq(fleet_node_workers(&emu, NODE, wi2, 2), 2);
	s1 = subnet_of(wi2[0].addr);
	ck_assert_int_ne(s1, s0);
	/* Same host keys, the directory moved with the node. */
	ck_assert_str_eq(wi2[0].hostkey, wi[0].hostkey);
	ck_assert_str_eq(wi2[1].hostkey, wi[1].hostkey);
	ck_assert(is_dir(s1, "/w1/home"));
	ck_assert(!is_dir(s0, ""));
	ck_assert_int_eq(emu_lease_take(dir, s1, 1, &l, &busy), -1);
	ck_assert_int_eq(busy, s1);
	/* It runs on the new addresses. */
	ck_assert_int_eq(create(NODE, NODE_ID, 2), 0);
	ck_assert(wait_ready(NODE, 30000));
	/* A new node skips the held subnet as well. */
	ck_assert_int_eq(create("projects/p1/locations/z/nodes/n2", "7", 1), 0);
	ck_assert_int_eq(
	    fleet_node_workers(&emu, "projects/p1/locations/z/nodes/n2", wo, 1),
	    1);
	ck_assert_int_ne(subnet_of(wo[0].addr), s0);
	ck_assert_int_ne(subnet_of(wo[0].addr), s1);
	fleet_fini(&emu);
	/* Gone with the emulator: leasable again. */
	ck_assert_int_eq(emu_lease_take(dir, s1, 1, &l, &busy), 0);
	emu_lease_release(&l);
	reap(pid);
	rm_tmp();
	free(dir);
}
END_TEST

static Suite *
lease_suite(void)
{
	Suite *s = suite_create("emu_fleet_lease");
	TCase *tc;

	tc = tcase_create("lease");
	tcase_add_test(tc, lease_exclusive);
	tcase_add_test(tc, lease_dir_shared);
	suite_add_tcase(s, tc);
	tc = tcase_create("fleet");
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, fleet_moves_held_subnet);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	SRunner *sr = srunner_create(lease_suite());
	int nf;

	srunner_run_all(sr, CK_NORMAL);
	nf = srunner_ntests_failed(sr);
	srunner_free(sr);
	return nf == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
