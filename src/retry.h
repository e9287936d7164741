/*
 * The one retry policy (RELIABILITY.md R1-R3): which failures are
 * retryable, full-jitter exponential backoff under an overall deadline and
 * an attempt cap, Retry-After parsing, and interruptible waits.  Pure
 * functions with a caller-held RNG state, so the math is unit-testable.
 */
#ifndef TPUCTL_RETRY_H
#define TPUCTL_RETRY_H

#include <signal.h>
#include <stdint.h>
#include <time.h>

#include "err.h"

struct retry_policy {
	int64_t initial_ms;  /* first backoff ceiling: 1000 */
	int64_t cap_ms;      /* ceiling cap: 30000 */
	int multiplier;      /* 2 */
	int max_attempts;    /* attempts in all, first one included: 10 */
	int64_t deadline_ms; /* overall budget from the first attempt:
	                        600000; 0 means no deadline */
};

struct retry_state {
	const struct retry_policy *policy;
	int attempt;      /* attempts made so far */
	int backoff_n;    /* exponent of the next backoff */
	int64_t start_ms; /* tpu_now_ms() at the first attempt */
	uint64_t rng;     /* xorshift64* state, never 0 */
};

/* The defaults above. */
void retry_policy_default(struct retry_policy *);

/* Start a call's retry state; seed 0 picks a random seed. */
void retry_state_init(struct retry_state *, const struct retry_policy *,
    uint64_t seed, int64_t now_ms);

/*
 * Progress was made (a resumable transfer moved forward, R3): the attempt
 * counter and the backoff exponent start again.  The deadline does not.
 */
void retry_state_progress(struct retry_state *);

/* 1 if an HTTP status is retryable (408, 429, 5xx), else 0. */
int retry_status_retryable(int status);

/*
 * 1 if a libcurl error code is retryable: 6, 7, 18, 28, 52, 55, 56, and 35
 * only when handshake_reset (the peer reset the TLS handshake).  Never 60
 * or other TLS verification failures.
 */
int retry_curl_retryable(int curlcode, int handshake_reset);

/*
 * One full-jitter backoff for exponent n: uniform in
 * [0, min(cap, initial * multiplier^n)] milliseconds.
 */
int64_t retry_backoff_ms(const struct retry_policy *, int n, uint64_t *rng);

/*
 * After a failed attempt: decide the wait before the next one.
 * retry_after_ms is the server's Retry-After (-1 when absent); it replaces
 * the jittered backoff.  The wait is capped so the next attempt starts
 * before the deadline.  Returns 0 with *wait_ms set, or -1 when the
 * attempts or the deadline are exhausted (no time left to try again).
 */
int retry_next(struct retry_state *, int64_t retry_after_ms, int64_t now_ms,
    int64_t *wait_ms);

/*
 * Parse a Retry-After value: delta-seconds ("3") or an HTTP-date ("Wed, 21
 * Oct 2015 07:28:00 GMT", also the obsolete RFC 850 and asctime forms),
 * relative to now (wall clock).  Returns 0 with *ms >= 0 (a date in the
 * past gives 0), or -1 for garbage.
 */
int retry_parse_after(const char *, time_t now, int64_t *ms);

/*
 * The one interrupt mechanism of every command.  retry_install_signals()
 * installs SIGINT and SIGTERM handlers once per process (later calls do
 * nothing) that store the signal number in retry_interrupted.  Waits,
 * HTTP transfers (http.c), the SSH fan-out, shells and forwards
 * (sshpool: give &retry_interrupted as the abort pointer), SFTP
 * transfers, checked inside every file (sshxfer), and the data commands
 * poll it, and stop with retry_interrupt_errc(): TPU_E_INTERRUPTED
 * (exit 130) after SIGINT, TPU_E_TERMINATED (exit 143) after SIGTERM;
 * cmd/main.c then dies by the same signal.
 */
extern volatile sig_atomic_t retry_interrupted;

/* Install the handlers (no SA_RESTART: waits must wake up); once. */
void retry_install_signals(void);

/* TPU_E_TERMINATED when sig is SIGTERM, else TPU_E_INTERRUPTED. */
int retry_interrupt_errc(int sig);

/* "terminated" for SIGTERM, else "interrupted". */
const char *retry_interrupt_name(int sig);

/*
 * Sleep ms, waking early when retry_interrupted is set: returns 0, or
 * TPU_E_INTERRUPTED / TPU_E_TERMINATED (err filled) when interrupted.
 */
int retry_sleep(int64_t ms, struct tpu_err *);

#endif
