// SPDX-License-Identifier: GPL-2.0
/*
 * --off-cpu: the time target threads spend waiting, summed per stack in
 * the kernel, as perf record --off-cpu measures it (docs/offcpu.md).
 *
 * On sched_switch a target thread that leaves the CPU sleeping (state
 * TASK_INTERRUPTIBLE or TASK_UNINTERRUPTIBLE, not preempted: a runnable
 * thread is not waiting) gets its stack taken there -- kernel frames, and
 * user frames by frame pointers or (ehframe) by the tables of
 * unwind.bpf.h -- and the time, in its task storage.  When it is switched
 * in again the wait is over: its length is added to the count of its key
 * (process, thread, stack, cgroup) in the maps of aggregate.bpf.h, which
 * user space drains each second (record/aggregator.c) into `offcpu-time`
 * samples whose period is the nanoseconds waited.  A wait of at least
 * thresh_ns, and one whose key finds the maps full (counted, and user
 * space then flushes early), goes to the ring as a sample of its own.
 * Kernel threads are skipped, as perf skips them.
 *
 * The targets map and the unwind tables are the sampling object's
 * (user space reuses their fds); the rest is this object's own.
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

char LICENSE[] SEC("license") = "GPL";

#define OFFCPU_TASK_SLEEPING	3		/* TASK_INTERRUPTIBLE | TASK_UNINTERRUPTIBLE */
#define OFFCPU_PF_KTHREAD	0x00200000	/* include/linux/sched.h PF_KTHREAD */
#define OFFCPU_SKIP_FRAMES	2		/* the program, bpf_trace_run4 */

const volatile bool ehframe = false;	/* user frames from unwind.bpf.h */
const volatile bool kernel_stack = true;	/* --off-cpu=user: false */
const volatile bool want_cgroup = false;	/* --all-cgroups */
const volatile __u64 thresh_ns = 500000000ULL;	/* --off-cpu-thresh */
const volatile bool cpu_filter = false;	/* -C: waits begun on only_cpus */

/* Set by user space when the recording starts. */
bool enabled;

/* Waits not measured: no task storage could be had for the thread. */
__u64 no_storage;

/* -C: 1 for the CPUs recorded (sized by user space). */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u8);
} only_cpus SEC(".maps");

/* Waits written one by one (long, or the maps full). */
struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 1 << 20);		/* resized by user space */
} offcpu_events SEC(".maps");

/* A thread's wait in progress: start 0 when it is not waiting.  The
 * sample comes last, so that its ips[] has the same room after it as in
 * sample.bpf.c's scratch buffer. */
struct offcpu_task {
	__u64 start;
	__u64 size;			/* of the sample, bytes */
	struct sample_buf b;
};

struct {
	__uint(type, BPF_MAP_TYPE_TASK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct offcpu_task);
} offcpu_tasks SEC(".maps");

static __always_inline void emit(void *data, __u64 size)
{
	if (bpf_ringbuf_output(&offcpu_events, data, size, BPF_RB_NO_WAKEUP))
		count_drop();
}

/* no NMI here: the stacks (2 KiB each) allocated as keys come */
#define AGG_STACKS_FLAGS	BPF_F_NO_PREALLOC
#include "aggregate.bpf.h"	/* agg_count() */

/* prev leaves the CPU asleep: its stack and the time. */
static __always_inline void wait_begins(void *ctx, struct task_struct *prev, __u64 now)
{
	__u32 tgid = prev->tgid, tid = prev->pid;
	struct offcpu_task *t;
	struct prec_sample *s;
	struct pt_regs *r;
	long kn, un = 0;
	__u32 cpu = bpf_get_smp_processor_id();
	__u8 *on;

	if (cpu_filter && (!(on = bpf_map_lookup_elem(&only_cpus, &cpu)) || !*on))
		return;
	if (!tgid || (prev->flags & OFFCPU_PF_KTHREAD) || !is_target(tgid, tid))
		return;
	/* prev is current here: the cgroup helpers see it */
	if (!cgroup_ok())
		return;
	t = bpf_task_storage_get(&offcpu_tasks, prev, 0, BPF_LOCAL_STORAGE_GET_F_CREATE);
	if (!t) {
		__sync_fetch_and_add(&no_storage, 1);
		return;
	}
	s = (struct prec_sample *)&t->b;
	s->hdr.type = PREC_REC_SAMPLE;
	s->pid = tgid;
	s->tid = tid;
	s->cpu = cpu;
	/* less the program's own frame and bpf_trace_run4's */
	kn = 0;
	if (kernel_stack)	/* most of the program's cost: the kernel's unwinder */
		kn = bpf_get_stack(ctx, s->ips, PREC_MAX_STACK * 8, OFFCPU_SKIP_FRAMES);
	kn = kn < 0 ? 0 : (__u64)kn / 8;
	if (kn > PREC_MAX_STACK)
		kn = PREC_MAX_STACK;
	if (ehframe) {
		r = (struct pt_regs *)bpf_task_pt_regs(prev);
		if (r)
			un = unwind_user(r, tgid, s->ips, kn & 0x7f);
	} else {
		un = bpf_get_stack(ctx, &s->ips[kn & 0x7f], PREC_MAX_STACK * 8, BPF_F_USER_STACK);
		un = un < 0 ? 0 : (__u64)un / 8;
	}
	if (un > PREC_MAX_STACK)
		un = PREC_MAX_STACK;
	s->nr_kernel = kn;
	s->nr_user = un;
	/* perf's offcpu samples: ip is the innermost frame */
	s->ip = kn ? s->ips[0] : (un ? s->ips[kn & 0x7f] : 0);
	s->user_mode = !kn;
	s->regs_abi = 0;
	s->nr_py = 0;	/* off-CPU stacks: native frames only */
	s->stack_len = 0;
	s->cgroup = want_cgroup ? bpf_get_current_cgroup_id() : 0;
	t->size = sizeof(*s) + 8 * ((kn + un) & 0xff);
	s->hdr.size = t->size;
	t->start = now;
}

/* next runs again: the end of its wait, if one was measured. */
static __always_inline void wait_ends(struct task_struct *next, __u64 now)
{
	struct offcpu_task *t = bpf_task_storage_get(&offcpu_tasks, next, 0, 0);
	struct prec_sample *s;
	__u64 size;

	if (!t || !t->start)
		return;
	s = (struct prec_sample *)&t->b;
	s->period = now - t->start;
	s->time = now;
	t->start = 0;
	size = t->size;
	if (s->period < thresh_ns && agg_count(s))
		return;
	if (size <= sizeof(t->b))
		emit(s, size);
}

SEC("tp_btf/sched_switch")
int BPF_PROG(on_switch, bool preempt, struct task_struct *prev, struct task_struct *next,
	     unsigned int prev_state)
{
	__u64 now;

	if (!enabled)
		return 0;
	now = bpf_ktime_get_ns();
	if (!preempt && (prev_state & OFFCPU_TASK_SLEEPING))
		wait_begins(ctx, prev, now);
	wait_ends(next, now);
	return 0;
}
