/*
 * Shared plumbing of install, doctor and reset-workers (see fwcmd.h).
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "catalog.h"
#include "fsutil.h"
#include "fwcmd.h"
#include "json.h"
#include "nodecache.h"
#include "retry.h"
#include "sshsel.h"
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

	if ((rc = tpucmd_open(ctx, &tc, err)) != 0)
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

static void
on_output(
    void *arg, size_t idx, int stream, const char *data, size_t len, int flags)
{
	const struct sshcmd *sc = arg;
	const struct sshcmd_slice *sl = sshcmd_slice_of(sc, idx);
	char pre[48];

	(void)flags;
	(void)stream; /* the scripts write their story on both: one here */
	sshsel_prefix(
	    pre, sizeof pre, sc->qr ? sl->index : -1, sc->targets[idx].worker);
	printf("%s%.*s\n", pre, (int)len, data);
	fflush(stdout);
}

int
fwcmd_run(struct sshcmd *sc, const char *command, int timeout_s,
    const char *what, const char *failed, struct tpu_err *err)
{
	struct sshpool_result *res = xcalloc(sc->ntargets, sizeof *res);
	size_t i, nok = 0;
	int rc;

	sc->popts.command = command;
	sc->popts.flags |= SSHPOOL_F_LINES;
	sc->popts.command_timeout_ms = timeout_s * 1000;
	sc->popts.on_output = on_output;
	sc->popts.arg = sc;
	retry_install_signals();
	sc->popts.abort = &retry_interrupted;
	rc = sshpool_run(sc->targets, sc->ntargets, &sc->popts, res, err);
	for (i = 0; i < sc->ntargets; i++) {
		const struct sshpool_result *x = &res[i];
		const struct sshcmd_slice *sl = sshcmd_slice_of(sc, i);

		nok += x->status == SSHPOOL_S_OK;
		if (sc->qr)
			fprintf(
			    stderr, "node %s (slice %d) ", sl->name, sl->index);
		if (x->status == SSHPOOL_S_OK ||
		    x->status == SSHPOOL_S_REMOTE_NONZERO)
			fprintf(stderr, "worker %d: exit %d (%.1f s)\n",
			    sc->targets[i].worker, x->exit_status,
			    (double)x->duration_ms / 1000.0);
		else
			fprintf(stderr, "worker %d: %s%s%s (%.1f s)\n",
			    sc->targets[i].worker,
			    sshpool_status_name(x->status),
			    x->msg[0] != '\0' ? ": " : "", x->msg,
			    (double)x->duration_ms / 1000.0);
	}
	fprintf(stderr, "%s: %zu of %zu worker%s succeeded\n", what, nok,
	    sc->ntargets, sc->ntargets == 1 ? "" : "s");
	if (rc == TPU_E_PARTIAL || rc == TPU_E_UNREACHABLE) {
		tpu_err_init(err);
		if (rc == TPU_E_PARTIAL)
			tpu_error(err, rc, "%s: %zu of %zu workers %s", what,
			    sc->ntargets - nok, sc->ntargets, failed);
		else
			tpu_error(err, rc,
			    "%s: no worker could be reached (%zu of %zu)", what,
			    sc->ntargets - nok, sc->ntargets);
	} else if ((rc == TPU_E_INTERRUPTED || rc == TPU_E_TERMINATED) &&
	           err->msg[0] == '\0')
		tpu_error(err, rc, "%s",
		    retry_interrupt_name(
		        rc == TPU_E_TERMINATED ? SIGTERM : SIGINT));
	for (i = 0; i < sc->ntargets; i++)
		sshpool_result_release(&res[i]);
	free(res);
	return rc;
}
