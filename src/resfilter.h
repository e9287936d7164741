/*
 * gcloud's --filter expressions (gcloud topic filters): terms KEY OP
 * VALUE with OP one of = != : < <= > >= ~ !~, VALUE a number, a word, a
 * quoted string or a list (v1 v2 ...), joined by AND, OR, NOT, - and
 * parentheses (juxtaposition is AND and binds looser than OR; AND and OR
 * together need parentheses).  Keys are resproj keys, transforms
 * included.  ':' and '=' compare case-insensitively (':' matches a
 * substring, or with one '*' an anchored pattern; key:* tests that the
 * key is set); ~ is a POSIX extended regular expression.
 */
#ifndef TPUCTL_RESFILTER_H
#define TPUCTL_RESFILTER_H

#include <cjson/cJSON.h>

#include "err.h"

#define RESFILTER_MAX_DEPTH 64 /* nesting of NOT and parentheses */
#define RESFILTER_MAX_TERMS 256

struct resfilter;

/*
 * Parse an expression: *out (free with resfilter_free) or TPU_E_USAGE
 * naming the bad part and the rule.  An empty or blank expression
 * matches everything (*out NULL).
 */
int resfilter_parse(const char *, struct resfilter **out, struct tpu_err *);

/* 1 when resource r matches (a NULL filter matches everything). */
int resfilter_match(const struct resfilter *, const cJSON *r);

void resfilter_free(struct resfilter *);

#endif
