/*
 * Rendering of command results on stdout: aligned tables from a column
 * spec, pretty JSON (the API's JSON unchanged), YAML through libyaml with
 * strings quoted wherever a YAML reader would take them for something
 * else, JSON lines, and gcloud-style value(field,...) records.
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <yaml.h>

#include "buf.h"
#include "json.h"
#include "output.h"
#include "util.h"
#include "xmalloc.h"

#define FORMATS "table, table(field,...), json, yaml, jsonl or value(field,...)"

void
output_init(struct output *o)
{
	memset(o, 0, sizeof *o);
	o->fp = stdout;
}

void
output_release(struct output *o)
{
	int i;

	for (i = 0; i < o->nfields; i++)
		free(o->fields[i]);
	free(o->fields);
	o->fields = NULL;
	o->nfields = 0;
}

static int
field_char(int c)
{
	return isalnum(c) || c == '_' || c == '-' || c == '.';
}

int
output_parse_format(struct output *o, const char *s, struct tpu_err *err)
{
	static const struct {
		const char *name;
		enum output_format fmt;
		int fields; /* 0 none, 1 optional, 2 required */
	} names[] = {
		{ "json", OUTPUT_JSON, 0 },
		{ "jsonl", OUTPUT_JSONL, 0 },
		{ "table", OUTPUT_TABLE, 1 },
		{ "value", OUTPUT_VALUE, 2 },
		{ "yaml", OUTPUT_YAML, 0 },
	};
	char **fields = NULL;
	const char *p = s, *q, *end;
	size_t i, n;
	int nfields = 0, rc = 0;

	while (isspace((unsigned char)*p))
		p++;
	end = p + strlen(p);
	while (end > p && isspace((unsigned char)end[-1]))
		end--;
	for (q = p; q < end && islower((unsigned char)*q); q++)
		;
	n = (size_t)(q - p);
	for (i = 0; i < sizeof names / sizeof names[0]; i++)
		if (strlen(names[i].name) == n &&
		    strncmp(names[i].name, p, n) == 0)
			break;
	if (i == sizeof names / sizeof names[0] || (q != end && *q != '('))
		goto bad;
	if (q == end) {
		if (names[i].fields == 2)
			goto bad;
		goto ok;
	}
	if (names[i].fields == 0 || end[-1] != ')')
		goto bad;
	/* "(" field ("," field)* ")" */
	q++;
	end--;
	for (;;) {
		const char *f;

		while (q < end && isspace((unsigned char)*q))
			q++;
		for (f = q; q < end && field_char((unsigned char)*q); q++)
			;
		if (q == f)
			goto bad;
		fields =
		    xreallocarray(fields, (size_t)nfields + 1, sizeof *fields);
		fields[nfields++] = xstrndup(f, (size_t)(q - f));
		while (q < end && isspace((unsigned char)*q))
			q++;
		if (q == end)
			break;
		if (*q++ != ',')
			goto bad;
	}
ok:
	output_release(o);
	o->fmt = names[i].fmt;
	o->fields = fields;
	o->nfields = nfields;
	fields = NULL;
	nfields = 0;
	goto out;
bad:
	/* Quote a long value only in part: the list must fit the message. */
	rc = tpu_error(err, TPU_E_USAGE,
	    "invalid format '%.64s%s': use " FORMATS, s,
	    strlen(s) > 64 ? "..." : "");
out:
	for (i = 0; i < (size_t)nfields; i++)
		free(fields[i]);
	free(fields);
	return rc;
}

/* A value as text for value() and table cells. */
static void
cell_text(struct buf *b, const cJSON *it)
{
	const cJSON *c;
	char *s;

	if (it == NULL || cJSON_IsNull(it))
		return;
	if (cJSON_IsString(it)) {
		buf_puts(b, it->valuestring);
		return;
	}
	if (cJSON_IsBool(it)) {
		buf_puts(b, cJSON_IsTrue(it) ? "true" : "false");
		return;
	}
	if (cJSON_IsArray(it)) {
		/* A list of scalars joins with ';', as gcloud's value(). */
		cJSON_ArrayForEach(c, it)
		{
			if (cJSON_IsObject(c) || cJSON_IsArray(c))
				goto compact;
		}
		cJSON_ArrayForEach(c, it)
		{
			if (c != it->child)
				buf_puts(b, ";");
			cell_text(b, c);
		}
		return;
	}
compact:
	s = json_print(it, 0);
	buf_puts(b, s);
	cJSON_free(s);
}

static int
check_fp(FILE *fp, struct tpu_err *err)
{
	if (ferror(fp))
		return tpu_error(
		    err, TPU_E_IO, "write error on standard output");
	return 0;
}

/* Pretty JSON with two-space indents, as gcloud prints it. */
static void
pretty(struct buf *b, const cJSON *it, int depth)
{
	const cJSON *c;
	char *s;
	int open = cJSON_IsObject(it) ? '{' : cJSON_IsArray(it) ? '[' : 0;

	if (open == 0 || it->child == NULL) {
		s = json_print(it, 0);
		buf_puts(b, s);
		cJSON_free(s);
		return;
	}
	buf_printf(b, "%c\n", open);
	cJSON_ArrayForEach(c, it)
	{
		buf_printf(b, "%*s", 2 * (depth + 1), "");
		if (open == '{') {
			cJSON key = { 0 };

			key.type = cJSON_String;
			key.valuestring = c->string;
			s = json_print(&key, 0);
			buf_printf(b, "%s: ", s);
			cJSON_free(s);
		}
		pretty(b, c, depth + 1);
		buf_puts(b, c->next != NULL ? ",\n" : "\n");
	}
	buf_printf(b, "%*s%c", 2 * depth, "", open == '{' ? '}' : ']');
}

static int
emit_json(FILE *fp, const cJSON *r, int lines)
{
	const cJSON *c;
	char *s;

	if (!lines) {
		struct buf b;

		buf_init(&b, BUF_NOCAP);
		pretty(&b, r, 0);
		fputs(b.data, fp);
		fputc('\n', fp);
		buf_release(&b);
		return 0;
	}
	if (!cJSON_IsArray(r)) {
		s = json_print(r, 0);
		fputs(s, fp);
		fputc('\n', fp);
		cJSON_free(s);
		return 0;
	}
	cJSON_ArrayForEach(c, r)
	{
		s = json_print(c, 0);
		fputs(s, fp);
		fputc('\n', fp);
		cJSON_free(s);
	}
	return 0;
}

static int
emit_value(struct output *o, const cJSON *r)
{
	const cJSON *rec;
	struct buf line;
	int i, single = !cJSON_IsArray(r);

	buf_init(&line, BUF_NOCAP);
	for (rec = single ? r : r->child; rec != NULL;
	     rec = single ? NULL : rec->next) {
		buf_clear(&line);
		for (i = 0; i < o->nfields; i++) {
			if (i > 0)
				buf_puts(&line, "\t");
			cell_text(&line, json_path(rec, o->fields[i]));
		}
		fputs(line.data, o->fp);
		fputc('\n', o->fp);
	}
	buf_release(&line);
	return 0;
}

/* Display width: UTF-8 code points. */
static size_t
width(const char *s)
{
	size_t n = 0;

	for (; *s != '\0'; s++)
		if (((unsigned char)*s & 0xc0) != 0x80)
			n++;
	return n;
}

static int
emit_table(
    struct output *o, const cJSON *r, const char *columns, struct tpu_err *err)
{
	char **hdr = NULL, **path = NULL, **cells = NULL;
	size_t ncol = 0, nrow = 0, *w = NULL, i, j, k;
	const cJSON *rec;
	const char *p, *q, *eq;
	struct buf b;
	int single = !cJSON_IsArray(r), rc = 0;

	buf_init(&b, BUF_NOCAP);
	if (o->nfields > 0) {
		for (i = 0; i < (size_t)o->nfields; i++) {
			hdr = xreallocarray(hdr, ncol + 1, sizeof *hdr);
			path = xreallocarray(path, ncol + 1, sizeof *path);
			path[ncol] = xstrdup(o->fields[i]);
			hdr[ncol] = xstrdup(o->fields[i]);
			for (k = 0; hdr[ncol][k] != '\0'; k++)
				hdr[ncol][k] =
				    hdr[ncol][k] == '.'
				        ? '_'
				        : (char)toupper(
				              (unsigned char)hdr[ncol][k]);
			ncol++;
		}
	} else {
		for (p = columns; *p != '\0'; p = *q != '\0' ? q + 1 : q) {
			q = p + strcspn(p, ",");
			eq = memchr(p, '=', (size_t)(q - p));
			if (eq == NULL || eq == p || eq + 1 == q) {
				rc = tpu_error(err, TPU_E_INTERNAL,
				    "bad column spec '%s'", columns);
				goto out;
			}
			hdr = xreallocarray(hdr, ncol + 1, sizeof *hdr);
			path = xreallocarray(path, ncol + 1, sizeof *path);
			hdr[ncol] = xstrndup(p, (size_t)(eq - p));
			path[ncol] = xstrndup(eq + 1, (size_t)(q - eq - 1));
			ncol++;
		}
	}
	w = xcalloc(ncol, sizeof *w);
	for (j = 0; j < ncol; j++)
		w[j] = width(hdr[j]);
	for (rec = single ? r : r->child; rec != NULL;
	     rec = single ? NULL : rec->next) {
		cells = xreallocarray(cells, (nrow + 1) * ncol, sizeof *cells);
		for (j = 0; j < ncol; j++) {
			char *c;

			buf_clear(&b);
			cell_text(&b, json_path(rec, path[j]));
			c = xstrdup(b.data);
			/* Keep one row per line. */
			for (k = 0; c[k] != '\0'; k++)
				if (iscntrl((unsigned char)c[k]))
					c[k] = ' ';
			cells[nrow * ncol + j] = c;
			if (width(c) > w[j])
				w[j] = width(c);
		}
		nrow++;
	}
	if (nrow == 0)
		goto out;
	for (i = 0; i <= nrow; i++) {
		buf_clear(&b);
		for (j = 0; j < ncol; j++) {
			const char *c =
			    i == 0 ? hdr[j] : cells[(i - 1) * ncol + j];

			buf_puts(&b, c);
			if (j + 1 < ncol)
				for (k = width(c); k < w[j] + 2; k++)
					buf_puts(&b, " ");
		}
		while (b.len > 0 && b.data[b.len - 1] == ' ')
			b.data[--b.len] = '\0';
		fputs(b.data, o->fp);
		fputc('\n', o->fp);
	}
out:
	for (i = 0; i < nrow * ncol; i++)
		free(cells[i]);
	free(cells);
	for (j = 0; j < ncol; j++) {
		free(hdr[j]);
		free(path[j]);
	}
	free(hdr);
	free(path);
	free(w);
	buf_release(&b);
	return rc;
}

/*
 * 1 if a YAML reader would resolve the plain scalar s to something other
 * than a string (YAML 1.1 and 1.2 booleans, null, numbers, timestamps,
 * sexagesimals): such strings must be quoted.  Over-quoting is harmless.
 */
static int
yaml_ambiguous(const char *s)
{
	static const char *const words[] = { "y", "n", "yes", "no", "true",
		"false", "on", "off", "null", "~", "=", "<<" };
	const char *p = s;
	size_t i;

	if (*s == '\0')
		return 1;
	for (i = 0; i < sizeof words / sizeof words[0]; i++)
		if (strcasecmp(s, words[i]) == 0)
			return 1;
	if (*p == '+' || *p == '-')
		p++;
	if (isdigit((unsigned char)*p))
		return 1;
	if (*p == '.' && (isdigit((unsigned char)p[1]) ||
	                     strncasecmp(p + 1, "inf", 3) == 0 ||
	                     strncasecmp(p + 1, "nan", 3) == 0))
		return 1;
	return 0;
}

static int
yaml_write(void *data, unsigned char *buffer, size_t size)
{
	FILE *fp = data;

	return fwrite(buffer, 1, size, fp) == size && !ferror(fp);
}

/* s with invalid UTF-8 bytes replaced by U+FFFD, or NULL if valid. */
static char *
utf8_fix(const char *s)
{
	const unsigned char *p = (const unsigned char *)s;
	struct buf b;
	size_t n;

	for (; *p != '\0'; p += n)
		if ((n = tpu_utf8_len(p)) == 0)
			break;
	if (*p == '\0')
		return NULL;
	buf_init(&b, BUF_NOCAP);
	for (p = (const unsigned char *)s; *p != '\0'; p += n) {
		if ((n = tpu_utf8_len(p)) == 0) {
			buf_puts(&b, "\xef\xbf\xbd");
			n = 1;
		} else
			buf_append(&b, p, n);
	}
	return buf_detach(&b, NULL);
}

static int
yscalar(yaml_emitter_t *e, const char *s, int plain)
{
	yaml_scalar_style_t style = YAML_ANY_SCALAR_STYLE;
	yaml_event_t ev;
	char *fixed = utf8_fix(s);
	int ok;

	if (fixed != NULL)
		s = fixed;

	if (!plain) {
		if (yaml_ambiguous(s))
			style = YAML_SINGLE_QUOTED_SCALAR_STYLE;
		else if (strchr(s, '\n') != NULL)
			style = YAML_LITERAL_SCALAR_STYLE;
	}
	ok = yaml_scalar_event_initialize(&ev, NULL, NULL, (yaml_char_t *)s,
	         (int)strlen(s), 1, 1, style) &&
	     yaml_emitter_emit(e, &ev);
	free(fixed);
	return ok;
}

static int
ynode(yaml_emitter_t *e, const cJSON *it)
{
	yaml_event_t ev;
	const cJSON *c;
	char *s;
	int ok;

	if (cJSON_IsObject(it)) {
		if (!yaml_mapping_start_event_initialize(&ev, NULL, NULL, 1,
		        it->child == NULL ? YAML_FLOW_MAPPING_STYLE
		                          : YAML_BLOCK_MAPPING_STYLE) ||
		    !yaml_emitter_emit(e, &ev))
			return 0;
		cJSON_ArrayForEach(c, it)
		{
			if (!yscalar(e, c->string, 0) || !ynode(e, c))
				return 0;
		}
		return yaml_mapping_end_event_initialize(&ev) &&
		       yaml_emitter_emit(e, &ev);
	}
	if (cJSON_IsArray(it)) {
		if (!yaml_sequence_start_event_initialize(&ev, NULL, NULL, 1,
		        it->child == NULL ? YAML_FLOW_SEQUENCE_STYLE
		                          : YAML_BLOCK_SEQUENCE_STYLE) ||
		    !yaml_emitter_emit(e, &ev))
			return 0;
		cJSON_ArrayForEach(c, it)
		{
			if (!ynode(e, c))
				return 0;
		}
		return yaml_sequence_end_event_initialize(&ev) &&
		       yaml_emitter_emit(e, &ev);
	}
	if (cJSON_IsString(it))
		return yscalar(e, it->valuestring, 0);
	if (cJSON_IsBool(it))
		return yscalar(e, cJSON_IsTrue(it) ? "true" : "false", 1);
	if (cJSON_IsNumber(it)) {
		s = json_print(it, 0);
		ok = yscalar(e, s, 1);
		cJSON_free(s);
		return ok;
	}
	return yscalar(e, "null", 1);
}

static int
emit_yaml(FILE *fp, const cJSON *r, struct tpu_err *err)
{
	yaml_emitter_t e;
	yaml_event_t ev;
	const cJSON *doc;
	int single = !cJSON_IsArray(r), first = 1, ok = 0, rc = 0;

	if (!yaml_emitter_initialize(&e))
		TPU_BUG("yaml_emitter_initialize failed");
	yaml_emitter_set_output(&e, yaml_write, fp);
	yaml_emitter_set_unicode(&e, 1);
	yaml_emitter_set_width(&e, -1);
	yaml_emitter_set_indent(&e, 2);
	if (!yaml_stream_start_event_initialize(&ev, YAML_UTF8_ENCODING) ||
	    !yaml_emitter_emit(&e, &ev))
		goto out;
	/* A list is a stream of documents, as gcloud prints it. */
	for (doc = single ? r : r->child; doc != NULL;
	     doc = single ? NULL : doc->next) {
		if (!yaml_document_start_event_initialize(
		        &ev, NULL, NULL, NULL, first) ||
		    !yaml_emitter_emit(&e, &ev) || !ynode(&e, doc) ||
		    !yaml_document_end_event_initialize(&ev, 1) ||
		    !yaml_emitter_emit(&e, &ev))
			goto out;
		first = 0;
	}
	if (!yaml_stream_end_event_initialize(&ev) ||
	    !yaml_emitter_emit(&e, &ev) || !yaml_emitter_flush(&e))
		goto out;
	ok = 1;
out:
	if (!ok && e.error != YAML_WRITER_ERROR && e.problem != NULL)
		rc = tpu_error(err, TPU_E_INTERNAL, "yaml: %s", e.problem);
	else if (!ok)
		rc = tpu_error(err, TPU_E_IO, "write error on standard output");
	yaml_emitter_delete(&e);
	return rc;
}

int
output_emit(
    struct output *o, const cJSON *r, const char *columns, struct tpu_err *err)
{
	int rc = 0;

	switch (o->fmt) {
	case OUTPUT_JSON:
		rc = emit_json(o->fp, r, 0);
		break;
	case OUTPUT_JSONL:
		rc = emit_json(o->fp, r, 1);
		break;
	case OUTPUT_VALUE:
		rc = emit_value(o, r);
		break;
	case OUTPUT_YAML:
		rc = emit_yaml(o->fp, r, err);
		break;
	case OUTPUT_TABLE:
		if (o->nfields > 0 || columns != NULL)
			rc = emit_table(o, r, columns, err);
		else
			rc = emit_yaml(o->fp, r, err);
		break;
	}
	if (rc != 0)
		return rc;
	return check_fp(o->fp, err);
}
