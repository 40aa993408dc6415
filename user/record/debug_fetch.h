/* SPDX-License-Identifier: GPL-2.0 */
/*
 * After each finished file (the last one, and every rotated one), the
 * steps that name the stripped DSOs its samples hit (issue 21), run by a
 * thread of their own so the recording never waits for them: for each
 * DSO without a .symtab, its debug file (perfdata/debuginfo.h: local
 * files, then the servers of DEBUGINFOD_URLS) into the build-id cache.
 * The DSOs' files are dup'd when the file finishes, so the recorder may
 * close its own.  Each file's lookups end by --debuginfod-timeout after
 * that file finished; the end of the recording waits for them (so at
 * most that long after the command).
 */
#ifndef PRECORD_RECORD_DEBUG_FETCH_H
#define PRECORD_RECORD_DEBUG_FETCH_H

#include "opts.h"

struct debug_fetch;
struct dso_table;

/* NULL when there is no build-id cache to fill (cache_dir NULL) or on
 * ENOMEM (said).  Call it before the recording starts its threads
 * (libdebuginfod's environment is set here). */
struct debug_fetch *debug_fetch__new(const struct prec_opts *o, const char *cache_dir);
/* The DSOs the finished file's samples hit, queued.  NULL-safe. */
void debug_fetch__file(struct debug_fetch *f, const struct dso_table *dt);
/* Wait for what is queued (each by its deadline), say the outcome, free.
 * NULL-safe. */
void debug_fetch__finish(struct debug_fetch *f);

#endif
