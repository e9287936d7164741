/*
 * "tpuctl help [--all] [command [sub-command]]": the command list, one
 * command's usage, or (with --all) every full command name, one per line,
 * which the table-driven tests and the completion generator walk.
 */
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "cmd.h"

static void
list_all(const char *prefix, const struct cmd_entry *e)
{
	const struct cmd_entry *c;
	char name[256];

	snprintf(
	    name, sizeof name, "%s%s%s", prefix, *prefix ? " " : "", e->name);
	if (e->children == NULL) {
		printf("%s\n", name);
		return;
	}
	for (c = e->children; c->name != NULL; c++)
		list_all(name, c);
}

static void
list_commands(void)
{
	const struct cmd_entry *const *t;

	printf("usage: tpuctl [global flags] command [flags] [operands]\n\n"
	       "Commands:\n");
	for (t = cmd_table; *t != NULL; t++) {
		if ((*t)->flags & CMD_HIDDEN)
			continue;
		printf("  %-18s %s\n", (*t)->name, (*t)->summary);
	}
	printf("\nGlobal flags: --project, --zone, --format, --profile, "
	       "--quiet, -v, --verbosity,\n  --log-http, --dry-run, "
	       "--access-token-file, --impersonate-service-account,\n"
	       "  --ca-file.  See tpuctl(1); 'tpuctl help COMMAND' for one "
	       "command.\n");
}

static int
help_exec(struct tpu_ctx *ctx, int argc, char **argv, struct tpu_err *err)
{
	static const struct option opts[] = {
		{ "all", no_argument, NULL, 'a' },
		{ NULL, 0, NULL, 0 },
	};
	const struct cmd_entry *e, *const *t;
	int ch, all = 0, i;

	(void)ctx;
	while ((ch = getopt_long(argc, argv, "+", opts, NULL)) != -1) {
		if (ch == 'a')
			all = 1;
		else
			return cmd_bad_option(argv, ch, err);
	}
	argc -= optind;
	argv += optind;
	if (all) {
		for (t = cmd_table; *t != NULL; t++)
			list_all("", *t);
		return 0;
	}
	if (argc == 0) {
		list_commands();
		return 0;
	}
	if ((e = cmd_find(cmd_table, argv[0])) == NULL)
		return tpu_error(err, TPU_E_USAGE,
		    "unknown command '%s' (see 'tpuctl help')", argv[0]);
	for (i = 1; i < argc && e->children != NULL; i++) {
		const struct cmd_entry *c = cmd_find_child(e, argv[i]);

		if (c == NULL)
			return tpu_error(err, TPU_E_USAGE,
			    "unknown command '%s %s'", e->name, argv[i]);
		e = c;
	}
	printf("%s\n\n", e->summary);
	cmd_print_usage(stdout, e);
	printf("\nSee tpuctl-%s(1).\n", cmd_find(cmd_table, argv[0])->name);
	return 0;
}

const struct cmd_entry cmd_help_entry = {
	.name = "help",
	.alias = NULL,
	.usage = "help [--all] [command [sub-command]]",
	.summary = "list commands, or show how to use one",
	.min_args = 0,
	.max_args = 2,
	.flags = 0,
	.exec = help_exec,
};
