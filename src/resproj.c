/*
 * gcloud's projection language: the lexer (shared with resfilter.c),
 * keys, transform calls, format expressions, key evaluation on cJSON
 * resources, the transforms, and Python's str() of a value (what gcloud
 * prints for a cell).  Everything is checked when parsed; evaluation
 * never fails (an undefined key is NULL, a transform that cannot apply
 * gives its "undefined" value, as in gcloud).
 */
#include <ctype.h>
#include <math.h> /* macros only: tpuctl does not link libm */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "resproj.h"
#include "util.h"
#include "xmalloc.h"

/* Characters that end an unquoted key name (gcloud's reserved set). */
#define RESERVED ":=!<>~()[].{},+*/%&|^#;?"

void
resproj_lex_space(struct resproj_lex *lx)
{
	while (isspace((unsigned char)lx->s[lx->i]))
		lx->i++;
}

int
resproj_lex_error(
    const struct resproj_lex *lx, struct tpu_err *err, const char *fmt, ...)
{
	char msg[256];
	size_t len = strlen(lx->s), i = lx->i > len ? len : lx->i;
	size_t a = i > 40 ? i - 40 : 0, b = len - i > 40 ? 40 : len - i;
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	return tpu_error(err, TPU_E_USAGE,
	    "invalid %s '%.64s%s': %s [%s%.*s *HERE* %.*s%s]", lx->what, lx->s,
	    len > 64 ? "..." : "", msg, a > 0 ? "..." : "", (int)(i - a),
	    lx->s + a, (int)b, lx->s + i, len - i > b ? "..." : "");
}

char *
resproj_lex_token(struct resproj_lex *lx, const char *terminators, int parens,
    int *quoted, int *rc, struct tpu_err *err)
{
	struct buf b;
	int quote = 0, have = 0, depth = 0;
	const char *s = lx->s;

	*quoted = 0;
	*rc = 0;
	resproj_lex_space(lx);
	buf_init(&b, BUF_NOCAP);
	while (s[lx->i] != '\0') {
		char c = s[lx->i];

		if (c == '\\' && s[lx->i + 1] != '\0') {
			char n = s[lx->i + 1];

			if (n != '\\' && n != quote &&
			    (quote || (n != '"' && n != '\'')))
				buf_append(&b, "\\", 1);
			buf_append(&b, &n, 1);
			have = 1;
			lx->i += 2;
			continue;
		}
		if (quote && c == quote)
			quote = 0;
		else if (!quote && (c == '"' || c == '\'')) {
			quote = c;
			*quoted = have = 1;
		} else if (!quote && parens && (c == '(' || c == ')')) {
			if (c == ')' && depth == 0 && strchr(terminators, c))
				break;
			depth += c == '(' ? 1 : -1;
			buf_append(&b, &c, 1);
			have = 1;
		} else if (!quote && depth == 0 && strchr(terminators, c))
			break;
		else if (!quote && isspace((unsigned char)c) && !parens)
			break;
		else {
			buf_append(&b, &c, 1);
			have = 1;
		}
		lx->i++;
	}
	if (quote) {
		*rc =
		    resproj_lex_error(lx, err, "unterminated %c quote", quote);
		buf_release(&b);
		return NULL;
	}
	if (parens) /* spaces inside were kept: drop the trailing ones */
		while (b.len > 0 && isspace((unsigned char)b.data[b.len - 1]) &&
		       !*quoted)
			b.data[--b.len] = '\0';
	if (!have) {
		buf_release(&b);
		return NULL;
	}
	return buf_detach(&b, NULL);
}

/* The transforms: name, arguments allowed, and the function. */
typedef cJSON *(*transform_fn)(cJSON *, const struct resproj_call *);

struct transform {
	const char *name;
	int min, max;
	const char *const *kw; /* keyword names in positional order */
	transform_fn fn;
};

static const struct transform transforms[];
static const size_t ntransforms;

static const char *
arg(const struct resproj_call *c, int pos, const char *dflt)
{
	const char *const *kw = transforms[c->fn].kw;
	int i, n = 0;

	if (kw != NULL && kw[pos] != NULL)
		for (i = 0; i < c->nargs; i++)
			if (c->args[i].name != NULL &&
			    strcmp(c->args[i].name, kw[pos]) == 0)
				return c->args[i].value;
	for (i = 0; i < c->nargs; i++)
		if (c->args[i].name == NULL && n++ == pos)
			return c->args[i].value;
	return dflt;
}

static cJSON *
str_value(cJSON *v, const char *s)
{
	cJSON_Delete(v);
	return cJSON_CreateString(s);
}

/* str(v) as a new string (the caller frees). */
static char *
pystr(const cJSON *v)
{
	struct buf b;

	buf_init(&b, BUF_NOCAP);
	resproj_str(&b, v, 0);
	return buf_detach(&b, NULL);
}

/* ffloor() without libm, for |x| < 2^63. */
static double
ffloor(double x)
{
	double t;

	if (!(fabs(x) < 9.2e18))
		return x;
	t = (double)(long long)x;
	return t > x ? t - 1 : t;
}

/* A small non-negative integer argument (0 when malformed). */
static int
atoi_safe(const char *s)
{
	long v = s != NULL ? strtol(s, NULL, 10) : 0;

	return v < 0 ? 0 : v > 30 ? 30 : (int)v;
}

/* size()'s unit: a number, or K M G T P (first letter); *suffix is set
 * (non-NULL) only for a letter. */
static double
unit_size(const char *u, const char **suffix)
{
	static const char letters[] = "KMGTP";
	const char *l;
	char *end;
	double d;

	if (suffix != NULL)
		*suffix = NULL;
	if (u == NULL || *u == '\0')
		return 1.0;
	d = strtod(u, &end);
	if (*end == '\0' && end != u)
		return d != 0 ? d : 1.0;
	if ((l = strchr(letters, toupper((unsigned char)*u))) == NULL)
		return 1.0;
	if (suffix != NULL)
		*suffix = u;
	{
		double d2 = 1.0;
		long k;

		for (k = 0; k <= l - letters; k++)
			d2 *= 1024.0;
		return d2;
	}
}

static int parse_time(const char *, time_t *, long *, int *, int *);

static cJSON *
t_always(cJSON *v, const struct resproj_call *c)
{
	(void)c;
	return v;
}

static cJSON *
t_basename(cJSON *v, const struct resproj_call *c)
{
	const char *und = arg(c, 0, "");
	cJSON *it, *out;
	char *s;
	const char *p;

	if (!resproj_truthy(v))
		return str_value(v, und);
	if (cJSON_IsArray(v)) {
		struct resproj_call plain = { c->fn, NULL, 0 };

		out = cJSON_CreateArray();
		cJSON_ArrayForEach(it, v)
		{
			cJSON_AddItemToArray(
			    out, t_basename(cJSON_Duplicate(it, 1), &plain));
		}
		cJSON_Delete(v);
		return out;
	}
	s = pystr(v);
	if ((p = strrchr(s, '/')) != NULL || (p = strrchr(s, '\\')) != NULL)
		p++;
	else
		p = s;
	out = str_value(v, *p != '\0' || *s == '\0' ? p : und);
	free(s);
	return out;
}

static void
unquote_url(char *s)
{
	char *w = s;

	for (; *s != '\0'; s++) {
		if (*s == '%' && isxdigit((unsigned char)s[1]) &&
		    isxdigit((unsigned char)s[2])) {
			char h[3] = { s[1], s[2], '\0' };

			*w++ = (char)strtol(h, NULL, 16);
			s += 2;
		} else
			*w++ = *s;
	}
	*w = '\0';
}

static cJSON *
t_scope(cJSON *v, const struct resproj_call *c)
{
	static const char *const dflt[] = { "regions", "zones" };
	char *s, seg[256];
	const char *hit = NULL, *p;
	int i, n = c->nargs > 0 ? c->nargs : 2;
	cJSON *out;

	if (!resproj_truthy(v))
		return str_value(v, "");
	s = pystr(v);
	unquote_url(s);
	if (strchr(s, '/') == NULL) {
		out = str_value(v, s);
		free(s);
		return out;
	}
	for (i = 0; i < n && hit == NULL; i++) {
		const char *name = c->nargs > 0 ? c->args[i].value : dflt[i];

		snprintf(seg, sizeof seg, "/%s/", name);
		/* Python's split(seg)[-1]: after the last occurrence */
		for (p = strstr(s, seg); p != NULL; p = strstr(p + 1, seg))
			hit = p + strlen(seg);
	}
	if (hit == NULL && tpu_startswith(s, "https://"))
		hit = strrchr(s, '/') + 1;
	out = str_value(v, hit != NULL ? hit : s);
	free(s);
	return out;
}

static cJSON *
t_segment(cJSON *v, const struct resproj_call *c)
{
	const char *und = arg(c, 1, "");
	long idx = strtol(arg(c, 0, "-1"), NULL, 10), n = 1, k;
	char *s, *p, *q;
	cJSON *out;

	if (!resproj_truthy(v))
		return str_value(v, und);
	s = pystr(v);
	unquote_url(s);
	for (p = s; *p != '\0'; p++)
		n += *p == '/';
	if (idx < 0)
		idx += n;
	if (idx < 0 || idx >= n) {
		free(s);
		return str_value(v, und);
	}
	for (p = s, k = 0; k < idx; k++)
		p = strchr(p, '/') + 1;
	if ((q = strchr(p, '/')) != NULL)
		*q = '\0';
	out = str_value(v, *p != '\0' ? p : und);
	free(s);
	return out;
}

static cJSON *
t_len(cJSON *v, const struct resproj_call *c)
{
	double n = 0;

	(void)c;
	if (cJSON_IsString(v)) {
		const char *p;

		for (p = v->valuestring; *p != '\0'; p++)
			n += ((unsigned char)*p & 0xc0) != 0x80;
	} else if (cJSON_IsArray(v) || cJSON_IsObject(v))
		n = cJSON_GetArraySize(v);
	cJSON_Delete(v);
	return cJSON_CreateNumber(n);
}

static cJSON *
t_join(cJSON *v, const struct resproj_call *c)
{
	const char *sep = arg(c, 0, "/"), *und = arg(c, 1, "");
	const cJSON *it;
	struct buf b;
	cJSON *out;

	buf_init(&b, BUF_NOCAP);
	if (cJSON_IsString(v)) {
		const unsigned char *p = (const unsigned char *)v->valuestring;

		while (*p != '\0') {
			size_t n = tpu_utf8_len(p);

			if (n == 0)
				n = 1;
			if (b.len > 0)
				buf_puts(&b, sep);
			buf_append(&b, p, n);
			p += n;
		}
	} else if (cJSON_IsArray(v) || cJSON_IsObject(v)) {
		cJSON_ArrayForEach(it, v)
		{
			if (it != v->child)
				buf_puts(&b, sep);
			if (cJSON_IsObject(v))
				buf_puts(&b, it->string);
			else
				resproj_str(&b, it, 0);
		}
	}
	out = str_value(v, b.len > 0 ? b.data : und);
	buf_release(&b);
	return out;
}

static cJSON *
t_yesno(cJSON *v, const struct resproj_call *c)
{
	const char *yes = arg(c, 0, NULL), *no = arg(c, 1, "No");

	if (!resproj_truthy(v))
		return str_value(v, no);
	return yes != NULL ? str_value(v, yes) : v;
}

static int key_from_string(const char *, struct resproj_key *);

/* The value of key text k in v (NULL when undefined or malformed). */
static cJSON *
get_text(const cJSON *v, const char *k)
{
	struct resproj_key key;
	cJSON *out;

	if (key_from_string(k, &key) != 0)
		return NULL;
	out = resproj_eval(&key, v);
	resproj_key_release(&key);
	return out;
}

static cJSON *
t_firstof(cJSON *v, const struct resproj_call *c)
{
	cJSON *out;
	int i;

	for (i = 0; i < c->nargs; i++)
		if ((out = get_text(v, c->args[i].value)) != NULL &&
		    !cJSON_IsNull(out)) {
			cJSON_Delete(v);
			return out;
		} else
			cJSON_Delete(out);
	return str_value(v, "");
}

static cJSON *
t_extract(cJSON *v, const struct resproj_call *c)
{
	cJSON *out = cJSON_CreateArray(), *it;
	int i;

	for (i = 0; i < c->nargs; i++)
		if (resproj_truthy(it = get_text(v, c->args[i].value)))
			cJSON_AddItemToArray(out, it);
		else
			cJSON_Delete(it);
	cJSON_Delete(v);
	return out;
}

static cJSON *
t_case(cJSON *v, int up)
{
	char *p;

	if (!cJSON_IsString(v))
		return v;
	for (p = v->valuestring; *p != '\0'; p++)
		*p = (char)(up ? toupper((unsigned char)*p)
		               : tolower((unsigned char)*p));
	return v;
}

static cJSON *
t_lower(cJSON *v, const struct resproj_call *c)
{
	(void)c;
	return t_case(v, 0);
}

static cJSON *
t_upper(cJSON *v, const struct resproj_call *c)
{
	(void)c;
	return t_case(v, 1);
}

static cJSON *
t_list(cJSON *v, const struct resproj_call *c)
{
	const char *show = arg(c, 0, ""), *und = arg(c, 1, "");
	const char *sep = arg(c, 2, ",");
	struct buf b;
	cJSON *out, *sorted, *src;
	const cJSON *it;

	if (!cJSON_IsArray(v) && !cJSON_IsObject(v))
		return resproj_truthy(v) ? v : str_value(v, und);
	buf_init(&b, BUF_NOCAP);
	sorted = cJSON_IsObject(v) ? resproj_sorted(v) : NULL;
	src = sorted != NULL ? sorted : v;
	cJSON_ArrayForEach(it, src)
	{
		if (it != src->child)
			buf_puts(&b, sep);
		if (sorted != NULL && strcmp(show, "keys") == 0)
			buf_puts(&b, it->string);
		else if (sorted != NULL && strcmp(show, "values") == 0)
			resproj_str(&b, it, 0);
		else if (sorted != NULL) {
			buf_printf(&b, "%s=", it->string);
			resproj_str(&b, it, 0);
		} else
			resproj_str(&b, it, 0);
	}
	cJSON_Delete(sorted);
	out = str_value(v, b.data);
	buf_release(&b);
	return out;
}

static cJSON *
t_split(cJSON *v, const struct resproj_call *c)
{
	const char *sep = arg(c, 0, "/"), *und = arg(c, 1, "");
	const char *p, *q;
	cJSON *out;

	if (!resproj_truthy(v))
		return str_value(v, und);
	if (!cJSON_IsString(v) || *sep == '\0')
		return str_value(v, und);
	out = cJSON_CreateArray();
	for (p = v->valuestring;; p = q + strlen(sep)) {
		char *part;

		q = strstr(p, sep);
		part = xstrndup(p, q != NULL ? (size_t)(q - p) : strlen(p));
		cJSON_AddItemToArray(out, cJSON_CreateString(part));
		free(part);
		if (q == NULL)
			break;
	}
	cJSON_Delete(v);
	return out;
}

static cJSON *
t_notnull(cJSON *v, const struct resproj_call *c)
{
	cJSON *out = cJSON_CreateArray(), *it;

	(void)c;
	if (cJSON_IsArray(v))
		cJSON_ArrayForEach(it, v)
		{
			if (!cJSON_IsNull(it))
				cJSON_AddItemToArray(
				    out, cJSON_Duplicate(it, 1));
		}
	cJSON_Delete(v);
	return out;
}

static cJSON *
t_float(cJSON *v, const struct resproj_call *c)
{
	const char *prec = arg(c, 0, "6"), *spec = arg(c, 1, NULL);
	const char *und = arg(c, 2, "");
	struct buf b;
	double x;
	char *end;
	cJSON *out;

	if (cJSON_IsNumber(v))
		x = v->valuedouble;
	else if (cJSON_IsString(v) && *v->valuestring != '\0' &&
	         (x = strtod(v->valuestring, &end), *end == '\0'))
		;
	else
		return str_value(v, und);
	buf_init(&b, BUF_NOCAP);
	if (spec != NULL && strchr("efg", *spec) != NULL && spec[1] == '\0') {
		int n = atoi_safe(prec);

		if (*spec == 'e')
			buf_printf(&b, "%.*e", n, x);
		else if (*spec == 'f')
			buf_printf(&b, "%.*f", n, x);
		else
			buf_printf(&b, "%.*g", n, x);
	} else
		resproj_float_prec(
		    &b, x, prec != NULL && *prec != '\0' ? atoi_safe(prec) : 6);
	out = str_value(v, b.data);
	buf_release(&b);
	return out;
}

static cJSON *
t_size(cJSON *v, const struct resproj_call *c)
{
	static const char *const units[] = { "bytes", "KiB", "MiB", "GiB",
		"TiB", "PiB" };
	const char *zero = arg(c, 0, "0"), *uin = arg(c, 2, NULL);
	const char *uout = arg(c, 3, NULL);
	int prec = atoi_safe(arg(c, 1, "1"));
	double size = 0, min = strtod(arg(c, 4, "0"), NULL), unit;
	const char *prefix = "", *u = "PiB";
	struct buf b;
	cJSON *out;
	size_t i;

	if (!resproj_truthy(v))
		return str_value(v, zero);
	if (cJSON_IsNumber(v))
		size = v->valuedouble;
	else if (cJSON_IsString(v))
		size = strtod(v->valuestring, NULL);
	if (size < min) {
		size = min;
		prefix = "< ";
	}
	size *= unit_size(uin, NULL);
	buf_init(&b, BUF_NOCAP);
	unit = unit_size(uout, &u);
	if (u != NULL) {
		buf_printf(&b, "%.*f", prec, size / unit);
		goto done;
	}
	u = "PiB";
	for (i = 0; i < sizeof units / sizeof units[0]; i++) {
		if (size < 1024.0) {
			u = units[i];
			break;
		}
		size /= 1024.0;
	}
	if (size == ffloor(size) && fabs(size) < 9e15)
		buf_printf(&b, "%s%lld %s", prefix, (long long)size, u);
	else
		buf_printf(&b, "%s%.*f %s", prefix, prec, size, u);
done:
	out = str_value(v, b.data);
	buf_release(&b);
	return out;
}

static const char *uri_base = "https://tpu.googleapis.com/v2/";

void
resproj_set_uri_base(const char *base)
{
	uri_base = base;
}

static cJSON *
t_uri(cJSON *v, const struct resproj_call *c)
{
	const char *und = arg(c, 0, ".");
	const char *s;
	cJSON *out;
	char *u;

	if (cJSON_IsString(v) && tpu_startswith(v->valuestring, "https://"))
		return v;
	if (cJSON_IsObject(v)) {
		if ((s = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(
		         v, "selfLink"))) != NULL)
			return str_value(v, s);
		if ((s = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(
		         v, "name"))) != NULL &&
		    tpu_startswith(s, "projects/")) {
			u = xasprintf("%s%s", uri_base, s);
			out = str_value(v, u);
			free(u);
			return out;
		}
	}
	return str_value(v, und);
}

static cJSON *
t_trailoff(cJSON *v, const struct resproj_call *c)
{
	long n = strtol(arg(c, 0, "0"), NULL, 10);
	const char *und = arg(c, 1, "");
	size_t len;
	cJSON *out;
	char *s;

	if (n <= 3 || !cJSON_IsString(v))
		return str_value(v, und);
	len = strlen(v->valuestring);
	if (len < (size_t)n)
		return v;
	s = xasprintf("%.*s...", (int)(n - 3), v->valuestring);
	out = str_value(v, s);
	free(s);
	return out;
}

static cJSON *
t_slice(cJSON *v, const struct resproj_call *c)
{
	const char *op = arg(c, 0, ":"), *und = arg(c, 1, "");
	long n, ops[3] = { 0, 0, 1 }, i;
	int set[3] = { 0, 0, 0 }, k = 0;
	const char *p = op;
	cJSON *out;

	if (!cJSON_IsArray(v))
		return str_value(v, und);
	n = cJSON_GetArraySize(v);
	for (;;) {
		char *end;

		while (*p == ' ')
			p++;
		if (*p != ':' && *p != '\0') {
			ops[k] = strtol(p, &end, 10);
			if (end == p)
				return str_value(v, und);
			set[k] = 1;
			p = end;
		}
		while (*p == ' ')
			p++;
		if (*p == '\0')
			break;
		if (*p != ':' || ++k > 2)
			return str_value(v, und);
		p++;
	}
	if (k == 0) { /* one index */
		ops[1] = ops[0] + 1;
		set[1] = ops[1] != 0;
	}
	if (ops[2] == 0)
		return str_value(v, und);
	for (i = 0; i < 2; i++) {
		if (!set[i])
			ops[i] = (ops[2] > 0) == (i == 0) ? 0 : n;
		else if (ops[i] < 0)
			ops[i] += n;
		if (ops[2] < 0 && !set[i])
			ops[i] = i == 0 ? n - 1 : -1;
		else if (ops[i] < (ops[2] < 0 ? -1 : 0))
			ops[i] = ops[2] < 0 ? -1 : 0;
		else if (ops[i] > (ops[2] < 0 ? n - 1 : n))
			ops[i] = ops[2] < 0 ? n - 1 : n;
	}
	out = cJSON_CreateArray();
	for (i = ops[0]; ops[2] > 0 ? i < ops[1] : i > ops[1]; i += ops[2])
		cJSON_AddItemToArray(
		    out, cJSON_Duplicate(cJSON_GetArrayItem(v, (int)i), 1));
	cJSON_Delete(v);
	if (cJSON_GetArraySize(out) == 0)
		return str_value(out, und);
	return out;
}

/* Python's ordering of two JSON values (numbers, then strings). */
static int
value_cmp(const cJSON *a, const cJSON *b)
{
	char *x, *y;
	int r;

	if (cJSON_IsNumber(a) && cJSON_IsNumber(b))
		return (a->valuedouble > b->valuedouble) -
		       (a->valuedouble < b->valuedouble);
	x = pystr(a);
	y = pystr(b);
	r = strcmp(x, y);
	free(x);
	free(y);
	return r;
}

static const char *sort_attr;

static int
sort_cmp(const void *pa, const void *pb)
{
	const cJSON *a = *(const cJSON *const *)pa,
	            *b = *(const cJSON *const *)pb;
	cJSON *x, *y;
	int r;

	if (sort_attr == NULL || *sort_attr == '\0')
		return value_cmp(a, b);
	x = get_text(a, sort_attr);
	y = get_text(b, sort_attr);
	r = value_cmp(x, y);
	cJSON_Delete(x);
	cJSON_Delete(y);
	return r;
}

static cJSON *
t_sort(cJSON *v, const struct resproj_call *c)
{
	cJSON **items, *out, *it;
	int n, i = 0;

	if (!cJSON_IsArray(v) || (n = cJSON_GetArraySize(v)) == 0) {
		cJSON_Delete(v);
		return cJSON_CreateArray();
	}
	items = xcalloc((size_t)n, sizeof *items);
	cJSON_ArrayForEach(it, v)
	{
		items[i++] = it;
	}
	sort_attr = arg(c, 0, "");
	qsort(items, (size_t)n, sizeof *items, sort_cmp);
	out = cJSON_CreateArray();
	for (i = 0; i < n; i++)
		cJSON_AddItemToArray(out, cJSON_Duplicate(items[i], 1));
	free(items);
	cJSON_Delete(v);
	return out;
}

/*
 * An RFC 3339 time (or date) into *t (UTC seconds), *ns and *off (the
 * offset in seconds; *has_off 0 when none was written).  -1 when not one.
 */
int
resproj_time(const char *s, time_t *t, long *ns, int *has_off)
{
	int off;

	return parse_time(s, t, ns, &off, has_off);
}

static int
parse_time(const char *s, time_t *t, long *ns, int *off, int *has_off)
{
	struct tm tm;
	int v[6] = { 0, 0, 0, 0, 0, 0 }, i, k, n;
	static const int len[6] = { 4, 2, 2, 2, 2, 2 };
	const char *p = s;

	*ns = 0;
	*off = 0;
	*has_off = 0;
	for (i = 0; i < 6; i++) {
		for (k = 0; k < len[i]; k++, p++) {
			if (!isdigit((unsigned char)*p))
				return -1;
			v[i] = v[i] * 10 + (*p - '0');
		}
		if (i == 2 && *p == '\0')
			break;
		if (i < 5 && *p != "--T::"[i] &&
		    !(i == 2 && (*p == 't' || *p == ' ')))
			return -1;
		if (i < 5)
			p++;
	}
	if (v[1] < 1 || v[1] > 12 || v[2] < 1 || v[2] > 31 || v[3] > 23 ||
	    v[4] > 59 || v[5] > 60)
		return -1;
	if (*p == '.') {
		for (p++, n = 0; isdigit((unsigned char)*p); p++, n++)
			if (n < 9)
				*ns = *ns * 10 + (*p - '0');
		for (; n < 9; n++)
			*ns *= 10;
	}
	if (*p == 'Z' || *p == 'z') {
		*has_off = 1;
		p++;
	} else if ((*p == '+' || *p == '-') && isdigit((unsigned char)p[1]) &&
	           isdigit((unsigned char)p[2])) {
		int sign = *p == '-' ? -1 : 1;
		int h = (p[1] - '0') * 10 + (p[2] - '0'), m = 0;

		if (p[3] == ':' && isdigit((unsigned char)p[4]) &&
		    isdigit((unsigned char)p[5])) {
			m = (p[4] - '0') * 10 + (p[5] - '0');
			p += 6;
		} else
			p += 3;
		*off = sign * (h * 3600 + m * 60);
		*has_off = 1;
	}
	if (*p != '\0')
		return -1;
	memset(&tm, 0, sizeof tm);
	tm.tm_year = v[0] - 1900;
	tm.tm_mon = v[1] - 1;
	tm.tm_mday = v[2];
	tm.tm_hour = v[3];
	tm.tm_min = v[4];
	tm.tm_sec = v[5];
	*t = timegm(&tm) - *off;
	return 0;
}

/* Broken-down time of t in zone tz ("UTC", "LOCAL" or a TZ name); *off
 * and zone get its offset and abbreviation. */
static void
zone_time(
    time_t t, const char *tz, struct tm *tm, long *off, char *zone, size_t zlen)
{
	if (tz != NULL && strcasecmp(tz, "LOCAL") != 0 &&
	    strcasecmp(tz, "UTC") != 0 && strcmp(tz, "Z") != 0) {
		/* XXX: a named zone switches TZ for the call (tpuctl is
		 * single-threaded where it renders). */
		const char *old = getenv("TZ");
		char *save = old != NULL ? xstrdup(old) : NULL;

		setenv("TZ", tz, 1);
		tzset();
		localtime_r(&t, tm);
		if (save != NULL)
			setenv("TZ", save, 1);
		else
			unsetenv("TZ");
		tzset();
		free(save);
	} else if (tz != NULL && strcasecmp(tz, "LOCAL") != 0)
		gmtime_r(&t, tm);
	else
		localtime_r(&t, tm);
	*off = tm->tm_gmtoff;
	snprintf(zone, zlen, "%s",
	    tz != NULL && strcasecmp(tz, "LOCAL") != 0 && tm->tm_gmtoff == 0
	        ? "UTC"
	    : tm->tm_zone != NULL ? tm->tm_zone
	                          : "");
}

/* strftime with gcloud's %f (microseconds), %Nf (N digits), %z, %Z. */
static void
format_time(struct buf *b, const char *fmt, const struct tm *tm, long ns,
    long off, const char *zone)
{
	const char *p;
	char out[128], spec[4];

	for (p = fmt; *p != '\0'; p++) {
		if (*p != '%' || p[1] == '\0') {
			buf_append(b, p, 1);
			continue;
		}
		p++;
		if (*p >= '1' && *p <= '9' && p[1] == 'f') {
			long div = 1;
			int k;

			for (k = 0; k < 9 - (*p - '0'); k++)
				div *= 10;
			buf_printf(b, "%0*ld", *p - '0', ns / div);
			p++;
		} else if (*p == 'f')
			buf_printf(b, "%06ld", ns / 1000);
		else if (*p == 'z')
			buf_printf(b, "%c%02ld%02ld", off < 0 ? '-' : '+',
			    labs(off) / 3600, labs(off) / 60 % 60);
		else if (*p == 'Z')
			buf_puts(b, zone);
		else {
			spec[0] = '%';
			spec[1] = *p;
			spec[2] = '\0';
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wformat-nonliteral"
			if (strftime(out, sizeof out, spec, tm) > 0)
				buf_puts(b, out);
#pragma GCC diagnostic pop
		}
	}
}

static cJSON *
t_date(cJSON *v, const struct resproj_call *c)
{
	const char *fmt = arg(c, 0, "%Y-%m-%dT%H:%M:%S");
	const char *unit = arg(c, 1, "1"), *und = arg(c, 2, "");
	const char *tz = arg(c, 3, NULL), *tzd = arg(c, 4, NULL);
	char zone[64], *end;
	struct tm tm;
	struct buf b;
	time_t t;
	long ns = 0, off;
	int roff = 0, has_off = 0;
	double x = 0, u;
	cJSON *out;

	u = strtod(unit, &end);
	if (u == 0)
		u = 1;
	if (cJSON_IsNumber(v))
		x = v->valuedouble;
	else if (cJSON_IsString(v) && *v->valuestring != '\0' &&
	         (x = strtod(v->valuestring, &end), *end == '\0'))
		;
	else if (!cJSON_IsString(v) ||
	         parse_time(v->valuestring, &t, &ns, &roff, &has_off) != 0)
		return str_value(v, und);
	if (cJSON_IsNumber(v) || !has_off) {
		if (cJSON_IsNumber(v) ||
		    (cJSON_IsString(v) && parse_time(v->valuestring, &t, &ns,
		                              &roff, &has_off) != 0)) {
			x /= u;
			t = (time_t)ffloor(x);
			ns = (long)((x - ffloor(x)) * 1e9);
		} else if (tzd != NULL) {
			/* no offset written: the time is in tz_default */
			struct tm probe;
			char z2[64];
			long o2;

			zone_time(t, tzd, &probe, &o2, z2, sizeof z2);
			t -= o2;
		}
		if (tz == NULL)
			tz = tzd != NULL ? tzd : "LOCAL";
	}
	buf_init(&b, BUF_NOCAP);
	if (tz == NULL) {
		/* the resource's own offset */
		time_t lt = t + roff;

		gmtime_r(&lt, &tm);
		off = roff;
		snprintf(zone, sizeof zone, "%s", roff == 0 ? "UTC" : "");
	} else
		zone_time(t, tz, &tm, &off, zone, sizeof zone);
	format_time(&b, fmt, &tm, ns, off, zone);
	out = str_value(v, b.data);
	buf_release(&b);
	return out;
}

static const char *const kw_basename[] = { "undefined", NULL };
static const char *const kw_date[] = { "format", "unit", "undefined", "tz",
	"tz_default", NULL };
static const char *const kw_float[] = { "precision", "spec", "undefined",
	NULL };
static const char *const kw_join[] = { "sep", "undefined", NULL };
static const char *const kw_list[] = { "show", "undefined", "separator", NULL };
static const char *const kw_map[] = { "depth", NULL };
static const char *const kw_segment[] = { "index", "undefined", NULL };
static const char *const kw_size[] = { "zero", "precision", "units_in",
	"units_out", "min", NULL };
static const char *const kw_slice[] = { "op", "undefined", NULL };
static const char *const kw_sort[] = { "attr", NULL };
static const char *const kw_trailoff[] = { "character_limit", "undefined",
	NULL };
static const char *const kw_uri[] = { "undefined", NULL };
static const char *const kw_yesno[] = { "yes", "no", NULL };

static const struct transform transforms[] = {
	{ "always", 0, 0, NULL, t_always },
	{ "basename", 0, 1, kw_basename, t_basename },
	{ "date", 0, 5, kw_date, t_date },
	{ "extract", 0, RESPROJ_MAX_ARGS, NULL, t_extract },
	{ "firstof", 0, RESPROJ_MAX_ARGS, NULL, t_firstof },
	{ "flatten", 0, 3, kw_list, t_list },
	{ "float", 0, 3, kw_float, t_float },
	{ "join", 0, 2, kw_join, t_join },
	{ "len", 0, 0, NULL, t_len },
	{ "list", 0, 3, kw_list, t_list },
	{ "lower", 0, 0, NULL, t_lower },
	{ "map", 0, 1, kw_map, t_always }, /* resproj_eval() applies it */
	{ "notnull", 0, 0, NULL, t_notnull },
	{ "scope", 0, RESPROJ_MAX_ARGS, NULL, t_scope },
	{ "segment", 0, 2, kw_segment, t_segment },
	{ "size", 0, 5, kw_size, t_size },
	{ "slice", 0, 2, kw_slice, t_slice },
	{ "sort", 0, 1, kw_sort, t_sort },
	{ "split", 0, 2, kw_join, t_split },
	{ "trailoff", 1, 2, kw_trailoff, t_trailoff },
	{ "upper", 0, 0, NULL, t_upper },
	{ "uri", 0, 1, kw_uri, t_uri },
	{ "yesno", 0, 2, kw_yesno, t_yesno },
};
static const size_t ntransforms = sizeof transforms / sizeof transforms[0];

/* ---- keys ---- */

void
resproj_key_release(struct resproj_key *k)
{
	int i, j;

	for (i = 0; i < k->nsegs; i++)
		free(k->segs[i].name);
	free(k->segs);
	for (i = 0; i < k->ncalls; i++) {
		for (j = 0; j < k->calls[i].nargs; j++) {
			free(k->calls[i].args[j].name);
			free(k->calls[i].args[j].value);
		}
		free(k->calls[i].args);
	}
	free(k->calls);
	memset(k, 0, sizeof *k);
}

/* A key name part: unreserved characters and quoted runs. */
static char *
key_name(struct resproj_lex *lx, int *rc, struct tpu_err *err)
{
	struct buf b;
	const char *s = lx->s;
	int have = 0;

	*rc = 0;
	buf_init(&b, BUF_NOCAP);
	for (;;) {
		char c = s[lx->i];

		if (c == '"' || c == '\'') {
			size_t start = lx->i++;

			while (s[lx->i] != '\0' && s[lx->i] != c) {
				if (s[lx->i] == '\\' && s[lx->i + 1] != '\0')
					lx->i++;
				buf_append(&b, s + lx->i, 1);
				lx->i++;
			}
			if (s[lx->i] == '\0') {
				lx->i = start;
				*rc = resproj_lex_error(
				    lx, err, "unterminated %c quote", c);
				buf_release(&b);
				return NULL;
			}
			lx->i++;
			have = 1;
		} else if (c != '\0' && !isspace((unsigned char)c) &&
		           strchr(RESERVED, c) == NULL) {
			buf_append(&b, &c, 1);
			lx->i++;
			have = 1;
		} else
			break;
	}
	if (!have) {
		buf_release(&b);
		return NULL;
	}
	return buf_detach(&b, NULL);
}

static int
parse_call(struct resproj_lex *lx, struct resproj_key *k, const char *name,
    struct tpu_err *err)
{
	struct resproj_call *c;
	size_t fn;
	int rc, quoted;

	for (fn = 0; fn < ntransforms; fn++)
		if (strcmp(transforms[fn].name, name) == 0)
			break;
	if (fn == ntransforms)
		return resproj_lex_error(lx, err,
		    "unknown transform '%s()' (see FORMATS in tpuctl(1))",
		    name);
	if (k->ncalls >= RESPROJ_MAX_CALLS)
		return resproj_lex_error(lx, err,
		    "more than %d transforms on one key", RESPROJ_MAX_CALLS);
	k->calls =
	    xreallocarray(k->calls, (size_t)k->ncalls + 1, sizeof *k->calls);
	c = &k->calls[k->ncalls++];
	memset(c, 0, sizeof *c);
	c->fn = (int)fn;
	lx->i++; /* ( */
	for (;;) {
		struct resproj_arg a = { NULL, NULL };
		size_t j;

		resproj_lex_space(lx);
		if (lx->s[lx->i] == ')' && c->nargs == 0)
			break;
		/* NAME= starts a keyword argument */
		for (j = lx->i;
		     isalnum((unsigned char)lx->s[j]) || lx->s[j] == '_'; j++)
			;
		if (j > lx->i && lx->s[j] == '=' && lx->s[j + 1] != '=') {
			a.name = xstrndup(lx->s + lx->i, j - lx->i);
			lx->i = j + 1;
		}
		a.value = resproj_lex_token(lx, ",)", 1, &quoted, &rc, err);
		if (rc != 0) {
			free(a.name);
			return rc;
		}
		if (a.value == NULL)
			a.value = xstrdup("");
		if (c->nargs >= RESPROJ_MAX_ARGS) {
			free(a.name);
			free(a.value);
			return resproj_lex_error(lx, err,
			    "more than %d arguments", RESPROJ_MAX_ARGS);
		}
		c->args = xreallocarray(
		    c->args, (size_t)c->nargs + 1, sizeof *c->args);
		c->args[c->nargs++] = a;
		if (a.name != NULL) {
			const char *const *kw = transforms[fn].kw;

			while (kw != NULL && *kw != NULL &&
			       strcmp(*kw, a.name) != 0)
				kw++;
			if (kw == NULL || *kw == NULL)
				return resproj_lex_error(lx, err,
				    "%s() has no argument '%s'", name, a.name);
		}
		resproj_lex_space(lx);
		if (lx->s[lx->i] == ',') {
			lx->i++;
			continue;
		}
		if (lx->s[lx->i] != ')')
			return resproj_lex_error(
			    lx, err, "',' or ')' expected in %s()", name);
		break;
	}
	lx->i++; /* ) */
	if (c->nargs < transforms[fn].min || c->nargs > transforms[fn].max)
		return resproj_lex_error(lx, err,
		    "%s() takes %d to %d arguments, not %d", name,
		    transforms[fn].min, transforms[fn].max, c->nargs);
	return 0;
}

/* A map(depth) call, for the * shorthand. */
static int
add_map(struct resproj_lex *lx, struct resproj_key *k, int depth,
    struct tpu_err *err)
{
	struct resproj_call *c;
	size_t fn;

	if (k->ncalls >= RESPROJ_MAX_CALLS)
		return resproj_lex_error(lx, err,
		    "more than %d transforms on one key", RESPROJ_MAX_CALLS);
	for (fn = 0; strcmp(transforms[fn].name, "map") != 0; fn++)
		;
	k->calls =
	    xreallocarray(k->calls, (size_t)k->ncalls + 1, sizeof *k->calls);
	c = &k->calls[k->ncalls++];
	c->fn = (int)fn;
	c->nargs = 1;
	c->args = xcalloc(1, sizeof *c->args);
	c->args[0].value = xasprintf("%d", depth);
	return 0;
}

int
resproj_key_parse(struct resproj_lex *lx, struct resproj_key *k,
    const char *terminators, struct tpu_err *err)
{
	int rc = 0;
	char *name;

	(void)terminators;
	memset(k, 0, sizeof *k);
	resproj_lex_space(lx);
	if (strlen(lx->s) > RESPROJ_MAX_EXPR)
		return resproj_lex_error(
		    lx, err, "longer than %d bytes", RESPROJ_MAX_EXPR);
	for (;;) {
		const char *s = lx->s;

		if (s[lx->i] == '[') {
			char *end;
			long idx = 0;
			enum resproj_seg_kind kind = RESPROJ_ALL;

			if (k->ncalls > 0) {
				rc = resproj_lex_error(
				    lx, err, "a key part after a transform");
				goto bad;
			}
			lx->i++;
			if (s[lx->i] != ']') {
				idx = strtol(s + lx->i, &end, 10);
				if (end == s + lx->i || *end != ']' ||
				    !(isdigit((unsigned char)s[lx->i]) ||
				        s[lx->i] == '-')) {
					rc = resproj_lex_error(
					    lx, err, "[N] or [] expected");
					goto bad;
				}
				lx->i = (size_t)(end - s);
				kind = RESPROJ_INDEX;
			}
			lx->i++;
			if (k->nsegs >= RESPROJ_MAX_SEGS) {
				rc = resproj_lex_error(lx, err,
				    "a key has at most %d parts",
				    RESPROJ_MAX_SEGS);
				goto bad;
			}
			k->segs = xreallocarray(
			    k->segs, (size_t)k->nsegs + 1, sizeof *k->segs);
			k->segs[k->nsegs].kind = kind;
			k->segs[k->nsegs].name = NULL;
			k->segs[k->nsegs++].index = idx;
		} else {
			int stars = 0;

			/* *foo() is map().foo(), **foo() map(2).foo() */
			while (s[lx->i] == '*' && stars < 2) {
				stars++;
				lx->i++;
			}
			if (stars > 0 && (rc = add_map(lx, k, stars, err)) != 0)
				goto bad;
			if ((name = key_name(lx, &rc, err)) == NULL) {
				if (rc == 0)
					rc = resproj_lex_error(lx, err,
					    "non-empty key name expected");
				goto bad;
			}
			if (s[lx->i] == '(') {
				rc = parse_call(lx, k, name, err);
				free(name);
				if (rc != 0)
					goto bad;
			} else if (k->ncalls > 0) {
				free(name);
				rc = resproj_lex_error(
				    lx, err, "a key part after a transform");
				goto bad;
			} else {
				if (k->nsegs >= RESPROJ_MAX_SEGS) {
					free(name);
					rc = resproj_lex_error(lx, err,
					    "a key has at most %d parts",
					    RESPROJ_MAX_SEGS);
					goto bad;
				}
				k->segs = xreallocarray(k->segs,
				    (size_t)k->nsegs + 1, sizeof *k->segs);
				k->segs[k->nsegs].kind = RESPROJ_NAME;
				k->segs[k->nsegs].name = name;
				k->segs[k->nsegs++].index = 0;
			}
		}
		if (s[lx->i] == '.') {
			lx->i++;
			continue;
		}
		if (s[lx->i] == '[')
			continue;
		break;
	}
	return 0;
bad:
	resproj_key_release(k);
	return rc;
}

static int
key_from_string(const char *s, struct resproj_key *k)
{
	struct resproj_lex lx = { s, 0, "key" };
	struct tpu_err e;

	memset(&e, 0, sizeof e);
	if (resproj_key_parse(&lx, k, "", &e) != 0)
		return -1;
	resproj_lex_space(&lx);
	if (s[lx.i] != '\0') {
		resproj_key_release(k);
		return -1;
	}
	return 0;
}

/* ---- evaluation ---- */

static cJSON *
get(const cJSON *node, const struct resproj_seg *seg, int n)
{
	const cJSON *it;
	cJSON *out;
	int size;

	if (node == NULL)
		return NULL;
	if (n == 0)
		return cJSON_Duplicate(node, 1);
	switch (seg->kind) {
	case RESPROJ_NAME:
		if (cJSON_IsObject(node))
			return get(
			    cJSON_GetObjectItemCaseSensitive(node, seg->name),
			    seg + 1, n - 1);
		if (!cJSON_IsArray(node))
			return NULL;
		/* a name on a list applies to each item */
		out = cJSON_CreateArray();
		cJSON_ArrayForEach(it, node)
		{
			cJSON *v = get(it, seg, n);

			cJSON_AddItemToArray(
			    out, v != NULL ? v : cJSON_CreateNull());
		}
		return out;
	case RESPROJ_INDEX:
		if (!cJSON_IsArray(node))
			return NULL;
		size = cJSON_GetArraySize(node);
		if (seg->index < -(long)size || seg->index >= size)
			return NULL;
		return get(
		    cJSON_GetArrayItem(node,
		        (int)(seg->index < 0 ? seg->index + size : seg->index)),
		    seg + 1, n - 1);
	case RESPROJ_ALL:
		if (!cJSON_IsArray(node))
			return get(node, seg + 1, n - 1);
		out = cJSON_CreateArray();
		cJSON_ArrayForEach(it, node)
		{
			cJSON *v = get(it, seg + 1, n - 1);

			cJSON_AddItemToArray(
			    out, v != NULL ? v : cJSON_CreateNull());
		}
		return out;
	}
	return NULL;
}

/* The transform c on v, or with depth > 0 on each item of the list v
 * (map()). */
static cJSON *
apply_call(cJSON *v, const struct resproj_call *c, int depth)
{
	cJSON *out, *it;

	if (depth <= 0 || !cJSON_IsArray(v))
		return transforms[c->fn].fn(v, c);
	out = cJSON_CreateArray();
	while ((it = cJSON_DetachItemFromArray(v, 0)) != NULL) {
		it = apply_call(it, c, depth - 1);
		cJSON_AddItemToArray(out, it != NULL ? it : cJSON_CreateNull());
	}
	cJSON_Delete(v);
	return out;
}

cJSON *
resproj_eval(const struct resproj_key *k, const cJSON *r)
{
	cJSON *v = get(r, k->segs, k->nsegs);
	int i, depth;

	for (i = 0; i < k->ncalls; i++) {
		if (strcmp(transforms[k->calls[i].fn].name, "map") == 0) {
			/* map(depth): the next transform on each item */
			depth = atoi_safe(arg(&k->calls[i], 0, "1"));
			if (i + 1 < k->ncalls) {
				i++;
				v = apply_call(v, &k->calls[i], depth);
			}
			continue;
		}
		v = transforms[k->calls[i].fn].fn(v, &k->calls[i]);
	}
	return v;
}

/* ---- format expressions ---- */

void
resproj_init(struct resproj *p)
{
	memset(p, 0, sizeof *p);
}

void
resproj_release(struct resproj *p)
{
	int i;

	free(p->name);
	for (i = 0; i < p->nattrs; i++) {
		free(p->attrs[i].name);
		free(p->attrs[i].value);
	}
	free(p->attrs);
	for (i = 0; i < p->ncols; i++) {
		resproj_key_release(&p->cols[i].key);
		free(p->cols[i].label);
	}
	free(p->cols);
	resproj_init(p);
}

int
resproj_attr(const struct resproj *p, const char *name, const char **value)
{
	int i, set = 0, no = strncmp(name, "no-", 3) == 0;

	if (value != NULL)
		*value = NULL;
	if (no)
		name += 3;
	for (i = 0; i < p->nattrs; i++)
		if (strcmp(p->attrs[i].name, name) == 0) {
			set = no ? p->attrs[i].no : !p->attrs[i].no;
			if (value != NULL)
				*value = p->attrs[i].value;
		}
	return set;
}

static const char *const format_names[] = { "csv", "default", "disable",
	"flattened", "get", "json", "jsonl", "list", "none", "table", "text",
	"value", "yaml", NULL };

static int
number_value(struct resproj_lex *lx, const char *what, const char *v, int *out,
    struct tpu_err *err)
{
	const char *bad = NULL;
	long long n = v != NULL ? tpu_strtonum(v, 0, 1000, &bad) : 0;

	if (v == NULL || bad != NULL)
		return resproj_lex_error(lx, err,
		    "%s needs a number from 0 to 1000, not '%s'", what,
		    v != NULL ? v : "");
	*out = (int)n;
	return 0;
}

/* :ATTRIBUTE[=VALUE]... of a projection key. */
static int
col_attrs(struct resproj_lex *lx, struct resproj_col *col, struct tpu_err *err)
{
	int rc, quoted, no;

	while (lx->s[lx->i] == ':') {
		char *name, *value = NULL;
		size_t j;

		lx->i++;
		for (j = lx->i; isalnum((unsigned char)lx->s[j]) ||
		                lx->s[j] == '-' || lx->s[j] == '_';
		     j++)
			;
		if (j == lx->i)
			return resproj_lex_error(
			    lx, err, "key attribute name expected");
		name = xstrndup(lx->s + lx->i, j - lx->i);
		lx->i = j;
		if (lx->s[lx->i] == '=') {
			lx->i++;
			value =
			    resproj_lex_token(lx, ",:)", 0, &quoted, &rc, err);
			if (rc != 0) {
				free(name);
				return rc;
			}
			if (value == NULL)
				value = xstrdup("");
		}
		no = strncmp(name, "no-", 3) == 0;
		rc = 0;
		if (strcmp(name, "label") == 0 && value != NULL) {
			free(col->label);
			col->label = value;
			value = NULL;
		} else if (strcmp(name, "sort") == 0)
			rc = number_value(lx, "sort=", value, &col->sort, err);
		else if (strcmp(name + 3 * no, "reverse") == 0 && value == NULL)
			col->reverse = !no;
		else if (strcmp(name, "align") == 0 && value != NULL &&
		         (strcmp(value, "left") == 0 ||
		             strcmp(value, "center") == 0 ||
		             strcmp(value, "right") == 0))
			col->align = *value == 'l'   ? RESPROJ_LEFT
			             : *value == 'c' ? RESPROJ_CENTER
			                             : RESPROJ_RIGHT;
		else if (strcmp(name, "width") == 0)
			rc =
			    number_value(lx, "width=", value, &col->width, err);
		else if (strcmp(name + 3 * no, "wrap") == 0 ||
		         strcmp(name, "alias") == 0)
			; /* accepted; tpuctl never wraps */
		else
			rc = resproj_lex_error(lx, err,
			    "unknown key attribute ':%s%s%s' (use label=, "
			    "sort=, reverse, align=left|center|right, width=)",
			    name, value != NULL ? "=" : "",
			    value != NULL ? value : "");
		free(name);
		free(value);
		if (rc != 0)
			return rc;
	}
	return 0;
}

/* Decode \n \t \r \\ in attribute values (separator="\n"). */
static void
unescape(char *s)
{
	char *w = s;

	for (; *s != '\0'; s++) {
		if (*s == '\\' && s[1] != '\0' && strchr("ntr\\", s[1])) {
			s++;
			*w++ = *s == 'n'   ? '\n'
			       : *s == 't' ? '\t'
			       : *s == 'r' ? '\r'
			                   : '\\';
		} else
			*w++ = *s;
	}
	*w = '\0';
}

static int same_path(const struct resproj_key *, const struct resproj_key *);

/*
 * gcloud keeps one attribute per key: a column without transforms takes
 * those of the first earlier column of the same key ("csv(name.basename(),
 * name)" prints the basename twice).
 */
static void
inherit_calls(struct resproj *p)
{
	int i, j, c, a;

	for (i = 0; i < p->ncols; i++) {
		struct resproj_key *k = &p->cols[i].key;

		if (k->ncalls > 0 || k->nsegs == 0)
			continue;
		for (j = 0; j < i; j++)
			if (same_path(&p->cols[j].key, k))
				break;
		if (j == i || p->cols[j].key.ncalls == 0)
			continue;
		k->ncalls = p->cols[j].key.ncalls;
		k->calls = xcalloc((size_t)k->ncalls, sizeof *k->calls);
		for (c = 0; c < k->ncalls; c++) {
			const struct resproj_call *from =
			    &p->cols[j].key.calls[c];

			k->calls[c].fn = from->fn;
			k->calls[c].nargs = from->nargs;
			k->calls[c].args = xcalloc(
			    (size_t)from->nargs + 1, sizeof *k->calls[c].args);
			for (a = 0; a < from->nargs; a++) {
				if (from->args[a].name != NULL)
					k->calls[c].args[a].name =
					    xstrdup(from->args[a].name);
				k->calls[c].args[a].value =
				    xstrdup(from->args[a].value);
			}
		}
	}
}

int
resproj_parse(struct resproj *out, const char *s, struct tpu_err *err)
{
	struct resproj p;
	struct resproj_lex lx = { s, 0, "format" };
	size_t j;
	int rc = 0, quoted, i;

	resproj_init(&p);
	if (strlen(s) > RESPROJ_MAX_EXPR) {
		lx.i = RESPROJ_MAX_EXPR;
		return resproj_lex_error(
		    &lx, err, "longer than %d bytes", RESPROJ_MAX_EXPR);
	}
	resproj_lex_space(&lx);
	for (j = lx.i; islower((unsigned char)s[j]); j++)
		;
	if (j > lx.i) {
		p.name = xstrndup(s + lx.i, j - lx.i);
		for (i = 0; format_names[i] != NULL; i++)
			if (strcmp(format_names[i], p.name) == 0)
				break;
		if (format_names[i] == NULL) {
			rc = resproj_lex_error(&lx, err,
			    "unknown format '%s' (use csv, default, "
			    "flattened, get, json, list, none, table, text, "
			    "value or yaml)",
			    p.name);
			goto out;
		}
		lx.i = j;
	}
	if (s[lx.i] == '[') {
		lx.i++;
		for (;;) {
			struct resproj_attr a = { NULL, NULL, 0 };

			resproj_lex_space(&lx);
			if (s[lx.i] == ']' && p.nattrs == 0)
				break;
			for (j = lx.i; isalnum((unsigned char)s[j]) ||
			               s[j] == '-' || s[j] == '_';
			     j++)
				;
			if (j == lx.i) {
				rc = resproj_lex_error(
				    &lx, err, "attribute name expected");
				goto out;
			}
			a.name = xstrndup(s + lx.i, j - lx.i);
			lx.i = j;
			resproj_lex_space(&lx);
			if (s[lx.i] == '=') {
				lx.i++;
				a.value = resproj_lex_token(
				    &lx, ",]", 0, &quoted, &rc, err);
				if (rc != 0) {
					free(a.name);
					goto out;
				}
				if (a.value == NULL)
					a.value = xstrdup("");
				unescape(a.value);
			}
			if (strncmp(a.name, "no-", 3) == 0) {
				a.no = 1;
				memmove(a.name, a.name + 3, strlen(a.name) - 2);
			}
			p.attrs = xreallocarray(
			    p.attrs, (size_t)p.nattrs + 1, sizeof *p.attrs);
			p.attrs[p.nattrs++] = a;
			resproj_lex_space(&lx);
			if (s[lx.i] == ',') {
				lx.i++;
				continue;
			}
			if (s[lx.i] != ']') {
				rc = resproj_lex_error(
				    &lx, err, "',' or ']' expected");
				goto out;
			}
			break;
		}
		lx.i++;
	}
	if (s[lx.i] == '(') {
		p.projected = 1;
		lx.i++;
		for (;;) {
			struct resproj_col *c;

			resproj_lex_space(&lx);
			if (s[lx.i] == ')' && p.ncols == 0)
				break;
			if (p.ncols >= RESPROJ_MAX_COLS) {
				rc = resproj_lex_error(&lx, err,
				    "more than %d keys", RESPROJ_MAX_COLS);
				goto out;
			}
			p.cols = xreallocarray(
			    p.cols, (size_t)p.ncols + 1, sizeof *p.cols);
			c = &p.cols[p.ncols];
			memset(c, 0, sizeof *c);
			if ((rc = resproj_key_parse(
			         &lx, &c->key, ",:)", err)) != 0)
				goto out;
			p.ncols++;
			if ((rc = col_attrs(&lx, c, err)) != 0)
				goto out;
			resproj_lex_space(&lx);
			if (s[lx.i] == ',') {
				lx.i++;
				continue;
			}
			if (s[lx.i] != ')') {
				rc = resproj_lex_error(
				    &lx, err, "',' or ')' expected");
				goto out;
			}
			break;
		}
		lx.i++;
	}
	resproj_lex_space(&lx);
	if (s[lx.i] != '\0') {
		rc = resproj_lex_error(&lx, err, "unexpected text");
		goto out;
	}
	if (p.name == NULL && p.nattrs == 0 && !p.projected) {
		rc = resproj_lex_error(&lx, err, "format name expected");
		goto out;
	}
	if (p.name != NULL && p.ncols == 0 &&
	    (strcmp(p.name, "value") == 0 || strcmp(p.name, "get") == 0 ||
	        strcmp(p.name, "csv") == 0)) {
		rc = resproj_lex_error(&lx, err,
		    "%s needs a projection: %s(KEY,...)", p.name, p.name);
		goto out;
	}
	inherit_calls(&p);
	resproj_release(out);
	*out = p;
	return 0;
out:
	resproj_release(&p);
	return rc;
}

/* ---- labels ---- */

/*
 * ANGRY_SNAKE_CASE of a key part, as gcloud's regex
 * ((?<=[a-z0-9])[A-Z]+|(?!^)[A-Z](?=[a-z])) -> _\1, upper-cased.
 */
static void
snake(struct buf *b, const char *s)
{
	size_t i, n = strlen(s);

	for (i = 0; i < n; i++) {
		int up = isupper((unsigned char)s[i]);

		if (up && i > 0 &&
		    (islower((unsigned char)s[i - 1]) ||
		        isdigit((unsigned char)s[i - 1]))) {
			/* a run of capitals after a lower-case letter or
			 * digit: one _ before it, none inside */
			buf_puts(b, "_");
			while (i < n && isupper((unsigned char)s[i])) {
				buf_append(b, s + i, 1);
				i++;
			}
			i--;
			continue;
		}
		if (up && i > 0 && islower((unsigned char)s[i + 1]))
			buf_puts(b, "_");
		{
			char c = (char)toupper((unsigned char)s[i]);

			buf_append(b, &c, 1);
		}
	}
}

/* 1 when two keys have the same path (names and indices). */
static int
same_path(const struct resproj_key *a, const struct resproj_key *b)
{
	int i;

	if (a->nsegs != b->nsegs)
		return 0;
	for (i = 0; i < a->nsegs; i++) {
		if (a->segs[i].kind != b->segs[i].kind)
			return 0;
		if (a->segs[i].kind == RESPROJ_NAME &&
		    strcmp(a->segs[i].name, b->segs[i].name) != 0)
			return 0;
		if (a->segs[i].kind == RESPROJ_INDEX &&
		    a->segs[i].index != b->segs[i].index)
			return 0;
	}
	return 1;
}

/*
 * gcloud's headings: a key's last name in ANGRY_SNAKE_CASE, names added
 * from the right until the heading is new among the headings made so
 * far; a key seen before takes the heading of its first column; a key
 * of transforms only is the first transform's name.
 */
char **
resproj_labels(const struct resproj *p)
{
	char **l = xcalloc((size_t)p->ncols + 1, sizeof *l);
	char **made = xcalloc((size_t)p->ncols + 1, sizeof *made);
	int i, j, k, nmade = 0, taken;
	struct buf b, part;

	buf_init(&b, BUF_NOCAP);
	buf_init(&part, BUF_NOCAP);
	for (i = 0; i < p->ncols; i++) {
		const struct resproj_key *key = &p->cols[i].key;

		if (p->cols[i].label != NULL) {
			l[i] = xstrdup(p->cols[i].label);
			continue;
		}
		/* the first earlier column of the same key lends its heading */
		for (j = 0; j < i; j++)
			if (same_path(&p->cols[j].key, key) &&
			    (key->nsegs > 0 ||
			        (key->ncalls > 0 && p->cols[j].key.ncalls > 0 &&
			            key->calls[0].fn ==
			                p->cols[j].key.calls[0].fn)))
				break;
		if (j < i) {
			l[i] = xstrdup(l[j]);
			continue;
		}
		buf_clear(&b);
		if (key->nsegs == 0 && key->ncalls > 0)
			snake(&b, transforms[key->calls[0].fn].name);
		for (k = key->nsegs - 1; k >= 0; k--) {
			if (key->segs[k].kind != RESPROJ_NAME)
				continue;
			buf_clear(&part);
			snake(&part, key->segs[k].name);
			if (b.len > 0) {
				buf_puts(&part, "_");
				buf_puts(&part, b.data);
			}
			buf_clear(&b);
			buf_puts(&b, part.data);
			for (j = 0, taken = 0; j < nmade && !taken; j++)
				taken = strcmp(made[j], b.data) == 0;
			if (!taken) {
				made[nmade++] = xstrdup(b.data);
				break;
			}
		}
		l[i] = xstrdup(b.data);
	}
	buf_release(&b);
	buf_release(&part);
	resproj_labels_free(made);
	return l;
}
void
resproj_labels_free(char **l)
{
	char **p;

	for (p = l; p != NULL && *p != NULL; p++)
		free(*p);
	free(l);
}

char *
resproj_label(const struct resproj *p, int i)
{
	char **l = resproj_labels(p), *out = xstrdup(l[i]);

	resproj_labels_free(l);
	return out;
}

/* ---- Python's str() ---- */

static int
key_cmp(const void *a, const void *b)
{
	const cJSON *x = *(const cJSON *const *)a,
	            *y = *(const cJSON *const *)b;

	return strcmp(x->string, y->string);
}

cJSON *
resproj_sorted(const cJSON *v)
{
	const cJSON **items = NULL, *it;
	cJSON *out;
	size_t n = 0, i;

	if (cJSON_IsArray(v)) {
		out = cJSON_CreateArray();
		cJSON_ArrayForEach(it, v)
		{
			cJSON_AddItemToArray(out, resproj_sorted(it));
		}
		return out;
	}
	if (!cJSON_IsObject(v))
		return cJSON_Duplicate(v, 1);
	cJSON_ArrayForEach(it, v)
	{
		items = xreallocarray(items, n + 1, sizeof *items);
		items[n++] = it;
	}
	if (n > 0)
		qsort(items, n, sizeof *items, key_cmp);
	out = cJSON_CreateObject();
	for (i = 0; i < n; i++)
		cJSON_AddItemToObject(
		    out, items[i]->string, resproj_sorted(items[i]));
	free(items);
	return out;
}

int
resproj_is_int(const cJSON *v)
{
	return cJSON_IsNumber(v) && v->valuedouble == ffloor(v->valuedouble) &&
	       fabs(v->valuedouble) < 9007199254740992.0;
}

int
resproj_truthy(const cJSON *v)
{
	if (v == NULL || cJSON_IsNull(v) || cJSON_IsFalse(v))
		return 0;
	if (cJSON_IsNumber(v))
		return v->valuedouble != 0;
	if (cJSON_IsString(v))
		return *v->valuestring != '\0';
	if (cJSON_IsArray(v) || cJSON_IsObject(v))
		return v->child != NULL;
	return 1;
}

/* Python's repr() of a float: the shortest text that reads back. */
static void
float_repr(struct buf *b, double x)
{
	char s[40];
	int prec, e;

	if (isinf(x)) {
		buf_puts(b, x < 0 ? "-inf" : "inf");
		return;
	}
	if (isnan(x)) {
		buf_puts(b, "nan");
		return;
	}
	for (prec = 1; prec <= 17; prec++) {
		snprintf(s, sizeof s, "%.*e", prec - 1, x);
		if (strtod(s, NULL) == x)
			break;
	}
	e = atoi_safe(strchr(s, 'e') + 2) * (strchr(s, 'e')[1] == '-' ? -1 : 1);
	if (e < -4 || e >= 16) {
		/* 1.5e+16: Python keeps two exponent digits at least */
		char *ep = strchr(s, 'e');
		char *m = xstrndup(s, (size_t)(ep - s));

		buf_printf(b, "%se%c%02d", m, e < 0 ? '-' : '+', abs(e));
		free(m);
		return;
	}
	snprintf(s, sizeof s, "%.*f", prec - 1 - e > 0 ? prec - 1 - e : 0, x);
	buf_puts(b, s);
	if (strchr(s, '.') == NULL)
		buf_puts(b, ".0");
}

void
resproj_float(struct buf *b, double x)
{
	resproj_float_prec(b, x, 6);
}

void
resproj_float_prec(struct buf *b, double x, int prec)
{
	char s[64], *e;

	/* Python's '{:.N}': %.Ng, with ".0" when it would be integral */
	if (prec < 1)
		prec = 1;
	snprintf(s, sizeof s, "%.*g", prec, x);
	if ((e = strstr(s, "e+")) != NULL && atoi_safe(e + 2) < 9) {
		snprintf(s, sizeof s, "%.1f", x);
		buf_puts(b, s);
		return;
	}
	buf_puts(b, s);
	if (strpbrk(s, ".einn") == NULL)
		buf_puts(b, ".0");
}

static void
py_repr_string(struct buf *b, const char *s)
{
	char q = strchr(s, '\'') != NULL && strchr(s, '"') == NULL ? '"' : '\'';
	const unsigned char *p;

	buf_append(b, &q, 1);
	for (p = (const unsigned char *)s; *p != '\0'; p++) {
		if (*p == '\\' || *p == (unsigned char)q)
			buf_printf(b, "\\%c", *p);
		else if (*p == '\n')
			buf_puts(b, "\\n");
		else if (*p == '\t')
			buf_puts(b, "\\t");
		else if (*p == '\r')
			buf_puts(b, "\\r");
		else if (*p < 0x20 || *p == 0x7f)
			buf_printf(b, "\\x%02x", *p);
		else
			buf_append(b, p, 1);
	}
	buf_append(b, &q, 1);
}

static void
py(struct buf *b, const cJSON *v, int repr, int fl)
{
	const cJSON *it;

	if (v == NULL || cJSON_IsNull(v))
		buf_puts(b, "None");
	else if (cJSON_IsBool(v))
		buf_puts(b, cJSON_IsTrue(v) ? "True" : "False");
	else if (resproj_is_int(v))
		buf_printf(b, "%lld", (long long)v->valuedouble);
	else if (cJSON_IsNumber(v)) {
		if (fl && !repr)
			resproj_float(b, v->valuedouble);
		else
			float_repr(b, v->valuedouble);
	} else if (cJSON_IsString(v)) {
		if (repr)
			py_repr_string(b, v->valuestring);
		else
			buf_puts(b, v->valuestring);
	} else if (cJSON_IsArray(v)) {
		buf_puts(b, "[");
		cJSON_ArrayForEach(it, v)
		{
			if (it != v->child)
				buf_puts(b, ", ");
			py(b, it, 1, fl);
		}
		buf_puts(b, "]");
	} else if (cJSON_IsObject(v)) {
		buf_puts(b, "{");
		cJSON_ArrayForEach(it, v)
		{
			if (it != v->child)
				buf_puts(b, ", ");
			py_repr_string(b, it->string);
			buf_puts(b, ": ");
			py(b, it, 1, fl);
		}
		buf_puts(b, "}");
	}
}

void
resproj_str(struct buf *b, const cJSON *v, int fl)
{
	py(b, v, 0, fl);
}

/* ---- --sort-by ---- */

void
resproj_sortby_release(struct resproj_sortby *s)
{
	int i;

	for (i = 0; i < s->nkeys; i++)
		resproj_key_release(&s->keys[i]);
	free(s->keys);
	free(s->reverse);
	memset(s, 0, sizeof *s);
}

int
resproj_sortby_parse(
    struct resproj_sortby *out, const char *s, struct tpu_err *err)
{
	struct resproj_lex lx = { s, 0, "sort-by" };
	struct resproj_sortby sb;
	int rc;

	memset(&sb, 0, sizeof sb);
	if (strlen(s) > RESPROJ_MAX_EXPR) {
		lx.i = RESPROJ_MAX_EXPR;
		return resproj_lex_error(
		    &lx, err, "longer than %d bytes", RESPROJ_MAX_EXPR);
	}
	for (;;) {
		int rev = 0;

		resproj_lex_space(&lx);
		if (s[lx.i] == '~') {
			rev = 1;
			lx.i++;
		}
		if (sb.nkeys >= RESPROJ_MAX_COLS) {
			rc = resproj_lex_error(
			    &lx, err, "more than %d keys", RESPROJ_MAX_COLS);
			goto bad;
		}
		sb.keys = xreallocarray(
		    sb.keys, (size_t)sb.nkeys + 1, sizeof *sb.keys);
		sb.reverse = xreallocarray(
		    sb.reverse, (size_t)sb.nkeys + 1, sizeof *sb.reverse);
		if ((rc = resproj_key_parse(
		         &lx, &sb.keys[sb.nkeys], ",", err)) != 0)
			goto bad;
		sb.reverse[sb.nkeys++] = rev;
		resproj_lex_space(&lx);
		if (s[lx.i] == ',') {
			lx.i++;
			continue;
		}
		if (s[lx.i] != '\0') {
			rc = resproj_lex_error(&lx, err,
			    "',' or the end expected (use [~]KEY,...)");
			goto bad;
		}
		break;
	}
	*out = sb;
	return 0;
bad:
	resproj_sortby_release(&sb);
	return rc;
}

struct sort_item {
	cJSON *it;
	char **k;
	size_t seq;
};

static const struct resproj_sortby *sortby_cur;

static int
sortby_cmp(const void *pa, const void *pb)
{
	const struct sort_item *a = pa, *b = pb;
	int i, r;

	for (i = 0; i < sortby_cur->nkeys; i++)
		if ((r = strcmp(a->k[i], b->k[i])) != 0)
			return sortby_cur->reverse[i] ? -r : r;
	return (a->seq > b->seq) - (a->seq < b->seq);
}

void
resproj_sortby_apply(const struct resproj_sortby *s, cJSON *list)
{
	struct sort_item *items;
	size_t n = 0, i;
	cJSON *it;
	int k;

	if (s == NULL || s->nkeys == 0 || !cJSON_IsArray(list) ||
	    list->child == NULL)
		return;
	items = xcalloc((size_t)cJSON_GetArraySize(list), sizeof *items);
	while ((it = cJSON_DetachItemFromArray(list, 0)) != NULL) {
		items[n].it = it;
		items[n].seq = n;
		items[n].k = xcalloc((size_t)s->nkeys, sizeof(char *));
		for (k = 0; k < s->nkeys; k++) {
			/* gcloud compares str() of the values ("None" when
			 * unset) */
			cJSON *v = resproj_eval(&s->keys[k], it);

			items[n].k[k] = pystr(v);
			cJSON_Delete(v);
		}
		n++;
	}
	sortby_cur = s;
	qsort(items, n, sizeof *items, sortby_cmp);
	for (i = 0; i < n; i++) {
		cJSON_AddItemToArray(list, items[i].it);
		for (k = 0; k < s->nkeys; k++)
			free(items[i].k[k]);
		free(items[i].k);
	}
	free(items);
}

/* ---- --flatten ---- */

int
resproj_flatten_parse(
    struct resproj_sortby *out, const char *s, struct tpu_err *err)
{
	struct resproj_lex lx = { s, 0, "flatten" };
	int i, rc;

	if ((rc = resproj_sortby_parse(out, s, err)) != 0) {
		/* the same messages, for the flag they came from */
		char *msg = xstrdup(err->msg);
		const char *tail = strchr(msg, ':');

		rc = tpu_error(err, TPU_E_USAGE, "invalid flatten '%.64s'%s", s,
		    tail != NULL ? tail : "");
		free(msg);
		return rc;
	}
	for (i = 0; i < out->nkeys; i++) {
		int k;

		for (k = 0; k < out->keys[i].nsegs; k++)
			if (out->keys[i].segs[k].kind != RESPROJ_NAME)
				break;
		if (out->reverse[i] || out->keys[i].ncalls > 0 ||
		    k < out->keys[i].nsegs) {
			resproj_sortby_release(out);
			return resproj_lex_error(&lx, err,
			    "a flatten key is names only (KEY.KEY...)");
		}
	}
	return 0;
}

/* One copy of r per item of the list at key (names only), the list
 * replaced by the item, appended to out; an empty list gives none, a key
 * that is no list keeps r. */
static void
flatten_one(const struct resproj_key *key, const cJSON *r, cJSON *out)
{
	const cJSON *v = r, *it;
	int k;

	for (k = 0; k < key->nsegs && v != NULL; k++)
		v = cJSON_IsObject(v)
		        ? cJSON_GetObjectItemCaseSensitive(v, key->segs[k].name)
		        : NULL;
	if (!cJSON_IsArray(v)) {
		cJSON_AddItemToArray(out, cJSON_Duplicate(r, 1));
		return;
	}
	cJSON_ArrayForEach(it, v)
	{
		cJSON *copy = cJSON_Duplicate(r, 1), *parent = copy;

		for (k = 0; k < key->nsegs - 1; k++)
			parent = cJSON_GetObjectItemCaseSensitive(
			    parent, key->segs[k].name);
		cJSON_ReplaceItemInObjectCaseSensitive(parent,
		    key->segs[key->nsegs - 1].name, cJSON_Duplicate(it, 1));
		cJSON_AddItemToArray(out, copy);
	}
}

cJSON *
resproj_flatten(const struct resproj_sortby *keys, const cJSON *list)
{
	cJSON *cur = cJSON_Duplicate(list, 1), *next;
	const cJSON *it;
	int i;

	for (i = 0; keys != NULL && i < keys->nkeys; i++) {
		if (keys->keys[i].nsegs == 0)
			continue;
		next = cJSON_CreateArray();
		cJSON_ArrayForEach(it, cur)
		{
			flatten_one(&keys->keys[i], it, next);
		}
		cJSON_Delete(cur);
		cur = next;
	}
	return cur;
}
