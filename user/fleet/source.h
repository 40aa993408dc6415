/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What push reads from a perf.data (precord's or perf record's): its
 * samples, symbolized on this host, with wall-clock times.  One source
 * lives across the files of a push so that symbols are read once per
 * build-id.
 */
#ifndef PRECORD_FLEET_SOURCE_H
#define PRECORD_FLEET_SOURCE_H

#include <stdbool.h>
#include <stdint.h>

struct fleet_frame {
	const char *sym;	/* "[unknown]" when nothing names it */
	const char *dso;	/* path, [kernel.kallsyms], [unknown] */
	const char *build_id;	/* hex, "" when unknown */
};

struct fleet_sample {
	uint64_t time;		/* wall clock, seconds since the epoch */
	uint32_t pid;
	const char *comm;
	const char *cgroup;	/* "" without cgroup data */
	uint64_t count;		/* samples it stands for (aggregated files: more than 1) */
	uint64_t weight;	/* period (offcpu: ns waited) */
	bool offcpu;		/* of perf's offcpu-time event (--off-cpu) */
	int nr;
	const struct fleet_frame *frames;	/* leaf first */
};

/* The file as a whole. */
struct fleet_file_info {
	char hostname[256];	/* HOSTNAME feature, "" when absent */
	uint64_t samples;	/* CPU samples taken (sum of counts) */
	uint64_t records;	/* CPU sample records read (fewer when aggregated) */
	uint64_t offcpu_samples;	/* offcpu-time samples read */
	uint64_t bad;		/* records reported and skipped */
};

struct fleet_source;

typedef int (*fleet_sample_cb)(void *ctx, const struct fleet_sample *s);

struct fleet_source *fleet_source__new(void);
void fleet_source__free(struct fleet_source *src);
/* Every sample of path to cb (non-zero from cb stops and is returned).
 * 0, or -errno after one line naming the file and what is wrong. */
int fleet_source__read(struct fleet_source *src, const char *path, fleet_sample_cb cb,
		       void *ctx, struct fleet_file_info *info);

#endif
