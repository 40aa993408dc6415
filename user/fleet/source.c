// SPDX-License-Identifier: GPL-2.0
/*
 * The samples of a perf.data for push, from the report reader and
 * symbolizer (report/profile.h), with one symbol cache for every file of
 * the push.  Times go on the wall clock by the file's CLOCK_DATA feature
 * (precord's files and perf record -k's have it), else by its mtime taken
 * as the time of the last sample (one extra pass of the reader, without
 * symbols).
 */
#include "source.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "precord/perf_file.h"
#include "report/perf_reader.h"
#include "report/profile.h"
#include "util/array.h"
#include "util/io.h"

struct fleet_source {
	struct sym_cache *cache;
	struct fleet_frame *frames;
	size_t cap;
};

struct fleet_source *fleet_source__new(void)
{
	struct fleet_source *src = calloc(1, sizeof(*src));

	if (!src)
		return NULL;
	src->cache = sym_cache__new(NULL);
	if (!src->cache) {
		free(src);
		return NULL;
	}
	return src;
}

void fleet_source__free(struct fleet_source *src)
{
	if (!src)
		return;
	sym_cache__free(src->cache);
	free(src->frames);
	free(src);
}

/*
 * CLOCK_DATA (perf's feature 29): u32 version, u32 clockid, u64 wall clock
 * ns, u64 clock ns, the two read together.  0 (wall and clock set) or -1.
 */
static int clock_data(int fd, __u64 *wall, __u64 *clock)
{
	struct perf_file_header h;
	struct perf_file_section sec;
	struct { __u32 version, clockid; __u64 wall, clock; } cd;
	struct stat st;
	int nth = 0;

	if (fstat(fd, &st) || pread_full(fd, &h, sizeof(h), 0) != (ssize_t)sizeof(h) ||
	    !(h.adds_features[HEADER_CLOCK_DATA / 64] & (1ULL << (HEADER_CLOCK_DATA % 64))))
		return -1;
	for (int i = 0; i < HEADER_CLOCK_DATA; i++)
		nth += !!(h.adds_features[i / 64] & (1ULL << (i % 64)));
	if (h.data.offset > (__u64)st.st_size || h.data.size > (__u64)st.st_size - h.data.offset ||
	    pread_full(fd, &sec, sizeof(sec), (off_t)(h.data.offset + h.data.size +
						       (__u64)nth * sizeof(sec))) != (ssize_t)sizeof(sec) ||
	    sec.size < sizeof(cd) || sec.offset > (__u64)st.st_size - sizeof(cd) ||
	    pread_full(fd, &cd, sizeof(cd), (off_t)sec.offset) != (ssize_t)sizeof(cd) ||
	    cd.version != 1 || !cd.wall)
		return -1;
	*wall = cd.wall;
	*clock = cd.clock;
	return 0;
}

static int last_time_cb(void *ctx, const struct perf_event_view *ev)
{
	if (ev->type == PERF_RECORD_SAMPLE && ev->sample.time > *(__u64 *)ctx)
		*(__u64 *)ctx = ev->sample.time;
	return 0;
}

/* The offset from the file's clock to the wall clock, in ns. */
static int wall_offset(const char *path, __s64 *off)
{
	__u64 wall, clock, last = 0;
	struct perf_reader *r;
	struct stat st;
	int fd = open_regular_file(path, -1), err = 0;

	if (fd < 0)
		return fd;
	if (!clock_data(fd, &wall, &clock)) {
		close(fd);
		*off = (__s64)(wall - clock);
		return 0;
	}
	if (fstat(fd, &st))
		err = -errno;
	close(fd);
	if (err)
		return err;
	r = perf_reader__open(path);
	if (!r)
		return -errno;
	err = perf_reader__read(r, last_time_cb, &last);
	perf_reader__free(r);
	if (err < 0)
		return err;
	*off = (__s64)((__u64)st.st_mtim.tv_sec * 1000000000ULL + (__u64)st.st_mtim.tv_nsec - last);
	return 0;
}

struct read_ctx {
	struct fleet_source *src;
	fleet_sample_cb cb;
	void *ctx;
	__s64 off;
	__u64 samples, records, offcpu_samples;
};

static int on_profile_sample(void *arg, const struct profile_sample *ps)
{
	struct read_ctx *rc = arg;
	struct fleet_source *src = rc->src;
	struct fleet_sample s;

	if (ARRAY_GROW(src->frames, src->cap, ps->nr_frames))
		return -ENOMEM;
	for (size_t i = 0; i < ps->nr_frames; i++) {
		const struct sym_frame *f = &ps->frames[i];

		src->frames[i] = (struct fleet_frame){
			f->sym ? f->sym : "[unknown]",
			f->dso && f->dso->name ? f->dso->name : "[unknown]",
			f->dso && f->dso->build_id ? f->dso->build_id : "",
		};
	}
	s = (struct fleet_sample){
		.time = (uint64_t)((__s64)ps->time + rc->off) / 1000000000ULL,
		.pid = ps->pid,
		.comm = ps->comm ? ps->comm : "",
		.cgroup = ps->cgroup ? ps->cgroup : "",
		/* the samples taken: 1 per record, an --aggregate record's
		 * PERIOD over the fixed period (profile__sample_count) */
		.count = ps->count,
		.weight = ps->period,
		.offcpu = ps->offcpu,
		.nr = (int)ps->nr_frames,
		.frames = src->frames,
	};
	if (ps->offcpu)
		rc->offcpu_samples++;
	else
		rc->samples += ps->count, rc->records++;
	return rc->cb(rc->ctx, &s);
}

int fleet_source__read(struct fleet_source *src, const char *path, fleet_sample_cb cb,
		       void *ctx, struct fleet_file_info *info)
{
	struct read_ctx rc = { src, cb, ctx, 0, 0, 0, 0 };
	struct profile_opts o = { .cache = src->cache, .with_offcpu = true };
	struct profile_info pi;
	int err;

	memset(info, 0, sizeof(*info));
	/* the reader said what is wrong with a file it refuses */
	err = wall_offset(path, &rc.off);
	if (err)
		return err;
	memset(&pi, 0, sizeof(pi));
	err = profile__read(path, &o, on_profile_sample, &rc, &pi);
	if (!err) {
		snprintf(info->hostname, sizeof(info->hostname), "%s", pi.host ? pi.host : "");
		info->samples = rc.samples;
		info->records = rc.records;
		info->offcpu_samples = rc.offcpu_samples;
		info->bad = pi.bad;
	}
	profile_info_free(&pi);
	return err;
}
