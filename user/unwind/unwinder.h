/* SPDX-License-Identifier: GPL-2.0 */
/*
 * --call-graph ehframe, user space: what each target process maps that
 * has an unwind table (user/unwind/table_store.h), kept in the BPF map
 * the sampling program walks stacks with (unwind_procs, keyed by tgid).
 * Fed from the mappings the recorder sees (synthesized at the start,
 * MMAP2 side-band), FORK (a new process starts with its parent's list),
 * COMM exec (the list empties) and EXIT (the list goes, and with it the
 * references to its tables).  Changes reach BPF at unwinder__flush.
 */
#ifndef PRECORD_UNWIND_UNWINDER_H
#define PRECORD_UNWIND_UNWINDER_H

#include <linux/types.h>

struct unwinder;
struct unwind_map_fds;

/* NULL + errno (said why). */
struct unwinder *unwinder__new(const struct unwind_map_fds *fds);
void unwinder__free(struct unwinder *u);		/* NULL-safe */

/* A mapping of process pid: fd the mapped file (opened with dsos.c's
 * checks; -1: none), bid its build-id.  A later mapping replaces what it
 * overlaps.  Has the signature of struct dso_mmap_observer's mapped. */
void unwinder__mmap(void *u, __u32 pid, __u64 start, __u64 len, __u64 pgoff, int fd,
		    const char *name, const __u8 *bid, __u8 bid_size);
void unwinder__fork(struct unwinder *u, __u32 ppid, __u32 pid);
void unwinder__exec(struct unwinder *u, __u32 pid);
void unwinder__exit(struct unwinder *u, __u32 pid);
/* The changed lists into the BPF map.  NULL-safe. */
void unwinder__flush(struct unwinder *u);
/* Counts of the tables and the walks, for the closing summary: the limit
 * reached always, the rest with -v.  NULL-safe. */
void unwinder__print_stats(const struct unwinder *u);

#endif
