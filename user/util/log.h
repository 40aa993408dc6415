/* SPDX-License-Identifier: GPL-2.0 */
/* Messages: one line each, prefixed "precord: ". Warnings and errors go to
 * stderr always (unless -q for warnings); info and debug follow -v. */
#ifndef PRECORD_UTIL_LOG_H
#define PRECORD_UTIL_LOG_H

#include <stdbool.h>

enum log_level { LOG_ERROR, LOG_WARN, LOG_INFO, LOG_DEBUG };

extern int log_verbosity;	/* -q: -1, default 0, -v: 1, -vv: 2 */

/* Whether messages of lvl are shown: for one that costs work to build. */
bool log_enabled(enum log_level lvl);

void log_msg(enum log_level lvl, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

#define pr_err(...)	log_msg(LOG_ERROR, __VA_ARGS__)
#define pr_warn(...)	log_msg(LOG_WARN, __VA_ARGS__)
#define pr_info(...)	log_msg(LOG_INFO, __VA_ARGS__)
#define pr_debug(...)	log_msg(LOG_DEBUG, __VA_ARGS__)

/* Called before each message that goes to stderr, so a live status line
 * on the terminal can be erased first (set by the session). */
extern void (*log_before_print)(void);

#endif
