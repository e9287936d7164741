/*
 * gcloud's resource keys, projections and transforms (gcloud topic
 * resource-keys, projections, formats): the one parser of the --format,
 * --filter and --sort-by languages.  A key is a path of names, [N]
 * indices and [] (every item), optionally followed by transform calls
 * (name.basename(), createTime.date("%Y-%m-%d", tz=UTC)); a format is
 * NAME[ATTRIBUTES](KEY[:ATTRIBUTE...], ...).  Values are cJSON trees;
 * resproj_str() renders one as gcloud's Python str() would.
 */
#ifndef TPUCTL_RESPROJ_H
#define TPUCTL_RESPROJ_H

#include <time.h>

#include <cjson/cJSON.h>

#include "buf.h"
#include "err.h"

/* Limits: a bad or hostile expression is refused, never half obeyed. */
#define RESPROJ_MAX_SEGS 64   /* parts of one key */
#define RESPROJ_MAX_COLS 256  /* keys of one projection */
#define RESPROJ_MAX_ARGS 16   /* arguments of one transform */
#define RESPROJ_MAX_CALLS 16  /* transforms of one key */
#define RESPROJ_MAX_EXPR 8192 /* bytes of one expression */

enum resproj_seg_kind {
	RESPROJ_NAME = 0,
	RESPROJ_INDEX, /* [N]; negative counts from the end */
	RESPROJ_ALL,   /* []: every item of a list */
};

struct resproj_seg {
	enum resproj_seg_kind kind;
	char *name;
	long index;
};

struct resproj_arg {
	char *name; /* NULL: positional */
	char *value;
};

struct resproj_call {
	int fn; /* index into the transform table */
	struct resproj_arg *args;
	int nargs;
};

/* A key and the transforms applied to its value. */
struct resproj_key {
	struct resproj_seg *segs;
	int nsegs;
	struct resproj_call *calls;
	int ncalls;
};

enum resproj_align {
	RESPROJ_LEFT = 0,
	RESPROJ_CENTER,
	RESPROJ_RIGHT,
};

struct resproj_col {
	struct resproj_key key;
	char *label; /* NULL: the default heading */
	int sort;    /* :sort=N, 0 none */
	int reverse; /* :reverse */
	enum resproj_align align;
	int width; /* :width=N, 0 none */
};

struct resproj_attr {
	char *name;
	char *value; /* NULL for a boolean attribute */
	int no;      /* no-NAME */
};

/* A parsed --format. */
struct resproj {
	char *name; /* "table", "value", ...; NULL: the command's default */
	struct resproj_attr *attrs;
	int nattrs;
	struct resproj_col *cols;
	int ncols;
	int projected; /* a (...) was given */
};

/* The lexer shared with resfilter.c. */
struct resproj_lex {
	const char *s; /* the whole expression, for messages */
	size_t i;
	const char *what; /* "format", "filter", "sort-by" */
};

void resproj_init(struct resproj *);
void resproj_release(struct resproj *);

/*
 * Parse a --format expression.  Every format name, attribute and key is
 * checked: an unknown format or transform, an empty key part
 * ("value(a..b)"), a key of more than RESPROJ_MAX_SEGS parts or an
 * unbalanced quote is TPU_E_USAGE naming the bad part and the rule.
 */
int resproj_parse(struct resproj *, const char *, struct tpu_err *);

/* A format attribute: 1 set (*value the value or NULL), 0 not given or
 * no-NAME. */
int resproj_attr(const struct resproj *, const char *name, const char **value);

/*
 * Parse one key with its transforms at lx (space skipped before);
 * terminators end it (besides the end of input).  TPU_E_USAGE when it is
 * malformed or empty.
 */
int resproj_key_parse(struct resproj_lex *, struct resproj_key *,
    const char *terminators, struct tpu_err *);
void resproj_key_release(struct resproj_key *);

/* Fill err with "invalid WHAT 'S': MSG at 'S[0..i]' *HERE* 'S[i..]'". */
int resproj_lex_error(const struct resproj_lex *, struct tpu_err *,
    const char *fmt, ...) __attribute__((format(printf, 3, 4)));
void resproj_lex_space(struct resproj_lex *);
/*
 * A possibly quoted token ("..." or '...', \" \' \\ escapes) ending at
 * white space or a terminator, outside quotes and balanced parentheses
 * when parens is set.  NULL when there is none (*quoted: it had quotes);
 * TPU_E_USAGE for an unterminated quote (*rc).
 */
char *resproj_lex_token(struct resproj_lex *, const char *terminators,
    int parens, int *quoted, int *rc, struct tpu_err *);

/*
 * The value of a key (with its transforms) in resource r: a new tree
 * the caller deletes, or NULL when undefined.
 */
cJSON *resproj_eval(const struct resproj_key *, const cJSON *r);

/* The default heading of column i: its last name part, ANGRY_SNAKE_CASE,
 * with more parts when another column ends the same.  Caller frees. */
char *resproj_label(const struct resproj *, int i);
/* Every column's heading, NULL-terminated (resproj_labels_free()). */
char **resproj_labels(const struct resproj *);
void resproj_labels_free(char **);

/* The base of uri() for a resource with a "projects/..." name. */
void resproj_set_uri_base(const char *);

/* Python's str() of a value into b (None: "None"; floats as gcloud's
 * float transform when fl is set, repr otherwise). */
void resproj_str(struct buf *, const cJSON *, int fl);
/* gcloud's float() transform of x. */
void resproj_float(struct buf *, double x);
void resproj_float_prec(struct buf *, double x, int precision);
/* Python truthiness: None, false, 0, "", [] and {} are false. */
int resproj_truthy(const cJSON *);
/* An RFC 3339 time or YYYY-MM-DD date: 0 with *t (UTC seconds), *ns and
 * *has_off (an offset or Z was written), -1 when not one. */
int resproj_time(const char *, time_t *t, long *ns, int *has_off);
/* A deep copy with the keys of every object sorted (caller deletes). */
cJSON *resproj_sorted(const cJSON *);
/* 1 when a number is integral (printed without a fraction). */
int resproj_is_int(const cJSON *);

/* --sort-by [~]KEY,...: keys in precedence order, ~ for descending. */
struct resproj_sortby {
	struct resproj_key *keys;
	int *reverse;
	int nkeys;
};

int resproj_sortby_parse(
    struct resproj_sortby *, const char *, struct tpu_err *);
/* Sort the items of list in place, as gcloud's --sort-by: by str() of
 * each key's value, stable. */
void resproj_sortby_apply(const struct resproj_sortby *, cJSON *list);
void resproj_sortby_release(struct resproj_sortby *);

/*
 * --flatten KEY,...: keys of names only (a struct resproj_sortby without
 * ~).  resproj_flatten() returns a new list with one copy of each
 * resource per item of the list at each key in turn, that list replaced
 * by the item (gcloud's --flatten); an empty list drops the resource, a
 * key that is no list keeps it.  The caller deletes the result.
 */
int resproj_flatten_parse(
    struct resproj_sortby *, const char *, struct tpu_err *);
cJSON *resproj_flatten(const struct resproj_sortby *, const cJSON *list);

#endif
