/*
 * The tpuctl stand-in of tests/e2e/run.sh's wrapper modes (E2E_WRAP=
 * valgrind|fiu, make check-deep: RELIABILITY.md G2, G5, S12).  lib.sh
 * points $TPUCTL here, so that every tpuctl invocation of every test runs
 * the real binary (E2E_WRAP_REAL) under valgrind's memcheck or under
 * fiu-run's random POSIX I/O failures, with a seed of its own, and is
 * judged:
 *   valgrind  a memcheck error (invalid access, uninitialised value,
 *             definite or indirect leak) in tpuctl or a process it forked
 *             without exec, read from valgrind's logs: the exit status
 *             the test sees stays tpuctl's own;
 *   fiu       a crash (death by SIGSEGV, SIGBUS, SIGABRT, SIGFPE, SIGILL,
 *             SIGSYS or SIGTRAP), or an exit status outside DESIGN.md's
 *             contract (0-9, 124, 130, 141, 143; any for ssh, which
 *             passes the remote command's status on);
 *             and a temp file (lib.sh's left_behind names: *.tpuctl-tmp,
 *             *.tmp-XXXXXXXXXXXX) under the test's scratch dir
 *             (E2E_WRAP_SCRATCH) that was not there before and is there
 *             after the invocation, when no other invocation of the test
 *             ran beside it (whose temp it could be);
 *   both      a hang: still running after E2E_WRAP_BOUND seconds (0: no
 *             bound), then killed.
 * Each invocation appends a line "TEST N" to E2E_WRAP_DIR/invocations,
 * each bad one a line "TEST N seed=S WHAT: ARGV" to E2E_WRAP_DIR/bad
 * (the valgrind log kept as E2E_WRAP_DIR/vg.TEST.N.PID).  The wrapper
 * then ends as tpuctl did (same exit status, or the same signal).
 * Signals sent to the wrapper (INT, TERM, HUP, QUIT, USR1, USR2) are
 * passed on; tpuctl gets SIGKILL when the wrapper dies.  Run under a
 * test's own LD_PRELOAD tool (valgrind, fiu-run, a malloc failer: t271,
 * t272, t279), it runs the real binary as it is, unjudged.
 */
#define _GNU_SOURCE
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

static volatile sig_atomic_t child = 0;
static volatile sig_atomic_t hung = 0;

static void
pass_on(int sig)
{
	if (child > 0)
		kill(child, sig);
}

static void
on_alarm(int sig)
{
	(void)sig;
	hung = 1;
	if (child > 0)
		kill(child, SIGKILL);
}

static const char *
env_or(const char *name, const char *def)
{
	const char *v = getenv(name);

	return v != NULL && *v != '\0' ? v : def;
}

/* next_number: this test's next invocation number (1, 2, ...), kept in
 * DIR/n.TEST under a lock: invocations of one test may run at once. */
static unsigned long
next_number(const char *dir, const char *test)
{
	char path[4096], buf[32];
	unsigned long n = 0;
	ssize_t k;
	int fd;

	snprintf(path, sizeof(path), "%s/n.%s", dir, test);
	fd = open(path, O_RDWR | O_CREAT, 0600);
	if (fd < 0)
		return 0;
	if (flock(fd, LOCK_EX) == 0) {
		k = read(fd, buf, sizeof(buf) - 1);
		if (k > 0) {
			buf[k] = '\0';
			n = strtoul(buf, NULL, 10);
		}
		n++;
		k = snprintf(buf, sizeof(buf), "%lu\n", n);
		if (lseek(fd, 0, SEEK_SET) == 0 && ftruncate(fd, 0) == 0 &&
		    write(fd, buf, (size_t)k) != k)
			n = 0;
	}
	close(fd);
	return n;
}

/* append: one line to DIR/NAME, in one write (O_APPEND). */
static void
append(const char *dir, const char *name, const char *line)
{
	char path[4096];
	size_t len = strlen(line);
	int fd;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	fd = open(path, O_WRONLY | O_APPEND | O_CREAT, 0600);
	if (fd < 0)
		return;
	if (write(fd, line, len) != (ssize_t)len)
		fprintf(stderr, "e2e-wrap: cannot write %s\n", path);
	close(fd);
}

/* memcheck_errors: the errors valgrind's log PATH reports; -1 when it
 * holds no summary (the process exec'd another program or was killed)
 * and no error record. */
static long
memcheck_errors(const char *path)
{
	static const char *const records[] = {
		"Invalid read",
		"Invalid write",
		"Invalid free",
		"Mismatched free",
		"Conditional jump or move depends on uninitialised",
		"Use of uninitialised value",
		"Syscall param",
		"Source and destination overlap",
		"definitely lost in loss record",
		"indirectly lost in loss record",
	};
	char line[4096];
	long total = -1, seen = 0, n;
	const char *p;
	size_t i;
	FILE *f = fopen(path, "r");

	if (f == NULL)
		return -1;
	while (fgets(line, sizeof(line), f) != NULL) {
		p = strstr(line, "ERROR SUMMARY: ");
		if (p != NULL) {
			n = strtol(p + strlen("ERROR SUMMARY: "), NULL, 10);
			total = total < 0 ? n : total + n;
			continue;
		}
		for (i = 0; i < sizeof(records) / sizeof(records[0]); i++)
			if (strstr(line, records[i]) != NULL)
				seen++;
	}
	fclose(f);
	if (total < 0)
		return seen > 0 ? seen : -1;
	return total > seen ? total : seen;
}

/* vg_check: sum the errors of the logs DIR/vg.TEST.N.* (one per process:
 * %p), remove the clean ones; WHAT gets "memcheck errors=E" when some. */
static long
vg_check(const char *dir, const char *prefix)
{
	char path[4096];
	struct dirent *e;
	long sum = 0, n;
	DIR *d = opendir(dir);

	if (d == NULL)
		return 0;
	while ((e = readdir(d)) != NULL) {
		if (strncmp(e->d_name, prefix, strlen(prefix)) != 0)
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
		n = memcheck_errors(path);
		if (n > 0)
			sum += n;
		else
			unlink(path);
	}
	closedir(d);
	return sum;
}

/* The temp files of the test's scratch dir (E2E_WRAP_SCRATCH), named as
 * lib.sh's left_behind counts them: *.tpuctl-tmp, *.tmp- and 12 hex
 * digits; the emulator's GCS store is not looked at. */
static char **temps;
static size_t ntemps, captemps;
static const char *scratch_gcs;

static int
is_temp(const char *name)
{
	size_t n = strlen(name), i;
	const char *t = ".tpuctl-tmp";

	if (n >= strlen(t) && strcmp(name + n - strlen(t), t) == 0)
		return 1;
	if (n < 17 || strncmp(name + n - 17, ".tmp-", 5) != 0)
		return 0;
	for (i = n - 12; i < n; i++)
		if (!isxdigit((unsigned char)name[i]))
			return 0;
	return 1;
}

static int
collect(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	if (flag == FTW_D && strcmp(path, scratch_gcs) == 0)
		return FTW_SKIP_SUBTREE;
	if (flag != FTW_F || !is_temp(path + ftw->base))
		return FTW_CONTINUE;
	if (ntemps == captemps) {
		size_t cap = captemps ? captemps * 2 : 16;
		char **p = realloc(temps, cap * sizeof(*p));

		if (p == NULL)
			return FTW_STOP;
		temps = p;
		captemps = cap;
	}
	temps[ntemps] = strdup(path);
	if (temps[ntemps] != NULL)
		ntemps++;
	return FTW_CONTINUE;
}

/* list_temps: the temps under ROOT now, sorted, in *LIST (*N of them). */
static void
list_temps(const char *root, char ***list, size_t *n)
{
	static char gcs[4200];

	snprintf(gcs, sizeof(gcs), "%s/emu/gcs", root);
	scratch_gcs = gcs;
	temps = NULL;
	ntemps = captemps = 0;
	nftw(root, collect, 32, FTW_PHYS | FTW_ACTIONRETVAL);
	*list = temps;
	*n = ntemps;
}

static int
listed(char **list, size_t n, const char *path)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (strcmp(list[i], path) == 0)
			return 1;
	return 0;
}

/* running: count this invocation in (IN) or out of DIR/run.TEST, which
 * holds "RUNNING STARTS"; returns the starts so far.  *ALONE: in, whether
 * none ran; out, whether none ran at any time beside this one (START:
 * what the count in returned). */
static unsigned long
running(
    const char *dir, const char *test, int in, unsigned long start, int *alone)
{
	char path[4096], buf[64];
	unsigned long r = 0, s = 0;
	ssize_t k;
	int fd;

	snprintf(path, sizeof(path), "%s/run.%s", dir, test);
	fd = open(path, O_RDWR | O_CREAT, 0600);
	if (fd < 0)
		return 0;
	if (flock(fd, LOCK_EX) == 0) {
		k = read(fd, buf, sizeof(buf) - 1);
		if (k > 0) {
			buf[k] = '\0';
			if (sscanf(buf, "%lu %lu", &r, &s) != 2)
				r = s = 0;
		}
		if (in) {
			*alone = r == 0;
			r++;
			s++;
		} else {
			if (r > 0)
				r--;
			*alone = *alone && r == 0 && s == start;
		}
		k = snprintf(buf, sizeof(buf), "%lu %lu\n", r, s);
		if (lseek(fd, 0, SEEK_SET) == 0 && ftruncate(fd, 0) == 0 &&
		    write(fd, buf, (size_t)k) != k)
			*alone = 0;
	}
	close(fd);
	return s;
}

static int
contract_code(int code, int passthrough)
{
	if (passthrough)
		return 1;
	return (code >= 0 && code <= 9) || code == 124 || code == 130 ||
	       code == 141 || code == 143;
}

static int
crash_signal(int sig)
{
	return sig == SIGSEGV || sig == SIGBUS || sig == SIGABRT ||
	       sig == SIGFPE || sig == SIGILL || sig == SIGSYS ||
	       sig == SIGTRAP;
}

int
main(int argc, char **argv)
{
	const char *real = getenv("E2E_WRAP_REAL");
	const char *mode = env_or("E2E_WRAP_MODE", "");
	const char *dir = env_or("E2E_WRAP_DIR", "");
	const char *test = env_or("E2E_WRAP_TEST", "unknown");
	const char *pre = getenv("LD_PRELOAD");
	const char *scratch = getenv("E2E_WRAP_SCRATCH");
	char **before = NULL;
	size_t nbefore = 0;
	unsigned long started = 0;
	int fiu, alone = 0;
	unsigned long n, seed;
	unsigned bound =
	    (unsigned)strtoul(env_or("E2E_WRAP_BOUND", "0"), NULL, 10);
	char what[4800] = "", seedstr[32], vglog[4200], prefix[300], line[8192];
	char **args;
	int passthrough = 0, status, sig, a, i, k;
	size_t off;
	static const int passed[] = { SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1,
		SIGUSR2 };
	struct sigaction sa;
	pid_t pid;

	if (real == NULL || *real == '\0') {
		fprintf(stderr, "e2e-wrap: E2E_WRAP_REAL is not set\n");
		return 1;
	}
	if ((pre != NULL && *pre != '\0') || *dir == '\0' ||
	    (strcmp(mode, "valgrind") != 0 && strcmp(mode, "fiu") != 0)) {
		/* a test's own tool wraps this run, or no mode */
		execv(real, argv);
		fprintf(stderr, "e2e-wrap: %s: %s\n", real, strerror(errno));
		return 127;
	}
	for (i = 1; i < argc; i++)
		if (strcmp(argv[i], "ssh") == 0)
			passthrough = 1;
	n = next_number(dir, test);
	seed = strtoul(env_or("E2E_WRAP_SEED", "1"), NULL, 10) * 100003UL +
	       n * 7919UL;
	for (i = 0; test[i] != '\0'; i++)
		seed = seed * 31 + (unsigned char)test[i];
	seed %= 2147483647UL;
	snprintf(seedstr, sizeof(seedstr), "%lu", seed);
	snprintf(line, sizeof(line), "%s %lu\n", test, n);
	append(dir, "invocations", line);

	args = calloc((size_t)argc + 16, sizeof(*args));
	if (args == NULL)
		return 1;
	a = 0;
	if (strcmp(mode, "fiu") == 0) {
		args[a++] = (char *)"fiu-run";
		args[a++] = (char *)"-x";
		args[a++] = (char *)"-f";
		args[a++] = (char *)"";
		args[a++] = (char *)"-c";
		args[a++] =
		    (char *)env_or("E2E_WRAP_FIU", "enable_random name=posix/"
		                                   "io/*,probability=0.01");
	} else {
		snprintf(prefix, sizeof(prefix), "vg.%s.%lu.", test, n);
		snprintf(
		    vglog, sizeof(vglog), "--log-file=%s/%s%%p", dir, prefix);
		args[a++] = (char *)"valgrind";
		args[a++] = (char *)"--leak-check=full";
		args[a++] = (char *)"--show-leak-kinds=definite,indirect";
		args[a++] = (char *)"--errors-for-leak-kinds=definite,indirect";
		args[a++] = (char *)"--num-callers=30";
		args[a++] = vglog;
		if (getenv("E2E_WRAP_SUPP") != NULL) {
			static char supp[4200];

			snprintf(supp, sizeof(supp), "--suppressions=%s",
			    getenv("E2E_WRAP_SUPP"));
			args[a++] = supp;
		}
	}
	args[a++] = (char *)real;
	for (i = 1; i < argc; i++)
		args[a++] = argv[i];
	args[a] = NULL;

	memset(&sa, 0, sizeof(sa));
	sigemptyset(&sa.sa_mask);
	for (i = 0; i < (int)(sizeof(passed) / sizeof(passed[0])); i++) {
		struct sigaction old;

		/* one ignored (a background job's INT, QUIT) stays so */
		if (sigaction(passed[i], NULL, &old) == 0 &&
		    old.sa_handler == SIG_IGN)
			continue;
		sa.sa_handler = pass_on;
		sigaction(passed[i], &sa, NULL);
	}
	sa.sa_handler = on_alarm;
	sigaction(SIGALRM, &sa, NULL);

	fiu = strcmp(mode, "fiu") == 0 && scratch != NULL && *scratch != '\0';
	if (fiu) {
		started = running(dir, test, 1, 0, &alone);
		list_temps(scratch, &before, &nbefore);
	}
	pid = fork();
	if (pid < 0) {
		perror("e2e-wrap: fork");
		return 1;
	}
	if (pid == 0) {
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		if (strcmp(mode, "fiu") == 0)
			setenv("FIU_PRNG_SEED", seedstr, 1);
		execvp(args[0], args);
		fprintf(stderr, "e2e-wrap: %s: %s\n", args[0], strerror(errno));
		_exit(127);
	}
	child = pid;
	if (bound > 0)
		alarm(bound);
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR)
			return 1;
	alarm(0);
	child = 0;

	if (hung)
		snprintf(what, sizeof(what), "hang: killed after %u s", bound);
	else if (WIFSIGNALED(status) && crash_signal(WTERMSIG(status)))
		snprintf(what, sizeof(what), "crash: signal %d (%s)",
		    WTERMSIG(status), strsignal(WTERMSIG(status)));
	else if (strcmp(mode, "fiu") == 0 && WIFEXITED(status) &&
	         !contract_code(WEXITSTATUS(status), passthrough))
		snprintf(what, sizeof(what), "exit %d: not in the contract",
		    WEXITSTATUS(status));
	if (fiu) {
		char **after;
		size_t nafter, j;

		running(dir, test, 0, started, &alone);
		list_temps(scratch, &after, &nafter);
		for (j = 0; alone && what[0] == '\0' && j < nafter; j++)
			if (!listed(before, nbefore, after[j]))
				snprintf(what, sizeof(what),
				    "temp file left: %s", after[j]);
	}
	if (strcmp(mode, "valgrind") == 0) {
		long errs = vg_check(dir, prefix);

		if (errs > 0 && what[0] == '\0')
			snprintf(what, sizeof(what),
			    "memcheck: %ld errors (log %s/%s*)", errs, dir,
			    prefix);
	}
	if (what[0] != '\0') {
		k = snprintf(line, sizeof(line), "%s %lu seed=%s %s:", test, n,
		    strcmp(mode, "fiu") == 0 ? seedstr : "-", what);
		off = k > 0 && (size_t)k < sizeof(line) ? (size_t)k : 0;
		for (i = 1; i < argc && off + 2 < sizeof(line); i++) {
			k = snprintf(
			    line + off, sizeof(line) - off, " %s", argv[i]);
			if (k < 0)
				break;
			off += (size_t)k;
			if (off >= sizeof(line))
				off = sizeof(line) - 2;
		}
		snprintf(line + off, sizeof(line) - off, "\n");
		/* one line, whatever the arguments held */
		for (i = 0; line[i] != '\0' && line[i + 1] != '\0'; i++)
			if (line[i] == '\n' || line[i] == '\r')
				line[i] = ' ';
		append(dir, "bad", line);
	}
	if (WIFEXITED(status))
		return WEXITSTATUS(status);
	sig = WTERMSIG(status);
	if (crash_signal(sig)) {
		struct rlimit nocore = { 0, 0 };

		setrlimit(RLIMIT_CORE, &nocore);
	}
	signal(sig, SIG_DFL);
	raise(sig);
	return 128 + sig;
}
