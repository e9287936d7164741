/*
 * Unit tests for src/jobs.c: names, the user's environment, the exact
 * per-worker environment (one slice and a multislice), state parsing,
 * the local record, and the worker-side scripts run for real with
 * /bin/sh in a temporary HOME: launch, status, follow from offsets,
 * cancel (nothing of the job left), a workdir archive unpacked.
 */
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>

#include <errno.h>
#include <fcntl.h>
#include <pwd.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <check.h>

#include "buf.h"
#include "fsutil.h"
#include "jobs.h"
#include "pack.h"
#include "xmalloc.h"

START_TEST(test_name_check)
{
	static const char *const good[] = { "a", "train-20261201-101500-00ab",
		"X.y_z-1", "0abc" };
	static const char *const bad[] = { "", "-a", ".a", "a b", "a/b",
		"caf\xc3\xa9", "a'b", "a\nb",
		"01234567890123456789012345678901234567890123456789012345678901"
		"23" };
	struct tpu_err err;
	size_t i;

	for (i = 0; i < sizeof good / sizeof good[0]; i++)
		ck_assert_int_eq(jobs_name_check(good[i], &err), 0);
	for (i = 0; i < sizeof bad / sizeof bad[0]; i++)
		ck_assert_msg(jobs_name_check(bad[i], &err) == TPU_E_USAGE,
		    "%s accepted", bad[i]);
	jobs_name_check("a b", &err);
	ck_assert_ptr_nonnull(strstr(err.msg, "'a b'"));
}
END_TEST

START_TEST(test_default_name)
{
	static const struct {
		const char *cmd, *want;
	} cases[] = {
		{ "python3 train.py --x", "python3-20261201-111502-00ab" },
		{ "/usr/bin/Python3.11 -c 1",
		    "python3.11-20261201-111502-00ab" },
		{ "./.hidden.sh", "hidden.sh-20261201-111502-00ab" },
		{ "", "job-20261201-111502-00ab" },
		{ "  $(x)", "job-20261201-111502-00ab" },
		{ "true;false", "true-20261201-111502-00ab" },
		{ "\xc3\xa9t\xc3\xa9", "t-20261201-111502-00ab" },
	};
	struct tpu_err err;
	size_t i;

	for (i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		char *n = jobs_default_name(cases[i].cmd, 1796123702, 0x100ab);

		ck_assert_str_eq(n, cases[i].want);
		ck_assert_int_eq(jobs_name_check(n, &err), 0);
		free(n);
	}
}
END_TEST

START_TEST(test_env_user)
{
	struct jobs_spec s;
	struct tpu_err err;
	static const char file[] = "# comment\n\nA=1\nexport B=two words\r\n"
	                           "  C='q'\nA=3\n";

	jobs_spec_init(&s);
	ck_assert_int_eq(jobs_env_add(&s, "X=a=b", "--env", &err), 0);
	ck_assert_int_eq(jobs_env_add(&s, "NOEQ", "--env", &err), TPU_E_USAGE);
	ck_assert_ptr_nonnull(strstr(err.msg, "--env 'NOEQ'"));
	ck_assert_int_eq(jobs_env_add(&s, "1A=x", "--env", &err), TPU_E_USAGE);
	ck_assert_int_eq(jobs_env_add(&s, "A-B=x", "--env", &err), TPU_E_USAGE);
	ck_assert_int_eq(
	    jobs_env_add(&s, "TPUCTL_JOB=x", "--env", &err), TPU_E_USAGE);
	ck_assert_int_eq(
	    jobs_env_file(&s, "f.env", file, sizeof file - 1, &err), 0);
	ck_assert_uint_eq(s.nenv, 4);
	ck_assert_str_eq(s.env[0], "X=a=b");
	ck_assert_str_eq(s.env[1], "A=3");
	ck_assert_str_eq(s.env[2], "B=two words");
	ck_assert_str_eq(s.env[3], "C='q'");
	ck_assert_int_eq(
	    jobs_env_file(&s, "g.env", "A=1\nbad line\n", 13, &err),
	    TPU_E_USAGE);
	ck_assert_ptr_nonnull(strstr(err.msg, "g.env:2:"));
	/* a NUL inside a line (found by fuzz_jobs: read past the copy) */
	ck_assert_int_eq(
	    jobs_env_file(&s, "h.env", "A=1\nB=\0x\r", 8, &err), TPU_E_USAGE);
	ck_assert_ptr_nonnull(strstr(err.msg, "h.env:2: a NUL byte"));
	jobs_spec_release(&s);
}
END_TEST

static void
spec_fill(struct jobs_spec *s, int nslices, int nworkers)
{
	jobs_spec_init(s);
	s->name = xstrdup("j1");
	s->slice = xstrdup("ms");
	s->zone = xstrdup("us-central2-b");
	s->nslices = nslices;
	s->nworkers = nworkers;
	s->command = xstrdup("echo hi");
	s->start = 1796123702;
}

START_TEST(test_worker_env_one_slice)
{
	static const char *const want[] = { "TPUCTL_JOB=j1", "TPUCTL_WORKER=2",
		"TPUCTL_WORKERS=4", "TPUCTL_SLICE=0", "TPUCTL_SLICES=1",
		"TPUCTL_RESTART_COUNT=0", "RANK=2", "WORLD_SIZE=4",
		"LOCAL_RANK=0", "LOCAL_WORLD_SIZE=1", "MASTER_ADDR=10.0.0.2",
		"MASTER_PORT=1234", "JAX_COORDINATOR_ADDRESS=10.0.0.2:8476",
		"EXTRA=x y" };
	struct jobs_spec s;
	struct tpu_err err;
	size_t n, i;
	char **env;

	spec_fill(&s, 1, 4);
	ck_assert_int_eq(jobs_env_add(&s, "EXTRA=x y", "--env", &err), 0);
	ck_assert_int_eq(
	    jobs_env_add(&s, "MASTER_PORT=1234", "--env", &err), 0);
	env = jobs_worker_env(&s, "10.0.0.2", 0, 2, &n);
	ck_assert_uint_eq(n, sizeof want / sizeof want[0]);
	for (i = 0; i < n; i++)
		ck_assert_str_eq(env[i], want[i]);
	jobs_env_free(env, n);
	jobs_spec_release(&s);
}
END_TEST

START_TEST(test_worker_env_multislice)
{
	static const char *const want[] = { "TPUCTL_JOB=j1", "TPUCTL_WORKER=1",
		"TPUCTL_WORKERS=2", "TPUCTL_SLICE=1", "TPUCTL_SLICES=2",
		"TPUCTL_RESTART_COUNT=0", "RANK=3", "WORLD_SIZE=4",
		"LOCAL_RANK=0", "LOCAL_WORLD_SIZE=1", "MASTER_ADDR=h0",
		"MASTER_PORT=29500", "JAX_COORDINATOR_ADDRESS=h0:8476",
		"MEGASCALE_COORDINATOR_ADDRESS=h0", "MEGASCALE_NUM_SLICES=2",
		"MEGASCALE_SLICE_ID=1", "MEGASCALE_PORT=8080" };
	struct jobs_spec s;
	size_t n, i;
	char **env;

	spec_fill(&s, 2, 2);
	env = jobs_worker_env(&s, "h0", 1, 1, &n);
	ck_assert_uint_eq(n, sizeof want / sizeof want[0]);
	for (i = 0; i < n; i++)
		ck_assert_str_eq(env[i], want[i]);
	jobs_env_free(env, n);
	jobs_spec_release(&s);
}
END_TEST

START_TEST(test_env_script)
{
	char a[] = "A=it's", b[] = "B=", c[] = "C=$(id) `x`\nnext";
	char *env[] = { a, b, c };
	char *s = jobs_env_script(env, 3);

	ck_assert_str_eq(s, "export A='it'\\''s'\nexport B=''\n"
	                    "export C='$(id) `x`\nnext'\n");
	free(s);
}
END_TEST

START_TEST(test_state_parse)
{
	static const struct {
		const char *in, *out;
		time_t start, end;
	} cases[] = {
		{ "running 1700000000 -", "running", 1700000000, 0 },
		{ "exit 3 1700000000 1700000009", "exited 3", 1700000000,
		    1700000009 },
		{ "exit 0", "exited 0", 0, 0 },
		{ "signal TERM 5 6\n", "killed by TERM", 5, 6 },
		{ "lost 7 -", "lost", 7, 0 },
		{ "none", "no such job", 0, 0 },
		{ "exited 255", "exited 255", 0, 0 },
		{ "killed by KILL", "killed by KILL", 0, 0 },
		{ "lost", "lost", 0, 0 },
		{ "no such job", "no such job", 0, 0 },
		{ "queued", "queued", 0, 0 },
	};
	static const char *const bad[] = { "", "exit", "exit 256", "exit -1",
		"exit x", "signal", "signal T-RM", "killed TERM", "running 1",
		"bogus", "exit 1 2 3 4 5", "queued 1 2" };
	struct jobs_state st;
	char b[64];
	size_t i;

	for (i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		ck_assert_msg(
		    jobs_state_parse(cases[i].in, &st) == 0, "%s", cases[i].in);
		ck_assert_str_eq(
		    jobs_state_str(&st, b, sizeof b), cases[i].out);
		ck_assert_int_eq(st.start, cases[i].start);
		ck_assert_int_eq(st.end, cases[i].end);
		ck_assert_int_eq(jobs_state_final(&st),
		    strcmp(cases[i].out, "running") != 0 &&
		        strcmp(cases[i].out, "queued") != 0);
	}
	for (i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		ck_assert_msg(
		    jobs_state_parse(bad[i], &st) == -1, "%s", bad[i]);
		ck_assert_int_eq(st.kind, JOBS_UNKNOWN);
	}
	jobs_state_parse("exit 0", &st);
	ck_assert_int_eq(jobs_state_ok(&st), 1);
	jobs_state_parse("exit 1", &st);
	ck_assert_int_eq(jobs_state_ok(&st), 0);
}
END_TEST

/* A known end survives a worker gone later; anything else is replaced. */
START_TEST(test_state_merge)
{
	static const struct {
		const char *rec, *ans, *want; /* ans NULL: no answer */
	} cases[] = {
		{ "exit 0", NULL, "exited 0" },
		{ "exit 0", "lost", "exited 0" },
		{ "exit 0", "none", "exited 0" },
		{ "exit 3", "lost", "exited 3" },
		{ "signal TERM", NULL, "killed by TERM" },
		{ "signal TERM", "none", "killed by TERM" },
		{ "exit 0", "exit 1", "exited 1" },
		{ "exit 0", "running", "running" },
		{ "running", NULL, "lost" },
		{ "running", "none", "no such job" },
		{ "running", "exit 0", "exited 0" },
		{ "lost", NULL, "lost" },
		{ "lost", "exit 0", "exited 0" },
		{ "none", NULL, "lost" },
	};
	struct jobs_state st, ans;
	char b[64];
	size_t i;

	for (i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		ck_assert_int_eq(jobs_state_parse(cases[i].rec, &st), 0);
		if (cases[i].ans != NULL)
			ck_assert_int_eq(
			    jobs_state_parse(cases[i].ans, &ans), 0);
		jobs_state_merge(&st, cases[i].ans != NULL ? &ans : NULL);
		ck_assert_msg(strcmp(jobs_state_str(&st, b, sizeof b),
		                  cases[i].want) == 0,
		    "%s + %s: %s", cases[i].rec,
		    cases[i].ans != NULL ? cases[i].ans : "(none)", b);
	}
	memset(&st, 0, sizeof st);
	ck_assert_int_eq(jobs_state_known(&st), 0);
	jobs_state_parse("signal KILL", &st);
	ck_assert_int_eq(jobs_state_known(&st), 1);
	jobs_state_parse("lost", &st);
	ck_assert_int_eq(jobs_state_known(&st), 0);
}
END_TEST

START_TEST(test_record_roundtrip)
{
	struct jobs_spec s, r;
	struct jobs_state st[4], *got = NULL;
	struct tpu_err err;
	cJSON *o;

	spec_fill(&s, 2, 2);
	s.nodes = xcalloc(2, sizeof *s.nodes);
	s.nodes[0] = xstrdup("ms-0");
	s.nodes[1] = xstrdup("ms-1");
	s.workdir_hash = xstrdup("ab12");
	jobs_env_add(&s, "K=v", "--env", &err);
	jobs_state_parse("exit 0 10 20", &st[0]);
	jobs_state_parse("signal TERM 10 21", &st[1]);
	jobs_state_parse("lost 10 -", &st[2]);
	jobs_state_parse("running 10 -", &st[3]);
	s.restart_count = 2;
	s.submitted = 1;
	o = jobs_record(&s, st);
	ck_assert_int_eq(jobs_record_parse(o, &r, &got, &err), 0);
	ck_assert_str_eq(r.name, "j1");
	ck_assert_str_eq(r.slice, "ms");
	ck_assert_str_eq(r.zone, "us-central2-b");
	ck_assert_int_eq(r.nslices, 2);
	ck_assert_int_eq(r.nworkers, 2);
	ck_assert_str_eq(r.nodes[1], "ms-1");
	ck_assert_str_eq(r.command, "echo hi");
	ck_assert_str_eq(r.workdir_hash, "ab12");
	ck_assert_uint_eq(r.nenv, 1);
	ck_assert_str_eq(r.env[0], "K=v");
	ck_assert_int_eq(r.start, 1796123702);
	ck_assert_int_eq(r.restart_count, 2);
	ck_assert_int_eq(r.submitted, 1);
	{
		size_t n, i, found = 0;
		char **env = jobs_worker_env(&r, "10.0.0.2", 1, 0, &n);

		for (i = 0; i < n; i++)
			if (strcmp(env[i], "TPUCTL_RESTART_COUNT=2") == 0)
				found++;
		ck_assert_uint_eq(found, 1);
		jobs_env_free(env, n);
	}
	ck_assert_ptr_nonnull(got);
	ck_assert_int_eq(got[0].kind, JOBS_EXITED);
	ck_assert_int_eq(got[1].kind, JOBS_KILLED);
	ck_assert_str_eq(got[1].signal, "TERM");
	ck_assert_int_eq(got[1].end, 21);
	ck_assert_int_eq(got[2].kind, JOBS_LOST);
	ck_assert_int_eq(got[3].kind, JOBS_RUNNING);
	ck_assert_double_eq(cJSON_GetObjectItem(o, "end")->valuedouble, 21);
	free(got);
	jobs_spec_release(&r);
	cJSON_Delete(o);
	cJSON_AddStringToObject(o = cJSON_CreateObject(), "name", "x");
	ck_assert_int_eq(jobs_record_parse(o, &r, &got, &err), TPU_E_API);
	cJSON_Delete(o);
	/* times out of range are unknown (found by fuzz_jobs: UB cast) */
	o = cJSON_Parse("{\"name\":\"j\",\"slice\":\"s\",\"zone\":\"z\","
	                "\"slices\":1,\"workers\":1,\"start\":3e116,"
	                "\"states\":[{\"state\":\"lost\",\"end\":-5}]}");
	ck_assert_int_eq(jobs_record_parse(o, &r, &got, &err), 0);
	ck_assert_int_eq(r.start, 0);
	ck_assert_int_eq(got[0].end, 0);
	free(got);
	jobs_spec_release(&r);
	cJSON_Delete(o);
	jobs_spec_release(&s);
}
END_TEST

/* The worker scripts, run by /bin/sh with HOME=home. */
static char home[64];

static void
setup_home(void)
{
	snprintf(home, sizeof home, "/tmp/check_jobs.XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(home));
	/* the job's orphans are reparented here and reaped (as by a VM's
	   init), so a killed process group really disappears */
	prctl(PR_SET_CHILD_SUBREAPER, 1);
}

static void
teardown_home(void)
{
	pid_t p = fork();

	if (p == 0) {
		execlp("rm", "rm", "-rf", home, (char *)NULL);
		_exit(127);
	}
	waitpid(p, NULL, 0);
}

/* Run cmd with sh -c; stdout and stderr into out and errb (may be NULL). */
static int
sh(const char *cmd, struct buf *out, struct buf *errb)
{
	char *po = xasprintf("%s/.o", home), *pe = xasprintf("%s/.e", home);
	struct tpu_err err;
	pid_t p;
	int st;

	p = fork();
	ck_assert_int_ge(p, 0);
	if (p == 0) {
		int fo = open(po, O_WRONLY | O_CREAT | O_TRUNC, 0600);
		int fe = open(pe, O_WRONLY | O_CREAT | O_TRUNC, 0600);

		dup2(fo, 1);
		dup2(fe, 2);
		setenv("HOME", home, 1);
		execl("/bin/sh", "sh", "-c", cmd, (char *)NULL);
		_exit(127);
	}
	/* reap every orphan of the job meanwhile, as a VM's init does: a
	   zombie would keep a killed process group "alive" */
	for (;;) {
		pid_t w = waitpid(-1, &st, 0);

		ck_assert_int_gt(w, 0);
		if (w == p)
			break;
	}
	if (out != NULL) {
		buf_clear(out);
		ck_assert_int_eq(fsutil_read_file(po, 0, out, NULL, &err), 0);
	}
	if (errb != NULL) {
		buf_clear(errb);
		ck_assert_int_eq(fsutil_read_file(pe, 0, errb, NULL, &err), 0);
	}
	free(po);
	free(pe);
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

/* Poll the status script until the state is final (10 s at most). */
static void
wait_final(const char *name, struct jobs_state *st)
{
	char *cmd = jobs_status_cmd(name);
	struct buf b;
	int i;

	buf_init(&b, BUF_NOCAP);
	for (i = 0; i < 200; i++) {
		size_t nl = strlen(name);

		ck_assert_int_eq(sh(cmd, &b, NULL), 0);
		ck_assert_msg(
		    strncmp(b.data, name, nl) == 0 && b.data[nl] == ' ', "%s",
		    b.data);
		ck_assert_int_eq(jobs_state_parse(b.data + nl + 1, st), 0);
		if (jobs_state_final(st))
			break;
		usleep(50000);
	}
	buf_release(&b);
	free(cmd);
}

START_TEST(test_scripts_launch_status_follow)
{
	struct jobs_spec s;
	struct jobs_state st;
	struct buf o, e;
	char **env, *cmd;
	size_t n;

	buf_init(&o, BUF_NOCAP);
	buf_init(&e, BUF_NOCAP);
	spec_fill(&s, 1, 4);
	free(s.command);
	s.command = xstrdup("echo \"rank=$RANK job=$TPUCTL_JOB v=$V\"; "
	                    "pwd; echo oops >&2; printf 'tail'; exit 3");
	{
		struct tpu_err e2;
		ck_assert_int_eq(
		    jobs_env_add(&s, "V=it's $x", "--env", &e2), 0);
	}
	env = jobs_worker_env(&s, "127.0.0.1", 0, 1, &n);
	cmd = jobs_launch_cmd(&s, env, n, 0);
	ck_assert_int_eq(sh(cmd, &o, &e), 0);
	ck_assert_str_eq(o.data, "");
	/* a second launch of the same name is refused */
	ck_assert_int_eq(sh(cmd, NULL, &e), 97);
	ck_assert_ptr_nonnull(strstr(e.data, "exists"));
	free(cmd);
	wait_final("j1", &st);
	ck_assert_int_eq(st.kind, JOBS_EXITED);
	ck_assert_int_eq(st.code, 3);
	ck_assert_int_gt(st.start, 0);
	ck_assert_int_ge(st.end, st.start);
	/* the whole output, then from offsets */
	cmd = jobs_follow_cmd("j1", 0, 0, 1);
	ck_assert_int_eq(sh(cmd, &o, &e), 1);
	free(cmd);
	{
		char *want =
		    xasprintf("rank=1 job=j1 v=it's $x\n%s\ntail", home);

		ck_assert_str_eq(o.data, want);
		free(want);
	}
	ck_assert_str_eq(e.data, "oops\n");
	/* a resumed launch of a job already there follows it from 0 */
	cmd = jobs_launch_cmd(
	    &s, env, n, JOBS_LAUNCH_FOLLOW | JOBS_LAUNCH_RESUME);
	ck_assert_int_eq(sh(cmd, &o, &e), 1);
	ck_assert_ptr_nonnull(strstr(o.data, "rank=1 job=j1"));
	ck_assert_str_eq(e.data, "oops\n");
	free(cmd);
	cmd = jobs_follow_cmd("j1", 7, 2, 0);
	ck_assert_int_eq(sh(cmd, &o, &e), 1);
	ck_assert_str_eq(e.data, "ps\n");
	ck_assert_ptr_nonnull(strstr(o.data, "job=j1"));
	ck_assert(strncmp(o.data, "job=j1", 6) == 0);
	free(cmd);
	cmd = jobs_follow_cmd("nope", 0, 0, 1);
	ck_assert_int_eq(sh(cmd, &o, &e), 96);
	free(cmd);
	cmd = jobs_status_cmd("nope");
	ck_assert_int_eq(sh(cmd, &o, NULL), 0);
	ck_assert_str_eq(o.data, "nope none\n");
	free(cmd);
	jobs_env_free(env, n);
	jobs_spec_release(&s);
	buf_release(&o);
	buf_release(&e);
}
END_TEST

/*
 * The startup-script of a submitted job, with a curl that answers as the
 * metadata server of worker W of a 2-worker node (endpoints of worker 0
 * and 1): the job runs detached in the usual layout with worker 0's
 * address as MASTER_ADDR; a second boot launches nothing; a worker the
 * script does not know launches nothing.
 */
static void
boot(const char *script, int worker, int want)
{
	char *p = xasprintf("%s/boot.sh", home), *c = xasprintf("%s/bin", home);
	char *cmd;
	FILE *fp;

	mkdir(c, 0700);
	free(c);
	c = xasprintf("%s/bin/curl", home);
	fp = fopen(c, "w");
	ck_assert_ptr_nonnull(fp);
	fprintf(fp,
	    "#!/bin/sh\n"
	    "for a; do u=$a; done\n"
	    "case $u in\n"
	    "*/agent-worker-number) echo %d ;;\n"
	    "*/worker-network-endpoints) "
	    "echo 't1v-n-1-w-0:11:10.1.2.3,t1v-n-1-w-1:12:10.1.2.4' ;;\n"
	    /* slice 1 of a multislice whose slice 0 worker 0 is 10.9.9.9 */
	    "*/tpu-env) printf \"ACCELERATOR_TYPE: 'v4-16'\\n"
	    "MEGASCALE_COORDINATOR_ADDRESS: '10.9.9.9:8080'\\n"
	    "MEGASCALE_NUM_SLICES: '2'\\nMEGASCALE_SLICE_ID: '1'\\n\" ;;\n"
	    "*) exit 22 ;;\n"
	    "esac\n",
	    worker);
	fclose(fp);
	chmod(c, 0700);
	fp = fopen(p, "w");
	ck_assert_ptr_nonnull(fp);
	fputs(script, fp);
	fclose(fp);
	cmd = xasprintf("PATH=\"$HOME/bin:$PATH\" sh %s", p);
	ck_assert_int_eq(sh(cmd, NULL, NULL), want);
	free(cmd);
	free(c);
	free(p);
}

/*
 * boot SCRIPT as WORKER: it launched job NAME, which ended with exit CODE
 * and printed OUT (what follow reads).
 */
static void
boot_ran(
    const char *script, int worker, const char *name, int code, const char *out)
{
	struct jobs_state st;
	struct buf o, e;
	char *cmd;

	buf_init(&o, BUF_NOCAP);
	buf_init(&e, BUF_NOCAP);
	boot(script, worker, 0);
	wait_final(name, &st);
	ck_assert_int_eq(st.kind, JOBS_EXITED);
	ck_assert_int_eq(st.code, code);
	cmd = jobs_follow_cmd(name, 0, 0, 1);
	ck_assert_int_eq(sh(cmd, &o, &e), code == 0 ? 0 : 1);
	ck_assert_str_eq(o.data, out);
	free(cmd);
	buf_release(&o);
	buf_release(&e);
}

START_TEST(test_boot_script)
{
	struct jobs_spec s;
	struct jobs_state st;
	struct buf o, e;
	char *script, *cmd;

	buf_init(&o, BUF_NOCAP);
	buf_init(&e, BUF_NOCAP);
	spec_fill(&s, 1, 2);
	free(s.command);
	s.command = xstrdup("echo \"w=$TPUCTL_WORKER of $TPUCTL_WORKERS "
	                    "rank=$RANK m=$MASTER_ADDR "
	                    "j=$JAX_COORDINATOR_ADDRESS v=$V\"; exit 4");
	{
		struct tpu_err e2;

		ck_assert_int_eq(
		    jobs_env_add(&s, "V=it's \"$x\"", "--env", &e2), 0);
	}
	{
		struct passwd *pw = getpwuid(geteuid());

		ck_assert_ptr_nonnull(pw);
		s.user = xstrdup(pw->pw_name);
	}
	script = jobs_boot_script(&s, NULL);
	ck_assert(strncmp(script, "#!/bin/sh\n", 10) == 0);
	boot_ran(script, 1, "j1", 4,
	    "w=1 of 2 rank=1 m=10.1.2.3 j=10.1.2.3:8476 v=it's \"$x\"\n");
	/* a second boot: the job is there, nothing launched */
	boot(script, 1, 97);
	/* no such worker in the job */
	boot(script, 5, 1);
	free(script);
	jobs_spec_release(&s);
	/* the staged archive cannot be fetched: refused (98), recorded as
	   the job's state with the reason in its stderr; a kept copy that
	   fails its checksum is removed and pulled again (not exit 95: no
	   client to tell) */
	spec_fill(&s, 1, 2);
	free(s.name);
	s.name = xstrdup("j98");
	s.workdir_hash = xstrdup("00ab");
	s.stage_url = xstrdup("http://127.0.0.1:9/none.tar");
	s.user = xstrdup(getpwuid(geteuid())->pw_name);
	script = jobs_boot_script(&s, NULL);
	ck_assert_int_eq(sh("mkdir -p \"$HOME/.tpuctl/wd\" && echo junk "
	                    ">\"$HOME/.tpuctl/wd/00ab.tar\"",
	                     NULL, NULL),
	    0);
	boot(script, 0, 98);
	ck_assert_int_eq(
	    sh("[ ! -e \"$HOME/.tpuctl/wd/00ab.tar\" ]", NULL, NULL), 0);
	wait_final("j98", &st);
	ck_assert_int_eq(st.kind, JOBS_EXITED);
	ck_assert_int_eq(st.code, 98);
	buf_clear(&o);
	buf_clear(&e);
	cmd = jobs_follow_cmd("j98", 0, 0, 1);
	ck_assert_int_eq(sh(cmd, &o, &e), 1);
	ck_assert_ptr_nonnull(
	    strstr(e.data, "workdir archive 00ab is not on this worker\n"));
	ck_assert_ptr_nonnull(
	    strstr(e.data, "cannot download the workdir from the bucket"));
	free(cmd);
	free(script);
	jobs_spec_release(&s);
	buf_release(&o);
	buf_release(&e);
}
END_TEST

/*
 * Of a multislice: the node's slice and the master (slice 0's worker 0)
 * come from tpu-env, so worker 1 of slice 1 of 2 x 2 workers is rank 3
 * with slice 0's address as MASTER_ADDR and MEGASCALE_COORDINATOR_ADDRESS.
 */
START_TEST(test_boot_script_multislice)
{
	struct jobs_spec s;
	char *script;

	spec_fill(&s, 2, 2);
	free(s.command);
	s.command =
	    xstrdup("echo \"rank=$RANK/$WORLD_SIZE "
	            "s=$TPUCTL_SLICE/$TPUCTL_SLICES "
	            "mss=$MEGASCALE_SLICE_ID/$MEGASCALE_NUM_SLICES "
	            "m=$MASTER_ADDR c=$MEGASCALE_COORDINATOR_ADDRESS\"");
	s.user = xstrdup(getpwuid(geteuid())->pw_name);
	script = jobs_boot_script(&s, NULL);
	boot_ran(script, 1, "j1", 0,
	    "rank=3/4 s=1/2 mss=1/2 m=10.9.9.9 c=10.9.9.9\n");
	free(script);
	jobs_spec_release(&s);
}
END_TEST

/* An executable file at $home/bin/name. */
static void
stub(const char *name, const char *text)
{
	char *p = xasprintf("%s/bin/%s", home, name);
	FILE *fp = fopen(p, "w");

	ck_assert_ptr_nonnull(fp);
	fputs(text, fp);
	fclose(fp);
	chmod(p, 0700);
	free(p);
}

/*
 * The startup-script as root (id says so) for a user "alice" that does
 * not exist yet: it creates her (useradd), her passwd home (missing:
 * made, chowned to her), and starts the job through runuser as her with
 * her HOME, where the job's layout is; a second boot finds the job
 * there.  As another account than root and alice: exit 1, nothing run.
 */
START_TEST(test_boot_script_as_root)
{
	struct jobs_spec s;
	struct buf o;
	struct tpu_err err;
	char *script, *t, *p;
	int i;

	buf_init(&o, BUF_NOCAP);
	spec_fill(&s, 1, 2);
	free(s.command);
	s.command = xstrdup("echo \"$HOME $USER $LOGNAME $(pwd)\"");
	s.user = xstrdup("alice");
	script = jobs_boot_script(&s, NULL);
	/* boot() makes bin/ and the curl of worker 1 */
	boot("exit 0", 1, 0);
	t = xasprintf("#!/bin/sh\n"
	              "case \"$*\" in\n"
	              "-un) cat %s/bin/whoami ;;\n"
	              "-u) [ \"$(cat %s/bin/whoami)\" = root ] && echo 0 || "
	              "echo 1001 ;;\n"
	              "'-u alice'|'-g alice') [ -e %s/bin/alice ] && echo 1000 "
	              "|| exit 1 ;;\n"
	              "*) exit 2 ;;\n"
	              "esac\n",
	    home, home, home);
	stub("id", t);
	free(t);
	stub("whoami", "root\n");
	t = xasprintf("#!/bin/sh\necho \"$*\" >>%s/bin/log\n"
	              ": >%s/bin/alice\n",
	    home, home);
	stub("useradd", t);
	free(t);
	t = xasprintf("#!/bin/sh\n"
	              "[ \"$1 $2\" = 'passwd alice' ] && [ -e %s/bin/alice ] "
	              "|| exit 2\n"
	              "echo 'alice:x:1000:1000::%s/home/alice:/bin/bash'\n",
	    home, home);
	stub("getent", t);
	free(t);
	t = xasprintf("#!/bin/sh\necho \"chown $*\" >>%s/bin/log\n", home);
	stub("chown", t);
	free(t);
	t = xasprintf("#!/bin/sh\necho \"runuser $1 $2 $3\" >>%s/bin/log\n"
	              "shift 3\nexec \"$@\"\n",
	    home);
	stub("runuser", t);
	free(t);
	/* HOME unset, as a TPU VM's startup-script has it */
	p = xasprintf("%s/boot.sh", home);
	{
		FILE *fp = fopen(p, "w");

		ck_assert_ptr_nonnull(fp);
		fputs(script, fp);
		fclose(fp);
	}
	t = xasprintf("cd / && PATH=\"$HOME/bin:$PATH\" env -u HOME -u USER "
	              "-u LOGNAME sh %s",
	    p);
	ck_assert_int_eq(sh(t, NULL, NULL), 0);
	free(t);
	t = xasprintf("%s/home/alice/.tpuctl/jobs/j1/stdout", home);
	for (i = 0; i < 500; i++) {
		buf_clear(&o);
		if (fsutil_read_file(t, 0, &o, NULL, &err) == 0 && o.len > 0)
			break;
		usleep(10000);
	}
	free(t);
	t = xasprintf("%s/home/alice alice alice %s/home/alice\n", home, home);
	ck_assert_str_eq(o.data, t);
	free(t);
	t = xasprintf("%s/bin/log", home);
	buf_clear(&o);
	ck_assert_int_eq(fsutil_read_file(t, 0, &o, NULL, &err), 0);
	free(t);
	t = xasprintf("-m -s /bin/bash alice\n"
	              "chown alice:1000 %s/home/alice\n"
	              "runuser -u alice --\n",
	    home);
	ck_assert_str_eq(o.data, t);
	free(t);
	t = xasprintf("%s/home/alice", home);
	{
		struct stat st;

		ck_assert_int_eq(stat(t, &st), 0);
		ck_assert_int_eq(st.st_mode & 0777, 0750);
	}
	free(t);
	/* a second boot: alice exists, the job is there already */
	t = xasprintf("cd / && PATH=\"$HOME/bin:$PATH\" env -u HOME sh %s", p);
	ck_assert_int_eq(sh(t, NULL, NULL), 97);
	/* neither root nor alice */
	stub("whoami", "bob\n");
	ck_assert_int_eq(sh(t, NULL, &o), 1);
	ck_assert_ptr_nonnull(strstr(o.data, "runs as bob, not root"));
	free(t);
	free(p);
	free(script);
	jobs_spec_release(&s);
	buf_release(&o);
}
END_TEST

START_TEST(test_scripts_follow_while_running)
{
	struct jobs_spec s;
	struct buf o, e;
	char **env, *cmd;
	size_t n;

	buf_init(&o, BUF_NOCAP);
	buf_init(&e, BUF_NOCAP);
	spec_fill(&s, 1, 1);
	free(s.command);
	s.command = xstrdup("for i in 1 2 3 4 5; do echo line $i; sleep 0.2; "
	                    "done");
	env = jobs_worker_env(&s, "127.0.0.1", 0, 0, &n);
	/* launch and follow in one: ends when the job has ended */
	cmd = jobs_launch_cmd(&s, env, n, 1);
	ck_assert_int_eq(sh(cmd, &o, &e), 0);
	ck_assert_str_eq(o.data, "line 1\nline 2\nline 3\nline 4\nline 5\n");
	free(cmd);
	jobs_env_free(env, n);
	jobs_spec_release(&s);
	buf_release(&o);
	buf_release(&e);
}
END_TEST

static int
group_alive(const char *name)
{
	char *p = xasprintf("%s/.tpuctl/jobs/%s/pgid", home, name);
	struct buf b;
	struct tpu_err err;
	int alive;

	while (waitpid(-1, NULL, WNOHANG) > 0)
		;
	buf_init(&b, BUF_NOCAP);
	ck_assert_int_eq(fsutil_read_file(p, 0, &b, NULL, &err), 0);
	alive = kill(-(pid_t)strtol(b.data, NULL, 10), 0) == 0;
	buf_release(&b);
	free(p);
	return alive;
}

START_TEST(test_scripts_cancel)
{
	struct jobs_spec s;
	struct jobs_state st;
	struct buf o;
	char **env, *cmd;
	size_t n;
	int k;

	buf_init(&o, BUF_NOCAP);
	spec_fill(&s, 1, 1);
	free(s.command);
	/* a job that ignores SIGTERM: SIGKILL after the grace */
	s.command = xstrdup("trap '' TERM; sleep 60 & sleep 61; wait");
	env = jobs_worker_env(&s, "127.0.0.1", 0, 0, &n);
	cmd = jobs_launch_cmd(&s, env, n, 0);
	ck_assert_int_eq(sh(cmd, NULL, NULL), 0);
	free(cmd);
	/* the group exists once setsid(1) ran, just after launch returns */
	for (k = 0; k < 200 && !group_alive("j1"); k++)
		usleep(10000);
	ck_assert_int_eq(group_alive("j1"), 1);
	cmd = jobs_cancel_cmd("j1", 1);
	ck_assert_int_eq(sh(cmd, &o, NULL), 0);
	free(cmd);
	ck_assert_msg(strncmp(o.data, "j1 signal ", 10) == 0, "%s", o.data);
	ck_assert_int_eq(jobs_state_parse(o.data + 3, &st), 0);
	ck_assert_int_eq(st.kind, JOBS_KILLED);
	usleep(200000);
	ck_assert_int_eq(group_alive("j1"), 0);
	/* cancelling an ended job reports its state */
	cmd = jobs_cancel_cmd("j1", 1);
	ck_assert_int_eq(sh(cmd, &o, NULL), 0);
	ck_assert(strncmp(o.data, "j1 signal ", 10) == 0);
	free(cmd);
	/* a job whose processes are gone without a state (its worker
	   rebooted) stays lost: nothing was cancelled */
	free(s.name);
	s.name = xstrdup("j2");
	cmd = jobs_launch_cmd(&s, env, n, 0);
	ck_assert_int_eq(sh(cmd, NULL, NULL), 0);
	free(cmd);
	for (k = 0; k < 200 && !group_alive("j2"); k++)
		usleep(10000);
	cmd = jobs_status_cmd("j2");
	ck_assert_int_eq(sh(cmd, &o, NULL), 0);
	free(cmd);
	ck_assert_msg(strncmp(o.data, "j2 running ", 11) == 0, "%s", o.data);
	{
		char *p = xasprintf("%s/.tpuctl/jobs/j2/pgid", home);
		FILE *fp = fopen(p, "r");
		int g = 0;

		ck_assert_ptr_nonnull(fp);
		ck_assert_int_eq(fscanf(fp, "%d", &g), 1);
		fclose(fp);
		free(p);
		ck_assert_int_eq(kill(-g, SIGKILL), 0);
	}
	for (k = 0; k < 200 && group_alive("j2"); k++)
		usleep(10000);
	cmd = jobs_cancel_cmd("j2", 1);
	ck_assert_int_eq(sh(cmd, &o, NULL), 0);
	free(cmd);
	ck_assert_msg(strncmp(o.data, "j2 lost ", 8) == 0, "%s", o.data);
	jobs_env_free(env, n);
	jobs_spec_release(&s);
	buf_release(&o);
}
END_TEST

static void launch_up(struct jobs_spec *, const char *, const char *);

/*
 * Cancelled once it runs (a TERM in the millisecond between the job
 * shell's trap and its subshell resetting it is lost: the job then ends
 * by the KILL after the grace).
 */
START_TEST(test_scripts_cancel_term)
{
	struct jobs_spec s;
	struct buf o;
	char *cmd;

	buf_init(&o, BUF_NOCAP);
	spec_fill(&s, 1, 1);
	launch_up(&s, "j1", "echo up; sleep 60");
	cmd = jobs_cancel_cmd("j1", 10);
	ck_assert_int_eq(sh(cmd, &o, NULL), 0);
	ck_assert_msg(
	    strncmp(o.data, "j1 signal TERM ", 15) == 0, "%s", o.data);
	free(cmd);
	ck_assert_int_eq(group_alive("j1"), 0);
	jobs_spec_release(&s);
	buf_release(&o);
}
END_TEST

/* Launch job name running command; wait until its output says "up". */
static void
launch_up(struct jobs_spec *s, const char *name, const char *command)
{
	char **env, *cmd,
	    *p = xasprintf("%s/.tpuctl/jobs/%s/stdout", home, name);
	struct buf b;
	struct tpu_err err;
	size_t n;
	int k;

	free(s->name);
	s->name = xstrdup(name);
	free(s->command);
	s->command = xstrdup(command);
	env = jobs_worker_env(s, "127.0.0.1", 0, 0, &n);
	cmd = jobs_launch_cmd(s, env, n, 0);
	ck_assert_int_eq(sh(cmd, NULL, NULL), 0);
	free(cmd);
	jobs_env_free(env, n);
	buf_init(&b, BUF_NOCAP);
	for (k = 0; k < 500; k++) {
		buf_clear(&b);
		if (fsutil_read_file(p, 0, &b, NULL, &err) == 0 && b.len > 0 &&
		    strstr(b.data, "up\n") != NULL)
			break;
		usleep(10000);
	}
	ck_assert_msg(k < 500, "job %s never started", name);
	buf_release(&b);
	free(p);
}

/* SIGTERM to job name's process group, as the preemption watcher does. */
static void
term_group(const char *name)
{
	char *p = xasprintf("%s/.tpuctl/jobs/%s/pgid", home, name);
	struct buf b;
	struct tpu_err err;

	buf_init(&b, BUF_NOCAP);
	ck_assert_int_eq(fsutil_read_file(p, 0, &b, NULL, &err), 0);
	ck_assert_int_eq(kill(-(pid_t)strtol(b.data, NULL, 10), SIGTERM), 0);
	buf_release(&b);
	free(p);
}

/* The preemption notice's SIGTERM to the whole group (the job's shell
   included) records the job's own exit, or "signal TERM" when it died
   of it, never lost; cancel's SIGTERM records "signal TERM" even when
   the job catches it and exits 0. */
START_TEST(test_scripts_notice_term)
{
	struct jobs_spec s;
	struct jobs_state st;
	struct buf o;
	char *cmd;

	buf_init(&o, BUF_NOCAP);
	spec_fill(&s, 1, 1);
	launch_up(&s, "n1", "trap 'exit 7' TERM; echo up; sleep 30 & wait");
	launch_up(&s, "n2", "echo up; sleep 30");
	launch_up(&s, "n3", "echo up; sleep 30; echo after");
	term_group("n1");
	term_group("n2");
	term_group("n3");
	wait_final("n1", &st);
	ck_assert_int_eq(st.kind, JOBS_EXITED);
	ck_assert_int_eq(st.code, 7);
	ck_assert(st.end != 0);
	wait_final("n2", &st);
	ck_assert_int_eq(st.kind, JOBS_KILLED);
	ck_assert_str_eq(st.signal, "TERM");
	wait_final("n3", &st);
	ck_assert_int_eq(st.kind, JOBS_KILLED);
	ck_assert_str_eq(st.signal, "TERM");
	cmd = xasprintf("%s/.tpuctl/jobs/n3/stdout", home);
	{
		struct tpu_err err;

		ck_assert_int_eq(fsutil_read_file(cmd, 0, &o, NULL, &err), 0);
		ck_assert_str_eq(o.data, "up\n");
	}
	free(cmd);
	/* cancelled: killed by TERM whatever the job exits with */
	launch_up(&s, "n4", "trap 'exit 0' TERM; echo up; sleep 30 & wait");
	cmd = jobs_cancel_cmd("n4", 10);
	ck_assert_int_eq(sh(cmd, &o, NULL), 0);
	free(cmd);
	ck_assert_msg(
	    strncmp(o.data, "n4 signal TERM ", 15) == 0, "%s", o.data);
	ck_assert_int_eq(group_alive("n4"), 0);
	jobs_spec_release(&s);
	buf_release(&o);
}
END_TEST

START_TEST(test_scripts_workdir)
{
	struct jobs_spec s;
	struct jobs_state st;
	struct buf o;
	char **env, *cmd, *src = xasprintf("%s/src", home), *p, *part;
	char hash[PACK_HASH_LEN + 1];
	struct tpu_err err;
	size_t n;
	int fd;

	buf_init(&o, BUF_NOCAP);
	ck_assert_int_eq(mkdir(src, 0755), 0);
	p = xasprintf("%s/a b.txt", src);
	ck_assert_int_eq(fsutil_write_atomic(p, "data\n", 5, 0644, &err), 0);
	free(p);
	p = xasprintf("%s/.tpuctl", home);
	mkdir(p, 0700);
	free(p);
	p = xasprintf("%s/.tpuctl/wd", home);
	mkdir(p, 0700);
	free(p);
	part = xasprintf("%s/.tpuctl/wd/upload", home);
	fd = open(part, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	ck_assert_int_eq(pack_write(src, NULL, fd, hash, NULL, &err), 0);
	close(fd);
	/* the have check, then the archive arrives as HASH.tar.part */
	cmd = jobs_have_cmd(hash);
	ck_assert_int_eq(sh(cmd, &o, NULL), 0);
	ck_assert_str_eq(o.data, "need\n");
	p = jobs_archive_path(hash);
	{
		char *dst = xasprintf("%s/%s", home, p);

		ck_assert_int_eq(rename(part, dst), 0);
		free(dst);
	}
	free(p);
	spec_fill(&s, 1, 1);
	free(s.command);
	s.command = xstrdup("cat 'a b.txt'");
	s.workdir_hash = xstrdup(hash);
	env = jobs_worker_env(&s, "127.0.0.1", 0, 0, &n);
	free(cmd);
	cmd = jobs_launch_cmd(&s, env, n, 1);
	ck_assert_int_eq(sh(cmd, &o, NULL), 0);
	ck_assert_str_eq(o.data, "data\n");
	free(cmd);
	cmd = jobs_have_cmd(hash);
	ck_assert_int_eq(sh(cmd, &o, NULL), 0);
	ck_assert_str_eq(o.data, "have\n");
	free(cmd);
	wait_final("j1", &st);
	ck_assert_int_eq(st.kind, JOBS_EXITED);
	/* a corrupt archive is refused */
	free(s.name);
	s.name = xstrdup("j2");
	free(s.workdir_hash);
	s.workdir_hash = xstrdup(
	    "0000000000000000000000000000000000000000000000000000000000000000");
	p = xasprintf("%s/.tpuctl/wd/%s.tar.part", home, s.workdir_hash);
	ck_assert_int_eq(fsutil_write_atomic(p, "junk", 4, 0644, &err), 0);
	free(p);
	cmd = jobs_launch_cmd(&s, env, n, 0);
	ck_assert_int_eq(sh(cmd, NULL, &o), 98);
	ck_assert_ptr_nonnull(strstr(o.data, "checksum mismatch"));
	free(cmd);
	jobs_env_free(env, n);
	jobs_spec_release(&s);
	buf_release(&o);
	free(src);
	free(part);
}
END_TEST

/*
 * A staged workdir (--stage) pulled with a curl that serves a local
 * archive (with the token of its metadata answer only): one of 8 MiB or more is
 * checked by python3's hashlib (a python3 in front of the real one logs its
 * calls), kept by hash and not pulled again; when python3 fails, sha256sum
 * checks it; a download with other bytes is refused (98): nothing kept, the job
 * not started.
 */
static void
write_exe(const char *path, const char *text)
{
	struct tpu_err err;

	ck_assert_int_eq(
	    fsutil_write_atomic(path, text, strlen(text), 0700, &err), 0);
}

static int
count_lines(const char *path)
{
	struct buf b;
	struct tpu_err err;
	int n = 0;
	size_t i;

	buf_init(&b, BUF_NOCAP);
	if (fsutil_read_file(path, 0, &b, NULL, &err) == 0)
		for (i = 0; i < b.len; i++)
			n += b.data[i] == '\n';
	buf_release(&b);
	return n;
}

/* Launch job name of s (its env for worker 0) with $HOME/bin first in
 * PATH, following it; its exit status, output in o and e. */
static int
launch_as(struct jobs_spec *s, const char *name, struct buf *o, struct buf *e)
{
	size_t n;
	char **env, *launch, *cmd;
	int rc;

	free(s->name);
	s->name = xstrdup(name);
	env = jobs_worker_env(s, "127.0.0.1", 0, 0, &n);
	launch = jobs_launch_cmd(s, env, n, JOBS_LAUNCH_FOLLOW);
	cmd = xasprintf("PATH=\"$HOME/bin:$PATH\"; export PATH; %s", launch);
	rc = sh(cmd, o, e);
	free(cmd);
	free(launch);
	jobs_env_free(env, n);
	return rc;
}

/* Job name runs on the staged workdir, with ncurl downloads and npy
 * python3 calls logged so far. */
static void
staged_ok(struct jobs_spec *s, const char *name, int ncurl, int npy)
{
	char *clog = xasprintf("%s/curl.log", home);
	char *plog = xasprintf("%s/py.log", home);
	struct buf o, e;

	buf_init(&o, BUF_NOCAP);
	buf_init(&e, BUF_NOCAP);
	ck_assert_msg(launch_as(s, name, &o, &e) == 0, "%s", e.data);
	ck_assert_str_eq(o.data, "data\n9437184\n");
	ck_assert_str_eq(e.data, "");
	ck_assert_int_eq(count_lines(clog), ncurl);
	ck_assert_int_eq(count_lines(plog), npy);
	buf_release(&o);
	buf_release(&e);
	free(clog);
	free(plog);
}

/* The digest file at path holds hash and is newer than its archive. */
static void
digest_is(const char *path, const char *hash)
{
	struct buf b;
	struct tpu_err err;
	struct stat sd, sa;
	char *a = xstrndup(path, strlen(path) - strlen(".sha256"));

	buf_init(&b, BUF_NOCAP);
	ck_assert_int_eq(fsutil_read_file(path, 0, &b, NULL, &err), 0);
	ck_assert_uint_eq(b.len, PACK_HASH_LEN + 1);
	ck_assert_int_eq(memcmp(b.data, hash, PACK_HASH_LEN), 0);
	ck_assert_int_eq(b.data[PACK_HASH_LEN], '\n');
	ck_assert_int_eq(stat(path, &sd), 0);
	ck_assert_int_eq(stat(a, &sa), 0);
	ck_assert(sd.st_mtim.tv_sec > sa.st_mtim.tv_sec ||
	          (sd.st_mtim.tv_sec == sa.st_mtim.tv_sec &&
	              sd.st_mtim.tv_nsec > sa.st_mtim.tv_nsec));
	buf_release(&b);
	free(a);
}

START_TEST(test_scripts_staged)
{
	struct jobs_spec s;
	struct buf o, e;
	char *src = xasprintf("%s/src", home), *p, *dg, *cmd;
	char *pub = xasprintf("%s/pub.tar", home);
	char *plog = xasprintf("%s/py.log", home);
	char hash[PACK_HASH_LEN + 1];
	struct tpu_err err;
	struct stat st;
	int fd;

	buf_init(&o, BUF_NOCAP);
	buf_init(&e, BUF_NOCAP);
	ck_assert_int_eq(mkdir(src, 0755), 0);
	p = xasprintf("%s/a b.txt", src);
	ck_assert_int_eq(fsutil_write_atomic(p, "data\n", 5, 0644, &err), 0);
	free(p);
	p = xasprintf("%s/big", src);
	fd = open(p, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(ftruncate(fd, 9 << 20), 0);
	close(fd);
	free(p);
	fd = open(pub, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	ck_assert_int_eq(pack_write(src, NULL, fd, hash, NULL, &err), 0);
	close(fd);
	p = xasprintf("%s/bin", home);
	ck_assert_int_eq(mkdir(p, 0700), 0);
	free(p);
	/* curl: the token, or the archive (pub.bad with $HOME/bad) to -o,
	   its size for -w */
	p = xasprintf("%s/bin/curl", home);
	write_exe(p,
	    "#!/bin/sh\n"
	    "o= w= a=\n"
	    "while [ $# -gt 1 ]; do\n"
	    "  case $1 in -o) o=$2; shift ;; -w) w=1; shift ;; "
	    "-H) a=$2; shift ;; esac\n"
	    "  shift\n"
	    "done\n"
	    "case $1 in\n"
	    "*/token) echo '{\"access_token\": \"ya.t_k-1\", "
	    "\"expires_in\": 3599, \"token_type\": \"Bearer\"}' ;;\n"
	    "*alt=media) echo x >>\"$HOME/curl.log\"\n"
	    "  [ \"$a\" = 'Authorization: Bearer ya.t_k-1' ] || exit 22\n"
	    "  f=$HOME/pub.tar; [ ! -e \"$HOME/bad\" ] || "
	    "f=$HOME/pub.bad\n"
	    "  cat \"$f\" >\"$o\" || exit 23\n"
	    "  [ -z \"$w\" ] || printf %s \"$(wc -c <\"$f\")\" ;;\n"
	    "*) exit 22 ;;\n"
	    "esac\n");
	free(p);
	/* python3: logged, failing with $HOME/pyfail, else the real one */
	p = xasprintf("%s/bin/python3", home);
	write_exe(p, "#!/bin/sh\n"
	             "echo x >>\"$HOME/py.log\"\n"
	             "[ ! -e \"$HOME/pyfail\" ] || exit 1\n"
	             "PATH=${PATH#*:}\n"
	             "exec python3 \"$@\"\n");
	free(p);
	spec_fill(&s, 1, 1);
	free(s.command);
	s.command = xstrdup("cat 'a b.txt'; wc -c <big");
	s.workdir_hash = xstrdup(hash);
	s.stage_url = xstrdup("http://127.0.0.1:9/download/storage/v1/b/x/o/"
	                      "w.tar?alt=media");
	staged_ok(&s, "j1", 1, 1);
	p = xasprintf("%s/.tpuctl/wd/%s.tar", home, hash);
	ck_assert_int_eq(stat(p, &st), 0);
	dg = xasprintf("%s.sha256", p);
	digest_is(dg, hash);
	/* kept, its digest file newer than it: a second job of it pulls
	   nothing and hashes nothing */
	staged_ok(&s, "j2", 1, 1);
	/* the digest file gone: the kept copy is hashed again (by python3:
	   8 MiB or more), the digest file written again */
	ck_assert_int_eq(unlink(dg), 0);
	staged_ok(&s, "j2a", 1, 2);
	digest_is(dg, hash);
	staged_ok(&s, "j2b", 1, 2);
	/* naming another hash, or empty: hashed again, rewritten */
	ck_assert_int_eq(fsutil_write_atomic(dg,
	                     "00000000000000000000000000000000000000000000000"
	                     "00000000000000000\n",
	                     65, 0600, &err),
	    0);
	staged_ok(&s, "j2c", 1, 3);
	digest_is(dg, hash);
	ck_assert_int_eq(fsutil_write_atomic(dg, "", 0, 0600, &err), 0);
	staged_ok(&s, "j2d", 1, 4);
	digest_is(dg, hash);
	/* the archive written after its digest file (its own bytes again):
	   the newer, hashed again */
	usleep(20000);
	cmd = xasprintf("cat \"%s\" >\"%s.x\" && cat \"%s.x\" >\"%s\" && "
	                "rm \"%s.x\" && [ \"%s\" -nt \"%s\" ]",
	    p, p, p, p, p, p, dg);
	ck_assert_int_eq(sh(cmd, NULL, NULL), 0);
	free(cmd);
	staged_ok(&s, "j2e", 1, 5);
	digest_is(dg, hash);
	/* python3 failing: sha256sum checks it */
	ck_assert_int_eq(unlink(p), 0);
	free(p);
	p = xasprintf("%s/pyfail", home);
	ck_assert_int_eq(fsutil_write_atomic(p, "", 0, 0600, &err), 0);
	staged_ok(&s, "j3", 2, 6);
	digest_is(dg, hash);
	ck_assert_int_eq(unlink(p), 0);
	/* other bytes of the same size: refused, nothing kept or started */
	free(p);
	p = xasprintf("%s/.tpuctl/wd/%s.tar", home, hash);
	ck_assert_int_eq(unlink(p), 0);
	free(p);
	p = xasprintf("%s/pub.bad", home);
	fd = open(p, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	ck_assert_int_eq(stat(pub, &st), 0);
	ck_assert_int_eq(ftruncate(fd, st.st_size), 0);
	close(fd);
	free(p);
	p = xasprintf("%s/bad", home);
	ck_assert_int_eq(fsutil_write_atomic(p, "", 0, 0600, &err), 0);
	ck_assert_int_eq(launch_as(&s, "j4", &o, &e), 98);
	ck_assert_ptr_nonnull(strstr(e.data, "checksum mismatch"));
	ck_assert_int_eq(count_lines(plog), 7);
	/* nor the digest file of the copy there was before */
	ck_assert_int_ne(stat(dg, &st), 0);
	free(p);
	p = xasprintf("%s/.tpuctl/wd/%s.tar", home, hash);
	ck_assert_int_ne(stat(p, &st), 0);
	free(p);
	p = xasprintf("%s/.tpuctl/wd/%s.tar.part", home, hash);
	ck_assert_int_ne(stat(p, &st), 0);
	free(p);
	p = xasprintf("%s/.tpuctl/jobs/j4/pgid", home);
	ck_assert_int_ne(stat(p, &st), 0);
	free(p);
	/* a kept copy with other bytes: removed, exit JOBS_EXIT_REFETCH and
	   nothing else (no word, no job directory); launched again, the
	   job pulls it again */
	p = xasprintf("%s/bad", home);
	ck_assert_int_eq(unlink(p), 0);
	free(p);
	p = xasprintf("cp \"$HOME/pub.bad\" \"$HOME/.tpuctl/wd/%s.tar\"", hash);
	ck_assert_int_eq(sh(p, NULL, NULL), 0);
	free(p);
	/* with a digest file written before the bad bytes: the archive is
	   the newer, hashed, refused, both removed */
	cmd = xasprintf("echo %s >\"$HOME/.tpuctl/wd/%s.tar.sha256\" && "
	                "sleep 0.02 && touch \"$HOME/.tpuctl/wd/%s.tar\"",
	    hash, hash, hash);
	ck_assert_int_eq(sh(cmd, NULL, NULL), 0);
	free(cmd);
	ck_assert_int_eq(launch_as(&s, "j5", &o, &e), JOBS_EXIT_REFETCH);
	ck_assert_uint_eq(o.len, 0);
	ck_assert_uint_eq(e.len, 0);
	ck_assert_int_eq(count_lines(plog), 8);
	ck_assert_int_ne(stat(dg, &st), 0);
	p = xasprintf("%s/.tpuctl/wd/%s.tar", home, hash);
	ck_assert_int_ne(stat(p, &st), 0);
	free(p);
	p = xasprintf("%s/.tpuctl/jobs/j5", home);
	ck_assert_int_ne(stat(p, &st), 0);
	free(p);
	staged_ok(&s, "j5", 4, 9);
	digest_is(dg, hash);
	free(dg);
	jobs_spec_release(&s);
	buf_release(&o);
	buf_release(&e);
	free(src);
	free(pub);
	free(plog);
}
END_TEST

static enum jobs_restart
decide(const char *node_state, const char *const *st, size_t n, int restarts,
    int max, int on_failure, char *cause)
{
	struct jobs_state states[8];
	struct jobs_restart_in in;
	size_t i;

	for (i = 0; i < n; i++)
		ck_assert_int_eq(jobs_state_parse(st[i], &states[i]), 0);
	memset(&in, 0, sizeof in);
	in.node = "n1";
	in.node_state = node_state;
	in.states = states;
	in.n = n;
	in.restarts = restarts;
	in.max_restarts = max;
	in.on_failure = on_failure;
	cause[0] = '\0';
	return jobs_restart_decide(&in, cause, 128);
}

/* A curl for the uploader: the token from the "metadata server", every
 * upload copied to $H/up/NAME and logged as "AUTH NAME" in $H/up/log;
 * $H/fail makes uploads fail (22, as curl -f on an HTTP error). */
static const char stub_curl[] =
    "#!/bin/sh\n"
    "u= f= a= x=GET\n"
    "while [ $# -gt 0 ]; do\n"
    "  case $1 in\n"
    "  --data-binary) f=${2#@}; shift ;;\n"
    "  -H) case $2 in Authorization*) a=$2 ;; esac; shift ;;\n"
    "  -X) x=$2; shift ;;\n"
    "  -o|--retry) shift ;;\n"
    "  *) u=$1 ;;\n"
    "  esac\n"
    "  shift\n"
    "done\n"
    "case $u in\n"
    "*/instance/attributes/agent-worker-number) cat \"$H/worker\" ;;\n"
    "*/instance/attributes/worker-network-endpoints) "
    "echo 't1v-n-1-w-0:11:10.1.2.3,t1v-n-1-w-1:12:10.1.2.4' ;;\n"
    /* $H/tokfail: the next token request fails (then is removed);
       $H/exp: the token's expires_in (default 3600) */
    "http://md.test/computeMetadata/v1/instance/service-accounts/default/"
    "token)\n"
    "  echo tok >>\"$H/up/tok\"\n"
    "  if [ -e \"$H/tokfail\" ]; then rm -f \"$H/tokfail\"; exit 22; fi\n"
    "  e=3600; [ ! -r \"$H/exp\" ] || e=$(cat \"$H/exp\")\n"
    "  printf '{\"access_token\":\"tok1\",\"expires_in\": %s,"
    "\"token_type\":\"Bearer\"}' \"$e\" ;;\n"
    "http://gcs.test/upload/storage/v1/b/bk/o?uploadType=media\\&name=*)\n"
    "  [ ! -e \"$H/fail\" ] || exit 22\n"
    "  n=${u##*name=}; cp \"$f\" \"$H/up/$n\" && echo \"$a $n\" "
    ">>\"$H/up/log\" ;;\n"
    "http://gcs.test/storage/v1/b/bk/o/*\\?alt=media)\n"
    "  n=${u#http://gcs.test/storage/v1/b/bk/o/}; n=${n%\\?alt=media}\n"
    "  [ -r \"$H/up/$n\" ] || exit 22\n"
    "  cat \"$H/up/$n\" ;;\n"
    /* $H/faildel: the next DELETE fails (then is removed) */
    "http://tpu.test/v2/*)\n"
    "  echo \"$x $a ${u#http://tpu.test}\" >>\"$H/up/log\"\n"
    "  if [ -e \"$H/faildel\" ]; then rm -f \"$H/faildel\"; exit 22; fi ;;\n"
    "*) echo \"stub curl: $u\" >&2; exit 3 ;;\n"
    "esac\n";

/* The uploader's settings of the tests: bucket bk at gcs.test, the job
 * j's prefix, no timeout, no delete-after. */
static struct jobs_upload
upload_of(int period)
{
	struct jobs_upload u;

	memset(&u, 0, sizeof u);
	u.storage = "http://gcs.test";
	u.bucket = "bk";
	u.prefix = "p/jobs/j/";
	u.period_s = period;
	u.grace_s = 1;
	u.nslices = 1;
	u.nworkers = 2;
	return u;
}

static void
write_file(const char *rel, const char *text, int mode)
{
	char *path = xasprintf("%s/%s", home, rel);
	FILE *f = fopen(path, "w");

	ck_assert_ptr_nonnull(f);
	fputs(text, f);
	ck_assert_int_eq(fclose(f), 0);
	ck_assert_int_eq(chmod(path, mode), 0);
	free(path);
}

static void
read_rel(const char *rel, struct buf *b)
{
	char *path = xasprintf("%s/%s", home, rel);
	struct tpu_err err;

	buf_clear(b);
	ck_assert_msg(fsutil_read_file(path, 0, b, NULL, &err) == 0, "%s", rel);
	free(path);
}

/* cmd after exporting H=home, PATH=home/bin:$PATH and
 * GCE_METADATA_HOST=md.test (the stub curl in home/bin) */
static char *
upload_env(const char *cmd)
{
	char *mk = xasprintf("%s/bin", home), *up = xasprintf("%s/up", home);

	ck_assert_int_eq(mkdir(mk, 0700), 0);
	ck_assert_int_eq(mkdir(up, 0700), 0);
	free(mk);
	free(up);
	write_file("bin/curl", stub_curl, 0700);
	return xasprintf("export H=%s PATH=%s/bin:$PATH "
	                 "GCE_METADATA_HOST=md.test\n%s",
	    home, home, cmd);
}

#define UP_P "p%2Fjobs%2Fj%2Fw0-1"

START_TEST(test_upload_ended)
{
	struct jobs_upload u = upload_of(0);
	char *cmd = jobs_upload_cmd("j", &u, "w0-1");
	char *full = upload_env(cmd);
	struct buf b, e;

	buf_init(&b, BUF_NOCAP);
	buf_init(&e, BUF_NOCAP);
	ck_assert_int_eq(
	    sh("mkdir -p \"$HOME/.tpuctl/jobs/j\"", NULL, NULL), 0);
	write_file(".tpuctl/jobs/j/stdout", "hello\n", 0600);
	write_file(".tpuctl/jobs/j/stderr", "", 0600);
	write_file(".tpuctl/jobs/j/status", "signal TERM\n", 0600);
	ck_assert_int_eq(sh(full, &b, &e), 0);
	ck_assert_msg(e.len == 0, "%s", e.data);
	read_rel("up/" UP_P ".out", &b);
	ck_assert_str_eq(b.data, "hello\n");
	read_rel("up/" UP_P ".err", &b);
	ck_assert_uint_eq(b.len, 0);
	read_rel("up/" UP_P ".state", &b);
	ck_assert_str_eq(b.data, "signal TERM - -\n");
	/* one token for all three (it is good for an hour) */
	read_rel("up/tok", &b);
	ck_assert_str_eq(b.data, "tok\n");
	/* the logs before the state, each once, with the metadata token */
	read_rel("up/log", &b);
	ck_assert_str_eq(b.data, "Authorization: Bearer tok1 " UP_P ".out\n"
	                         "Authorization: Bearer tok1 " UP_P ".err\n"
	                         "Authorization: Bearer tok1 " UP_P ".state\n");

	/* a final upload that keeps failing: exit 1 after 10 tries, no
	   state claimed */
	write_file("fail", "", 0600);
	write_file(".tpuctl/jobs/j/stdout", "hello\nmore\n", 0600);
	ck_assert_int_eq(sh(full, &b, &e), 1);
	read_rel("up/" UP_P ".out", &b);
	ck_assert_str_eq(b.data, "hello\n");
	free(cmd);
	free(full);
	buf_release(&b);
	buf_release(&e);
}
END_TEST

START_TEST(test_upload_no_job)
{
	struct jobs_upload u = upload_of(0);
	char *cmd = jobs_upload_cmd("nojob", &u, "w0-0");
	char *full = upload_env(cmd);
	char *log = xasprintf("%s/up/log", home);

	ck_assert_int_eq(sh(full, NULL, NULL), 1);
	ck_assert_int_ne(access(log, F_OK), 0);
	free(log);
	free(cmd);
	free(full);
}
END_TEST

START_TEST(test_upload_running)
{
	struct jobs_upload u = upload_of(1);
	char *cmd = jobs_upload_cmd("j", &u, "w0-1");
	char *run = xasprintf("d=$HOME/.tpuctl/jobs/j\n"
	                      "mkdir -p \"$d\" && printf 'a\\n' >\"$d/stdout\" "
	                      "&& : >\"$d/stderr\" "
	                      "|| exit 9\n"
	                      "( %s ) & p=$!\n"
	                      "sleep 1.5\n"
	                      "cp \"$H/up/%s.state\" \"$H/state1\" || exit 8\n"
	                      "printf 'b\\n' >>\"$d/stdout\"\n"
	                      "echo 'exit 3' >\"$d/status\"\n"
	                      "wait $p\n",
	    cmd, UP_P);
	char *full = upload_env(run);
	struct buf b;

	buf_init(&b, BUF_NOCAP);
	ck_assert_int_eq(sh(full, NULL, NULL), 0);
	read_rel("state1", &b);
	ck_assert_str_eq(b.data, "running - -\n");
	read_rel("up/" UP_P ".state", &b);
	ck_assert_str_eq(b.data, "exit 3 - -\n");
	read_rel("up/" UP_P ".out", &b);
	ck_assert_str_eq(b.data, "a\nb\n");
	/* the unchanged stderr was uploaded once */
	read_rel("up/log", &b);
	ck_assert_ptr_nonnull(strstr(b.data, UP_P ".err\n"));
	ck_assert_ptr_null(
	    strstr(strstr(b.data, UP_P ".err\n") + 1, UP_P ".err\n"));
	free(cmd);
	free(run);
	free(full);
	buf_release(&b);
}
END_TEST

/*
 * The timeout: a job still running past it gets TERM (its group ends),
 * its state is "exit 124" on the worker and in the bucket, a line in its
 * stderr says why.
 */
START_TEST(test_upload_timeout)
{
	struct jobs_upload u = upload_of(1);
	char *cmd, *run, *full;
	struct buf b, e;
	int rc;

	u.timeout_s = 1;
	cmd = jobs_upload_cmd("j", &u, "w0-1");
	run =
	    xasprintf("d=$HOME/.tpuctl/jobs/j\n"
	              "mkdir -p \"$d\" && : >\"$d/stdout\" && "
	              ": >\"$d/stderr\" && : >\"$d/start\" || exit 9\n"
	              "setsid sleep 30 & echo $! >\"$d/pgid\"\n"
	              "%s || exit 7\n"
	              "kill -0 -\"$(cat \"$d/pgid\")\" 2>/dev/null && exit 6\n"
	              "cat \"$d/status\"\n",
	        cmd);
	full = upload_env(run);
	buf_init(&b, BUF_NOCAP);
	buf_init(&e, BUF_NOCAP);
	rc = sh(full, &b, &e);
	ck_assert_msg(rc == 0, "%d: %s", rc, e.data);
	ck_assert_str_eq(b.data, "exit 124\n");
	read_rel("up/" UP_P ".state", &b);
	ck_assert_msg(strncmp(b.data, "exit 124 ", 9) == 0, "%s", b.data);
	{
		struct jobs_state st;

		ck_assert_int_eq(jobs_state_parse(b.data, &st), 0);
		ck_assert_int_eq(st.kind, JOBS_EXITED);
		ck_assert_int_eq(st.code, 124);
		ck_assert(st.start > 0 && st.end >= st.start);
	}
	read_rel("up/" UP_P ".err", &b);
	ck_assert_ptr_nonnull(strstr(b.data,
	    "tpuctl: timeout: the job did not end within 1s: stopping it\n"));
	free(cmd);
	free(run);
	free(full);
	buf_release(&b);
	buf_release(&e);
}
END_TEST

#define UP_Q "p%2Fjobs%2Fj%2F"
#define UP_QF "p%%2Fjobs%%2Fj%%2F" /* in a format */

/*
 * delete-after on worker 0: its own final state uploaded, it waits until
 * the other worker's state object is final (not while it is missing or
 * running), then deletes the queued resource with force; a first token
 * request that fails, a token that expires within a minute (asked again
 * each time) and a DELETE that fails once change nothing of that.  On
 * another worker nothing is deleted.
 */
START_TEST(test_upload_delete_after)
{
	struct jobs_upload u = upload_of(1);
	char *cmd, *run, *full, *p;
	struct buf b;

	u.tpu = "http://tpu.test";
	u.qr = "projects/p/locations/z/queuedResources/q";
	cmd = jobs_upload_cmd("j", &u, "w0-0");
	run = xasprintf("d=$HOME/.tpuctl/jobs/j\n"
	                "mkdir -p \"$d\" && echo hi >\"$d/stdout\" && "
	                ": >\"$d/stderr\" && echo 'exit 0' >\"$d/status\" "
	                "|| exit 9\n"
	                ": >\"$H/tokfail\"; : >\"$H/faildel\"; "
	                "echo 60 >\"$H/exp\"\n"
	                "( %s ) & p=$!\n"
	                "sleep 2.5\n"
	                "grep -c DELETE \"$H/up/log\" && exit 8\n"
	                "echo 'running - -' >\"$H/up/" UP_QF "w0-1.state\"\n"
	                "sleep 2.5\n"
	                "grep -c DELETE \"$H/up/log\" && exit 7\n"
	                "echo 'exit 3 1 2' >\"$H/up/" UP_QF "w0-1.state\"\n"
	                "wait $p\n",
	    cmd);
	full = upload_env(run);
	buf_init(&b, BUF_NOCAP);
	ck_assert_int_eq(sh(full, NULL, NULL), 0);
	read_rel("up/log", &b);
	p = strstr(b.data, UP_Q "w0-0.state\n");
	ck_assert_msg(p != NULL, "%s", b.data);
	/* after its own state; tried again once */
	p = strstr(p, "DELETE Authorization: Bearer tok1 "
	              "/v2/projects/p/locations/z/queuedResources/q"
	              "?force=true\n");
	ck_assert_msg(p != NULL, "%s", b.data);
	ck_assert_ptr_nonnull(strstr(p + 1, "DELETE "));
	read_rel("up/" UP_Q "w0-0.state", &b);
	ck_assert_str_eq(b.data, "exit 0 - -\n");
	/* the token was asked again: it expires within a minute */
	read_rel("up/tok", &b);
	ck_assert_uint_gt(b.len, 5 * 4);
	free(cmd);
	free(run);
	free(full);

	/* worker 1: its state uploaded, nothing deleted */
	cmd = jobs_upload_cmd("j", &u, "w0-1");
	full = xasprintf("export H=%s PATH=%s/bin:$PATH "
	                 "GCE_METADATA_HOST=md.test\n%s",
	    home, home, cmd);
	ck_assert_int_eq(sh("rm -f \"$HOME/up/log\"", NULL, NULL), 0);
	ck_assert_int_eq(sh(full, NULL, NULL), 0);
	read_rel("up/log", &b);
	ck_assert_ptr_null(strstr(b.data, "DELETE"));
	ck_assert_ptr_nonnull(strstr(b.data, UP_Q "w0-1.state\n"));
	free(cmd);
	free(full);
	buf_release(&b);
}
END_TEST

/*
 * The boot script with an uploader: on worker 1 the job runs and its
 * uploader (detached, beside it) puts its logs and final state in the
 * bucket under its tag w0-1.
 */
START_TEST(test_boot_uploads)
{
	struct jobs_spec s;
	struct jobs_upload u = upload_of(1);
	char *script, *p, *cmd;
	struct buf b;
	int i;

	spec_fill(&s, 1, 2);
	free(s.name);
	s.name = xstrdup("j");
	s.user = xstrdup(getpwuid(geteuid())->pw_name);
	script = jobs_boot_script(&s, &u);
	ck_assert_ptr_nonnull(strstr(script, "_tpuctl_wt=w0-$w\n"));
	p = xasprintf("%s/boot.sh", home);
	{
		FILE *fp = fopen(p, "w");

		ck_assert_ptr_nonnull(fp);
		fputs(script, fp);
		fclose(fp);
	}
	cmd = xasprintf("echo 1 >\"$H/worker\"\nsh %s", p);
	{
		char *full = upload_env(cmd);

		ck_assert_int_eq(sh(full, NULL, NULL), 0);
		free(full);
	}
	buf_init(&b, BUF_NOCAP);
	for (i = 0; i < 100; i++) {
		char *st = xasprintf("%s/up/" UP_QF "w0-1.state", home);
		int ok = 0;

		if (access(st, F_OK) == 0) {
			read_rel("up/" UP_Q "w0-1.state", &b);
			ok = strncmp(b.data, "exit 0 ", 7) == 0;
		}
		free(st);
		if (ok)
			break;
		usleep(100000);
	}
	ck_assert_msg(i < 100, "no final state uploaded");
	read_rel("up/" UP_Q "w0-1.out", &b);
	ck_assert_str_eq(b.data, "hi\n");
	free(cmd);
	free(p);
	free(script);
	jobs_spec_release(&s);
	buf_release(&b);
}
END_TEST

START_TEST(test_restart_decide)
{
	static const char *const ok[] = { "exited 0", "exited 0" };
	static const char *const lost[] = { "lost", "exited 0" };
	static const char *const failed[] = { "exited 0", "exited 3" };
	static const char *const skip[] = { "exited 0", "none" };
	char cause[128];

	/* success: final, whatever the node */
	ck_assert_int_eq(
	    decide("PREEMPTED", ok, 2, 0, 2, 1, cause), JOBS_RESTART_NONE);
	ck_assert_int_eq(
	    decide("READY", skip, 2, 0, 2, 0, cause), JOBS_RESTART_NONE);
	/* slice lost: recreate, cause named */
	ck_assert_int_eq(decide("PREEMPTED", lost, 2, 0, 2, 0, cause),
	    JOBS_RESTART_RECREATE);
	ck_assert_str_eq(cause, "node n1 is PREEMPTED");
	ck_assert_int_eq(decide("TERMINATED", failed, 2, 1, 2, 0, cause),
	    JOBS_RESTART_RECREATE);
	ck_assert_str_eq(cause, "node n1 is TERMINATED");
	ck_assert_int_eq(
	    decide(NULL, lost, 2, 0, 1, 0, cause), JOBS_RESTART_RECREATE);
	ck_assert_str_eq(cause, "node n1 is gone");
	/* budget */
	ck_assert_int_eq(decide("PREEMPTED", lost, 2, 2, 2, 0, cause),
	    JOBS_RESTART_EXHAUSTED);
	ck_assert_str_eq(cause, "node n1 is PREEMPTED");
	ck_assert_int_eq(decide("PREEMPTED", lost, 2, 0, 0, 0, cause),
	    JOBS_RESTART_EXHAUSTED);
	/* the job failed by itself on a healthy slice */
	ck_assert_int_eq(
	    decide("READY", failed, 2, 0, 2, 0, cause), JOBS_RESTART_NONE);
	ck_assert_int_eq(
	    decide("READY", lost, 2, 0, 2, 0, cause), JOBS_RESTART_NONE);
	ck_assert_int_eq(
	    decide("READY", failed, 2, 0, 2, 1, cause), JOBS_RESTART_RERUN);
	ck_assert_str_eq(cause, "worker 1 exited 3 (--restart-on-failure)");
	ck_assert_int_eq(
	    decide("READY", failed, 2, 2, 2, 1, cause), JOBS_RESTART_EXHAUSTED);
	/* lost slice with --restart-on-failure: still recreated */
	ck_assert_int_eq(decide("PREEMPTED", failed, 2, 0, 2, 1, cause),
	    JOBS_RESTART_RECREATE);
}
END_TEST

START_TEST(test_recreate_body)
{
	const char *desc =
	    "{\"name\":\"projects/p/locations/z/nodes/n1\",\"id\":\"42\","
	    "\"state\":\"PREEMPTED\",\"acceleratorType\":\"v4-8\","
	    "\"acceleratorConfig\":{\"type\":\"V4\",\"topology\":\"2x2x1\"},"
	    "\"runtimeVersion\":\"tpu-ubuntu2204-base\","
	    "\"schedulingConfig\":{\"spot\":true},"
	    "\"labels\":{\"team\":\"ml\",\"tpuctl-run-id\":\"abc\"},"
	    "\"metadata\":{\"k\":\"v\"},\"tags\":[\"t\"],"
	    "\"networkEndpoints\":[{\"ipAddress\":\"10.0.0.2\"}],"
	    "\"health\":\"HEALTHY\",\"createTime\":\"x\"}";
	cJSON *node = cJSON_Parse(desc), *b;
	char *s;

	ck_assert_ptr_nonnull(node);
	b = jobs_recreate_body(node, "tpuctl-run-id");
	s = cJSON_PrintUnformatted(b);
	ck_assert_str_eq(s,
	    "{\"acceleratorType\":\"v4-8\","
	    "\"runtimeVersion\":\"tpu-ubuntu2204-base\","
	    "\"schedulingConfig\":{\"spot\":true},\"metadata\":{\"k\":\"v\"},"
	    "\"tags\":[\"t\"],\"labels\":{\"team\":\"ml\"}}");
	free(s);
	cJSON_Delete(b);
	/* only the config, no labels left */
	cJSON_DeleteItemFromObject(node, "acceleratorType");
	cJSON_DeleteItemFromObject(node, "labels");
	b = jobs_recreate_body(node, "tpuctl-run-id");
	ck_assert_ptr_nonnull(cJSON_GetObjectItem(b, "acceleratorConfig"));
	ck_assert_ptr_null(cJSON_GetObjectItem(b, "acceleratorType"));
	ck_assert_ptr_null(cJSON_GetObjectItem(b, "labels"));
	ck_assert_ptr_null(cJSON_GetObjectItem(b, "state"));
	ck_assert_ptr_null(cJSON_GetObjectItem(b, "name"));
	cJSON_Delete(b);
	cJSON_Delete(node);
}
END_TEST

static Suite *
jobs_suite(void)
{
	Suite *s = suite_create("jobs");
	TCase *tc = tcase_create("model");
	TCase *ts = tcase_create("scripts");

	tcase_add_test(tc, test_name_check);
	tcase_add_test(tc, test_default_name);
	tcase_add_test(tc, test_env_user);
	tcase_add_test(tc, test_worker_env_one_slice);
	tcase_add_test(tc, test_worker_env_multislice);
	tcase_add_test(tc, test_env_script);
	tcase_add_test(tc, test_state_parse);
	tcase_add_test(tc, test_state_merge);
	tcase_add_test(tc, test_record_roundtrip);
	tcase_add_test(tc, test_restart_decide);
	tcase_add_test(tc, test_recreate_body);
	suite_add_tcase(s, tc);
	tcase_add_checked_fixture(ts, setup_home, teardown_home);
	tcase_set_timeout(ts, 30);
	tcase_add_test(ts, test_scripts_launch_status_follow);
	tcase_add_test(ts, test_scripts_follow_while_running);
	tcase_add_test(ts, test_scripts_cancel);
	tcase_add_test(ts, test_scripts_cancel_term);
	tcase_add_test(ts, test_scripts_notice_term);
	tcase_add_test(ts, test_scripts_workdir);
	tcase_add_test(ts, test_scripts_staged);
	tcase_add_test(ts, test_boot_script);
	tcase_add_test(ts, test_boot_script_as_root);
	tcase_add_test(ts, test_boot_script_multislice);
	tcase_add_test(ts, test_upload_ended);
	tcase_add_test(ts, test_upload_no_job);
	tcase_add_test(ts, test_upload_running);
	tcase_add_test(ts, test_upload_timeout);
	tcase_add_test(ts, test_upload_delete_after);
	tcase_add_test(ts, test_boot_uploads);
	suite_add_tcase(s, ts);
	return s;
}

int
main(void)
{
	SRunner *sr = srunner_create(jobs_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? 0 : 1;
}
