// SPDX-License-Identifier: GPL-2.0
/*
 * CPU sampling: runs on every overflow of the per-CPU sampling event
 * (cpu-clock by default), keeps samples of the target tasks, and emits one
 * PREC_REC_SAMPLE per sample into the `events` ring buffer, or counts it
 * in the kernel (--aggregate, aggregate.bpf.h).  Also follows
 * forks of target processes so that children are sampled too.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>

#include "precord/bpf_abi.h"
#include "cgroup_filter.bpf.h"	/* -G */
#include "drops.bpf.h"
#include "targets.bpf.h"
#include "unwind.bpf.h"
#include "python.bpf.h"

char LICENSE[] SEC("license") = "GPL";

const volatile bool want_callchain = false;
/* Python frames after the user frames (-g, ehframe; python.bpf.h). */
const volatile bool want_python = false;
/* --call-graph dwarf: bytes of user stack to copy (on_sample_dwarf). */
const volatile __u32 dwarf_stack_size = 0;
const volatile bool follow_forks = true;
const volatile bool keep_idle = true;	/* -a: samples of the idle task too */
/* Wake the reader only once this much is waiting (it also polls every
 * 100 ms): one wake-up per sample would cost the workload dearly. */
const volatile __u64 wakeup_bytes = 1 << 20;

/* --all-cgroups: each sample carries its task's cgroup2 id. */
const volatile bool want_cgroup = false;

/*
 * Set by user space when the recording starts, after the synthesis of
 * what exists, as perf record enables its events only then.  Until then
 * no sample is kept: the side-band rides on the sampling events, so they
 * are enabled from the start, but nothing drains the ring during set-up
 * (-a: seconds on a loaded machine), and dwarf samples of 8 KiB filled
 * it in half a second, then were lost.
 */
bool sampling;

/* The `-- command` child (set by user space) becomes a target when it
 * execs, as perf's enable_on_exec does: not while it is still precord. */
__u32 exec_child;

/* Processes that did not become targets because the set was full. */
__u64 targets_full;

static __always_inline void add_target(__u32 id)
{
	__u8 one = 1;

	if (bpf_map_update_elem(&targets, &id, &one, BPF_ANY))
		__sync_fetch_and_add(&targets_full, 1);
}

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 8 << 20);		/* resized by user space */
} events SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct sample_buf);
} scratch SEC(".maps");

/*
 * Fill the fixed part of the sample and its stacks (kernel and, unless
 * kernel_only, user frames); returns the number of frames, or -1 when the
 * sample is not kept.  The callers compute the record's size from the
 * count rather than reload hdr.size: the verifier then knows its bounds.
 */
static __always_inline long fill_sample(struct bpf_perf_event_data *ctx,
					struct prec_sample *s, bool kernel_only)
{
	__u64 id = bpf_get_current_pid_tgid();
	__u32 tgid = id >> 32, tid = (__u32)id;
	long kn = 0, un = 0;

	if (!sampling || (tid == 0 && !keep_idle))
		return -1;
	if (!is_target(tgid, tid))
		return -1;
	if (!cgroup_ok())
		return -1;
	s->hdr.type = PREC_REC_SAMPLE;
	s->pid = tgid;
	s->tid = tid;
	s->time = bpf_ktime_get_ns();
	s->period = ctx->sample_period;
	s->ip = PT_REGS_IP(&ctx->regs);
	s->cpu = bpf_get_smp_processor_id();
	s->user_mode = (long)s->ip >= 0;
	if (want_callchain) {
		if (!s->user_mode) {
			kn = bpf_get_stack(ctx, s->ips, PREC_MAX_STACK * 8, 0);
			kn = kn < 0 ? 0 : (__u64)kn / 8;
			if (kn > PREC_MAX_STACK)
				kn = PREC_MAX_STACK;
		}
		if (tgid && !kernel_only) {
			un = bpf_get_stack(ctx, &s->ips[kn & 0xff], PREC_MAX_STACK * 8,
					   BPF_F_USER_STACK);
			un = un < 0 ? 0 : (__u64)un / 8;
			if (un > PREC_MAX_STACK)
				un = PREC_MAX_STACK;
		}
	}
	s->nr_kernel = kn;
	s->nr_user = un;
	s->regs_abi = 0;
	s->nr_py = 0;
	s->stack_len = 0;
	s->cgroup = want_cgroup ? bpf_get_current_cgroup_id() : 0;
	s->hdr.size = sizeof(*s) + (kn + un) * 8;
	return kn + un;
}

static __always_inline void emit(void *data, __u64 size)
{
	if (bpf_ringbuf_output(&events, data, size,
			       bpf_ringbuf_query(&events, BPF_RB_AVAIL_DATA) >= wakeup_bytes ?
			       BPF_RB_FORCE_WAKEUP : BPF_RB_NO_WAKEUP))
		count_drop();
}

#include "aggregate.bpf.h"	/* submit(): to the ring, or counted */

/* The Python frames after the n native ones of a user task; how many. */
static __always_inline __u32 add_python(struct prec_sample *s, long n)
{
	if (!want_python || !s->pid || n < 0 || n > 2 * PREC_MAX_STACK)
		return 0;
	s->nr_py = py_walk(s, n);
	return s->nr_py;
}

SEC("perf_event")
int on_sample(struct bpf_perf_event_data *ctx)
{
	struct sample_buf *b;
	__u32 zero = 0;
	__u64 size;
	long n;

	b = bpf_map_lookup_elem(&scratch, &zero);
	if (!b)
		return 0;
	n = fill_sample(ctx, (struct prec_sample *)b, false);
	if (n < 0)
		return 0;
	n += add_python((struct prec_sample *)b, n);
	size = sizeof(struct prec_sample) + 8 * (n & 0x1ff);
	((struct prec_sample *)b)->hdr.size = size;
	if (size <= sizeof(*b))
		submit(b, size);
	return 0;
}

/*
 * --call-graph dwarf: a sample with its kernel frames, the task's user
 * registers and up to dwarf_stack_size bytes of its user stack, for perf
 * to unwind with the binaries' CFI.  The record can reach 66 KiB, more
 * than a per-CPU array value may hold (32 KiB), so the scratch space is
 * one entry per CPU of a plain array (user space sizes it to the possible
 * CPUs); nothing else runs this program on the CPU meanwhile (perf_event
 * programs do not nest).
 */
#define DWARF_CHUNK	4096
#define DWARF_CHUNKS	(PREC_DWARF_MAX_STACK / DWARF_CHUNK + 2)

struct dwarf_buf {
	__u64 words[sizeof(struct prec_sample) / 8 + PREC_MAX_STACK + PREC_DWARF_NR_REGS];
	__u8 stack[65536 + DWARF_CHUNK];	/* room for the last chunk's bounds */
};

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);			/* resized by user space */
	__type(key, __u32);
	__type(value, struct dwarf_buf);
} dwarf_scratch SEC(".maps");

#define PF_KTHREAD_FLAG	0x00200000	/* include/linux/sched.h PF_KTHREAD */

/*
 * The user registers of the sampled task: those it entered the kernel
 * with, the interrupted ones when the sample hit user mode.  NULL for
 * kernel threads and the idle task, which have no user context.
 */
static __always_inline struct pt_regs *user_regs(const struct prec_sample *s)
{
	struct task_struct *task = bpf_get_current_task_btf();

	if (!s->pid || (task->flags & PF_KTHREAD_FLAG))
		return NULL;
	/* declared as returning long by libbpf 1.1: a BTF pt_regs pointer */
	return (struct pt_regs *)bpf_task_pt_regs(task);
}

SEC("perf_event")
int on_sample_dwarf(struct bpf_perf_event_data *ctx)
{
	__u32 cpu = bpf_get_smp_processor_id(), got = 0, want = dwarf_stack_size;
	struct prec_sample *s;
	struct dwarf_buf *b;
	struct pt_regs *r;
	__u64 *regs, sp, size;
	__u8 *stk;
	long n;

	b = bpf_map_lookup_elem(&dwarf_scratch, &cpu);
	if (!b)
		return 0;
	s = (struct prec_sample *)b;
	n = fill_sample(ctx, s, true);
	if (n < 0)
		return 0;
	size = sizeof(*s) + 8 * (n & 0x7f);
	r = user_regs(s);		/* none: abi 0 */
	if (r) {
		regs = &s->ips[n & 0x7f];
		regs[0] = r->ax;
		regs[1] = r->bx;
		regs[2] = r->cx;
		regs[3] = r->dx;
		regs[4] = r->si;
		regs[5] = r->di;
		regs[6] = r->bp;
		regs[7] = r->sp;
		regs[8] = r->ip;
		regs[9] = r->flags;
		regs[10] = r->cs;
		regs[11] = r->ss;
		regs[12] = r->r8;
		regs[13] = r->r9;
		regs[14] = r->r10;
		regs[15] = r->r11;
		regs[16] = r->r12;
		regs[17] = r->r13;
		regs[18] = r->r14;
		regs[19] = r->r15;
		s->regs_abi = 2;	/* PERF_SAMPLE_REGS_ABI_64 */
		sp = r->sp;
		stk = (__u8 *)&regs[PREC_DWARF_NR_REGS];
		/*
		 * Page by page from SP, so that a copy that faults (the end
		 * of the stack's mapping, a page not present) keeps every
		 * page before it: stack_len says how much was read.
		 */
		for (int i = 0; i < DWARF_CHUNKS && got < want; i++) {
			__u64 off = got, len = DWARF_CHUNK - ((sp + got) & (DWARF_CHUNK - 1));

			if (len > want - got)
				len = want - got;
			/* the verifier's bounds: off < 64 KiB, len <= a page */
			barrier_var(off);
			barrier_var(len);
			off &= 0xffff;
			len &= 2 * DWARF_CHUNK - 1;
			if (len > DWARF_CHUNK || !len)
				break;
			if (bpf_probe_read_user(stk + off, len, (void *)(sp + off)))
				break;
			got += len;
		}
		s->stack_len = got;
		size += 8 * PREC_DWARF_NR_REGS + ((got + 7) & ~7u);
	}
	s->hdr.size = size;
	if (size <= sizeof(*b))
		emit(b, size);
	return 0;
}

/*
 * --call-graph ehframe: the kernel frames as -g takes them, the user
 * frames unwound here from the .eh_frame tables user space loads
 * (bpf/unwind.bpf.h), from the registers the task entered the kernel
 * with; a sample of the same shape as -g's.  Kernel threads and the idle
 * task have no user stack.
 */
SEC("perf_event")
int on_sample_ehframe(struct bpf_perf_event_data *ctx)
{
	struct sample_buf *b;
	struct prec_sample *s;
	struct pt_regs *r;
	__u32 zero = 0, kn, un = 0;
	__u64 size;
	long n;

	b = bpf_map_lookup_elem(&scratch, &zero);
	if (!b)
		return 0;
	s = (struct prec_sample *)b;
	n = fill_sample(ctx, s, true);
	if (n < 0)
		return 0;
	kn = n & 0x7f;
	r = user_regs(s);
	if (r)
		un = unwind_user(r, s->pid, s->ips, kn);
	if (un > PREC_MAX_STACK)
		un = PREC_MAX_STACK;
	s->nr_user = un;
	un += add_python(s, kn + un);
	/* masked, not only clamped above: the verifier keeps the bound
	 * whatever registers the compiler picks */
	size = sizeof(*s) + 8 * ((kn + un) & 0x1ff);
	s->hdr.size = size;
	if (size <= sizeof(*b))
		submit(b, size);
	return 0;
}

SEC("tp_btf/sched_process_exec")
int BPF_PROG(on_exec, struct task_struct *p, pid_t old_pid, struct linux_binprm *bprm)
{
	__u32 tgid = BPF_CORE_READ(p, tgid);

	if (exec_child && tgid == exec_child) {
		add_target(tgid);
		exec_child = 0;
	}
	return 0;
}

/* A target process forks: its child becomes a target too. */
SEC("tp_btf/sched_process_fork")
int BPF_PROG(on_fork, struct task_struct *parent, struct task_struct *child)
{
	__u32 ptgid = BPF_CORE_READ(parent, tgid);
	__u32 ctgid = BPF_CORE_READ(child, tgid);

	if (!follow_forks || filter_mode != PREC_FILTER_TGID || ptgid == ctgid)
		return 0;
	if (bpf_map_lookup_elem(&targets, &ptgid))
		add_target(ctgid);
	return 0;
}

/*
 * A target exits: its id leaves the set, so that the set holds the live
 * targets only (8192 at a time, however many come and go) and a process
 * that later gets the same pid is no target.  A process leaves when its
 * last thread exits (signal->live reaches 0 before this tracepoint), a
 * thread with -t when it exits.  Only the task is read: the tracepoint
 * has a second argument (group_dead) since 6.16 only.
 */
SEC("tp_btf/sched_process_exit")
int BPF_PROG(on_exit, struct task_struct *p)
{
	__u32 key;

	if (filter_mode == PREC_FILTER_TID) {
		key = BPF_CORE_READ(p, pid);
	} else if (filter_mode == PREC_FILTER_TGID) {
		if (BPF_CORE_READ(p, signal, live.counter) > 0)
			return 0;
		key = BPF_CORE_READ(p, tgid);
	} else {
		return 0;
	}
	bpf_map_delete_elem(&targets, &key);
	return 0;
}
