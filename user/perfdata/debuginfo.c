// SPDX-License-Identifier: GPL-2.0
#include "perfdata/debuginfo.h"

#include <elfutils/debuginfod.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "elf/buildid.h"
#include "elf/debugfile.h"
#include "perfdata/buildid_cache.h"
#include "perfdata/debug_misses.h"
#include "util/clock.h"
#include "util/log.h"
#include "util/printable.h"
#include "util/safe_open.h"

struct debuginfo {
	struct debuginfo_config cfg;
	char *cache_dir, *root;
	char *dl_cache;			/* libdebuginfod's, when we chose it: its copies removed */
	bool server;			/* DEBUGINFOD_URLS set, not --no-debuginfod */
	pthread_mutex_t lock;
	struct debug_misses *misses;	/* NULL: none read (no server) */
	int private_fd;			/* DIR/.precord, -1 */
	int null_fd;			/* libdebuginfod's verbose output, -1 */
	bool server_failed;		/* not asked again */
	int first_err;			/* the first failure, for the warning */
	char first_url[256];
	struct debuginfo_stats st;
};

/* ---- libdebuginfod's environment ---------------------------------------- */

static void env_default(const char *name, const char *value)
{
	if (!getenv(name))
		setenv(name, value, 0);
}

static void setup_env(struct debuginfo *di)
{
	char secs[32], bytes[32];
	const char *cache = getenv(DEBUGINFOD_CACHE_PATH_ENV_VAR);

	if (!cache && di->private_fd >= 0 &&
	    asprintf(&di->dl_cache, "%s/%s/debuginfod", di->cache_dir,
		     BUILDID_CACHE_PRIVATE_DIR) > 0) {
		mkdirat(di->private_fd, "debuginfod", 0700);
		env_default(DEBUGINFOD_CACHE_PATH_ENV_VAR, di->dl_cache);
	}
	snprintf(secs, sizeof(secs), "%ld", (long)(di->cfg.deadline_secs + 0.999));
	snprintf(bytes, sizeof(bytes), "%llu", (unsigned long long)di->cfg.max_bytes);
	env_default(DEBUGINFOD_TIMEOUT_ENV_VAR, secs);
	env_default(DEBUGINFOD_MAXTIME_ENV_VAR, secs);
	env_default(DEBUGINFOD_MAXSIZE_ENV_VAR, bytes);
}

struct debuginfo *debuginfo__new(const struct debuginfo_config *cfg)
{
	struct debuginfo *di = calloc(1, sizeof(*di));
	const char *urls = getenv(DEBUGINFOD_URLS_ENV_VAR);

	if (!di)
		return NULL;
	di->cfg = *cfg;
	if (di->cfg.deadline_secs <= 0)
		di->cfg.deadline_secs = DEBUGINFO_DEADLINE_DEFAULT;
	if (!di->cfg.max_bytes)
		di->cfg.max_bytes = DEBUGINFO_MAX_BYTES_DEFAULT;
	di->private_fd = -1;
	di->null_fd = -1;
	di->cache_dir = cfg->cache_dir ? strdup(cfg->cache_dir) : NULL;
	di->root = strdup(cfg->debug_root ? cfg->debug_root : DEBUGINFO_ROOT_DEFAULT);
	if ((cfg->cache_dir && !di->cache_dir) || !di->root) {
		debuginfo__free(di);
		errno = ENOMEM;
		return NULL;
	}
	pthread_mutex_init(&di->lock, NULL);
	di->server = !cfg->no_server && urls && urls[strspn(urls, " \t")] && di->cache_dir;
	if (di->server) {
		di->private_fd = buildid_cache__open_private(di->cache_dir);
		di->misses = debug_misses__load(di->private_fd, (__u64)time(NULL),
						DEBUG_MISSES_TTL);
		setup_env(di);
		/* libdebuginfod prints some lines (its settings) to its
		 * verbose fd even when it is -1, where glibc 2.36's dprintf
		 * leaks its buffer: /dev/null instead */
		di->null_fd = open("/dev/null", O_WRONLY | O_CLOEXEC);
	}
	return di;
}

static const char *err_str(int err)
{
	switch (err) {
	case -ETIMEDOUT:
	case -ECANCELED:
		return "no answer by the deadline (--debuginfod-timeout)";
	case -EFBIG:
		return "over the byte budget (--debuginfod-max)";
	case -EBADMSG:
		return "what it served is not a debug file of the DSO (ELF headers, build-id, .symtab)";
	default:
		return strerror(-err);
	}
}

void debuginfo__free(struct debuginfo *di)
{
	if (!di)
		return;
	if (di->misses && di->private_fd >= 0)
		debug_misses__save(di->misses, di->private_fd);
	if (di->st.failed) {
		char url[PRINTABLE_MAX];

		pr_warn("debuginfod: %u debug file%s not fetched: %s%s%s; their functions show as "
			"addresses (unset DEBUGINFOD_URLS or use --no-debuginfod to not ask)",
			di->st.failed, di->st.failed > 1 ? "s" : "", err_str(di->first_err),
			di->first_url[0] ? " from " : "",
			di->first_url[0] ? printable_url(url, sizeof(url), di->first_url) : "");
	}
	if (di->st.asked)
		pr_info("debug files of %u stripped DSOs: %u cached before, %u local, %u fetched "
			"(%llu bytes), %u missing (%u known), %u failed, %u refused", di->st.asked,
			di->st.cached, di->st.local, di->st.fetched, (unsigned long long)di->st.bytes,
			di->st.missing + di->st.known_missing, di->st.known_missing, di->st.failed,
			di->st.refused);
	debug_misses__free(di->misses);
	if (di->private_fd >= 0)
		close(di->private_fd);
	if (di->null_fd >= 0)
		close(di->null_fd);
	pthread_mutex_destroy(&di->lock);
	free(di->dl_cache);
	free(di->cache_dir);
	free(di->root);
	free(di);
}

__u64 debuginfo__deadline(const struct debuginfo *di)
{
	return clock_ns(CLOCK_MONOTONIC) + (__u64)(di->cfg.deadline_secs * 1e9);
}

struct debuginfo_stats debuginfo__stats(struct debuginfo *di)
{
	struct debuginfo_stats st;

	pthread_mutex_lock(&di->lock);
	st = di->st;
	pthread_mutex_unlock(&di->lock);
	return st;
}

#define COUNT(di, field) do {			\
	pthread_mutex_lock(&(di)->lock);	\
	(di)->st.field++;			\
	pthread_mutex_unlock(&(di)->lock);	\
} while (0)

/* ---- local files -------------------------------------------------------- */

/* path opened (no symlink followed, a regular file) and checked for d:
 * fd, or -1 (a refusal counted and said at -vv). */
static int open_candidate(struct debuginfo *di, const struct debuginfo_dso *d, const char *path)
{
	char shown[PRINTABLE_MAX];
	int fd = safe_open_file(AT_FDCWD, path, NULL), err;

	if (fd < 0)
		return -1;
	err = elf_debug_file_check(fd, d->id, d->id_size);
	if (!err)
		return fd;
	close(fd);
	COUNT(di, refused);
	pr_debug("%s: not a debug file of %s: %s", printable(shown, sizeof(shown), path), d->name,
		 strerror(-err));
	return -1;
}

/* open_candidate on the path a, b, c make (-1 when too long). */
static int try_path(struct debuginfo *di, const struct debuginfo_dso *d, const char *a,
		    const char *b, const char *c)
{
	char path[PATH_MAX];

	if ((size_t)snprintf(path, sizeof(path), "%s%s%s", a, b, c) >= sizeof(path))
		return -1;
	return open_candidate(di, d, path);
}

/* ROOT/.build-id/xx/rest.debug, then .gnu_debuglink's name as gdb looks. */
static int find_local(struct debuginfo *di, const struct debuginfo_dso *d, const char *hex)
{
	char link[NAME_MAX + 1], dir[PATH_MAX], rest[BUILD_ID_HEX_SIZE + 24];
	const char *slash;
	__u32 crc;
	int fd;

	snprintf(rest, sizeof(rest), "/.build-id/%.2s/%s.debug", hex, hex + 2);
	fd = try_path(di, d, di->root, rest, "");
	if (fd >= 0 || elf_debuglink_fd(d->fd, link, sizeof(link), &crc))
		return fd;
	slash = strrchr(d->name, '/');
	if (!slash || d->name[0] != '/' || (size_t)(slash - d->name) + 2 >= sizeof(dir))
		return -1;
	memcpy(dir, d->name, (size_t)(slash - d->name) + 1);	/* with its '/' */
	dir[slash - d->name + 1] = '\0';
	if (strcmp(link, slash + 1))		/* not the DSO itself */
		fd = try_path(di, d, dir, link, "");
	if (fd < 0)
		fd = try_path(di, d, dir, ".debug/", link);
	if (fd < 0) {
		char sub[PATH_MAX];

		if ((size_t)snprintf(sub, sizeof(sub), "%s%s", di->root, dir) < sizeof(sub))
			fd = try_path(di, d, sub, link, "");
	}
	return fd;
}

/* ---- debuginfod --------------------------------------------------------- */

struct transfer {
	struct debuginfo *di;
	__u64 deadline;
	__u64 budget;			/* bytes this transfer may take */
	bool over_time, over_bytes;
};

/* Called by libdebuginfod about once a second and as data comes: a
 * non-zero return aborts the transfer. */
static int transfer_progress(debuginfod_client *c, long a, long b)
{
	struct transfer *t = debuginfod_get_user_data(c);

	if (clock_ns(CLOCK_MONOTONIC) >= t->deadline)
		t->over_time = true;
	/* what came, or what the answer says will come (Content-Length) */
	if ((a > 0 && (__u64)a > t->budget) || (b > 0 && (__u64)b > t->budget))
		t->over_bytes = true;
	return t->over_time || t->over_bytes;
}

/* The server's failure: counted; the first one kept for the warning,
 * and the server not asked again. */
static void server_failed(struct debuginfo *di, int err, const char *url)
{
	pthread_mutex_lock(&di->lock);
	di->st.failed++;
	if (!di->first_err) {
		char *b;

		di->first_err = err;
		snprintf(di->first_url, sizeof(di->first_url), "%s",
			 url && *url ? url : getenv(DEBUGINFOD_URLS_ENV_VAR) ?: "");
		b = strstr(di->first_url, "/buildid/");
		if (b)		/* the server, not the query */
			*b = '\0';
	}
	di->server_failed = true;
	pthread_mutex_unlock(&di->lock);
}

/*
 * Our download cache keeps nothing of hex: a file found is in the
 * build-id cache (we hold it open), a miss in ours, and libdebuginfod's
 * own negative entry (an empty file it makes even for an aborted
 * transfer) would turn a timeout into a "not found" for 10 minutes.
 */
static void forget_download(struct debuginfo *di, const char *hex)
{
	char rel[BUILD_ID_HEX_SIZE + 16];
	int fd;

	if (!di->dl_cache)
		return;
	fd = open(di->dl_cache, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return;
	snprintf(rel, sizeof(rel), "%s/debuginfo", hex);
	unlinkat(fd, rel, 0);
	unlinkat(fd, hex, AT_REMOVEDIR);
	close(fd);
}

/* Ask the servers: the downloaded file's fd (checked), or -errno. */
static int find_server(struct debuginfo *di, const struct debuginfo_dso *d, const char *hex,
		       __u64 deadline)
{
	struct transfer t = { .di = di, .deadline = deadline };
	debuginfod_client *c;
	char *path = NULL, url[256] = "";
	bool skip;
	int fd, err;
	struct stat st;

	pthread_mutex_lock(&di->lock);
	skip = di->server_failed;
	if (!skip && debug_misses__has(di->misses, hex)) {
		di->st.known_missing++;
		pthread_mutex_unlock(&di->lock);
		return -EEXIST;
	}
	t.budget = di->cfg.max_bytes > di->st.bytes ? di->cfg.max_bytes - di->st.bytes : 0;
	pthread_mutex_unlock(&di->lock);
	if (skip || !t.budget || clock_ns(CLOCK_MONOTONIC) >= deadline) {
		err = skip ? -ENETUNREACH : !t.budget ? -EFBIG : -ETIMEDOUT;
		server_failed(di, err, NULL);
		return err;
	}
	c = debuginfod_begin();
	if (!c)
		return -ENOMEM;
	debuginfod_set_user_data(c, &t);
	debuginfod_set_progressfn(c, transfer_progress);
	if (di->null_fd >= 0)
		debuginfod_set_verbose_fd(c, di->null_fd);
	fd = debuginfod_find_debuginfo(c, d->id, d->id_size, &path);
	if (debuginfod_get_url(c))
		snprintf(url, sizeof(url), "%s", debuginfod_get_url(c));
	debuginfod_end(c);
	forget_download(di, hex);
	if (fd < 0 && (t.over_time || t.over_bytes))
		fd = t.over_time ? -ETIMEDOUT : -EFBIG;	/* aborted: not a miss */
	if (fd == -ENOENT) {
		pthread_mutex_lock(&di->lock);
		debug_misses__add(di->misses, hex, (__u64)time(NULL));
		pthread_mutex_unlock(&di->lock);
		free(path);
		return -ENOENT;
	}
	if (fd < 0) {
		err = fd;
		server_failed(di, err, url);
		free(path);
		return err;
	}
	if (!fstat(fd, &st)) {
		pthread_mutex_lock(&di->lock);
		di->st.bytes += (__u64)st.st_size;
		pthread_mutex_unlock(&di->lock);
	}
	err = elf_debug_file_check(fd, d->id, d->id_size);
	free(path);
	if (err) {
		char shown[PRINTABLE_MAX];

		close(fd);
		COUNT(di, refused);
		pr_debug("debuginfod: the file served for %s (%s) was refused: %s",
			 printable(shown, sizeof(shown), d->name), hex, strerror(-err));
		server_failed(di, -EBADMSG, url);	/* said in the one warning */
		return -EBADMSG;
	}
	return fd;
}

/* ---- the lookup --------------------------------------------------------- */

int debuginfo__find(struct debuginfo *di, const struct debuginfo_dso *d, __u64 deadline,
		    bool want_fd)
{
	char hex[BUILD_ID_HEX_SIZE], shown[PRINTABLE_MAX];
	int fd, has, err;
	bool from_server = false;

	if (!di || !d->name || d->name[0] != '/' || d->id_size < 2 || d->id_size > BUILD_ID_SIZE)
		return -EINVAL;
	has = elf_has_own_names_fd(d->fd);
	if (has)
		return has > 0 ? -ENODATA : has;
	build_id_hex(d->id, d->id_size, hex);
	COUNT(di, asked);
	if (di->cache_dir) {
		fd = buildid_cache__open_debug(di->cache_dir, d->name, d->id, d->id_size);
		if (fd >= 0 && !elf_debug_file_check(fd, d->id, d->id_size)) {
			COUNT(di, cached);
			if (want_fd)
				return fd;
			close(fd);
			return 0;
		}
		if (fd >= 0)
			close(fd);
	}
	fd = find_local(di, d, hex);
	if (fd >= 0) {
		COUNT(di, local);
	} else if (di->server) {
		fd = find_server(di, d, hex, deadline);
		from_server = fd >= 0;
		if (fd == -EEXIST)
			return -ENOENT;		/* counted as known */
		if (fd < 0 && fd != -ENOENT)
			return fd;		/* counted as failed */
	}
	if (fd < 0) {
		COUNT(di, missing);
		return -ENOENT;
	}
	if (from_server)
		COUNT(di, fetched);
	err = di->cache_dir ? buildid_cache__add_debug_fd(di->cache_dir, d->name, d->id,
							  d->id_size, fd, d->fd, d->flags) : 0;
	if (err)
		pr_debug("%s: debug file not cached: %s", printable(shown, sizeof(shown), d->name),
			 strerror(-err));
	else
		pr_debug("%s: debug file %s", printable(shown, sizeof(shown), d->name),
			 from_server ? "fetched" : "found locally");
	if (want_fd)
		return fd;
	close(fd);
	return 0;
}

struct pool {
	struct debuginfo *di;
	const struct debuginfo_dso *v;
	size_t n, next;
	__u64 deadline;
	pthread_mutex_t lock;
};

static void *pool_worker(void *arg)
{
	struct pool *p = arg;

	for (;;) {
		size_t i;

		pthread_mutex_lock(&p->lock);
		i = p->next++;
		pthread_mutex_unlock(&p->lock);
		if (i >= p->n)
			return NULL;
		debuginfo__find(p->di, &p->v[i], p->deadline, false);
	}
}

void debuginfo__find_all(struct debuginfo *di, const struct debuginfo_dso *v, size_t n,
			 __u64 deadline)
{
	struct pool p = { .di = di, .v = v, .n = n, .deadline = deadline };
	pthread_t th[DEBUGINFO_THREADS];
	size_t nth = 0;

	if (!di || !n)
		return;
	pthread_mutex_init(&p.lock, NULL);
	while (nth + 1 < DEBUGINFO_THREADS && nth + 1 < n &&
	       !pthread_create(&th[nth], NULL, pool_worker, &p))
		nth++;
	pool_worker(&p);		/* this thread is one of them */
	while (nth)
		pthread_join(th[--nth], NULL);
	pthread_mutex_destroy(&p.lock);
}
