/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Go's function table (.gopclntab): the names and address ranges of a Go
 * binary's functions, which Go keeps for its own tracebacks when the ELF
 * symbol table is stripped (`go build -ldflags='-s -w'`).  A pure reader
 * over bytes in memory; the bytes are hostile: every offset and count is
 * checked against the table's size before use, a name is at most
 * GOPCLNTAB_NAME_MAX bytes, and a bogus table gives an error or skips the
 * bad function, never a read outside [data, data + size).
 *
 * Layouts (Go's src/debug/gosym/pclntab.go and runtime/symtab.go; the
 * OpenTelemetry eBPF profiler's notes), all starting with the pcHeader:
 *
 *   magic u32            0xfffffffa Go 1.16-1.17, 0xfffffff0 1.18-1.19,
 *                        0xfffffff1 1.20+ (either byte order)
 *   pad u8, pad u8       0, 0
 *   minLC u8             instruction size quantum: 1, 2 or 4
 *   ptrSize u8           4 or 8
 *   then ptrSize-sized words:
 *     1.16:  nfunc, nfiles, funcnameOffset, cuOffset, filetabOffset,
 *            pctabOffset, pclnOffset
 *     1.18+: nfunc, nfiles, textStart, funcnameOffset, cuOffset,
 *            filetabOffset, pctabOffset, pclnOffset
 *
 * Offsets are from the table's start.  At pclnOffset, the functab: nfunc
 * (pc, funcoff) pairs and one closing pc (the end of the last function):
 * ptrSize words holding absolute pcs in 1.16, u32 words holding offsets
 * from textStart (runtime.text) in 1.18+.  funcoff is from pclnOffset
 * and points at the function's _func, which starts with its entry (a
 * ptrSize pc in 1.16, a u32 offset from textStart in 1.18+; checked
 * against the functab's) and an int32 nameOff into the name table at
 * funcnameOffset (NUL-terminated names).  Functions are in pc order; a
 * function ends where the next begins.  A hostile table's functions may
 * come in any order and overlap (as a hostile .symtab's may): each one
 * read has start < end, and its name inside the table.
 */
#ifndef PRECORD_ELF_GOPCLNTAB_H
#define PRECORD_ELF_GOPCLNTAB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define GOPCLNTAB_MAGIC_116	0xfffffffau
#define GOPCLNTAB_MAGIC_118	0xfffffff0u
#define GOPCLNTAB_MAGIC_120	0xfffffff1u

/* Longer names are refused (the function skipped, counted). */
#define GOPCLNTAB_NAME_MAX	4096
/* Functions read from one table; the rest are counted (a Kubernetes
 * binary has ~100,000). */
#define GOPCLNTAB_MAX_FUNCS	(1u << 22)

struct gopclntab {
	const uint8_t *data;
	size_t size;
	int version;		/* 116, 118 or 120 */
	bool be;
	unsigned int ptr_size;
	uint64_t nfunc;		/* usable: at most GOPCLNTAB_MAX_FUNCS */
	uint64_t over;		/* functions past the cap, not read */
	uint64_t text_start;	/* 1.18+: the pcs' base */
	uint64_t names;		/* offset of the name table */
	uint64_t pcln;		/* offset of the functab (and of the _func's base) */
};

struct gopclntab_func {
	uint64_t start, end;	/* [start, end): virtual addresses, start < end */
	const char *name;	/* in the table's bytes, not NUL-terminated here */
	size_t name_len;	/* 1..GOPCLNTAB_NAME_MAX */
};

/*
 * Check the header of the size bytes at data and the extent of its
 * functab.  text_start: runtime.text's address for 1.18+ tables whose
 * textStart word is 0 (unrelocated: a PIE); 0 if unknown.  0, or -EBADMSG
 * (not a table of a known layout, or its functab past its end).
 */
int gopclntab__open(struct gopclntab *t, const void *data, size_t size, uint64_t text_start);

/* Function i (0 <= i < t->nfunc): 0, or -EBADMSG when its entry is bogus
 * (a pc or offset out of range, pcs out of order, an unterminated or
 * empty or too long name): skip it. */
int gopclntab__func(const struct gopclntab *t, uint64_t i, struct gopclntab_func *f);

#endif
