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
#include "tpucmd.h"
#include "xmalloc.h"

int
fwcmd_read_node(struct tpu_ctx *ctx, const char *name, char *gen, size_t genlen,
    char *runtime, size_t rtlen, struct tpu_err *err)
{
	struct tpucmd tc;
	struct catalog_accel a;
	cJSON *node = NULL;
	const char *type, *rv;
	char *path;
	int rc;

	if ((rc = tpucmd_open(ctx, &tc, TPUCMD_ZONE, err)) != 0)
		return rc;
	path = tpuapi_node_path(&tc.api, tc.zone, name);
	rc = tpuapi_call(&tc.api, "GET", path, NULL, NULL, 1, &node, err);
	free(path);
	if (rc == TPU_E_NOTFOUND)
		tpu_error(
		    err, rc, "node '%s' not found in zone %s", name, tc.zone);
	if (rc != 0)
		goto out;
	type = json_opt_string(node, "acceleratorType", NULL);
	rv = json_opt_string(node, "runtimeVersion", NULL);
	if (type == NULL || rv == NULL) {
		rc = tpu_error(err, TPU_E_API,
		    "node '%s' has no acceleratorType or runtimeVersion", name);
		goto out;
	}
	if (catalog_accel_parse(type, &a, err) != 0) {
		rc = tpu_error(err, TPU_E_API,
		    "node '%s': accelerator type '%s' is not in tpuctl's "
		    "catalog",
		    name, type);
		goto out;
	}
	snprintf(gen, genlen, "%s", a.gen->name);
	snprintf(runtime, rtlen, "%s", rv);
	/* the SSH resolution that follows reads the cache: one nodes.get */
	nodecache_put(tc.project, tc.zone, name, node);
out:
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
