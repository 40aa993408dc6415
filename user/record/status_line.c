// SPDX-License-Identifier: GPL-2.0
#include "record/status_line.h"

#include <stdio.h>

#include "util/log.h"

static bool status_on;
static bool status_shown;

void status_line__start(bool on)
{
	status_on = on;
	log_before_print = status_line__erase;
}

void status_line__erase(void)
{
	if (status_shown) {
		fputs("\r\033[K", stderr);
		status_shown = false;
	}
}

void status_line__show(double secs, const struct record_figures *f)
{
	if (!status_on)
		return;
	fprintf(stderr, "\r\033[K[ precord: %.1f s, %llu samples%s, %.3f MB, %llu lost ]",
		secs, (unsigned long long)f->samples, f->calls,
		(double)f->bytes / (1024.0 * 1024.0), (unsigned long long)f->lost);
	status_shown = true;
}

void status_line__summary(const char *path, const struct record_figures *f)
{
	fprintf(stderr, "[ precord: Captured and wrote %.3f MB %s (%llu samples%s, %llu lost) ]\n",
		(double)f->bytes / (1024.0 * 1024.0), path,
		(unsigned long long)f->samples, f->calls, (unsigned long long)f->lost);
}
