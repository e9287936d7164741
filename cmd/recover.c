/*
 * run's recovery of a lost slice (--max-restarts): after an attempt,
 * decide (jobs_restart_decide) whether to run it again; when the node
 * was preempted, terminated or is gone, delete what holds quota and
 * recreate the node with the same spec by create's path, then let run
 * restage and relaunch.  Every step is logged with its reason.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd.h"
#include "config.h"
#include "gcsurl.h"
#include "jobcmd.h"
#include "json.h"
#include "log.h"
#include "recover.h"
#include "retry.h"
#include "shquote.h"
#include "tpucmd.h"
#include "util.h"
#include "xmalloc.h"

void
recover_init(struct recover *r, volatile sig_atomic_t *abort_flag,
    volatile sig_atomic_t *signal_flag, volatile sig_atomic_t *recovering)
{
	memset(r, 0, sizeof *r);
	r->max = -1;
	r->abort = abort_flag;
	r->signal = signal_flag;
	r->recovering = recovering;
}

void
recover_release(struct recover *r)
{
	cJSON_Delete(r->desc);
	r->desc = NULL;
	free(r->checkpoint);
	r->checkpoint = NULL;
	cJSON_Delete(r->zones);
	r->zones = NULL;
}

int
recover_set_zones(struct tpu_ctx *ctx, struct recover *r, const char *value,
    struct tpu_err *err)
{
	const char *z = config_get(ctx->cfg, "compute/zone");
	char *keep = z != NULL && *z != '\0' ? xstrdup(z) : NULL;
	int rc;

	cJSON_Delete(r->zones);
	r->zones = NULL;
	/* tpucmd_zones_parse makes the first zone the command's: the node
	 * is still looked for in --zone (else the configured zone) */
	rc = tpucmd_zones_parse(ctx, value, &r->zones, err);
	if (keep != NULL)
		config_set_flag(ctx->cfg, "compute/zone", keep);
	free(keep);
	return rc;
}

int
recover_set_checkpoint(
    struct recover *r, const char *value, struct tpu_err *err)
{
	struct gcs_url u;
	int rc;

	if (!gcs_is_url(value))
		return tpu_error(err, TPU_E_USAGE,
		    "--checkpoint '%s': must be a gs://BUCKET[/PREFIX] URL",
		    value);
	if ((rc = gcs_url_parse(value, &u, err)) != 0) {
		tpu_error_prefix(err, "--checkpoint");
		return rc;
	}
	gcs_url_release(&u);
	free(r->checkpoint);
	r->checkpoint = xstrdup(value);
	return 0;
}

/*
 * The preemption watcher, "sh -c NOTICE_SH tpuctl-notice PGID": while
 * the job's shell PGID lives, wait on instance/preempted (the metadata
 * server answers a wait_for_change at a change or after timeout_sec
 * with the current value, so a notice given before the first wait is
 * seen too); at TRUE, one line on stderr and SIGTERM to the group (the
 * watcher is in it and ends with it).  No metadata server: retried each
 * second.
 */
static const char notice_sh[] =
    "m=${GCE_METADATA_HOST:-metadata.google.internal}\n"
    "u=\"http://$m/computeMetadata/v1/instance/preempted\"\n"
    "while kill -0 \"$1\" 2>/dev/null; do\n"
    "  v=$(curl -sf -m 5 -H 'Metadata-Flavor: Google' "
    "\"$u?wait_for_change=true&timeout_sec=1\")\n"
    "  if [ \"$v\" = TRUE ]; then\n"
    "    echo \"tpuctl: preemption notice (instance/preempted is TRUE): "
    "SIGTERM to the job\" >&2\n"
    "    kill -TERM -\"$1\" 2>/dev/null\n"
    "    exit 0\n"
    "  fi\n"
    "  [ -n \"$v\" ] || sleep 1\n"
    "done\n";

char *
recover_launch_cmd(const struct recover *r, struct jobs_spec *s,
    char *const *env, size_t nenv, int flags)
{
	char **e2, *saved, *wq, *cq, *cmd;
	size_t i, n2 = 0;

	if (r->max < 0 && r->checkpoint == NULL)
		return jobs_launch_cmd(s, env, nenv, flags);
	e2 = xcalloc(nenv + 1, sizeof *e2);
	for (i = 0; i < nenv; i++)
		e2[n2++] = env[i];
	if (r->checkpoint != NULL)
		e2[n2++] = xasprintf("TPUCTL_CHECKPOINT=%s", r->checkpoint);
	/* $$ in the job's subshell is the job's shell: the group's id */
	wq = shquote(notice_sh);
	cq = shquote(s->command);
	saved = s->command;
	s->command =
	    xasprintf("sh -c %s tpuctl-notice \"$$\" </dev/null >/dev/null &\n"
	              "_tpuctl_n=$!\n"
	              "eval %s\n"
	              "_tpuctl_s=$?\n"
	              "kill \"$_tpuctl_n\" 2>/dev/null\n"
	              "exit \"$_tpuctl_s\"",
	        wq, cq);
	cmd = jobs_launch_cmd(s, e2, n2, flags);
	free(s->command);
	s->command = saved;
	if (r->checkpoint != NULL)
		free(e2[n2 - 1]);
	free(e2);
	free(wq);
	free(cq);
	return cmd;
}

/* Sleep s seconds, 0.1 s at a time; 1 when interrupted. */
static int
backoff_sleep(const struct recover *r, long long s)
{
	int64_t end = tpu_now_ms() + s * 1000;

	while (!*r->abort && tpu_now_ms() < end)
		tpu_sleep_ms(100);
	return *r->abort != 0;
}

/* Remove the job's directory on every target (an ended attempt), so the
 * same name launches again. */
static void
clear_job(struct jobcmd *jc)
{
	size_t i, n = jc->sc.ntargets;
	char **cmds = xcalloc(n, sizeof *cmds);
	struct sshpool_result *res = xcalloc(n, sizeof *res);
	struct tpu_err e;

	for (i = 0; i < n; i++)
		cmds[i] = jobs_clear_cmd(jc->spec.name);
	jc->capture = 1;
	tpu_err_init(&e);
	jobcmd_round(jc, cmds, 60, 0, res, &e);
	jc->capture = 0;
	for (i = 0; i < n; i++) {
		free(cmds[i]);
		free(jc->cap[i]);
		jc->cap[i] = NULL;
		sshpool_result_release(&res[i]);
	}
	free(cmds);
	free(res);
}

/*
 * After a preemption notice the job may still be saving its checkpoint:
 * wait until its process group is gone on every worker (or the worker
 * cannot be reached: the VM stopped), at most 60 s, before the node is
 * deleted under it.
 */
static void
drain_job(struct jobcmd *jc)
{
	size_t i, n = jc->sc.ntargets;
	char **cmds = xcalloc(n, sizeof *cmds);
	struct sshpool_result *res = xcalloc(n, sizeof *res);
	char *q = shquote(jc->spec.name);
	struct tpu_err e;

	for (i = 0; i < n; i++)
		cmds[i] = xasprintf(
		    "g=; f=$HOME/.tpuctl/jobs/%s/pgid; "
		    "[ -r \"$f\" ] && read -r g <\"$f\"; i=0; "
		    "while [ -n \"$g\" ] && kill -0 -\"$g\" 2>/dev/null && "
		    "[ $i -lt 600 ]; do sleep 0.1; i=$((i + 1)); done; echo ok",
		    q);
	jc->capture = 1;
	tpu_err_init(&e);
	jobcmd_round(jc, cmds, 70, 0, res, &e);
	jc->capture = 0;
	for (i = 0; i < n; i++) {
		free(cmds[i]);
		free(jc->cap[i]);
		jc->cap[i] = NULL;
		sshpool_result_release(&res[i]);
	}
	free(q);
	free(cmds);
	free(res);
}

/* Keep the local logs of attempt k as s<S>-w<W>.out.<k> (and .err.<k>):
 * the next attempt's streams start at byte 0 on the workers. */
static void
keep_attempt_logs(const struct jobcmd *jc, int k)
{
	int sl, w, s;

	for (sl = 0; sl < jc->spec.nslices; sl++)
		for (w = 0; w < jc->spec.nworkers; w++)
			for (s = 1; s <= 2; s++) {
				char *p =
				    jobs_local_log(jc->spec.name, sl, w, s);
				char *q = xasprintf("%s.%d", p, k);

				if (rename(p, q) != 0 && errno != ENOENT)
					log_warn("%s: %s", p, strerror(errno));
				free(p);
				free(q);
			}
}

/*
 * The node's description now (*nodep; NULL when it is gone).  0 or the
 * error of the read.
 */
static int
read_node(
    struct tpucmd *tc, const char *name, cJSON **nodep, struct tpu_err *err)
{
	char *path = tpuapi_node_path(&tc->api, tc->zone, name);
	int rc;

	*nodep = NULL;
	rc = tpuapi_call(&tc->api, "GET", path, NULL, NULL, 1, nodep, err);
	free(path);
	if (rc == TPU_E_NOTFOUND) {
		tpu_err_init(err);
		rc = 0;
	}
	return rc;
}

/* Delete the lost node name (it holds quota) and wait until it is gone. */
static int
delete_node(struct tpu_ctx *ctx, struct tpucmd *tc, const char *name,
    const cJSON *node, struct tpu_err *err)
{
	static const struct tpucmd_delete d = {
		.kind = "node",
		.collection = "nodes",
		.node_cache = 1,
	};
	char *argv[1];

	argv[0] = (char *)name;
	log_warn("deleting node '%s' in %s (state %s), so it holds no quota",
	    name, tc->zone, json_opt_string(node, "state", "?"));
	return tpucmd_delete_each(ctx, tc, &d, 1, argv, 0, 0, err);
}

/*
 * Create node name again from desc (its description: the same spec) by
 * create's path and wait until it is READY.
 */
static int
recreate_node(struct tpu_ctx *ctx, struct tpucmd *tc, const char *zone,
    const char *name, const cJSON *desc, struct tpu_err *err)
{
	const cJSON *sc;
	cJSON *body, *result = NULL;
	int rc, nw;

	body = jobs_recreate_body(desc, TPUCMD_RUN_ID_LABEL);
	sc = cJSON_GetObjectItemCaseSensitive(body, "schedulingConfig");
	log_warn("recreating node '%s' in %s: %s, %s, %s", name, zone,
	    json_opt_string(body, "acceleratorType", "acceleratorConfig"),
	    json_opt_string(body, "runtimeVersion", "?"),
	    cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(sc, "spot")) ? "spot"
	    : cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(sc, "preemptible"))
	        ? "preemptible"
	    : cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(sc, "reserved"))
	        ? "reserved"
	        : "on-demand");
	rc = tpucmd_create_node(ctx, tc, zone, name, body, 0, &result, err);
	if (rc == 0) {
		nw = cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(
		    result, "networkEndpoints"));
		log_warn("node '%s' is READY again (%d worker%s)", name, nw,
		    nw == 1 ? "" : "s");
	}
	cJSON_Delete(result);
	cJSON_Delete(body);
	return rc;
}

/*
 * Recreate the lost node, in its zone, then (--zones) in each other zone
 * of r->zones in turn while the creation ends in a stockout (the
 * operation's code 8, as create's --zones reads it).  When it lands in
 * another zone, that zone becomes the command's (compute/zone) and the
 * job's.
 */
static int
recreate_in_zones(struct tpu_ctx *ctx, struct tpucmd *tc, struct jobcmd *jc,
    struct recover *r, struct tpu_err *err)
{
	cJSON *order = cJSON_CreateArray();
	const cJSON *z;
	int rc = 0, left;

	cJSON_AddItemToArray(order, cJSON_CreateString(tc->zone));
	cJSON_ArrayForEach(z, r->zones)
	{
		if (strcmp(z->valuestring, tc->zone) != 0)
			cJSON_AddItemToArray(
			    order, cJSON_CreateString(z->valuestring));
	}
	left = cJSON_GetArraySize(order);
	cJSON_ArrayForEach(z, order)
	{
		left--;
		rc = recreate_node(
		    ctx, tc, z->valuestring, jc->spec.slice, r->desc, err);
		if (rc == 0) {
			if (strcmp(z->valuestring, tc->zone) != 0) {
				log_warn(
				    "job %s: node '%s' moved from %s to %s "
				    "(--zones)",
				    jc->spec.name, jc->spec.slice, tc->zone,
				    z->valuestring);
				config_set_flag(
				    ctx->cfg, "compute/zone", z->valuestring);
				free(jc->spec.zone);
				jc->spec.zone = xstrdup(z->valuestring);
			}
			break;
		}
		if (left == 0 || rc != TPU_E_OPERATION ||
		    strstr(err->msg, "(code 8)") == NULL)
			break;
		log_warn("%s; trying the next zone (--zones)", err->msg);
		tpu_err_init(err);
	}
	cJSON_Delete(order);
	return rc;
}

int
recover_maybe_restart(struct tpu_ctx *ctx, struct jobcmd *jc, struct recover *r,
    struct tpu_err *err)
{
	struct jobs_restart_in in;
	struct tpucmd tc;
	struct tpu_err e;
	enum jobs_restart what;
	cJSON *node = NULL;
	int rc;

	/* a stop of jobcmd's own (a refresh) is not the user's */
	if (*r->signal != 0)
		return 0;
	*r->abort = 0;
	tpu_err_init(&e);
	if ((rc = tpucmd_open(ctx, &tc, TPUCMD_ZONE, &e)) != 0) {
		log_warn("job %s: cannot read node '%s': %s", jc->spec.name,
		    jc->spec.slice, e.msg);
		return 0;
	}
	if ((rc = read_node(&tc, jc->spec.slice, &node, &e)) != 0) {
		log_warn("job %s: cannot read node '%s': %s", jc->spec.name,
		    jc->spec.slice, e.msg);
		tpucmd_close(&tc);
		return 0;
	}
	memset(&in, 0, sizeof in);
	in.node = jc->spec.slice;
	in.node_state =
	    node != NULL ? json_opt_string(node, "state", "UNKNOWN") : NULL;
	in.states = jc->states;
	in.n = (size_t)jc->spec.nslices * (size_t)jc->spec.nworkers;
	in.restarts = jc->spec.restart_count;
	in.max_restarts = r->max;
	in.on_failure = r->on_failure;
	what = jobs_restart_decide(&in, r->cause, sizeof r->cause);
	if (what == JOBS_RESTART_NONE) {
		rc = 0;
		goto out;
	}
	if (what == JOBS_RESTART_EXHAUSTED) {
		tpu_err_init(err);
		rc = tpu_error(err, TPU_E_PARTIAL,
		    "job %s: --max-restarts %d used up after %d restart%s; "
		    "last cause: %s",
		    jc->spec.name, r->max, jc->spec.restart_count,
		    jc->spec.restart_count == 1 ? "" : "s", r->cause);
		goto out;
	}
	log_warn("job %s: attempt %d ended: %s; restart %d of %d%s",
	    jc->spec.name, jc->spec.restart_count + 1, r->cause,
	    jc->spec.restart_count + 1, r->max,
	    what == JOBS_RESTART_RECREATE ? ", recreating the node" : "");
	if (what == JOBS_RESTART_RERUN)
		clear_job(jc);
	else if (node != NULL && strcmp(in.node_state, "PREEMPTED") == 0) {
		log_warn("job %s: waiting until the job has ended on every "
		         "worker (it may be saving a checkpoint)",
		    jc->spec.name);
		drain_job(jc);
	}
	jobcmd_detach(jc);
	keep_attempt_logs(jc, jc->spec.restart_count);
	if (what == JOBS_RESTART_RECREATE && node != NULL) {
		/* the latest spec (labels, metadata updated since) */
		cJSON_Delete(r->desc);
		r->desc = cJSON_Duplicate(node, 1);
		*r->recovering = 1;
		rc = delete_node(ctx, &tc, jc->spec.slice, node, err);
		*r->recovering = 0;
		if (rc != 0) {
			tpu_error_prefix(err, "restart");
			goto out;
		}
	}
	if (r->backoff_s > 0) {
		log_warn("job %s: waiting %lld s (--restart-backoff)",
		    jc->spec.name, r->backoff_s);
		if (backoff_sleep(r, r->backoff_s)) {
			rc = tpu_error(err,
			    *r->signal == SIGTERM ? TPU_E_TERMINATED
			                          : TPU_E_INTERRUPTED,
			    "job %s: interrupted before restart %d",
			    jc->spec.name, jc->spec.restart_count + 1);
			goto out;
		}
	}
	if (what == JOBS_RESTART_RECREATE) {
		*r->recovering = 1;
		rc = recreate_in_zones(ctx, &tc, jc, r, err);
		*r->recovering = 0;
		if (rc != 0) {
			tpu_error_prefix(err, "restart");
			goto out;
		}
	}
	jc->spec.restart_count++;
	rc = 1;
out:
	cJSON_Delete(node);
	tpucmd_close(&tc);
	return rc;
}
