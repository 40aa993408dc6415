// SPDX-License-Identifier: GPL-2.0
#include "perfdata/debug_misses.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include "elf/buildid.h"
#include "util/io.h"

#define LINE_MAX_LEN	(BUILD_ID_HEX_SIZE + 24)
#define FILE_MAX	((size_t)DEBUG_MISSES_MAX * LINE_MAX_LEN)

struct miss {
	char hex[BUILD_ID_HEX_SIZE];
	__u64 when;
};

struct debug_misses {
	struct miss v[DEBUG_MISSES_MAX];
	unsigned int nr;
	__u64 now, ttl;
	bool dirty;
};

static bool hex_ok(const char *s, size_t len)
{
	if (len < 4 || len >= BUILD_ID_HEX_SIZE || len % 2)
		return false;
	for (size_t i = 0; i < len; i++)
		if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f')))
			return false;
	return true;
}

static struct miss *find(struct debug_misses *m, const char *hex)
{
	for (unsigned int i = 0; i < m->nr; i++)
		if (!strcmp(m->v[i].hex, hex))
			return &m->v[i];
	return NULL;
}

/* hex at when: the newer time kept; full: the oldest entry replaced. */
static void put(struct debug_misses *m, const char *hex, __u64 when)
{
	struct miss *e = find(m, hex);

	if (when + m->ttl <= m->now || when > m->now + m->ttl)
		return;		/* expired, or from the far future: ignored */
	if (!e && m->nr < DEBUG_MISSES_MAX) {
		e = &m->v[m->nr++];
		e->when = 0;
	} else if (!e) {
		e = &m->v[0];
		for (unsigned int i = 1; i < m->nr; i++)
			if (m->v[i].when < e->when)
				e = &m->v[i];
		if (e->when > when)
			return;
		e->when = 0;
	}
	snprintf(e->hex, sizeof(e->hex), "%s", hex);
	if (when > e->when)
		e->when = when;
}

/* The file's lines merged in (bounded; malformed lines skipped). */
static void merge_file(struct debug_misses *m, int dirfd)
{
	int fd = openat(dirfd, DEBUG_MISSES_FILE, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	struct stat st;
	char *buf, *p, *nl;
	ssize_t n;

	if (fd < 0)
		return;
	if (fstat(fd, &st) || !S_ISREG(st.st_mode) || !(buf = malloc(FILE_MAX + 1))) {
		close(fd);
		return;
	}
	n = pread_full(fd, buf, FILE_MAX, 0);
	close(fd);
	buf[n > 0 ? n : 0] = '\0';
	for (p = buf; n > 0 && (nl = strchr(p, '\n')); p = nl + 1) {
		char *sp = memchr(p, ' ', (size_t)(nl - p)), *end;
		unsigned long long when;

		*nl = '\0';
		if (!sp || !hex_ok(p, (size_t)(sp - p)))
			continue;
		*sp = '\0';
		errno = 0;
		when = strtoull(sp + 1, &end, 10);
		if (!errno && end != sp + 1 && !*end)
			put(m, p, when);
	}
	free(buf);
}

struct debug_misses *debug_misses__load(int dirfd, __u64 now, __u64 ttl)
{
	struct debug_misses *m = calloc(1, sizeof(*m));

	if (!m)
		return NULL;
	m->now = now;
	m->ttl = ttl;
	if (dirfd >= 0)
		merge_file(m, dirfd);
	return m;
}

void debug_misses__free(struct debug_misses *m)
{
	free(m);
}

bool debug_misses__has(const struct debug_misses *m, const char *hex)
{
	return m && find((struct debug_misses *)m, hex);
}

void debug_misses__add(struct debug_misses *m, const char *hex, __u64 now)
{
	if (!m || !hex_ok(hex, strlen(hex)))
		return;
	put(m, hex, now);
	m->dirty = true;
}

int debug_misses__save(struct debug_misses *m, int dirfd)
{
	char tmp[64], *buf;
	size_t len = 0;
	unsigned int rnd;
	int fd, err;

	if (!m || !m->dirty)
		return 0;
	merge_file(m, dirfd);		/* what another recording added meanwhile */
	buf = malloc(FILE_MAX);
	if (!buf)
		return -ENOMEM;
	for (unsigned int i = 0; i < m->nr; i++)
		len += (size_t)snprintf(buf + len, FILE_MAX - len, "%s %llu\n", m->v[i].hex,
					(unsigned long long)m->v[i].when);
	if (getrandom(&rnd, sizeof(rnd), 0) != sizeof(rnd))
		rnd = (unsigned int)getpid();
	snprintf(tmp, sizeof(tmp), "%s.%08x", DEBUG_MISSES_FILE, rnd);
	fd = openat(dirfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	err = fd < 0 ? -errno : write_full(fd, buf, len);
	free(buf);
	if (fd >= 0 && close(fd) && !err)
		err = -errno;
	if (fd >= 0 && !err && renameat(dirfd, tmp, dirfd, DEBUG_MISSES_FILE))
		err = -errno;
	if (fd >= 0 && err)
		unlinkat(dirfd, tmp, 0);
	if (!err)
		m->dirty = false;
	return err;
}
