// SPDX-License-Identifier: GPL-2.0
#include "util/rangemap.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>

#include "util/mix64.h"

struct rangemap_node {
	struct rangemap_node *l, *r;
	uint64_t start, end, off;
	uintptr_t val;
	size_t size;		/* nodes in this subtree */
	uint32_t prio;		/* max-heap: a parent's is the larger */
	uint32_t ref;		/* maps and parent nodes pointing here */
};

/*
 * Priorities from a generator seeded at random: the tree's shape then
 * does not depend on the order a (hostile) process makes its mappings in,
 * and its depth is O(log n) with high probability.
 */
static _Thread_local uint64_t prio_state;

static uint32_t next_prio(void)
{
	if (!prio_state) {
		struct timespec ts;
		uint64_t seed = 0;

		if (getrandom(&seed, sizeof(seed), GRND_NONBLOCK) != sizeof(seed)) {
			clock_gettime(CLOCK_MONOTONIC, &ts);
			seed = (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
		}
		prio_state = mix64(seed ^ (uintptr_t)&prio_state) | 1;
	}
	prio_state ^= prio_state << 13;		/* xorshift64 */
	prio_state ^= prio_state >> 7;
	prio_state ^= prio_state << 17;
	return (uint32_t)(mix64(prio_state) >> 32);
}

static size_t size_of(const struct rangemap_node *t)
{
	return t ? t->size : 0;
}

static void fix_size(struct rangemap_node *t)
{
	t->size = 1 + size_of(t->l) + size_of(t->r);
}

static void hold(const struct rangemap *m, uintptr_t val)
{
	if (m->ops && m->ops->hold)
		m->ops->hold(m->ops->ctx, val);
}

/* Changes below are made only to nodes this map alone holds (the ones
 * unshare_path copied): anything else is a bug that would change what
 * another map holds. */
static void must_own(const struct rangemap_node *t)
{
	if (t->ref != 1) {
		fprintf(stderr, "rangemap: a shared node changed\n");
		abort();
	}
}

static struct rangemap_node *node_new(const struct rangemap *m, uint64_t start, uint64_t end,
				      uint64_t off, uintptr_t val)
{
	struct rangemap_node *t = malloc(sizeof(*t));

	if (!t)
		return NULL;
	*t = (struct rangemap_node){ .start = start, .end = end, .off = off, .val = val,
				     .size = 1, .prio = next_prio(), .ref = 1 };
	hold(m, val);
	return t;
}

static void release(struct rangemap *m, struct rangemap_node *t)
{
	while (t && --t->ref == 0) {
		struct rangemap_node *r = t->r;

		release(m, t->l);
		if (m->ops && m->ops->drop)
			m->ops->drop(m->ops->ctx, t->val);
		free(t);
		t = r;
	}
}

void rangemap__init(struct rangemap *m, const struct rangemap_ops *ops)
{
	*m = (struct rangemap){ .ops = ops };
}

static void forget_recent(struct rangemap *m)
{
	memset(m->recent, 0, sizeof(m->recent));
}

void rangemap__clear(struct rangemap *m)
{
	release(m, m->root);
	m->root = NULL;
	forget_recent(m);
}

void rangemap__share(struct rangemap *dst, const struct rangemap *src)
{
	rangemap__clear(dst);
	dst->ops = src->ops;
	dst->root = src->root;
	if (dst->root)
		dst->root->ref++;
}

size_t rangemap__count(const struct rangemap *m)
{
	return size_of(m->root);
}

/*
 * Every node on the search path for key (the nodes split visits) held by
 * this map alone: a shared one is replaced by a copy (its children then
 * shared by one more).  -ENOMEM leaves the map valid and unchanged in
 * content.
 */
static int unshare_path(struct rangemap *m, uint64_t key)
{
	struct rangemap_node **link = &m->root;

	while (*link) {
		struct rangemap_node *t = *link;

		m->steps++;
		if (t->ref > 1) {
			struct rangemap_node *c = malloc(sizeof(*c));

			if (!c)
				return -ENOMEM;
			*c = *t;
			c->ref = 1;
			if (c->l)
				c->l->ref++;
			if (c->r)
				c->r->ref++;
			hold(m, c->val);
			t->ref--;	/* still held by another map */
			*link = t = c;
		}
		link = t->start < key ? &t->r : &t->l;
	}
	return 0;
}

/* t into *l (starts below key) and *r (the others). */
static void split(struct rangemap *m, struct rangemap_node *t, uint64_t key,
		  struct rangemap_node **l, struct rangemap_node **r)
{
	if (!t) {
		*l = *r = NULL;
		return;
	}
	m->steps++;
	must_own(t);
	if (t->start < key) {
		split(m, t->r, key, &t->r, r);
		*l = t;
	} else {
		split(m, t->l, key, l, &t->l);
		*r = t;
	}
	fix_size(t);
}

/* Every range of a before every range of b. */
static struct rangemap_node *merge(struct rangemap *m, struct rangemap_node *a,
				   struct rangemap_node *b)
{
	if (!a)
		return b;
	if (!b)
		return a;
	m->steps++;
	if (a->prio > b->prio) {
		must_own(a);
		a->r = merge(m, a->r, b);
		fix_size(a);
		return a;
	}
	must_own(b);
	b->l = merge(m, a, b->l);
	fix_size(b);
	return b;
}

/* The range starting last below key, or NULL. */
static struct rangemap_node *last_below(struct rangemap *m, uint64_t key)
{
	struct rangemap_node *t = m->root, *best = NULL;

	while (t) {
		m->steps++;
		if (t->start < key) {
			best = t;
			t = t->r;
		} else {
			t = t->l;
		}
	}
	return best;
}

int rangemap__insert(struct rangemap *m, uint64_t start, uint64_t end, uint64_t off,
		     uintptr_t val, size_t cap)
{
	bool full = rangemap__count(m) >= cap;
	struct rangemap_node *l, *mid, *r, *p, *nn = NULL, *tail = NULL;
	const struct rangemap_node *last;

	if (end <= start)
		return -EINVAL;
	if (unshare_path(m, start) || unshare_path(m, end))
		return -ENOMEM;
	/* What goes past end of the last range starting before end stays,
	 * unless it is a range the new one falls inside and the map is full
	 * (the map would grow by one). */
	last = last_below(m, end);
	if (last && last->end > end && !(full && last->start < start)) {
		tail = node_new(m, end, last->end, last->off + (end - last->start), last->val);
		if (!tail)
			return -ENOMEM;
	}
	if (!full) {
		nn = node_new(m, start, end, off, val);
		if (!nn) {
			release(m, tail);
			return -ENOMEM;
		}
	}
	forget_recent(m);
	split(m, m->root, start, &l, &r);
	split(m, r, end, &mid, &r);
	for (p = l; p && p->r; p = p->r)	/* on split's path: ours */
		m->steps++;
	if (p && p->end > start) {
		must_own(p);
		p->end = start;
	}
	release(m, mid);
	m->root = merge(m, merge(m, l, nn), merge(m, tail, r));
	return full ? 1 : 0;
}

int rangemap__find(struct rangemap *m, uint64_t addr, struct rangemap_range *out)
{
	const struct rangemap_node *t = m->root;

	for (int i = 0; i < RANGEMAP_RECENT; i++) {
		if (addr >= m->recent[i].start && addr < m->recent[i].end) {
			*out = m->recent[i];
			m->steps++;
			return 1;
		}
	}
	while (t) {
		m->steps++;
		if (addr < t->start) {
			t = t->l;
		} else if (addr >= t->end) {
			t = t->r;
		} else {
			*out = (struct rangemap_range){ t->start, t->end, t->off, t->val };
			m->recent[m->next_recent++ % RANGEMAP_RECENT] = *out;
			return 1;
		}
	}
	return 0;
}

static int each(const struct rangemap_node *t,
		int (*fn)(void *ctx, const struct rangemap_range *r), void *ctx)
{
	while (t) {
		int err = each(t->l, fn, ctx);

		if (!err)
			err = fn(ctx, &(struct rangemap_range){ t->start, t->end, t->off, t->val });
		if (err)
			return err;
		t = t->r;
	}
	return 0;
}

int rangemap__each(const struct rangemap *m,
		   int (*fn)(void *ctx, const struct rangemap_range *r), void *ctx)
{
	return each(m->root, fn, ctx);
}
