/*
 * "tpuctl help [--all] [command [sub-command]]": the command list, one
 * command's usage, or (with --all) every full command name, one per line,
 * which the table-driven tests and the completion generator walk.
 */
#include <sys/wait.h>

#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cmd.h"
#include "manpage.h"

/* 1 when an executable "man" is on PATH. */
static int
have_man(void)
{
	const char *path = getenv("PATH"), *p, *end;
	char f[4096];

	for (p = path != NULL ? path : ""; *p != '\0'; p = end) {
		size_t n;

		end = strchr(p, ':');
		n = end != NULL ? (size_t)(end - p) : strlen(p);
		if (n > 0 && n < sizeof f - 5) {
			snprintf(f, sizeof f, "%.*s/man", (int)n, p);
			if (access(f, X_OK) == 0)
				return 1;
		}
		end = end != NULL ? end + 1 : p + n;
	}
	return 0;
}

/*
 * "man -l PAGE" for the page next to the binary (manpage_locate(): the
 * source tree's man/ or the installed share/man/man1, so it works before
 * "make install" and needs no MANPATH).  0 when man showed it; -1 to
 * fall back to the short help (no man, no page, man failed).
 */
static int
show_man(const char *name)
{
	char page[4096];
	struct sigaction ign, oint, oquit;
	pid_t pid;
	int status;

	if (!have_man() || manpage_locate(name, page, sizeof page) != 0)
		return -1;
	fflush(stdout);
	memset(&ign, 0, sizeof ign);
	ign.sa_handler = SIG_IGN;
	sigemptyset(&ign.sa_mask);
	/* As the C library does for a child shell: the pager owns Ctrl-C. */
	sigaction(SIGINT, &ign, &oint);
	sigaction(SIGQUIT, &ign, &oquit);
	if ((pid = fork()) == -1) {
		status = -1;
		goto out;
	}
	if (pid == 0) {
		const char *argv[] = { "man", "-l", page, NULL };

		sigaction(SIGINT, &oint, NULL);
		sigaction(SIGQUIT, &oquit, NULL);
		execvp(argv[0], (char *const *)argv);
		_exit(127);
	}
	while (waitpid(pid, &status, 0) == -1 && errno == EINTR)
		;
out:
	sigaction(SIGINT, &oint, NULL);
	sigaction(SIGQUIT, &oquit, NULL);
	return status != -1 && WIFEXITED(status) && WEXITSTATUS(status) == 0
	           ? 0
	           : -1;
}

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
		return cmd_unknown(NULL, argv[0], err);
	for (i = 1; i < argc && e->children != NULL; i++) {
		const struct cmd_entry *c = cmd_find_child(e, argv[i]);

		if (c == NULL)
			return cmd_unknown(e, argv[i], err);
		e = c;
	}
	{
		char name[256], path[256];
		int j, k;

		/* "help data cp": tpuctl-data-cp(1) if it exists, else
		 * tpuctl-data(1). */
		snprintf(path, sizeof path, "%s",
		    cmd_find(cmd_table, argv[0])->name);
		if (i > 1 && e->children == NULL) {
			k = (int)strlen(path);
			snprintf(
			    path + k, sizeof path - (size_t)k, " %s", e->name);
		}
		snprintf(name, sizeof name, "tpuctl-%s", path);
		for (j = 0; name[j] != '\0'; j++)
			if (name[j] == ' ')
				name[j] = '-';
		if (show_man(name) == 0)
			return 0;
		snprintf(name, sizeof name, "tpuctl-%s",
		    cmd_find(cmd_table, argv[0])->name);
		if (strchr(path, ' ') != NULL && show_man(name) == 0)
			return 0;
		cmd_print_help(stdout, e, path);
	}
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
