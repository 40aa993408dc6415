/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Pure encoders for the perf.data records precord writes.  Each appends one
 * complete record (header, body, sample_id_all trailer, size a multiple of
 * 8) to a pbuf and returns 0 or -errno.
 *
 * Every attr precord writes has sample_id_all=1, so every non-sample record
 * ends in a trailer whose fields follow the attrs' sample_type (perf
 * requires one id layout across attrs).  The encoders and parsers below
 * take that sample_type as `id_type`; this file is the one place that knows
 * the trailer's layout.
 */
#ifndef PRECORD_PERFDATA_RECORD_H
#define PRECORD_PERFDATA_RECORD_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/perf_event.h>
#include <linux/types.h>

#include "util/buf.h"

/* The id layout of a file with more than one attr (--trace's events): each
 * record says its event with IDENTIFIER. */
#define PREC_SAMPLE_ID_BITS \
	(PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_CPU)
#define PREC_SAMPLE_BASE_BITS \
	(PREC_SAMPLE_ID_BITS | PERF_SAMPLE_IP | PERF_SAMPLE_PERIOD)

/* The sample_type bits that put a field in the sample_id_all trailer. */
#define PERFDATA_SAMPLE_ID_ALL_BITS \
	(PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_ID | PERF_SAMPLE_STREAM_ID | \
	 PERF_SAMPLE_CPU | PERF_SAMPLE_IDENTIFIER)

/* The trailer's values; which of them are written follows id_type
 * (ID and IDENTIFIER both take `id`, STREAM_ID is written as 0). */
struct perfdata_sample_id {
	__u32 pid, tid;
	__u64 time;
	__u32 cpu;
	__u64 id;			/* 0 = the first evsel */
};

/* Bytes of the trailer with id_type's fields. */
size_t perfdata_sample_id_size(__u64 id_type);

/*
 * Read the trailer at the end of record h (h->size bytes readable).  fixed:
 * the bytes of the record before its variable part, header included; a
 * record shorter than fixed + the trailer gives -EINVAL.
 */
int perfdata_sample_id_parse(__u64 id_type, const struct perf_event_header *h,
			     size_t fixed, struct perfdata_sample_id *sid);

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
	const void *stack;		/* PERF_SAMPLE_STACK_USER: stack_dyn bytes */
	__u32 stack_dyn;		/* bytes read from the user SP (dyn_size) */
	__u64 weight;			/* PERF_SAMPLE_WEIGHT */
	__u64 cgroup;			/* PERF_SAMPLE_CGROUP: the cgroup2 id */
};

/* Supported sample_type bits: IDENTIFIER IP TID TIME ADDR CPU PERIOD
 * CALLCHAIN RAW REGS_USER STACK_USER WEIGHT CGROUP.  Others give -EINVAL.  With
 * REGS_USER, nr_regs must be the number of bits in the attr's
 * sample_regs_user.  STACK_USER's size is stack_dyn rounded up to 8 (perf
 * reads a size below the attr's sample_stack_user), 0 when stack_dyn is 0
 * (then no data and no dyn_size); a stack that would take the record past
 * 65535 bytes is cut, as the kernel cuts it. */
int perfdata_encode_sample(struct pbuf *out, __u64 sample_type,
			   const struct perfdata_sample *s);

/*
 * A sample's PERF_SAMPLE_CALLCHAIN as perf record writes it: one
 * PERF_CONTEXT_KERNEL and the kernel frames, then one PERF_CONTEXT_USER and
 * the user frames; a context without frames gets no marker.  kern and user
 * are stacks as the BPF stack helper gave them: whether they start with a
 * marker of their own depends on the kernel (6.18 adds one when the event
 * has PERF_SAMPLE_CALLCHAIN), so every value in the markers' range is
 * dropped, and then zero addresses at the end of a stack.
 * out has room for nk + nu + 2 entries; returns the entries written.
 */
__u32 perfdata_callchain_build(__u64 *out, const __u64 *kern, __u32 nk,
			       const __u64 *user, __u32 nu);

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

/* Records with a trailer: sid NULL writes a trailer of zeros. */
int perfdata_encode_comm(struct pbuf *out, __u64 id_type, __u32 pid, __u32 tid,
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
int perfdata_encode_mmap2(struct pbuf *out, __u64 id_type, const struct perfdata_mmap2 *m,
			  const struct perfdata_sample_id *sid);

/* PERF_RECORD_MMAP for the kernel and modules (misc KERNEL, pid -1). */
int perfdata_encode_kernel_mmap(struct pbuf *out, __u64 id_type, __u64 start, __u64 len,
				__u64 pgoff, const char *filename,
				const struct perfdata_sample_id *sid);

/* FORK and EXIT share a layout. */
int perfdata_encode_task(struct pbuf *out, __u64 id_type, __u32 type, __u32 pid, __u32 ppid,
			 __u32 tid, __u32 ptid, __u64 time, __u16 misc,
			 const struct perfdata_sample_id *sid);

int perfdata_encode_lost_samples(struct pbuf *out, __u64 id_type, __u64 lost,
				 const struct perfdata_sample_id *sid);
int perfdata_encode_lost(struct pbuf *out, __u64 id_type, __u64 id, __u64 lost,
			 const struct perfdata_sample_id *sid);

/* PERF_RECORD_CGROUP: a cgroup's id and its path ("/" for the root). */
int perfdata_encode_cgroup(struct pbuf *out, __u64 id_type, __u64 id, const char *path,
			   const struct perfdata_sample_id *sid);

/* Records with no trailer. */
int perfdata_encode_finished_round(struct pbuf *out);
int perfdata_encode_finished_init(struct pbuf *out);

#endif
