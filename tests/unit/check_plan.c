/*
 * Unit tests for src/plan.c against figures computed by hand (the
 * arithmetic is in each test's comment), and its refusals.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <check.h>

#include "catalog.h"
#include "plan.h"

#define GIB (1ULL << 30)

static struct plan_result
compute(const struct plan_input *in)
{
	struct plan_result r;
	struct tpu_err err;

	tpu_err_init(&err);
	ck_assert_msg(plan_compute(in, &r, &err) == 0, "%s", err.msg);
	return r;
}

static const char *
fit(const char *gen, uint64_t required, int *chips)
{
	static struct catalog_accel a;

	ck_assert_int_eq(plan_fit(catalog_gen_find(gen), required, &a), 0);
	if (chips != NULL)
		*chips = a.chips;
	return a.type;
}

START_TEST(inference_1b_bf16)
{
	struct plan_input in;
	struct plan_result r;
	int chips;

	/* 1e9 x 2 B = 2e9 B; +10% = 2.2e9 B < 16 GiB: one v5e chip */
	plan_input_init(&in);
	in.params = 1000000000;
	in.inference = 1;
	r = compute(&in);
	ck_assert_uint_eq(r.weights, 2000000000ULL);
	ck_assert_uint_eq(r.gradients + r.master + r.optimizer, 0);
	ck_assert_uint_eq(r.total, 2000000000ULL);
	ck_assert_uint_eq(r.required, 2200000000ULL);
	ck_assert_str_eq(fit("v5e", r.required, &chips), "v5litepod-1");
	ck_assert_int_eq(chips, 1);
	/* v4's smallest slice is v4-8 (4 chips) */
	ck_assert_str_eq(fit("v4", r.required, NULL), "v4-8");
}
END_TEST

START_TEST(training_70b_adam)
{
	struct plan_input in;
	struct plan_result r;
	int chips;

	/* 70e9 x 16 B = 1.12e12 B (2 + 2 + 4 + 8); +10% = 1.232e12 B */
	plan_input_init(&in);
	in.params = 70000000000ULL;
	r = compute(&in);
	ck_assert_uint_eq(r.weights, 140000000000ULL);
	ck_assert_uint_eq(r.gradients, 140000000000ULL);
	ck_assert_uint_eq(r.master, 280000000000ULL);
	ck_assert_uint_eq(r.optimizer, 560000000000ULL);
	ck_assert_uint_eq(r.total, 1120000000000ULL);
	ck_assert_uint_eq(r.required, 1232000000000ULL);
	/* / 32 GiB = 35.86 -> 36 chips; v4-64 has 32, v4-128 has 64 */
	ck_assert_str_eq(fit("v4", r.required, &chips), "v4-128");
	ck_assert_int_eq(chips, 64);
	/* / 95 GiB = 12.08 -> 13 chips: v5p-32 (16 chips) */
	ck_assert_str_eq(fit("v5p", r.required, &chips), "v5p-32");
	ck_assert_int_eq(chips, 16);
	/* / 16 GiB = 71.7 -> 72 chips: v5litepod-128 */
	ck_assert_str_eq(fit("v5e", r.required, NULL), "v5litepod-128");
	/* v6e 32 GiB: 36 chips -> v6e-64 */
	ck_assert_str_eq(fit("v6e", r.required, NULL), "v6e-64");
	/* v3 32 GiB per chip: 36 chips -> v3-128 (64 chips), not v3-64 */
	ck_assert_str_eq(fit("v3", r.required, NULL), "v3-128");
	/* v2 16 GiB per chip: 72 chips -> v2-256 (128 chips) */
	ck_assert_str_eq(fit("v2", r.required, NULL), "v2-256");
	/* adamw keeps the same state */
	in.optimizer = PLAN_OPT_ADAMW;
	ck_assert_uint_eq(compute(&in).total, 1120000000000ULL);
}
END_TEST

START_TEST(training_other_optimizers)
{
	struct plan_input in;
	struct plan_result r;

	/* 7e9 fp32 sgd: 4 + 4 + 4 (momentum), no master copy = 84e9 B;
	 * no headroom: / 32 GiB = 2.44 -> 3 chips -> v4-8 */
	plan_input_init(&in);
	in.params = 7000000000ULL;
	in.dtype = PLAN_FP32;
	in.optimizer = PLAN_OPT_SGD;
	in.headroom_pct = 0;
	r = compute(&in);
	ck_assert_uint_eq(r.master, 0);
	ck_assert_uint_eq(r.total, 84000000000ULL);
	ck_assert_uint_eq(r.required, 84000000000ULL);
	ck_assert_str_eq(fit("v4", r.required, NULL), "v4-8");
	/* bf16 sgd: 2 + 2 + 4 + 4 = 12 B */
	in.dtype = PLAN_BF16;
	ck_assert_uint_eq(compute(&in).total, 84000000000ULL);
	/* none: weights and gradients only, 2 + 2 */
	in.optimizer = PLAN_OPT_NONE;
	r = compute(&in);
	ck_assert_uint_eq(r.master + r.optimizer, 0);
	ck_assert_uint_eq(r.total, 28000000000ULL);
	/* adafactor, 1e9 bf16, H 2048: state ceil(8e9 / 2048) = 3906250 */
	in.params = 1000000000;
	in.optimizer = PLAN_OPT_ADAFACTOR;
	in.seq_len = 1;
	in.batch = 1;
	in.layers = 1;
	in.hidden = 2048;
	r = compute(&in);
	ck_assert_uint_eq(r.optimizer, 3906250);
	ck_assert_uint_eq(r.master, 4000000000ULL);
	/* without --hidden, H = 1024: 8e9 / 1024 = 7812500 */
	in.seq_len = in.batch = in.layers = in.hidden = 0;
	ck_assert_uint_eq(compute(&in).optimizer, 7812500);
}
END_TEST

START_TEST(activations)
{
	struct plan_input in;
	struct plan_result r;

	/* training 7e9 bf16 adam, S 2048 B 8 L 32 H 4096:
	 * 34 x 2048 x 8 x 4096 x 32 = 73014444032 B; + 112e9 */
	plan_input_init(&in);
	in.params = 7000000000ULL;
	in.seq_len = 2048;
	in.batch = 8;
	in.layers = 32;
	in.hidden = 4096;
	r = compute(&in);
	ck_assert_uint_eq(r.activations, 73014444032ULL);
	ck_assert_uint_eq(r.total, 185014444032ULL);
	/* fp32 doubles it */
	in.dtype = PLAN_FP32;
	ck_assert_uint_eq(compute(&in).activations, 146028888064ULL);
	/* inference KV cache, 1e9 bf16, S 1000 B 1 L 10 H 100:
	 * 2 x 10 x 1000 x 1 x 100 x 2 = 4e6 B */
	plan_input_init(&in);
	in.params = 1000000000;
	in.inference = 1;
	in.seq_len = 1000;
	in.batch = 1;
	in.layers = 10;
	in.hidden = 100;
	r = compute(&in);
	ck_assert_uint_eq(r.activations, 4000000);
	ck_assert_uint_eq(r.total, 2004000000ULL);
}
END_TEST

START_TEST(headroom_rounding)
{
	struct plan_input in;
	struct plan_result r;

	/* 101 int8 weights, +10% = 111.1 -> 112 */
	plan_input_init(&in);
	in.params = 101;
	in.dtype = PLAN_INT8;
	in.inference = 1;
	r = compute(&in);
	ck_assert_uint_eq(r.required, 112);
	in.headroom_pct = 0;
	ck_assert_uint_eq(compute(&in).required, 101);
	in.headroom_pct = 100;
	ck_assert_uint_eq(compute(&in).required, 202);
}
END_TEST

START_TEST(too_large)
{
	struct catalog_accel a;

	/* 1e15 params x 16 B: more than a whole v2 pod (256 chips) */
	ck_assert_int_eq(
	    plan_fit(catalog_gen_find("v2"), 16000000000000000ULL, &a), 1);
	ck_assert_str_eq(a.type, "v2-512");
	ck_assert_uint_eq(plan_chip_hbm(catalog_gen_find("v5p")), 95 * GIB);
}
END_TEST

START_TEST(parse_counts)
{
	static const struct {
		const char *s;
		uint64_t v;
	} ok[] = { { "70e9", 70000000000ULL }, { "7000000000", 7000000000ULL },
		{ "1.5B", 1500000000ULL }, { "350M", 350000000ULL },
		{ "70b", 70000000000ULL }, { "2T", 2000000000000ULL },
		{ "1k", 1000 }, { "1e15", 1000000000000000ULL } };
	static const char *const bad[] = { "", "abc", "-5", "0", "1e16", "nan",
		"inf", " 5", "5X", "5BB", "0.4", "+3", "0x10" };
	struct tpu_err err;
	uint64_t v;
	size_t i;

	for (i = 0; i < sizeof ok / sizeof ok[0]; i++) {
		tpu_err_init(&err);
		ck_assert_msg(
		    plan_parse_count("--params", ok[i].s, &v, &err) == 0,
		    "%s: %s", ok[i].s, err.msg);
		ck_assert_uint_eq(v, ok[i].v);
	}
	for (i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		tpu_err_init(&err);
		ck_assert_msg(plan_parse_count("--params", bad[i], &v, &err) ==
		                  TPU_E_USAGE,
		    "accepted '%s'", bad[i]);
		ck_assert_ptr_nonnull(strstr(err.msg, "--params"));
		ck_assert_ptr_null(strchr(err.msg, '\n'));
	}
}
END_TEST

START_TEST(refusals)
{
	struct plan_input in;
	struct plan_result r;
	struct tpu_err err;
	enum plan_dtype d;
	enum plan_optimizer o;

	tpu_err_init(&err);
	ck_assert_int_eq(plan_parse_dtype("bf8", &d, &err), TPU_E_USAGE);
	ck_assert_ptr_nonnull(strstr(err.msg, "'bf8'"));
	ck_assert_int_eq(plan_parse_dtype("fp16", &d, &err), 0);
	ck_assert_int_eq(d, PLAN_FP16);
	ck_assert_int_eq(plan_parse_optimizer("lamb", &o, &err), TPU_E_USAGE);
	ck_assert_int_eq(plan_parse_optimizer("adafactor", &o, &err), 0);
	ck_assert_int_eq(o, PLAN_OPT_ADAFACTOR);

	plan_input_init(&in);
	in.params = 1000;
	in.dtype = PLAN_INT8; /* int8 training */
	ck_assert_int_eq(plan_compute(&in, &r, &err), TPU_E_USAGE);
	ck_assert_ptr_nonnull(strstr(err.msg, "int8"));
	plan_input_init(&in);
	in.params = 1000;
	in.inference = 1;
	in.optimizer_given = 1;
	ck_assert_int_eq(plan_compute(&in, &r, &err), TPU_E_USAGE);
	plan_input_init(&in);
	in.params = 1000;
	in.seq_len = 10; /* partial shape */
	ck_assert_int_eq(plan_compute(&in, &r, &err), TPU_E_USAGE);
	ck_assert_ptr_nonnull(strstr(err.msg, "--hidden"));
	plan_input_init(&in);
	in.params = 1000;
	in.headroom_pct = 1001;
	ck_assert_int_eq(plan_compute(&in, &r, &err), TPU_E_USAGE);
	plan_input_init(&in);
	in.params = 1000;
	in.seq_len = in.batch = in.layers = in.hidden = 1000000000ULL;
	ck_assert_int_eq(plan_compute(&in, &r, &err), TPU_E_USAGE);
	ck_assert_ptr_nonnull(strstr(err.msg, "too large"));
}
END_TEST

static Suite *
plan_suite(void)
{
	Suite *s = suite_create("plan");
	TCase *tc;

	tc = tcase_create("figures");
	tcase_add_test(tc, inference_1b_bf16);
	tcase_add_test(tc, training_70b_adam);
	tcase_add_test(tc, training_other_optimizers);
	tcase_add_test(tc, activations);
	tcase_add_test(tc, headroom_rounding);
	tcase_add_test(tc, too_large);
	suite_add_tcase(s, tc);
	tc = tcase_create("input");
	tcase_add_test(tc, parse_counts);
	tcase_add_test(tc, refusals);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	SRunner *sr = srunner_create(plan_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
