/* SPDX-License-Identifier: GPL-2.0 */
/*
 * `precord query --diff`: two selections of the store compared.  B is the
 * command line's filters (the profile examined, "after"), A the same
 * filters changed by --diff's overrides (the baseline, "before";
 * fleet_sel__override).  Each side is read as query reads one (answer.h),
 * and every share is of that side's own total, so sides of different
 * sizes (two hosts, two hours) compare.  The writers: --top and --folded
 * in output.c, the differential flame graph in flamegraph.c.
 */
#ifndef PRECORD_FLEET_DIFF_H
#define PRECORD_FLEET_DIFF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "fleet/answer.h"

struct flame;
struct fleet_sel;

enum { FLEET_DIFF_A, FLEET_DIFF_B };

struct fleet_diff {
	const struct fleet_qstack *st[2];	/* [FLEET_DIFF_A], [FLEET_DIFF_B] */
	size_t n[2];
	const struct fleet_sel *sel[2];
};

/* A stack as --folded names it (its symbols) with the counts of both
 * sides; the frames are those of the first stack of these symbols. */
struct fleet_diff_row {
	const struct fleet_qstack *stack;
	uint64_t count[2];
};

/*
 * Every stack of either side with frames, by its symbols: stacks of the
 * same symbols (other DSOs or build-ids, as two builds of one program
 * make) are one row, a stack of one side only has 0 on the other.
 * Sorted by frames, root first.  0 or -ENOMEM.
 */
int fleet_diff__merge(const struct fleet_diff *d, struct fleet_diff_row **rows, size_t *n);

/* query --diff --folded (FOLDED) or --top TOP [--children] to out; a side
 * without samples is said on stderr.  0, -ENOMEM or -EIO. */
int fleet_diff__print(FILE *out, const struct fleet_diff *d, bool folded, int top, bool children);

/* query --diff --flamegraph: both sides into f (differential mode), its
 * title in title and the baseline's line in baseline.  0 or -ENOMEM. */
int fleet_diff__flame(struct flame *f, const struct fleet_diff *d, char *title, size_t title_size,
		      char *baseline, size_t baseline_size);

#endif
