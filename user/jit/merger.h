/* SPDX-License-Identifier: GPL-2.0 */
/*
 * JIT merger: reads jitdumps, perf maps and Mono .mlpd files while a
 * recording runs, packs the functions into a few ELF images (jitelf.h) in
 * an output directory, and hands back one mapping per function (and per
 * move or address reuse), which the recorder writes as PERF_RECORD_MMAP2.
 *
 * Time: jitdump timestamps are CLOCK_MONOTONIC ns (perf record -k mono);
 * a mapping's time is the record's.  Perf maps have no timestamps: their
 * entries get the time given to add_perf_map for the first read, and the
 * time of the previous poll for lines appended later.  .mlpd methods keep
 * the reader's time (0 when the file's clock is unknown: map from start).
 *
 * Typical use:
 *   m = jit_merger__new("perf.data.jit");
 *   jit_merger__add_jitdump(m, path, fd, pid);	// when a target maps it
 *   jit_merger__poll(m, now);			// now and then
 *   jit_merger__finish(m);			// at the end: writes images
 *   n = jit_merger__nr_mappings(m);		// MMAP2 records, by time
 *   jit_merger__mapping(m, i, &map);		//   i < n
 *   k = jit_merger__images(m, &imgs);		// BUILD_ID entries + cache
 *   jit_merger__free(m);
 */
#ifndef PRECORD_JIT_MERGER_H
#define PRECORD_JIT_MERGER_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>

/* Code bytes per image before a new image is started. */
#define JIT_IMAGE_MAX_CODE	(32u << 20)
/* Functions without code bytes (NOBITS space) per image. */
#define JIT_IMAGE_MAX_NOCODE	(1ULL << 32)
/* Function names + debug info per image. */
#define JIT_IMAGE_MAX_META	(64u << 20)

/*
 * What reading JIT sources may cost (the target writes them, as large as
 * it likes: a 36 KB sparse jitdump made 257 MB of images).  Bytes count
 * what the readers consume: jitdump records, perf-map lines, .mlpd bytes
 * after decompression.
 */
#define JIT_DEFAULT_MAX_BYTES	(512ULL << 20)	/* --jit-max-bytes */
#define JIT_POLL_BYTES		(64ULL << 20)	/* per source and poll: >= a record */
#define JIT_POLL_NS		(50ULL * 1000000)	/* per poll, all sources */
#define JIT_FINISH_NS		(10ULL * 1000000000)	/* finish(): what is left */
/* Mappings kept (functions, moves, reuses): each costs ~170 B here and as
 * much again as an MMAP2 record in the writer's queue; the rest are
 * counted (jit_stats.dropped) and reported. */
#define JIT_MAX_MAPPINGS	(2u * 1000 * 1000)

struct jit_limits {
	__u64 max_bytes;		/* whole recording, all sources; 0: default */
	__u64 poll_ns, finish_ns;	/* 0: defaults */
	bool (*stop)(void *ctx);	/* a stop request: readers return early */
	void *stop_ctx;
};

struct jit_mapping {		/* becomes one PERF_RECORD_MMAP2 */
	__u64 time;		/* CLOCK_MONOTONIC ns */
	__u32 pid, tid;
	__u64 start, len, pgoff;
	const char *path;	/* absolute path of the image */
	__u8 build_id[20];
	__u8 build_id_size;	/* 20 */
};

struct jit_image {		/* one written ELF image */
	const char *path;	/* absolute */
	__u8 build_id[20];
	__u8 build_id_size;	/* 20 */
	__u64 size;		/* file bytes */
	__u32 nr_funcs;
};

struct jit_stats {
	__u64 loads;		/* JIT_CODE_LOAD records used */
	__u64 moves;		/* JIT_CODE_MOVE records used */
	__u64 debug;		/* functions with line info */
	__u64 unwind;		/* functions with .eh_frame */
	__u64 map_entries;	/* perf-map lines used */
	__u64 mlpd_methods;	/* .mlpd code regions used */
	__u64 bad_records;	/* records/lines skipped as malformed */
	__u64 bytes_read;	/* bytes consumed from JIT sources */
	__u64 unwritten;	/* jitdump records read from a writer's buffer */
	__u64 unread_sources;	/* sources left unread: byte limit, time, stop */
	__u64 dropped;		/* mappings not kept: past JIT_MAX_MAPPINGS */
	__u64 mappings;
	__u64 images;
	__u64 image_bytes;
	__u64 images_lost;	/* images that could not be written (removed) */
	__u64 images_pruned;	/* removed by jit_merger__prune */
	__u64 funcs_lost;	/* their functions: no mapping, samples unresolved */
	int write_err;		/* why the first of them failed (-errno) */
};

struct jit_merger;

/* out_dir is created (mode 0755) unless it already is a directory of
 * ours; a symlink is refused.  NULL + errno on error. */
struct jit_merger *jit_merger__new(const char *out_dir);
void jit_merger__free(struct jit_merger *m);	/* NULL-safe */
/* Limits for all later reads (the defaults until called). */
void jit_merger__set_limits(struct jit_merger *m, const struct jit_limits *l);

/*
 * Sources.  fd: already open (e.g. through /proc/PID/root; ownership
 * passes to the merger) or -1 to open path.  pid: the process as the
 * recording sees it (0: use the pid inside the file; perf maps have none,
 * so give it for them).  Each source is read
 * at once as far as it is written; poll() reads what was appended since.
 * A file already added (same device and inode, e.g. a dump mapped twenty
 * times) is not added again: 0.
 * Return 0 or -errno (the source is then not added).
 */
int jit_merger__add_jitdump(struct jit_merger *m, const char *path, int fd, __u32 pid);
int jit_merger__add_perf_map(struct jit_merger *m, const char *path, int fd,
			     __u32 pid, __u64 time);
/* .mlpd files are read by finish() (the runtime may create the file only
 * during the recording). */
int jit_merger__add_mlpd(struct jit_merger *m, const char *path, __u32 pid);

/* A function of size bytes (code: its bytes, NULL: none known), mapped
 * in process pid at [start, start + size) from time on: Python code
 * objects (record/pyprocs.c).  0, or -errno (-E2BIG: past the limits,
 * counted in jit_stats.dropped; -EINVAL: size 0 or implausibly large). */
int jit_merger__add_named(struct jit_merger *m, __u64 time, __u32 pid, __u64 start,
			  __u64 size, const char *name, const void *code);

/* Read what live sources appended, within JIT_POLL_BYTES per source and
 * the limits' poll time; now = CLOCK_MONOTONIC ns (the time for the
 * perf-map lines read by the next poll).  Returns 0 or -errno. */
int jit_merger__poll(struct jit_merger *m, __u64 now);

/* Read everything left (perf maps: also a last line without '\n'), read
 * the .mlpd files (within the byte limit, the finish time and the stop
 * request; what is left unread is reported), write the last image.
 * Returns 0 or -errno. */
int jit_merger__finish(struct jit_merger *m);

/* For a file switch while sources stay open: write the open image and
 * make the mappings and images so far available as after finish (the
 * calls below); reading goes on into new images.  no: the checkpoint's
 * number (the caller's file number: never less than the last one's),
 * for prune().  0 or -errno. */
int jit_merger__checkpoint(struct jit_merger *m, __u32 no);

/* After a checkpoint, for the processes gone(ctx, pid) says exited:
 * close their sources and drop their mappings (and their images from
 * the next checkpoint's list; the files stay on disk).  .mlpd files,
 * read at the end, are kept.  0, or -ENOMEM with nothing changed. */
int jit_merger__forget(struct jit_merger *m, bool (*gone)(void *ctx, __u32 pid), void *ctx);

/* Remove the images no checkpoint numbered first_kept or later listed
 * (the files of the earlier ones were removed: --switch-max-files), but
 * none sealed since the last checkpoint; removed (if not NULL) is told
 * each one's path and build-id.  Returns how many were removed. */
size_t jit_merger__prune(struct jit_merger *m, __u32 first_kept,
			 void (*removed)(void *ctx, const char *path, const __u8 *build_id),
			 void *ctx);

/* After finish (or a checkpoint): the number of mappings, and mapping i of them, sorted by
 * time (stable).  Filled on demand from 48-byte records (an array of
 * jit_mappings cost 72 more bytes per perf-map line at the peak). */
size_t jit_merger__nr_mappings(const struct jit_merger *m);
void jit_merger__mapping(const struct jit_merger *m, size_t i, struct jit_mapping *out);
/* After finish (or a checkpoint): the images. */
size_t jit_merger__images(const struct jit_merger *m, const struct jit_image **out);
/* One of those images opened for reading through the directory's
 * descriptor kept from its creation (whoever can write the directory
 * above may have replaced the path since): no link followed, no FIFO
 * waited on, only the file written.  An fd, or -errno (-ESTALE: not
 * the file written any more). */
int jit_merger__open_image(const struct jit_merger *m, const struct jit_image *img);
struct jit_stats jit_merger__stats(const struct jit_merger *m);
const char *jit_merger__dir(const struct jit_merger *m);	/* absolute */

#endif
