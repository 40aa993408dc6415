/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The kernel's rings a recording reads, together: the side-band rings of
 * the perf events (event_set), the BPF sample ring (bpf_sampler) and
 * tracing's ring.  Waited on at once; emptied side-band first, into the
 * converter (the BPF ring taken into memory after each of its records),
 * then the samples, then tracing's records; their drops recorded.
 */
#ifndef PRECORD_RECORD_RINGS_H
#define PRECORD_RECORD_RINGS_H

#include <linux/types.h>

struct rings;
struct event_set;
struct bpf_sampler;
struct tracing;
struct sample_converter;
struct unwinder;
struct perfdata_writer;

struct rings_config {
	struct event_set *ev;
	struct bpf_sampler *bpf;
	struct tracing *trace;		/* NULL: no --trace */
	struct sample_converter *conv;	/* what the records become */
	struct unwinder *unwind;	/* flushed after the side-band; NULL: none */
};

/* The objects stay the caller's.  NULL + errno. */
struct rings *rings__new(const struct rings_config *cfg);
void rings__free(struct rings *r);			/* NULL-safe */

/* Sleep until a ring has data or timeout_ms passes.  0 or -errno. */
int rings__wait(struct rings *r, int timeout_ms);
/* What the rings hold now: converted, tracing's queued on w.  0 or -errno. */
int rings__drain(struct rings *r, struct perfdata_writer *w);
/* Samples dropped (BPF's ring, tracing's) since the last call: recorded
 * at time. */
int rings__report_drops(struct rings *r, __u64 time);

#endif
