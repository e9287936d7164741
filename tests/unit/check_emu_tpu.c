/*
 * Unit tests for the emulator's Cloud TPU API logic (emulator/tpu_logic.c):
 * request paths, enum numbers for enum-encoding=int, page tokens, fault
 * specs, node validation and normalisation, update masks, queued-resource
 * node ids, durations and times.
 */
#include <stdlib.h>
#include <string.h>

#include <check.h>

#include "offer.h"
#include "tpu_logic.h"

START_TEST(paths)
{
	struct tpu_path p;

	ck_assert_int_eq(tpu_path_parse("/v2/projects/p1/locations", &p), 0);
	ck_assert_str_eq(p.project, "p1");
	ck_assert_str_eq(p.zone, "");
	ck_assert_int_eq(
	    tpu_path_parse("/v2alpha1/projects/p1/locations/us-central2-b", &p),
	    0);
	ck_assert_int_eq(p.api, TPU_API_V2ALPHA1);
	ck_assert_str_eq(p.zone, "us-central2-b");
	ck_assert_str_eq(p.coll, "");
	ck_assert_int_eq(
	    tpu_path_parse("/v2/projects/p1/locations/z/nodes", &p), 0);
	ck_assert_str_eq(p.coll, "nodes");
	ck_assert_str_eq(p.id, "");
	ck_assert_int_eq(tpu_path_parse("/v2/projects/p1/locations/z/nodes/"
	                                "n1:getGuestAttributes",
	                     &p),
	    0);
	ck_assert_str_eq(p.id, "n1");
	ck_assert_str_eq(p.verb, "getGuestAttributes");
	ck_assert_int_eq(tpu_path_parse("/v2/projects/p1/locations/z/"
	                                "operations/operation-1-ab:cancel",
	                     &p),
	    0);
	ck_assert_str_eq(p.id, "operation-1-ab");
	ck_assert_str_eq(p.verb, "cancel");
	ck_assert_int_eq(tpu_path_parse("/v2/projects/p1/locations/z/nodes/"
	                                "n1/extra",
	                     &p),
	    -1);
	ck_assert_int_eq(tpu_path_parse("/v1/projects/p1/locations", &p), -1);
	ck_assert_int_eq(tpu_path_parse("/v2/projects//locations", &p), -1);
	ck_assert_int_eq(tpu_path_parse("/v2/projects/p/zones", &p), -1);
	ck_assert_int_eq(
	    tpu_path_parse("/v2/projects/p/locations/z/nodes/", &p), -1);
	ck_assert_str_eq(tpu_api_name(TPU_API_V2), "v2");
}
END_TEST

START_TEST(enums)
{
	cJSON *j = cJSON_Parse(
	    "{\"state\":\"READY\",\"health\":\"HEALTHY\",\"apiVersion\":\"V2\","
	    "\"acceleratorConfig\":{\"type\":\"V4\",\"topology\":\"2x2x1\"},"
	    "\"metadata\":{\"apiVersion\":\"v2\",\"verb\":\"create\"},"
	    "\"response\":{\"state\":\"STOPPED\"},"
	    "\"acceleratorConfigs\":[{\"type\":\"V5LITE_POD\"},{\"type\":"
	    "\"V6E\"}],"
	    "\"queued\":{\"state\":{\"state\":\"ACTIVE\",\"stateInitiator\":"
	    "\"USER\"}},\"labels\":{\"state\":\"READY\"}}");

	tpu_enums_to_int(j);
	ck_assert_int_eq(cJSON_GetObjectItem(j, "state")->valueint, 2);
	ck_assert_int_eq(cJSON_GetObjectItem(j, "health")->valueint, 1);
	ck_assert_int_eq(cJSON_GetObjectItem(j, "apiVersion")->valueint, 4);
	ck_assert_int_eq(
	    cJSON_GetObjectItem(
	        cJSON_GetObjectItem(j, "acceleratorConfig"), "type")
	        ->valueint,
	    7);
	ck_assert_str_eq(cJSON_GetObjectItem(
	                     cJSON_GetObjectItem(j, "metadata"), "apiVersion")
	                     ->valuestring,
	    "v2");
	ck_assert_int_eq(
	    cJSON_GetObjectItem(cJSON_GetObjectItem(j, "response"), "state")
	        ->valueint,
	    8);
	ck_assert_int_eq(
	    cJSON_GetArrayItem(cJSON_GetObjectItem(j, "acceleratorConfigs"), 0)
	        ->child->valueint,
	    9);
	ck_assert_int_eq(
	    cJSON_GetArrayItem(cJSON_GetObjectItem(j, "acceleratorConfigs"), 1)
	        ->child->valueint,
	    11);
	{
		cJSON *st = cJSON_GetObjectItem(
		    cJSON_GetObjectItem(j, "queued"), "state");

		ck_assert_int_eq(cJSON_GetObjectItem(st, "state")->valueint, 6);
		ck_assert_int_eq(
		    cJSON_GetObjectItem(st, "stateInitiator")->valueint, 1);
	}
	/* Back to names. */
	tpu_enums_to_str(j);
	ck_assert_str_eq(cJSON_GetObjectItem(j, "state")->valuestring, "READY");
	ck_assert_str_eq(
	    cJSON_GetObjectItem(
	        cJSON_GetObjectItem(j, "acceleratorConfig"), "type")
	        ->valuestring,
	    "V4");
	cJSON_Delete(j);
	ck_assert_int_eq(tpu_enum_num("", "state", "PREEMPTED"), 11);
	ck_assert_int_eq(
	    tpu_enum_num("state", "state", "WAITING_FOR_RESOURCES"), 9);
	ck_assert_int_eq(
	    tpu_enum_num("", "state", "WAITING_FOR_RESOURCES"), -1);
	ck_assert_int_eq(tpu_enum_num("acceleratorConfig", "type", "V5P"), 10);
}
END_TEST

START_TEST(strip_private)
{
	cJSON *j = cJSON_Parse("{\"_a\":1,\"b\":{\"_c\":2,\"d\":3},"
	                       "\"e\":[{\"_f\":1,\"g\":2}]}");
	char *s;

	tpu_strip_private(j);
	s = cJSON_PrintUnformatted(j);
	ck_assert_str_eq(s, "{\"b\":{\"d\":3},\"e\":[{\"g\":2}]}");
	cJSON_free(s);
	cJSON_Delete(j);
}
END_TEST

START_TEST(page_tokens)
{
	char t[32];
	size_t i;

	for (i = 0; i < 100000; i += 997) {
		tpu_page_token(i, t, sizeof t);
		ck_assert_int_eq(tpu_page_token_parse(t), (long)i);
	}
	ck_assert_int_eq(tpu_page_token_parse(""), -1);
	ck_assert_int_eq(tpu_page_token_parse("garbage"), -1);
	ck_assert_int_eq(tpu_page_token_parse("CgTzzzzzzzz"), -1);
	ck_assert_int_eq(tpu_page_token_parse("CgT5A17C3E9"), -1);
	ck_assert_int_eq(tpu_page_token_parse(NULL), -1);
}
END_TEST

START_TEST(lro_specs)
{
	long n = 0;
	char msg[512];

	ck_assert_int_eq(tpu_lro_spec("lro-pending-5", &n), TPU_LRO_PENDING);
	ck_assert_int_eq(n, 5);
	ck_assert_int_eq(tpu_lro_spec("lro-pending-inf", &n), TPU_LRO_PENDING);
	ck_assert_int_eq(n, -1);
	ck_assert_int_eq(tpu_lro_spec("lro-error-8", &n), TPU_LRO_ERROR);
	ck_assert_int_eq(n, 8);
	ck_assert_int_eq(tpu_lro_spec("lro-error-0", &n), TPU_LRO_NONE);
	ck_assert_int_eq(tpu_lro_spec("lro-error-99", &n), TPU_LRO_NONE);
	ck_assert_int_eq(tpu_lro_spec("lro-pending-x", &n), TPU_LRO_NONE);
	ck_assert_int_eq(tpu_lro_spec("return-503", &n), TPU_LRO_NONE);
	ck_assert_int_eq(tpu_lro_spec(NULL, &n), TPU_LRO_NONE);
	tpu_op_error_message(8, "us-central2-b", 0xabcULL, msg, sizeof msg);
	ck_assert_str_eq(msg,
	    "There is no more capacity in the zone \"us-central2-b\"; you can "
	    "try in another zone where Cloud TPU Nodes are offered (see "
	    "https://cloud.google.com/tpu/docs/regions) [EID: 0xabc]");
	ck_assert_str_eq(tpu_code_name(8), "RESOURCE_EXHAUSTED");
	ck_assert_str_eq(tpu_code_name(9), "FAILED_PRECONDITION");
	ck_assert_str_eq(tpu_code_name(99), "UNKNOWN");
}
END_TEST

static int
check_body(
    const char *json, const char *zone, int *nworkers, char *msg, cJSON **out)
{
	cJSON *j = cJSON_Parse(json);
	int rc;

	ck_assert_ptr_nonnull(j);
	rc = tpu_node_check(j, zone, nworkers, msg, 1024);
	if (out != NULL)
		*out = j;
	else
		cJSON_Delete(j);
	return rc;
}

START_TEST(node_check_ok)
{
	char msg[1024];
	cJSON *j;
	int n = 0;

	ck_assert_int_eq(
	    check_body("{\"acceleratorType\":\"v4-32\","
	               "\"runtimeVersion\":\"tpu-ubuntu2204-base\","
	               "\"labels\":{\"env\":\"prod\"}}",
	        "us-central2-b", &n, msg, &j),
	    0);
	ck_assert_int_eq(n, 4);
	ck_assert_str_eq(
	    cJSON_GetObjectItem(
	        cJSON_GetObjectItem(j, "acceleratorConfig"), "topology")
	        ->valuestring,
	    "2x2x4");
	ck_assert_str_eq(
	    cJSON_GetObjectItem(
	        cJSON_GetObjectItem(j, "acceleratorConfig"), "type")
	        ->valuestring,
	    "V4");
	cJSON_Delete(j);
	/* The config alone, with the enum as a number. */
	ck_assert_int_eq(
	    check_body("{\"acceleratorConfig\":{\"type\":9,"
	               "\"topology\":\"4x4\"},"
	               "\"runtimeVersion\":\"v2-alpha-tpuv5-lite\"}",
	        "us-west4-a", &n, msg, &j),
	    0);
	ck_assert_str_eq(cJSON_GetObjectItem(j, "acceleratorType")->valuestring,
	    "v5litepod-16");
	ck_assert_int_eq(n, 4);
	cJSON_Delete(j);
	/* Both, consistent: the given topology is kept. */
	ck_assert_int_eq(check_body("{\"acceleratorType\":\"v4-32\","
	                            "\"acceleratorConfig\":{\"type\":\"V4\","
	                            "\"topology\":\"4x2x2\"},"
	                            "\"runtimeVersion\":\"tpu-vm-v4-base\"}",
	                     "us-central2-b", &n, msg, &j),
	    0);
	ck_assert_str_eq(
	    cJSON_GetObjectItem(
	        cJSON_GetObjectItem(j, "acceleratorConfig"), "topology")
	        ->valuestring,
	    "4x2x2");
	cJSON_Delete(j);
}
END_TEST

START_TEST(node_check_bad)
{
	static const struct {
		const char *body, *zone, *word;
	} rows[] = {
		{ "{\"acceleratorType\":\"v4-8\",\"runtimeVersion\":"
		  "\"tpu-vm-v4-base\"}",
		    "us-central1-a", "is not available in zone" },
		{ "{\"acceleratorType\":\"v9-8\",\"runtimeVersion\":\"x\"}",
		    "us-central2-b", "unknown TPU generation" },
		{ "{\"acceleratorType\":\"v4-8\"}", "us-central2-b",
		    "runtime_version' is required" },
		{ "{\"acceleratorType\":\"v4-8\",\"runtimeVersion\":"
		  "\"v2-alpha-tpuv6e\"}",
		    "us-central2-b", "is not supported" },
		{ "{\"runtimeVersion\":\"tpu-vm-v4-base\"}", "us-central2-b",
		    "must be specified" },
		{ "{\"acceleratorType\":\"v4-8\",\"acceleratorConfig\":{"
		  "\"type\":\"V4\",\"topology\":\"4x4x4\"},"
		  "\"runtimeVersion\":\"tpu-vm-v4-base\"}",
		    "us-central2-b", "has 64 chips" },
		{ "{\"acceleratorConfig\":{\"type\":\"V5P\",\"topology\":"
		  "\"2x2\"},\"runtimeVersion\":\"v2-alpha-tpuv5\"}",
		    "us-east5-a", "3 dimensions" },
		{ "{\"acceleratorType\":\"v4-8\",\"runtimeVersion\":"
		  "\"tpu-vm-v4-base\",\"labels\":{\"Env\":\"x\"}}",
		    "us-central2-b", "label key 'Env'" },
		{ "{\"acceleratorType\":\"v4-8\",\"runtimeVersion\":"
		  "\"tpu-vm-v4-base\",\"metadata\":{\"bad key\":\"x\"}}",
		    "us-central2-b", "metadata key 'bad key'" },
		{ "{\"acceleratorType\":\"v4-8\",\"runtimeVersion\":"
		  "\"tpu-vm-v4-base\",\"schedulingConfig\":{\"spot\":true,"
		  "\"reserved\":true}}",
		    "us-central2-b", "cannot also be reserved" },
		{ "{\"acceleratorType\":\"v4-8\",\"runtimeVersion\":"
		  "\"tpu-vm-v4-base\",\"tags\":[\"Bad Tag\"]}",
		    "us-central2-b", "node.tags" },
		{ "{\"acceleratorType\":\"v4-8\",\"runtimeVersion\":"
		  "\"tpu-vm-v4-base\"}",
		    "us-nowhere1-a", "is not found" },
	};
	char msg[1024];
	size_t i;
	int n;

	for (i = 0; i < sizeof rows / sizeof rows[0]; i++) {
		msg[0] = '\0';
		ck_assert_msg(
		    check_body(rows[i].body, rows[i].zone, &n, msg, NULL) == -1,
		    "accepted %s", rows[i].body);
		ck_assert_msg(strstr(msg, rows[i].word) != NULL,
		    "row %zu: '%s' lacks '%s'", i, msg, rows[i].word);
	}
}
END_TEST

START_TEST(update_masks)
{
	char msg[256];
	unsigned f = 0;

	ck_assert_int_eq(
	    tpu_update_mask_check("labels", &f, msg, sizeof msg), 0);
	ck_assert_uint_eq(f, TPU_MASK_LABELS);
	ck_assert_int_eq(tpu_update_mask_check("labels,metadata,description,"
	                                       "tags",
	                     &f, msg, sizeof msg),
	    0);
	ck_assert_uint_eq(f, TPU_MASK_LABELS | TPU_MASK_METADATA |
	                         TPU_MASK_DESCRIPTION | TPU_MASK_TAGS);
	ck_assert_int_eq(tpu_update_mask_check("network_config.enable_external_"
	                                       "ips",
	                     &f, msg, sizeof msg),
	    0);
	ck_assert_uint_eq(f, TPU_MASK_EXTERNAL_IPS);
	ck_assert_int_eq(
	    tpu_update_mask_check("networkConfig.enableExternalIps,"
	                          "tags",
	        &f, msg, sizeof msg),
	    0);
	ck_assert_uint_eq(f, TPU_MASK_EXTERNAL_IPS | TPU_MASK_TAGS);
	ck_assert_int_eq(
	    tpu_update_mask_check(NULL, NULL, msg, sizeof msg), -1);
	ck_assert_int_eq(tpu_update_mask_check("", NULL, msg, sizeof msg), -1);
	ck_assert_int_eq(
	    tpu_update_mask_check("acceleratorType", NULL, msg, sizeof msg),
	    -1);
	ck_assert_ptr_nonnull(strstr(msg, "\"acceleratorType\""));
	ck_assert_int_eq(
	    tpu_update_mask_check("networkConfig", NULL, msg, sizeof msg), -1);
	ck_assert_int_eq(
	    tpu_update_mask_check("schedulingConfig", NULL, msg, sizeof msg),
	    -1);
	ck_assert_int_eq(
	    tpu_update_mask_check("labels,", NULL, msg, sizeof msg), 0);
	ck_assert_int_eq(
	    tpu_update_mask_check("labelsx", NULL, msg, sizeof msg), -1);
	ck_assert_int_eq(
	    tpu_update_mask_check("metadat", NULL, msg, sizeof msg), -1);
}
END_TEST

START_TEST(qr_ids)
{
	char msg[512];
	cJSON *spec, *ids;

	spec = cJSON_Parse("{\"nodeId\":\"n1\"}");
	ids = tpu_qr_node_ids(spec, TPU_API_V2, msg, sizeof msg);
	ck_assert_int_eq(cJSON_GetArraySize(ids), 1);
	ck_assert_str_eq(cJSON_GetArrayItem(ids, 0)->valuestring, "n1");
	cJSON_Delete(ids);
	cJSON_Delete(spec);

	spec = cJSON_Parse("{\"multisliceParams\":{\"nodeCount\":2,"
	                   "\"nodeIdPrefix\":\"ms\"}}");
	ids = tpu_qr_node_ids(spec, TPU_API_V2, msg, sizeof msg);
	ck_assert_int_eq(cJSON_GetArraySize(ids), 2);
	ck_assert_str_eq(cJSON_GetArrayItem(ids, 1)->valuestring, "ms-1");
	cJSON_Delete(ids);
	/* v2alpha1 calls it multiNodeParams. */
	ck_assert_ptr_null(
	    tpu_qr_node_ids(spec, TPU_API_V2ALPHA1, msg, sizeof msg));
	ck_assert_ptr_nonnull(strstr(msg, "multiNodeParams"));
	cJSON_Delete(spec);
	spec = cJSON_Parse("{\"multiNodeParams\":{\"nodeCount\":\"3\","
	                   "\"nodeIdPrefix\":\"a\"}}");
	ids = tpu_qr_node_ids(spec, TPU_API_V2ALPHA1, msg, sizeof msg);
	ck_assert_int_eq(cJSON_GetArraySize(ids), 3);
	cJSON_Delete(ids);
	cJSON_Delete(spec);

	spec = cJSON_Parse("{\"nodeId\":\"n1\",\"multisliceParams\":{}}");
	ck_assert_ptr_null(tpu_qr_node_ids(spec, TPU_API_V2, msg, sizeof msg));
	cJSON_Delete(spec);
	spec = cJSON_Parse("{\"multisliceParams\":{\"nodeCount\":0,"
	                   "\"nodeIdPrefix\":\"ms\"}}");
	ck_assert_ptr_null(tpu_qr_node_ids(spec, TPU_API_V2, msg, sizeof msg));
	cJSON_Delete(spec);
	spec = cJSON_Parse("{\"multisliceParams\":{\"nodeCount\":2,"
	                   "\"nodeIdPrefix\":\"Bad\"}}");
	ck_assert_ptr_null(tpu_qr_node_ids(spec, TPU_API_V2, msg, sizeof msg));
	cJSON_Delete(spec);
	spec = cJSON_Parse("{\"nodeId\":\"-x\"}");
	ck_assert_ptr_null(tpu_qr_node_ids(spec, TPU_API_V2, msg, sizeof msg));
	cJSON_Delete(spec);
	spec = cJSON_Parse("{}");
	ck_assert_ptr_null(tpu_qr_node_ids(spec, TPU_API_V2, msg, sizeof msg));
	cJSON_Delete(spec);
}
END_TEST

START_TEST(durations_times)
{
	ck_assert_int_eq(tpu_duration_ms("3600s"), 3600000);
	ck_assert_int_eq(tpu_duration_ms("1.5s"), 1500);
	ck_assert_int_eq(tpu_duration_ms("0.001s"), 1);
	ck_assert_int_eq(tpu_duration_ms("3600"), -1);
	ck_assert_int_eq(tpu_duration_ms("s"), -1);
	ck_assert_int_eq(tpu_duration_ms("-1s"), -1);
	ck_assert_int_eq(tpu_time_ms("1970-01-01T00:00:01Z"), 1000);
	ck_assert_int_eq(
	    tpu_time_ms("2024-04-01T12:34:56.123456Z"), 1711974896123LL);
	ck_assert_int_eq(tpu_time_ms("2024-04-01T12:34:56"), -1);
	ck_assert_int_eq(tpu_time_ms("yesterday"), -1);
}
END_TEST

/*
 * The emulator's own offering (offer.c), each row a fact of Google's
 * version pages: chips, hosts and the default topology of a type.
 */
START_TEST(offering)
{
	static const struct {
		const char *type;
		int chips, hosts;
		const char *topology;
	} ok[] = {
		{ "v2-8", 4, 1, "2x2" },   /* v2: 4 chips per host */
		{ "v2-32", 16, 4, "4x4" }, /* v2-32: 4 hosts */
		{ "v3-2048", 1024, 256, "32x32" },
		{ "v4-8", 4, 1, "2x2x1" }, /* v4: 2 cores per chip */
		{ "v4-16", 8, 2, "2x2x2" },
		{ "v4-32", 16, 4, "2x2x4" },
		{ "v4-128", 64, 16, "4x4x4" },
		{ "v4-4096", 2048, 512, "8x16x16" },
		{ "v5litepod-1", 1, 1, "1x1" }, /* v5e: named by chips */
		{ "v5litepod-8", 8, 1, "2x4" }, /* 8 chips on one host */
		{ "v5litepod-16", 16, 4, "4x4" },
		{ "v5litepod-256", 256, 64, "16x16" },
		{ "v5p-8", 4, 1, "2x2x1" },
		{ "v6e-8", 8, 1, "2x4" },
		{ "v6e-256", 256, 64, "16x16" },
	};
	static const struct {
		const char *type, *why;
	} bad[] = {
		{ "", "empty" },
		{ "v9-8", "unknown TPU generation 'v9'" },
		{ "v4-7", "not a whole number of chips" },
		{ "v4-12", "no v4 slice of that size" },
		{ "v5litepod-2", "no v5litepod slice" },
		{ "V4-8", "did you mean 'v4-8'" },
		{ " v4-8", "did you mean 'v4-8'" },
		{ "v5e-8", "did you mean 'v5litepod-8'" },
		{ "v4-08", "positive integer" },
		{ "v4", "GENERATION-SIZE" },
	};
	struct offer_accel a;
	char msg[512], topo[32];
	size_t i;

	for (i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
		ck_assert_msg(
		    offer_accel_parse(ok[i].type, &a, msg, sizeof(msg)) == 0,
		    "%s: %s", ok[i].type, msg);
		ck_assert_str_eq(a.type, ok[i].type);
		ck_assert_int_eq(a.chips, ok[i].chips);
		ck_assert_int_eq(a.hosts, ok[i].hosts);
		ck_assert_str_eq(a.topology, ok[i].topology);
		ck_assert_int_eq(
		    offer_topology_at(&a, 0, topo, sizeof(topo)), 0);
		ck_assert_str_eq(topo, ok[i].topology);
	}
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		ck_assert_msg(
		    offer_accel_parse(bad[i].type, &a, msg, sizeof(msg)) == -1,
		    "%s accepted", bad[i].type);
		ck_assert_msg(strstr(msg, bad[i].why) != NULL, "%s: %s",
		    bad[i].type, msg);
	}
	/* v4-256 (128 chips): 4x4x8 first, no other shape. */
	ck_assert_int_eq(offer_accel_parse("v4-256", &a, msg, sizeof(msg)), 0);
	ck_assert_int_eq(offer_topology_at(&a, 1, topo, sizeof(topo)), -1);
	/* v4-2048 (1024 chips): 8x8x16 before 4x16x16. */
	ck_assert_int_eq(offer_accel_parse("v4-2048", &a, msg, sizeof(msg)), 0);
	ck_assert_str_eq(a.topology, "8x8x16");
	ck_assert_int_eq(offer_topology_at(&a, 1, topo, sizeof(topo)), 0);
	ck_assert_str_eq(topo, "4x16x16");
	/* Sizes: v4 from 8, v5p up to the 8960-chip pod. */
	ck_assert_int_eq(offer_size_at(offer_gen_find("v4"), 0), 8);
	ck_assert_int_eq(offer_size_at(offer_gen_find("v2"), 4), 512);
	ck_assert_int_eq(offer_size_at(offer_gen_find("v2"), 5), 0);
	/* Topologies given by acceleratorConfig. */
	ck_assert_int_eq(offer_accel_from_topology(offer_gen_find("v4"),
	                     "4x2x2", &a, msg, sizeof(msg)),
	    0);
	ck_assert_str_eq(a.type, "v4-32");
	ck_assert_str_eq(a.topology, "4x2x2");
	ck_assert_int_eq(a.hosts, 4);
	ck_assert_int_eq(offer_accel_from_topology(
	                     offer_gen_find("v4"), "2x2", &a, msg, sizeof(msg)),
	    -1);
	ck_assert_ptr_nonnull(strstr(msg, "3 dimensions"));
	ck_assert_int_eq(offer_accel_from_topology(offer_gen_find("v4"),
	                     "4x4x20", &a, msg, sizeof(msg)),
	    -1);
	ck_assert_int_eq(offer_accel_from_topology(offer_gen_find("v6e"), "4x2",
	                     &a, msg, sizeof(msg)),
	    -1);
	ck_assert_int_eq(offer_accel_parse("v4-8", &a, msg, sizeof(msg)), 0);
	ck_assert_int_eq(
	    offer_accel_set_topology(&a, "4x4x4", msg, sizeof(msg)), -1);
	ck_assert_ptr_nonnull(strstr(msg, "has 64 chips"));
	/* Config types by name and by proto number. */
	ck_assert_str_eq(
	    offer_gen_by_config("V5LITE_POD", 0)->name, "v5litepod");
	ck_assert_str_eq(offer_gen_by_config(NULL, 7)->name, "v4");
	ck_assert_ptr_null(offer_gen_by_config("V9", 0));
	/* Zones and runtime versions. */
	ck_assert(offer_zone_has(
	    offer_zone_find("us-central2-b"), offer_gen_find("v4")));
	ck_assert(!offer_zone_has(
	    offer_zone_find("us-central2-b"), offer_gen_find("v5p")));
	ck_assert_ptr_null(offer_zone_find("mars-north1-a"));
	ck_assert(offer_runtime_known(offer_gen_find("v4"), "tpu-vm-v4-base"));
	ck_assert(
	    !offer_runtime_known(offer_gen_find("v4"), "v2-alpha-tpuv6e"));
	ck_assert_str_eq(offer_runtime_at(0), "tpu-ubuntu2204-base");
	for (i = 0; offer_runtime_at(i) != NULL; i++) {
		size_t j;

		for (j = 0; j < i; j++)
			ck_assert_str_ne(
			    offer_runtime_at(i), offer_runtime_at(j));
	}
	ck_assert_uint_eq(i, 13);
}
END_TEST

static Suite *
emu_tpu_suite(void)
{
	Suite *s = suite_create("emu_tpu");
	TCase *tc;

	tc = tcase_create("wire");
	tcase_add_test(tc, paths);
	tcase_add_test(tc, enums);
	tcase_add_test(tc, strip_private);
	tcase_add_test(tc, page_tokens);
	tcase_add_test(tc, lro_specs);
	suite_add_tcase(s, tc);
	tc = tcase_create("validation");
	tcase_add_test(tc, node_check_ok);
	tcase_add_test(tc, node_check_bad);
	tcase_add_test(tc, update_masks);
	tcase_add_test(tc, qr_ids);
	tcase_add_test(tc, durations_times);
	tcase_add_test(tc, offering);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	SRunner *sr = srunner_create(emu_tpu_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
