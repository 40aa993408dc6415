/* SPDX-License-Identifier: GPL-2.0 */
/*
 * When a rotating recording (--switch-output) finishes its file and starts
 * the next, and what the finished files are called and how many are kept.
 * No I/O but the removal of the oldest files: the session asks, this
 * object answers.
 *
 * Files are named as perf record --switch-output names them:
 * OUTPUT.<YYYYmmddHHMMSSCC>, the local time of the switch to the
 * centisecond (perf's fetch_current_timestamp).  With max_files, the
 * oldest finished files are removed once more than max_files exist.
 */
#ifndef PRECORD_RECORD_FILE_SWITCH_H
#define PRECORD_RECORD_FILE_SWITCH_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>

struct file_switch;

struct file_switch_config {
	const char *output;	/* -o: the file being written */
	__u64 every_ns;		/* --switch-output=TIME; 0: none */
	__u64 bytes;		/* --switch-output=SIZE; 0: none */
	bool on_signal;		/* --switch-output[=signal]: SIGUSR2 */
	int max_files;		/* --switch-max-files; 0: keep all */
};

/* NULL + errno.  The TIME switches are counted from start_ns (the
 * recording's start). */
struct file_switch *file_switch__new(const struct file_switch_config *cfg, __u64 start_ns);
void file_switch__free(struct file_switch *fs);		/* NULL-safe */

/* Whether the current file is to be finished now: its time is up, its
 * data reached the size, or a switch was asked for (SIGUSR2/SIGHUP). */
bool file_switch__due(const struct file_switch *fs, __u64 now_ns, __u64 data_bytes,
		      bool asked);
/* The recording starts (now): the TIME switches count from here. */
void file_switch__start(struct file_switch *fs, __u64 now_ns);
/* A new file started at now_ns: the next TIME switch keeps the cadence
 * of the start (every TIME, as perf's timer), the first one that still
 * lies ahead (a switch that took long skips the ones it overran). */
void file_switch__started(struct file_switch *fs, __u64 now_ns);
/* A switch failed at now_ns (the current file goes on): the next one is
 * tried at the next TIME, or for SIZE FILE_SWITCH_RETRY_NS later; a
 * request (a signal) is always tried. */
#define FILE_SWITCH_RETRY_NS	1000000000ULL
void file_switch__failed(struct file_switch *fs, __u64 now_ns);

/* The name of a finished file switched at tod_ns (CLOCK_REALTIME ns),
 * in buf: OUTPUT.<timestamp>.  -ENAMETOOLONG if it does not fit. */
int file_switch__name(const struct file_switch *fs, __u64 tod_ns, char *buf, size_t size);
/* A finished file, now at path: counted, and the oldest removed while
 * more than max_files are kept.  Returns how many were removed (a
 * failed removal is said, and forgotten). */
int file_switch__kept(struct file_switch *fs, const char *path);

#endif
