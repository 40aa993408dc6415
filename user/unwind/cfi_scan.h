/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The entries of a .eh_frame or .debug_frame section, checked before
 * libdw sees them, and the list of FDEs with their address ranges.
 *
 * Why not dwarf_next_cfi alone: elfutils 0.188 parses a CIE's
 * augmentation ("zPLR...") with no bound on the bytes it reads (both in
 * dwarf_next_cfi and in cie.c intern_new_cie), so a CIE with a long
 * augmentation string makes it read past the section; and a CFA
 * instruction naming register 100,000,000 makes execute_cfi grow its
 * register array to 1.6 GB and clear it, on every lookup in that FDE.  So
 * every entry is parsed here first, with every read bounded:
 *
 *   - a malformed entry (length past the section, a CIE with an
 *     augmentation other than "" or "z" + L/P/R/S, data or instructions
 *     that do not fit, an FDE whose CIE pointer does not name a good CIE)
 *     ends the section at its offset: the caller writes a zero terminator
 *     there, so libdw's linear scan stops where this one stopped;
 *   - an FDE whose instructions (or its CIE's) name a register above
 *     CFI_SCAN_MAX_REG, or whose row count times program length exceeds
 *     CFI_SCAN_FDE_WORK, is listed with skip set: the caller never asks
 *     libdw about its addresses, so libdw never runs its program.
 */
#ifndef PRECORD_UNWIND_CFI_SCAN_H
#define PRECORD_UNWIND_CFI_SCAN_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>

/* x86-64 DWARF registers stop at 125 (k7); rules for higher ones are
 * refused (libdw allocates 16 bytes per register up to the highest). */
#define CFI_SCAN_MAX_REG	255u

/*
 * libdw evaluates the rules at an address by running the FDE's program
 * from its start, so walking all rows of an FDE costs rows x program
 * bytes.  The largest products measured in Debian 12: libc 7,920,
 * libstdc++ 130,200, libLLVM-14 1,363,824; an FDE above this is skipped
 * (NONE rows).
 */
#define CFI_SCAN_FDE_WORK	(4u << 20)

/*
 * Entries (CIEs and FDEs) read from one section: the ones past it end the
 * section as a malformed entry does.  libLLVM-14, the largest file here,
 * has 94,994 FDEs; a 63 MB .eh_frame of 3 million 20-byte FDEs took 4.6 s
 * to scan and sort and 436 MB (with libdw's tree of them) before.  At the
 * cap: about 0.25 s and 40 MB.
 */
#define CFI_SCAN_MAX_ENTRIES	(256u << 10)

struct cfi_fde {
	__u64 start, end;	/* [start, end): file vaddrs */
	size_t off;		/* of the entry in the section */
	__u32 rows;		/* rows its program makes (advances + 1) */
	__u64 work;		/* rows x program bytes: libdw's cost to walk it */
	bool skip;		/* never hand its addresses to libdw */
};

struct cfi_scan_entry;

struct cfi_scan {
	struct cfi_fde *fdes;	/* section order */
	size_t nr_fdes, cap;
	size_t end;		/* entries in [0, end) are well formed */
	const char *bad_why;	/* why the entry at end is not (NULL: none) */
	size_t nr_skipped;	/* FDEs with skip set */
	size_t nr_empty;	/* FDEs with an empty range (ignored, as libdw does) */
	size_t nr_cies;
	/* where cfi_scan__step goes on (cfi_scan.c's own) */
	struct cfi_scan_at {
		const __u8 *buf;
		size_t len;
		__u64 vaddr;
		bool eh_frame;
		int pass;		/* 1: framing and CIEs, 2: FDEs, 0: done */
		struct cfi_scan_entry *ents;
		size_t nr, cap;
		size_t off;		/* pass 1: the next entry's offset */
		size_t i;		/* pass 2: the next entry */
		/* the instructions of the entry being walked */
		bool walking, ok;
		const __u8 *p, *end;
		__u32 rows;
		__u8 enc;
		__u64 start, range;	/* an FDE's */
		size_t insn_len, cie;	/* its program's bytes, its CIE's entry */
	} at;
};

/*
 * Scan len bytes of a CFI section loaded at vaddr (sh_addr; pc-relative
 * pointers are relative to it).  eh_frame: .eh_frame's conventions (CIE
 * id 0, CIE pointers relative), else .debug_frame's (64-bit ELF, CIE id
 * 0xffffffff, CIE pointers are section offsets).  0, or -ENOMEM; a
 * malformed entry is not an error: s->end and s->bad_why say where the
 * good entries stop.
 */
int cfi_scan__run(struct cfi_scan *s, const __u8 *buf, size_t len, __u64 vaddr, bool eh_frame);

/*
 * The same scan in steps, so that a caller with a deadline can stop
 * between them (cfi_table.c): begin (buf stays the caller's until the
 * scan is done or freed), then step until it returns 0 (done: s as
 * cfi_scan__run leaves it) or -ENOMEM (s freed).  A step walks about
 * bytes bytes of entries (an entry's program is walked in pieces too)
 * and returns -EAGAIN when there is more.  Wherever the steps stop, the
 * result is cfi_scan__run's.  cfi_scan__free at any point.
 */
void cfi_scan__begin(struct cfi_scan *s, const __u8 *buf, size_t len, __u64 vaddr,
		     bool eh_frame);
int cfi_scan__step(struct cfi_scan *s, size_t bytes);
void cfi_scan__free(struct cfi_scan *s);

#endif
