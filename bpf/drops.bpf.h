/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What the programs that send samples to a ring share: the scratch
 * layout of a sample with both stacks, and the per-CPU count of the
 * samples the ring had no room for (user space reports them as lost).
 */
#ifndef PRECORD_BPF_DROPS_H
#define PRECORD_BPF_DROPS_H

/* A prec_sample followed by room for both stacks and the Python frames
 * (512 >= PREC_AGG_STACK_WORDS: a masked index stays inside). */
struct sample_buf {
	__u64 words[sizeof(struct prec_sample) / 8 + 512];
};

/* Samples that did not fit in the ring buffer, per CPU. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64);
} drops SEC(".maps");

static __always_inline void count_drop(void)
{
	__u32 zero = 0;
	__u64 *d = bpf_map_lookup_elem(&drops, &zero);

	if (d)
		*d += 1;
}

#endif
