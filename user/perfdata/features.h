/* SPDX-License-Identifier: GPL-2.0 */
/* The feature section: what its writers need to know about a recording,
 * and the writers (features.c). */
#ifndef PRECORD_PERFDATA_FEATURES_H
#define PRECORD_PERFDATA_FEATURES_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/perf_event.h>
#include <linux/types.h>

#include "util/buf.h"

struct perfdata_evsel {
	struct perf_event_attr attr;	/* attr.size == 128 */
	char *name;			/* EVENT_DESC name, e.g. "cpu-clock" */
	__u64 *ids;
	__u32 nr_ids;
};

struct perfdata_build_id {
	__u16 cpumode;			/* PERF_RECORD_MISC_KERNEL or _USER */
	__u8 size;			/* 1..20 */
	__u8 id[20];
	const char *filename;		/* "[kernel.kallsyms]", "[vdso]" or a path */
};

struct perfdata_env {
	const struct perfdata_evsel *evsels;	/* filled in by the writer */
	size_t nr_evsels;
	const struct perfdata_build_id *build_ids;
	size_t nr_build_ids;
	int argc;			/* CMDLINE: argv as given, argv[0] = precord */
	char *const *argv;
	__u64 first_sample_time;	/* SAMPLE_TIME, CLOCK_MONOTONIC ns */
	__u64 last_sample_time;
	bool have_clock;		/* CLOCKID + CLOCK_DATA */
	int clockid;
	__u64 clock_res_ns;
	__u64 clock_tod_ns;		/* gettimeofday at record start, ns */
	__u64 clock_ns;			/* clock_gettime(clockid) at the same moment */
};

/*
 * Feature writers.  perfdata_feature_write() appends the payload of feature
 * id `feat` (HEADER_*) to out and returns 0, or -ENODATA when the feature
 * is not written for this recording (its bit stays clear), or another
 * -errno when it failed (its bit stays clear, a debug message is logged).
 * On failure out is left at its length on entry.
 */
int perfdata_feature_write(int feat, struct pbuf *out, const struct perfdata_env *env);
/* Bytes one BUILD_ID entry takes in the feature section. */
size_t perfdata_build_id_entry_size(const struct perfdata_build_id *b);

#endif
