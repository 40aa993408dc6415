// SPDX-License-Identifier: GPL-2.0
#include "output.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "util/printable.h"

struct fn_share {
	const char *sym, *dso;
	uint64_t weight;
	uint64_t seen;		/* the last stack counted (children: once per stack) */
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
	if (x->weight != y->weight)
		return x->weight < y->weight ? 1 : -1;
	return strcmp(x->sym, y->sym);
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
	t->v[p] = (struct fn_share){ sym, dso, 0, 0 };
	t->used++;
	return &t->v[p];
}

/* Self: the leaf's function; children: every function on the stack, once
 * per stack (recursion counts once), as perf report --children. */
int fleet_output__top(FILE *out, const struct fleet_qstack *st, size_t n, int top, bool children)
{
	struct fn_table t = { 0 };
	uint64_t total = 0;

	for (size_t i = 0; i < n; i++) {
		total += st[i].weight;
		for (int j = 0; j < (children ? st[i].nr : (st[i].nr > 0)); j++) {
			struct fn_share *f = fn_find(&t, st[i].syms[j],
						     j < st[i].nr_dsos ? st[i].dsos[j] : "");

			if (!f) {
				free(t.v);
				return -ENOMEM;
			}
			if (f->seen == i + 1)
				continue;
			f->seen = i + 1;
			f->weight += st[i].weight;
		}
	}
	/* the functions to the front, then sorted: used entries only */
	for (size_t i = 0, k = 0; i < t.cap; i++)
		if (t.v[i].sym)
			t.v[k++] = t.v[i];
	if (t.used)
		qsort(t.v, t.used, sizeof(*t.v), compare_share);
	for (size_t i = 0; i < t.used && (int)i < top; i++) {
		fprintf(out, "%6.2f%%  ", total ? 100.0 * (double)t.v[i].weight / (double)total : 0.0);
		printable_fputs(out, t.v[i].sym, NULL);
		fputs("  ", out);
		printable_fputs(out, base_name(t.v[i].dso), NULL);
		fputc('\n', out);
	}
	free(t.v);
	return fflush(out) || ferror(out) ? -EIO : 0;
}

int fleet_output__folded(FILE *out, const struct fleet_qstack *st, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		if (!st[i].nr || !st[i].count)
			continue;
		/* one line per stack, one frame between ';': a name's own
		 * newline or ';' is escaped (\x0a, \x3b) */
		for (int j = st[i].nr - 1; j >= 0; j--) {
			printable_fputs(out, st[i].syms[j], ";");
			if (j)
				fputc(';', out);
		}
		fprintf(out, " %" PRIu64 "\n", st[i].count);
	}
	return fflush(out) || ferror(out) ? -EIO : 0;
}

int fleet_output__flame(struct flame *f, const struct fleet_qstack *st, size_t n)
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
		err = flame__add(f, frames, st[i].nr, st[i].count);
	}
	free(frames);
	return err;
}
