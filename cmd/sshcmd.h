/*
 * Shared plumbing of the commands that open SSH sessions to the workers
 * of a TPU node (ssh, scp, forward): the shared options, node resolution
 * (node cache, else nodes.get), worker selection, the user's key and its
 * propagation into the node's "ssh-keys" metadata, and host keys pinned
 * from getGuestAttributes into tpuctl's known_hosts under the alias
 * "tpu.<node id>-<worker>".
 */
#ifndef TPUCTL_SSHCMD_H
#define TPUCTL_SSHCMD_H

#include <getopt.h>
#include <stddef.h>

#include <cjson/cJSON.h>

#include "ctx.h"
#include "err.h"
#include "sshkey.h"
#include "sshpool.h"
#include "tpucmd.h"

struct sshcmd_opts {
	const char *workers;  /* --worker: "0" (default), "all", "1,3", "0-7" */
	int internal_ip;      /* --internal-ip */
	const char *key_file; /* --ssh-key-file */
	int strict_host_keys; /* --strict-host-key-checking=yes|no (1/0) */
	int connect_timeout_ms; /* --connect-timeout SECONDS; 0: default */
	int fanout;             /* --fanout N; 0: config ssh/fanout */
};

enum {
	SSHCMD_OPT_BASE = 0x200,
	SSHCMD_OPT_WORKER = SSHCMD_OPT_BASE,
	SSHCMD_OPT_INTERNAL_IP,
	SSHCMD_OPT_KEY_FILE,
	SSHCMD_OPT_STRICT,
	SSHCMD_OPT_CONNECT_TIMEOUT,
	SSHCMD_OPT_FANOUT,
};

/* getopt_long entries of the shared options. */
#define SSHCMD_LONG_OPTIONS                                                    \
	{ "worker", required_argument, NULL, SSHCMD_OPT_WORKER },              \
	    { "internal-ip", no_argument, NULL, SSHCMD_OPT_INTERNAL_IP },      \
	    { "ssh-key-file", required_argument, NULL, SSHCMD_OPT_KEY_FILE },  \
	    { "strict-host-key-checking", required_argument, NULL,             \
		    SSHCMD_OPT_STRICT },                                       \
	    { "connect-timeout", required_argument, NULL,                      \
		    SSHCMD_OPT_CONNECT_TIMEOUT },                              \
	{                                                                      \
		"fanout", required_argument, NULL, SSHCMD_OPT_FANOUT           \
	}

void sshcmd_opts_init(struct sshcmd_opts *);

/*
 * 1 when ch was one of the shared options (its value checked here: a bad
 * value is TPU_E_USAGE naming it), 0 when not ours, <0 on error.
 */
int sshcmd_opt(struct sshcmd_opts *, int ch, const char *arg, struct tpu_err *);

/*
 * Parse a worker selection against n workers: sel[0..n-1] set to 1 for
 * the chosen ones.  n < 0 checks the syntax only.  0 or TPU_E_USAGE.
 */
int sshcmd_parse_workers(
    const char *spec, int n, unsigned char *sel, struct tpu_err *);

struct sshcmd {
	struct tpucmd tc;               /* opened API client */
	cJSON *node;                    /* the node description */
	struct sshpool_target *targets; /* the selected workers */
	size_t ntargets;
	struct sshpool_opts popts; /* keyfile, timeouts, flags, fanout set */
	/* private */
	const char *name;
	struct sshcmd_opts o;
	struct sshkey key;
	char *user;
	char *khpath;
	char **hosts;     /* per target */
	char ***hostkeys; /* per target, knownhosts_lines */
	int nworkers;
	int from_cache; /* the description came from the node cache */
};

/*
 * Resolve NODE (node cache, else nodes.get), select the workers, make
 * sure the user's key exists and is in the node's metadata (patching
 * ssh-keys when not), pin host keys from guest attributes into
 * known_hosts.  Nothing printed on success.
 */
int sshcmd_prepare(struct tpu_ctx *, const char *node,
    const struct sshcmd_opts *, struct sshcmd *, struct tpu_err *);

/*
 * After a connection failure that may come from a stale cache entry:
 * drop the entry and resolve again.  1 when the endpoints changed (retry
 * once), 0 when not, <0 on error.
 */
int sshcmd_refresh(struct tpu_ctx *, struct sshcmd *, struct tpu_err *);

void sshcmd_release(struct sshcmd *);

#endif
