// SPDX-License-Identifier: GPL-2.0
/*
 * Function entry/exit tracing: one uprobe and one uretprobe program,
 * attached once per traced function with bpf_cookie = PREC_TRACE_COOKIE().
 * Each hit appends an 8-byte XRay FDR function record (plus metadata when
 * the thread changes, a delta does not fit 32 bits, or arguments are
 * recorded) to a per-CPU block; a full block leaves as one
 * PREC_REC_TRACE_BLOCK in the `trace_events` ring buffer.  User space
 * pushes out partial blocks by running trace_flush on each CPU with
 * BPF_PROG_TEST_RUN.  Stream grammar: include/precord/bpf_abi.h.
 */
/* UAPI headers, not vmlinux.h: nothing here needs CO-RE (the uprobe
 * context is the UAPI struct pt_regs), so loading this object does not
 * make libbpf parse the kernel's BTF a second time. */
#include <stdbool.h>
#include <linux/bpf.h>
#include <linux/ptrace.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

#include "precord/bpf_abi.h"
#include "targets.bpf.h"

char LICENSE[] SEC("license") = "GPL";

const volatile __u32 nr_args = 0;	/* 0..PREC_TRACE_MAX_ARGS */
/* Wake the reader only once this much waits in the ring buffer (it also
 * polls with a timeout): a wake-up from here is an irq_work, a self-IPI
 * in the traced thread's context.  Set by user space. */
const volatile __u64 wakeup_bytes = 64 << 10;

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 8 << 20);		/* resized by user space */
} trace_events SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct prec_trace_cpu);
} trace_cpu SEC(".maps");

/* Largest group of records one hit writes: NewBuffer, Pid, NewCPUId (or
 * TSCWrap), LoadBias, the function record and its arguments. */
#define MAX_GROUP	(3 * 16 + 16 + 8 + PREC_TRACE_MAX_ARGS * 16)
#define FILL_LIMIT	(PREC_TRACE_BLOCK_DATA - MAX_GROUP)
#define NO_BIAS		1ULL	/* load biases are page aligned */

#define barrier()	asm volatile("" ::: "memory")

#ifndef PT_REGS_PARM6		/* libbpf 1.1 stops at 5 */
#if defined(__TARGET_ARCH_x86)
#define PT_REGS_PARM6(x)	((x)->r9)
#elif defined(__TARGET_ARCH_arm64)
#define PT_REGS_PARM6(x)	((x)->regs[5])
#else
#define PT_REGS_PARM6(x)	0
#endif
#endif

/* A 16-byte metadata record: first byte (kind << 1) | 1, then 15 bytes of
 * payload given as p (bytes 1-8) and q (bytes 9-15). */
static __always_inline void put_md(struct prec_trace_cpu *st, __u32 off, __u32 kind,
				   __u64 p, __u64 q)
{
	*(__u64 *)&st->data[off] = (kind << 1 | 1) | p << 8;
	*(__u64 *)&st->data[off + 8] = p >> 56 | q << 8;
}

/* Send the pending block (if any) and start an empty one. */
static __always_inline void send_block(struct prec_trace_cpu *st)
{
	__u32 len = st->len;

	if (!len)
		return;
	if (len > PREC_TRACE_BLOCK_DATA)
		len = PREC_TRACE_BLOCK_DATA;
	st->hdr.type = PREC_REC_TRACE_BLOCK;
	st->hdr.size = sizeof(struct prec_trace_block) + len;
	st->cpu = bpf_get_smp_processor_id();
	if (bpf_ringbuf_output(&trace_events, &st->hdr, sizeof(struct prec_trace_block) + len,
			       bpf_ringbuf_query(&trace_events, BPF_RB_AVAIL_DATA) >= wakeup_bytes ?
			       BPF_RB_FORCE_WAKEUP : BPF_RB_NO_WAKEUP)) {
		st->lost_blocks++;
		st->ring_lost += st->block_events;
	} else {
		st->blocks++;
		st->ring_bytes += 8 + sizeof(struct prec_trace_block) + len;
	}
	st->block_events = 0;
	st->tid = 0;
	st->len = 0;
	barrier();
	st->seq++;
}

static __always_inline int record(struct pt_regs *ctx, bool entry)
{
	__u64 id = bpf_get_current_pid_tgid();
	__u32 tgid = id >> 32, tid = (__u32)id;
	struct prec_trace_cpu *st;
	__u64 now, delta, cookie, fid, bias;
	__u32 zero = 0, len, slot, i;

	st = bpf_map_lookup_elem(&trace_cpu, &zero);
	if (!st)
		return 0;
	/* The task of the block's current Thread passed the filter already.
	 * Hits of other tasks are counted: unbound probes trap in every
	 * process that runs the code (see --no-inherit). */
	if (!(st->len && st->tid == tid && st->tgid == tgid) && !is_target(tgid, tid)) {
		st->foreign++;
		return 0;
	}
	if (__sync_lock_test_and_set(&st->busy, 1)) {
		__sync_fetch_and_add(&st->busy_lost, 1);
		return 0;
	}
	now = bpf_ktime_get_ns();
	cookie = bpf_get_attach_cookie(ctx);
	fid = cookie & (PREC_TRACE_MAX_FUNCS - 1);
	len = st->len;
	if (len > FILL_LIMIT) {		/* cannot happen: blocks leave when full */
		send_block(st);
		len = 0;
	}
	if (len == 0 || st->tid != tid) {
		put_md(st, len, PREC_XRAY_MD_NEW_BUFFER, tid, 0);
		len += 16;
		if (len == 16 || st->tgid != tgid) {
			put_md(st, len, PREC_XRAY_MD_PID, tgid, 0);
			len += 16;
		}
		put_md(st, len, PREC_XRAY_MD_NEW_CPU_ID,
		       bpf_get_smp_processor_id() | now << 16, now >> 48);
		len += 16;
		st->tid = tid;
		st->tgid = tgid;
		for (i = 0; i < PREC_TRACE_BIAS_SLOTS; i++)
			st->bias[i] = NO_BIAS;
		delta = 0;
	} else {
		delta = now - st->last_time;
		if (delta >> 32) {
			put_md(st, len, PREC_XRAY_MD_TSC_WRAP, now, 0);
			len += 16;
			delta = 0;
		}
	}
	if (entry) {
		bias = PT_REGS_IP(ctx) - (cookie >> 32);
		slot = (cookie >> 28) & (PREC_TRACE_BIAS_SLOTS - 1);
		if (st->bias[slot] != bias) {
			put_md(st, len, PREC_XRAY_MD_LOAD_BIAS, bias, slot);
			len += 16;
			st->bias[slot] = bias;
		}
	}
	*(__u64 *)&st->data[len] = (entry ? (nr_args ? PREC_XRAY_ENTER_ARGS : PREC_XRAY_ENTER)
					  : PREC_XRAY_EXIT) << 1 | fid << 4 | delta << 32;
	len += 8;
	if (entry && nr_args) {
		__u64 regs[PREC_TRACE_MAX_ARGS] = {
			PT_REGS_PARM1(ctx), PT_REGS_PARM2(ctx), PT_REGS_PARM3(ctx),
			PT_REGS_PARM4(ctx), PT_REGS_PARM5(ctx), PT_REGS_PARM6(ctx),
		};

		for (i = 0; i < PREC_TRACE_MAX_ARGS; i++) {
			if (i >= nr_args)
				break;
			put_md(st, len, PREC_XRAY_MD_CALL_ARGUMENT, regs[i], 0);
			len += 16;
		}
	}
	st->last_time = now;
	st->block_events++;
	st->events++;
	barrier();
	st->len = len;
	if (len > FILL_LIMIT)
		send_block(st);
	barrier();
	st->busy = 0;
	return 0;
}

SEC("uprobe")
int trace_entry(struct pt_regs *ctx)
{
	return record(ctx, true);
}

SEC("uretprobe")
int trace_exit(struct pt_regs *ctx)
{
	return record(ctx, false);
}

/*
 * Run on one CPU by user space (BPF_PROG_TEST_RUN with
 * BPF_F_TEST_RUN_ON_CPU, args[0] = flush round): send that CPU's partial
 * block, then a marker (a block with len 0 and seq = the round), so user
 * space knows when it has read everything made before the round.
 * Returns 0, 1 if a program held the buffer (nothing done), 2 if the
 * marker did not fit in the ring buffer.
 */
SEC("raw_tp")
int trace_flush(struct bpf_raw_tracepoint_args *ctx)
{
	struct prec_trace_block mark = {
		.hdr = { .type = PREC_REC_TRACE_BLOCK, .size = sizeof(mark) },
	};
	struct prec_trace_cpu *st;
	__u32 zero = 0;

	st = bpf_map_lookup_elem(&trace_cpu, &zero);
	if (!st)
		return 0;
	if (__sync_lock_test_and_set(&st->busy, 1))
		return 1;
	send_block(st);
	mark.cpu = bpf_get_smp_processor_id();
	mark.seq = ctx->args[0];
	barrier();
	st->busy = 0;
	return bpf_ringbuf_output(&trace_events, &mark, sizeof(mark), 0) ? 2 : 0;
}
