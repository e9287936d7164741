/*
 * Configuration: the table of known keys, the five layers (defaults,
 * gcloud's active configuration, tpuctl's INI file with profiles, the
 * environment, flags), validation of values, and the atomic editor behind
 * "tpuctl config set/unset".  INI files are read with libinih, whose
 * run-time switches are set so that it behaves like Python's configparser
 * (gcloud's reader): no inline comments, no continuation lines.
 */
#include <sys/stat.h>
#include <sys/types.h>

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include <ini.h>

#include "buf.h"
#include "config.h"
#include "endpoint.h"
#include "fsutil.h"
#include "log.h"
#include "output.h"
#include "util.h"
#include "xmalloc.h"

extern char **environ;

/* Config files larger than this are refused rather than read. */
#define CONFIG_MAX_FILE (1 << 20)

/* Sorted by key. */
static const struct config_key keys[] = {
	{ "api_endpoint_overrides/compute",
	    "https://compute.googleapis.com/compute/v1/",
	    "Compute Engine API endpoint (the project's enable-oslogin)",
	    CONFIG_K_ENDPOINT, 0, 0, NULL },
	{ "api_endpoint_overrides/iamcredentials",
	    "https://iamcredentials.googleapis.com/",
	    "IAM credentials API endpoint (service-account impersonation)",
	    CONFIG_K_ENDPOINT, 0, 0, NULL },
	{ "api_endpoint_overrides/oauth2",
	    "https://oauth2.googleapis.com/token", "OAuth 2.0 token endpoint",
	    CONFIG_K_ENDPOINT, 0, 0, NULL },
	{ "api_endpoint_overrides/oslogin", "https://oslogin.googleapis.com/",
	    "Cloud OS Login API endpoint (ssh to OS Login nodes)",
	    CONFIG_K_ENDPOINT, 0, 0, NULL },
	{ "api_endpoint_overrides/storage", "https://storage.googleapis.com/",
	    "Cloud Storage endpoint (STORAGE_EMULATOR_HOST sets it too)",
	    CONFIG_K_ENDPOINT, 0, 0, NULL },
	{ "api_endpoint_overrides/tpu", "https://tpu.googleapis.com/",
	    "Cloud TPU API endpoint", CONFIG_K_ENDPOINT, 0, 0, NULL },
	{ "auth/access_token_file", NULL,
	    "file holding an OAuth access token to use as is", CONFIG_K_PATH, 0,
	    0, "--access-token-file" },
	{ "auth/impersonate_service_account", NULL,
	    "service account whose short-lived tokens are used",
	    CONFIG_K_ACCOUNT, 0, 0, "--impersonate-service-account" },
	{ "compute/zone", NULL, "zone of the TPU nodes, e.g. us-central2-b",
	    CONFIG_K_ZONE, 0, 0, "--zone" },
	{ "core/custom_ca_certs_file", NULL,
	    "CA bundle (PEM) used instead of the system's for HTTPS",
	    CONFIG_K_PATH, 0, 0, "--ca-file" },
	{ "core/format", "table",
	    "default output format: table, json, yaml, jsonl, value(...)",
	    CONFIG_K_FORMAT, 0, 0, "--format" },
	{ "core/log_http", "false",
	    "trace HTTP requests and replies on stderr, redacted",
	    CONFIG_K_BOOL, 0, 0, NULL },
	{ "core/profile", NULL,
	    "profile of tpuctl's config file to use ([profile NAME])",
	    CONFIG_K_PROFILE, 0, 0, "--profile" },
	{ "core/project", NULL, "Google Cloud project id", CONFIG_K_PROJECT, 0,
	    0, "--project" },
	{ "http/connect_timeout", "10", "seconds allowed to connect",
	    CONFIG_K_INT, 1, 600, NULL },
	{ "http/max_attempts", "10",
	    "attempts per request, retries of transient failures included",
	    CONFIG_K_INT, 1, 1000, NULL },
	{ "http/stall_timeout", "30",
	    "seconds without progress before a transfer is abandoned",
	    CONFIG_K_INT, 1, 3600, NULL },
	{ "run/drain_timeout", "60",
	    "seconds run --max-restarts waits for a preempted job to end "
	    "before the node is deleted",
	    CONFIG_K_INT, 0, 3600, NULL },
	{ "run/staging_bucket", NULL,
	    "gs://BUCKET/PREFIX through which tpuctl run stages workdirs",
	    CONFIG_K_STRING, 0, 0, NULL },
	{ "ssh/fanout", "64", "SSH sessions in flight at once", CONFIG_K_INT, 1,
	    1024, NULL },
	{ "ssh/key_file", "~/.ssh/google_compute_engine",
	    "private key for SSH to the workers (as gcloud's)", CONFIG_K_PATH,
	    0, 0, NULL },
	{ "ssh/known_hosts_file", "~/.config/tpuctl/known_hosts",
	    "tpuctl's pinned worker host keys", CONFIG_K_PATH, 0, 0, NULL },
	{ "ssh/persist", "no",
	    "keep the SSH sessions of ssh --worker open this long for the "
	    "next command (10m), or no",
	    CONFIG_K_STRING, 0, 0, NULL },
	{ "ssh/port", "22", "SSH port of the workers", CONFIG_K_INT, 1, 65535,
	    NULL },
	{ "ssh/server_alive_count_max", "3",
	    "unanswered keepalives before a job's worker is lost", CONFIG_K_INT,
	    1, 100, NULL },
	{ "ssh/server_alive_interval", "15",
	    "seconds of silence before a keepalive to a job's worker; 0: none",
	    CONFIG_K_INT, 0, 3600, NULL },
	{ "ssh/user", NULL, "remote user name (default: the local user)",
	    CONFIG_K_STRING, 0, 0, NULL },
};

/* Environment names that set a key besides TPUCTL_* and CLOUDSDK_*. */
static const struct {
	const char *env;
	const char *key;
} env_aliases[] = {
	{ "STORAGE_EMULATOR_HOST", "api_endpoint_overrides/storage" },
	{ "TPUCTL_ACCESS_TOKEN_FILE", "auth/access_token_file" },
	{ "TPUCTL_CA_BUNDLE", "core/custom_ca_certs_file" },
	{ "TPUCTL_PROFILE", "core/profile" },
};

struct config_ent {
	char *key;
	char *value;
	char *source;
	enum config_layer layer;
};

struct config {
	struct config_ent *v;
	size_t n;
	char *path;            /* tpuctl's config file */
	char *profile;         /* selected profile, NULL for the default */
	char *profile_warning; /* "profile 'ci' is not defined ...", or NULL */
};

const struct config_key *
config_keys(size_t *n)
{
	*n = nitems(keys);
	return keys;
}

const struct config_key *
config_key_find(const char *key)
{
	size_t i;

	for (i = 0; i < nitems(keys); i++)
		if (strcmp(keys[i].key, key) == 0)
			return &keys[i];
	return NULL;
}

static int
known_section(const char *s, size_t n)
{
	size_t i;

	for (i = 0; i < nitems(keys); i++)
		if (strncmp(keys[i].key, s, n) == 0 && keys[i].key[n] == '/')
			return 1;
	return 0;
}

static int
valid_zone(const char *s)
{
	const char *p = s;
	size_t n;

	/* [a-z]+-[a-z]+[0-9]+-[a-z]: us-central2-b, europe-west4-a */
	if ((n = strspn(p, "abcdefghijklmnopqrstuvwxyz")) == 0 || p[n] != '-')
		return 0;
	p += n + 1;
	if ((n = strspn(p, "abcdefghijklmnopqrstuvwxyz")) == 0)
		return 0;
	p += n;
	if ((n = strspn(p, "0123456789")) == 0 || p[n] != '-')
		return 0;
	p += n + 1;
	return p[0] >= 'a' && p[0] <= 'z' && p[1] == '\0';
}

static int
valid_project(const char *s)
{
	const char *colon = strrchr(s, ':');
	size_t n;

	/* Domain-scoped projects: "example.com:my-project". */
	if (colon != NULL) {
		n = (size_t)(colon - s);
		if (n == 0 || n > 63 ||
		    strspn(s, "abcdefghijklmnopqrstuvwxyz0123456789.-") != n)
			return 0;
		s = colon + 1;
	}
	n = strlen(s);

	if (n < 6 || n > 30 || !(s[0] >= 'a' && s[0] <= 'z') || s[n - 1] == '-')
		return 0;
	return strspn(s, "abcdefghijklmnopqrstuvwxyz0123456789-") == n;
}

static int
valid_profile(const char *s)
{
	size_t n = strlen(s);

	return n >= 1 && n <= 64 &&
	       strspn(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
	                 "0123456789_-") == n;
}

static int
valid_bool(const char *s)
{
	static const char *const words[] = { "true", "false", "yes", "no", "on",
		"off", "1", "0" };
	size_t i;

	for (i = 0; i < nitems(words); i++)
		if (strcasecmp(s, words[i]) == 0)
			return 1;
	return 0;
}

static int
valid_endpoint(const char *s)
{
	const char *host = s;

	if (tpu_startswith(s, "https://"))
		host = s + 8;
	else if (tpu_startswith(s, "http://"))
		host = s + 7;
	if (*host == '\0' || *host == '/')
		return 0;
	for (; *s != '\0'; s++)
		if (isspace((unsigned char)*s))
			return 0;
	return 1;
}

static int
list_keys(struct tpu_err *err, const char *key)
{
	struct buf m;
	size_t i;
	int rc;

	buf_init(&m, BUF_NOCAP);
	buf_printf(&m, "unknown key '%s'", key);
	buf_puts(&m, "; valid keys:");
	for (i = 0; i < nitems(keys); i++)
		buf_printf(&m, " %s", keys[i].key);
	rc = tpu_error(err, TPU_E_INVALID, "%s", m.data);
	buf_release(&m);
	return rc;
}

int
config_validate(const char *key, const char *value, struct tpu_err *err)
{
	const struct config_key *k = config_key_find(key);
	struct output o;
	const char *rule = NULL, *errstr;
	const char *p;
	int rc = 0;

	if (k == NULL)
		return list_keys(err, key);
	for (p = value; *p != '\0'; p++)
		if (iscntrl((unsigned char)*p))
			return tpu_error(err, TPU_E_INVALID,
			    "invalid %s: control characters (newline, tab...) "
			    "are not allowed",
			    key);
	if (*value == '\0')
		return tpu_error(
		    err, TPU_E_INVALID, "invalid %s: empty value", key);
	if (isspace((unsigned char)value[0]) ||
	    isspace((unsigned char)value[strlen(value) - 1]))
		return tpu_error(err, TPU_E_INVALID,
		    "invalid %s '%s': leading or trailing space", key, value);
	switch (k->kind) {
	case CONFIG_K_STRING:
	case CONFIG_K_PATH:
		break;
	case CONFIG_K_PROJECT:
		if (!valid_project(value))
			rule = "a project id is 6 to 30 lowercase letters, "
			       "digits or hyphens, starts with a letter and "
			       "does not end with a hyphen (optionally after "
			       "'domain:')";
		break;
	case CONFIG_K_ZONE:
		/* "-" means every zone; commands that need one zone refuse it.
		 */
		if (!valid_zone(value) && strcmp(value, "-") != 0)
			rule = "a zone looks like us-central2-b "
			       "(lowercase region, '-', zone letter)";
		break;
	case CONFIG_K_FORMAT:
		output_init(&o);
		rc = output_parse_format(&o, value, err);
		output_release(&o);
		if (rc != 0)
			err->code = TPU_E_INVALID;
		return rc != 0 ? TPU_E_INVALID : 0;
		break;
	case CONFIG_K_BOOL:
		if (!valid_bool(value))
			rule = "use true or false";
		break;
	case CONFIG_K_INT:
		tpu_strtonum(value, k->min, k->max, &errstr);
		if (errstr != NULL)
			return tpu_error(err, TPU_E_INVALID,
			    "invalid %s '%s': %s, want an integer from %lld "
			    "to %lld",
			    key, value, errstr, k->min, k->max);
		break;
	case CONFIG_K_ENDPOINT:
		if (!valid_endpoint(value)) {
			rule = "want an http:// or https:// URL, or host:port";
			break;
		}
		/* the rule the use applies (https, or http to loopback) */
		if (endpoint_check_value(value, err) != 0) {
			tpu_error_prefix(err, "invalid %s", key);
			err->code = TPU_E_INVALID;
			return TPU_E_INVALID;
		}
		break;
	case CONFIG_K_ACCOUNT:
		if (strchr(value, '@') == NULL || strpbrk(value, " \t") != NULL)
			rule = "want a service-account e-mail address";
		break;
	case CONFIG_K_PROFILE:
		if (!valid_profile(value))
			rule = "a profile name is 1 to 64 letters, digits, "
			       "'-' or '_'";
		break;
	}
	if (rule != NULL)
		return tpu_error(err, TPU_E_INVALID, "invalid %s '%s': %s", key,
		    value, rule);
	return 0;
}

struct config *
config_new(void)
{
	return xcalloc(1, sizeof(struct config));
}

void
config_free(struct config *c)
{
	size_t i;

	if (c == NULL)
		return;
	for (i = 0; i < c->n; i++) {
		free(c->v[i].key);
		free(c->v[i].value);
		free(c->v[i].source);
	}
	free(c->v);
	free(c->path);
	free(c->profile);
	free(c->profile_warning);
	free(c);
}

static void
add(struct config *c, enum config_layer layer, const char *key,
    const char *value, const char *source)
{
	c->v = xreallocarray(c->v, c->n + 1, sizeof *c->v);
	c->v[c->n].key = xstrdup(key);
	c->v[c->n].value = xstrdup(value);
	c->v[c->n].source = xstrdup(source);
	c->v[c->n].layer = layer;
	c->n++;
}

void
config_set_flag(struct config *c, const char *key, const char *value)
{
	const struct config_key *k = config_key_find(key);
	char *src;

	if (k != NULL && k->flag != NULL)
		src = xasprintf("flag %s", k->flag);
	else
		src = xasprintf("flag (%s)", key);
	add(c, CONFIG_FLAG, key, value, src);
	free(src);
}

static const struct config_ent *
winner(const struct config *c, const char *key)
{
	const struct config_ent *best = NULL;
	size_t i;

	for (i = 0; i < c->n; i++)
		if (strcmp(c->v[i].key, key) == 0 &&
		    (best == NULL || c->v[i].layer >= best->layer))
			best = &c->v[i];
	return best;
}

const char *
config_get(const struct config *c, const char *key)
{
	const struct config_ent *e = winner(c, key);
	const struct config_key *k;

	if (e != NULL)
		return e->value;
	k = config_key_find(key);
	return k != NULL ? k->dflt : NULL;
}

enum config_layer
config_layer_of(const struct config *c, const char *key)
{
	const struct config_ent *e = winner(c, key);
	const struct config_key *k;

	if (e != NULL)
		return e->layer;
	k = config_key_find(key);
	return k != NULL && k->dflt != NULL ? CONFIG_DEFAULT : CONFIG_UNSET;
}

const char *
config_source(const struct config *c, const char *key)
{
	const struct config_ent *e = winner(c, key);

	if (e != NULL)
		return e->source;
	return config_layer_of(c, key) == CONFIG_DEFAULT ? "default" : NULL;
}

char *
config_get_path(const struct config *c, const char *key)
{
	const char *v = config_get(c, key), *home;

	if (v == NULL)
		return NULL;
	if (v[0] == '~' && v[1] == '/' && (home = getenv("HOME")) != NULL &&
	    *home != '\0')
		return xasprintf("%s%s", home, v + 1);
	return xstrdup(v);
}

const char *
config_file_path(const struct config *c)
{
	return c->path;
}

const char *
config_profile(const struct config *c)
{
	return c->profile;
}

/* name = TPUCTL_ or CLOUDSDK_ + the key in upper case, '/' -> '_'. */
static void
env_name(char *name, size_t size, const char *pfx, const char *key)
{
	size_t n = strlen(pfx), k;

	snprintf(name, size, "%s", pfx);
	for (k = 0; key[k] != '\0' && n < size - 1; k++)
		name[n++] =
		    key[k] == '/' ? '_' : (char)toupper((unsigned char)key[k]);
	name[n] = '\0';
}

/* The alias of key whose name starts (tpuctl) or not with TPUCTL_. */
static const char *
env_alias(const char *key, int tpuctl)
{
	size_t i;

	for (i = 0; i < nitems(env_aliases); i++)
		if (strcmp(env_aliases[i].key, key) == 0 &&
		    tpu_startswith(env_aliases[i].env, "TPUCTL_") == tpuctl)
			return env_aliases[i].env;
	return NULL;
}

/*
 * The environment layer, for each key the first set of: TPUCTL_SECTION_NAME,
 * a TPUCTL_ alias (TPUCTL_CA_BUNDLE), CLOUDSDK_SECTION_NAME, another alias
 * (STORAGE_EMULATOR_HOST).
 */
static void
load_env(struct config *c)
{
	char names[4][128], *src;
	const char *v, *a;
	size_t i, j, n;

	for (i = 0; i < nitems(keys); i++) {
		n = 0;
		env_name(names[n++], sizeof names[0], "TPUCTL_", keys[i].key);
		if ((a = env_alias(keys[i].key, 1)) != NULL)
			snprintf(names[n++], sizeof names[0], "%s", a);
		env_name(names[n++], sizeof names[0], "CLOUDSDK_", keys[i].key);
		if ((a = env_alias(keys[i].key, 0)) != NULL)
			snprintf(names[n++], sizeof names[0], "%s", a);
		for (j = 0; j < n; j++)
			if ((v = getenv(names[j])) != NULL && *v != '\0')
				break;
		if (j == n)
			continue;
		src = xasprintf("env %s", names[j]);
		add(c, CONFIG_ENV, keys[i].key, v, src);
		free(src);
	}
}

/*
 * Variables for keys not in the table ("other helpers may add keys"):
 * TPUCTL_SSH_FOO sets ssh/foo when "ssh" is a known section.  CLOUDSDK_
 * first, so that TPUCTL_ wins (the last entry of a layer wins).
 */
static void
load_env_other(struct config *c)
{
	static const char *const pfx[] = { "CLOUDSDK_", "TPUCTL_" };
	char key[256], *src;
	const char *e, *eq, *rest;
	size_t i, j, k, n;

	for (i = 0; i < nitems(pfx); i++) {
		for (j = 0; environ[j] != NULL; j++) {
			e = environ[j];
			if (!tpu_startswith(e, pfx[i]) ||
			    (eq = strchr(e, '=')) == NULL || eq[1] == '\0')
				continue;
			rest = e + strlen(pfx[i]);
			n = (size_t)(eq - rest);
			if (n == 0 || n >= sizeof key)
				continue;
			for (k = 0; k < n; k++)
				key[k] = (char)tolower((unsigned char)rest[k]);
			key[n] = '\0';
			/* The longest known section that prefixes the name. */
			for (k = n; k > 0; k--)
				if (key[k - 1] == '_' && k < n &&
				    known_section(key, k - 1))
					break;
			if (k == 0)
				continue;
			key[k - 1] = '/';
			if (config_key_find(key) != NULL)
				continue; /* load_env did it, in order */
			src = xasprintf("env %.*s", (int)(eq - e), e);
			add(c, CONFIG_ENV, key, eq + 1, src);
			free(src);
		}
	}
}

/* INI parsing shared by tpuctl's file and gcloud's configurations. */
struct ini_src {
	const char *p;
	int lineno;
	int at_bol;
};

static char *
cfg_reader(char *str, int num, void *stream)
{
	struct ini_src *s = stream;
	int i = 0;

	if (*s->p == '\0' || num < 2)
		return NULL;
	if (s->at_bol)
		s->lineno++;
	while (i < num - 1 && *s->p != '\0') {
		str[i] = *s->p++;
		if (str[i++] == '\n')
			break;
	}
	str[i] = '\0';
	s->at_bol = str[i - 1] == '\n';
	return str;
}

struct pent {
	char *key;
	char *value;
	char *profile; /* NULL for the default sections */
	int ignored;   /* unknown key: only marks the profile as defined */
};

struct parse {
	struct ini_src src;
	const char *file;
	int gcloud; /* read every key, warn about nothing */
	struct pent *v;
	size_t n;
	int errline;
	char errmsg[TPU_ERR_MSGLEN];
	char **warned;
	size_t nwarned;
};

static void perr(struct parse *, const char *, ...)
    __attribute__((format(printf, 2, 3)));

static void
perr(struct parse *ps, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (ps->errline != 0)
		return;
	ps->errline = ps->src.lineno;
	n = snprintf(
	    ps->errmsg, sizeof ps->errmsg, "%s:%d: ", ps->file, ps->src.lineno);
	if (n < 0 || (size_t)n >= sizeof ps->errmsg)
		return;
	va_start(ap, fmt);
	vsnprintf(ps->errmsg + n, sizeof ps->errmsg - (size_t)n, fmt, ap);
	va_end(ap);
}

static void
pwarn(struct parse *ps, const char *what, const char *name)
{
	size_t i;

	for (i = 0; i < ps->nwarned; i++)
		if (strcmp(ps->warned[i], name) == 0)
			return;
	ps->warned =
	    xreallocarray(ps->warned, ps->nwarned + 1, sizeof *ps->warned);
	ps->warned[ps->nwarned++] = xstrdup(name);
	log_warn("%s:%d: unknown %s '%s' (ignored)", ps->file, ps->src.lineno,
	    what, name);
}

/*
 * Split a section name: "core" -> kind 0; "profile NAME" -> kind 1 with
 * *name pointing into buf.  buf receives a trimmed copy.
 */
static int
section_kind(const char *section, char *buf, size_t size, char **name)
{
	char *p, *e;

	snprintf(buf, size, "%s", section);
	p = buf;
	while (isspace((unsigned char)*p))
		p++;
	e = p + strlen(p);
	while (e > p && isspace((unsigned char)e[-1]))
		*--e = '\0';
	memmove(buf, p, strlen(p) + 1);
	*name = NULL;
	if (strncmp(buf, "profile", 7) == 0 && isspace((unsigned char)buf[7])) {
		p = buf + 7;
		while (isspace((unsigned char)*p))
			p++;
		*name = p;
		return 1;
	}
	return 0;
}

static int
cfg_handler(
    void *user, const char *section, const char *name, const char *value)
{
	struct parse *ps = user;
	struct tpu_err err;
	char sec[256], key[512], *prof;
	int kind, ignored = 0;

	if (value == NULL)
		return 1;
	if (*section == '\0') {
		if (ps->gcloud)
			return 1;
		perr(ps, "'%s' is outside any [section]", name);
		return 0;
	}
	kind = section_kind(section, sec, sizeof sec, &prof);
	if (kind == 1) {
		if (ps->gcloud)
			return 1;
		if (!valid_profile(prof)) {
			perr(ps,
			    "invalid profile name '%s': use 1 to 64 "
			    "letters, digits, '-' or '_'",
			    prof);
			return 0;
		}
		if (strchr(name, '/') == NULL) {
			perr(ps,
			    "key '%s' in [profile %s] must be written "
			    "section/name (e.g. compute/zone)",
			    name, prof);
			return 0;
		}
		snprintf(key, sizeof key, "%s", name);
	} else {
		if (!ps->gcloud && !known_section(sec, strlen(sec))) {
			pwarn(ps, "section", sec);
			return 1;
		}
		if (strchr(name, '/') != NULL) {
			if (ps->gcloud)
				return 1;
			perr(ps, "key '%s' in [%s] must be a plain name", name,
			    sec);
			return 0;
		}
		snprintf(key, sizeof key, "%s/%s", sec, name);
	}
	if (!ps->gcloud) {
		if (config_key_find(key) == NULL) {
			pwarn(ps, "key", key);
			ignored = 1;
		} else {
			tpu_err_init(&err);
			if (config_validate(key, value, &err) != 0) {
				perr(ps, "%s", err.msg);
				return 0;
			}
		}
	}
	ps->v = xreallocarray(ps->v, ps->n + 1, sizeof *ps->v);
	ps->v[ps->n].key = xstrdup(key);
	ps->v[ps->n].value = xstrdup(value);
	ps->v[ps->n].profile = kind == 1 ? xstrdup(prof) : NULL;
	ps->v[ps->n].ignored = ignored;
	ps->n++;
	return 1;
}

static void
parse_release(struct parse *ps)
{
	size_t i;

	for (i = 0; i < ps->n; i++) {
		free(ps->v[i].key);
		free(ps->v[i].value);
		free(ps->v[i].profile);
	}
	free(ps->v);
	for (i = 0; i < ps->nwarned; i++)
		free(ps->warned[i]);
	free(ps->warned);
}

/* Parse INI text into ps.  Returns 0 or TPU_E_INVALID naming file:line. */
static int
parse_text(struct parse *ps, const char *text, const char *file, int gcloud,
    struct tpu_err *err)
{
	int line;

	memset(ps, 0, sizeof *ps);
	ps->src.p = text;
	ps->src.at_bol = 1;
	ps->file = file;
	ps->gcloud = gcloud;
	ini_allow_multiline = false;
	ini_allow_inline_comments = false;
	ini_allow_no_value = false;
	ini_stop_on_first_error = false;
	ini_use_stack = false;
	ini_allow_realloc = true;
	ini_max_line = 4096;
	line = ini_parse_stream(cfg_reader, &ps->src, cfg_handler, ps);
	if (line == -2)
		TPU_BUG("ini_parse_stream: out of memory");
	if (line > 0 && (ps->errline == 0 || line < ps->errline))
		return tpu_error(err, TPU_E_INVALID,
		    "%s:%d: malformed line (want '[section]' or "
		    "'name = value')",
		    file, line);
	if (ps->errline != 0)
		return tpu_error(err, TPU_E_INVALID, "%s", ps->errmsg);
	return 0;
}

/*
 * Read a whole text file (fsutil_read_file, then no NUL byte).  Returns 0
 * with *text (caller frees), 1 when it does not exist, or TPU_E_IO /
 * TPU_E_INVALID.
 */
static int
slurp(const char *path, char **text, struct tpu_err *err)
{
	struct buf b;
	int rc;

	*text = NULL;
	buf_init(&b, CONFIG_MAX_FILE);
	if ((rc = fsutil_read_file(path, 0, &b, NULL, err)) != 0) {
		buf_release(&b);
		if (rc == TPU_E_NOTFOUND) {
			tpu_err_init(err);
			return 1;
		}
		return rc;
	}
	if (b.len > 0 && memchr(b.data, '\0', b.len) != NULL) {
		buf_release(&b);
		return tpu_error(err, TPU_E_INVALID,
		    "%s: contains a NUL byte: not a text file", path);
	}
	*text = buf_detach(&b, NULL);
	return 0;
}

/* Apply parsed tpuctl-file values: the default sections, then profile. */
static int
apply_file(
    struct config *c, struct parse *ps, const char *file, const char *profile)
{
	const char *prof = profile;
	char *src;
	size_t i;
	int found = 0;

	if (prof == NULL) {
		for (i = 0; i < ps->n; i++)
			if (ps->v[i].profile == NULL && !ps->v[i].ignored &&
			    strcmp(ps->v[i].key, "core/profile") == 0)
				prof = ps->v[i].value;
	}
	if (prof != NULL && strcmp(prof, "default") == 0)
		prof = NULL;
	src = xasprintf("file %s", file);
	for (i = 0; i < ps->n; i++)
		if (ps->v[i].profile == NULL && !ps->v[i].ignored)
			add(c, CONFIG_FILE, ps->v[i].key, ps->v[i].value, src);
	free(src);
	free(c->profile);
	c->profile = prof != NULL ? xstrdup(prof) : NULL;
	if (prof == NULL)
		return 1;
	src = xasprintf("file %s [profile %s]", file, prof);
	for (i = 0; i < ps->n; i++) {
		if (ps->v[i].profile != NULL &&
		    strcmp(ps->v[i].profile, prof) == 0) {
			if (!ps->v[i].ignored)
				add(c, CONFIG_FILE, ps->v[i].key,
				    ps->v[i].value, src);
			found = 1;
		}
	}
	free(src);
	return found;
}

int
config_load_string(struct config *c, const char *text, const char *file,
    const char *profile, struct tpu_err *err)
{
	struct parse ps;
	int rc;

	if ((rc = parse_text(&ps, text, file, 0, err)) == 0)
		apply_file(c, &ps, file, profile);
	parse_release(&ps);
	return rc;
}

void
config_warn_profile(struct config *c)
{
	if (c->profile_warning != NULL)
		log_warn("%s", c->profile_warning);
	free(c->profile_warning);
	c->profile_warning = NULL;
}

static int
load_file(struct config *c, struct tpu_err *err)
{
	const char *profile = NULL;
	const struct config_ent *e;
	struct parse ps;
	char *text = NULL;
	int rc;

	free(c->profile_warning);
	c->profile_warning = NULL;
	e = winner(c, "core/profile");
	if (e != NULL) {
		if ((rc = config_validate("core/profile", e->value, err)) != 0)
			return tpu_error_prefix(err, "%s", e->source);
		profile = e->value;
	}
	if ((rc = slurp(c->path, &text, err)) < 0)
		return rc;
	if (rc == 1) {
		free(c->profile);
		c->profile = profile != NULL && strcmp(profile, "default") != 0
		                 ? xstrdup(profile)
		                 : NULL;
		if (c->profile != NULL)
			c->profile_warning = xasprintf(
			    "profile '%s' is not defined (%s does not exist)",
			    c->profile, c->path);
		return 0;
	}
	memset(&ps, 0, sizeof ps);
	if ((rc = parse_text(&ps, text, c->path, 0, err)) == 0 &&
	    !apply_file(c, &ps, c->path, profile))
		c->profile_warning = xasprintf(
		    "profile '%s' is not defined in %s", c->profile, c->path);
	parse_release(&ps);
	free(text);
	return rc;
}

static int
valid_config_name(const char *s)
{
	size_t n = strlen(s);

	return n >= 1 && n <= 64 &&
	       strspn(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
	                 "0123456789_-") == n;
}

/*
 * gcloud's active configuration.  It is gcloud's file, so problems with it
 * are warnings and the layer is skipped, never errors.
 */
static void
load_gcloud(struct config *c)
{
	const char *dir = getenv("CLOUDSDK_CONFIG"), *home, *name;
	char *gdir = NULL, *path = NULL, *text = NULL, *active = NULL;
	char *src = NULL, *p;
	struct tpu_err err;
	struct parse ps;
	size_t i;
	int rc;

	memset(&ps, 0, sizeof ps);
	tpu_err_init(&err);
	if (dir != NULL && *dir != '\0')
		gdir = xstrdup(dir);
	else if ((home = getenv("HOME")) != NULL && *home != '\0')
		gdir = xasprintf("%s/.config/gcloud", home);
	else
		goto out;
	name = getenv("CLOUDSDK_ACTIVE_CONFIG_NAME");
	if (name == NULL || *name == '\0') {
		path = xasprintf("%s/active_config", gdir);
		rc = slurp(path, &active, &err);
		free(path);
		path = NULL;
		if (rc < 0) {
			log_warn("gcloud configuration ignored: %s", err.msg);
			goto out;
		}
		name = "default";
		if (active != NULL) {
			for (p = active + strlen(active);
			     p > active && isspace((unsigned char)p[-1]);)
				*--p = '\0';
			if (*active != '\0')
				name = active;
		}
	}
	if (!valid_config_name(name)) {
		log_warn(
		    "gcloud configuration ignored: invalid name '%s'", name);
		goto out;
	}
	path = xasprintf("%s/configurations/config_%s", gdir, name);
	if ((rc = slurp(path, &text, &err)) != 0) {
		if (rc < 0)
			log_warn("gcloud configuration ignored: %s", err.msg);
		goto out;
	}
	if (parse_text(&ps, text, path, 1, &err) != 0) {
		log_warn("gcloud configuration ignored: %s", err.msg);
		goto out;
	}
	src = xasprintf("gcloud configuration %s (%s)", name, path);
	for (i = 0; i < ps.n; i++)
		add(c, CONFIG_GCLOUD, ps.v[i].key, ps.v[i].value, src);
out:
	parse_release(&ps);
	free(src);
	free(text);
	free(active);
	free(path);
	free(gdir);
}

int
config_load(struct config *c, struct tpu_err *err)
{
	const char *xdg = getenv("XDG_CONFIG_HOME"), *home = getenv("HOME");
	struct tpu_err local;
	size_t i;
	int rc;

	if (err == NULL) {
		tpu_err_init(&local);
		err = &local;
	}

	load_env(c);
	load_env_other(c);
	free(c->path);
	if (xdg != NULL && xdg[0] == '/')
		c->path = xasprintf("%s/tpuctl/config", xdg);
	else if (home != NULL && *home != '\0')
		c->path = xasprintf("%s/.config/tpuctl/config", home);
	else
		c->path = xstrdup(".config/tpuctl/config");
	if ((rc = load_file(c, err)) != 0)
		return rc;
	load_gcloud(c);
	/* File values were checked line by line; check flags and env. */
	for (i = 0; i < c->n; i++) {
		if (c->v[i].layer < CONFIG_ENV ||
		    config_key_find(c->v[i].key) == NULL)
			continue;
		if ((rc = config_validate(c->v[i].key, c->v[i].value, err)) !=
		    0)
			return tpu_error_prefix(err, "%s", c->v[i].source);
	}
	return 0;
}

/* The editor behind "config set/unset". */

/* Trimmed section id of a header line, or NULL when not a header. */
static char *
header_id(const char *line, size_t len)
{
	const char *p = line, *e = line + len, *close;
	char *id, *name;
	char buf[256];

	while (p < e && isspace((unsigned char)*p))
		p++;
	if (p == e || *p != '[')
		return NULL;
	close = memchr(p, ']', (size_t)(e - p));
	if (close == NULL)
		return NULL;
	id = xstrndup(p + 1, (size_t)(close - p - 1));
	if (section_kind(id, buf, sizeof buf, &name) == 1) {
		free(id);
		return xasprintf("profile %s", name);
	}
	free(id);
	return xstrdup(buf);
}

/* 1 if the line is "name = ..." or "name: ..." for this name. */
static int
line_is_key(const char *line, size_t len, const char *name)
{
	const char *p = line, *e = line + len;
	size_t n = strlen(name);

	while (p < e && isspace((unsigned char)*p))
		p++;
	if (p == e || *p == ';' || *p == '#')
		return 0;
	if ((size_t)(e - p) < n || strncmp(p, name, n) != 0)
		return 0;
	p += n;
	while (p < e && (*p == ' ' || *p == '\t'))
		p++;
	return p < e && (*p == '=' || *p == ':');
}

static int
write_atomic(
    const char *path, const char *data, size_t len, struct tpu_err *err)
{
	char *dir = NULL, *tmp = NULL, *slash, *p;
	size_t off = 0;
	ssize_t n;
	int fd = -1, dfd, rc = 0;

	dir = xstrdup(path);
	if ((slash = strrchr(dir, '/')) == NULL) {
		free(dir);
		dir = xstrdup(".");
	} else if (slash == dir)
		slash[1] = '\0';
	else
		*slash = '\0';
	/* mkdir -p, new directories 0700. */
	for (p = dir + 1; *p != '\0'; p++) {
		if (*p != '/')
			continue;
		*p = '\0';
		if (mkdir(dir, 0700) == -1 && errno != EEXIST) {
			rc = tpu_error(err, TPU_E_IO, "cannot create %s: %s",
			    dir, strerror(errno));
			goto out;
		}
		*p = '/';
	}
	if (mkdir(dir, 0700) == -1 && errno != EEXIST) {
		rc = tpu_error(err, TPU_E_IO, "cannot create %s: %s", dir,
		    strerror(errno));
		goto out;
	}
	tmp = xasprintf("%s/.config.XXXXXX", dir);
	if ((fd = mkstemp(tmp)) == -1) {
		rc = tpu_error(err, TPU_E_IO, "cannot create a file in %s: %s",
		    dir, strerror(errno));
		free(tmp);
		tmp = NULL;
		goto out;
	}
	if (fchmod(fd, 0600) == -1)
		goto ioerr;
	while (off < len) {
		n = write(fd, data + off, len - off);
		if (n == -1 && errno == EINTR)
			continue;
		if (n == -1)
			goto ioerr;
		off += (size_t)n;
	}
	if (fsync(fd) == -1)
		goto ioerr;
	if (close(fd) == -1) {
		fd = -1;
		goto ioerr;
	}
	fd = -1;
	if (rename(tmp, path) == -1)
		goto ioerr;
	free(tmp);
	tmp = NULL;
	if ((dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) != -1) {
		fsync(dfd);
		close(dfd);
	}
	goto out;
ioerr:
	rc = tpu_error(
	    err, TPU_E_IO, "cannot write %s: %s", path, strerror(errno));
out:
	if (fd != -1)
		close(fd);
	if (tmp != NULL)
		unlink(tmp);
	free(tmp);
	free(dir);
	return rc;
}

int
config_file_update(
    struct config *c, const char *key, const char *value, struct tpu_err *err)
{
	const char *slash = strchr(key, '/');
	char *text = NULL, *want = NULL, *name = NULL, *cur = NULL;
	const char *p, *nl;
	struct buf out;
	size_t len, i, nlines = 0, last = (size_t)-1, sect_end = (size_t)-1;
	struct {
		const char *s;
		size_t len;
		int match;
	} *lines = NULL;
	struct tpu_err local;
	struct parse ps;
	int rc;

	if (err == NULL) {
		tpu_err_init(&local);
		err = &local;
	}
	buf_init(&out, BUF_NOCAP);
	if (value != NULL) {
		if ((rc = config_validate(key, value, err)) != 0)
			goto out;
	} else if (config_key_find(key) == NULL) {
		rc = list_keys(err, key);
		goto out;
	}
	if (slash == NULL) {
		rc = tpu_error(err, TPU_E_INVALID, "invalid key '%s'", key);
		goto out;
	}
	if (c->path == NULL)
		TPU_BUG("config_file_update before config_load");
	if ((rc = slurp(c->path, &text, err)) < 0)
		goto out;
	if (text == NULL)
		text = xstrdup("");
	/* Refuse to rewrite a file we could not parse. */
	if ((rc = parse_text(&ps, text, c->path, 0, err)) != 0) {
		parse_release(&ps);
		goto out;
	}
	parse_release(&ps);
	if (c->profile != NULL && strcmp(key, "core/profile") != 0) {
		want = xasprintf("profile %s", c->profile);
		name = xstrdup(key);
	} else {
		want = xstrndup(key, (size_t)(slash - key));
		name = xstrdup(slash + 1);
	}
	/* Split into lines, marking the key's lines in the section. */
	for (p = text; *p != '\0'; p = nl) {
		nl = strchr(p, '\n');
		nl = nl != NULL ? nl + 1 : p + strlen(p);
		lines = xreallocarray(lines, nlines + 1, sizeof *lines);
		lines[nlines].s = p;
		lines[nlines].len = (size_t)(nl - p);
		lines[nlines].match = 0;
		len = lines[nlines].len;
		if (len > 0 && p[len - 1] == '\n')
			len--;
		{
			char *id = header_id(p, len);

			if (id != NULL) {
				free(cur);
				cur = id;
			} else if (cur != NULL && strcmp(cur, want) == 0) {
				if (line_is_key(p, len, name)) {
					lines[nlines].match = 1;
					last = nlines;
				}
				/* New keys go after the section's last key
				 * line (comments may be about what follows). */
				if (strspn(p, " \t\r") != len &&
				    p[strspn(p, " \t")] != '#' &&
				    p[strspn(p, " \t")] != ';')
					sect_end = nlines;
			}
			if (id != NULL && strcmp(id, want) == 0)
				sect_end = nlines;
		}
		nlines++;
	}
	if (value == NULL && last == (size_t)-1) {
		rc = 1;
		goto out;
	}
	for (i = 0; i < nlines; i++) {
		if (lines[i].match && i != last)
			continue;
		if (i == last) {
			if (value != NULL)
				buf_printf(&out, "%s = %s\n", name, value);
		} else {
			buf_append(&out, lines[i].s, lines[i].len);
			if (lines[i].len > 0 &&
			    lines[i].s[lines[i].len - 1] != '\n')
				buf_puts(&out, "\n");
		}
		if (i == sect_end && last == (size_t)-1 && value != NULL)
			buf_printf(&out, "%s = %s\n", name, value);
	}
	if (sect_end == (size_t)-1 && value != NULL) {
		if (out.len > 0)
			buf_puts(&out, "\n");
		buf_printf(&out, "[%s]\n%s = %s\n", want, name, value);
	}
	rc = write_atomic(c->path, out.data, out.len, err);
out:
	buf_release(&out);
	free(lines);
	free(cur);
	free(want);
	free(name);
	free(text);
	return rc;
}
