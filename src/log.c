/*
 * Leveled diagnostics on stderr, one line per call.
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "log.h"
#include "util.h"

static int level = LOG_WARN;
static const char *prog = "tpuctl";

void
log_set_level(int l)
{
	level = l;
}

int
log_get_level(void)
{
	return level;
}

void
log_set_prog(const char *p)
{
	prog = p;
}

static void vlog(const char *, const char *, va_list)
    __attribute__((format(printf, 2, 0)));

static void
vlog(const char *func, const char *fmt, va_list ap)
{
	char raw[4096], line[4 * sizeof raw + 8];
	size_t n;

	vsnprintf(raw, sizeof raw, fmt, ap);
	n = strlen(raw);
	while (n > 0 && raw[n - 1] == '\n')
		raw[--n] = '\0';
	/* one line, whatever untrusted text the message quotes */
	tpu_show(raw, n, line, sizeof line, 0);
	if (func != NULL)
		fprintf(stderr, "%s: %s: %s\n", prog, func, line);
	else
		fprintf(stderr, "%s: %s\n", prog, line);
}

void
log_warn(const char *fmt, ...)
{
	va_list ap;

	if (level < LOG_WARN)
		return;
	va_start(ap, fmt);
	vlog(NULL, fmt, ap);
	va_end(ap);
}

void
log_info(const char *fmt, ...)
{
	va_list ap;

	if (level < LOG_INFO)
		return;
	va_start(ap, fmt);
	vlog(NULL, fmt, ap);
	va_end(ap);
}

void
log_debug_(const char *func, const char *fmt, ...)
{
	va_list ap;

	if (level < LOG_DEBUG)
		return;
	va_start(ap, fmt);
	vlog(func, fmt, ap);
	va_end(ap);
}
