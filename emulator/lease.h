/*
 * Machine-wide leases of the fleet's loopback subnets (emulator/lease.c).
 * Two emulators in one network namespace (two users, or a test beside
 * another) must not hand out the same worker addresses: each would bind
 * the other's metadata listeners and sshds.  A subnet is leased by an
 * exclusive flock(2) on its own file in a directory shared by every
 * emulator of the network namespace, held for the node's lifetime and
 * released by the kernel when the emulator dies, however it dies.
 */
#ifndef TPUCTL_EMU_LEASE_H
#define TPUCTL_EMU_LEASE_H

#include <stddef.h>

/* Leased subnets [first, first + count); fds are the held locks. */
struct emu_lease {
	int first;
	int count;
	int *fds;
};

/*
 * The lease directory of this network namespace,
 * /tmp/tpuctl-emu-leases/net-<inode of /proc/self/ns/net> (both levels
 * mode 1777, so every user's emulator can add files), created when
 * missing.  NULL with errbuf set when it cannot be used.
 */
char *emu_lease_dir(char *errbuf, size_t errlen);

/*
 * Lease the count subnets from first in dir.  0 when all are held now by
 * l; -1 when one is held elsewhere (*busy its number, errno EWOULDBLOCK)
 * or a file cannot be opened (*busy -1, errno set); nothing held then.
 */
int emu_lease_take(
    const char *dir, int first, int count, struct emu_lease *l, int *busy);

/* Give the leases back (l may be zeroed or released already). */
void emu_lease_release(struct emu_lease *l);

#endif
