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
/* The SVG to out; 0 or -EIO/-ENOMEM. */
int flame__write_svg(const struct flame *f, FILE *out, const char *title);

#endif
