/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The kernel perf events precord opens: per-CPU sampling events (whose
 * overflow runs bpf/sample.bpf.c, which drops every sample from the
 * kernel's ring) and the side-band reader of the rings that carry MMAP2 /
 * COMM / FORK / EXIT records: the sampling events' own rings, as perf
 * record has them, or per-CPU "dummy" events' when nothing samples.
 */
#ifndef PRECORD_RECORD_EVENTS_H
#define PRECORD_RECORD_EVENTS_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/perf_event.h>
#include <linux/types.h>

struct bpf_program;
struct bpf_link;

struct cpu_set_list {
	int *cpus;
	int nr;
	int max_cpu;		/* highest possible cpu + 1 */
};

/* Online CPUs, or those of a perf-style list ("0,2-3") that are online. */
int cpu_set_list__parse(struct cpu_set_list *cl, const char *list);
void cpu_set_list__free(struct cpu_set_list *cl);

struct sample_events {
	struct perf_event_attr attr;	/* as written to the file */
	int *fds;
	struct bpf_link **links;
	__u64 *ids;			/* kernel event id per CPU index */
	int nr;
};

/* Open one sampling event per CPU described by attr and attach prog. */
int sample_events__open(struct sample_events *se, const struct perf_event_attr *attr,
			const struct cpu_set_list *cl, struct bpf_program *prog);
/* Stop sampling (links and fds go); ids stay for records still queued. */
void sample_events__stop(struct sample_events *se);
void sample_events__close(struct sample_events *se);

struct sb_ring {
	int fd;
	void *base;			/* metadata page + data */
	size_t data_size;
	__u64 id;
	__u8 *tmp;			/* a record that wraps the end is copied here */
};

struct sideband {
	struct perf_event_attr attr;
	struct sb_ring *rings;
	int nr;
	bool own_fds;			/* sideband__open's: closed with the rings */
};

typedef int (*sb_record_fn)(void *ctx, const struct perf_event_header *h);

/* One dummy event per CPU with attr, and its ring of pages pages. */
int sideband__open(struct sideband *sb, const struct perf_event_attr *attr,
		   const struct cpu_set_list *cl, unsigned int pages);
/* The rings of the sampling events (attr mmap/comm/task set); se keeps
 * its fds.  sample_events__stop() disables the events, which ends their
 * side-band; what is in the rings stays readable until sideband__close(). */
int sideband__map(struct sideband *sb, const struct sample_events *se, unsigned int pages);
int sideband__enable(struct sideband *sb);
/* Calls fn for every record available; returns records read or -errno. */
int sideband__drain(struct sideband *sb, sb_record_fn fn, void *ctx);
void sideband__close(struct sideband *sb);

int sys_perf_event_open(struct perf_event_attr *attr, int pid, int cpu, int group, unsigned long flags);

#endif
