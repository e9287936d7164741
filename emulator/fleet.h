/*
 * The sshd worker fleet: every worker of every emulated TPU node is a real
 * OpenSSH sshd on its own loopback address, with its own ed25519 host key
 * and HOME and, as root, its own UTS and mount namespaces (hostname, /tmp,
 * /dev/accel*, /etc/hosts, a CA bundle trusting the emulator, whose
 * Google API hosts it serves on port 443).  Its login environment has no TPU_*
 * variables: a worker learns who it is from the metadata server.  Called
 * by tpu.c with emu->lock held; must not block for long (start sshd
 * processes asynchronously, report readiness through fleet_node_ready).
 */
#ifndef TPUCTL_FLEET_H
#define TPUCTL_FLEET_H

/*
 * Implementation notes other modules rely on (emulator/fleet.c):
 * - fleet_env() writes "export TPUCTL_SSH_PORT=N" (one port for every
 *   worker; real TPU VMs use 22) and "export TPUCTL_SSH_USER=name", the
 *   only account the workers accept: the one the emulator runs as (root
 *   in CI).  Only metadata ssh-keys entries "USER:type base64 [comment]"
 *   for that user are applied, fleet.key_delay_ms (default 2000) after
 *   the create/patch; entries with control characters (CR, LF, ...) or a
 *   malformed key are skipped.
 * - Options: fleet.port=N (default: a free port in 20000-32767 picked at
 *   the first start and kept in STATE/fleet/fleet.json),
 *   fleet.key_delay_ms=MS, fleet.sshd=/path/to/sshd.
 * - Worker w of a node is 127.A.B.(1 + w % 254); a node of n workers owns
 *   ceil(n / 254) consecutive /24s starting at 127.1.0.0 (first fit), kept
 *   across restarts.  Up to 4096 workers per node.
 * - fleet_init() makes the emulator a child subreaper (PR_SET_CHILD_
 *   SUBREAPER), so processes orphaned by worker sessions are re-parented
 *   to it instead of becoming zombies of a non-reaping PID 1.  The fleet
 *   reaps its own children by pid, and zombie children in another
 *   session than the emulator's (those orphans); children other modules
 *   fork in the emulator's session are left to them (never waitpid(-1)).
 * - fleet_node_workers() returns the node's worker count (filling at most
 *   max entries; hostkey is "" until generated) or -1 for an unknown node.
 *   fleet_worker_down/rekey/reboot return 0, or -1 for an unknown
 *   node/worker.
 * - A black hole (fleet_worker_blackhole) is kept in memory only, like
 *   worker-down: an emulator restart brings the worker's sshd back.
 * - fleet_node_ready() is 0 while a worker is down, and may lag an
 *   unexpected sshd death by one monitor tick (<= 200 ms).
 */

#include "emu.h"

/*
 * A worker's UTS hostname is emu_md_hostname() (emulator/md.h) of its
 * node key, node id and index: the metadata server's instance/name and
 * worker-network-endpoints name it the same way.
 */

/* TPU chips per host of an accelerator type ("v4-32": 4), -1 if unknown. */
int fleet_chips_per_host(const char *accel_type);

/*
 * As root the workers reach Google's API hosts (storage, oauth2, tpu
 * .googleapis.com) at an address of the emulator's own, port 443, over
 * TLS with a certificate from the emulator's CA.  main.c calls
 * fleet_google_serve() once every module is up (it serves the same routes
 * as the main port) and fleet_google_stop() before the modules stop.
 * 0, or -1 after a warning; a no-op without that listener.
 */
int fleet_google_serve(struct emu *);
void fleet_google_stop(struct emu *);

struct fleet_worker_info {
	char addr[64];     /* "127.3.0.5" */
	int port;          /* sshd port */
	char hostkey[512]; /* "ssh-ed25519 AAAA..." (no comment) */
};

/*
 * Create (or recreate after an emulator restart) the workers of a node:
 * addresses, host keys (kept across restarts under the state dir),
 * HOMEs; start their sshd unless stopped.  metadata is the node's
 * metadata object (for ssh-keys and the worker's metadata view).
 * Returns 0 or -1 (with a message in buf).
 */
int fleet_node_create(struct emu *, const char *node_key, const char *node_id,
    int nworkers, const char *accel_type, const cJSON *metadata, char *errbuf,
    size_t errlen);
/* 1 when every sshd of the node accepts connections. */
int fleet_node_ready(struct emu *, const char *node_key);
int fleet_node_workers(
    struct emu *, const char *node_key, struct fleet_worker_info *, int max);
/* Node metadata changed: re-apply ssh-keys after the agent delay. */
void fleet_node_metadata(
    struct emu *, const char *node_key, const cJSON *metadata);
void fleet_node_stop(struct emu *, const char *node_key); /* STOPPED */
void fleet_node_start(struct emu *, const char *node_key);
void fleet_node_delete(struct emu *, const char *node_key);
/* Faults: worker sshd down/up; new host key on one worker. */
int fleet_worker_down(struct emu *, const char *node_key, int worker, int down);
int fleet_worker_rekey(struct emu *, const char *node_key, int worker);
/* A reboot of one worker: every process of it ended, its sshd started
 * again and its startup scripts run again, as at a VM's boot. */
int fleet_worker_reboot(struct emu *, const char *node_key, int worker);

/*
 * Fault: black-hole a worker.  Its sshd is stopped (and kept stopped, as
 * with fleet_worker_down, so the node's health is TIMEOUT) and the
 * emulator binds its address:port itself:
 *   FLEET_HOLE_DROP    backlog 0 and an accept queue filled with our own
 *                      connection: SYNs go unanswered, connect() hangs
 *   FLEET_HOLE_SILENT  connections are accepted and held, what the
 *                      client sends is read and discarded, nothing is
 *                      ever written (no SSH banner)
 *   FLEET_HOLE_NONE    clear: close the hole, start the sshd again
 * fleet_worker_down (worker-up or worker-down) also closes a hole, and so
 * do node deletion and fleet_fini.  0, or -1 with errbuf set.
 */
#define FLEET_HOLE_NONE 0
#define FLEET_HOLE_DROP 1
#define FLEET_HOLE_SILENT 2
int fleet_worker_blackhole(struct emu *, const char *node_key, int worker,
    int mode, char *errbuf, size_t errlen);

/*
 * Fault: cut the worker's SSH connections.  Every per-connection sshd
 * (a child of the worker's listening sshd) and its sshd children get
 * SIGKILL, so clients see the connection drop; the listener keeps
 * accepting, and the shells and commands the sessions started are not
 * signalled (a job in its own session runs on).  0, or -1 with errbuf
 * set.
 */
int fleet_worker_sshcut(struct emu *, const char *node_key, int worker,
    char *errbuf, size_t errlen);

#endif
