/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A map of disjoint address ranges [start, end) to values, as a process's
 * mappings: a later range replaces what it overlaps (cutting the ranges
 * it covers in part, splitting one it falls inside).  A treap with random
 * priorities, persistent: rangemap__share makes a second map of the same
 * nodes in O(1) (FORK), and a change copies only the nodes on its search
 * paths that another map still holds, so n forks of a process with m
 * mappings cost O(n) plus what each one changes, not O(n * m).
 *
 * Expected costs, whatever the order of the ranges: insert O(log n) plus
 * O(log n) per range it removes (each removed range was inserted once:
 * amortized O(log n)); lookup O(log n); share O(1); clear O(what no other
 * map holds).  Values are opaque: ops->hold is called for each new node
 * holding a value (a copy, a range cut in two), ops->drop for each freed
 * one, so a caller can count the ranges that use a value or reference
 * count it.  Not thread-safe: one map (and those sharing its nodes) per
 * thread.
 */
#ifndef PRECORD_UTIL_RANGEMAP_H
#define PRECORD_UTIL_RANGEMAP_H

#include <stddef.h>
#include <stdint.h>

struct rangemap_node;

struct rangemap_ops {
	void (*hold)(void *ctx, uintptr_t val);	/* NULL: nothing to do */
	void (*drop)(void *ctx, uintptr_t val);
	void *ctx;
};

/* One range as rangemap__find and rangemap__each give it.  off is the
 * value's offset at start (a file offset): a range cut at its front has
 * it advanced by what was cut. */
struct rangemap_range {
	uint64_t start, end, off;
	uintptr_t val;
};

#define RANGEMAP_RECENT	4

struct rangemap {
	struct rangemap_node *root;
	const struct rangemap_ops *ops;		/* NULL: no callbacks */
	uint64_t steps;		/* nodes visited so far: for tests of the cost */
	/* The ranges found last (end 0: none), looked at before the tree: a
	 * process's samples fall in a few ranges, and a walk down the tree
	 * is a cache miss a level with many processes.  Emptied by changes. */
	struct rangemap_range recent[RANGEMAP_RECENT];
	unsigned int next_recent;
};

void rangemap__init(struct rangemap *m, const struct rangemap_ops *ops);
/* Every range dropped (those another map shares stay for it). */
void rangemap__clear(struct rangemap *m);
/* dst (cleared first) holds the same ranges as src, sharing its nodes. */
void rangemap__share(struct rangemap *dst, const struct rangemap *src);

/*
 * [start, end) → (off, val), replacing what it overlaps.  When the map
 * already holds `cap` ranges or more, the range is not added (1 is
 * returned), but what it overlaps is still removed, whole (no range left
 * over from a cut is kept then: the map never grows past cap + 0).
 * 0: added; -EINVAL: end <= start; -ENOMEM: nothing changed.
 */
int rangemap__insert(struct rangemap *m, uint64_t start, uint64_t end, uint64_t off,
		     uintptr_t val, size_t cap);
/* The range holding addr: 1 and *r filled, or 0. */
int rangemap__find(struct rangemap *m, uint64_t addr, struct rangemap_range *r);
size_t rangemap__count(const struct rangemap *m);
/* fn for each range in address order; a non-zero return stops and is
 * returned. */
int rangemap__each(const struct rangemap *m,
		   int (*fn)(void *ctx, const struct rangemap_range *r), void *ctx);

#endif
