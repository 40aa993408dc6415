/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What a recording says on stderr about itself: the status line, redrawn
 * in place once a second when stderr is a terminal (erased before any
 * message), and the closing summary line.
 */
#ifndef PRECORD_RECORD_STATUS_LINE_H
#define PRECORD_RECORD_STATUS_LINE_H

#include <stdbool.h>
#include <linux/types.h>

struct record_figures {
	__u64 samples;			/* written */
	__u64 lost;
	__u64 bytes;			/* of the file so far */
	char calls[48];			/* ", N traced calls", or "" */
};

/* on: draw the status line (not -q, stderr a terminal). */
void status_line__start(bool on);
/* secs: since the recording began. */
void status_line__show(double secs, const struct record_figures *f);
void status_line__erase(void);
/* "[ precord: Captured and wrote … ]" for the file at path. */
void status_line__summary(const char *path, const struct record_figures *f);

#endif
