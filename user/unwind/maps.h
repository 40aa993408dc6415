/* SPDX-License-Identifier: GPL-2.0 */
/*
 * --call-graph ehframe: the BPF maps the walk reads
 * (include/precord/unwind_abi.h), as file descriptors, with their sizes.
 * Declared here, where the tables and the process lists are written into
 * them; the recorder, which loads the BPF programs, fills it
 * (bpf_sampler__unwind_maps).  The fds stay the filler's.
 */
#ifndef PRECORD_UNWIND_MAPS_H
#define PRECORD_UNWIND_MAPS_H

#include <linux/types.h>

struct unwind_map_fds {
	int rows, tables, procs, stats;	/* unwind_rows, _tables, _procs, _stats */
	__u32 nr_rows, nr_tables;	/* their max_entries */
};

#endif
