/*
 * Unit tests for src/tpuvalid.c: metadata items from values and files,
 * key lists for --remove-labels / --remove-metadata, descriptions.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <check.h>
#include <cjson/cJSON.h>

#include "err.h"
#include "tpuvalid.h"
#include "xmalloc.h"

START_TEST(metadata_values)
{
	struct tpu_err e;
	cJSON *md = cJSON_CreateObject();

	tpu_err_init(&e);
	ck_assert_int_eq(tpuvalid_metadata_parse("startup-script=echo hi,"
	                                         "enable-oslogin=TRUE",
	                     0, 0, md, &e),
	    0);
	ck_assert_str_eq(
	    cJSON_GetObjectItem(md, "startup-script")->valuestring, "echo hi");
	ck_assert_int_eq(cJSON_GetArraySize(md), 2);
	/* an empty value is allowed, '=' inside the value is kept */
	ck_assert_int_eq(
	    tpuvalid_metadata_parse("shutdown-script=a=b", 0, 0, md, &e), 0);
	ck_assert_str_eq(
	    cJSON_GetObjectItem(md, "shutdown-script")->valuestring, "a=b");
	/* given twice, also across calls */
	ck_assert_int_eq(
	    tpuvalid_metadata_parse("startup-script=x", 0, 0, md, &e),
	    TPU_E_USAGE);
	ck_assert_ptr_nonnull(strstr(e.msg, "given twice"));
	cJSON_Delete(md);
}
END_TEST

START_TEST(metadata_bad)
{
	static const char *bad[] = { "", "novalue", "=x", "a=1,,b=2",
		"bad key=1", "startup-script=1,", "unknown-key=1",
		"ssh-keys=u:ssh-ed25519 AAAA\r\nx" };
	struct tpu_err e;
	size_t i;

	for (i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		cJSON *md = cJSON_CreateObject();

		tpu_err_init(&e);
		ck_assert_msg(tpuvalid_metadata_parse(bad[i], 0, 0, md, &e) ==
		                  TPU_E_USAGE,
		    "accepted '%s'", bad[i]);
		ck_assert_int_ne(e.msg[0], '\0');
		cJSON_Delete(md);
	}
}
END_TEST

START_TEST(metadata_raw)
{
	struct tpu_err e;
	cJSON *md = cJSON_CreateObject();

	tpu_err_init(&e);
	ck_assert_int_eq(
	    tpuvalid_metadata_parse("my-key=1", 0, 0, md, &e), TPU_E_USAGE);
	ck_assert_int_eq(tpuvalid_metadata_parse("my-key=1", 0, 1, md, &e), 0);
	cJSON_Delete(md);
}
END_TEST

START_TEST(metadata_files)
{
	char path[] = "/tmp/check_tpuvalid.XXXXXX";
	struct tpu_err e;
	cJSON *md = cJSON_CreateObject();
	char *arg;
	int fd = mkstemp(path);

	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(write(fd, "#!/bin/sh\necho hi\n", 18), 18);
	close(fd);
	tpu_err_init(&e);
	arg = xasprintf("startup-script=%s", path);
	ck_assert_int_eq(tpuvalid_metadata_parse(arg, 1, 0, md, &e), 0);
	ck_assert_str_eq(cJSON_GetObjectItem(md, "startup-script")->valuestring,
	    "#!/bin/sh\necho hi\n");
	free(arg);
	/* a NUL byte is refused */
	fd = open(path, O_WRONLY | O_TRUNC);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(write(fd, "a\0b", 3), 3);
	close(fd);
	arg = xasprintf("shutdown-script=%s", path);
	ck_assert_int_eq(
	    tpuvalid_metadata_parse(arg, 1, 0, md, &e), TPU_E_USAGE);
	ck_assert_ptr_nonnull(strstr(e.msg, "NUL"));
	free(arg);
	unlink(path);
	/* a missing file is a usage error naming the flag */
	arg = xasprintf("shutdown-script=%s", path);
	ck_assert_int_eq(
	    tpuvalid_metadata_parse(arg, 1, 0, md, &e), TPU_E_USAGE);
	ck_assert_ptr_nonnull(strstr(e.msg, "--metadata-from-file"));
	free(arg);
	cJSON_Delete(md);
}
END_TEST

START_TEST(keys)
{
	struct tpu_err e;
	cJSON *k = NULL;

	tpu_err_init(&e);
	ck_assert_int_eq(tpuvalid_keys_parse("--remove-labels", "env,team,env",
	                     TPUVALID_LABEL_KEYS, &k, &e),
	    0);
	ck_assert_int_eq(cJSON_GetArraySize(k), 2);
	ck_assert_str_eq(cJSON_GetArrayItem(k, 1)->valuestring, "team");
	cJSON_Delete(k);
	ck_assert_int_eq(tpuvalid_keys_parse("--remove-labels", "Env",
	                     TPUVALID_LABEL_KEYS, &k, &e),
	    TPU_E_USAGE);
	ck_assert_ptr_null(k);
	ck_assert_ptr_nonnull(strstr(e.msg, "--remove-labels"));
	ck_assert_int_eq(tpuvalid_keys_parse("--remove-labels", "a,,b",
	                     TPUVALID_LABEL_KEYS, &k, &e),
	    TPU_E_USAGE);
	ck_assert_int_eq(tpuvalid_keys_parse("--remove-labels", "",
	                     TPUVALID_LABEL_KEYS, &k, &e),
	    TPU_E_USAGE);
	/* metadata keys: any well-formed key, upper case allowed */
	ck_assert_int_eq(
	    tpuvalid_keys_parse("--remove-metadata", "startup-script,My_Key",
	        TPUVALID_METADATA_KEYS, &k, &e),
	    0);
	ck_assert_int_eq(cJSON_GetArraySize(k), 2);
	cJSON_Delete(k);
	ck_assert_int_eq(tpuvalid_keys_parse("--remove-metadata", "a b",
	                     TPUVALID_METADATA_KEYS, &k, &e),
	    TPU_E_USAGE);
	ck_assert_int_eq(tpuvalid_keys_parse("--remove-metadata", "a,",
	                     TPUVALID_METADATA_KEYS, &k, &e),
	    TPU_E_USAGE);
}
END_TEST

START_TEST(description)
{
	struct tpu_err e;
	char big[TPUVALID_MAX_DESCRIPTION + 2];

	tpu_err_init(&e);
	ck_assert_int_eq(tpuvalid_description("", &e), 0);
	ck_assert_int_eq(tpuvalid_description("training run\tv2\n", &e), 0);
	ck_assert_int_eq(
	    tpuvalid_description("caf\xc3\xa9 \xe2\x82\xac", &e), 0);
	ck_assert_int_eq(tpuvalid_description("bell\a", &e), TPU_E_USAGE);
	ck_assert_int_eq(tpuvalid_description("cr\r", &e), TPU_E_USAGE);
	ck_assert_int_eq(tpuvalid_description("\xff", &e), TPU_E_USAGE);
	ck_assert_int_eq(tpuvalid_description("\xc3", &e), TPU_E_USAGE);
	ck_assert_int_eq(tpuvalid_description("\xed\xa0\x80", &e), TPU_E_USAGE);
	memset(big, 'a', sizeof big - 1);
	big[TPUVALID_MAX_DESCRIPTION] = '\0';
	ck_assert_int_eq(tpuvalid_description(big, &e), 0);
	big[TPUVALID_MAX_DESCRIPTION] = 'a';
	big[TPUVALID_MAX_DESCRIPTION + 1] = '\0';
	ck_assert_int_eq(tpuvalid_description(big, &e), TPU_E_USAGE);
	ck_assert_ptr_nonnull(strstr(e.msg, "2048"));
}
END_TEST

START_TEST(create_fields)
{
	struct tpu_err e;
	cJSON *o = NULL;
	char *txt;
	int b = -1;

	tpu_err_init(&e);
	ck_assert_int_eq(tpuvalid_bool("--f", "k", "TRUE", &b, &e), 0);
	ck_assert_int_eq(b, 1);
	ck_assert_int_eq(tpuvalid_bool("--f", "k", "off", &b, &e), 0);
	ck_assert_int_eq(b, 0);
	ck_assert_int_eq(tpuvalid_bool("--f", "k", "2", &b, &e), TPU_E_USAGE);
	ck_assert_str_eq(e.msg, "invalid --f k '2': expected true or false");

	ck_assert_int_eq(tpuvalid_cidr29("--range", "192.168.0.0/29", &e), 0);
	ck_assert_int_eq(tpuvalid_cidr29("--range", "10.0.0.248/29", &e), 0);
	ck_assert_int_eq(
	    tpuvalid_cidr29("--range", "10.0.0.4/29", &e), TPU_E_USAGE);
	ck_assert_ptr_nonnull(strstr(e.msg, "e.g. 10.0.0.0/29"));
	ck_assert_int_eq(
	    tpuvalid_cidr29("--range", "10.0.0.0/28", &e), TPU_E_USAGE);
	ck_assert_int_eq(
	    tpuvalid_cidr29("--range", "10.0.0.0/29x", &e), TPU_E_USAGE);
	ck_assert_int_eq(
	    tpuvalid_cidr29("--range", "256.0.0.0/29", &e), TPU_E_USAGE);
	ck_assert_int_eq(
	    tpuvalid_cidr29("--range", " 1.0.0.0/29", &e), TPU_E_USAGE);
	ck_assert_int_eq(tpuvalid_cidr29("--range", "", &e), TPU_E_USAGE);

	ck_assert_int_eq(
	    tpuvalid_kms_key(
	        "--k", "projects/p/locations/l/keyRings/r/cryptoKeys/k", &e),
	    0);
	ck_assert_int_eq(
	    tpuvalid_kms_key(
	        "--k", "projects/p/locations/l/keyRings/r/cryptoKeys/", &e),
	    TPU_E_USAGE);
	ck_assert_int_eq(
	    tpuvalid_kms_key(
	        "--k", "projects/p/locations//keyRings/r/cryptoKeys/k", &e),
	    TPU_E_USAGE);
	ck_assert_int_eq(
	    tpuvalid_kms_key(
	        "--k", "projects/p/locations/l/keyRings/r/cryptoKeys/k/x", &e),
	    TPU_E_USAGE);
	ck_assert_int_eq(tpuvalid_kms_key("--k", "k", &e), TPU_E_USAGE);

	ck_assert_int_eq(tpuvalid_boot_disk("confidential-compute=yes,kms-key="
	                                    "projects/p/locations/l/keyRings/"
	                                    "r/cryptoKeys/k",
	                     &o, &e),
	    0);
	txt = cJSON_PrintUnformatted(o);
	ck_assert_str_eq(txt,
	    "{\"enableConfidentialCompute\":true,\"customerEncryptionKey\":"
	    "{\"kmsKeyName\":\"projects/p/locations/l/keyRings/r/"
	    "cryptoKeys/k\"}}");
	free(txt);
	cJSON_Delete(o);
	ck_assert_int_eq(
	    tpuvalid_boot_disk("confidential-compute=false", &o, &e), 0);
	cJSON_Delete(o);
	ck_assert_int_eq(
	    tpuvalid_boot_disk("confidential-compute=true", &o, &e),
	    TPU_E_USAGE);
	ck_assert_ptr_null(o);
	ck_assert_int_eq(tpuvalid_boot_disk("size=1", &o, &e), TPU_E_USAGE);
	ck_assert_int_eq(tpuvalid_boot_disk("", &o, &e), TPU_E_USAGE);
	ck_assert_int_eq(tpuvalid_boot_disk("kms-key", &o, &e), TPU_E_USAGE);

	ck_assert_int_eq(tpuvalid_network_config("network=n", &o, &e), 0);
	txt = cJSON_PrintUnformatted(o);
	ck_assert_str_eq(
	    txt, "{\"network\":\"n\",\"enableExternalIps\":false}");
	free(txt);
	cJSON_Delete(o);
	ck_assert_int_eq(tpuvalid_network_config(
	                     "subnetwork=s,external-ips=1,network=n", &o, &e),
	    0);
	txt = cJSON_PrintUnformatted(o);
	ck_assert_str_eq(txt,
	    "{\"subnetwork\":\"s\",\"enableExternalIps\":true,\"network\":"
	    "\"n\"}");
	free(txt);
	cJSON_Delete(o);
	ck_assert_int_eq(
	    tpuvalid_network_config("external-ips=true", &o, &e), TPU_E_USAGE);
	ck_assert_ptr_null(o);
	ck_assert_int_eq(
	    tpuvalid_network_config("network=", &o, &e), TPU_E_USAGE);
	ck_assert_int_eq(
	    tpuvalid_network_config("network=n,mtu=1", &o, &e), TPU_E_USAGE);
}
END_TEST

static Suite *
tpuvalid_suite(void)
{
	Suite *s = suite_create("tpuvalid");
	TCase *tc = tcase_create("parse");

	tcase_add_test(tc, metadata_values);
	tcase_add_test(tc, metadata_bad);
	tcase_add_test(tc, metadata_raw);
	tcase_add_test(tc, metadata_files);
	tcase_add_test(tc, keys);
	tcase_add_test(tc, description);
	tcase_add_test(tc, create_fields);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	SRunner *sr = srunner_create(tpuvalid_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
