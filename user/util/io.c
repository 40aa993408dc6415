// SPDX-License-Identifier: GPL-2.0
#include "util/io.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <sys/random.h>
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

int create_replacement(const char *path, char *tmp, size_t size)
{
	static const char digits[] = "0123456789abcdefghijklmnopqrstuvwxyz";

	for (int tries = 0; tries < 100; tries++) {
		unsigned char rnd[6];
		char suffix[7];
		int fd, n;

		if (getrandom(rnd, sizeof(rnd), 0) != (ssize_t)sizeof(rnd))
			return -errno;
		for (size_t i = 0; i < sizeof(rnd); i++)
			suffix[i] = digits[rnd[i] % 36];
		suffix[6] = 0;
		n = snprintf(tmp, size, "%s.tmp%s", path, suffix);
		if (n < 0 || (size_t)n >= size)
			return -ENAMETOOLONG;
		/* 0666: the kernel applies the umask (and a default ACL) */
		fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0666);
		if (fd >= 0)
			return fd;
		if (errno != EEXIST)
			return -errno;
	}
	return -EEXIST;
}

int commit_replacement(const char *tmp, const char *path, int err)
{
	if (!err && rename(tmp, path))
		err = -errno;
	if (err)
		unlink(tmp);
	return err;
}

mode_t io_umask(void)
{
	char line[128];
	unsigned int m = 077;
	FILE *f = fopen("/proc/self/status", "re");

	if (!f)
		return 077;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "Umask: %o", &m) == 1)
			break;
	fclose(f);
	return (mode_t)(m & 0777);
}
