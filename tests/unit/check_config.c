/*
 * Unit tests for src/config.c: value rules, every precedence layer (flags,
 * TPUCTL_ and CLOUDSDK_ variables, aliases, tpuctl's file and profiles,
 * gcloud's active configuration, defaults) in a temporary HOME, malformed
 * files with their line numbers, and the atomic file editor.
 */
#include <sys/stat.h>

#include <ftw.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <check.h>

#include "config.h"

extern char **environ;

static char home[256];
static char cfgpath[512];

static void
write_file(const char *path, const char *text)
{
	FILE *fp = fopen(path, "w");

	ck_assert_ptr_nonnull(fp);
	fputs(text, fp);
	ck_assert_int_eq(fclose(fp), 0);
}

static char *
read_file(const char *path)
{
	static char data[8192];
	FILE *fp = fopen(path, "r");
	size_t n;

	ck_assert_ptr_nonnull(fp);
	n = fread(data, 1, sizeof data - 1, fp);
	data[n] = '\0';
	fclose(fp);
	return data;
}

static void
mkdirs(const char *rel)
{
	char path[512], *p;

	snprintf(path, sizeof path, "%s/%s", home, rel);
	for (p = path + strlen(home) + 1; *p != '\0'; p++) {
		if (*p == '/') {
			*p = '\0';
			mkdir(path, 0700);
			*p = '/';
		}
	}
	mkdir(path, 0700);
}

/* A fresh HOME with nothing configured, and no TPUCTL_/CLOUDSDK_ vars. */
static void
setup(void)
{
	char name[256], **e;
	size_t n;

	for (;;) {
		for (e = environ; *e != NULL; e++) {
			if (strncmp(*e, "TPUCTL_", 7) == 0 ||
			    strncmp(*e, "CLOUDSDK_", 9) == 0)
				break;
		}
		if (*e == NULL)
			break;
		n = strcspn(*e, "=");
		snprintf(name, sizeof name, "%.*s", (int)n, *e);
		unsetenv(name);
	}
	unsetenv("STORAGE_EMULATOR_HOST");
	snprintf(home, sizeof home, "%s/check_config.XXXXXX",
	    getenv("TMPDIR") != NULL ? getenv("TMPDIR") : "/tmp");
	ck_assert_ptr_nonnull(mkdtemp(home));
	setenv("HOME", home, 1);
	unsetenv("XDG_CONFIG_HOME");
	snprintf(cfgpath, sizeof cfgpath, "%s/.config/tpuctl/config", home);
}

static int
rm_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	chmod(path, 0700);
	remove(path);
	return 0;
}

static void
teardown(void)
{
	nftw(home, rm_one, 16, FTW_DEPTH | FTW_PHYS);
}

static struct config *
load(int want_rc)
{
	struct config *c = config_new();
	struct tpu_err err;

	tpu_err_init(&err);
	ck_assert_int_eq(config_load(c, &err), want_rc);
	return c;
}

START_TEST(validate_rules)
{
	static const struct {
		const char *key, *value;
		int ok;
	} cases[] = {
		{ "compute/zone", "us-central2-b", 1 },
		{ "compute/zone", "europe-west4-a", 1 },
		{ "compute/zone", "northamerica-northeast1-c", 1 },
		{ "compute/zone", "us-central2", 0 },
		{ "compute/zone", "US-CENTRAL2-B", 0 },
		{ "compute/zone", "../x", 0 },
		{ "compute/zone", "us-central2-b?x=1", 0 },
		{ "compute/zone", "us-central2-bb", 0 },
		{ "compute/zone", "us-2-b", 0 },
		{ "core/project", "my-project", 1 },
		{ "core/project", "abcdef", 1 },
		{ "core/project", "a23456789012345678901234567890", 1 },
		{ "core/project", "a234567890123456789012345678901", 0 },
		{ "core/project", "abcde", 0 },
		{ "core/project", "1abcdef", 0 },
		{ "core/project", "abcdef-", 0 },
		{ "core/project", "My-Project", 0 },
		{ "core/project", "my_project", 0 },
		{ "core/project", "example.com:my-project", 1 },
		{ "core/project", ":my-project", 0 },
		{ "core/project", "a:b:my-project", 0 },
		{ "core/project", "example.com:x", 0 },
		{ "core/format", "json", 1 },
		{ "core/format", "value(name,state)", 1 },
		{ "core/format", "xml", 0 },
		{ "core/log_http", "true", 1 },
		{ "core/log_http", "Off", 1 },
		{ "core/log_http", "maybe", 0 },
		{ "ssh/fanout", "1", 1 },
		{ "ssh/fanout", "1024", 1 },
		{ "ssh/fanout", "0", 0 },
		{ "ssh/fanout", "1025", 0 },
		{ "ssh/fanout", "+5", 0 },
		{ "ssh/fanout", "5x", 0 },
		{ "api_endpoint_overrides/tpu", "https://tpu.googleapis.com/",
		    1 },
		{ "api_endpoint_overrides/tpu", "http://127.0.0.1:8470/", 1 },
		{ "api_endpoint_overrides/storage", "127.0.0.1:9000", 1 },
		{ "api_endpoint_overrides/tpu", "http://", 0 },
		{ "api_endpoint_overrides/tpu", "http://a b", 0 },
		{ "auth/impersonate_service_account",
		    "sa@p.iam.gserviceaccount.com", 1 },
		{ "auth/impersonate_service_account", "nobody", 0 },
		{ "core/profile", "ci_2-x", 1 },
		{ "core/profile", "a/b", 0 },
		{ "core/profile", "a b", 0 },
		{ "ssh/user", "anything: at all", 1 },
		{ "ssh/user", "", 0 },
		{ "ssh/user", " x", 0 },
		{ "ssh/user", "x ", 0 },
		{ "ssh/user", "a\nb", 0 },
		{ "ssh/user", "a\tb", 0 },
		{ "ssh/key_file", "~/.ssh/id", 1 },
	};
	struct tpu_err err;
	size_t i;

	for (i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		tpu_err_init(&err);
		ck_assert_msg((config_validate(cases[i].key, cases[i].value,
		                   &err) == 0) == cases[i].ok,
		    "%s '%s': %s", cases[i].key, cases[i].value, err.msg);
		if (!cases[i].ok) {
			ck_assert_int_eq(err.code, TPU_E_INVALID);
			ck_assert_ptr_nonnull(
			    strstr(err.msg, cases[i].key) != NULL
			        ? err.msg
			        : strstr(err.msg, "format"));
		}
	}
	tpu_err_init(&err);
	ck_assert_int_eq(
	    config_validate("core/zone", "x", &err), TPU_E_INVALID);
	ck_assert_str_eq(err.msg,
	    "unknown key 'core/zone'; valid keys: "
	    "api_endpoint_overrides/compute "
	    "api_endpoint_overrides/iamcredentials "
	    "api_endpoint_overrides/oauth2 "
	    "api_endpoint_overrides/oslogin "
	    "api_endpoint_overrides/storage api_endpoint_overrides/tpu "
	    "auth/access_token_file auth/impersonate_service_account "
	    "compute/zone core/custom_ca_certs_file core/format core/log_http "
	    "core/profile core/project http/connect_timeout http/max_attempts "
	    "http/stall_timeout run/drain_timeout run/staging_bucket "
	    "ssh/fanout "
	    "ssh/key_file "
	    "ssh/known_hosts_file ssh/persist ssh/port "
	    "ssh/server_alive_count_max "
	    "ssh/server_alive_interval ssh/user");
	tpu_err_init(&err);
	config_validate("compute/zone", "US", &err);
	ck_assert_str_eq(err.msg,
	    "invalid compute/zone 'US': a zone looks like us-central2-b "
	    "(lowercase region, '-', zone letter)");
}
END_TEST

START_TEST(key_table)
{
	const struct config_key *k;
	size_t n, i;

	k = config_keys(&n);
	ck_assert_uint_ge(n, 14);
	for (i = 1; i < n; i++)
		ck_assert_int_lt(strcmp(k[i - 1].key, k[i].key), 0);
	for (i = 0; i < n; i++) {
		ck_assert_ptr_nonnull(strchr(k[i].key, '/'));
		ck_assert_ptr_nonnull(k[i].desc);
		ck_assert_ptr_eq(config_key_find(k[i].key), &k[i]);
		/* Defaults obey their own rules. */
		if (k[i].dflt != NULL)
			ck_assert_int_eq(
			    config_validate(k[i].key, k[i].dflt, NULL), 0);
	}
	ck_assert_ptr_null(config_key_find("core"));
	ck_assert_ptr_null(config_key_find("core/"));
}
END_TEST

START_TEST(defaults_only)
{
	struct config *c = load(0);

	ck_assert_str_eq(config_get(c, "core/format"), "table");
	ck_assert_str_eq(config_source(c, "core/format"), "default");
	ck_assert_int_eq(config_layer_of(c, "core/format"), CONFIG_DEFAULT);
	ck_assert_ptr_null(config_get(c, "compute/zone"));
	ck_assert_ptr_null(config_source(c, "compute/zone"));
	ck_assert_int_eq(config_layer_of(c, "compute/zone"), CONFIG_UNSET);
	ck_assert_ptr_null(config_get(c, "no/such"));
	ck_assert_str_eq(config_file_path(c), cfgpath);
	ck_assert_ptr_null(config_profile(c));
	config_free(c);
}
END_TEST

START_TEST(xdg_config_home)
{
	struct config *c;
	char path[600];

	setenv("XDG_CONFIG_HOME", "/nonexistent/xdg", 1);
	c = load(0);
	ck_assert_str_eq(config_file_path(c), "/nonexistent/xdg/tpuctl/config");
	config_free(c);
	/* A relative XDG_CONFIG_HOME is ignored, as the spec says. */
	setenv("XDG_CONFIG_HOME", "rel", 1);
	c = load(0);
	snprintf(path, sizeof path, "%s/.config/tpuctl/config", home);
	ck_assert_str_eq(config_file_path(c), path);
	config_free(c);
}
END_TEST

START_TEST(gcloud_layer)
{
	struct config *c;
	char path[600], src[700];

	mkdirs(".config/gcloud/configurations");
	snprintf(path, sizeof path,
	    "%s/.config/gcloud/configurations/config_default", home);
	write_file(path, "[core]\nproject = gdefault\naccount = me@x\n"
	                 "[compute]\nzone = us-west1-a\n");
	c = load(0);
	ck_assert_str_eq(config_get(c, "core/project"), "gdefault");
	ck_assert_str_eq(config_get(c, "core/account"), "me@x");
	snprintf(src, sizeof src, "gcloud configuration default (%s)", path);
	ck_assert_str_eq(config_source(c, "compute/zone"), src);
	ck_assert_int_eq(config_layer_of(c, "compute/zone"), CONFIG_GCLOUD);
	config_free(c);

	/* active_config names another configuration. */
	snprintf(path, sizeof path,
	    "%s/.config/gcloud/configurations/config_work", home);
	write_file(path, "[compute]\nzone = europe-west4-b\n");
	snprintf(path, sizeof path, "%s/.config/gcloud/active_config", home);
	write_file(path, "work\n");
	c = load(0);
	ck_assert_str_eq(config_get(c, "compute/zone"), "europe-west4-b");
	ck_assert_ptr_null(config_get(c, "core/project"));
	config_free(c);

	/* CLOUDSDK_ACTIVE_CONFIG_NAME beats active_config. */
	setenv("CLOUDSDK_ACTIVE_CONFIG_NAME", "default", 1);
	c = load(0);
	ck_assert_str_eq(config_get(c, "compute/zone"), "us-west1-a");
	config_free(c);

	/* CLOUDSDK_CONFIG moves the directory; bad names are ignored. */
	setenv("CLOUDSDK_CONFIG", "/nonexistent", 1);
	c = load(0);
	ck_assert_ptr_null(config_get(c, "compute/zone"));
	config_free(c);
	unsetenv("CLOUDSDK_CONFIG");
	setenv("CLOUDSDK_ACTIVE_CONFIG_NAME", "../x", 1);
	c = load(0);
	ck_assert_ptr_null(config_get(c, "compute/zone"));
	config_free(c);

	/* A malformed gcloud file is skipped, not an error. */
	unsetenv("CLOUDSDK_ACTIVE_CONFIG_NAME");
	snprintf(path, sizeof path,
	    "%s/.config/gcloud/configurations/config_work", home);
	write_file(path, "[compute]\nzone = europe-west4-b\ngarbage\n");
	c = load(0);
	ck_assert_ptr_null(config_get(c, "compute/zone"));
	config_free(c);
}
END_TEST

START_TEST(file_layer_and_profiles)
{
	struct config *c;
	char src[700];

	mkdirs(".config/tpuctl");
	mkdirs(".config/gcloud/configurations");
	write_file(cfgpath, "# comment\n; other comment\n[core]\n"
	                    "project = file-project\n\n"
	                    "[compute]\nzone = us-central2-b\n"
	                    "[profile ci]\ncompute/zone = europe-west4-a\n"
	                    "ssh/user = ci\n"
	                    "[profile other]\ncore/project = other-project\n");
	c = load(0);
	ck_assert_str_eq(config_get(c, "compute/zone"), "us-central2-b");
	snprintf(src, sizeof src, "file %s", cfgpath);
	ck_assert_str_eq(config_source(c, "compute/zone"), src);
	ck_assert_ptr_null(config_get(c, "ssh/user"));
	config_free(c);

	c = config_new();
	config_set_flag(c, "core/profile", "ci");
	ck_assert_int_eq(config_load(c, NULL), 0);
	ck_assert_str_eq(config_profile(c), "ci");
	ck_assert_str_eq(config_get(c, "compute/zone"), "europe-west4-a");
	snprintf(src, sizeof src, "file %s [profile ci]", cfgpath);
	ck_assert_str_eq(config_source(c, "compute/zone"), src);
	ck_assert_str_eq(config_get(c, "ssh/user"), "ci");
	/* Keys the profile lacks fall back to the default sections. */
	ck_assert_str_eq(config_get(c, "core/project"), "file-project");
	config_free(c);

	/* TPUCTL_PROFILE selects too; the flag beats it. */
	setenv("TPUCTL_PROFILE", "other", 1);
	c = load(0);
	ck_assert_str_eq(config_get(c, "core/project"), "other-project");
	ck_assert_str_eq(config_get(c, "compute/zone"), "us-central2-b");
	config_free(c);
	c = config_new();
	config_set_flag(c, "core/profile", "ci");
	ck_assert_int_eq(config_load(c, NULL), 0);
	ck_assert_str_eq(config_profile(c), "ci");
	config_free(c);
	unsetenv("TPUCTL_PROFILE");

	/* [core] profile selects when nothing else does; "default" is none. */
	write_file(cfgpath,
	    "[core]\nprofile = ci\n[compute]\nzone = us-east1-b\n"
	    "[profile ci]\ncompute/zone = europe-west4-a\n");
	c = load(0);
	ck_assert_str_eq(config_get(c, "compute/zone"), "europe-west4-a");
	config_free(c);
	c = config_new();
	config_set_flag(c, "core/profile", "default");
	ck_assert_int_eq(config_load(c, NULL), 0);
	ck_assert_ptr_null(config_profile(c));
	ck_assert_str_eq(config_get(c, "compute/zone"), "us-east1-b");
	config_free(c);

	/* tpuctl's file beats gcloud's. */
	write_file(cfgpath, "[compute]\nzone = us-east1-b\n");
	snprintf(src, sizeof src,
	    "%s/.config/gcloud/configurations/config_default", home);
	write_file(src, "[compute]\nzone = us-west1-a\n[core]\nproject = "
	                "gcloud-project\n");
	c = load(0);
	ck_assert_str_eq(config_get(c, "compute/zone"), "us-east1-b");
	ck_assert_str_eq(config_get(c, "core/project"), "gcloud-project");
	config_free(c);
}
END_TEST

START_TEST(env_layer)
{
	struct config *c;

	mkdirs(".config/tpuctl");
	write_file(cfgpath, "[compute]\nzone = us-east1-b\n");
	setenv("CLOUDSDK_COMPUTE_ZONE", "us-west2-a", 1);
	c = load(0);
	ck_assert_str_eq(config_get(c, "compute/zone"), "us-west2-a");
	ck_assert_str_eq(
	    config_source(c, "compute/zone"), "env CLOUDSDK_COMPUTE_ZONE");
	ck_assert_int_eq(config_layer_of(c, "compute/zone"), CONFIG_ENV);
	config_free(c);

	setenv("TPUCTL_COMPUTE_ZONE", "us-west3-c", 1);
	c = load(0);
	ck_assert_str_eq(config_get(c, "compute/zone"), "us-west3-c");
	ck_assert_str_eq(
	    config_source(c, "compute/zone"), "env TPUCTL_COMPUTE_ZONE");
	config_free(c);

	/* The flag beats both. */
	c = config_new();
	config_set_flag(c, "compute/zone", "asia-east1-a");
	ck_assert_int_eq(config_load(c, NULL), 0);
	ck_assert_str_eq(config_get(c, "compute/zone"), "asia-east1-a");
	ck_assert_str_eq(config_source(c, "compute/zone"), "flag --zone");
	ck_assert_int_eq(config_layer_of(c, "compute/zone"), CONFIG_FLAG);
	config_free(c);

	/* Empty variables are ignored. */
	setenv("TPUCTL_COMPUTE_ZONE", "", 1);
	setenv("CLOUDSDK_COMPUTE_ZONE", "", 1);
	c = load(0);
	ck_assert_str_eq(config_get(c, "compute/zone"), "us-east1-b");
	config_free(c);

	/* Keys outside the table, in a known section, are read too. */
	setenv("CLOUDSDK_SSH_NEW_THING", "c", 1);
	setenv("TPUCTL_SSH_NEW_THING", "t", 1);
	setenv("CLOUDSDK_API_ENDPOINT_OVERRIDES_PUBSUB", "http://x/", 1);
	setenv("TPUCTL_EMULATOR_URL", "http://y/", 1);
	c = load(0);
	ck_assert_str_eq(config_get(c, "ssh/new_thing"), "t");
	ck_assert_str_eq(
	    config_source(c, "ssh/new_thing"), "env TPUCTL_SSH_NEW_THING");
	ck_assert_str_eq(
	    config_get(c, "api_endpoint_overrides/pubsub"), "http://x/");
	ck_assert_ptr_null(config_get(c, "emulator/url"));
	config_free(c);

	/* Multi-part names: CLOUDSDK_API_ENDPOINT_OVERRIDES_TPU. */
	setenv("CLOUDSDK_API_ENDPOINT_OVERRIDES_TPU", "http://127.0.0.1:1/", 1);
	c = load(0);
	ck_assert_str_eq(
	    config_get(c, "api_endpoint_overrides/tpu"), "http://127.0.0.1:1/");
	config_free(c);
}
END_TEST

START_TEST(env_aliases)
{
	static const struct {
		const char *env, *key, *value;
	} cases[] = {
		{ "STORAGE_EMULATOR_HOST", "api_endpoint_overrides/storage",
		    "http://127.0.0.1:4443" },
		{ "TPUCTL_CA_BUNDLE", "core/custom_ca_certs_file",
		    "/x/ca.pem" },
		{ "TPUCTL_ACCESS_TOKEN_FILE", "auth/access_token_file",
		    "/x/t" },
		{ "TPUCTL_PROFILE", "core/profile", "p1" },
	};
	struct config *c;
	char src[128];
	size_t i;

	for (i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		setenv(cases[i].env, cases[i].value, 1);
		c = load(0);
		ck_assert_str_eq(config_get(c, cases[i].key), cases[i].value);
		snprintf(src, sizeof src, "env %s", cases[i].env);
		ck_assert_str_eq(config_source(c, cases[i].key), src);
		config_free(c);
		unsetenv(cases[i].env);
	}
	/* TPUCTL_ aliases beat CLOUDSDK_ names; TPUCTL_ names beat both. */
	setenv("CLOUDSDK_CORE_CUSTOM_CA_CERTS_FILE", "/c.pem", 1);
	setenv("TPUCTL_CA_BUNDLE", "/t.pem", 1);
	c = load(0);
	ck_assert_str_eq(config_get(c, "core/custom_ca_certs_file"), "/t.pem");
	config_free(c);
	setenv("TPUCTL_CORE_CUSTOM_CA_CERTS_FILE", "/tc.pem", 1);
	c = load(0);
	ck_assert_str_eq(config_get(c, "core/custom_ca_certs_file"), "/tc.pem");
	config_free(c);
	/* CLOUDSDK_ names beat the other aliases. */
	setenv("STORAGE_EMULATOR_HOST", "http://127.0.0.1:1", 1);
	setenv(
	    "CLOUDSDK_API_ENDPOINT_OVERRIDES_STORAGE", "http://127.0.0.1:2", 1);
	c = load(0);
	ck_assert_str_eq(config_get(c, "api_endpoint_overrides/storage"),
	    "http://127.0.0.1:2");
	config_free(c);
}
END_TEST

START_TEST(bad_flag_and_env_values)
{
	struct config *c;
	struct tpu_err err;

	c = config_new();
	tpu_err_init(&err);
	config_set_flag(c, "compute/zone", "nowhere");
	ck_assert_int_eq(config_load(c, &err), TPU_E_INVALID);
	ck_assert_str_eq(err.msg,
	    "flag --zone: invalid compute/zone 'nowhere': a zone looks like "
	    "us-central2-b (lowercase region, '-', zone letter)");
	config_free(c);

	setenv("CLOUDSDK_CORE_PROJECT", "X", 1);
	c = config_new();
	tpu_err_init(&err);
	ck_assert_int_eq(config_load(c, &err), TPU_E_INVALID);
	ck_assert_ptr_nonnull(strstr(
	    err.msg, "env CLOUDSDK_CORE_PROJECT: invalid core/project 'X'"));
	config_free(c);
}
END_TEST

START_TEST(malformed_files)
{
	static const struct {
		const char *text, *msg;
	} cases[] = {
		{ "[core]\nproject = abcdefg\nnot a key\n",
		    "f:3: malformed line (want '[section]' or 'name = "
		    "value')" },
		{ "[core\nproject = abcdefg\n",
		    "f:1: malformed line (want '[section]' or 'name = "
		    "value')" },
		{ "\n\nproject = abcdefg\n",
		    "f:3: 'project' is outside any [section]" },
		{ "[compute]\nzone = bad\n",
		    "f:2: invalid compute/zone 'bad': a zone looks like "
		    "us-central2-b (lowercase region, '-', zone letter)" },
		{ "[profile ci]\nzone = us-central2-b\n",
		    "f:2: key 'zone' in [profile ci] must be written "
		    "section/name (e.g. compute/zone)" },
		{ "[profile a.b]\ncompute/zone = us-central2-b\n",
		    "f:2: invalid profile name 'a.b': use 1 to 64 letters, "
		    "digits, '-' or '_'" },
		{ "[compute]\ncompute/zone = us-central2-b\n",
		    "f:2: key 'compute/zone' in [compute] must be a plain "
		    "name" },
		/* Inline comments are not comments (as configparser). */
		{ "[compute]\nzone = us-central2-b ; c\n",
		    "f:2: invalid compute/zone 'us-central2-b ; c': a zone "
		    "looks like us-central2-b (lowercase region, '-', zone "
		    "letter)" },
		/* No continuation lines either. */
		{ "[compute]\nzone = us-central2-b\n  more\n",
		    "f:3: malformed line (want '[section]' or 'name = "
		    "value')" },
		/* The first error wins. */
		{ "[core]\nproject = x\n[compute]\nzone = bad\n",
		    "f:2: invalid core/project 'x': a project id is 6 to 30 "
		    "lowercase letters, digits or hyphens, starts with a "
		    "letter and does not end with a hyphen (optionally after "
		    "'domain:')" },
	};
	struct config *c;
	struct tpu_err err;
	size_t i;

	for (i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		c = config_new();
		tpu_err_init(&err);
		ck_assert_int_eq(
		    config_load_string(c, cases[i].text, "f", NULL, &err),
		    TPU_E_INVALID);
		ck_assert_str_eq(err.msg, cases[i].msg);
		config_free(c);
	}
}
END_TEST

START_TEST(file_syntax_accepted)
{
	struct config *c = config_new();
	struct tpu_err err;

	tpu_err_init(&err);
	ck_assert_int_eq(config_load_string(c,
	                     "\xef\xbb\xbf# bom, comments, CRLF\r\n"
	                     "[ core ]\r\n"
	                     "project:my-project\r\n"
	                     "  [compute]  \n"
	                     "  zone   =   us-central2-b   \n"
	                     "[unknown]\nx = 1\n"
	                     "[core]\nnosuch = 1\n"
	                     "[profile   p1 ]\nssh/user = u\n",
	                     "f", "p1", &err),
	    0);
	ck_assert_str_eq(config_get(c, "core/project"), "my-project");
	ck_assert_str_eq(config_get(c, "compute/zone"), "us-central2-b");
	ck_assert_str_eq(config_get(c, "ssh/user"), "u");
	ck_assert_str_eq(config_source(c, "ssh/user"), "file f [profile p1]");
	ck_assert_ptr_null(config_get(c, "core/nosuch"));
	config_free(c);
}
END_TEST

START_TEST(file_errors)
{
	struct config *c;
	struct tpu_err err;

	mkdirs(".config/tpuctl");
	write_file(cfgpath, "[core]\nproject = abcdefg\n");
	chmod(cfgpath, 0);
	if (access(cfgpath, R_OK) == 0)
		return; /* root reads anything */
	c = config_new();
	tpu_err_init(&err);
	ck_assert_int_eq(config_load(c, &err), TPU_E_IO);
	ck_assert_ptr_nonnull(strstr(err.msg, "cannot open"));
	config_free(c);
}
END_TEST

START_TEST(update_creates)
{
	struct config *c = load(0);
	struct stat st;
	char dir[600];

	umask(0);
	ck_assert_int_eq(
	    config_file_update(c, "compute/zone", "us-central2-b", NULL), 0);
	ck_assert_str_eq(
	    read_file(cfgpath), "[compute]\nzone = us-central2-b\n");
	ck_assert_int_eq(stat(cfgpath, &st), 0);
	ck_assert_int_eq(st.st_mode & 07777, 0600);
	snprintf(dir, sizeof dir, "%s/.config/tpuctl", home);
	ck_assert_int_eq(stat(dir, &st), 0);
	ck_assert_int_eq(st.st_mode & 07777, 0700);
	ck_assert_int_eq(
	    config_file_update(c, "compute/zone", "us-east1-b", NULL), 0);
	ck_assert_int_eq(
	    config_file_update(c, "core/project", "my-project", NULL), 0);
	ck_assert_str_eq(read_file(cfgpath), "[compute]\nzone = us-east1-b\n\n"
	                                     "[core]\nproject = my-project\n");
	/* The loaded values are not updated; a new load sees the file. */
	ck_assert_ptr_null(config_get(c, "compute/zone"));
	config_free(c);
	c = load(0);
	ck_assert_str_eq(config_get(c, "compute/zone"), "us-east1-b");
	config_free(c);
}
END_TEST

START_TEST(update_preserves)
{
	struct config *c;
	struct tpu_err err;

	mkdirs(".config/tpuctl");
	write_file(cfgpath, "# top\n[core]\nproject = abcdefg\n; mid\n"
	                    "[compute]\n# zone = commented-out\n"
	                    "zone = us-east1-b\nzone: us-east1-c\n\n\n"
	                    "[profile ci]\ncompute/zone = us-west1-a\n");
	c = config_new();
	config_set_flag(c, "core/profile", "ci");
	ck_assert_int_eq(config_load(c, NULL), 0);
	/* In the profile, as section/name. */
	ck_assert_int_eq(config_file_update(c, "ssh/user", "bob", NULL), 0);
	ck_assert_int_eq(
	    config_file_update(c, "compute/zone", "us-west2-b", NULL), 0);
	/* core/profile always goes to [core]. */
	ck_assert_int_eq(config_file_update(c, "core/profile", "ci", NULL), 0);
	config_free(c);
	/* [core] profile now selects ci; "default" selects the defaults. */
	c = config_new();
	config_set_flag(c, "core/profile", "default");
	ck_assert_int_eq(config_load(c, NULL), 0);
	ck_assert_int_eq(
	    config_file_update(c, "compute/zone", "us-east4-a", NULL), 0);
	ck_assert_str_eq(read_file(cfgpath),
	    "# top\n[core]\nproject = abcdefg\nprofile = ci\n; mid\n"
	    "[compute]\n# zone = commented-out\n"
	    "zone = us-east4-a\n\n\n"
	    "[profile ci]\ncompute/zone = us-west2-b\nssh/user = bob\n");
	/* unset: the key's lines go; a key not there returns 1. */
	ck_assert_int_eq(config_file_update(c, "core/profile", NULL, NULL), 0);
	ck_assert_int_eq(config_file_update(c, "core/profile", NULL, NULL), 1);
	ck_assert_int_eq(config_file_update(c, "ssh/user", NULL, NULL), 1);
	ck_assert_str_eq(read_file(cfgpath),
	    "# top\n[core]\nproject = abcdefg\n; mid\n"
	    "[compute]\n# zone = commented-out\n"
	    "zone = us-east4-a\n\n\n"
	    "[profile ci]\ncompute/zone = us-west2-b\nssh/user = bob\n");
	/* Refusals: bad value, unknown key, unparsable file. */
	tpu_err_init(&err);
	ck_assert_int_eq(
	    config_file_update(c, "compute/zone", "x", &err), TPU_E_INVALID);
	ck_assert_int_eq(
	    config_file_update(c, "x/y", "x", &err), TPU_E_INVALID);
	ck_assert_int_eq(
	    config_file_update(c, "x/y", NULL, &err), TPU_E_INVALID);
	write_file(cfgpath, "[core]\ngarbage\n");
	ck_assert_int_eq(
	    config_file_update(c, "compute/zone", "us-east4-a", &err),
	    TPU_E_INVALID);
	ck_assert_ptr_nonnull(strstr(err.msg, ":2: malformed line"));
	ck_assert_str_eq(read_file(cfgpath), "[core]\ngarbage\n");
	config_free(c);
}
END_TEST

START_TEST(get_path)
{
	struct config *c = config_new();
	char want[600], *p;

	config_set_flag(c, "auth/access_token_file", "/abs/tok");
	p = config_get_path(c, "auth/access_token_file");
	ck_assert_str_eq(p, "/abs/tok");
	free(p);
	p = config_get_path(c, "ssh/key_file");
	snprintf(want, sizeof want, "%s/.ssh/google_compute_engine", home);
	ck_assert_str_eq(p, want);
	free(p);
	ck_assert_ptr_null(config_get_path(c, "ssh/user"));
	config_free(c);
}
END_TEST

static Suite *
config_suite(void)
{
	Suite *s = suite_create("config");
	TCase *tc;

	tc = tcase_create("rules");
	tcase_add_test(tc, validate_rules);
	tcase_add_test(tc, key_table);
	suite_add_tcase(s, tc);

	tc = tcase_create("layers");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, defaults_only);
	tcase_add_test(tc, xdg_config_home);
	tcase_add_test(tc, gcloud_layer);
	tcase_add_test(tc, file_layer_and_profiles);
	tcase_add_test(tc, env_layer);
	tcase_add_test(tc, env_aliases);
	tcase_add_test(tc, bad_flag_and_env_values);
	tcase_add_test(tc, get_path);
	suite_add_tcase(s, tc);

	tc = tcase_create("file");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, malformed_files);
	tcase_add_test(tc, file_syntax_accepted);
	tcase_add_test(tc, file_errors);
	tcase_add_test(tc, update_creates);
	tcase_add_test(tc, update_preserves);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	SRunner *sr = srunner_create(config_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
