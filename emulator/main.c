/*
 * tpuctl-emulator's command line: "serve" runs the local Cloud TPU, Cloud
 * Storage, OAuth and metadata server in the foreground until SIGTERM or
 * SIGINT; "env" prints the environment that points clients at it;
 * "inject", "faults" and "event" drive the control endpoints of a running
 * server found through its state dir.
 */
#include <sys/file.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/types.h>

#include <arpa/inet.h>
#include <netinet/in.h>

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cjson/cJSON.h>
#include <curl/curl.h>

#include "buf.h"
#include "core.h"
#include "emu.h"
#include "fleet.h"
#include "util.h"
#include "version.h"
#include "xmalloc.h"

#define PROG "tpuctl-emulator"

static const char usage_text[] =
    "usage: " PROG " serve --state-dir dir [--tls] [--listen addr:port]\n"
    "           [--project project] [--set key=value] [--zone zone]\n"
    "       " PROG " env --state-dir dir\n"
    "       " PROG " inject --state-dir dir [--count n] [--method method]\n"
    "           [--path prefix] spec\n"
    "       " PROG " faults --state-dir dir [--clear]\n"
    "       " PROG " event --state-dir dir [--clear] [--mode drop|silent]\n"
    "           [--node name] [--ongoing] [--type symptom] [--worker n]\n"
    "           [--zone zone] event\n";

static int
usage(void)
{
	fputs(usage_text, stderr);
	return 2;
}

static void errx_msg(const char *fmt, ...)
    __attribute__((format(printf, 1, 2)));

static void
errx_msg(const char *fmt, ...)
{
	va_list ap;

	fputs(PROG ": ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

/* ---- serve ---- */

static int sig_pipe[2] = { -1, -1 };

static void
on_signal(int sig)
{
	unsigned char b = (unsigned char)sig;
	int saved = errno;

	if (write(sig_pipe[1], &b, 1) < 0) {
		/* nothing to do: the pipe is full, a stop is pending */
	}
	errno = saved;
}

/*
 * "127.0.0.1:8080", "[::1]:0", "localhost:0", ":0" or "8080": a loopback
 * socket address.  -1 with errbuf set for anything else.
 */
static int
parse_listen(const char *s, struct sockaddr_storage *ss, socklen_t *len,
    char *errbuf, size_t errlen)
{
	char host[64];
	const char *colon, *port, *errstr;
	long long p;
	struct sockaddr_in *in4 = (struct sockaddr_in *)ss;
	struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)ss;

	memset(ss, 0, sizeof(*ss));
	if (s[0] == '[') {
		colon = strstr(s, "]:");
		if (colon == NULL || (size_t)(colon - s - 1) >= sizeof(host))
			goto bad;
		snprintf(
		    host, sizeof(host), "%.*s", (int)(colon - s - 1), s + 1);
		port = colon + 2;
	} else if ((colon = strrchr(s, ':')) != NULL) {
		if ((size_t)(colon - s) >= sizeof(host))
			goto bad;
		snprintf(host, sizeof(host), "%.*s", (int)(colon - s), s);
		port = colon + 1;
	} else {
		snprintf(host, sizeof(host), "127.0.0.1");
		port = s;
	}
	p = tpu_strtonum(port, 0, 65535, &errstr);
	if (errstr != NULL)
		goto bad;
	if (host[0] == '\0' || strcmp(host, "localhost") == 0)
		snprintf(host, sizeof(host), "127.0.0.1");
	if (inet_pton(AF_INET, host, &in4->sin_addr) == 1) {
		if ((ntohl(in4->sin_addr.s_addr) >> 24) != 127)
			goto nonlocal;
		in4->sin_family = AF_INET;
		in4->sin_port = htons((uint16_t)p);
		*len = sizeof(*in4);
		return 0;
	}
	if (inet_pton(AF_INET6, host, &in6->sin6_addr) == 1) {
		if (!IN6_IS_ADDR_LOOPBACK(&in6->sin6_addr))
			goto nonlocal;
		in6->sin6_family = AF_INET6;
		in6->sin6_port = htons((uint16_t)p);
		*len = sizeof(*in6);
		return 0;
	}
bad:
	snprintf(errbuf, errlen,
	    "invalid --listen '%s': expected addr:port with a loopback "
	    "address (127.0.0.0/8 or [::1]) and a port 0-65535",
	    s);
	return -1;
nonlocal:
	snprintf(errbuf, errlen,
	    "refusing --listen '%s': only loopback addresses (127.0.0.0/8, "
	    "::1) are allowed",
	    s);
	return -1;
}

/* Bind and listen on ss; "addr:port" of the result into hp. */
static int
listen_on(struct sockaddr_storage *ss, socklen_t sslen, char *hp, size_t len)
{
	char host[INET6_ADDRSTRLEN];
	int fd, one = 1, port, saved;

	fd = socket(ss->ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -1;
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (bind(fd, (struct sockaddr *)ss, sslen) != 0 ||
	    listen(fd, 128) != 0 ||
	    getsockname(fd, (struct sockaddr *)ss, &sslen) != 0) {
		saved = errno;
		close(fd);
		errno = saved;
		return -1;
	}
	if (ss->ss_family == AF_INET) {
		inet_ntop(AF_INET, &((struct sockaddr_in *)ss)->sin_addr, host,
		    sizeof(host));
		port = ntohs(((struct sockaddr_in *)ss)->sin_port);
		snprintf(hp, len, "%s:%d", host, port);
	} else {
		inet_ntop(AF_INET6, &((struct sockaddr_in6 *)ss)->sin6_addr,
		    host, sizeof(host));
		port = ntohs(((struct sockaddr_in6 *)ss)->sin6_port);
		snprintf(hp, len, "[%s]:%d", host, port);
	}
	return fd;
}

static void
ss_port_zero(struct sockaddr_storage *ss)
{
	if (ss->ss_family == AF_INET)
		((struct sockaddr_in *)ss)->sin_port = 0;
	else
		((struct sockaddr_in6 *)ss)->sin6_port = 0;
}

static int
valid_name(const char *s, size_t min, size_t max)
{
	size_t n = strlen(s), i;

	if (n < min || n > max || s[0] < 'a' || s[0] > 'z' || s[n - 1] == '-')
		return 0;
	for (i = 0; i < n; i++)
		if (!((s[i] >= 'a' && s[i] <= 'z') ||
		        (s[i] >= '0' && s[i] <= '9') || s[i] == '-'))
			return 0;
	return 1;
}

static int
mkdir_p(const char *path)
{
	char *p = xstrdup(path), *s;
	int rc = 0;

	for (s = p + 1; *s != '\0'; s++) {
		if (*s != '/')
			continue;
		*s = '\0';
		if (mkdir(p, 0700) != 0 && errno != EEXIST)
			rc = -1;
		*s = '/';
	}
	if (mkdir(p, 0700) != 0 && errno != EEXIST)
		rc = -1;
	free(p);
	return rc;
}

static int
write_env(struct emu *e)
{
	char *path = emu_state_path(e, "env"), *text = NULL;
	size_t len = 0;
	FILE *fp;
	int rc = -1;

	fp = open_memstream(&text, &len);
	if (fp == NULL)
		goto out;
	emu_env_write(e, fp);
	if (fclose(fp) != 0)
		goto out;
	rc = emu_write_file(path, text, len, 0644);
out:
	free(text);
	free(path);
	return rc;
}

static int
write_pid(struct emu *e)
{
	char *path = emu_state_path(e, "emulator.pid");
	char pid[32];
	int rc;

	snprintf(pid, sizeof(pid), "%ld\n", (long)getpid());
	rc = emu_write_file(path, pid, strlen(pid), 0644);
	free(path);
	return rc;
}

static void
remove_state_file(struct emu *e, const char *name)
{
	char *path = emu_state_path(e, "%s", name);

	unlink(path);
	free(path);
}

/*
 * STATE/listen keeps the addresses of the last run ("api HOST:PORT",
 * "metadata HOST:PORT" under --tls), so that a restart on the same state
 * dir serves on the same ports and an env file loaded in other shells
 * stays right.  The value of the line for key into out; 0 or -1.
 */
static int
listen_saved(struct emu *e, const char *key, char *out, size_t len)
{
	char *path = emu_state_path(e, "listen");
	char *text = emu_read_file(path, NULL), *line, *nl;
	size_t kl = strlen(key);
	int rc = -1;

	for (line = text; line != NULL && *line != '\0'; line = nl) {
		nl = strchr(line, '\n');
		if (nl != NULL)
			*nl++ = '\0';
		if (strncmp(line, key, kl) == 0 && line[kl] == ' ' &&
		    strlen(line + kl + 1) < len) {
			snprintf(out, len, "%s", line + kl + 1);
			rc = 0;
			break;
		}
	}
	free(text);
	free(path);
	return rc;
}

static int
listen_save(struct emu *e, const char *api, const char *md)
{
	char *path = emu_state_path(e, "listen");
	char *text =
	    xasprintf("api %s\n%s%s%s", api, md != NULL ? "metadata " : "",
	        md != NULL ? md : "", md != NULL ? "\n" : "");
	int rc = emu_write_file(path, text, strlen(text), 0644);

	free(text);
	free(path);
	return rc;
}

static int
cmd_serve(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "help", no_argument, NULL, 'h' },
		{ "listen", required_argument, NULL, 'l' },
		{ "project", required_argument, NULL, 'p' },
		{ "set", required_argument, NULL, 's' },
		{ "state-dir", required_argument, NULL, 'd' },
		{ "tls", no_argument, NULL, 't' },
		{ "zone", required_argument, NULL, 'z' },
		{ NULL, 0, NULL, 0 },
	};
	struct emu e;
	struct sockaddr_storage ss;
	socklen_t sslen = sizeof(struct sockaddr_in);
	struct core_server *srv = NULL, *mdsrv = NULL;
	struct sigaction sa;
	char errbuf[512], host[INET6_ADDRSTRLEN + 16], *tls_key = NULL;
	char *tls_cert = NULL, *dir = NULL, *logpath = NULL;
	const char *listen_s = "127.0.0.1:0";
	char saved_api[INET6_ADDRSTRLEN + 16], saved_md[INET6_ADDRSTRLEN + 16];
	int listen_given = 0, have_md = 0;
	size_t nopts = 0;
	int ch, fd = -1, mdfd = -1, rc = 1, inited = 0, logfd, lockfd = -1;
	char *lockpath = NULL;
	unsigned char b;

	memset(&e, 0, sizeof(e));
	pthread_mutex_init(&e.lock, NULL);
	e.opts = xcalloc(1, sizeof(char *));
	e.project = xstrdup("tpuctl-emu");
	e.zone = xstrdup("us-central2-b");
	optind = 0;
	while ((ch = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		switch (ch) {
		case 'd':
			free(dir);
			dir = xstrdup(optarg);
			break;
		case 'l':
			listen_s = optarg;
			listen_given = 1;
			break;
		case 'p':
			if (!valid_name(optarg, 6, 30)) {
				errx_msg(
				    "invalid --project '%s': use 6-30 "
				    "lowercase letters, digits or hyphens, "
				    "starting with a letter",
				    optarg);
				rc = 2;
				goto out;
			}
			free(e.project);
			e.project = xstrdup(optarg);
			break;
		case 's':
			if (strchr(optarg, '=') == NULL || optarg[0] == '=') {
				errx_msg(
				    "invalid --set '%s': expected key=value",
				    optarg);
				rc = 2;
				goto out;
			}
			e.opts =
			    xreallocarray(e.opts, nopts + 2, sizeof(char *));
			e.opts[nopts++] = xstrdup(optarg);
			e.opts[nopts] = NULL;
			break;
		case 't':
			e.tls = 1;
			break;
		case 'z':
			if (!valid_name(optarg, 3, 63) ||
			    strchr(optarg, '-') == NULL) {
				errx_msg("invalid --zone '%s': expected a zone "
				         "like us-central2-b",
				    optarg);
				rc = 2;
				goto out;
			}
			free(e.zone);
			e.zone = xstrdup(optarg);
			break;
		case 'h':
			fputs(usage_text, stdout);
			rc = 0;
			goto out;
		default:
			rc = usage();
			goto out;
		}
	}
	if (optind != argc || dir == NULL) {
		if (dir == NULL)
			errx_msg("serve: --state-dir is required");
		rc = usage();
		goto out;
	}
	if (parse_listen(listen_s, &ss, &sslen, errbuf, sizeof(errbuf)) != 0) {
		errx_msg("%s", errbuf);
		rc = 2;
		goto out;
	}
	if (mkdir_p(dir) != 0 || (e.state_dir = realpath(dir, NULL)) == NULL) {
		errx_msg(
		    "cannot create state dir '%s': %s", dir, strerror(errno));
		goto out;
	}
	lockpath = emu_state_path(&e, "lock");
	lockfd =
	    open(lockpath, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
	if (lockfd < 0 || flock(lockfd, LOCK_EX | LOCK_NB) != 0) {
		char *pid = emu_state_path(&e, "emulator.pid");
		char *txt = emu_read_file(pid, NULL);

		if (txt != NULL)
			txt[strcspn(txt, "\n")] = '\0';
		errx_msg("state dir '%s' is in use by another %s (pid %s)",
		    e.state_dir, PROG, txt != NULL ? txt : "?");
		free(txt);
		free(pid);
		goto out_nolock;
	}
	remove_state_file(&e, "env");

	/* Without --listen, the ports of the previous run (STATE/listen). */
	if (!listen_given &&
	    listen_saved(&e, "api", saved_api, sizeof(saved_api)) == 0) {
		if (parse_listen(
		        saved_api, &ss, &sslen, errbuf, sizeof(errbuf)) != 0) {
			errx_msg("'%s/listen': %s", e.state_dir, errbuf);
			goto out;
		}
		listen_s = saved_api;
		have_md = e.tls && listen_saved(&e, "metadata", saved_md,
		                       sizeof(saved_md)) == 0;
	}
	if ((fd = listen_on(&ss, sslen, host, sizeof(host))) < 0)
		goto sockerr;
	e.base_url = xasprintf("%s://%s", e.tls ? "https" : "http", host);
	if (e.tls) {
		/* Metadata clients speak plain HTTP only: a second port. */
		ss_port_zero(&ss);
		if (have_md) {
			listen_s = saved_md;
			if (parse_listen(saved_md, &ss, &sslen, errbuf,
			        sizeof(errbuf)) != 0) {
				errx_msg(
				    "'%s/listen': %s", e.state_dir, errbuf);
				goto out;
			}
		}
		if ((mdfd = listen_on(&ss, sslen, host, sizeof(host))) < 0)
			goto sockerr;
		e.metadata_host = xstrdup(host);
	}
	if (listen_save(&e, e.base_url + (e.tls ? 8 : 7), e.metadata_host) !=
	    0) {
		errx_msg("cannot write '%s/listen': %s", e.state_dir,
		    strerror(errno));
		goto out;
	}

	logpath = emu_state_path(&e, "requests.jsonl");
	logfd = open(logpath, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
	if (logfd < 0 || (e.reqlog = fdopen(logfd, "a")) == NULL) {
		errx_msg("cannot open '%s': %s", logpath, strerror(errno));
		goto out;
	}
	if (e.tls && core_tls_material(&e, &tls_key, &tls_cert, errbuf,
	                 sizeof(errbuf)) != 0) {
		errx_msg("%s", errbuf);
		goto out;
	}
	if (emu_auth_init(&e) != 0) {
		errx_msg("auth module failed to start");
		goto out;
	}
	inited = 1;
	if (fleet_init(&e) != 0) {
		errx_msg("fleet module failed to start");
		goto out;
	}
	inited = 2;
	if (tpu_init(&e) != 0) {
		errx_msg("tpu module failed to start");
		goto out;
	}
	inited = 3;
	if (gcs_init(&e) != 0) {
		errx_msg("gcs module failed to start");
		goto out;
	}
	inited = 4;
	core_faults_load(&e);

	if (pipe2(sig_pipe, O_CLOEXEC) != 0)
		goto sockerr;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);

	srv = core_server_start(
	    &e, fd, tls_key, tls_cert, 0, errbuf, sizeof(errbuf));
	if (srv == NULL) {
		errx_msg("%s", errbuf);
		goto out;
	}
	fd = -1; /* the server owns it now */
	if (mdfd >= 0) {
		mdsrv = core_server_start(
		    &e, mdfd, NULL, NULL, 1, errbuf, sizeof(errbuf));
		if (mdsrv == NULL) {
			errx_msg("%s", errbuf);
			goto out;
		}
		mdfd = -1;
	}
	fleet_google_serve(&e); /* the workers' Google API hosts */
	if (write_pid(&e) != 0 || write_env(&e) != 0) {
		errx_msg(
		    "cannot write '%s/env': %s", e.state_dir, strerror(errno));
		goto out;
	}
	fprintf(
	    stderr, PROG ": serving %s (state %s)\n", e.base_url, e.state_dir);
	for (;;) {
		ssize_t n = read(sig_pipe[0], &b, 1);

		if (n == 1 || (n < 0 && errno != EINTR))
			break;
	}
	fprintf(stderr, PROG ": stopping\n");
	rc = 0;
	goto out;
sockerr:
	if (errno == EADDRINUSE && !listen_given && listen_s != NULL &&
	    (listen_s == saved_api || listen_s == saved_md))
		errx_msg("cannot listen on '%s', the address of the previous "
		         "run on state dir '%s' (kept in its 'listen' file so "
		         "that loaded env files stay right): %s; stop what "
		         "holds it, or pass --listen 127.0.0.1:0 for a new "
		         "port",
		    listen_s, e.state_dir, strerror(errno));
	else
		errx_msg(
		    "cannot listen on '%s': %s", listen_s, strerror(errno));
out:
	if (mdsrv != NULL)
		core_server_stop(&e, mdsrv);
	if (srv != NULL)
		core_server_stop(&e, srv);
	if (inited >= 2)
		fleet_google_stop(&e);
	if (mdfd >= 0)
		close(mdfd);
	free(e.metadata_host);
	e.stopping = 1;
	if (inited >= 4)
		gcs_fini(&e);
	if (inited >= 3)
		tpu_fini(&e);
	if (inited >= 2)
		fleet_fini(&e);
	if (inited >= 1)
		emu_auth_fini(&e);
	if (e.state_dir != NULL && rc != 2 && lockfd >= 0) {
		remove_state_file(&e, "env");
		remove_state_file(&e, "emulator.pid");
	}
out_nolock:
	if (lockfd >= 0)
		close(lockfd);
	free(lockpath);
	if (fd >= 0)
		close(fd);
	if (e.reqlog != NULL)
		fclose(e.reqlog);
	xfree_secret(tls_key);
	free(tls_cert);
	free(logpath);
	free(e.faults);
	for (nopts = 0; e.opts[nopts] != NULL; nopts++)
		free(e.opts[nopts]);
	free(e.opts);
	free(e.project);
	free(e.zone);
	free(e.base_url);
	free(e.state_dir);
	free(dir);
	pthread_mutex_destroy(&e.lock);
	return rc;
}

/* ---- the client side: inject, faults, event, env ---- */

/* The value of "export NAME='value'" in DIR/env; the caller frees. */
static char *
env_value(const char *text, const char *name)
{
	const char *p = text, *v, *eol;
	struct buf b;
	size_t n = strlen(name);

	for (; p != NULL && *p != '\0'; p = eol != NULL ? eol + 1 : NULL) {
		eol = strchr(p, '\n');
		if (strncmp(p, "export ", 7) != 0 ||
		    strncmp(p + 7, name, n) != 0 || p[7 + n] != '=')
			continue;
		v = p + 8 + n;
		buf_init(&b, BUF_NOCAP);
		while (v < (eol != NULL ? eol : v + strlen(v))) {
			if (*v == '\'') {
				v++;
				while (*v != '\0' && *v != '\'' && *v != '\n')
					buf_append(&b, v++, 1);
				if (*v == '\'')
					v++;
			} else if (*v == '\\' && v[1] != '\0') {
				buf_append(&b, v + 1, 1);
				v += 2;
			} else
				buf_append(&b, v++, 1);
		}
		return buf_detach(&b, NULL);
	}
	return NULL;
}

static char *
read_env(const char *dir)
{
	char *path = xasprintf("%s/env", dir), *text;

	text = emu_read_file(path, NULL);
	if (text == NULL)
		errx_msg("cannot read '%s': %s (is the emulator running?)",
		    path, strerror(errno));
	free(path);
	return text;
}

/* error.message of a Google error reply, or NULL. */
static const char *
json_msg(const cJSON *j)
{
	const cJSON *m;

	m = cJSON_GetObjectItemCaseSensitive(
	    cJSON_GetObjectItemCaseSensitive(j, "error"), "message");
	return cJSON_IsString(m) ? m->valuestring : NULL;
}

static size_t
on_body(char *p, size_t size, size_t n, void *arg)
{
	return buf_append(arg, p, size * n) == 0 ? size * n : 0;
}

/* method path [json] against the server of DIR; prints the reply. */
static int
control_call(
    const char *dir, const char *method, const char *path, const cJSON *body)
{
	char *env = NULL, *url = NULL, *ca = NULL, *full = NULL, *json = NULL;
	char ebuf[CURL_ERROR_SIZE] = "";
	struct curl_slist *hdrs = NULL;
	struct buf out;
	CURL *h = NULL;
	long status = 0;
	int rc = 1;
	CURLcode cc;

	buf_init(&out, 16 << 20);
	if ((env = read_env(dir)) == NULL)
		goto out;
	url = env_value(env, "TPUCTL_EMULATOR_URL");
	ca = env_value(env, "TPUCTL_CA_BUNDLE");
	if (url == NULL) {
		errx_msg("'%s/env' has no TPUCTL_EMULATOR_URL", dir);
		goto out;
	}
	full = xasprintf("%s%s", url, path);
	if ((h = curl_easy_init()) == NULL)
		goto out;
	curl_easy_setopt(h, CURLOPT_URL, full);
	curl_easy_setopt(h, CURLOPT_PROTOCOLS_STR, "http,https");
	curl_easy_setopt(h, CURLOPT_NOPROXY, "*");
	curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(h, CURLOPT_TIMEOUT, 30L);
	curl_easy_setopt(h, CURLOPT_ERRORBUFFER, ebuf);
	curl_easy_setopt(h, CURLOPT_CUSTOMREQUEST, method);
	curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, on_body);
	curl_easy_setopt(h, CURLOPT_WRITEDATA, &out);
	if (ca != NULL)
		curl_easy_setopt(h, CURLOPT_CAINFO, ca);
	if (body != NULL) {
		json = cJSON_PrintUnformatted(body);
		hdrs =
		    curl_slist_append(hdrs, "Content-Type: application/json");
		curl_easy_setopt(h, CURLOPT_HTTPHEADER, hdrs);
		curl_easy_setopt(h, CURLOPT_POSTFIELDS, json);
	}
	if ((cc = curl_easy_perform(h)) != CURLE_OK) {
		errx_msg("%s %s: %s", method, full,
		    ebuf[0] != '\0' ? ebuf : curl_easy_strerror(cc));
		goto out;
	}
	curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &status);
	if (status != 200) {
		cJSON *j = cJSON_Parse(out.data);
		const char *m = json_msg(j);

		errx_msg("%s %s: HTTP %ld: %s", method, path, status,
		    m != NULL ? m : out.data);
		cJSON_Delete(j);
		rc = status == 400 ? 2 : 1;
		goto out;
	}
	fwrite(out.data, 1, out.len, stdout);
	rc = 0;
out:
	curl_easy_cleanup(h);
	curl_slist_free_all(hdrs);
	if (json != NULL)
		cJSON_free(json);
	buf_release(&out);
	free(env);
	free(url);
	free(ca);
	free(full);
	return rc;
}

/*
 * The options of the client subcommands (inject, faults, event, env):
 * one table and one parser; each subcommand names the options it takes.
 */
struct client_args {
	const char *dir, *method, *path, *node, *zone, *type, *mode;
	long long count, worker;
	int clear, ongoing;
};

/*
 * Parse argv for a client subcommand that takes the options whose short
 * codes are in allowed ('d' --state-dir and 'h' --help always) and
 * exactly nargs operands (at argv[optind]). -1 to go on, else the exit
 * status (after the usage or the help text).
 */
static int
client_parse(int argc, char **argv, const char *allowed, int nargs,
    struct client_args *a)
{
	static const struct option opts[] = {
		{ "clear", no_argument, NULL, 'c' },
		{ "count", required_argument, NULL, 'C' },
		{ "help", no_argument, NULL, 'h' },
		{ "method", required_argument, NULL, 'm' },
		{ "mode", required_argument, NULL, 'M' },
		{ "node", required_argument, NULL, 'n' },
		{ "ongoing", no_argument, NULL, 'o' },
		{ "path", required_argument, NULL, 'p' },
		{ "state-dir", required_argument, NULL, 'd' },
		{ "type", required_argument, NULL, 't' },
		{ "worker", required_argument, NULL, 'w' },
		{ "zone", required_argument, NULL, 'z' },
		{ NULL, 0, NULL, 0 },
	};
	const char *errstr;
	int ch;

	memset(a, 0, sizeof(*a));
	a->method = a->path = "";
	a->count = 1;
	a->worker = -1;
	optind = 0;
	while ((ch = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		if (ch != 'd' && ch != 'h' &&
		    (ch == '?' || strchr(allowed, ch) == NULL))
			return usage();
		switch (ch) {
		case 'c':
			a->clear = 1;
			break;
		case 'C':
			a->count =
			    tpu_strtonum(optarg, -1, 1000000000, &errstr);
			if (errstr != NULL || a->count == 0) {
				errx_msg("invalid --count '%s': expected a "
				         "positive integer, or -1 for forever",
				    optarg);
				return 2;
			}
			break;
		case 'd':
			a->dir = optarg;
			break;
		case 'm':
			a->method = optarg;
			break;
		case 'M':
			if (strcmp(optarg, "drop") != 0 &&
			    strcmp(optarg, "silent") != 0) {
				errx_msg(
				    "invalid --mode '%s': expected drop or "
				    "silent",
				    optarg);
				return 2;
			}
			a->mode = optarg;
			break;
		case 'n':
			a->node = optarg;
			break;
		case 'o':
			a->ongoing = 1;
			break;
		case 'p':
			a->path = optarg;
			break;
		case 't':
			a->type = optarg;
			break;
		case 'w':
			a->worker = tpu_strtonum(optarg, 0, 100000, &errstr);
			if (errstr != NULL) {
				errx_msg("invalid --worker '%s': expected a "
				         "worker number 0-100000",
				    optarg);
				return 2;
			}
			break;
		case 'z':
			a->zone = optarg;
			break;
		case 'h':
			fputs(usage_text, stdout);
			return 0;
		default:
			return usage();
		}
	}
	if (a->dir == NULL || optind + nargs != argc)
		return usage();
	return -1;
}

static int
cmd_inject(int argc, char **argv)
{
	struct client_args a;
	struct emu_fault_action fa;
	char errbuf[512];
	cJSON *j;
	int rc;

	if ((rc = client_parse(argc, argv, "Cmp", 1, &a)) >= 0)
		return rc;
	if (emu_fault_parse(argv[optind], &fa, errbuf, sizeof(errbuf)) != 0) {
		errx_msg("%s", errbuf);
		return 2;
	}
	j = cJSON_CreateObject();
	cJSON_AddStringToObject(j, "method", a.method);
	cJSON_AddStringToObject(j, "path", a.path);
	cJSON_AddStringToObject(j, "spec", argv[optind]);
	cJSON_AddNumberToObject(j, "count", (double)a.count);
	rc = control_call(a.dir, "POST", "/_emulator/faults", j);
	cJSON_Delete(j);
	return rc;
}

static int
cmd_faults(int argc, char **argv)
{
	struct client_args a;
	int rc;

	if ((rc = client_parse(argc, argv, "c", 0, &a)) >= 0)
		return rc;
	return control_call(
	    a.dir, a.clear ? "DELETE" : "GET", "/_emulator/faults", NULL);
}

static int
cmd_event(int argc, char **argv)
{
	static const char *const events[] = { "preempt", "terminate",
		"stockout", "maintenance", "symptom", "worker-down",
		"worker-up", "rekey", "blackhole", "ssh-cut", "reboot" };
	struct client_args a;
	size_t i;
	cJSON *j;
	int rc;

	if ((rc = client_parse(argc, argv, "cMnotwz", 1, &a)) >= 0)
		return rc;
	for (i = 0; i < nitems(events); i++)
		if (strcmp(argv[optind], events[i]) == 0)
			break;
	if (i == nitems(events)) {
		errx_msg("invalid event '%s': expected preempt, terminate, "
		         "stockout, maintenance, symptom, worker-down, "
		         "worker-up, rekey, blackhole, ssh-cut or reboot",
		    argv[optind]);
		return 2;
	}
	j = cJSON_CreateObject();
	cJSON_AddStringToObject(j, "event", argv[optind]);
	if (a.node != NULL)
		cJSON_AddStringToObject(j, "node", a.node);
	if (a.zone != NULL)
		cJSON_AddStringToObject(j, "zone", a.zone);
	if (a.worker >= 0)
		cJSON_AddNumberToObject(j, "worker", (double)a.worker);
	if (a.type != NULL)
		cJSON_AddStringToObject(j, "symptomType", a.type);
	if (a.mode != NULL)
		cJSON_AddStringToObject(j, "mode", a.mode);
	if (a.clear)
		cJSON_AddBoolToObject(j, "clear", 1);
	if (a.ongoing)
		cJSON_AddBoolToObject(j, "ongoing", 1);
	rc = control_call(a.dir, "POST", "/_emulator/events", j);
	cJSON_Delete(j);
	return rc;
}

static int
cmd_env(int argc, char **argv)
{
	struct client_args a;
	char *text;
	int rc;

	if ((rc = client_parse(argc, argv, "", 0, &a)) >= 0)
		return rc;
	if ((text = read_env(a.dir)) == NULL)
		return 1;
	fputs(text, stdout);
	free(text);
	return 0;
}

int
main(int argc, char **argv)
{
	static const struct {
		const char *name;
		int (*fn)(int, char **);
	} cmds[] = {
		{ "env", cmd_env },
		{ "event", cmd_event },
		{ "faults", cmd_faults },
		{ "inject", cmd_inject },
		{ "serve", cmd_serve },
	};
	size_t i;
	int rc = -1;

	if (argc < 2)
		return usage();
	if (strcmp(argv[1], "-h") == 0 || strcmp(argv[1], "--help") == 0 ||
	    strcmp(argv[1], "help") == 0) {
		fputs(usage_text, stdout);
		return 0;
	}
	if (strcmp(argv[1], "--version") == 0 ||
	    strcmp(argv[1], "version") == 0) {
		printf(PROG " %s\n", TPUCTL_VERSION);
		return 0;
	}
	curl_global_init(CURL_GLOBAL_DEFAULT);
	for (i = 0; i < nitems(cmds); i++)
		if (strcmp(argv[1], cmds[i].name) == 0)
			rc = cmds[i].fn(argc - 1, argv + 1);
	if (rc == -1) {
		errx_msg("unknown command '%s': expected serve, env, inject, "
		         "faults or event",
		    argv[1]);
		rc = 2;
	}
	curl_global_cleanup();
	if (fflush(stdout) != 0 || ferror(stdout))
		rc = rc == 0 ? 1 : rc;
	return rc;
}
