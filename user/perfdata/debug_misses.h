/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The negative cache of debug-file lookups (issue 21): build-ids a
 * debuginfod server said it does not have, with when it said so, in one
 * small text file of the build-id cache (DIR/.precord/debuginfod-misses:
 * "<hex> <unix seconds>" lines).  A fleet host asks a server once per
 * build-id per DEBUG_MISSES_TTL, not at every recording.  The file is
 * read bounded (DEBUG_MISSES_MAX entries, malformed lines skipped) and
 * replaced whole (a temporary name, then rename): two recordings saving
 * at once may lose each other's new entries, which only costs a lookup.
 */
#ifndef PRECORD_PERFDATA_DEBUG_MISSES_H
#define PRECORD_PERFDATA_DEBUG_MISSES_H

#include <stdbool.h>
#include <linux/types.h>

#define DEBUG_MISSES_FILE	"debuginfod-misses"
#define DEBUG_MISSES_TTL	3600u		/* seconds a miss is believed */
#define DEBUG_MISSES_MAX	4096u		/* entries kept: the newest */

struct debug_misses;

/* The entries of dirfd/DEBUG_MISSES_FILE younger than ttl at now (an
 * unreadable or missing file: none).  NULL on ENOMEM. */
struct debug_misses *debug_misses__load(int dirfd, __u64 now, __u64 ttl);
void debug_misses__free(struct debug_misses *m);	/* NULL-safe */

/* hex (lower-case build-id) is a recent miss. */
bool debug_misses__has(const struct debug_misses *m, const char *hex);
/* A miss at now (the oldest entry dropped past DEBUG_MISSES_MAX). */
void debug_misses__add(struct debug_misses *m, const char *hex, __u64 now);
/* Merged with what the file holds now, written back if anything was
 * added.  0 or -errno. */
int debug_misses__save(struct debug_misses *m, int dirfd);

#endif
