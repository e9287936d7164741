/*
 * "tpuctl run SLICE -- COMMAND...": start a job on every worker of a
 * node, or of every slice of a queued resource, with the environment
 * multi-host frameworks expect (src/jobs.h), the workdir packed once and
 * sent over SFTP to the workers that lack it, the job detached on each
 * worker; then, unless --detach, stream its prefixed output until it has
 * ended everywhere, print the per-worker summary and exit 0 / 8 / 9.
 * SIGINT or SIGTERM cancels the job on every worker; --timeout cancels
 * it and exits 124; --fail-fast cancels the rest on the first failure.
 */
#include <sys/random.h>
#include <sys/stat.h>

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "buf.h"
#include "cmd.h"
#include "config.h"
#include "fsutil.h"
#include "fwcmd.h"
#include "gcsurl.h"
#include "jobcmd.h"
#include "jobstage.h"
#include "log.h"
#include "pack.h"
#include "recover.h"
#include "shquote.h"
#include "sshxfer.h"
#include "retry.h"
#include "tpucmd.h"
#include "json.h"
#include "util.h"
#include "xmalloc.h"

enum {
	OPT_WORKDIR = 0x300,
	OPT_EXCLUDE,
	OPT_STAGE,
	OPT_ENV,
	OPT_ENV_FILE,
	OPT_NAME,
	OPT_DETACH,
	OPT_TIMEOUT,
	OPT_FAIL_FAST,
	OPT_COMMAND,
	OPT_MAX_RESTARTS,
	OPT_RESTART_BACKOFF,
	OPT_RESTART_ON_FAILURE,
	OPT_FRAMEWORK,
	OPT_FRAMEWORK_VERSION,
	OPT_CHECKPOINT,
	OPT_ZONES,
	OPT_OUTPUT,
};

static volatile sig_atomic_t run_abort;
static volatile sig_atomic_t run_signal;
/* Deleting and recreating the node: the API waits stop on a signal. */
static volatile sig_atomic_t run_recovering;

static void
on_signal(int sig)
{
	run_abort = 1;
	run_signal = sig;
	if (run_recovering)
		retry_interrupted = sig;
}

/*
 * Make sure every target has the workdir archive: ask which lack it,
 * send it to those over SFTP in parallel.  A worker that cannot get it
 * is marked (fail[i]) and will not run the job.
 */
/*
 * Local markers of the workers known to hold an archive:
 * CACHE/HASH.sent/NODEID-wN, made when a worker had it or was sent it.
 * A worker with a marker is not asked again (one SSH round saved);
 * a marker is dropped when the job could not start there, so a worker
 * that lost the archive is asked again on the next run.
 */
static char *
sent_marker(struct jobcmd *jc, size_t i)
{
	const struct sshcmd_slice *sl = sshcmd_slice_of(&jc->sc, i);
	const cJSON *id = cJSON_GetObjectItemCaseSensitive(sl->node, "id");
	char *cache = pack_cache_dir(), *p;

	p = xasprintf("%s/%s.sent/%s-w%d", cache, jc->spec.workdir_hash,
	    cJSON_IsString(id) ? id->valuestring : sl->name,
	    jc->sc.targets[i].worker);
	free(cache);
	return p;
}

static void
sent_mark(struct jobcmd *jc, size_t i)
{
	char *p = sent_marker(jc, i), *dir = xstrdup(p), *slash;
	struct tpu_err e;
	int fd;

	if ((slash = strrchr(dir, '/')) != NULL)
		*slash = '\0';
	if (fsutil_mkdir_private(dir, &e) == 0 &&
	    (fd = open(p, O_WRONLY | O_CREAT | O_CLOEXEC, 0600)) >= 0)
		close(fd);
	free(dir);
	free(p);
}

static int
sent_known(struct jobcmd *jc, size_t i)
{
	char *p = sent_marker(jc, i);
	struct stat st;
	int ok = stat(p, &st) == 0;

	free(p);
	return ok;
}

static void
sent_forget(struct jobcmd *jc, size_t i)
{
	char *p = sent_marker(jc, i);

	unlink(p);
	free(p);
}

/*
 * Ask again[] (n of them; NULL: not asked) in one round and put each
 * answer in res in place of the first one; again's strings are freed.
 * An interrupt (run_abort) before or during the round keeps the first
 * answers.
 */
static int
round_again(struct jobcmd *jc, char **again, size_t n, int timeout_s,
    struct sshpool_result *res, struct tpu_err *e)
{
	struct sshpool_result *res2 = xcalloc(n, sizeof *res2);
	size_t i;
	int rc = 0;

	if (!run_abort)
		rc = jobcmd_round(jc, again, timeout_s, 0, res2, e);
	for (i = 0; i < n; i++) {
		if (again[i] != NULL && !run_abort) {
			sshpool_result_release(&res[i]);
			res[i] = res2[i];
		} else
			sshpool_result_release(&res2[i]);
		free(again[i]);
		again[i] = NULL;
	}
	free(res2);
	return rc;
}

static int
send_workdir(struct jobcmd *jc, const char *tar, unsigned char *fail,
    const unsigned char *mask, struct tpu_err *err)
{
	size_t n = jc->sc.ntargets, i, k = 0;
	char **cmds = xcalloc(n, sizeof *cmds);
	struct sshpool_result *res = xcalloc(n, sizeof *res);
	struct sshpool_target *need = xcalloc(n, sizeof *need);
	size_t *map = xcalloc(n, sizeof *map);
	struct sshxfer_result *xr = NULL;
	struct sshxfer_spec xs;
	const char *srcs[1];
	char *dst = jobs_archive_path(jc->spec.workdir_hash);
	struct tpu_err e;
	int rc = 0;

	for (i = 0; i < n; i++)
		if ((mask == NULL || mask[i]) && !sent_known(jc, i))
			cmds[i] = jobs_have_cmd(jc->spec.workdir_hash);
	for (i = 0; i < n && cmds[i] == NULL; i++)
		;
	if (i == n) {
		log_info("workdir known to be on every worker");
		goto out;
	}
	jc->capture = 1;
	tpu_err_init(&e);
	rc = jobcmd_round(jc, cmds, 60, 0, res, &e);
	if (rc != TPU_E_INTERRUPTED && !run_abort && jc->sc.from_cache &&
	    jc->ctx != NULL) {
		/* a stale cached description: read it again, ask again */
		size_t nbad = 0;

		for (i = 0; i < n; i++)
			nbad += cmds[i] != NULL &&
			        sshpool_status_unreachable(res[i].status);
		tpu_err_init(&e);
		if (nbad > 0 && sshcmd_refresh(jc->ctx, &jc->sc, &e) == 1) {
			char **again = xcalloc(n, sizeof *again);

			for (i = 0; i < n; i++)
				if (cmds[i] != NULL &&
				    sshpool_status_unreachable(res[i].status))
					again[i] = xstrdup(cmds[i]);
			rc = round_again(jc, again, n, 60, res, &e);
			free(again);
		}
	}
	jc->capture = 0;
	if (rc == TPU_E_INTERRUPTED || run_abort) {
		rc = TPU_E_INTERRUPTED;
		goto out;
	}
	rc = 0;
	for (i = 0; i < n; i++) {
		if (cmds[i] == NULL)
			continue;
		if (jc->cap[i] != NULL && strcmp(jc->cap[i], "have") == 0) {
			sent_mark(jc, i);
			continue;
		}
		if (jc->cap[i] == NULL || strcmp(jc->cap[i], "need") != 0) {
			char name[128];

			log_warn("%s: %s",
			    fanout_who_name(&jc->who[i], name, sizeof name),
			    res[i].msg[0] != '\0' ? res[i].msg
			                          : "cannot check the workdir");
			fail[i] = 1;
			continue;
		}
		need[k] = jc->sc.targets[i];
		map[k++] = i;
	}
	if (k > 0) {
		memset(&xs, 0, sizeof xs);
		srcs[0] = tar;
		xs.upload = 1;
		xs.srcs = srcs;
		xs.nsrc = 1;
		xs.dst = dst;
		xs.popts = &jc->sc.popts;
		xs.abort = &run_abort;
		/* on the sessions of the round above, kept for the launch:
		   one connection per worker */
		xs.cache = jc->cache;
		xr = xcalloc(k, sizeof *xr);
		tpu_err_init(&e);
		sshxfer_run(&xs, need, k, xr, &e);
		if (run_abort) {
			rc = TPU_E_INTERRUPTED;
			goto out;
		}
		for (i = 0; i < k; i++)
			if (xr[i].rc != 0) {
				char name[128];

				log_warn("%s: workdir not sent: %s",
				    fanout_who_name(
				        &jc->who[map[i]], name, sizeof name),
				    xr[i].err.msg);
				fail[map[i]] = 1;
			} else
				sent_mark(jc, map[i]);
		log_info("workdir sent to %zu of %zu workers", k, n);
	}
out:
	for (i = 0; i < n; i++) {
		free(cmds[i]);
		sshpool_result_release(&res[i]);
		free(jc->cap[i]);
		jc->cap[i] = NULL;
	}
	free(cmds);
	free(res);
	free(need);
	free(map);
	free(xr);
	free(dst);
	(void)err;
	return rc;
}

/*
 * Before a second launch: after a refresh (the relaunched workers may
 * be new ones), or where the cached archive was bad (removed there).
 * Either way what the markers say of those workers is not trusted.
 */
static void
prelaunch_send(struct jobcmd *jc, const unsigned char *mask, void *arg)
{
	struct tpu_err e;
	unsigned char *fail = xcalloc(jc->sc.ntargets, 1);
	size_t i;

	for (i = 0; i < jc->sc.ntargets; i++)
		if (mask[i])
			sent_forget(jc, i);
	tpu_err_init(&e);
	send_workdir(jc, arg, fail, mask, &e);
	free(fail);
}

/*
 * A detached launch that found its worker's cached workdir archive bad
 * (JOBS_EXIT_REFETCH: removed, nothing started): send the archive again
 * (SFTP) or let the launch pull it again (--stage), and launch there
 * once more; res[i] becomes that answer.  jobcmd_follow does the same
 * for an attached run.
 */
static void
detach_refetch(struct jobcmd *jc, char **cmds, struct sshpool_result *res,
    const char *tar, int staged)
{
	size_t n = jc->sc.ntargets, i, k = 0;
	unsigned char *mask = xcalloc(n, 1);
	char **again = xcalloc(n, sizeof *again);
	struct tpu_err e;

	for (i = 0; i < n; i++) {
		if (cmds[i] == NULL ||
		    res[i].status != SSHPOOL_S_REMOTE_NONZERO ||
		    res[i].exit_status != JOBS_EXIT_REFETCH)
			continue;
		log_info("%s worker %d: the cached workdir archive failed "
		         "its checksum; fetching it again",
		    jc->who[i].node, jc->who[i].worker);
		mask[i] = 1;
		again[i] = xstrdup(cmds[i]);
		k++;
	}
	if (k > 0) {
		if (tar != NULL && !staged)
			prelaunch_send(jc, mask, (void *)tar);
		tpu_err_init(&e);
		round_again(jc, again, n, 0, res, &e);
	}
	free(again);
	free(mask);
}

/* The archive staged once under u (jobstage.h); the workers pull it. */
static int
stage_workdir(struct tpu_ctx *ctx, struct jobcmd *jc, const char *tar,
    const struct gcs_url *u, struct tpu_err *err)
{
	return jobstage_upload(ctx, tar, jc->spec.workdir_hash, u, "--stage",
	    &jc->spec.stage_url, NULL, NULL, err);
}

static int
read_env_file(struct jobs_spec *spec, const char *path, struct tpu_err *err)
{
	struct buf b;
	int rc;

	buf_init(&b, 1 << 20);
	rc = fsutil_read_file(path, 0, &b, NULL, err);
	if (rc == 0)
		rc = jobs_env_file(spec, path, b.data, b.len, err);
	else
		tpu_error_prefix(err, "--env-file");
	buf_release(&b);
	return rc;
}

static int
run_exec(struct tpu_ctx *ctx, int argc, char **argv, struct tpu_err *err)
{
	static const struct option opts[] = {
		SSHCMD_LONG_OPTIONS,
		{ "command", required_argument, NULL, OPT_COMMAND },
		{ "detach", no_argument, NULL, OPT_DETACH },
		{ "env", required_argument, NULL, OPT_ENV },
		{ "env-file", required_argument, NULL, OPT_ENV_FILE },
		{ "exclude", required_argument, NULL, OPT_EXCLUDE },
		{ "fail-fast", no_argument, NULL, OPT_FAIL_FAST },
		{ "name", required_argument, NULL, OPT_NAME },
		{ "output", required_argument, NULL, OPT_OUTPUT },
		{ "stage", required_argument, NULL, OPT_STAGE },
		{ "timeout", required_argument, NULL, OPT_TIMEOUT },
		{ "workdir", required_argument, NULL, OPT_WORKDIR },
		{ "max-restarts", required_argument, NULL, OPT_MAX_RESTARTS },
		{ "restart-backoff", required_argument, NULL,
		    OPT_RESTART_BACKOFF },
		{ "restart-on-failure", no_argument, NULL,
		    OPT_RESTART_ON_FAILURE },
		{ "framework", required_argument, NULL, OPT_FRAMEWORK },
		{ "framework-version", required_argument, NULL,
		    OPT_FRAMEWORK_VERSION },
		{ "checkpoint", required_argument, NULL, OPT_CHECKPOINT },
		{ "zones", required_argument, NULL, OPT_ZONES },
		{ NULL, 0, NULL, 0 },
	};
	struct sshcmd_opts so;
	struct jobcmd jc;
	struct sigaction sa, old_int, old_term;
	const char *command = NULL, *workdir = NULL, *name = NULL;
	const char *stage = NULL, *first_word = NULL;
	const char **excludes = NULL;
	char **envfiles = NULL, *built = NULL, *tar = NULL, **cmds = NULL;
	char hash[PACK_HASH_LEN + 1];
	unsigned char *fail = NULL;
	struct gcs_url su;
	size_t nexcl = 0, nenvf = 0, i, n;
	int have_su = 0;
	long long timeout_s = 0;
	int ch, rc, detach = 0, fail_fast = 0, sig_set = 0, worker_given = 0;
	int epipe = 0;
	struct recover rs;
	const char *backoff_arg = NULL, *zones_arg = NULL;

	recover_init(&rs, &run_abort, &run_signal, &run_recovering);
	struct fwcmd_install fi;

	fwcmd_install_init(&fi);
	fi.version_flag = "--framework-version";
	jobcmd_init(&jc);
	sshcmd_opts_init(&so);
	while ((ch = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		if (ch == SSHCMD_OPT_WORKER)
			worker_given = 1;
		if ((rc = sshcmd_opt(&so, ch, optarg, err)) < 0)
			goto out;
		if (rc == 1)
			continue;
		rc = 0;
		switch (ch) {
		case OPT_COMMAND:
			command = optarg;
			break;
		case OPT_DETACH:
			detach = 1;
			break;
		case OPT_ENV:
			if ((rc = jobs_env_add(
			         &jc.spec, optarg, "--env", err)) != 0)
				goto out;
			break;
		case OPT_ENV_FILE:
			envfiles = xreallocarray(
			    envfiles, nenvf + 1, sizeof *envfiles);
			envfiles[nenvf++] = optarg;
			break;
		case OPT_EXCLUDE:
			excludes = xreallocarray(
			    excludes, nexcl + 1, sizeof *excludes);
			excludes[nexcl++] = optarg;
			break;
		case OPT_FAIL_FAST:
			fail_fast = 1;
			break;
		case OPT_NAME:
			name = optarg;
			break;
		case OPT_OUTPUT: /* as ssh's and logs' */
			if ((rc = fanout_parse_output(optarg, &jc.mode, err)) !=
			    0)
				goto out;
			break;
		case OPT_STAGE:
			stage = optarg;
			break;
		case OPT_TIMEOUT:
			if ((rc = tpu_parse_job_timeout(
			         optarg, &timeout_s, err)) != 0)
				goto out;
			break;
		case OPT_WORKDIR:
			workdir = optarg;
			break;
		case OPT_MAX_RESTARTS: {
			char *end;
			long v;

			errno = 0;
			v = strtol(optarg, &end, 10);
			if (errno != 0 || end == optarg || *end != '\0' ||
			    v < 0 || v > 1000) {
				rc = tpu_error(err, TPU_E_USAGE,
				    "--max-restarts '%s': must be an integer "
				    "from 0 to 1000",
				    optarg);
				goto out;
			}
			rs.max = (int)v;
			break;
		}
		case OPT_RESTART_BACKOFF:
			backoff_arg = optarg;
			if ((rc = tpu_parse_duration("--restart-backoff",
			         optarg, &rs.backoff_s, err)) != 0)
				goto out;
			if (rs.backoff_s < 0 || rs.backoff_s > 24 * 3600) {
				rc = tpu_error(err, TPU_E_USAGE,
				    "--restart-backoff '%s': must be between "
				    "0 s and 1 day",
				    optarg);
				goto out;
			}
			break;
		case OPT_ZONES:
			zones_arg = optarg;
			if ((rc = recover_set_zones(ctx, &rs, optarg, err)) !=
			    0)
				goto out;
			break;
		case OPT_CHECKPOINT:
			if ((rc = recover_set_checkpoint(&rs, optarg, err)) !=
			    0)
				goto out;
			break;
		case OPT_RESTART_ON_FAILURE:
			rs.on_failure = 1;
			break;
		case OPT_FRAMEWORK:
			fi.framework = optarg;
			break;
		case OPT_FRAMEWORK_VERSION:
			fi.version = optarg;
			break;
		default:
			rc = cmd_bad_option(argv, ch, err);
			goto out;
		}
	}
	argc -= optind;
	argv += optind;
	if ((rc = cmd_check_operands(&cmd_run_entry, argc, argv, err)) != 0)
		goto out;
	if (argc > 1) {
		int k = strcmp(argv[1], "--") == 0 ? 2 : 1;

		if (command != NULL) {
			rc = tpu_error(err, TPU_E_USAGE,
			    "give the command either with --command or after "
			    "--, not both");
			goto out;
		}
		if (k < argc &&
		    (rc = shquote_argv(argc - k, argv + k, &built, err)) != 0)
			goto out;
		command = built;
		if (k < argc)
			first_word = argv[k];
	}
	if (rs.max < 0 &&
	    (backoff_arg != NULL || rs.on_failure || zones_arg != NULL)) {
		rc = tpu_error(err, TPU_E_USAGE, "%s: needs --max-restarts",
		    backoff_arg != NULL ? "--restart-backoff"
		    : zones_arg != NULL ? "--zones"
		                        : "--restart-on-failure");
		goto out;
	}
	if (rs.max >= 0 && detach) {
		rc = tpu_error(err, TPU_E_USAGE,
		    "--max-restarts: not with --detach (recovery needs the "
		    "client attached)");
		goto out;
	}
	if (command == NULL || *command == '\0') {
		cmd_want_usage();
		rc = tpu_error(err, TPU_E_USAGE,
		    "no command: give it after -- or with --command");
		goto out;
	}
	for (i = 0; i < nenvf; i++)
		if ((rc = read_env_file(&jc.spec, envfiles[i], err)) != 0)
			goto out;
	if (stage == NULL)
		stage = config_get(ctx->cfg, "run/staging_bucket");
	if (stage != NULL && *stage == '\0')
		stage = NULL;
	if (stage != NULL) {
		if ((rc = gcs_url_parse(stage, &su, err)) != 0) {
			tpu_error_prefix(err, "--stage");
			goto out;
		}
		have_su = 1;
		if (workdir == NULL) {
			rc = tpu_error(err, TPU_E_USAGE,
			    "--stage '%s': needs --workdir (what to stage)",
			    stage);
			goto out;
		}
	}
	jc.spec.command = xstrdup(command);
	if (name != NULL) {
		if ((rc = jobs_name_check(name, err)) != 0)
			goto out;
		jc.spec.name = xstrdup(name);
	} else {
		unsigned rnd = 0;

		if (getrandom(&rnd, sizeof rnd, 0) != sizeof rnd)
			rnd = (unsigned)getpid();
		jc.spec.name = jobs_default_name(
		    first_word != NULL ? first_word : command, time(NULL), rnd);
	}
	{
		char *dir = jobs_local_dir(jc.spec.name), *p;
		struct stat st;

		p = xasprintf("%s/job.json", dir);
		if (stat(p, &st) == 0) {
			rc = tpu_error(err, TPU_E_CONFLICT,
			    "job '%s' exists already (%s): give another --name",
			    jc.spec.name, dir);
			free(p);
			free(dir);
			goto out;
		}
		free(p);
		free(dir);
	}
	if (workdir != NULL) {
		struct pack_opts po = { excludes, nexcl };
		struct pack_stats ps;
		char *cache = pack_cache_dir();

		rc = pack_to_cache(workdir, &po, cache, hash, &tar, &ps, err);
		free(cache);
		if (rc != 0)
			goto out;
		log_info("workdir %s: %zu files, %zu links, %llu bytes, sha256 "
		         "%s",
		    workdir, ps.files, ps.links, (unsigned long long)ps.bytes,
		    hash);
		jc.spec.workdir_hash = xstrdup(hash);
	}
	{
		const char *n = argv[0];

		if ((rc = tpucmd_name(
		         ctx, TPUCMD_NAME_NODE | TPUCMD_NAME_QR, &n, err)) != 0)
			goto out;
		jc.spec.slice = xstrdup(n);
	}
	{
		const char *z = config_get(ctx->cfg, "compute/zone");

		jc.spec.zone = xstrdup(z != NULL ? z : "");
	}
	if (!worker_given)
		so.workers = "all";
	so.default_nodes = "all";
	/* --framework: "tpuctl install" first, its refusals before any worker
	 */
	if (fi.version != NULL && fi.framework == NULL) {
		rc = tpu_error(err, TPU_E_USAGE,
		    "--framework-version '%s': needs --framework", fi.version);
		goto out;
	}
again:
	/* again after a recreation: a new node has no framework (on the same
	 * node the recipe finds it in place and changes nothing) */
	if (fi.framework != NULL &&
	    (rc = fwcmd_install(ctx, jc.spec.slice, &so, &fi, err)) != 0)
		goto out;
	if (ctx->dry_run) { /* no job record, no session: what would run */
		char *what = xasprintf("would run job %s%s: %s", jc.spec.name,
		    detach ? " (detached)" : "", command);

		rc = fwcmd_dry_run(ctx, jc.spec.slice, &so, what, err);
		free(what);
		goto out;
	}
	if ((rc = sshcmd_prepare(ctx, jc.spec.slice, &so, &jc.sc, err)) != 0)
		goto out;
	jc.prepared = 1;
	if ((rc = recover_start(ctx, &rs, &jc, err)) != 0)
		goto out;
	if (jc.spec.nodes != NULL) {
		for (i = 0; i < (size_t)jc.spec.nslices; i++)
			free(jc.spec.nodes[i]);
		free(jc.spec.nodes);
		jc.spec.nodes = NULL;
	}
	free(jc.states);
	jc.states = NULL;
	/* the shape of the job: every slice, every worker of a slice */
	/* slices by index: with --node, up to the highest one selected */
	jc.spec.nslices = 1;
	for (i = 0; i < jc.sc.ntargets; i++)
		if (sshcmd_slice_of(&jc.sc, i)->index + 1 > jc.spec.nslices)
			jc.spec.nslices = sshcmd_slice_of(&jc.sc, i)->index + 1;
	jc.spec.nworkers = sshcmd_slice_of(&jc.sc, 0)->nworkers;
	jc.spec.nodes = xcalloc((size_t)jc.spec.nslices, sizeof *jc.spec.nodes);
	for (i = 0; i < jc.sc.ntargets; i++) {
		const struct sshcmd_slice *sl = sshcmd_slice_of(&jc.sc, i);

		if (sl->nworkers != jc.spec.nworkers) {
			rc = tpu_error(err, TPU_E_PRECONDITION,
			    "slices of '%s' differ in size (%d and %d "
			    "workers)",
			    jc.spec.slice, jc.spec.nworkers, sl->nworkers);
			goto out;
		}
		if (jc.spec.nodes[sl->index] == NULL)
			jc.spec.nodes[sl->index] = xstrdup(sl->name);
	}
	for (i = 0; i < (size_t)jc.spec.nslices; i++)
		if (jc.spec.nodes[i] == NULL)
			jc.spec.nodes[i] = xstrdup("");
	jc.spec.start = time(NULL);
	jc.states = xcalloc((size_t)jc.spec.nslices * (size_t)jc.spec.nworkers,
	    sizeof *jc.states);
	/* workers not selected do not run it */
	for (i = 0; i < (size_t)jc.spec.nslices * (size_t)jc.spec.nworkers; i++)
		jc.states[i].kind = JOBS_MISSING;
	n = jc.sc.ntargets;
	jc.ctx = ctx;
	if ((rc = jobcmd_attach(&jc, err)) != 0)
		goto out;
	/* recorded as running before anything starts: a client killed from
	   now on leaves a record that logs and jobs follow */
	for (i = 0; i < n; i++)
		jobcmd_state(&jc, i)->kind = JOBS_RUNNING;
	if ((rc = jobcmd_save(&jc, err)) != 0)
		goto out;
	if (!sig_set) {
		memset(&sa, 0, sizeof sa);
		sa.sa_handler = on_signal;
		sigemptyset(&sa.sa_mask);
		sigaction(SIGINT, &sa, &old_int);
		sigaction(SIGTERM, &sa, &old_term);
		sig_set = 1;
	}
	jc.abort = &run_abort;
	free(fail);
	fail = xcalloc(n, 1);
	if (tar != NULL && have_su && jc.spec.stage_url != NULL) {
		/* staged by the first attempt: the workers pull it */
	} else if (tar != NULL && have_su) {
		if ((rc = stage_workdir(ctx, &jc, tar, &su, err)) != 0)
			goto out;
	} else if (tar != NULL &&
	           (rc = send_workdir(&jc, tar, fail, NULL, err)) != 0)
		goto cancel;
	cmds = xcalloc(n, sizeof *cmds);
	for (i = 0; i < n; i++) {
		const struct sshcmd_slice *sl = sshcmd_slice_of(&jc.sc, i);
		size_t nenv;
		char **env;

		if (fail[i]) {
			jobcmd_state(&jc, i)->kind = JOBS_MISSING;
			continue;
		}
		env = jobs_worker_env(&jc.spec, jobcmd_master_addr(&jc),
		    sl->index, jc.sc.targets[i].worker, &nenv);
		cmds[i] = recover_launch_cmd(&rs, &jc.spec, env, nenv,
		    detach ? 0 : JOBS_LAUNCH_FOLLOW | JOBS_LAUNCH_RESUME);
		jobs_env_free(env, nenv);
		jobcmd_state(&jc, i)->kind = JOBS_RUNNING;
	}
	if (detach) {
		struct sshpool_result *res = xcalloc(n, sizeof *res);
		/* the exit contract of the fan-out (fanout_contract):
		   started is success; 9 only when no worker was reached */
		struct fanout_outcome *oc = xcalloc(n, sizeof *oc);
		size_t nok = 0;
		struct tpu_err e;
		cJSON *o;

		tpu_err_init(&e);
		jobcmd_round(&jc, cmds, 0, 0, res, &e);
		if (!run_abort)
			detach_refetch(&jc, cmds, res, tar, have_su);
		for (i = 0; i < n; i++) {
			char who[128], why[640];

			oc[i].ok = res[i].status == SSHPOOL_S_OK;
			oc[i].reached = jc.reached[i];
			if (cmds[i] == NULL)
				continue;
			if (res[i].status == SSHPOOL_S_OK) {
				nok++;
				continue;
			}
			jobcmd_state(&jc, i)->kind =
			    sshpool_status_unreachable(res[i].status)
			        ? JOBS_LOST
			        : JOBS_MISSING;
			fanout_describe(&res[i], why, sizeof why);
			fprintf(stderr, "%s: not started: %s\n",
			    fanout_who_name(&jc.who[i], who, sizeof who), why);
		}
		for (i = 0; i < n; i++)
			sshpool_result_release(&res[i]);
		free(res);
		jobcmd_save(&jc, &e);
		o = cJSON_CreateObject();
		cJSON_AddStringToObject(o, "name", jc.spec.name);
		cJSON_AddStringToObject(o, "slice", jc.spec.slice);
		cJSON_AddNumberToObject(o, "workers", (double)nok);
		rc = output_emit(&ctx->out, o, "NAME=name", err);
		cJSON_Delete(o);
		if (rc == 0 && !ctx->quiet)
			fprintf(stderr,
			    "job %s started on %zu of %zu workers; follow it "
			    "with: tpuctl logs --follow %s\n",
			    jc.spec.name, nok, n, jc.spec.name);
		if (rc == 0) {
			char *what = xasprintf("job %s", jc.spec.name);

			rc = fanout_contract(oc, n, what, "not started", err);
			free(what);
		}
		free(oc);
		goto out;
	}
	jc.ctx = ctx;
	jc.signaled = &run_signal;
	jc.refresh_ok = jc.sc.from_cache;
	if (tar != NULL && !have_su) {
		jc.prelaunch = prelaunch_send;
		jc.prelaunch_arg = tar;
	}
	if (rs.max >= 0) {
		jc.lost_check = recover_lost_check;
		jc.lost_arg = &rs;
	}
	rc = jobcmd_follow(&jc, cmds, (int)timeout_s, fail_fast, 1, err);
	if (rc == TPU_E_PARTIAL && jc.slice_lost) {
		recover_end_attempt(ctx, &jc, &rs);
		rc = 0; /* the summary, then recovery's decision */
	}
	for (i = 0; tar != NULL && !have_su && i < n; i++)
		if (jobcmd_state(&jc, i)->kind == JOBS_MISSING)
			sent_forget(&jc, i);
	if (rc == TPU_E_IO && jc.out_errno != 0) {
		struct tpu_err e;

		/* the reader of the output is gone: as the remote commands
		   of `tpuctl ssh ... | head -1`, the job is stopped on every
		   worker, without a word for a closed pipe (tpuctl-run(1)) */
		sigaction(SIGINT, &old_int, NULL);
		sigaction(SIGTERM, &old_term, NULL);
		sig_set = 0;
		run_abort = 0;
		jc.abort = NULL;
		jobcmd_cancel(&jc, 10);
		tpu_err_init(&e);
		jobcmd_save(&jc, &e);
		rc = jobcmd_out_error(&jc, &epipe, err);
		if (rc != 0) {
			tpu_err_init(err);
			rc = tpu_error(err, TPU_E_IO,
			    "write error on standard output: %s; job %s "
			    "cancelled",
			    strerror(jc.out_errno), jc.spec.name);
		}
		goto out;
	}
cancel:
	if (rc == TPU_E_INTERRUPTED || rc == TPU_E_TIMEOUT ||
	    rc == TPU_E_PARTIAL) {
		int sig = run_signal;
		struct tpu_err e;

		/* a second signal during the cancel ends the client */
		sigaction(SIGINT, &old_int, NULL);
		sigaction(SIGTERM, &old_term, NULL);
		sig_set = 0;
		run_abort = 0;
		jc.abort = NULL;
		fprintf(stderr,
		    "tpuctl: %s: cancelling job %s on every worker\n",
		    rc == TPU_E_TIMEOUT   ? "--timeout reached"
		    : rc == TPU_E_PARTIAL ? "--fail-fast: a worker failed"
		                          : "interrupted",
		    jc.spec.name);
		jobcmd_cancel(&jc, 10);
		jobcmd_summary(&jc, 1, &e);
		jobcmd_save(&jc, &e);
		tpu_err_init(err);
		if (rc == TPU_E_TIMEOUT)
			rc = tpu_error(err, TPU_E_TIMEOUT,
			    "job %s: --timeout of %lld s reached; cancelled",
			    jc.spec.name, timeout_s);
		else if (rc == TPU_E_PARTIAL)
			rc = tpu_error(err, TPU_E_PARTIAL,
			    "job %s failed on a worker; cancelled the rest "
			    "(--fail-fast)",
			    jc.spec.name);
		else
			rc = tpu_error(err,
			    sig == SIGTERM ? TPU_E_TERMINATED
			                   : TPU_E_INTERRUPTED,
			    "job %s cancelled (%s)", jc.spec.name,
			    sig == SIGTERM ? "SIGTERM" : "SIGINT");
		goto out;
	}
	if (rc == 0) {
		struct tpu_err e;

		rc = jobcmd_summary(&jc, 1, err);
		tpu_err_init(&e);
		jobcmd_save(&jc, &e);
		if (rs.max >= 0) {
			int r;

			for (i = 0; i < n; i++)
				free(cmds[i]);
			free(cmds);
			cmds = NULL;
			if ((r = recover_maybe_restart(ctx, &jc, &rs, err)) ==
			    1) {
				tpu_err_init(err);
				goto again;
			}
			if (r != 0)
				rc = r;
		}
	}
out:
	if (sig_set) {
		sigaction(SIGINT, &old_int, NULL);
		sigaction(SIGTERM, &old_term, NULL);
	}
	for (i = 0; cmds != NULL && i < jc.sc.ntargets; i++)
		free(cmds[i]);
	free(cmds);
	free(fail);
	if (have_su)
		gcs_url_release(&su);
	free(tar);
	free(built);
	free(excludes);
	free(envfiles);
	recover_release(&rs);
	jobcmd_release(&jc);
	if (epipe)
		errno = EPIPE; /* see jobcmd_out_error */
	return rc;
}

const struct cmd_entry cmd_run_entry = {
	.name = "run",
	.alias = NULL,
	.usage = "run [--detach] [--fail-fast] [--workdir dir] "
	         "[--exclude pattern] [--stage gs://bucket/prefix] "
	         "[--env name=value] [--env-file file] "
	         "[--name job] [--timeout duration] [--command string] "
	         "[--output prefix|raw|jsonl] "
	         "[--max-restarts n] [--restart-backoff duration] "
	         "[--restart-on-failure] [--checkpoint gs://bucket/prefix] "
	         "[--zones zone,...] "
	         "[--framework jax|pytorch|tensorflow] "
	         "[--framework-version version] "
	         "" SSHCMD_USAGE_MANY " slice [-- command ...]",
	.summary = "run a job on every worker of a slice, detached from the "
	           "connection",
	.min_args = 1,
	.max_args = -1,
	.flags = CMD_NEEDS_AUTH | CMD_NEEDS_ZONE | CMD_SSH,
	.exec = run_exec,
};
