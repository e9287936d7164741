/*
 * The command table.  Every subcommand is one file exporting one
 * struct cmd_entry, listed once in commands.def.  A command with
 * sub-commands ("data cp", "config get") sets .children to a table of its
 * own, ended by an entry with a NULL name; cmd_dispatch() walks it.
 */
#ifndef TPUCTL_CMD_H
#define TPUCTL_CMD_H

#include "ctx.h"
#include "err.h"

enum cmd_flags {
	CMD_NEEDS_AUTH = (1 << 0),      /* talks to Google: credentials */
	CMD_NEEDS_PROJECT = (1 << 1),   /* needs core/project */
	CMD_NEEDS_ZONE = (1 << 2),      /* needs compute/zone (and project) */
	CMD_SSH = (1 << 3),             /* may open SSH sessions (checked:
	                                   one that does without it is an
	                                   internal error) */
	CMD_HIDDEN = (1 << 4),          /* not in "tpuctl help" */
	CMD_DEFINES_PROFILE = (1 << 5), /* "config set": no "profile 'ci'
	                                   is not defined" warning */
	CMD_ZONE_ANY = (1 << 6),        /* --zone - (every zone) allowed */
};

struct cmd_entry {
	const char *name;    /* "delete" */
	const char *alias;   /* NULL, or an explicit short form */
	const char *usage;   /* identical to the man page SYNOPSIS */
	const char *summary; /* one line for "tpuctl help" */
	int min_args;        /* operands after options */
	int max_args;        /* -1: no upper bound */
	int flags;           /* enum cmd_flags */
	int (*exec)(struct tpu_ctx *, int, char **, struct tpu_err *);
	const struct cmd_entry *children; /* NULL-name terminated, or NULL */
};

#define CMD(n) extern const struct cmd_entry cmd_##n##_entry;
#include "commands.def"
#undef CMD

extern const struct cmd_entry *const cmd_table[];

/* Find a command by exact name or alias in a NULL-terminated table. */
const struct cmd_entry *cmd_find(const struct cmd_entry *const *, const char *);
const struct cmd_entry *cmd_find_child(const struct cmd_entry *, const char *);

/*
 * Run argv[0] from the top-level table (or from parent's children when
 * parent is not NULL): -h/--help prints the usage and returns 0; a missing
 * or unknown sub-command is a usage error.  Returns what exec returns: 0,
 * a negative enum tpu_errc, or a positive exit status to use as is.
 */
int cmd_dispatch(const struct cmd_entry *parent, struct tpu_ctx *, int, char **,
    struct tpu_err *);

/*
 * Usage errors about the command line itself (unknown command or option,
 * operand count) print the usage after the message; errors about a value
 * (a bad zone, a bad accelerator type) are one line only.
 */
void cmd_want_usage(void);
int cmd_usage_wanted(void);

/* The entry whose usage a usage error should print (the deepest reached). */
const struct cmd_entry *cmd_current(void);

/*
 * The flags (enum cmd_flags) of the entry cmd_dispatch runs: what it
 * declares it needs.  Project and zone come from options and operands
 * (a full resource name sets both), so they are checked when the command
 * opens the API (tpucmd_open), by these flags, not before exec.
 */
int cmd_needs(void);
/* "tpuctl data cp": the full name of the current command. */
const char *cmd_current_path(void);

/*
 * The usage error for an unknown command (parent NULL) or sub-command of
 * parent, naming the nearest known one when there is one ("unknown
 * command 'lsit'; did you mean 'list'?").
 */
int cmd_unknown(
    const struct cmd_entry *parent, const char *name, struct tpu_err *);

/*
 * Check the operand count against the entry after getopt: TPU_E_USAGE with
 * "missing operand" / "unexpected operand 'x'" otherwise.
 */
int cmd_check_operands(
    const struct cmd_entry *, int argc, char **argv, struct tpu_err *);
/*
 * The same check with the bounds given (max -1: no upper bound), for a
 * command whose operand count is narrower than its entry's (an operand
 * list that "--" continues): one wording, a usage error (exit 2).
 */
int cmd_want_operands(
    int argc, char **argv, int min, int max, struct tpu_err *);

/*
 * For getopt_long's unknown-option and missing-argument returns: a usage
 * error naming the option.
 */
int cmd_bad_option(char **argv, int opt, struct tpu_err *);

/* The i-th global flag's name ("--zone"), or NULL past the last. */
const char *cmd_global_flag(size_t i);

/*
 * "--help": the summary, the usage, then one line per flag the usage
 * names, described by the first sentence of its item in the command's
 * man page (tpuctl-data-cp.1, then tpuctl-data.1) found next to the
 * binary; a flag the page lacks (or no page) is listed bare.  path is
 * "data cp".
 */
void cmd_print_help(FILE *, const struct cmd_entry *, const char *path);

/* Print "usage: tpuctl <usage>" for e (and its children) to fp. */
void cmd_print_usage(FILE *, const struct cmd_entry *);

/*
 * gcloud's flags and commands tpuctl refuses with a reason: the reason
 * for flag arg ("--range" or "--range=x") of command path cmd ("tpuctl
 * create"), or for the command cmd itself; NULL when there is none.
 */
const char *cmd_gcloud_refusal(const char *cmd, const char *arg);
const char *cmd_gcloud_missing(const char *cmd);

#endif
