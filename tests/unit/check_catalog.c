/*
 * Unit tests for src/catalog.c: every node-name, zone, accelerator-type,
 * topology, label and metadata row of RELIABILITY.md table 4F, plus the
 * derived numbers (chips, hosts, cores, topologies) of the catalog.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <check.h>

#include "catalog.h"
#include "util.h"

static void
accept_all(
    int (*fn)(const char *, struct tpu_err *), const char *const *v, size_t n)
{
	struct tpu_err err;
	size_t i;

	for (i = 0; i < n; i++) {
		tpu_err_init(&err);
		ck_assert_msg(
		    fn(v[i], &err) == 0, "rejected '%s': %s", v[i], err.msg);
	}
}

static void
reject_all(int (*fn)(const char *, struct tpu_err *), const char *const *v,
    size_t n, const char *word)
{
	struct tpu_err err;
	size_t i;

	for (i = 0; i < n; i++) {
		tpu_err_init(&err);
		ck_assert_msg(
		    fn(v[i], &err) == TPU_E_USAGE, "accepted '%s'", v[i]);
		ck_assert_msg(strstr(err.msg, word) != NULL,
		    "'%s': message '%s' lacks '%s'", v[i], err.msg, word);
		ck_assert_ptr_null(strchr(err.msg, '\n'));
	}
}

static int
accel(const char *s, struct tpu_err *err)
{
	struct catalog_accel a;

	return catalog_accel_parse(s, &a, err);
}

START_TEST(node_name_rows)
{
	static const char *const ok[] = { "a", "tpu-1",
		"abcdefghij-abcdefghij-abcdefghij-abcdefghij-abcdefghij-"
		"abcdefgh" };
	static const char *const bad[] = { "1tpu", "Tpu", "tpu-", "-x",
		"abcdefghij-abcdefghij-abcdefghij-abcdefghij-abcdefghij-"
		"abcdefghi",
		"tpu_1", "tpu/..", "", "tpu\nx", "--help" };
	struct tpu_err err;

	ck_assert_int_eq(strlen(ok[2]), 63);
	ck_assert_int_eq(strlen(bad[4]), 64);
	accept_all(catalog_node_name_validate, ok, nitems(ok));
	reject_all(catalog_node_name_validate, bad, nitems(bad), "RFC 1035");
	/* Embedded NUL, and the newline shown escaped on one line. */
	ck_assert_int_eq(
	    catalog_node_name_validate_len("tpu\0x", 5, &err), TPU_E_USAGE);
	ck_assert_ptr_nonnull(strstr(err.msg, "tpu\\x00x"));
	catalog_node_name_validate("tpu\nx", &err);
	ck_assert_ptr_nonnull(strstr(err.msg, "'tpu\\nx'"));
}
END_TEST

START_TEST(zone_rows)
{
	static const char *const ok[] = { "us-central2-b", "europe-west4-a",
		"asia-northeast1-b", "southamerica-east1-c" };
	static const char *const bad[] = { "us-central2", "US-CENTRAL2-B",
		"../x", "us-central2-b?x=1", "", "us-central-b", "us-central2-",
		"-central2-b", "us-central2-bb" };

	accept_all(catalog_zone_validate, ok, nitems(ok));
	reject_all(catalog_zone_validate, bad, nitems(bad), "zone '");
}
END_TEST

START_TEST(zone_membership)
{
	const struct catalog_zone *z;

	z = catalog_zone_find("us-central2-b");
	ck_assert_ptr_nonnull(z);
	ck_assert(catalog_zone_offers(z, catalog_gen_find("v4")));
	ck_assert(!catalog_zone_offers(z, catalog_gen_find("v2")));
	z = catalog_zone_find("europe-west4-b");
	ck_assert(catalog_zone_offers(z, catalog_gen_find("v5p")));
	ck_assert(catalog_zone_offers(z, catalog_gen_find("v5e")));
	ck_assert_ptr_null(catalog_zone_find("us-nowhere9-z"));
	ck_assert_ptr_nonnull(catalog_zone_at(0));
	ck_assert_ptr_null(catalog_zone_at(1000));
}
END_TEST

START_TEST(project_rows)
{
	static const char *const ok[] = { "my-project", "abcdef",
		"example.com:my-project", "p12345-x" };
	static const char *const bad[] = { "abc", "My-Project", "1project",
		"project-", "my_project", "a-very-long-project-identifier-x",
		":my-project", "my project", "" };

	accept_all(catalog_project_validate, ok, nitems(ok));
	reject_all(catalog_project_validate, bad, nitems(bad), "project '");
}
END_TEST

START_TEST(accel_rows)
{
	static const char *const ok[] = { "v2-8", "v4-8", "v5litepod-16",
		"v5p-128", "v6e-256", "v3-2048", "v4-4096", "v5litepod-1" };
	static const char *const bad[] = { "v4", "v4-0", "v4-7", "v5p-8x",
		"v9-8", "v4--8", "", "v4-", "-8", "v4-08", "v4-12",
		"v5litepod-2", "v2-16" };

	accept_all(accel, ok, nitems(ok));
	reject_all(accel, bad, nitems(bad), "accelerator type");
}
END_TEST

START_TEST(accel_messages)
{
	struct catalog_accel a;
	struct tpu_err err;

	ck_assert_int_eq(catalog_accel_parse("V4-8 ", &a, &err), TPU_E_USAGE);
	ck_assert_ptr_nonnull(strstr(err.msg, "did you mean 'v4-8'"));
	ck_assert_int_eq(catalog_accel_parse("v5e-16", &a, &err), TPU_E_USAGE);
	ck_assert_ptr_nonnull(strstr(err.msg, "did you mean 'v5litepod-16'"));
	ck_assert_int_eq(catalog_accel_parse("v9-8", &a, &err), TPU_E_USAGE);
	ck_assert_ptr_nonnull(strstr(err.msg, "unknown TPU generation 'v9'"));
	ck_assert_int_eq(catalog_accel_parse("v4-7", &a, &err), TPU_E_USAGE);
	ck_assert_ptr_nonnull(strstr(err.msg, "whole number of chips"));
	ck_assert_int_eq(catalog_accel_parse("v4-12", &a, &err), TPU_E_USAGE);
	ck_assert_ptr_nonnull(strstr(err.msg, "valid sizes: 8, 16, 32"));
	ck_assert_int_eq(catalog_accel_parse("v4", &a, &err), TPU_E_USAGE);
	ck_assert_ptr_nonnull(strstr(err.msg, "has no size"));
}
END_TEST

struct derived {
	const char *type;
	int chips, hosts, cores;
	const char *topology;
	const char *config;
};

START_TEST(accel_derived)
{
	static const struct derived rows[] = {
		{ "v2-8", 4, 1, 8, "2x2", "V2" },
		{ "v2-32", 16, 4, 32, "4x4", "V2" },
		{ "v3-64", 32, 8, 64, "4x8", "V3" },
		{ "v4-8", 4, 1, 8, "2x2x1", "V4" },
		{ "v4-16", 8, 2, 16, "2x2x2", "V4" },
		{ "v4-32", 16, 4, 32, "2x2x4", "V4" },
		{ "v4-128", 64, 16, 128, "4x4x4", "V4" },
		{ "v4-256", 128, 32, 256, "4x4x8", "V4" },
		{ "v5p-8", 4, 1, 8, "2x2x1", "V5P" },
		{ "v5p-128", 64, 16, 128, "4x4x4", "V5P" },
		{ "v5litepod-1", 1, 1, 1, "1x1", "V5LITE_POD" },
		{ "v5litepod-4", 4, 1, 4, "2x2", "V5LITE_POD" },
		{ "v5litepod-8", 8, 1, 8, "2x4", "V5LITE_POD" },
		{ "v5litepod-16", 16, 4, 16, "4x4", "V5LITE_POD" },
		{ "v6e-256", 256, 64, 256, "16x16", "V6E" },
	};
	struct catalog_accel a;
	struct tpu_err err;
	size_t i;

	for (i = 0; i < nitems(rows); i++) {
		ck_assert_int_eq(
		    catalog_accel_parse(rows[i].type, &a, &err), 0);
		ck_assert_str_eq(a.type, rows[i].type);
		ck_assert_int_eq(a.chips, rows[i].chips);
		ck_assert_int_eq(a.hosts, rows[i].hosts);
		ck_assert_int_eq(a.cores, rows[i].cores);
		ck_assert_str_eq(a.topology, rows[i].topology);
		ck_assert_str_eq(a.gen->config_type, rows[i].config);
	}
}
END_TEST

START_TEST(topology_rows)
{
	static const struct {
		const char *gen, *topo, *type;
	} ok[] = {
		{ "v4", "2x2x1", "v4-8" },
		{ "v4", "4x4x8", "v4-256" },
		{ "v5p", "2x2x1", "v5p-8" },
		{ "v5p", "4x4x8", "v5p-256" },
		{ "v5litepod", "2x2", "v5litepod-4" },
		{ "v5litepod", "16x16", "v5litepod-256" },
		{ "v6e", "2x2", "v6e-4" },
		{ "v6e", "16x16", "v6e-256" },
		{ "v4", "4x2x2", "v4-32" },
	};
	static const struct {
		const char *gen, *topo, *word;
	} bad[] = {
		{ "v5p", "2x2", "3 dimensions" },
		{ "v4", "0x2x2", "not valid" },
		{ "v4", "2x2x2x2", "not valid" },
		{ "v4", "2*2*1", "not valid" },
		{ "v4", "3x3x3", "not a v4 slice" },
		{ "v4", "32x32x32", "not a v4 slice" },
		{ "v5litepod", "2x2x1", "2 dimensions" },
		{ "v5litepod", "3x3", "not a v5litepod slice" },
		{ "v6e", "", "not valid" },
		{ "v9", "2x2", "unknown TPU generation" },
	};
	struct catalog_accel a;
	struct tpu_err err;
	size_t i;

	for (i = 0; i < nitems(ok); i++) {
		ck_assert_msg(catalog_accel_from_topology(
		                  ok[i].gen, ok[i].topo, &a, &err) == 0,
		    "%s %s: %s", ok[i].gen, ok[i].topo, err.msg);
		ck_assert_str_eq(a.type, ok[i].type);
		ck_assert_str_eq(a.topology, ok[i].topo);
	}
	for (i = 0; i < nitems(bad); i++) {
		ck_assert_msg(catalog_accel_from_topology(bad[i].gen,
		                  bad[i].topo, &a, &err) == TPU_E_USAGE,
		    "accepted %s %s", bad[i].gen, bad[i].topo);
		ck_assert_msg(strstr(err.msg, bad[i].word) != NULL,
		    "%s %s: '%s'", bad[i].gen, bad[i].topo, err.msg);
	}
}
END_TEST

START_TEST(topology_mismatch)
{
	struct catalog_accel a;
	struct tpu_err err;
	char t[32];

	ck_assert_int_eq(catalog_accel_parse("v5p-8", &a, &err), 0);
	ck_assert_int_eq(
	    catalog_accel_topology_match(&a, "4x4x4", &err), TPU_E_USAGE);
	ck_assert_ptr_nonnull(strstr(err.msg, "has 64 chips"));
	ck_assert_int_eq(catalog_accel_topology_match(&a, "2x2x1", &err), 0);
	ck_assert_int_eq(catalog_accel_topology_match(&a, "1x2x2", &err), 0);
	/* v4-2048: 1024 chips, 8x8x16 first, 4x16x16 next. */
	ck_assert_int_eq(catalog_accel_parse("v4-2048", &a, &err), 0);
	ck_assert_int_eq(catalog_accel_topology_at(&a, 0, t, sizeof t), 0);
	ck_assert_str_eq(t, "8x8x16");
	ck_assert_int_eq(catalog_accel_topology_at(&a, 1, t, sizeof t), 0);
	ck_assert_str_eq(t, "4x16x16");
	ck_assert_int_eq(catalog_accel_topology_at(&a, 2, t, sizeof t), -1);
}
END_TEST

START_TEST(gen_sizes)
{
	const struct catalog_gen *g = catalog_gen_find("v4");
	size_t i;
	int prev = 0, s;

	ck_assert_int_eq(catalog_gen_size_at(g, 0), 8);
	ck_assert_int_eq(catalog_gen_size_at(g, 1), 16);
	for (i = 0; (s = catalog_gen_size_at(g, i)) != 0; i++) {
		ck_assert_int_gt(s, prev);
		prev = s;
	}
	ck_assert_int_eq(prev, 8192);
	g = catalog_gen_find("v5e");
	ck_assert_str_eq(g->name, "v5litepod");
	ck_assert_int_eq(catalog_gen_size_at(g, 0), 1);
	ck_assert_int_eq(g->cores_per_chip, 1);
	ck_assert_int_eq(g->hbm_gib, 16);
	/* per chip, not per TensorCore: 8 GiB per v2 core, 16 per v3 core */
	ck_assert_int_eq(catalog_gen_find("v2")->hbm_gib, 16);
	ck_assert_int_eq(catalog_gen_find("v3")->hbm_gib, 32);
	ck_assert_int_eq(catalog_gen_find("v5p")->hbm_gib, 95);
	ck_assert_ptr_nonnull(strstr(g->hbm_source, "cloud.google.com"));
	ck_assert_ptr_null(catalog_gen_at(6));
}
END_TEST

START_TEST(runtimes)
{
	ck_assert(
	    catalog_runtime_known(catalog_gen_find("v4"), "tpu-vm-v4-base"));
	ck_assert(catalog_runtime_known(
	    catalog_gen_find("v4"), "tpu-ubuntu2204-base"));
	ck_assert(
	    !catalog_runtime_known(catalog_gen_find("v4"), "v2-alpha-tpuv6e"));
	ck_assert(
	    catalog_runtime_known(catalog_gen_find("v6e"), "v2-alpha-tpuv6e"));
	ck_assert(catalog_runtime_known(
	    catalog_gen_find("v5litepod"), "v2-alpha-tpuv5-lite"));
	ck_assert(
	    catalog_runtime_known(catalog_gen_find("v5p"), "v2-alpha-tpuv5"));
	ck_assert(catalog_runtime_known(
	    catalog_gen_find("v3"), "tpu-vm-tf-2.16.1-pod-pjrt"));
	ck_assert_str_eq(catalog_runtime_at(0), "tpu-ubuntu2204-base");
	/* Distinct: tpu-ubuntu2204-base is listed once. */
	{
		size_t i, n = 0;
		const char *rv;

		for (i = 0; (rv = catalog_runtime_at(i)) != NULL; i++)
			n += strcmp(rv, "tpu-ubuntu2204-base") == 0;
		ck_assert_int_eq(n, 1);
		ck_assert_int_gt(i, 10);
	}
}
END_TEST

START_TEST(label_rows)
{
	char key64[65], many[64 * 8 + 1];
	struct tpu_err err;
	cJSON *obj = NULL;
	size_t i, o = 0;

	ck_assert_int_eq(catalog_labels_parse("env=prod", &obj, &err), 0);
	ck_assert_str_eq(cJSON_GetObjectItem(obj, "env")->valuestring, "prod");
	cJSON_Delete(obj);
	ck_assert_int_eq(catalog_labels_parse("k=", &obj, &err), 0);
	ck_assert_str_eq(cJSON_GetObjectItem(obj, "k")->valuestring, "");
	cJSON_Delete(obj);
	ck_assert_int_eq(catalog_labels_parse("a=1,b_c=x-y", &obj, &err), 0);
	ck_assert_int_eq(cJSON_GetArraySize(obj), 2);
	cJSON_Delete(obj);

	ck_assert_int_eq(
	    catalog_labels_parse("Env=x", &obj, &err), TPU_E_USAGE);
	ck_assert_ptr_null(obj);
	ck_assert_ptr_nonnull(strstr(err.msg, "label key 'Env'"));
	ck_assert_int_eq(catalog_labels_parse("1k=x", &obj, &err), TPU_E_USAGE);
	memset(key64, 'k', 64);
	key64[64] = '\0';
	ck_assert_int_eq(catalog_label_validate(key64, "x", &err), TPU_E_USAGE);
	key64[63] = '\0';
	ck_assert_int_eq(catalog_label_validate(key64, "x", &err), 0);
	ck_assert_int_eq(
	    catalog_labels_parse("k=Has Space", &obj, &err), TPU_E_USAGE);
	ck_assert_ptr_nonnull(strstr(err.msg, "value 'Has Space'"));
	ck_assert_int_eq(
	    catalog_labels_parse("k=a,k=b", &obj, &err), TPU_E_USAGE);
	ck_assert_ptr_nonnull(strstr(err.msg, "given twice"));
	ck_assert_int_eq(
	    catalog_labels_parse("novalue", &obj, &err), TPU_E_USAGE);

	/* 64 labels pass, 65 fail. */
	for (i = 0; i < 65; i++)
		o += (size_t)snprintf(
		    many + o, sizeof many - o, "%sk%zu=v", i ? "," : "", i);
	ck_assert_int_eq(catalog_labels_parse(many, &obj, &err), TPU_E_USAGE);
	ck_assert_ptr_nonnull(strstr(err.msg, "too many labels"));
	*strrchr(many, ',') = '\0';
	ck_assert_int_eq(catalog_labels_parse(many, &obj, &err), 0);
	ck_assert_int_eq(cJSON_GetArraySize(obj), 64);
	cJSON_Delete(obj);
}
END_TEST

START_TEST(label_object_duplicates)
{
	struct tpu_err err;
	cJSON *obj = cJSON_Parse("{\"a\":\"1\",\"a\":\"2\"}");

	ck_assert_int_eq(catalog_labels_validate(obj, &err), TPU_E_USAGE);
	cJSON_Delete(obj);
	obj = cJSON_Parse("{\"a\":1}");
	ck_assert_int_eq(catalog_labels_validate(obj, &err), TPU_E_USAGE);
	cJSON_Delete(obj);
}
END_TEST

START_TEST(metadata_rows)
{
	static const char *const script = "#!/bin/sh\necho hello\n";
	struct tpu_err err;
	cJSON *md;

	ck_assert_int_eq(
	    catalog_metadata_validate("startup-script", script, 0, &err), 0);
	ck_assert_int_eq(
	    catalog_metadata_validate("ssh-keys",
	        "alice:ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAA alice\n"
	        "bob:ecdsa-sha2-nistp256 AAAAE2VjZHNh bob@host",
	        0, &err),
	    0);
	/* A newline inside one entry. */
	ck_assert_int_eq(
	    catalog_ssh_key_entry_validate(
	        "alice:ssh-ed25519 AAAA\nevil:ssh-ed25519 BBBB", &err),
	    TPU_E_USAGE);
	ck_assert_ptr_nonnull(strstr(err.msg, "line break"));
	ck_assert_int_eq(catalog_metadata_validate(
	                     "ssh-keys", "alice:ssh-ed25519 AAAA\r\n", 0, &err),
	    TPU_E_USAGE);
	ck_assert_int_eq(catalog_metadata_validate(
	                     "ssh-keys", "alice ssh-ed25519 AAAA", 0, &err),
	    TPU_E_USAGE);
	ck_assert_int_eq(catalog_metadata_validate(
	                     "ssh-keys", "alice:ssh-foo AAAA", 0, &err),
	    TPU_E_USAGE);
	ck_assert_int_eq(catalog_metadata_validate(
	                     "ssh-keys", "alice:ssh-ed25519 AA$A", 0, &err),
	    TPU_E_USAGE);
	/* Keys outside the allow-list, unless raw. */
	ck_assert_int_eq(
	    catalog_metadata_validate("my-key", "v", 0, &err), TPU_E_USAGE);
	ck_assert_ptr_nonnull(strstr(err.msg, "--metadata-raw"));
	ck_assert_int_eq(catalog_metadata_validate("my-key", "v", 1, &err), 0);
	ck_assert_int_eq(
	    catalog_metadata_validate("bad key", "v", 1, &err), TPU_E_USAGE);
	md = cJSON_Parse("{\"startup-script\":\"x\",\"n\":1}");
	ck_assert_int_eq(
	    catalog_metadata_validate_obj(md, 1, &err), TPU_E_USAGE);
	cJSON_Delete(md);
}
END_TEST

static Suite *
catalog_suite(void)
{
	Suite *s = suite_create("catalog");
	TCase *tc;

	tc = tcase_create("names");
	tcase_add_test(tc, node_name_rows);
	tcase_add_test(tc, zone_rows);
	tcase_add_test(tc, zone_membership);
	tcase_add_test(tc, project_rows);
	suite_add_tcase(s, tc);
	tc = tcase_create("accelerators");
	tcase_add_test(tc, accel_rows);
	tcase_add_test(tc, accel_messages);
	tcase_add_test(tc, accel_derived);
	tcase_add_test(tc, topology_rows);
	tcase_add_test(tc, topology_mismatch);
	tcase_add_test(tc, gen_sizes);
	tcase_add_test(tc, runtimes);
	suite_add_tcase(s, tc);
	tc = tcase_create("labels_metadata");
	tcase_add_test(tc, label_rows);
	tcase_add_test(tc, label_object_duplicates);
	tcase_add_test(tc, metadata_rows);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	SRunner *sr = srunner_create(catalog_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
