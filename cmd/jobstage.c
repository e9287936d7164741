/*
 * The workdir archive in the staging bucket (jobstage.h): one upload per
 * content hash, the media URL the workers pull.
 */
#include <sys/stat.h>

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "gcs.h"
#include "gcsxfer.h"
#include "jobstage.h"
#include "log.h"
#include "util.h"
#include "xmalloc.h"

int
jobstage_upload(struct tpu_ctx *ctx, const char *tar, const char *hash,
    const struct gcs_url *u, const char *what, char **media_url, char **object,
    int *created, struct tpu_err *err)
{
	struct gcs *g = NULL;
	struct gcs_object obj;
	struct gcsx_opts o;
	struct tpu_err e;
	struct stat st;
	char *prefix = xstrdup(u->object), *name;
	size_t k = strlen(prefix);
	int rc;

	if (created != NULL)
		*created = 0;
	while (k > 0 && prefix[k - 1] == '/')
		prefix[--k] = '\0';
	name = k > 0 ? xasprintf("%s/%s.tar", prefix, hash)
	             : xasprintf("%s.tar", hash);
	free(prefix);
	memset(&obj, 0, sizeof obj);
	if ((rc = ctx_gcs_open(ctx, &g, err)) != 0)
		goto out;
	tpu_err_init(&e);
	rc = gcs_stat(g, u->bucket, name, 0, &obj, &e);
	if (rc == 0 && stat(tar, &st) == 0 && obj.size == (int64_t)st.st_size) {
		log_info(
		    "workdir already staged as gs://%s/%s", u->bucket, name);
	} else if (rc == 0 || rc == TPU_E_NOTFOUND) {
		gcs_object_release(&obj);
		memset(&obj, 0, sizeof obj);
		gcsx_opts_init(&o);
		rc = gcsx_upload(g, tar, u->bucket, name, &o, &obj, err);
		if (rc != 0) {
			tpu_error_prefix(err, "%s", what);
			goto out;
		}
		if (created != NULL)
			*created = 1;
		log_info("workdir staged as gs://%s/%s", u->bucket, name);
	} else {
		*err = e;
		tpu_error_prefix(err, "%s", what);
		goto out;
	}
	*media_url = gcs_media_url(g, u->bucket, name, obj.generation);
	if (object != NULL) {
		*object = name;
		name = NULL;
	}
out:
	gcs_object_release(&obj);
	gcs_close(g);
	free(name);
	return rc;
}

int
jobstage_remove(struct tpu_ctx *ctx, const char *bucket, const char *name,
    struct tpu_err *err)
{
	struct gcs *g = NULL;
	int rc;

	if ((rc = ctx_gcs_open(ctx, &g, err)) != 0)
		return rc;
	rc = gcs_delete(g, bucket, name, -1, err);
	gcs_close(g);
	return rc;
}
