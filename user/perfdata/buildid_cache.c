// SPDX-License-Identifier: GPL-2.0
/*
 * perf's build-id cache, written the way perf 6.1 writes it
 * (util/build-id.c build_id_cache__add, util/copyfile.c, util/config.c):
 *
 *   DIR/usr/lib/x86_64-linux-gnu/libc.so.6/<hex>/elf
 *   DIR/[kernel.kallsyms]/<hex>/kallsyms
 *   DIR/[vdso]/<hex>/vdso
 *   DIR/.build-id/<hex[0:2]>/<hex[2:]> -> ../../usr/lib/.../libc.so.6/<hex>
 *
 * perf report follows the .build-id link and appends "elf", "kallsyms" or
 * "vdso" (dso__build_id_filename).  Observed with perf 6.1: directories
 * 0755, copied files 0755 (copyfile() fchmods its mkstemp file to 0755),
 * files perf could hard-link keep the original's mode.  precord runs as
 * root on files any process maps (issue 18): its directories are 0700,
 * a copy is never more readable than its source (see copy_mode), kallsyms
 * is 0600 (its addresses defeat KASLR), and a copy writes only the
 * source's data extents (holes stay holes) within the run's byte budget.
 * perf report only reads them, as root.  perf also writes an SDT
 * "probes" file and hard-links /usr/lib/debug/.build-id/xx/y.debug as
 * "debug"; precord does neither (perf report needs neither).
 */
#include "perfdata/buildid_cache.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include "elf/buildid.h"
#include "util/io.h"
#include "util/log.h"
#include "util/printable.h"
#include "util/safe_open.h"

#define CONFIG_FILE_MAX		(1u << 20)
#define CONFIG_VALUE_MAX	1024		/* perf's parse_value() limit */
#define COPY_CHUNK		(1u << 20)
#define DIR_MODE		0700

/* ---- perf's config files: just enough to find buildid.dir ---- */

struct cfg_parser {
	const char *p, *end;
	bool eof;
};

/* One character; '\n' at the end of the file (as perf's get_next_char). */
static int cfg_getc(struct cfg_parser *cp)
{
	int c;

	if (cp->p >= cp->end) {
		cp->eof = true;
		return '\n';
	}
	c = (unsigned char)*cp->p++;
	if (c == '\r' && cp->p < cp->end && *cp->p == '\n')
		c = (unsigned char)*cp->p++;
	return c;
}

/*
 * A value after '=': blanks around it dropped, inner runs of blanks
 * squashed to one space, "..." quoting, \t \b \n \\ \" escapes,
 * backslash-newline continuation, # and ; start a comment outside quotes.
 * Returns false on a malformed value (perf stops reading the file there).
 */
static bool cfg_value(struct cfg_parser *cp, char *val)
{
	bool quote = false, comment = false, space = false;
	size_t len = 0;
	int c;

	for (;;) {
		c = cfg_getc(cp);
		if (len >= CONFIG_VALUE_MAX - 1)
			return false;
		if (c == '\n') {
			val[len] = '\0';
			return !quote;
		}
		if (comment)
			continue;
		if (isspace(c) && !quote) {
			space = true;
			continue;
		}
		if (!quote && (c == ';' || c == '#')) {
			comment = true;
			continue;
		}
		if (space && len)
			val[len++] = ' ';
		space = false;
		if (c == '"') {
			quote = !quote;
			continue;
		}
		if (c == '\\') {
			c = cfg_getc(cp);
			if (c == '\n')
				continue;
			if (c == 't' || c == 'b' || c == 'n')
				c = c == 't' ? '\t' : c == 'b' ? '\b' : '\n';
			else if (c != '\\' && c != '"')
				return false;
		}
		val[len++] = (char)c;
	}
}

/* "[name]" or "[name "sub"]": is it the plain [buildid] section? */
static bool cfg_section(struct cfg_parser *cp, bool *is_buildid)
{
	char name[16];
	size_t len = 0;
	bool too_long = false;
	int c;

	for (;;) {
		c = cfg_getc(cp);
		if (cp->eof || c == '\n')
			return false;
		if (c == ']')
			break;
		if (isspace(c)) {	/* [base "sub"]: never [buildid] */
			while ((c = cfg_getc(cp)) != '\n' && !cp->eof && c != ']')
				;
			*is_buildid = false;
			return c == ']';
		}
		if (!isalnum(c) && c != '-' && c != '_' && c != '.')
			return false;
		if (len < sizeof(name) - 1)
			name[len++] = (char)tolower(c);
		else
			too_long = true;
	}
	name[len] = '\0';
	*is_buildid = !too_long && !strcmp(name, "buildid");
	return len > 0;
}

/* "key [= value]"; c is the key's first character. */
static bool cfg_entry(struct cfg_parser *cp, int c, bool in_buildid, char **dir)
{
	char key[64], val[CONFIG_VALUE_MAX];
	size_t len = 0;

	key[len++] = (char)tolower(c);	/* perf lowercases only this one */
	for (;;) {
		c = cfg_getc(cp);
		if (cp->eof || !(isalnum(c) || c == '-' || c == '_'))
			break;
		if (len >= sizeof(key) - 1)
			return false;
		key[len++] = (char)c;
	}
	key[len] = '\0';
	while (c == ' ' || c == '\t')
		c = cfg_getc(cp);
	if (c == '\n')
		return true;		/* no value: perf ignores the key */
	if (c != '=' || !cfg_value(cp, val))
		return false;
	if (in_buildid && !strcmp(key, "dir")) {
		char *s = strdup(val);

		if (!s)
			return false;
		free(*dir);
		*dir = s;
	}
	return true;
}

/* Parse a config file; values before a malformed line count (as in perf). */
static void cfg_parse(const char *text, size_t len, const char *path, char **dir)
{
	struct cfg_parser cp = { text, text + len, false };
	bool in_buildid = false, comment = false;
	int c;

	if (len >= 3 && !memcmp(text, "\xef\xbb\xbf", 3))
		cp.p += 3;
	for (;;) {
		c = cfg_getc(&cp);
		if (c == '\n') {
			if (cp.eof)
				return;
			comment = false;
			continue;
		}
		if (comment || isspace(c))
			continue;
		if (c == '#' || c == ';') {
			comment = true;
			continue;
		}
		if (c == '[' ? !cfg_section(&cp, &in_buildid) :
		    !isalpha(c) || !cfg_entry(&cp, c, in_buildid, dir))
			break;
	}
	pr_warn("bad perf config line in %s near byte %td, ignoring the rest",
		path, cp.p - text);
}

static void cfg_read_file(const char *path, char **dir)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	char *buf;
	ssize_t n;

	if (fd < 0)
		return;
	buf = malloc(CONFIG_FILE_MAX);
	if (buf) {
		n = read(fd, buf, CONFIG_FILE_MAX);
		if (n > 0)
			cfg_parse(buf, (size_t)n, path, dir);
		free(buf);
	}
	close(fd);
}

/* perf_config_bool() on an environment variable; unset = false. */
static bool env_true(const char *name)
{
	const char *v = getenv(name);

	if (!v)
		return false;
	if (!*v)
		return false;
	if (!strcasecmp(v, "true") || !strcasecmp(v, "yes") || !strcasecmp(v, "on"))
		return true;
	return strtol(v, NULL, 0) != 0;
}

/* $HOME/.perfconfig if perf would read it (owned by us or root, not empty). */
static void cfg_read_home(char **dir)
{
	const char *home = getenv("HOME");
	char path[PATH_MAX];
	struct stat st;

	if (!home || !*home || env_true("PERF_CONFIG_NOGLOBAL"))
		return;
	if ((size_t)snprintf(path, sizeof(path), "%s/.perfconfig", home) >= sizeof(path))
		return;
	if (stat(path, &st) || !st.st_size)
		return;
	if (st.st_uid && st.st_uid != geteuid()) {
		pr_warn("%s is not owned by the current user or root, ignoring it", path);
		return;
	}
	cfg_read_file(path, dir);
}

static int cache_root_link_ok(const char *cache_dir, uid_t *owner);

/* Say where the cache is (-v); refuse another user's symlink (a warning:
 * the recording goes on without caching). */
static char *cache_dir_checked(char *dir)
{
	uid_t owner = 0;

	if (cache_root_link_ok(dir, &owner)) {
		pr_warn("build-id cache %s is a symlink owned by UID %u, not by root: "
			"nothing cached (choose one with --buildid-dir, or -N)", dir,
			(unsigned int)owner);
		free(dir);
		errno = EPERM;
		return NULL;
	}
	pr_info("build-id cache: %s", dir);
	return dir;
}

char *buildid_cache_dir(const char *override)
{
	const char *exclusive = getenv("PERF_CONFIG");
	const char *home = getenv("HOME");
	char *dir = NULL;

	if (override && *override) {
		dir = strdup(override);
	} else if (!override) {
		if (exclusive) {
			cfg_read_file(exclusive, &dir);
		} else {
			if (!env_true("PERF_CONFIG_NOSYSTEM"))
				cfg_read_file("/etc/perfconfig", &dir);
			cfg_read_home(&dir);
		}
	}
	if (!dir || !*dir) {		/* perf's default: $HOME/.debug */
		free(dir);
		if (!home)
			dir = strdup(".debug");
		else if (asprintf(&dir, "%s/.debug", home) < 0)
			dir = NULL;
	}
	if (!dir) {
		errno = ENOMEM;
		return NULL;
	}
	if (!strcmp(dir, "/dev/null")) {
		free(dir);
		errno = 0;
		return NULL;
	}
	return cache_dir_checked(dir);
}

/* ---- what one run may write ---- */

/*
 * Bytes written into the cache by this process (the data of the copies
 * kept), against --buildid-cache-max; one file at most max_file.  Cache
 * adds come from the recorder's thread and from the threads that fetch
 * debug files (issue 21): one add at a time (lock).
 */
static pthread_mutex_t cache_lock = PTHREAD_MUTEX_INITIALIZER;

static struct {
	__u64 max_total, max_file, written;
	bool said_file, said_total;
} budget = { BUILDID_CACHE_DEFAULT_MAX, BUILDID_CACHE_FILE_MAX, 0, false, false };

void buildid_cache__set_max(__u64 max_total)
{
	pthread_mutex_lock(&cache_lock);
	if (!max_total)
		max_total = BUILDID_CACHE_DEFAULT_MAX;
	budget.max_total = max_total;
	budget.max_file = max_total < BUILDID_CACHE_FILE_MAX ? max_total : BUILDID_CACHE_FILE_MAX;
	budget.written = 0;
	budget.said_file = budget.said_total = false;
	pthread_mutex_unlock(&cache_lock);
}

__u64 buildid_cache__bytes_written(void)
{
	__u64 n;

	pthread_mutex_lock(&cache_lock);
	n = budget.written;
	pthread_mutex_unlock(&cache_lock);
	return n;
}

/* May need more bytes go in?  -EFBIG: more than one file may take,
 * -EDQUOT: more than the run has left. */
static int budget_check(__u64 need)
{
	if (need > budget.max_file)
		return -EFBIG;
	if (need > budget.max_total - budget.written)
		return -EDQUOT;
	return 0;
}

static void size_str(__u64 n, char *buf, size_t size)
{
	if (n >= (1ull << 30) && !(n % (1ull << 30)))
		snprintf(buf, size, "%lluG", (unsigned long long)(n >> 30));
	else if (n >= (1ull << 20) && !(n % (1ull << 20)))
		snprintf(buf, size, "%lluM", (unsigned long long)(n >> 20));
	else if (n >= (1ull << 10) && !(n % (1ull << 10)))
		snprintf(buf, size, "%lluK", (unsigned long long)(n >> 10));
	else
		snprintf(buf, size, "%llu bytes", (unsigned long long)n);
}

/* The first refusal of each kind is said; later ones at -vv.  name is
 * a target's: escaped. */
static void budget_refused(const char *path, int err)
{
	char lim[32], name[PRINTABLE_MAX];

	printable(name, sizeof(name), path);
	if (err == -EFBIG && !budget.said_file) {
		budget.said_file = true;
		size_str(budget.max_file, lim, sizeof(lim));
		pr_warn("build-id cache: %s holds more than %s (the limit per file): not "
			"cached; its samples are recorded (perf report reads the file itself)",
			name, lim);
	} else if (err == -EDQUOT && !budget.said_total) {
		budget.said_total = true;
		size_str(budget.max_total, lim, sizeof(lim));
		pr_warn("build-id cache: --buildid-cache-max %s reached: %s and binaries after "
			"it not cached; their samples are recorded (perf report reads the "
			"files themselves)", lim, name);
	} else {
		pr_debug("build-id cache: %s not cached: %s", name,
			 err == -EFBIG ? "over the limit per file" : "--buildid-cache-max reached");
	}
}

/* ---- the cache itself ---- */

enum cache_kind { CACHE_ELF, CACHE_KALLSYMS, CACHE_VDSO, CACHE_DEBUG };

static const char *const cache_basename[] = {
	[CACHE_ELF] = "elf", [CACHE_KALLSYMS] = "kallsyms", [CACHE_VDSO] = "vdso",
	[CACHE_DEBUG] = "debug",
};

/*
 * The directory of name's entry, relative to the cache: "[kernel.kallsyms]/
 * <hex>", "[vdso]/<hex>" or the path without its leading '/' (empty
 * components dropped) + "/<hex>".  "." and ".." components and paths that
 * would land inside ".build-id" or precord's own BUILDID_CACHE_PRIVATE_DIR
 * are refused.
 */
static int cache_reldir(const char *name, const char *hex, char *rel, size_t size,
			enum cache_kind *kind)
{
	const char *p = name, *comp;
	size_t len = 0, n;

	if (!strcmp(name, "[kernel.kallsyms]") || !strcmp(name, "[vdso]") ||
	    !strcmp(name, "[vdso32]") || !strcmp(name, "[vdsox32]")) {
		*kind = name[1] == 'k' ? CACHE_KALLSYMS : CACHE_VDSO;
		n = (size_t)snprintf(rel, size, "%s/%s",
				     *kind == CACHE_VDSO ? "[vdso]" : name, hex);
		return n < size ? 0 : -ENAMETOOLONG;
	}
	if (name[0] != '/')
		return -EINVAL;
	*kind = CACHE_ELF;
	while (*p) {
		while (*p == '/')
			p++;
		comp = p;
		while (*p && *p != '/')
			p++;
		n = (size_t)(p - comp);
		if (!n)
			break;
		if ((n == 1 && comp[0] == '.') || (n == 2 && !memcmp(comp, "..", 2)) ||
		    (!len && n == 9 && !memcmp(comp, ".build-id", 9)) ||
		    (!len && n == strlen(BUILDID_CACHE_PRIVATE_DIR) &&
		     !memcmp(comp, BUILDID_CACHE_PRIVATE_DIR, n)))
			return -EINVAL;
		if (len + n + 2 > size)
			return -ENAMETOOLONG;
		memcpy(rel + len, comp, n);
		len += n;
		rel[len++] = '/';
	}
	if (!len)
		return -EINVAL;
	n = strlen(hex);
	if (len + n + 1 > size)
		return -ENAMETOOLONG;
	memcpy(rel + len, hex, n + 1);
	return 0;
}

/* Open every component of rel below dirfd (creating them 0700 as needed
 * with create), never following a symlink.  A directory fd or -errno. */
static int dir_walk(int dirfd, const char *rel, bool create)
{
	char comp[NAME_MAX + 1];
	const char *p = rel;
	int cur = dirfd, next;

	while (*p) {
		size_t n = strcspn(p, "/");

		if (n > NAME_MAX) {
			next = -ENAMETOOLONG;
			goto out;
		}
		memcpy(comp, p, n);
		comp[n] = '\0';
		p += n + (p[n] == '/');
		if (!n)
			continue;
		if (create && mkdirat(cur, comp, DIR_MODE) && errno != EEXIST) {
			next = -errno;
			goto out;
		}
		next = openat(cur, comp, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (next < 0) {
			next = errno == ENOTDIR ? -ELOOP : -errno;
			goto out;
		}
		if (cur != dirfd)
			close(cur);
		cur = next;
	}
	return cur == dirfd ? openat(dirfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC) : cur;
out:
	if (cur != dirfd)
		close(cur);
	return next;
}

static int dir_open_rel(int dirfd, const char *rel)
{
	return dir_walk(dirfd, rel, true);
}

/*
 * The cache root may be a symlink (a cache on another disk), but not one
 * planted by another user: with HOME kept through sudo, ~/.debug is the
 * user's to replace with a link to /etc or /root.  Returns 0, or -EPERM
 * for a symlink owned by neither us nor root.
 */
static int cache_root_link_ok(const char *cache_dir, uid_t *owner)
{
	struct stat st;

	if (lstat(cache_dir, &st) || !S_ISLNK(st.st_mode))
		return 0;
	*owner = st.st_uid;
	return st.st_uid == 0 || st.st_uid == geteuid() ? 0 : -EPERM;
}

/* Open the cache root, created (with parents) if missing, as perf does;
 * then check that what was opened is what the path names now, and that
 * the path is not someone else's symlink. */
static int cache_open_root(const char *cache_dir)
{
	char path[PATH_MAX];
	size_t i, len = strlen(cache_dir);
	struct stat a, b;
	uid_t owner;
	int fd = open(cache_dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);

	if (fd < 0 && errno == ENOENT) {
		if (len >= sizeof(path))
			return -ENAMETOOLONG;
		memcpy(path, cache_dir, len + 1);
		for (i = 1; i <= len; i++) {
			if (path[i] != '/' && path[i] != '\0')
				continue;
			path[i] = '\0';
			if (mkdir(path, DIR_MODE) && errno != EEXIST)
				return -errno;
			path[i] = cache_dir[i];
		}
		fd = open(cache_dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	}
	if (fd < 0)
		return -errno;
	if (cache_root_link_ok(cache_dir, &owner) || fstat(fd, &a) || stat(cache_dir, &b) ||
	    a.st_dev != b.st_dev || a.st_ino != b.st_ino) {
		close(fd);
		return -EPERM;
	}
	return fd;
}

struct copy_src {
	bool debug;		/* the DSO's debug file ("debug", not "elf") */
	int fd;			/* >= 0: copy this file */
	__u64 size;		/* its size at fstat, 0 = read to EOF */
	mode_t mode;		/* of the copy */
	const void *data;	/* else these bytes */
	size_t len;
	__u64 written;		/* out: bytes of data written */
};

/*
 * The next data extent of fd at or after off, below size: 1 with
 * [*start, *end), 0 when only a hole is left.  A file system without
 * SEEK_DATA has no holes: all of it is data.
 */
static int next_extent(int fd, __u64 off, __u64 size, __u64 *start, __u64 *end)
{
	off_t d, h;

	if (off >= size)
		return 0;
	d = lseek(fd, (off_t)off, SEEK_DATA);
	if (d < 0) {
		if (errno == ENXIO)
			return 0;
		if (errno != EINVAL && errno != EOPNOTSUPP)
			return -errno;
		*start = off;
		*end = size;
		return 1;
	}
	if ((__u64)d >= size)
		return 0;
	h = lseek(fd, d, SEEK_HOLE);
	*start = (__u64)d;
	*end = h < 0 || (__u64)h > size ? size : (__u64)h;
	return 1;
}

/* Bytes [off, end) of src to the same offsets in dst: copy_file_range
 * while the kernel does it, then pread/pwrite.  A file that shrinks
 * under us is an error (-EIO). */
static int copy_range(int dst, int src, __u64 off, __u64 end, char **buf)
{
	loff_t in = (loff_t)off, out = (loff_t)off;

	while ((__u64)in < end) {
		size_t want = end - in < COPY_CHUNK ? end - in : COPY_CHUNK;

		if (copy_file_range(src, &in, dst, &out, want, 0) <= 0)
			break;		/* EXDEV, EINVAL, procfs…: fall back */
	}
	while ((__u64)in < end) {
		size_t want = end - in < COPY_CHUNK ? end - in : COPY_CHUNK;
		ssize_t n;
		int err;

		if (!*buf && !(*buf = malloc(COPY_CHUNK)))
			return -ENOMEM;
		n = pread_full(src, *buf, want, in);
		if (n <= 0)
			return n < 0 ? (int)n : -EIO;	/* truncated while copying */
		err = pwrite_full(dst, *buf, (size_t)n, in);
		if (err)
			return err;
		in += n;
	}
	return 0;
}

/* A file that stats as 0 bytes (procfs): read to EOF, within the budget. */
static int copy_to_eof(int dst, struct copy_src *src)
{
	char *buf = malloc(COPY_CHUNK);
	int err = buf ? 0 : -ENOMEM;

	while (!err) {
		ssize_t n = pread_full(src->fd, buf, COPY_CHUNK, (off_t)src->written);

		if (n <= 0) {
			err = (int)n;
			break;
		}
		err = budget_check(src->written + (__u64)n);
		if (!err)
			err = write_full(dst, buf, (size_t)n);
		if (!err)
			src->written += (__u64)n;
	}
	free(buf);
	return err;
}

/*
 * Copy src->fd from offset 0, its data extents only: a hole stays a hole
 * (a 12 KB file truncated to 1 GiB makes a 12 KB copy), and no more than
 * the budget allows (counted before, and again while copying: the file
 * may be filled under us).
 */
static int copy_fd(int dst, struct copy_src *src)
{
	__u64 off = 0, start, end, need = 0;
	char *buf = NULL;
	int err, more;

	if (!src->size)
		return copy_to_eof(dst, src);
	while ((more = next_extent(src->fd, off, src->size, &start, &end)) > 0) {
		need += end - start;
		off = end;
	}
	err = more < 0 ? more : budget_check(need);
	for (off = 0; !err && (more = next_extent(src->fd, off, src->size, &start, &end)) > 0;
	     off = end) {
		err = budget_check(src->written + (end - start));
		if (!err)
			err = copy_range(dst, src->fd, start, end, &buf);
		if (!err)
			src->written += end - start;
	}
	if (!err && more < 0)
		err = more;
	if (!err && ftruncate(dst, (off_t)src->size))
		err = -errno;
	free(buf);
	return err;
}

/* An existing copy of ours made wider than src->mode (by an older
 * precord: 0755 kallsyms) is narrowed. */
static void narrow_mode(int dirfd, const char *base, const struct stat *st, mode_t mode)
{
	int fd;

	if (!(st->st_mode & 07777 & ~mode) || st->st_uid != geteuid())
		return;
	fd = openat(dirfd, base, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	if (fd >= 0) {
		if (fchmod(fd, st->st_mode & mode))
			pr_debug("build-id cache: cannot narrow the mode of %s: %s", base,
				 strerror(errno));
		close(fd);
	}
}

/* Whether fa and fb hold the same bytes. */
static bool same_bytes(int fa, int fb)
{
	struct stat sa, sb;
	char *ba = NULL, *bb = NULL;
	bool same = false;

	if (!fstat(fa, &sa) && !fstat(fb, &sb) && sa.st_size == sb.st_size &&
	    (ba = malloc(COPY_CHUNK)) && (bb = malloc(COPY_CHUNK))) {
		off_t off = 0;

		same = true;
		while (same && off < sa.st_size) {
			size_t n = sa.st_size - off < COPY_CHUNK ? (size_t)(sa.st_size - off) : COPY_CHUNK;

			same = pread_full(fa, ba, n, off) == (ssize_t)n &&
			       pread_full(fb, bb, n, off) == (ssize_t)n && !memcmp(ba, bb, n);
			off += (off_t)n;
		}
	}
	free(ba);
	free(bb);
	return same;
}

/* Whether the files relA/base and relB/base below rootfd have the same
 * bytes (no symlink followed).  An unreadable one: not the same. */
static bool same_content(int rootfd, const char *rel_a, const char *rel_b, const char *base)
{
	char pa[PATH_MAX], pb[PATH_MAX];
	bool same = false;
	int fa, fb;

	if ((size_t)snprintf(pa, sizeof(pa), "%s/%s", rel_a, base) >= sizeof(pa) ||
	    (size_t)snprintf(pb, sizeof(pb), "%s/%s", rel_b, base) >= sizeof(pb))
		return false;
	fa = safe_open_file(rootfd, pa, NULL);
	fb = safe_open_file(rootfd, pb, NULL);
	if (fa >= 0 && fb >= 0)
		same = same_bytes(fa, fb);
	if (fa >= 0)
		close(fa);
	if (fb >= 0)
		close(fb);
	return same;
}

/*
 * Which files an entry's copy was verified against: lines of "dev ino
 * size mtime" of the sources it was made from or found equal to, in
 * <base>.id beside it.  An add from a source listed there costs an fstat;
 * another source is compared byte for byte, then listed (at most
 * ID_FILE_MAX bytes of lines).  A source with other bytes is a conflict
 * (a process in its own mount namespace can map its own file under a
 * victim's path, with the victim's build-id): BUILDID_CACHE_CONFLICT is made in
 * the entry's directory, and neither perf's .build-id link nor precord's
 * symbolizer uses the entry any more.
 */
#define ID_FILE_MAX	4096

static void source_ident(int fd, char *line, size_t size)
{
	struct stat st;

	if (fstat(fd, &st))
		memset(&st, 0, sizeof(st));
	snprintf(line, size, "%llu %llu %lld %lld.%09ld\n", (unsigned long long)st.st_dev,
		 (unsigned long long)st.st_ino, (long long)st.st_size,
		 (long long)st.st_mtim.tv_sec, st.st_mtim.tv_nsec);
}

static void ident_add(int dirfd, const char *base, const char *line)
{
	char name[NAME_MAX + 1];
	struct stat st;
	int fd;

	snprintf(name, sizeof(name), "%s.id", base);
	fd = openat(dirfd, name, O_WRONLY | O_CREAT | O_APPEND | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0)
		return;
	if (!fstat(fd, &st) && S_ISREG(st.st_mode) && st.st_size < ID_FILE_MAX)
		write_full(fd, line, strlen(line));
	close(fd);
}

static bool ident_listed(int dirfd, const char *base, const char *line)
{
	char name[NAME_MAX + 1], buf[ID_FILE_MAX + 1];
	ssize_t n;
	int fd;

	snprintf(name, sizeof(name), "%s.id", base);
	fd = safe_open_file(dirfd, name, NULL);
	if (fd < 0)
		return false;
	n = pread_full(fd, buf, ID_FILE_MAX, 0);
	close(fd);
	if (n <= 0)
		return false;
	buf[n] = '\0';
	for (char *p = buf; (p = strstr(p, line)); p++)
		if (p == buf || p[-1] == '\n')
			return true;
	return false;
}

/* 0: the existing copy is the source's (or not an ELF copy); 1: another
 * file (a conflict, now marked). */
static int existing_matches(int dirfd, const char *base, struct copy_src *src)
{
	char line[128];
	int fd, fd_old;
	bool same;

	if (src->fd < 0 || strcmp(base, "elf"))
		return 0;		/* kallsyms, vdso: as before */
	if (!faccessat(dirfd, BUILDID_CACHE_CONFLICT, F_OK, AT_SYMLINK_NOFOLLOW))
		return 1;
	source_ident(src->fd, line, sizeof(line));
	if (ident_listed(dirfd, base, line))
		return 0;
	fd_old = safe_open_file(dirfd, base, NULL);
	same = fd_old >= 0 && same_bytes(fd_old, src->fd);
	if (fd_old >= 0)
		close(fd_old);
	if (same) {
		ident_add(dirfd, base, line);
		return 0;
	}
	fd = openat(dirfd, BUILDID_CACHE_CONFLICT, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd >= 0)
		close(fd);
	return 1;
}

/*
 * Create dirfd/base with src's bytes: written under a temporary O_EXCL
 * name, chmod src->mode, then renamed into place without replacing
 * anything.  An existing regular file means already cached.
 */
static int cache_write_file(int dirfd, const char *base, struct copy_src *src)
{
	char tmp[NAME_MAX + 1];
	struct stat st;
	unsigned int rnd;
	int fd = -1, err, tries;

	if (!fstatat(dirfd, base, &st, AT_SYMLINK_NOFOLLOW)) {
		if (!S_ISREG(st.st_mode))
			return -ELOOP;
		narrow_mode(dirfd, base, &st, src->mode);
		return existing_matches(dirfd, base, src);
	}
	if (errno != ENOENT)
		return -errno;
	for (tries = 0; tries < 16 && fd < 0; tries++) {
		if (getrandom(&rnd, sizeof(rnd), 0) != sizeof(rnd))
			rnd = (unsigned int)rand();
		snprintf(tmp, sizeof(tmp), "%s.%08x", base, rnd);
		fd = openat(dirfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
		if (fd < 0 && errno != EEXIST)
			return -errno;
	}
	if (fd < 0)
		return -EEXIST;
	if (src->fd >= 0) {
		err = copy_fd(fd, src);
	} else {
		err = budget_check(src->len);
		if (!err)
			err = write_full(fd, src->data, src->len);
		src->written = err ? 0 : src->len;
	}
	if (!err && fchmod(fd, src->mode))
		err = -errno;
	if (close(fd) && !err)
		err = -errno;
	if (!err && renameat2(dirfd, tmp, dirfd, base, RENAME_NOREPLACE)) {
		err = -errno;
		if (err == -EINVAL)	/* no RENAME_NOREPLACE here: link instead */
			err = linkat(dirfd, tmp, dirfd, base, 0) ? -errno : 0;
		if (err == -EEXIST) {	/* someone else cached it meanwhile */
			err = 0;
			src->written = 0;
		}
	}
	unlinkat(dirfd, tmp, 0);	/* after a rename: ENOENT, fine */
	if (!err)
		budget.written += src->written;
	if (!err && src->fd >= 0 && !strcmp(base, "elf")) {
		char line[128];

		source_ident(src->fd, line, sizeof(line));
		ident_add(dirfd, base, line);
	}
	return err;
}

#define ID_LINK_DIR_SIZE	sizeof(".build-id/xx")

/* The directory of hex's link (.build-id/<hex[0:2]>; the link is named
 * hex + 2) and what it points at for rel's entry (../../<rel>). */
static int id_link_paths(const char *hex, const char *rel, char dir[ID_LINK_DIR_SIZE],
			 char target[PATH_MAX])
{
	snprintf(dir, ID_LINK_DIR_SIZE, ".build-id/%.2s", hex);
	if ((size_t)snprintf(target, PATH_MAX, "../../%s", rel) >= PATH_MAX)
		return -ENAMETOOLONG;
	return 0;
}

/*
 * .build-id/<hex[0:2]>/<hex[2:]> -> ../../<rel>, as perf makes it, unless
 * the id is in conflict: two files with this build-id and different bytes
 * (anyone can write a file carrying a victim's build-id, and perf report
 * would name the victim's frames from whichever file was cached first).
 * Then the link is removed and a marker, <hex[2:]>.conflict, keeps it
 * from being made again; perf report and precord's symbolizer find each
 * file by its own path (DIR/<path>/<hex>) instead.  Said once per id.
 */
static int cache_link(int rootfd, const char *hex, const char *rel, const char *base,
		      bool conflict)
{
	char dir[ID_LINK_DIR_SIZE], target[PATH_MAX], old[PATH_MAX], mark[NAME_MAX + 1];
	ssize_t n;
	int dfd, fd, err = id_link_paths(hex, rel, dir, target);

	if (err)
		return err;
	dfd = dir_open_rel(rootfd, dir);
	if (dfd < 0)
		return dfd;
	snprintf(mark, sizeof(mark), "%s.conflict", hex + 2);
	if (!faccessat(dfd, mark, F_OK, AT_SYMLINK_NOFOLLOW)) {
		close(dfd);
		return 0;
	}
	if (conflict) {		/* this entry's copy is not all its sources' */
		n = readlinkat(dfd, hex + 2, old, sizeof(old) - 1);
		if (n >= 0) {
			old[n] = '\0';
			if (!strcmp(old, target))
				unlinkat(dfd, hex + 2, 0);
		}
		fd = openat(dfd, mark, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
		if (fd >= 0) {
			char shown[PRINTABLE_MAX], path[PATH_MAX];
			size_t len = strlen(rel) - strlen(hex) - 1;	/* rel is "<path>/<hex>" */

			close(fd);
			memcpy(path, rel, len);
			path[len] = '\0';
			pr_warn("build-id %s: another file than the one cached as /%s carries it "
				"under that path: its copy and .build-id link are not used", hex,
				printable(shown, sizeof(shown), path));
		}
		close(dfd);
		return 0;
	}
	if (symlinkat(target, dfd, hex + 2)) {
		err = -errno;
		if (err == -EEXIST) {
			err = 0;
			n = readlinkat(dfd, hex + 2, old, sizeof(old) - 1);
			if (n >= 0) {
				old[n] = '\0';
				if (strcmp(old, target) && strncmp(old, "../../", 6)) {
					pr_debug("build-id %s is already linked to %s", hex, old);
				} else if (strcmp(old, target) &&
					   !same_content(rootfd, old + 6, rel, base)) {
					char a[PRINTABLE_MAX], b[PRINTABLE_MAX];

					size_t la = strlen(old + 6), lb = strlen(rel), lh = strlen(hex) + 1;

					old[6 + la - (la > lh ? lh : 0)] = '\0';	/* the paths, without /<hex> */
					pr_warn("build-id %s: /%s and /%.*s differ: no .build-id link for it "
						"(each is looked up by its path)", hex,
						printable(a, sizeof(a), old + 6),
						(int)(lb > lh ? lb - lh : lb), printable(b, sizeof(b), rel));
					unlinkat(dfd, hex + 2, 0);
					fd = openat(dfd, mark, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW |
						    O_CLOEXEC, 0600);
					if (fd >= 0)
						close(fd);
				}
			}
		}
	}
	close(dfd);
	return err;
}

/* The entry of (name, id): hex, its directory relative to the cache,
 * its kind; -EINVAL (or cache_reldir's error) for bad arguments. */
static int cache_entry(const char *cache_dir, const char *name, const __u8 *id, int size,
		       char hex[BUILD_ID_HEX_SIZE], char rel[PATH_MAX], enum cache_kind *kind)
{
	if (!cache_dir || !name || !id || size < 2 || size > BUILD_ID_SIZE)
		return -EINVAL;
	build_id_hex(id, size, hex);
	return cache_reldir(name, hex, rel, PATH_MAX, kind);
}

static int cache_add_locked(const char *cache_dir, const char *name, const __u8 *id,
			    int size, struct copy_src *src)
{
	char hex[BUILD_ID_HEX_SIZE], rel[PATH_MAX], *base;
	enum cache_kind kind;
	bool conflict;
	int rootfd, pfd, dfd, err = cache_entry(cache_dir, name, id, size, hex, rel, &kind);

	if (err)
		return err;
	if (src->debug && kind != CACHE_ELF)
		return -EINVAL;
	if (src->debug)
		kind = CACHE_DEBUG;
	if (kind == CACHE_KALLSYMS)
		src->mode &= 0600;	/* real addresses: root's only */
	rootfd = cache_open_root(cache_dir);
	if (rootfd < 0)
		return rootfd;
	base = strrchr(rel, '/');	/* rel is "<dir>/<hex>" */
	*base = '\0';
	pfd = dir_open_rel(rootfd, rel);
	*base = '/';
	dfd = pfd < 0 ? pfd : dir_open_rel(pfd, base + 1);
	if (dfd < 0) {
		err = dfd;
	} else {
		err = cache_write_file(dfd, cache_basename[kind], src);
		close(dfd);
	}
	conflict = err == 1;
	if (conflict)
		err = 0;
	if (err == -EFBIG || err == -EDQUOT)	/* not cached: no empty <hex> left */
		unlinkat(pfd, base + 1, AT_REMOVEDIR);
	if (pfd >= 0)
		close(pfd);
	if (!err)
		err = cache_link(rootfd, hex, rel, cache_basename[kind], conflict);
	close(rootfd);
	if (err == -EFBIG || err == -EDQUOT) {
		budget_refused(name, err);
	} else if (err) {
		char shown[PRINTABLE_MAX];

		pr_debug("build-id cache: cannot add %s (%s) to %s: %s",
			 printable(shown, sizeof(shown), name), hex, cache_dir, strerror(-err));
	}
	return err;
}

static int cache_add(const char *cache_dir, const char *name, const __u8 *id,
		     int size, struct copy_src *src)
{
	int err;

	pthread_mutex_lock(&cache_lock);
	err = cache_add_locked(cache_dir, name, id, size, src);
	pthread_mutex_unlock(&cache_lock);
	return err;
}

/*
 * The copy's mode: perf's copyfile makes every copy 0755; a copy never
 * grants more than the original (a root-only 0600 library stays 0600).
 * The copy is ours (our user and group): its group bits go to our group,
 * so they are the original's only when it has our group, else what the
 * original grants others at most.  Behind a directory others cannot
 * search (flags & BUILDID_CACHE_PRIVATE) only the owner reads it.  The
 * umask holds, as for every file precord creates (the systemd unit's
 * 0077 makes every copy root's only).
 */
static mode_t copy_mode(const struct stat *st, unsigned int flags)
{
	mode_t m = st->st_mode & 0755;

	if (st->st_gid != getegid())
		m &= ~(mode_t)070 | ((m & 07) << 3);
	if (flags & BUILDID_CACHE_PRIVATE)
		m &= 0700;
	return m & ~io_umask();
}

int buildid_cache__add_fd(const char *cache_dir, const char *name,
			  const __u8 *id, int size, int src_fd, unsigned int flags)
{
	struct copy_src src = { .fd = src_fd };
	struct stat st;

	if (src_fd < 0 || fstat(src_fd, &st))
		return -EBADF;
	if (!S_ISREG(st.st_mode))
		return -EINVAL;		/* no FIFOs or devices from a target */
	src.size = (__u64)st.st_size;
	src.mode = copy_mode(&st, flags);
	return cache_add(cache_dir, name, id, size, &src);
}

int buildid_cache__add_debug_fd(const char *cache_dir, const char *name, const __u8 *id,
				int size, int debug_fd, int dso_fd, unsigned int flags)
{
	struct copy_src src = { .debug = true, .fd = debug_fd };
	struct stat st, dso;

	if (debug_fd < 0 || fstat(debug_fd, &st) || dso_fd < 0 || fstat(dso_fd, &dso))
		return -EBADF;
	if (!S_ISREG(st.st_mode))
		return -EINVAL;
	src.size = (__u64)st.st_size;
	/* the owner's only: a server may serve what its users may read */
	src.mode = copy_mode(&dso, flags) & 0700;
	return cache_add(cache_dir, name, id, size, &src);
}

int buildid_cache__open_private(const char *cache_dir)
{
	int rootfd, fd;

	if (!cache_dir)
		return -EINVAL;
	rootfd = cache_open_root(cache_dir);
	if (rootfd < 0)
		return rootfd;
	fd = dir_open_rel(rootfd, BUILDID_CACHE_PRIVATE_DIR);
	close(rootfd);
	return fd;
}

int buildid_cache__open_debug(const char *cache_dir, const char *name, const __u8 *id,
			      int size)
{
	char hex[BUILD_ID_HEX_SIZE], rel[PATH_MAX];
	enum cache_kind kind;
	int rootfd, fd, dfd, err = cache_entry(cache_dir, name, id, size, hex, rel, &kind);

	if (err)
		return err;
	if (kind != CACHE_ELF)
		return -EINVAL;
	rootfd = open(cache_dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (rootfd < 0)
		return -errno;
	dfd = dir_walk(rootfd, rel, false);
	close(rootfd);
	if (dfd < 0)
		return dfd;
	fd = faccessat(dfd, BUILDID_CACHE_CONFLICT, F_OK, AT_SYMLINK_NOFOLLOW) ?
		safe_open_file(dfd, cache_basename[CACHE_DEBUG], NULL) : -ESTALE;
	close(dfd);
	return fd;
}

int buildid_cache__add_data(const char *cache_dir, const char *name,
			    const __u8 *id, int size, const void *data, size_t len)
{
	struct copy_src src = { .fd = -1, .data = data, .len = len, .mode = 0755 & ~io_umask() };

	if (!data && len)
		return -EINVAL;
	return cache_add(cache_dir, name, id, size, &src);
}

/* The .build-id link of hex, if it points at rel's entry (another
 * recording's link for the same id elsewhere stays). */
static void cache_unlink_id(int rootfd, const char *hex, const char *rel)
{
	char dir[ID_LINK_DIR_SIZE], target[PATH_MAX], old[PATH_MAX];
	ssize_t n;
	int dfd;

	if (id_link_paths(hex, rel, dir, target))
		return;
	dfd = dir_walk(rootfd, dir, false);
	if (dfd < 0)
		return;
	n = readlinkat(dfd, hex + 2, old, sizeof(old) - 1);
	if (n >= 0) {
		old[n] = '\0';
		if (!strcmp(old, target))
			unlinkat(dfd, hex + 2, 0);
	}
	close(dfd);
	unlinkat(rootfd, dir, AT_REMOVEDIR);	/* if empty now */
}

int buildid_cache__remove(const char *cache_dir, const char *name, const __u8 *id, int size)
{
	char hex[BUILD_ID_HEX_SIZE], rel[PATH_MAX], *base;
	enum cache_kind kind;
	int rootfd, dfd, err = cache_entry(cache_dir, name, id, size, hex, rel, &kind);

	if (err)
		return err;
	if (access(cache_dir, F_OK))
		return errno == ENOENT ? 0 : -errno;
	rootfd = cache_open_root(cache_dir);
	if (rootfd < 0)
		return rootfd;
	base = strrchr(rel, '/');	/* rel is "<dir>/<hex>" */
	*base = '\0';
	dfd = dir_walk(rootfd, rel, false);
	*base = '/';
	if (dfd >= 0) {
		int hfd = openat(dfd, base + 1, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);

		if (hfd >= 0) {
			char idf[NAME_MAX + 1];

			if (unlinkat(hfd, cache_basename[kind], 0) && errno != ENOENT)
				err = -errno;
			snprintf(idf, sizeof(idf), "%s.id", cache_basename[kind]);
			unlinkat(hfd, idf, 0);
			unlinkat(hfd, BUILDID_CACHE_CONFLICT, 0);
			close(hfd);
			unlinkat(dfd, base + 1, AT_REMOVEDIR);	/* if empty now */
		}
		close(dfd);
	} else if (dfd != -ENOENT) {
		err = dfd;		/* -ELOOP: a symlink on the way */
	}
	if (!err)
		cache_unlink_id(rootfd, hex, rel);
	close(rootfd);
	return err;
}
