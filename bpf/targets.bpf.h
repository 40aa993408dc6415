/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The target filter every precord BPF program applies: rodata filter_mode
 * (enum prec_filter) and the `targets` map of tgids (or tids with -t).
 * bpf/sample.bpf.c owns the map (entries come with forks and the command's
 * exec, and go when the process exits); the other objects reuse its fd.
 */
#ifndef PRECORD_BPF_TARGETS_H
#define PRECORD_BPF_TARGETS_H

const volatile __u32 filter_mode = PREC_FILTER_ALL;

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 8192);	/* live targets at once; see targets_full */
	__type(key, __u32);
	__type(value, __u8);
} targets SEC(".maps");

static __always_inline bool is_target(__u32 tgid, __u32 tid)
{
	__u32 key;

	if (filter_mode == PREC_FILTER_ALL)
		return true;
	key = filter_mode == PREC_FILTER_TID ? tid : tgid;
	return bpf_map_lookup_elem(&targets, &key) != NULL;
}

#endif
