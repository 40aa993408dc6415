/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A flame graph written as one self-contained SVG: a rectangle per frame
 * (root at the bottom, width = share of samples), its name and count in a
 * <title> shown on hover, and an embedded script (no network) that zooms
 * on a click, resets on a click of the root, and searches (Ctrl-F or the
 * "Search" button) with the matched share shown.  Names are escaped with
 * xml_fputs (util/printable.h): whatever bytes a symbol holds, the SVG is
 * well-formed XML in valid UTF-8.
 */
#ifndef PRECORD_FLEET_FLAMEGRAPH_H
#define PRECORD_FLEET_FLAMEGRAPH_H

#include <stdint.h>
#include <stdio.h>

struct flame;

struct flame *flame__new(void);
/* What the values count, shown on hover: a static string, "samples"
 * unless set ("ns" for off-CPU time). */
void flame__set_unit(struct flame *f, const char *unit);
void flame__free(struct flame *f);
/* One stack, root first, counted value times.  0 or -ENOMEM. */
int flame__add(struct flame *f, const char *const *frames, int nr, uint64_t value);
/*
 * Differential mode (query --diff): the stacks of flame__add are the
 * profile examined (B: the widths), those of flame__add_base the baseline
 * (A).  Each frame is coloured by the change of its share, each share of
 * its own side's total: red grew, blue shrank, light grey unchanged, full
 * colour at the graph's largest change (at least 5 points); its title
 * says both shares and the change.  A frame of A only has no width in B
 * and is not drawn (the graph says what share of A that is; the reverse
 * diff shows those frames).  baseline (kept, not copied): a second line
 * under the title naming A.
 */
void flame__set_diff(struct flame *f, const char *baseline);
int flame__add_base(struct flame *f, const char *const *frames, int nr, uint64_t value);
/* The SVG to out; 0 or -EIO/-ENOMEM. */
int flame__write_svg(const struct flame *f, FILE *out, const char *title);

#endif
