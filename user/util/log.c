// SPDX-License-Identifier: GPL-2.0
#include "log.h"

#include <stdarg.h>
#include <stdio.h>

int log_verbosity;
void (*log_before_print)(void);

void log_msg(enum log_level lvl, const char *fmt, ...)
{
	va_list ap;

	if (lvl == LOG_WARN && log_verbosity < 0)
		return;
	if (lvl == LOG_INFO && log_verbosity < 1)
		return;
	if (lvl == LOG_DEBUG && log_verbosity < 2)
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
