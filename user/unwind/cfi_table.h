/* SPDX-License-Identifier: GPL-2.0 */
/*
 * --call-graph ehframe: one ELF file's unwind table (struct
 * prec_unwind_row of include/precord/bpf_abi.h, sorted by pc), derived
 * from its .eh_frame, or its .debug_frame where it has no .eh_frame; the
 * CFI is evaluated by elfutils' libdw.  The file comes from a profiled
 * process: every count and offset is checked, a bad entry is reported
 * with the file and its offset, and the good ones are kept.
 */
#ifndef PRECORD_UNWIND_CFI_TABLE_H
#define PRECORD_UNWIND_CFI_TABLE_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>

#include "precord/bpf_abi.h"

/* An executable PT_LOAD: how a mapping's address becomes a file vaddr. */
struct cfi_segment {
	__u64 vaddr, offset, filesz;
};

struct cfi_table {
	__u64 base;			/* rows[i].pc = vaddr - base */
	struct prec_unwind_row *rows;	/* sorted by pc */
	size_t nr_rows;
	struct cfi_segment *segs;	/* the executable PT_LOADs */
	size_t nr_segs;
	size_t nr_unsupported;		/* rows made NONE: rules not evaluated */
	bool from_debug_frame;
};

/*
 * Build the table of the ELF file open at fd (name: for messages), at
 * most max_rows rows.  0, or -errno after at most one warning line:
 * -ENOENT no CFI at all, -EINVAL not an ELF file precord reads, -E2BIG
 * more than max_rows rows, -EFBIG a section it needs is over the limits
 * of elf/sections.h (too large, mostly holes, or past the file's total).
 * t is empty (freeable) on failure.
 */
int cfi_table__build(int fd, const char *name, size_t max_rows, struct cfi_table *t);
void cfi_table__free(struct cfi_table *t);	/* NULL-safe; leaves t empty */

/*
 * The same build in steps, so that a caller with a time budget can stop
 * and go on later (user/unwind/table_store.c, a recording's rounds).
 * start: the file's headers checked (ELF header, program and section
 * headers, the section names' header): O(headers); it keeps a dup of fd.
 * 0 and *b, or cfi_table__build's -errno (after at most one line).
 * step: goes on until the table is done (0, *t filled) or fails (-errno,
 * as cfi_table__build), or the CLOCK_MONOTONIC time deadline_ns (0: none)
 * is passed: -EAGAIN, call it again.  A step does one unit at least, and
 * reads the clock before each unit but its first: 1 MiB of the section
 * names or of the CFI section read (or inflated, for a compressed
 * .debug_frame), 256 KiB of entries checked
 * (cfi_scan), 8,192 FDEs sorted, 4,096 entries listed by libdw, or one
 * row (one libdw evaluation of at most CFI_SCAN_FDE_WORK bytes of
 * program), then libdw's handle ended, then the rest freed (at
 * CFI_SCAN_MAX_ENTRIES and 64 MiB: 12 and 15 ms, the longest units).  So
 * a step ends within a unit of its deadline.  The table is the one a single
 * cfi_table__build makes, wherever it was stopped.  free: NULL-safe, at
 * any point.
 */
struct cfi_build;
int cfi_build__start(int fd, const char *name, size_t max_rows, struct cfi_build **b);
int cfi_build__step(struct cfi_build *b, __u64 deadline_ns, struct cfi_table *t);
void cfi_build__free(struct cfi_build *b);

/* The row in effect at the file address vaddr, NULL when none. */
const struct prec_unwind_row *cfi_table__lookup(const struct cfi_table *t, __u64 vaddr);

#endif
