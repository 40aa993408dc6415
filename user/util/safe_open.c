// SPDX-License-Identifier: GPL-2.0
#include "util/safe_open.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/fs.h>
#include <linux/openat2.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <unistd.h>

int safe_open_path(int dirfd, const char *path)
{
	struct open_how how = {
		.flags = O_PATH | O_NOFOLLOW | O_CLOEXEC,
		.resolve = RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS |
			   (dirfd == AT_FDCWD ? 0 : RESOLVE_BENEATH),
	};
	int fd = (int)syscall(SYS_openat2, dirfd, path, &how, sizeof(how));

	if (fd < 0 && errno == ENOSYS)	/* no openat2: the last component at least */
		fd = openat(dirfd, path, O_PATH | O_NOFOLLOW | O_CLOEXEC);
	return fd < 0 ? -errno : fd;
}

static bool same_file(int fd, const struct stat *st, const struct file_ident *id)
{
	long gen = 0;

	if (!id || !id->ino)
		return true;
	if (st->st_ino != id->ino ||
	    (id->check_dev && (major(st->st_dev) != id->maj || minor(st->st_dev) != id->min)))
		return false;
	/* a reused inode number: another generation where the fs says one */
	return !id->has_generation || ioctl(fd, FS_IOC_GETVERSION, &gen) ||
	       (__u32)gen == (__u32)id->generation;
}

int safe_reopen(int pathfd, const struct file_ident *id)
{
	char self[32];
	struct stat st;
	int fd;

	if (pathfd < 0)
		return pathfd;
	if (fstat(pathfd, &st))
		fd = -errno;
	else if (!S_ISREG(st.st_mode))
		fd = -EINVAL;
	else {
		snprintf(self, sizeof(self), "/proc/self/fd/%d", pathfd);
		fd = open(self, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
		if (fd < 0)
			fd = -errno;
		else if (!same_file(fd, &st, id)) {
			close(fd);
			fd = -ESTALE;
		}
	}
	close(pathfd);
	return fd;
}

int safe_open_file(int dirfd, const char *path, const struct file_ident *id)
{
	return safe_reopen(safe_open_path(dirfd, path), id);
}

bool path_public(int rootfd, const char *name)
{
	char comp[NAME_MAX + 1];
	const char *p = name;
	struct stat st;
	bool ok = false;
	int cur, next;

	cur = rootfd == AT_FDCWD ? open("/", O_PATH | O_DIRECTORY | O_CLOEXEC)
				 : openat(rootfd, ".", O_PATH | O_DIRECTORY | O_CLOEXEC);
	while (cur >= 0 && !fstat(cur, &st) && (st.st_mode & S_IXOTH)) {
		size_t n;

		while (*p == '/')
			p++;
		n = strcspn(p, "/");
		if (!p[n]) {
			ok = true;	/* what is left is the file's name */
			break;
		}
		if (n > NAME_MAX || (n == 2 && !memcmp(p, "..", 2)))
			break;
		memcpy(comp, p, n);
		comp[n] = '\0';
		p += n;
		next = openat(cur, comp, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		close(cur);
		cur = next;
	}
	if (cur >= 0)
		close(cur);
	return ok;
}
