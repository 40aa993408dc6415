// SPDX-License-Identifier: GPL-2.0
/*
 * CPU sampling: runs on every overflow of the per-CPU sampling event
 * (cpu-clock by default), keeps samples of the target tasks, and emits one
 * PREC_REC_SAMPLE per sample into the `events` ring buffer.  Also follows
 * forks of target processes so that children are sampled too.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>

#include "precord/bpf_abi.h"
#include "targets.bpf.h"

char LICENSE[] SEC("license") = "GPL";

const volatile bool want_callchain = false;
const volatile bool follow_forks = true;
const volatile bool keep_idle = true;	/* -a: samples of the idle task too */
/* Wake the reader only once this much is waiting (it also polls every
 * 100 ms): one wake-up per sample would cost the workload dearly. */
const volatile __u64 wakeup_bytes = 1 << 20;

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

/* Samples that did not fit in the ring buffer, per CPU. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64);
} drops SEC(".maps");

/* A prec_sample followed by room for both stacks. */
struct sample_buf {
	__u64 words[sizeof(struct prec_sample) / 8 + 2 * PREC_MAX_STACK];
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct sample_buf);
} scratch SEC(".maps");

static __always_inline void count_drop(void)
{
	__u32 zero = 0;
	__u64 *d = bpf_map_lookup_elem(&drops, &zero);

	if (d)
		*d += 1;
}

SEC("perf_event")
int on_sample(struct bpf_perf_event_data *ctx)
{
	__u64 id = bpf_get_current_pid_tgid();
	__u32 tgid = id >> 32, tid = (__u32)id;
	struct prec_sample *s;
	struct sample_buf *b;
	__u32 zero = 0;
	long kn = 0, un = 0;
	__u64 size;

	if (tid == 0 && !keep_idle)
		return 0;
	if (!is_target(tgid, tid))
		return 0;
	b = bpf_map_lookup_elem(&scratch, &zero);
	if (!b)
		return 0;
	s = (struct prec_sample *)b;
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
		if (tgid) {
			un = bpf_get_stack(ctx, &s->ips[kn & 0xff], PREC_MAX_STACK * 8,
					   BPF_F_USER_STACK);
			un = un < 0 ? 0 : (__u64)un / 8;
			if (un > PREC_MAX_STACK)
				un = PREC_MAX_STACK;
		}
	}
	s->nr_kernel = kn;
	s->nr_user = un;
	size = sizeof(*s) + (kn + un) * 8;
	if (size > sizeof(*b))
		return 0;
	s->hdr.size = size;
	if (bpf_ringbuf_output(&events, s, size,
			       bpf_ringbuf_query(&events, BPF_RB_AVAIL_DATA) >= wakeup_bytes ?
			       BPF_RB_FORCE_WAKEUP : BPF_RB_NO_WAKEUP))
		count_drop();
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
