/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Whole reads and writes: the loops around read(2)/write(2) and their
 * positional forms that retry after EINTR and continue after a short
 * transfer, written once.
 */
#ifndef PRECORD_UTIL_IO_H
#define PRECORD_UTIL_IO_H

#include <stddef.h>
#include <sys/types.h>

/*
 * Read n bytes into buf (at offset off for pread_full, which leaves the
 * file position alone).  Returns the bytes read: n, or fewer only at end
 * of file (0 at EOF); or -errno, and then what was read before the error
 * is not counted.
 */
ssize_t read_full(int fd, void *buf, size_t n);
ssize_t pread_full(int fd, void *buf, size_t n, off_t off);

/*
 * Write all n bytes of buf (at offset off for pwrite_full).  Returns 0,
 * or -errno (-EIO when the kernel writes nothing without an error); after
 * an error part of buf may be written.
 */
int write_full(int fd, const void *buf, size_t n);
int pwrite_full(int fd, const void *buf, size_t n, off_t off);

/*
 * An output file that replaces path whole: created new as
 * path.tmpXXXXXX next to it (O_EXCL | O_NOFOLLOW: a planted name or
 * symlink is never opened, and the name is tried again), mode 0666 less
 * the umask, then renamed over path (a symlink at path is replaced, its
 * target untouched).  The fd (O_WRONLY) or -errno; the temporary name in
 * tmp.
 */
int create_replacement(const char *path, char *tmp, size_t size);
/* After writing and closing the fd: err 0 renames tmp over path, else
 * (or when the rename fails) tmp is removed.  0 or -errno. */
int commit_replacement(const char *tmp, const char *path, int err);

/* The process's umask, read without changing it (the Umask line of
 * /proc/self/status; 077 when that cannot be read: the narrow guess). */
mode_t io_umask(void);

#endif
