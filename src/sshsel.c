/*
 * Worker and slice selection, ssh-keys merging, output prefixes
 * (sshsel.h).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "buf.h"
#include "catalog.h"
#include "err.h"
#include "json.h"
#include "sshsel.h"
#include "xmalloc.h"

struct item {
	long a, b;      /* a range (a <= b), when id is NULL */
	const char *id; /* a node id of idlen bytes */
	size_t idlen;
};

/*
 * One item at p, ending at ',' or NUL: 0 with *next at that character,
 * -1 on bad syntax.
 */
static int
scan_item(const char *p, int allow_ids, struct item *it, const char **next)
{
	struct tpu_err e;
	char *end;

	memset(it, 0, sizeof *it);
	if (*p >= '0' && *p <= '9') {
		it->a = it->b = strtol(p, &end, 10);
		if (*end == '-') {
			p = end + 1;
			if (*p < '0' || *p > '9')
				return -1;
			it->b = strtol(p, &end, 10);
		}
		if (it->a > it->b || it->b >= SSHSEL_MAX)
			return -1;
		*next = end;
	} else if (allow_ids && *p >= 'a' && *p <= 'z') {
		it->id = p;
		it->idlen = strcspn(p, ",");
		/* "all" is the whole selection, never an item */
		if (catalog_node_name_validate_len(p, it->idlen, &e) != 0 ||
		    (it->idlen == 3 && strncmp(p, "all", 3) == 0))
			return -1;
		*next = p + it->idlen;
	} else
		return -1;
	return **next == ',' || **next == '\0' ? 0 : -1;
}

int
sshsel_workers(const char *spec, int n, unsigned char *sel, struct tpu_err *err)
{
	const char *p = spec, *next;
	struct item it;

	if (strcmp(spec, "all") == 0) {
		if (n > 0)
			memset(sel, 1, (size_t)n);
		return 0;
	}
	for (;;) {
		if (scan_item(p, 0, &it, &next) != 0)
			return tpu_error(err, TPU_E_USAGE,
			    "--worker '%s': expected 'all', a worker number, "
			    "a list (1,3) or a range (0-7)",
			    spec);
		if (n >= 0 && it.b >= n)
			return tpu_error(err, TPU_E_USAGE,
			    "--worker '%s': worker %ld does not exist (the "
			    "node has %d worker%s: 0-%d)",
			    spec, it.b, n, n == 1 ? "" : "s", n - 1);
		for (; n >= 0 && it.a <= it.b; it.a++)
			sel[it.a] = 1;
		if (*next == '\0')
			return 0;
		p = next + 1;
	}
}

/* "a, b, c" or "a, b, ..., z (N)" for an error message. */
static char *
ids_list(const char *const *ids, int n)
{
	struct buf b;
	char *s;
	int i;

	buf_init(&b, BUF_NOCAP);
	for (i = 0; i < n; i++) {
		if (n > 4 && i == 2) {
			buf_printf(&b, ", ..., %s (%d nodes)", ids[n - 1], n);
			break;
		}
		buf_printf(&b, "%s%s", i > 0 ? ", " : "", ids[i]);
	}
	s = xstrdup(b.data != NULL ? b.data : "");
	buf_release(&b);
	return s;
}

static int
node_id_index(const char *const *ids, int n, const struct item *it)
{
	int i;

	for (i = 0; i < n; i++)
		if (strlen(ids[i]) == it->idlen &&
		    strncmp(ids[i], it->id, it->idlen) == 0)
			return i;
	return -1;
}

int
sshsel_nodes(const char *spec, const char *const *ids, int n,
    unsigned char *sel, struct tpu_err *err)
{
	const char *p = spec, *next;
	struct item it;
	char *list;
	int k;

	if (strcmp(spec, "all") == 0) {
		if (n > 0)
			memset(sel, 1, (size_t)n);
		return 0;
	}
	for (;;) {
		if (scan_item(p, 1, &it, &next) != 0)
			return tpu_error(err, TPU_E_USAGE,
			    "--node '%s': expected 'all', a slice number, a "
			    "list (0,2), a range (0-3) or node ids (p-1)",
			    spec);
		if (n >= 0 && it.id != NULL) {
			if ((k = node_id_index(ids, n, &it)) < 0) {
				list = ids_list(ids, n);
				tpu_error(err, TPU_E_USAGE,
				    "--node '%s': '%.*s' is not a node of the "
				    "queued resource (its nodes: %s)",
				    spec, (int)it.idlen, it.id, list);
				free(list);
				return TPU_E_USAGE;
			}
			it.a = it.b = k;
		} else if (n >= 0 && it.b >= n)
			return tpu_error(err, TPU_E_USAGE,
			    "--node '%s': slice %ld does not exist (the "
			    "queued resource has %d slice%s: 0-%d)",
			    spec, it.b, n, n == 1 ? "" : "s", n - 1);
		for (; n >= 0 && it.a <= it.b; it.a++)
			sel[it.a] = 1;
		if (*next == '\0')
			return 0;
		p = next + 1;
	}
}

void
sshsel_ids_free(char **ids, int n)
{
	int i;

	for (i = 0; ids != NULL && i < n; i++)
		free(ids[i]);
	free(ids);
}

/* Append one node id, checked; -1 when it is not a valid name. */
static int
push_id(char ***ids, int *n, char *id)
{
	struct tpu_err e;

	if (*n >= SSHSEL_MAX || catalog_node_name_validate(id, &e) != 0) {
		free(id);
		return -1;
	}
	*ids = xreallocarray(*ids, (size_t)*n + 1, sizeof **ids);
	(*ids)[(*n)++] = id;
	return 0;
}

int
sshsel_qr_nodes(const cJSON *qr, char ***idsp, int *np, struct tpu_err *err)
{
	const cJSON *spec, *ms;
	const char *id, *prefix;
	char **ids = NULL;
	long long count, i;
	int n = 0, bad = 0;

	cJSON_ArrayForEach(spec, json_path(qr, "tpu.nodeSpec"))
	{
		id = json_opt_string(spec, "nodeId", NULL);
		ms = cJSON_GetObjectItemCaseSensitive(spec, "multisliceParams");
		if (ms == NULL)
			ms = cJSON_GetObjectItemCaseSensitive(
			    spec, "multiNodeParams");
		if (id != NULL) {
			bad |= push_id(&ids, &n, xstrdup(id));
			continue;
		}
		prefix = json_opt_string(ms, "nodeIdPrefix", NULL);
		count = json_opt_int64(ms, "nodeCount", 0);
		if (prefix == NULL || count < 1 || count > SSHSEL_MAX) {
			bad = 1;
			continue;
		}
		for (i = 0; i < count && !bad; i++)
			bad |=
			    push_id(&ids, &n, xasprintf("%s-%lld", prefix, i));
	}
	if (bad || n == 0) {
		sshsel_ids_free(ids, n);
		*idsp = NULL;
		*np = 0;
		return tpu_error(err, TPU_E_API, "queued resource '%s': %s",
		    json_opt_string(qr, "name", "?"),
		    bad ? "a node spec has no valid node id or multislice "
		          "parameters"
		        : "no node specs");
	}
	*idsp = ids;
	*np = n;
	return 0;
}

/* The length of "user:type base64" at the start of a key line. */
static size_t
key_len(const char *s, size_t len)
{
	const char *sp = memchr(s, ' ', len), *sp2;

	if (sp == NULL)
		return len;
	sp2 = memchr(sp + 1, ' ', len - (size_t)(sp + 1 - s));
	return sp2 != NULL ? (size_t)(sp2 - s) : len;
}

int
sshsel_keys_has(const char *keys, const char *entry)
{
	size_t n = key_len(entry, strlen(entry));
	const char *p = keys;

	while (p != NULL && *p != '\0') {
		const char *eol = strchr(p, '\n');
		size_t len = eol != NULL ? (size_t)(eol - p) : strlen(p);

		if (len > 0 && p[len - 1] == '\r')
			len--;
		if (n > 0 && key_len(p, len) == n && strncmp(p, entry, n) == 0)
			return 1;
		p = eol != NULL ? eol + 1 : NULL;
	}
	return 0;
}

char *
sshsel_keys_drop(const char *keys, const char *entry)
{
	size_t n = key_len(entry, strlen(entry));
	const char *p = keys;
	struct buf b;
	char *out;

	buf_init(&b, 1 << 20);
	while (p != NULL && *p != '\0') {
		const char *eol = strchr(p, '\n');
		size_t len = eol != NULL ? (size_t)(eol - p) : strlen(p);
		size_t klen = len;

		if (klen > 0 && p[klen - 1] == '\r')
			klen--;
		if (!(n > 0 && key_len(p, klen) == n &&
		        strncmp(p, entry, n) == 0))
			buf_printf(
			    &b, "%s%.*s", b.len > 0 ? "\n" : "", (int)klen, p);
		p = eol != NULL ? eol + 1 : NULL;
	}
	out = xstrdup(b.data != NULL ? b.data : "");
	buf_release(&b);
	return out;
}

char *
sshsel_keys_add(const char *keys, const char *entry)
{
	size_t len;

	if (sshsel_keys_has(keys, entry))
		return NULL;
	if (keys == NULL || *keys == '\0')
		return xstrdup(entry);
	len = strlen(keys);
	return xasprintf(
	    "%s%s%s", keys, keys[len - 1] == '\n' ? "" : "\n", entry);
}

char *
sshsel_prefix(char *buf, size_t size, int slice, int worker)
{
	if (size == 0)
		return buf;
	if (slice < 0)
		snprintf(buf, size, "[w%d] ", worker);
	else
		snprintf(buf, size, "[s%d/w%d] ", slice, worker);
	return buf;
}
