/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Pure encoders for the perf.data records precord writes.  Each appends one
 * complete record (header, body, sample_id_all trailer, size a multiple of
 * 8) to a pbuf and returns 0 or -errno.
 *
 * Every attr precord writes has sample_id_all=1 and these sample_type bits
 * (perf requires one id layout across attrs): IDENTIFIER|IP|TID|TIME|CPU|
 * PERIOD, plus CALLCHAIN, WEIGHT, ADDR, RAW … as an event needs.  The
 * trailer of non-sample records is therefore {pid,tid}{time}{cpu,res}{id}.
 */
#ifndef PRECORD_PERFDATA_RECORD_H
#define PRECORD_PERFDATA_RECORD_H

#include <stdbool.h>
#include <linux/perf_event.h>
#include <linux/types.h>

#include "util/buf.h"

#define PREC_SAMPLE_ID_BITS \
	(PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_CPU)
#define PREC_SAMPLE_BASE_BITS \
	(PREC_SAMPLE_ID_BITS | PERF_SAMPLE_IP | PERF_SAMPLE_PERIOD)
#define PREC_SAMPLE_ID_SIZE	32	/* trailer bytes */

struct perfdata_sample_id {
	__u32 pid, tid;
	__u64 time;
	__u32 cpu;
	__u64 id;			/* 0 = the first evsel */
};

struct perfdata_sample {
	__u16 misc;			/* PERF_RECORD_MISC_USER / _KERNEL */
	__u64 id;
	__u64 ip;
	__u32 pid, tid;
	__u64 time;
	__u64 addr;			/* PERF_SAMPLE_ADDR */
	__u32 cpu;
	__u64 period;
	const __u64 *callchain;		/* PERF_SAMPLE_CALLCHAIN: nr entries */
	__u32 nr_callchain;
	const void *raw;		/* PERF_SAMPLE_RAW */
	__u32 raw_size;
	__u64 regs_abi;			/* PERF_SAMPLE_REGS_USER: 0 = none */
	const __u64 *regs;		/* nr_regs values when regs_abi != 0 */
	__u32 nr_regs;
	__u64 weight;			/* PERF_SAMPLE_WEIGHT */
};

/* Supported sample_type bits: IDENTIFIER IP TID TIME ADDR CPU PERIOD
 * CALLCHAIN RAW REGS_USER WEIGHT.  Others give -EINVAL.  With REGS_USER,
 * nr_regs must be the number of bits in the attr's sample_regs_user. */
int perfdata_encode_sample(struct pbuf *out, __u64 sample_type,
			   const struct perfdata_sample *s);

int perfdata_encode_comm(struct pbuf *out, __u32 pid, __u32 tid,
			 const char *comm, bool exec,
			 const struct perfdata_sample_id *sid);

struct perfdata_mmap2 {
	__u16 misc;			/* PERF_RECORD_MISC_USER (+MMAP_BUILD_ID) */
	__u32 pid, tid;
	__u64 start, len, pgoff;
	__u32 maj, min;
	__u64 ino, ino_generation;
	__u32 prot, flags;
	__u8 build_id_size;		/* > 0: misc gets MMAP_BUILD_ID */
	__u8 build_id[20];
	const char *filename;
};
int perfdata_encode_mmap2(struct pbuf *out, const struct perfdata_mmap2 *m,
			  const struct perfdata_sample_id *sid);

/* PERF_RECORD_MMAP for the kernel and modules (misc KERNEL, pid -1). */
int perfdata_encode_kernel_mmap(struct pbuf *out, __u64 start, __u64 len,
				__u64 pgoff, const char *filename,
				const struct perfdata_sample_id *sid);

/* FORK and EXIT share a layout. */
int perfdata_encode_task(struct pbuf *out, __u32 type, __u32 pid, __u32 ppid,
			 __u32 tid, __u32 ptid, __u64 time, __u16 misc,
			 const struct perfdata_sample_id *sid);

int perfdata_encode_lost_samples(struct pbuf *out, __u64 lost,
				 const struct perfdata_sample_id *sid);
int perfdata_encode_lost(struct pbuf *out, __u64 id, __u64 lost,
			 const struct perfdata_sample_id *sid);

/* Records with no trailer. */
int perfdata_encode_finished_round(struct pbuf *out);
int perfdata_encode_finished_init(struct pbuf *out);

#endif
