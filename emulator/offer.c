/*
 * The emulator's Cloud TPU offering (see offer.h), written from Google's
 * documentation:
 *   - generations, chips per host and TensorCores per chip: the "System
 *     architecture" table of each version page,
 *     https://cloud.google.com/tpu/docs/{v2,v3,v4,v5e,v5p,v6e}: v2, v3,
 *     v4 and v5p have 2 TensorCores per chip and name their types by
 *     cores (v4-8 is 4 chips); v5e and v6e have 1 and name them by chips;
 *     every multi-host slice has 4 chips per host; v5e and v6e also
 *     have single-host slices of up to 8 chips, the others of 4;
 *   - the 2-D slice shapes: the "Configurations" tables of the v2, v3,
 *     v5e and v6e pages; the 3-D ones (v4, v5p): 2x2x1, 2x2x2, 2x2x4,
 *     2x4x4, then any AxBxC of multiples of 4 up to the pod (v4: 16 per
 *     dimension, 4096 chips; v5p: 8960 chips, at most 28 per dimension),
 *     "Topology" sections of the v4 and v5p pages;
 *   - AcceleratorConfig.Type numbers: google/cloud/tpu/v2alpha1/
 *     cloud_tpu.proto (V2 = 2, V3 = 4, V4 = 7, V5LITE_POD = 9, V5P = 10,
 *     V6E = 11); tpu.v2.json's enum lists V2..V4, tpu.v2alpha1.json adds
 *     V5P; the service accepts the later names too;
 *   - zones: "TPU regions and zones",
 *     https://cloud.google.com/tpu/docs/regions-zones;
 *   - runtime versions: "TPU software versions",
 *     https://cloud.google.com/tpu/docs/runtimes.
 * acceleratorTypes.list answers {name, type, acceleratorConfigs[{type,
 * topology}]} and runtimeVersions.list {name, version} (the AcceleratorType
 * and RuntimeVersion schemas of tpu.v2.json).  A snapshot: Google adds
 * zones and sizes over time.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "offer.h"

#define NITEMS(a) (sizeof(a) / sizeof((a)[0]))

static const char *const rv_v2v3[] = { "tpu-ubuntu2204-base", "tpu-vm-base",
	"tpu-vm-tf-2.16.1-pjrt", "tpu-vm-tf-2.16.1-pod-pjrt",
	"tpu-vm-tf-2.15.0-pjrt", "tpu-vm-tf-2.15.0-pod-pjrt", "tpu-vm-pt-2.0",
	"tpu-vm-cos-stable", NULL };
static const char *const rv_v4[] = { "tpu-ubuntu2204-base", "tpu-vm-v4-base",
	"tpu-vm-v4-pt-2.0", "tpu-vm-tf-2.16.1-pjrt",
	"tpu-vm-tf-2.16.1-pod-pjrt", "tpu-vm-tf-2.15.0-pjrt",
	"tpu-vm-tf-2.15.0-pod-pjrt", "tpu-vm-base", "tpu-vm-cos-stable", NULL };
static const char *const rv_v5e[] = { "v2-alpha-tpuv5-lite",
	"tpu-ubuntu2204-base", NULL };
static const char *const rv_v5p[] = { "v2-alpha-tpuv5", "tpu-ubuntu2204-base",
	"tpu-vm-cos-stable", NULL };
static const char *const rv_v6e[] = { "v2-alpha-tpuv6e", "tpu-ubuntu2204-base",
	NULL };

/* name alias config num cores ndims counts_cores 1-host per-host maxdim
 * maxchips runtimes */
static const struct offer_gen gens[] = {
	{ "v2", NULL, "V2", 2, 2, 2, 1, 4, 4, 0, 0, rv_v2v3 },
	{ "v3", NULL, "V3", 4, 2, 2, 1, 4, 4, 0, 0, rv_v2v3 },
	{ "v4", NULL, "V4", 7, 2, 3, 1, 4, 4, 16, 4096, rv_v4 },
	{ "v5litepod", "v5e", "V5LITE_POD", 9, 1, 2, 0, 8, 4, 0, 0, rv_v5e },
	{ "v5p", NULL, "V5P", 10, 2, 3, 1, 4, 4, 28, 8960, rv_v5p },
	{ "v6e", NULL, "V6E", 11, 1, 2, 0, 8, 4, 0, 0, rv_v6e },
};

/* The 2-D slices: generation, size (the number in the type), topology. */
static const struct {
	const char *gen;
	int size;
	const char *topology;
} shapes2d[] = {
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

/* The 3-D shapes smaller than one 4x4x4 cube, sorted. */
static const int small3d[][3] = { { 1, 2, 2 }, { 2, 2, 2 }, { 2, 2, 4 },
	{ 2, 4, 4 } };

static const struct offer_zone zones[] = {
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

const struct offer_gen *
offer_gen_at(size_t i)
{
	return i < NITEMS(gens) ? &gens[i] : NULL;
}

const struct offer_gen *
offer_gen_find(const char *name)
{
	size_t i;

	for (i = 0; name != NULL && i < NITEMS(gens); i++)
		if (strcmp(gens[i].name, name) == 0 ||
		    (gens[i].alias != NULL && strcmp(gens[i].alias, name) == 0))
			return &gens[i];
	return NULL;
}

const struct offer_gen *
offer_gen_by_config(const char *name, int num)
{
	size_t i;

	for (i = 0; i < NITEMS(gens); i++)
		if (name != NULL ? strcmp(gens[i].config, name) == 0
		                 : gens[i].config_num == num)
			return &gens[i];
	return NULL;
}

/* 1 when the sorted shape a <= b <= c is a slice of g. */
static int
shape3d_ok(const struct offer_gen *g, int a, int b, int c)
{
	size_t i;

	for (i = 0; i < NITEMS(small3d); i++)
		if (a == small3d[i][0] && b == small3d[i][1] &&
		    c == small3d[i][2])
			return 1;
	return a % 4 == 0 && b % 4 == 0 && c % 4 == 0 && c <= g->max_dim &&
	       (long)a * b * c <= g->max_chips;
}

/* The i-th sorted 3-D shape of that many chips, most cubic first. */
static int
shape3d_at(const struct offer_gen *g, int chips, size_t want, int d[3])
{
	size_t n = 0;
	int c, b, a;

	/* Ascending largest dimension, then middle one: most cubic first. */
	for (c = 1; c <= g->max_dim && chips > 0; c++) {
		for (b = 1; b <= c; b++) {
			if (chips % (b * c) != 0)
				continue;
			a = chips / (b * c);
			if (a > b || !shape3d_ok(g, a, b, c))
				continue;
			if (n++ == want) {
				d[0] = a;
				d[1] = b;
				d[2] = c;
				return 0;
			}
		}
	}
	return -1;
}

static void
shape3d_str(const int d[3], char *out, size_t len)
{
	/* Google writes the single-host v4 and v5p shape 2x2x1. */
	if (d[0] == 1 && d[1] == 2 && d[2] == 2)
		snprintf(out, len, "2x2x1");
	else
		snprintf(out, len, "%dx%dx%d", d[0], d[1], d[2]);
}

static int
chips_of_size(const struct offer_gen *g, int size)
{
	return g->counts_cores ? size / g->cores_per_chip : size;
}

/* 1 when g has a slice of that many chips. */
static int
chips_offered(const struct offer_gen *g, int chips)
{
	int d[3];
	size_t i;

	if (g->ndims == 3)
		return shape3d_at(g, chips, 0, d) == 0;
	for (i = 0; i < NITEMS(shapes2d); i++)
		if (strcmp(shapes2d[i].gen, g->name) == 0 &&
		    chips_of_size(g, shapes2d[i].size) == chips)
			return 1;
	return 0;
}

int
offer_size_at(const struct offer_gen *g, size_t want)
{
	size_t i, n = 0;
	int chips;

	if (g->ndims == 2) {
		for (i = 0; i < NITEMS(shapes2d); i++)
			if (strcmp(shapes2d[i].gen, g->name) == 0 &&
			    n++ == want)
				return shapes2d[i].size;
		return 0;
	}
	/* Below one cube the small shapes, then whole 4x4x4 cubes. */
	for (chips = 1; chips <= g->max_chips;
	     chips = chips < 64 ? chips + 1 : chips + 64) {
		if (chips > 32 && chips % 64 != 0)
			continue;
		if (chips_offered(g, chips) && n++ == want)
			return g->counts_cores ? chips * g->cores_per_chip
			                       : chips;
	}
	return 0;
}

int
offer_topology_at(
    const struct offer_accel *a, size_t want, char *out, size_t outlen)
{
	size_t i, n = 0;
	int d[3];

	if (a->gen->ndims == 3) {
		if (shape3d_at(a->gen, a->chips, want, d) != 0)
			return -1;
		shape3d_str(d, out, outlen);
		return 0;
	}
	for (i = 0; i < NITEMS(shapes2d); i++)
		if (strcmp(shapes2d[i].gen, a->gen->name) == 0 &&
		    shapes2d[i].size == a->size && n++ == want) {
			snprintf(out, outlen, "%s", shapes2d[i].topology);
			return 0;
		}
	return -1;
}

static void
fill(const struct offer_gen *g, int chips, struct offer_accel *a)
{
	memset(a, 0, sizeof(*a));
	a->gen = g;
	a->chips = chips;
	a->size = g->counts_cores ? chips * g->cores_per_chip : chips;
	a->hosts = chips <= g->single_host_max ? 1 : chips / g->chips_per_host;
	snprintf(a->type, sizeof(a->type), "%s-%d", g->name, a->size);
	offer_topology_at(a, 0, a->topology, sizeof(a->topology));
}

static int fail(char *msg, size_t len, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static int
fail(char *msg, size_t len, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, len, fmt, ap);
	va_end(ap);
	return -1;
}

/* "v2, v3, ..." and "8, 32, ..." for messages. */
static void
gen_list(char *out, size_t len)
{
	size_t i, o = 0;

	out[0] = '\0';
	for (i = 0; i < NITEMS(gens); i++) {
		int n = snprintf(
		    out + o, len - o, "%s%s", i ? ", " : "", gens[i].name);

		if (n < 0 || (size_t)n >= len - o)
			break;
		o += (size_t)n;
	}
}

static void
size_list(const struct offer_gen *g, char *out, size_t len)
{
	size_t i, o = 0;
	int s;

	out[0] = '\0';
	for (i = 0; (s = offer_size_at(g, i)) != 0; i++) {
		int n = snprintf(out + o, len - o, "%s%d", i ? ", " : "", s);

		if (n < 0 || (size_t)n >= len - o)
			break;
		o += (size_t)n;
	}
}

/* A positive decimal without sign or leading zero, at most max; or -1. */
static int
number(const char *s, size_t len, int max)
{
	long v = 0;
	size_t i;

	if (len == 0 || len > 7 || s[0] == '0')
		return -1;
	for (i = 0; i < len; i++) {
		if (s[i] < '0' || s[i] > '9')
			return -1;
		v = v * 10 + (s[i] - '0');
	}
	return v > max ? -1 : (int)v;
}

static int
parse_strict(const char *type, struct offer_accel *a, char *msg, size_t len)
{
	const struct offer_gen *g;
	const char *dash = strchr(type, '-');
	char gen[32], list[512];
	int size;

	if (*type == '\0')
		return fail(msg, len,
		    "accelerator type is empty: use GENERATION-SIZE, e.g. "
		    "v4-8 or v5litepod-16");
	if (dash == NULL || dash == type || (size_t)(dash - type) >= sizeof gen)
		return fail(msg, len,
		    "accelerator type '%.64s' is not GENERATION-SIZE, e.g. "
		    "v4-8 or v5litepod-16",
		    type);
	snprintf(gen, sizeof gen, "%.*s", (int)(dash - type), type);
	if ((g = offer_gen_find(gen)) == NULL) {
		gen_list(list, sizeof list);
		return fail(msg, len,
		    "accelerator type '%.64s': unknown TPU generation '%s' "
		    "(offered: %s)",
		    type, gen, list);
	}
	if (strcmp(g->name, gen) != 0)
		return fail(msg, len,
		    "accelerator type '%.64s': the generation is named '%s' "
		    "(did you mean '%s%.16s'?)",
		    type, g->name, g->name, dash);
	if ((size = number(dash + 1, strlen(dash + 1), 1000000)) < 0)
		return fail(msg, len,
		    "accelerator type '%.64s': the size after '%s-' must be a "
		    "positive integer, e.g. %s-%d",
		    type, g->name, g->name, offer_size_at(g, 0));
	if (g->counts_cores && size % g->cores_per_chip != 0)
		return fail(msg, len,
		    "accelerator type '%.64s': %s sizes count TensorCores (%d "
		    "per chip), so %d is not a whole number of chips",
		    type, g->name, g->cores_per_chip, size);
	if (!chips_offered(g, chips_of_size(g, size))) {
		size_list(g, list, sizeof list);
		return fail(msg, len,
		    "accelerator type '%.64s': no %s slice of that size (valid "
		    "sizes: %s)",
		    type, g->name, list);
	}
	fill(g, chips_of_size(g, size), a);
	return 0;
}

int
offer_accel_parse(
    const char *type, struct offer_accel *a, char *msg, size_t len)
{
	struct offer_accel tmp;
	char norm[64], ignored[16];
	size_t i, b = 0, e = strlen(type), n = 0;
	int odd = 0;

	for (i = 0; type[i] != '\0'; i++)
		if (!((type[i] >= 'a' && type[i] <= 'z') ||
		        (type[i] >= '0' && type[i] <= '9') || type[i] == '-'))
			odd = 1;
	if (!odd)
		return parse_strict(type, a, msg, len);
	/* Upper case or blanks: refused, with a hint when that is all. */
	while (b < e && (type[b] == ' ' || type[b] == '\t'))
		b++;
	while (e > b && (type[e - 1] == ' ' || type[e - 1] == '\t'))
		e--;
	for (i = b; i < e && n + 1 < sizeof norm; i++)
		norm[n++] = type[i] >= 'A' && type[i] <= 'Z'
		                ? (char)(type[i] - 'A' + 'a')
		                : type[i];
	norm[n] = '\0';
	if (n > 0 && i == e &&
	    parse_strict(norm, &tmp, ignored, sizeof ignored) == 0)
		return fail(msg, len,
		    "accelerator type '%.64s' is not valid: names are lower "
		    "case without blanks (did you mean '%s'?)",
		    type, tmp.type);
	return fail(msg, len,
	    "accelerator type '%.64s' is not valid: use GENERATION-SIZE in "
	    "lower case, e.g. v4-8 or v5litepod-16",
	    type);
}

/* "AxB" or "AxBxC" into d; the number of dimensions, or -1. */
static int
topo_parse(const char *s, int d[3])
{
	const char *x;
	int n = 0, v;

	for (;;) {
		x = strchr(s, 'x');
		if (n == 3)
			return -1;
		v = number(s, x != NULL ? (size_t)(x - s) : strlen(s), 4096);
		if (v < 0)
			return -1;
		d[n++] = v;
		if (x == NULL)
			return n;
		s = x + 1;
	}
}

int
offer_accel_from_topology(const struct offer_gen *g, const char *topo,
    struct offer_accel *a, char *msg, size_t len)
{
	const char *eg = g->ndims == 3 ? "2x2x1 or 4x4x8" : "2x2 or 16x16";
	int d[3], n, t;
	size_t i;

	n = topo_parse(topo, d);
	if (n < 2)
		return fail(msg, len,
		    "topology '%.64s' is not valid: use %s positive integers "
		    "joined by 'x', e.g. %s",
		    topo, g->ndims == 3 ? "three" : "two", eg);
	if (n != g->ndims)
		return fail(msg, len,
		    "topology '%.64s' is not valid for %s: %s topologies have "
		    "%d dimensions, e.g. %s",
		    topo, g->name, g->name, g->ndims, eg);
	if (n == 3) {
		int s[3] = { d[0], d[1], d[2] };

		/* Sort the three dimensions. */
		if (s[0] > s[1])
			t = s[0], s[0] = s[1], s[1] = t;
		if (s[1] > s[2])
			t = s[1], s[1] = s[2], s[2] = t;
		if (s[0] > s[1])
			t = s[0], s[0] = s[1], s[1] = t;
		if (!shape3d_ok(g, s[0], s[1], s[2]))
			return fail(msg, len,
			    "topology '%.64s' is not a %s slice: use 2x2x1, "
			    "2x2x2, 2x2x4, 2x4x4, or dimensions that are "
			    "multiples of 4 up to %d (at most %d chips)",
			    topo, g->name, g->max_dim, g->max_chips);
		fill(g, d[0] * d[1] * d[2], a);
		snprintf(a->topology, sizeof a->topology, "%s", topo);
		return 0;
	}
	for (i = 0; i < NITEMS(shapes2d); i++)
		if (strcmp(shapes2d[i].gen, g->name) == 0 &&
		    strcmp(shapes2d[i].topology, topo) == 0) {
			fill(g, d[0] * d[1], a);
			snprintf(a->topology, sizeof a->topology, "%s", topo);
			return 0;
		}
	return fail(
	    msg, len, "topology '%.64s' is not a %s slice", topo, g->name);
}

int
offer_accel_set_topology(
    struct offer_accel *a, const char *topo, char *msg, size_t len)
{
	struct offer_accel t;

	if (offer_accel_from_topology(a->gen, topo, &t, msg, len) != 0)
		return -1;
	if (t.chips != a->chips)
		return fail(msg, len,
		    "topology '%.64s' has %d chips, but %s has %d", topo,
		    t.chips, a->type, a->chips);
	snprintf(a->topology, sizeof a->topology, "%s", topo);
	return 0;
}

const struct offer_zone *
offer_zone_at(size_t i)
{
	return i < NITEMS(zones) ? &zones[i] : NULL;
}

const struct offer_zone *
offer_zone_find(const char *name)
{
	size_t i;

	for (i = 0; name != NULL && i < NITEMS(zones); i++)
		if (strcmp(zones[i].name, name) == 0)
			return &zones[i];
	return NULL;
}

int
offer_zone_has(const struct offer_zone *z, const struct offer_gen *g)
{
	size_t i;

	for (i = 0; z != NULL && g != NULL && i < NITEMS(z->gens) &&
	            z->gens[i] != NULL;
	     i++)
		if (strcmp(z->gens[i], g->name) == 0)
			return 1;
	return 0;
}

int
offer_runtime_known(const struct offer_gen *g, const char *rv)
{
	size_t i;

	for (i = 0; g != NULL && g->rvs[i] != NULL; i++)
		if (strcmp(g->rvs[i], rv) == 0)
			return 1;
	return 0;
}

const char *
offer_runtime_at(size_t want)
{
	size_t gi, i, j, k, n = 0;

	for (gi = 0; gi < NITEMS(gens); gi++) {
		for (i = 0; gens[gi].rvs[i] != NULL; i++) {
			int seen = 0;

			/* First appearance only. */
			for (j = 0; j <= gi && !seen; j++)
				for (k = 0; gens[j].rvs[k] != NULL &&
				            (j < gi || k < i);
				     k++)
					if (strcmp(gens[j].rvs[k],
					        gens[gi].rvs[i]) == 0) {
						seen = 1;
						break;
					}
			if (!seen && n++ == want)
				return gens[gi].rvs[i];
		}
	}
	return NULL;
}
