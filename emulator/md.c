/*
 * The TPU-VM facts of the emulated metadata server (see md.h): worker
 * names and ids, the chip geometry of accelerator types, and the
 * worker-network-endpoints and tpu-env values, rendered as real TPU VMs
 * serve them.  The chip geometry (TensorCores per chip, dimensions, the
 * largest one-host slice, chips per host) is the emulator's offering
 * table, offer.c, the one the Cloud TPU API answers from (the emulator
 * must not link the client's catalog); a multi-host slice has 2x2x1
 * chips per host (offer.c: 4 chips per host on every generation).
 * The default topology of a size doubles the smallest dimension (the
 * last one on a tie) from 1x1, or from 2x2x1 in 3-D: v4-32 is 2x2x4,
 * v4-64 2x4x4, v5litepod-8 2x4, v5litepod-32 4x8, as Google lists them.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "crc32c.h"
#include "md.h"
#include "offer.h"
#include "xmalloc.h"

static uint32_t
md_hash(const char *node_key, const char *node_id, const char *salt)
{
	uint32_t c = 0;

	c = crc32c_update(c, node_key, strlen(node_key));
	c = crc32c_update(c, "\n", 1);
	c = crc32c_update(c, node_id, strlen(node_id));
	if (salt != NULL)
		c = crc32c_update(c, salt, strlen(salt));
	return c;
}

void
emu_md_hostname(const char *node_key, const char *node_id, int worker,
    char *out, size_t len)
{
	snprintf(out, len, "t1v-n-%08x-w-%d",
	    (unsigned)md_hash(node_key, node_id, NULL), worker);
}

void
emu_md_instance_id(const char *node_key, const char *node_id, int worker,
    char *out, size_t len)
{
	char salt[32];
	uint64_t v;

	snprintf(salt, sizeof(salt), "\nw%d", worker);
	v = (uint64_t)md_hash(node_key, node_id, salt) << 32 |
	    md_hash(node_key, node_id, salt + 1);
	snprintf(out, len, "%llu",
	    (unsigned long long)(v % 9000000000000000000ULL +
	                         1000000000000000000ULL));
}

static const struct offer_gen *
md_gen_of(const char *accel, int *size)
{
	const char *dash = accel != NULL ? strrchr(accel, '-') : NULL;
	const struct offer_gen *g;
	char name[32], *end;
	long v;

	if (dash == NULL || (size_t)(dash - accel) >= sizeof(name))
		return NULL;
	snprintf(name, sizeof(name), "%.*s", (int)(dash - accel), accel);
	v = strtol(dash + 1, &end, 10);
	if (*end != '\0' || v <= 0 || v > 1 << 20)
		return NULL;
	/* By name or alias: "v5e-8" is what people call a v5litepod-8. */
	if ((g = offer_gen_find(name)) != NULL)
		*size = (int)v;
	return g;
}

/* "2x2x4" into t (ndims numbers); 0 or -1. */
static int
md_parse_topology(const char *s, int ndims, int *t)
{
	int i;
	char *end;

	for (i = 0; i < ndims; i++) {
		long v = strtol(s, &end, 10);

		if (end == s || v <= 0 || v > 4096)
			return -1;
		t[i] = (int)v;
		s = end;
		if (i < ndims - 1) {
			if (*s != 'x')
				return -1;
			s++;
		}
	}
	return *s == '\0' ? 0 : -1;
}

int
emu_md_bounds(const char *accel, const char *topology, struct emu_md_bounds *b)
{
	const struct offer_gen *g;
	int size = 0, chips, have, i, k;

	memset(b, 0, sizeof(*b));
	if ((g = md_gen_of(accel, &size)) == NULL ||
	    (g->counts_cores && size % g->cores_per_chip != 0))
		return -1;
	chips = g->counts_cores ? size / g->cores_per_chip : size;
	b->ndims = g->ndims;
	b->topo[0] = b->topo[1] = b->topo[2] = 1;
	if (topology != NULL && *topology != '\0') {
		if (md_parse_topology(topology, g->ndims, b->topo) != 0 ||
		    b->topo[0] * b->topo[1] * b->topo[2] != chips)
			return -1;
	} else {
		if (chips & (chips - 1))
			return -1; /* default shapes are powers of two */
		if (g->ndims == 3 && chips >= 4) {
			b->topo[0] = b->topo[1] = 2;
		} else if (g->ndims == 3)
			return -1;
		for (have = b->topo[0] * b->topo[1] * b->topo[2]; have < chips;
		     have *= 2) {
			k = g->ndims - 1;
			for (i = g->ndims - 1; i >= 0; i--)
				if (b->topo[i] < b->topo[k])
					k = i;
			b->topo[k] *= 2;
		}
	}
	if (chips <= g->single_host_max) {
		for (i = 0; i < 3; i++) {
			b->chips_per_host[i] = b->topo[i];
			b->hosts[i] = 1;
		}
		return 0;
	}
	b->chips_per_host[0] = b->chips_per_host[1] = 2;
	b->chips_per_host[2] = 1;
	for (i = 0; i < 3; i++) {
		if (b->topo[i] % b->chips_per_host[i] != 0)
			return -1;
		b->hosts[i] = b->topo[i] / b->chips_per_host[i];
	}
	return 0;
}

int
emu_md_accel_from_config(
    const char *type, const char *topology, char *out, size_t len)
{
	const struct offer_gen *g =
	    type != NULL ? offer_gen_by_config(type, 0) : NULL;
	struct emu_md_bounds b;
	int t[3] = { 1, 1, 1 };

	if (g == NULL || topology == NULL ||
	    md_parse_topology(topology, g->ndims, t) != 0)
		return -1;
	snprintf(out, len, "%s-%d", g->name,
	    t[0] * t[1] * t[2] * (g->counts_cores ? g->cores_per_chip : 1));
	return emu_md_bounds(out, topology, &b);
}

char *
emu_md_endpoints(const struct emu_md_worker *w)
{
	char name[EMU_MD_NAME_MAX], id[EMU_MD_NAME_MAX];
	struct buf b;
	int i;

	buf_init(&b, BUF_NOCAP);
	for (i = 0; i < w->nworkers; i++) {
		emu_md_hostname(w->node_key, w->node_id, i, name, sizeof(name));
		emu_md_instance_id(w->node_key, w->node_id, i, id, sizeof(id));
		buf_printf(
		    &b, "%s%s:%s:%s", i > 0 ? "," : "", name, id, w->addrs[i]);
	}
	buf_puts(&b, "");
	return buf_detach(&b, NULL);
}

static void
md_line(struct buf *b, const char *key, const char *value)
{
	const char *p;

	/* YAML single-quoted: a quote doubles. */
	buf_printf(b, "%s: '", key);
	for (p = value; *p != '\0'; p++) {
		if (*p == '\'')
			buf_puts(b, "'");
		buf_append(b, p, 1);
	}
	buf_puts(b, "'\n");
}

static void
md_triple(char *out, size_t len, const int *v)
{
	snprintf(out, len, "%d,%d,%d", v[0], v[1], v[2]);
}

char *
emu_md_tpu_env(const struct emu_md_worker *w)
{
	struct emu_md_bounds bd;
	struct buf b;
	char v[128], cph[48], hb[48];
	const char *slash;
	int ok;

	ok = emu_md_bounds(w->accel, w->topology, &bd) == 0;
	md_triple(cph, sizeof(cph), bd.chips_per_host);
	md_triple(hb, sizeof(hb), bd.hosts);
	buf_init(&b, BUF_NOCAP);
	md_line(&b, "ACCELERATOR_TYPE", w->accel != NULL ? w->accel : "");
	if (ok) {
		md_line(&b, "CHIPS_PER_HOST_BOUNDS", cph);
		md_line(&b, "HOST_BOUNDS", hb);
	}
	if (w->nslices > 0) {
		snprintf(v, sizeof(v), "%s:%d",
		    w->coordinator != NULL ? w->coordinator : "",
		    EMU_MD_MEGASCALE_PORT);
		md_line(&b, "MEGASCALE_COORDINATOR_ADDRESS", v);
		snprintf(v, sizeof(v), "%d", w->nslices);
		md_line(&b, "MEGASCALE_NUM_SLICES", v);
		snprintf(v, sizeof(v), "%d", EMU_MD_MEGASCALE_PORT);
		md_line(&b, "MEGASCALE_PORT", v);
		snprintf(v, sizeof(v), "%d", w->slice);
		md_line(&b, "MEGASCALE_SLICE_ID", v);
	}
	slash = strrchr(w->node_key, '/');
	md_line(&b, "NODE_ID", slash != NULL ? slash + 1 : w->node_key);
	if (ok) {
		if (bd.ndims == 3)
			snprintf(v, sizeof(v), "%dx%dx%d", bd.topo[0],
			    bd.topo[1], bd.topo[2]);
		else
			snprintf(v, sizeof(v), "%dx%d", bd.topo[0], bd.topo[1]);
		md_line(&b, "TOPOLOGY", v);
		md_line(&b, "TPU_CHIPS_PER_PROCESS_BOUNDS", cph);
		md_line(&b, "TPU_PROCESS_BOUNDS", hb);
	}
	snprintf(v, sizeof(v), "%d", w->worker);
	md_line(&b, "WORKER_ID", v);
	md_line(&b, "ZONE", w->zone != NULL ? w->zone : "");
	return buf_detach(&b, NULL);
}
