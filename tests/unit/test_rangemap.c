// SPDX-License-Identifier: GPL-2.0
/*
 * The per-process mapping map (util/rangemap.c): random inserts, overlaps
 * and splits against a naive sorted array, forks (shared maps) changed
 * apart, clears, the cap; and its cost counted in nodes visited, which no
 * machine speed changes: a mapping among 16n costs about what one among n
 * does (was a copy of the whole list per mapping: 16 times more).
 */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>

#include "harness.h"
#include "util/rangemap.h"

#define NVALS 64

static long held[NVALS];	/* nodes holding each value */

static void on_hold(void *ctx, uintptr_t v)
{
	(void)ctx;
	held[v]++;
}

static void on_drop(void *ctx, uintptr_t v)
{
	(void)ctx;
	held[v]--;
}

static const struct rangemap_ops ops = { on_hold, on_drop, NULL };

/* The naive model: a sorted array of disjoint ranges. */
struct model {
	struct rangemap_range r[4096];
	size_t n;
};

static int model_insert(struct model *md, uint64_t s, uint64_t e, uint64_t off, uintptr_t v,
			size_t cap)
{
	struct rangemap_range out[4096 + 2];
	bool full = md->n >= cap;
	size_t w = 0, i;

	for (i = 0; i < md->n; i++) {
		struct rangemap_range x = md->r[i];

		if (x.end <= s || x.start >= e) {
			out[w++] = x;
			continue;
		}
		if (x.start < s)
			out[w++] = (struct rangemap_range){ x.start, s, x.off, x.val };
		if (x.end > e && !(full && x.start < s))
			out[w++] = (struct rangemap_range){ e, x.end, x.off + (e - x.start), x.val };
	}
	if (!full)
		out[w++] = (struct rangemap_range){ s, e, off, v };
	/* insertion sort: w is small */
	for (i = 1; i < w; i++)
		for (size_t j = i; j > 0 && out[j - 1].start > out[j].start; j--) {
			struct rangemap_range t = out[j];

			out[j] = out[j - 1];
			out[j - 1] = t;
		}
	memcpy(md->r, out, w * sizeof(*out));
	md->n = w;
	return full ? 1 : 0;
}

struct walk {
	const struct model *md;
	size_t i;
	int bad;
};

static int walk_one(void *ctx, const struct rangemap_range *r)
{
	struct walk *w = ctx;
	const struct rangemap_range *x = &w->md->r[w->i++];

	if (w->i > w->md->n || x->start != r->start || x->end != r->end || x->off != r->off ||
	    x->val != r->val)
		w->bad++;
	return 0;
}

static void check_same(struct rangemap *m, const struct model *md)
{
	struct walk w = { md, 0, 0 };

	CHECK_EQ(rangemap__count(m), md->n);
	CHECK_EQ(rangemap__each(m, walk_one, &w), 0);
	CHECK_EQ(w.bad, 0);
	CHECK_EQ(w.i, md->n);
	/* lookups at every edge and inside */
	for (size_t i = 0; i < md->n; i++) {
		const struct rangemap_range *x = &md->r[i];
		struct rangemap_range got;

		CHECK(rangemap__find(m, x->start, &got) && got.start == x->start && got.val == x->val);
		CHECK(rangemap__find(m, x->end - 1, &got) && got.end == x->end);
		if (!(i + 1 < md->n && md->r[i + 1].start == x->end))
			CHECK(!rangemap__find(m, x->end, &got));
		if (!(i && md->r[i - 1].end == x->start) && x->start)
			CHECK(!rangemap__find(m, x->start - 1, &got));
	}
}

static uint64_t rnd(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

/* Ranges in a small space so that they overlap, cut and split each other;
 * four maps forked from each other and changed apart. */
TEST(random_against_model)
{
	static struct model md[4];
	struct rangemap m[4];
	uint64_t seed = 88172645463325252ull;

	for (int k = 0; k < 4; k++) {
		rangemap__init(&m[k], &ops);
		md[k].n = 0;
	}
	for (int round = 0; round < 20000; round++) {
		int k = (int)(rnd(&seed) % 4), op = (int)(rnd(&seed) % 100);

		if (op < 3) {				/* fork: k2 becomes a copy of k */
			int k2 = (int)(rnd(&seed) % 4);

			if (k2 != k) {
				rangemap__share(&m[k2], &m[k]);
				md[k2] = md[k];
			}
		} else if (op < 4) {			/* exit / exec */
			rangemap__clear(&m[k]);
			md[k].n = 0;
		} else {
			uint64_t s = rnd(&seed) % 2000, len = 1 + rnd(&seed) % (op < 50 ? 8 : 200);
			uintptr_t v = (uintptr_t)(rnd(&seed) % NVALS);
			size_t cap = op < 10 ? md[k].n : 1000;

			CHECK_EQ(rangemap__insert(&m[k], s, s + len, s * 7, v, cap),
				 model_insert(&md[k], s, s + len, s * 7, v, cap));
		}
		if (round % 97 == 0)
			for (int j = 0; j < 4; j++)
				check_same(&m[j], &md[j]);
	}
	for (int j = 0; j < 4; j++) {
		check_same(&m[j], &md[j]);
		rangemap__clear(&m[j]);
	}
	for (int v = 0; v < NVALS; v++)
		CHECK_EQ(held[v], 0);		/* every node freed once */
	CHECK_EQ(rangemap__insert(&m[0], 5, 5, 0, 0, 10), -EINVAL);
}

/* The cap: past it a mapping is not added, what it covers still goes. */
TEST(cap_counts_and_cuts)
{
	struct rangemap m;
	struct rangemap_range got;
	int over = 0;

	rangemap__init(&m, &ops);
	for (uint64_t i = 0; i < 100; i++)
		over += rangemap__insert(&m, i * 20, i * 20 + 10, 0, 1, 64) == 1;
	CHECK_EQ(over, 36);
	CHECK_EQ(rangemap__count(&m), 64);
	/* full: over [0, 25) the first goes, the second keeps [25, 30),
	 * nothing is added */
	CHECK_EQ(rangemap__insert(&m, 0, 25, 0, 2, 64), 1);
	CHECK_EQ(rangemap__count(&m), 63);
	CHECK(!rangemap__find(&m, 5, &got));
	CHECK(!rangemap__find(&m, 24, &got));
	CHECK(rangemap__find(&m, 25, &got) && got.start == 25 && got.val == 1);
	/* full, inside a range: its part past the new one goes too (the map
	 * would grow by one) */
	CHECK_EQ(rangemap__insert(&m, 42, 44, 0, 2, 63), 1);
	CHECK_EQ(rangemap__count(&m), 63);
	CHECK(rangemap__find(&m, 41, &got) && got.end == 42);
	CHECK(!rangemap__find(&m, 45, &got));
	/* room again: added */
	CHECK_EQ(rangemap__insert(&m, 0, 25, 0, 2, 64), 0);
	CHECK(rangemap__find(&m, 5, &got) && got.val == 2);
	rangemap__clear(&m);
	CHECK_EQ(held[1], 0);
	CHECK_EQ(held[2], 0);
}

/* Nodes visited per operation, a hostile process's pattern (one page
 * mappings at increasing addresses, with gaps): the average for 16n
 * mappings is about that for n (log), far from 16 times (linear). */
static double steps_per_insert(size_t n, double *find_steps)
{
	struct rangemap m;
	uint64_t s0, f0;
	struct rangemap_range got;

	rangemap__init(&m, &ops);
	for (size_t i = 0; i < n; i++)
		rangemap__insert(&m, i * 8192, i * 8192 + 4096, 0, 3, 1u << 20);
	/* the last n/4 inserts and n/4 lookups measured, the map at n */
	s0 = m.steps;
	for (size_t i = 0; i < n / 4; i++)
		rangemap__insert(&m, (n + i) * 8192, (n + i) * 8192 + 4096, 0, 3, 1u << 20);
	f0 = m.steps;
	for (size_t i = 0; i < n / 4; i++)
		rangemap__find(&m, (i * 7919 % n) * 8192 + 100, &got);
	*find_steps = (double)(m.steps - f0) / (double)(n / 4);
	s0 = f0 - s0;
	rangemap__clear(&m);
	return (double)s0 / (double)(n / 4);
}

TEST(cost_is_logarithmic)
{
	double f1, f16, a = steps_per_insert(1000, &f1), b = steps_per_insert(16000, &f16);

	fprintf(stderr, "  steps per insert: %.1f at 1000, %.1f at 16000; per lookup %.1f, %.1f\n",
		a, b, f1, f16);
	CHECK(b < 4 * a);		/* linear: 16 times; seen up to 2.0 */
	CHECK(f16 < 4 * f1);
	CHECK(b < 400);			/* ~4 paths of ~2.5 ln n */
}

/* A fork shares: forking a process with 16000 mappings 1000 times and
 * changing one mapping in each child copies a path per child, not its
 * mappings (was 16000 entries copied per fork). */
TEST(forks_share)
{
	struct rangemap parent, child[1000];
	long before;

	rangemap__init(&parent, &ops);
	for (uint64_t i = 0; i < 16000; i++)
		rangemap__insert(&parent, i * 8192, i * 8192 + 4096, 0, 4, 1u << 20);
	before = held[4];
	for (int c = 0; c < 1000; c++) {
		rangemap__init(&child[c], NULL);
		rangemap__share(&child[c], &parent);
		CHECK_EQ(rangemap__count(&child[c]), 16000);
		rangemap__insert(&child[c], 4096 * (uint64_t)c * 2, 4096 * (uint64_t)c * 2 + 10, 0, 5,
				 1u << 20);
	}
	fprintf(stderr, "  nodes for 1000 forked children: %ld (16000 per copy)\n",
		held[4] + held[5] - before);
	CHECK(held[4] + held[5] - before < 1000 * 200);
	rangemap__clear(&parent);
	CHECK_EQ(rangemap__count(&child[999]), 16001);	/* one range cut in two */
	for (int c = 0; c < 1000; c++)
		rangemap__clear(&child[c]);
	CHECK_EQ(held[4], 0);
	CHECK_EQ(held[5], 0);
}

int main(void)
{
	RUN(random_against_model);
	RUN(cap_counts_and_cuts);
	RUN(cost_is_logarithmic);
	RUN(forks_share);
	return HARNESS_DONE();
}
