/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The JIT code of the targets, named through the JIT merger
 * (user/jit/merger.h):
 *  - a target that maps jit-<pid>.dump (the runtime's marker) hands the
 *    dump to the merger; the marker mapping itself is not written;
 *  - anonymous executable mappings of targets are held back: a process
 *    with a JIT source (jitdump, /tmp/perf-PID.map found through
 *    /proc/PID/root, --mlpd) gets per-function mappings into the merged
 *    ELF images instead; the others get their anonymous mappings written
 *    at the end (perf report then reads /tmp/perf-PID.map itself);
 *  - at the end the images' mappings become MMAP2 records, their build-ids
 *    go into BUILD_ID and the build-id cache.
 * JIT mappings carry timestamps from the past, so a recording with JIT
 * merging writes no FINISHED_ROUND (perf sorts the whole file).
 */
#ifndef PRECORD_RECORD_JIT_SOURCES_H
#define PRECORD_RECORD_JIT_SOURCES_H

#include <stdbool.h>
#include <sys/types.h>
#include <linux/types.h>

#include "opts.h"
#include "record/sample_converter.h"

struct jit_sources;
struct perfdata_writer;
struct dso_table;

struct jit_sources_config {
	const struct prec_opts *o;	/* --jit, --jitdump, --perf-map, --mlpd, -o */
	pid_t command;			/* the `-- command`, 0: none */
	/* SIGINT/SIGTERM received so far: reads of JIT sources stop on one */
	unsigned int (*stop_requests)(void);
};

/* *out: NULL when the options ask for no JIT merging.  The files given
 * on the command line are read now; says why one cannot be. */
int jit_sources__new(struct jit_sources **out, const struct jit_sources_config *cfg);
void jit_sources__free(struct jit_sources *js);			/* NULL-safe */

/* What the converter does with executable mappings (js may be NULL). */
struct exec_map_hook jit_sources__hook(struct jit_sources *js);
/* Once a loop: look for new perf maps, read what the sources added.
 * start_ns: when the recording began (CLOCK_MONOTONIC). */
int jit_sources__poll(struct jit_sources *js, __u64 start_ns);
/* At the end: the final read, the images written, their mappings and
 * the held anonymous ones queued on w (trailers as id_type says), their
 * build-ids into dt and the cache at cache_dir (NULL: none). */
int jit_sources__finish(struct jit_sources *js, struct perfdata_writer *w, __u64 id_type,
			struct dso_table *dt, const char *cache_dir, __u64 start_ns);
/* Where a file switch (--switch-output) cuts: the switch's time, and
 * the number of the file it finishes (from 1). */
struct jit_cut {
	__u64 before;
	__u32 file;
};
/* A file switch: read what the sources have, write the open image, and
 * queue on w (the finished file's writer) the mappings made before
 * cut.before of every function so far and the held anonymous ones, as
 * finish does (a later one is the next file's, as every record with its
 * time); the images stay on disk for the files after (never rewritten). */
int jit_sources__checkpoint(struct jit_sources *js, struct perfdata_writer *w, __u64 id_type,
			    struct dso_table *dt, const char *cache_dir, __u64 start_ns,
			    struct jit_cut cut);
/* After a file switch: a process that exited before the new file began
 * (proc_state__collect's callback).  Noted; collect() then closes its
 * JIT sources and drops its mappings and held anonymous code, so a pid
 * reused later starts afresh and a long recording holds only what its
 * live processes need. */
void jit_sources__forget(struct jit_sources *js, __u32 pid);
void jit_sources__collect(struct jit_sources *js);
/* --switch-max-files removed the files before number first_kept (the
 * numbers of jit_cut.file): the JIT images only they named go too, and
 * their copies in the build-id cache at cache_dir (NULL: none). */
void jit_sources__prune(struct jit_sources *js, __u32 first_kept, const char *cache_dir);
/* The records synthesized for processes that existed before the start
 * (len bytes): their jitdump markers and anonymous code are looked at as
 * the side-band's are, so a runtime started before precord is merged. */
void jit_sources__synthesized(struct jit_sources *js, const void *buf, size_t len);
/* A named function of process pid at [start, start + size) from time on
 * (Python code objects, record/pyprocs.c; code: size bytes, or NULL),
 * written into the JIT images.  0 or -errno (-E2BIG: past the merger's
 * limits, counted there). */
int jit_sources__add_named(struct jit_sources *js, __u32 pid, __u64 time, __u64 start,
			   __u64 size, const char *name, const void *code);
/* A write error kept images from being written (said at the finish). */
bool jit_sources__images_lost(const struct jit_sources *js);

#endif
