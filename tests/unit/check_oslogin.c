/*
 * Unit tests for the OS Login client (src/oslogin.c): the enable-oslogin
 * rule, the username of login profile replies (primary account, the only
 * account, none, a name that is not a POSIX name), and one import against
 * a canned loopback server answering with Google's reply shape (the
 * request line, the body, the username taken).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <check.h>

#include "buf.h"
#include "compute.h"
#include "canned_server.h"
#include "fsutil.h"
#include "http.h"
#include "oslogin.h"

/* An importSshPublicKey reply as oslogin.googleapis.com sends it. */
#define PROFILE                                                                \
	"{\"loginProfile\":{\"name\":\"sa@p.iam.gserviceaccount.com\","        \
	"\"posixAccounts\":[{\"username\":\"other_1\",\"uid\":\"2001\"},"      \
	"{\"primary\":true,\"username\":\"sa_112233445566778899001\","         \
	"\"uid\":\"1234567890\",\"gid\":\"1234567890\",\"homeDirectory\":"     \
	"\"/home/sa_112233445566778899001\",\"shell\":\"/bin/bash\","          \
	"\"gecos\":\"\",\"systemId\":\"\",\"accountId\":\"p\","                \
	"\"operatingSystemType\":\"LINUX\",\"name\":"                          \
	"\"users/sa@p.iam.gserviceaccount.com/projects/p\"}],"                 \
	"\"sshPublicKeys\":{\"ab12\":{\"key\":\"ssh-ed25519 AAAAC3Nz u\","     \
	"\"fingerprint\":\"ab12\",\"name\":"                                   \
	"\"users/sa@p.iam.gserviceaccount.com/sshPublicKeys/ab12\"}}}}"

START_TEST(enabled_rule)
{
	ck_assert_int_eq(oslogin_enabled("TRUE"), 1);
	ck_assert_int_eq(oslogin_enabled("true"), 1);
	ck_assert_int_eq(oslogin_enabled("True"), 1);
	ck_assert_int_eq(oslogin_enabled("FALSE"), 0);
	ck_assert_int_eq(oslogin_enabled("1"), 0);
	ck_assert_int_eq(oslogin_enabled(""), 0);
	ck_assert_int_eq(oslogin_enabled(NULL), 0);
}
END_TEST

static int
parse(const char *s, char **user, struct tpu_err *err)
{
	tpu_err_init(err);
	return oslogin_parse_username(s, strlen(s), user, err);
}

START_TEST(username_of_profiles)
{
	struct tpu_err err;
	char *u = NULL;

	ck_assert_int_eq(parse(PROFILE, &u, &err), 0);
	ck_assert_str_eq(u, "sa_112233445566778899001");
	free(u);
	/* getLoginProfile's reply: the profile itself; one account */
	ck_assert_int_eq(
	    parse("{\"posixAccounts\":[{\"username\":\"a_b_com\"}]}", &u, &err),
	    0);
	ck_assert_str_eq(u, "a_b_com");
	free(u);
	ck_assert_int_eq(
	    parse("{\"loginProfile\":{\"name\":\"x\"}}", &u, &err), TPU_E_API);
	ck_assert_ptr_null(u);
	ck_assert_str_eq(err.msg,
	    "OS Login reply has no POSIX account (loginProfile.posixAccounts[]."
	    "username, primary)");
	/* two accounts and none primary: which one is not ours to guess */
	ck_assert_int_eq(parse("{\"posixAccounts\":[{\"username\":\"a\"},"
	                       "{\"username\":\"b\"}]}",
	                     &u, &err),
	    TPU_E_API);
	ck_assert_ptr_nonnull(strstr(err.msg, "no primary POSIX account"));
	ck_assert_int_eq(parse("{\"posixAccounts\":[{\"primary\":true,"
	                       "\"username\":\"-oProxyCommand=x\"}]}",
	                     &u, &err),
	    TPU_E_API);
	ck_assert_ptr_nonnull(strstr(err.msg, "not a POSIX user name"));
	ck_assert_int_eq(parse("not json", &u, &err), TPU_E_API);
}
END_TEST

/* Serve one 200 reply with the JSON body (stop_server ends it). */
static void
serve_json(const char *body)
{
	static char rep[4096];
	const char *reps[] = { rep };

	snprintf(rep, sizeof rep,
	    "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
	    "Content-Length: %zu\r\nConnection: close\r\n\r\n%s",
	    strlen(body), body);
	serve(reps, 1);
}

/* Stop the server; its request log into log (a string, to release). */
static void
served_log(struct buf *log)
{
	struct tpu_err err;

	stop_server();
	buf_init(log, BUF_NOCAP);
	ck_assert_int_eq(fsutil_read_file(logpath, 0, log, NULL, &err), 0);
	buf_puts(log, "");
}

START_TEST(import_request)
{
	struct http_opts o;
	struct http *h;
	struct tpu_err err;
	struct buf log;
	char base[64], *u = NULL;

	serve_json(PROFILE);
	snprintf(base, sizeof base, "http://127.0.0.1:%d/", server_port);
	memset(&o, 0, sizeof o);
	tpu_err_init(&err);
	ck_assert_ptr_nonnull(h = http_new(&o, &err));
	ck_assert_msg(
	    oslogin_import(h, base, "sa@p.iam.gserviceaccount.com", "p",
	        "ssh-ed25519 AAAAC3Nz u", 1700000000000000LL, &u, &err) == 0,
	    "%s", err.msg);
	ck_assert_str_eq(u, "sa_112233445566778899001");
	free(u);
	served_log(&log);
	ck_assert_ptr_nonnull(strstr(log.data,
	    "POST /v1/users/sa@p.iam.gserviceaccount.com:importSshPublicKey"
	    "?projectId=p HTTP/1.1\r\n"));
	ck_assert_ptr_nonnull(
	    strstr(log.data, "{\"key\":\"ssh-ed25519 AAAAC3Nz u\","
	                     "\"expirationTimeUsec\":\"1700000000000000\"}"));
	buf_release(&log);
	canned_cleanup();
	/* an account that is no email: refused before any request */
	ck_assert_int_eq(oslogin_import(h, base, "default", NULL,
	                     "ssh-ed25519 AAAAC3Nz u", 0, &u, &err),
	    TPU_E_USAGE);
	ck_assert_str_eq(err.msg, "account 'default' is not an email address "
	                          "(OS Login needs the account's email)");
	http_free(h);
}
END_TEST

/* Project metadata (Compute projects.get): where enable-oslogin is read
 * for a node that does not set it. */
START_TEST(project_metadata)
{
	static const char proj[] =
	    "{\"kind\":\"compute#project\",\"name\":\"p\","
	    "\"commonInstanceMetadata\":{\"kind\":\"compute#metadata\","
	    "\"fingerprint\":\"x\",\"items\":[{\"key\":\"ssh-keys\","
	    "\"value\":\"u:k\"},{\"key\":\"enable-oslogin\",\"value\":"
	    "\"TRUE\"},{\"key\":\"enable-oslogin\",\"value\":\"FALSE\"}]}}";
	static const char bad1[] = "{\"commonInstanceMetadata\":"
	                           "{\"items\":{}}}";
	static const char bad2[] = "{\"commonInstanceMetadata\":"
	                           "{\"items\":[{\"value\":\"v\"}]}}";
	struct http_opts o;
	struct http *h;
	struct tpu_err err;
	struct buf log;
	char base[64], *v = NULL;

	tpu_err_init(&err);
	ck_assert_int_eq(compute_metadata_value(
	                     proj, strlen(proj), "enable-oslogin", &v, &err),
	    0);
	ck_assert_str_eq(v, "TRUE"); /* the first item of the key */
	free(v);
	ck_assert_int_eq(compute_metadata_value(proj, strlen(proj),
	                     "block-project-ssh-keys", &v, &err),
	    0);
	ck_assert_ptr_null(v);
	ck_assert_int_eq(
	    compute_metadata_value("{\"name\":\"p\"}", 12, "k", &v, &err), 0);
	ck_assert_ptr_null(v);
	ck_assert_int_eq(
	    compute_metadata_value(bad1, strlen(bad1), "k", &v, &err),
	    TPU_E_API);
	ck_assert_str_eq(err.msg, "Compute projects.get reply is no Project "
	                          "(commonInstanceMetadata.items)");
	ck_assert_int_eq(
	    compute_metadata_value(bad2, strlen(bad2), "k", &v, &err),
	    TPU_E_API);
	ck_assert_str_eq(err.msg, "Compute projects.get reply: a metadata "
	                          "item without a key");
	ck_assert_int_eq(
	    compute_metadata_value("[1]", 3, "k", &v, &err), TPU_E_API);

	/* the request: GET base + projects/P */
	serve_json(proj);
	snprintf(
	    base, sizeof base, "http://127.0.0.1:%d/compute/v1/", server_port);
	memset(&o, 0, sizeof o);
	ck_assert_ptr_nonnull(h = http_new(&o, &err));
	ck_assert_msg(compute_project_metadata(
	                  h, base, "p", "enable-oslogin", &v, &err) == 0,
	    "%s", err.msg);
	ck_assert_str_eq(v, "TRUE");
	free(v);
	served_log(&log);
	ck_assert_ptr_nonnull(
	    strstr(log.data, "GET /compute/v1/projects/p HTTP/1.1\r\n"));
	buf_release(&log);
	canned_cleanup();
	http_free(h);
}
END_TEST

static Suite *
oslogin_suite(void)
{
	Suite *s = suite_create("oslogin");
	TCase *tc = tcase_create("oslogin");

	tcase_set_timeout(tc, 30);
	tcase_add_test(tc, enabled_rule);
	tcase_add_test(tc, username_of_profiles);
	tcase_add_test(tc, import_request);
	tcase_add_test(tc, project_metadata);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	return canned_run(oslogin_suite());
}
