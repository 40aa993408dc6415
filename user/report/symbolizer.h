/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Symbolizer: the processes, mappings and names of one perf.data file, and
 * an address → {symbol, DSO, build-id} lookup that follows perf report's
 * rules and names ("[kernel.kallsyms]", "[vdso]", "/tmp/perf-PID.map",
 * "[unknown]").
 *
 * Symbol tables come from a sym_cache shared by any number of files and
 * loaded only for DSOs a sample hits, once per build-id:
 *   - ELF DSOs: the build-id cache first (perf's layout,
 *     DIR/.build-id/xx/REST/elf), else the file at its path (and a
 *     precord JIT image next to the input, FILE.jit/jit-N.so) when its
 *     build-id matches (or the file has none recorded); a stripped one's
 *     symbols from its debug file (perfdata/debuginfo.h: the cache's
 *     DIR/PATH/HEX/debug, /usr/lib/debug, .gnu_debuglink, debuginfod);
 *   - the kernel: the cached kallsyms of its build-id, else /proc/kallsyms
 *     when the file was recorded on this host (HOSTNAME and OSRELEASE
 *     match, and the running kernel's build-id when the file has one),
 *     relocated by the recorded _text address; else addresses only;
 *   - [vdso]: the cached image, else this process's vdso when its build-id
 *     matches;
 *   - anonymous executable memory: /tmp/perf-PID.map, on the recording
 *     host only.
 */
#ifndef PRECORD_REPORT_SYMBOLIZER_H
#define PRECORD_REPORT_SYMBOLIZER_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>

#include "report/perf_reader.h"

struct sym_cache;

struct sym_cache_stats {
	__u64 lookups;			/* DSO tables asked for */
	__u64 loads;			/* of which loaded from disk */
	__u64 failed;			/* of which without symbols */
	__u64 refused;			/* of which refused: tables over elf/sections.h's limits */
	__u64 evicted;			/* tables freed to stay under the limit */
	__u64 symbols, bytes;		/* held */
	double load_seconds;		/* spent loading */
};

/*
 * The symbol tables a cache keeps between files: when the last file's
 * symbolizer is freed, the least recently used tables are freed until
 * what is held is at most this (a file holds every table it uses while
 * it is read).  A long-lived cache (push's, inside the recorder) stays
 * bounded; an evicted table is loaded again when a later file needs it.
 */
#define SYM_CACHE_MAX_BYTES	(256ULL << 20)

/* buildid_dir: perf's --buildid-dir; NULL: the process's default (see
 * set_default_dir), else perf's (~/.debug or buildid.dir in perf's
 * config).  NULL + errno on failure. */
struct sym_cache *sym_cache__new(const char *buildid_dir);
/* The directory of caches made with NULL from now on (the recorder's
 * --buildid-dir, for its --push thread); NULL: perf's.  Copied; call it
 * before any thread makes a cache. */
int sym_cache__set_default_dir(const char *buildid_dir);
/*
 * How caches made from now on look up the debug files of stripped DSOs
 * (perfdata/debuginfo.h; the recorder's --debug-root, --no-debuginfod,
 * --debuginfod-timeout, --debuginfod-max for its --push thread).  Each
 * file's lookups end by one deadline.  Call it before any thread makes a
 * cache.
 */
void sym_cache__set_debug_defaults(const char *debug_root, bool no_server, double deadline_secs,
				   __u64 max_bytes);
void sym_cache__free(struct sym_cache *c);
const struct sym_cache_stats *sym_cache__stats(const struct sym_cache *c);
/* Another limit than SYM_CACHE_MAX_BYTES (applied after the next file). */
void sym_cache__set_max_bytes(struct sym_cache *c, __u64 bytes);

/* A DSO as a file names it; lives as long as its symbolizer. */
struct sym_dso {
	const char *name;		/* path, "[kernel.kallsyms]", "[xfs]", "[vdso]", "[unknown]" … */
	const char *build_id;		/* lower-case hex; "" when unknown */
	bool kernel;
};

/* One resolved address. */
struct sym_frame {
	__u64 ip;
	const char *sym;		/* NULL when unknown (perf shows "[unknown]") */
	__u64 sym_off;			/* ip's offset in sym */
	const struct sym_dso *dso;	/* never NULL */
	__u64 map_start, map_end, map_pgoff;	/* the mapping; 0s when none */
};

struct symbolizer;

/* One per file; r must outlive it.  NULL + errno on failure. */
struct symbolizer *symbolizer__new(struct sym_cache *c, const struct perf_reader *r);
void symbolizer__free(struct symbolizer *s);

/*
 * Mappings (tree nodes) and processes one file may hold at once: about
 * 64 bytes each, so at most ~128 MiB.  A file over it is refused
 * (-E2BIG): memory and time stay linear in the file's size (a FORK
 * shares its parent's mappings, an insert or lookup is O(log n)).
 */
#define SYMBOLIZER_MAX_ENTRIES	(2u << 20)

/* Feed every record in the reader's order (MMAP, MMAP2, COMM, FORK, EXIT,
 * CGROUP change the state; others are ignored).  0, -ENOMEM, or -E2BIG
 * over SYMBOLIZER_MAX_ENTRIES. */
int symbolizer__event(struct symbolizer *s, const struct perf_event_view *ev);

/* What the process table holds (for tests and the fuzz harness). */
struct symbolizer_stats {
	__u64 procs;			/* process entries */
	__u64 map_nodes;		/* live mapping nodes, shared ones once */
	__u64 map_copies;		/* nodes copied to unshare them */
	__u64 map_steps;		/* tree nodes visited (inserts, lookups) */
	__u64 bytes;			/* held by processes and their mappings */
};
const struct symbolizer_stats *symbolizer__stats(struct symbolizer *s);

/* The frames of a sample, leaf first (its call chain without the context
 * markers, else its ip), at most max.  Returns the number written. */
size_t symbolizer__frames(struct symbolizer *s, const struct perf_event_view *ev,
			  struct sym_frame *out, size_t max);

/* The name of thread tid (NULL when no COMM named it). */
const char *symbolizer__comm(const struct symbolizer *s, __u32 tid);
/* The path of cgroup id from CGROUP records (NULL when none). */
const char *symbolizer__cgroup(const struct symbolizer *s, __u64 id);
/* Whether the file was recorded on this host (its HOSTNAME and OSRELEASE). */
bool symbolizer__same_host(const struct symbolizer *s);

#endif
