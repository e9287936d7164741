/*
 * "tpuctl auth list|print-access-token|revoke": show which credential
 * source the chain picked and why, print an access token, clear the token
 * cache.
 */
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "auth.h"
#include "cmd.h"
#include "ctx.h"
#include "output.h"
#include "retry.h"
#include "xmalloc.h"

static const struct cmd_entry auth_children[];

static int
no_options(
    const struct cmd_entry *e, int argc, char **argv, struct tpu_err *err)
{
	static const struct option opts[] = {
		{ NULL, 0, NULL, 0 },
	};
	int ch;

	while ((ch = getopt_long(argc, argv, "+", opts, NULL)) != -1)
		return cmd_bad_option(argv, ch, err);
	return cmd_check_operands(e, argc - optind, argv + optind, err);
}

static int
auth_list_exec(struct tpu_ctx *ctx, int argc, char **argv, struct tpu_err *err)
{
	struct auth *a;
	cJSON *o = NULL;
	int rc;

	if ((rc = no_options(&auth_children[0], argc, argv, err)) != 0)
		return rc;
	if ((rc = ctx_auth(ctx, &a, err)) != 0)
		return rc;
	if ((rc = auth_describe(a, &o, err)) != 0)
		return rc;
	rc = output_emit(&ctx->out, o, NULL, err);
	cJSON_Delete(o);
	return rc;
}

static int
auth_print_exec(struct tpu_ctx *ctx, int argc, char **argv, struct tpu_err *err)
{
	struct auth *a;
	char *tok = NULL;
	int rc;

	if ((rc = no_options(&auth_children[1], argc, argv, err)) != 0)
		return rc;
	retry_install_signals();
	if ((rc = ctx_auth(ctx, &a, err)) != 0)
		return rc;
	if ((rc = auth_token(a, 0, &tok, err)) != 0)
		return rc;
	/* The token is the result, printed bare as gcloud does; it does not
	 * go through output_emit so no unwiped copy is left in a cJSON tree. */
	if (fprintf(ctx->out.fp != NULL ? ctx->out.fp : stdout, "%s\n", tok) <
	    0)
		rc = tpu_error(err, TPU_E_IO, "cannot write the token");
	xfree_secret(tok);
	return rc;
}

static int
auth_revoke_exec(
    struct tpu_ctx *ctx, int argc, char **argv, struct tpu_err *err)
{
	struct auth *a;
	cJSON *o;
	int rc, n = 0;

	if ((rc = no_options(&auth_children[2], argc, argv, err)) != 0)
		return rc;
	if ((rc = ctx_auth(ctx, &a, err)) != 0)
		return rc;
	if ((rc = auth_revoke(a, &n, err)) != 0)
		return rc;
	o = cJSON_CreateObject();
	cJSON_AddNumberToObject(o, "removed", n);
	cJSON_AddStringToObject(o, "tokenCache", auth_cache_dir(a));
	rc = output_emit(&ctx->out, o, NULL, err);
	cJSON_Delete(o);
	return rc;
}

static const struct cmd_entry auth_children[] = {
	{
	    .name = "list",
	    .alias = NULL,
	    .usage = "auth list",
	    .summary = "show the active credential source and the chain tried",
	    .min_args = 0,
	    .max_args = 0,
	    .flags = CMD_NEEDS_AUTH,
	    .exec = auth_list_exec,
	},
	{
	    .name = "print-access-token",
	    .alias = NULL,
	    .usage = "auth print-access-token",
	    .summary = "print an access token for the active credentials",
	    .min_args = 0,
	    .max_args = 0,
	    .flags = CMD_NEEDS_AUTH,
	    .exec = auth_print_exec,
	},
	{
	    .name = "revoke",
	    .alias = NULL,
	    .usage = "auth revoke",
	    .summary = "remove every cached access token",
	    .min_args = 0,
	    .max_args = 0,
	    .flags = CMD_NEEDS_AUTH,
	    .exec = auth_revoke_exec,
	},
	{
	    .name = NULL,
	},
};

const struct cmd_entry cmd_auth_entry = {
	.name = "auth",
	.alias = NULL,
	.usage = "auth list|print-access-token|revoke",
	.summary = "show credentials, print an access token, clear the cache",
	.min_args = 0,
	.max_args = -1,
	.flags = 0,
	.exec = NULL,
	.children = auth_children,
};
