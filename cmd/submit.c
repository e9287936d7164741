/*
 * "tpuctl submit SPEC": a batch job from a spec file (tpuctl-submit(5)),
 * queued and left to run with no client attached.  The workdir archive is
 * staged in the bucket (jobstage.h), the slice is asked for as a queued
 * resource (specdiff_create, apply's code) whose node metadata carries a
 * startup-script (jobs_boot_script): when the capacity arrives, every
 * worker pulls the archive with its own metadata token and launches the
 * job in run's worker-side layout.  submit returns once the queued
 * resource is accepted and prints the job's name; a local job record
 * (marked submitted) lets jobs, logs and cancel find it.  Everything is
 * checked before anything is created (exit 2); a failed creation leaves
 * neither the archive it staged nor a record.
 */
#include <sys/stat.h>

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cmd.h"
#include "config.h"
#include "jobcmd.h"
#include "jobstage.h"
#include "log.h"
#include "pack.h"
#include "specdiff.h"
#include "sshcmd.h"
#include "xmalloc.h"

enum {
	OPT_NAME = 0x300,
};

/* What submit cannot do yet, refused before anything is created. */
static int
refuse_unsupported(const struct spec *s, struct tpu_err *err)
{
	const char *field = NULL, *why = NULL;

	if (!s->has_job) {
		field = "command";
		why = "is required: submit runs a job";
	} else if (s->node_count > 0) {
		field = "slice.node-count";
		why = "a multislice is not supported by submit yet (use "
		      "queued-resources create and run)";
	} else if (s->preemptible) {
		field = "slice.preemptible";
		why = "is for a node created directly; submit queues a queued "
		      "resource: use spot";
	} else if (s->framework != NULL) {
		field = "framework";
		why = "not supported by submit yet (install it from the "
		      "command, or use run --framework)";
	} else if (cJSON_GetObjectItemCaseSensitive(s->root, "max-restarts") !=
	           NULL) {
		field = "max-restarts";
		why = "not supported by submit yet (recovery needs run "
		      "--max-restarts, attached)";
	} else if (s->timeout_secs > 0) {
		field = "timeout";
		why = "not supported by submit yet";
	} else if (s->delete_after) {
		field = "delete-after";
		why = "not supported by submit yet (delete the queued resource "
		      "when the job has ended)";
	} else if (cJSON_GetObjectItemCaseSensitive(
	               s->metadata, "startup-script") != NULL ||
	           cJSON_GetObjectItemCaseSensitive(
	               s->metadata, "startup-script-url") != NULL) {
		field = "slice.metadata";
		why = "startup-script and startup-script-url are submit's own "
		      "(they launch the job)";
	}
	if (field == NULL)
		return 0;
	return tpu_error(err, TPU_E_USAGE, "%s: %s: %s", s->origin, field, why);
}

static int
submit_exec(struct tpu_ctx *ctx, int argc, char **argv, struct tpu_err *err)
{
	static const struct option opts[] = {
		{ "name", required_argument, NULL, OPT_NAME },
		{ NULL, 0, NULL, 0 },
	};
	struct spec s;
	struct specdiff d;
	struct jobcmd jc;
	struct gcs_url su;
	struct output quiet_out, saved_out;
	const char *name = NULL, *stage = NULL;
	char hash[PACK_HASH_LEN + 1], *tar = NULL, *object = NULL;
	char *script = NULL;
	cJSON *md = NULL, *o;
	const cJSON *it;
	const cJSON *spec_md;
	int ch, rc, i, have_s = 0, have_d = 0, have_su = 0, staged = 0;

	jobcmd_init(&jc);
	memset(&d, 0, sizeof d);
	while ((ch = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (ch) {
		case OPT_NAME:
			name = optarg;
			break;
		default:
			rc = cmd_bad_option(argv, ch, err);
			goto out;
		}
	}
	argc -= optind;
	argv += optind;
	if (argc != 1) {
		cmd_want_usage();
		rc = tpu_error(err, TPU_E_USAGE,
		    argc < 1 ? "missing operand" : "too many operands");
		goto out;
	}
	/* the spec is read twice (here, then by specdiff_open) */
	if (strcmp(argv[0], "-") == 0) {
		rc = tpu_error(err, TPU_E_USAGE,
		    "'-': submit reads a spec file, not standard input");
		goto out;
	}
	/* every refusal before the first request */
	if ((rc = spec_load(&s, argv[0], err)) != 0)
		goto out;
	have_s = 1;
	if ((rc = refuse_unsupported(&s, err)) != 0)
		goto out;
	stage = s.stage;
	if (stage == NULL)
		stage = config_get(ctx->cfg, "run/staging_bucket");
	if (stage != NULL && *stage == '\0')
		stage = NULL;
	if (s.workdir != NULL && stage == NULL) {
		rc = tpu_error(err, TPU_E_USAGE,
		    "%s: workdir: needs 'stage' (or config "
		    "run/staging_bucket): "
		    "the workers pull the workdir from a bucket",
		    s.origin);
		goto out;
	}
	if (stage != NULL) {
		if ((rc = gcs_url_parse(stage, &su, err)) != 0) {
			tpu_error_prefix(err, "run/staging_bucket");
			goto out;
		}
		have_su = 1;
	}
	if (name == NULL)
		name = s.name;
	if ((rc = jobs_name_check(name, err)) != 0)
		goto out;
	{
		char *dir = jobs_local_dir(name), *p;
		struct stat st;

		p = xasprintf("%s/job.json", dir);
		rc = stat(p, &st) == 0
		         ? tpu_error(err, TPU_E_CONFLICT,
		               "job '%s' exists already (%s): give another "
		               "--name",
		               name, dir)
		         : 0;
		free(p);
		free(dir);
		if (rc != 0)
			goto out;
	}
	jc.spec.name = xstrdup(name);
	jc.spec.slice = xstrdup(s.name);
	jc.spec.nslices = 1;
	jc.spec.nworkers = s.acc.hosts;
	jc.spec.nodes = xcalloc(1, sizeof *jc.spec.nodes);
	jc.spec.nodes[0] = xstrdup(s.name);
	jc.spec.command = spec_command_line(&s);
	jc.spec.submitted = 1;
	/* the startup-script runs as root: it starts the job as the user
	   run, logs and cancel log in as */
	if ((rc = sshcmd_user(ctx, NULL, &jc.spec.user, err)) != 0)
		goto out;
	cJSON_ArrayForEach(it, s.env)
	{
		char *kv = xasprintf("%s=%s", it->string, it->valuestring);
		char what[160];

		snprintf(
		    what, sizeof what, "%s: env.%.100s", s.origin, it->string);
		rc = jobs_env_add(&jc.spec, kv, what, err);
		free(kv);
		if (rc != 0)
			goto out;
	}
	if (s.workdir != NULL) {
		struct pack_opts po = { NULL, 0 };
		struct pack_stats ps;
		char *cache = pack_cache_dir();

		rc = pack_to_cache(s.workdir, &po, cache, hash, &tar, &ps, err);
		free(cache);
		if (rc != 0)
			goto out;
		log_info("workdir %s: %zu files, %zu links, %llu bytes, sha256 "
		         "%s",
		    s.workdir, ps.files, ps.links, (unsigned long long)ps.bytes,
		    hash);
		jc.spec.workdir_hash = xstrdup(hash);
	}
	/* the API: what exists (GETs), then the archive, then the QR */
	if ((rc = specdiff_open(ctx, argv[0], &d, err)) != 0)
		goto out;
	have_d = 1;
	if (d.found) {
		char what[160];

		rc = tpu_error(err, TPU_E_CONFLICT,
		    "%s exists already in %s: submit queues a new one (delete "
		    "it, or give the spec another name)",
		    specdiff_what(&d, what, sizeof what), d.zone);
		goto out;
	}
	jc.spec.zone = xstrdup(d.zone);
	if (tar != NULL &&
	    (rc = jobstage_upload(ctx, tar, hash, &su, "stage",
	         &jc.spec.stage_url, &object, &staged, err)) != 0)
		goto out;
	script = jobs_boot_script(&jc.spec);
	md = cJSON_CreateObject();
	cJSON_ArrayForEach(it, d.spec.metadata)
	    cJSON_AddStringToObject(md, it->string, it->valuestring);
	cJSON_AddStringToObject(md, "startup-script", script);
	spec_md = d.spec.metadata;
	d.spec.metadata = md;
	/* the queued resource's own output (its operation) is not ours */
	saved_out = ctx->out;
	output_init(&quiet_out);
	quiet_out.fmt = OUTPUT_NONE;
	ctx->out = quiet_out;
	rc = specdiff_create(
	    ctx, &d, SPECDIFF_CREATE_QR | SPECDIFF_CREATE_ASYNC, err);
	output_release(&ctx->out);
	ctx->out = saved_out;
	d.spec.metadata = spec_md;
	if (rc != 0) {
		if (staged) {
			struct tpu_err e;

			tpu_err_init(&e);
			if (jobstage_remove(ctx, su.bucket, object, &e) != 0)
				log_warn(
				    "the staged workdir gs://%s/%s is left: "
				    "%s",
				    su.bucket, object, e.msg);
		}
		goto out;
	}
	jc.spec.start = time(NULL);
	/* not ended: the workers tell once they run it */
	jc.states = xcalloc((size_t)jc.spec.nworkers, sizeof *jc.states);
	for (i = 0; i < jc.spec.nworkers; i++)
		jc.states[i].kind = JOBS_RUNNING;
	if ((rc = jobcmd_save(&jc, err)) != 0)
		goto out;
	o = cJSON_CreateObject();
	cJSON_AddStringToObject(o, "name", jc.spec.name);
	cJSON_AddStringToObject(o, "queuedResource", s.name);
	cJSON_AddStringToObject(o, "zone", jc.spec.zone);
	/* the name alone, for scripts: JOB=$(tpuctl submit spec) */
	if (ctx->out.fmt == OUTPUT_TABLE && ctx->out.nfields == 0)
		rc = fprintf(ctx->out.fp, "%s\n", jc.spec.name) < 0
		         ? tpu_error(err, TPU_E_IO, "cannot write the output")
		         : 0;
	else
		rc = output_emit(&ctx->out, o, NULL, err);
	cJSON_Delete(o);
	if (rc == 0 && !ctx->quiet)
		fprintf(stderr,
		    "job %s submitted: queued resource '%s' in %s (%d "
		    "worker%s); it starts when the capacity arrives; follow "
		    "it with: tpuctl logs --follow %s\n",
		    jc.spec.name, s.name, jc.spec.zone, jc.spec.nworkers,
		    jc.spec.nworkers == 1 ? "" : "s", jc.spec.name);
out:
	cJSON_Delete(md);
	free(script);
	free(object);
	free(tar);
	if (have_su)
		gcs_url_release(&su);
	if (have_d)
		specdiff_close(&d);
	if (have_s)
		spec_release(&s);
	jobcmd_release(&jc);
	return rc;
}

const struct cmd_entry cmd_submit_entry = {
	.name = "submit",
	.alias = NULL,
	.usage = "submit [--name job] spec",
	.summary = "queue a job from a spec file; it starts on its own when "
	           "the capacity arrives",
	.min_args = 1,
	.max_args = -1,
	.flags = CMD_NEEDS_AUTH | CMD_NEEDS_ZONE,
	.exec = submit_exec,
};
