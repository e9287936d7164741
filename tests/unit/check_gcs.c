/*
 * Unit tests for src/gcs.c: object resource parsing, request URL
 * building (percent-encoded names, generations), objects.list paging and
 * the retry flags against a canned loopback server.
 */
#include <sys/stat.h>

#include <stdlib.h>
#include <string.h>

#include <check.h>

#include "canned_server.h"
#include "config.h"
#include "ctx.h"
#include "gcs.h"
#include "http.h"
#include "json.h"
#include "xmalloc.h"

static cJSON *
pj(const char *s)
{
	struct tpu_err err;
	cJSON *j = json_parse(s, strlen(s), "test", &err);

	ck_assert_ptr_nonnull(j);
	return j;
}

START_TEST(object_parse)
{
	struct gcs_object o;
	struct tpu_err err;
	cJSON *j = pj("{\"kind\":\"storage#object\",\"bucket\":\"b\","
	              "\"name\":\"a?b#c%2F\",\"size\":\"1234567890123\","
	              "\"generation\":\"1700000000000001\","
	              "\"metageneration\":\"2\",\"crc32c\":\"AAAAAA==\","
	              "\"md5Hash\":\"1B2M2Y8AsgTpgAmY7PhCfg==\","
	              "\"contentType\":\"text/plain\",\"etag\":\"CAE=\","
	              "\"updated\":\"2026-12-01T00:00:00.000Z\"}");

	tpu_err_init(&err);
	ck_assert_int_eq(gcs_object_from_json(j, &o, &err), 0);
	ck_assert_str_eq(o.name, "a?b#c%2F");
	ck_assert_str_eq(o.bucket, "b");
	ck_assert(o.size == 1234567890123LL);
	ck_assert(o.generation == 1700000000000001LL);
	ck_assert(o.metageneration == 2);
	ck_assert_int_eq(o.has_crc32c, 1);
	ck_assert_uint_eq(o.crc32c, 0);
	ck_assert_str_eq(o.md5_b64, "1B2M2Y8AsgTpgAmY7PhCfg==");
	ck_assert_str_eq(o.content_type, "text/plain");
	ck_assert_str_eq(o.updated, "2026-12-01T00:00:00.000Z");
	ck_assert_str_eq(json_opt_string(o.json, "kind", ""), "storage#object");
	gcs_object_release(&o);
	cJSON_Delete(j);

	/* 0 B object without optional fields */
	j = pj("{\"bucket\":\"b\",\"name\":\"z\",\"size\":\"0\"}");
	ck_assert_int_eq(gcs_object_from_json(j, &o, &err), 0);
	ck_assert(o.size == 0);
	ck_assert_int_eq(o.has_crc32c, 0);
	ck_assert_ptr_null(o.md5_b64);
	gcs_object_release(&o);
	cJSON_Delete(j);
}
END_TEST

START_TEST(object_parse_bad)
{
	static const char *const bad[] = {
		"[]",
		"{\"bucket\":\"b\"}",
		"{\"name\":\"n\"}",
		"{\"bucket\":\"b\",\"name\":\"\"}",
		"{\"bucket\":\"b\",\"name\":\"n\",\"size\":\"-1\"}",
		"{\"bucket\":\"b\",\"name\":\"n\",\"size\":\"12x\"}",
		"{\"bucket\":\"b\",\"name\":\"n\",\"generation\":true}",
		"{\"bucket\":\"b\",\"name\":\"n\",\"crc32c\":\"***\"}",
	};
	size_t i;

	for (i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		struct gcs_object o;
		struct tpu_err err;
		cJSON *j = pj(bad[i]);

		tpu_err_init(&err);
		ck_assert_int_eq(gcs_object_from_json(j, &o, &err), TPU_E_API);
		ck_assert(err.msg[0] != '\0');
		gcs_object_release(&o);
		cJSON_Delete(j);
	}
}
END_TEST

START_TEST(object_urls)
{
	char *u;

	u = gcs_object_url("http://h/", "b", "a?b#c%2F");
	ck_assert_str_eq(u, "http://h/storage/v1/b/b/o/a%3Fb%23c%252F");
	free(u);
	u = gcs_object_url(
	    "https://storage.googleapis.com/", "b", "d/\xc3\xbc");
	ck_assert_str_eq(
	    u, "https://storage.googleapis.com/storage/v1/b/b/o/d%2F%C3%BC");
	free(u);
}
END_TEST

/* A ctx whose storage endpoint is the canned server, token from a file. */
static char tokpath[64];

static void
ctx_setup(struct tpu_ctx *ctx)
{
	FILE *fp;
	char base[64];

	memset(ctx, 0, sizeof *ctx);
	ctx->prog = "tpuctl";
	ctx->cfg = config_new();
	output_init(&ctx->out);
	snprintf(
	    tokpath, sizeof tokpath, "/tmp/check_gcs_tok.%d", (int)getpid());
	fp = fopen(tokpath, "w");
	ck_assert_ptr_nonnull(fp);
	fputs("tok-123\n", fp);
	fchmod(fileno(fp), 0600);
	fclose(fp);
	snprintf(base, sizeof base, "http://127.0.0.1:%d/", server_port);
	config_set_flag(ctx->cfg, "auth/access_token_file", tokpath);
	config_set_flag(ctx->cfg, "api_endpoint_overrides/storage", base);
}

static void
ctx_teardown(struct tpu_ctx *ctx)
{
	ctx_release(ctx);
	config_free(ctx->cfg);
	output_release(&ctx->out);
	unlink(tokpath);
}

static char *
slurp(const char *p)
{
	FILE *fp = fopen(p, "r");
	char *s = xcalloc(1, 1 << 16);

	ck_assert_ptr_nonnull(fp);
	if (fread(s, 1, (1 << 16) - 1, fp) == 0)
		s[0] = '\0';
	fclose(fp);
	return s;
}

struct seen {
	char names[16][64];
	int n, nprefix;
};

static int
collect(void *arg, const struct gcs_object *o, const char *prefix)
{
	struct seen *s = arg;

	if (prefix != NULL) {
		s->nprefix++;
		snprintf(s->names[s->n++], 64, "P:%s", prefix);
	} else
		snprintf(s->names[s->n++], 64, "%s", o->name);
	return 0;
}

#define REPLY(body)                                                            \
	"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"                \
	"Connection: close\r\n\r\n" body

START_TEST(list_paging)
{
	static const char *const rep[] = {
		REPLY("{\"prefixes\":[\"d/\"],\"items\":[{\"bucket\":\"b\","
		      "\"name\":\"a\",\"size\":\"1\"}],"
		      "\"nextPageToken\":\"t/1+\"}"),
		"HTTP/1.1 503 Service Unavailable\r\nContent-Length: 0\r\n"
		"Connection: close\r\n\r\n",
		REPLY("{\"items\":[{\"bucket\":\"b\",\"name\":\"b?#\","
		      "\"size\":\"0\"}]}"),
	};
	struct gcs_list_opts lo = {
		.prefix = "p/x y", .delimiter = "/", .page_size = 2
	};
	struct tpu_ctx ctx;
	struct tpu_err err;
	struct seen s;
	struct gcs *g;
	char *log;

	serve(rep, 3);
	ctx_setup(&ctx);
	tpu_err_init(&err);
	memset(&s, 0, sizeof s);
	ck_assert_int_eq(ctx_gcs_open(&ctx, &g, &err), 0);
	ck_assert_int_eq(gcs_list(g, "b", &lo, collect, &s, &err), 0);
	ck_assert_int_eq(s.n, 3);
	ck_assert_int_eq(s.nprefix, 1);
	ck_assert_str_eq(s.names[0], "P:d/");
	ck_assert_str_eq(s.names[1], "a");
	ck_assert_str_eq(s.names[2], "b?#");
	gcs_close(g);
	log = slurp(logpath);
	ck_assert_ptr_nonnull(strstr(log,
	    "GET "
	    "/storage/v1/b/b/o?maxResults=2&prefix=p%2Fx%20y&delimiter=%2F "));
	/* the 503 was retried with the same page token, encoded */
	ck_assert_ptr_nonnull(strstr(log, "&pageToken=t%2F1%2B "));
	ck_assert_ptr_nonnull(strstr(log, "Authorization: Bearer tok-123"));
	/* ... twice: the failed attempt and its retry */
	ck_assert_ptr_nonnull(
	    strstr(strstr(log, "pageToken=") + 1, "pageToken=t%2F1%2B "));
	free(log);
	ctx_teardown(&ctx);
	canned_cleanup();
}
END_TEST

static int
collect_bucket(void *arg, const cJSON *b)
{
	struct seen *s = arg;

	snprintf(s->names[s->n++], 64, "%s",
	    cJSON_GetObjectItemCaseSensitive(b, "name")->valuestring);
	return 0;
}

START_TEST(bucket_list_paging)
{
	static const char *const rep[] = {
		REPLY("{\"kind\":\"storage#buckets\",\"items\":[{\"name\":"
		      "\"b1\"}],\"nextPageToken\":\"b/1\"}"),
		REPLY("{\"kind\":\"storage#buckets\",\"items\":[{\"name\":"
		      "\"b2\"}]}"),
		REPLY("{\"items\":[{\"location\":\"US\"}]}"),
	};
	struct tpu_ctx ctx;
	struct tpu_err err;
	struct seen s;
	struct gcs *g;
	char *log;

	serve(rep, 3);
	ctx_setup(&ctx);
	tpu_err_init(&err);
	memset(&s, 0, sizeof s);
	ck_assert_int_eq(ctx_gcs_open(&ctx, &g, &err), 0);
	ck_assert_int_eq(
	    gcs_bucket_list(g, "my proj", collect_bucket, &s, &err), 0);
	ck_assert_int_eq(s.n, 2);
	ck_assert_str_eq(s.names[0], "b1");
	ck_assert_str_eq(s.names[1], "b2");
	/* an item without a name is a malformed reply */
	ck_assert_int_eq(
	    gcs_bucket_list(g, "p", collect_bucket, &s, &err), TPU_E_API);
	gcs_close(g);
	log = slurp(logpath);
	ck_assert_ptr_nonnull(strstr(
	    log, "GET /storage/v1/b?project=my%20proj&maxResults=1000 "));
	ck_assert_ptr_nonnull(strstr(log, "&pageToken=b%2F1 "));
	free(log);
	ctx_teardown(&ctx);
	canned_cleanup();
}
END_TEST

START_TEST(stat_delete_insert)
{
	static const char *const rep[] = {
		REPLY("{\"bucket\":\"b\",\"name\":\"a?b#c%2F\",\"size\":\"1\","
		      "\"generation\":\"7\"}"),
		"HTTP/1.1 404 Not Found\r\nContent-Type: application/json\r\n"
		"Connection: close\r\n\r\n"
		"{\"error\":{\"code\":404,\"message\":\"No such object\"}}",
		"HTTP/1.1 204 No Content\r\nConnection: close\r\n\r\n",
		"HTTP/1.1 409 Conflict\r\nContent-Type: application/json\r\n"
		"Connection: close\r\n\r\n"
		"{\"error\":{\"code\":409,\"message\":\"You already own it\"}}",
		"HTTP/1.1 409 Conflict\r\nContent-Type: application/json\r\n"
		"Connection: close\r\n\r\n"
		"{\"error\":{\"code\":409,\"message\":\"The bucket you tried "
		"to delete is not empty.\"}}",
		"HTTP/1.1 204 No Content\r\nConnection: close\r\n\r\n",
	};
	struct tpu_ctx ctx;
	struct tpu_err err;
	struct gcs_object o;
	struct gcs *g, *g2;
	char *log, *u;

	serve(rep, 6);
	ctx_setup(&ctx);
	tpu_err_init(&err);
	ck_assert_int_eq(ctx_gcs_open(&ctx, &g, &err), 0);
	ck_assert_int_eq(gcs_clone(g, &g2, &err), 0);
	ck_assert_str_eq(gcs_base(g), gcs_base(g2));
	ck_assert_int_eq(gcs_stat(g2, "b", "a?b#c%2F", 7, &o, &err), 0);
	ck_assert(o.generation == 7);
	u = gcs_media_url(g, "b", o.name, o.generation);
	ck_assert_ptr_nonnull(strstr(
	    u, "/storage/v1/b/b/o/a%3Fb%23c%252F?alt=media&generation=7"));
	free(u);
	gcs_object_release(&o);
	ck_assert_int_eq(gcs_stat(g, "b", "gone", 0, &o, &err), TPU_E_NOTFOUND);
	ck_assert_int_eq(gcs_delete(g, "b", "d/e", 9, &err), 0);
	ck_assert_int_eq(
	    gcs_bucket_insert(g, "proj", "nb", "US", &err), TPU_E_CONFLICT);
	ck_assert_int_eq(gcs_bucket_delete(g, "nb", &err), TPU_E_CONFLICT);
	ck_assert_ptr_nonnull(strstr(err.msg, "not empty"));
	ck_assert_int_eq(gcs_bucket_delete(g, "n b", &err), 0);
	gcs_close(g2);
	gcs_close(g);
	log = slurp(logpath);
	ck_assert_ptr_nonnull(
	    strstr(log, "GET /storage/v1/b/b/o/a%3Fb%23c%252F?generation=7 "));
	ck_assert_ptr_nonnull(
	    strstr(log, "DELETE /storage/v1/b/b/o/d%2Fe?ifGenerationMatch=9 "));
	ck_assert_ptr_nonnull(strstr(log, "POST /storage/v1/b?project=proj "));
	ck_assert_ptr_nonnull(strstr(log, "\"location\":\"US\""));
	ck_assert_ptr_nonnull(strstr(log, "DELETE /storage/v1/b/nb "));
	ck_assert_ptr_nonnull(strstr(log, "DELETE /storage/v1/b/n%20b "));
	free(log);
	ctx_teardown(&ctx);
	canned_cleanup();
}
END_TEST

START_TEST(compose_pinned)
{
	static const char *const rep[] = {
		REPLY("{\"bucket\":\"b\",\"name\":\"big\",\"size\":\"3\","
		      "\"generation\":\"11\",\"crc32c\":\"AAAAAA==\"}"),
		REPLY("{\"bucket\":\"b\",\"name\":\"big\",\"size\":\"3\","
		      "\"generation\":\"12\"}"),
	};
	static const char *const names[] = { "p-0", "p-1", "p-2" };
	static const int64_t gens[] = { 5, 0, 1700000000000001LL };
	struct tpu_ctx ctx;
	struct tpu_err err;
	struct gcs_object o;
	struct gcs *g;
	char *log, *second;

	serve(rep, 2);
	ctx_setup(&ctx);
	tpu_err_init(&err);
	ck_assert_int_eq(ctx_gcs_open(&ctx, &g, &err), 0);
	ck_assert_msg(gcs_compose(g, "b", names, gens, 3, "big", "text/plain",
	                  0, &o, &err) == 0,
	    "%s", err.msg);
	ck_assert(o.generation == 11);
	gcs_object_release(&o);
	ck_assert_int_eq(
	    gcs_compose(g, "b", names, NULL, 3, "big", NULL, -1, &o, &err), 0);
	gcs_object_release(&o);
	gcs_close(g);
	log = slurp(logpath);
	ck_assert_ptr_nonnull(strstr(
	    log, "POST /storage/v1/b/b/o/big/compose?ifGenerationMatch=0 "));
	/* each source pinned to its generation; 0 means unpinned */
	ck_assert_ptr_nonnull(strstr(log,
	    "\"sourceObjects\":[{\"name\":\"p-0\",\"generation\":\"5\"},"
	    "{\"name\":\"p-1\"},{\"name\":\"p-2\",\"generation\":"
	    "\"1700000000000001\"}]"));
	second = strstr(log, "POST /storage/v1/b/b/o/big/compose ");
	ck_assert_ptr_nonnull(second);
	ck_assert_ptr_null(strstr(second, "\"generation\""));
	free(log);
	ctx_teardown(&ctx);
	canned_cleanup();
}
END_TEST

static Suite *
suite(void)
{
	Suite *s = suite_create("gcs");
	TCase *tc = tcase_create("core");

	tcase_set_timeout(tc, 30);
	tcase_add_test(tc, object_parse);
	tcase_add_test(tc, object_parse_bad);
	tcase_add_test(tc, object_urls);
	tcase_add_test(tc, list_paging);
	tcase_add_test(tc, bucket_list_paging);
	tcase_add_test(tc, stat_delete_insert);
	tcase_add_test(tc, compose_pinned);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	return canned_run(suite());
}
