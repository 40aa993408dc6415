/* SPDX-License-Identifier: GPL-2.0 */
/*
 * query's reports of the stacks it read (answer.h): --top, --folded and
 * the flame graph's tree.  Every name is escaped for its output
 * (util/printable.h): no control byte reaches a terminal, one folded line
 * per stack, well-formed XML in valid UTF-8 (flamegraph.h).  Fuzzed by
 * tests/fuzz/fuzz_fleet_output.c.
 */
#ifndef PRECORD_FLEET_OUTPUT_H
#define PRECORD_FLEET_OUTPUT_H

#include <stdbool.h>
#include <stdio.h>

#include "fleet/answer.h"
#include "fleet/diff.h"
#include "fleet/flamegraph.h"

/* The top functions by weight: "PCT%  SYMBOL  DSO" lines; self (the
 * leaf's function) or children (every function on the stack, once per
 * stack).  0, -ENOMEM or -EIO. */
int fleet_output__top(FILE *out, const struct fleet_qstack *st, size_t n, int top, bool children);
/* "root;...;leaf COUNT" per stack with frames and samples; 0 or -EIO. */
int fleet_output__folded(FILE *out, const struct fleet_qstack *st, size_t n);
/* Every stack into the flame graph f; 0 or -ENOMEM. */
int fleet_output__flame(struct flame *f, const struct fleet_qstack *st, size_t n);

/*
 * --diff (diff.h), side [0] the baseline A, [1] B.  --top: "BEFORE%
 * AFTER%  CHANGE  SYMBOL  DSO" lines, each share of its side's total
 * weight, CHANGE in signed points (+12.34), the largest |CHANGE| first; a
 * function (its symbol and DSO file name, so that builds at two paths
 * compare) of one side only is 0.00% on the other.
 */
int fleet_output__top_diff(FILE *out, const struct fleet_qstack *const st[2], const size_t n[2],
			   int top, bool children);
/* --folded: "root;...;leaf COUNT_A COUNT_B" per row, as difffolded.pl. */
int fleet_output__folded_diff(FILE *out, const struct fleet_diff_row *rows, size_t n);
/* A's stacks as the flame graph's baseline (flame__add_base), B's as its
 * widths. */
int fleet_output__flame_diff(struct flame *f, const struct fleet_qstack *const st[2], const size_t n[2]);

#endif
