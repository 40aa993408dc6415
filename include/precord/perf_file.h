/* SPDX-License-Identifier: GPL-2.0 */
/*
 * On-disk perf.data layout that is not in the kernel UAPI: the file header,
 * file sections, feature ids and the user-space record types (>= 64).
 * Values are those of perf 6.1 (tools/perf/util/header.h, event.h); see
 * docs/perf-data.md.  Everything is native endian.
 */
#ifndef PRECORD_PERF_FILE_H
#define PRECORD_PERF_FILE_H

#include <linux/perf_event.h>
#include <linux/types.h>

#define PERF_MAGIC2		0x32454c4946524550ULL	/* "PERFILE2" */
#define PERF_ATTR_WRITE_SIZE	128	/* PERF_ATTR_SIZE_VER7: largest perf 6.1 reads */

struct perf_file_section {
	__u64 offset;		/* absolute file offset */
	__u64 size;
};

/* 104 bytes */
struct perf_file_header {
	__u64 magic;
	__u64 size;		/* sizeof(struct perf_file_header) */
	__u64 attr_size;	/* attr.size + sizeof(struct perf_file_section) */
	struct perf_file_section attrs;
	struct perf_file_section data;
	struct perf_file_section event_types;	/* unused, zero */
	__u64 adds_features[4];	/* bit N = feature N present */
};

/* Feature ids (bit numbers in adds_features). */
enum {
	HEADER_RESERVED = 0,
	HEADER_TRACING_DATA = 1,
	HEADER_BUILD_ID,
	HEADER_HOSTNAME,
	HEADER_OSRELEASE,
	HEADER_VERSION,
	HEADER_ARCH,
	HEADER_NRCPUS,
	HEADER_CPUDESC,
	HEADER_CPUID,
	HEADER_TOTAL_MEM,
	HEADER_CMDLINE,
	HEADER_EVENT_DESC,
	HEADER_CPU_TOPOLOGY,
	HEADER_NUMA_TOPOLOGY,
	HEADER_BRANCH_STACK,
	HEADER_PMU_MAPPINGS,
	HEADER_GROUP_DESC,
	HEADER_AUXTRACE,
	HEADER_STAT,
	HEADER_CACHE,
	HEADER_SAMPLE_TIME,
	HEADER_MEM_TOPOLOGY,
	HEADER_CLOCKID,
	HEADER_DIR_FORMAT,
	HEADER_BPF_PROG_INFO,
	HEADER_BPF_BTF,
	HEADER_COMPRESSED,
	HEADER_CPU_PMU_CAPS,
	HEADER_CLOCK_DATA,
	HEADER_HYBRID_TOPOLOGY,
	HEADER_PMU_CAPS,
	HEADER_LAST_FEATURE,	/* 32: perf 6.1 reads no feature at or past this */
};

/* User-space record types, written by perf tools, never by the kernel. */
enum {
	PERF_RECORD_HEADER_ATTR = 64,
	PERF_RECORD_HEADER_EVENT_TYPE = 65,
	PERF_RECORD_HEADER_TRACING_DATA = 66,
	PERF_RECORD_HEADER_BUILD_ID = 67,
	PERF_RECORD_FINISHED_ROUND = 68,
	PERF_RECORD_ID_INDEX = 69,
	PERF_RECORD_AUXTRACE_INFO = 70,
	PERF_RECORD_AUXTRACE = 71,
	PERF_RECORD_AUXTRACE_ERROR = 72,
	PERF_RECORD_THREAD_MAP = 73,
	PERF_RECORD_CPU_MAP = 74,
	PERF_RECORD_STAT_CONFIG = 75,
	PERF_RECORD_STAT = 76,
	PERF_RECORD_STAT_ROUND = 77,
	PERF_RECORD_EVENT_UPDATE = 78,
	PERF_RECORD_TIME_CONV = 79,
	PERF_RECORD_HEADER_FEATURE = 80,
	PERF_RECORD_COMPRESSED = 81,
	PERF_RECORD_FINISHED_INIT = 82,
};

#define PERF_RECORD_MISC_BUILD_ID_SIZE	(1 << 15)	/* in BUILD_ID entries */
#ifndef PERF_RECORD_MISC_MMAP_BUILD_ID
#define PERF_RECORD_MISC_MMAP_BUILD_ID	(1 << 14)
#endif

#define BUILD_ID_MAX	20

#endif
