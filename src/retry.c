/*
 * Retry policy, backoff math, Retry-After, interruptible waits.  See
 * retry.h.
 */
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include <openssl/rand.h>

#include "retry.h"
#include "util.h"

volatile sig_atomic_t retry_interrupted;

void
retry_policy_default(struct retry_policy *p)
{
	p->initial_ms = 1000;
	p->cap_ms = 30000;
	p->multiplier = 2;
	p->max_attempts = 10;
	p->deadline_ms = 600000;
}

void
retry_state_init(struct retry_state *s, const struct retry_policy *p,
    uint64_t seed, int64_t now_ms)
{
	memset(s, 0, sizeof *s);
	s->policy = p;
	s->start_ms = now_ms;
	if (seed == 0 && RAND_bytes((unsigned char *)&seed, sizeof seed) != 1)
		seed = (uint64_t)now_ms * 0x9e3779b97f4a7c15ULL;
	s->rng = seed != 0 ? seed : 0x2545f4914f6cdd1dULL;
}

void
retry_state_progress(struct retry_state *s)
{
	s->attempt = 0;
	s->backoff_n = 0;
}

int
retry_status_retryable(int status)
{
	return status == 408 || status == 429 ||
	       (status >= 500 && status <= 599);
}

int
retry_curl_retryable(int code, int handshake_reset)
{
	switch (code) {
	case 6:  /* couldn't resolve host */
	case 7:  /* couldn't connect */
	case 18: /* partial file */
	case 28: /* operation timed out */
	case 52: /* got nothing */
	case 55: /* send error */
	case 56: /* recv error */
		return 1;
	case 35: /* TLS connect error: only a reset handshake */
		return handshake_reset;
	default:
		return 0;
	}
}

static uint64_t
rng_next(uint64_t *x)
{
	/* xorshift64* */
	*x ^= *x >> 12;
	*x ^= *x << 25;
	*x ^= *x >> 27;
	return *x * 0x2545f4914f6cdd1dULL;
}

int64_t
retry_backoff_ms(const struct retry_policy *p, int n, uint64_t *rng)
{
	int64_t ceil = p->initial_ms;
	int i;

	for (i = 0; i < n && ceil < p->cap_ms; i++)
		ceil *= p->multiplier > 1 ? p->multiplier : 2;
	if (ceil > p->cap_ms)
		ceil = p->cap_ms;
	if (ceil <= 0)
		return 0;
	return (int64_t)(rng_next(rng) % (uint64_t)(ceil + 1));
}

int
retry_next(struct retry_state *s, int64_t retry_after_ms, int64_t now_ms,
    int64_t *wait_ms)
{
	const struct retry_policy *p = s->policy;
	int64_t w, left;

	s->attempt++;
	if (p->max_attempts > 0 && s->attempt >= p->max_attempts)
		return -1;
	if (retry_after_ms >= 0) {
		w = retry_after_ms;
		s->backoff_n++;
	} else
		w = retry_backoff_ms(p, s->backoff_n++, &s->rng);
	if (p->deadline_ms > 0) {
		left = s->start_ms + p->deadline_ms - now_ms;
		/* no point sleeping into the deadline: nothing left to try */
		if (left <= 0 || w >= left)
			return -1;
	}
	*wait_ms = w;
	return 0;
}

static const char *const months[] = { "Jan", "Feb", "Mar", "Apr", "May", "Jun",
	"Jul", "Aug", "Sep", "Oct", "Nov", "Dec" };

static int
parse_month(const char *s)
{
	int i;

	for (i = 0; i < 12; i++)
		if (strncasecmp(s, months[i], 3) == 0)
			return i;
	return -1;
}

/* Parse "HH:MM:SS" into tm. */
static const char *
parse_hms(const char *s, struct tm *tm)
{
	char *end;
	long v;

	v = strtol(s, &end, 10);
	if (end == s || end - s > 2 || *end != ':' || v < 0 || v > 23)
		return NULL;
	tm->tm_hour = (int)v;
	s = end + 1;
	v = strtol(s, &end, 10);
	if (end - s != 2 || *end != ':' || v < 0 || v > 59)
		return NULL;
	tm->tm_min = (int)v;
	s = end + 1;
	v = strtol(s, &end, 10);
	if (end - s != 2 || v < 0 || v > 60)
		return NULL;
	tm->tm_sec = (int)v;
	return end;
}

static int
parse_http_date(const char *s, time_t *out)
{
	struct tm tm;
	char *end;
	long v;
	int mon;
	const char *p;

	memset(&tm, 0, sizeof tm);
	p = strchr(s, ' ');
	if (p == NULL)
		return -1;
	p++;
	if (strchr(s, ',') != NULL && strchr(s, ',') < p) {
		/* IMF-fixdate "Sun, 06 Nov 1994 08:49:37 GMT" or RFC 850
		 * "Sunday, 06-Nov-94 08:49:37 GMT" */
		v = strtol(p, &end, 10);
		if (end == p || v < 1 || v > 31)
			return -1;
		tm.tm_mday = (int)v;
		if (*end != ' ' && *end != '-')
			return -1;
		if ((mon = parse_month(end + 1)) < 0)
			return -1;
		tm.tm_mon = mon;
		p = end + 5;
		if (p[-1] != ' ' && p[-1] != '-')
			return -1;
		v = strtol(p, &end, 10);
		if (end == p || *end != ' ')
			return -1;
		if (end - p == 2)
			v += v < 70 ? 2000 : 1900;
		else if (end - p != 4)
			return -1;
		tm.tm_year = (int)v - 1900;
		if ((p = parse_hms(end + 1, &tm)) == NULL)
			return -1;
		if (strcmp(p, " GMT") != 0 && strcmp(p, " UTC") != 0)
			return -1;
	} else {
		/* asctime "Sun Nov  6 08:49:37 1994" */
		if ((mon = parse_month(p)) < 0)
			return -1;
		tm.tm_mon = mon;
		p += 3;
		while (*p == ' ')
			p++;
		v = strtol(p, &end, 10);
		if (end == p || v < 1 || v > 31 || *end != ' ')
			return -1;
		tm.tm_mday = (int)v;
		if ((p = parse_hms(end + 1, &tm)) == NULL || *p != ' ')
			return -1;
		p++;
		v = strtol(p, &end, 10);
		if (end - p != 4 || *end != '\0')
			return -1;
		tm.tm_year = (int)v - 1900;
	}
	*out = timegm(&tm);
	return *out == (time_t)-1 ? -1 : 0;
}

int
retry_parse_after(const char *v, time_t now, int64_t *ms)
{
	const char *errstr;
	long long secs;
	time_t when;

	if (v == NULL)
		return -1;
	while (*v == ' ' || *v == '\t')
		v++;
	if (*v >= '0' && *v <= '9') {
		size_t n = strlen(v);

		while (n > 0 && (v[n - 1] == ' ' || v[n - 1] == '\r' ||
		                    v[n - 1] == '\n'))
			n--;
		if (n == 0 || n > 12 || strspn(v, "0123456789") != n)
			return -1;
		{
			char tmp[16];

			memcpy(tmp, v, n);
			tmp[n] = '\0';
			secs = tpu_strtonum(tmp, 0, 86400LL * 366, &errstr);
		}
		if (errstr != NULL)
			return -1;
		*ms = secs * 1000;
		return 0;
	}
	{
		char tmp[64];
		size_t n = strlen(v);

		while (n > 0 && (v[n - 1] == ' ' || v[n - 1] == '\r' ||
		                    v[n - 1] == '\n'))
			n--;
		if (n == 0 || n >= sizeof tmp)
			return -1;
		memcpy(tmp, v, n);
		tmp[n] = '\0';
		if (parse_http_date(tmp, &when) != 0)
			return -1;
	}
	*ms = when <= now ? 0 : (int64_t)(when - now) * 1000;
	return 0;
}

static void
on_signal(int sig)
{
	retry_interrupted = sig;
}

int
retry_interrupt_errc(int sig)
{
	return sig == SIGTERM ? TPU_E_TERMINATED : TPU_E_INTERRUPTED;
}

const char *
retry_interrupt_name(int sig)
{
	return sig == SIGTERM ? "terminated" : "interrupted";
}

void
retry_install_signals(void)
{
	static int installed;
	struct sigaction sa;

	if (installed)
		return;
	installed = 1;
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = on_signal;
	sigemptyset(&sa.sa_mask);
	sa.sa_flags = 0; /* no SA_RESTART: waits must wake up */
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
}

int
retry_sleep(int64_t ms, struct tpu_err *err)
{
	int64_t end = tpu_now_ms() + ms, left;

	for (;;) {
		if (retry_interrupted != 0)
			return tpu_error(err,
			    retry_interrupt_errc(retry_interrupted),
			    "interrupted");
		left = end - tpu_now_ms();
		if (left <= 0)
			return 0;
		tpu_sleep_ms(left > 200 ? 200 : left);
	}
}
