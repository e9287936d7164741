/*
 * Shared plumbing of the commands that open SSH sessions to the workers
 * of a TPU node or of the slices of a queued resource (ssh, scp,
 * forward): the shared options, name resolution (node cache, else
 * nodes.get; a name that is no node is looked up as a queued resource,
 * whose node ids are cached too), slice and worker selection, the user's
 * key and its propagation into each node's "ssh-keys" metadata, and host
 * keys pinned from getGuestAttributes into tpuctl's known_hosts under
 * the alias "tpu.<node id>-<worker>".
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
	const char *nodes;      /* --node: slices of a queued resource;
	                           NULL: not given (default_nodes) */
	/* Set by the command: the slices a queued resource's name covers
	   without --node ("all" for a command or an upload; NULL: slice 0). */
	const char *default_nodes;
	/* Set by the command: why it takes one slice only (NULL: any). */
	const char *one_slice;
	/* gcloud's flags (SSHCMD_GCLOUD_OPTIONS) */
	int dry_run;      /* --dry-run: resolve, print, send nothing */
	long long expire; /* --ssh-key-expire-after/-expiration: the key
	                     line's expireOn (Unix time); 0: none */
	int expire_given; /* which of the two set it (1, 2) */
};

enum {
	SSHCMD_OPT_BASE = 0x200,
	SSHCMD_OPT_WORKER = SSHCMD_OPT_BASE,
	SSHCMD_OPT_INTERNAL_IP,
	SSHCMD_OPT_KEY_FILE,
	SSHCMD_OPT_STRICT,
	SSHCMD_OPT_CONNECT_TIMEOUT,
	SSHCMD_OPT_FANOUT,
	SSHCMD_OPT_NODE,
	SSHCMD_OPT_BATCH_SIZE,
	SSHCMD_OPT_DRY_RUN,
	SSHCMD_OPT_EXPIRE_AFTER,
	SSHCMD_OPT_EXPIRATION,
	SSHCMD_OPT_PLAIN,
	SSHCMD_OPT_SSH_FLAG,
	SSHCMD_OPT_SCP_FLAG,
	SSHCMD_OPT_FORCE_KEY,
	SSHCMD_OPT_COMPRESS,
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
	    { "node", required_argument, NULL, SSHCMD_OPT_NODE },              \
	{                                                                      \
		"fanout", required_argument, NULL, SSHCMD_OPT_FANOUT           \
	}

/*
 * gcloud's flags of "tpu-vm ssh" and "tpu-vm scp", for ssh and scp:
 * --batch-size (= --fanout; "all": every worker at once), --dry-run,
 * --ssh-key-expire-after, --ssh-key-expiration; --plain, --ssh-flag,
 * --scp-flag, --force-key-file-overwrite and --compress are refused with
 * one line saying why (sshcmd_opt).
 */
#define SSHCMD_GCLOUD_OPTIONS                                                  \
	{ "batch-size", required_argument, NULL, SSHCMD_OPT_BATCH_SIZE },      \
	    { "dry-run", no_argument, NULL, SSHCMD_OPT_DRY_RUN },              \
	    { "ssh-key-expire-after", required_argument, NULL,                 \
		    SSHCMD_OPT_EXPIRE_AFTER },                                 \
	    { "ssh-key-expiration", required_argument, NULL,                   \
		    SSHCMD_OPT_EXPIRATION },                                   \
	    { "plain", no_argument, NULL, SSHCMD_OPT_PLAIN },                  \
	    { "ssh-flag", required_argument, NULL, SSHCMD_OPT_SSH_FLAG },      \
	    { "scp-flag", required_argument, NULL, SSHCMD_OPT_SCP_FLAG },      \
	    { "force-key-file-overwrite", no_argument, NULL,                   \
		    SSHCMD_OPT_FORCE_KEY },                                    \
	{                                                                      \
		"compress", no_argument, NULL, SSHCMD_OPT_COMPRESS             \
	}
/* Their usage, after SSHCMD_USAGE_MANY in ssh's and scp's. */
#define SSHCMD_USAGE_GCLOUD                                                    \
	" [--dry-run] [--ssh-key-expire-after duration] "                      \
	"[--ssh-key-expiration time]"

/*
 * The usage of the shared options, in the one order every command (and
 * its man page SYNOPSIS) shows them: nodes and workers are the
 * selections the command accepts, fanout is SSHCMD_USAGE_FANOUT for a
 * command that fans out ("" for one worker: --fanout is refused).
 */
#define SSHCMD_USAGE(nodes, workers, fanout)                                   \
	"[--internal-ip] [--zone zone] [--node " nodes "] [--worker " workers  \
	"]" fanout " [--ssh-key-file file] "                                   \
	"[--strict-host-key-checking yes|no] [--connect-timeout seconds]"
#define SSHCMD_USAGE_FANOUT " [--fanout n]"
/* Any slices, any workers, fanned out (ssh, scp, run). */
#define SSHCMD_USAGE_MANY                                                      \
	SSHCMD_USAGE(                                                          \
	    "all|0|0,2|0-3|node-id", "0|all|1,3|0-7", SSHCMD_USAGE_FANOUT)

void sshcmd_opts_init(struct sshcmd_opts *);

/*
 * The remote user name: login (-l/--user), else config ssh/user, else
 * $USER, else the local account's name; checked as a user name.  0 and
 * *user (caller frees), or TPU_E_USAGE.
 */
int sshcmd_user(
    struct tpu_ctx *, const char *login, char **user, struct tpu_err *);

/*
 * 1 when ch was one of the shared options (its value checked here: a bad
 * value is TPU_E_USAGE naming it), 0 when not ours, <0 on error.
 */
int sshcmd_opt(struct sshcmd_opts *, int ch, const char *arg, struct tpu_err *);

/* One node: the node named, or one slice of the queued resource named. */
struct sshcmd_slice {
	char *name;     /* node id */
	int index;      /* slice index in the queued resource; 0 for a node */
	cJSON *node;    /* its description */
	int from_cache; /* the description came from the node cache */
	int nworkers;
	char *user; /* OS Login: the profile's POSIX user; NULL: sc->user */
};

/* What resolving a name gives; private to util_ssh.c. */
struct sshcmd_set {
	struct sshcmd_slice *slices; /* the selected slices, in order */
	size_t nslices;
	struct sshpool_target *targets;
	size_t ntargets;
	size_t *tslice;   /* per target: its slice in slices */
	char **hosts;     /* per target */
	char ***hostkeys; /* per target, knownhosts_lines */
	int qr;           /* the name is a queued resource */
	int from_cache;   /* something came from the node cache */
	int patched;      /* a node's ssh-keys metadata was changed */
	int accept_new;   /* some host keys are not published */
};

struct sshcmd {
	struct tpucmd tc; /* opened API client */
	/* the selected workers, slice by slice, worker by worker */
	struct sshpool_target *targets;
	size_t ntargets;
	struct sshpool_opts popts; /* keyfile, timeouts, flags, fanout set */
	int qr;                    /* the name is a queued resource (slices) */
	size_t nslices;            /* nodes (slices) the targets are on */
	int from_cache;            /* something came from the node cache */
	/* private */
	struct sshcmd_set set;
	const char *name;
	struct sshcmd_opts o;
	struct sshkey key;
	char *user;
	char *khpath;
	/* the project's enable-oslogin (Compute projects.get), asked once
	 * per invocation, only for a node that does not set the key */
	int proj_md_read;   /* 1 once asked (answered or 403/404) */
	char *proj_oslogin; /* its value; NULL: not set, or unreadable */
};

/* The node (slice) of target i. */
const struct sshcmd_slice *sshcmd_slice_of(const struct sshcmd *, size_t i);

/*
 * Resolve name: a node (node cache, else nodes.get), else a queued
 * resource (its cached node ids, else queuedResources.get) whose slices
 * --node selects (default: slice 0); --node with a node is a usage
 * error.  Select the workers of each slice, make sure the user's key
 * exists and is in each node's metadata (patching ssh-keys when not),
 * pin host keys from guest attributes into known_hosts.  Nothing printed
 * on success.
 */
int sshcmd_prepare(struct tpu_ctx *, const char *name,
    const struct sshcmd_opts *, struct sshcmd *, struct tpu_err *);

/*
 * After a connection failure that may come from a stale cache entry:
 * drop the entries and resolve again, without the cache.  1 when
 * addresses, node ids or keys changed (retry once), 0 when not, <0 on
 * error; the targets are unchanged on error, and when the nodes or
 * workers selected are no longer the same (TPU_E_PRECONDITION).  The
 * command, env and nenv the caller set on each target are kept.
 */
int sshcmd_refresh(struct tpu_ctx *, struct sshcmd *, struct tpu_err *);

/*
 * --dry-run: print on stdout, one line per selected worker, what would
 * run there and where: "[w0] USER@ADDRESS:PORT: what", then, when wdir
 * is not NULL, " to WDIR/w0" (a download's directory per worker).
 * Nothing is sent.
 */
void sshcmd_print_dry_run(
    const struct sshcmd *, const char *what, const char *wdir);

void sshcmd_release(struct sshcmd *);

#endif
