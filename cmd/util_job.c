/*
 * Shared plumbing of run, logs, jobs and cancel (cmd/jobcmd.h).
 */
#include <sys/stat.h>
#include <sys/types.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "buf.h"
#include "config.h"
#include "fsutil.h"
#include "jobcmd.h"
#include "log.h"
#include "ssh_pool.h"
#include "util.h"
#include "xmalloc.h"

static void maybe_stop(struct jobcmd *);

static void
free_tails(struct buf *t, size_t n)
{
	size_t i;

	for (i = 0; t != NULL && i < n; i++)
		buf_release(&t[i]);
	free(t);
}

void
jobcmd_init(struct jobcmd *jc)
{
	memset(jc, 0, sizeof *jc);
	jobs_spec_init(&jc->spec);
}

void
jobcmd_release(struct jobcmd *jc)
{
	size_t i, n = jc->prepared ? jc->sc.ntargets : 0;
	int s;

	for (i = 0; i < n; i++) {
		for (s = 0; s < 2; s++)
			if (jc->fd[s] != NULL && jc->fd[s][i] >= 0)
				close(jc->fd[s][i]);
		if (jc->cap != NULL)
			free(jc->cap[i]);
	}
	for (s = 0; s < 2; s++) {
		free_tails(jc->tail[s], n);
		jc->tail[s] = NULL;
		free(jc->fd[s]);
		free(jc->off[s]);
		free(jc->lines[s]);
	}
	free(jc->cap);
	free(jc->reached);
	free(jc->skip);
	free(jc->rstate);
	free(jc->who);
	free(jc->rank);
	free(jc->states);
	sshpool_cache_free(jc->cache);
	if (jc->prepared)
		sshcmd_release(&jc->sc);
	jobs_spec_release(&jc->spec);
	memset(jc, 0, sizeof *jc);
}

void
jobcmd_detach(struct jobcmd *jc)
{
	size_t i, n = jc->prepared ? jc->sc.ntargets : 0;
	int s;

	for (i = 0; i < n; i++) {
		for (s = 0; s < 2; s++)
			if (jc->fd[s] != NULL && jc->fd[s][i] >= 0)
				close(jc->fd[s][i]);
		if (jc->cap != NULL)
			free(jc->cap[i]);
	}
	for (s = 0; s < 2; s++) {
		free_tails(jc->tail[s], n);
		jc->tail[s] = NULL;
		free(jc->fd[s]);
		free(jc->off[s]);
		free(jc->lines[s]);
		jc->fd[s] = NULL;
		jc->off[s] = NULL;
		jc->lines[s] = NULL;
	}
	free(jc->cap);
	free(jc->reached);
	free(jc->skip);
	free(jc->rstate);
	free(jc->who);
	free(jc->rank);
	jc->cap = NULL;
	jc->reached = jc->skip = jc->rstate = NULL;
	jc->who = NULL;
	jc->rank = NULL;
	sshpool_cache_free(jc->cache);
	jc->cache = NULL;
	if (jc->prepared)
		sshcmd_release(&jc->sc);
	memset(&jc->sc, 0, sizeof jc->sc);
	jc->prepared = 0;
	jc->want_refresh = 0;
	jc->want_check = jc->slice_lost = 0;
}

struct jobs_state *
jobcmd_state(struct jobcmd *jc, size_t i)
{
	return &jc->states[jc->rank[i]];
}

int
jobcmd_load(struct jobcmd *jc, const char *name, struct tpu_err *err)
{
	char *dir, *path;
	struct buf b;
	cJSON *o;
	int rc;

	if ((rc = jobs_name_check(name, err)) != 0)
		return rc;
	dir = jobs_local_dir(name);
	path = xasprintf("%s/job.json", dir);
	buf_init(&b, 16 << 20);
	rc = fsutil_read_file(path, 0, &b, NULL, err);
	if (rc == TPU_E_NOTFOUND) {
		tpu_err_init(err);
		rc = tpu_error(err, TPU_E_NOTFOUND,
		    "no job '%s' (no record in %s)", name, dir);
	}
	if (rc == 0) {
		o = cJSON_ParseWithOpts(b.data, NULL, 1);
		jobs_spec_release(&jc->spec);
		free(jc->states);
		jc->states = NULL;
		rc = jobs_record_parse(o, &jc->spec, &jc->states, err);
		cJSON_Delete(o);
		if (rc != 0)
			tpu_error_prefix(err, "%s", path);
	}
	if (rc == 0 && jc->states == NULL)
		jc->states = xcalloc(
		    (size_t)jc->spec.nslices * (size_t)jc->spec.nworkers,
		    sizeof *jc->states);
	buf_release(&b);
	free(path);
	free(dir);
	return rc;
}

/*
 * The record is replaced atomically (temp file + rename) but not
 * fsynced: it is a convenience copy, and an fsync costs tens of
 * milliseconds on a busy disk, per save, in front of every job.
 */
int
jobcmd_save(const struct jobcmd *jc, struct tpu_err *err)
{
	char *dir = jobs_local_dir(jc->spec.name), *path, *tmp, *text;
	cJSON *o;
	size_t len;
	int rc, fd;

	if ((rc = fsutil_mkdir_private(dir, err)) != 0) {
		free(dir);
		return rc;
	}
	path = xasprintf("%s/job.json", dir);
	tmp = xasprintf("%s/.job.json.%ld", dir, (long)getpid());
	o = jobs_record(&jc->spec, jc->states);
	text = cJSON_Print(o);
	len = strlen(text);
	fd = open(
	    tmp, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0 || write(fd, text, len) != (ssize_t)len || close(fd) != 0 ||
	    rename(tmp, path) != 0) {
		rc = tpu_error(err, TPU_E_IO, "cannot write '%s': %s", path,
		    strerror(errno));
		unlink(tmp);
	}
	cJSON_free(text);
	cJSON_Delete(o);
	free(tmp);
	free(path);
	free(dir);
	return rc;
}

static int
cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

char **
jobcmd_list(size_t *np)
{
	char *dir = jobs_store_dir(), **v = NULL;
	DIR *d = opendir(dir);
	struct dirent *de;
	size_t n = 0;

	while (d != NULL && (de = readdir(d)) != NULL) {
		struct tpu_err e;
		char *p;
		struct stat st;

		if (jobs_name_check(de->d_name, &e) != 0)
			continue;
		p = xasprintf("%s/%s/job.json", dir, de->d_name);
		if (stat(p, &st) == 0) {
			v = xreallocarray(v, n + 1, sizeof *v);
			v[n++] = xstrdup(de->d_name);
		}
		free(p);
	}
	if (d != NULL)
		closedir(d);
	if (n > 0)
		qsort(v, n, sizeof *v, cmp_str);
	free(dir);
	*np = n;
	return v;
}

int
jobcmd_connect(struct tpu_ctx *ctx, struct jobcmd *jc, struct sshcmd_opts *so,
    struct tpu_err *err)
{
	int rc;

	if (jc->spec.zone != NULL && jc->spec.zone[0] != '\0' &&
	    config_layer_of(ctx->cfg, "compute/zone") != CONFIG_FLAG)
		config_set_flag(ctx->cfg, "compute/zone", jc->spec.zone);
	so->default_nodes = "all";
	if (so->workers == NULL)
		so->workers = "all";
	if ((rc = sshcmd_prepare(ctx, jc->spec.slice, so, &jc->sc, err)) != 0)
		return rc;
	jc->prepared = 1;
	jc->ctx = ctx;
	return jobcmd_attach(jc, err);
}

int
jobcmd_attach(struct jobcmd *jc, struct tpu_err *err)
{
	size_t i, n;
	int rc, s;

	n = jc->sc.ntargets;
	jc->who = fanout_who_make(&jc->sc);
	jc->rank = xcalloc(n, sizeof *jc->rank);
	jc->cap = xcalloc(n, sizeof *jc->cap);
	jc->reached = xcalloc(n, 1);
	jc->skip = xcalloc(n, 1);
	jc->rstate = xcalloc(n, 1);
	for (s = 0; s < 2; s++) {
		jc->fd[s] = xcalloc(n, sizeof *jc->fd[s]);
		jc->off[s] = xcalloc(n, sizeof *jc->off[s]);
		jc->lines[s] = xcalloc(n, sizeof *jc->lines[s]);
		jc->tail[s] = xcalloc(n > 0 ? n : 1, sizeof *jc->tail[s]);
		for (i = 0; i < n; i++) {
			jc->fd[s][i] = -1;
			buf_init(&jc->tail[s][i], BUF_NOCAP);
		}
	}
	for (i = 0; i < n; i++) {
		const struct sshcmd_slice *sl = sshcmd_slice_of(&jc->sc, i);
		int w = jc->sc.targets[i].worker;

		if (sl->index >= jc->spec.nslices || w >= jc->spec.nworkers)
			return tpu_error(err, TPU_E_PRECONDITION,
			    "job '%s' ran on %d slice(s) of %d workers; '%s' "
			    "now has slice %d worker %d",
			    jc->spec.name, jc->spec.nslices, jc->spec.nworkers,
			    jc->spec.slice, sl->index, w);
		jc->rank[i] = sl->index * jc->spec.nworkers + w;
	}
	{
		/* the local logs of every target and its session, all open
		   for the whole command */
		char *what = xasprintf("a job on %zu workers", n);

		rc = fanout_fd_room(&jc->sc, 1, 2, what, err);
		free(what);
		if (rc != 0)
			return rc;
	}
	{
		char *dir = jobs_local_dir(jc->spec.name);

		rc = fsutil_mkdir_private(dir, err);
		free(dir);
		if (rc != 0)
			return rc;
	}
	for (i = 0; i < n; i++)
		for (s = 0; s < 2; s++) {
			int sl = jc->rank[i] / jc->spec.nworkers;
			int w = jc->rank[i] % jc->spec.nworkers;
			char *p = jobs_local_log(jc->spec.name, sl, w, s + 1);
			struct stat st;
			int fd = open(
			    p, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);

			if (fd < 0 || fstat(fd, &st) != 0) {
				rc = tpu_error(err, TPU_E_IO, "%s: %s", p,
				    strerror(errno));
				free(p);
				if (fd >= 0)
					close(fd);
				return rc;
			}
			jc->fd[s][i] = fd;
			jc->off[s][i] = (uint64_t)st.st_size;
			free(p);
		}
	return 0;
}

/* Show one line (or piece) of a stream as jc->mode says. */
static void
render(struct jobcmd *jc, const struct fanout_who *who, uint64_t *nlines, int s,
    const char *data, size_t len, int eol)
{
	struct buf b;
	int fd = s == 1 && jc->mode != FANOUT_OUT_JSONL ? 2 : 1, e;

	if ((*nlines)++ < jc->since)
		return;
	if (fd == 1 && jc->out_errno != 0)
		return;
	buf_init(&b, BUF_NOCAP);
	fanout_format(&b, jc->mode, who, jc->spec.name, s + 1, data, len, eol);
	if (fd == 2)
		(void)tpu_write_all(fd, b.data, b.len); /* ignored, as fanout */
	else if ((e = fanout_write_stdout(b.data, b.len)) != 0) {
		/* the round in flight stops */
		jc->out_errno = e;
		if (jc->abort != NULL)
			*jc->abort = 1;
	}
	buf_release(&b);
}

static void
on_output(
    void *arg, size_t ridx, int stream, const char *data, size_t len, int flags)
{
	struct jobcmd *jc = arg;
	size_t i = jc->map != NULL ? jc->map[ridx] : ridx;
	int s = stream == 2 ? 1 : 0, eol = (flags & SSHPOOL_OUT_EOL) != 0;
	struct buf *t;

	jc->reached[i] = 1;
	if (jc->rstate != NULL && jc->rstate[i] == 0) {
		jc->rstate[i] = 1;
		maybe_stop(jc);
	}
	if (jc->capture) {
		if (s == 0 && jc->cap[i] == NULL)
			jc->cap[i] = xstrndup(data, len);
		return;
	}
	if (jc->fd[s] != NULL && jc->fd[s][i] >= 0) {
		(void)tpu_write_all(jc->fd[s][i], data, len);
		if (eol)
			(void)tpu_write_all(jc->fd[s][i], "\n", 1);
	}
	jc->off[s][i] += len + (size_t)eol;
	if (jc->tail[s] == NULL) {
		render(jc, &jc->who[i], &jc->lines[s][i], s, data, len, eol);
		return;
	}
	t = &jc->tail[s][i];
	if (!eol && t->len + len < JOBCMD_TAIL_MAX) {
		/* maybe a line cut by a dropped stream: its end may come */
		buf_append(t, data, len);
		return;
	}
	if (t->len == 0) {
		render(jc, &jc->who[i], &jc->lines[s][i], s, data, len, eol);
		return;
	}
	buf_append(t, data, len);
	render(jc, &jc->who[i], &jc->lines[s][i], s, t->data, t->len, eol);
	buf_release(t);
	buf_init(t, BUF_NOCAP);
}

/* Show what target i holds of a line (eol 0): its stream ended there. */
static void
flush_tail(struct jobcmd *jc, size_t i)
{
	int s;

	for (s = 0; s < 2 && jc->tail[s] != NULL; s++) {
		struct buf *t = &jc->tail[s][i];

		if (t->len > 0)
			render(jc, &jc->who[i], &jc->lines[s][i], s, t->data,
			    t->len, 0);
		buf_release(t);
		buf_init(t, BUF_NOCAP);
	}
}

void
jobcmd_replay(struct jobcmd *jc, const struct fanout_who *who, int slice,
    int worker, uint64_t nlines[2])
{
	int s;

	for (s = 0; s < 2; s++) {
		char *p = jobs_local_log(jc->spec.name, slice, worker, s + 1);
		struct buf b;
		struct tpu_err e;
		size_t off = 0;

		buf_init(&b, BUF_NOCAP);
		if (fsutil_read_file(p, 0, &b, NULL, &e) == 0)
			while (off < b.len) {
				const char *nl =
				    memchr(b.data + off, '\n', b.len - off);
				size_t n = nl != NULL
				               ? (size_t)(nl - (b.data + off))
				               : b.len - off;

				render(jc, who, &nlines[s], s, b.data + off, n,
				    nl != NULL);
				off += n + (nl != NULL);
			}
		buf_release(&b);
		free(p);
	}
}

/* Stop the round for a refresh once no target is still connecting. */
static void
maybe_stop(struct jobcmd *jc)
{
	size_t i;

	if ((!jc->want_refresh && !jc->want_check) || jc->abort == NULL ||
	    (jc->signaled != NULL && *jc->signaled != 0))
		return;
	for (i = 0; i < jc->sc.ntargets; i++)
		if (jc->rstate[i] == 0)
			return;
	*jc->abort = 1;
}

/*
 * A stream that ended (not dropped) in a round that shows output: what
 * it held of a last line is shown.  A stale cached description: stop the round
 * to read it again.
 */
static void
on_done(void *arg, size_t ridx, const struct sshpool_result *r)
{
	struct jobcmd *jc = arg;
	size_t i = jc->map != NULL ? jc->map[ridx] : ridx;

	if (!jc->capture && (r->status == SSHPOOL_S_OK ||
	                        r->status == SSHPOOL_S_REMOTE_NONZERO ||
	                        r->status == SSHPOOL_S_SIGNALED))
		flush_tail(jc, i); /* not a status round's end */
	jc->rstate[i] = 2;
	if (jc->refresh_ok && sshpool_status_unreachable(r->status))
		jc->want_refresh = 1;
	if (jc->lost_check != NULL && !jc->capture &&
	    r->status != SSHPOOL_S_OK && r->status != SSHPOOL_S_ABORTED &&
	    r->status != SSHPOOL_S_NOT_STARTED)
		jc->want_check = 1; /* a lost slice? (jobcmd_follow) */
	maybe_stop(jc);
}

/*
 * Keepalive of the job's sessions (ssh/server_alive_interval and
 * ssh/server_alive_count_max, as OpenSSH's ServerAliveInterval and
 * ServerAliveCountMax): a worker silent for interval * (count + 1) is
 * lost, not waited on forever.
 */
static void
alive_opts(const struct jobcmd *jc, struct sshpool_opts *po)
{
	const char *v, *es;

	if (jc->ctx == NULL)
		return;
	if ((v = config_get(jc->ctx->cfg, "ssh/server_alive_interval")) != NULL)
		po->alive_interval_ms =
		    (int)tpu_strtonum(v, 0, 3600, &es) * 1000;
	if ((v = config_get(jc->ctx->cfg, "ssh/server_alive_count_max")) !=
	    NULL)
		po->alive_count_max = (int)tpu_strtonum(v, 1, 100, &es);
}

int
jobcmd_round(struct jobcmd *jc, char **cmds, int timeout_s, int fail_fast,
    struct sshpool_result *results, struct tpu_err *err)
{
	size_t n = jc->sc.ntargets, k = 0, i;
	struct sshpool_target *sub = xcalloc(n > 0 ? n : 1, sizeof *sub);
	struct sshpool_result *sres = xcalloc(n > 0 ? n : 1, sizeof *sres);
	size_t *map = xcalloc(n > 0 ? n : 1, sizeof *map);
	struct sshpool_opts po = jc->sc.popts;
	int rc = 0;

	for (i = 0; i < n; i++) {
		memset(&results[i], 0, sizeof results[i]);
		results[i].status = SSHPOOL_S_NOT_STARTED;
		results[i].exit_status = -1;
		if (cmds[i] == NULL)
			continue;
		sub[k] = jc->sc.targets[i];
		sub[k].command = cmds[i];
		sub[k].env = NULL;
		sub[k].nenv = 0;
		map[k++] = i;
	}
	for (i = 0; jc->rstate != NULL && i < n; i++)
		jc->rstate[i] = cmds[i] != NULL ? 0 : 2;
	if (k > 0) {
		po.command = NULL;
		po.flags |=
		    SSHPOOL_F_LINES | (fail_fast ? SSHPOOL_F_FAIL_FAST : 0);
		po.command_timeout_ms = timeout_s * 1000;
		po.on_output = on_output;
		po.on_done = on_done;
		po.arg = jc;
		po.abort = jc->abort;
		if (jc->cache == NULL)
			jc->cache = sshpool_cache_new();
		po.cache = jc->cache;
		alive_opts(jc, &po);
		jc->map = map;
		/* short status/cancel commands: through a warm holder, on
		   its held shells for a status round (jc->shell; a cold run
		   execs: a shell would serve one command there) */
		if (jc->capture) {
			struct sshpool_opts wo = po;

			wo.flags |= jc->shell;
			rc = ssh_pool_job_run(
			    jc->ctx, &jc->sc, sub, k, &wo, sres, err);
		} else
			rc = 1;
		if (rc == 1)
			rc = sshpool_run(sub, k, &po, sres, err);
		jc->map = NULL;
		for (i = 0; i < k; i++) {
			results[map[i]] = sres[i];
			if (!sshpool_status_unreachable(sres[i].status) &&
			    sres[i].status != SSHPOOL_S_NOT_STARTED)
				jc->reached[map[i]] = 1;
		}
	}
	free(sub);
	free(sres);
	free(map);
	return rc;
}

static void
release_results(struct sshpool_result *r, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		sshpool_result_release(&r[i]);
}

/* A status line "NAME STATE..." of target i into its state. */
static int
take_status(struct jobcmd *jc, size_t i)
{
	const char *line = jc->cap[i];
	size_t nl = strlen(jc->spec.name);
	struct jobs_state st;

	if (line == NULL || strncmp(line, jc->spec.name, nl) != 0 ||
	    line[nl] != ' ' || jobs_state_parse(line + nl + 1, &st) != 0)
		return -1;
	/* no job where it ran and wrote output: the worker was wiped (its
	   node deleted or recreated while a session to it lived on) */
	if (st.kind == JOBS_MISSING &&
	    jobcmd_state(jc, i)->kind == JOBS_RUNNING && jc->off[0] != NULL &&
	    jc->off[0][i] + jc->off[1][i] > 0)
		st.kind = JOBS_LOST;
	/* an end recorded before stays (the worker wiped since) */
	jobs_state_merge(jobcmd_state(jc, i), &st);
	return 0;
}

/* shell: jc->shell for the round (SSHPOOL_F_SHELL...) */
static void
status_round(struct jobcmd *jc, char *(*mk)(const char *, int), int arg,
    const unsigned char *mask, int timeout_s, int shell)
{
	size_t n = jc->sc.ntargets, i;
	char **cmds = xcalloc(n, sizeof *cmds);
	struct sshpool_result *res = xcalloc(n, sizeof *res);
	struct tpu_err e;

	for (i = 0; i < n; i++) {
		free(jc->cap[i]);
		jc->cap[i] = NULL;
		if (mask == NULL || mask[i])
			cmds[i] = mk(jc->spec.name, arg);
	}
	jc->capture = 1;
	jc->shell = shell;
	tpu_err_init(&e);
	jobcmd_round(jc, cmds, timeout_s, 0, res, &e);
	jc->capture = 0;
	jc->shell = 0;
	for (i = 0; i < n; i++) {
		if (cmds[i] == NULL)
			continue;
		if (take_status(jc, i) != 0) {
			struct jobs_state *st = jobcmd_state(jc, i);

			/* no answer: the worker is gone (or never was); an
			   end recorded before stays what it was */
			log_info("%s: no job state (%s)%s", jc->who[i].node,
			    res[i].msg[0] != '\0'
			        ? res[i].msg
			        : sshpool_status_name(res[i].status),
			    jobs_state_known(st) ? "; keeping the recorded one"
			                         : "");
			jobs_state_merge(st, NULL);
		}
		free(cmds[i]);
	}
	release_results(res, n);
	free(res);
	free(cmds);
}

static char *
mk_status(const char *name, int arg)
{
	(void)arg;
	return jobs_status_cmd(name);
}

void
jobcmd_status(struct jobcmd *jc, const unsigned char *mask)
{
	/* a read: run again on an exec channel when a shell fails */
	status_round(jc, mk_status, 0, mask, 60, SSHPOOL_F_SHELL);
}

void
jobcmd_cancel(struct jobcmd *jc, int grace_s)
{
	size_t n = jc->sc.ntargets, i;
	unsigned char *mask = xcalloc(n > 0 ? n : 1, 1);

	for (i = 0; i < n; i++)
		mask[i] = !jobs_state_final(jobcmd_state(jc, i)) ||
		          jobcmd_state(jc, i)->kind == JOBS_LOST;
	/* the kill: never twice (reported when a shell fails mid-way) */
	status_round(jc, jobs_cancel_cmd, grace_s, mask, grace_s + 60,
	    SSHPOOL_F_SHELL | SSHPOOL_F_SHELL_ONCE);
	free(mask);
}

int
jobcmd_follow(struct jobcmd *jc, char **first, int timeout_s, int fail_fast,
    int wait, struct tpu_err *err)
{
	size_t n = jc->sc.ntargets, i;
	struct sshpool_result *res = xcalloc(n > 0 ? n : 1, sizeof *res);
	unsigned char *ask = xcalloc(n > 0 ? n : 1, 1);
	/* the stream dropped: its rest is still to be read, even once the
	   job has ended there */
	unsigned char *rest = xcalloc(n > 0 ? n : 1, 1);
	/* this round follows a job that ran (not its launch) */
	unsigned char *refollow = xcalloc(n > 0 ? n : 1, 1);
	/* the end is known (recorded): only the rest of the logs is read,
	   once; the state stays whatever the worker answers or not */
	unsigned char *known = xcalloc(n > 0 ? n : 1, 1);
	/* this round launches the job there (first or relaunch) */
	unsigned char *launching = xcalloc(n > 0 ? n : 1, 1);
	/* the workdir archive was fetched again for it (once) */
	unsigned char *refetched = xcalloc(n > 0 ? n : 1, 1);
	unsigned char *refetch = xcalloc(n > 0 ? n : 1, 1);
	char **cmds = xcalloc(n > 0 ? n : 1, sizeof *cmds);
	int64_t deadline =
	    timeout_s > 0 ? tpu_now_ms() + timeout_s * 1000LL : 0;
	char **relaunch = NULL;
	size_t nchecks = 0;
	int attempt, rc = 0;

	for (i = 0; first == NULL && i < n; i++)
		known[i] = jobs_state_known(jobcmd_state(jc, i));
	for (attempt = 0; attempt <= JOBCMD_REFOLLOW_MAX; attempt++) {
		size_t nact = 0, nask = 0, nrefetch = 0;
		int left = 0, prc, checking = 0;
		struct tpu_err e;

		if (deadline > 0) {
			int64_t ms = deadline - tpu_now_ms();

			if (ms <= 0) {
				rc = TPU_E_TIMEOUT;
				break;
			}
			left = (int)((ms + 999) / 1000);
		}
		for (i = 0; i < n; i++) {
			cmds[i] = NULL;
			refollow[i] = 0;
			launching[i] = 0;
			if (known[i]) {
				if (attempt == 0) {
					cmds[i] = jobs_follow_cmd(jc->spec.name,
					    jc->off[0][i], jc->off[1][i], 0);
					nact++;
				}
				continue;
			}
			if (jobs_state_final(jobcmd_state(jc, i)) && !rest[i])
				continue;
			if (attempt == 0 && first != NULL) {
				cmds[i] = xstrdup(first[i]);
				launching[i] = 1;
			} else if (relaunch != NULL && relaunch[i] != NULL) {
				cmds[i] = relaunch[i]; /* once */
				relaunch[i] = NULL;
				launching[i] = 1;
			} else {
				cmds[i] = jobs_follow_cmd(jc->spec.name,
				    jc->off[0][i], jc->off[1][i], wait);
				refollow[i] = attempt > 0;
			}
			nact++;
		}
		if (nact == 0)
			break;
		if (jc->out_errno != 0) {
			/* stdout failed before (e.g. replaying the local
			   copy): nothing to show the rest to */
			for (i = 0; i < n; i++)
				free(cmds[i]);
			rc = TPU_E_IO;
			break;
		}
		tpu_err_init(&e);
		prc = jobcmd_round(jc, cmds, left, fail_fast, res, &e);
		memset(ask, 0, n);
		memset(refetch, 0, n);
		for (i = 0; i < n; i++) {
			struct jobs_state *st = jobcmd_state(jc, i);

			if (cmds[i] == NULL)
				continue;
			if (known[i]) {
				if (res[i].status != SSHPOOL_S_OK &&
				    res[i].status != SSHPOOL_S_REMOTE_NONZERO)
					log_info(
					    "%s worker %d: the rest of the "
					    "log not read (%s); the end "
					    "recorded stays",
					    jc->who[i].node, jc->who[i].worker,
					    sshpool_status_name(res[i].status));
				continue;
			}
			switch (res[i].status) {
			case SSHPOOL_S_OK: /* the job exited 0 */
				rest[i] = 0;
				st->kind = JOBS_EXITED;
				st->code = 0;
				/* its end as seen here (no status round for
				   it): jobs' duration stops growing */
				if (st->end == 0)
					st->end = time(NULL);
				break;
			case SSHPOOL_S_REMOTE_NONZERO:
				rest[i] = 0;
				if (res[i].exit_status == JOBS_EXIT_REFETCH &&
				    launching[i] && !refetched[i] &&
				    first != NULL && first[i] != NULL) {
					/* its cached workdir archive was bad
					   (removed, nothing started): fetch
					   it again, launch again */
					refetch[i] = refetched[i] = 1;
					nrefetch++;
					break;
				}
				if (res[i].exit_status >= 95 &&
				    res[i].exit_status <= 98) {
					/* no such job, or it could not start;
					   gone from where it ran: the worker
					   was wiped (its node deleted while a
					   session to it lived on) */
					st->kind =
					    refollow[i] &&
					            st->kind == JOBS_RUNNING
					        ? JOBS_LOST
					        : JOBS_MISSING;
					break;
				}
				ask[i] = 1;
				break;
			case SSHPOOL_S_TIMEOUT:
				rc = TPU_E_TIMEOUT;
				break;
			case SSHPOOL_S_ABORTED:
			case SSHPOOL_S_NOT_STARTED:
				break;
			default:
				/* unreachable or dropped: ask, then resume
				   from the offsets (the job may have ended
				   meanwhile: its rest is read all the same) */
				ask[i] = 1;
				rest[i] = wait;
			}
			nask += ask[i];
		}
		if (jc->out_errno != 0) {
			/* the reader is gone (our abort): stop following;
			   the job goes on */
			rc = TPU_E_IO;
			release_results(res, n);
			for (i = 0; i < n; i++)
				free(cmds[i]);
			break;
		}
		if (jc->want_refresh &&
		    (jc->signaled == NULL || *jc->signaled == 0)) {
			struct tpu_err re;
			int changed;

			/* ours: read the nodes again, relaunch where the job
			   never started, follow the others */
			jc->want_refresh = 0;
			jc->refresh_ok = 0;
			*jc->abort = 0;
			tpu_err_init(&re);
			changed = jc->ctx != NULL
			              ? sshcmd_refresh(jc->ctx, &jc->sc, &re)
			              : 0;
			log_debug(
			    "job %s: a cached node description was stale "
			    "(%s); launching again where it did not start",
			    jc->spec.name, changed == 1 ? "refreshed" : re.msg);
			for (i = 0; i < n; i++) {
				free(relaunch != NULL ? relaunch[i] : NULL);
				if (relaunch == NULL)
					relaunch = xcalloc(n, sizeof *relaunch);
				relaunch[i] = NULL;
				/* never started there, or maybe not: the first
				   command resumes a job already launched */
				if (first != NULL && cmds[i] != NULL &&
				    (sshpool_status_unreachable(
				         res[i].status) ||
				        ((res[i].status == SSHPOOL_S_ABORTED ||
				             res[i].status ==
				                 SSHPOOL_S_NOT_STARTED) &&
				            jc->off[0][i] == 0 &&
				            jc->off[1][i] == 0)))
					relaunch[i] = xstrdup(first[i]);
			}
			release_results(res, n);
			for (i = 0; i < n; i++)
				free(cmds[i]);
			if (jc->prelaunch != NULL) {
				unsigned char *mask = xcalloc(n, 1);

				for (i = 0; i < n; i++)
					mask[i] = relaunch[i] != NULL;
				jc->prelaunch(jc, mask, jc->prelaunch_arg);
				free(mask);
			}
			continue;
		}
		if (jc->want_check &&
		    (jc->signaled == NULL || *jc->signaled == 0)) {
			/* ours (lost_check): the others are followed on */
			jc->want_check = 0;
			checking = 1;
			if (jc->abort != NULL)
				*jc->abort = 0;
			if (prc == TPU_E_INTERRUPTED)
				prc = 0;
		}
		if (prc == TPU_E_INTERRUPTED ||
		    (jc->abort != NULL && *jc->abort)) {
			rc = TPU_E_INTERRUPTED;
			release_results(res, n);
			for (i = 0; i < n; i++)
				free(cmds[i]);
			break;
		}
		for (i = 0; i < n; i++)
			free(cmds[i]);
		if (nrefetch > 0) {
			if (relaunch == NULL)
				relaunch = xcalloc(n, sizeof *relaunch);
			for (i = 0; i < n; i++) {
				if (!refetch[i])
					continue;
				log_info("%s worker %d: the cached workdir "
				         "archive failed its checksum; "
				         "fetching it again",
				    jc->who[i].node, jc->who[i].worker);
				free(relaunch[i]);
				relaunch[i] = xstrdup(first[i]);
			}
			if (jc->prelaunch != NULL)
				jc->prelaunch(jc, refetch, jc->prelaunch_arg);
			attempt--; /* not a dropped stream's resumption */
		}
		if (nask > 0)
			jobcmd_status(jc, ask);
		for (i = 0; i < n; i++)
			if (jobcmd_state(jc, i)->kind == JOBS_LOST)
				rest[i] = 0; /* not there: nothing to read */
		release_results(res, n);
		if (rc == TPU_E_TIMEOUT)
			break;
		if (checking && jc->lost_check(jc, jc->lost_arg)) {
			jc->slice_lost = 1;
			rc = TPU_E_PARTIAL;
			break;
		}
		if (checking && nchecks++ < n)
			attempt--; /* not a dropped stream's resumption */
		if (fail_fast) {
			for (i = 0; i < n; i++)
				if (jobs_state_final(jobcmd_state(jc, i)) &&
				    !jobs_state_ok(jobcmd_state(jc, i)))
					break;
			if (i < n) {
				rc = TPU_E_PARTIAL;
				break;
			}
		}
		if (!wait && nrefetch == 0)
			break;
	}
	for (i = 0; rc == 0 && wait && i < n; i++)
		if (!jobs_state_final(jobcmd_state(jc, i))) {
			log_warn("%s: the log stream kept dropping; "
			         "reported lost",
			    jc->who[i].node);
			jobcmd_state(jc, i)->kind = JOBS_LOST;
		} else if (rest[i])
			log_warn("%s worker %d: the log stream kept "
			         "dropping; its end is missing here "
			         "(tpuctl logs %s shows it)",
			    jc->who[i].node, jc->who[i].worker, jc->spec.name);
	for (i = 0; i < n; i++)
		flush_tail(jc, i); /* lost, interrupted, timed out */
	for (i = 0; relaunch != NULL && i < n; i++)
		free(relaunch[i]);
	free(relaunch);
	free(launching);
	free(refetched);
	free(refetch);
	free(res);
	free(ask);
	free(rest);
	free(refollow);
	free(known);
	free(cmds);
	(void)err;
	return rc;
}

/*
 * The outcomes of the targets not skipped, as fanout's summary takes
 * them: the job state's words ("exited 1", "killed by TERM", "lost"), no
 * time; who and outcomes are allocated, *np is their count.
 */
static void
outcomes(struct jobcmd *jc, struct fanout_who **whop,
    struct fanout_outcome **op, size_t *np)
{
	size_t n = jc->sc.ntargets, k = 0, i;
	struct fanout_who *who = xcalloc(n > 0 ? n : 1, sizeof *who);
	struct fanout_outcome *o = xcalloc(n > 0 ? n : 1, sizeof *o);

	for (i = 0; i < n; i++) {
		const struct jobs_state *st = jobcmd_state(jc, i);

		if (jc->skip[i])
			continue;
		who[k] = jc->who[i];
		jobs_state_str(st, o[k].what, sizeof o[k].what);
		o[k].duration_ms = -1;
		o[k].ok = jobs_state_ok(st);
		o[k].reached = jc->reached[i];
		k++;
	}
	*whop = who;
	*op = o;
	*np = k;
}

void
jobcmd_print_states(struct jobcmd *jc)
{
	struct fanout_who *who;
	struct fanout_outcome *o;
	size_t n;

	outcomes(jc, &who, &o, &n);
	fanout_print_outcomes(who, o, n);
	free(who);
	free(o);
}

int
jobcmd_out_error(const struct jobcmd *jc, int *epipe, struct tpu_err *err)
{
	*epipe = 0;
	tpu_err_init(err);
	if (jc->out_errno == EPIPE) {
		*epipe = 1;
		return 0;
	}
	return tpu_error(err, TPU_E_IO, "write error on standard output: %s",
	    strerror(jc->out_errno != 0 ? jc->out_errno : EIO));
}

int
jobcmd_summary(struct jobcmd *jc, int print, struct tpu_err *err)
{
	struct fanout_who *who;
	struct fanout_outcome *o;
	char *what = xasprintf("job %s", jc->spec.name);
	size_t n;
	int rc;

	outcomes(jc, &who, &o, &n);
	if (print)
		fanout_summary(who, o, n, what, jc->sc.qr ? jc->sc.nslices : 0);
	rc = fanout_contract(o, n, what, NULL, err);
	free(what);
	free(who);
	free(o);
	return rc;
}

const char *
jobcmd_master_addr(const struct jobcmd *jc)
{
	size_t i;

	for (i = 0; i < jc->sc.ntargets; i++) {
		const struct sshcmd_slice *sl = sshcmd_slice_of(&jc->sc, i);
		const cJSON *eps = cJSON_GetObjectItemCaseSensitive(
		    sl->node, "networkEndpoints");
		const cJSON *ip = cJSON_GetObjectItemCaseSensitive(
		    cJSON_GetArrayItem(eps, 0), "ipAddress");

		if (sl->index == 0 && cJSON_IsString(ip))
			return ip->valuestring;
	}
	return jc->sc.ntargets > 0 ? jc->sc.targets[0].host : "127.0.0.1";
}
