/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Python frames of a sample (bpf_abi.h, struct prec_py_proc): for a
 * process user space found to be CPython, the sampled thread's own
 * interpreter frames, innermost first, one word each (code object |
 * PREC_PY_ENTRY).  Everything is read with bpf_probe_read_user from a
 * process that may be hostile: a failed read ends the walk with the
 * frames so far, and both loops are bounded (PREC_PY_MAX_THREADS threads,
 * PREC_PY_MAX_FRAMES frames; a cyclic chain ends there).
 *
 * The thread state: the runtime's head interpreter's thread list, matched
 * on native_thread_id (what gettid() gave the thread, so the task's tid
 * in its own PID namespace).  Emulating pthread_getspecific for the
 * gilstate key would need glibc's struct pthread layout too; the list
 * needs only CPython's, and a process usually has few threads.
 */
#ifndef PRECORD_PYTHON_BPF_H
#define PRECORD_PYTHON_BPF_H

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 4096);	/* Python processes at once; user space counts the rest */
	__type(key, __u32);
	__type(value, struct prec_py_proc);
} py_procs SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct prec_py_stats);
} py_stats SEC(".maps");

/* The current task's tid as its own PID namespace numbers it. */
static __always_inline __u32 py_ns_tid(void)
{
	struct task_struct *t = bpf_get_current_task_btf();
	struct pid *p = BPF_CORE_READ(t, thread_pid);
	unsigned int level = BPF_CORE_READ(p, level);
	struct upid up = {};

	if (level > 31)
		return 0;
	if (bpf_probe_read_kernel(&up, sizeof(up), &p->numbers[level]))
		return 0;
	return up.nr;
}

struct py_walk_ctx {
	const struct prec_py_proc *pp;
	struct prec_sample *s;
	__u64 ptr;		/* thread state, then frame */
	__u32 tid, at, n;
	bool found, failed;
};

/* bpf_loop callbacks (a loop verified once, not per iteration): 1 stops. */
static long py_thread_step(__u64 i, void *arg)
{
	struct py_walk_ctx *c = arg;
	__u64 native = 0;

	if (!c->ptr)
		return 1;
	if (bpf_probe_read_user(&native, 8, (void *)(c->ptr + c->pp->ts_native_tid))) {
		c->failed = true;
		return 1;
	}
	if (native == c->tid) {
		c->found = true;
		return 1;
	}
	if (bpf_probe_read_user(&c->ptr, 8, (void *)(c->ptr + c->pp->ts_next))) {
		c->failed = true;
		return 1;
	}
	return 0;
}

static long py_frame_step(__u64 i, void *arg)
{
	struct py_walk_ctx *c = arg;
	__u64 code = 0;
	__u8 entry = 0, owner = 0;

	if (!c->ptr)
		return 1;
	if (bpf_probe_read_user(&code, 8, (void *)(c->ptr + c->pp->fr_code)) ||
	    (c->pp->fr_entry != 0xffff &&
	     bpf_probe_read_user(&entry, 1, (void *)(c->ptr + c->pp->fr_entry))) ||
	    (c->pp->fr_owner != 0xffff &&
	     bpf_probe_read_user(&owner, 1, (void *)(c->ptr + c->pp->fr_owner)))) {
		c->failed = true;
		return 1;
	}
	if (c->pp->fr_owner != 0xffff && owner == c->pp->owner_shim) {
		/* 3.12+: the shim a C caller entered the loop through */
		if (c->n)
			c->s->ips[(c->at + c->n - 1) & 0x1ff] |= PREC_PY_ENTRY;
	} else {
		c->s->ips[(c->at + c->n) & 0x1ff] = (code & ~PREC_PY_ENTRY) |
						     (entry ? PREC_PY_ENTRY : 0);
		c->n++;
	}
	if (bpf_probe_read_user(&c->ptr, 8, (void *)(c->ptr + c->pp->fr_previous))) {
		c->failed = true;
		return 1;
	}
	return 0;
}

/*
 * Append the Python frames of the current thread at s->ips[at]; returns
 * how many.  at <= 2 * PREC_MAX_STACK, and ips has room for 512 words.
 */
static __always_inline __u32 py_walk(struct prec_sample *s, __u32 at)
{
	struct py_walk_ctx c = { .s = s, .at = at };
	struct prec_py_stats *st;
	__u64 interp = 0;
	__u32 zero = 0;

	c.pp = bpf_map_lookup_elem(&py_procs, &s->pid);
	st = bpf_map_lookup_elem(&py_stats, &zero);
	if (!c.pp || !st || at > 2 * PREC_MAX_STACK)
		return 0;
	st->walks++;
	c.tid = py_ns_tid();
	if (bpf_probe_read_user(&interp, 8, (void *)(c.pp->runtime + c.pp->rt_interp_head)) ||
	    !interp ||
	    bpf_probe_read_user(&c.ptr, 8, (void *)(interp + c.pp->is_threads_head)))
		goto fail;
	bpf_loop(PREC_PY_MAX_THREADS, py_thread_step, &c, 0);
	if (!c.found) {
		st->no_thread++;
		return 0;
	}
	if (bpf_probe_read_user(&c.ptr, 8, (void *)(c.ptr + c.pp->ts_frame)))
		goto fail;
	if (c.pp->cf_current != 0xffff && c.ptr &&
	    bpf_probe_read_user(&c.ptr, 8, (void *)(c.ptr + c.pp->cf_current)))
		goto fail;
	bpf_loop(PREC_PY_MAX_FRAMES, py_frame_step, &c, 0);
	if (c.n > PREC_PY_MAX_FRAMES)
		c.n = 0;
	if (c.ptr && c.n == PREC_PY_MAX_FRAMES && !c.failed)
		st->truncated++;
	if (c.failed)
		st->read_failed++;
	st->frames += c.n;
	return c.n;
fail:
	st->read_failed++;
	return 0;
}

#endif
