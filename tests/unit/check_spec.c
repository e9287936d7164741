/*
 * Unit tests for src/spec.c: a validation table with every field and a
 * bad value each (TPU_E_USAGE, the message naming the field's path),
 * YAML and JSON readings of the same spec, the YAML refusals (aliases,
 * duplicate keys, several documents), node ids, and spec_diff() against
 * node and queued-resource JSON.
 */
#include <sys/stat.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <check.h>
#include <cjson/cJSON.h>

#include "err.h"
#include "json.h"
#include "spec.h"
#include "xmalloc.h"

/* One bad value: the spec is "name: NAME / slice: accelerator-type: ACC
 * + slice lines + top lines"; want is in the message. */
struct bad_case {
	const char *name, *accel, *slice, *top, *want;
};

static const struct bad_case bad_cases[] = {
	{ "Bad_Name", NULL, NULL, NULL, "t.yaml: name: " },
	{ "n-", NULL, NULL, NULL, "t.yaml: name: " },
	{ NULL, "v4-7", NULL, NULL, "t.yaml: slice.accelerator-type: " },
	{ NULL, "V4-8", NULL, NULL, "t.yaml: slice.accelerator-type: " },
	{ NULL, "[v4-8]", NULL, NULL,
	    "t.yaml: slice.accelerator-type: must be a string, not a list" },
	{ NULL, "", "  type: v4\n", NULL, "t.yaml: slice.type: goes with" },
	{ NULL, "", "  type: v99\n  topology: 2x2x1\n", NULL,
	    "t.yaml: slice.type: " },
	{ NULL, "", "  topology: 2x2x1\n", NULL, "t.yaml: slice.topology: " },
	{ NULL, NULL, "  topology: 2x2x4\n", NULL, "t.yaml: slice.topology: " },
	{ NULL, NULL, "  topology: 2x2\n", NULL, "t.yaml: slice.topology: " },
	{ NULL, NULL, "  version: ''\n", NULL,
	    "t.yaml: slice.version: must not be empty" },
	{ NULL, NULL, "  version: {a: b}\n", NULL,
	    "t.yaml: slice.version: must be a string" },
	{ NULL, NULL, "  spot: yes\n", NULL,
	    "t.yaml: slice.spot: must be true or false, not a string 'yes'" },
	{ NULL, NULL, "  preemptible: 1\n", NULL,
	    "t.yaml: slice.preemptible: " },
	{ NULL, NULL, "  reserved: on\n", NULL, "t.yaml: slice.reserved: " },
	{ NULL, NULL, "  guaranteed: maybe\n", NULL,
	    "t.yaml: slice.guaranteed: " },
	{ NULL, NULL, "  spot: true\n  reserved: true\n", NULL,
	    "t.yaml: slice.spot: spot, preemptible, reserved and guaranteed "
	    "exclude each other" },
	{ NULL, NULL, "  preemptible: true\n  node-count: 2\n", NULL,
	    "t.yaml: slice.preemptible: " },
	{ NULL, NULL, "  internal-ips: 3\n", NULL,
	    "t.yaml: slice.internal-ips: " },
	{ NULL, NULL, "  metadata-raw: x\n", NULL,
	    "t.yaml: slice.metadata-raw: " },
	{ NULL, NULL, "  zones: [us-central2]\n", NULL,
	    "t.yaml: slice.zones[0]: " },
	{ NULL, NULL, "  zones: [us-central2-b, europe-west4-a]\n", NULL,
	    "t.yaml: slice.zones[1]: zone europe-west4-a does not offer v4" },
	{ NULL, NULL, "  zones: []\n", NULL,
	    "t.yaml: slice.zones: must not be an empty list" },
	{ NULL, NULL, "  zones: {a: b}\n", NULL,
	    "t.yaml: slice.zones: must be a list" },
	{ NULL, NULL, "  node-count: 1\n", NULL,
	    "t.yaml: slice.node-count: 1 is out of range: 2 to 256" },
	{ NULL, NULL, "  node-count: 300\n", NULL,
	    "t.yaml: slice.node-count: " },
	{ NULL, NULL, "  node-count: two\n", NULL,
	    "t.yaml: slice.node-count: must be a whole number" },
	{ NULL, NULL, "  node-prefix: p\n", NULL,
	    "t.yaml: slice.node-prefix: goes with slice.node-count" },
	{ NULL, NULL, "  node-count: 2\n  node-prefix: P_x\n", NULL,
	    "t.yaml: slice.node-prefix: " },
	{ "n012345678901234567890123456789012345678901234567890123456789", NULL,
	    "  node-count: 20\n", NULL, "t.yaml: name: node id 'n0123" },
	{ NULL, NULL, "  labels: {Env: dev}\n", NULL,
	    "t.yaml: slice.labels.Env: " },
	{ NULL, NULL, "  labels: {env: Dev}\n", NULL,
	    "t.yaml: slice.labels.env: " },
	{ NULL, NULL, "  labels: {env: [a]}\n", NULL,
	    "t.yaml: slice.labels.env: must be a string, not a list" },
	{ NULL, NULL, "  labels: [a]\n", NULL,
	    "t.yaml: slice.labels: must be a mapping" },
	{ NULL, NULL, "  labels: {tpuctl-run-id: x}\n", NULL,
	    "t.yaml: slice.labels.tpuctl-run-id: the label is reserved" },
	{ NULL, NULL, "  metadata: {no-such-key: x}\n", NULL,
	    "t.yaml: slice.metadata.no-such-key: " },
	{ NULL, NULL, "  metadata: {'bad key': x}\n  metadata-raw: true\n",
	    NULL, "t.yaml: slice.metadata.bad key: " },
	{ NULL, NULL, "  metadata: {ssh-keys: 'root:junk'}\n", NULL,
	    "t.yaml: slice.metadata.ssh-keys: " },
	{ NULL, NULL, "  description: [x]\n", NULL,
	    "t.yaml: slice.description: must be a string" },
	{ NULL, NULL, "  description: \"a\\x01b\"\n", NULL,
	    "t.yaml: slice.description: " },
	{ NULL, NULL, "  network: ''\n", NULL, "t.yaml: slice.network: " },
	{ NULL, NULL, "  subnetwork: {}\n", NULL,
	    "t.yaml: slice.subnetwork: " },
	{ NULL, NULL, "  tags: ['a,b']\n", NULL,
	    "t.yaml: slice.tags: item 0 'a,b' has a comma" },
	{ NULL, NULL, "  scopes: [x, '']\n", NULL,
	    "t.yaml: slice.scopes: item 1 must be a non-empty string" },
	{ NULL, NULL, "  service-account: nobody\n", NULL,
	    "t.yaml: slice.service-account: 'nobody' is not an email" },
	{ NULL, NULL, "  valid-until-duration: 5x\n", NULL,
	    "t.yaml: slice.valid-until-duration: " },
	{ NULL, NULL, "  zoens: [us-central2-b]\n", NULL,
	    "t.yaml: unknown key 'slice.zoens'; did you mean 'slice.zones'?" },
	{ NULL, NULL, NULL, "slcie: {}\n",
	    "t.yaml: unknown key 'slcie'; did you mean 'slice'?" },
	{ NULL, NULL, NULL, "wibble: 1\n", "t.yaml: unknown key 'wibble' (" },
	{ NULL, NULL, NULL, "framework: JAX\ncommand: x\n",
	    "t.yaml: framework: 'JAX' is not a framework name" },
	{ NULL, NULL, NULL, "framework: {name: jax, version: x1}\ncommand: x\n",
	    "t.yaml: framework.version: 'x1' is not a dotted version" },
	{ NULL, NULL, NULL, "framework: {nme: jax}\ncommand: x\n",
	    "t.yaml: unknown key 'framework.nme'; did you mean "
	    "'framework.name'?" },
	{ NULL, NULL, NULL, "workdir: /nonexistent/dir\ncommand: x\n",
	    "t.yaml: workdir: '/nonexistent/dir' is not a directory" },
	{ NULL, NULL, NULL, "stage: s3://b/p\ncommand: x\n",
	    "t.yaml: stage: 's3://b/p' is not a gs://" },
	{ NULL, NULL, NULL, "stage: gs://A_bad/p\ncommand: x\n",
	    "t.yaml: stage: " },
	{ NULL, NULL, NULL, "env: {1X: a}\ncommand: x\n",
	    "t.yaml: env.1X: '1X' is not a variable name" },
	{ NULL, NULL, NULL, "env: {TPUCTL_JOB: a}\ncommand: x\n",
	    "t.yaml: env.TPUCTL_JOB: " },
	{ NULL, NULL, NULL, "env: [A]\ncommand: x\n",
	    "t.yaml: env: must be a mapping" },
	{ NULL, NULL, NULL, "command: []\n",
	    "t.yaml: command: must not be an empty list" },
	{ NULL, NULL, NULL, "command: {a: b}\n",
	    "t.yaml: command: must be a shell line or a list" },
	{ NULL, NULL, NULL, "command: [python3, {a: b}]\n",
	    "t.yaml: command: item 1 must be a string" },
	{ NULL, NULL, NULL, "max-restarts: -1\ncommand: x\n",
	    "t.yaml: max-restarts: -1 is out of range" },
	{ NULL, NULL, NULL, "max-restarts: lots\ncommand: x\n",
	    "t.yaml: max-restarts: must be a whole number" },
	{ NULL, NULL, NULL, "timeout: forever\ncommand: x\n",
	    "t.yaml: timeout: " },
	{ NULL, NULL, NULL, "timeout: 0\ncommand: x\n",
	    "t.yaml: timeout: must be longer than 0 s" },
	{ NULL, NULL, NULL, "delete-after: sure\ncommand: x\n",
	    "t.yaml: delete-after: must be true or false" },
	{ NULL, NULL, NULL, "env: {A: b}\n",
	    "t.yaml: env: describes a job: give its command too" },
	{ NULL, NULL, NULL, "checkpoint: s3://b/ck\ncommand: x\n",
	    "t.yaml: checkpoint: 's3://b/ck' must be a gs://BUCKET[/PREFIX] "
	    "URL" },
	{ NULL, NULL, NULL, "checkpoint: gs://A_bad/ck\ncommand: x\n",
	    "t.yaml: checkpoint: " },
	{ NULL, NULL, NULL, "checkpoint: [gs://b/ck]\ncommand: x\n",
	    "t.yaml: checkpoint: must be a string, not a list" },
	{ NULL, NULL, NULL, "checkpoint: gs://bkt/ck\n",
	    "t.yaml: checkpoint: describes a job: give its command too" },
	{ NULL, NULL, NULL,
	    "restart-on-failure: yes\nmax-restarts: 1\ncommand: x\n",
	    "t.yaml: restart-on-failure: must be true or false, not a "
	    "string 'yes'" },
	{ NULL, NULL, NULL, "restart-on-failure: true\ncommand: x\n",
	    "t.yaml: restart-on-failure: goes with max-restarts" },
	{ NULL, NULL, NULL, "restart-on-falure: true\ncommand: x\n",
	    "t.yaml: unknown key 'restart-on-falure'; did you mean "
	    "'restart-on-failure'?" },
	{ NULL, NULL, NULL, "slice: {}\n",
	    "t.yaml:4:1: key 'slice' given twice" },
};

static int
parse(struct spec *s, const char *text, struct tpu_err *e)
{
	tpu_err_init(e);
	return spec_parse(s, text, strlen(text), "t.yaml", NULL, e);
}

START_TEST(bad_values)
{
	const struct bad_case *c = &bad_cases[_i];
	struct spec s;
	struct tpu_err e;
	char *text;

	text = xasprintf("name: %s\nslice:\n%s%s%s%s%s",
	    c->name ? c->name : "n1",
	    c->accel && *c->accel == '\0' ? "" : "  accelerator-type: ",
	    c->accel && *c->accel == '\0' ? "" : (c->accel ? c->accel : "v4-8"),
	    c->accel && *c->accel == '\0' ? "" : "\n", c->slice ? c->slice : "",
	    c->top ? c->top : "");
	ck_assert_msg(parse(&s, text, &e) == TPU_E_USAGE,
	    "case %d accepted:\n%s", _i, text);
	ck_assert_int_eq(e.code, TPU_E_USAGE);
	ck_assert_msg(strstr(e.msg, c->want) != NULL,
	    "case %d: message '%s' lacks '%s'", _i, e.msg, c->want);
	ck_assert_ptr_null(s.root);
	free(text);
}
END_TEST

START_TEST(document_refusals)
{
	static const char *const docs[] = {
		"",
		"# nothing\n",
		"- a\n- b\n",
		"just a string\n",
		"name: n1\n",
		"slice: {accelerator-type: v4-8}\n",
		"name: n1\nslice: v4-8\n",
		"name: &a n1\nslice: {accelerator-type: v4-8}\n",
		"x: &a {b: c}\nname: *a\n",
		"name: n1\nslice: {accelerator-type: v4-8}\n---\nname: n2\n",
		"name: n1\nslice: {accelerator-type: v4-8\n",
		"{\"name\": \"n1\", \"slice\": ",
		"{\"name\": \"n1\", \"slice\": {}} trailing",
		"{\"name\": 5, \"slice\": {\"accelerator-type\": \"v4-8\"}}",
	};
	struct spec s;
	struct tpu_err e;
	size_t i;

	for (i = 0; i < sizeof docs / sizeof docs[0]; i++) {
		ck_assert_msg(parse(&s, docs[i], &e) == TPU_E_USAGE,
		    "doc %zu accepted", i);
		ck_assert_msg(strncmp(e.msg, "t.yaml", 6) == 0,
		    "doc %zu: '%s' does not name the file", i, e.msg);
	}
	ck_assert_int_eq(parse(&s, "x: *a\n", &e), TPU_E_USAGE);
	ck_assert_int_eq(parse(&s, "name: n1\nslice: {\n", &e), TPU_E_USAGE);
	ck_assert(strstr(e.msg, "invalid YAML") != NULL);
}
END_TEST

static const char full_yaml[] = "# a full spec\n"
                                "name: train-1\n"
                                "slice:\n"
                                "  accelerator-type: v4-16\n"
                                "  version: tpu-ubuntu2204-base\n"
                                "  spot: true\n"
                                "  zones: us-central2-b\n"
                                "  node-count: 2\n"
                                "  node-prefix: tr\n"
                                "  labels:\n"
                                "    env: dev\n"
                                "    build: 123\n"
                                "  metadata:\n"
                                "    startup-script: |\n"
                                "      echo one, two\n"
                                "  description: \"a, b\"\n"
                                "  tags: [t1, t2]\n"
                                "  valid-until-duration: 2h\n"
                                "framework: {name: jax, version: 0.4.30}\n"
                                "workdir: .\n"
                                "stage: gs://my-bucket/jobs\n"
                                "env: {STEPS: 100, LR: '0.1'}\n"
                                "command: [python3, train.py, --steps, 100]\n"
                                "max-restarts: 3\n"
                                "restart-on-failure: true\n"
                                "checkpoint: gs://my-bucket/ck/train-1\n"
                                "timeout: 1h30m\n"
                                "delete-after: true\n";

START_TEST(full_spec)
{
	struct spec s;
	struct tpu_err e;
	cJSON *ids;

	ck_assert_msg(parse(&s, full_yaml, &e) == 0, "%s", e.msg);
	ck_assert_str_eq(s.name, "train-1");
	ck_assert_str_eq(s.acc.type, "v4-16");
	ck_assert_int_eq(s.acc.hosts, 2);
	ck_assert_int_eq(s.spot, 1);
	ck_assert_int_eq(s.node_count, 2);
	ck_assert_int_eq(spec_queued(&s), 1);
	ck_assert_int_eq(cJSON_GetArraySize(s.zones), 1);
	ck_assert_str_eq(json_opt_string(s.labels, "build", ""), "123");
	ck_assert_str_eq(json_opt_string(s.metadata, "startup-script", ""),
	    "echo one, two\n");
	ck_assert_str_eq(s.description, "a, b");
	ck_assert_str_eq(s.framework, "jax");
	ck_assert_str_eq(s.framework_version, "0.4.30");
	ck_assert_str_eq(json_opt_string(s.env, "STEPS", ""), "100");
	ck_assert_int_eq(cJSON_GetArraySize(s.command), 4);
	ck_assert_int_eq(s.max_restarts, 3);
	ck_assert_int_eq(s.restart_on_failure, 1);
	ck_assert_str_eq(s.checkpoint, "gs://my-bucket/ck/train-1");
	ck_assert_int_eq(s.timeout_secs, 5400);
	ck_assert_int_eq(s.delete_after, 1);
	ck_assert_int_eq(s.has_job, 1);
	ids = spec_node_ids(&s);
	ck_assert_int_eq(cJSON_GetArraySize(ids), 2);
	ck_assert_str_eq(cJSON_GetArrayItem(ids, 1)->valuestring, "tr-1");
	cJSON_Delete(ids);
	spec_release(&s);
	ck_assert_ptr_null(s.root);
}
END_TEST

START_TEST(command_line)
{
	struct spec s;
	struct tpu_err e;
	char *c;

	ck_assert_int_eq(parse(&s,
	                     "name: n1\nslice: {accelerator-type: v4-8}\n"
	                     "command: [python3, \"it's a b\", 3, true]\n",
	                     &e),
	    0);
	c = spec_command_line(&s);
	ck_assert_str_eq(c, "'python3' 'it'\\''s a b' '3' 'true'");
	free(c);
	spec_release(&s);
	ck_assert_int_eq(parse(&s,
	                     "name: n1\nslice: {accelerator-type: v4-8}\n"
	                     "command: echo \"$HOME\" | wc -c\n",
	                     &e),
	    0);
	c = spec_command_line(&s);
	ck_assert_str_eq(c, "echo \"$HOME\" | wc -c");
	free(c);
	spec_release(&s);
	ck_assert_int_eq(
	    parse(&s, "name: n1\nslice: {accelerator-type: v4-8}\n", &e), 0);
	ck_assert_ptr_null(spec_command_line(&s));
	spec_release(&s);
}
END_TEST

START_TEST(json_spec)
{
	struct spec s;
	struct tpu_err e;

	ck_assert_int_eq(
	    parse(&s,
	        "  {\"name\": \"n1\", \"slice\": {\"type\": \"v4\", "
	        "\"topology\": \"2x2x2\", \"labels\": {\"a\": \"b\"}, "
	        "\"preemptible\": true}}",
	        &e),
	    0);
	ck_assert_str_eq(s.acc.type, "v4-16");
	ck_assert_int_eq(s.preemptible, 1);
	ck_assert_int_eq(spec_queued(&s), 0);
	ck_assert_int_eq(s.has_job, 0);
	spec_release(&s);
	/* JSON numbers are not strings (only YAML plain scalars are). */
	ck_assert_int_eq(parse(&s,
	                     "{\"name\": \"n1\", \"slice\": {\"accelerator-"
	                     "type\": \"v4-8\", \"labels\": {\"a\": 1}}}",
	                     &e),
	    TPU_E_USAGE);
	ck_assert(strstr(e.msg, "slice.labels.a: must be a string") != NULL);
}
END_TEST

START_TEST(workdir_relative)
{
	const char *src = getenv("TPUCTL_TEST_SRCDIR");
	char *tests = xasprintf("%s/tests", src != NULL ? src : ".");
	struct spec s;
	struct tpu_err e;
	const char *t = "name: n1\nslice: {accelerator-type: v4-8}\n"
	                "workdir: unit\ncommand: 'true'\n";

	tpu_err_init(&e);
	ck_assert_int_eq(spec_parse(&s, t, strlen(t), "t.yaml", tests, &e), 0);
	{
		/* the path as resolved, what submit packs */
		char *want = xasprintf("%s/unit", tests);

		ck_assert_str_eq(s.workdir, want);
		free(want);
	}
	spec_release(&s);
	ck_assert_int_eq(
	    spec_parse(&s, t, strlen(t), "t.yaml", "/nonexistent", &e),
	    TPU_E_USAGE);
	ck_assert(
	    strstr(e.msg, "t.yaml: workdir: '/nonexistent/unit'") != NULL);
	free(tests);
}
END_TEST

START_TEST(load_file)
{
	char dir[] = "/tmp/check_spec.XXXXXX", *path, *sub;
	struct spec s;
	struct tpu_err e;
	FILE *fp;

	ck_assert_ptr_nonnull(mkdtemp(dir));
	path = xasprintf("%s/job.yaml", dir);
	sub = xasprintf("%s/src", dir);
	ck_assert_int_eq(mkdir(sub, 0700), 0);
	fp = fopen(path, "w");
	ck_assert_ptr_nonnull(fp);
	fputs("name: n1\nslice: {accelerator-type: v4-8}\nworkdir: src\n"
	      "command: 'true'\n",
	    fp);
	fclose(fp);
	tpu_err_init(&e);
	/* workdir is relative to the spec's directory, not the cwd */
	ck_assert_msg(spec_load(&s, path, &e) == 0, "%s", e.msg);
	/* and kept as resolved from there */
	ck_assert_str_eq(s.workdir, sub);
	spec_release(&s);
	unlink(path);
	ck_assert_int_eq(spec_load(&s, path, &e), TPU_E_USAGE);
	ck_assert(strstr(e.msg, "job.yaml") != NULL);
	rmdir(sub);
	rmdir(dir);
	free(path);
	free(sub);
}
END_TEST

static const char *
field_op(const cJSON *changes, const char *field)
{
	const cJSON *c;

	cJSON_ArrayForEach(
	    c, changes) if (strcmp(json_opt_string(c, "field", ""), field) ==
	                    0) return json_opt_string(c, "op", "");
	return NULL;
}

START_TEST(diff_node)
{
	struct spec s;
	struct tpu_err e;
	cJSON *node, *changes = cJSON_CreateArray();
	const char *t = "name: n1\nslice:\n  accelerator-type: v4-8\n"
	                "  version: tpu-ubuntu2204-base\n"
	                "  labels: {env: prod, team: a}\n"
	                "  metadata: {startup-script: 'echo hi'}\n"
	                "  description: new\n";

	ck_assert_int_eq(parse(&s, t, &e), 0);
	node = cJSON_Parse(
	    "{\"acceleratorType\": \"v4-8\", \"runtimeVersion\": "
	    "\"tpu-ubuntu2204-base\", \"description\": \"new\", "
	    "\"labels\": {\"env\": \"prod\", \"team\": \"a\", "
	    "\"tpuctl-run-id\": \"0123\"}, \"metadata\": {\"startup-script\": "
	    "\"echo hi\", \"ssh-keys\": \"root:ssh-ed25519 AAAA\"}}");
	/* Identical: the run id label and ssh-keys are not differences. */
	ck_assert_int_eq(spec_diff(&s, node, NULL, changes), 0);
	cJSON_ReplaceItemInObject(
	    node, "acceleratorType", cJSON_CreateString("v4-16"));
	cJSON_ReplaceItemInObject(
	    node, "description", cJSON_CreateString("old"));
	cJSON_ReplaceItemInObject(node, "labels",
	    cJSON_Parse("{\"env\": \"dev\", \"owner\": \"x\"}"));
	cJSON_ReplaceItemInObject(node, "metadata", cJSON_CreateObject());
	ck_assert_int_eq(spec_diff(&s, node, NULL, changes), 6);
	ck_assert_str_eq(field_op(changes, "accelerator-type"), "~");
	ck_assert_ptr_nonnull(
	    json_path(cJSON_GetArrayItem(changes, 0), "immutable"));
	ck_assert_str_eq(field_op(changes, "description"), "~");
	ck_assert_str_eq(field_op(changes, "labels.env"), "~");
	ck_assert_str_eq(field_op(changes, "labels.team"), "+");
	ck_assert_str_eq(field_op(changes, "labels.owner"), "-");
	ck_assert_str_eq(field_op(changes, "metadata.startup-script"), "+");
	cJSON_Delete(node);
	cJSON_Delete(changes);
	spec_release(&s);
}
END_TEST

START_TEST(diff_scheduling_and_qr)
{
	struct spec s;
	struct tpu_err e;
	cJSON *qr, *changes = cJSON_CreateArray(), *node;

	ck_assert_int_eq(parse(&s,
	                     "name: q1\nslice: {accelerator-type: v4-16, "
	                     "node-count: 2, spot: true}\n",
	                     &e),
	    0);
	qr = cJSON_Parse("{\"spot\": {}, \"tpu\": {\"nodeSpec\": [{"
	                 "\"multisliceParams\": {\"nodeCount\": 2}}]}}");
	ck_assert_int_eq(spec_diff_qr(&s, qr, changes), 0);
	/* v2alpha1's name of the same: a multislice created there */
	cJSON_ReplaceItemInObject(qr, "tpu",
	    cJSON_Parse("{\"nodeSpec\": [{\"multiNodeParams\": "
	                "{\"nodeCount\": 2, \"workloadType\": "
	                "\"AVAILABILITY_OPTIMIZED\"}}]}"));
	ck_assert_int_eq(spec_diff_qr(&s, qr, changes), 0);
	ck_assert_int_eq(cJSON_GetArraySize(changes), 0);
	cJSON_ReplaceItemInObject(qr, "tpu",
	    cJSON_Parse("{\"nodeSpec\": [{\"multiNodeParams\": "
	                "{\"nodeCount\": 3}}]}"));
	ck_assert_int_eq(spec_diff_qr(&s, qr, changes), 1);
	ck_assert_str_eq(field_op(changes, "node-count"), "~");
	cJSON_Delete(changes);
	changes = cJSON_CreateArray();
	cJSON_DeleteItemFromObject(qr, "spot");
	cJSON_ReplaceItemInObject(
	    qr, "tpu", cJSON_Parse("{\"nodeSpec\": [{\"nodeId\": \"q1\"}]}"));
	ck_assert_int_eq(spec_diff_qr(&s, qr, changes), 2);
	ck_assert_str_eq(field_op(changes, "node-count"), "~");
	ck_assert_str_eq(field_op(changes, "spot"), "~");
	cJSON_Delete(qr);
	spec_release(&s);
	cJSON_Delete(changes);

	/* A preemptible node created directly: its scheduling compared. */
	changes = cJSON_CreateArray();
	ck_assert_int_eq(parse(&s,
	                     "name: n1\nslice: {accelerator-type: v4-8, "
	                     "preemptible: true}\n",
	                     &e),
	    0);
	node = cJSON_Parse("{\"acceleratorType\": \"v4-8\"}");
	ck_assert_int_eq(spec_diff(&s, node, NULL, changes), 1);
	ck_assert_str_eq(field_op(changes, "preemptible"), "~");
	cJSON_Delete(node);
	cJSON_Delete(changes);
	spec_release(&s);
}
END_TEST

static Suite *
spec_suite(void)
{
	Suite *s = suite_create("spec");
	TCase *tc = tcase_create("validate");

	tcase_add_loop_test(
	    tc, bad_values, 0, (int)(sizeof bad_cases / sizeof bad_cases[0]));
	tcase_add_test(tc, document_refusals);
	tcase_add_test(tc, full_spec);
	tcase_add_test(tc, json_spec);
	tcase_add_test(tc, workdir_relative);
	tcase_add_test(tc, load_file);
	suite_add_tcase(s, tc);
	tc = tcase_create("diff");
	tcase_add_test(tc, command_line);
	tcase_add_test(tc, diff_node);
	tcase_add_test(tc, diff_scheduling_and_qr);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	SRunner *sr = srunner_create(spec_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
