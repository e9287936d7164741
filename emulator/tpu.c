/*
 * tpuctl-emulator's Cloud TPU API: the v2 and v2alpha1 routes (locations,
 * nodes, operations, acceleratorTypes, runtimeVersions, queuedResources),
 * the node and queued-resource state machines advanced by tpu_tick(),
 * long-running operations shaped like the recorded real ones
 * (api/samples/tpu_v2_node_crud.kcc_http.log), the lro-pending/lro-error
 * faults, node events (preempt, stockout, maintenance, worker faults) and
 * persistence under STATE_DIR/tpu/state.json.
 *
 * Resources are kept as cJSON trees exactly as they are served, plus
 * private "_" keys (due times, pending polls) that are stripped on the
 * way out.  Every handler runs with emu->lock held.
 */
#include <sys/stat.h>

#include <errno.h>
#include <stdint.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "crc32c.h"
#include "emu.h"
#include "fleet.h"
#include "json.h"
#include "md.h"
#include "offer.h"
#include "tpu_logic.h"
#include "util.h"
#include "validate.h"
#include "xmalloc.h"

#define PROJECT_NUMBER "123456789012"
#define STATE_CAP (256 << 20)

struct tpu_state {
	cJSON *nodes;      /* name -> Node */
	cJSON *ops;        /* name -> Operation */
	cJSON *qrs;        /* name -> QueuedResource */
	cJSON *stockouts;  /* zones out of capacity */
	cJSON *project_md; /* the project's commonInstanceMetadata, key ->
	                    * value (event project-metadata) */
	char *path;        /* STATE_DIR/tpu/state.json */
	int dirty;
};

static struct tpu_state *
S(struct emu *e)
{
	return e->tpu;
}

/* Small cJSON helpers. */

static cJSON *
jget(const cJSON *o, const char *k)
{
	return cJSON_GetObjectItemCaseSensitive(o, k);
}

static const char *
jstr(const cJSON *o, const char *k)
{
	const cJSON *v = jget(o, k);

	return cJSON_IsString(v) ? v->valuestring : "";
}

static long long
jnum(const cJSON *o, const char *k, long long dflt)
{
	const cJSON *v = jget(o, k);

	return cJSON_IsNumber(v) ? (long long)v->valuedouble : dflt;
}

static void
jset(cJSON *o, const char *k, cJSON *v)
{
	if (jget(o, k) != NULL)
		cJSON_ReplaceItemInObjectCaseSensitive(o, k, v);
	else
		cJSON_AddItemToObject(o, k, v);
}

static void
jset_str(cJSON *o, const char *k, const char *v)
{
	jset(o, k, cJSON_CreateString(v));
}

static void
jset_num(cJSON *o, const char *k, long long v)
{
	jset(o, k, cJSON_CreateNumber((double)v));
}

static void
jdel(cJSON *o, const char *k)
{
	cJSON_DeleteItemFromObjectCaseSensitive(o, k);
}

static void
now_str(char *buf, size_t len)
{
	emu_rfc3339(buf, len, emu_wall_ms());
}

/* The region of a zone: "us-central2-b" -> "us-central2". */
static void
region_of(const char *zone, char *out, size_t outlen)
{
	const char *dash = strrchr(zone, '-');
	size_t n = dash != NULL ? (size_t)(dash - zone) : strlen(zone);

	snprintf(out, outlen, "%.*s", (int)n, zone);
}

/* Persistence. */

static void
save(struct emu *e)
{
	struct tpu_state *s = S(e);
	cJSON *root = cJSON_CreateObject();
	char *text = NULL, *tmp = NULL, *dir = NULL;
	size_t len;
	int fd = -1;

	cJSON_AddItemReferenceToObject(root, "nodes", s->nodes);
	cJSON_AddItemReferenceToObject(root, "operations", s->ops);
	cJSON_AddItemReferenceToObject(root, "queuedResources", s->qrs);
	cJSON_AddItemReferenceToObject(root, "stockouts", s->stockouts);
	cJSON_AddItemReferenceToObject(root, "projectMetadata", s->project_md);
	text = cJSON_PrintUnformatted(root);
	dir = emu_state_path(e, "tpu");
	if (mkdir(dir, 0700) != 0 && errno != EEXIST)
		goto out;
	tmp = xasprintf("%s.tmp", s->path);
	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0)
		goto out;
	len = strlen(text);
	if (write(fd, text, len) != (ssize_t)len || fsync(fd) != 0) {
		unlink(tmp);
		goto out;
	}
	close(fd);
	fd = -1;
	if (rename(tmp, s->path) != 0)
		unlink(tmp);
	s->dirty = 0;
out:
	if (fd >= 0)
		close(fd);
	cJSON_Delete(root);
	cJSON_free(text);
	free(tmp);
	free(dir);
}

static cJSON *
load_file(const char *path)
{
	struct tpu_err err;
	cJSON *root = NULL;
	char *data = NULL;
	size_t len = 0, cap = 0;
	ssize_t n;
	int fd;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return NULL;
	for (;;) {
		if (len + 65536 > cap) {
			cap = cap * 2 + 65536;
			if (cap > STATE_CAP)
				goto out;
			data = xrealloc(data, cap);
		}
		n = read(fd, data + len, cap - len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		len += (size_t)n;
	}
	root = json_parse(data, len, "tpu state", &err);
out:
	close(fd);
	free(data);
	return root;
}

/* Stockouts. */

static int
stocked_out(struct emu *e, const char *zone)
{
	const cJSON *it;

	cJSON_ArrayForEach(it, S(e)->stockouts)
	{
		if (cJSON_IsString(it) && strcmp(it->valuestring, zone) == 0)
			return 1;
	}
	return 0;
}

static unsigned long long
random_eid(void)
{
	char hex[17];

	emu_random_hex(hex, 16);
	return strtoull(hex, NULL, 16);
}

/* Operations. */

static const char *
zone_of_name(const char *name, char *out, size_t outlen)
{
	const char *p = strstr(name, "/locations/");
	size_t n;

	out[0] = '\0';
	if (p == NULL)
		return out;
	p += 11;
	n = strcspn(p, "/");
	snprintf(out, outlen, "%.*s", (int)n, p);
	return out;
}

/*
 * A new operation on target: name operation-<ms>-<hex>, metadata like
 * the recorded ones, no "done" key.  Returns the stored operation.
 */
static cJSON *
op_new(struct emu *e, enum tpu_api api, const char *project, const char *zone,
    const char *verb, const char *kind, const char *target, long long due)
{
	char name[256], h1[14], h2[9], h3[9], ts[64];
	cJSON *op = cJSON_CreateObject(), *md;

	emu_random_hex(h1, 13);
	emu_random_hex(h2, 8);
	emu_random_hex(h3, 8);
	snprintf(name, sizeof name,
	    "projects/%s/locations/%s/operations/operation-%lld-%s-%s-%s",
	    project, zone, (long long)emu_wall_ms(), h1, h2, h3);
	now_str(ts, sizeof ts);
	md = cJSON_AddObjectToObject(op, "metadata");
	cJSON_AddStringToObject(md, "@type",
	    "type.googleapis.com/google.cloud.common.OperationMetadata");
	cJSON_AddStringToObject(md, "apiVersion", tpu_api_name(api));
	cJSON_AddStringToObject(md, "createTime", ts);
	cJSON_AddStringToObject(md, "target", target);
	cJSON_AddStringToObject(md, "verb", verb);
	cJSON_AddStringToObject(op, "name", name);
	cJSON_AddStringToObject(op, "_kind", kind);
	cJSON_AddNumberToObject(op, "_due", (double)due);
	cJSON_AddNumberToObject(op, "_pending", 0);
	cJSON_AddNumberToObject(op, "_api", api);
	cJSON_AddItemToObject(S(e)->ops, name, op);
	S(e)->dirty = 1;
	return op;
}

/* Apply an lro-pending or lro-error fault spec to op. */
static void
op_apply_fault(struct emu *e, struct emu_req *req, cJSON *op)
{
	const char *spec = emu_fault_spec(req, "lro-");
	char zone[64], msg[512];
	cJSON *err;
	long n = 0;

	switch (tpu_lro_spec(spec, &n)) {
	case TPU_LRO_PENDING:
		jset_num(op, "_pending", n);
		break;
	case TPU_LRO_ERROR:
		zone_of_name(jstr(op, "name"), zone, sizeof zone);
		tpu_op_error_message(
		    (int)n, zone, random_eid(), msg, sizeof msg);
		err = cJSON_CreateObject();
		cJSON_AddNumberToObject(err, "code", (double)n);
		cJSON_AddStringToObject(err, "message", msg);
		jset(op, "_error", err);
		break;
	case TPU_LRO_NONE:
		return;
	}
	S(e)->dirty = 1;
}

/*
 * lro-pending on a poll of a finished operation: hide the result again
 * for the next polls (the client must keep polling).
 */
static void
op_unpromote(cJSON *op)
{
	cJSON *final = cJSON_CreateObject(), *it;

	it = cJSON_DetachItemFromObjectCaseSensitive(op, "error");
	if (it != NULL)
		cJSON_AddItemToObject(final, "error", it);
	it = cJSON_DetachItemFromObjectCaseSensitive(op, "response");
	if (it != NULL)
		cJSON_AddItemToObject(final, "response", it);
	jdel(op, "done");
	jdel(jget(op, "metadata"), "endTime");
	jset(op, "_final", final);
}

/* Make a completed operation visible when no pending polls are left. */
static void
op_promote(cJSON *op)
{
	cJSON *final = jget(op, "_final"), *it;
	char ts[64];

	if (final == NULL || jnum(op, "_pending", 0) != 0 ||
	    jget(op, "done") != NULL)
		return;
	now_str(ts, sizeof ts);
	jset_str(jget(op, "metadata"), "endTime", ts);
	cJSON_AddBoolToObject(op, "done", 1);
	it = cJSON_DetachItemFromObjectCaseSensitive(final, "error");
	if (it != NULL)
		cJSON_AddItemToObject(op, "error", it);
	it = cJSON_DetachItemFromObjectCaseSensitive(final, "response");
	if (it != NULL)
		cJSON_AddItemToObject(op, "response", it);
	jdel(op, "_final");
}

/* The work of op is over: response (consumed) or error. */
static void
op_complete(
    struct emu *e, cJSON *op, cJSON *response, int code, const char *msg)
{
	cJSON *final = cJSON_CreateObject(), *err;

	if (response != NULL)
		cJSON_AddItemToObject(final, "response", response);
	else {
		err = cJSON_CreateObject();
		cJSON_AddNumberToObject(err, "code", code);
		cJSON_AddStringToObject(err, "message", msg);
		cJSON_AddItemToObject(final, "error", err);
	}
	jset(op, "_final", final);
	op_promote(op);
	S(e)->dirty = 1;
}

static cJSON *
empty_response(void)
{
	cJSON *r = cJSON_CreateObject();

	cJSON_AddStringToObject(
	    r, "@type", "type.googleapis.com/google.protobuf.Empty");
	return r;
}

/* Nodes. */

static int
node_api(const cJSON *node)
{
	return (int)jnum(node, "_api", TPU_API_V2);
}

/*
 * The health of a READY node, from the emulator's view of it: an
 * ongoing maintenance event -> UNHEALTHY_MAINTENANCE ("under
 * maintenance ... will resume running once rescheduled"); a worker
 * whose sshd is down (worker-down or blackhole event, or the sshd
 * died) -> TIMEOUT ("the resource is unresponsive"); else HEALTHY.
 * Other states keep what they have.
 */
static void
node_health(struct emu *e, cJSON *node)
{
	const char *h = "HEALTHY", *desc = NULL;

	if (strcmp(jstr(node, "state"), "READY") != 0)
		return;
	if (cJSON_IsTrue(jget(node, "_maintenance"))) {
		h = "UNHEALTHY_MAINTENANCE";
		desc = "The node is under maintenance and will resume running "
		       "once rescheduled.";
	} else if (cJSON_IsTrue(jget(node, "_fleet")) &&
	           !fleet_node_ready(e, jstr(node, "name"))) {
		h = "TIMEOUT";
		desc = "One or more TPU workers are unresponsive.";
	}
	jset(node, "health", cJSON_CreateString(h));
	if (desc != NULL)
		jset(node, "healthDescription", cJSON_CreateString(desc));
	else
		jdel(node, "healthDescription");
}

/* Refresh networkEndpoints (and health) from the fleet. */
static void
node_endpoints(struct emu *e, cJSON *node)
{
	struct fleet_worker_info *w;
	cJSON *eps, *ep, *ac;
	int n, cap, i, ext;

	node_health(e, node);
	if (!cJSON_IsTrue(jget(node, "_fleet")))
		return;
	/* The count first: a node may have up to 4096 workers, and
	 * fleet_node_workers fills at most max. */
	n = fleet_node_workers(e, jstr(node, "name"), NULL, 0);
	if (n <= 0)
		return;
	cap = n;
	w = xcalloc((size_t)cap, sizeof *w);
	n = fleet_node_workers(e, jstr(node, "name"), w, cap);
	if (n <= 0)
		goto out;
	if (n > cap)
		n = cap;
	ext = cJSON_IsTrue(json_path(node, "networkConfig.enableExternalIps"));
	eps = cJSON_CreateArray();
	for (i = 0; i < n; i++) {
		ep = cJSON_CreateObject();
		ac = cJSON_AddObjectToObject(ep, "accessConfig");
		if (ext)
			cJSON_AddStringToObject(ac, "externalIp", w[i].addr);
		cJSON_AddStringToObject(ep, "ipAddress", w[i].addr);
		cJSON_AddNumberToObject(ep, "port", 8470);
		cJSON_AddItemToArray(eps, ep);
	}
	jset(node, "networkEndpoints", eps);
out:
	free(w);
}

/* The workers' metadata listeners (one address each, see emu.h). */
static void
node_md_listen(struct emu *e, const cJSON *node)
{
	int max = (int)jnum(node, "_workers", 1), n, i;
	struct fleet_worker_info *w = xcalloc((size_t)max, sizeof *w);

	n = fleet_node_workers(e, jstr(node, "name"), w, max);
	for (i = 0; i < n && i < max; i++)
		emu_md_listen(e, jstr(node, "name"), i, w[i].addr);
	free(w);
}

/*
 * The metadata a node's guest sees: its own, and the project's
 * enable-oslogin when the node does not set the key (the guest agent's
 * rule: instance metadata first, then the project's).  Caller frees.
 */
static cJSON *
guest_metadata(struct emu *e, const cJSON *md)
{
	cJSON *g = md != NULL ? cJSON_Duplicate(md, 1) : cJSON_CreateObject();
	const cJSON *pv = cJSON_GetObjectItemCaseSensitive(
	    S(e)->project_md, "enable-oslogin");

	if (cJSON_GetObjectItemCaseSensitive(g, "enable-oslogin") == NULL &&
	    cJSON_IsString(pv))
		cJSON_AddStringToObject(g, "enable-oslogin", pv->valuestring);
	return g;
}

static int
node_fleet_create(struct emu *e, cJSON *node, char *msg, size_t msglen)
{
	cJSON *g = guest_metadata(e, jget(node, "metadata"));
	int rc;

	rc = fleet_node_create(e, jstr(node, "name"), jstr(node, "id"),
	    (int)jnum(node, "_workers", 1), jstr(node, "acceleratorType"), g,
	    msg, msglen);
	cJSON_Delete(g);
	if (rc != 0)
		return -1;
	jset(node, "_fleet", cJSON_CreateTrue());
	node_md_listen(e, node);
	return 0;
}

static void
node_set_state(struct emu *e, cJSON *node, const char *state)
{
	jset_str(node, "state", state);
	S(e)->dirty = 1;
}

/* A copy of node for a reply. */
static cJSON *
node_render(const cJSON *node, int as_response)
{
	cJSON *out = cJSON_Duplicate(node, 1);

	tpu_strip_private(out);
	if (as_response) {
		/* "@type" first, as Google prints it. */
		cJSON *r = cJSON_CreateObject(), *it;

		cJSON_AddStringToObject(r, "@type",
		    node_api(node) == TPU_API_V2ALPHA1
		        ? "type.googleapis.com/google.cloud.tpu.v2alpha1.Node"
		        : "type.googleapis.com/google.cloud.tpu.v2.Node");
		while ((it = out->child) != NULL) {
			cJSON_DetachItemViaPointer(out, it);
			cJSON_AddItemToObject(r, it->string, it);
		}
		cJSON_Delete(out);
		out = r;
	}
	return out;
}

static void
node_remove(struct emu *e, const char *name)
{
	cJSON *node = jget(S(e)->nodes, name);

	if (node == NULL)
		return;
	if (cJSON_IsTrue(jget(node, "_fleet")))
		fleet_node_delete(e, name);
	emu_md_unlisten(e, name);
	cJSON_DeleteItemFromObjectCaseSensitive(S(e)->nodes, name);
	S(e)->dirty = 1;
}

/*
 * Set key to a full resource name: value when it already is one, else
 * prefix + (value or "default").
 */
static void
add_resource(cJSON *obj, const char *key, const char *value, char *prefix)
{
	char *full;

	if (strchr(value, '/') != NULL)
		cJSON_AddStringToObject(obj, key, value);
	else {
		full = xasprintf(
		    "%s%s", prefix, *value != '\0' ? value : "default");
		cJSON_AddStringToObject(obj, key, full);
		free(full);
	}
	free(prefix);
}

/* Build a stored Node from a validated body. */
static cJSON *
node_build(struct emu *e, enum tpu_api api, const char *project,
    const char *zone, const char *id, cJSON *body, int nworkers)
{
	static const char *const keep[] = { "acceleratorType",
		"acceleratorConfig", "runtimeVersion", "description", "labels",
		"metadata", "tags", "schedulingConfig", "dataDisks",
		"shieldedInstanceConfig", "cidrBlock", "autocheckpointEnabled",
		"bootDiskConfig" };
	char name[256], ts[64], region[64], num[24];
	cJSON *node = cJSON_CreateObject(), *nc, *sa, *v, *sc, *it, *next;
	const cJSON *given;
	size_t i;

	snprintf(name, sizeof name, "projects/%s/locations/%s/nodes/%s",
	    project, zone, id);
	now_str(ts, sizeof ts);
	region_of(zone, region, sizeof region);
	for (i = 0; i < nitems(keep); i++) {
		v = jget(body, keep[i]);
		if (v != NULL)
			cJSON_AddItemToObject(
			    node, keep[i], cJSON_Duplicate(v, 1));
	}
	cJSON_AddStringToObject(
	    node, "apiVersion", api == TPU_API_V2ALPHA1 ? "V2_ALPHA1" : "V2");
	if (jget(node, "cidrBlock") == NULL)
		cJSON_AddStringToObject(node, "cidrBlock", "10.130.0.0/20");
	cJSON_AddStringToObject(node, "createTime", ts);
	cJSON_AddStringToObject(node, "health", "HEALTHY");
	emu_random_hex(num, 16);
	snprintf(num, sizeof num, "%llu",
	    (strtoull(num, NULL, 16) % 9000000000000000000ULL) +
	        1000000000000000000ULL);
	cJSON_AddStringToObject(node, "id", num);
	cJSON_AddStringToObject(node, "name", name);
	/* networkConfig: full resource names, as the real API returns. */
	nc = cJSON_CreateObject();
	given = jget(body, "networkConfig");
	v = cJSON_CreateBool(cJSON_IsTrue(jget(given, "enableExternalIps")));
	if (cJSON_IsTrue(v))
		cJSON_AddItemToObject(nc, "enableExternalIps", v);
	else
		cJSON_Delete(v);
	if (cJSON_IsTrue(jget(given, "canIpForward")))
		cJSON_AddBoolToObject(nc, "canIpForward", 1);
	if (cJSON_IsNumber(jget(given, "queueCount")))
		cJSON_AddNumberToObject(
		    nc, "queueCount", jget(given, "queueCount")->valuedouble);
	add_resource(nc, "network", jstr(given, "network"),
	    xasprintf("projects/%s/global/networks/", project));
	add_resource(nc, "subnetwork", jstr(given, "subnetwork"),
	    xasprintf("projects/%s/regions/%s/subnetworks/", project, region));
	cJSON_AddItemToObject(node, "networkConfig", nc);
	if (cJSON_IsObject(jget(body, "serviceAccount")) &&
	    jstr(jget(body, "serviceAccount"), "email")[0] != '\0')
		cJSON_AddItemToObject(node, "serviceAccount",
		    cJSON_Duplicate(jget(body, "serviceAccount"), 1));
	else {
		sa = cJSON_AddObjectToObject(node, "serviceAccount");
		cJSON_AddStringToObject(sa, "email",
		    PROJECT_NUMBER "-compute@developer.gserviceaccount.com");
		v = cJSON_AddArrayToObject(sa, "scope");
		cJSON_AddItemToArray(
		    v, cJSON_CreateString(
		           "https://www.googleapis.com/auth/cloud-platform"));
	}
	/* proto3 JSON leaves false booleans out: {} when nothing is set. */
	sc = jget(node, "schedulingConfig");
	if (sc == NULL)
		sc = cJSON_AddObjectToObject(node, "schedulingConfig");
	for (it = sc->child; it != NULL; it = next) {
		next = it->next;
		if (cJSON_IsFalse(it))
			cJSON_Delete(cJSON_DetachItemViaPointer(sc, it));
	}
	if (jget(node, "shieldedInstanceConfig") == NULL)
		cJSON_AddObjectToObject(node, "shieldedInstanceConfig");
	cJSON_AddStringToObject(node, "state", "CREATING");
	cJSON_AddNumberToObject(node, "_workers", nworkers);
	cJSON_AddNumberToObject(node, "_api", api);
	(void)e;
	return node;
}

/* Queued resources. */

static void
qr_set_state(struct emu *e, cJSON *qr, const char *state, cJSON *data)
{
	static const struct {
		const char *state, *key;
	} keys[] = {
		{ "ACCEPTED", "acceptedData" },
		{ "PROVISIONING", "provisioningData" },
		{ "FAILED", "failedData" },
		{ "DELETING", "deletingData" },
		{ "ACTIVE", "activeData" },
		{ "SUSPENDING", "suspendingData" },
		{ "SUSPENDED", "suspendedData" },
		{ "CREATING", "creatingData" },
	};
	cJSON *st = cJSON_CreateObject();
	size_t i;

	cJSON_AddStringToObject(st, "state", state);
	for (i = 0; i < nitems(keys); i++) {
		if (strcmp(keys[i].state, state) == 0) {
			cJSON_AddItemToObject(st, keys[i].key,
			    data != NULL ? data : cJSON_CreateObject());
			data = NULL;
		}
	}
	cJSON_Delete(data);
	if (strcmp(state, "DELETING") == 0 || strcmp(state, "ACCEPTED") == 0)
		cJSON_AddStringToObject(st, "stateInitiator", "USER");
	else if (strcmp(state, "SUSPENDED") == 0 ||
	         strcmp(state, "FAILED") == 0)
		cJSON_AddStringToObject(st, "stateInitiator", "SERVICE");
	jset(qr, "state", st);
	S(e)->dirty = 1;
}

static const char *
qr_state(const cJSON *qr)
{
	return jstr(jget(qr, "state"), "state");
}

static cJSON *
qr_render(const cJSON *qr, int as_response)
{
	cJSON *out = cJSON_Duplicate(qr, 1);

	tpu_strip_private(out);
	if (as_response)
		cJSON_AddStringToObject(out, "@type",
		    (int)jnum(qr, "_api", 0) == TPU_API_V2ALPHA1
		        ? "type.googleapis.com/google.cloud.tpu.v2alpha1."
		          "QueuedResource"
		        : "type.googleapis.com/google.cloud.tpu.v2."
		          "QueuedResource");
	return out;
}

/* Nodes owned by queued resource qname. */
static int
qr_count_nodes(struct emu *e, const char *qname)
{
	const cJSON *n;
	int count = 0;

	cJSON_ArrayForEach(n, S(e)->nodes)
	{
		if (strcmp(jstr(n, "queuedResource"), qname) == 0)
			count++;
	}
	return count;
}

static void
qr_delete_nodes(struct emu *e, const char *qname)
{
	cJSON *n, *next;

	for (n = S(e)->nodes->child; n != NULL; n = next) {
		next = n->next;
		if (strcmp(jstr(n, "queuedResource"), qname) == 0)
			node_remove(e, jstr(n, "name"));
	}
}

/*
 * The node ids of a nodeSpec, with tpu.v2.json's default for the prefix:
 * "If this field is not provided we use queued_resource_id as the
 * node_id_prefix."  The stored spec stays as the client sent it.
 */
static cJSON *
qr_spec_node_ids(const cJSON *spec, enum tpu_api api, const char *qr_id,
    char *msg, size_t msglen)
{
	cJSON *copy = cJSON_Duplicate(spec, 1), *mp, *ids;

	mp = jget(
	    copy, api == TPU_API_V2 ? "multisliceParams" : "multiNodeParams");
	if (cJSON_IsObject(mp) && jget(mp, "nodeIdPrefix") == NULL)
		cJSON_AddStringToObject(mp, "nodeIdPrefix", qr_id);
	ids = tpu_qr_node_ids(copy, api, msg, msglen);
	cJSON_Delete(copy);
	return ids;
}

/* Create the nodes of a queued resource (PROVISIONING). */
static int
qr_provision(struct emu *e, cJSON *qr, char *msg, size_t msglen)
{
	const cJSON *spec, *id;
	cJSON *ids, *node;
	char project[128], zone[64];
	const char *qname = jstr(qr, "name");
	enum tpu_api api = (enum tpu_api)jnum(qr, "_api", TPU_API_V2);
	int nworkers, multi;

	sscanf(qname, "projects/%127[^/]/locations/%63[^/]/", project, zone);
	cJSON_ArrayForEach(spec, json_path(qr, "tpu.nodeSpec"))
	{
		ids = qr_spec_node_ids(
		    spec, api, strrchr(qname, '/') + 1, msg, msglen);
		if (ids == NULL)
			return -1;
		multi =
		    jget(spec, api == TPU_API_V2 ? "multisliceParams"
		                                 : "multiNodeParams") != NULL;
		cJSON_ArrayForEach(id, ids)
		{
			cJSON *body = cJSON_Duplicate(jget(spec, "node"), 1);

			tpu_node_check(body, zone, &nworkers, msg, msglen);
			node = node_build(e, api, project, zone,
			    id->valuestring, body, nworkers);
			cJSON_Delete(body);
			cJSON_AddStringToObject(node, "queuedResource", qname);
			if (multi)
				cJSON_AddBoolToObject(
				    node, "multisliceNode", 1);
			cJSON_AddItemToObject(
			    S(e)->nodes, jstr(node, "name"), node);
			if (node_fleet_create(e, node, msg, msglen) != 0) {
				cJSON_Delete(ids);
				return -1;
			}
		}
		cJSON_Delete(ids);
	}
	S(e)->dirty = 1;
	return 0;
}

/* Replies. */

static int
reply(struct emu_req *req, int enum_int, cJSON *json)
{
	if (enum_int)
		tpu_enums_to_int(json);
	return emu_reply_json(req, 200, json);
}

/*
 * A copy of op for a reply.  The real API labels the metadata
 * google.cloud.common.OperationMetadata (as recorded), a type the
 * generated clients do not ship: @google-cloud/tpu's REST transport,
 * which is what asks for enum-encoding=int, refuses to decode it.  For
 * those clients the same fields go out as the API's own
 * google.cloud.tpu.<version>.OperationMetadata.
 */
static cJSON *
op_render(const cJSON *op, int gapic)
{
	cJSON *out = cJSON_Duplicate(op, 1);
	cJSON *md = jget(out, "metadata");

	if ((gapic || cJSON_IsTrue(jget(op, "_gapic"))) && md != NULL)
		jset_str(md, "@type",
		    (int)jnum(op, "_api", 0) == TPU_API_V2ALPHA1
		        ? "type.googleapis.com/google.cloud.tpu.v2alpha1."
		          "OperationMetadata"
		        : "type.googleapis.com/google.cloud.tpu.v2."
		          "OperationMetadata");
	tpu_strip_private(out);
	return out;
}

/*
 * 1 for Google's generated (gapic) clients: they ask for
 * enum-encoding=int, except on operation polls, where only their
 * x-goog-api-client header ("gax/... gapic/...") tells.
 */
static int
is_gapic(struct emu_req *req, int enum_int)
{
	const char *h = emu_header(req, "x-goog-api-client");

	return enum_int || (h != NULL && strstr(h, "gapic/") != NULL);
}

static int
reply_op(struct emu_req *req, int enum_int, cJSON *op)
{
	if (enum_int)
		jset(op, "_gapic", cJSON_CreateTrue());
	return reply(req, enum_int, op_render(op, is_gapic(req, enum_int)));
}

static int
not_found(struct emu_req *req, const char *name)
{
	return emu_reply_error(
	    req, 404, "NOT_FOUND", "Resource '%s' was not found", name);
}

/*
 * Page through items (an array, consumed) into {key: [...],
 * nextPageToken}.
 */
/*
 * nodes.list and queuedResources.list take only parent, pageSize and
 * pageToken (tpu.v2.json, v2alpha1): the API refuses any other query
 * parameter such as filter or orderBy (it never ignores it). 0, or 1
 * with the 400 sent.
 */
static int
refuse_list_params(struct emu_req *req)
{
	static const char *const unknown[] = { "filter", "orderBy", "order_by",
		"readMask" };
	size_t i;

	for (i = 0; i < nitems(unknown); i++) {
		if (emu_query(req, unknown[i]) == NULL)
			continue;
		emu_reply_error(req, 400, "INVALID_ARGUMENT",
		    "Invalid JSON payload received. Unknown name \"%s\": "
		    "Cannot bind query parameter. Field '%s' could not be "
		    "found in request message.",
		    unknown[i], unknown[i]);
		return 1;
	}
	return 0;
}

static int
reply_list(struct emu_req *req, int enum_int, const char *key, cJSON *items)
{
	const char *ps = emu_query(req, "pageSize");
	const char *pt = emu_query(req, "pageToken");
	const char *errstr = NULL;
	cJSON *out = cJSON_CreateObject(), *arr, *it;
	long long size = 0;
	long off = 0, i = 0, total = cJSON_GetArraySize(items);
	char token[32];

	if (ps != NULL && *ps != '\0')
		size = tpu_strtonum(ps, 0, 100000, &errstr);
	if (errstr != NULL) {
		cJSON_Delete(items);
		cJSON_Delete(out);
		return emu_reply_error(req, 400, "INVALID_ARGUMENT",
		    "Invalid value for page_size: \"%s\" (%s)", ps, errstr);
	}
	if (pt != NULL && *pt != '\0') {
		off = tpu_page_token_parse(pt);
		if (off < 0 || off > total) {
			cJSON_Delete(items);
			cJSON_Delete(out);
			return emu_reply_error(req, 400, "INVALID_ARGUMENT",
			    "Invalid page token \"%s\"", pt);
		}
	}
	arr = cJSON_AddArrayToObject(out, key);
	while ((it = items->child) != NULL) {
		cJSON_DetachItemViaPointer(items, it);
		if (i >= off && (size == 0 || i < off + size))
			cJSON_AddItemToArray(arr, it);
		else
			cJSON_Delete(it);
		i++;
	}
	if (size > 0 && off + size < total) {
		tpu_page_token((size_t)(off + size), token, sizeof token);
		cJSON_AddStringToObject(out, "nextPageToken", token);
	}
	/* An empty list is {} in proto3 JSON. */
	if (cJSON_GetArraySize(arr) == 0)
		jdel(out, key);
	cJSON_Delete(items);
	return reply(req, enum_int, out);
}

/* Routing context. */
struct call {
	struct emu *e;
	struct emu_req *req;
	struct tpu_path p;
	int enum_int;
	char parent[256]; /* projects/P/locations/Z */
	char name[512];   /* parent/coll/id */
};

static int
locations(struct call *c)
{
	const struct offer_zone *z;
	cJSON *items, *loc;
	char name[256];
	size_t i;

	if (strcmp(c->req->method, "GET") != 0)
		return emu_reply_error(c->req, 405, "INVALID_ARGUMENT",
		    "Method %s is not allowed here", c->req->method);
	if (c->p.zone[0] != '\0') {
		snprintf(name, sizeof name, "projects/%s/locations/%s",
		    c->p.project, c->p.zone);
		loc = cJSON_CreateObject();
		cJSON_AddStringToObject(loc, "locationId", c->p.zone);
		cJSON_AddStringToObject(loc, "name", name);
		return reply(c->req, c->enum_int, loc);
	}
	items = cJSON_CreateArray();
	for (i = 0; (z = offer_zone_at(i)) != NULL; i++) {
		snprintf(name, sizeof name, "projects/%s/locations/%s",
		    c->p.project, z->name);
		loc = cJSON_CreateObject();
		cJSON_AddStringToObject(loc, "locationId", z->name);
		cJSON_AddStringToObject(loc, "name", name);
		cJSON_AddItemToArray(items, loc);
	}
	return reply_list(c->req, c->enum_int, "locations", items);
}

static int
accel_types(struct call *c)
{
	const struct offer_zone *z = offer_zone_find(c->p.zone);
	const struct offer_gen *g;
	struct offer_accel a;
	cJSON *items, *at, *cfgs, *cfg;
	char name[512], topo[32], why[512];
	size_t gi, si, ti;
	int size;

	items = cJSON_CreateArray();
	for (gi = 0; (g = offer_gen_at(gi)) != NULL; gi++) {
		if (!offer_zone_has(z, g))
			continue;
		for (si = 0; (size = offer_size_at(g, si)) != 0; si++) {
			char type[32];

			snprintf(type, sizeof type, "%s-%d", g->name, size);
			if (offer_accel_parse(type, &a, why, sizeof why) != 0)
				continue;
			if (c->p.id[0] != '\0' && strcmp(c->p.id, type) != 0)
				continue;
			at = cJSON_CreateObject();
			cfgs = cJSON_AddArrayToObject(at, "acceleratorConfigs");
			for (ti = 0;
			     offer_topology_at(&a, ti, topo, sizeof topo) == 0;
			     ti++) {
				cfg = cJSON_CreateObject();
				cJSON_AddStringToObject(cfg, "topology", topo);
				cJSON_AddStringToObject(cfg, "type", g->config);
				cJSON_AddItemToArray(cfgs, cfg);
			}
			snprintf(name, sizeof name, "%s/acceleratorTypes/%s",
			    c->parent, type);
			cJSON_AddStringToObject(at, "name", name);
			cJSON_AddStringToObject(at, "type", type);
			cJSON_AddItemToArray(items, at);
		}
	}
	if (c->p.id[0] == '\0')
		return reply_list(
		    c->req, c->enum_int, "acceleratorTypes", items);
	at = cJSON_DetachItemFromArray(items, 0);
	cJSON_Delete(items);
	if (at == NULL)
		return not_found(c->req, c->name);
	return reply(c->req, c->enum_int, at);
}

static int
runtime_versions(struct call *c)
{
	const struct offer_zone *z = offer_zone_find(c->p.zone);
	const struct offer_gen *g;
	const char *rv;
	cJSON *items, *it;
	char name[512];
	size_t i, gi;

	items = cJSON_CreateArray();
	for (i = 0; (rv = offer_runtime_at(i)) != NULL; i++) {
		int offered = 0;

		for (gi = 0; (g = offer_gen_at(gi)) != NULL; gi++)
			offered |=
			    offer_zone_has(z, g) && offer_runtime_known(g, rv);
		if (!offered)
			continue;
		if (c->p.id[0] != '\0' && strcmp(c->p.id, rv) != 0)
			continue;
		it = cJSON_CreateObject();
		snprintf(
		    name, sizeof name, "%s/runtimeVersions/%s", c->parent, rv);
		cJSON_AddStringToObject(it, "name", name);
		cJSON_AddStringToObject(it, "version", rv);
		cJSON_AddItemToArray(items, it);
	}
	if (c->p.id[0] == '\0')
		return reply_list(
		    c->req, c->enum_int, "runtimeVersions", items);
	it = cJSON_DetachItemFromArray(items, 0);
	cJSON_Delete(items);
	if (it == NULL)
		return not_found(c->req, c->name);
	return reply(c->req, c->enum_int, it);
}

/* 1 when name belongs to the request's parent (or "-" for any zone). */
static int
in_parent(const struct call *c, const char *name)
{
	char prefix[300];

	if (strcmp(c->p.zone, "-") == 0) {
		snprintf(prefix, sizeof prefix, "projects/%s/locations/",
		    c->p.project);
		return tpu_startswith(name, prefix);
	}
	snprintf(prefix, sizeof prefix, "%s/", c->parent);
	return tpu_startswith(name, prefix);
}

/*
 * A field of the other API version's schema in body (validate_api_fields):
 * 1 with Google's 400 sent, as its JSON transcoding answers an unknown
 * name: INVALID_ARGUMENT with a google.rpc.BadRequest detail naming the
 * message that lacks the field.  0 when the body is clean.
 */
static int
refuse_api_fields(struct call *c, const cJSON *body, enum validate_body kind)
{
	char at[128], msg[512];
	cJSON *root, *err, *d, *fv, *v;

	if (validate_api_fields(body, c->p.api == TPU_API_V2ALPHA1, kind, at,
	        sizeof at, msg, sizeof msg) == 0)
		return 0;
	root = cJSON_CreateObject();
	err = cJSON_AddObjectToObject(root, "error");
	cJSON_AddNumberToObject(err, "code", 400);
	cJSON_AddStringToObject(err, "message", msg);
	cJSON_AddStringToObject(err, "status", "INVALID_ARGUMENT");
	d = cJSON_CreateObject();
	cJSON_AddStringToObject(
	    d, "@type", "type.googleapis.com/google.rpc.BadRequest");
	fv = cJSON_AddArrayToObject(d, "fieldViolations");
	v = cJSON_CreateObject();
	cJSON_AddStringToObject(v, "field", at);
	cJSON_AddStringToObject(v, "description", msg);
	cJSON_AddItemToArray(fv, v);
	cJSON_AddItemToArray(cJSON_AddArrayToObject(err, "details"), d);
	emu_reply_json(c->req, 400, root);
	return 1;
}

static int
nodes_create(struct call *c)
{
	struct emu *e = c->e;
	const char *id = emu_query(c->req, "nodeId");
	cJSON *body, *node, *op;
	char msg[1024], name[512];
	int nworkers = 1;

	if (id == NULL || *id == '\0')
		return emu_reply_error(c->req, 400, "INVALID_ARGUMENT",
		    "Field 'node_id' is required (query parameter nodeId)");
	if (validate_node_id(id, msg, sizeof msg) != 0)
		return emu_reply_error(c->req, 400, "INVALID_ARGUMENT",
		    "Invalid value for field 'node_id': %s", msg);
	snprintf(name, sizeof name, "%s/nodes/%s", c->parent, id);
	if (jget(S(e)->nodes, name) != NULL)
		return emu_reply_error(c->req, 409, "ALREADY_EXISTS",
		    "Resource '%s' already exists", name);
	body = emu_body_json(e, c->req);
	if (body == NULL)
		return 0;
	if (refuse_api_fields(c, body, VALIDATE_BODY_NODE)) {
		cJSON_Delete(body);
		return 0;
	}
	if (tpu_node_check(body, c->p.zone, &nworkers, msg, sizeof msg) != 0) {
		cJSON_Delete(body);
		return emu_reply_error(
		    c->req, 400, "INVALID_ARGUMENT", "%s", msg);
	}
	node = node_build(
	    e, c->p.api, c->p.project, c->p.zone, id, body, nworkers);
	cJSON_Delete(body);
	cJSON_AddItemToObject(S(e)->nodes, name, node);
	op = op_new(e, c->p.api, c->p.project, c->p.zone, "create", "create",
	    name, emu_wall_ms() + emu_opt_int(e, "tpu.create_ms", 1500));
	op_apply_fault(e, c->req, op);
	if (jget(op, "_error") == NULL && !stocked_out(e, c->p.zone) &&
	    node_fleet_create(e, node, msg, sizeof msg) != 0) {
		cJSON *ferr = cJSON_CreateObject();

		cJSON_AddNumberToObject(ferr, "code", 13);
		cJSON_AddStringToObject(ferr, "message", msg);
		jset(op, "_error", ferr);
	}
	save(e);
	return reply_op(c->req, c->enum_int, op);
}

static int
nodes_list(struct call *c)
{
	const cJSON *n;
	cJSON *items;

	if (refuse_list_params(c->req) != 0)
		return 0;
	items = cJSON_CreateArray();
	cJSON_ArrayForEach(n, S(c->e)->nodes)
	{
		if (in_parent(c, jstr(n, "name"))) {
			node_endpoints(c->e, (cJSON *)n);
			cJSON_AddItemToArray(items, node_render(n, 0));
		}
	}
	return reply_list(c->req, c->enum_int, "nodes", items);
}

/*
 * Copy the updateMask fields (TPU_MASK_* bits) of body into node: a
 * field absent from the body is cleared, as a field mask means.
 */
static void
node_apply_mask(cJSON *node, const cJSON *body, unsigned fields)
{
	static const struct {
		const char *name;
		unsigned bit;
	} top[] = {
		{ "description", TPU_MASK_DESCRIPTION },
		{ "labels", TPU_MASK_LABELS },
		{ "metadata", TPU_MASK_METADATA },
		{ "tags", TPU_MASK_TAGS },
	};
	cJSON *v, *nc;
	size_t i;

	for (i = 0; i < nitems(top); i++) {
		if (!(fields & top[i].bit))
			continue;
		v = jget(body, top[i].name);
		if (v != NULL)
			jset(node, top[i].name, cJSON_Duplicate(v, 1));
		else
			jdel(node, top[i].name);
	}
	if (fields & TPU_MASK_EXTERNAL_IPS) {
		nc = jget(node, "networkConfig");
		if (!cJSON_IsObject(nc)) {
			nc = cJSON_CreateObject();
			jset(node, "networkConfig", nc);
		}
		/* proto3 bool: false is the default and is not rendered. */
		if (cJSON_IsTrue(
		        json_path(body, "networkConfig.enableExternalIps")))
			jset(nc, "enableExternalIps", cJSON_CreateTrue());
		else
			jdel(nc, "enableExternalIps");
	}
}

static int
node_patch(struct call *c, cJSON *node)
{
	const char *mask = emu_query(c->req, "updateMask");
	cJSON *body, *op, *check;
	char msg[1024];
	unsigned fields = 0;
	int nworkers;

	if (tpu_update_mask_check(mask, &fields, msg, sizeof msg) != 0)
		return emu_reply_error(
		    c->req, 400, "INVALID_ARGUMENT", "%s", msg);
	if (strcmp(jstr(node, "state"), "DELETING") == 0)
		return emu_reply_error(c->req, 400, "FAILED_PRECONDITION",
		    "Node '%s' is being deleted", c->name);
	body = emu_body_json(c->e, c->req);
	if (body == NULL)
		return 0;
	if (refuse_api_fields(c, body, VALIDATE_BODY_NODE)) {
		cJSON_Delete(body);
		return 0;
	}
	if ((fields & TPU_MASK_EXTERNAL_IPS) &&
	    json_path(body, "networkConfig.enableExternalIps") != NULL &&
	    !cJSON_IsBool(json_path(body, "networkConfig.enableExternalIps"))) {
		cJSON_Delete(body);
		return emu_reply_error(c->req, 400, "INVALID_ARGUMENT",
		    "Invalid value at "
		    "'node.network_config.enable_external_ips' "
		    "(TYPE_BOOL)");
	}
	/* Validate the would-be node with the same rules as create. */
	check = cJSON_Duplicate(node, 1);
	node_apply_mask(check, body, fields);
	if (tpu_node_check(check, c->p.zone, &nworkers, msg, sizeof msg) != 0) {
		cJSON_Delete(check);
		cJSON_Delete(body);
		return emu_reply_error(
		    c->req, 400, "INVALID_ARGUMENT", "%s", msg);
	}
	cJSON_Delete(check);
	node_apply_mask(node, body, fields);
	cJSON_Delete(body);
	if ((fields & TPU_MASK_METADATA) &&
	    cJSON_IsTrue(jget(node, "_fleet"))) {
		cJSON *g = guest_metadata(c->e, jget(node, "metadata"));

		fleet_node_metadata(c->e, c->name, g);
		cJSON_Delete(g);
	}
	if (fields & TPU_MASK_METADATA)
		emu_md_changed(c->e);
	op = op_new(c->e, c->p.api, c->p.project, c->p.zone, "update", "update",
	    c->name, emu_wall_ms() + emu_opt_int(c->e, "tpu.update_ms", 300));
	op_apply_fault(c->e, c->req, op);
	save(c->e);
	return reply_op(c->req, c->enum_int, op);
}

static int
node_guest_attributes(struct call *c, cJSON *node)
{
	struct fleet_worker_info *w = NULL;
	cJSON *body, *out, *gas, *ga, *items, *item;
	const cJSON *ids, *id;
	char ns[64] = "", key[128] = "";
	const char *qp, *slash, *sp;
	int n = 0, i, rc;
	char *want = NULL;

	body = emu_body_json(c->e, c->req);
	if (body == NULL)
		return 0;
	qp = jstr(body, "queryPath");
	if (*qp != '\0') {
		slash = strchr(qp, '/');
		snprintf(ns, sizeof ns, "%.*s",
		    (int)(slash != NULL ? (size_t)(slash - qp) : strlen(qp)),
		    qp);
		if (slash != NULL)
			snprintf(key, sizeof key, "%s", slash + 1);
	}
	if (cJSON_IsTrue(jget(node, "_fleet"))) {
		int cap = fleet_node_workers(c->e, c->name, NULL, 0);

		if (cap < 0)
			cap = 0;
		w = xcalloc((size_t)(cap > 0 ? cap : 1), sizeof *w);
		n = fleet_node_workers(c->e, c->name, w, cap);
		if (n < 0)
			n = 0;
		if (n > cap)
			n = cap;
	}
	want = xcalloc((size_t)(n > 0 ? n : 1), 1);
	ids = jget(body, "workerIds");
	if (cJSON_GetArraySize(ids) == 0)
		memset(want, 1, (size_t)n);
	cJSON_ArrayForEach(id, ids)
	{
		long long v = -1;

		if (json_as_int64(id, &v) != 0 || v < 0 || v >= n) {
			rc = emu_reply_error(c->req, 400, "INVALID_ARGUMENT",
			    "Invalid worker id %s: node '%s' has %d workers",
			    cJSON_IsString(id) ? id->valuestring
			                       : "(not a "
			                         "string)",
			    c->name, n);
			goto out;
		}
		want[v] = 1;
	}
	out = cJSON_CreateObject();
	gas = cJSON_AddArrayToObject(out, "guestAttributes");
	for (i = 0; i < n; i++) {
		if (!want[i])
			continue;
		ga = cJSON_CreateObject();
		cJSON_AddStringToObject(ga, "queryPath", qp);
		items = cJSON_AddArrayToObject(
		    cJSON_AddObjectToObject(ga, "queryValue"), "items");
		sp = strchr(w[i].hostkey, ' ');
		if (sp != NULL &&
		    (ns[0] == '\0' || strcmp(ns, "hostkeys") == 0)) {
			char type[64];

			snprintf(type, sizeof type, "%.*s",
			    (int)(sp - w[i].hostkey), w[i].hostkey);
			if (key[0] == '\0' || strcmp(key, type) == 0) {
				char val[512];

				snprintf(val, sizeof val, "%s", sp + 1);
				val[strcspn(val, " \n")] = '\0';
				item = cJSON_CreateObject();
				cJSON_AddStringToObject(item, "key", type);
				cJSON_AddStringToObject(
				    item, "namespace", "hostkeys");
				cJSON_AddStringToObject(item, "value", val);
				cJSON_AddItemToArray(items, item);
			}
		}
		cJSON_AddItemToArray(gas, ga);
	}
	rc = reply(c->req, c->enum_int, out);
out:
	free(want);
	free(w);
	cJSON_Delete(body);
	return rc;
}

static int
node_start_stop(struct call *c, cJSON *node, int start)
{
	const char *want = start ? "STOPPED" : "READY";
	cJSON *op;

	/*
	 * Google does not stop multi-host slices (TPU Pods): "Stopping your
	 * resources", https://cloud.google.com/tpu/docs/managing-tpus-tpu-vm
	 * #stopping_your_resources, as cited by SkyPilot (skypilot-org/
	 * skypilot#1001: "GCP does not support stopping a tpu pod"); see also
	 * pytorch/xla#2142.  The code and text are ours: Google documents
	 * neither.
	 */
	if (!start && jnum(node, "_workers", 1) > 1)
		return emu_reply_error(c->req, 400, "FAILED_PRECONDITION",
		    "Node '%s' is a multi-host slice (%s, %lld workers): "
		    "stopping TPU Pods is not supported; delete it instead",
		    c->name, jstr(node, "acceleratorType"),
		    jnum(node, "_workers", 1));
	if (strcmp(jstr(node, "state"), want) != 0)
		return emu_reply_error(c->req, 400, "FAILED_PRECONDITION",
		    "Node '%s' is %s: only %s nodes can be %s", c->name,
		    jstr(node, "state"), want, start ? "started" : "stopped");
	node_set_state(c->e, node, start ? "STARTING" : "STOPPING");
	if (start) {
		char msg[512];

		if (cJSON_IsTrue(jget(node, "_fleet")))
			fleet_node_start(c->e, c->name);
		else if (node_fleet_create(c->e, node, msg, sizeof msg) != 0)
			return emu_reply_error(c->req, 500, "INTERNAL",
			    "cannot start the workers of '%s': %s", c->name,
			    msg);
	}
	op = op_new(c->e, c->p.api, c->p.project, c->p.zone,
	    start ? "start" : "stop", start ? "start" : "stop", c->name,
	    emu_wall_ms() + emu_opt_int(c->e,
	                        start ? "tpu.start_ms" : "tpu.stop_ms",
	                        start ? 1000 : 500));
	jset_str(op, "_prev", want);
	op_apply_fault(c->e, c->req, op);
	save(c->e);
	return reply_op(c->req, c->enum_int, op);
}

static int
node_delete(struct call *c, cJSON *node)
{
	cJSON *op;

	if (strcmp(jstr(node, "state"), "DELETING") == 0)
		return emu_reply_error(c->req, 400, "FAILED_PRECONDITION",
		    "Node '%s' is already being deleted", c->name);
	op = op_new(c->e, c->p.api, c->p.project, c->p.zone, "delete", "delete",
	    c->name, emu_wall_ms() + emu_opt_int(c->e, "tpu.delete_ms", 500));
	jset_str(op, "_prev", jstr(node, "state"));
	node_set_state(c->e, node, "DELETING");
	op_apply_fault(c->e, c->req, op);
	save(c->e);
	return reply_op(c->req, c->enum_int, op);
}

static int
nodes(struct call *c)
{
	const char *m = c->req->method;
	cJSON *node;

	if (c->p.id[0] == '\0') {
		if (strcmp(m, "POST") == 0 && c->p.verb[0] == '\0')
			return nodes_create(c);
		if (strcmp(m, "GET") == 0)
			return nodes_list(c);
		goto bad;
	}
	node = jget(S(c->e)->nodes, c->name);
	if (node == NULL)
		return not_found(c->req, c->name);
	if (c->p.verb[0] == '\0') {
		if (strcmp(m, "GET") == 0) {
			node_endpoints(c->e, node);
			return reply(c->req, c->enum_int, node_render(node, 0));
		}
		if (strcmp(m, "DELETE") == 0)
			return node_delete(c, node);
		if (strcmp(m, "PATCH") == 0)
			return node_patch(c, node);
		goto bad;
	}
	if (strcmp(m, "POST") != 0)
		goto bad;
	if (strcmp(c->p.verb, "start") == 0)
		return node_start_stop(c, node, 1);
	if (strcmp(c->p.verb, "stop") == 0)
		return node_start_stop(c, node, 0);
	if (strcmp(c->p.verb, "getGuestAttributes") == 0)
		return node_guest_attributes(c, node);
bad:
	return emu_reply_error(c->req, 404, "NOT_FOUND",
	    "Method %s %s:%s is not found", m, c->p.coll, c->p.verb);
}

static void op_advance(struct emu *, cJSON *);

static int
operations(struct call *c)
{
	const char *m = c->req->method;
	const cJSON *o;
	cJSON *op, *items, *md;
	long pending, n = 0;

	if (c->p.id[0] == '\0') {
		if (strcmp(m, "GET") != 0)
			goto bad;
		items = cJSON_CreateArray();
		cJSON_ArrayForEach(o, S(c->e)->ops)
		{
			if (in_parent(c, jstr(o, "name")))
				cJSON_AddItemToArray(
				    items, op_render(o, c->enum_int));
		}
		return reply_list(c->req, c->enum_int, "operations", items);
	}
	op = jget(S(c->e)->ops, c->name);
	if (op == NULL)
		return not_found(c->req, c->name);
	if (strcmp(m, "GET") == 0 && c->p.verb[0] == '\0') {
		if (jget(op, "done") != NULL &&
		    tpu_lro_spec(emu_fault_spec(c->req, "lro-"), &n) ==
		        TPU_LRO_PENDING)
			op_unpromote(op);
		if (jget(op, "done") == NULL)
			op_apply_fault(c->e, c->req, op);
		op_advance(c->e, op);
		pending = (long)jnum(op, "_pending", 0);
		if (jget(op, "done") == NULL && pending != 0) {
			/* This poll is one of the N that stay not done. */
			if (pending > 0)
				jset_num(op, "_pending", pending - 1);
			S(c->e)->dirty = 1;
			reply_op(c->req, c->enum_int, op);
			op_promote(op);
			save(c->e);
			return 0;
		}
		if (S(c->e)->dirty)
			save(c->e);
		return reply_op(c->req, c->enum_int, op);
	}
	if (strcmp(m, "DELETE") == 0 && c->p.verb[0] == '\0') {
		cJSON_DeleteItemFromObjectCaseSensitive(S(c->e)->ops, c->name);
		save(c->e);
		return emu_reply_json(c->req, 200, cJSON_CreateObject());
	}
	if (strcmp(m, "POST") == 0 && strcmp(c->p.verb, "cancel") == 0) {
		/* Best effort, as Google documents it: the work goes on. */
		md = jget(op, "metadata");
		jset(md, "cancelRequested", cJSON_CreateTrue());
		save(c->e);
		return emu_reply_json(c->req, 200, cJSON_CreateObject());
	}
bad:
	return emu_reply_error(c->req, 404, "NOT_FOUND",
	    "Method %s on operations is not found", m);
}

/* Read a queueing policy into the private fields of qr. */
static int
qr_policy(cJSON *qr, long long now, char *msg, size_t msglen)
{
	const cJSON *qp = jget(qr, "queueingPolicy");
	long long until = 0, after = 0, v;

	if (qp == NULL)
		return 0;
	if (jget(qp, "validUntilDuration") != NULL) {
		v = tpu_duration_ms(jstr(qp, "validUntilDuration"));
		if (v < 0)
			goto bad;
		until = now + v;
	}
	if (jget(qp, "validUntilTime") != NULL) {
		until = tpu_time_ms(jstr(qp, "validUntilTime"));
		if (until < 0)
			goto bad;
	}
	if (jget(qp, "validAfterDuration") != NULL) {
		v = tpu_duration_ms(jstr(qp, "validAfterDuration"));
		if (v < 0)
			goto bad;
		after = now + v;
	}
	if (jget(qp, "validAfterTime") != NULL) {
		after = tpu_time_ms(jstr(qp, "validAfterTime"));
		if (after < 0)
			goto bad;
	}
	jset_num(qr, "_valid_until", until);
	jset_num(qr, "_valid_after", after);
	return 0;
bad:
	snprintf(msg, msglen,
	    "Invalid value for field 'queued_resource.queueing_policy': "
	    "durations look like \"3600s\", times like "
	    "\"2024-04-01T12:34:56Z\"");
	return -1;
}

static int
qr_create(struct call *c)
{
	struct emu *e = c->e;
	const char *id = emu_query(c->req, "queuedResourceId");
	cJSON *body = NULL, *qr = NULL, *specs, *spec, *ids, *nid, *op, *all;
	char msg[1024], name[512], nname[512], ts[64];
	int nworkers, tiers = 0, rc;

	if (id == NULL || *id == '\0')
		return emu_reply_error(c->req, 400, "INVALID_ARGUMENT",
		    "Field 'queued_resource_id' is required (query parameter "
		    "queuedResourceId)");
	if (validate_qr_id(id, msg, sizeof msg) != 0)
		return emu_reply_error(c->req, 400, "INVALID_ARGUMENT",
		    "Invalid value for field 'queued_resource_id': %s", msg);
	snprintf(name, sizeof name, "%s/queuedResources/%s", c->parent, id);
	if (jget(S(e)->qrs, name) != NULL)
		return emu_reply_error(c->req, 409, "ALREADY_EXISTS",
		    "Resource '%s' already exists", name);
	body = emu_body_json(e, c->req);
	if (body == NULL)
		return 0;
	all = cJSON_CreateArray();
	if (refuse_api_fields(c, body, VALIDATE_BODY_QR)) {
		rc = 0;
		goto out;
	}
	specs = (cJSON *)json_path(body, "tpu.nodeSpec");
	if (!cJSON_IsArray(specs) || cJSON_GetArraySize(specs) == 0) {
		rc = emu_reply_error(c->req, 400, "INVALID_ARGUMENT",
		    "Field 'queued_resource.tpu.node_spec' is required");
		goto out;
	}
	tiers = (jget(body, "spot") != NULL) +
	        (jget(body, "guaranteed") != NULL) +
	        (jget(body, "bestEffort") != NULL);
	if (tiers > 1) {
		rc = emu_reply_error(c->req, 400, "INVALID_ARGUMENT",
		    "Only one of spot, guaranteed and best_effort may be set");
		goto out;
	}
	cJSON_ArrayForEach(spec, specs)
	{
		cJSON *node = jget(spec, "node");
		const char *parent = jstr(spec, "parent");

		if (*parent != '\0' && strcmp(parent, c->parent) != 0) {
			rc = emu_reply_error(c->req, 400, "INVALID_ARGUMENT",
			    "Invalid node_spec.parent \"%s\": it must be "
			    "\"%s\"",
			    parent, c->parent);
			goto out;
		}
		if (!cJSON_IsObject(node) ||
		    tpu_node_check(
		        node, c->p.zone, &nworkers, msg, sizeof msg) != 0) {
			rc = emu_reply_error(c->req, 400, "INVALID_ARGUMENT",
			    "%s",
			    cJSON_IsObject(node) ? msg
			                         : "Field 'node_spec.node' is "
			                           "required");
			goto out;
		}
		if (jget(body, "spot") != NULL || jget(body, "bestEffort")) {
			cJSON *sc = jget(node, "schedulingConfig");

			if (sc == NULL)
				sc = cJSON_AddObjectToObject(
				    node, "schedulingConfig");
			jset(sc, "spot", cJSON_CreateTrue());
		}
		if (jstr(body, "reservationName")[0] != '\0' ||
		    cJSON_IsTrue(json_path(body, "guaranteed.reserved"))) {
			cJSON *sc = jget(node, "schedulingConfig");

			if (sc == NULL)
				sc = cJSON_AddObjectToObject(
				    node, "schedulingConfig");
			jset(sc, "reserved", cJSON_CreateTrue());
		}
		ids = qr_spec_node_ids(spec, c->p.api, id, msg, sizeof msg);
		if (ids == NULL) {
			rc = emu_reply_error(
			    c->req, 400, "INVALID_ARGUMENT", "%s", msg);
			goto out;
		}
		cJSON_ArrayForEach(nid, ids)
		{
			const cJSON *other;

			snprintf(nname, sizeof nname, "%s/nodes/%s", c->parent,
			    nid->valuestring);
			cJSON_ArrayForEach(other, all)
			{
				if (strcmp(other->valuestring, nname) == 0) {
					cJSON_Delete(ids);
					rc = emu_reply_error(c->req, 400,
					    "INVALID_ARGUMENT",
					    "Node id '%s' is requested twice",
					    nid->valuestring);
					goto out;
				}
			}
			if (jget(S(e)->nodes, nname) != NULL) {
				cJSON_Delete(ids);
				rc = emu_reply_error(c->req, 409,
				    "ALREADY_EXISTS",
				    "Resource '%s' already exists", nname);
				goto out;
			}
			cJSON_AddItemToArray(all, cJSON_CreateString(nname));
		}
		cJSON_Delete(ids);
	}
	qr = cJSON_CreateObject();
	now_str(ts, sizeof ts);
	cJSON_AddStringToObject(qr, "createTime", ts);
	{
		static const char *const keep[] = { "tpu", "spot", "guaranteed",
			"bestEffort", "queueingPolicy", "reservationName",
			"runDuration", "provisioningModel" };
		size_t i;

		for (i = 0; i < nitems(keep); i++) {
			if (jget(body, keep[i]) != NULL)
				cJSON_AddItemToObject(qr, keep[i],
				    cJSON_Duplicate(jget(body, keep[i]), 1));
		}
	}
	cJSON_AddStringToObject(qr, "name", name);
	if (qr_policy(qr, emu_wall_ms(), msg, sizeof msg) != 0) {
		rc =
		    emu_reply_error(c->req, 400, "INVALID_ARGUMENT", "%s", msg);
		goto out;
	}
	qr_set_state(e, qr, "ACCEPTED", NULL);
	cJSON_AddNumberToObject(qr, "_api", c->p.api);
	cJSON_AddNumberToObject(qr, "_accept_at",
	    (double)(emu_wall_ms() + emu_opt_int(e, "tpu.qr_accept_ms", 300)));
	cJSON_AddItemToObject(S(e)->qrs, name, qr);
	qr = NULL;
	op = op_new(e, c->p.api, c->p.project, c->p.zone, "create", "qr-create",
	    name, 0);
	op_apply_fault(e, c->req, op);
	save(e);
	rc = reply_op(c->req, c->enum_int, op);
out:
	cJSON_Delete(all);
	cJSON_Delete(body);
	cJSON_Delete(qr);
	return rc;
}

static int
queued_resources(struct call *c)
{
	const char *m = c->req->method;
	const cJSON *q;
	cJSON *qr, *items, *op, *n;
	const char *force;

	if (c->p.id[0] == '\0') {
		if (strcmp(m, "POST") == 0 && c->p.verb[0] == '\0')
			return qr_create(c);
		if (strcmp(m, "GET") != 0)
			goto bad;
		if (refuse_list_params(c->req) != 0)
			return 0;
		items = cJSON_CreateArray();
		cJSON_ArrayForEach(q, S(c->e)->qrs)
		{
			if (in_parent(c, jstr(q, "name")))
				cJSON_AddItemToArray(items, qr_render(q, 0));
		}
		return reply_list(
		    c->req, c->enum_int, "queuedResources", items);
	}
	qr = jget(S(c->e)->qrs, c->name);
	if (qr == NULL)
		return not_found(c->req, c->name);
	if (strcmp(m, "GET") == 0 && c->p.verb[0] == '\0')
		return reply(c->req, c->enum_int, qr_render(qr, 0));
	if (strcmp(m, "DELETE") == 0 && c->p.verb[0] == '\0') {
		force = emu_query(c->req, "force");
		if (strcmp(qr_state(qr), "DELETING") == 0)
			return emu_reply_error(c->req, 400,
			    "FAILED_PRECONDITION",
			    "Queued resource '%s' is already being deleted",
			    c->name);
		if ((force == NULL || strcmp(force, "true") != 0) &&
		    qr_count_nodes(c->e, c->name) > 0)
			return emu_reply_error(c->req, 400,
			    "FAILED_PRECONDITION",
			    "Queued resource '%s' still has %d node(s): delete "
			    "them first, or delete with force=true",
			    c->name, qr_count_nodes(c->e, c->name));
		qr_set_state(c->e, qr, "DELETING", NULL);
		cJSON_ArrayForEach(n, S(c->e)->nodes)
		{
			if (strcmp(jstr(n, "queuedResource"), c->name) == 0)
				node_set_state(c->e, n, "DELETING");
		}
		op = op_new(c->e, c->p.api, c->p.project, c->p.zone, "delete",
		    "qr-delete", c->name,
		    emu_wall_ms() + emu_opt_int(c->e, "tpu.delete_ms", 500));
		op_apply_fault(c->e, c->req, op);
		save(c->e);
		return reply_op(c->req, c->enum_int, op);
	}
	if (strcmp(m, "POST") == 0 && strcmp(c->p.verb, "reset") == 0) {
		if (strcmp(qr_state(qr), "FAILED") != 0 &&
		    strcmp(qr_state(qr), "SUSPENDED") != 0)
			return emu_reply_error(c->req, 400,
			    "FAILED_PRECONDITION",
			    "Queued resource '%s' is %s: only FAILED or "
			    "SUSPENDED queued resources can be reset",
			    c->name, qr_state(qr));
		qr_delete_nodes(c->e, c->name);
		qr_set_state(c->e, qr, "ACCEPTED", NULL);
		jset_num(qr, "_accept_at",
		    emu_wall_ms() + emu_opt_int(c->e, "tpu.qr_accept_ms", 300));
		qr_policy(qr, emu_wall_ms(), NULL, 0);
		op = op_new(c->e, c->p.api, c->p.project, c->p.zone, "reset",
		    "qr-reset", c->name, 0);
		op_apply_fault(c->e, c->req, op);
		save(c->e);
		return reply_op(c->req, c->enum_int, op);
	}
bad:
	return emu_reply_error(c->req, 404, "NOT_FOUND",
	    "Method %s on queuedResources is not found", m);
}

static int
tpu_handle(struct emu *e, struct emu_req *req)
{
	struct call c;
	const char *alt = emu_query(req, "$alt");

	memset(&c, 0, sizeof c);
	c.e = e;
	c.req = req;
	if (tpu_path_parse(req->path, &c.p) != 0)
		return emu_reply_error(req, 404, "NOT_FOUND",
		    "The requested URL %s was not found on this server",
		    req->path);
	c.enum_int = (alt != NULL && strstr(alt, "enum-encoding=int")) ||
	             (req->raw_url != NULL &&
	                 strstr(req->raw_url, "enum-encoding=int") != NULL);
	snprintf(c.parent, sizeof c.parent, "projects/%s/locations/%s",
	    c.p.project, c.p.zone);
	snprintf(c.name, sizeof c.name, "%s/%s/%s", c.parent, c.p.coll, c.p.id);
	if (c.p.zone[0] == '\0' ||
	    (c.p.coll[0] == '\0' && c.p.verb[0] == '\0')) {
		if (c.p.zone[0] != '\0' && offer_zone_find(c.p.zone) == NULL)
			goto unknown_zone;
		return locations(&c);
	}
	if (strcmp(c.p.zone, "-") == 0) {
		if (c.p.id[0] != '\0' || strcmp(req->method, "GET") != 0 ||
		    (strcmp(c.p.coll, "nodes") != 0 &&
		        strcmp(c.p.coll, "queuedResources") != 0 &&
		        strcmp(c.p.coll, "operations") != 0))
			goto unknown_zone;
	} else if (offer_zone_find(c.p.zone) == NULL)
		goto unknown_zone;
	if (strcmp(c.p.coll, "nodes") == 0)
		return nodes(&c);
	if (strcmp(c.p.coll, "operations") == 0)
		return operations(&c);
	if (strcmp(c.p.coll, "queuedResources") == 0)
		return queued_resources(&c);
	if (strcmp(req->method, "GET") == 0 && c.p.verb[0] == '\0') {
		if (strcmp(c.p.coll, "acceleratorTypes") == 0)
			return accel_types(&c);
		if (strcmp(c.p.coll, "runtimeVersions") == 0)
			return runtime_versions(&c);
		if (strcmp(c.p.coll, "reservations") == 0 &&
		    c.p.api == TPU_API_V2ALPHA1 && c.p.id[0] == '\0')
			return emu_reply_json(req, 200, cJSON_CreateObject());
	}
	return emu_reply_error(req, 404, "NOT_FOUND",
	    "The requested URL %s was not found on this server", req->path);
unknown_zone:
	return emu_reply_error(req, 404, "NOT_FOUND",
	    "Location %s is not found or access is unauthorized.", c.p.zone);
}

/*
 * The Compute Engine API's projects.get, as much as a client reading
 * project metadata needs (GET /compute/v1/projects/P): name, id, and
 * commonInstanceMetadata {kind, fingerprint, items [{key, value}]}, the
 * fingerprint a hash of the items.  Another project: 404 as Google says.
 */
static int
compute_handle(struct emu *e, struct emu_req *req)
{
	const char *pfx = "/compute/v1/projects/", *proj;
	cJSON *o, *md, *items, *it, *kv;
	uint32_t h = 0;
	char fp[16];

	if (strncmp(req->path, pfx, strlen(pfx)) != 0)
		return emu_reply_error(req, 404, "NOT_FOUND",
		    "The requested URL %s was not found on this server",
		    req->path);
	proj = req->path + strlen(pfx);
	if (strcmp(req->method, "GET") != 0)
		return emu_reply_error(req, 405, "INVALID_ARGUMENT",
		    "method %s not allowed on %s", req->method, req->path);
	if (strcmp(proj, e->project) != 0)
		return emu_reply_error(req, 404, "NOT_FOUND",
		    "The resource 'projects/%s' was not found", proj);
	o = cJSON_CreateObject();
	cJSON_AddStringToObject(o, "kind", "compute#project");
	cJSON_AddStringToObject(o, "name", e->project);
	md = cJSON_AddObjectToObject(o, "commonInstanceMetadata");
	cJSON_AddStringToObject(md, "kind", "compute#metadata");
	items = cJSON_CreateArray();
	cJSON_ArrayForEach(it, S(e)->project_md)
	{
		kv = cJSON_CreateObject();
		cJSON_AddStringToObject(kv, "key", it->string);
		cJSON_AddStringToObject(kv, "value", it->valuestring);
		cJSON_AddItemToArray(items, kv);
		h = crc32c_update(h, it->string, strlen(it->string) + 1);
		h = crc32c_update(
		    h, it->valuestring, strlen(it->valuestring) + 1);
	}
	snprintf(fp, sizeof fp, "%08x", (unsigned)h);
	cJSON_AddStringToObject(md, "fingerprint", fp);
	if (cJSON_GetArraySize(items) > 0)
		cJSON_AddItemToObject(md, "items", items);
	else
		cJSON_Delete(items);
	return emu_reply_json(req, 200, o);
}

const struct emu_route tpu_routes[] = {
	{ "/compute/v1/projects/", EMU_R_AUTH, compute_handle, NULL, NULL },
	{ "/v2/", EMU_R_AUTH, tpu_handle, NULL, NULL },
	{ "/v2alpha1/", EMU_R_AUTH, tpu_handle, NULL, NULL },
	{ NULL, 0, NULL, NULL, NULL },
};

/* The state machines. */

static void
op_fail(struct emu *e, cJSON *op, const cJSON *error)
{
	op_complete(
	    e, op, NULL, (int)jnum(error, "code", 2), jstr(error, "message"));
}

/* Advance one operation that is not done yet. */
static void
op_advance(struct emu *e, cJSON *op)
{
	const char *kind = jstr(op, "_kind");
	const char *target = jstr(jget(op, "metadata"), "target");
	const cJSON *error = jget(op, "_error");
	cJSON *node, *qr;
	long long now = emu_wall_ms();
	char zone[64], msg[512];

	if (jget(op, "done") != NULL)
		return;
	if (jget(op, "_final") != NULL) {
		op_promote(op);
		return;
	}
	if (now < jnum(op, "_due", 0))
		return;
	zone_of_name(target, zone, sizeof zone);
	node = jget(S(e)->nodes, target);
	qr = jget(S(e)->qrs, target);
	if (strcmp(kind, "create") == 0) {
		if (node == NULL) {
			op_complete(e, op, NULL, 10,
			    "The node was deleted while it was being created");
			return;
		}
		if (error == NULL && stocked_out(e, zone)) {
			tpu_op_error_message(
			    8, zone, random_eid(), msg, sizeof msg);
			node_remove(e, target);
			op_complete(e, op, NULL, 8, msg);
			return;
		}
		if (error != NULL) {
			node_remove(e, target);
			op_fail(e, op, error);
			return;
		}
		if (!fleet_node_ready(e, target))
			return;
		node_set_state(e, node, "READY");
		node_endpoints(e, node);
		op_complete(e, op, node_render(node, 1), 0, NULL);
	} else if (strcmp(kind, "delete") == 0) {
		if (node == NULL) {
			op_complete(e, op, empty_response(), 0, NULL);
			return;
		}
		if (error != NULL) {
			node_set_state(e, node, jstr(op, "_prev"));
			op_fail(e, op, error);
			return;
		}
		{
			char qname[512];

			snprintf(qname, sizeof qname, "%s",
			    jstr(node, "queuedResource"));
			node_remove(e, target);
			qr = jget(S(e)->qrs, qname);
			if (qr != NULL && qr_count_nodes(e, qname) == 0 &&
			    strcmp(qr_state(qr), "ACTIVE") == 0)
				qr_set_state(e, qr, "SUSPENDED", NULL);
		}
		op_complete(e, op, empty_response(), 0, NULL);
	} else if (strcmp(kind, "start") == 0 || strcmp(kind, "stop") == 0) {
		int start = kind[2] == 'a';

		if (node == NULL) {
			op_complete(
			    e, op, NULL, 5, "The node no longer exists");
			return;
		}
		if (error != NULL) {
			if (!start)
				node_set_state(e, node, "READY");
			else {
				fleet_node_stop(e, target);
				node_set_state(e, node, "STOPPED");
			}
			op_fail(e, op, error);
			return;
		}
		if (start && !fleet_node_ready(e, target))
			return;
		if (!start)
			fleet_node_stop(e, target);
		node_set_state(e, node, start ? "READY" : "STOPPED");
		node_endpoints(e, node);
		op_complete(e, op, node_render(node, 1), 0, NULL);
	} else if (strcmp(kind, "update") == 0) {
		if (node == NULL)
			op_complete(
			    e, op, NULL, 5, "The node no longer exists");
		else if (error != NULL)
			op_fail(e, op, error);
		else
			op_complete(e, op, node_render(node, 1), 0, NULL);
	} else if (strcmp(kind, "qr-create") == 0 ||
	           strcmp(kind, "qr-reset") == 0) {
		if (error != NULL) {
			if (qr != NULL && strcmp(kind, "qr-create") == 0)
				cJSON_DeleteItemFromObjectCaseSensitive(
				    S(e)->qrs, target);
			op_fail(e, op, error);
		} else if (qr == NULL)
			op_complete(e, op, NULL, 5,
			    "The queued resource no longer exists");
		else
			op_complete(e, op, qr_render(qr, 1), 0, NULL);
	} else if (strcmp(kind, "qr-delete") == 0) {
		if (error != NULL) {
			if (qr != NULL)
				qr_set_state(e, qr, "SUSPENDED", NULL);
			op_fail(e, op, error);
			return;
		}
		qr_delete_nodes(e, target);
		cJSON_DeleteItemFromObjectCaseSensitive(S(e)->qrs, target);
		op_complete(e, op, empty_response(), 0, NULL);
	} else
		op_complete(e, op, NULL, 13, "unknown operation kind");
	S(e)->dirty = 1;
}

static void
qr_advance(struct emu *e, cJSON *qr)
{
	const char *state = qr_state(qr);
	const char *qname = jstr(qr, "name");
	long long now = emu_wall_ms();
	long long until = jnum(qr, "_valid_until", 0);
	char zone[64], msg[512];
	cJSON *n, *err;
	int ready = 1;

	zone_of_name(qname, zone, sizeof zone);
	if (strcmp(state, "ACCEPTED") == 0) {
		if (now >= jnum(qr, "_accept_at", 0))
			qr_set_state(e, qr, "WAITING_FOR_RESOURCES", NULL);
		return;
	}
	if (strcmp(state, "WAITING_FOR_RESOURCES") == 0) {
		if (until > 0 && now > until) {
			err = cJSON_CreateObject();
			if (stocked_out(e, zone)) {
				tpu_op_error_message(
				    8, zone, random_eid(), msg, sizeof msg);
				cJSON_AddNumberToObject(err, "code", 8);
			} else {
				snprintf(msg, sizeof msg,
				    "The queued resource could not be "
				    "provisioned before its validUntil time");
				cJSON_AddNumberToObject(err, "code", 4);
			}
			cJSON_AddStringToObject(err, "message", msg);
			n = cJSON_CreateObject();
			cJSON_AddItemToObject(n, "error", err);
			qr_set_state(e, qr, "FAILED", n);
			return;
		}
		if (stocked_out(e, zone) || now < jnum(qr, "_valid_after", 0))
			return;
		qr_set_state(e, qr, "PROVISIONING", NULL);
		jset_num(qr, "_prov_due",
		    now + emu_opt_int(e, "tpu.qr_provision_ms", 1500));
		if (qr_provision(e, qr, msg, sizeof msg) != 0) {
			qr_delete_nodes(e, qname);
			err = cJSON_CreateObject();
			cJSON_AddNumberToObject(err, "code", 13);
			cJSON_AddStringToObject(err, "message", msg);
			n = cJSON_CreateObject();
			cJSON_AddItemToObject(n, "error", err);
			qr_set_state(e, qr, "FAILED", n);
		}
		return;
	}
	if (strcmp(state, "PROVISIONING") == 0) {
		if (now < jnum(qr, "_prov_due", 0))
			return;
		cJSON_ArrayForEach(n, S(e)->nodes)
		{
			if (strcmp(jstr(n, "queuedResource"), qname) == 0 &&
			    !fleet_node_ready(e, jstr(n, "name")))
				ready = 0;
		}
		if (!ready)
			return;
		cJSON_ArrayForEach(n, S(e)->nodes)
		{
			if (strcmp(jstr(n, "queuedResource"), qname) == 0) {
				node_set_state(e, n, "READY");
				node_endpoints(e, n);
			}
		}
		qr_set_state(e, qr, "ACTIVE", NULL);
	}
}

void
tpu_tick(struct emu *e)
{
	struct tpu_state *s = S(e);
	cJSON *it, *next;

	if (s == NULL)
		return;
	for (it = s->ops->child; it != NULL; it = next) {
		next = it->next;
		op_advance(e, it);
	}
	for (it = s->qrs->child; it != NULL; it = next) {
		next = it->next;
		qr_advance(e, it);
	}
	/* Preemption notices that ran out: stop the workers now. */
	cJSON_ArrayForEach(it, s->nodes)
	{
		const cJSON *at = jget(it, "_stop_at");

		if (!cJSON_IsNumber(at) ||
		    at->valuedouble > (double)tpu_now_ms())
			continue;
		jdel(it, "_stop_at");
		if (cJSON_IsTrue(jget(it, "_fleet")))
			fleet_node_stop(e, jstr(it, "name"));
		s->dirty = 1;
	}
	if (s->dirty)
		save(e);
}

/* ---- the metadata server's view of a node (md.h) ---- */

cJSON *
tpu_md_view(struct emu *e, const char *node_key)
{
	const cJSON *node = jget(S(e)->nodes, node_key), *n;
	const char *qr, *acc;
	struct fleet_worker_info *w;
	char zone[64] = "", accbuf[64];
	cJSON *v, *addrs;
	int max, cnt, i, slice = 0, slices = 0;

	if (node == NULL)
		return NULL;
	v = cJSON_CreateObject();
	cJSON_AddStringToObject(v, "id", jstr(node, "id"));
	acc = jstr(node, "acceleratorType");
	if (*acc == '\0' &&
	    emu_md_accel_from_config(
	        jstr(jget(node, "acceleratorConfig"), "type"),
	        jstr(jget(node, "acceleratorConfig"), "topology"), accbuf,
	        sizeof accbuf) == 0)
		acc = accbuf;
	cJSON_AddStringToObject(v, "accel", acc);
	cJSON_AddStringToObject(
	    v, "topology", jstr(jget(node, "acceleratorConfig"), "topology"));
	sscanf(node_key, "projects/%*[^/]/locations/%63[^/]", zone);
	cJSON_AddStringToObject(v, "zone", zone);
	cJSON_AddItemToObject(v, "metadata",
	    cJSON_IsObject(jget(node, "metadata"))
	        ? cJSON_Duplicate(jget(node, "metadata"), 1)
	        : cJSON_CreateObject());
	cJSON_AddBoolToObject(
	    v, "preempted", cJSON_IsTrue(jget(node, "_preempted")));
	cJSON_AddStringToObject(v, "maintenance",
	    cJSON_IsTrue(jget(node, "_maintenance"))
	        ? "TERMINATE_ON_HOST_MAINTENANCE"
	        : "NONE");
	max = (int)jnum(node, "_workers", 1);
	w = xcalloc((size_t)max, sizeof *w);
	cnt = fleet_node_workers(e, node_key, w, max);
	addrs = cJSON_AddArrayToObject(v, "addrs");
	for (i = 0; i < cnt && i < max; i++)
		cJSON_AddItemToArray(addrs, cJSON_CreateString(w[i].addr));
	/* A slice of a multislice queued resource: its index and count. */
	qr = jstr(node, "queuedResource");
	if (*qr != '\0' && cJSON_IsTrue(jget(node, "multisliceNode"))) {
		cJSON_ArrayForEach(n, S(e)->nodes)
		{
			if (strcmp(jstr(n, "queuedResource"), qr) != 0 ||
			    !cJSON_IsTrue(jget(n, "multisliceNode")))
				continue;
			if (slices == 0 &&
			    fleet_node_workers(e, jstr(n, "name"), w, 1) >= 1)
				cJSON_AddStringToObject(
				    v, "coordinator", w[0].addr);
			if (n == node)
				slice = slices;
			slices++;
		}
	}
	free(w);
	cJSON_AddNumberToObject(v, "slice", slice);
	cJSON_AddNumberToObject(v, "slices", slices);
	return v;
}

/* Events. */

static cJSON *
event_node(struct emu *e, const cJSON *ev, char *errbuf, size_t errlen)
{
	const char *n = jstr(ev, "node");
	const char *zone = jstr(ev, "zone");
	cJSON *it;
	size_t nl = strlen(n);

	if (*n == '\0') {
		snprintf(errbuf, errlen, "event needs \"node\"");
		return NULL;
	}
	it = jget(S(e)->nodes, n);
	if (it != NULL)
		return it;
	/* A short name: the node of that name (in zone, if given). */
	cJSON_ArrayForEach(it, S(e)->nodes)
	{
		const char *name = jstr(it, "name");
		size_t l = strlen(name);
		char z[64];

		if (l > nl + 7 && strcmp(name + l - nl, n) == 0 &&
		    strncmp(name + l - nl - 7, "/nodes/", 7) == 0 &&
		    (*zone == '\0' ||
		        strcmp(zone_of_name(name, z, sizeof z), zone) == 0))
			return it;
	}
	snprintf(errbuf, errlen, "no node '%s'", n);
	return NULL;
}

/*
 * "blackhole": worker "worker" of node answers nothing on its ssh port
 * ("mode" "drop", the default: SYNs unanswered) or accepts and stays
 * silent ("mode" "silent"); "clear" (or a worker-up event) ends it.
 */
static int
event_blackhole(
    struct emu *e, cJSON *node, const cJSON *ev, char *errbuf, size_t errlen)
{
	const char *mode = jstr(ev, "mode");
	long long worker;
	int m;

	if (cJSON_IsTrue(jget(ev, "clear")))
		m = FLEET_HOLE_NONE;
	else if (*mode == '\0' || strcmp(mode, "drop") == 0)
		m = FLEET_HOLE_DROP;
	else if (strcmp(mode, "silent") == 0)
		m = FLEET_HOLE_SILENT;
	else {
		snprintf(errbuf, errlen,
		    "invalid \"mode\" '%s' for event \"blackhole\": "
		    "expected drop or silent",
		    mode);
		return -1;
	}
	if (json_as_int64(jget(ev, "worker"), &worker) != 0 || worker < 0 ||
	    worker >= jnum(node, "_workers", 1)) {
		snprintf(errbuf, errlen,
		    "event \"blackhole\" needs \"worker\" from 0 to %lld",
		    jnum(node, "_workers", 1) - 1);
		return -1;
	}
	if (!cJSON_IsTrue(jget(node, "_fleet"))) {
		snprintf(errbuf, errlen, "node '%s' has no workers",
		    jstr(node, "name"));
		return -1;
	}
	return fleet_worker_blackhole(
	    e, jstr(node, "name"), (int)worker, m, errbuf, errlen);
}

int
tpu_event(struct emu *e, const cJSON *ev, char *errbuf, size_t errlen)
{
	struct tpu_state *s = S(e);
	const char *kind = jstr(ev, "event");
	const char *zone = jstr(ev, "zone");
	int clear = cJSON_IsTrue(jget(ev, "clear"));
	cJSON *node, *qr, *um, *it;
	long long worker;
	char ts[64], te[64];

	if (strcmp(kind, "project-metadata") == 0) {
		/* {"metadata": {KEY: VALUE, ...}}: the project's
		 * commonInstanceMetadata from now on (workers booted later
		 * read enable-oslogin from it) */
		const cJSON *md = jget(ev, "metadata");

		if (!cJSON_IsObject(md)) {
			snprintf(errbuf, errlen,
			    "project-metadata: 'metadata' is not an object");
			return -1;
		}
		cJSON_ArrayForEach(it, md)
		{
			if (!cJSON_IsString(it)) {
				snprintf(errbuf, errlen,
				    "project-metadata: value of '%s' is not a "
				    "string",
				    it->string);
				return -1;
			}
		}
		cJSON_Delete(s->project_md);
		s->project_md = cJSON_Duplicate(md, 1);
		save(e);
		return 0;
	}
	if (strcmp(kind, "stockout") == 0) {
		/* Without a zone, the default zone (serve --zone), as the
		 * other events read a short node name. */
		if (*zone == '\0')
			zone = e->zone;
		if (validate_zone(zone, errbuf, errlen) != 0)
			return -1;
		for (it = s->stockouts->child; it != NULL; it = it->next) {
			if (strcmp(it->valuestring, zone) == 0)
				break;
		}
		if (clear && it != NULL)
			cJSON_Delete(
			    cJSON_DetachItemViaPointer(s->stockouts, it));
		else if (!clear && it == NULL)
			cJSON_AddItemToArray(
			    s->stockouts, cJSON_CreateString(zone));
		save(e);
		return 0;
	}
	node = event_node(e, ev, errbuf, errlen);
	if (node == NULL)
		return -1;
	if (strcmp(kind, "preempt") == 0) {
		const cJSON *sc = jget(node, "schedulingConfig");

		const char *st = jstr(node, "state");

		if (!cJSON_IsTrue(jget(sc, "spot")) &&
		    !cJSON_IsTrue(jget(sc, "preemptible"))) {
			snprintf(errbuf, errlen,
			    "node '%s' is neither spot nor preemptible",
			    jstr(node, "name"));
			return -1;
		}
		/* Only capacity in use is taken back. */
		if (strcmp(st, "PREEMPTED") == 0 ||
		    strcmp(st, "TERMINATED") == 0 ||
		    strcmp(st, "STOPPED") == 0 || strcmp(st, "STOPPING") == 0 ||
		    strcmp(st, "DELETING") == 0) {
			snprintf(errbuf, errlen,
			    "node '%s' is %s: only a running node is preempted",
			    jstr(node, "name"), st);
			return -1;
		}
		/*
		 * The notice: instance/preempted turns TRUE (answering the
		 * waiting wait_for_change requests now), the workers are
		 * stopped tpu.preempt_notice_ms later (tpu_tick).
		 */
		jset(node, "_preempted", cJSON_CreateTrue());
		emu_md_changed(e);
		if (cJSON_IsTrue(jget(node, "_fleet"))) {
			long long ms =
			    emu_opt_int(e, "tpu.preempt_notice_ms", 2000);

			if (ms <= 0)
				fleet_node_stop(e, jstr(node, "name"));
			else
				jset(node, "_stop_at",
				    cJSON_CreateNumber(
				        (double)(tpu_now_ms() + ms)));
		}
		node_set_state(e, node, "PREEMPTED");
		qr = jget(s->qrs, jstr(node, "queuedResource"));
		if (qr != NULL)
			qr_set_state(e, qr, "SUSPENDED", NULL);
	} else if (strcmp(kind, "terminate") == 0) {
		/* The VM is gone for good (TERMINATED): only delete helps. */
		if (strcmp(jstr(node, "state"), "DELETING") == 0) {
			snprintf(errbuf, errlen, "node '%s' is being deleted",
			    jstr(node, "name"));
			return -1;
		}
		if (cJSON_IsTrue(jget(node, "_fleet")))
			fleet_node_stop(e, jstr(node, "name"));
		node_set_state(e, node, "TERMINATED");
	} else if (strcmp(kind, "maintenance") == 0) {
		if (clear) {
			jdel(node, "upcomingMaintenance");
			jdel(node, "_maintenance");
		} else {
			/*
			 * "View maintenance notifications",
			 * https://cloud.google.com/tpu/docs/view-maintenance-
			 * notifications: SCHEDULED maintenance gets seven
			 * days' notice; PENDING with canReschedule true can be
			 * started early; ONGOING has canReschedule false.
			 */
			int ongoing = cJSON_IsTrue(jget(ev, "ongoing"));
			long long start = ongoing
			                      ? emu_wall_ms()
			                      : emu_wall_ms() + 7LL * 86400000;

			emu_rfc3339(ts, sizeof ts, start);
			emu_rfc3339(te, sizeof te, start + 3600000);
			um = cJSON_CreateObject();
			cJSON_AddBoolToObject(um, "canReschedule", !ongoing);
			cJSON_AddStringToObject(um, "maintenanceStatus",
			    ongoing ? "ONGOING" : "PENDING");
			cJSON_AddStringToObject(um, "type", "SCHEDULED");
			cJSON_AddStringToObject(um, "windowEndTime", te);
			cJSON_AddStringToObject(um, "windowStartTime", ts);
			jset(node, "upcomingMaintenance", um);
			if (ongoing)
				jset(node, "_maintenance", cJSON_CreateTrue());
			else
				jdel(node, "_maintenance");
		}
		emu_md_changed(e);
		s->dirty = 1;
	} else if (strcmp(kind, "symptom") == 0) {
		const char *type = jstr(ev, "symptomType");
		cJSON *sy, *arr;

		if (clear) {
			jdel(node, "symptoms");
		} else {
			if (tpu_enum_num("", "symptomType", type) <= 0) {
				snprintf(errbuf, errlen,
				    "event \"symptom\" needs \"symptomType\" "
				    "(LOW_MEMORY, OUT_OF_MEMORY, "
				    "EXECUTE_TIMED_OUT, MESH_BUILD_FAIL, "
				    "HBM_OUT_OF_MEMORY or PROJECT_ABUSE)");
				return -1;
			}
			if (json_as_int64(jget(ev, "worker"), &worker) != 0 ||
			    worker < 0 || worker >= jnum(node, "_workers", 1)) {
				snprintf(errbuf, errlen,
				    "event \"symptom\" needs \"worker\" from 0 "
				    "to %lld",
				    jnum(node, "_workers", 1) - 1);
				return -1;
			}
			arr = jget(node, "symptoms");
			if (!cJSON_IsArray(arr)) {
				arr = cJSON_CreateArray();
				jset(node, "symptoms", arr);
			}
			sy = cJSON_CreateObject();
			emu_rfc3339(ts, sizeof ts, emu_wall_ms());
			cJSON_AddStringToObject(sy, "createTime", ts);
			cJSON_AddStringToObject(sy, "details",
			    *jstr(ev, "details") != '\0' ? jstr(ev, "details")
			                                 : type);
			cJSON_AddStringToObject(sy, "symptomType", type);
			snprintf(te, sizeof te, "%lld", worker);
			cJSON_AddStringToObject(sy, "workerId", te);
			cJSON_AddItemToArray(arr, sy);
		}
		s->dirty = 1;
	} else if (strcmp(kind, "worker-down") == 0 ||
	           strcmp(kind, "worker-up") == 0 ||
	           strcmp(kind, "rekey") == 0 || strcmp(kind, "reboot") == 0) {
		if (json_as_int64(jget(ev, "worker"), &worker) != 0 ||
		    worker < 0 || worker >= jnum(node, "_workers", 1)) {
			snprintf(errbuf, errlen,
			    "event \"%s\" needs \"worker\" from 0 to %lld",
			    kind, jnum(node, "_workers", 1) - 1);
			return -1;
		}
		if (!cJSON_IsTrue(jget(node, "_fleet"))) {
			snprintf(errbuf, errlen, "node '%s' has no workers",
			    jstr(node, "name"));
			return -1;
		}
		if ((strcmp(kind, "reboot") == 0
		            ? fleet_worker_reboot(
		                  e, jstr(node, "name"), (int)worker)
		        : kind[0] == 'r'
		            ? fleet_worker_rekey(
		                  e, jstr(node, "name"), (int)worker)
		            : fleet_worker_down(e, jstr(node, "name"),
		                  (int)worker, kind[7] == 'd')) != 0) {
			snprintf(errbuf, errlen, "%s failed on worker %lld",
			    kind, worker);
			return -1;
		}
	} else if (strcmp(kind, "blackhole") == 0) {
		if (event_blackhole(e, node, ev, errbuf, errlen) != 0)
			return -1;
	} else if (strcmp(kind, "ssh-cut") == 0) {
		if (json_as_int64(jget(ev, "worker"), &worker) != 0 ||
		    worker < 0 || worker >= jnum(node, "_workers", 1)) {
			snprintf(errbuf, errlen,
			    "event \"ssh-cut\" needs \"worker\" from 0 to %lld",
			    jnum(node, "_workers", 1) - 1);
			return -1;
		}
		if (!cJSON_IsTrue(jget(node, "_fleet"))) {
			snprintf(errbuf, errlen, "node '%s' has no workers",
			    jstr(node, "name"));
			return -1;
		}
		if (fleet_worker_sshcut(e, jstr(node, "name"), (int)worker,
		        errbuf, errlen) != 0)
			return -1;
	} else {
		snprintf(errbuf, errlen,
		    "unknown event '%s' (preempt, terminate, stockout, "
		    "maintenance, symptom, worker-down, worker-up, rekey, "
		    "blackhole, ssh-cut, reboot)",
		    kind);
		return -1;
	}
	save(e);
	return 0;
}

/* Lifecycle. */

static cJSON *
take(cJSON *root, const char *key, int array)
{
	cJSON *v = root != NULL
	               ? cJSON_DetachItemFromObjectCaseSensitive(root, key)
	               : NULL;

	if (v == NULL || (array ? !cJSON_IsArray(v) : !cJSON_IsObject(v))) {
		cJSON_Delete(v);
		v = array ? cJSON_CreateArray() : cJSON_CreateObject();
	}
	return v;
}

int
tpu_init(struct emu *e)
{
	struct tpu_state *s = xcalloc(1, sizeof *s);
	cJSON *root, *n;
	char msg[512];

	e->tpu = s;
	s->path = emu_state_path(e, "tpu/state.json");
	root = load_file(s->path);
	if (root == NULL && access(s->path, F_OK) == 0) {
		/* Keep the unreadable file for a post-mortem; start empty. */
		char *bad = xasprintf("%s.corrupt", s->path);

		fprintf(stderr,
		    "tpuctl-emulator: %s is not valid JSON: moved to %s, "
		    "starting with no TPU resources\n",
		    s->path, bad);
		if (rename(s->path, bad) != 0)
			fprintf(stderr,
			    "tpuctl-emulator: cannot rename %s: %s\n", s->path,
			    strerror(errno));
		free(bad);
	}
	s->nodes = take(root, "nodes", 0);
	s->ops = take(root, "operations", 0);
	s->qrs = take(root, "queuedResources", 0);
	s->stockouts = take(root, "stockouts", 1);
	s->project_md = take(root, "projectMetadata", 0);
	cJSON_Delete(root);
	/* Bring back the workers of every node that was running. */
	cJSON_ArrayForEach(n, s->nodes)
	{
		const char *st = jstr(n, "state");

		jset(n, "_fleet", cJSON_CreateFalse());
		if (strcmp(st, "STOPPED") == 0 ||
		    strcmp(st, "PREEMPTED") == 0 || strcmp(st, "STOPPING") == 0)
			continue;
		if (node_fleet_create(e, n, msg, sizeof msg) != 0)
			fprintf(stderr,
			    "tpuctl-emulator: cannot recreate the workers of "
			    "%s: %s\n",
			    jstr(n, "name"), msg);
	}
	save(e);
	return 0;
}

void
tpu_fini(struct emu *e)
{
	struct tpu_state *s = S(e);

	if (s == NULL)
		return;
	if (s->dirty)
		save(e);
	cJSON_Delete(s->nodes);
	cJSON_Delete(s->ops);
	cJSON_Delete(s->qrs);
	cJSON_Delete(s->stockouts);
	cJSON_Delete(s->project_md);
	free(s->path);
	free(s);
	e->tpu = NULL;
}
