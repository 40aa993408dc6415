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
#include "fleet/flamegraph.h"

/* The top functions by weight: "PCT%  SYMBOL  DSO" lines; self (the
 * leaf's function) or children (every function on the stack, once per
 * stack).  0, -ENOMEM or -EIO. */
int fleet_output__top(FILE *out, const struct fleet_qstack *st, size_t n, int top, bool children);
/* "root;...;leaf COUNT" per stack with frames and samples; 0 or -EIO. */
int fleet_output__folded(FILE *out, const struct fleet_qstack *st, size_t n);
/* Every stack into the flame graph f; 0 or -ENOMEM. */
int fleet_output__flame(struct flame *f, const struct fleet_qstack *st, size_t n);

#endif
