/*
 * The shared plumbing of ssh, scp and forward (cmd/sshcmd.h).
 */
#include <pwd.h>
#include <time.h>
#include <strings.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "auth.h"
#include "compute.h"
#include "buf.h"
#include "catalog.h"
#include "config.h"
#include "endpoint.h"
#include "knownhosts.h"
#include "log.h"
#include "nodecache.h"
#include "oslogin.h"
#include "retry.h"
#include "sshcmd.h"
#include "sshsel.h"
#include "util.h"
#include "xmalloc.h"

/* How long missing host keys (a worker still booting) are waited for. */
#define HOSTKEY_WAIT_MS 30000

void
sshcmd_opts_init(struct sshcmd_opts *o)
{
	memset(o, 0, sizeof *o);
	o->workers = "0";
	o->strict_host_keys = 1;
}

/* --ssh-key-expire-after DURATION, --ssh-key-expiration TIME: one only. */
static int
expire_opt(struct sshcmd_opts *o, int ch, const char *arg, struct tpu_err *err)
{
	const char *flag = ch == SSHCMD_OPT_EXPIRE_AFTER
	                       ? "--ssh-key-expire-after"
	                       : "--ssh-key-expiration";
	int which = ch == SSHCMD_OPT_EXPIRE_AFTER ? 1 : 2;
	long long secs;
	time_t t;
	int rc;

	if (o->expire_given != 0 && o->expire_given != which)
		return tpu_error(err, TPU_E_USAGE,
		    "give --ssh-key-expire-after or --ssh-key-expiration, not "
		    "both");
	o->expire_given = which;
	if (which == 1) {
		if ((rc = tpu_parse_duration(flag, arg, &secs, err)) != 0)
			return rc;
		if (secs <= 0)
			return tpu_error(err, TPU_E_USAGE,
			    "invalid %s '%s': must be more than 0", flag, arg);
		o->expire = (long long)time(NULL) + secs;
		return 1;
	}
	if (tpu_parse_rfc3339(arg, &t) != 0)
		return tpu_error(err, TPU_E_USAGE,
		    "invalid %s '%s': expected an RFC 3339 time such as "
		    "2026-08-29T18:52:51Z",
		    flag, arg);
	if ((long long)t <= (long long)time(NULL))
		return tpu_error(err, TPU_E_USAGE,
		    "invalid %s '%s': the time is past", flag, arg);
	o->expire = (long long)t;
	return 1;
}

int
sshcmd_opt(struct sshcmd_opts *o, int ch, const char *arg, struct tpu_err *err)
{
	const char *es = NULL;
	long long v;

	switch (ch) {
	case SSHCMD_OPT_WORKER:
		if (sshsel_workers(arg, -1, NULL, err) != 0)
			return TPU_E_USAGE;
		o->workers = arg;
		return 1;
	case SSHCMD_OPT_NODE:
		if (sshsel_nodes(arg, NULL, -1, NULL, err) != 0)
			return TPU_E_USAGE;
		o->nodes = arg;
		return 1;
	case SSHCMD_OPT_INTERNAL_IP:
		o->internal_ip = 1;
		return 1;
	case SSHCMD_OPT_KEY_FILE:
		if (*arg == '\0')
			return tpu_error(
			    err, TPU_E_USAGE, "--ssh-key-file: empty path");
		o->key_file = arg;
		return 1;
	case SSHCMD_OPT_STRICT:
		if (strcmp(arg, "yes") == 0)
			o->strict_host_keys = 1;
		else if (strcmp(arg, "no") == 0)
			o->strict_host_keys = 0;
		else
			return tpu_error(err, TPU_E_USAGE,
			    "--strict-host-key-checking '%s': expected yes "
			    "or no",
			    arg);
		return 1;
	case SSHCMD_OPT_CONNECT_TIMEOUT:
		v = tpu_strtonum(arg, 1, 3600, &es);
		if (es != NULL)
			return tpu_error(err, TPU_E_USAGE,
			    "--connect-timeout '%s': %s (seconds, 1-3600)", arg,
			    es);
		o->connect_timeout_ms = (int)v * 1000;
		return 1;
	case SSHCMD_OPT_FANOUT:
		v = tpu_strtonum(arg, 1, 1024, &es);
		if (es != NULL)
			return tpu_error(err, TPU_E_USAGE,
			    "--fanout '%s': %s (1-1024)", arg, es);
		o->fanout = (int)v;
		return 1;
	case SSHCMD_OPT_BATCH_SIZE: /* gcloud's name of --fanout */
		if (strcmp(arg, "all") == 0) {
			o->fanout = SSHSEL_MAX;
			return 1;
		}
		v = tpu_strtonum(arg, 1, SSHSEL_MAX, &es);
		if (es != NULL)
			return tpu_error(err, TPU_E_USAGE,
			    "--batch-size '%s': %s (1-%d, or all)", arg, es,
			    SSHSEL_MAX);
		o->fanout = (int)v;
		return 1;
	case SSHCMD_OPT_DRY_RUN:
		o->dry_run = 1;
		return 1;
	case SSHCMD_OPT_EXPIRE_AFTER:
	case SSHCMD_OPT_EXPIRATION:
		return expire_opt(o, ch, arg, err);
	case SSHCMD_OPT_PLAIN:
		return tpu_error(err, TPU_E_USAGE,
		    "--plain: tpuctl speaks SSH itself (no ssh(1) or scp(1) "
		    "run), so there are no added flags to suppress");
	case SSHCMD_OPT_SSH_FLAG:
	case SSHCMD_OPT_SCP_FLAG:
		if (strncmp(arg, "-L", 2) == 0 || strncmp(arg, "-R", 2) == 0 ||
		    strncmp(arg, "-D", 2) == 0)
			return tpu_error(err, TPU_E_USAGE,
			    "%s=%s: for port forwarding use 'tpuctl forward "
			    "NODE PORT' (tpuctl-forward(1))",
			    ch == SSHCMD_OPT_SSH_FLAG ? "--ssh-flag"
			                              : "--scp-flag",
			    arg);
		return tpu_error(err, TPU_E_USAGE,
		    "%s=%s: tpuctl runs no ssh(1) or scp(1) to pass flags to; "
		    "its own options are in tpuctl-ssh(1)",
		    ch == SSHCMD_OPT_SSH_FLAG ? "--ssh-flag" : "--scp-flag",
		    arg);
	case SSHCMD_OPT_FORCE_KEY:
		return tpu_error(err, TPU_E_USAGE,
		    "--force-key-file-overwrite: tpuctl never overwrites a key "
		    "file; remove the broken one (or give --ssh-key-file)");
	case SSHCMD_OPT_COMPRESS:
		return tpu_error(err, TPU_E_USAGE,
		    "--compress: tpuctl's SFTP transfers are not compressed");
	}
	return 0;
}

static const char *
jstr(const cJSON *o, const char *k)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);

	return cJSON_IsString(v) ? v->valuestring : NULL;
}

/* The metadata value of key, or NULL. */
static const char *
md_get(const cJSON *node, const char *key)
{
	return jstr(cJSON_GetObjectItemCaseSensitive(node, "metadata"), key);
}

const struct sshcmd_slice *
sshcmd_slice_of(const struct sshcmd *sc, size_t i)
{
	return &sc->set.slices[sc->set.tslice[i]];
}

static void
set_free(struct sshcmd_set *set)
{
	size_t i;

	for (i = 0; i < set->ntargets; i++) {
		free(set->hosts[i]);
		knownhosts_lines_free(set->hostkeys[i]);
	}
	for (i = 0; i < set->nslices; i++) {
		free(set->slices[i].name);
		free(set->slices[i].user);
		cJSON_Delete(set->slices[i].node);
	}
	free(set->slices);
	free(set->targets);
	free(set->tslice);
	free(set->hosts);
	free(set->hostkeys);
	memset(set, 0, sizeof *set);
}

static struct sshcmd_slice *
set_add_slice(struct sshcmd_set *set, const char *name, int index)
{
	struct sshcmd_slice *sl;

	set->slices =
	    xreallocarray(set->slices, set->nslices + 1, sizeof *set->slices);
	sl = &set->slices[set->nslices++];
	memset(sl, 0, sizeof *sl);
	sl->name = xstrdup(name);
	sl->index = index;
	return sl;
}

/* The description of a slice's node: node cache (use_cache), else GET. */
static int
get_node(struct sshcmd *sc, struct sshcmd_slice *sl, int use_cache,
    struct tpu_err *err)
{
	char *path;
	int rc;

	cJSON_Delete(sl->node);
	sl->node = NULL;
	sl->from_cache = 0;
	if (use_cache && nodecache_get(sc->tc.project, sc->tc.zone, sl->name,
	                     NODECACHE_TTL_MS, &sl->node) == 0) {
		sl->from_cache = 1;
		return 0;
	}
	path = tpuapi_node_path(&sc->tc.api, sc->tc.zone, sl->name);
	rc = tpuapi_call(
	    &sc->tc.api, "GET", path, NULL, NULL, 1, &sl->node, err);
	free(path);
	if (rc == TPU_E_NOTFOUND) {
		nodecache_drop(sc->tc.project, sc->tc.zone, sl->name);
		return tpu_error(err, rc,
		    "node '%s' not found in zone %s of project %s", sl->name,
		    sc->tc.zone, sc->tc.project);
	}
	if (rc != 0)
		return rc;
	if (sl->node == NULL)
		return tpu_error(err, TPU_E_API, "empty reply to nodes.get");
	nodecache_put(sc->tc.project, sc->tc.zone, sl->name, sl->node);
	return 0;
}

/* The PATCHes propagate_key sends for one key before it gives up. */
#define PROPAGATE_ATTEMPTS 8

/*
 * Make sure the key's entry is in the node's ssh-keys metadata.
 *
 * The TPU API has no metadata fingerprint (unlike Compute Engine): a
 * nodes.patch replaces the whole metadata, and two clients that read the
 * node before either wrote both get 200, the later one dropping the
 * other's line.  So after our operation completes, the node is read again
 * and our line must be there; if a concurrent writer lost it, merge into
 * the fresh metadata and PATCH again, after a jittered backoff so the
 * writers spread out (PROPAGATE_ATTEMPTS in all).  When the line is
 * there but others wrote after us, the node is read once more after a
 * backoff: a writer that read before our PATCH may PATCH late.  A 409 (a
 * server that does check) is handled the same way.
 */
static int
propagate_key(struct tpu_ctx *ctx, struct sshcmd *sc, struct sshcmd_slice *sl,
    int *patched, struct tpu_err *err)
{
	char *entry = NULL, *path = NULL, *val = NULL;
	cJSON *body = NULL, *md, *op = NULL, *res = NULL, *it;
	struct tpucmd_wait w;
	struct retry_policy pol;
	struct retry_state rs;
	int rc, attempt, recheck = 0, rechecked = 0;

	*patched = 0;
	if ((rc = sshkey_metadata_entry_expiring(
	         &sc->key, sc->user, sc->o.expire, &entry, err)) != 0)
		return rc;
	retry_policy_default(&pol);
	pol.initial_ms = 250;
	pol.cap_ms = 2000;
	retry_state_init(&rs, &pol, 0, tpu_now_ms());
	for (attempt = 0; attempt < PROPAGATE_ATTEMPTS; attempt++) {
		/* A retry: spread out from the other writers, then merge
		 * into metadata read after the wait, not before it. */
		if (attempt > 0) {
			int64_t ms =
			    retry_backoff_ms(&pol, attempt - 1, &rs.rng);

			if ((rc = retry_sleep(ms, err)) != 0 ||
			    (rc = get_node(sc, sl, 0, err)) != 0)
				goto out;
			if (recheck &&
			    sshsel_keys_has(
			        md_get(sl->node, "ssh-keys"), entry)) {
				rc = 0;
				goto out;
			}
			recheck = 0;
		}
		free(val);
		if (sc->o.expire > 0) {
			/* the key's other lines (one without expiry, an
			 * older expiry) go: this line alone says how long */
			char *rest = sshsel_keys_drop(
			    md_get(sl->node, "ssh-keys"), entry);

			val = sshsel_keys_add(rest, entry);
			free(rest);
		} else
			val = sshsel_keys_add(
			    md_get(sl->node, "ssh-keys"), entry);
		if (val == NULL) {
			rc = 0;
			goto out;
		}
		/* Keep every other metadata entry and ssh-keys line. */
		body = cJSON_CreateObject();
		md = cJSON_AddObjectToObject(body, "metadata");
		cJSON_ArrayForEach(
		    it, cJSON_GetObjectItemCaseSensitive(sl->node, "metadata"))
		{
			if (strcmp(it->string, "ssh-keys") != 0 &&
			    cJSON_IsString(it))
				cJSON_AddStringToObject(
				    md, it->string, it->valuestring);
		}
		cJSON_AddStringToObject(md, "ssh-keys", val);
		free(path);
		path = tpuapi_node_path(&sc->tc.api, sc->tc.zone, sl->name);
		log_info("adding the key of %s to the metadata of node '%s'",
		    sc->user, sl->name);
		cJSON_Delete(op);
		op = NULL;
		rc = tpuapi_call(&sc->tc.api, "PATCH", path,
		    "updateMask=metadata", body, 0, &op, err);
		cJSON_Delete(body);
		body = NULL;
		if (rc == TPU_E_CONFLICT) {
			/* Someone else changed the node: re-read (at the top of
			 * the loop), merge again. */
			tpu_err_init(err);
			continue;
		}
		if (rc != 0)
			goto out;
		if (op != NULL && jstr(op, "name") != NULL &&
		    !cJSON_IsTrue(
		        cJSON_GetObjectItemCaseSensitive(op, "done"))) {
			tpucmd_wait_opts(ctx, &sc->tc, &w, 0,
			    "adding the SSH key to the node metadata");
			cJSON_Delete(res);
			res = NULL;
			rc = tpuapi_op_wait(
			    &sc->tc.api, jstr(op, "name"), &w.api, &res, err);
			if (rc != 0)
				goto out;
		}
		*patched = 1;
		/* Read the node back (and cache it): is our line there? */
		if ((rc = get_node(sc, sl, 0, err)) != 0)
			goto out;
		if (sshsel_keys_has(md_get(sl->node, "ssh-keys"), entry)) {
			const char *now = md_get(sl->node, "ssh-keys");

			/* Others wrote after us: one of them may still be
			 * about to PATCH from a read older than ours, so look
			 * once more after a backoff. */
			if (rechecked || strcmp(now, val) == 0 ||
			    attempt + 1 == PROPAGATE_ATTEMPTS) {
				rc = 0;
				goto out;
			}
			recheck = rechecked = 1;
			continue;
		}
		log_info("node '%s': a concurrent metadata update dropped the "
		         "key of %s; adding it again",
		    sl->name, sc->user);
	}
	rc = tpu_error(err, TPU_E_CONFLICT,
	    "node '%s': the metadata kept changing while adding the SSH key "
	    "(%d attempts)",
	    sl->name, PROPAGATE_ATTEMPTS);
out:
	cJSON_Delete(op);
	cJSON_Delete(res);
	cJSON_Delete(body);
	free(entry);
	free(path);
	free(val);
	return rc;
}

/*
 * Do the selected workers of a cached slice all have keys tpuctl pinned
 * from guest attributes?  A line someone else appended for an alias is
 * not one (knownhosts_pinned): it never spares the guest attributes read.
 */
static int
all_pinned(
    struct knownhosts *kh, const char *id, const unsigned char *sel, int n)
{
	struct tpu_err e;
	char *alias = NULL;
	int i, ok = 1;

	for (i = 0; i < n && ok; i++) {
		if (!sel[i])
			continue;
		free(alias);
		alias = NULL;
		if (knownhosts_alias(id, i, &alias, &e) != 0 ||
		    knownhosts_pinned(kh, alias) == 0)
			ok = 0;
	}
	free(alias);
	return ok;
}

/*
 * Pin the host keys of one guest attributes reply into kh for the
 * selected workers; *missing counts the workers that published none.
 */
static int
pin_reply(struct knownhosts *kh, const char *id, const cJSON *ga,
    const unsigned char *sel, int n, int *missing, struct tpu_err *err)
{
	const cJSON *arr =
	    cJSON_GetObjectItemCaseSensitive(ga, "guestAttributes");
	char *alias = NULL;
	int i, rc = 0;

	*missing = 0;
	for (i = 0; i < n && rc == 0; i++) {
		const cJSON *items, *item;
		char *lines[16];
		size_t k = 0, j;

		if (!sel[i])
			continue;
		items = cJSON_GetObjectItemCaseSensitive(
		    cJSON_GetObjectItemCaseSensitive(
		        cJSON_GetArrayItem(arr, i), "queryValue"),
		    "items");
		cJSON_ArrayForEach(item, items)
		{
			const char *ns = jstr(item, "namespace");
			const char *k2 = jstr(item, "key");
			const char *v = jstr(item, "value");

			if (ns == NULL || strcmp(ns, "hostkeys") != 0 ||
			    k2 == NULL || v == NULL || k == 16)
				continue;
			lines[k++] = tpu_startswith(v, k2)
			                 ? xstrdup(v)
			                 : xasprintf("%s %s", k2, v);
		}
		if (k == 0) {
			(*missing)++;
			continue;
		}
		free(alias);
		alias = NULL;
		rc = knownhosts_alias(id, i, &alias, err);
		if (rc == 0)
			rc = knownhosts_replace(
			    kh, alias, (const char *const *)lines, k, err);
		for (j = 0; j < k; j++)
			free(lines[j]);
	}
	free(alias);
	return rc;
}

/*
 * Pin the host keys of the selected workers (sel) of a slice into
 * known_hosts and give them to its targets (set->targets[first..]).
 */
static int
pin_hostkeys(struct sshcmd *sc, struct sshcmd_set *set,
    const struct sshcmd_slice *sl, const unsigned char *sel, size_t first,
    struct tpu_err *err)
{
	struct knownhosts kh;
	const char *id = jstr(sl->node, "id");
	char *path = NULL, *alias = NULL;
	cJSON *body = NULL, *ga = NULL;
	int64_t deadline = tpu_now_ms() + HOSTKEY_WAIT_MS;
	int rc, missing = 0;
	size_t i;

	if (id == NULL)
		return tpu_error(
		    err, TPU_E_API, "node '%s' has no id", sl->name);
	knownhosts_init(&kh, sc->khpath);
	if ((rc = knownhosts_load(&kh, err)) != 0)
		goto out;
	/*
	 * A cached description whose workers all have pinned keys needs no
	 * call: if the node changed since, the host-key check fails and the
	 * caller refreshes (sshcmd_refresh), never connects unverified.
	 */
	if (sl->from_cache && all_pinned(&kh, id, sel, sl->nworkers))
		goto pinned;
	alias = tpuapi_node_path(&sc->tc.api, sc->tc.zone, sl->name);
	path = xasprintf("%s:getGuestAttributes", alias);
	free(alias);
	alias = NULL;
	for (;;) {
		body = cJSON_CreateObject();
		cJSON_AddStringToObject(body, "queryPath", "hostkeys/");
		cJSON_Delete(ga);
		ga = NULL;
		rc = tpuapi_call(
		    &sc->tc.api, "POST", path, NULL, body, 1, &ga, err);
		cJSON_Delete(body);
		body = NULL;
		if (rc != 0) {
			/* fails closed, whatever --strict-host-key-checking */
			tpu_error_prefix(err,
			    "node '%s': reading its host keys "
			    "(getGuestAttributes)",
			    sl->name);
			goto out;
		}
		if ((rc = pin_reply(
		         &kh, id, ga, sel, sl->nworkers, &missing, err)) != 0)
			goto out;
		/* with --strict-host-key-checking=no nothing is worth
		   waiting for: an unpublished key is accepted anyway */
		if (missing == 0 || !sc->o.strict_host_keys ||
		    tpu_now_ms() >= deadline)
			break;
		log_info("waiting for the host keys of %d worker%s of node "
		         "'%s'",
		    missing, missing == 1 ? "" : "s", sl->name);
		if (tpu_sleep_ms(2000) != 0) {
			rc = tpu_error(err, TPU_E_INTERRUPTED, "interrupted");
			goto out;
		}
	}
	if (missing > 0) {
		if (sc->o.strict_host_keys) {
			rc = tpu_error(err, TPU_E_UNREACHABLE,
			    "node '%s': %d worker%s published no host key in "
			    "%d s (guest attributes hostkeys/): refusing to "
			    "connect; --strict-host-key-checking=no accepts "
			    "unverified keys",
			    sl->name, missing, missing == 1 ? "" : "s",
			    HOSTKEY_WAIT_MS / 1000);
			goto out;
		}
		log_warn("%d worker%s of node '%s' published no host key: "
		         "connecting without host key verification",
		    missing, missing == 1 ? "" : "s", sl->name);
		set->accept_new = 1;
	}
	if ((rc = knownhosts_save(&kh, err)) != 0)
		goto out;
pinned:
	/* The targets get the pinned lines. */
	for (i = first; i < set->ntargets; i++) {
		size_t n = 0;

		free(alias);
		alias = NULL;
		if ((rc = knownhosts_alias(
		         id, set->targets[i].worker, &alias, err)) != 0)
			goto out;
		set->hostkeys[i] = knownhosts_lines(&kh, alias, &n);
		set->targets[i].hostkeys =
		    (const char *const *)set->hostkeys[i];
		set->targets[i].nhostkeys = n;
	}
out:
	cJSON_Delete(ga);
	cJSON_Delete(body);
	free(path);
	free(alias);
	knownhosts_release(&kh);
	return rc;
}

/*
 * Append the selected workers of slice number k to the targets; *selp
 * gets the selection (nworkers bytes; the caller frees it).
 */
static int
add_targets(struct sshcmd *sc, struct sshcmd_set *set, size_t k,
    unsigned char **selp, struct tpu_err *err)
{
	struct sshcmd_slice *sl = &set->slices[k];
	const cJSON *eps =
	    cJSON_GetObjectItemCaseSensitive(sl->node, "networkEndpoints");
	const char *state = jstr(sl->node, "state");
	unsigned char *sel;
	size_t nt;
	int n = cJSON_GetArraySize(eps), i, rc;

	if ((rc = tpucmd_node_ready(sl->name, state, err)) != 0)
		return rc;
	if (n <= 0)
		return tpu_error(err, TPU_E_PRECONDITION,
		    "node '%s' has no network endpoints yet", sl->name);
	if (n > SSHSEL_MAX)
		return tpu_error(err, TPU_E_API,
		    "node '%s' has %d network endpoints (at most %d)", sl->name,
		    n, SSHSEL_MAX);
	sel = xcalloc((size_t)n, 1);
	if ((rc = sshsel_workers(sc->o.workers, n, sel, err)) != 0) {
		free(sel);
		return rc;
	}
	sl->nworkers = n;
	for (nt = set->ntargets, i = 0; i < n; i++)
		nt += sel[i];
	set->targets = xreallocarray(set->targets, nt, sizeof *set->targets);
	set->tslice = xreallocarray(set->tslice, nt, sizeof *set->tslice);
	set->hosts = xreallocarray(set->hosts, nt, sizeof *set->hosts);
	set->hostkeys = xreallocarray(set->hostkeys, nt, sizeof *set->hostkeys);
	for (i = 0; i < n; i++) {
		const cJSON *ep = cJSON_GetArrayItem(eps, i);
		const char *ip = jstr(ep, "ipAddress");
		const char *ext =
		    jstr(cJSON_GetObjectItemCaseSensitive(ep, "accessConfig"),
		        "externalIp");
		struct sshpool_target *t;

		if (!sel[i])
			continue;
		if (!sc->o.internal_ip && ext != NULL && *ext != '\0')
			ip = ext;
		if (ip == NULL || *ip == '\0') {
			free(sel);
			return tpu_error(err, TPU_E_PRECONDITION,
			    "node '%s': worker %d has no IP address", sl->name,
			    i);
		}
		t = &set->targets[set->ntargets];
		memset(t, 0, sizeof *t);
		set->hosts[set->ntargets] = xstrdup(ip);
		set->hostkeys[set->ntargets] = NULL;
		set->tslice[set->ntargets] = k;
		t->worker = i;
		t->host = set->hosts[set->ntargets];
		t->port = 22;
		t->user = sl->user != NULL ? sl->user : sc->user;
		set->ntargets++;
	}
	*selp = sel;
	return 0;
}

/*
 * The account OS Login knows the caller as: the impersonated service
 * account, else the credential file's client_email, else (credentials
 * of the metadata server) the metadata server's default service account
 * email.  An access token file or user credentials do not say (no
 * tokeninfo call is made): TPU_E_PRECONDITION saying what to do.
 */
static int
oslogin_account(struct tpu_ctx *ctx, char **email, struct tpu_err *err)
{
	struct auth *a;
	cJSON *d = NULL;
	const char *v;
	int rc;

	*email = NULL;
	if ((rc = ctx_auth(ctx, &a, err)) != 0 ||
	    (rc = auth_describe(a, &d, err)) != 0)
		return rc;
	v = jstr(d, "impersonate");
	if (v == NULL)
		v = jstr(d, "account");
	if (v != NULL)
		*email = xstrdup(v);
	else if (v == NULL && jstr(d, "type") != NULL &&
	         strcmp(jstr(d, "type"), "metadata_server") == 0)
		rc = auth_metadata_email(a, email, err);
	else
		rc = tpu_error(err, TPU_E_PRECONDITION,
		    "OS Login needs the account's email, which %s "
		    "credentials do not name: use a service account key "
		    "file (GOOGLE_APPLICATION_CREDENTIALS) or "
		    "--impersonate-service-account",
		    jstr(d, "type") != NULL ? jstr(d, "type") : "these");
	cJSON_Delete(d);
	return rc;
}

/*
 * The project's enable-oslogin (commonInstanceMetadata, Compute
 * projects.get), asked once per invocation (a multislice's nodes share
 * it; nothing is kept across invocations: turning OS Login on for a
 * project takes effect at the next command).  403 or 404 (the Compute
 * API disabled in the project, or compute.projects.get not granted):
 * one line at -v, and the project is taken to leave OS Login off (the
 * ssh-keys path; workers under a project-wide OS Login then refuse the
 * key, and the -v line says why).  Other errors fail the command, as
 * gcloud does.
 */
static int
project_oslogin(struct tpu_ctx *ctx, struct sshcmd *sc, const char **value,
    struct tpu_err *err)
{
	char *base;
	int rc;

	*value = NULL;
	if (sc->proj_md_read) {
		*value = sc->proj_oslogin;
		return 0;
	}
	if ((base = endpoint_base(ctx->cfg, ENDPOINT_COMPUTE, err)) == NULL)
		return err->code;
	rc = compute_project_metadata(sc->tc.api.http, base, sc->tc.project,
	    "enable-oslogin", &sc->proj_oslogin, err);
	free(base);
	if (rc == TPU_E_PERMISSION || rc == TPU_E_NOTFOUND) {
		log_info("cannot read project %s's metadata (Compute "
		         "projects.get: %s): taking OS Login as off for the "
		         "project",
		    sc->tc.project, err->msg);
		tpu_err_init(err);
		rc = 0;
	}
	if (rc != 0)
		return tpu_error_prefix(err,
		    "project %s's metadata (Compute "
		    "projects.get, for enable-oslogin)",
		    sc->tc.project);
	sc->proj_md_read = 1;
	*value = sc->proj_oslogin;
	return 0;
}

/*
 * A node whose metadata turns OS Login on (enable-oslogin TRUE, any
 * case), or a node whose metadata does not have the key in a project
 * whose metadata turns it on (gcloud's rule: the node's key decides,
 * TRUE or FALSE, else the project's): its workers' sshd asks the OS
 * Login API for keys and ignores ssh-keys metadata.  The key is
 * imported into the caller's login profile
 * (users/EMAIL:importSshPublicKey, idempotent: the same key
 * twice is one key), and the slice's workers are logged in to as the
 * profile's primary POSIX user; no metadata is written.  Under
 * --dry-run nothing is sent (the project's metadata is read): a line
 * says what would be imported.  OS Login turned on by an organisation
 * policy (constraints/compute.requireOsLogin) is visible to no client.
 * *done is 1 when the node is an OS Login node.
 */
static int
oslogin_slice(struct tpu_ctx *ctx, struct sshcmd *sc, struct sshcmd_slice *sl,
    int *done, struct tpu_err *err)
{
	char *email = NULL, *base = NULL, *line = NULL, *user = NULL;
	const char *v = md_get(sl->node, "enable-oslogin");
	char where[320];
	int rc;

	snprintf(where, sizeof where, "node '%s'", sl->name);
	if (v == NULL) {
		if ((rc = project_oslogin(ctx, sc, &v, err)) != 0)
			return rc;
		snprintf(where, sizeof where, "project '%s'", sc->tc.project);
	}
	*done = oslogin_enabled(v);
	if (!*done)
		return 0;
	if ((rc = oslogin_account(ctx, &email, err)) != 0)
		return rc;
	if (sc->o.dry_run) {
		printf("would import %s into the OS Login profile of %s (%s "
		       "has enable-oslogin=%s) and log in as its POSIX "
		       "user\n",
		    sc->key.pubpath, email, where, v);
		free(sl->user);
		sl->user = xstrdup("OSLOGIN-USER");
		free(email);
		return 0;
	}
	if ((base = endpoint_base(ctx->cfg, ENDPOINT_OSLOGIN, err)) == NULL) {
		free(email);
		return err->code;
	}
	line = xasprintf("%s %s", sc->key.publine, sc->user);
	log_info("importing the key into the OS Login profile of %s (node "
	         "'%s'; %s has enable-oslogin=%s)",
	    email, sl->name, where, v);
	rc = oslogin_import(sc->tc.api.http, base, email, sc->tc.project, line,
	    sc->o.expire > 0 ? (int64_t)sc->o.expire * 1000000 : 0, &user, err);
	if (rc == 0) {
		free(sl->user);
		sl->user = user;
	}
	free(line);
	free(base);
	free(email);
	return rc;
}

/*
 * Resolve one slice: its node (unless already read), the key in its
 * metadata, its endpoints and selected workers, their host keys.  The
 * one sequence of both sshcmd_prepare and sshcmd_refresh.
 */
static int
resolve_slice(struct tpu_ctx *ctx, struct sshcmd *sc, struct sshcmd_set *set,
    size_t k, int use_cache, struct tpu_err *err)
{
	struct sshcmd_slice *sl = &set->slices[k];
	unsigned char *sel = NULL;
	size_t first = set->ntargets;
	int rc, patched = 0, oslogin = 0;

	if (sl->node == NULL && (rc = get_node(sc, sl, use_cache, err)) != 0)
		return rc;
	/* before the metadata is touched or a worker is tried */
	if ((rc = tpucmd_node_ready(sl->name, jstr(sl->node, "state"), err)) !=
	        0 ||
	    (rc = oslogin_slice(ctx, sc, sl, &oslogin, err)) != 0)
		return rc;
	/* --dry-run: no metadata patch, no host keys read */
	if (!sc->o.dry_run && !oslogin &&
	    (rc = propagate_key(ctx, sc, sl, &patched, err)) != 0)
		return rc;
	set->patched |= patched;
	set->from_cache |= sl->from_cache;
	if ((rc = add_targets(sc, set, k, &sel, err)) != 0)
		return rc;
	if (!sc->o.dry_run)
		rc = pin_hostkeys(sc, set, sl, sel, first, err);
	free(sel);
	return rc;
}

/* GET the queued resource name: its node ids, cached when ACTIVE. */
static int
get_qr(struct sshcmd *sc, cJSON **idsp, struct tpu_err *err)
{
	cJSON *qr = NULL;
	char *path, **ids = NULL;
	const char *state;
	int rc, n = 0, i;

	path = xasprintf("projects/%s/locations/%s/queuedResources/%s",
	    sc->tc.project, sc->tc.zone, sc->name);
	rc = tpuapi_call(&sc->tc.api, "GET", path, NULL, NULL, 1, &qr, err);
	free(path);
	if (rc == TPU_E_NOTFOUND) {
		struct buf where;

		nodecache_qr_drop(sc->tc.project, sc->tc.zone, sc->name);
		buf_init(&where, 4096);
		/* one list of each kind across zones: where it is instead */
		if (tpucmd_where(
		        &sc->tc, "nodes", sc->name, sc->tc.zone, &where) > 0 ||
		    tpucmd_where(&sc->tc, "queuedResources", sc->name,
		        sc->tc.zone, &where) > 0)
			rc = tpu_error(err, rc,
			    "'%s' not found in zone %s; exists in zones %s "
			    "(--zone)",
			    sc->name, sc->tc.zone, where.data);
		else
			rc = tpu_error(err, rc,
			    "node '%s' not found in zone %s of project %s (nor "
			    "a queued resource of that name)",
			    sc->name, sc->tc.zone, sc->tc.project);
		buf_release(&where);
		goto out;
	}
	if (rc != 0)
		goto out;
	state = jstr(cJSON_GetObjectItemCaseSensitive(qr, "state"), "state");
	if (state == NULL || strcmp(state, "ACTIVE") != 0) {
		rc = tpu_error(err, TPU_E_PRECONDITION,
		    "queued resource '%s' is %s, not ACTIVE: its nodes are "
		    "not ready",
		    sc->name, state != NULL ? state : "in no state");
		goto out;
	}
	if ((rc = sshsel_qr_nodes(qr, &ids, &n, err)) != 0)
		goto out;
	*idsp = cJSON_CreateArray();
	for (i = 0; i < n; i++)
		cJSON_AddItemToArray(*idsp, cJSON_CreateString(ids[i]));
	nodecache_qr_put(sc->tc.project, sc->tc.zone, sc->name, *idsp);
out:
	sshsel_ids_free(ids, n);
	cJSON_Delete(qr);
	return rc;
}

/* The slices of a queued resource that --node selects. */
static int
select_slices(struct sshcmd *sc, struct sshcmd_set *set, const cJSON *jids,
    struct tpu_err *err)
{
	const char **ids;
	const char *spec = sc->o.nodes != NULL           ? sc->o.nodes
	                   : sc->o.default_nodes != NULL ? sc->o.default_nodes
	                                                 : "0";
	unsigned char *sel;
	int n = cJSON_GetArraySize(jids), i, rc, count = 0;

	if (n <= 0 || n > SSHSEL_MAX)
		return tpu_error(err, TPU_E_API,
		    "queued resource '%s' has %d nodes", sc->name, n);
	ids = xcalloc((size_t)n, sizeof *ids);
	sel = xcalloc((size_t)n, 1);
	for (i = 0; i < n; i++)
		ids[i] = cJSON_GetStringValue(cJSON_GetArrayItem(jids, i));
	rc = sshsel_nodes(spec, ids, n, sel, err);
	for (i = 0; rc == 0 && i < n; i++)
		count += sel[i];
	if (rc == 0 && count > 1 && sc->o.one_slice != NULL)
		rc = tpu_error(err, TPU_E_USAGE,
		    "--node '%s' selects %d slices of queued resource '%s': "
		    "%s",
		    spec, count, sc->name, sc->o.one_slice);
	for (i = 0; rc == 0 && i < n; i++)
		if (sel[i])
			set_add_slice(set, ids[i], i);
	free(ids);
	free(sel);
	return rc;
}

/*
 * Is name a node or a queued resource?  A node is tried first (node
 * cache, queued-resource cache, nodes.get, queuedResources.get); the
 * slices selected are added to set.
 */
static int
resolve_name(struct sshcmd *sc, struct sshcmd_set *set, int use_cache,
    struct tpu_err *err)
{
	struct sshcmd_slice tmp;
	cJSON *ids = NULL;
	int rc;

	memset(&tmp, 0, sizeof tmp);
	tmp.name = (char *)sc->name;
	if (use_cache && nodecache_get(sc->tc.project, sc->tc.zone, sc->name,
	                     NODECACHE_TTL_MS, &tmp.node) == 0)
		tmp.from_cache = 1;
	else if (use_cache && nodecache_qr_get(sc->tc.project, sc->tc.zone,
	                          sc->name, NODECACHE_TTL_MS, &ids) == 0)
		set->from_cache = 1;
	else if ((rc = get_node(sc, &tmp, 0, err)) == TPU_E_NOTFOUND) {
		tpu_err_init(err);
		if ((rc = get_qr(sc, &ids, err)) != 0)
			return rc;
	} else if (rc != 0) {
		cJSON_Delete(tmp.node);
		return rc;
	}
	if (ids == NULL) {
		if (sc->o.nodes != NULL) {
			cJSON_Delete(tmp.node);
			return tpu_error(err, TPU_E_USAGE,
			    "--node %s: '%s' is a TPU node, not a queued "
			    "resource (--node selects the slices of a queued "
			    "resource)",
			    sc->o.nodes, sc->name);
		}
		set_add_slice(set, sc->name, 0)->node = tmp.node;
		set->slices[0].from_cache = tmp.from_cache;
		return 0;
	}
	set->qr = 1;
	rc = select_slices(sc, set, ids, err);
	cJSON_Delete(ids);
	return rc;
}

static int
set_port(struct tpu_ctx *ctx, struct sshcmd_set *set, struct tpu_err *err)
{
	const char *v = config_get(ctx->cfg, "ssh/port");
	const char *es = NULL;
	long long p;
	size_t i;

	if (v == NULL)
		return 0;
	p = tpu_strtonum(v, 1, 65535, &es);
	if (es != NULL)
		return tpu_error(
		    err, TPU_E_USAGE, "ssh/port '%s': %s (1-65535)", v, es);
	for (i = 0; i < set->ntargets; i++)
		set->targets[i].port = (int)p;
	return 0;
}

/* Resolve the name, then every selected slice, into set. */
static int
resolve_all(struct tpu_ctx *ctx, struct sshcmd *sc, struct sshcmd_set *set,
    int use_cache, struct tpu_err *err)
{
	size_t k;
	int rc;

	memset(set, 0, sizeof *set);
	if ((rc = resolve_name(sc, set, use_cache, err)) != 0)
		return rc;
	for (k = 0; k < set->nslices; k++)
		if ((rc = resolve_slice(ctx, sc, set, k, use_cache, err)) != 0)
			return rc;
	return set_port(ctx, set, err);
}

/* Make set the current one. */
static void
commit(struct sshcmd *sc, struct sshcmd_set *set)
{
	set_free(&sc->set);
	sc->set = *set;
	memset(set, 0, sizeof *set);
	sc->targets = sc->set.targets;
	sc->ntargets = sc->set.ntargets;
	sc->qr = sc->set.qr;
	sc->nslices = sc->set.nslices;
	sc->from_cache = sc->set.from_cache;
}

int
sshcmd_user(
    struct tpu_ctx *ctx, const char *login, char **user, struct tpu_err *err)
{
	const char *v;
	int rc;

	v = login != NULL ? login : config_get(ctx->cfg, "ssh/user");
	if (v == NULL || *v == '\0')
		v = getenv("USER");
	if (v == NULL || *v == '\0') {
		struct passwd *pw = getpwuid(getuid());

		v = pw != NULL ? pw->pw_name : NULL;
	}
	if (v == NULL)
		return tpu_error(err, TPU_E_USAGE,
		    "no remote user name: set ssh/user "
		    "(tpuctl config set ssh/user NAME)");
	if ((rc = sshkey_validate_user(v, err)) != 0)
		return rc;
	*user = xstrdup(v);
	return 0;
}

/* The remote user, the key and the known_hosts path. */
static int
load_identity(struct tpu_ctx *ctx, struct sshcmd *sc, const char *login,
    struct tpu_err *err)
{
	char *keypath = NULL;
	int rc;

	if ((rc = sshcmd_user(ctx, login, &sc->user, err)) != 0)
		return rc;
	if (sc->o.key_file != NULL)
		keypath = xstrdup(sc->o.key_file);
	else if ((keypath = config_get_path(ctx->cfg, "ssh/key_file")) == NULL)
		keypath = sshkey_default_path();
	if (keypath == NULL)
		return tpu_error(err, TPU_E_USAGE,
		    "no SSH key file: HOME is unset; use --ssh-key-file");
	rc = sshkey_load(&sc->key, keypath,
	    sc->o.key_file != NULL ? 0 : SSHKEY_F_GENERATE, err);
	free(keypath);
	if (rc != 0)
		return rc;
	sc->khpath = config_get_path(ctx->cfg, "ssh/known_hosts_file");
	if (sc->khpath == NULL)
		sc->khpath = knownhosts_default_path();
	if (sc->khpath == NULL)
		return tpu_error(err, TPU_E_USAGE,
		    "no known_hosts file: HOME is unset; set "
		    "ssh/known_hosts_file");
	return 0;
}

int
sshcmd_prepare(struct tpu_ctx *ctx, const char *name,
    const struct sshcmd_opts *o, struct sshcmd *sc, struct tpu_err *err)
{
	struct sshcmd_set set;
	const char *v, *errstr, *at = strchr(name, '@');
	char *login = NULL;
	int rc;

	memset(sc, 0, sizeof *sc);
	memset(&set, 0, sizeof set);
	sc->o = *o;
	if (at != NULL) { /* USER@NODE, as ssh(1) and gcloud take it */
		login = xstrndup(name, (size_t)(at - name));
		if (sshkey_validate_user(login, err) != 0) {
			free(login);
			return tpu_error(err, TPU_E_USAGE,
			    "invalid user in '%s': expected USER@NODE, USER 1 "
			    "to 32 characters of [A-Za-z0-9_.-], not starting "
			    "with '-'",
			    name);
		}
		name = at + 1;
	}
	if ((rc = tpucmd_name(ctx,
	         TPUCMD_NAME_NODE | TPUCMD_NAME_QR | TPUCMD_NAME_CACHED_ZONE,
	         &name, err)) != 0) {
		free(login);
		return rc;
	}
	sc->name = name;
	/* The user and the key, before anything is sent. */
	rc = load_identity(ctx, sc, login, err);
	free(login);
	login = NULL;
	if (rc != 0)
		goto out;
	if ((rc = tpucmd_open(ctx, &sc->tc, err)) != 0)
		goto out;
	if ((rc = resolve_all(ctx, sc, &set, 1, err)) != 0)
		goto out;
	commit(sc, &set);
	sc->popts.keyfile = sc->key.path;
	sc->popts.pubkeyfile = sc->key.pubpath;
	sc->popts.passphrase = sc->key.passphrase;
	sc->popts.flags = sc->set.accept_new ? SSHPOOL_F_ACCEPT_NEW_HOSTKEY : 0;
	if (getenv("SSH_AUTH_SOCK") != NULL && o->key_file == NULL)
		sc->popts.flags |= SSHPOOL_F_AGENT;
	v = config_get(ctx->cfg, "ssh/fanout");
	sc->popts.fanout = 64;
	if (o->fanout > 0)
		sc->popts.fanout = o->fanout;
	else if (v != NULL) /* checked by config (CONFIG_K_INT) */
		sc->popts.fanout = (int)tpu_strtonum(v, 1, 4096, &errstr);
	if (sc->popts.fanout <= 0)
		sc->popts.fanout = 64;
	sc->popts.connect_timeout_ms = o->connect_timeout_ms;
	/* A key just added takes a while to reach the workers' agents. */
	sc->popts.auth_attempts = sc->set.patched ? 40 : 3;
	sc->popts.auth_retry_ms = 500;
	sc->popts.auth_retry_max_ms = 3000;
out:
	set_free(&set);
	if (rc != 0)
		sshcmd_release(sc);
	return rc;
}

/* Do two sets name the same nodes and workers, in the same order? */
static int
same_layout(const struct sshcmd_set *a, const struct sshcmd_set *b)
{
	size_t i;

	if (a->ntargets != b->ntargets || a->qr != b->qr)
		return 0;
	for (i = 0; i < a->ntargets; i++)
		if (a->targets[i].worker != b->targets[i].worker ||
		    strcmp(a->slices[a->tslice[i]].name,
		        b->slices[b->tslice[i]].name) != 0)
			return 0;
	return 1;
}

/* Did addresses or node ids change between two sets of one layout? */
static int
endpoints_changed(const struct sshcmd_set *a, const struct sshcmd_set *b)
{
	size_t i;

	for (i = 0; i < a->ntargets; i++) {
		const char *ida = jstr(a->slices[a->tslice[i]].node, "id");
		const char *idb = jstr(b->slices[b->tslice[i]].node, "id");

		if (strcmp(a->hosts[i], b->hosts[i]) != 0 || ida == NULL ||
		    idb == NULL || strcmp(ida, idb) != 0)
			return 1;
	}
	return 0;
}

int
sshcmd_refresh(struct tpu_ctx *ctx, struct sshcmd *sc, struct tpu_err *err)
{
	struct sshcmd_set set;
	size_t k;
	int rc, changed;

	if (sc->set.qr)
		nodecache_qr_drop(sc->tc.project, sc->tc.zone, sc->name);
	for (k = 0; k < sc->set.nslices; k++)
		nodecache_drop(
		    sc->tc.project, sc->tc.zone, sc->set.slices[k].name);
	if ((rc = resolve_all(ctx, sc, &set, 0, err)) != 0)
		goto out;
	if (!same_layout(&sc->set, &set)) {
		rc = tpu_error(err, TPU_E_PRECONDITION,
		    "'%s' changed while in use: other nodes or workers; run "
		    "the command again",
		    sc->name);
		goto out;
	}
	changed = set.patched || endpoints_changed(&sc->set, &set);
	/* the same workers in the same order: keep what the caller set */
	for (k = 0; k < set.ntargets; k++) {
		set.targets[k].command = sc->targets[k].command;
		set.targets[k].env = sc->targets[k].env;
		set.targets[k].nenv = sc->targets[k].nenv;
	}
	/* A recreated node has lost the key from its metadata. */
	if (set.patched)
		sc->popts.auth_attempts = 40;
	if (set.accept_new)
		sc->popts.flags |= SSHPOOL_F_ACCEPT_NEW_HOSTKEY;
	commit(sc, &set);
	rc = changed;
out:
	set_free(&set);
	return rc;
}

void
sshcmd_print_dry_run(
    const struct sshcmd *sc, const char *what, const char *wdir)
{
	size_t i;

	for (i = 0; i < sc->ntargets; i++) {
		const struct sshpool_target *t = &sc->targets[i];
		char pre[32];

		sshsel_prefix(pre, sizeof pre,
		    sc->qr ? sshcmd_slice_of(sc, i)->index : -1, t->worker);
		printf("%s%s@%s:%d: %s", pre, t->user, t->host, t->port, what);
		if (wdir != NULL)
			printf(" to %s/w%d", wdir, t->worker);
		putchar('\n');
	}
	fflush(stdout);
}

void
sshcmd_release(struct sshcmd *sc)
{
	set_free(&sc->set);
	sc->targets = NULL;
	sc->ntargets = 0;
	sc->nslices = 0;
	sshkey_release(&sc->key);
	memset(&sc->key, 0, sizeof sc->key);
	free(sc->user);
	sc->user = NULL;
	free(sc->khpath);
	sc->khpath = NULL;
	free(sc->proj_oslogin);
	sc->proj_oslogin = NULL;
	sc->proj_md_read = 0;
	if (sc->tc.opened)
		tpucmd_close(&sc->tc);
	sc->tc.opened = 0;
}
