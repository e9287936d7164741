/*
 * tpuctl's entry point: global flags (accepted anywhere before "--", as
 * gcloud does), configuration, dispatch, and the one place that turns an
 * error code into an exit status.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cjson/cJSON.h>
#include <curl/curlver.h>
#include <libssh2.h>
#include <openssl/opensslv.h>

#include "cmd.h"
#include "config.h"
#include "ctx.h"
#include "log.h"
#include "output.h"
#include "util.h"
#include "version.h"
#include "xmalloc.h"

/*
 * Global flags.  Those with a config key land in the config's flag layer,
 * so "tpuctl config list" can say where each value came from.
 */
static const struct gflag {
	const char *name; /* "--zone" */
	const char *key;  /* config key, or NULL for a behaviour flag */
	int has_arg;
} gflags[] = {
	{ "--access-token-file", "auth/access_token_file", 1 },
	{ "--ca-file", "core/custom_ca_certs_file", 1 },
	{ "--dry-run", NULL, 0 },
	{ "--format", "core/format", 1 },
	{ "--impersonate-service-account", "auth/impersonate_service_account",
	    1 },
	{ "--log-http", NULL, 0 },
	{ "--profile", "core/profile", 1 },
	{ "--project", "core/project", 1 },
	{ "--quiet", NULL, 0 },
	{ "--verbose", NULL, 0 },
	{ "--verbosity", NULL, 1 },
	{ "--zone", "compute/zone", 1 },
};

const char *
cmd_global_flag(size_t i)
{
	return i < nitems(gflags) ? gflags[i].name : NULL;
}

static const char *const verbosities[] = { "none", "error", "warning", "info",
	"debug" };

static int
set_verbosity(struct tpu_ctx *ctx, const char *v, struct tpu_err *err)
{
	size_t i;

	for (i = 0; i < nitems(verbosities); i++) {
		if (strcmp(v, verbosities[i]) == 0) {
			/* none -> -1, error/warning -> 0, info 1, debug 2 */
			ctx->verbose = i == 0 ? -1 : i <= 2 ? 0 : (int)i - 2;
			return 0;
		}
	}
	return tpu_error(err, TPU_E_USAGE,
	    "invalid --verbosity '%s': use none, error, warning, info or debug",
	    v);
}

static int
apply_gflag(struct tpu_ctx *ctx, const struct gflag *g, const char *val,
    struct tpu_err *err)
{
	if (g->key != NULL) {
		if (*val == '\0')
			return tpu_error(err, TPU_E_USAGE,
			    "option '%s' needs a value", g->name);
		config_set_flag(ctx->cfg, g->key, val);
		return 0;
	}
	if (strcmp(g->name, "--dry-run") == 0)
		ctx->dry_run = 1;
	else if (strcmp(g->name, "--log-http") == 0)
		ctx->log_http = 1;
	else if (strcmp(g->name, "--quiet") == 0)
		ctx->quiet = 1;
	else if (strcmp(g->name, "--verbose") == 0)
		ctx->verbose++;
	else if (strcmp(g->name, "--verbosity") == 0)
		return set_verbosity(ctx, val, err);
	return 0;
}

/*
 * Take the global flags out of argv, wherever they stand before "--", and
 * compact the rest in place.  Returns the new argc or a negative errc.
 */
static int
extract_global_flags(
    struct tpu_ctx *ctx, int argc, char **argv, struct tpu_err *err)
{
	int i, j = 1, k, rc;
	size_t n;

	for (i = 1; i < argc; i++) {
		const char *a = argv[i];
		const struct gflag *g = NULL;
		const char *val = NULL;

		if (strcmp(a, "--") == 0) {
			while (i < argc)
				argv[j++] = argv[i++];
			break;
		}
		if (strcmp(a, "-q") == 0) {
			ctx->quiet = 1;
			continue;
		}
		if (a[0] == '-' && a[1] == 'v' &&
		    strspn(a + 1, "v") == strlen(a + 1)) {
			ctx->verbose += (int)strlen(a + 1);
			continue;
		}
		for (k = 0; k < (int)nitems(gflags); k++) {
			n = strlen(gflags[k].name);
			if (strncmp(a, gflags[k].name, n) != 0)
				continue;
			if (a[n] == '\0') {
				g = &gflags[k];
				break;
			}
			if (a[n] == '=' && gflags[k].has_arg) {
				g = &gflags[k];
				val = a + n + 1;
				break;
			}
		}
		if (g == NULL) {
			argv[j++] = argv[i];
			continue;
		}
		if (g->has_arg && val == NULL) {
			if (i + 1 >= argc)
				return cmd_want_usage(),
				       tpu_error(err, TPU_E_USAGE,
				           "option '%s' needs a value",
				           g->name);
			val = argv[++i];
		}
		if ((rc = apply_gflag(ctx, g, val != NULL ? val : "", err)) !=
		    0)
			return rc;
	}
	argv[j] = NULL;
	return j;
}

static void
print_main_usage(FILE *fp)
{
	fprintf(fp, "usage: tpuctl [global flags] command [flags] "
	            "[operands]\n"
	            "Run 'tpuctl help' for the list of commands.\n");
}

static int
finish_stdout(struct tpu_err *err)
{
	if (fflush(stdout) == 0 && !ferror(stdout))
		return 0;
	if (errno == EPIPE) {
		/* A closed pipe (tpuctl list | head -1): die quietly by
		 * SIGPIPE, as any filter would. */
		signal(SIGPIPE, SIG_DFL);
		raise(SIGPIPE);
	}
	return tpu_error(err, TPU_E_IO, "write error on standard output: %s",
	    strerror(errno));
}

/*
 * "tpuctl --version" alone: the versions tpuctl was built against, from
 * the headers, so that it neither reads the configuration nor loads
 * libcurl, libssh2 or libcrypto (src/dl.h; tests/e2e/t008).  "tpuctl
 * version" reports the libraries actually loaded.
 */
static void
print_build_versions(void)
{
	printf(
	    "tpuctl %s\n"
	    "built with libcurl %s, libssh2 %s, OpenSSL %s, cJSON %d.%d.%d\n",
	    TPUCTL_VERSION, LIBCURL_VERSION, LIBSSH2_VERSION,
	    OPENSSL_VERSION_STR, CJSON_VERSION_MAJOR, CJSON_VERSION_MINOR,
	    CJSON_VERSION_PATCH);
}

int
main(int argc, char **argv)
{
	struct tpu_ctx ctx;
	struct tpu_err err;
	const char *fmt;
	int rc, status;

	/* cJSON allocates through xmalloc: a failed allocation aborts with
	   "out of memory" instead of a NULL item that prints as an empty
	   value (t271, allocation torture). */
	cJSON_InitHooks(
	    &(cJSON_Hooks){ .malloc_fn = xmalloc, .free_fn = free });
	memset(&ctx, 0, sizeof ctx);
	tpu_err_init(&err);
	ctx.prog = "tpuctl";
	ctx.cfg = config_new();
	output_init(&ctx.out);
	signal(SIGPIPE, SIG_IGN);

	if (argc == 2 &&
	    (strcmp(argv[1], "--version") == 0 || strcmp(argv[1], "-V") == 0)) {
		print_build_versions();
		rc = finish_stdout(&err);
		goto out;
	}
	if (argc >= 2 &&
	    (strcmp(argv[1], "--version") == 0 || strcmp(argv[1], "-V") == 0))
		argv[1] = (char *)"version";
	if (argc >= 2 &&
	    (strcmp(argv[1], "-h") == 0 || strcmp(argv[1], "--help") == 0))
		argv[1] = (char *)"help";

	if ((rc = extract_global_flags(&ctx, argc, argv, &err)) < 0)
		goto out;
	argc = rc;
	rc = 0;
	log_set_level(ctx.verbose);
	ctx.interactive = isatty(STDIN_FILENO) && isatty(STDERR_FILENO);
	if (argc < 2) {
		print_main_usage(stderr);
		status = 2;
		goto done;
	}
	if ((rc = config_load(ctx.cfg, &err)) != 0)
		goto out;
	fmt = config_get(ctx.cfg, "core/format");
	if (fmt != NULL && (rc = output_parse_format(&ctx.out, fmt, &err)) != 0)
		goto out;

	rc = cmd_dispatch(NULL, &ctx, argc - 1, argv + 1, &err);
	if (rc >= 0) {
		int frc = finish_stdout(&err);

		if (frc != 0)
			rc = frc;
	}
out:
	if (rc < 0) {
		/* a message quotes what the user or a server gave: no
		 * control character of it reaches the terminal */
		char *shown = tpu_show_dup(
		    err.msg[0] != '\0' ? err.msg
		                       : tpu_errc_name((enum tpu_errc)rc),
		    0);

		fprintf(stderr, "tpuctl: %s\n", shown);
		free(shown);
		if (rc == TPU_E_USAGE && cmd_usage_wanted()) {
			if (cmd_current() != NULL)
				cmd_print_usage(stderr, cmd_current());
			else
				print_main_usage(stderr);
		}
		status = tpu_exit_status((enum tpu_errc)rc);
	} else
		status = rc;
done:
	output_release(&ctx.out);
	ctx_release(&ctx);
	config_free(ctx.cfg);
	fflush(stdout);
	if (status == 130 || status == 143) {
		/* Die by the signal, so the shell sees it (as gcloud does). */
		int sig = status == 130 ? SIGINT : SIGTERM;

		signal(sig, SIG_DFL);
		raise(sig);
	}
	return status;
}
