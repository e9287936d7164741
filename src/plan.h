/*
 * Memory planning for "tpuctl plan": the HBM a model needs (weights; for
 * training gradients, fp32 master weights and optimizer state;
 * activations or the KV cache when their shape is given) and, per TPU
 * generation of the catalog, the smallest accelerator type whose total
 * HBM holds it with a headroom.  Every figure is in bytes.  The formulas
 * are documented in tpuctl-plan(1) and in plan.c.
 */
#ifndef TPUCTL_PLAN_H
#define TPUCTL_PLAN_H

#include <stdint.h>

#include "catalog.h"
#include "err.h"

enum plan_dtype { PLAN_FP32, PLAN_BF16, PLAN_FP16, PLAN_INT8 };

enum plan_optimizer {
	PLAN_OPT_ADAM,
	PLAN_OPT_ADAMW,
	PLAN_OPT_SGD, /* with momentum */
	PLAN_OPT_ADAFACTOR,
	PLAN_OPT_NONE,
};

struct plan_input {
	uint64_t params; /* parameter count, > 0 */
	enum plan_dtype dtype;
	enum plan_optimizer optimizer;
	int optimizer_given; /* --optimizer was given (an error with
	                        inference) */
	int inference;
	/* activation shape: all four or none (0) */
	uint64_t seq_len, batch, layers, hidden;
	int headroom_pct; /* 0..1000 */
};

struct plan_result {
	uint64_t weights;     /* params x dtype bytes */
	uint64_t gradients;   /* training: params x dtype bytes */
	uint64_t master;      /* training in bf16/fp16: fp32 copy */
	uint64_t optimizer;   /* optimizer state */
	uint64_t activations; /* training activations or inference KV cache */
	uint64_t total;
	uint64_t required; /* total with the headroom, rounded up */
};

/* Defaults: bf16, adam, training, 10% headroom, no activation shape. */
void plan_input_init(struct plan_input *);

/* "fp32", "bf16", "fp16", "int8"; 0 or TPU_E_USAGE naming the value. */
int plan_parse_dtype(const char *, enum plan_dtype *, struct tpu_err *);
/* "adam", "adamw", "sgd", "adafactor", "none"; 0 or TPU_E_USAGE. */
int plan_parse_optimizer(const char *, enum plan_optimizer *, struct tpu_err *);
/*
 * A parameter count: "70e9", "7000000000", "1.5B", "350M", "70b" (K, M,
 * B or G, T suffixes, any case), > 0 and at most 10^15, rounded to the
 * nearest integer.  flag names the option in messages.  0 or TPU_E_USAGE.
 */
int plan_parse_count(
    const char *flag, const char *, uint64_t *, struct tpu_err *);

const char *plan_dtype_name(enum plan_dtype);
const char *plan_optimizer_name(enum plan_optimizer);
/* Bytes per element of a dtype. */
int plan_dtype_bytes(enum plan_dtype);

/*
 * Compute the memory figures.  Refuses (TPU_E_USAGE, one line) int8
 * training, --optimizer with --inference, a partial activation shape and
 * a headroom outside 0..1000.  0 or TPU_E_USAGE.
 */
int plan_compute(
    const struct plan_input *, struct plan_result *, struct tpu_err *);

/* HBM of one chip of generation g, in bytes. */
uint64_t plan_chip_hbm(const struct catalog_gen *);

/*
 * The smallest accelerator type of generation g whose chips' total HBM is
 * at least required bytes: 0 with *out filled, or 1 when even the largest
 * slice is too small (*out is then the largest slice).
 */
int plan_fit(
    const struct catalog_gen *, uint64_t required, struct catalog_accel *out);

#endif
