/*
 * The top-level command table and the dispatcher shared by commands that
 * have sub-commands.
 */
#include <sys/ioctl.h>

#include <ctype.h>
#include <stdint.h>
#include <getopt.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "buf.h"
#include "cmd.h"
#include "config.h"
#include "fsutil.h"
#include "manpage.h"
#include "sshpool.h"
#include "suggest.h"
#include "util.h"

const struct cmd_entry *const cmd_table[] = {
#define CMD(n) &cmd_##n##_entry,
#include "commands.def"
#undef CMD
	NULL,
};

static const struct cmd_entry *current;
static int usage_wanted;
static char current_path[256] = "tpuctl";

int
cmd_usage_wanted(void)
{
	return usage_wanted;
}

void
cmd_want_usage(void)
{
	usage_wanted = 1;
}

const struct cmd_entry *
cmd_current(void)
{
	return current;
}

int
cmd_needs(void)
{
	return current != NULL ? current->flags : 0;
}

const char *
cmd_current_path(void)
{
	return current_path;
}

const struct cmd_entry *
cmd_find(const struct cmd_entry *const *table, const char *name)
{
	for (; *table != NULL; table++) {
		if (strcmp((*table)->name, name) == 0)
			return *table;
		if ((*table)->alias != NULL &&
		    strcmp((*table)->alias, name) == 0)
			return *table;
	}
	return NULL;
}

const struct cmd_entry *
cmd_find_child(const struct cmd_entry *parent, const char *name)
{
	const struct cmd_entry *c;

	for (c = parent->children; c != NULL && c->name != NULL; c++) {
		if (strcmp(c->name, name) == 0 ||
		    (c->alias != NULL && strcmp(c->alias, name) == 0))
			return c;
	}
	return NULL;
}

void
cmd_print_usage(FILE *fp, const struct cmd_entry *e)
{
	const struct cmd_entry *c;
	const char *word = "usage:";

	if (e->children == NULL) {
		fprintf(fp, "usage: tpuctl %s\n", e->usage);
		return;
	}
	for (c = e->children; c->name != NULL; c++) {
		fprintf(fp, "%-6s tpuctl %s\n", word, c->usage);
		word = "";
	}
}

/* "unknown command 'lsit'; did you mean 'list'?" */
int
cmd_unknown(
    const struct cmd_entry *parent, const char *name, struct tpu_err *err)
{
	const char *names[128] = { NULL };
	const struct cmd_entry *c;
	const char *best;
	size_t n = 0, i;

	if (parent == NULL) {
		for (i = 0; cmd_table[i] != NULL && n < nitems(names); i++)
			if (!(cmd_table[i]->flags & CMD_HIDDEN))
				names[n++] = cmd_table[i]->name;
	} else {
		for (c = parent->children; c->name != NULL && n < nitems(names);
		     c++)
			names[n++] = c->name;
	}
	best = suggest_best(name, names, n);
	if (parent == NULL && best != NULL)
		return tpu_error(err, TPU_E_USAGE,
		    "unknown command '%s'; did you mean '%s'?", name, best);
	if (parent == NULL)
		return tpu_error(err, TPU_E_USAGE,
		    "unknown command '%s' (see 'tpuctl help')", name);
	if (best != NULL)
		return tpu_error(err, TPU_E_USAGE,
		    "unknown command '%s %s'; did you mean '%s %s'?",
		    parent->name, name, parent->name, best);
	return tpu_error(
	    err, TPU_E_USAGE, "unknown command '%s %s'", parent->name, name);
}

/* Parse the page tpuctl-NAME.1 next to the binary; 0 when found. */
static int
load_page(const char *name, struct manpage *m)
{
	char path[4096];
	struct tpu_err e;
	struct buf b;
	int rc;

	memset(m, 0, sizeof *m);
	if (manpage_locate(name, path, sizeof path) != 0)
		return -1;
	buf_init(&b, 1 << 20);
	tpu_err_init(&e);
	if ((rc = fsutil_read_file(path, 0, &b, NULL, &e)) == 0)
		manpage_parse(m, b.data);
	buf_release(&b);
	return rc == 0 ? 0 : -1;
}

/*
 * "  --flag arg        First sentence.": one line.  On a terminal a
 * sentence longer than the width is cut at a word and ends in "...";
 * into a pipe it is whole.
 */
static void
print_flag(FILE *fp, const struct manpage_flag *f)
{
	size_t w = strlen(f->spec) <= 26 ? 26 : strlen(f->spec), room, n;
	const char *d = f->desc;
	struct winsize ws;
	size_t cols = 0;

	if (isatty(fileno(fp)) && ioctl(fileno(fp), TIOCGWINSZ, &ws) == 0)
		cols = ws.ws_col < 60 ? 60 : ws.ws_col;
	room = cols == 0 ? SIZE_MAX : w + 4 < cols ? cols - w - 5 : 20;
	n = strlen(d);
	if (n > room) {
		n = room - 3;
		while (n > 0 && d[n] != ' ')
			n--;
		fprintf(fp, "  %-*s  %.*s...\n", (int)w, f->spec, (int)n, d);
	} else
		fprintf(fp, "  %-*s  %s\n", (int)w, f->spec, d);
}

void
cmd_print_help(FILE *fp, const struct cmd_entry *e, const char *path)
{
	const struct manpage_flag *shown[128];
	char page[256];
	struct manpage pages[3];
	size_t nshown = 0;
	char name[256], flag[SUGGEST_MAXLEN + 1], seen[4096] = " ";
	const char *p;
	size_t i, len, np = 0;

	fprintf(fp, "%s\n\n", e->summary);
	cmd_print_usage(fp, e);
	snprintf(
	    page, sizeof page, "tpuctl-%.*s", (int)strcspn(path, " "), path);
	snprintf(name, sizeof name, "tpuctl-%s", path);
	for (i = 0; name[i] != '\0'; i++)
		if (name[i] == ' ')
			name[i] = '-';
	if (e->children == NULL) {
		/* The sub-command's own page (tpuctl-data-cp), then the
		 * command's; a flag takes its first description. */
		if (strchr(path, ' ') != NULL &&
		    load_page(name, &pages[np]) == 0) {
			snprintf(page, sizeof page, "%s", name);
			np++;
		}
		snprintf(name, sizeof name, "tpuctl-%.*s",
		    (int)strcspn(path, " "), path);
		if (load_page(name, &pages[np]) == 0)
			np++;
		/* The global flags (--zone) are in tpuctl(1). */
		if (load_page("tpuctl", &pages[np]) == 0)
			np++;
		for (p = e->usage; *p != '\0'; p++) {
			const struct manpage_flag *f = NULL;

			if (*p != '-' ||
			    (p > e->usage && strchr(" [|", p[-1]) == NULL))
				continue;
			len = strspn(p, "-");
			if (len > 2 || !isalnum((unsigned char)p[len]))
				continue;
			len += strspn(p + len, "abcdefghijklmnopqrstuvwxyz"
			                       "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
			                       "0123456789-");
			if (len > SUGGEST_MAXLEN)
				continue;
			memcpy(flag, p, len);
			flag[len] = '\0';
			p += len - 1;
			/* Once each: " --zone " in seen. */
			snprintf(name, sizeof name, " %s ", flag);
			if (strstr(seen, name) != NULL)
				continue;
			if (strlen(seen) + strlen(name) < sizeof seen)
				snprintf(seen + strlen(seen),
				    sizeof seen - strlen(seen), "%s ", flag);
			if (seen[1] != '\0' &&
			    strchr(seen + 1, ' ') == seen + strlen(seen) - 1)
				fprintf(fp, "\nFlags:\n");
			for (i = 0; i < np && f == NULL; i++)
				f = manpage_find(&pages[i], flag);
			if (f == NULL) {
				fprintf(fp, "  %s\n", flag);
				continue;
			}
			/* An item naming several flags: once. */
			for (i = 0; i < nshown && shown[i] != f; i++)
				;
			if (i < nshown)
				continue;
			if (nshown < nitems(shown))
				shown[nshown++] = f;
			print_flag(fp, f);
		}
		for (i = 0; i < np; i++)
			manpage_release(&pages[i]);
	}
	fprintf(fp, "\nSee %s(1).\n", page);
}

static int
wants_help(int argc, char **argv)
{
	int i;

	for (i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--") == 0)
			return 0;
		if (strcmp(argv[i], "-h") == 0 ||
		    strcmp(argv[i], "--help") == 0)
			return 1;
	}
	return 0;
}

/*
 * Run e: a command whose entry does not declare CMD_NEEDS_AUTH never
 * loads the credential chain nor opens an HTTP client (help, version,
 * config, completion, plan, ssh-pool work offline), and one that does
 * not declare CMD_SSH never starts an SSH session; one that did is a
 * programming error, reported as such (exit 1) so every test run
 * catches it.
 */
static int
run_exec(const struct cmd_entry *e, struct tpu_ctx *ctx, int argc, char **argv,
    struct tpu_err *err)
{
	int had = ctx->auth != NULL || ctx->http != NULL;
	unsigned long ssh_before = sshpool_sessions_started();
	int rc = e->exec(ctx, argc, argv, err);

	if (!(e->flags & CMD_SSH) && sshpool_sessions_started() != ssh_before)
		return tpu_error(err, TPU_E_INTERNAL,
		    "'%s' opened an SSH session but its entry does not "
		    "declare CMD_SSH",
		    current_path);
	if ((e->flags & CMD_NEEDS_AUTH) || had ||
	    (ctx->auth == NULL && ctx->http == NULL))
		return rc;
	return tpu_error(err, TPU_E_INTERNAL,
	    "'%s' loaded credentials or opened an HTTP client but its entry "
	    "does not declare CMD_NEEDS_AUTH",
	    current_path);
}

static int dispatch(
    const struct cmd_entry *, struct tpu_ctx *, int, char **, struct tpu_err *);

/*
 * A command may run others (submit: queued-resources create, logs;
 * recovery: create): such a dispatch starts again from "tpuctl", and the
 * running command's path and entry are back when it returns.
 */
int
cmd_dispatch(const struct cmd_entry *parent, struct tpu_ctx *ctx, int argc,
    char **argv, struct tpu_err *err)
{
	char saved[sizeof current_path];
	const struct cmd_entry *was = current;
	int rc;

	if (parent != NULL || current == NULL)
		return dispatch(parent, ctx, argc, argv, err);
	memcpy(saved, current_path, sizeof saved);
	snprintf(current_path, sizeof current_path, "tpuctl");
	rc = dispatch(NULL, ctx, argc, argv, err);
	memcpy(current_path, saved, sizeof saved);
	current = was;
	return rc;
}

static int
dispatch(const struct cmd_entry *parent, struct tpu_ctx *ctx, int argc,
    char **argv, struct tpu_err *err)
{
	const struct cmd_entry *e;
	size_t n;

	if (parent == NULL)
		e = cmd_find(cmd_table, argv[0]);
	else
		e = cmd_find_child(parent, argv[0]);
	if (e == NULL) {
		char path[sizeof current_path];
		const char *why;

		snprintf(path, sizeof path, "%s %s", current_path, argv[0]);
		if ((why = cmd_gcloud_missing(path)) != NULL)
			return tpu_error(err, TPU_E_USAGE, "'%s': %s",
			    path + strlen("tpuctl "), why);
		return cmd_want_usage(), cmd_unknown(parent, argv[0], err);
	}
	current = e;
	n = strlen(current_path);
	snprintf(current_path + n, sizeof current_path - n, " %s", e->name);

	if (e->children != NULL) {
		if (argc < 2 || strcmp(argv[1], "-h") == 0 ||
		    strcmp(argv[1], "--help") == 0) {
			if (argc >= 2) {
				printf("%s\n\n", e->summary);
				cmd_print_usage(stdout, e);
				return 0;
			}
			return cmd_want_usage(),
			       tpu_error(err, TPU_E_USAGE,
			           "missing sub-command for '%s'", e->name);
		}
		return dispatch(e, ctx, argc - 1, argv + 1, err);
	}
	if (wants_help(argc, argv)) {
		cmd_print_help(stdout, e, current_path + strlen("tpuctl "));
		return 0;
	}
	optind = 0;
	opterr = 0;
	if (!(e->flags & CMD_DEFINES_PROFILE))
		config_warn_profile(ctx->cfg);
	return run_exec(e, ctx, argc, argv, err);
}

int
cmd_want_operands(int argc, char **argv, int min, int max, struct tpu_err *err)
{
	if (argc < min)
		return cmd_want_usage(),
		       tpu_error(err, TPU_E_USAGE, "missing operand");
	if (max >= 0 && argc > max)
		return cmd_want_usage(),
		       tpu_error(err, TPU_E_USAGE, "unexpected operand '%s'",
		           argv[max]);
	return 0;
}

int
cmd_check_operands(
    const struct cmd_entry *e, int argc, char **argv, struct tpu_err *err)
{
	return cmd_want_operands(argc, argv, e->min_args, e->max_args, err);
}

/*
 * The long options a command knows are those its usage line names (the
 * usage equals the man page SYNOPSIS, t003), plus the global flags and
 * --help: suggest the nearest.
 */
static int
unknown_long_option(const char *arg, struct tpu_err *err)
{
	static char words[64][SUGGEST_MAXLEN + 1];
	const char *cand[64 + 32];
	const struct cmd_entry *e = cmd_current();
	char given[SUGGEST_MAXLEN + 1];
	const char *p, *best, *g;
	size_t n = 0, nw = 0, len;

	len = strcspn(arg, "=");
	if (len > SUGGEST_MAXLEN)
		len = SUGGEST_MAXLEN;
	memcpy(given, arg, len);
	given[len] = '\0';
	for (p = e != NULL ? e->usage : ""; (p = strstr(p, "--")) != NULL;) {
		len =
		    2 + strspn(p + 2, "abcdefghijklmnopqrstuvwxyz0123456789-");
		if (len > 2 && len <= SUGGEST_MAXLEN && nw < nitems(words)) {
			memcpy(words[nw], p, len);
			words[nw][len] = '\0';
			cand[n++] = words[nw++];
		}
		p += len;
	}
	cand[n++] = "--help";
	for (len = 0; (g = cmd_global_flag(len)) != NULL && n < nitems(cand);
	     len++)
		cand[n++] = g;
	best = suggest_best(given, cand, n);
	if (best != NULL)
		return tpu_error(err, TPU_E_USAGE,
		    "unknown option '%s'; did you mean '%s'?", given, best);
	return tpu_error(err, TPU_E_USAGE, "unknown option '%s'", arg);
}

int
cmd_bad_option(char **argv, int opt, struct tpu_err *err)
{
	const char *arg = argv[optind - 1], *why;

	if (opt == ':')
		return cmd_want_usage(), tpu_error(err, TPU_E_USAGE,
		                             "option '%s' needs a value", arg);
	if (optopt != 0 && optopt != '?' && arg[0] == '-' && arg[1] != '-')
		return cmd_want_usage(), tpu_error(err, TPU_E_USAGE,
		                             "unknown option '-%c'", optopt);
	if (arg[0] == '-' && arg[1] == '-' &&
	    (why = cmd_gcloud_refusal(current_path, arg)) != NULL)
		return tpu_error(err, TPU_E_USAGE, "%.*s: %s",
		    (int)strcspn(arg, "="), arg, why);
	return cmd_want_usage(), unknown_long_option(arg, err);
}
