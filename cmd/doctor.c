/*
 * "tpuctl doctor [NODE]": what stands between the user and a working TPU
 * program.  Local checks (project, zone, credentials, the API, the SSH
 * key, the compatibility matrix) and, with a node, the worker probe
 * (config/probes/tpu_probe.py) on every worker: the framework packages
 * against the matrix for the node's generation and runtime, libtpu
 * lockfiles and whether a live process holds them, processes holding
 * the /dev/accel and /dev/vfio devices, LD_PRELOAD.  Every finding is
 * one line with its fix.  Exit 0 when clean, 8 with findings, 9 when no worker
 * can be reached.
 */
#include <sys/stat.h>

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "auth.h"
#include "buf.h"
#include "cmd.h"
#include "compat.h"
#include "config.h"
#include "fwcmd.h"
#include "json.h"
#include "shquote.h"
#include "sshcmd.h"
#include "tpucmd.h"
#include "xmalloc.h"

static int nfindings;

static void
finding(const char *what, const char *fix)
{
	printf("local: finding: %s; fix: %s\n", what, fix);
	nfindings++;
}

static void
ok(const char *what)
{
	printf("local: ok: %s\n", what);
}

/* Project, zone, credentials, the API, the SSH key, the matrix. */
static void
local_checks(struct tpu_ctx *ctx, const struct compat *c, int have_matrix,
    const struct tpu_err *merr)
{
	const char *project = config_get(ctx->cfg, "core/project");
	const char *zone = config_get(ctx->cfg, "compute/zone");
	const char *home = getenv("HOME");
	struct tpu_err err;
	struct auth *a;
	struct tpucmd tc;
	struct stat st;
	char *tok = NULL, *kf, line[1200];
	cJSON *nodes = NULL;
	int creds = 0;

	if (project != NULL) {
		snprintf(line, sizeof line, "project %s", project);
		ok(line);
	} else
		finding("no project is set",
		    "tpuctl config set core/project PROJECT, or --project");
	if (zone != NULL) {
		snprintf(line, sizeof line, "zone %s", zone);
		ok(line);
	} else
		finding("no zone is set",
		    "tpuctl config set compute/zone ZONE, or --zone");
	tpu_err_init(&err);
	if (ctx_auth(ctx, &a, &err) == 0 && auth_token(a, 0, &tok, &err) == 0) {
		ok("credentials: an access token was obtained");
		creds = 1;
	} else {
		snprintf(line, sizeof line, "no access token: %s", err.msg);
		finding(line,
		    "tpuctl auth list shows the credential chain; set "
		    "GOOGLE_APPLICATION_CREDENTIALS or run gcloud auth "
		    "application-default login");
	}
	xfree_secret(tok);
	if (creds && project != NULL && zone != NULL) {
		tpu_err_init(&err);
		if (tpucmd_open(ctx, &tc, &err) == 0) {
			char *parent = xasprintf(
			    "projects/%s/locations/%s", tc.project, tc.zone);

			if (tpuapi_list(&tc.api, parent, "nodes", "nodes",
			        &nodes, &err) == 0) {
				snprintf(line, sizeof line,
				    "Cloud TPU API: %d node%s in %s",
				    cJSON_GetArraySize(nodes),
				    cJSON_GetArraySize(nodes) == 1 ? "" : "s",
				    tc.zone);
				ok(line);
			} else {
				snprintf(line, sizeof line,
				    "the Cloud TPU API did not answer: %s",
				    err.msg);
				finding(line,
				    "check the network, the project and that "
				    "the TPU API is enabled (tpuctl api)");
			}
			free(parent);
			cJSON_Delete(nodes);
			tpucmd_close(&tc);
		}
	}
	kf = xasprintf(
	    "%s/.ssh/google_compute_engine", home != NULL ? home : ".");
	if (stat(kf, &st) != 0)
		ok("no SSH key yet: tpuctl ssh creates "
		   "~/.ssh/google_compute_engine");
	else if ((st.st_mode & 077) != 0) {
		snprintf(line, sizeof line,
		    "SSH key %s is readable by others (mode %03o)", kf,
		    (unsigned)(st.st_mode & 0777));
		finding(line, "chmod 600 ~/.ssh/google_compute_engine");
	} else
		ok("SSH key ~/.ssh/google_compute_engine");
	free(kf);
	if (have_matrix) {
		snprintf(line, sizeof line,
		    "compatibility matrix %s/compat.json", c->dir);
		ok(line);
	} else {
		snprintf(line, sizeof line, "%s", merr->msg);
		finding(line,
		    "set TPUCTL_CONFIG_DIR to the directory of compat.json, or "
		    "make install");
	}
}

/* "jax jax=0.6.1 jaxlib=0.6.1 libtpu=0.0.15\n...": what fits the node. */
static char *
expect_lines(const struct compat *c, const char *gen, const char *runtime)
{
	struct tpu_err err;
	cJSON *rows = NULL;
	const cJSON *r, *p;
	struct buf b;

	buf_init(&b, 0);
	tpu_err_init(&err);
	if (compat_rows(c, "all", &rows, &err) != 0)
		return buf_detach(&b, NULL);
	cJSON_ArrayForEach(r, rows)
	{
		if (strcmp(json_opt_string(r, "generation", ""), gen) != 0 ||
		    strcmp(json_opt_string(r, "runtimeVersion", ""), runtime) !=
		        0)
			continue;
		buf_puts(&b, json_opt_string(r, "framework", "?"));
		cJSON_ArrayForEach(
		    p, cJSON_GetObjectItemCaseSensitive(r, "packages"))
		{
			if (cJSON_IsString(p))
				buf_printf(
				    &b, " %s=%s", p->string, p->valuestring);
		}
		buf_puts(&b, "\n");
	}
	cJSON_Delete(rows);
	return buf_detach(&b, NULL);
}

static int
doctor_exec(struct tpu_ctx *ctx, int argc, char **argv, struct tpu_err *err)
{
	static const struct option opts[] = {
		SSHCMD_LONG_OPTIONS,
		{ NULL, 0, NULL, 0 },
	};
	struct sshcmd_opts so;
	struct sshcmd sc;
	struct compat c;
	struct tpu_err merr;
	char gen[32], runtime[128], *script = NULL, *expect = NULL;
	char *command = NULL, *e_exp = NULL, *e_node = NULL;
	int ch, rc, have_matrix;

	sshcmd_opts_init(&so);
	so.workers = "all";
	so.default_nodes = "all";
	while ((ch = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		if ((rc = sshcmd_opt(&so, ch, optarg, err)) < 0)
			return rc;
		if (rc == 1)
			continue;
		return cmd_bad_option(argv, ch, err);
	}
	argc -= optind;
	argv += optind;
	if ((rc = cmd_check_operands(&cmd_doctor_entry, argc, argv, err)) != 0)
		return rc;
	if (argc == 1) {
		const char *n = argv[0];

		if ((rc = tpucmd_name(
		         ctx, TPUCMD_NAME_NODE | TPUCMD_NAME_QR, &n, err)) != 0)
			return rc;
		argv[0] += n - argv[0];
	}
	nfindings = 0;
	tpu_err_init(&merr);
	have_matrix = compat_load(&c, NULL, &merr) == 0;
	local_checks(ctx, &c, have_matrix, &merr);
	fflush(stdout);
	if (argc == 0 || !have_matrix) {
		rc = 0;
		goto done;
	}
	if ((rc = fwcmd_read_node(ctx, argv[0], gen, sizeof gen, runtime,
	         sizeof runtime, err)) != 0)
		goto out;
	if ((rc = fwcmd_read_script(
	         c.dir, "probes/tpu_probe.py", &script, err)) != 0)
		goto out;
	expect = expect_lines(&c, gen, runtime);
	e_exp = xasprintf("TPUCTL_EXPECT=%s", expect);
	e_node = xasprintf("TPUCTL_NODE=%s", argv[0]);
	{
		char *av[] = { (char *)"env", e_exp, e_node, (char *)"python3",
			(char *)"-c", script, (char *)"doctor" };

		if ((rc = shquote_argv(7, av, &command, err)) != 0)
			goto out;
	}
	if ((rc = sshcmd_prepare(ctx, argv[0], &so, &sc, err)) != 0)
		goto out;
	rc = fwcmd_run(ctx, &sc, command, 0, "doctor", "have findings", err);
	sshcmd_release(&sc);
	if (rc != 0)
		goto out;
done:
	if (nfindings > 0)
		rc = tpu_error(err, TPU_E_PARTIAL, "doctor: %d local finding%s",
		    nfindings, nfindings == 1 ? "" : "s");
out:
	free(script);
	free(expect);
	free(e_exp);
	free(e_node);
	free(command);
	if (have_matrix)
		compat_release(&c);
	return rc;
}

const struct cmd_entry cmd_doctor_entry = {
	.name = "doctor",
	.alias = NULL,
	.usage = "doctor [--zone zone] [--node all|0|0,2|0-3|node-id] "
	         "[--worker 0|all|1,3|0-7] [--internal-ip] "
	         "[--fanout n] [--ssh-key-file file] "
	         "[--strict-host-key-checking yes|no] "
	         "[--connect-timeout seconds] [node]",
	.summary = "check credentials, the API and a node's workers (framework "
	           "versions, libtpu locks, devices)",
	.min_args = 0,
	.max_args = 1,
	.flags = CMD_NEEDS_AUTH | CMD_NEEDS_ZONE | CMD_SSH,
	.exec = doctor_exec,
};
