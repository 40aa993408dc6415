/* SPDX-License-Identifier: GPL-2.0 */
/*
 * perf.data reader: the files precord writes and the files `perf record`
 * 6.1 writes (native endian, not pipe mode).  The file may come from
 * anywhere: every size, count and offset is checked against the file
 * before it is used.  A bad record is reported once with the file and its
 * offset ("precord: F: offset 0x1234: ...", at most ten such lines per
 * file, then a count) and skipped when its size allows; a record whose
 * size does not let the reader find the next one ends the data section
 * there, keeping everything before it.
 *
 * Records are delivered in time order, as perf report sees them: records
 * between two PERF_RECORD_FINISHED_ROUNDs are queued and sorted, and
 * what is older than the previous round's newest record is delivered at
 * each round (perf's ordered-events rule); files with no rounds (precord
 * with JIT merging) are sorted whole.  Records without a time (user
 * record types, attrs without sample_id_all) go first, in file order.
 */
#ifndef PRECORD_REPORT_PERF_READER_H
#define PRECORD_REPORT_PERF_READER_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/perf_event.h>
#include <linux/types.h>

#include "perfdata/record.h"

/* Limits on what a file may claim; beyond them it is refused as corrupt. */
#define PERF_READER_MAX_ATTRS	4096	/* perf record -e with every event there is */
#define PERF_READER_MAX_IDS	(1u << 20)	/* ids over all attrs */
#define PERF_READER_MAX_ATTR_SIZE 4096

struct perf_reader;

/* A PERF_RECORD_SAMPLE's fields, those of its attr's sample_type (others
 * are 0).  Pointers point into the record and live as long as the view. */
struct perf_sample_view {
	int attr;			/* index of the sample's attr */
	__u64 id, ip, time, addr, period, weight, cgroup;
	__u32 pid, tid, cpu;
	__u64 nr_callchain;		/* PERF_SAMPLE_CALLCHAIN, markers included */
	const __u64 *callchain;
};

/* MMAP and MMAP2 (MMAP: no build-id, prot/flags 0). */
struct perf_mmap_view {
	__u32 pid, tid;
	__u64 start, len, pgoff;
	__u32 prot, flags;
	/* MMAP2 without a build-id: the mapped file's identity (ino 0: unknown) */
	__u32 maj, min;
	__u64 ino, ino_generation;
	__u8 build_id_size;		/* MMAP2 with PERF_RECORD_MISC_MMAP_BUILD_ID */
	__u8 build_id[20];
	const char *filename;		/* NUL-terminated inside the record */
};

struct perf_event_view {
	__u32 type;			/* PERF_RECORD_* */
	__u16 misc;
	__u16 size;
	__u64 offset;			/* of the record in the file */
	const void *raw;		/* the record, 8-byte aligned */
	bool has_sid;			/* sample_id_all trailer (or sample) parsed */
	struct perfdata_sample_id sid;	/* pid/tid/time/cpu/id of it */
	union {
		struct perf_sample_view sample;		/* SAMPLE */
		struct perf_mmap_view mmap;		/* MMAP, MMAP2 */
		struct {
			__u32 pid, tid;
			const char *comm;
			bool exec;		/* PERF_RECORD_MISC_COMM_EXEC */
		} comm;				/* COMM */
		struct {
			__u32 pid, ppid, tid, ptid;
			__u64 time;
		} task;				/* FORK, EXIT */
		struct {
			__u64 id;
			const char *path;
		} cgroup;			/* CGROUP */
		struct {
			__u64 id, lost;		/* LOST: both; LOST_SAMPLES: lost */
		} lost;
	};
};

/* Return non-zero to stop reading (perf_reader__read returns it). */
typedef int (*perf_reader_cb)(void *ctx, const struct perf_event_view *ev);

/* Counts of one read. */
struct perf_reader_stats {
	__u64 records;			/* delivered */
	__u64 samples;
	__u64 bad;			/* reported and skipped */
	__u64 lost;			/* samples LOST/LOST_SAMPLES say were lost */
	__u64 unordered;		/* older than what a round already delivered */
	bool truncated;			/* the data section ended early */
};

/* One entry of the BUILD_ID feature. */
struct perf_build_id {
	__s32 pid;
	__u16 misc;			/* cpumode in PERF_RECORD_MISC_CPUMODE_MASK */
	__u8 size;			/* 1..20 */
	__u8 id[20];
	const char *filename;
};

/*
 * Open path and check its header, attrs and features (HOSTNAME, OSRELEASE,
 * ARCH, NRCPUS, BUILD_ID are read; other features are ignored).  On error
 * returns NULL with errno set, after one message naming the file and what
 * is wrong (EINVAL: not a perf.data file or a corrupt header; ENOTSUP:
 * pipe-mode or foreign-endian).
 */
struct perf_reader *perf_reader__open(const char *path);
void perf_reader__free(struct perf_reader *r);

/* Deliver every record of the data section in time order (see above).
 * Returns 0, the callback's non-zero result, or -errno (-ENOMEM, -EIO). */
int perf_reader__read(struct perf_reader *r, perf_reader_cb cb, void *ctx);

const struct perf_reader_stats *perf_reader__stats(const struct perf_reader *r);
const char *perf_reader__path(const struct perf_reader *r);
/* Feature strings; NULL when the file has none. */
const char *perf_reader__hostname(const struct perf_reader *r);
const char *perf_reader__osrelease(const struct perf_reader *r);
const char *perf_reader__arch(const struct perf_reader *r);
/* NRCPUS' online count, 0 when absent. */
__u32 perf_reader__nr_cpus(const struct perf_reader *r);

size_t perf_reader__nr_attrs(const struct perf_reader *r);
/* The attr as the file has it, zero-extended (NULL past the end). */
const struct perf_event_attr *perf_reader__attr(const struct perf_reader *r, size_t i);

size_t perf_reader__nr_build_ids(const struct perf_reader *r);
const struct perf_build_id *perf_reader__build_id(const struct perf_reader *r, size_t i);
/* The BUILD_ID entry of filename (the last one when several), or NULL. */
const struct perf_build_id *perf_reader__find_build_id(const struct perf_reader *r,
						       const char *filename);

/*
 * Parse one record (h->size readable bytes, 8-byte aligned) as the file's
 * attrs say: the pure part of the reader, for tests and the fuzz harness.
 * Returns 0, or -EINVAL with *why set to a static message.
 */
int perf_reader__parse(const struct perf_reader *r, const struct perf_event_header *h,
		       struct perf_event_view *ev, const char **why);

#endif
