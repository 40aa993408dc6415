// SPDX-License-Identifier: GPL-2.0
#include "util/io.h"

#include <errno.h>
#include <unistd.h>

/* off < 0: read(2) at the file position, else pread(2) at off. */
static ssize_t read_loop(int fd, void *buf, size_t n, off_t off)
{
	size_t done = 0;

	while (done < n) {
		ssize_t k = off < 0 ? read(fd, (char *)buf + done, n - done) :
			pread(fd, (char *)buf + done, n - done, off + (off_t)done);

		if (k < 0 && errno == EINTR)
			continue;
		if (k < 0)
			return -errno;
		if (k == 0)
			break;
		done += (size_t)k;
	}
	return (ssize_t)done;
}

static int write_loop(int fd, const void *buf, size_t n, off_t off)
{
	const char *p = buf;

	while (n) {
		ssize_t k = off < 0 ? write(fd, p, n) : pwrite(fd, p, n, off);

		if (k < 0 && errno == EINTR)
			continue;
		if (k < 0)
			return -errno;
		if (k == 0)
			return -EIO;
		p += k;
		n -= (size_t)k;
		if (off >= 0)
			off += k;
	}
	return 0;
}

ssize_t read_full(int fd, void *buf, size_t n)
{
	return read_loop(fd, buf, n, -1);
}

ssize_t pread_full(int fd, void *buf, size_t n, off_t off)
{
	if (off < 0)
		return -EINVAL;
	return read_loop(fd, buf, n, off);
}

int write_full(int fd, const void *buf, size_t n)
{
	return write_loop(fd, buf, n, -1);
}

int pwrite_full(int fd, const void *buf, size_t n, off_t off)
{
	if (off < 0)
		return -EINVAL;
	return write_loop(fd, buf, n, off);
}
