/*
 * The TPU catalog: generations, accelerator types, topologies, zones and
 * runtime versions, and the validators of user input (RELIABILITY.md 4F).
 *
 * The tables are a SNAPSHOT of Google's "TPU regions and zones", "TPU
 * versions" and "TPU software versions" documentation (2024-2025), kept
 * small on purpose.  When Google adds a zone or a size, add a row here;
 * the server stays the authority for what is really available.
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "catalog.h"
#include "util.h"
#include "xmalloc.h"

static const char *const rt_v2v3[] = { "tpu-ubuntu2204-base", "tpu-vm-base",
	"tpu-vm-tf-2.16.1-pjrt", "tpu-vm-tf-2.16.1-pod-pjrt",
	"tpu-vm-tf-2.15.0-pjrt", "tpu-vm-tf-2.15.0-pod-pjrt", "tpu-vm-pt-2.0",
	"tpu-vm-cos-stable", NULL };
static const char *const rt_v4[] = { "tpu-ubuntu2204-base", "tpu-vm-v4-base",
	"tpu-vm-v4-pt-2.0", "tpu-vm-tf-2.16.1-pjrt",
	"tpu-vm-tf-2.16.1-pod-pjrt", "tpu-vm-tf-2.15.0-pjrt",
	"tpu-vm-tf-2.15.0-pod-pjrt", "tpu-vm-base", "tpu-vm-cos-stable", NULL };
static const char *const rt_v5e[] = { "v2-alpha-tpuv5-lite",
	"tpu-ubuntu2204-base", NULL };
static const char *const rt_v5p[] = { "v2-alpha-tpuv5", "tpu-ubuntu2204-base",
	"tpu-vm-cos-stable", NULL };
static const char *const rt_v6e[] = { "v2-alpha-tpuv6e", "tpu-ubuntu2204-base",
	NULL };

/*
 * AcceleratorConfig.Type proto numbers (google/cloud/tpu/v2/cloud_tpu.proto):
 * V2 = 2, V3 = 4, V4 = 7, V5LITE_POD = 9, V5P = 10, V6E = 11.
 *
 * HBM per chip (the whole chip, every TensorCore), from each generation's
 * "System architecture" table at cloud.google.com/tpu/docs/<gen>:
 * v3 "HBM2 capacity 32 GiB", v4 "32 GiB", v5e "16 GB" (and "Chips per
 * host 8"), v5p "95 GB", v6e "HBM capacity per chip 32 GB" ("Chips per
 * host 8").  The v5e, v5p and v6e pages print "GB"; the chips' HBM
 * stacks are binary sized and tpuctl reads the figures as GiB, as the
 * v3 and v4 pages do.  XXX if Google meant 10^9 bytes, plan's figures
 * for those three are 7% optimistic.  Google's v2 page gives no HBM
 * figure; it points to Jouppi et al., "A Domain Specific Supercomputer
 * for Training Deep Neural Networks" (CACM 2020), whose TPUv2 has 16 GiB
 * of HBM per chip (8 GiB per TensorCore).  Multi-host slices have 4
 * chips per host on every generation ("Hosts" column of the slice
 * tables); v5e and v6e also have 8-chip single-host slices.
 */
static const struct catalog_gen gens[] = {
	{ "v2", NULL, "V2", 2, 4, 4, 2, 16, 1, 2, rt_v2v3,
	    "https://dl.acm.org/doi/pdf/10.1145/3360307 (via "
	    "https://cloud.google.com/tpu/docs/v2)" },
	{ "v3", NULL, "V3", 4, 4, 4, 2, 32, 1, 2, rt_v2v3,
	    "https://cloud.google.com/tpu/docs/v3" },
	{ "v4", NULL, "V4", 7, 4, 4, 2, 32, 1, 3, rt_v4,
	    "https://cloud.google.com/tpu/docs/v4" },
	{ "v5litepod", "v5e", "V5LITE_POD", 9, 4, 8, 1, 16, 0, 2, rt_v5e,
	    "https://cloud.google.com/tpu/docs/v5e" },
	{ "v5p", NULL, "V5P", 10, 4, 4, 2, 95, 1, 3, rt_v5p,
	    "https://cloud.google.com/tpu/docs/v5p" },
	{ "v6e", NULL, "V6E", 11, 4, 8, 1, 32, 0, 2, rt_v6e,
	    "https://cloud.google.com/tpu/docs/v6e" },
};

/* 2D generations: the sizes and their topology, from Google's tables. */
struct topo2d {
	const char *gen;
	int size;
	const char *topology;
};

static const struct topo2d topos2d[] = {
	{ "v2", 8, "2x2" },
	{ "v2", 32, "4x4" },
	{ "v2", 128, "8x8" },
	{ "v2", 256, "8x16" },
	{ "v2", 512, "16x16" },
	{ "v3", 8, "2x2" },
	{ "v3", 32, "4x4" },
	{ "v3", 64, "4x8" },
	{ "v3", 128, "8x8" },
	{ "v3", 256, "8x16" },
	{ "v3", 512, "16x16" },
	{ "v3", 1024, "16x32" },
	{ "v3", 2048, "32x32" },
	{ "v5litepod", 1, "1x1" },
	{ "v5litepod", 4, "2x2" },
	{ "v5litepod", 8, "2x4" },
	{ "v5litepod", 16, "4x4" },
	{ "v5litepod", 32, "4x8" },
	{ "v5litepod", 64, "8x8" },
	{ "v5litepod", 128, "8x16" },
	{ "v5litepod", 256, "16x16" },
	{ "v6e", 1, "1x1" },
	{ "v6e", 4, "2x2" },
	{ "v6e", 8, "2x4" },
	{ "v6e", 16, "4x4" },
	{ "v6e", 32, "4x8" },
	{ "v6e", 64, "8x8" },
	{ "v6e", 128, "8x16" },
	{ "v6e", 256, "16x16" },
};

/*
 * 3D generations (v4, v5p): the single-host and small slices are fixed
 * shapes; larger slices have every dimension a multiple of 4 (whole
 * cubes of 4x4x4 chips), up to the pod's size.
 */
struct limits3d {
	const char *gen;
	int maxdim;
	int maxchips;
};

static const struct limits3d limits3d[] = {
	{ "v4", 16, 4096 },
	{ "v5p", 28, 8960 },
};

static const int small3d[][3] = { { 1, 2, 2 }, { 2, 2, 2 }, { 2, 2, 4 },
	{ 2, 4, 4 } };

static const struct catalog_zone zones[] = {
	{ "us-central1-a", { "v3", "v5litepod", "v5p", NULL } },
	{ "us-central1-b", { "v2", "v3", "v5litepod", "v6e", NULL } },
	{ "us-central1-c", { "v2", "v5litepod", NULL } },
	{ "us-central1-f", { "v2", "v3", NULL } },
	{ "us-central2-b", { "v4", "v6e", NULL } },
	{ "us-east1-c", { "v5litepod", NULL } },
	{ "us-east1-d", { "v5litepod", "v6e", NULL } },
	{ "us-east5-a", { "v5p", "v6e", NULL } },
	{ "us-east5-b", { "v5litepod", "v6e", NULL } },
	{ "us-east5-c", { "v5p", NULL } },
	{ "us-south1-a", { "v5litepod", "v6e", NULL } },
	{ "us-west1-c", { "v5litepod", "v6e", NULL } },
	{ "us-west4-a", { "v5litepod", "v6e", NULL } },
	{ "us-west4-b", { "v5litepod", NULL } },
	{ "europe-west4-a", { "v2", "v3", "v6e", NULL } },
	{ "europe-west4-b", { "v5litepod", "v5p", NULL } },
	{ "asia-east1-c", { "v2", "v6e", NULL } },
	{ "asia-northeast1-b", { "v6e", NULL } },
	{ "asia-southeast1-b", { "v5litepod", NULL } },
	{ "southamerica-east1-c", { "v6e", NULL } },
};

static const char *const known_metadata[] = { "ssh-keys", "startup-script",
	"shutdown-script", "startup-script-url", "shutdown-script-url",
	"enable-oslogin", "enable-oslogin-2fa", "block-project-ssh-keys",
	"serial-port-enable", "enable-guest-attributes" };

/* A printable, bounded rendering of a user value for messages. */
static const char *
show(const char *s, size_t len, char *out, size_t outlen)
{
	return tpu_show(s, len, out, outlen, TPU_SHOW_BACKSLASH);
}

#define SHOW(s) show((s), strlen(s), shown, sizeof shown)

const struct catalog_gen *
catalog_gen_at(size_t i)
{
	return i < nitems(gens) ? &gens[i] : NULL;
}

const struct catalog_gen *
catalog_gen_find(const char *name)
{
	size_t i;

	for (i = 0; i < nitems(gens); i++) {
		if (strcmp(gens[i].name, name) == 0 ||
		    (gens[i].alias != NULL && strcmp(gens[i].alias, name) == 0))
			return &gens[i];
	}
	return NULL;
}

static const struct limits3d *
limits_of(const struct catalog_gen *g)
{
	size_t i;

	for (i = 0; i < nitems(limits3d); i++) {
		if (strcmp(limits3d[i].gen, g->name) == 0)
			return &limits3d[i];
	}
	return NULL;
}

/* 1 when the sorted shape a <= b <= c is a slice generation g builds. */
static int
shape3d_ok(const struct catalog_gen *g, int a, int b, int c)
{
	const struct limits3d *l = limits_of(g);
	size_t i;

	if (l == NULL)
		return 0;
	for (i = 0; i < nitems(small3d); i++) {
		if (a == small3d[i][0] && b == small3d[i][1] &&
		    c == small3d[i][2])
			return 1;
	}
	if (a % 4 != 0 || b % 4 != 0 || c % 4 != 0 || c > l->maxdim)
		return 0;
	return (long)a * b * c <= l->maxchips;
}

/* Render a sorted 3D shape the way Google writes it ("2x2x1"). */
static void
shape3d_str(int a, int b, int c, char *out, size_t outlen)
{
	if (a == 1 && b == 2 && c == 2)
		snprintf(out, outlen, "2x2x1");
	else
		snprintf(out, outlen, "%dx%dx%d", a, b, c);
}

/*
 * The i-th valid 3D shape with the given chip count, most cubic first
 * (smallest largest dimension, then smallest middle one).
 */
static int
shape3d_at(const struct catalog_gen *g, int chips, size_t want, int dims[3])
{
	const struct limits3d *l = limits_of(g);
	int best[64][3];
	size_t n = 0, i, j;
	int a, b, c;

	if (l == NULL)
		return -1;
	for (a = 1; a <= l->maxdim; a++) {
		for (b = a; b <= l->maxdim; b++) {
			if (chips % (a * b) != 0)
				continue;
			c = chips / (a * b);
			if (c < b || !shape3d_ok(g, a, b, c) || n == 64)
				continue;
			best[n][0] = a;
			best[n][1] = b;
			best[n][2] = c;
			n++;
		}
	}
	/* Insertion sort by (c, b). */
	for (i = 1; i < n; i++) {
		for (j = i; j > 0 && (best[j][2] < best[j - 1][2] ||
		                         (best[j][2] == best[j - 1][2] &&
		                             best[j][1] < best[j - 1][1]));
		     j--) {
			int t[3];

			memcpy(t, best[j], sizeof t);
			memcpy(best[j], best[j - 1], sizeof t);
			memcpy(best[j - 1], t, sizeof t);
		}
	}
	if (want >= n)
		return -1;
	memcpy(dims, best[want], sizeof best[want]);
	return 0;
}

static int
size_to_chips(const struct catalog_gen *g, int size)
{
	return g->name_counts_cores ? size / g->cores_per_chip : size;
}

static int
chips_to_size(const struct catalog_gen *g, int chips)
{
	return g->name_counts_cores ? chips * g->cores_per_chip : chips;
}

/* 1 when a slice of that many chips exists in generation g. */
static int
chips_ok(const struct catalog_gen *g, int chips)
{
	int dims[3];
	size_t i;

	if (chips <= 0)
		return 0;
	if (g->topo_dims == 3)
		return shape3d_at(g, chips, 0, dims) == 0;
	for (i = 0; i < nitems(topos2d); i++) {
		if (strcmp(topos2d[i].gen, g->name) == 0 &&
		    size_to_chips(g, topos2d[i].size) == chips)
			return 1;
	}
	return 0;
}

int
catalog_gen_size_at(const struct catalog_gen *g, size_t want)
{
	int chips, limit;
	size_t n = 0, i;

	if (g->topo_dims == 2) {
		for (i = 0; i < nitems(topos2d); i++) {
			if (strcmp(topos2d[i].gen, g->name) != 0)
				continue;
			if (n++ == want)
				return topos2d[i].size;
		}
		return 0;
	}
	limit = limits_of(g) != NULL ? limits_of(g)->maxchips : 0;
	for (chips = 1; chips <= limit; chips++) {
		/* Only the small shapes are not whole 4x4x4 cubes. */
		if (chips % 64 != 0 && chips > 32)
			continue;
		if (!chips_ok(g, chips))
			continue;
		if (n++ == want)
			return chips_to_size(g, chips);
	}
	return 0;
}

static void
fill_accel(const struct catalog_gen *g, int chips, struct catalog_accel *a)
{
	memset(a, 0, sizeof *a);
	a->gen = g;
	a->chips = chips;
	a->size = chips_to_size(g, chips);
	a->cores = chips * g->cores_per_chip;
	a->hosts = chips <= g->max_host_chips ? 1 : chips / g->chips_per_host;
	snprintf(a->type, sizeof a->type, "%s-%d", g->name, a->size);
	catalog_accel_topology_at(a, 0, a->topology, sizeof a->topology);
}

int
catalog_accel_topology_at(
    const struct catalog_accel *a, size_t want, char *out, size_t outlen)
{
	int dims[3];
	size_t i, n = 0;

	if (a->gen->topo_dims == 3) {
		if (shape3d_at(a->gen, a->chips, want, dims) != 0)
			return -1;
		shape3d_str(dims[0], dims[1], dims[2], out, outlen);
		return 0;
	}
	for (i = 0; i < nitems(topos2d); i++) {
		if (strcmp(topos2d[i].gen, a->gen->name) != 0 ||
		    topos2d[i].size != a->size)
			continue;
		if (n++ == want) {
			snprintf(out, outlen, "%s", topos2d[i].topology);
			return 0;
		}
	}
	return -1;
}

/* The valid sizes of g as "8, 16, 32, ..." for messages. */
static void
sizes_str(const struct catalog_gen *g, char *out, size_t outlen)
{
	size_t i, o = 0;
	int s;

	out[0] = '\0';
	for (i = 0; (s = catalog_gen_size_at(g, i)) != 0; i++) {
		int n = snprintf(out + o, outlen - o, "%s%d", i ? ", " : "", s);

		if (n < 0 || (size_t)n >= outlen - o) {
			out[o] = '\0';
			break;
		}
		o += (size_t)n;
	}
}

static void
gen_names(char *out, size_t outlen)
{
	size_t i, o = 0;

	out[0] = '\0';
	for (i = 0; i < nitems(gens) && o < outlen; i++) {
		int n = snprintf(
		    out + o, outlen - o, "%s%s", i ? ", " : "", gens[i].name);

		if (n < 0)
			break;
		o += (size_t)n;
	}
}

/* Parse a strictly positive decimal with no sign and no leading zero. */
static int
parse_pos(const char *s, size_t len, int max)
{
	long v = 0;
	size_t i;

	if (len == 0 || len > 6 || s[0] == '0')
		return -1;
	for (i = 0; i < len; i++) {
		if (s[i] < '0' || s[i] > '9')
			return -1;
		v = v * 10 + (s[i] - '0');
	}
	return v > max ? -1 : (int)v;
}

static int
accel_parse_strict(
    const char *type, struct catalog_accel *a, struct tpu_err *err)
{
	const struct catalog_gen *g;
	char gen[32], shown[96], list[512];
	const char *dash;
	size_t glen;
	int size, chips;

	if (*type == '\0')
		return tpu_error(err, TPU_E_USAGE,
		    "accelerator type is empty: use GENERATION-SIZE, e.g. v4-8 "
		    "or v5litepod-16");
	dash = strchr(type, '-');
	if (dash == NULL)
		return tpu_error(err, TPU_E_USAGE,
		    "accelerator type '%s' has no size: use GENERATION-SIZE, "
		    "e.g. v4-8 or v5litepod-16",
		    SHOW(type));
	glen = (size_t)(dash - type);
	if (glen == 0 || glen >= sizeof gen)
		return tpu_error(err, TPU_E_USAGE,
		    "accelerator type '%s' is not valid: use GENERATION-SIZE, "
		    "e.g. v4-8 or v5litepod-16",
		    SHOW(type));
	memcpy(gen, type, glen);
	gen[glen] = '\0';
	g = catalog_gen_find(gen);
	if (g == NULL) {
		gen_names(list, sizeof list);
		return tpu_error(err, TPU_E_USAGE,
		    "accelerator type '%s': unknown TPU generation '%s' "
		    "(known: %s)",
		    SHOW(type), gen, list);
	}
	if (strcmp(g->name, gen) != 0)
		return tpu_error(err, TPU_E_USAGE,
		    "accelerator type '%s': the generation is spelled '%s' "
		    "(did you mean '%s%s'?)",
		    SHOW(type), g->name, g->name, dash);
	size = parse_pos(dash + 1, strlen(dash + 1), 1000000);
	if (size < 0)
		return tpu_error(err, TPU_E_USAGE,
		    "accelerator type '%s': the size after '%s-' must be a "
		    "positive integer, e.g. %s-%d",
		    SHOW(type), g->name, g->name, catalog_gen_size_at(g, 0));
	if (g->name_counts_cores && size % g->cores_per_chip != 0)
		return tpu_error(err, TPU_E_USAGE,
		    "accelerator type '%s': %s sizes count TensorCores (%d per "
		    "chip), so %d is not a whole number of chips",
		    SHOW(type), g->name, g->cores_per_chip, size);
	chips = size_to_chips(g, size);
	if (!chips_ok(g, chips)) {
		sizes_str(g, list, sizeof list);
		return tpu_error(err, TPU_E_USAGE,
		    "accelerator type '%s': no %s slice of that size (valid "
		    "sizes: %s)",
		    SHOW(type), g->name, list);
	}
	fill_accel(g, chips, a);
	return 0;
}

int
catalog_accel_parse(
    const char *type, struct catalog_accel *a, struct tpu_err *err)
{
	struct catalog_accel tmp;
	struct tpu_err ignored;
	char norm[64], shown[96];
	size_t i, n = 0, len = strlen(type);
	size_t b = 0, e = len;
	int odd = 0;

	for (i = 0; i < len; i++) {
		unsigned char c = (unsigned char)type[i];

		if (!(islower(c) || isdigit(c) || c == '-'))
			odd = 1;
	}
	if (!odd)
		return accel_parse_strict(type, a, err);
	/* Upper case or blanks: reject, with a hint when that is all. */
	while (b < e && isspace((unsigned char)type[b]))
		b++;
	while (e > b && isspace((unsigned char)type[e - 1]))
		e--;
	for (i = b; i < e && n + 1 < sizeof norm; i++)
		norm[n++] = (char)tolower((unsigned char)type[i]);
	norm[n] = '\0';
	tpu_err_init(&ignored);
	if (n > 0 && i == e && accel_parse_strict(norm, &tmp, &ignored) == 0)
		return tpu_error(err, TPU_E_USAGE,
		    "accelerator type '%s' is not valid: names are lower case "
		    "without blanks (did you mean '%s'?)",
		    SHOW(type), tmp.type);
	return tpu_error(err, TPU_E_USAGE,
	    "accelerator type '%s' is not valid: use GENERATION-SIZE in lower "
	    "case, e.g. v4-8 or v5litepod-16",
	    SHOW(type));
}

/* Parse "AxB" or "AxBxC"; the number of dimensions, or -1. */
static int
topo_parse(const char *s, int dims[3])
{
	const char *p = s, *x;
	int n = 0, v;

	for (;;) {
		x = strchr(p, 'x');
		if (n == 3)
			return -1;
		v = parse_pos(p, x != NULL ? (size_t)(x - p) : strlen(p), 4096);
		if (v < 0)
			return -1;
		dims[n++] = v;
		if (x == NULL)
			break;
		p = x + 1;
	}
	return n;
}

static void
sort3(int d[3])
{
	int t;

	if (d[0] > d[1]) {
		t = d[0], d[0] = d[1], d[1] = t;
	}
	if (d[1] > d[2]) {
		t = d[1], d[1] = d[2], d[2] = t;
	}
	if (d[0] > d[1]) {
		t = d[0], d[0] = d[1], d[1] = t;
	}
}

int
catalog_topology_check(const struct catalog_gen *g, const char *topo,
    int *chips, struct tpu_err *err)
{
	char shown[96], list[512];
	int dims[3], n;
	size_t i, o = 0;

	n = topo_parse(topo, dims);
	if (n < 0 || n == 1)
		return tpu_error(err, TPU_E_USAGE,
		    "topology '%s' is not valid: use %s positive integers "
		    "joined by 'x', e.g. %s",
		    SHOW(topo), g->topo_dims == 3 ? "three" : "two",
		    g->topo_dims == 3 ? "2x2x1 or 4x4x8" : "2x2 or 16x16");
	if (n != g->topo_dims)
		return tpu_error(err, TPU_E_USAGE,
		    "topology '%s' is not valid for %s: %s topologies have %d "
		    "dimensions, e.g. %s",
		    SHOW(topo), g->name, g->name, g->topo_dims,
		    g->topo_dims == 3 ? "2x2x1 or 4x4x8" : "2x2 or 16x16");
	if (n == 3) {
		int s[3] = { dims[0], dims[1], dims[2] };

		sort3(s);
		if (!shape3d_ok(g, s[0], s[1], s[2]))
			return tpu_error(err, TPU_E_USAGE,
			    "topology '%s' is not a %s slice: use 2x2x1, "
			    "2x2x2, 2x2x4, 2x4x4, or dimensions that are "
			    "multiples of 4 up to %d (at most %d chips)",
			    SHOW(topo), g->name, limits_of(g)->maxdim,
			    limits_of(g)->maxchips);
		if (chips != NULL)
			*chips = dims[0] * dims[1] * dims[2];
		return 0;
	}
	list[0] = '\0';
	for (i = 0; i < nitems(topos2d); i++) {
		if (strcmp(topos2d[i].gen, g->name) != 0)
			continue;
		if (strcmp(topos2d[i].topology, topo) == 0) {
			if (chips != NULL)
				*chips = dims[0] * dims[1];
			return 0;
		}
		n = snprintf(list + o, sizeof list - o, "%s%s", o ? ", " : "",
		    topos2d[i].topology);
		if (n > 0 && (size_t)n < sizeof list - o)
			o += (size_t)n;
	}
	return tpu_error(err, TPU_E_USAGE,
	    "topology '%s' is not a %s slice (valid: %s)", SHOW(topo), g->name,
	    list);
}

int
catalog_accel_from_topology(const char *gen, const char *topo,
    struct catalog_accel *a, struct tpu_err *err)
{
	const struct catalog_gen *g;
	char list[128], shown[96];
	int chips = 0;

	g = catalog_gen_find(gen);
	if (g == NULL) {
		gen_names(list, sizeof list);
		return tpu_error(err, TPU_E_USAGE,
		    "unknown TPU generation '%s' (known: %s)", SHOW(gen), list);
	}
	if (catalog_topology_check(g, topo, &chips, err) != 0)
		return err->code;
	fill_accel(g, chips, a);
	snprintf(a->topology, sizeof a->topology, "%s", topo);
	return 0;
}

int
catalog_accel_topology_match(
    const struct catalog_accel *a, const char *topo, struct tpu_err *err)
{
	char shown[96];
	int chips = 0;

	if (catalog_topology_check(a->gen, topo, &chips, err) != 0)
		return err->code;
	if (chips != a->chips)
		return tpu_error(err, TPU_E_USAGE,
		    "topology '%s' has %d chips but accelerator type %s has %d "
		    "(its topology is %s)",
		    SHOW(topo), chips, a->type, a->chips, a->topology);
	return 0;
}

const struct catalog_zone *
catalog_zone_at(size_t i)
{
	return i < nitems(zones) ? &zones[i] : NULL;
}

const struct catalog_zone *
catalog_zone_find(const char *name)
{
	size_t i;

	for (i = 0; i < nitems(zones); i++) {
		if (strcmp(zones[i].name, name) == 0)
			return &zones[i];
	}
	return NULL;
}

int
catalog_zone_offers(const struct catalog_zone *z, const struct catalog_gen *g)
{
	size_t i;

	for (i = 0; i < nitems(z->gens) && z->gens[i] != NULL; i++) {
		if (strcmp(z->gens[i], g->name) == 0)
			return 1;
	}
	return 0;
}

int
catalog_runtime_known(const struct catalog_gen *g, const char *rv)
{
	size_t i;

	for (i = 0; g->runtimes[i] != NULL; i++) {
		if (strcmp(g->runtimes[i], rv) == 0)
			return 1;
	}
	return 0;
}

const char *
catalog_runtime_at(size_t want)
{
	size_t gi, ri, n = 0;

	for (gi = 0; gi < nitems(gens); gi++) {
		for (ri = 0; gens[gi].runtimes[ri] != NULL; ri++) {
			const char *rv = gens[gi].runtimes[ri];
			size_t gj, rj;
			int seen = 0;

			for (gj = 0; gj <= gi && !seen; gj++) {
				for (rj = 0; gens[gj].runtimes[rj] != NULL &&
				             (gj < gi || rj < ri);
				     rj++) {
					if (strcmp(gens[gj].runtimes[rj], rv) ==
					    0) {
						seen = 1;
						break;
					}
				}
			}
			if (!seen && n++ == want)
				return rv;
		}
	}
	return NULL;
}

int
catalog_node_name_validate_len(const char *s, size_t len, struct tpu_err *err)
{
	char shown[96];
	size_t i;
	int ok = len >= 1 && len <= 63 && s[0] >= 'a' && s[0] <= 'z' &&
	         s[len - 1] != '-';

	for (i = 0; ok && i < len; i++) {
		if (!((s[i] >= 'a' && s[i] <= 'z') ||
		        (s[i] >= '0' && s[i] <= '9') || s[i] == '-'))
			ok = 0;
	}
	if (ok)
		return 0;
	return tpu_error(err, TPU_E_USAGE,
	    "name '%s' is not valid: use 1-63 lower-case letters, digits and "
	    "hyphens, starting with a letter and not ending with a hyphen "
	    "(RFC 1035)",
	    show(s, len, shown, sizeof shown));
}

int
catalog_node_name_validate(const char *s, struct tpu_err *err)
{
	return catalog_node_name_validate_len(s, strlen(s), err);
}

static size_t
span(const char *s, const char *set)
{
	return strspn(s, set);
}

#define LOWER "abcdefghijklmnopqrstuvwxyz"
#define DIGIT "0123456789"

int
catalog_zone_validate(const char *z, struct tpu_err *err)
{
	char shown[96];
	const char *p = z;
	size_t n;
	int ok = 0;

	/* [a-z]+ - [a-z]+[0-9]+ - [a-z] */
	n = span(p, LOWER);
	if (n > 0 && p[n] == '-') {
		p += n + 1;
		n = span(p, LOWER);
		if (n > 0) {
			p += n;
			n = span(p, DIGIT);
			if (n > 0 && p[n] == '-') {
				p += n + 1;
				ok = p[0] >= 'a' && p[0] <= 'z' && p[1] == '\0';
			}
		}
	}
	if (ok && strlen(z) <= 63)
		return 0;
	return tpu_error(err, TPU_E_USAGE,
	    "zone '%s' is not valid: use REGION-ZONE in lower case, e.g. "
	    "us-central2-b or europe-west4-a",
	    SHOW(z));
}

int
catalog_project_validate(const char *p, struct tpu_err *err)
{
	char shown[96];
	const char *id = p, *colon = strrchr(p, ':');
	size_t len;
	int ok = 1;

	if (colon != NULL) {
		size_t dl = (size_t)(colon - p);

		/* Domain-scoped: "example.com:my-project". */
		if (dl == 0 || dl > 253 || span(p, LOWER DIGIT ".-") < dl ||
		    strchr(p, '.') == NULL || strchr(p, '.') > colon)
			ok = 0;
		id = colon + 1;
	}
	len = strlen(id);
	if (len < 6 || len > 30 || id[0] < 'a' || id[0] > 'z' ||
	    id[len - 1] == '-' || span(id, LOWER DIGIT "-") != len)
		ok = 0;
	if (ok)
		return 0;
	return tpu_error(err, TPU_E_USAGE,
	    "project '%s' is not valid: project ids are 6-30 lower-case "
	    "letters, digits and hyphens, starting with a letter and not "
	    "ending with a hyphen",
	    SHOW(p));
}

int
catalog_label_validate(const char *key, const char *value, struct tpu_err *err)
{
	char shown[96], shown2[96];
	size_t kl = strlen(key), vl = strlen(value);

	if (kl < 1 || kl > 63 || key[0] < 'a' || key[0] > 'z' ||
	    span(key, LOWER DIGIT "_-") != kl)
		return tpu_error(err, TPU_E_USAGE,
		    "label key '%s' is not valid: keys are 1-63 lower-case "
		    "letters, digits, '_' or '-', starting with a letter",
		    SHOW(key));
	if (vl > 63 || span(value, LOWER DIGIT "_-") != vl)
		return tpu_error(err, TPU_E_USAGE,
		    "label '%s': value '%s' is not valid: values are 0-63 "
		    "lower-case letters, digits, '_' or '-'",
		    key, show(value, vl, shown2, sizeof shown2));
	return 0;
}

#define MAX_LABELS 64

int
catalog_labels_validate(const cJSON *labels, struct tpu_err *err)
{
	const cJSON *a, *b;
	int n = 0;

	if (labels == NULL || cJSON_IsNull(labels))
		return 0;
	if (!cJSON_IsObject(labels))
		return tpu_error(err, TPU_E_USAGE,
		    "labels must be an object of key/value strings");
	cJSON_ArrayForEach(a, labels)
	{
		if (++n > MAX_LABELS)
			return tpu_error(err, TPU_E_USAGE,
			    "too many labels: at most %d are allowed",
			    MAX_LABELS);
		if (a->string == NULL || !cJSON_IsString(a))
			return tpu_error(err, TPU_E_USAGE,
			    "label '%s': the value must be a string",
			    a->string != NULL ? a->string : "");
		if (catalog_label_validate(a->string, a->valuestring, err) != 0)
			return err->code;
		for (b = labels->child; b != a; b = b->next) {
			if (strcmp(a->string, b->string) == 0)
				return tpu_error(err, TPU_E_USAGE,
				    "label key '%s' is given twice: keys must "
				    "be unique",
				    a->string);
		}
	}
	return 0;
}

int
catalog_labels_parse(const char *spec, cJSON **out, struct tpu_err *err)
{
	char *copy = xstrdup(spec), *p = copy, *comma, *eq;
	char shown[96];
	cJSON *obj = cJSON_CreateObject();
	int rc = 0;

	*out = NULL;
	while (*spec != '\0') {
		comma = strchr(p, ',');
		if (comma != NULL)
			*comma = '\0';
		eq = strchr(p, '=');
		if (eq == NULL) {
			rc = tpu_error(err, TPU_E_USAGE,
			    "label '%s' is not valid: use KEY=VALUE (the value "
			    "may be empty)",
			    SHOW(p));
			goto out;
		}
		*eq = '\0';
		cJSON_AddItemToObject(obj, p, cJSON_CreateString(eq + 1));
		if (comma == NULL)
			break;
		p = comma + 1;
	}
	rc = catalog_labels_validate(obj, err);
out:
	free(copy);
	if (rc != 0)
		cJSON_Delete(obj);
	else
		*out = obj;
	return rc;
}

static int
b64_ok(const char *s, size_t n)
{
	size_t i;

	if (n == 0)
		return 0;
	for (i = 0; i < n; i++) {
		if (tpu_b64_value((unsigned char)s[i], 0) < 0 && s[i] != '=')
			return 0;
	}
	return 1;
}

int
catalog_ssh_key_entry_validate(const char *e, struct tpu_err *err)
{
	static const char *const types[] = { "ssh-ed25519", "ssh-rsa",
		"ecdsa-sha2-nistp256", "ecdsa-sha2-nistp384",
		"ecdsa-sha2-nistp521", "sk-ssh-ed25519@openssh.com",
		"sk-ecdsa-sha2-nistp256@openssh.com" };
	char shown[96];
	const char *colon, *sp, *key, *end;
	size_t ul, i, tl;
	int known = 0;

	if (strpbrk(e, "\r\n") != NULL)
		return tpu_error(err, TPU_E_USAGE,
		    "ssh-keys entry '%s' contains a line break: one entry "
		    "must stay one line",
		    SHOW(e));
	colon = strchr(e, ':');
	ul = colon != NULL ? (size_t)(colon - e) : 0;
	if (colon == NULL || ul == 0 || ul > 32 || e[0] == '-' ||
	    span(e, LOWER DIGIT "ABCDEFGHIJKLMNOPQRSTUVWXYZ_.-") < ul)
		return tpu_error(err, TPU_E_USAGE,
		    "ssh-keys entry '%s' is not valid: use USER:KEYTYPE KEY "
		    "[COMMENT] with a user name of 1-32 letters, digits, '_', "
		    "'.' or '-'",
		    SHOW(e));
	sp = strchr(colon + 1, ' ');
	tl = sp != NULL ? (size_t)(sp - colon - 1) : 0;
	for (i = 0; sp != NULL && i < nitems(types); i++) {
		if (strlen(types[i]) == tl &&
		    strncmp(types[i], colon + 1, tl) == 0)
			known = 1;
	}
	if (!known)
		return tpu_error(err, TPU_E_USAGE,
		    "ssh-keys entry '%s' has no known key type (ssh-ed25519, "
		    "ecdsa-sha2-nistp256, ssh-rsa, ...)",
		    SHOW(e));
	key = sp + 1;
	end = strchr(key, ' ');
	if (!b64_ok(key, end != NULL ? (size_t)(end - key) : strlen(key)))
		return tpu_error(err, TPU_E_USAGE,
		    "ssh-keys entry '%s' is not valid: the key must be base64",
		    SHOW(e));
	return 0;
}

#define MAX_METADATA_VALUE (256 * 1024)

int
catalog_metadata_validate(
    const char *key, const char *value, int raw, struct tpu_err *err)
{
	char shown[96], line[4096];
	const char *p, *nl;
	size_t kl = strlen(key), i, n;
	int known = 0;

	if (kl < 1 || kl > 128 ||
	    span(key, LOWER DIGIT "ABCDEFGHIJKLMNOPQRSTUVWXYZ_-") != kl)
		return tpu_error(err, TPU_E_USAGE,
		    "metadata key '%s' is not valid: keys are 1-128 letters, "
		    "digits, '_' or '-'",
		    SHOW(key));
	for (i = 0; i < nitems(known_metadata); i++) {
		if (strcmp(known_metadata[i], key) == 0)
			known = 1;
	}
	if (!known && !raw)
		return tpu_error(err, TPU_E_USAGE,
		    "metadata key '%s' is not one tpuctl knows (ssh-keys, "
		    "startup-script, shutdown-script, enable-oslogin, ...): "
		    "pass --metadata-raw to send it anyway",
		    SHOW(key));
	if (strlen(value) > MAX_METADATA_VALUE)
		return tpu_error(err, TPU_E_USAGE,
		    "metadata '%s': the value is larger than 256 KiB", key);
	if (strcmp(key, "ssh-keys") != 0)
		return 0;
	if (strchr(value, '\r') != NULL)
		return tpu_error(err, TPU_E_USAGE,
		    "metadata ssh-keys contains a carriage return: entries are "
		    "separated by LF only");
	for (p = value; *p != '\0'; p = nl != NULL ? nl + 1 : p + n) {
		nl = strchr(p, '\n');
		n = nl != NULL ? (size_t)(nl - p) : strlen(p);
		if (n == 0)
			continue;
		if (n >= sizeof line)
			return tpu_error(err, TPU_E_USAGE,
			    "metadata ssh-keys: an entry is longer than %zu "
			    "bytes",
			    sizeof line - 1);
		memcpy(line, p, n);
		line[n] = '\0';
		if (catalog_ssh_key_entry_validate(line, err) != 0)
			return err->code;
		if (nl == NULL)
			break;
	}
	return 0;
}

int
catalog_metadata_validate_obj(const cJSON *md, int raw, struct tpu_err *err)
{
	const cJSON *it;

	if (md == NULL || cJSON_IsNull(md))
		return 0;
	if (!cJSON_IsObject(md))
		return tpu_error(err, TPU_E_USAGE,
		    "metadata must be an object of key/value strings");
	cJSON_ArrayForEach(it, md)
	{
		if (it->string == NULL || !cJSON_IsString(it))
			return tpu_error(err, TPU_E_USAGE,
			    "metadata '%s': the value must be a string",
			    it->string != NULL ? it->string : "");
		if (catalog_metadata_validate(
		        it->string, it->valuestring, raw, err) != 0)
			return err->code;
	}
	return 0;
}
