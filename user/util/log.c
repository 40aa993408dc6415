// SPDX-License-Identifier: GPL-2.0
#include "log.h"

#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>

int log_verbosity;
void (*log_before_print)(void);

bool log_enabled(enum log_level lvl)
{
	switch (lvl) {
	case LOG_WARN:
		return log_verbosity >= 0;
	case LOG_INFO:
		return log_verbosity >= 1;
	case LOG_DEBUG:
		return log_verbosity >= 2;
	default:
		return true;
	}
}

void log_msg(enum log_level lvl, const char *fmt, ...)
{
	va_list ap;

	if (!log_enabled(lvl))
		return;
	if (log_before_print)
		log_before_print();
	fputs("precord: ", stderr);
	if (lvl == LOG_WARN)
		fputs("warning: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}
