/*
 * Leveled diagnostics on stderr, one line per call.
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "log.h"

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
	char line[4096];
	size_t n;

	vsnprintf(line, sizeof line, fmt, ap);
	n = strlen(line);
	while (n > 0 && line[n - 1] == '\n')
		line[--n] = '\0';
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
