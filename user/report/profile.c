// SPDX-License-Identifier: GPL-2.0
#include "report/profile.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/log.h"

struct run {
	struct perf_reader *r;
	struct symbolizer *s;
	struct sym_frame *frames;
	size_t max;
	const char *host;
	profile_sample_cb cb;
	void *ctx;
	struct profile_info *info;
	bool with_offcpu;		/* profile_opts.with_offcpu */
	int err;
};

/* perf's off-CPU event (record/offcpu.h): told by its type and config, as
 * perf tells it (with its name, which only EVENT_DESC has). */
static bool is_offcpu(const struct perf_reader *r, size_t idx)
{
	const struct perf_event_attr *a = perf_reader__attr(r, idx);

	return a && a->type == PERF_TYPE_SOFTWARE && a->config == PERF_COUNT_SW_BPF_OUTPUT;
}

__u64 profile__sample_count(const struct perf_event_attr *a, __u64 period)
{
	__u64 fixed = 0;

	if (!a || !(a->sample_type & PERF_SAMPLE_PERIOD))
		return 1;
	if (!a->freq)
		fixed = a->sample_period;
	else if (a->type == PERF_TYPE_SOFTWARE && a->sample_freq &&
		 (a->config == PERF_COUNT_SW_CPU_CLOCK || a->config == PERF_COUNT_SW_TASK_CLOCK))
		fixed = 1000000000ULL / a->sample_freq;
	if (!fixed || period <= fixed)
		return 1;
	/* rounded: a period the kernel shortened or lengthened by a few ns
	 * still counts whole samples */
	return (period + fixed / 2) / fixed;
}

static int on_event(void *ctx, const struct perf_event_view *ev)
{
	struct run *run = ctx;
	struct profile_sample ps;
	char comm[16];
	int err;

	if (ev->type != PERF_RECORD_SAMPLE) {
		err = symbolizer__event(run->s, ev);
		if (err)
			run->err = err;
		return err;
	}
	ps = (struct profile_sample){
		.host = run->host, .pid = ev->sample.pid, .tid = ev->sample.tid,
		.cpu = ev->sample.cpu, .time = ev->sample.time,
		.comm = symbolizer__comm(run->s, ev->sample.tid),
		.cgroup_id = ev->sample.cgroup, .period = ev->sample.period,
		.weight = ev->sample.weight, .attr = ev->sample.attr, .frames = run->frames,
		.offcpu = is_offcpu(run->r, (size_t)ev->sample.attr),
	};
	/* off-CPU samples are waits (PERIOD = ns waited), one each */
	ps.count = ps.offcpu ? 1 : profile__sample_count(perf_reader__attr(run->r, (size_t)ev->sample.attr),
						       ps.period);
	if (ps.offcpu && !run->with_offcpu) {
		run->info->offcpu_skipped++;
		return 0;
	}
	if (ps.offcpu)
		run->info->offcpu_samples++;
	if (!ps.comm) {
		snprintf(comm, sizeof(comm), ":%u", ev->sample.tid);
		ps.comm = comm;
	}
	if (ps.cgroup_id)
		ps.cgroup = symbolizer__cgroup(run->s, ps.cgroup_id);
	ps.nr_frames = symbolizer__frames(run->s, ev, run->frames, run->max);
	if (!run->info->samples++)
		run->info->first_time = ps.time;
	run->info->last_time = ps.time;
	if (!ps.offcpu)
		run->info->period += ps.period;
	return run->cb(run->ctx, &ps);
}

static char *dup_or_empty(const char *s)
{
	return strdup(s ? s : "");
}

int profile__read(const char *path, const struct profile_opts *o, profile_sample_cb cb,
		  void *ctx, struct profile_info *info)
{
	struct run run = { .cb = cb, .ctx = ctx, .info = info };
	struct sym_cache *own = NULL, *cache = o ? o->cache : NULL;
	const struct perf_event_attr *a;
	int ret;

	memset(info, 0, sizeof(*info));
	run.max = o && o->max_frames ? o->max_frames : PROFILE_MAX_FRAMES;
	run.with_offcpu = o && o->with_offcpu;
	run.r = perf_reader__open(path);
	if (!run.r)
		return -errno;
	if (!cache && !(cache = own = sym_cache__new(NULL))) {
		ret = -ENOMEM;
		goto out;
	}
	run.s = symbolizer__new(cache, run.r);
	run.frames = calloc(run.max, sizeof(*run.frames));
	info->host = dup_or_empty(perf_reader__hostname(run.r));
	info->osrelease = dup_or_empty(perf_reader__osrelease(run.r));
	if (!run.s || !run.frames || !info->host || !info->osrelease) {
		ret = -ENOMEM;
		goto out;
	}
	run.host = info->host;
	a = perf_reader__attr(run.r, 0);
	info->nr_attrs = (__u32)perf_reader__nr_attrs(run.r);
	info->attr_type = a->type;
	info->attr_config = a->config;
	info->freq = a->freq;
	info->sample_period = a->sample_period;
	info->same_host = symbolizer__same_host(run.s);
	ret = perf_reader__read(run.r, on_event, &run);
	if (run.err)
		ret = run.err;
	info->lost = perf_reader__stats(run.r)->lost;
	info->bad = perf_reader__stats(run.r)->bad;
	if (ret == -E2BIG)
		pr_err("%s: more than %u mappings and processes at once (a damaged or hostile file?): not read",
		       path, SYMBOLIZER_MAX_ENTRIES);
	else if (ret < 0)
		pr_err("%s: reading failed: %s", path, strerror(-ret));
out:
	free(run.frames);
	symbolizer__free(run.s);
	sym_cache__free(own);
	perf_reader__free(run.r);
	return ret;
}

void profile_info_free(struct profile_info *info)
{
	free(info->host);
	free(info->osrelease);
	info->host = info->osrelease = NULL;
}
