/* SPDX-License-Identifier: GPL-2.0 */
/*
 * --xray-out: the traced calls as an LLVM XRay FDR log (version 5, as the
 * clang-14 runtime writes it) plus the instrumentation map in the YAML
 * form `llvm-xray extract` prints.
 */
#ifndef PRECORD_TRACE_XRAY_FILE_H
#define PRECORD_TRACE_XRAY_FILE_H

#include <stddef.h>

#include "trace/symbols.h"
#include "trace/xray_calls.h"
#include "util/buf.h"

struct xray_file;

struct xray_file *xray_file__new(void);		/* NULL + errno */
void xray_file__free(struct xray_file *f);	/* NULL-safe */

/*
 * Add one rebuilt call event (in each thread's time order).  ENTRY and
 * RETURN are written as they are; ORPHAN (no entry) is left out; UNWOUND
 * gets an exit at the time of the exit that unwound it, so that every
 * exit in the log has its entry, as llvm-xray account requires.
 */
int xray_file__add(struct xray_file *f, const struct xray_call *c);

/*
 * The log: header, then one buffer per thread, in order of the thread's
 * first record:
 *   BufferExtents NewBuffer WallTime(first record) Pid NewCPUId(t0)
 *   CustomEvent("precord", at t0) NewCPUId(cpu, first record) records…
 * t0 is the earliest record of all threads.  llvm-xray account checks
 * every record against the first one it reads (threads come in hash
 * order), so each thread starts with an event at t0.
 */
int xray_file__encode(const struct xray_file *f, struct pbuf *out);

/* YAML instrumentation map, one enter and one exit sled per function. */
int xray_map_encode(const struct trace_func *funcs, size_t nr, struct pbuf *out);

/* Write path and path.map.yaml (O_NOFOLLOW: an existing symlink is
 * refused).  0 or -errno (message printed). */
int xray_file__write(const struct xray_file *f, const char *path,
		     const struct trace_func *funcs, size_t nr);

#endif
