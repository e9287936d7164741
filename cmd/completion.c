/*
 * "tpuctl completion bash|zsh": shell completion scripts generated from
 * the command table, so every command, sub-command and long option that
 * exists is completed and nothing else.  Long options come from the usage
 * strings (which the man pages repeat); operands named "key" complete
 * with the known configuration keys, and "a|b" operands with their words.
 */
#include <ctype.h>
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "buf.h"
#include "cmd.h"
#include "config.h"

/* The global flags of cmd/main.c, for completion only. */
static const char *const global_flags[] = { "--access-token-file", "--ca-file",
	"--dry-run", "--format", "--help", "--impersonate-service-account",
	"--log-http", "--profile", "--project", "--quiet", "--verbose",
	"--verbosity", "--zone" };
/* Those that take a value in the next word; the second list leaves out
 * those whose values are completed. */
static const char global_with_arg[] = "--access-token-file|--ca-file|"
                                      "--format|--impersonate-service-account|"
                                      "--profile|--project|--verbosity|--zone";
static const char global_free_arg[] = "--impersonate-service-account|"
                                      "--profile|--project|--zone";

/* Append the long options named in a usage string, space-separated. */
static void
usage_options(struct buf *b, const char *usage)
{
	const char *p = usage, *s;

	while ((p = strstr(p, "--")) != NULL) {
		if (p != usage && !isspace((unsigned char)p[-1]) &&
		    p[-1] != '[' && p[-1] != '|') {
			p += 2;
			continue;
		}
		s = p;
		p += 2;
		while (isalnum((unsigned char)*p) || *p == '-')
			p++;
		if (p - s > 2)
			buf_printf(b, " %.*s", (int)(p - s), s);
	}
}

/*
 * Words for the first operand: "completion bash|zsh" gives "bash zsh";
 * "config get key" gives the config keys.  The operand is the first word
 * after the command path that is not an option or inside brackets.
 */
static void
usage_operands(struct buf *b, const char *path, const char *usage)
{
	const char *p = usage + strlen(path), *s, *q;
	const struct config_key *keys;
	size_t i, n;
	int depth = 0;

	for (; *p != '\0'; p++) {
		if (*p == '[')
			depth++;
		else if (*p == ']')
			depth--;
		else if (depth == 0 && isalpha((unsigned char)*p) &&
		         isspace((unsigned char)p[-1]))
			break;
	}
	if (*p == '\0')
		return;
	s = p;
	while (*p != '\0' && !isspace((unsigned char)*p))
		p++;
	if ((size_t)(p - s) == 3 && strncmp(s, "key", 3) == 0) {
		keys = config_keys(&n);
		for (i = 0; i < n; i++)
			buf_printf(b, " %s", keys[i].key);
		return;
	}
	if (memchr(s, '|', (size_t)(p - s)) == NULL)
		return;
	buf_puts(b, " ");
	for (q = s; q < p; q++) {
		if (*q == '|')
			buf_puts(b, " ");
		else if (isalnum((unsigned char)*q) || *q == '-' || *q == '_')
			buf_append(b, q, 1);
		else
			return;
	}
}

/* case arms: one per leaf command path. */
static void
leaf_arms(FILE *fp, const char *prefix, const struct cmd_entry *e, int operands)
{
	const struct cmd_entry *c;
	struct buf b;
	char path[256];

	snprintf(
	    path, sizeof path, "%s%s%s", prefix, *prefix ? " " : "", e->name);
	if (e->children != NULL) {
		for (c = e->children; c->name != NULL; c++)
			leaf_arms(fp, path, c, operands);
		return;
	}
	buf_init(&b, BUF_NOCAP);
	if (operands)
		usage_operands(&b, path, e->usage);
	else
		usage_options(&b, e->usage);
	if (b.len > 0)
		fprintf(fp, "\t\"%s\") echo \"%s\" ;;\n", path, b.data + 1);
	buf_release(&b);
}

static void
emit_data(FILE *fp, const char *fn_prefix)
{
	const struct cmd_entry *const *t, *c;
	size_t i;

	fprintf(fp, "%s_commands=\"", fn_prefix);
	for (t = cmd_table; *t != NULL; t++)
		if (!((*t)->flags & CMD_HIDDEN))
			fprintf(
			    fp, "%s%s", t == cmd_table ? "" : " ", (*t)->name);
	fprintf(fp, "\"\n%s_globals=\"", fn_prefix);
	for (i = 0; i < sizeof global_flags / sizeof global_flags[0]; i++)
		fprintf(fp, "%s%s", i ? " " : "", global_flags[i]);
	fprintf(fp, "\"\n\n%s_children() {\n\tcase \"$1\" in\n", fn_prefix);
	for (t = cmd_table; *t != NULL; t++) {
		if ((*t)->children == NULL)
			continue;
		fprintf(fp, "\t%s) echo \"", (*t)->name);
		for (c = (*t)->children; c->name != NULL; c++)
			fprintf(fp, "%s%s", c == (*t)->children ? "" : " ",
			    c->name);
		fprintf(fp, "\" ;;\n");
	}
	fprintf(
	    fp, "\tesac\n}\n\n%s_options() {\n\tcase \"$1\" in\n", fn_prefix);
	for (t = cmd_table; *t != NULL; t++)
		leaf_arms(fp, "", *t, 0);
	fprintf(
	    fp, "\tesac\n}\n\n%s_operands() {\n\tcase \"$1\" in\n", fn_prefix);
	fprintf(fp, "\thelp) echo \"$%s_commands\" ;;\n", fn_prefix);
	for (t = cmd_table; *t != NULL; t++)
		leaf_arms(fp, "", *t, 1);
	fprintf(fp, "\tesac\n}\n\n");
}

/*
 * The shell-neutral part: set path (the command path typed so far, e.g.
 * "config get") and nops (operands after it) from the words before the
 * cursor.  Both shells define the words array ws (0-based via an offset).
 */
static void
emit_scan(FILE *fp, const char *first, const char *limit)
{
	fprintf(fp,
	    "\tcpath=\n\tnops=0\n\ti=%s\n"
	    "\twhile [ \"$i\" -lt \"%s\" ]; do\n"
	    "\t\tw=${ws[$i]}\n"
	    "\t\tcase \"$w\" in\n"
	    "\t\t%s)\n\t\t\ti=$((i + 1)) ;;\n"
	    "\t\t--)\n\t\t\tbreak ;;\n"
	    "\t\t-*) ;;\n"
	    "\t\t*)\n"
	    "\t\t\tif [ -z \"$cpath\" ]; then\n"
	    "\t\t\t\tcpath=$w\n"
	    "\t\t\telif [ \"$nops\" -eq 0 ] && [ \"$cpath\" = \"${cpath%%%% "
	    "*}\" ] "
	    "&&\n"
	    "\t\t\t    [ -n \"$(_tpuctl_children \"$cpath\")\" ]; then\n"
	    "\t\t\t\tcpath=\"$cpath $w\"\n"
	    "\t\t\telse\n"
	    "\t\t\t\tnops=$((nops + 1))\n"
	    "\t\t\tfi ;;\n"
	    "\t\tesac\n"
	    "\t\ti=$((i + 1))\n"
	    "\tdone\n",
	    first, limit, global_with_arg);
}

static void
emit_bash(FILE *fp)
{
	fprintf(fp, "# bash completion for tpuctl.  Generated by "
	            "\"tpuctl completion bash\";\n"
	            "# load with: source <(tpuctl completion bash)\n\n");
	emit_data(fp, "_tpuctl");
	fprintf(fp, "_tpuctl() {\n"
	            "\tlocal cur prev cpath nops i w wl ws\n"
	            "\tCOMPREPLY=()\n"
	            "\tcur=${COMP_WORDS[COMP_CWORD]}\n"
	            "\tprev=${COMP_WORDS[COMP_CWORD - 1]}\n"
	            "\tws=(\"${COMP_WORDS[@]}\")\n");
	fprintf(fp,
	    "\tcase \"$prev\" in\n"
	    "\t--format)\n"
	    "\t\tmapfile -t COMPREPLY < <(compgen -W \"table json yaml "
	    "jsonl\" -- \"$cur\")\n\t\treturn ;;\n"
	    "\t--verbosity)\n"
	    "\t\tmapfile -t COMPREPLY < <(compgen -W \"none error "
	    "warning info debug\" -- \"$cur\")\n\t\treturn ;;\n"
	    "\t--access-token-file | --ca-file)\n"
	    "\t\tmapfile -t COMPREPLY < <(compgen -f -- \"$cur\")\n"
	    "\t\treturn ;;\n"
	    "\t%s)\n\t\treturn ;;\n"
	    "\tesac\n",
	    global_free_arg);
	emit_scan(fp, "1", "$COMP_CWORD");
	fprintf(fp,
	    "\tif [ \"${cur#-}\" != \"$cur\" ]; then\n"
	    "\t\twl=\"$_tpuctl_globals $(_tpuctl_options \"$cpath\")\"\n"
	    "\telif [ -z \"$cpath\" ]; then\n"
	    "\t\twl=$_tpuctl_commands\n"
	    "\telif [ \"$cpath\" = \"${cpath%%%% *}\" ] && "
	    "[ -n \"$(_tpuctl_children \"$cpath\")\" ]; then\n"
	    "\t\twl=$(_tpuctl_children \"$cpath\")\n"
	    "\telif [ \"$nops\" -eq 0 ]; then\n"
	    "\t\twl=$(_tpuctl_operands \"$cpath\")\n"
	    "\tfi\n"
	    "\t[ -n \"$wl\" ] || return 0\n"
	    "\tmapfile -t COMPREPLY < <(compgen -W \"$wl\" -- \"$cur\")\n"
	    "}\n\n"
	    "complete -o default -F _tpuctl tpuctl\n");
}

static void
emit_zsh(FILE *fp)
{
	fprintf(fp, "#compdef tpuctl\n"
	            "# zsh completion for tpuctl.  Generated by "
	            "\"tpuctl completion zsh\";\n"
	            "# install as _tpuctl in a directory of $fpath.\n\n");
	emit_data(fp, "_tpuctl");
	fprintf(fp, "_tpuctl() {\n"
	            "\tlocal cur prev cpath nops i w wl\n"
	            "\tlocal -a ws\n"
	            "\tcur=${words[CURRENT]}\n"
	            "\tprev=${words[CURRENT - 1]}\n"
	            "\t# ws is 0-based like bash's COMP_WORDS.\n"
	            "\tws=(\"${(@)words[1,CURRENT]}\")\n"
	            "\tsetopt localoptions ksharrays\n");
	fprintf(fp,
	    "\tcase \"$prev\" in\n"
	    "\t--format)\n"
	    "\t\tcompadd -- table json yaml jsonl\n\t\treturn ;;\n"
	    "\t--verbosity)\n"
	    "\t\tcompadd -- none error warning info debug\n"
	    "\t\treturn ;;\n"
	    "\t--access-token-file | --ca-file)\n"
	    "\t\t_files\n\t\treturn ;;\n"
	    "\t%s)\n\t\treturn ;;\n"
	    "\tesac\n",
	    global_free_arg);
	emit_scan(fp, "1", "$((CURRENT - 1))");
	fprintf(fp,
	    "\twl=\n"
	    "\tif [ \"${cur#-}\" != \"$cur\" ]; then\n"
	    "\t\twl=\"$_tpuctl_globals $(_tpuctl_options \"$cpath\")\"\n"
	    "\telif [ -z \"$cpath\" ]; then\n"
	    "\t\twl=$_tpuctl_commands\n"
	    "\telif [ \"$cpath\" = \"${cpath%%%% *}\" ] && "
	    "[ -n \"$(_tpuctl_children \"$cpath\")\" ]; then\n"
	    "\t\twl=$(_tpuctl_children \"$cpath\")\n"
	    "\telif [ \"$nops\" -eq 0 ]; then\n"
	    "\t\twl=$(_tpuctl_operands \"$cpath\")\n"
	    "\tfi\n"
	    "\tif [ -n \"$wl\" ]; then\n"
	    "\t\tcompadd -- ${=wl}\n"
	    "\telse\n"
	    "\t\t_files\n"
	    "\tfi\n"
	    "}\n\n"
	    "if [ \"$funcstack[1]\" = \"_tpuctl\" ]; then\n"
	    "\t_tpuctl \"$@\"\n"
	    "else\n"
	    "\tcompdef _tpuctl tpuctl\n"
	    "fi\n");
}

static int
completion_exec(struct tpu_ctx *ctx, int argc, char **argv, struct tpu_err *err)
{
	static const struct option opts[] = {
		{ NULL, 0, NULL, 0 },
	};
	int ch, rc;

	while ((ch = getopt_long(argc, argv, "+", opts, NULL)) != -1)
		return cmd_bad_option(argv, ch, err);
	argc -= optind;
	argv += optind;
	if ((rc = cmd_check_operands(&cmd_completion_entry, argc, argv, err)) !=
	    0)
		return rc;
	if (strcmp(argv[0], "bash") == 0)
		emit_bash(ctx->out.fp);
	else if (strcmp(argv[0], "zsh") == 0)
		emit_zsh(ctx->out.fp);
	else
		return tpu_error(err, TPU_E_USAGE,
		    "unknown shell '%s': use bash or zsh", argv[0]);
	return 0;
}

const struct cmd_entry cmd_completion_entry = {
	.name = "completion",
	.alias = NULL,
	.usage = "completion bash|zsh",
	.summary = "print a shell completion script",
	.min_args = 1,
	.max_args = 1,
	.flags = 0,
	.exec = completion_exec,
};
