// SPDX-License-Identifier: GPL-2.0
#include "output.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "util/printable.h"

struct fn_share {
	const char *sym, *dso;
	uint64_t weight[2];	/* [0]: --top's; --diff: [0] A, [1] B */
	uint64_t seen;		/* the last stack counted (children: once per stack) */
	double change;		/* --diff: B's share - A's, in points */
};

static const char *base_name(const char *p)
{
	const char *b = strrchr(p, '/');

	return b && b[1] ? b + 1 : p;
}

static int compare_share(const void *a, const void *b)
{
	const struct fn_share *x = a, *y = b;

	if (!x->sym || !y->sym)
		return !x->sym - !y->sym;
	if (x->weight[0] != y->weight[0])
		return x->weight[0] < y->weight[0] ? 1 : -1;
	return strcmp(x->sym, y->sym);
}

/* --diff: the largest change first (grown or shrunk), then by B's share */
static int compare_change(const void *a, const void *b)
{
	const struct fn_share *x = a, *y = b;
	double cx = x->change < 0 ? -x->change : x->change;
	double cy = y->change < 0 ? -y->change : y->change;

	if (cx != cy)
		return cx < cy ? 1 : -1;
	if (x->weight[1] != y->weight[1])
		return x->weight[1] < y->weight[1] ? 1 : -1;
	if (x->weight[0] != y->weight[0])
		return x->weight[0] < y->weight[0] ? 1 : -1;
	return strcmp(x->sym, y->sym) ? strcmp(x->sym, y->sym) : strcmp(x->dso, y->dso);
}

static uint32_t fn_hash(const char *sym, const char *dso)
{
	uint32_t h = 2166136261u;

	for (const char *c = sym; *c; c++)
		h = (h ^ (unsigned char)*c) * 16777619u;
	h = (h ^ 0xff) * 16777619u;
	for (const char *c = dso; *c; c++)
		h = (h ^ (unsigned char)*c) * 16777619u;
	return h;
}

/* Functions by (symbol, DSO) in a linear-probe table: a report has a few
 * thousand of them. */
struct fn_table {
	struct fn_share *v;
	size_t cap, used;
};

static struct fn_share *fn_find(struct fn_table *t, const char *sym, const char *dso)
{
	size_t p;

	if ((t->used + 1) * 2 > t->cap) {
		struct fn_table n = { calloc(t->cap ? t->cap * 2 : 64, sizeof(*t->v)),
				      t->cap ? t->cap * 2 : 64, 0 };

		if (!n.v)
			return NULL;
		for (size_t i = 0; i < t->cap; i++) {
			if (!t->v[i].sym)
				continue;
			for (p = fn_hash(t->v[i].sym, t->v[i].dso) & (n.cap - 1); n.v[p].sym;
			     p = (p + 1) & (n.cap - 1))
				;
			n.v[p] = t->v[i];
		}
		n.used = t->used;
		free(t->v);
		*t = n;
	}
	for (p = fn_hash(sym, dso) & (t->cap - 1); t->v[p].sym; p = (p + 1) & (t->cap - 1))
		if (!strcmp(t->v[p].sym, sym) && !strcmp(t->v[p].dso, dso))
			return &t->v[p];
	t->v[p] = (struct fn_share){ .sym = sym, .dso = dso };
	t->used++;
	return &t->v[p];
}

/* Self: the leaf's function; children: every function on the stack, once
 * per stack (recursion counts once), as perf report --children.  A
 * function is its symbol and DSO path, or with BY_FILE the DSO's file name
 * (as printed: two builds of a program at two paths are one function).
 * The weights go to side's slot; stamps tell the stacks apart (they are
 * distinct across calls on one table when each call's base is past the
 * last one's stacks).  The side's total weight to *total. */
static int fn_count(struct fn_table *t, const struct fleet_qstack *st, size_t n, bool children,
		    bool by_file, int side, uint64_t stamp_base, uint64_t *total)
{
	*total = 0;
	for (size_t i = 0; i < n; i++) {
		*total += st[i].weight;
		for (int j = 0; j < (children ? st[i].nr : (st[i].nr > 0)); j++) {
			const char *dso = j < st[i].nr_dsos ? st[i].dsos[j] : "";
			struct fn_share *f = fn_find(t, st[i].syms[j], by_file ? base_name(dso) : dso);

			if (!f)
				return -ENOMEM;
			if (f->seen == stamp_base + i + 1)
				continue;
			f->seen = stamp_base + i + 1;
			f->weight[side] += st[i].weight;
		}
	}
	return 0;
}

/* The functions to the front of the table: used entries only. */
static void fn_pack(struct fn_table *t)
{
	for (size_t i = 0, k = 0; i < t->cap; i++)
		if (t->v[i].sym)
			t->v[k++] = t->v[i];
}

static void put_function(FILE *out, const struct fn_share *f)
{
	printable_fputs(out, f->sym, NULL);
	fputs("  ", out);
	printable_fputs(out, base_name(f->dso), NULL);
	fputc('\n', out);
}

static double share(uint64_t part, uint64_t total)
{
	return total ? 100.0 * (double)part / (double)total : 0.0;
}

/* x as "%.2f" shows it */
static double hundredths(double x)
{
	char b[64];

	snprintf(b, sizeof(b), "%.2f", x);
	return strtod(b, NULL);
}

int fleet_output__top(FILE *out, const struct fleet_qstack *st, size_t n, int top, bool children)
{
	struct fn_table t = { 0 };
	uint64_t total;

	if (fn_count(&t, st, n, children, false, 0, 0, &total)) {
		free(t.v);
		return -ENOMEM;
	}
	fn_pack(&t);
	if (t.used)
		qsort(t.v, t.used, sizeof(*t.v), compare_share);
	for (size_t i = 0; i < t.used && (int)i < top; i++) {
		fprintf(out, "%6.2f%%  ", share(t.v[i].weight[0], total));
		put_function(out, &t.v[i]);
	}
	free(t.v);
	return fflush(out) || ferror(out) ? -EIO : 0;
}

/*
 * Both sides' shares per function (its symbol and DSO file name), each of
 * its own side's total, and the
 * change in points, rounded as printed (so a line's CHANGE is its AFTER
 * minus its BEFORE to the hundredth, and no "-0.00" shows).
 */
int fleet_output__top_diff(FILE *out, const struct fleet_qstack *const st[2], const size_t n[2],
			   int top, bool children)
{
	struct fn_table t = { 0 };
	uint64_t total[2];

	if (fn_count(&t, st[0], n[0], children, true, 0, 0, &total[0]) ||
	    fn_count(&t, st[1], n[1], children, true, 1, n[0], &total[1])) {
		free(t.v);
		return -ENOMEM;
	}
	fn_pack(&t);
	for (size_t i = 0; i < t.used; i++) {
		double a = hundredths(share(t.v[i].weight[0], total[0]));
		double b = hundredths(share(t.v[i].weight[1], total[1]));

		t.v[i].change = hundredths(b - a);
		if (t.v[i].change == 0)
			t.v[i].change = 0;	/* not -0 */
	}
	if (t.used)
		qsort(t.v, t.used, sizeof(*t.v), compare_change);
	for (size_t i = 0; i < t.used && (int)i < top; i++) {
		fprintf(out, "%6.2f%%  %6.2f%%  %+7.2f  ", share(t.v[i].weight[0], total[0]),
			share(t.v[i].weight[1], total[1]), t.v[i].change);
		put_function(out, &t.v[i]);
	}
	free(t.v);
	return fflush(out) || ferror(out) ? -EIO : 0;
}

/* One stack's frames, root first, one frame between ';': a name's own
 * newline or ';' is escaped (\x0a, \x3b). */
static void put_folded(FILE *out, const struct fleet_qstack *q)
{
	for (int j = q->nr - 1; j >= 0; j--) {
		printable_fputs(out, q->syms[j], ";");
		if (j)
			fputc(';', out);
	}
}

int fleet_output__folded(FILE *out, const struct fleet_qstack *st, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		if (!st[i].nr || !st[i].count)
			continue;
		put_folded(out, &st[i]);
		fprintf(out, " %" PRIu64 "\n", st[i].count);
	}
	return fflush(out) || ferror(out) ? -EIO : 0;
}

int fleet_output__folded_diff(FILE *out, const struct fleet_diff_row *rows, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		put_folded(out, rows[i].stack);
		fprintf(out, " %" PRIu64 " %" PRIu64 "\n", rows[i].count[0], rows[i].count[1]);
	}
	return fflush(out) || ferror(out) ? -EIO : 0;
}

/* Every stack into f by add (flame__add, or flame__add_base for a diff's
 * baseline). */
static int flame_stacks(struct flame *f, const struct fleet_qstack *st, size_t n,
			int (*add)(struct flame *, const char *const *, int, uint64_t))
{
	const char **frames = NULL;
	int err = 0;

	for (size_t i = 0; i < n && !err; i++) {
		const char **nf = realloc(frames, (size_t)(st[i].nr + 1) * sizeof(*frames));

		if (!nf) {
			err = -ENOMEM;
			break;
		}
		frames = nf;
		for (int j = 0; j < st[i].nr; j++)
			frames[j] = st[i].syms[st[i].nr - 1 - j];
		err = add(f, frames, st[i].nr, st[i].count);
	}
	free(frames);
	return err;
}

int fleet_output__flame(struct flame *f, const struct fleet_qstack *st, size_t n)
{
	return flame_stacks(f, st, n, flame__add);
}

int fleet_output__flame_diff(struct flame *f, const struct fleet_qstack *const st[2], const size_t n[2])
{
	int err = flame_stacks(f, st[0], n[0], flame__add_base);

	return err ? err : flame_stacks(f, st[1], n[1], flame__add);
}
