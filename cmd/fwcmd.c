/*
 * Shared plumbing of install, doctor and reset-workers (see fwcmd.h).
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "catalog.h"
#include "fanout.h"
#include "fsutil.h"
#include "fwcmd.h"
#include "json.h"
#include "nodecache.h"
#include "retry.h"
#include "sshsel.h"
#include "tpucmd.h"
#include "xmalloc.h"

/* nodes.get name: 0 with *node, TPU_E_NOTFOUND (err not set), or err. */
static int
get_node(struct tpucmd *tc, const char *name, cJSON **node, struct tpu_err *err)
{
	char *path = tpuapi_node_path(&tc->api, tc->zone, name);
	int rc;

	*node = NULL;
	rc = tpuapi_call(&tc->api, "GET", path, NULL, NULL, 1, node, err);
	free(path);
	if (rc == 0 && *node == NULL)
		rc = tpu_error(err, TPU_E_API, "empty reply to nodes.get");
	return rc;
}

/* A node's generation and runtime; its description goes into the cache. */
static int
node_facts(struct tpucmd *tc, const char *name, const cJSON *node, char *gen,
    size_t genlen, char *runtime, size_t rtlen, struct tpu_err *err)
{
	struct catalog_accel a;
	const char *type, *rv;

	type = json_opt_string(node, "acceleratorType", NULL);
	rv = json_opt_string(node, "runtimeVersion", NULL);
	if (type == NULL || rv == NULL)
		return tpu_error(err, TPU_E_API,
		    "node '%s' has no acceleratorType or runtimeVersion", name);
	if (catalog_accel_parse(type, &a, err) != 0)
		return tpu_error(err, TPU_E_API,
		    "node '%s': accelerator type '%s' is not in tpuctl's "
		    "catalog",
		    name, type);
	snprintf(gen, genlen, "%s", a.gen->name);
	snprintf(runtime, rtlen, "%s", rv);
	/* the SSH resolution that follows reads the cache: one nodes.get */
	nodecache_put(tc->project, tc->zone, name, node);
	return 0;
}

/*
 * name is no node: a queued resource?  Every node of it (every slice of a
 * multislice) is read; they must agree on generation and runtime.
 */
static int
read_qr(struct tpucmd *tc, const char *name, char *gen, size_t genlen,
    char *runtime, size_t rtlen, struct tpu_err *err)
{
	cJSON *qr = NULL, *node = NULL, *jids = NULL;
	char **ids = NULL, g[32], r[128], *path;
	const char *state;
	int rc, n = 0, i;

	path = xasprintf("projects/%s/locations/%s/queuedResources/%s",
	    tc->project, tc->zone, name);
	rc = tpuapi_call(&tc->api, "GET", path, NULL, NULL, 1, &qr, err);
	free(path);
	if (rc == TPU_E_NOTFOUND)
		return tpu_error(err, rc,
		    "node '%s' not found in zone %s (nor a queued resource of "
		    "that name)",
		    name, tc->zone);
	if (rc != 0)
		goto out;
	state = json_opt_string(
	    cJSON_GetObjectItemCaseSensitive(qr, "state"), "state", NULL);
	if (state == NULL || strcmp(state, "ACTIVE") != 0) {
		rc = tpu_error(err, TPU_E_PRECONDITION,
		    "queued resource '%s' is %s, not ACTIVE: its nodes are "
		    "not ready",
		    name, state != NULL ? state : "in no state");
		goto out;
	}
	if ((rc = sshsel_qr_nodes(qr, &ids, &n, err)) != 0)
		goto out;
	jids = cJSON_CreateArray();
	for (i = 0; i < n; i++) {
		rc = get_node(tc, ids[i], &node, err);
		if (rc == TPU_E_NOTFOUND)
			tpu_error(err, rc,
			    "queued resource '%s': its node '%s' is not found "
			    "in zone %s",
			    name, ids[i], tc->zone);
		if (rc == 0)
			rc = node_facts(tc, ids[i], node, i == 0 ? gen : g,
			    i == 0 ? genlen : sizeof g, i == 0 ? runtime : r,
			    i == 0 ? rtlen : sizeof r, err);
		cJSON_Delete(node);
		node = NULL;
		if (rc != 0)
			goto out;
		if (i > 0 && (strcmp(g, gen) != 0 || strcmp(r, runtime) != 0)) {
			rc = tpu_error(err, TPU_E_PRECONDITION,
			    "queued resource '%s': its nodes differ (%s: %s, "
			    "runtime %s; %s: %s, runtime %s); install on each "
			    "node",
			    name, ids[0], gen, runtime, ids[i], g, r);
			goto out;
		}
		cJSON_AddItemToArray(jids, cJSON_CreateString(ids[i]));
	}
	nodecache_qr_put(tc->project, tc->zone, name, jids);
out:
	cJSON_Delete(jids);
	sshsel_ids_free(ids, n);
	cJSON_Delete(qr);
	return rc;
}

int
fwcmd_read_node(struct tpu_ctx *ctx, const char *name, char *gen, size_t genlen,
    char *runtime, size_t rtlen, struct tpu_err *err)
{
	struct tpucmd tc;
	cJSON *node = NULL;
	int rc;

	if ((rc = tpucmd_open(ctx, &tc, err)) != 0)
		return rc;
	rc = get_node(&tc, name, &node, err);
	if (rc == TPU_E_NOTFOUND) {
		tpu_err_init(err);
		rc = read_qr(&tc, name, gen, genlen, runtime, rtlen, err);
	} else if (rc == 0)
		rc = node_facts(
		    &tc, name, node, gen, genlen, runtime, rtlen, err);
	cJSON_Delete(node);
	tpucmd_close(&tc);
	return rc;
}

int
fwcmd_read_script(
    const char *dir, const char *rel, char **out, struct tpu_err *err)
{
	struct buf b;
	char *path = xasprintf("%s/%s", dir, rel);
	int rc;

	buf_init(&b, 1 << 20);
	rc = fsutil_read_file(path, 0, &b, NULL, err);
	free(path);
	if (rc != 0) {
		buf_release(&b);
		*out = NULL;
		return rc;
	}
	*out = buf_detach(&b, NULL);
	return 0;
}

int
fwcmd_run(struct tpu_ctx *ctx, struct sshcmd *sc, const char *command,
    int timeout_s, const char *what, const char *failed, struct tpu_err *err)
{
	struct fanout_spec fs;
	char *merged;
	int rc;

	/* the scripts tell their story on both streams: one, on stdout */
	merged = xasprintf("exec 2>&1; %s", command);
	fanout_spec_init(&fs);
	fs.command = merged;
	fs.timeout_s = timeout_s;
	fs.what = what;
	fs.failed = failed;
	rc = fanout_run(ctx, sc, &fs, err);
	if ((rc == TPU_E_INTERRUPTED || rc == TPU_E_TERMINATED) &&
	    err->msg[0] == '\0')
		tpu_error(err, rc, "%s",
		    retry_interrupt_name(
		        rc == TPU_E_TERMINATED ? SIGTERM : SIGINT));
	free(merged);
	return rc;
}

int
fwcmd_dry_run(struct tpu_ctx *ctx, const char *name,
    const struct sshcmd_opts *so, const char *what, struct tpu_err *err)
{
	struct sshcmd_opts o = *so;
	struct sshcmd sc;
	int rc;

	o.dry_run = 1;
	if ((rc = sshcmd_prepare(ctx, name, &o, &sc, err)) != 0)
		return rc;
	sshcmd_print_dry_run(&sc, what, NULL);
	sshcmd_release(&sc);
	return 0;
}
