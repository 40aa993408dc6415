/* SPDX-License-Identifier: GPL-2.0 */
/*
 * profile__read: one perf.data file (precord's or perf record's) as a
 * stream of symbolized samples, for the exporters and the fleet store.
 *
 *	struct sym_cache *c = sym_cache__new(NULL);	// shared across files
 *	struct profile_opts o = { .cache = c };
 *	struct profile_info info;
 *	err = profile__read("perf.data", &o, on_sample, ctx, &info);
 *	...
 *	profile_info_free(&info);
 *	sym_cache__free(c);
 *
 * on_sample gets each sample in time order with its frames leaf first.
 * Everything a sample points to (names, frames, DSOs) lives until
 * profile__read returns; copy what must outlive it.  Symbol tables stay
 * in the cache, so reading the next file of the same hosts costs little.
 */
#ifndef PRECORD_REPORT_PROFILE_H
#define PRECORD_REPORT_PROFILE_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>

#include "report/symbolizer.h"

struct perf_event_attr;

#define PROFILE_MAX_FRAMES	1024	/* deeper stacks are cut (leaf kept) */

struct profile_sample {
	const char *host;		/* HOSTNAME feature; "" when absent */
	__u32 pid, tid, cpu;		/* cpu: 0 without PERF_SAMPLE_CPU */
	__u64 time;			/* ns, the file's clock (CLOCK_MONOTONIC for precord) */
	const char *comm;		/* thread name; ":TID" when none was recorded (perf's) */
	__u64 cgroup_id;		/* PERF_SAMPLE_CGROUP; 0 without */
	const char *cgroup;		/* its path from CGROUP records, or NULL */
	__u64 period;			/* the sample's period (1 without PERIOD and with -F) */
	__u64 count;			/* samples taken it stands for: 1, or for an
					 * --aggregate record PERIOD / the event's
					 * fixed period (profile__sample_count) */
	__u64 weight;			/* PERF_SAMPLE_WEIGHT; 0 without */
	int attr;			/* index of the sample's event */
	bool offcpu;			/* of the offcpu-time event: period = ns waited */
	size_t nr_frames;		/* >= 1 */
	const struct sym_frame *frames;	/* leaf first: frames[0] is where it ran */
};

/* Return non-zero to stop; profile__read returns it. */
typedef int (*profile_sample_cb)(void *ctx, const struct profile_sample *s);

struct profile_opts {
	struct sym_cache *cache;	/* NULL: a cache for this call alone */
	size_t max_frames;		/* 0: PROFILE_MAX_FRAMES */
	bool with_offcpu;		/* also the offcpu-time samples (--off-cpu's,
					 * PERIOD = ns waited); false: skipped */
};

/* What the file said about itself, for the caller to keep. */
struct profile_info {
	char *host;			/* malloc'd; "" when absent */
	char *osrelease;		/* malloc'd; "" when absent */
	__u64 samples;			/* delivered to the callback */
	__u64 period;			/* their total period */
	__u64 lost, bad;		/* lost samples; records skipped as corrupt */
	__u64 offcpu_skipped;		/* offcpu-time samples left out (!with_offcpu) */
	__u64 offcpu_samples;		/* offcpu-time samples delivered */
	__u64 first_time, last_time;	/* of the samples */
	__u32 nr_attrs;
	__u32 attr_type;		/* attr 0's type and config (the event) */
	__u64 attr_config;
	__u64 sample_period;		/* attr 0: period, or frequency when freq */
	bool freq;			/* attr 0 samples at a frequency (-F) */
	bool same_host;			/* recorded on this host */
};

/*
 * The samples taken that a record of PERIOD stands for, under attr a: 1
 * for a plain record; PERIOD / the fixed period for an aggregated one
 * (precord --aggregate writes the sum of the counted samples' periods).
 * The period is fixed, so the count exact, with -c N (PERIOD / N) and for
 * cpu-clock and task-clock at -F F, which the kernel samples at the fixed
 * period NSEC_PER_SEC / F (an hrtimer; perf_swevent_init_hrtimer).  A
 * frequency-driven hardware event's periods vary: its records count 1.
 */
__u64 profile__sample_count(const struct perf_event_attr *a, __u64 period);

/* Read path (see above).  0, the callback's non-zero result, or -errno
 * after one message (the file cannot be opened or is not a perf.data). */
int profile__read(const char *path, const struct profile_opts *o, profile_sample_cb cb,
		  void *ctx, struct profile_info *info);
void profile_info_free(struct profile_info *info);

#endif
