/*
 * Memory planning (see plan.h).  Per parameter, in bytes, with D the
 * dtype's size (fp32 4, bf16 2, fp16 2, int8 1):
 *
 *   weights      D
 *   gradients    D                          (training)
 *   master       4 when D < 4, else 0       (training, unless optimizer
 *                                            none: fp32 master weights)
 *   optimizer    adam/adamw 8 (fp32 m and v), sgd 4 (fp32 momentum),
 *                adafactor 8/H (a factored fp32 second moment: one row
 *                and one column per HxH matrix; H = --hidden, else
 *                1024), none 0
 *
 * so mixed-precision Adam is 2 + 2 + 4 + 8 = 16 bytes per parameter.
 * Activations, only when --seq-len S, --batch B, --layers L and --hidden
 * H are all given: training keeps 34 x S x B x H bytes per layer with
 * 16-bit activations (Korthikanti et al., "Reducing Activation
 * Recomputation in Large Transformer Models", 2022, with selective
 * recomputation of the attention scores), scaled by D/2; inference keeps
 * the KV cache, 2 x L x S x B x H x D.  The headroom multiplies the total:
 * required = ceil(total x (100 + PCT) / 100).
 */
#include <ctype.h>
#include <errno.h>
#include <math.h> /* isfinite */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "plan.h"
#include "util.h"

#define PLAN_MAX_PARAMS 1000000000000000ULL /* 10^15 */
#define ADAFACTOR_DEFAULT_HIDDEN 1024

static const char *const dtype_names[] = { "fp32", "bf16", "fp16", "int8" };
static const int dtype_sizes[] = { 4, 2, 2, 1 };
static const char *const opt_names[] = { "adam", "adamw", "sgd", "adafactor",
	"none" };

void
plan_input_init(struct plan_input *in)
{
	memset(in, 0, sizeof *in);
	in->dtype = PLAN_BF16;
	in->optimizer = PLAN_OPT_ADAM;
	in->headroom_pct = 10;
}

int
plan_parse_dtype(const char *s, enum plan_dtype *out, struct tpu_err *err)
{
	size_t i;

	for (i = 0; i < nitems(dtype_names); i++) {
		if (strcmp(s, dtype_names[i]) == 0) {
			*out = (enum plan_dtype)i;
			return 0;
		}
	}
	return tpu_error(
	    err, TPU_E_USAGE, "--dtype '%s': use fp32, bf16, fp16 or int8", s);
}

int
plan_parse_optimizer(
    const char *s, enum plan_optimizer *out, struct tpu_err *err)
{
	size_t i;

	for (i = 0; i < nitems(opt_names); i++) {
		if (strcmp(s, opt_names[i]) == 0) {
			*out = (enum plan_optimizer)i;
			return 0;
		}
	}
	return tpu_error(err, TPU_E_USAGE,
	    "--optimizer '%s': use adam, adamw, sgd, adafactor or none", s);
}

int
plan_parse_count(
    const char *flag, const char *s, uint64_t *out, struct tpu_err *err)
{
	const char *p = s;
	char *end;
	double v, mul = 1;

	/* strtod alone would take "inf", "nan", hex and leading blanks. */
	if (*p == '\0' || !(isdigit((unsigned char)*p) || *p == '.') ||
	    strpbrk(p, "xXpP") != NULL)
		goto bad;
	errno = 0;
	v = strtod(p, &end);
	if (end == p || errno != 0 || !isfinite(v))
		goto bad;
	switch (*end) {
	case '\0':
		break;
	case 'k':
	case 'K':
		mul = 1e3;
		end++;
		break;
	case 'm':
	case 'M':
		mul = 1e6;
		end++;
		break;
	case 'b':
	case 'B':
	case 'g':
	case 'G':
		mul = 1e9;
		end++;
		break;
	case 't':
	case 'T':
		mul = 1e12;
		end++;
		break;
	default:
		goto bad;
	}
	if (*end != '\0')
		goto bad;
	v = v * mul;
	if (v < 0.5)
		return tpu_error(
		    err, TPU_E_USAGE, "%s '%s': must be at least 1", flag, s);
	if (v > (double)PLAN_MAX_PARAMS)
		return tpu_error(
		    err, TPU_E_USAGE, "%s '%s': at most 1e15", flag, s);
	*out = (uint64_t)(v + 0.5); /* the nearest integer */
	return 0;
bad:
	return tpu_error(err, TPU_E_USAGE,
	    "%s '%s': expected a positive number such as 7000000000, 7e9, "
	    "7B or 350M",
	    flag, s);
}

const char *
plan_dtype_name(enum plan_dtype d)
{
	return dtype_names[d];
}

const char *
plan_optimizer_name(enum plan_optimizer o)
{
	return opt_names[o];
}

int
plan_dtype_bytes(enum plan_dtype d)
{
	return dtype_sizes[d];
}

/* a * b into *out; 1 on overflow. */
static int
mul_ovf(uint64_t a, uint64_t b, uint64_t *out)
{
	return __builtin_mul_overflow(a, b, out);
}

int
plan_compute(
    const struct plan_input *in, struct plan_result *r, struct tpu_err *err)
{
	uint64_t n = in->params, d = (uint64_t)plan_dtype_bytes(in->dtype);
	uint64_t act = 0, sum, h;
	int nshape;

	memset(r, 0, sizeof *r);
	if (n == 0 || n > PLAN_MAX_PARAMS)
		return tpu_error(err, TPU_E_USAGE,
		    "--params: a count between 1 and 1e15 is required");
	if (in->headroom_pct < 0 || in->headroom_pct > 1000)
		return tpu_error(err, TPU_E_USAGE,
		    "--headroom %d: use a percentage from 0 to 1000",
		    in->headroom_pct);
	if (in->inference && in->optimizer_given)
		return tpu_error(err, TPU_E_USAGE,
		    "--optimizer has no meaning with --inference (no "
		    "gradients or optimizer state)");
	if (!in->inference && in->dtype == PLAN_INT8)
		return tpu_error(err, TPU_E_USAGE,
		    "--dtype int8 is for inference only: add --inference, or "
		    "train in bf16");
	nshape = (in->seq_len != 0) + (in->batch != 0) + (in->layers != 0) +
	         (in->hidden != 0);
	if (nshape != 0 && nshape != 4)
		return tpu_error(err, TPU_E_USAGE,
		    "activations need all of --seq-len, --batch, --layers and "
		    "--hidden (or none of them)");

	r->weights = n * d;
	if (!in->inference) {
		r->gradients = n * d;
		if (d < 4 && in->optimizer != PLAN_OPT_NONE)
			r->master = n * 4;
		switch (in->optimizer) {
		case PLAN_OPT_ADAM:
		case PLAN_OPT_ADAMW:
			r->optimizer = n * 8;
			break;
		case PLAN_OPT_SGD:
			r->optimizer = n * 4;
			break;
		case PLAN_OPT_ADAFACTOR:
			h = in->hidden != 0 ? in->hidden
			                    : ADAFACTOR_DEFAULT_HIDDEN;
			r->optimizer = (n * 8 + h - 1) / h;
			break;
		case PLAN_OPT_NONE:
			break;
		}
	}
	if (nshape == 4) {
		/* training: 34 S B H L bytes at 16 bits, x D/2;
		 * inference: the KV cache, 2 L S B H D. */
		uint64_t k = in->inference ? 2 * d : 17 * d;

		if (mul_ovf(in->seq_len, in->batch, &act) ||
		    mul_ovf(act, in->hidden, &act) ||
		    mul_ovf(act, in->layers, &act) || mul_ovf(act, k, &act) ||
		    act > (uint64_t)1 << 62)
			return tpu_error(err, TPU_E_USAGE,
			    "activation shape too large: --seq-len x --batch x "
			    "--hidden x --layers overflows");
		r->activations = act;
	}
	sum = r->weights + r->gradients + r->master + r->optimizer +
	      r->activations;
	r->total = sum;
	/* ceil(sum * (100 + pct) / 100) without overflow: sum < 2^63 */
	r->required =
	    sum / 100 * (uint64_t)(100 + in->headroom_pct) +
	    (sum % 100 * (uint64_t)(100 + in->headroom_pct) + 99) / 100;
	return 0;
}

uint64_t
plan_chip_hbm(const struct catalog_gen *g)
{
	return (uint64_t)g->hbm_gib << 30;
}

int
plan_fit(
    const struct catalog_gen *g, uint64_t required, struct catalog_accel *out)
{
	struct tpu_err err;
	char type[48];
	size_t i;
	int size, found = 0;

	for (i = 0; (size = catalog_gen_size_at(g, i)) != 0; i++) {
		struct catalog_accel a;

		snprintf(type, sizeof type, "%s-%d", g->name, size);
		tpu_err_init(&err);
		if (catalog_accel_parse(type, &a, &err) != 0)
			continue;
		*out = a;
		found = 1;
		if ((uint64_t)a.chips * plan_chip_hbm(g) >= required)
			return 0;
	}
	if (!found)
		memset(out, 0, sizeof *out);
	return 1;
}
