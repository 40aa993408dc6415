/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A process's mappings for the symbolizer: address ranges, sorted and
 * never overlapping (a new range cuts what it overlaps, as in perf), in
 * a treap whose nodes are reference counted and copied on write.  A FORK
 * shares the parent's tree with the child in O(1); whichever of them
 * changes a shared part copies only the nodes on the way to the change
 * (O(log n) expected), so n mappings and f forks hold O(n + f log n)
 * nodes whatever their order (a copy of the list per FORK made a 1 MB
 * hostile perf.data cost 1.27 GB).  Insert and lookup are O(log n)
 * expected: the priorities come from a generator the file cannot steer.
 *
 * All trees of one symbolizer draw their nodes from one maptree_pool,
 * which counts them (for the symbolizer's cap and tests).
 */
#ifndef PRECORD_REPORT_MAPTREE_H
#define PRECORD_REPORT_MAPTREE_H

#include <stddef.h>
#include <linux/types.h>

struct maptree_node;

struct map_range {
	__u64 start, end, pgoff;
	void *dso;
};

struct maptree_pool {
	__u64 nodes;			/* live */
	__u64 allocs;			/* made, copies included */
	__u64 copies;			/* made to unshare a node */
	__u64 steps;			/* nodes visited by inserts and lookups */
	__u64 seed;			/* priorities */
};

struct maptree {
	struct maptree_node *root;
};

/* Bytes a node takes (for the symbolizer's stats). */
size_t maptree__node_size(void);

/* Add r (r->end > r->start), cutting what it overlaps: 0 or -ENOMEM
 * (the tree is then unchanged or without some overlapped pieces). */
int maptree__insert(struct maptree *t, struct maptree_pool *p, const struct map_range *r);
/* The range holding addr, or NULL.  Valid until t changes. */
const struct map_range *maptree__find(const struct maptree *t, struct maptree_pool *p, __u64 addr);
/* dst drops what it had and shares src's ranges. */
void maptree__share(struct maptree *dst, const struct maptree *src, struct maptree_pool *p);
/* t drops its ranges (nodes shared with another tree stay for it). */
void maptree__release(struct maptree *t, struct maptree_pool *p);

#endif
