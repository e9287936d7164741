/*
 * "tpuctl config list|get|set|unset": show the resolved configuration with
 * the layer each value came from, and edit tpuctl's own config file (the
 * selected profile's section when a profile is selected).
 */
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "cmd.h"
#include "config.h"
#include "log.h"
#include "output.h"

static const struct cmd_entry config_children[];

/* Parse options for a child without any besides -h (handled earlier). */
static int
no_options(
    const struct cmd_entry *e, int *argc, char ***argv, struct tpu_err *err)
{
	static const struct option opts[] = {
		{ NULL, 0, NULL, 0 },
	};
	int ch;

	while ((ch = getopt_long(*argc, *argv, "+", opts, NULL)) != -1)
		return cmd_bad_option(*argv, ch, err);
	*argc -= optind;
	*argv += optind;
	return cmd_check_operands(e, *argc, *argv, err);
}

static cJSON *
key_object(const struct config *cfg, const struct config_key *k)
{
	const char *v = config_get(cfg, k->key);
	const char *src = config_source(cfg, k->key);
	cJSON *o = cJSON_CreateObject();

	cJSON_AddStringToObject(o, "key", k->key);
	if (v != NULL)
		cJSON_AddStringToObject(o, "value", v);
	else
		cJSON_AddNullToObject(o, "value");
	if (src != NULL)
		cJSON_AddStringToObject(o, "source", src);
	else
		cJSON_AddNullToObject(o, "source");
	cJSON_AddStringToObject(o, "description", k->desc);
	return o;
}

static int
config_list_exec(
    struct tpu_ctx *ctx, int argc, char **argv, struct tpu_err *err)
{
	static const struct option opts[] = {
		{ "all", no_argument, NULL, 'a' },
		{ NULL, 0, NULL, 0 },
	};
	const struct config_key *keys;
	cJSON *list = NULL;
	size_t i, n;
	int ch, all = 0, rc;

	while ((ch = getopt_long(argc, argv, "+", opts, NULL)) != -1) {
		if (ch == 'a')
			all = 1;
		else
			return cmd_bad_option(argv, ch, err);
	}
	if ((rc = cmd_check_operands(
	         &config_children[0], argc - optind, argv + optind, err)) != 0)
		return rc;
	keys = config_keys(&n);
	list = cJSON_CreateArray();
	for (i = 0; i < n; i++) {
		if (!all && config_get(ctx->cfg, keys[i].key) == NULL)
			continue;
		cJSON_AddItemToArray(list, key_object(ctx->cfg, &keys[i]));
	}
	rc = output_emit(&ctx->out, list,
	    all ? "KEY=key,VALUE=value,SOURCE=source,DESCRIPTION=description"
	        : "KEY=key,VALUE=value,SOURCE=source",
	    err);
	cJSON_Delete(list);
	return rc;
}

static int
config_get_exec(struct tpu_ctx *ctx, int argc, char **argv, struct tpu_err *err)
{
	const struct config_key *k;
	struct output plain;
	cJSON *o = NULL;
	int rc;

	output_init(&plain);
	if ((rc = no_options(&config_children[1], &argc, &argv, err)) != 0)
		goto out;
	if ((k = config_key_find(argv[0])) == NULL) {
		rc = config_validate(argv[0], "", err);
		goto out;
	}
	if (config_get(ctx->cfg, k->key) == NULL) {
		rc = tpu_error(err, TPU_E_NOTFOUND, "%s is not set", k->key);
		goto out;
	}
	o = key_object(ctx->cfg, k);
	if (ctx->out.fmt == OUTPUT_TABLE && ctx->out.nfields == 0) {
		/* The bare value, for scripts: v=$(tpuctl config get k). */
		plain.fp = ctx->out.fp;
		if ((rc = output_parse_format(&plain, "value(value)", err)) !=
		    0)
			goto out;
		rc = output_emit(&plain, o, NULL, err);
	} else
		rc = output_emit(&ctx->out, o, "VALUE=value", err);
out:
	output_release(&plain);
	cJSON_Delete(o);
	return rc;
}

static void
report(struct tpu_ctx *ctx, const char *what, const char *key)
{
	const char *prof = config_profile(ctx->cfg);
	enum config_layer l = config_layer_of(ctx->cfg, key);

	if (ctx->quiet)
		return;
	if (prof != NULL && strcmp(key, "core/profile") != 0)
		log_warn("%s %s in %s [profile %s]", what, key,
		    config_file_path(ctx->cfg), prof);
	else
		log_warn("%s %s in %s", what, key, config_file_path(ctx->cfg));
	if (l == CONFIG_ENV || l == CONFIG_FLAG)
		log_warn("note: %s is overridden by %s", key,
		    config_source(ctx->cfg, key));
}

static int
config_set_exec(struct tpu_ctx *ctx, int argc, char **argv, struct tpu_err *err)
{
	int rc;

	if ((rc = no_options(&config_children[2], &argc, &argv, err)) != 0)
		return rc;
	if ((rc = config_file_update(ctx->cfg, argv[0], argv[1], err)) != 0)
		return rc;
	report(ctx, "set", argv[0]);
	return 0;
}

static int
config_unset_exec(
    struct tpu_ctx *ctx, int argc, char **argv, struct tpu_err *err)
{
	int rc;

	if ((rc = no_options(&config_children[3], &argc, &argv, err)) != 0)
		return rc;
	rc = config_file_update(ctx->cfg, argv[0], NULL, err);
	if (rc < 0)
		return rc;
	if (rc == 1) {
		if (!ctx->quiet)
			log_warn("%s was not set in %s", argv[0],
			    config_file_path(ctx->cfg));
		return 0;
	}
	report(ctx, "unset", argv[0]);
	return 0;
}

static const struct cmd_entry config_children[] = {
	{
	    .name = "list",
	    .alias = NULL,
	    .usage = "config list [--all]",
	    .summary = "show every configured key, its value and its source",
	    .min_args = 0,
	    .max_args = 0,
	    .flags = 0,
	    .exec = config_list_exec,
	},
	{
	    .name = "get",
	    .alias = NULL,
	    .usage = "config get key",
	    .summary = "print the value of one key",
	    .min_args = 1,
	    .max_args = 1,
	    .flags = 0,
	    .exec = config_get_exec,
	},
	{
	    .name = "set",
	    .alias = NULL,
	    .usage = "config set key value",
	    .summary = "set a key in tpuctl's config file",
	    .min_args = 2,
	    .max_args = 2,
	    .flags = CMD_DEFINES_PROFILE,
	    .exec = config_set_exec,
	},
	{
	    .name = "unset",
	    .alias = NULL,
	    .usage = "config unset key",
	    .summary = "remove a key from tpuctl's config file",
	    .min_args = 1,
	    .max_args = 1,
	    .flags = 0,
	    .exec = config_unset_exec,
	},
	{
	    .name = NULL,
	},
};

const struct cmd_entry cmd_config_entry = {
	.name = "config",
	.alias = NULL,
	.usage = "config list|get|set|unset ...",
	.summary = "show and edit the configuration",
	.min_args = 0,
	.max_args = -1,
	.flags = 0,
	.exec = NULL,
	.children = config_children,
};
