/* SPDX-License-Identifier: GPL-2.0 */
/*
 * -G: only the tasks in the cgroup at index 0 of only_cgroup (its fd, put
 * there by user space) or in its descendants count, as a perf event bound
 * to a cgroup counts them (the kernel's perf_cgroup_match).  Of the
 * current task: bpf/sample.bpf.c's samples, bpf/offcpu.bpf.c's waits.
 */
#ifndef PRECORD_BPF_CGROUP_FILTER_H
#define PRECORD_BPF_CGROUP_FILTER_H

const volatile bool cgroup_filter = false;

struct {
	__uint(type, BPF_MAP_TYPE_CGROUP_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u32);
} only_cgroup SEC(".maps");

/* The current task counts.  Not under it, or no cgroup in the map
 * (helper < 0): it does not. */
static __always_inline bool cgroup_ok(void)
{
	return !cgroup_filter || bpf_current_task_under_cgroup(&only_cgroup, 0) == 1;
}

#endif
