/* SPDX-License-Identifier: GPL-2.0 */
/*
 * --aggregate: identical samples counted in the kernel instead of sent one
 * by one.  submit() is where every sampling program hands its sample over:
 * to the ring as it is, or (aggregate mode) into the count of its key.
 * Include after emit() (bpf/sample.bpf.c).
 *
 * A sample's key is its process, thread, CPU (when the file records it),
 * cgroup, ip and stack; the stack is named by a 64-bit hash of its frames
 * and stored once per generation in the stacks map.  The key's hash is
 * not checked against the stored frames: two different stacks with the
 * same hash would share a count.  With n distinct stacks between two
 * flushes that has a probability of about n^2 / 2^65 (1e-11 for 20000).
 *
 * Two generations: user space makes the other one current by swapping the
 * one-slot map-in-map arrays, stacks first; the kernel returns from that
 * update only once no program still uses the old inner map (a
 * synchronize_rcu() after updates of map-in-map arrays, in
 * kernel/bpf/syscall.c since Linux 4.19), so the old
 * generation is drained with no program writing into it.  A count created
 * between the two swaps may have its stack in the new generation's stacks:
 * user space looks there second (user/record/aggregator.c).
 *
 * A map that is full (or a bucket busy): the sample goes to the ring as a
 * normal one, counted in agg_stats.full; user space flushes early.
 */
#ifndef PRECORD_AGGREGATE_BPF_H
#define PRECORD_AGGREGATE_BPF_H

#define AGG_EEXIST	17	/* EEXIST: not in vmlinux.h */

const volatile bool aggregate = false;
const volatile bool agg_cpu = false;	/* the file records the CPU (-a, -C) */

struct agg_counts_map {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 1);			/* sized by user space */
	__type(key, struct prec_agg_key);
	__type(value, struct prec_agg_val);
};

/* An includer whose programs never run in NMI may allocate the stacks
 * as they come (BPF_F_NO_PREALLOC): bpf/offcpu.bpf.c. */
#ifndef AGG_STACKS_FLAGS
#define AGG_STACKS_FLAGS	0
#endif

struct agg_stacks_map {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(map_flags, AGG_STACKS_FLAGS);
	__uint(max_entries, 1);			/* sized by user space */
	__type(key, __u64);
	__type(value, __u64[PREC_AGG_STACK_WORDS]);
};

struct agg_counts_map agg_counts0 SEC(".maps"), agg_counts1 SEC(".maps");
struct agg_stacks_map agg_stacks0 SEC(".maps"), agg_stacks1 SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY_OF_MAPS);
	__uint(max_entries, 1);
	__type(key, __u32);
	__array(values, struct agg_counts_map);
} agg_counts SEC(".maps") = { .values = { &agg_counts0 } };

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY_OF_MAPS);
	__uint(max_entries, 1);
	__type(key, __u32);
	__array(values, struct agg_stacks_map);
} agg_stacks SEC(".maps") = { .values = { &agg_stacks0 } };

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct prec_agg_stats);
} agg_stats SEC(".maps");

/* 64 bits of the frames and their split, never 0 (0: no frames). */
static __always_inline __u64 agg_stack_id(const struct prec_sample *s, __u32 n)
{
	__u64 h = 0x6a09e667f3bcc909ULL ^
		  ((__u64)s->nr_py << 32 | (__u64)s->nr_kernel << 16 | s->nr_user);

	for (__u32 i = 0; i < PREC_AGG_STACK_WORDS; i++) {
		if (i >= n)
			break;
		h ^= s->ips[i];
		h *= 0x9e3779b97f4a7c15ULL;
		h ^= h >> 29;
	}
	/* splitmix64's finalizer: every input bit reaches every output bit */
	h ^= h >> 30;
	h *= 0xbf58476d1ce4e5b9ULL;
	h ^= h >> 27;
	h *= 0x94d049bb133111ebULL;
	h ^= h >> 31;
	return h ? h : 1;
}

/* Counted into the current generation: true; false: send it as it is. */
static __always_inline bool agg_count(struct prec_sample *s)
{
	struct prec_agg_key k = {};
	struct prec_agg_val one, *v;
	struct prec_agg_stats *st;
	void *counts, *stacks;
	__u32 zero = 0, n;
	long err;

	st = bpf_map_lookup_elem(&agg_stats, &zero);
	if (!st)
		return false;
	st->taken++;
	n = s->nr_kernel + s->nr_user + s->nr_py;
	k.pid = s->pid;
	k.tid = s->tid;
	k.cpu = agg_cpu ? s->cpu : 0;
	k.nr_kernel = s->nr_kernel;
	k.nr_user = s->nr_user;
	k.nr_py = s->nr_py;
	k.ip = s->ip;
	k.cgroup = s->cgroup;
	k.stack_id = n ? agg_stack_id(s, n) : 0;
	counts = bpf_map_lookup_elem(&agg_counts, &zero);
	stacks = bpf_map_lookup_elem(&agg_stacks, &zero);
	if (!counts || !stacks)
		goto full;
	v = bpf_map_lookup_elem(counts, &k);
	if (v)
		goto add;
	if (n) {
		/* ips has room for PREC_AGG_STACK_WORDS (struct sample_buf) */
		err = bpf_map_update_elem(stacks, &k.stack_id, s->ips, BPF_NOEXIST);
		if (err && err != -AGG_EEXIST)
			goto full;
	}
	one.count = 1;
	one.period = s->period;
	err = bpf_map_update_elem(counts, &k, &one, BPF_NOEXIST);
	if (!err) {
		st->inserts++;
		return true;
	}
	if (err != -AGG_EEXIST)
		goto full;
	/* another CPU created it meanwhile */
	v = bpf_map_lookup_elem(counts, &k);
	if (!v)
		goto full;
add:
	__sync_fetch_and_add(&v->count, 1);
	__sync_fetch_and_add(&v->period, s->period);
	return true;
full:
	st->full++;
	return false;
}

/* Every sampling program's last step: data starts with a prec_sample
 * whose ips[] has room for PREC_AGG_STACK_WORDS frames. */
static __always_inline void submit(void *data, __u64 size)
{
	if (aggregate && agg_count(data))
		return;
	emit(data, size);
}

#endif
