/*
 * --filter: a recursive-descent parser into a small tree, and its
 * evaluation with gcloud's matching rules (resource_expr's deprecated
 * ':' and '=' semantics, which gcloud still applies: ':' is a
 * case-insensitive substring match, '=' a case-insensitive whole-value
 * match; numbers compare as numbers when both sides are numeric).
 */
#include <sys/types.h>

#include <ctype.h>
#include <regex.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "buf.h"
#include "resfilter.h"
#include "resproj.h"
#include "xmalloc.h"

enum node_kind { N_AND, N_OR, N_NOT, N_TERM, N_GLOBAL };
enum op { OP_HAS, OP_EQ, OP_NE, OP_LT, OP_LE, OP_GT, OP_GE, OP_RE, OP_NRE };

struct operand {
	char *s;
	int numeric; /* unquoted and a number */
	double num;
};

struct resfilter {
	enum node_kind kind;
	struct resfilter *a, *b;
	struct resproj_key key;
	enum op op;
	struct operand *ops;
	int nops;
	regex_t re;
	int has_re;
};

struct parser {
	struct resproj_lex lx;
	struct tpu_err *err;
	int depth, terms;
};

void
resfilter_free(struct resfilter *f)
{
	int i;

	if (f == NULL)
		return;
	resfilter_free(f->a);
	resfilter_free(f->b);
	resproj_key_release(&f->key);
	for (i = 0; i < f->nops; i++)
		free(f->ops[i].s);
	free(f->ops);
	if (f->has_re)
		regfree(&f->re);
	free(f);
}

static struct resfilter *
node(enum node_kind kind, struct resfilter *a, struct resfilter *b)
{
	struct resfilter *f = xcalloc(1, sizeof *f);

	f->kind = kind;
	f->a = a;
	f->b = b;
	return f;
}

/* The word at the current position (AND, OR, NOT) if followed by a
 * separator. */
static int
word(struct parser *p, const char *w)
{
	const char *s = p->lx.s + p->lx.i;
	size_t n = strlen(w);

	return strncmp(s, w, n) == 0 &&
	       (s[n] == '\0' || isspace((unsigned char)s[n]) || s[n] == '(');
}

static int parse_adj(struct parser *, struct resfilter **);

static void
add_operand(struct resfilter *f, char *s, int quoted)
{
	struct operand *o;
	char *end;

	f->ops = xreallocarray(f->ops, (size_t)f->nops + 1, sizeof *f->ops);
	o = &f->ops[f->nops++];
	o->s = s;
	o->num = strtod(s, &end);
	o->numeric = !quoted && *s != '\0' && *end == '\0' &&
	             !isspace((unsigned char)*s);
}

static int
parse_term(struct parser *p, struct resfilter **out)
{
	struct resproj_lex *lx = &p->lx;
	struct resfilter *f;
	const char *s = lx->s;
	size_t start;
	int rc, quoted;
	char *tok;

	resproj_lex_space(lx);
	if (++p->terms > RESFILTER_MAX_TERMS)
		return resproj_lex_error(
		    lx, p->err, "more than %d terms", RESFILTER_MAX_TERMS);
	start = lx->i;
	/* A lone word or string (no operator after it) is a global term. */
	tok = resproj_lex_token(lx, ":=!<>~()", 0, &quoted, &rc, p->err);
	if (rc != 0)
		return rc;
	resproj_lex_space(lx);
	if (tok != NULL && s[lx->i] != '(' &&
	    (s[lx->i] == '\0' || strchr(":=!<>~", s[lx->i]) == NULL)) {
		f = node(N_GLOBAL, NULL, NULL);
		f->op = OP_HAS;
		add_operand(f, tok, 1);
		*out = f;
		return 0;
	}
	free(tok);
	lx->i = start;
	if (s[lx->i] == '\0')
		return resproj_lex_error(lx, p->err, "term expected");
	f = node(N_TERM, NULL, NULL);
	if ((rc = resproj_key_parse(lx, &f->key, ":=!<>~()", p->err)) != 0)
		goto bad;
	resproj_lex_space(lx);
	if (s[lx->i] == ':')
		f->op = OP_HAS, lx->i++;
	else if (s[lx->i] == '=')
		f->op = OP_EQ, lx->i++;
	else if (strncmp(s + lx->i, "!=", 2) == 0)
		f->op = OP_NE, lx->i += 2;
	else if (strncmp(s + lx->i, "!~", 2) == 0)
		f->op = OP_NRE, lx->i += 2;
	else if (strncmp(s + lx->i, "<=", 2) == 0)
		f->op = OP_LE, lx->i += 2;
	else if (strncmp(s + lx->i, ">=", 2) == 0)
		f->op = OP_GE, lx->i += 2;
	else if (s[lx->i] == '<')
		f->op = OP_LT, lx->i++;
	else if (s[lx->i] == '>')
		f->op = OP_GT, lx->i++;
	else if (s[lx->i] == '~')
		f->op = OP_RE, lx->i++;
	else {
		rc = resproj_lex_error(lx, p->err,
		    "operator expected (one of : = != < <= > >= ~ !~)");
		goto bad;
	}
	resproj_lex_space(lx);
	if (s[lx->i] == '(' && f->op != OP_HAS && f->op != OP_EQ) {
		rc = resproj_lex_error(
		    lx, p->err, "a value list (...) follows only : and =");
		goto bad;
	}
	if (s[lx->i] == '(') {
		lx->i++;
		for (;;) {
			while (
			    isspace((unsigned char)s[lx->i]) || s[lx->i] == ',')
				lx->i++;
			if (s[lx->i] == ')')
				break;
			tok = resproj_lex_token(
			    lx, ",()", 0, &quoted, &rc, p->err);
			if (rc != 0)
				goto bad;
			if (tok == NULL) {
				rc = resproj_lex_error(lx, p->err,
				    "')' expected to end the value list");
				goto bad;
			}
			add_operand(f, tok, quoted);
		}
		lx->i++;
		if (f->nops == 0) {
			rc = resproj_lex_error(lx, p->err,
			    "a value list needs one value at least");
			goto bad;
		}
	} else {
		tok = resproj_lex_token(lx, "()", 0, &quoted, &rc, p->err);
		if (rc != 0)
			goto bad;
		if (tok == NULL) {
			rc = resproj_lex_error(
			    lx, p->err, "term operand expected");
			goto bad;
		}
		add_operand(f, tok, quoted);
	}
	if (f->op == OP_HAS) {
		int i;

		for (i = 0; i < f->nops; i++) {
			const char *st = strchr(f->ops[i].s, '*');

			if (st != NULL && strchr(st + 1, '*') != NULL) {
				rc = resproj_lex_error(lx, p->err,
				    "at most one * expected in : pattern '%s'",
				    f->ops[i].s);
				goto bad;
			}
		}
	}
	if (f->op == OP_RE || f->op == OP_NRE) {
		int e = regcomp(&f->re, f->ops[0].s, REG_EXTENDED | REG_NOSUB);

		if (e != 0) {
			char msg[128];

			regerror(e, &f->re, msg, sizeof msg);
			rc = resproj_lex_error(lx, p->err,
			    "bad regular expression '%s': %s", f->ops[0].s,
			    msg);
			goto bad;
		}
		f->has_re = 1;
	}
	*out = f;
	return 0;
bad:
	resfilter_free(f);
	return rc;
}

static int
parse_unary(struct parser *p, struct resfilter **out)
{
	struct resproj_lex *lx = &p->lx;
	struct resfilter *f = NULL;
	int rc;

	resproj_lex_space(lx);
	if (++p->depth > RESFILTER_MAX_DEPTH)
		return resproj_lex_error(lx, p->err, "nested more than %d deep",
		    RESFILTER_MAX_DEPTH);
	if (word(p, "NOT") || lx->s[lx->i] == '-') {
		lx->i += lx->s[lx->i] == '-' ? 1 : 3;
		if ((rc = parse_unary(p, &f)) != 0)
			goto out;
		*out = node(N_NOT, f, NULL);
	} else if (lx->s[lx->i] == '(') {
		lx->i++;
		if ((rc = parse_adj(p, &f)) != 0)
			goto out;
		resproj_lex_space(lx);
		if (lx->s[lx->i] != ')') {
			resfilter_free(f);
			rc = resproj_lex_error(lx, p->err, "')' expected");
			goto out;
		}
		lx->i++;
		*out = f;
	} else if ((rc = parse_term(p, out)) != 0)
		goto out;
	rc = 0;
out:
	p->depth--;
	return rc;
}

static int
parse_and(struct parser *p, struct resfilter **out, int *had_and)
{
	struct resfilter *f, *g;
	int rc;

	*had_and = 0;
	if ((rc = parse_unary(p, &f)) != 0)
		return rc;
	for (;;) {
		resproj_lex_space(&p->lx);
		if (!word(p, "AND"))
			break;
		p->lx.i += 3;
		*had_and = 1;
		if ((rc = parse_unary(p, &g)) != 0) {
			resfilter_free(f);
			return rc;
		}
		f = node(N_AND, f, g);
	}
	*out = f;
	return 0;
}

static int
parse_or(struct parser *p, struct resfilter **out)
{
	struct resfilter *f, *g;
	int rc, had_and, any_and, ors = 0;

	if ((rc = parse_and(p, &f, &any_and)) != 0)
		return rc;
	for (;;) {
		resproj_lex_space(&p->lx);
		if (!word(p, "OR"))
			break;
		p->lx.i += 2;
		ors = 1;
		if ((rc = parse_and(p, &g, &had_and)) != 0) {
			resfilter_free(f);
			return rc;
		}
		any_and |= had_and;
		f = node(N_OR, f, g);
		if (any_and && ors) {
			resfilter_free(f);
			return resproj_lex_error(&p->lx, p->err,
			    "parentheses are required when AND and OR are "
			    "combined");
		}
	}
	if (any_and && ors) {
		resfilter_free(f);
		return resproj_lex_error(&p->lx, p->err,
		    "parentheses are required when AND and OR are combined");
	}
	*out = f;
	return 0;
}

/* Juxtaposed terms: AND, binding looser than OR. */
static int
parse_adj(struct parser *p, struct resfilter **out)
{
	struct resfilter *f, *g;
	int rc;

	if ((rc = parse_or(p, &f)) != 0)
		return rc;
	for (;;) {
		resproj_lex_space(&p->lx);
		if (p->lx.s[p->lx.i] == '\0' || p->lx.s[p->lx.i] == ')')
			break;
		if (word(p, "AND") || word(p, "OR")) {
			resfilter_free(f);
			return resproj_lex_error(&p->lx, p->err,
			    "parentheses are required when AND and OR are "
			    "combined");
		}
		if ((rc = parse_or(p, &g)) != 0) {
			resfilter_free(f);
			return rc;
		}
		f = node(N_AND, f, g);
	}
	*out = f;
	return 0;
}

int
resfilter_parse(const char *s, struct resfilter **out, struct tpu_err *err)
{
	struct parser p;
	struct resfilter *f = NULL;
	int rc;

	*out = NULL;
	memset(&p, 0, sizeof p);
	p.lx.s = s;
	p.lx.what = "filter";
	p.err = err;
	if (strlen(s) > RESPROJ_MAX_EXPR) {
		p.lx.i = RESPROJ_MAX_EXPR;
		return resproj_lex_error(
		    &p.lx, err, "longer than %d bytes", RESPROJ_MAX_EXPR);
	}
	resproj_lex_space(&p.lx);
	if (s[p.lx.i] == '\0')
		return 0;
	if ((rc = parse_adj(&p, &f)) != 0)
		return rc;
	resproj_lex_space(&p.lx);
	if (s[p.lx.i] != '\0') {
		resfilter_free(f);
		return resproj_lex_error(&p.lx, err, "unexpected tokens");
	}
	*out = f;
	return 0;
}

/* ---- evaluation ---- */

/* A value as a number: a JSON number, or a string that is one. */
static int
numeric(const cJSON *v, double *x)
{
	char *end;

	if (cJSON_IsNumber(v)) {
		*x = v->valuedouble;
		return 1;
	}
	if (cJSON_IsString(v) && *v->valuestring != '\0' &&
	    !isspace((unsigned char)*v->valuestring)) {
		*x = strtod(v->valuestring, &end);
		return *end == '\0';
	}
	return 0;
}

static char *
lower_str(const cJSON *v)
{
	struct buf b;
	char *p;

	buf_init(&b, BUF_NOCAP);
	if (cJSON_IsString(v))
		buf_puts(&b, v->valuestring);
	else if (cJSON_IsBool(v))
		buf_puts(&b, cJSON_IsTrue(v) ? "true" : "false");
	else
		resproj_str(&b, v, 0);
	for (p = b.data; *p != '\0'; p++)
		*p = (char)tolower((unsigned char)*p);
	return buf_detach(&b, NULL);
}

/* gcloud's deprecated ':' (has) and '=' (eq) on one scalar. */
static int
match_one(const cJSON *v, const char *operand, int has)
{
	char *text, *pat, *star, *p;
	size_t tl, pl;
	int m = 0;

	if (cJSON_IsNumber(v)) {
		char *end;
		double x = strtod(operand, &end);

		if (*operand != '\0' && *end == '\0' && x == v->valuedouble)
			return 1;
		if (v->valuedouble == 0 && strcasecmp(operand, "false") == 0)
			return 1;
		if (v->valuedouble == 1 && strcasecmp(operand, "true") == 0)
			return 1;
	} else if (cJSON_IsString(v) && strcmp(v->valuestring, operand) == 0)
		return 1;
	else if (v == NULL || cJSON_IsNull(v)) {
		if (*operand == '\0')
			return 1;
		if (has && strcmp(operand, "*") == 0)
			return 0;
	}
	if (v == NULL || cJSON_IsNull(v))
		text = xstrdup("null");
	else
		text = lower_str(v);
	if (cJSON_IsNumber(v) && (p = strchr(text, '.')) != NULL &&
	    strspn(p + 1, "0") == strlen(p + 1))
		*p = '\0';
	pat = xstrdup(operand);
	for (p = pat; *p != '\0'; p++)
		*p = (char)tolower((unsigned char)*p);
	tl = strlen(text);
	if (!has)
		m = strcmp(text, pat) == 0;
	else if (strcmp(pat, "*") == 0)
		m = tl > 0;
	else if ((star = strchr(pat, '*')) == NULL)
		m = strstr(text, pat) != NULL;
	else {
		/* one *: anchored at both ends (a leading or trailing *
		 * leaves that end open) */
		*star = '\0';
		pl = strlen(pat);
		m = strncmp(text, pat, pl) == 0 &&
		    tl >= pl + strlen(star + 1) &&
		    strcmp(text + tl - strlen(star + 1), star + 1) == 0;
	}
	free(text);
	free(pat);
	return m;
}

/* ':' and '=' on a value: a dict matches on its keys and values, a list
 * on its items. */
static int
word_match(const cJSON *v, const struct resfilter *f, int has)
{
	const cJSON *it;
	int i;

	if (cJSON_IsObject(v) || cJSON_IsArray(v)) {
		cJSON_ArrayForEach(it, v)
		{
			cJSON key = { 0 };

			key.type = cJSON_String;
			key.valuestring = it->string;
			for (i = 0; i < f->nops; i++)
				if ((cJSON_IsObject(v) &&
				        match_one(&key, f->ops[i].s, has)) ||
				    match_one(it, f->ops[i].s, has))
					return 1;
		}
		return 0;
	}
	for (i = 0; i < f->nops; i++)
		if (match_one(v, f->ops[i].s, has))
			return 1;
	return 0;
}

static int
compare(enum op op, int c)
{
	switch (op) {
	case OP_LT:
		return c < 0;
	case OP_LE:
		return c <= 0;
	case OP_GT:
		return c > 0;
	case OP_GE:
		return c >= 0;
	default:
		return 0;
	}
}

static int
apply(const struct resfilter *f, const cJSON *v, const struct operand *o)
{
	struct buf b;
	int m;

	switch (f->op) {
	case OP_HAS:
	case OP_EQ:
	case OP_NE:
		m = word_match(v, f, f->op == OP_HAS);
		return f->op == OP_NE ? !m : m;
	case OP_RE:
	case OP_NRE:
		if (cJSON_IsObject(v) || cJSON_IsArray(v))
			return 0;
		buf_init(&b, BUF_NOCAP);
		if (cJSON_IsString(v))
			buf_puts(&b, v->valuestring);
		else if (v != NULL && !cJSON_IsNull(v))
			resproj_str(&b, v, 0);
		else {
			buf_release(&b);
			return 0;
		}
		m = regexec(&f->re, b.data, 0, NULL, 0) == 0;
		buf_release(&b);
		return f->op == OP_RE ? m : !m;
	default:
		if (cJSON_IsObject(v) || cJSON_IsArray(v))
			return 0;
		buf_init(&b, BUF_NOCAP);
		if (cJSON_IsString(v))
			buf_puts(&b, v->valuestring);
		else if (v != NULL && !cJSON_IsNull(v))
			resproj_str(&b, v, 0);
		m = compare(f->op, strcmp(b.data, o->s));
		buf_release(&b);
		return m;
	}
}

/*
 * An ISO 8601 duration [-]P[nY][nM][nW][nD][T[nH][nM][nS]] as the time
 * now + duration, in calendar arithmetic ("createTime>-P2W": created in
 * the last two weeks).  -1 when s is not one.
 */
static int
duration_time(const char *s, time_t now, time_t *t)
{
	static const char date_units[] = "YMWD", time_units[] = "HMS";
	long v[7] = { 0, 0, 0, 0, 0, 0, 0 }; /* Y M W D H M S */
	const char *p = s, *u;
	int sign = 1, in_time = 0, any = 0, last = -1;
	struct tm tm;

	if (*p == '-' || *p == '+')
		sign = *p++ == '-' ? -1 : 1;
	if (*p++ != 'P')
		return -1;
	while (*p != '\0') {
		char *end;
		long x;
		int idx;

		if (*p == 'T' && !in_time) {
			in_time = 1;
			p++;
			continue;
		}
		if (!isdigit((unsigned char)*p))
			return -1;
		x = strtol(p, &end, 10);
		if (x < 0 || x > 100000)
			return -1;
		p = end;
		u = strchr(in_time ? time_units : date_units, *p);
		if (*p == '\0' || u == NULL)
			return -1;
		idx = (int)(u - (in_time ? time_units : date_units)) +
		      (in_time ? 4 : 0);
		if (idx <= last)
			return -1;
		last = idx;
		v[idx] = x;
		any = 1;
		p++;
	}
	if (!any)
		return -1;
	localtime_r(&now, &tm);
	tm.tm_year += (int)(sign * v[0]);
	tm.tm_mon += (int)(sign * v[1]);
	tm.tm_mday += (int)(sign * (7 * v[2] + v[3]));
	tm.tm_hour += (int)(sign * v[4]);
	tm.tm_min += (int)(sign * v[5]);
	tm.tm_sec += (int)(sign * v[6]);
	tm.tm_isdst = -1;
	*t = mktime(&tm);
	return 0;
}

/*
 * An operand compared with a time: YYYY[-MM[-DD[THH:MM[:SS]...]]], the
 * missing date parts from today (as gcloud's dateutil fills them), in
 * local time unless an offset is written.
 */
static int
operand_time(const char *s, time_t *t, long *ns)
{
	time_t now = time(NULL);
	struct tm tm, today;
	int v[3] = { 0, 0, 0 }, n = 0, has_off;
	const char *p = s;
	char *end;

	if (resproj_time(s, t, ns, &has_off) == 0) {
		if (!has_off) {
			/* no offset: local time */
			localtime_r(t, &tm);
			*t -= tm.tm_gmtoff;
		}
		return 0;
	}
	localtime_r(&now, &today);
	if (duration_time(s, now, t) == 0) {
		*ns = 0;
		return 0;
	}
	while (n < 3) {
		long x = strtol(p, &end, 10);

		if (end == p || !isdigit((unsigned char)*p))
			return -1;
		v[n++] = (int)x;
		p = end;
		if (*p == '\0')
			break;
		if (*p != '-')
			return -1;
		p++;
	}
	if (*p != '\0' || (n >= 2 && (v[1] < 1 || v[1] > 12)) ||
	    (n == 3 && (v[2] < 1 || v[2] > 31)) || v[0] < 1000)
		return -1;
	memset(&tm, 0, sizeof tm);
	tm.tm_year = v[0] - 1900;
	tm.tm_mon = n >= 2 ? v[1] - 1 : today.tm_mon;
	tm.tm_mday = n == 3 ? v[2] : today.tm_mday;
	tm.tm_isdst = -1;
	*t = mktime(&tm);
	*ns = 0;
	return 0;
}

static int
term_value(const struct resfilter *f, const cJSON *v)
{
	double x;
	int i;

	for (i = 0; i < f->nops; i++) {
		const struct operand *o = &f->ops[i];
		time_t tv, to;
		long nv, no;
		int has_off;

		if (f->op >= OP_LT && f->op <= OP_GE && cJSON_IsString(v) &&
		    resproj_time(v->valuestring, &tv, &nv, &has_off) == 0 &&
		    operand_time(o->s, &to, &no) == 0) {
			int c = tv != to ? (tv > to) - (tv < to)
			                 : (nv > no) - (nv < no);

			if (compare(f->op, c))
				return 1;
			continue;
		}
		if (o->numeric && numeric(v, &x) && f->op != OP_RE &&
		    f->op != OP_NRE) {
			int c = (x > o->num) - (x < o->num), m;

			switch (f->op) {
			case OP_HAS:
			case OP_EQ:
				m = c == 0;
				break;
			case OP_NE:
				m = c != 0;
				break;
			default:
				m = compare(f->op, c);
			}
			if (m)
				return 1;
			continue; /* compared as numbers: not as strings */
		}
		if (apply(f, v, o))
			return 1;
	}
	return 0;
}

static int
global_match(const cJSON *v, const struct resfilter *f)
{
	const cJSON *it;

	if (cJSON_IsObject(v) || cJSON_IsArray(v)) {
		cJSON_ArrayForEach(it, v)
		{
			if (global_match(it, f))
				return 1;
		}
		return 0;
	}
	return v != NULL && !cJSON_IsNull(v) && match_one(v, f->ops[0].s, 1);
}

int
resfilter_match(const struct resfilter *f, const cJSON *r)
{
	cJSON *v;
	const cJSON *it;
	int m = 0;

	if (f == NULL)
		return 1;
	switch (f->kind) {
	case N_AND:
		return resfilter_match(f->a, r) && resfilter_match(f->b, r);
	case N_OR:
		return resfilter_match(f->a, r) || resfilter_match(f->b, r);
	case N_NOT:
		return !resfilter_match(f->a, r);
	case N_GLOBAL:
		return global_match(r, f);
	case N_TERM:
		break;
	}
	v = resproj_eval(&f->key, r);
	if (cJSON_IsArray(v) && v->child != NULL) {
		cJSON_ArrayForEach(it, v)
		{
			if ((m = term_value(f, it)) != 0)
				break;
		}
	} else
		m = term_value(f, v);
	cJSON_Delete(v);
	return m;
}
