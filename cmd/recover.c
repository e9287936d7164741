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

#include "buf.h"
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
	cJSON_Delete(r->qr_desc);
	r->qr_desc = NULL;
	free(r->qr_name);
	r->qr_name = NULL;
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
recover_notice_wrap(const char *command)
{
	char *wq = shquote(notice_sh), *cq = shquote(command), *w;

	/* $$ in the job's subshell is the job's shell: the group's id */
	w = xasprintf("sh -c %s tpuctl-notice \"$$\" </dev/null >/dev/null &\n"
	              "_tpuctl_n=$!\n"
	              "eval %s\n"
	              "_tpuctl_s=$?\n"
	              "kill \"$_tpuctl_n\" 2>/dev/null\n"
	              "exit \"$_tpuctl_s\"",
	    wq, cq);
	free(wq);
	free(cq);
	return w;
}

char *
recover_launch_cmd(const struct recover *r, struct jobs_spec *s,
    char *const *env, size_t nenv, int flags)
{
	char **e2, *saved, *cmd;
	size_t i, n2 = 0;

	if (r->max < 0 && r->checkpoint == NULL)
		return jobs_launch_cmd(s, env, nenv, flags);
	e2 = xcalloc(nenv + 1, sizeof *e2);
	for (i = 0; i < nenv; i++)
		e2[n2++] = env[i];
	if (r->checkpoint != NULL)
		e2[n2++] = xasprintf("TPUCTL_CHECKPOINT=%s", r->checkpoint);
	saved = s->command;
	s->command = recover_notice_wrap(saved);
	cmd = jobs_launch_cmd(s, e2, n2, flags);
	free(s->command);
	s->command = saved;
	if (r->checkpoint != NULL)
		free(e2[n2 - 1]);
	free(e2);
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

/* After a captured round: free its commands, captures and results. */
static void
round_free(struct jobcmd *jc, char **cmds, struct sshpool_result *res)
{
	size_t i;

	for (i = 0; i < jc->sc.ntargets; i++) {
		free(cmds[i]);
		free(jc->cap[i]);
		jc->cap[i] = NULL;
		sshpool_result_release(&res[i]);
	}
	free(cmds);
	free(res);
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
	round_free(jc, cmds, res);
}

/*
 * After a preemption notice the job may still be saving its checkpoint:
 * wait until its process group is gone on every worker (or the worker
 * cannot be reached: the VM stopped), at most run/drain_timeout seconds
 * (60), before the node is deleted under it.  A worker where the job
 * still runs at the bound is named.
 */
static void
drain_job(struct tpu_ctx *ctx, struct jobcmd *jc, const unsigned char *mask)
{
	size_t i, n = jc->sc.ntargets;
	char **cmds = xcalloc(n, sizeof *cmds);
	struct sshpool_result *res = xcalloc(n, sizeof *res);
	char *q = shquote(jc->spec.name);
	const char *v = config_get(ctx->cfg, "run/drain_timeout"), *es;
	long long bound = v != NULL ? tpu_strtonum(v, 0, 3600, &es) : 60;
	char who[96];
	struct tpu_err e;

	if (v != NULL && es != NULL)
		bound = 60; /* validated when set: not reached */
	log_warn("job %s: waiting until the job has ended on every worker "
	         "(it may be saving a checkpoint; at most %lld s, "
	         "run/drain_timeout)",
	    jc->spec.name, bound);
	for (i = 0; i < n; i++)
		cmds[i] =
		    mask != NULL && !mask[i]
		        ? NULL
		        : xasprintf(
		              "g=; f=$HOME/.tpuctl/jobs/%s/pgid; "
		              "[ -r \"$f\" ] && read -r g <\"$f\"; i=0; "
		              "while [ -n \"$g\" ] && kill -0 -\"$g\" "
		              "2>/dev/null; do "
		              "[ $i -lt %lld ] || { echo running; exit 0; }; "
		              "sleep 0.1; i=$((i + 1)); done; echo ended",
		              q, bound * 10);
	jc->capture = 1;
	tpu_err_init(&e);
	jobcmd_round(jc, cmds, (int)bound + 10, 0, res, &e);
	jc->capture = 0;
	for (i = 0; i < n; i++) {
		if (jc->cap[i] != NULL && strcmp(jc->cap[i], "running") == 0) {
			jobcmd_state(jc, i)->kind = JOBS_LOST;
			log_warn("job %s: still running on %s after %lld s "
			         "(run/drain_timeout); deleting it with the "
			         "slice",
			    jc->spec.name,
			    fanout_who_name(&jc->who[i], who, sizeof who),
			    bound);
		}
		free(cmds[i]);
		free(jc->cap[i]);
		jc->cap[i] = NULL;
		sshpool_result_release(&res[i]);
	}
	free(q);
	free(cmds);
	free(res);
}

int
recover_relaunch(struct tpu_ctx *ctx, struct jobcmd *jc, struct tpu_err *err)
{
	struct jobs_spec w;
	struct sshcmd_opts so;
	struct sshpool_result *res;
	char **cmds;
	size_t i, n, nok = 0;
	int rc;

	sshcmd_opts_init(&so);
	if ((rc = jobcmd_connect(ctx, jc, &so, err)) != 0)
		return rc;
	clear_job(jc);
	/* restart-on-failure goes with max-restarts: the notice too */
	w = jc->spec;
	w.command = recover_notice_wrap(jc->spec.command);
	n = jc->sc.ntargets;
	cmds = xcalloc(n, sizeof *cmds);
	res = xcalloc(n, sizeof *res);
	for (i = 0; i < n; i++) {
		const struct sshcmd_slice *sl = sshcmd_slice_of(&jc->sc, i);
		size_t nenv;
		char **env = jobs_worker_env(&jc->spec, jobcmd_master_addr(jc),
		    sl->index, jc->sc.targets[i].worker, &nenv);

		cmds[i] = jobs_launch_cmd(&w, env, nenv, 0);
		jobs_env_free(env, nenv);
	}
	free(w.command);
	jc->capture = 1;
	rc = jobcmd_round(jc, cmds, 0, 0, res, err);
	jc->capture = 0;
	for (i = 0; i < n; i++) {
		struct jobs_state *st = jobcmd_state(jc, i);
		char who[128], why[640];

		memset(st, 0, sizeof *st);
		st->kind = JOBS_RUNNING;
		if (res[i].status == SSHPOOL_S_OK)
			nok++;
		else {
			st->kind = JOBS_LOST;
			fanout_describe(&res[i], why, sizeof why);
			log_warn("%s: not started again: %s",
			    fanout_who_name(&jc->who[i], who, sizeof who), why);
		}
	}
	round_free(jc, cmds, res);
	if (rc == 0 && nok == 0)
		rc = tpu_error(err, TPU_E_UNREACHABLE,
		    "job %s: not started again on any of its %zu workers",
		    jc->spec.name, n);
	jobcmd_detach(jc);
	if (rc == 0)
		rc = jobcmd_save(jc, err);
	return rc;
}

/* Keep the local logs of attempt k as s<S>-w<W>.out.<k> (and .err.<k>):
 * the next attempt's streams start at byte 0 on the workers. */
void
recover_keep_attempt_logs(const struct jobcmd *jc, int k)
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
    const char *name, const cJSON *desc, int *stockout, struct tpu_err *err)
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
	rc = tpucmd_create_node(
	    ctx, tc, zone, name, body, 0, &result, stockout, err);
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

/* The zones a recreation tries, in order: the slice's own, then the
 * other zones of --zones. */
static cJSON *
zone_order(const struct tpucmd *tc, const struct recover *r)
{
	cJSON *order = cJSON_CreateArray();
	const cJSON *z;

	cJSON_AddItemToArray(order, cJSON_CreateString(tc->zone));
	cJSON_ArrayForEach(z, r->zones)
	{
		if (strcmp(z->valuestring, tc->zone) != 0)
			cJSON_AddItemToArray(
			    order, cJSON_CreateString(z->valuestring));
	}
	return order;
}

/*
 * Recreate the lost node in each zone of order in turn while the
 * creation ends in a stockout (as tpucmd_create_node reports it, create's
 * --zones); *landed the zone where it is READY.
 */
static int
recreate_node_zones(struct tpu_ctx *ctx, struct tpucmd *tc, struct jobcmd *jc,
    struct recover *r, const cJSON *order, const char **landed,
    struct tpu_err *err)
{
	const cJSON *z;
	int rc = 0, left = cJSON_GetArraySize(order), stockout = 0;

	cJSON_ArrayForEach(z, order)
	{
		left--;
		rc = recreate_node(ctx, tc, z->valuestring, jc->spec.slice,
		    r->desc, &stockout, err);
		if (rc == 0) {
			*landed = z->valuestring;
			break;
		}
		if (left == 0 || !stockout)
			break;
		log_warn("%s; trying the next zone (--zones)", err->msg);
		tpu_err_init(err);
	}
	return rc;
}

/* The queued resource's description now (*qrp; NULL when gone). */
static int
read_qr(struct tpucmd *tc, const char *name, cJSON **qrp, struct tpu_err *err)
{
	char *path = xasprintf("projects/%s/locations/%s/queuedResources/%s",
	    tc->project, tc->zone, name);
	int rc;

	*qrp = NULL;
	rc = tpuapi_call(&tc->api, "GET", path, NULL, NULL, 1, qrp, err);
	free(path);
	if (rc == TPU_E_NOTFOUND) {
		tpu_err_init(err);
		rc = 0;
	}
	return rc;
}

/*
 * Whether the queued resource qr (NULL: gone) of job jc lost a slice:
 * NULL when not, else the cause in cause ("queued resource q is
 * SUSPENDED", "node q-1 of queued resource q is PREEMPTED").
 */
static const char *
qr_lost(struct tpucmd *tc, const struct jobcmd *jc, const char *qname,
    const cJSON *qr, char *cause, size_t n)
{
	const char *st;
	int i;

	if (qr == NULL) {
		snprintf(cause, n, "queued resource %s is gone", qname);
		return cause;
	}
	st = json_opt_string(qr, "state.state", "STATE_UNSPECIFIED");
	if (strcmp(st, "SUSPENDED") == 0 || strcmp(st, "SUSPENDING") == 0 ||
	    strcmp(st, "FAILED") == 0) {
		snprintf(cause, n, "queued resource %s is %s", qname, st);
		return cause;
	}
	for (i = 0; i < jc->spec.nslices; i++) {
		struct tpu_err e;
		cJSON *node = NULL;
		const char *ns;

		tpu_err_init(&e);
		if (read_node(tc, jc->spec.nodes[i], &node, &e) != 0)
			continue; /* unknown: not lost */
		ns = node != NULL ? json_opt_string(node, "state", "?") : NULL;
		if (ns == NULL || strcmp(ns, "PREEMPTED") == 0 ||
		    strcmp(ns, "TERMINATED") == 0) {
			snprintf(cause, n,
			    "node %s of queued resource %s is %s",
			    jc->spec.nodes[i], qname, ns != NULL ? ns : "gone");
			cJSON_Delete(node);
			return cause;
		}
		cJSON_Delete(node);
	}
	return NULL;
}

static void
arg_add(cJSON *a, const char *s)
{
	cJSON_AddItemToArray(a, cJSON_CreateString(s));
}

/*
 * Recreate queued resource name from its description qr by the path of
 * "queued-resources create" (R4, stockout cleanup, the wait for ACTIVE
 * and every node READY), in each zone of order (its --zones).  What is carried
 * over: the node count and prefix (or node id), accelerator type, runtime
 * version, spot / guaranteed / reservation, its valid-until-duration (a
 * valid-until-time may have passed: not), and the nodes' labels.
 */
static int
recreate_qr(struct tpu_ctx *ctx, struct tpucmd *tc, const char *qname,
    const cJSON *qr, const cJSON *order, struct tpu_err *err)
{
	const cJSON *spec =
	    cJSON_GetArrayItem(json_path(qr, "tpu.nodeSpec"), 0);
	const cJSON *node = cJSON_GetObjectItemCaseSensitive(spec, "node");
	const cJSON *ms, *it;
	cJSON *a = cJSON_CreateArray();
	struct buf b;
	char **argv;
	char num[24];
	int i, n, rc;

	if (json_opt_string(node, "acceleratorType", NULL) == NULL) {
		cJSON_Delete(a);
		return tpu_error(err, TPU_E_API,
		    "queued resource '%s' has no tpu.nodeSpec[0].node."
		    "acceleratorType to recreate it from",
		    qname);
	}
	arg_add(a, "queued-resources");
	arg_add(a, "create");
	arg_add(a, "--accelerator-type");
	arg_add(a, json_opt_string(node, "acceleratorType", ""));
	if (json_opt_string(node, "runtimeVersion", NULL) != NULL) {
		arg_add(a, "--version");
		arg_add(a, json_opt_string(node, "runtimeVersion", ""));
	}
	ms = cJSON_GetObjectItemCaseSensitive(spec, "multisliceParams");
	if (ms == NULL)
		ms = cJSON_GetObjectItemCaseSensitive(spec, "multiNodeParams");
	if (ms != NULL) {
		snprintf(num, sizeof num, "%lld",
		    json_opt_int64(ms, "nodeCount", 1));
		arg_add(a, "--node-count");
		arg_add(a, num);
		if (json_opt_string(ms, "nodeIdPrefix", NULL) != NULL) {
			arg_add(a, "--node-prefix");
			arg_add(a, json_opt_string(ms, "nodeIdPrefix", ""));
		}
	} else {
		arg_add(a, "--node-id");
		arg_add(a, json_opt_string(spec, "nodeId", qname));
	}
	if (cJSON_GetObjectItemCaseSensitive(qr, "spot") != NULL)
		arg_add(a, "--spot");
	if (cJSON_GetObjectItemCaseSensitive(qr, "guaranteed") != NULL)
		arg_add(a, "--guaranteed");
	/* how long it may wait in a zone: what lets --zones move on from
	   a zone out of capacity (the wait ends FAILED, code 8) */
	if (json_opt_string(qr, "queueingPolicy.validUntilDuration", NULL) !=
	    NULL) {
		arg_add(a, "--valid-until-duration");
		arg_add(a, json_opt_string(
		               qr, "queueingPolicy.validUntilDuration", ""));
	}
	if (json_opt_string(qr, "reservationName", NULL) != NULL) {
		arg_add(a, "--reserved");
		arg_add(a, "--reservation");
		arg_add(a, json_opt_string(qr, "reservationName", ""));
	}
	buf_init(&b, 1 << 16);
	cJSON_ArrayForEach(it, cJSON_GetObjectItemCaseSensitive(node, "labels"))
	{
		if (cJSON_IsString(it) &&
		    strcmp(it->string, TPUCMD_RUN_ID_LABEL) != 0)
			buf_printf(&b, "%s%s=%s", b.len > 0 ? "," : "",
			    it->string, it->valuestring);
	}
	if (b.len > 0) {
		arg_add(a, "--labels");
		arg_add(a, b.data);
	}
	buf_release(&b);
	buf_init(&b, 1 << 16);
	cJSON_ArrayForEach(it, order)
	{
		buf_printf(&b, "%s%s", b.len > 0 ? "," : "", it->valuestring);
	}
	arg_add(a, "--zones");
	arg_add(a, b.data);
	buf_release(&b);
	arg_add(a, "--");
	arg_add(a, qname);
	log_warn("recreating queued resource '%s' in %s: %s, %s%s", qname,
	    tc->zone, json_opt_string(node, "acceleratorType", "?"),
	    ms != NULL ? num : "1", ms != NULL ? " slices" : " slice");
	n = cJSON_GetArraySize(a);
	argv = xcalloc((size_t)n + 1, sizeof *argv);
	for (i = 0; i < n; i++)
		argv[i] = cJSON_GetArrayItem(a, i)->valuestring;
	optind = 0;
	rc = cmd_dispatch(NULL, ctx, n, argv, err);
	free(argv);
	cJSON_Delete(a);
	return rc;
}

/* Delete queued resource name with its nodes (force) and wait. */
static int
delete_qr(struct tpu_ctx *ctx, struct tpucmd *tc, const char *name,
    const char *cause, struct tpu_err *err)
{
	static const struct tpucmd_delete d = {
		.kind = "queued resource",
		.collection = "queuedResources",
		.query = "force=true",
	};
	char *argv[1];

	argv[0] = (char *)name;
	log_warn("deleting queued resource '%s' in %s with its nodes (%s), "
	         "so it holds no quota",
	    name, tc->zone, cause);
	return tpucmd_delete_each(ctx, tc, &d, 1, argv, 0, 0, err);
}

/*
 * Whether node name is lost now (PREEMPTED, TERMINATED or gone): its
 * cause in cause, else NULL.  A failed read is not a loss.
 */
static const char *
node_lost(struct tpucmd *tc, const char *name, char *cause, size_t n)
{
	struct tpu_err e;
	cJSON *node = NULL;
	const char *st;

	tpu_err_init(&e);
	if (read_node(tc, name, &node, &e) != 0)
		return NULL;
	st = node != NULL ? json_opt_string(node, "state", "?") : "gone";
	if (node == NULL || strcmp(st, "PREEMPTED") == 0 ||
	    strcmp(st, "TERMINATED") == 0)
		snprintf(cause, n, "node %s is %s", name, st);
	else
		cause = NULL;
	cJSON_Delete(node);
	return cause;
}

int
recover_qr_lost_now(
    struct tpucmd *tc, const struct jobcmd *jc, char *cause, size_t n)
{
	struct tpu_err e;
	cJSON *qr = NULL;
	int lost = 0;

	tpu_err_init(&e);
	if (read_qr(tc, jc->spec.slice, &qr, &e) == 0)
		lost = qr_lost(tc, jc, jc->spec.slice, qr, cause, n) != NULL;
	cJSON_Delete(qr);
	return lost;
}

int
recover_delete_qr(struct tpu_ctx *ctx, struct tpucmd *tc, const char *name,
    const char *cause, struct tpu_err *err)
{
	return delete_qr(ctx, tc, name, cause, err);
}

int
recover_lost_check(struct jobcmd *jc, void *arg)
{
	struct recover *r = arg;
	struct tpucmd tc;
	struct tpu_err e;
	cJSON *qr = NULL;
	const char *lost = NULL;

	tpu_err_init(&e);
	if (jc->ctx == NULL || tpucmd_open(jc->ctx, &tc, &e) != 0)
		return 0;
	if (r->qr_name == NULL)
		lost = node_lost(
		    &tc, jc->spec.slice, r->lost_cause, sizeof r->lost_cause);
	else if (read_qr(&tc, r->qr_name, &qr, &e) == 0)
		lost = qr_lost(&tc, jc, r->qr_name, qr, r->lost_cause,
		    sizeof r->lost_cause);
	cJSON_Delete(qr);
	tpucmd_close(&tc);
	if (lost != NULL)
		log_warn("job %s: %s: the attempt ends now, on every worker",
		    jc->spec.name, lost);
	return lost != NULL;
}

void
recover_end_attempt(struct tpu_ctx *ctx, struct jobcmd *jc, struct recover *r)
{
	size_t i, n = jc->sc.ntargets, nrun = 0;
	unsigned char *mask = xcalloc(n > 0 ? n : 1, 1);
	struct tpucmd tc;
	struct tpu_err e;
	char cause[sizeof r->lost_cause];
	int sl, ok;

	/* the workers of a lost slice: drained (the notice may have them
	   saving a checkpoint); of a multislice, a node still READY is not
	   lost: its workers are cancelled below */
	tpu_err_init(&e);
	ok = jc->sc.qr && tpucmd_open(ctx, &tc, &e) == 0;
	for (sl = 0; sl < jc->spec.nslices; sl++) {
		int gone = !ok || node_lost(&tc, jc->spec.nodes[sl], cause,
		                      sizeof cause) != NULL;

		for (i = 0; i < n; i++)
			if (!jc->sc.qr || jc->who[i].slice == sl ||
			    strcmp(jc->who[i].node, jc->spec.nodes[sl]) == 0)
				mask[i] |= (unsigned char)gone;
	}
	if (ok)
		tpucmd_close(&tc);
	drain_job(ctx, jc, mask);
	r->drained = 1;
	for (i = 0; i < n; i++) {
		if (!mask[i] && !jobs_state_final(jobcmd_state(jc, i)))
			nrun++;
		mask[i] = 0;
	}
	if (nrun > 0) {
		log_warn("job %s: cancelling it on the %zu worker%s of the "
		         "slices not lost: the whole job restarts together",
		    jc->spec.name, nrun, nrun == 1 ? "" : "s");
		jobcmd_cancel(jc, 10);
	}
	free(mask);
}

int
recover_start(struct tpu_ctx *ctx, struct recover *r, struct jobcmd *jc,
    struct tpu_err *err)
{
	struct tpucmd tc;
	cJSON *qr = NULL;
	const char *owner = NULL;
	int rc;

	if (r->max < 0 || r->desc != NULL || r->qr_desc != NULL)
		return 0;
	if (!jc->sc.qr) {
		const cJSON *node = sshcmd_slice_of(&jc->sc, 0)->node;

		/* the API says what the node is: one a queued resource made
		   is recovered with it (deleting the node alone would leave
		   the queued resource SUSPENDED, holding quota) */
		owner = json_opt_string(node, "queuedResource", NULL);
		if (owner == NULL || *tpuapi_basename(owner) == '\0') {
			r->desc = cJSON_Duplicate(node, 1);
			return 0;
		}
		r->qr_name = xstrdup(tpuapi_basename(owner));
		log_info("job %s: node '%s' belongs to queued resource '%s': "
		         "recovered as the queued resource",
		    jc->spec.name, jc->spec.slice, r->qr_name);
	} else
		r->qr_name = xstrdup(jc->spec.slice);
	if ((rc = tpucmd_open(ctx, &tc, err)) != 0)
		return rc;
	rc = read_qr(&tc, r->qr_name, &qr, err);
	tpucmd_close(&tc);
	if (rc == 0 && qr == NULL)
		rc = tpu_error(err, TPU_E_NOTFOUND,
		    "--max-restarts: queued resource '%s' is gone", r->qr_name);
	r->qr_desc = qr;
	return rc;
}

/* After a recreation with --zones: the zone the queued resource is in
 * now (a copy), else NULL. */
static char *
qr_zone_now(struct tpucmd *tc, const struct recover *r, const char *name)
{
	const char *keep = tc->zone;
	const cJSON *z;
	char *found = NULL;

	cJSON_ArrayForEach(z, r->zones)
	{
		struct tpu_err e;
		cJSON *qr = NULL;

		tpu_err_init(&e);
		tc->zone = z->valuestring;
		if (read_qr(tc, name, &qr, &e) == 0 && qr != NULL) {
			found = xstrdup(z->valuestring);
			cJSON_Delete(qr);
			break;
		}
	}
	tc->zone = keep;
	return found;
}

/*
 * Recreate the lost slice with the same spec: a node (recreate_node_zones)
 * or a queued resource (recreate_qr), its own zone first, then the other
 * zones of --zones.  When it lands in another zone, that zone becomes
 * the job's; the zone it is in becomes the command's (compute/zone).
 */
static int
recreate_slice(struct tpu_ctx *ctx, struct tpucmd *tc, struct jobcmd *jc,
    struct recover *r, int is_qr, struct tpu_err *err)
{
	cJSON *order = zone_order(tc, r);
	const char *landed = NULL;
	char *z = NULL;
	int rc;

	if (is_qr) {
		rc = recreate_qr(ctx, tc, r->qr_name, r->qr_desc, order, err);
		if (rc == 0)
			z = r->zones != NULL ? qr_zone_now(tc, r, r->qr_name)
			                     : xstrdup(tc->zone);
	} else {
		rc = recreate_node_zones(ctx, tc, jc, r, order, &landed, err);
		if (rc == 0 && landed != NULL)
			z = xstrdup(landed);
	}
	if (z != NULL) {
		if (strcmp(z, tc->zone) != 0) {
			log_warn(
			    "job %s: %s '%s' moved from %s to %s (--zones)",
			    jc->spec.name, is_qr ? "queued resource" : "node",
			    is_qr ? r->qr_name : jc->spec.slice, tc->zone, z);
			free(jc->spec.zone);
			jc->spec.zone = xstrdup(z);
		}
		config_set_flag(ctx->cfg, "compute/zone", z);
	}
	free(z);
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
	cJSON *node = NULL, *qr = NULL;
	int is_qr = r->qr_name != NULL;
	const char *lost = NULL, *kind = is_qr ? "queued resource" : "node";
	char qcause[sizeof r->cause];
	int rc;

	/* a stop of jobcmd's own (a refresh) is not the user's */
	if (*r->signal != 0)
		return 0;
	*r->abort = 0;
	tpu_err_init(&e);
	if ((rc = tpucmd_open(ctx, &tc, &e)) != 0) {
		log_warn("job %s: cannot read %s '%s': %s", jc->spec.name, kind,
		    jc->spec.slice, e.msg);
		return 0;
	}
	rc = is_qr ? read_qr(&tc, r->qr_name, &qr, &e)
	           : read_node(&tc, jc->spec.slice, &node, &e);
	if (rc != 0) {
		log_warn("job %s: cannot read %s '%s': %s", jc->spec.name, kind,
		    is_qr ? r->qr_name : jc->spec.slice, e.msg);
		tpucmd_close(&tc);
		return 0;
	}
	memset(&in, 0, sizeof in);
	in.node = jc->spec.slice;
	if (is_qr) {
		/* a lost slice is a lost queued resource: all of it again */
		lost = qr_lost(&tc, jc, r->qr_name, qr, qcause, sizeof qcause);
		in.node_state = lost != NULL ? "PREEMPTED" : "READY";
	} else
		in.node_state = node != NULL
		                    ? json_opt_string(node, "state", "UNKNOWN")
		                    : NULL;
	in.states = jc->states;
	in.n = (size_t)jc->spec.nslices * (size_t)jc->spec.nworkers;
	in.restarts = jc->spec.restart_count;
	in.max_restarts = r->max;
	in.on_failure = r->on_failure;
	what = jobs_restart_decide(&in, r->cause, sizeof r->cause);
	if (lost != NULL && what != JOBS_RESTART_NONE)
		snprintf(r->cause, sizeof r->cause, "%s", lost);
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
	log_warn("job %s: attempt %d ended: %s; restart %d of %d%s%s",
	    jc->spec.name, jc->spec.restart_count + 1, r->cause,
	    jc->spec.restart_count + 1, r->max,
	    what == JOBS_RESTART_RECREATE ? ", recreating the " : "",
	    what == JOBS_RESTART_RECREATE ? kind : "");
	if (what == JOBS_RESTART_RERUN)
		clear_job(jc);
	else if (lost != NULL ||
	         (node != NULL && strcmp(in.node_state, "PREEMPTED") == 0)) {
		if (!r->drained)
			drain_job(ctx, jc, NULL);
	}
	r->drained = 0;
	/* those rounds may stop themselves for a refresh (a stale cached
	 * description: workers gone) by setting the abort flag */
	jc->want_refresh = 0;
	if (*r->signal == 0)
		*r->abort = 0;
	jobcmd_detach(jc);
	recover_keep_attempt_logs(jc, jc->spec.restart_count);
	if (*r->signal != 0) {
		rc = tpu_error(err,
		    *r->signal == SIGTERM ? TPU_E_TERMINATED
		                          : TPU_E_INTERRUPTED,
		    "job %s: interrupted before restart %d", jc->spec.name,
		    jc->spec.restart_count + 1);
		goto out;
	}
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
	if (what == JOBS_RESTART_RECREATE && qr != NULL) {
		cJSON_Delete(r->qr_desc);
		r->qr_desc = cJSON_Duplicate(qr, 1);
		*r->recovering = 1;
		rc = delete_qr(ctx, &tc, r->qr_name, r->cause, err);
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
		rc = recreate_slice(ctx, &tc, jc, r, is_qr, err);
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
	cJSON_Delete(qr);
	tpucmd_close(&tc);
	return rc;
}
