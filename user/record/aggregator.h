/* SPDX-License-Identifier: GPL-2.0 */
/*
 * --aggregate: the counts the BPF programs keep (bpf/aggregate.bpf.h)
 * drained into the file.  A flush makes the other generation of maps the
 * one BPF fills, takes every count out of the old one with its stack, hands
 * each to the sink (one perf sample per distinct key), then empties the
 * old stacks.  The maps are reached through a backend: the BPF maps
 * (aggregator__new_bpf), or a test's fake.
 */
#ifndef PRECORD_RECORD_AGGREGATOR_H
#define PRECORD_RECORD_AGGREGATOR_H

#include <stdbool.h>
#include <linux/types.h>

#include "precord/bpf_abi.h"

struct aggregator;
struct bpf_sampler;

/* The maps of bpf/aggregate.bpf.h, as file descriptors. */
struct agg_maps {
	int counts_outer, stacks_outer;	/* one-slot map-in-map arrays */
	int counts[2], stacks[2];	/* generation 0 is current at load */
	__u32 capacity;			/* entries of each inner map */
};

/* How the aggregator reaches the maps; each returns 0 or -errno. */
struct agg_backend {
	/* BPF fills generation gen from now on; returns once no program
	 * still writes into the other one. */
	int (*activate)(void *ctx, unsigned int gen);
	/* Take out (read and delete) up to max counts of gen: *n of them. */
	int (*take_counts)(void *ctx, unsigned int gen, struct prec_agg_key *keys,
			   struct prec_agg_val *vals, __u32 max, __u32 *n);
	/* The PREC_AGG_STACK_WORDS frames of stack id in gen, or -ENOENT. */
	int (*stack)(void *ctx, unsigned int gen, __u64 id, __u64 *ips);
	/* Delete every stack of gen. */
	int (*clear_stacks)(void *ctx, unsigned int gen);
	/* The BPF counters summed over the CPUs; NULL: none (no rounds). */
	int (*stats)(void *ctx, struct prec_agg_stats *sum);
	void *ctx;
};

/* Where each distinct key goes: ips has k->nr_kernel + k->nr_user frames,
 * NULL when its stack was not found (then written without frames).  time
 * is the flush's.  A negative return stops the flush. */
typedef int (*agg_sink_fn)(void *ctx, const struct prec_agg_key *k,
			   const struct prec_agg_val *v, const __u64 *ips, __u64 time);

/* NULL + errno.  be is copied. */
struct aggregator *aggregator__new(const struct agg_backend *be, __u32 capacity,
				   agg_sink_fn sink, void *sink_ctx);
/* The same on the BPF sampler's maps and counters (b outlives it). */
struct aggregator *aggregator__new_bpf(const struct bpf_sampler *b, agg_sink_fn sink,
				       void *sink_ctx);
/* The same on the maps of another BPF object that includes
 * bpf/aggregate.bpf.h (m copied); stats sums its agg_stats (NULL: no
 * early flushes). */
typedef int (*agg_stats_fn)(void *ctx, struct prec_agg_stats *sum);
struct aggregator *aggregator__new_maps(const struct agg_maps *m, agg_stats_fn stats,
					void *stats_ctx, agg_sink_fn sink, void *sink_ctx);
void aggregator__free(struct aggregator *a);			/* NULL-safe */

/*
 * THE flush: every sample counted so far goes into the file now, as one
 * sample per distinct key at time (a time no earlier than any of them,
 * e.g. now, and than what the writer has flushed: their own times are
 * not kept).  Called by the session each second and when the maps fill
 * (aggregator__round), at the end, and right before a file switch.
 * A failure is said.  NULL-safe (no --aggregate): 0.
 */
int aggregator__flush(struct aggregator *a, __u64 time);
/* Each round of the recording: a flush at time if one is due on the
 * backend's counters.  NULL-safe: 0. */
int aggregator__round(struct aggregator *a, __u64 time);

/* Whether a flush is due at time, given the BPF counters summed over
 * the CPUs: a second since the last one, half the map filled with new
 * keys, or a sample sent to the ring because a map was full. */
bool aggregator__due(struct aggregator *a, const struct prec_agg_stats *st, __u64 time);

struct agg_counts {
	__u64 flushes;
	__u64 early_flushes;		/* due to a filling or full map */
	__u64 records;			/* distinct keys written */
	__u64 samples;			/* the samples they count */
	__u64 missing_stacks;		/* keys written without frames */
};
void aggregator__counts(const struct aggregator *a, struct agg_counts *out);
/* The closing summary's lines: what --aggregate did (-v), and always
 * what it could not count.  NULL-safe. */
void aggregator__print_stats(const struct aggregator *a);

#endif
