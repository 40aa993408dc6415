/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Debug files for stripped DSOs (issue 21), looked up in this order:
 *
 *   1. the build-id cache: DIR/<path>/<hex>/debug (found before);
 *   2. local files: ROOT/.build-id/<hex[0:2]>/<hex[2:]>.debug (Debian's
 *      -dbgsym packages; ROOT is /usr/lib/debug unless set), then the
 *      name in the DSO's .gnu_debuglink beside it, in its .debug/ and
 *      under ROOT/<its directory>, as gdb looks;
 *   3. the servers of DEBUGINFOD_URLS through libdebuginfod (none when
 *      the variable is unset or empty, or the server part is off).
 *
 * What is found is checked (elf/debugfile.h: sane headers, the DSO's
 * build-id, an admissible .symtab) and copied into the build-id cache as
 * DIR/<path>/<hex>/debug, where stock perf report reads it with no option.
 * libdebuginfod downloads into DIR/.precord/debuginfod (unless
 * DEBUGINFOD_CACHE_PATH is set), and its copy is removed once cached.
 * Server answers "not found" are remembered (perfdata/debug_misses.h).
 *
 * Bounds: every lookup ends by its deadline (libdebuginfod's transfer is
 * aborted from its progress callback, which it calls about once a second;
 * DEBUGINFOD_TIMEOUT and DEBUGINFOD_MAXTIME are set to the deadline when
 * the user has not set them), at most max_bytes are downloaded in all,
 * and a server that fails (refused, timed out, over the budget) is not
 * asked again by this object: the first failure is said in ONE warning
 * when the object is freed, with how many lookups it cost.
 */
#ifndef PRECORD_PERFDATA_DEBUGINFO_H
#define PRECORD_PERFDATA_DEBUGINFO_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>

#define DEBUGINFO_DEADLINE_DEFAULT	5.0		/* seconds, per batch */
#define DEBUGINFO_MAX_BYTES_DEFAULT	(1ull << 30)	/* downloaded per object */
#define DEBUGINFO_THREADS		4		/* lookups at once */
#define DEBUGINFO_ROOT_DEFAULT		"/usr/lib/debug"

struct debuginfo_config {
	const char *cache_dir;		/* the build-id cache (required) */
	const char *debug_root;		/* NULL: DEBUGINFO_ROOT_DEFAULT */
	double deadline_secs;		/* 0: DEBUGINFO_DEADLINE_DEFAULT */
	__u64 max_bytes;		/* 0: DEBUGINFO_MAX_BYTES_DEFAULT */
	bool no_server;			/* --no-debuginfod: local files only */
};

/* One DSO to name: fd its file (read only, borrowed), flags as
 * buildid_cache__add_fd's. */
struct debuginfo_dso {
	const char *name;
	const __u8 *id;
	int id_size;
	int fd;
	unsigned int flags;
};

struct debuginfo_stats {
	unsigned int asked;		/* DSOs without .symtab looked up */
	unsigned int cached;		/* found in the build-id cache */
	unsigned int local;		/* found in local files */
	unsigned int fetched;		/* fetched from a server */
	unsigned int missing;		/* nowhere (a server's "not found" included) */
	unsigned int known_missing;	/* not asked: a recent miss */
	unsigned int failed;		/* server failed, deadline or budget */
	unsigned int refused;		/* a candidate file refused by the checks */
	__u64 bytes;			/* downloaded */
};

struct debuginfo;

/*
 * NULL + errno.  Sets libdebuginfod's environment (DEBUGINFOD_CACHE_PATH,
 * _TIMEOUT, _MAXTIME, _MAXSIZE, each only when unset): call it before the
 * process starts threads that may read the environment.
 */
struct debuginfo *debuginfo__new(const struct debuginfo_config *cfg);
/* Saves the misses, says the warning (if any), frees.  NULL-safe. */
void debuginfo__free(struct debuginfo *di);

/* A deadline deadline_secs from now (CLOCK_MONOTONIC ns). */
__u64 debuginfo__deadline(const struct debuginfo *di);

/*
 * The debug file of d, looked up as above if d has no .symtab of its own
 * (want_fd: return it open, else 0 when found): fd (or 0), -ENOENT when
 * there is none, -ENODATA when d has its own .symtab, -ETIMEDOUT past
 * deadline (CLOCK_MONOTONIC ns), other -errno.  Thread-safe.
 */
int debuginfo__find(struct debuginfo *di, const struct debuginfo_dso *d, __u64 deadline,
		    bool want_fd);

/* Each of the n DSOs, in up to DEBUGINFO_THREADS threads, by deadline. */
void debuginfo__find_all(struct debuginfo *di, const struct debuginfo_dso *v, size_t n,
			 __u64 deadline);

struct debuginfo_stats debuginfo__stats(struct debuginfo *di);

#endif
