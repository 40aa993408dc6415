// SPDX-License-Identifier: GPL-2.0
#include "record/cgroups.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>

#include "perfdata/record.h"
#include "util/log.h"

#ifndef CGROUP2_SUPER_MAGIC
#define CGROUP2_SUPER_MAGIC 0x63677270
#endif

/* Deeper than any real hierarchy (the kernel's cgroup.max.depth is
 * unlimited, but each level costs the walk an open directory). */
#define MAX_DEPTH 64

struct cgroup_mount {
	char dir[PATH_MAX];
	char root[PATH_MAX];
};

/* mountinfo escapes space, tab, newline and backslash as \ooo. */
static int unescape(char *out, size_t size, const char *s, size_t n)
{
	size_t o = 0;

	for (size_t i = 0; i < n; i++) {
		char c = s[i];

		if (c == '\\' && i + 3 < n && s[i + 1] >= '0' && s[i + 1] <= '3' &&
		    s[i + 2] >= '0' && s[i + 2] <= '7' && s[i + 3] >= '0' && s[i + 3] <= '7') {
			c = (char)((s[i + 1] - '0') << 6 | (s[i + 2] - '0') << 3 | (s[i + 3] - '0'));
			i += 3;
		}
		if (o + 1 >= size)
			return -ENAMETOOLONG;
		out[o++] = c;
	}
	out[o] = 0;
	return 0;
}

/* Field i (from 0) of a line, space-separated: its start and length. */
static const char *field(const char *line, const char *end, int i, size_t *len)
{
	const char *p = line;

	for (;;) {
		const char *q = p;

		while (q < end && *q != ' ')
			q++;
		if (!i--) {
			*len = (size_t)(q - p);
			return p;
		}
		if (q >= end)
			return NULL;
		p = q + 1;
	}
}

/*
 * File format (proc(5)): ID PARENT MAJ:MIN ROOT MOUNTPOINT OPTIONS
 * [OPTIONAL...] - FSTYPE SOURCE SUPEROPTIONS.  1: line is a cgroup2 mount
 * (m filled), 0: another mount, -errno: a cgroup2 line we cannot use.
 */
static int parse_line(const char *line, const char *end, struct cgroup_mount *m)
{
	const char *sep = line, *root, *dir, *type;
	size_t rlen = 0, dlen = 0, tlen = 0;

	for (;;) {
		sep = memchr(sep, '-', (size_t)(end - sep));
		if (!sep)
			return 0;
		if (sep > line && sep[-1] == ' ' && sep + 1 < end && sep[1] == ' ')
			break;
		sep++;
	}
	type = field(sep + 2, end, 0, &tlen);
	if (!type || tlen != 7 || memcmp(type, "cgroup2", 7))
		return 0;
	root = field(line, sep, 3, &rlen);
	dir = field(line, sep, 4, &dlen);
	if (!root || !dir || !rlen || !dlen)
		return -EINVAL;
	if (unescape(m->root, sizeof(m->root), root, rlen) ||
	    unescape(m->dir, sizeof(m->dir), dir, dlen))
		return -ENAMETOOLONG;
	return 1;
}

struct cgroup_mount *cgroup_mount__parse(const char *text)
{
	struct cgroup_mount *m = calloc(1, sizeof(*m)), cand;
	bool found = false;

	if (!m)
		return NULL;
	for (const char *line = text; *line;) {
		const char *end = strchr(line, '\n');

		if (!end)
			end = line + strlen(line);
		if (parse_line(line, end, &cand) == 1 && (!found || !strcmp(cand.root, "/"))) {
			bool whole = !strcmp(cand.root, "/");

			*m = cand;
			found = true;
			if (whole)
				break;
		}
		line = *end ? end + 1 : end;
	}
	if (!found) {
		free(m);
		errno = ENOENT;
		return NULL;
	}
	return m;
}

/* /proc/self/mountinfo, whole (its size is not known before reading). */
static char *read_mountinfo(void)
{
	FILE *f = fopen("/proc/self/mountinfo", "re");
	size_t len = 0, cap = 0;
	char *text = NULL;

	if (!f)
		return NULL;
	for (;;) {
		char *t;
		size_t n;

		if (cap - len < 4096) {
			if (cap >= 64u << 20) {		/* a million mounts: enough */
				errno = EFBIG;
				break;
			}
			t = realloc(text, cap += 65536);
			if (!t)
				break;
			text = t;
		}
		n = fread(text + len, 1, cap - len - 1, f);
		len += n;
		if (!n) {
			text[len] = 0;
			fclose(f);
			return text;
		}
	}
	fclose(f);
	free(text);
	return NULL;
}

struct cgroup_mount *cgroup_mount__find(void)
{
	char *text = read_mountinfo();
	struct cgroup_mount *m;

	if (!text) {
		pr_err("cannot read /proc/self/mountinfo to find the cgroup2 mount: %s", strerror(errno));
		return NULL;
	}
	m = cgroup_mount__parse(text);
	free(text);
	if (!m && errno == ENOENT)
		pr_err("no cgroup2 file system is mounted (/proc/self/mountinfo): --all-cgroups and -G use the cgroup2 hierarchy; mount it with 'mount -t cgroup2 none /sys/fs/cgroup/unified'");
	else if (!m)
		pr_err("cannot find the cgroup2 mount: %s", strerror(errno));
	return m;
}

void cgroup_mount__free(struct cgroup_mount *m)
{
	free(m);
}

const char *cgroup_mount__dir(const struct cgroup_mount *m)
{
	return m->dir;
}

const char *cgroup_mount__root(const struct cgroup_mount *m)
{
	return m->root;
}

/* 1 when path is dir or lies under it. */
static int under(const char *path, const char *dir)
{
	size_t n = strlen(dir);

	while (n > 1 && dir[n - 1] == '/')
		n--;
	if (n == 1 && dir[0] == '/')
		return path[0] == '/';
	return !strncmp(path, dir, n) && (path[n] == '/' || !path[n]);
}

int cgroup_mount__resolve(const struct cgroup_mount *m, const char *name, char *out,
			  size_t size)
{
	const char *rel = name;
	int n;

	if (under(name, m->dir)) {
		rel = name + strlen(m->dir);
		if (!strcmp(m->dir, "/"))
			rel = name;
	}
	while (*rel == '/')
		rel++;
	for (const char *c = rel; *c;) {
		size_t len = strcspn(c, "/");

		if ((len == 1 && c[0] == '.') || (len == 2 && c[0] == '.' && c[1] == '.'))
			return -EINVAL;
		c += len;
		while (*c == '/')
			c++;
	}
	n = snprintf(out, size, "%s%s%s", m->dir,
		     *rel && m->dir[strlen(m->dir) - 1] != '/' ? "/" : "", rel);
	if (n < 0 || (size_t)n >= size)
		return -ENAMETOOLONG;
	/* no trailing slashes: the path names the cgroup as the kernel does */
	while (n > 1 && out[n - 1] == '/')
		out[--n] = 0;
	return 0;
}

int cgroup_mount__open(const struct cgroup_mount *m, const char *name)
{
	char path[PATH_MAX];
	struct statfs sf;
	int fd, err = cgroup_mount__resolve(m, name, path, sizeof(path));

	if (err) {
		pr_err("bad cgroup '%s': %s; -G takes a cgroup's path under the cgroup2 mount %s, without '.' or '..'",
		       name, strerror(-err), m->dir);
		return err;
	}
	fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0) {
		err = -errno;
		pr_err("cgroup '%s' not found: %s: %s (-G takes a cgroup's path under the cgroup2 mount %s)",
		       name, path, strerror(-err), m->dir);
		return err;
	}
	if (fstatfs(fd, &sf) || sf.f_type != CGROUP2_SUPER_MAGIC) {
		pr_err("'%s' (%s) is not a cgroup2 directory: -G takes a cgroup's path under the cgroup2 mount %s",
		       name, path, m->dir);
		close(fd);
		return -ENOTDIR;
	}
	return fd;
}

int cgroup_mount__setup(bool all, const char *name, struct cgroup_mount **m, int *fd)
{
	if (!all && !name)
		return 0;
	*m = cgroup_mount__find();
	if (!*m)
		return -ENOENT;
	if (name) {
		*fd = cgroup_mount__open(*m, name);
		if (*fd < 0)
			return *fd;
	}
	return 0;
}

int cgroup_id(int fd, __u64 *id)
{
	union {
		struct file_handle fh;
		char room[sizeof(struct file_handle) + 8];
	} h;
	int mount_id;

	h.fh.handle_bytes = 8;
	if (name_to_handle_at(fd, "", &h.fh, &mount_id, AT_EMPTY_PATH))
		return -errno;
	if (h.fh.handle_bytes != 8)
		return -EPROTO;		/* not kernfs's 64-bit id */
	memcpy(id, h.fh.f_handle, 8);
	return 0;
}

struct walk {
	struct pbuf *out;
	__u64 id_type;
	char path[PATH_MAX];	/* the hierarchy's path of the cgroup at hand */
	__u64 skipped;		/* too deep or too long a path */
};

/* Record the cgroup at fd (path in w->path, len bytes), then its
 * children.  Takes fd. */
static int walk(struct walk *w, int fd, size_t len, int depth)
{
	struct dirent *de;
	DIR *d;
	__u64 id;
	int err = cgroup_id(fd, &id);

	if (err == -ENOENT || err == -ESTALE) {
		close(fd);
		return 0;		/* removed meanwhile */
	}
	if (!err)
		err = perfdata_encode_cgroup(w->out, w->id_type, id, w->path, NULL);
	if (err) {
		close(fd);
		return err;
	}
	d = fdopendir(fd);
	if (!d) {
		err = -errno;
		close(fd);
		return err == -ENOENT ? 0 : err;
	}
	while (!err && (de = readdir(d))) {
		size_t n = strlen(de->d_name), sep = len > 1;
		int cfd;

		if (de->d_type != DT_DIR || !strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		if (depth >= MAX_DEPTH || len + sep + n >= sizeof(w->path)) {
			w->skipped++;
			continue;
		}
		cfd = openat(dirfd(d), de->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (cfd < 0)
			continue;	/* removed meanwhile */
		if (sep)
			w->path[len] = '/';
		memcpy(w->path + len + sep, de->d_name, n + 1);
		err = walk(w, cfd, len + sep + n, depth + 1);
		w->path[len > 1 ? len : 1] = 0;
	}
	closedir(d);
	return err;
}

int cgroup_mount__synthesize(const struct cgroup_mount *m, struct pbuf *out, __u64 id_type)
{
	struct walk *w = calloc(1, sizeof(*w));
	size_t len;
	int fd, err;

	if (!w)
		return -ENOMEM;
	w->out = out;
	w->id_type = id_type;
	snprintf(w->path, sizeof(w->path), "%s", m->root);
	len = strlen(w->path);
	while (len > 1 && w->path[len - 1] == '/')
		w->path[--len] = 0;
	fd = open(m->dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0) {
		err = -errno;
		pr_err("cannot open the cgroup2 mount %s: %s", m->dir, strerror(-err));
	} else {
		err = walk(w, fd, len, 0);
		if (err)
			pr_err("cannot list the cgroups under %s: %s", m->dir, strerror(-err));
	}
	if (!err && w->skipped)
		pr_warn("%llu cgroups deeper than %d levels or with paths longer than %d bytes are not named in the recording",
			(unsigned long long)w->skipped, MAX_DEPTH, PATH_MAX - 1);
	free(w);
	return err;
}
