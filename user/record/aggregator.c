// SPDX-License-Identifier: GPL-2.0
/*
 * Draining the aggregation maps.  The generation being drained is quiet
 * (activate() returned), so reading and deleting it races with nothing:
 * no count is lost between the read and the delete.
 */
#include "record/aggregator.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <bpf/bpf.h>

#include "record/bpf_sampler.h"
#include "util/log.h"

#define FLUSH_EVERY_NS	1000000000ULL

struct aggregator {
	struct agg_backend be;
	__u32 capacity;
	agg_sink_fn sink;
	void *sink_ctx;
	unsigned int gen;		/* the generation BPF fills */
	struct prec_agg_key *keys;	/* capacity of each */
	struct prec_agg_val *vals;
	__u64 *ips;			/* one stack */
	__u64 last_flush;		/* time of the last flush, 0: none */
	bool resnap;			/* take the counters' base at the next __due */
	struct prec_agg_stats base;	/* the counters after the last flush */
	struct agg_counts n;
	struct bpf_backend *owned_backend;	/* aggregator__new_bpf's */
};

static void bpf_backend_free(struct bpf_backend *b);

struct aggregator *aggregator__new(const struct agg_backend *be, __u32 capacity,
				   agg_sink_fn sink, void *sink_ctx)
{
	struct aggregator *a = calloc(1, sizeof(*a));

	if (!a)
		return NULL;
	a->be = *be;
	a->capacity = capacity ? capacity : 1;
	a->sink = sink;
	a->sink_ctx = sink_ctx;
	a->resnap = true;
	a->keys = calloc(a->capacity, sizeof(*a->keys));
	a->vals = calloc(a->capacity, sizeof(*a->vals));
	a->ips = calloc(PREC_AGG_STACK_WORDS, sizeof(*a->ips));
	if (!a->keys || !a->vals || !a->ips) {
		aggregator__free(a);
		errno = ENOMEM;
		return NULL;
	}
	return a;
}

void aggregator__free(struct aggregator *a)
{
	if (!a)
		return;
	bpf_backend_free(a->owned_backend);
	free(a->keys);
	free(a->vals);
	free(a->ips);
	free(a);
}

/* The frames of k, from gen's stacks or else the current generation's
 * (a count created between the two swaps of activate()); NULL: none. */
static const __u64 *stack_of(struct aggregator *a, unsigned int gen,
			     const struct prec_agg_key *k)
{
	int err;

	if (!k->stack_id)
		return a->ips;		/* no frames: nothing to read */
	err = a->be.stack(a->be.ctx, gen, k->stack_id, a->ips);
	if (err == -ENOENT)
		err = a->be.stack(a->be.ctx, gen ^ 1, k->stack_id, a->ips);
	return err ? NULL : a->ips;
}

static int write_all(struct aggregator *a, unsigned int gen, __u32 nr, __u64 time)
{
	for (__u32 i = 0; i < nr; i++) {
		const struct prec_agg_key *k = &a->keys[i];
		const __u64 *ips;
		int err;

		if ((__u32)k->nr_kernel + k->nr_user + k->nr_py > PREC_AGG_STACK_WORDS)
			return -EINVAL;
		ips = stack_of(a, gen, k);
		if (!ips)
			a->n.missing_stacks++;
		err = a->sink(a->sink_ctx, k, &a->vals[i], ips, time);
		if (err)
			return err;
		a->n.records++;
		a->n.samples += a->vals[i].count;
	}
	return 0;
}

static int flush(struct aggregator *a, __u64 time)
{
	unsigned int old = a->gen;
	__u32 nr;
	int err;

	err = a->be.activate(a->be.ctx, old ^ 1);
	if (err)
		return err;
	a->gen = old ^ 1;
	a->n.flushes++;
	a->last_flush = time;
	a->resnap = true;
	/* more than capacity only if a map holds more than it says: then
	 * the rest waits for the next flush of this generation */
	err = a->be.take_counts(a->be.ctx, old, a->keys, a->vals, a->capacity, &nr);
	if (!err)
		err = write_all(a, old, nr, time);
	if (!err)
		err = a->be.clear_stacks(a->be.ctx, old);
	return err;
}

int aggregator__flush(struct aggregator *a, __u64 time)
{
	int err = a ? flush(a, time) : 0;

	if (err)
		pr_err("cannot drain the aggregation maps: %s", strerror(-err));
	return err;
}

bool aggregator__due(struct aggregator *a, const struct prec_agg_stats *st, __u64 time)
{
	if (a->resnap) {
		a->base = *st;
		a->resnap = false;
	}
	if (!a->last_flush)
		a->last_flush = time;
	if (st->full > a->base.full || st->inserts - a->base.inserts >= a->capacity / 2) {
		a->n.early_flushes++;
		return true;
	}
	return time - a->last_flush >= FLUSH_EVERY_NS;
}

int aggregator__round(struct aggregator *a, __u64 time)
{
	struct prec_agg_stats st;
	int err;

	if (!a || !a->be.stats)
		return 0;
	err = a->be.stats(a->be.ctx, &st);
	if (!err && aggregator__due(a, &st, time))
		err = aggregator__flush(a, time);
	return err;
}

void aggregator__counts(const struct aggregator *a, struct agg_counts *out)
{
	*out = a->n;
}

void aggregator__print_stats(const struct aggregator *a)
{
	struct prec_agg_stats st;
	struct agg_counts n;

	if (!a || !a->be.stats || a->be.stats(a->be.ctx, &st))
		return;
	aggregator__counts(a, &n);
	if (log_verbosity > 0)
		pr_info("aggregate: %llu samples taken; %llu counted in the kernel, written as %llu samples in %llu flushes (%llu early)",
			(unsigned long long)st.taken, (unsigned long long)n.samples,
			(unsigned long long)n.records, (unsigned long long)n.flushes,
			(unsigned long long)n.early_flushes);
	if (st.full)
		pr_warn("aggregate: %llu samples were written one by one, the kernel's map being full (%llu early flushes); none lost",
			(unsigned long long)st.full, (unsigned long long)n.early_flushes);
	if (n.missing_stacks)
		pr_warn("aggregate: %llu counts were written without their call chain (their stack was not found)",
			(unsigned long long)n.missing_stacks);
}

/* ---- the BPF maps as a backend ---------------------------------------- */

struct bpf_backend {
	struct agg_maps m;
	agg_stats_fn stats;		/* the counters */
	void *stats_ctx;
	__u64 *stack_ids;		/* capacity: for clear_stacks */
};

static int bpf_activate(void *ctx, unsigned int gen)
{
	struct bpf_backend *b = ctx;
	__u32 zero = 0;

	/* stacks first: see bpf/aggregate.bpf.h.  Each update returns once
	 * the programs that could see the old inner map have finished. */
	if (bpf_map_update_elem(b->m.stacks_outer, &zero, &b->m.stacks[gen], BPF_ANY) ||
	    bpf_map_update_elem(b->m.counts_outer, &zero, &b->m.counts[gen], BPF_ANY))
		return -errno;
	return 0;
}

static int bpf_take_counts(void *ctx, unsigned int gen, struct prec_agg_key *keys,
			   struct prec_agg_val *vals, __u32 max, __u32 *n)
{
	struct bpf_backend *b = ctx;
	__u64 cursor = 0;
	bool first = true;

	*n = 0;
	while (*n < max) {
		__u32 count = max - *n;
		int err = bpf_map_lookup_and_delete_batch(b->m.counts[gen], first ? NULL : &cursor,
							  &cursor, keys + *n, vals + *n, &count, NULL);

		first = false;
		*n += count;
		if (err && (errno == ENOENT || errno == ENOSPC))
			return 0;	/* the end, or no more room: the rest waits */
		if (err)
			return -errno;
	}
	return 0;
}

static int bpf_stack(void *ctx, unsigned int gen, __u64 id, __u64 *ips)
{
	struct bpf_backend *b = ctx;

	return bpf_map_lookup_elem(b->m.stacks[gen], &id, ips) ? -errno : 0;
}

static int bpf_clear_stacks(void *ctx, unsigned int gen)
{
	struct bpf_backend *b = ctx;
	int fd = b->m.stacks[gen];
	__u32 n = 0;
	__u64 key;

	/* the keys first: a delete during get_next_key restarts the walk */
	while (n < b->m.capacity &&
	       !bpf_map_get_next_key(fd, n ? &b->stack_ids[n - 1] : NULL, &key))
		b->stack_ids[n++] = key;
	if (n && bpf_map_delete_batch(fd, b->stack_ids, &n, NULL))
		return -errno;
	return 0;
}

static int bpf_stats(void *ctx, struct prec_agg_stats *sum)
{
	struct bpf_backend *b = ctx;

	return b->stats(b->stats_ctx, sum);
}

static int sampler_stats(void *ctx, struct prec_agg_stats *sum)
{
	return bpf_sampler__agg_stats(ctx, sum);
}

static void bpf_backend_free(struct bpf_backend *b)
{
	if (!b)
		return;
	free(b->stack_ids);
	free(b);
}

struct aggregator *aggregator__new_maps(const struct agg_maps *m, agg_stats_fn stats,
					void *stats_ctx, agg_sink_fn sink, void *sink_ctx)
{
	struct bpf_backend *b = calloc(1, sizeof(*b));
	struct agg_backend be = {
		.activate = bpf_activate, .take_counts = bpf_take_counts,
		.stack = bpf_stack, .clear_stacks = bpf_clear_stacks,
		.stats = stats ? bpf_stats : NULL, .ctx = b,
	};
	struct aggregator *a;

	if (!b)
		return NULL;
	b->m = *m;
	b->stats = stats;
	b->stats_ctx = stats_ctx;
	b->stack_ids = calloc(b->m.capacity ? b->m.capacity : 1, sizeof(*b->stack_ids));
	a = b->stack_ids ? aggregator__new(&be, b->m.capacity, sink, sink_ctx) : NULL;
	if (!a) {
		bpf_backend_free(b);
		errno = ENOMEM;
		return NULL;
	}
	a->owned_backend = b;
	return a;
}

struct aggregator *aggregator__new_bpf(const struct bpf_sampler *sampler, agg_sink_fn sink,
				       void *sink_ctx)
{
	struct agg_maps m;

	bpf_sampler__agg_maps(sampler, &m);
	/* the sampler outlives the aggregator; its counters are only read */
	return aggregator__new_maps(&m, sampler_stats, (void *)sampler, sink, sink_ctx);
}
