/*
 * The sshd worker fleet: every worker of every emulated TPU node is a real
 * OpenSSH sshd on its own loopback address, with its own ed25519 host key,
 * HOME and identity (TPU_WORKER_ID, TPU_WORKER_HOSTNAMES).  Called by
 * tpu.c with emu->lock held; must not block for long (start sshd
 * processes asynchronously, report readiness through fleet_node_ready).
 */
#ifndef TPUCTL_FLEET_H
#define TPUCTL_FLEET_H

#include "emu.h"

struct fleet_worker_info {
	char addr[64];		/* "127.3.0.5" */
	int port;		/* sshd port */
	char hostkey[512];	/* "ssh-ed25519 AAAA..." (no comment) */
};

/*
 * Create (or recreate after an emulator restart) the workers of a node:
 * addresses, host keys (kept across restarts under the state dir),
 * HOMEs; start their sshd unless stopped.  metadata is the node's
 * metadata object (for ssh-keys and the worker's metadata view).
 * Returns 0 or -1 (with a message in buf).
 */
int fleet_node_create(struct emu *, const char *node_key, const char *node_id,
    int nworkers, const char *accel_type, const cJSON *metadata,
    char *errbuf, size_t errlen);
/* 1 when every sshd of the node accepts connections. */
int fleet_node_ready(struct emu *, const char *node_key);
int fleet_node_workers(struct emu *, const char *node_key,
    struct fleet_worker_info *, int max);
/* Node metadata changed: re-apply ssh-keys after the agent delay. */
void fleet_node_metadata(struct emu *, const char *node_key,
    const cJSON *metadata);
void fleet_node_stop(struct emu *, const char *node_key);	/* STOPPED */
void fleet_node_start(struct emu *, const char *node_key);
void fleet_node_delete(struct emu *, const char *node_key);
/* Faults: worker sshd down/up; new host key on one worker. */
int fleet_worker_down(struct emu *, const char *node_key, int worker, int down);
int fleet_worker_rekey(struct emu *, const char *node_key, int worker);

#endif
