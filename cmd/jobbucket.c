/*
 * A submitted job's objects in its bucket, read into its local record
 * (jobbucket.h).
 */
#include <sys/stat.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "buf.h"
#include "fsutil.h"
#include "gcs.h"
#include "gcsurl.h"
#include "gcsxfer.h"
#include "jobbucket.h"
#include "jobs.h"
#include "xmalloc.h"

/*
 * Object name of bucket into dest (replaced whole) when it is there and
 * at least min bytes long; 1 fetched, 0 absent or shorter, or an errc.
 */
static int
fetch(struct gcs *g, const char *bucket, const char *name, const char *dest,
    int64_t min, struct tpu_err *err)
{
	struct gcs_object obj;
	struct gcsx_opts o;
	struct tpu_err e;
	int rc;

	memset(&obj, 0, sizeof obj);
	tpu_err_init(&e);
	rc = gcs_stat(g, bucket, name, 0, &obj, &e);
	if (rc == TPU_E_NOTFOUND) {
		gcs_object_release(&obj);
		return 0;
	}
	if (rc != 0) {
		*err = e;
		gcs_object_release(&obj);
		return rc;
	}
	if (obj.size < min) {
		gcs_object_release(&obj);
		return 0;
	}
	gcsx_opts_init(&o);
	o.no_tracker = 1;
	rc = gcsx_download(g, &obj, dest, &o, err);
	gcs_object_release(&obj);
	return rc != 0 ? rc : 1;
}

static int64_t
file_size(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0 ? (int64_t)st.st_size : 0;
}

int
jobbucket_sync(struct tpu_ctx *ctx, struct jobcmd *jc, int gone, size_t *found,
    struct tpu_err *err)
{
	struct gcs_url u;
	struct gcs *g = NULL;
	char *dir, *tmp;
	int rc, sl, w;

	*found = 0;
	if (jc->spec.log_url == NULL || jc->states == NULL)
		return 0;
	if ((rc = gcs_url_parse(jc->spec.log_url, &u, err)) != 0)
		return tpu_error_prefix(err, "job %s", jc->spec.name);
	dir = jobs_local_dir(jc->spec.name);
	tmp = xasprintf("%s/.bucket-state", dir);
	if ((rc = fsutil_mkdir_private(dir, err)) != 0 ||
	    (rc = ctx_gcs_open(ctx, &g, err)) != 0)
		goto out;
	for (sl = 0; sl < jc->spec.nslices; sl++)
		for (w = 0; w < jc->spec.nworkers; w++) {
			struct jobs_state *st =
			    &jc->states[sl * jc->spec.nworkers + w];
			char *base = xasprintf("%sw%d-%d", u.object, sl, w);
			char *name = xasprintf("%s.state", base);
			int s, got;

			/* the state first: a final one means final logs */
			got = fetch(g, u.bucket, name, tmp, 0, err);
			free(name);
			if (got < 0) {
				rc = got;
				free(base);
				goto out;
			}
			if (got == 1) {
				struct buf b;
				struct jobs_state ns;
				struct tpu_err e;

				buf_init(&b, BUF_NOCAP);
				if (fsutil_read_file(tmp, 0, &b, NULL, &e) ==
				        0 &&
				    jobs_state_parse(
				        b.data != NULL ? b.data : "", &ns) ==
				        0 &&
				    !jobs_state_known(st))
					*st = ns;
				buf_release(&b);
				unlink(tmp);
				(*found)++;
			}
			for (s = 1; s <= 2; s++) {
				char *p =
				    jobs_local_log(jc->spec.name, sl, w, s);

				name = xasprintf(
				    "%s.%s", base, s == 2 ? "err" : "out");
				rc = fetch(
				    g, u.bucket, name, p, file_size(p), err);
				free(name);
				free(p);
				if (rc < 0) {
					free(base);
					goto out;
				}
			}
			rc = 0;
			free(base);
			if (gone && !jobs_state_final(st) &&
			    (got == 1 || st->kind == JOBS_RUNNING))
				st->kind = JOBS_LOST;
		}
	{
		struct tpu_err e;

		tpu_err_init(&e);
		jobcmd_save(jc, &e);
	}
out:
	gcs_close(g);
	gcs_url_release(&u);
	free(tmp);
	free(dir);
	return rc;
}
