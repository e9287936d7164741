/*
 * The shared plumbing of ssh, scp and forward (cmd/sshcmd.h).
 */
#include <pwd.h>
#include <strings.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "catalog.h"
#include "config.h"
#include "knownhosts.h"
#include "log.h"
#include "nodecache.h"
#include "sshcmd.h"
#include "util.h"
#include "xmalloc.h"

#define MAX_WORKERS 4096
/* How long missing host keys (a worker still booting) are waited for. */
#define HOSTKEY_WAIT_MS 30000

void
sshcmd_opts_init(struct sshcmd_opts *o)
{
	memset(o, 0, sizeof *o);
	o->workers = "0";
	o->strict_host_keys = 1;
}

int
sshcmd_parse_workers(
    const char *spec, int n, unsigned char *sel, struct tpu_err *err)
{
	const char *p = spec;

	if (strcmp(spec, "all") == 0) {
		if (n > 0)
			memset(sel, 1, (size_t)n);
		return 0;
	}
	if (*spec == '\0')
		goto bad;
	while (*p != '\0') {
		char *end;
		long a, b;

		if (*p < '0' || *p > '9')
			goto bad;
		a = strtol(p, &end, 10);
		b = a;
		if (*end == '-') {
			p = end + 1;
			if (*p < '0' || *p > '9')
				goto bad;
			b = strtol(p, &end, 10);
		}
		if (a > b || b >= MAX_WORKERS)
			goto bad;
		if (n >= 0 && b >= n)
			return tpu_error(err, TPU_E_USAGE,
			    "--worker '%s': worker %ld does not exist (the "
			    "node has %d worker%s: 0-%d)",
			    spec, b, n, n == 1 ? "" : "s", n - 1);
		for (; n >= 0 && a <= b; a++)
			sel[a] = 1;
		p = end;
		if (*p == ',') {
			p++;
			if (*p == '\0')
				goto bad;
		} else if (*p != '\0')
			goto bad;
	}
	return 0;
bad:
	return tpu_error(err, TPU_E_USAGE,
	    "--worker '%s': expected 'all', a worker number, a list (1,3) or "
	    "a range (0-7)",
	    spec);
}

int
sshcmd_opt(struct sshcmd_opts *o, int ch, const char *arg, struct tpu_err *err)
{
	const char *es = NULL;
	long long v;

	switch (ch) {
	case SSHCMD_OPT_WORKER:
		if (sshcmd_parse_workers(arg, -1, NULL, err) != 0)
			return TPU_E_USAGE;
		o->workers = arg;
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

static int
get_node(struct sshcmd *sc, int use_cache, struct tpu_err *err)
{
	char *path;
	int rc;

	cJSON_Delete(sc->node);
	sc->node = NULL;
	sc->from_cache = 0;
	if (use_cache && nodecache_get(sc->tc.project, sc->tc.zone, sc->name,
	                     NODECACHE_TTL_MS, &sc->node) == 0) {
		sc->from_cache = 1;
		return 0;
	}
	path = tpuapi_node_path(&sc->tc.api, sc->tc.zone, sc->name);
	rc = tpuapi_call(
	    &sc->tc.api, "GET", path, NULL, NULL, 1, &sc->node, err);
	free(path);
	if (rc == TPU_E_NOTFOUND) {
		nodecache_drop(sc->tc.project, sc->tc.zone, sc->name);
		return tpu_error(err, rc,
		    "node '%s' not found in zone %s of project %s", sc->name,
		    sc->tc.zone, sc->tc.project);
	}
	if (rc != 0)
		return rc;
	if (sc->node == NULL)
		return tpu_error(err, TPU_E_API, "empty reply to nodes.get");
	nodecache_put(sc->tc.project, sc->tc.zone, sc->name, sc->node);
	return 0;
}

/* Does the ssh-keys value hold entry (as one whole line)? */
static int
has_key_line(const char *keys, const char *entry)
{
	size_t n = strlen(entry);
	const char *p = keys;

	while (p != NULL && *p != '\0') {
		const char *eol = strchr(p, '\n');
		size_t len = eol != NULL ? (size_t)(eol - p) : strlen(p);

		if (len > 0 && p[len - 1] == '\r')
			len--;
		/* Compare "user:type base64", ignoring the comment. */
		if (len >= n && strncmp(p, entry, n) == 0 &&
		    (len == n || p[n] == ' '))
			return 1;
		p = eol != NULL ? eol + 1 : NULL;
	}
	return 0;
}

static void
free_targets(struct sshcmd *sc)
{
	size_t i;

	for (i = 0; i < sc->ntargets; i++) {
		free(sc->hosts[i]);
		knownhosts_lines_free(sc->hostkeys[i]);
	}
	free(sc->hosts);
	free(sc->hostkeys);
	free(sc->targets);
	sc->hosts = NULL;
	sc->hostkeys = NULL;
	sc->targets = NULL;
	sc->ntargets = 0;
}

/* Make sure the key's entry is in the node's ssh-keys metadata. */
static int
propagate_key(
    struct tpu_ctx *ctx, struct sshcmd *sc, int *patched, struct tpu_err *err)
{
	char *entry = NULL, *prefix = NULL, *path = NULL, *val = NULL;
	const char *oslogin, *keys;
	cJSON *body = NULL, *md, *op = NULL, *it;
	struct tpuapi_wait w;
	int rc, attempt;

	*patched = 0;
	oslogin = md_get(sc->node, "enable-oslogin");
	if (oslogin != NULL && strcasecmp(oslogin, "true") == 0)
		return tpu_error(err, TPU_E_PRECONDITION,
		    "node '%s' has enable-oslogin=TRUE: OS Login keys are "
		    "managed by the OS Login API, which tpuctl does not "
		    "support; use gcloud compute tpus tpu-vm ssh",
		    sc->name);
	if ((rc = sshkey_metadata_entry(&sc->key, sc->user, &entry, err)) != 0)
		return rc;
	/* "user:type base64" (the trailing comment is not compared). */
	{
		char *sp = strrchr(entry, ' ');

		prefix = sp != NULL ? xstrndup(entry, (size_t)(sp - entry))
		                    : xstrdup(entry);
	}
	for (attempt = 0; attempt < 3; attempt++) {
		keys = md_get(sc->node, "ssh-keys");
		if (keys != NULL && has_key_line(keys, prefix)) {
			rc = 0;
			goto out;
		}
		/* Keep every other metadata entry and ssh-keys line. */
		body = cJSON_CreateObject();
		md = cJSON_AddObjectToObject(body, "metadata");
		cJSON_ArrayForEach(
		    it, cJSON_GetObjectItemCaseSensitive(sc->node, "metadata"))
		{
			if (strcmp(it->string, "ssh-keys") != 0 &&
			    cJSON_IsString(it))
				cJSON_AddStringToObject(
				    md, it->string, it->valuestring);
		}
		free(val);
		if (keys != NULL && *keys != '\0')
			val = xasprintf("%s%s%s", keys,
			    keys[strlen(keys) - 1] == '\n' ? "" : "\n", entry);
		else
			val = xstrdup(entry);
		cJSON_AddStringToObject(md, "ssh-keys", val);
		free(path);
		path = tpuapi_node_path(&sc->tc.api, sc->tc.zone, sc->name);
		log_info("adding the key of %s to the metadata of node '%s'",
		    sc->user, sc->name);
		rc = tpuapi_call(&sc->tc.api, "PATCH", path,
		    "updateMask=metadata", body, 0, &op, err);
		cJSON_Delete(body);
		body = NULL;
		if (rc == TPU_E_CONFLICT) {
			/* Someone else changed the node: re-read, merge again.
			 */
			tpu_err_init(err);
			if ((rc = get_node(sc, 0, err)) != 0)
				goto out;
			continue;
		}
		if (rc != 0)
			goto out;
		if (op != NULL && jstr(op, "name") != NULL &&
		    !cJSON_IsTrue(
		        cJSON_GetObjectItemCaseSensitive(op, "done"))) {
			tpucmd_wait_opts(ctx, &sc->tc, &w, 0,
			    "adding the SSH key to the node metadata");
			rc = tpuapi_op_wait(
			    &sc->tc.api, jstr(op, "name"), &w, NULL, err);
			if (rc != 0)
				goto out;
		}
		nodecache_drop(sc->tc.project, sc->tc.zone, sc->name);
		*patched = 1;
		rc = 0;
		goto out;
	}
	rc = tpu_error(err, TPU_E_CONFLICT,
	    "node '%s': the metadata kept changing while adding the SSH key "
	    "(3 attempts)",
	    sc->name);
out:
	cJSON_Delete(op);
	cJSON_Delete(body);
	free(entry);
	free(prefix);
	free(path);
	free(val);
	return rc;
}

/* Pin the host keys of the selected workers (sel) into known_hosts. */
static int
pin_hostkeys(struct sshcmd *sc, const unsigned char *sel, int *accept_new,
    struct tpu_err *err)
{
	struct knownhosts kh;
	const char *id = jstr(sc->node, "id");
	char *path = NULL, *alias = NULL;
	cJSON *body = NULL, *ga = NULL;
	int64_t deadline = tpu_now_ms() + HOSTKEY_WAIT_MS;
	int rc, i, missing;

	*accept_new = 0;
	if (id == NULL)
		return tpu_error(
		    err, TPU_E_API, "node '%s' has no id", sc->name);
	knownhosts_init(&kh, sc->khpath);
	if ((rc = knownhosts_load(&kh, err)) != 0)
		goto out;
	/*
	 * A cached description whose workers all have pinned keys needs no
	 * call: if the node changed since, the host-key check fails and the
	 * caller refreshes (sshcmd_refresh), never connects unverified.
	 */
	if (sc->from_cache) {
		missing = 0;
		for (i = 0; i < sc->nworkers && missing == 0; i++) {
			if (!sel[i])
				continue;
			free(alias);
			alias = NULL;
			if (knownhosts_alias(id, i, &alias, err) != 0 ||
			    knownhosts_lookup(&kh, alias, NULL, 0) == 0)
				missing = 1;
		}
		free(alias);
		alias = NULL;
		if (missing == 0)
			goto pinned;
		tpu_err_init(err);
	}
	alias = tpuapi_node_path(&sc->tc.api, sc->tc.zone, sc->name);
	path = xasprintf("%s:getGuestAttributes", alias);
	free(alias);
	alias = NULL;
	for (;;) {
		const cJSON *arr;

		body = cJSON_CreateObject();
		cJSON_AddStringToObject(body, "queryPath", "hostkeys/");
		cJSON_Delete(ga);
		ga = NULL;
		rc = tpuapi_call(
		    &sc->tc.api, "POST", path, NULL, body, 1, &ga, err);
		cJSON_Delete(body);
		body = NULL;
		if (rc != 0)
			goto out;
		arr = cJSON_GetObjectItemCaseSensitive(ga, "guestAttributes");
		missing = 0;
		for (i = 0; i < sc->nworkers; i++) {
			const cJSON *items, *item;
			char *lines[16];
			size_t n = 0, k;

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
				    k2 == NULL || v == NULL || n == 16)
					continue;
				lines[n++] = tpu_startswith(v, k2)
				                 ? xstrdup(v)
				                 : xasprintf("%s %s", k2, v);
			}
			if (n == 0) {
				missing++;
				continue;
			}
			free(alias);
			alias = NULL;
			rc = knownhosts_alias(id, i, &alias, err);
			if (rc == 0)
				rc = knownhosts_replace(&kh, alias,
				    (const char *const *)lines, n, err);
			for (k = 0; k < n; k++)
				free(lines[k]);
			if (rc != 0)
				goto out;
		}
		if (missing == 0 || tpu_now_ms() >= deadline)
			break;
		log_info("waiting for the host keys of %d worker%s", missing,
		    missing == 1 ? "" : "s");
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
			    sc->name, missing, missing == 1 ? "" : "s",
			    HOSTKEY_WAIT_MS / 1000);
			goto out;
		}
		log_warn("%d worker%s of node '%s' published no host key: "
		         "connecting without host key verification",
		    missing, missing == 1 ? "" : "s", sc->name);
		*accept_new = 1;
	}
	rc = knownhosts_save(&kh, err);
	if (rc != 0)
		goto out;
pinned:
	/* The targets get the pinned lines. */
	for (i = 0; i < (int)sc->ntargets; i++) {
		size_t n = 0;

		free(alias);
		alias = NULL;
		if ((rc = knownhosts_alias(
		         id, sc->targets[i].worker, &alias, err)) != 0)
			goto out;
		sc->hostkeys[i] = knownhosts_lines(&kh, alias, &n);
		sc->targets[i].hostkeys = (const char *const *)sc->hostkeys[i];
		sc->targets[i].nhostkeys = n;
	}
out:
	cJSON_Delete(ga);
	cJSON_Delete(body);
	free(path);
	free(alias);
	knownhosts_release(&kh);
	return rc;
}

/* Build targets from the node's endpoints and the selection. */
static int
build_targets(struct sshcmd *sc, unsigned char **selp, struct tpu_err *err)
{
	const cJSON *eps =
	    cJSON_GetObjectItemCaseSensitive(sc->node, "networkEndpoints");
	const char *state = jstr(sc->node, "state");
	unsigned char *sel;
	int n = cJSON_GetArraySize(eps), i, rc;
	int port = 22;

	if (state != NULL && strcmp(state, "READY") != 0)
		return tpu_error(err, TPU_E_PRECONDITION,
		    "node '%s' is %s, not READY", sc->name, state);
	if (n <= 0)
		return tpu_error(err, TPU_E_PRECONDITION,
		    "node '%s' has no network endpoints yet", sc->name);
	sel = xcalloc((size_t)n, 1);
	if ((rc = sshcmd_parse_workers(sc->o.workers, n, sel, err)) != 0) {
		free(sel);
		return rc;
	}
	free_targets(sc);
	sc->nworkers = n;
	for (i = 0; i < n; i++)
		sc->ntargets += sel[i];
	sc->targets = xcalloc(sc->ntargets, sizeof *sc->targets);
	sc->hosts = xcalloc(sc->ntargets, sizeof *sc->hosts);
	sc->hostkeys = xcalloc(sc->ntargets, sizeof *sc->hostkeys);
	sc->ntargets = 0;
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
			    "node '%s': worker %d has no IP address", sc->name,
			    i);
		}
		t = &sc->targets[sc->ntargets];
		sc->hosts[sc->ntargets] = xstrdup(ip);
		t->worker = i;
		t->host = sc->hosts[sc->ntargets];
		t->port = port;
		t->user = sc->user;
		sc->ntargets++;
	}
	*selp = sel;
	return 0;
}

static int
set_port(struct tpu_ctx *ctx, struct sshcmd *sc, struct tpu_err *err)
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
	for (i = 0; i < sc->ntargets; i++)
		sc->targets[i].port = (int)p;
	return 0;
}

int
sshcmd_prepare(struct tpu_ctx *ctx, const char *node,
    const struct sshcmd_opts *o, struct sshcmd *sc, struct tpu_err *err)
{
	unsigned char *sel = NULL;
	char *keypath = NULL;
	const char *v, *errstr;
	int rc, patched = 0, accept_new = 0;

	memset(sc, 0, sizeof *sc);
	sc->name = node;
	sc->o = *o;
	if ((rc = catalog_node_name_validate(node, err)) != 0)
		return rc;
	/* The user and the key, before anything is sent. */
	v = config_get(ctx->cfg, "ssh/user");
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
	sc->user = xstrdup(v);
	if (o->key_file != NULL)
		keypath = xstrdup(o->key_file);
	else if ((keypath = config_get_path(ctx->cfg, "ssh/key_file")) == NULL)
		keypath = sshkey_default_path();
	if (keypath == NULL) {
		rc = tpu_error(err, TPU_E_USAGE,
		    "no SSH key file: HOME is unset; use --ssh-key-file");
		goto out;
	}
	rc = sshkey_load(&sc->key, keypath,
	    o->key_file != NULL ? 0 : SSHKEY_F_GENERATE, err);
	if (rc != 0)
		goto out;
	sc->khpath = config_get_path(ctx->cfg, "ssh/known_hosts_file");
	if (sc->khpath == NULL)
		sc->khpath = knownhosts_default_path();
	if (sc->khpath == NULL) {
		rc = tpu_error(err, TPU_E_USAGE,
		    "no known_hosts file: HOME is unset; set "
		    "ssh/known_hosts_file");
		goto out;
	}
	if ((rc = tpucmd_open(ctx, &sc->tc, TPUCMD_ZONE, err)) != 0)
		goto out;
	if ((rc = get_node(sc, 1, err)) != 0)
		goto out;
	if ((rc = propagate_key(ctx, sc, &patched, err)) != 0)
		goto out;
	if ((rc = build_targets(sc, &sel, err)) != 0)
		goto out;
	if ((rc = set_port(ctx, sc, err)) != 0)
		goto out;
	if ((rc = pin_hostkeys(sc, sel, &accept_new, err)) != 0)
		goto out;
	sc->popts.keyfile = sc->key.path;
	sc->popts.pubkeyfile = sc->key.pubpath;
	sc->popts.passphrase = sc->key.passphrase;
	sc->popts.flags = accept_new ? SSHPOOL_F_ACCEPT_NEW_HOSTKEY : 0;
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
	sc->popts.auth_attempts = patched ? 40 : 3;
	sc->popts.auth_retry_ms = 500;
	sc->popts.auth_retry_max_ms = 3000;
out:
	free(sel);
	free(keypath);
	if (rc != 0)
		sshcmd_release(sc);
	return rc;
}

int
sshcmd_refresh(struct tpu_ctx *ctx, struct sshcmd *sc, struct tpu_err *err)
{
	char **old;
	size_t n = sc->ntargets, i;
	unsigned char *sel = NULL;
	int rc, changed = 0, accept_new = 0, patched = 0;
	struct sshpool_opts keep = sc->popts;

	old = xcalloc(n + 1, sizeof *old);
	for (i = 0; i < n; i++)
		old[i] = xstrdup(sc->hosts[i]);
	nodecache_drop(sc->tc.project, sc->tc.zone, sc->name);
	if ((rc = get_node(sc, 0, err)) != 0)
		goto out;
	/* A recreated node has lost the key from its metadata. */
	if ((rc = propagate_key(ctx, sc, &patched, err)) != 0)
		goto out;
	if ((rc = build_targets(sc, &sel, err)) != 0)
		goto out;
	if ((rc = set_port(ctx, sc, err)) != 0)
		goto out;
	if ((rc = pin_hostkeys(sc, sel, &accept_new, err)) != 0)
		goto out;
	if (patched)
		keep.auth_attempts = 40;
	if (accept_new)
		keep.flags |= SSHPOOL_F_ACCEPT_NEW_HOSTKEY;
	sc->popts = keep;
	changed = patched;
	if (sc->ntargets != n)
		changed = 1;
	for (i = 0; !changed && i < n; i++)
		changed = strcmp(old[i], sc->hosts[i]) != 0;
	rc = changed;
out:
	for (i = 0; i < n; i++)
		free(old[i]);
	free(old);
	free(sel);
	return rc;
}

void
sshcmd_release(struct sshcmd *sc)
{
	free_targets(sc);
	cJSON_Delete(sc->node);
	sc->node = NULL;
	sshkey_release(&sc->key);
	memset(&sc->key, 0, sizeof sc->key);
	free(sc->user);
	sc->user = NULL;
	free(sc->khpath);
	sc->khpath = NULL;
	if (sc->tc.opened)
		tpucmd_close(&sc->tc);
	sc->tc.opened = 0;
}
