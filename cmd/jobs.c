/*
 * "tpuctl jobs [SLICE]": the jobs recorded locally (all, or those of
 * SLICE), with their per-worker states (running ones asked again from
 * the workers), start time and duration, through output_emit.
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "buf.h"
#include "cmd.h"
#include "jobbucket.h"
#include "jobcmd.h"
#include "log.h"
#include "xmalloc.h"

/* "4 exited 0" or "3 exited 0, 1 lost", in rank order of first sight. */
static char *
states_summary(const struct jobs_state *st, size_t n)
{
	struct buf b;
	char(*names)[64] = xcalloc(n > 0 ? n : 1, sizeof *names);
	size_t *counts = xcalloc(n > 0 ? n : 1, sizeof *counts), k = 0, i, j;

	for (i = 0; i < n; i++) {
		char w[64];

		jobs_state_str(&st[i], w, sizeof w);
		for (j = 0; j < k && strcmp(names[j], w) != 0; j++)
			;
		if (j == k)
			snprintf(names[k++], sizeof names[0], "%s", w);
		counts[j]++;
	}
	buf_init(&b, BUF_NOCAP);
	for (j = 0; j < k; j++)
		buf_printf(
		    &b, "%s%zu %s", j > 0 ? ", " : "", counts[j], names[j]);
	free(names);
	free(counts);
	return buf_detach(&b, NULL);
}

static void
duration(char *buf, size_t n, long long s)
{
	if (s < 0)
		s = 0;
	if (s < 60)
		snprintf(buf, n, "%llds", s);
	else if (s < 3600)
		snprintf(buf, n, "%lldm%02llds", s / 60, s % 60);
	else
		snprintf(buf, n, "%lldh%02lldm", s / 3600, s / 60 % 60);
}

/*
 * Ask the workers flagged in ask (jobcmd_status); a submitted job still
 * queued there (its startup-script has not run yet: no such job) stays
 * queued.
 */
static void
jobs_keep_queued(struct jobcmd *jc, const unsigned char *ask)
{
	size_t n = (size_t)jc->spec.nslices * (size_t)jc->spec.nworkers, k;
	unsigned char *q = xcalloc(n > 0 ? n : 1, 1);

	for (k = 0; k < n; k++)
		q[k] = jc->states[k].kind == JOBS_QUEUED;
	jobcmd_status(jc, ask);
	for (k = 0; k < n; k++)
		if (q[k] && jc->states[k].kind == JOBS_MISSING)
			jc->states[k].kind = JOBS_QUEUED;
	free(q);
}

/*
 * The slice of job jc cannot be reached (err says why): a submitted job
 * with objects in its bucket takes its states from there (its slice gone:
 * a state not final there is lost); else they are not refreshed.
 */
static void
jobs_from_bucket(struct tpu_ctx *ctx, struct jobcmd *jc, struct tpu_err *err)
{
	struct tpu_err e;
	size_t found = 0;

	tpu_err_init(&e);
	if (jc->spec.log_url != NULL &&
	    jobbucket_sync(ctx, jc, err->code == TPU_E_NOTFOUND, &found, &e) ==
	        0 &&
	    found > 0)
		return;
	if (jc->spec.log_url != NULL && e.code != 0)
		log_warn("job %s: states not refreshed: %s; nor from %s: %s",
		    jc->spec.name, err->msg, jc->spec.log_url, e.msg);
	else
		log_warn("job %s: states not refreshed: %s", jc->spec.name,
		    err->msg);
}

static cJSON *
job_item(const struct jobcmd *jc)
{
	const struct jobs_spec *s = &jc->spec;
	size_t n = (size_t)s->nslices * (size_t)s->nworkers, i;
	cJSON *o = cJSON_CreateObject(), *ws;
	char *sum = states_summary(jc->states, n), tbuf[32], dbuf[32];
	time_t end = 0;
	int running = 0;
	struct tm tm;

	cJSON_AddStringToObject(o, "name", s->name);
	cJSON_AddStringToObject(o, "slice", s->slice);
	cJSON_AddStringToObject(o, "zone", s->zone);
	cJSON_AddStringToObject(o, "state", sum);
	free(sum);
	gmtime_r(&s->start, &tm);
	strftime(tbuf, sizeof tbuf, "%Y-%m-%dT%H:%M:%SZ", &tm);
	cJSON_AddStringToObject(o, "start", tbuf);
	ws = cJSON_AddArrayToObject(o, "workers");
	for (i = 0; i < n; i++) {
		cJSON *w = cJSON_CreateObject();
		char b[64];

		if (s->nslices > 1)
			cJSON_AddNumberToObject(
			    w, "slice", (double)(i / (size_t)s->nworkers));
		cJSON_AddNumberToObject(
		    w, "worker", (double)(i % (size_t)s->nworkers));
		cJSON_AddStringToObject(
		    w, "state", jobs_state_str(&jc->states[i], b, sizeof b));
		cJSON_AddItemToArray(ws, w);
		if (!jobs_state_final(&jc->states[i]))
			running = 1;
		if (jc->states[i].end > end)
			end = jc->states[i].end;
	}
	duration(dbuf, sizeof dbuf,
	    (long long)((running || end == 0 ? time(NULL) : end) - s->start));
	cJSON_AddStringToObject(o, "duration", dbuf);
	return o;
}

static int
jobs_exec(struct tpu_ctx *ctx, int argc, char **argv, struct tpu_err *err)
{
	static const struct option opts[] = {
		{ NULL, 0, NULL, 0 },
	};
	char **names;
	size_t n, i;
	cJSON *list;
	int ch, rc;

	while ((ch = getopt_long(argc, argv, "", opts, NULL)) != -1)
		return cmd_bad_option(argv, ch, err);
	argc -= optind;
	argv += optind;
	if ((rc = cmd_check_operands(&cmd_jobs_entry, argc, argv, err)) != 0)
		return rc;
	names = jobcmd_list(&n);
	list = cJSON_CreateArray();
	for (i = 0; i < n; i++) {
		struct jobcmd jc;
		struct tpu_err e;
		size_t k, nst;
		int live = 0;

		jobcmd_init(&jc);
		tpu_err_init(&e);
		if (jobcmd_load(&jc, names[i], &e) != 0) {
			log_warn("%s", e.msg);
			jobcmd_release(&jc);
			continue;
		}
		if (argc == 1 && strcmp(jc.spec.slice, argv[0]) != 0) {
			jobcmd_release(&jc);
			continue;
		}
		nst = (size_t)jc.spec.nslices * (size_t)jc.spec.nworkers;
		for (k = 0; k < nst; k++)
			live |= !jobs_state_final(&jc.states[k]);
		if (live) {
			struct sshcmd_opts so;

			sshcmd_opts_init(&so);
			so.workers = "all";
			if (jobcmd_connect(ctx, &jc, &so, &e) == 0) {
				/* not where the end is recorded, nor where
				   it never ran */
				unsigned char *ask = xcalloc(jc.sc.ntargets, 1);

				for (k = 0; k < jc.sc.ntargets; k++)
					ask[k] = !jobs_state_known(
					             jobcmd_state(&jc, k)) &&
					         jobcmd_state(&jc, k)->kind !=
					             JOBS_MISSING;
				jobs_keep_queued(&jc, ask);
				free(ask);
				jobcmd_save(&jc, &e);
			} else
				jobs_from_bucket(ctx, &jc, &e);
		}
		cJSON_AddItemToArray(list, job_item(&jc));
		jobcmd_release(&jc);
	}
	jobs_env_free(names, n);
	rc = output_emit(&ctx->out, list,
	    "NAME=name,SLICE=slice,STATE=state,START=start,DURATION=duration",
	    err);
	cJSON_Delete(list);
	return rc;
}

const struct cmd_entry cmd_jobs_entry = {
	.name = "jobs",
	.alias = NULL,
	.usage = "jobs [slice]",
	.summary = "list jobs and their per-worker states",
	.min_args = 0,
	.max_args = 1,
	.flags = CMD_NEEDS_AUTH | CMD_NEEDS_ZONE | CMD_SSH,
	.exec = jobs_exec,
};
