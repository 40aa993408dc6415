/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The SQL that answers a selection (selection.h) from the tables that do
 * it with the fewest rows: the hourly rollups for the whole hours of the
 * range when the filters allow, the raw samples for the rest, counting
 * only the first commit of each file either way (docs/fleet.md,
 * "Rollups").  PRECORD_FLEET_ROLLUP=0 in the environment reads the raw
 * samples only (to check the rollups' answers).  Each writes one
 * NUL-terminated statement (no FORMAT) into b: 0 or -ENOMEM.
 */
#ifndef PRECORD_FLEET_PLAN_H
#define PRECORD_FLEET_PLAN_H

struct fleet_store;
struct fleet_sel;
struct pbuf;

/* stack_hash, samples, weight per stack, ordered by stack_hash */
int fleet_plan__stack_sums(const struct fleet_store *s, const struct fleet_sel *sel,
			   struct pbuf *b);
/* SELECT stack_hash of every stack the sums may name (a superset) */
int fleet_plan__stack_keys(const struct fleet_store *s, const struct fleet_sel *sel,
			   struct pbuf *b);
/* GROUP, samples, first and last window (UInt32), weight per value of
 * sel->by (host when NULL), ordered by it */
int fleet_plan__group_sums(const struct fleet_store *s, const struct fleet_sel *sel,
			   struct pbuf *b);

#endif
