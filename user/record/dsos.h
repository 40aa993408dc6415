/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What each target process maps, which of those DSOs have samples, and
 * their build-ids: feeds HEADER_BUILD_ID and perf's build-id cache.
 */
#ifndef PRECORD_RECORD_DSOS_H
#define PRECORD_RECORD_DSOS_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>

#include "perfdata/features.h"

struct dso_table;

struct dso_table *dso_table__new(void);
void dso_table__free(struct dso_table *dt);

/* The mapped file as the kernel named it (MMAP2 maj/min/ino/ino_generation,
 * or the device and inode columns of /proc/PID/maps). */
struct dso_file_id {
	__u32 maj, min;
	__u64 ino;		/* 0: unknown */
	__u64 ino_generation;	/* when has_generation */
	bool has_generation;
	__u64 time;		/* of the mapping, CLOCK_MONOTONIC ns; 0: unknown */
	__u64 pgoff;		/* where the mapping starts in the file */
};

/*
 * Told of every mapping dso_table__mmap is given (the unwinder of
 * --call-graph ehframe): fd is the mapped file as opened with the checks
 * below (-1: it could not be; borrowed for the call), bid its build-id
 * (bid_size 0: none known).
 */
struct dso_mmap_observer {
	void (*mapped)(void *ctx, __u32 pid, __u64 start, __u64 len, __u64 pgoff, int fd,
		       const char *name, const __u8 *bid, __u8 bid_size);
	void *ctx;
};
void dso_table__set_observer(struct dso_table *dt, const struct dso_mmap_observer *obs);

/*
 * An executable mapping of name in process pid.  bid/bid_size: the build
 * id if known (0 = read it from the file).  The file is opened through
 * /proc/PID/map_files (so binaries in other mount namespaces work), else
 * (the mapping is gone) as name inside /proc/PID/root, and kept open for
 * the build-id cache.  The process is hostile: only a regular file is
 * read, no symlink is followed by name, and a file whose inode differs
 * from id (when known; when not, only map_files is used) is not read at
 * all; by name, neither is one on another device, of another inode
 * generation, or changed after id->time (an inode number freed by the
 * unmapped file and reused for another).  By name, a file on a btrfs
 * subvolume is not read (stat's device is not the MMAP2 record's).  Fills bid/bid_size when it read the build id itself (bid
 * must have room for 20 bytes).
 */
int dso_table__mmap(struct dso_table *dt, __u32 pid, __u64 start, __u64 len,
		    const char *name, const struct dso_file_id *id,
		    __u8 *bid, __u8 *bid_size);
/*
 * A process's mappings are tracked up to 65536 (DSO_MAPS_PER_PROC); past
 * that its new ones are counted (said once per process, with its pid and
 * name) and not tracked: no build-id read, no hit.  Each call costs
 * O(log n) in the process's mappings (amortized: a mapping removes at most
 * what earlier ones added), plus opening the file the first time it is
 * seen.
 */
/* A new process pid, forked from ppid: it starts with its parent's maps
 * (shared, O(1)). */
void dso_table__fork(struct dso_table *dt, __u32 ppid, __u32 pid);
/* Process pid is gone (collected after its last samples were written):
 * its maps are freed. */
void dso_table__forget(struct dso_table *dt, __u32 pid);
/* A file was finished (--switch-output): hits start again, and the DSOs
 * no process maps any more are freed, their
 * descriptors closed. */
void dso_table__new_file(struct dso_table *dt);
/* Mark the DSO containing user address ip of pid as sampled. */
void dso_table__hit(struct dso_table *dt, __u32 pid, __u64 ip);
void dso_table__kernel_hit(struct dso_table *dt);

/*
 * At the end: BUILD_ID entries (every DSO with a build-id that a target
 * mapped, the kernel and [vdso]) and copies of the sampled ones in the
 * build-id cache at cache_dir (NULL: no cache).  The array stays valid
 * until dso_table__free.
 */
int dso_table__finish(struct dso_table *dt, const char *cache_dir, bool kernel,
		      const struct perfdata_build_id **ids, size_t *nr);
/* The DSOs of the current file that samples hit, with a path, a
 * build-id and an open file (for steps after the file: their debug
 * files, issue 21).  h and its fields live for the call. */
struct dso_hit {
	const char *name;
	const __u8 *bid;
	__u8 bid_size;
	int fd;
	bool private_path;	/* behind a directory others cannot search */
};
void dso_table__for_each_hit(const struct dso_table *dt,
			     void (*fn)(void *ctx, const struct dso_hit *h), void *ctx);
/* Extra entries (JIT images) to add to BUILD_ID. */
int dso_table__add_build_id(struct dso_table *dt, const char *name,
			    const __u8 *bid, __u8 size, bool hit);
/* Bytes the BUILD_ID entries of the DSOs known so far may take (an upper
 * bound: every DSO counted, the kernel and [vdso] included). */
__u64 dso_table__build_id_bytes(const struct dso_table *dt);

struct dso_table_stats {
	__u64 maps_over;	/* mappings past the per-process cap */
	__u32 procs_over;	/* processes that made some */
	size_t maps;		/* tracked, in all processes */
	__u64 steps;		/* their maps' nodes visited so far: for tests */
};
struct dso_table_stats dso_table__stats(const struct dso_table *dt);
/* The mappings past the per-process cap, if any: one warning. */
void dso_table__print_stats(const struct dso_table *dt);

#endif
