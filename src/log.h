/*
 * Diagnostics on stderr.  log_warn always prints, log_info with -v,
 * log_debug with -vv (prefixed with the function name).  Results never go
 * through here: they go to stdout through output_emit().  Nothing that may
 * hold a secret is passed to these functions unredacted (see redact.h).
 */
#ifndef TPUCTL_LOG_H
#define TPUCTL_LOG_H

enum log_level {
	LOG_QUIET = -1, /* --verbosity=none: not even warnings */
	LOG_WARN = 0,
	LOG_INFO = 1,
	LOG_DEBUG = 2,
	LOG_TRACE = 3,
};

void log_set_level(int);
int log_get_level(void);
/* The program name put before every line ("tpuctl" by default). */
void log_set_prog(const char *);

void log_warn(const char *, ...) __attribute__((format(printf, 1, 2)));
void log_info(const char *, ...) __attribute__((format(printf, 1, 2)));
void log_debug_(const char *, const char *, ...)
    __attribute__((format(printf, 2, 3)));
#define log_debug(...) log_debug_(__func__, __VA_ARGS__)

#endif
