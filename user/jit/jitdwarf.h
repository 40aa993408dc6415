/* SPDX-License-Identifier: GPL-2.0 */
/*
 * DWARF 4 for JIT images: one compile unit that covers the whole image,
 * a line program with one sequence per function (.debug_line), a
 * DW_TAG_subprogram per function with DW_TAG_inlined_subroutine children
 * for inlined calls (.debug_info, .debug_abbrev, .debug_ranges for calls
 * with several ranges).  Pure: arrays in, section bytes out.
 *
 * Every address is in a fixed-size field (DW_LNE_set_address, DW_FORM_addr,
 * .debug_ranges pairs), so the section sizes do not depend on where the
 * image places its functions: build once to size the sections, once more
 * with the final addresses.
 */
#ifndef PRECORD_JIT_JITDWARF_H
#define PRECORD_JIT_JITDWARF_H

#include <stddef.h>
#include <linux/types.h>

#include "util/buf.h"

struct jitdwarf_row {
	__u32 offset;			/* from the function start, < size */
	__u32 file;			/* index into files[] */
	__u32 line, column;
};

/* An inlined call, in DFS order (depth 0 = called from the function). */
struct jitdwarf_inline {
	__u32 depth;
	const char *name;		/* the inlined function */
	__u32 decl_file, decl_line;	/* where it is declared (files[]) */
	__u32 call_file, call_line, call_column;
	__u32 nr_ranges;		/* consumed from the function's ranges */
};

struct jitdwarf_range {
	__u32 offset, size;		/* from the function start */
};

struct jitdwarf_func {
	__u64 addr, size;
	const char *name;
	const struct jitdwarf_row *rows;	/* sorted by offset */
	size_t nr_rows;
	const struct jitdwarf_inline *inl;
	size_t nr_inl;
	const struct jitdwarf_range *ranges;
};

struct jitdwarf_out {
	struct pbuf abbrev, info, line, ranges;
};

/*
 * Build the sections for funcs[0..n) (files[] are the line table's file
 * names, none empty).  cu_low..cu_high is the address range the compile
 * unit claims.  Returns 0 or -errno; out's buffers are reset first.
 */
int jitdwarf_build(const struct jitdwarf_func *funcs, size_t n,
		   const char *const *files, size_t nr_files,
		   __u64 cu_low, __u64 cu_high, struct jitdwarf_out *out);
void jitdwarf_out_free(struct jitdwarf_out *out);

#endif
