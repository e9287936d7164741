/*
 * "tpuctl completion bash|zsh": shell completion scripts generated from
 * the command table, so every command, sub-command and long option that
 * exists is completed and nothing else.  Long options come from the usage
 * strings (which the man pages repeat); operands named "key" complete
 * with the known configuration keys, and "a|b" operands with their words.
 * Node, queued-resource, zone, accelerator-type and --worker words are
 * dynamic: the script runs "tpuctl completion --list" (local data only).
 */
#include <ctype.h>
#include <getopt.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "buf.h"
#include "catalog.h"
#include "cmd.h"
#include "config.h"
#include "nodecache.h"

/* The global flags of cmd/main.c, for completion only. */
static const char *const global_flags[] = { "--access-token-file", "--ca-file",
	"--dry-run", "--format", "--help", "--impersonate-service-account",
	"--log-http", "--profile", "--project", "--quiet", "--verbose",
	"--verbosity", "--zone" };
/* Those that take a value in the next word, but --zone, --project and
 * --profile (the scan keeps those for tpuctl completion --list); the
 * second list leaves out those whose values are completed. */
static const char global_with_arg[] = "--access-token-file|--ca-file|"
                                      "--format|--impersonate-service-account|"
                                      "--verbosity";
static const char global_free_arg[] = "--impersonate-service-account|"
                                      "--profile|--project";

/*
 * After the scan: the values of --zone (and --zones' last item is left
 * to the user), --accelerator-type and --worker (of the node operand
 * typed before it) from tpuctl completion --list.
 */
static const char value_case[] =
    "\tcase \"$prev\" in\n"
    "\t--zone)\n"
    "\t\twl=$(_tpuctl_dyn zones) ;;\n"
    "\t--accelerator-type)\n"
    "\t\twl=$(_tpuctl_dyn accelerator-types) ;;\n"
    "\t--worker)\n"
    "\t\t[ -z \"$op1\" ] || wl=$(_tpuctl_dyn \"workers=$op1\")\n"
    "\t\t[ -n \"$wl\" ] || return 0 ;;\n"
    "\tesac\n";

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
/* The first operand of a usage (outside brackets), or NULL; *end past it. */
static const char *
first_operand(const char *path, const char *usage, const char **end)
{
	const char *p = usage + strlen(path), *s;
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
		return NULL;
	s = p;
	while (*p != '\0' && !isspace((unsigned char)*p))
		p++;
	*end = p;
	return s;
}

/*
 * An operand naming an existing node ("node"), queued resource
 * ("queued-resource") or either ("name"): the --list words of the node
 * cache, or NULL.  Creations name a new one: NULL.  *repeats is 1 for
 * "node ...".
 */
static const char *
usage_dynamic(const char *path, const char *usage, int *repeats)
{
	const char *s, *p;
	size_t n;

	*repeats = 0;
	if ((s = first_operand(path, usage, &p)) == NULL ||
	    strstr(path, "create") != NULL)
		return NULL;
	n = (size_t)(p - s);
	*repeats = strncmp(p, " ...", 4) == 0;
	if (n == 4 && strncmp(s, "node", 4) == 0)
		return "nodes";
	if (n == 15 && strncmp(s, "queued-resource", 15) == 0)
		return "queued-resources";
	if (n == 4 && strncmp(s, "name", 4) == 0)
		return "name";
	return NULL;
}

static void
usage_operands(struct buf *b, const char *path, const char *usage)
{
	const char *p, *s, *q;
	const struct config_key *keys;
	size_t i, n;

	if ((s = first_operand(path, usage, &p)) == NULL)
		return;
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
	const char *dyn;
	struct buf b;
	char path[256];
	int rep;

	snprintf(
	    path, sizeof path, "%s%s%s", prefix, *prefix ? " " : "", e->name);
	if (e->children != NULL) {
		for (c = e->children; c->name != NULL; c++)
			leaf_arms(fp, path, c, operands);
		return;
	}
	buf_init(&b, BUF_NOCAP);
	if (operands == 2) {
		/* _tpuctl_repeats: paths whose operand repeats. */
		if (usage_dynamic(path, e->usage, &rep) != NULL && rep)
			fprintf(fp, "\t\"%s\") return 0 ;;\n", path);
	} else if (operands &&
	           (dyn = usage_dynamic(path, e->usage, &rep)) != NULL) {
		if (strcmp(dyn, "name") == 0)
			fprintf(fp,
			    "\t\"%s\") _tpuctl_dyn nodes; "
			    "_tpuctl_dyn queued-resources ;;\n",
			    path);
		else
			fprintf(fp, "\t\"%s\") _tpuctl_dyn %s ;;\n", path, dyn);
	} else if (operands)
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
	fprintf(
	    fp, "\tesac\n}\n\n%s_repeats() {\n\tcase \"$1\" in\n", fn_prefix);
	for (t = cmd_table; *t != NULL; t++)
		leaf_arms(fp, "", *t, 2);
	fprintf(fp, "\tesac\n\treturn 1\n}\n\n");
	/* Words from tpuctl itself (local data only: see list_words()),
	 * with the --zone, --project and --profile typed so far. */
	fprintf(fp,
	    "%s_dyn() {\n"
	    "\t\"${ws[0]}\" \"${gf[@]}\" completion --list \"$1\" bash "
	    "2>/dev/null\n"
	    "}\n\n",
	    fn_prefix);
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
	    "\tcpath=\n\tnops=0\n\top1=\n\tgf=()\n\ti=%s\n"
	    "\twhile [ \"$i\" -lt \"%s\" ]; do\n"
	    "\t\tw=${ws[$i]}\n"
	    "\t\tcase \"$w\" in\n"
	    "\t\t--zone | --project | --profile)\n"
	    "\t\t\tif [ $((i + 1)) -lt \"%s\" ]; then\n"
	    "\t\t\t\tgf+=(\"$w\" \"${ws[$((i + 1))]}\")\n"
	    "\t\t\tfi\n"
	    "\t\t\ti=$((i + 1)) ;;\n"
	    "\t\t--zone=* | --project=* | --profile=*)\n"
	    "\t\t\tgf+=(\"$w\") ;;\n"
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
	    "\t\t\t\t[ \"$nops\" -ne 1 ] || op1=$w\n"
	    "\t\t\tfi ;;\n"
	    "\t\tesac\n"
	    "\t\ti=$((i + 1))\n"
	    "\tdone\n",
	    first, limit, limit, global_with_arg);
}

static void
emit_bash(FILE *fp)
{
	fprintf(fp, "# bash completion for tpuctl.  Generated by "
	            "\"tpuctl completion bash\";\n"
	            "# load with: source <(tpuctl completion bash)\n\n");
	emit_data(fp, "_tpuctl");
	fprintf(fp, "_tpuctl() {\n"
	            "\tlocal cur prev cpath nops i w wl ws op1 gf\n"
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
	fprintf(fp, "\twl=\n%s", value_case);
	fprintf(fp,
	    "\tif [ -n \"$wl\" ]; then\n"
	    "\t\t:\n"
	    "\telif [ \"${cur#-}\" != \"$cur\" ]; then\n"
	    "\t\twl=\"$_tpuctl_globals $(_tpuctl_options \"$cpath\")\"\n"
	    "\telif [ -z \"$cpath\" ]; then\n"
	    "\t\twl=$_tpuctl_commands\n"
	    "\telif [ \"$cpath\" = \"${cpath%%%% *}\" ] && "
	    "[ -n \"$(_tpuctl_children \"$cpath\")\" ]; then\n"
	    "\t\twl=$(_tpuctl_children \"$cpath\")\n"
	    "\telif [ \"$nops\" -eq 0 ] || _tpuctl_repeats \"$cpath\"; then\n"
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
	            "\tlocal cur prev cpath nops i w wl op1\n"
	            "\tlocal -a ws gf\n"
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
	fprintf(fp, "\twl=\n%s", value_case);
	fprintf(fp,
	    "\tif [ -n \"$wl\" ]; then\n"
	    "\t\t:\n"
	    "\telif [ \"${cur#-}\" != \"$cur\" ]; then\n"
	    "\t\twl=\"$_tpuctl_globals $(_tpuctl_options \"$cpath\")\"\n"
	    "\telif [ -z \"$cpath\" ]; then\n"
	    "\t\twl=$_tpuctl_commands\n"
	    "\telif [ \"$cpath\" = \"${cpath%%%% *}\" ] && "
	    "[ -n \"$(_tpuctl_children \"$cpath\")\" ]; then\n"
	    "\t\twl=$(_tpuctl_children \"$cpath\")\n"
	    "\telif [ \"$nops\" -eq 0 ] || _tpuctl_repeats \"$cpath\"; then\n"
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

/* The cached node's worker count: "all 0 1 ... n-1"; nothing on a miss. */
static void
list_workers(FILE *fp, const char *project, const char *zone, const char *node)
{
	const struct catalog_zone *z;
	const cJSON *eps;
	cJSON *desc = NULL;
	size_t i;
	int n, w;

	if (zone != NULL && strcmp(zone, "-") != 0)
		nodecache_get(project, zone, node, INT64_MAX, &desc);
	for (i = 0; desc == NULL && (zone == NULL || strcmp(zone, "-") == 0) &&
	            (z = catalog_zone_at(i)) != NULL;
	     i++)
		nodecache_get(project, z->name, node, INT64_MAX, &desc);
	if (desc == NULL)
		return;
	eps = cJSON_GetObjectItemCaseSensitive(desc, "networkEndpoints");
	n = cJSON_IsArray(eps) ? cJSON_GetArraySize(eps) : 0;
	if (n > 0)
		fprintf(fp, "all\n");
	for (w = 0; w < n; w++)
		fprintf(fp, "%d\n", w);
	cJSON_Delete(desc);
}

/*
 * "--list what": the words the completion scripts ask for while the user
 * types, one per line, from local data only (no request, so a Tab never
 * waits on the network): node and queued-resource names from the node
 * cache (project and zone from the configuration, --zone - or none: every
 * cached zone), zones and accelerator types from the catalog (those the
 * zone offers when one is set), and "workers=NODE": all and 0..n-1 from
 * the cached node's workers.  An unknown what is a usage error.
 */
static int
list_words(struct tpu_ctx *ctx, const char *what, struct tpu_err *err)
{
	const char *project = config_get(ctx->cfg, "core/project");
	const char *zone = config_get(ctx->cfg, "compute/zone");
	const struct catalog_zone *z = NULL, *zz;
	const struct catalog_gen *g;
	const cJSON *it;
	cJSON *names;
	size_t i, j;
	int size;

	if (zone != NULL && strcmp(zone, "-") != 0)
		z = catalog_zone_find(zone);
	if (strcmp(what, "nodes") == 0 ||
	    strcmp(what, "queued-resources") == 0) {
		if (project == NULL)
			return 0;
		names = nodecache_names(project, zone, what[0] == 'q');
		cJSON_ArrayForEach(it, names)
		    fprintf(ctx->out.fp, "%s\n", it->valuestring);
		cJSON_Delete(names);
	} else if (strcmp(what, "zones") == 0) {
		for (i = 0; (zz = catalog_zone_at(i)) != NULL; i++)
			fprintf(ctx->out.fp, "%s\n", zz->name);
	} else if (strcmp(what, "accelerator-types") == 0) {
		for (i = 0; (g = catalog_gen_at(i)) != NULL; i++) {
			if (z != NULL && !catalog_zone_offers(z, g))
				continue;
			for (j = 0; (size = catalog_gen_size_at(g, j)) != 0;
			     j++)
				fprintf(ctx->out.fp, "%s-%d\n", g->name, size);
		}
	} else if (strncmp(what, "workers=", 8) == 0) {
		if (project != NULL && what[8] != '\0')
			list_workers(ctx->out.fp, project, zone, what + 8);
	} else
		return cmd_want_usage(),
		       tpu_error(err, TPU_E_USAGE,
		           "invalid --list '%s': use nodes, queued-resources, "
		           "zones, accelerator-types or workers=NODE",
		           what);
	return 0;
}

static int
completion_exec(struct tpu_ctx *ctx, int argc, char **argv, struct tpu_err *err)
{
	static const struct option opts[] = {
		{ "list", required_argument, NULL, 'l' },
		{ NULL, 0, NULL, 0 },
	};
	const char *list = NULL;
	int ch, rc;

	while ((ch = getopt_long(argc, argv, "+", opts, NULL)) != -1) {
		if (ch == 'l')
			list = optarg;
		else
			return cmd_bad_option(argv, ch, err);
	}
	argc -= optind;
	argv += optind;
	if ((rc = cmd_check_operands(&cmd_completion_entry, argc, argv, err)) !=
	    0)
		return rc;
	if (strcmp(argv[0], "bash") != 0 && strcmp(argv[0], "zsh") != 0)
		return tpu_error(err, TPU_E_USAGE,
		    "unknown shell '%s': use bash or zsh", argv[0]);
	if (list != NULL)
		return list_words(ctx, list, err);
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
	.usage = "completion [--list what] bash|zsh",
	.summary = "print a shell completion script",
	.min_args = 1,
	.max_args = 1,
	.flags = 0,
	.exec = completion_exec,
};
