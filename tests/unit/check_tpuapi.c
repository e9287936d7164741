/*
 * Unit tests for the long-running-operation wait of src/tpuapi.c against
 * a scripted loopback server: the progress hook hears BEGIN, one STATE
 * per poll that is not final and END, and the timeout message carries
 * the resume hook's words (src/ names no command of its own).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <check.h>

#include "canned_server.h"
#include "http.h"
#include "tpuapi.h"
#include "util.h"
#include "xmalloc.h"

#define REPLY(body)                                                            \
	"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"                \
	"Connection: close\r\n\r\n" body

struct heard {
	char events[256];
	int begins, states, ends;
	char *resume_name, *resume_zone;
	int resume_kind;
};

static void
on_progress(
    void *arg, enum tpuapi_wait_event ev, const char *state, int64_t elapsed_ms)
{
	struct heard *h = arg;
	size_t n = strlen(h->events);

	ck_assert_int_ge(elapsed_ms, 0);
	switch (ev) {
	case TPUAPI_WAIT_BEGIN:
		ck_assert_ptr_null(state);
		h->begins++;
		snprintf(h->events + n, sizeof h->events - n, "B;");
		break;
	case TPUAPI_WAIT_STATE:
		h->states++;
		snprintf(h->events + n, sizeof h->events - n, "S:%s;", state);
		break;
	case TPUAPI_WAIT_END:
		h->ends++;
		snprintf(h->events + n, sizeof h->events - n, "E;");
		break;
	}
}

static char *
on_resume(
    void *arg, enum tpuapi_wait_kind kind, const char *name, const char *zone)
{
	struct heard *h = arg;

	h->resume_kind = (int)kind;
	free(h->resume_name);
	free(h->resume_zone);
	h->resume_name = xstrdup(name);
	h->resume_zone = zone != NULL ? xstrdup(zone) : NULL;
	return xasprintf("resume %s in %s", name, zone != NULL ? zone : "-");
}

/* One test's client, wait options and what the hooks heard. */
struct fx {
	struct tpuapi api;
	struct tpuapi_wait w;
	struct tpu_err err;
	struct heard h;
	struct http *http;
};

/* Serve the n replies, then set up f against the server. */
static void
setup(struct fx *f, const char *const *rep, int n)
{
	struct http_opts o;
	char *base;

	serve(rep, n);
	memset(f, 0, sizeof *f);
	memset(&o, 0, sizeof o);
	retry_policy_default(&o.retry);
	o.retry.initial_ms = 20;
	o.retry.cap_ms = 100;
	o.retry.max_attempts = 2;
	tpu_err_init(&f->err);
	f->http = http_new(&o, &f->err);
	ck_assert_ptr_nonnull(f->http);
	base = xasprintf("http://127.0.0.1:%d/", server_port);
	tpuapi_init(&f->api, f->http, base, "p");
	free(base);
	f->w.zone = "z1";
	f->w.progress = on_progress;
	f->w.resume = on_resume;
	f->w.arg = &f->h;
}

static void
teardown(struct fx *f)
{
	free(f->h.resume_name);
	free(f->h.resume_zone);
	tpuapi_release(&f->api);
	http_free(f->http);
}

START_TEST(op_wait_reports_states)
{
	static const char *const rep[] = {
		REPLY("{\"name\":\"projects/p/locations/z1/operations/op-1\","
		      "\"done\":false}"),
		REPLY("{\"name\":\"projects/p/locations/z1/operations/op-1\","
		      "\"done\":true,\"response\":{\"x\":1}}"),
	};
	struct fx f;
	cJSON *res = NULL;
	int rc;

	setup(&f, rep, 2);
	rc = tpuapi_op_wait(&f.api, "projects/p/locations/z1/operations/op-1",
	    &f.w, &res, &f.err);
	ck_assert_msg(rc == 0, "rc %d: %s", rc, f.err.msg);
	ck_assert_ptr_nonnull(res);
	ck_assert_str_eq(f.h.events, "B;S:running;E;");
	cJSON_Delete(res);
	teardown(&f);
}
END_TEST

START_TEST(op_timeout_names_resume_hint)
{
	static const char *const rep[] = {
		REPLY("{\"name\":\"projects/p/locations/z1/operations/op-2\","
		      "\"done\":false}"),
	};
	struct fx f;
	int rc;

	setup(&f, rep, 1);
	f.w.deadline_ms = 1; /* long past */
	rc = tpuapi_op_wait(&f.api, "projects/p/locations/z1/operations/op-2",
	    &f.w, NULL, &f.err);
	ck_assert_int_eq(rc, TPU_E_TIMEOUT);
	ck_assert_int_eq(f.h.resume_kind, TPUAPI_WAIT_OPERATION);
	ck_assert_str_eq(f.h.resume_name, "op-2");
	ck_assert_str_eq(f.h.resume_zone, "z1");
	ck_assert_str_eq(f.err.msg,
	    "timed out waiting for operation op-2; it may still succeed: "
	    "check with 'resume op-2 in z1'");
	ck_assert_str_eq(f.h.events, "B;S:running;E;");
	ck_assert_ptr_null(strstr(f.err.msg, "tpuctl"));
	teardown(&f);
}
END_TEST

START_TEST(node_timeout_without_hooks)
{
	static const char *const rep[] = {
		REPLY("{\"name\":\"projects/p/locations/z2/nodes/n1\","
		      "\"state\":\"CREATING\"}"),
	};
	struct fx f;
	int rc;

	setup(&f, rep, 1);
	f.w.deadline_ms = 1;
	f.w.progress = NULL;
	f.w.resume = NULL;
	rc = tpuapi_node_wait_ready(&f.api, "z2", "n1", &f.w, NULL, &f.err);
	ck_assert_int_eq(rc, TPU_E_TIMEOUT);
	ck_assert_str_eq(
	    f.err.msg, "timed out waiting for node 'n1'; it may still succeed");
	ck_assert_str_eq(f.h.events, "");
	teardown(&f);
}
END_TEST

START_TEST(node_states_and_resume_kind)
{
	static const char *const rep[] = {
		REPLY("{\"name\":\"projects/p/locations/z2/nodes/n1\","
		      "\"state\":\"CREATING\",\"health\":\"UNHEALTHY\"}"),
	};
	struct fx f;
	int rc;

	setup(&f, rep, 1);
	f.w.deadline_ms = 1;
	rc = tpuapi_node_wait_ready(&f.api, "z2", "n1", &f.w, NULL, &f.err);
	ck_assert_int_eq(rc, TPU_E_TIMEOUT);
	ck_assert_int_eq(f.h.resume_kind, TPUAPI_WAIT_NODE);
	ck_assert_str_eq(f.h.resume_name, "n1");
	ck_assert_str_eq(f.h.resume_zone, "z2");
	ck_assert_str_eq(f.h.events, "B;S:CREATING, UNHEALTHY;E;");
	ck_assert_ptr_nonnull(
	    strstr(f.err.msg, "check with 'resume n1 in z2'"));
	teardown(&f);
}
END_TEST

static Suite *
tpuapi_suite(void)
{
	Suite *s = suite_create("tpuapi");
	TCase *tc = tcase_create("wait");

	tcase_set_timeout(tc, 20);
	tcase_add_checked_fixture(tc, NULL, canned_cleanup);
	tcase_add_test(tc, op_wait_reports_states);
	tcase_add_test(tc, op_timeout_names_resume_hint);
	tcase_add_test(tc, node_timeout_without_hooks);
	tcase_add_test(tc, node_states_and_resume_kind);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	return canned_run(tpuapi_suite());
}
