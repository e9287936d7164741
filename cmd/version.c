/*
 * "tpuctl version": tpuctl's version and those of the libraries it was
 * linked with, as they report themselves at run time.
 */
#include <getopt.h>
#include <stdio.h>

#include <curl/curl.h>
#include <cjson/cJSON.h>
#include <libssh2.h>
#include <openssl/crypto.h>

#include "cmd.h"
#include "version.h"

static int
version_exec(struct tpu_ctx *ctx, int argc, char **argv, struct tpu_err *err)
{
	const curl_version_info_data *cv;
	cJSON *o;
	int rc;

	static const struct option opts[] = {
		{ NULL, 0, NULL, 0 },
	};
	int ch;

	while ((ch = getopt_long(argc, argv, "+", opts, NULL)) != -1)
		return cmd_bad_option(argv, ch, err);
	if ((rc = cmd_check_operands(
	         &cmd_version_entry, argc - optind, argv + optind, err)) != 0)
		return rc;
	cv = curl_version_info(CURLVERSION_NOW);
	o = cJSON_CreateObject();
	cJSON_AddStringToObject(o, "tpuctl", TPUCTL_VERSION);
	cJSON_AddStringToObject(o, "libcurl", cv->version);
	cJSON_AddStringToObject(o, "libssh2", libssh2_version(0));
	cJSON_AddStringToObject(
	    o, "openssl", OpenSSL_version(OPENSSL_VERSION_STRING));
	cJSON_AddStringToObject(o, "cjson", cJSON_Version());
	rc = output_emit(&ctx->out, o, NULL, err);
	cJSON_Delete(o);
	return rc;
}

const struct cmd_entry cmd_version_entry = {
	.name = "version",
	.alias = NULL,
	.usage = "version",
	.summary = "print the versions of tpuctl and its libraries",
	.min_args = 0,
	.max_args = 0,
	.flags = 0,
	.exec = version_exec,
};
