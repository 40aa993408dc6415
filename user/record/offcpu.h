/* SPDX-License-Identifier: GPL-2.0 */
/*
 * --off-cpu: the waiting time of the targets (bpf/offcpu.bpf.c), written
 * as perf record --off-cpu writes it: one more event in the file,
 * PERF_TYPE_SOFTWARE / PERF_COUNT_SW_BPF_OUTPUT named `offcpu-time`,
 * whose samples' PERIOD is the nanoseconds waited (docs/offcpu.md).
 */
#ifndef PRECORD_RECORD_OFFCPU_H
#define PRECORD_RECORD_OFFCPU_H

#include <linux/types.h>

#include "opts.h"
#include "unwind/maps.h"

struct offcpu;
struct perfdata_writer;
struct dso_table;

/* The event's name, as perf names it (util/off_cpu.h OFFCPU_EVENT). */
#define OFFCPU_EVENT_NAME	"offcpu-time"
/* The id of its samples: apart from the kernel's event ids and --trace's. */
#define OFFCPU_SAMPLE_ID	0x7d00000000000000ULL

/* The sample_type of the file's events when off-CPU time is recorded:
 * those bits are in every attr, so that the id sits in one place. */
#define OFFCPU_ID_BITS \
	(PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_CPU)

struct offcpu_config {
	const struct prec_opts *o;
	int targets_fd;			/* the sampler's target set */
	const struct unwind_map_fds *unwind;	/* ehframe: the sampler's tables */
	int cgroup_fd;			/* -G's cgroup, -1: none */
	struct dso_table *dt;		/* DSOs hit, for BUILD_ID */
	__u64 id_type;			/* every record's trailer */
};

/* *out NULL without --off-cpu.  Loads and attaches the program; says why
 * it failed. */
int offcpu__new(struct offcpu **out, const struct offcpu_config *cfg);
void offcpu__free(struct offcpu *oc);			/* NULL-safe */

/* The event in the file w (each file of a rotation); its samples go to w
 * from now on.  NULL-safe. */
int offcpu__add_evsel(struct offcpu *oc, struct perfdata_writer *w);
/* Measure from now on.  NULL-safe. */
void offcpu__start(struct offcpu *oc);
/* Each round: the long waits queued, the summed ones if a flush is due.
 * NULL-safe. */
int offcpu__round(struct offcpu *oc, __u64 now);
/* Everything measured so far into the file, summed waits at time (no
 * earlier than what the writer flushed).  NULL-safe. */
int offcpu__flush(struct offcpu *oc, __u64 time);
/* The closing summary's lines.  NULL-safe. */
void offcpu__print_stats(const struct offcpu *oc);

#endif
