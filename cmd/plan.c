/*
 * "tpuctl plan": how much HBM a model needs (src/plan.h) and, for every
 * TPU generation of the catalog, the smallest accelerator type that
 * holds it with the headroom.  Local only: no credentials, no request.
 * --format json gives every figure in bytes; the table shows GiB.
 */
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "catalog.h"
#include "cmd.h"
#include "output.h"
#include "plan.h"
#include "util.h"

enum {
	OPT_PARAMS = 0x300,
	OPT_DTYPE,
	OPT_OPTIMIZER,
	OPT_INFERENCE,
	OPT_SEQ_LEN,
	OPT_BATCH,
	OPT_LAYERS,
	OPT_HIDDEN,
	OPT_HEADROOM,
};

static void
gib(cJSON *o, const char *key, uint64_t bytes)
{
	char s[64];

	snprintf(s, sizeof s, "%.1f GiB", (double)bytes / (double)(1ULL << 30));
	cJSON_AddStringToObject(o, key, s);
}

static int
shape_opt(const char *flag, const char *arg, uint64_t max, uint64_t *out,
    struct tpu_err *err)
{
	const char *errstr;
	long long v = tpu_strtonum(arg, 1, (long long)max, &errstr);

	if (errstr != NULL)
		return tpu_error(err, TPU_E_USAGE,
		    "%s '%s': %s (a whole number from 1 to %llu)", flag, arg,
		    errstr, (unsigned long long)max);
	*out = (uint64_t)v;
	return 0;
}

static cJSON *
memory_json(const struct plan_result *r)
{
	cJSON *m = cJSON_CreateObject();

	cJSON_AddNumberToObject(m, "weights", (double)r->weights);
	cJSON_AddNumberToObject(m, "gradients", (double)r->gradients);
	cJSON_AddNumberToObject(m, "masterWeights", (double)r->master);
	cJSON_AddNumberToObject(m, "optimizerState", (double)r->optimizer);
	cJSON_AddNumberToObject(m, "activations", (double)r->activations);
	cJSON_AddNumberToObject(m, "total", (double)r->total);
	cJSON_AddNumberToObject(m, "required", (double)r->required);
	return m;
}

static int
plan_exec(struct tpu_ctx *ctx, int argc, char **argv, struct tpu_err *err)
{
	static const struct option opts[] = {
		{ "batch", required_argument, NULL, OPT_BATCH },
		{ "dtype", required_argument, NULL, OPT_DTYPE },
		{ "headroom", required_argument, NULL, OPT_HEADROOM },
		{ "hidden", required_argument, NULL, OPT_HIDDEN },
		{ "inference", no_argument, NULL, OPT_INFERENCE },
		{ "layers", required_argument, NULL, OPT_LAYERS },
		{ "optimizer", required_argument, NULL, OPT_OPTIMIZER },
		{ "params", required_argument, NULL, OPT_PARAMS },
		{ "seq-len", required_argument, NULL, OPT_SEQ_LEN },
		{ NULL, 0, NULL, 0 },
	};
	struct plan_input in;
	struct plan_result r;
	const struct catalog_gen *g;
	cJSON *root = NULL, *gens, *mem;
	const char *errstr;
	size_t i;
	int ch, rc, have_params = 0;

	plan_input_init(&in);
	while ((ch = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		rc = 0;
		switch (ch) {
		case OPT_PARAMS:
			rc = plan_parse_count(
			    "--params", optarg, &in.params, err);
			have_params = 1;
			break;
		case OPT_DTYPE:
			rc = plan_parse_dtype(optarg, &in.dtype, err);
			break;
		case OPT_OPTIMIZER:
			rc = plan_parse_optimizer(optarg, &in.optimizer, err);
			in.optimizer_given = 1;
			break;
		case OPT_INFERENCE:
			in.inference = 1;
			break;
		case OPT_SEQ_LEN:
			rc = shape_opt(
			    "--seq-len", optarg, 100000000, &in.seq_len, err);
			break;
		case OPT_BATCH:
			rc = shape_opt(
			    "--batch", optarg, 100000000, &in.batch, err);
			break;
		case OPT_LAYERS:
			rc = shape_opt(
			    "--layers", optarg, 1000000, &in.layers, err);
			break;
		case OPT_HIDDEN:
			rc = shape_opt(
			    "--hidden", optarg, 100000000, &in.hidden, err);
			break;
		case OPT_HEADROOM:
			in.headroom_pct =
			    (int)tpu_strtonum(optarg, 0, 1000, &errstr);
			if (errstr != NULL)
				rc = tpu_error(err, TPU_E_USAGE,
				    "--headroom '%s': %s (a percentage from 0 "
				    "to 1000)",
				    optarg, errstr);
			break;
		default:
			return cmd_bad_option(argv, ch, err);
		}
		if (rc != 0)
			return rc;
	}
	if ((rc = cmd_check_operands(
	         &cmd_plan_entry, argc - optind, argv + optind, err)) != 0)
		return rc;
	if (!have_params)
		return cmd_want_usage(), tpu_error(err, TPU_E_USAGE,
		                             "--params is required (the "
		                             "model's parameter count)");
	if ((rc = plan_compute(&in, &r, err)) != 0)
		return rc;

	root = cJSON_CreateObject();
	cJSON_AddNumberToObject(root, "params", (double)in.params);
	cJSON_AddStringToObject(root, "dtype", plan_dtype_name(in.dtype));
	cJSON_AddStringToObject(
	    root, "mode", in.inference ? "inference" : "training");
	cJSON_AddStringToObject(root, "optimizer",
	    in.inference ? "none" : plan_optimizer_name(in.optimizer));
	cJSON_AddNumberToObject(root, "headroomPercent", in.headroom_pct);
	mem = memory_json(&r);
	cJSON_AddItemToObject(root, "bytes", mem);
	gens = cJSON_AddArrayToObject(root, "generations");
	for (i = 0; (g = catalog_gen_at(i)) != NULL; i++) {
		struct catalog_accel a;
		cJSON *o = cJSON_CreateObject();
		uint64_t chip = plan_chip_hbm(g);
		int fits = plan_fit(g, r.required, &a) == 0;

		cJSON_AddStringToObject(
		    o, "generation", g->alias != NULL ? g->alias : g->name);
		cJSON_AddStringToObject(
		    o, "acceleratorType", fits ? a.type : "none");
		cJSON_AddBoolToObject(o, "fits", fits);
		cJSON_AddNumberToObject(o, "chips", fits ? a.chips : 0);
		cJSON_AddNumberToObject(o, "hosts", fits ? a.hosts : 0);
		cJSON_AddNumberToObject(o, "chipsPerHost", g->chips_per_host);
		cJSON_AddNumberToObject(o, "hbmPerChip", (double)chip);
		cJSON_AddNumberToObject(
		    o, "totalHbm", fits ? (double)chip * a.chips : 0);
		if (!fits)
			cJSON_AddStringToObject(o, "largest", a.type);
		cJSON_AddStringToObject(o, "hbmSource", g->hbm_source);
		if (ctx->out.fmt == OUTPUT_TABLE) {
			gib(o, "hbmPerChipGiB", chip);
			gib(o, "totalHbmGiB",
			    fits ? chip * (uint64_t)a.chips : 0);
		}
		cJSON_AddItemToArray(gens, o);
	}
	if (ctx->out.fmt == OUTPUT_TABLE) {
		/* Two tables: the figures in GiB, then one row per
		 * generation (json and the others: one object, bytes). */
		cJSON *t = cJSON_CreateObject();

		gib(t, "weights", r.weights);
		gib(t, "grads", r.gradients);
		gib(t, "master", r.master);
		gib(t, "opt", r.optimizer);
		gib(t, "act", r.activations);
		gib(t, "total", r.total);
		gib(t, "required", r.required);
		rc = output_emit(&ctx->out, t,
		    "WEIGHTS=weights,GRADIENTS=grads,MASTER=master,"
		    "OPTIMIZER=opt,ACTIVATIONS=act,TOTAL=total,"
		    "WITH_HEADROOM=required",
		    err);
		cJSON_Delete(t);
		if (rc == 0 && fputc('\n', ctx->out.fp) == EOF)
			rc = tpu_error(err, TPU_E_IO, "write error");
		if (rc == 0)
			rc = output_emit(&ctx->out, gens,
			    "GENERATION=generation,TYPE=acceleratorType,"
			    "CHIPS=chips,HOSTS=hosts,HBM_PER_CHIP="
			    "hbmPerChipGiB,"
			    "TOTAL_HBM=totalHbmGiB",
			    err);
	} else
		rc = output_emit(&ctx->out, root, NULL, err);
	cJSON_Delete(root);
	return rc;
}

const struct cmd_entry cmd_plan_entry = {
	.name = "plan",
	.alias = NULL,
	.usage = "plan [--inference] [--dtype fp32|bf16|fp16|int8] "
	         "[--optimizer adam|adamw|sgd|adafactor|none] "
	         "[--seq-len n --batch n --layers n --hidden n] "
	         "[--headroom percent] --params n",
	.summary = "the HBM a model needs and the smallest slice per TPU "
	           "generation",
	.min_args = 0,
	.max_args = 0,
	.flags = 0,
	.exec = plan_exec,
};
