// SPDX-License-Identifier: GPL-2.0
#include "diff.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "fleet/flamegraph.h"
#include "fleet/output.h"
#include "fleet/selection.h"
#include "util/buf.h"
#include "util/keymap.h"
#include "util/log.h"

/* root first, frame by frame; a stack before the stacks it is the root of */
static int compare_rows(const void *x, const void *y)
{
	const struct fleet_qstack *a = ((const struct fleet_diff_row *)x)->stack;
	const struct fleet_qstack *b = ((const struct fleet_diff_row *)y)->stack;
	int i = a->nr - 1, j = b->nr - 1;

	for (; i >= 0 && j >= 0; i--, j--) {
		int c = strcmp(a->syms[i], b->syms[j]);

		if (c)
			return c;
	}
	return (i >= 0) - (j >= 0);
}

/* The key of a stack's symbols: each as its length and bytes, so that no
 * two lists of names make the same key. */
static void symbols_key(struct pbuf *key, const struct fleet_qstack *q)
{
	pbuf_reset(key);
	for (int j = 0; j < q->nr; j++) {
		uint64_t len = strlen(q->syms[j]);

		pbuf_put(key, &len, sizeof(len));
		pbuf_put(key, q->syms[j], len);
	}
}

int fleet_diff__merge(const struct fleet_diff *d, struct fleet_diff_row **out, size_t *out_n)
{
	struct fleet_diff_row *rows = NULL;
	struct keymap index = { 0 };
	struct pbuf key = { 0 };
	size_t n = 0, cap = 0;
	int err = 0;

	for (int side = 0; side < 2 && !err; side++) {
		for (size_t i = 0; i < d->n[side]; i++) {
			const struct fleet_qstack *q = &d->st[side][i];
			uint64_t *v;
			bool added;

			/* what --folded leaves out: no frames, no samples */
			if (!q->nr || !q->count)
				continue;
			symbols_key(&key, q);
			v = key.err ? NULL : keymap_put(&index, key.data, key.len, &added);
			if (!v) {
				err = -ENOMEM;
				break;
			}
			if (added) {
				if (n == cap) {
					size_t ncap = cap ? cap * 2 : 256;
					struct fleet_diff_row *nr = realloc(rows, ncap * sizeof(*rows));

					if (!nr) {
						err = -ENOMEM;
						break;
					}
					rows = nr;
					cap = ncap;
				}
				rows[n] = (struct fleet_diff_row){ .stack = q };
				*v = n++;
			}
			rows[*v].count[side] += q->count;
		}
	}
	keymap_free(&index);
	pbuf_free(&key);
	if (err) {
		free(rows);
		return err;
	}
	if (n)
		qsort(rows, n, sizeof(*rows), compare_rows);
	*out = rows;
	*out_n = n;
	return 0;
}

/* A side without samples is most likely an override that selects nothing
 * (a host's name mistyped, a time range before the first push): said. */
static void warn_empty(const struct fleet_diff *d)
{
	static const char *const names[2] = { "the baseline A (--diff)", "B (the filters)" };

	for (int side = 0; side < 2; side++) {
		uint64_t total = 0;
		char what[400];

		for (size_t i = 0; i < d->n[side]; i++)
			total += d->st[side][i].count;
		if (total)
			continue;
		fleet_sel__describe(d->sel[side], what, sizeof(what));
		pr_warn("query: --diff: %s, %s, has no samples: every share of it is 0",
			names[side], what);
	}
}

int fleet_diff__print(FILE *out, const struct fleet_diff *d, bool folded, int top, bool children)
{
	struct fleet_diff_row *rows;
	size_t n;
	int err;

	warn_empty(d);
	if (!folded)
		return fleet_output__top_diff(out, d->st, d->n, top, children);
	err = fleet_diff__merge(d, &rows, &n);
	if (err)
		return err;
	err = fleet_output__folded_diff(out, rows, n);
	free(rows);
	return err;
}

int fleet_diff__flame(struct flame *f, const struct fleet_diff *d, char *title, size_t title_size,
		      char *baseline, size_t baseline_size)
{
	char what[400];

	warn_empty(d);
	fleet_sel__describe(d->sel[FLEET_DIFF_B], what, sizeof(what));
	snprintf(title, title_size, "precord diff: B = %s", what);
	fleet_sel__describe(d->sel[FLEET_DIFF_A], what, sizeof(what));
	snprintf(baseline, baseline_size, "against the baseline A = %s", what);
	flame__set_diff(f, baseline);
	return fleet_output__flame_diff(f, d->st, d->n);
}
