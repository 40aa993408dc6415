// SPDX-License-Identifier: GPL-2.0
#include "util/array.h"

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int array_grow(void **v, size_t *cap, size_t need, size_t elem)
{
	size_t ncap;
	void *p;

	if (need <= *cap)
		return 0;
	ncap = *cap ? *cap : 16;
	while (ncap < need) {
		if (ncap > SIZE_MAX / 2)
			return -ENOMEM;
		ncap *= 2;
	}
	if (elem && ncap > SIZE_MAX / elem)
		return -ENOMEM;
	p = realloc(*v, ncap * elem);
	if (!p)
		return -ENOMEM;
	*v = p;
	*cap = ncap;
	return 0;
}

int open_regular_file(const char *path, int fd)
{
	struct stat st;

	if (fd < 0) {
		fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
		if (fd < 0)
			return -errno;
	}
	if (fstat(fd, &st) || !S_ISREG(st.st_mode)) {
		close(fd);
		return -EINVAL;
	}
	return fd;
}

int input_file_open(struct input_file *f, const char *path, int fd, const char *name)
{
	f->path = NULL;
	f->fd = open_regular_file(path ? path : name, fd);
	if (f->fd < 0)
		return f->fd;
	f->path = strdup(path ? path : name);
	if (!f->path) {
		close(f->fd);
		f->fd = -1;
		return -ENOMEM;
	}
	return 0;
}

void input_file_close(struct input_file *f)
{
	if (f->fd >= 0)
		close(f->fd);
	f->fd = -1;
	free(f->path);
	f->path = NULL;
}

size_t ptrs_lower_bound_u32(void *const *ptrs, size_t n, size_t key_off, uint32_t key)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		uint32_t k;

		memcpy(&k, (const char *)ptrs[mid] + key_off, sizeof(k));
		if (k < key)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}
