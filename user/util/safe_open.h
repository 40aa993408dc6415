/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Opening a file another user named (a path in a mapping record, a
 * perf map) as root without being steered: no symlink anywhere on the
 * path, nothing opened but a regular file (an O_PATH descriptor first, so
 * no device is opened and no FIFO blocks), and, when the record says
 * which file it was, only that file (device, inode, inode generation).
 *
 * The recorder's record/dsos.c opens mapped files by the same rules
 * (through /proc/PID/map_files and openat2 in the process's root, with
 * its own checks that the file is unchanged since it was mapped) and
 * uses path_public.
 */
#ifndef PRECORD_UTIL_SAFE_OPEN_H
#define PRECORD_UTIL_SAFE_OPEN_H

#include <stdbool.h>
#include <linux/types.h>

/* The file a mapping record names: MMAP2's maj/min/ino/ino_generation. */
struct file_ident {
	__u32 maj, min;
	__u64 ino;			/* 0: unknown, nothing compared */
	__u64 generation;		/* compared where the file system tells it */
	bool has_generation;
	bool check_dev;			/* compare maj/min too */
};

/* path under dirfd (AT_FDCWD: path absolute or from the current
 * directory; another fd: path relative and kept beneath it) as an O_PATH
 * descriptor, no symlink followed on any component.  fd or -errno. */
int safe_open_path(int dirfd, const char *path);

/* pathfd (O_PATH, closed here) reopened for reading when it is a regular
 * file and, when id->ino is set, the file id names.  fd or -errno
 * (-EINVAL: not regular, -ESTALE: another file). */
int safe_reopen(int pathfd, const struct file_ident *id);

/* safe_open_path then safe_reopen. */
int safe_open_file(int dirfd, const char *path, const struct file_ident *id);

/* Could anyone reach name below rootfd (AT_FDCWD: "/")?  Every directory
 * on the way searchable by others (o+x) and no symlink on the way. */
bool path_public(int rootfd, const char *name);

#endif
