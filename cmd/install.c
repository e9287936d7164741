/*
 * "tpuctl install NODE --framework F": install a framework on every
 * worker of a node with the pins of the compatibility matrix
 * (src/compat.h, config/compat.json), by running the framework's recipe
 * (config/recipes/F.sh and the common body recipes/common.sh, POSIX sh,
 * compat_recipe) through the SSH fan-out.
 *
 * Order matters: the framework and version are checked against the
 * matrix first, then the node is read (nodes.get: its generation and
 * runtime version) and checked again; only then is the SSH side
 * prepared (key propagation, host keys) and the recipe run.  A refusal
 * therefore touches no worker: no ssh-keys patch, no guest attributes.
 *
 * Output is per worker ("[w3] ..."), then a per-worker summary on stderr;
 * exit 0 when every worker succeeded, 8 when some failed, 9 when none
 * could be reached.
 */
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "buf.h"
#include "catalog.h"
#include "cmd.h"
#include "compat.h"
#include "fwcmd.h"
#include "json.h"
#include "log.h"
#include "shquote.h"
#include "sshcmd.h"
#include "util.h"
#include "xmalloc.h"

enum {
	OPT_FRAMEWORK = 0x300,
	OPT_VERSION,
	OPT_FIND_LINKS,
	OPT_NO_INDEX,
	OPT_PYTHON,
	OPT_TIMEOUT,
};

#define MAX_FIND_LINKS 8

/* "dist=version dist=version" from the matrix's packages object. */
static char *
packages_word_list(const cJSON *packages)
{
	const cJSON *it;
	struct buf b;

	buf_init(&b, 0);
	cJSON_ArrayForEach(it, packages)
	{
		if (cJSON_IsString(it))
			buf_printf(&b, "%s%s=%s", b.len ? " " : "", it->string,
			    it->valuestring);
	}
	return buf_detach(&b, NULL);
}

static int
build_command(const struct compat *c, const struct compat_choice *ch,
    const char *python, const char *const *links, int nlinks, int no_index,
    char **out, struct tpu_err *err)
{
	struct buf opts;
	const cJSON *it;
	char **argv = NULL, *script = NULL, *pkgs = NULL, *e_ver, *e_pkg,
	     *e_min, *e_opt, *e_py;
	int argc = 0, rc, i;

	if ((rc = compat_recipe(c, ch->framework, &script, err)) != 0)
		return rc;
	buf_init(&opts, 0);
	if (no_index)
		buf_puts(&opts, "--no-index");
	if (nlinks > 0) {
		for (i = 0; i < nlinks; i++)
			buf_printf(&opts, "%s--find-links %s",
			    opts.len ? " " : "", links[i]);
	} else {
		cJSON_ArrayForEach(it, ch->find_links)
		{
			if (cJSON_IsString(it))
				buf_printf(&opts, "%s--find-links %s",
				    opts.len ? " " : "", it->valuestring);
		}
	}
	pkgs = packages_word_list(ch->packages);
	e_ver = xasprintf("TPUCTL_VERSION=%s", ch->version);
	e_pkg = xasprintf("TPUCTL_PACKAGES=%s", pkgs);
	e_min = xasprintf("TPUCTL_PYTHON_MIN=%s", ch->python_min);
	e_opt = xasprintf("TPUCTL_PIP_OPTS=%s", opts.data);
	e_py = xasprintf("TPUCTL_PYTHON=%s", python);
	argv = xcalloc(
	    (size_t)cJSON_GetArraySize(ch->requirements) + 12, sizeof *argv);
	argv[argc++] = (char *)"env";
	argv[argc++] = e_ver;
	argv[argc++] = e_pkg;
	argv[argc++] = e_min;
	argv[argc++] = e_opt;
	argv[argc++] = e_py;
	argv[argc++] = (char *)"sh";
	argv[argc++] = (char *)"-c";
	argv[argc++] = script;
	argv[argc++] = (char *)ch->framework;
	cJSON_ArrayForEach(it, ch->requirements)
	{
		if (cJSON_IsString(it))
			argv[argc++] = it->valuestring;
	}
	rc = shquote_argv(argc, argv, out, err);
	free(argv);
	free(e_ver);
	free(e_pkg);
	free(e_min);
	free(e_opt);
	free(e_py);
	free(pkgs);
	buf_release(&opts);
	free(script);
	return rc;
}

static int
install_exec(struct tpu_ctx *ctx, int argc, char **argv, struct tpu_err *err)
{
	static const struct option opts[] = {
		SSHCMD_LONG_OPTIONS,
		{ "find-links", required_argument, NULL, OPT_FIND_LINKS },
		{ "framework", required_argument, NULL, OPT_FRAMEWORK },
		{ "no-index", no_argument, NULL, OPT_NO_INDEX },
		{ "python", required_argument, NULL, OPT_PYTHON },
		{ "timeout", required_argument, NULL, OPT_TIMEOUT },
		{ "version", required_argument, NULL, OPT_VERSION },
		{ NULL, 0, NULL, 0 },
	};
	struct sshcmd_opts so;
	struct fwcmd_install fi;
	const char *framework = NULL, *version = NULL, *python = "python3";
	const char *links[MAX_FIND_LINKS];
	long long timeout_s = 0;
	int ch_, rc, nlinks = 0, no_index = 0;

	fwcmd_install_init(&fi);
	sshcmd_opts_init(&so);
	so.workers = "all";
	so.default_nodes = "all";
	while ((ch_ = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		if ((rc = sshcmd_opt(&so, ch_, optarg, err)) < 0)
			return rc;
		if (rc == 1)
			continue;
		switch (ch_) {
		case OPT_FRAMEWORK:
			framework = optarg;
			break;
		case OPT_VERSION:
			version = optarg;
			break;
		case OPT_FIND_LINKS:
			if (nlinks == MAX_FIND_LINKS)
				return tpu_error(err, TPU_E_USAGE,
				    "--find-links: at most %d", MAX_FIND_LINKS);
			if (*optarg == '\0' || strpbrk(optarg, " \t\n'\"\\$`"))
				return tpu_error(err, TPU_E_USAGE,
				    "--find-links '%s': a path or URL without "
				    "blanks or shell characters",
				    optarg);
			links[nlinks++] = optarg;
			break;
		case OPT_NO_INDEX:
			no_index = 1;
			break;
		case OPT_PYTHON:
			if (*optarg == '\0' || strpbrk(optarg, " \t\n") != NULL)
				return tpu_error(err, TPU_E_USAGE,
				    "--python '%s': an interpreter name or "
				    "path",
				    optarg);
			python = optarg;
			break;
		case OPT_TIMEOUT:
			if ((rc = tpu_parse_duration(
			         "--timeout", optarg, &timeout_s, err)) != 0)
				return rc;
			if (timeout_s > 24 * 3600)
				return tpu_error(err, TPU_E_USAGE,
				    "--timeout: at most 24 hours");
			break;
		default:
			return cmd_bad_option(argv, ch_, err);
		}
	}
	argc -= optind;
	argv += optind;
	if ((rc = cmd_check_operands(&cmd_install_entry, argc, argv, err)) != 0)
		return rc;
	if (framework == NULL)
		return cmd_want_usage(),
		       tpu_error(err, TPU_E_USAGE,
		           "--framework is required (jax, pytorch or "
		           "tensorflow)");
	if (no_index && nlinks == 0)
		return tpu_error(err, TPU_E_USAGE,
		    "--no-index needs --find-links (where the wheels are)");
	{
		const char *n = argv[0];

		if ((rc = tpucmd_name(
		         ctx, TPUCMD_NAME_NODE | TPUCMD_NAME_QR, &n, err)) != 0)
			return rc;
		argv[0] += n - argv[0];
	}
	fi.framework = framework;
	fi.version = version;
	fi.python = python;
	fi.links = links;
	fi.nlinks = nlinks;
	fi.no_index = no_index;
	fi.timeout_s = (int)timeout_s;
	return fwcmd_install(ctx, argv[0], &so, &fi, err);
}

void
fwcmd_install_init(struct fwcmd_install *fi)
{
	memset(fi, 0, sizeof *fi);
	fi->python = "python3";
	fi->version_flag = "--version";
}

/* The matrix advises "use --version V": the caller's option may differ. */
static void
advise(const struct fwcmd_install *fi, struct tpu_err *err)
{
	static const char use[] = "use --version ";
	char *at = strstr(err->msg, use);

	if (at != NULL && strcmp(fi->version_flag, "--version") != 0) {
		char *rest = xstrdup(at + sizeof use - 1);

		*at = '\0';
		snprintf(at, sizeof err->msg - (size_t)(at - err->msg),
		    "use %s %s", fi->version_flag, rest);
		free(rest);
	}
}

int
fwcmd_install_command(const struct fwcmd_install *fi, const char *name,
    const char *gen, const char *runtime, char **command, char **what, int say,
    struct tpu_err *err)
{
	struct compat c;
	struct compat_choice ch;
	int rc;

	if ((rc = compat_load(&c, NULL, err)) != 0)
		return rc;
	if ((rc = compat_check_framework(
	         &c, fi->framework, fi->version, err)) != 0) {
		advise(fi, err);
		goto out;
	}
	if (gen == NULL)
		goto out;
	if ((rc = compat_resolve(
	         &c, fi->framework, fi->version, gen, runtime, &ch, err)) != 0)
		goto out;
	if ((rc = build_command(&c, &ch, fi->python, fi->links, fi->nlinks,
	         fi->no_index, command, err)) != 0)
		goto out;
	if (say)
		log_info("install: %s %s on %s (%s, runtime %s, Python %s)",
		    ch.framework, ch.version, name, gen, runtime,
		    ch.runtime_python != NULL ? ch.runtime_python : "?");
	if (what != NULL)
		*what = xasprintf("%s %s", ch.framework, ch.version);
out:
	compat_release(&c);
	return rc;
}

int
fwcmd_install(struct tpu_ctx *ctx, const char *name,
    const struct sshcmd_opts *so, const struct fwcmd_install *fi,
    struct tpu_err *err)
{
	struct sshcmd sc;
	char gen[32], runtime[128], *command = NULL, *what = NULL, *dry;
	int rc, prepared = 0;

	/* 1. the matrix alone: no request yet */
	if ((rc = fwcmd_install_command(
	         fi, NULL, NULL, NULL, NULL, NULL, 0, err)) != 0)
		return rc;
	/* 2. the node's generation and runtime: one nodes.get */
	if ((rc = fwcmd_read_node(ctx, name, gen, sizeof gen, runtime,
	         sizeof runtime, err)) != 0)
		goto out;
	if ((rc = fwcmd_install_command(
	         fi, name, gen, runtime, &command, &what, 1, err)) != 0)
		goto out;
	/* 3. only now the workers (--dry-run: what would run, on which) */
	if (ctx->dry_run) {
		/* what: "FRAMEWORK VERSION" */
		dry = xasprintf("would install %s (recipe %.*s.sh)", what,
		    (int)strcspn(what, " "), what);
		rc = fwcmd_dry_run(ctx, name, so, dry, err);
		free(dry);
		goto out;
	}
	if ((rc = sshcmd_prepare(ctx, name, so, &sc, err)) != 0)
		goto out;
	prepared = 1;
	rc = fwcmd_run(ctx, &sc, command, fi->timeout_s, what, "failed", err);
out:
	if (prepared)
		sshcmd_release(&sc);
	free(what);
	free(command);
	return rc;
}

const struct cmd_entry cmd_install_entry = {
	.name = "install",
	.alias = NULL,
	.usage = "install [--no-index] [--find-links dir|url] [--python path] "
	         "[--version version] [--timeout duration] [--zone zone] "
	         "[--node all|0|0,2|0-3|node-id] "
	         "[--worker 0|all|1,3|0-7] [--internal-ip] [--fanout n] "
	         "[--ssh-key-file file] [--strict-host-key-checking yes|no] "
	         "[--connect-timeout seconds] "
	         "--framework jax|pytorch|tensorflow node",
	.summary = "install a framework, pinned to the TPU runtime, on every "
	           "worker",
	.min_args = 1,
	.max_args = 1,
	.flags = CMD_NEEDS_AUTH | CMD_NEEDS_ZONE | CMD_SSH,
	.exec = install_exec,
};
