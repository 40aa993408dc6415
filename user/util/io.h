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

#endif
