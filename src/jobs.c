/*
 * The job model (see jobs.h): names, environment, worker-side scripts,
 * states and the local record.  The scripts are constant POSIX sh text;
 * every value reaches them as a shell-quoted positional argument, never
 * pasted into the script.
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "gcsurl.h"
#include "jobs.h"
#include "shquote.h"
#include "xmalloc.h"

void
jobs_spec_init(struct jobs_spec *s)
{
	memset(s, 0, sizeof *s);
	s->nslices = 1;
	s->nworkers = 1;
	s->master_port = JOBS_MASTER_PORT;
	s->coordinator_port = JOBS_COORDINATOR_PORT;
	s->megascale_port = JOBS_MEGASCALE_PORT;
}

void
jobs_spec_release(struct jobs_spec *s)
{
	size_t i;

	free(s->name);
	free(s->slice);
	free(s->zone);
	if (s->nodes != NULL)
		for (i = 0; i < (size_t)s->nslices; i++)
			free(s->nodes[i]);
	free(s->nodes);
	free(s->command);
	jobs_env_free(s->env, s->nenv);
	free(s->workdir_hash);
	free(s->stage_url);
	free(s->user);
	free(s->log_url);
	jobs_spec_init(s);
}

int
jobs_name_check(const char *name, struct tpu_err *err)
{
	size_t i, n = strlen(name);

	if (n == 0 || n > JOBS_NAME_MAX)
		return tpu_error(err, TPU_E_USAGE,
		    "job name '%s': must be 1 to %d characters", name,
		    JOBS_NAME_MAX);
	if (!isalnum((unsigned char)name[0]) || (unsigned char)name[0] >= 0x80)
		return tpu_error(err, TPU_E_USAGE,
		    "job name '%s': must start with a letter or digit", name);
	for (i = 0; i < n; i++) {
		unsigned char c = (unsigned char)name[i];

		if (c >= 0x80 ||
		    !(isalnum(c) || c == '.' || c == '_' || c == '-'))
			return tpu_error(err, TPU_E_USAGE,
			    "job name '%s': only letters, digits, '.', '_' and "
			    "'-' are allowed",
			    name);
	}
	return 0;
}

char *
jobs_default_name(const char *command, time_t t, unsigned rnd)
{
	const char *p = command != NULL ? command : "", *w, *e, *slash;
	char base[25];
	size_t k = 0;
	struct tm tm;

	while (*p == ' ' || *p == '\t' || *p == '\n')
		p++;
	/* the first word, up to a blank or a shell metacharacter */
	for (e = p; *e != '\0' && strchr(" \t\n;&|<>()$`\"'", *e) == NULL; e++)
		;
	w = p;
	for (slash = p; slash < e; slash++)
		if (*slash == '/')
			w = slash + 1;
	for (; w < e && k < sizeof base - 1; w++) {
		unsigned char c = (unsigned char)tolower((unsigned char)*w);

		if ((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
		    c == '.' || c == '_' || c == '-')
			base[k++] = (char)c;
	}
	base[k] = '\0';
	/* a letter or digit first */
	k = strspn(base, "._-");
	if (base[k] == '\0')
		snprintf(base, sizeof base, "job");
	else if (k > 0)
		memmove(base, base + k, strlen(base + k) + 1);
	gmtime_r(&t, &tm);
	return xasprintf("%s-%04d%02d%02d-%02d%02d%02d-%04x", base,
	    tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min,
	    tm.tm_sec, rnd & 0xffff);
}

static int
env_key_ok(const char *k, size_t n)
{
	size_t i;

	if (n == 0 || !(isalpha((unsigned char)k[0]) || k[0] == '_'))
		return 0;
	for (i = 0; i < n; i++)
		if ((unsigned char)k[i] >= 0x80 ||
		    !(isalnum((unsigned char)k[i]) || k[i] == '_'))
			return 0;
	return 1;
}

int
jobs_env_add(
    struct jobs_spec *s, const char *kv, const char *what, struct tpu_err *err)
{
	const char *eq = strchr(kv, '=');
	size_t klen, i;

	if (eq == NULL)
		return tpu_error(
		    err, TPU_E_USAGE, "%s '%s': expected NAME=VALUE", what, kv);
	klen = (size_t)(eq - kv);
	if (!env_key_ok(kv, klen))
		return tpu_error(err, TPU_E_USAGE,
		    "%s '%s': the name must be letters, digits and '_', not "
		    "starting with a digit",
		    what, kv);
	if (klen >= 7 && strncmp(kv, "TPUCTL_", 7) == 0)
		return tpu_error(err, TPU_E_USAGE,
		    "%s '%s': TPUCTL_ variables are set by tpuctl run", what,
		    kv);
	for (i = 0; i < s->nenv; i++)
		if (strncmp(s->env[i], kv, klen + 1) == 0) {
			free(s->env[i]);
			s->env[i] = xstrdup(kv);
			return 0;
		}
	s->env = xreallocarray(s->env, s->nenv + 1, sizeof *s->env);
	s->env[s->nenv++] = xstrdup(kv);
	return 0;
}

int
jobs_env_file(struct jobs_spec *s, const char *path, const char *text,
    size_t len, struct tpu_err *err)
{
	size_t off = 0;
	int line = 0, rc = 0;

	while (off < len && rc == 0) {
		const char *nl = memchr(text + off, '\n', len - off);
		size_t n = nl != NULL ? (size_t)(nl - (text + off)) : len - off;
		char *l, *p, *what;

		line++;
		if (memchr(text + off, '\0', n) != NULL) {
			rc = tpu_error(err, TPU_E_USAGE,
			    "%s:%d: a NUL byte in the line", path, line);
			break;
		}
		l = p = xstrndup(text + off, n);
		off += n + (nl != NULL);
		if (n > 0 && l[n - 1] == '\r')
			l[n - 1] = '\0';
		while (*p == ' ' || *p == '\t')
			p++;
		if (*p == '\0' || *p == '#') {
			free(l);
			continue;
		}
		if (strncmp(p, "export ", 7) == 0)
			p += 7;
		what = xasprintf("%s:%d:", path, line);
		rc = jobs_env_add(s, p, what, err);
		free(what);
		free(l);
	}
	return rc;
}

static void
env_push(char ***env, size_t *n, char *kv)
{
	*env = xreallocarray(*env, *n + 1, sizeof **env);
	(*env)[(*n)++] = kv;
}

char **
jobs_worker_env(const struct jobs_spec *s, const char *master_addr, int slice,
    int worker, size_t *np)
{
	char **env = NULL;
	size_t n = 0, i, j;

	env_push(&env, &n, xasprintf("TPUCTL_JOB=%s", s->name));
	env_push(&env, &n, xasprintf("TPUCTL_WORKER=%d", worker));
	env_push(&env, &n, xasprintf("TPUCTL_WORKERS=%d", s->nworkers));
	env_push(&env, &n, xasprintf("TPUCTL_SLICE=%d", slice));
	env_push(&env, &n, xasprintf("TPUCTL_SLICES=%d", s->nslices));
	env_push(
	    &env, &n, xasprintf("TPUCTL_RESTART_COUNT=%d", s->restart_count));
	env_push(&env, &n, xasprintf("RANK=%d", slice * s->nworkers + worker));
	env_push(
	    &env, &n, xasprintf("WORLD_SIZE=%d", s->nslices * s->nworkers));
	env_push(&env, &n, xstrdup("LOCAL_RANK=0"));
	env_push(&env, &n, xstrdup("LOCAL_WORLD_SIZE=1"));
	env_push(&env, &n, xasprintf("MASTER_ADDR=%s", master_addr));
	env_push(&env, &n, xasprintf("MASTER_PORT=%d", s->master_port));
	env_push(&env, &n,
	    xasprintf("JAX_COORDINATOR_ADDRESS=%s:%d", master_addr,
	        s->coordinator_port));
	if (s->nslices > 1) {
		env_push(&env, &n,
		    xasprintf("MEGASCALE_COORDINATOR_ADDRESS=%s", master_addr));
		env_push(
		    &env, &n, xasprintf("MEGASCALE_NUM_SLICES=%d", s->nslices));
		env_push(&env, &n, xasprintf("MEGASCALE_SLICE_ID=%d", slice));
		env_push(&env, &n,
		    xasprintf("MEGASCALE_PORT=%d", s->megascale_port));
	}
	for (i = 0; i < s->nenv; i++) {
		size_t klen = strcspn(s->env[i], "=") + 1;

		for (j = 0; j < n; j++)
			if (strncmp(env[j], s->env[i], klen) == 0)
				break;
		if (j < n) {
			free(env[j]);
			env[j] = xstrdup(s->env[i]);
		} else
			env_push(&env, &n, xstrdup(s->env[i]));
	}
	*np = n;
	return env;
}

void
jobs_env_free(char **env, size_t n)
{
	size_t i;

	for (i = 0; env != NULL && i < n; i++)
		free(env[i]);
	free(env);
}

char *
jobs_env_script(char *const *env, size_t n)
{
	struct buf b;
	size_t i;

	buf_init(&b, BUF_NOCAP);
	for (i = 0; i < n; i++) {
		const char *eq = strchr(env[i], '=');
		char *q = shquote(eq + 1);

		buf_puts(&b, "export ");
		buf_append(&b, env[i], (size_t)(eq - env[i]));
		buf_printf(&b, "=%s\n", q);
		free(q);
	}
	return buf_detach(&b, NULL);
}

/*
 * The job's shell, started by launch as `setsid sh -c JOB_SH tpuctl-job
 * DIR WD CMD` with the job's output files as stdout and stderr: a new
 * session and process group whose id is its pid (setsid(1) does not fork
 * a non-leader), so a dropped connection or killed client does not reach
 * it and `kill -TERM -PGID` reaches all of the job.  It sources the
 * environment, runs the command in a subshell with no positional
 * parameters and records "exit N".  It survives a SIGTERM to its group
 * (cancel's, or the preemption watcher's): the command, in a subshell,
 * gets it with the default action, and the shell records "signal TERM"
 * when the command died of it (status 143) or cancel asked (DIR/cancel),
 * else the command's own "exit N" (a job that saves and exits at the
 * notice).  Killed with its group (SIGKILL), it records nothing: cancel
 * records "signal KILL" then, a preempted worker reads lost.  A TERM in
 * the instant between the trap and the subshell resetting it is lost
 * (the shell's pending trap is dropped in the child): such a job ends by
 * cancel's KILL after the grace.  The user's env may set any name, so
 * only $1.. and _tpuctl_* are used.
 */
static const char job_sh[] =
    "cd \"$1\" || exit 1\n"
    ". ./env\n"
    "if ! cd \"$2\"; then\n"
    "  : >\"$1/end\"; echo 'exit 127' >\"$1/status\"; exit 1\n"
    "fi\n"
    "_tpuctl_d=$1 _tpuctl_c=$3 _tpuctl_t=\n"
    "set --\n"
    "trap _tpuctl_t=1 TERM\n"
    "if [ -z \"$_tpuctl_t\" ]; then\n"
    "  (eval \"$_tpuctl_c\")\n"
    "  _tpuctl_s=$?\n"
    "else _tpuctl_s=143\n"
    "fi\n"
    ": >\"$_tpuctl_d/end\"\n"
    /* one short write: a reader sees it whole or not at all */
    "if [ -n \"$_tpuctl_t\" ] && "
    "{ [ $_tpuctl_s = 143 ] || [ -e \"$_tpuctl_d/cancel\" ]; }; then\n"
    "  echo 'signal TERM' >\"$_tpuctl_d/status\"\n"
    "else\n"
    "  echo \"exit $_tpuctl_s\" >\"$_tpuctl_d/status\"\n"
    "fi\n";

/* The follow part; $n name, $o1 $o2 offsets, $w wait (1/0). */
static const char follow_sh[] =
    "d=$HOME/.tpuctl/jobs/$n\n"
    "if [ ! -d \"$d\" ]; then\n"
    "  echo \"tpuctl: no job $n on this worker\" >&2; exit 96\n"
    "fi\n"
    "p= s=\n"
    "[ -r \"$d/pgid\" ] && read -r p <\"$d/pgid\"\n"
    "[ -r \"$d/status\" ] && read -r s <\"$d/status\"\n"
    "if [ \"$w\" = 1 ] && [ -n \"$p\" ] && [ -z \"$s\" ] && "
    "kill -0 \"$p\" 2>/dev/null; then\n"
    "  tail -s 0.02 --pid=\"$p\" -c +$((o1 + 1)) -f \"$d/stdout\" & a=$!\n"
    "  tail -s 0.02 --pid=\"$p\" -c +$((o2 + 1)) -f \"$d/stderr\" >&2 & "
    "e=$!\n"
    "  wait $a; wait $e\n"
    "else\n"
    "  [ ! -s \"$d/stdout\" ] || tail -c +$((o1 + 1)) \"$d/stdout\"\n"
    "  [ ! -s \"$d/stderr\" ] || tail -c +$((o2 + 1)) \"$d/stderr\" >&2\n"
    "fi\n"
    "s=\n"
    "[ -r \"$d/status\" ] && read -r s <\"$d/status\"\n"
    "[ \"$s\" = 'exit 0' ] && exit 0\n"
    "exit 1\n";

static const char launch_sh[] =
    "n=$1 h=$2 u=$3 z=\n"
    "b=$HOME/.tpuctl\n"
    "d=$b/jobs/$n\n"
    "r=0\n"
    /* ck FILE SIZE: x, the sha256 of FILE.  Of an archive of 8 MiB or
       more by python3's hashlib (OpenSSL's SHA-256: 0.03 s of CPU for
       64 MiB where coreutils' sha256sum takes 0.2 s, its start
       0.025 s); of a smaller one, or when python3 fails, by sha256sum.
       Files, no pipes: a pipe through a hashing tee cost more CPU than
       reading the file again (tests/bench/bench_run.sh) */
    "ck() {\n"
    "  x=\n"
    "  if [ \"${2:-0}\" -ge 8388608 ] 2>/dev/null; then\n"
    "    x=$(python3 -S -I -c \"import hashlib,sys;h=hashlib.sha256();"
    "[h.update(b) for b in iter(lambda f=open(sys.argv[1],'rb'):"
    "f.read(1<<20),b'')];print(h.hexdigest())\" \"$1\" "
    "2>/dev/null) || x=\n"
    "  fi\n"
    "  [ -n \"$x\" ] || x=$(sha256sum <\"$1\")\n"
    "  x=${x%% *}\n"
    "}\n"
    /* a cached archive is checked before it is used again (a new job
       only).  Its digest file HASH.tar.sha256, written once the archive
       was found right, vouches for it while it names the hash and is
       newer than the archive (test(1)'s -nt, a builtin: no process, no
       hashing); a write to the archive since makes the archive the
       newer, and a missing or wrong digest file vouches for nothing:
       then it is hashed again (jobs.h says what this does not catch).
       A bad one is removed, and the client ($9 = 1) told with exit 95
       (and nothing else), to send it again or have it pulled again; a
       boot script pulls it again itself */
    "a=$b/wd/$h.tar\n"
    "if [ -n \"$h\" ] && [ ! -d \"$d\" ] && [ -f \"$a\" ]; then\n"
    "  v=\n"
    "  [ ! \"$a.sha256\" -nt \"$a\" ] || read -r v <\"$a.sha256\" || :\n"
    "  if [ \"$v\" != \"$h\" ]; then\n"
    "    ck \"$a\" \"$(wc -c <\"$a\")\"\n"
    "    if [ \"$x\" = \"$h\" ]; then\n"
    "      echo \"$h\" >\"$a.sha256\" || :\n"
    "    else\n"
    "      rm -f \"$a\" \"$a.sha256\"\n"
    "      [ \"$9\" != 1 ] || exit 95\n"
    "    fi\n"
    "  fi\n"
    "fi\n"
    /* the job's directory and, with a workdir, its wd in one mkdir(1)
       (one process less on every worker); a wd made in the directory of
       an older job of that name stays empty there */
    "if ! mkdir \"$d\" ${h:+\"$d/wd\"} 2>/dev/null; then\n"
    "  mkdir -p \"$b/jobs\" \"$b/wd\"\n"
    "  if mkdir \"$d\" ${h:+\"$d/wd\"} 2>/dev/null; then :\n"
    /* resume: a launch that may have run already is followed instead */
    "  elif [ \"$8\" = 1 ] && [ -s \"$d/pgid\" ]; then r=1\n"
    "  else\n"
    "    echo \"tpuctl: a job named $n exists on this worker already\" >&2\n"
    "    exit 97\n"
    "  fi\n"
    "fi\n"
    "if [ $r = 0 ]; then\n"
    "cd \"$d\" || exit 97\n"
    "printf '%s\\n' \"$4\" >env\n"
    "printf '%s\\n' \"$5\" >command\n"
    "wd=$HOME\n"
    "if [ -n \"$h\" ]; then\n"
    "  if [ ! -f \"$a\" ] && [ -n \"$u\" ]; then\n"
    "    mkdir -p \"$b/wd\"\n"
    "    m=${GCE_METADATA_HOST:-metadata.google.internal}\n"
    /* the token taken out of the JSON answer by the shell itself (no
       sed process on every worker): what follows "access_token", between
       the next two quotes */
    "    t=$(curl -sSf --retry 3 -H 'Metadata-Flavor: Google' "
    "\"http://$m/computeMetadata/v1/instance/service-accounts/default/"
    "token\")\n"
    "    case $t in *'\"access_token\"'*) t=${t#*'\"access_token\"'}; "
    "t=${t#*'\"'}; t=${t%%'\"'*} ;; *) t= ;; esac\n"
    /* -w: the size, to choose the hash program below */
    "    z=$(curl -sSf --retry 3 -w '%{size_download}' "
    "-H \"Authorization: Bearer $t\" -o \"$a.part\" \"$u\") || "
    "{ z=; echo \"tpuctl: cannot download the workdir from the "
    "bucket\" >&2; }\n"
    "  fi\n"
    "  if [ ! -f \"$a\" ] && [ -f \"$a.part\" ]; then\n"
    "    ck \"$a.part\" \"$z\"\n"
    "    if [ \"$x\" = \"$h\" ]; then\n"
    /* its digest file after it: the newer, naming the hash */
    "      mv \"$a.part\" \"$a\" && echo \"$h\" >\"$a.sha256\"\n"
    "    else\n"
    "      rm -f \"$a.part\" \"$a.sha256\"\n"
    "      echo \"tpuctl: workdir archive $h: checksum mismatch\" >&2\n"
    "    fi\n"
    "  fi\n"
    "  if [ ! -f \"$a\" ]; then\n"
    "    echo \"tpuctl: workdir archive $h is not on this worker\" >&2\n"
    "    exit 98\n"
    "  fi\n"
    /* records of 128 KiB (-b 256): a third of the system time of the
       default 10 KiB reads and writes for a big archive */
    "  if ! tar -x -m -p -b 256 -f \"$a\" -C wd; then\n"
    "    echo \"tpuctl: cannot unpack the workdir\" >&2; exit 98\n"
    "  fi\n"
    "  wd=$d/wd\n"
    "fi\n"
    "printf '%s\\n' \"$wd\" >cwd\n"
    /* start's mtime is the start time */
    ": >stdout && : >stderr && : >start || exit 97\n"
    "setsid sh -c \"$7\" tpuctl-job \"$d\" \"$wd\" \"$5\" </dev/null "
    ">>\"$d/stdout\" 2>>\"$d/stderr\" &\n"
    "echo $! >pgid\n"
    "fi\n"
    "[ \"$6\" = 1 ] || exit 0\n"
    "o1=0 o2=0 w=1\n";

static const char status_sh[] =
    "for n in \"$@\"; do\n"
    "  d=$HOME/.tpuctl/jobs/$n\n"
    "  if [ ! -d \"$d\" ]; then echo \"$n none\"; continue; fi\n"
    "  s0=- e0=- st= p=\n"
    "  [ ! -e \"$d/start\" ] || s0=$(date -r \"$d/start\" +%s)\n"
    "  [ -r \"$d/status\" ] && read -r st <\"$d/status\"\n"
    "  if [ -n \"$st\" ]; then\n"
    "    [ ! -e \"$d/end\" ] || e0=$(date -r \"$d/end\" +%s)\n"
    "    echo \"$n $st $s0 $e0\"; continue\n"
    "  fi\n"
    "  [ -r \"$d/pgid\" ] && read -r p <\"$d/pgid\"\n"
    "  if [ -n \"$p\" ] && kill -0 \"$p\" 2>/dev/null; then\n"
    "    echo \"$n running $s0 -\"\n"
    "  else\n"
    "    echo \"$n lost $s0 -\"\n"
    "  fi\n"
    "done\n";

static const char cancel_sh[] =
    "n=$1\n"
    "d=$HOME/.tpuctl/jobs/$n\n"
    "g=\n"
    "[ -d \"$d\" ] && [ ! -s \"$d/status\" ] && [ -r \"$d/pgid\" ] && "
    "read -r g <\"$d/pgid\"\n"
    "if [ -n \"$g\" ]; then\n"
    /* the group exists once setsid(1) ran in the job's shell */
    "  i=0\n"
    "  while ! kill -0 -\"$g\" 2>/dev/null && kill -0 \"$g\" 2>/dev/null && "
    "[ $i -lt 200 ]; do\n"
    "    sleep 0.01; i=$((i + 1))\n"
    "  done\n"
    "  sig=TERM\n"
    /* the job's shell reads it: cancelled, whatever the job exits with */
    "  : >\"$d/cancel\"\n"
    /* a group already gone (the worker rebooted) stays lost */
    "  if kill -TERM -\"$g\" 2>/dev/null; then\n"
    "  i=0\n"
    "  while [ $i -lt $(($2 * 10)) ] && kill -0 -\"$g\" 2>/dev/null; do\n"
    "    sleep 0.1; i=$((i + 1))\n"
    "  done\n"
    "  if kill -0 -\"$g\" 2>/dev/null; then\n"
    "    kill -KILL -\"$g\" 2>/dev/null; sig=KILL\n"
    "  fi\n"
    "  if [ ! -s \"$d/status\" ]; then\n"
    "    : >\"$d/end\"; echo \"signal $sig\" >\"$d/status\"\n"
    "  fi\n"
    "  fi\n"
    "fi\n"
    "shift 2\n"
    "set -- \"$n\"\n";

/* "sh -c SCRIPT tpuctl-job ARGS...", every piece quoted. */
static char *
remote(const char *script, const char *const *args, size_t nargs)
{
	struct buf b;
	size_t i;
	char *q;

	buf_init(&b, BUF_NOCAP);
	buf_puts(&b, "sh -c ");
	q = shquote(script);
	buf_puts(&b, q);
	free(q);
	buf_puts(&b, " tpuctl-job");
	for (i = 0; i < nargs; i++) {
		q = shquote(args[i]);
		buf_printf(&b, " %s", q);
		free(q);
	}
	return buf_detach(&b, NULL);
}

char *
jobs_launch_cmd(
    const struct jobs_spec *s, char *const *env, size_t nenv, int flags)
{
	char *envs = jobs_env_script(env, nenv), *url = NULL, *script, *cmd;
	const char *args[9];
	int follow = (flags & JOBS_LAUNCH_FOLLOW) != 0;

	if (s->stage_url != NULL)
		url = xstrdup(s->stage_url);
	script = xasprintf("%s%s", launch_sh, follow ? follow_sh : "");
	args[0] = s->name;
	args[1] = s->workdir_hash != NULL ? s->workdir_hash : "";
	args[2] = url != NULL ? url : "";
	args[3] = envs;
	args[4] = s->command;
	args[5] = follow ? "1" : "0";
	args[6] = job_sh;
	args[7] = (flags & JOBS_LAUNCH_RESUME) ? "1" : "0";
	args[8] = "1";
	cmd = remote(script, args, 9);
	free(script);
	free(envs);
	free(url);
	return cmd;
}

/* Where the boot script's env puts worker 0's address: a byte no
 * value of ours or of a checked user entry holds. */
#define BOOT_MASTER "\001"

/* env as export lines, BOOT_MASTER replaced by "$_tpuctl_master" (left
 * for the job's shell to expand when it sources the file). */
static char *
boot_env_script(char *const *env, size_t n)
{
	struct buf b;
	size_t i;

	buf_init(&b, BUF_NOCAP);
	for (i = 0; i < n; i++) {
		const char *eq = strchr(env[i], '='), *v = eq + 1, *m;

		buf_puts(&b, "export ");
		buf_append(&b, env[i], (size_t)(eq - env[i]));
		buf_puts(&b, "=");
		for (;;) {
			char *piece, *q;

			m = strstr(v, BOOT_MASTER);
			piece = m != NULL ? xstrndup(v, (size_t)(m - v))
			                  : xstrdup(v);
			q = shquote(piece);
			buf_puts(&b, q);
			free(q);
			free(piece);
			if (m == NULL)
				break;
			buf_puts(&b, "\"$_tpuctl_master\"");
			v = m + strlen(BOOT_MASTER);
		}
		buf_puts(&b, "\n");
	}
	return buf_detach(&b, NULL);
}

static const char boot_head_sh[] =
    "#!/bin/sh\n"
    "m=${GCE_METADATA_HOST:-metadata.google.internal}\n"
    "md() {\n"
    "  curl -sSf --retry 5 -H 'Metadata-Flavor: Google' "
    "\"http://$m/computeMetadata/v1/instance/attributes/$1\"\n"
    "}\n"
    "w=$(md agent-worker-number) || exit 1\n"
    "ep=$(md worker-network-endpoints) || exit 1\n"
    "e0=${ep%%,*}\n"
    "_tpuctl_master=${e0##*:}\n"
    "export _tpuctl_master\n";

/*
 * Of a multislice (after boot_head_sh): the node's slice and the job's
 * master from its tpu-env, as a multislice TPU VM has them
 * (MEGASCALE_SLICE_ID; MEGASCALE_COORDINATOR_ADDRESS, slice 0's worker
 * 0, host[:port]); $w becomes SLICE:WORKER.
 */
static const char boot_slice_sh[] =
    "te=$(md tpu-env) || exit 1\n"
    "tv() { printf '%s\\n' \"$te\" | "
    "sed -n \"s/^$1: *'\\{0,1\\}\\([^']*\\)'\\{0,1\\} *\\$/\\1/p\"; }\n"
    "sl=$(tv MEGASCALE_SLICE_ID)\n"
    "mc=$(tv MEGASCALE_COORDINATOR_ADDRESS)\n"
    "if [ -z \"$sl\" ] || [ -z \"$mc\" ]; then\n"
    "  echo 'tpuctl: tpu-env has no MEGASCALE_SLICE_ID or "
    "MEGASCALE_COORDINATOR_ADDRESS: not a multislice node' >&2; exit 1\n"
    "fi\n"
    "_tpuctl_master=${mc%:*}\n"
    "w=$sl:$w\n";

/*
 * After boot_head_sh and the case: $u the user, $1 launch_sh, $2..
 * its arguments, $k boot_keep_script.  Start $k as $u (see
 * jobs_boot_script).
 */
static const char boot_user_sh[] =
    "i=$(id -un) || exit 1\n"
    "if [ \"$i\" = \"$u\" ]; then\n"
    "  [ -n \"$HOME\" ] || HOME=$(getent passwd \"$u\" | cut -d: -f6)\n"
    "  [ -n \"$HOME\" ] || { echo \"tpuctl: user $u has no home\" >&2; "
    "exit 1; }\n"
    "  USER=$u LOGNAME=$u\n"
    "  export HOME USER LOGNAME\n"
    "  exec sh -c \"$k\" tpuctl-job \"$@\"\n"
    "fi\n"
    "if [ \"$(id -u)\" != 0 ]; then\n"
    "  echo \"tpuctl: the startup-script runs as $i, not root: cannot start "
    "the job as $u\" >&2\n"
    "  exit 1\n"
    "fi\n"
    /* the guest agent may create the account from ssh-keys meanwhile */
    "if ! id -u \"$u\" >/dev/null 2>&1 && ! useradd -m -s /bin/bash \"$u\" "
    "&& ! id -u \"$u\" >/dev/null 2>&1; then\n"
    "  echo \"tpuctl: cannot create user $u\" >&2; exit 1\n"
    "fi\n"
    "h=$(getent passwd \"$u\" | cut -d: -f6)\n"
    "[ -n \"$h\" ] || { echo \"tpuctl: user $u has no home\" >&2; exit 1; }\n"
    "if [ ! -d \"$h\" ]; then\n"
    "  mkdir -p \"$h\" && chown \"$u:$(id -g \"$u\")\" \"$h\" && "
    "chmod 750 \"$h\" ||\n"
    "    { echo \"tpuctl: cannot create $h for $u\" >&2; exit 1; }\n"
    "fi\n"
    "cd / || exit 1\n"
    "if command -v runuser >/dev/null 2>&1; then\n"
    "  exec runuser -u \"$u\" -- env HOME=\"$h\" USER=\"$u\" "
    "LOGNAME=\"$u\" sh -c \"$k\" tpuctl-job \"$@\"\n"
    "fi\n"
    "exec setpriv --reuid=\"$u\" --regid=\"$(id -g \"$u\")\" --init-groups "
    "env HOME=\"$h\" USER=\"$u\" LOGNAME=\"$u\" sh -c \"$k\" tpuctl-job "
    "\"$@\"\n";

/*
 * What the boot script starts as the job's user: $1 launch_sh, the rest
 * its arguments.  launch_sh's stderr is kept: a refused workdir archive
 * (98) is recorded in the job's directory, so logs and jobs report it.
 * up (may be NULL): the uploader's command line, started detached once
 * the job is launched or its refusal recorded.
 */
static char *upload_line(
    const char *name, const struct jobs_upload *u, const char *tag);

static char *
boot_keep_script(const char *name, const char *up)
{
	struct buf b;
	char *q = shquote(name);

	buf_init(&b, BUF_NOCAP);
	buf_printf(&b,
	    "l=$1\n"
	    "shift\n"
	    "mkdir -p \"$HOME/.tpuctl\"\n"
	    "x=$HOME/.tpuctl/boot-$$.err\n"
	    "sh -c \"$l\" tpuctl-job \"$@\" 2>\"$x\"\n"
	    "r=$?\n"
	    "cat \"$x\" >&2\n"
	    "d=$HOME/.tpuctl/jobs/%s\n"
	    "if [ $r = 98 ] && [ -d \"$d\" ] && [ ! -s \"$d/pgid\" ]; then\n"
	    "  cat \"$x\" >>\"$d/stderr\"\n"
	    "  : >\"$d/end\"\n"
	    "  echo 'exit 98' >\"$d/status\"\n"
	    "fi\n"
	    "rm -f \"$x\"\n",
	    q);
	if (up != NULL)
		buf_printf(&b,
		    "if [ $r = 0 ] || [ $r = 98 ]; then\n"
		    "  setsid %s </dev/null >>\"$d/upload.log\" 2>&1 &\n"
		    "fi\n",
		    up);
	buf_puts(&b, "exit $r\n");
	free(q);
	return buf_detach(&b, NULL);
}

char *
jobs_boot_script(const struct jobs_spec *s, const struct jobs_upload *up)
{
	struct buf b;
	const char *url = s->stage_url != NULL ? s->stage_url : "";
	char *q, *k;
	const char *args[8];
	int w, i, sl;

	buf_init(&b, BUF_NOCAP);
	q = shquote(s->name);
	buf_printf(&b, "%s# tpuctl submit: job %s\n", boot_head_sh, q);
	free(q);
	if (s->nslices > 1)
		buf_puts(&b, boot_slice_sh);
	buf_puts(&b, "case $w in\n");
	for (sl = 0; sl < (s->nslices > 1 ? s->nslices : 1); sl++)
		for (w = 0; w < s->nworkers; w++) {
			size_t n;
			char **env = jobs_worker_env(s, BOOT_MASTER, sl, w, &n);
			char *e = boot_env_script(env, n);

			q = shquote(e);
			if (s->nslices > 1)
				buf_printf(&b, "%d:%d) e=%s ;;\n", sl, w, q);
			else
				buf_printf(&b, "%d) e=%s ;;\n", w, q);
			free(q);
			free(e);
			jobs_env_free(env, n);
		}
	buf_puts(&b, "*) echo \"tpuctl: worker $w is not part of the job\" "
	             ">&2; exit 1 ;;\n"
	             "esac\n");
	/* the uploader's tag of this worker */
	buf_puts(&b, s->nslices > 1 ? "_tpuctl_wt=w${w%%:*}-${w#*:}\n"
	                            : "_tpuctl_wt=w0-$w\n");
	buf_puts(&b, "export _tpuctl_wt\n");
	/* launch_sh's arguments, $4 the worker's env */
	args[0] = s->name;
	args[1] = s->workdir_hash != NULL ? s->workdir_hash : "";
	args[2] = url;
	args[3] = NULL;
	args[4] = s->command;
	args[5] = "0";
	args[6] = job_sh;
	args[7] = "0";
	q = shquote(s->user != NULL ? s->user : "");
	buf_printf(&b, "u=%s\n", q);
	free(q);
	q = shquote(launch_sh);
	buf_printf(&b, "l=%s\n", q);
	free(q);
	if (up != NULL) {
		char *ul = upload_line(s->name, up, "\"$_tpuctl_wt\"");

		k = boot_keep_script(s->name, ul);
		free(ul);
	} else
		k = boot_keep_script(s->name, NULL);
	q = shquote(k);
	buf_printf(&b, "k=%s\nset -- \"$l\"", q);
	free(k);
	free(q);
	for (i = 0; i < 8; i++) {
		if (args[i] == NULL) {
			buf_puts(&b, " \"$e\"");
			continue;
		}
		q = shquote(args[i]);
		buf_printf(&b, " %s", q);
		free(q);
	}
	buf_printf(&b, "\n%s", boot_user_sh);
	return buf_detach(&b, NULL);
}

char *
jobs_follow_cmd(const char *name, uint64_t off_out, uint64_t off_err, int wait)
{
	char o1[24], o2[24], *script, *cmd;
	const char *args[4];

	snprintf(o1, sizeof o1, "%llu", (unsigned long long)off_out);
	snprintf(o2, sizeof o2, "%llu", (unsigned long long)off_err);
	args[0] = name;
	args[1] = o1;
	args[2] = o2;
	args[3] = wait ? "1" : "0";
	script = xasprintf("n=$1 o1=$2 o2=$3 w=$4\n%s", follow_sh);
	cmd = remote(script, args, 4);
	free(script);
	return cmd;
}

char *
jobs_status_cmd(const char *name)
{
	const char *args[1] = { name };

	return remote(status_sh, args, 1);
}

char *
jobs_cancel_cmd(const char *name, int grace_s)
{
	char g[16], *script, *cmd;
	const char *args[2];

	snprintf(g, sizeof g, "%d", grace_s);
	args[0] = name;
	args[1] = g;
	script = xasprintf("%s%s", cancel_sh, status_sh);
	cmd = remote(script, args, 2);
	free(script);
	return cmd;
}

/*
 * The log uploader (jobs_upload_cmd, started by the boot script): $1 the
 * job's name, $2 the storage API base, $3 the bucket, $4 the
 * percent-encoded object prefix of the job, $5 the period in seconds,
 * $6 the worker's tag (wSLICE-WORKER), $7 the timeout in seconds (0:
 * none), $8 its grace, $9 the TPU API base (delete-after; "" none),
 * ${10} the queued resource's path, ${11} and ${12} the job's slices and
 * workers per slice.  Every period, when stdout, stderr or the state
 * changed, it uploads them as PREFIX TAG.out, .err and .state, the logs
 * before the state, so a final state read from the bucket means final
 * logs; the state is a status line ("exit 3 START END", "running START
 * -").  A failed upload is tried again the next period.  The metadata
 * token is kept 300 s at most, less when it expires sooner (60 s before).
 * Past the timeout a job not ended gets SIGTERM, SIGKILL after the
 * grace, and "exit 124" is its state.  With delete-after, worker w0-0
 * waits, once its own final state is uploaded, until every other
 * worker's state object is final, then deletes the queued resource
 * (force: its nodes too), tried 10 times.  It exits 0 once the final
 * state is uploaded (and the slice deleted), 1 when the job's directory
 * does not appear within 30 periods, the final upload fails 10 times or
 * the delete does.
 */
static const char upload_sh[] =
    "n=$1 g=$2 k=$3 ob=$4 p=$5 wt=$6 to=$7 gr=$8 tp=$9\n"
    "shift 9\n"
    "qp=$1 ns=$2 nw=$3 o=$ob$wt\n"
    "d=$HOME/.tpuctl/jobs/$n\n"
    "m=${GCE_METADATA_HOST:-metadata.google.internal}\n"
    "t= ta=0 tl=300 lo= le= ls= f=0 i=0\n"
    "say() { echo \"tpuctl-upload: $*\" >&2; }\n"
    "tok() {\n"
    "  c=$(date +%s)\n"
    "  [ -n \"$t\" ] && [ $((c - ta)) -lt $tl ] && return 0\n"
    "  t=$(curl -sSf --retry 3 -H 'Metadata-Flavor: Google' "
    "\"http://$m/computeMetadata/v1/instance/service-accounts/default/"
    "token\") || { t=; say 'no token from the metadata server'; "
    "return 1; }\n"
    "  tl=300\n"
    "  case $t in *'\"expires_in\"'*) x=${t#*'\"expires_in\"'}; "
    "x=${x#*:}; x=${x#\"${x%%[0-9]*}\"}; x=${x%%[!0-9]*}\n"
    "    [ -z \"$x\" ] || [ $((x - 60)) -ge $tl ] || tl=$((x - 60)) ;;\n"
    "  esac\n"
    "  [ $tl -ge 0 ] || tl=0\n"
    "  case $t in *'\"access_token\"'*) t=${t#*'\"access_token\"'}; "
    "t=${t#*'\"'}; t=${t%%'\"'*} ;; *) t=; return 1 ;; esac\n"
    "  ta=$c\n"
    "}\n"
    "put() {\n"
    "  tok || return 1\n"
    "  curl -sSf --retry 3 -o /dev/null -X POST "
    "-H \"Authorization: Bearer $t\" "
    "-H 'Content-Type: application/octet-stream' --data-binary \"@$1\" "
    "\"$g/upload/storage/v1/b/$k/o?uploadType=media&name=$o$2\" || "
    "{ say \"upload of $2 failed\"; return 1; }\n"
    "}\n"
    /* the timeout: TERM to the job's group, KILL after the grace; the
       job's shell has written its own status by then (or was killed):
       124 replaces it */
    "tmo() {\n"
    "  pg=\n"
    "  [ -r \"$d/pgid\" ] && read -r pg <\"$d/pgid\"\n"
    "  echo \"tpuctl: timeout: the job did not end within ${to}s: "
    "stopping it\" >>\"$d/stderr\"\n"
    "  if [ -n \"$pg\" ] && kill -TERM -\"$pg\" 2>/dev/null; then\n"
    "    j=0\n"
    "    while [ $j -lt $((gr * 10)) ] && kill -0 -\"$pg\" 2>/dev/null; "
    "do\n"
    "      sleep 0.1; j=$((j + 1))\n"
    "    done\n"
    "    kill -KILL -\"$pg\" 2>/dev/null\n"
    "  fi\n"
    "  : >\"$d/end\"; echo 'exit 124' >\"$d/status\"\n"
    "}\n"
    /* delete-after, on w0-0: every other worker's state final, then the
       queued resource deleted with its nodes (this worker among them) */
    "rel() {\n"
    "  while :; do\n"
    "    x=0 si=0\n"
    "    while [ $si -lt \"$ns\" ]; do\n"
    "      wi=0\n"
    "      while [ $wi -lt \"$nw\" ]; do\n"
    "        tg=w$si-$wi\n"
    "        if [ \"$tg\" != \"$wt\" ]; then\n"
    "          v=\n"
    "          tok && v=$(curl -sSf --retry 3 "
    "-H \"Authorization: Bearer $t\" "
    "\"$g/storage/v1/b/$k/o/$ob$tg.state?alt=media\" 2>/dev/null) || v=\n"
    "          case $v in ''|running*) x=1 ;; esac\n"
    "        fi\n"
    "        wi=$((wi + 1))\n"
    "      done\n"
    "      si=$((si + 1))\n"
    "    done\n"
    "    [ $x = 1 ] || break\n"
    "    sleep \"$p\"\n"
    "  done\n"
    "  a=0\n"
    "  while :; do\n"
    "    say \"the job has ended on every worker: deleting queued resource "
    "$qp (delete-after)\"\n"
    "    tok && curl -sSf --retry 3 -o /dev/null -X DELETE "
    "-H \"Authorization: Bearer $t\" \"$tp/v2/$qp?force=true\" && return 0\n"
    "    a=$((a + 1)); [ $a -lt 10 ] || { say 'the delete failed'; "
    "return 1; }\n"
    "    sleep \"$p\"\n"
    "  done\n"
    "}\n"
    "while [ ! -d \"$d\" ]; do\n"
    "  i=$((i + 1)); [ $i -le 30 ] || exit 1\n"
    "  sleep \"$p\"\n"
    "done\n"
    "t0=$(date +%s)\n"
    "while :; do\n"
    "  s=\n"
    "  [ -r \"$d/status\" ] && read -r s <\"$d/status\"\n"
    "  if [ -z \"$s\" ] && [ \"$to\" -gt 0 ] && "
    "[ $(($(date +%s) - t0)) -ge \"$to\" ]; then\n"
    "    tmo; read -r s <\"$d/status\"\n"
    "  fi\n"
    "  e=0; [ -n \"$s\" ] && e=1\n"
    "  [ -n \"$s\" ] || s=running\n"
    "  s0=- e0=-\n"
    "  [ ! -e \"$d/start\" ] || s0=$(date -r \"$d/start\" +%s)\n"
    "  [ $e = 0 ] || [ ! -e \"$d/end\" ] || e0=$(date -r \"$d/end\" +%s)\n"
    "  s=\"$s $s0 $e0\"\n"
    "  zo=$(wc -c <\"$d/stdout\" 2>/dev/null) || zo=\n"
    "  ze=$(wc -c <\"$d/stderr\" 2>/dev/null) || ze=\n"
    "  ok=1\n"
    "  if [ -n \"$zo\" ] && [ \"$zo\" != \"$lo\" ]; then\n"
    "    if put \"$d/stdout\" .out; then lo=$zo; else ok=0; fi\n"
    "  fi\n"
    "  if [ -n \"$ze\" ] && [ \"$ze\" != \"$le\" ]; then\n"
    "    if put \"$d/stderr\" .err; then le=$ze; else ok=0; fi\n"
    "  fi\n"
    "  if [ $ok = 1 ] && [ \"$s\" != \"$ls\" ]; then\n"
    "    printf '%s\\n' \"$s\" >\"$d/.upload-state\" &&\n"
    "      put \"$d/.upload-state\" .state && ls=$s || ok=0\n"
    "  fi\n"
    "  if [ $e = 1 ]; then\n"
    "    if [ $ok = 1 ]; then\n"
    "      [ -n \"$tp\" ] && [ \"$wt\" = w0-0 ] && { rel || exit 1; }\n"
    "      exit 0\n"
    "    fi\n"
    "    f=$((f + 1)); [ $f -lt 10 ] || exit 1\n"
    "  fi\n"
    "  sleep \"$p\"\n"
    "done\n";

/* "sh -c UPLOAD_SH tpuctl-upload ARGS TAG": tag is put in as it is (a
 * quoted word or a shell expansion). */
static char *
upload_line(const char *name, const struct jobs_upload *u, const char *tag)
{
	char per[16], tmo[32], gr[16], ns[16], nw[16];
	char *enc = gcs_pct_encode(u->prefix), *q;
	const char *args[12];
	struct buf b;
	int i;

	snprintf(per, sizeof per, "%d", u->period_s);
	snprintf(tmo, sizeof tmo, "%lld", u->timeout_s);
	snprintf(gr, sizeof gr, "%d", u->grace_s);
	snprintf(ns, sizeof ns, "%d", u->nslices);
	snprintf(nw, sizeof nw, "%d", u->nworkers);
	args[0] = name;
	args[1] = u->storage;
	args[2] = u->bucket;
	args[3] = enc;
	args[4] = per;
	args[5] = NULL; /* the tag */
	args[6] = tmo;
	args[7] = gr;
	args[8] = u->tpu != NULL ? u->tpu : "";
	args[9] = u->qr != NULL ? u->qr : "";
	args[10] = ns;
	args[11] = nw;
	buf_init(&b, BUF_NOCAP);
	q = shquote(upload_sh);
	buf_printf(&b, "sh -c %s tpuctl-upload", q);
	free(q);
	for (i = 0; i < 12; i++) {
		if (args[i] == NULL) {
			buf_printf(&b, " %s", tag);
			continue;
		}
		q = shquote(args[i]);
		buf_printf(&b, " %s", q);
		free(q);
	}
	free(enc);
	return buf_detach(&b, NULL);
}

char *
jobs_upload_cmd(const char *name, const struct jobs_upload *u, const char *tag)
{
	char *q = shquote(tag), *cmd = upload_line(name, u, q);

	free(q);
	return cmd;
}

char *
jobs_have_cmd(const char *hash)
{
	const char *args[1] = { hash };

	return remote("mkdir -p \"$HOME/.tpuctl/wd\" || exit 1\n"
	              "if [ -f \"$HOME/.tpuctl/wd/$1.tar\" ]; then echo have; "
	              "else echo need; fi\n",
	    args, 1);
}

char *
jobs_clear_cmd(const char *name)
{
	const char *args[1] = { name };

	return remote("rm -rf \"$HOME/.tpuctl/jobs/$1\"\n", args, 1);
}

char *
jobs_archive_path(const char *hash)
{
	return xasprintf(".tpuctl/wd/%s.tar.part", hash);
}

/* A decimal time or "-". */
static time_t
parse_time(const char *s)
{
	char *end;
	long long v;

	if (s == NULL || strcmp(s, "-") == 0)
		return 0;
	v = strtoll(s, &end, 10);
	return *end == '\0' && v > 0 ? (time_t)v : 0;
}

static int
parse_code(const char *s, int *code)
{
	char *end;
	long v;

	if (s == NULL || *s == '\0')
		return -1;
	v = strtol(s, &end, 10);
	if (*end != '\0' || v < 0 || v > 255)
		return -1;
	*code = (int)v;
	return 0;
}

int
jobs_state_parse(const char *line, struct jobs_state *st)
{
	char buf[256], *w[5], *save = NULL, *p;
	size_t nw = 0;

	memset(st, 0, sizeof *st);
	snprintf(buf, sizeof buf, "%s", line);
	buf[strcspn(buf, "\r\n")] = '\0';
	for (p = buf; nw < 5;) {
		while (*p == ' ')
			p++;
		if (*p == '\0')
			break;
		w[nw++] = p;
		p += strcspn(p, " ");
		if (*p != '\0')
			*p++ = '\0';
	}
	(void)save;
	if (nw == 0)
		return -1;
	if (strcmp(w[0], "none") == 0 && nw == 1) {
		st->kind = JOBS_MISSING;
	} else if (strcmp(w[0], "queued") == 0 && nw == 1) {
		st->kind = JOBS_QUEUED;
	} else if (strcmp(w[0], "no") == 0 && nw == 3 &&
	           strcmp(w[1], "such") == 0 && strcmp(w[2], "job") == 0) {
		st->kind = JOBS_MISSING;
	} else if (strcmp(w[0], "running") == 0 || strcmp(w[0], "lost") == 0) {
		if (nw != 1 && nw != 3)
			return -1;
		st->kind = w[0][0] == 'r' ? JOBS_RUNNING : JOBS_LOST;
		if (nw == 3) {
			st->start = parse_time(w[1]);
			st->end = parse_time(w[2]);
		}
	} else if (strcmp(w[0], "exit") == 0 || strcmp(w[0], "exited") == 0) {
		if ((nw != 2 && nw != 4) || parse_code(w[1], &st->code) != 0)
			goto bad;
		st->kind = JOBS_EXITED;
		if (nw == 4) {
			st->start = parse_time(w[2]);
			st->end = parse_time(w[3]);
		}
	} else if (strcmp(w[0], "signal") == 0 ||
	           (strcmp(w[0], "killed") == 0 && nw == 3 &&
	               strcmp(w[1], "by") == 0)) {
		const char *sig = w[0][0] == 's' ? w[1] : w[2];
		size_t i;

		if (w[0][0] == 's' && nw != 2 && nw != 4)
			goto bad;
		if (strlen(sig) == 0 || strlen(sig) >= sizeof st->signal)
			goto bad;
		for (i = 0; sig[i] != '\0'; i++)
			if (!isalnum((unsigned char)sig[i]))
				goto bad;
		st->kind = JOBS_KILLED;
		snprintf(st->signal, sizeof st->signal, "%s", sig);
		if (w[0][0] == 's' && nw == 4) {
			st->start = parse_time(w[2]);
			st->end = parse_time(w[3]);
		}
	} else
		goto bad;
	return 0;
bad:
	memset(st, 0, sizeof *st);
	return -1;
}

const char *
jobs_state_str(const struct jobs_state *st, char *buf, size_t n)
{
	switch (st->kind) {
	case JOBS_RUNNING:
		snprintf(buf, n, "running");
		break;
	case JOBS_EXITED:
		snprintf(buf, n, "exited %d", st->code);
		break;
	case JOBS_KILLED:
		snprintf(buf, n, "killed by %s", st->signal);
		break;
	case JOBS_LOST:
		snprintf(buf, n, "lost");
		break;
	case JOBS_MISSING:
		snprintf(buf, n, "no such job");
		break;
	case JOBS_QUEUED:
		snprintf(buf, n, "queued");
		break;
	default:
		snprintf(buf, n, "unknown");
	}
	return buf;
}

int
jobs_state_final(const struct jobs_state *st)
{
	return st->kind == JOBS_EXITED || st->kind == JOBS_KILLED ||
	       st->kind == JOBS_LOST || st->kind == JOBS_MISSING;
}

int
jobs_state_ok(const struct jobs_state *st)
{
	return st->kind == JOBS_EXITED && st->code == 0;
}

int
jobs_state_known(const struct jobs_state *st)
{
	return st->kind == JOBS_EXITED || st->kind == JOBS_KILLED;
}

void
jobs_state_merge(struct jobs_state *st, const struct jobs_state *answer)
{
	if (jobs_state_known(st) &&
	    (answer == NULL || answer->kind == JOBS_UNKNOWN ||
	        answer->kind == JOBS_LOST || answer->kind == JOBS_MISSING))
		return;
	if (answer == NULL) {
		st->kind = JOBS_LOST;
		return;
	}
	*st = *answer;
}

char *
jobs_store_dir(void)
{
	const char *x;

	if ((x = getenv("XDG_STATE_HOME")) != NULL && *x == '/')
		return xasprintf("%s/tpuctl/jobs", x);
	if ((x = getenv("HOME")) == NULL || *x == '\0')
		x = "/tmp";
	return xasprintf("%s/.local/state/tpuctl/jobs", x);
}

char *
jobs_local_dir(const char *name)
{
	char *d = jobs_store_dir(), *p = xasprintf("%s/%s", d, name);

	free(d);
	return p;
}

char *
jobs_local_log(const char *name, int slice, int worker, int stream)
{
	char *d = jobs_local_dir(name);
	char *p = xasprintf(
	    "%s/s%d-w%d.%s", d, slice, worker, stream == 2 ? "err" : "out");

	free(d);
	return p;
}

static cJSON *
str_array(char *const *v, size_t n)
{
	cJSON *a = cJSON_CreateArray();
	size_t i;

	for (i = 0; i < n; i++)
		cJSON_AddItemToArray(a, cJSON_CreateString(v[i]));
	return a;
}

cJSON *
jobs_record(const struct jobs_spec *s, const struct jobs_state *states)
{
	cJSON *o = cJSON_CreateObject();
	size_t i, n = (size_t)s->nslices * (size_t)s->nworkers;

	cJSON_AddStringToObject(o, "name", s->name);
	cJSON_AddStringToObject(o, "slice", s->slice != NULL ? s->slice : "");
	cJSON_AddStringToObject(o, "zone", s->zone != NULL ? s->zone : "");
	cJSON_AddNumberToObject(o, "slices", s->nslices);
	cJSON_AddNumberToObject(o, "workers", s->nworkers);
	if (s->nodes != NULL)
		cJSON_AddItemToObject(
		    o, "nodes", str_array(s->nodes, (size_t)s->nslices));
	cJSON_AddStringToObject(
	    o, "command", s->command != NULL ? s->command : "");
	cJSON_AddItemToObject(o, "env", str_array(s->env, s->nenv));
	if (s->workdir_hash != NULL)
		cJSON_AddStringToObject(o, "workdirHash", s->workdir_hash);
	if (s->stage_url != NULL)
		cJSON_AddStringToObject(o, "stageUrl", s->stage_url);
	if (s->log_url != NULL)
		cJSON_AddStringToObject(o, "logUrl", s->log_url);
	cJSON_AddNumberToObject(o, "start", (double)s->start);
	if (s->restart_count > 0)
		cJSON_AddNumberToObject(o, "restarts", s->restart_count);
	if (s->submitted)
		cJSON_AddBoolToObject(o, "submitted", 1);
	if (states != NULL) {
		cJSON *a = cJSON_AddArrayToObject(o, "states");
		time_t end = 0;

		for (i = 0; i < n; i++) {
			char b[64];
			cJSON *w = cJSON_CreateObject();

			cJSON_AddStringToObject(w, "state",
			    jobs_state_str(&states[i], b, sizeof b));
			if (states[i].end > 0)
				cJSON_AddNumberToObject(
				    w, "end", (double)states[i].end);
			if (states[i].end > end)
				end = states[i].end;
			cJSON_AddItemToArray(a, w);
		}
		if (end > 0)
			cJSON_AddNumberToObject(o, "end", (double)end);
	}
	return o;
}

static int
get_int(const cJSON *o, const char *k, int lo, int hi, int *v)
{
	const cJSON *x = cJSON_GetObjectItemCaseSensitive(o, k);

	if (!cJSON_IsNumber(x) || x->valuedouble < lo || x->valuedouble > hi)
		return -1;
	*v = (int)x->valuedouble;
	return 0;
}

/* A recorded Unix time; 0 when missing or out of range. */
static time_t
get_time(const cJSON *x)
{
	if (!cJSON_IsNumber(x) || !(x->valuedouble >= 0) ||
	    x->valuedouble > 1e12)
		return 0;
	return (time_t)x->valuedouble;
}

static char *
get_str(const cJSON *o, const char *k)
{
	const cJSON *x = cJSON_GetObjectItemCaseSensitive(o, k);

	return cJSON_IsString(x) ? xstrdup(x->valuestring) : NULL;
}

int
jobs_record_parse(const cJSON *o, struct jobs_spec *s,
    struct jobs_state **states, struct tpu_err *err)
{
	const cJSON *a, *x;
	size_t n, i;

	jobs_spec_init(s);
	*states = NULL;
	if (!cJSON_IsObject(o))
		return tpu_error(err, TPU_E_API, "job record: not an object");
	s->name = get_str(o, "name");
	s->slice = get_str(o, "slice");
	s->zone = get_str(o, "zone");
	s->command = get_str(o, "command");
	s->workdir_hash = get_str(o, "workdirHash");
	s->stage_url = get_str(o, "stageUrl");
	s->log_url = get_str(o, "logUrl");
	if (s->name == NULL || s->slice == NULL || s->zone == NULL ||
	    get_int(o, "slices", 1, 4096, &s->nslices) != 0 ||
	    get_int(o, "workers", 1, 4096, &s->nworkers) != 0) {
		jobs_spec_release(s);
		return tpu_error(err, TPU_E_API,
		    "job record: name, slice, zone, slices or workers missing");
	}
	s->start = get_time(cJSON_GetObjectItemCaseSensitive(o, "start"));
	{
		const cJSON *r =
		    cJSON_GetObjectItemCaseSensitive(o, "restarts");

		if (cJSON_IsNumber(r) && r->valuedouble >= 0 &&
		    r->valuedouble <= 1000)
			s->restart_count = (int)r->valuedouble;
	}
	s->submitted =
	    cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(o, "submitted"));
	a = cJSON_GetObjectItemCaseSensitive(o, "nodes");
	if (cJSON_IsArray(a) && cJSON_GetArraySize(a) == s->nslices) {
		s->nodes = xcalloc((size_t)s->nslices, sizeof *s->nodes);
		for (i = 0; i < (size_t)s->nslices; i++) {
			x = cJSON_GetArrayItem(a, (int)i);
			s->nodes[i] =
			    xstrdup(cJSON_IsString(x) ? x->valuestring : "");
		}
	}
	a = cJSON_GetObjectItemCaseSensitive(o, "env");
	cJSON_ArrayForEach(x, a)
	{
		if (cJSON_IsString(x)) {
			s->env =
			    xreallocarray(s->env, s->nenv + 1, sizeof *s->env);
			s->env[s->nenv++] = xstrdup(x->valuestring);
		}
	}
	n = (size_t)s->nslices * (size_t)s->nworkers;
	a = cJSON_GetObjectItemCaseSensitive(o, "states");
	if (cJSON_IsArray(a) && (size_t)cJSON_GetArraySize(a) == n) {
		*states = xcalloc(n, sizeof **states);
		for (i = 0; i < n; i++) {
			const cJSON *w = cJSON_GetArrayItem(a, (int)i);
			const cJSON *st =
			    cJSON_GetObjectItemCaseSensitive(w, "state");
			const cJSON *e =
			    cJSON_GetObjectItemCaseSensitive(w, "end");

			if (cJSON_IsString(st))
				jobs_state_parse(
				    st->valuestring, &(*states)[i]);
			if (cJSON_IsNumber(e))
				(*states)[i].end = get_time(e);
		}
	}
	return 0;
}

static int
node_lost_state(const char *state)
{
	return state == NULL || strcmp(state, "PREEMPTED") == 0 ||
	       strcmp(state, "TERMINATED") == 0;
}

enum jobs_restart
jobs_restart_decide(const struct jobs_restart_in *in, char *cause, size_t n)
{
	size_t i, nbad = 0, first = 0;
	int want = 0;

	for (i = 0; i < in->n; i++) {
		const struct jobs_state *st = &in->states[i];

		if (st->kind == JOBS_MISSING)
			continue; /* not part of the job */
		if (jobs_state_ok(st))
			continue;
		if (nbad++ == 0)
			first = i;
	}
	if (nbad == 0)
		return JOBS_RESTART_NONE;
	if (node_lost_state(in->node_state)) {
		if (in->node_state == NULL)
			snprintf(cause, n, "node %s is gone", in->node);
		else
			snprintf(cause, n, "node %s is %s", in->node,
			    in->node_state);
		want = 1;
	} else if (in->on_failure) {
		char w[32];

		snprintf(cause, n, "worker %zu %s (--restart-on-failure)",
		    first, jobs_state_str(&in->states[first], w, sizeof w));
		want = 1;
	}
	if (!want)
		return JOBS_RESTART_NONE;
	if (in->restarts >= in->max_restarts)
		return JOBS_RESTART_EXHAUSTED;
	return in->on_failure && !node_lost_state(in->node_state)
	           ? JOBS_RESTART_RERUN
	           : JOBS_RESTART_RECREATE;
}

static const char *const recreate_keys[] = {
	"description",
	"runtimeVersion",
	"networkConfig",
	"networkConfigs",
	"serviceAccount",
	"schedulingConfig",
	"metadata",
	"tags",
	"dataDisks",
	"shieldedInstanceConfig",
	NULL,
};

cJSON *
jobs_recreate_body(const cJSON *node, const char *run_label)
{
	cJSON *b = cJSON_CreateObject(), *labels;
	const cJSON *v, *l;
	size_t i;

	v = cJSON_GetObjectItemCaseSensitive(node, "acceleratorType");
	if (cJSON_IsString(v) && *v->valuestring != '\0')
		cJSON_AddStringToObject(b, "acceleratorType", v->valuestring);
	else if ((v = cJSON_GetObjectItemCaseSensitive(
	              node, "acceleratorConfig")) != NULL)
		cJSON_AddItemToObject(
		    b, "acceleratorConfig", cJSON_Duplicate(v, 1));
	for (i = 0; recreate_keys[i] != NULL; i++)
		if ((v = cJSON_GetObjectItemCaseSensitive(
		         node, recreate_keys[i])) != NULL)
			cJSON_AddItemToObject(
			    b, recreate_keys[i], cJSON_Duplicate(v, 1));
	labels = cJSON_AddObjectToObject(b, "labels");
	l = cJSON_GetObjectItemCaseSensitive(node, "labels");
	cJSON_ArrayForEach(v, l)
	{
		if (run_label != NULL && strcmp(v->string, run_label) == 0)
			continue;
		cJSON_AddItemToObject(labels, v->string, cJSON_Duplicate(v, 1));
	}
	if (cJSON_GetArraySize(labels) == 0)
		cJSON_DeleteItemFromObject(b, "labels");
	return b;
}
