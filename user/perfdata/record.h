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
#include <stddef.h>
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

/*
 * The hot path's sample: PREC_SAMPLE_BASE_BITS, plus PERF_SAMPLE_WEIGHT
 * when weight.  perfdata_base_sample_size() bytes (header included) that
 * perfdata_put_base_sample() writes at dst, the same bytes as
 * perfdata_encode_sample() with these bits, without a buffer to grow
 * (dst is, e.g., perfdata_writer__queue_space()).
 */
struct perfdata_base_sample {
	struct perf_event_header h;
	__u64 id;		/* PERF_SAMPLE_IDENTIFIER */
	__u64 ip;
	__u32 pid, tid;
	__u64 time;
	__u32 cpu, res;
	__u64 period;
	__u64 weight;		/* with weight only */
};

_Static_assert(sizeof(struct perfdata_base_sample) == 64, "perfdata_base_sample layout");
_Static_assert(PREC_SAMPLE_BASE_BITS == (PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP |
	       PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_CPU | PERF_SAMPLE_PERIOD),
	       "struct perfdata_base_sample follows PREC_SAMPLE_BASE_BITS");

static inline size_t perfdata_base_sample_size(bool weight)
{
	return weight ? sizeof(struct perfdata_base_sample)
		      : offsetof(struct perfdata_base_sample, weight);
}

/* Inline: it runs twice per traced call. */
static inline void perfdata_put_base_sample(void *dst, const struct perfdata_sample *s,
					    bool weight)
{
	struct perfdata_base_sample *r = dst;

	r->h.type = PERF_RECORD_SAMPLE;
	r->h.misc = s->misc;
	r->h.size = (__u16)perfdata_base_sample_size(weight);
	r->id = s->id;
	r->ip = s->ip;
	r->pid = s->pid;
	r->tid = s->tid;
	r->time = s->time;
	r->cpu = s->cpu;
	r->res = 0;
	r->period = s->period;
	if (weight)
		r->weight = s->weight;
}

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
