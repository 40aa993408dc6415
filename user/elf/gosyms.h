/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The functions of a stripped Go binary (an ELF with a .gopclntab and no
 * .symtab), at file offsets as perf places symbols, and the build-id
 * precord gives such a binary when it has no GNU build-id note.
 *
 * The id (docs/perf-data.md, "Go binaries"): perf report finds a DSO's
 * symbols in the build-id cache only under the id the perf.data file's
 * BUILD_ID feature gives it, and reads a cached file only if it carries
 * that id in an NT_GNU_BUILD_ID note.  Go's linker writes a Go build id
 * (".note.go.buildid", owner "Go", type 4: "actionID/contentID", the
 * content part a hash of the output) and no GNU note unless asked
 * (-ldflags=-B, or -linkmode external).  precord's id is then the first
 * 20 bytes of SHA-256 over "precord-go-build-id-v1", the binary's
 * .text address less its file offset (8 bytes, little-endian) and the Go
 * build id (the note's descriptor), or the whole .gopclntab when there is
 * no Go build id.  A binary with a GNU build-id keeps it.
 */
#ifndef PRECORD_ELF_GOSYMS_H
#define PRECORD_ELF_GOSYMS_H

#include <gelf.h>
#include <libelf.h>
#include <stdint.h>
#include <linux/types.h>

#include "elf/buildid.h"
#include "elf/gopclntab.h"
#include "elf/sections.h"

struct gosyms {
	uint8_t *bytes;			/* the .gopclntab, malloc'd */
	struct gopclntab tab;
	uint64_t text_addr, text_off, text_size;	/* the .text section */
	uint16_t machine;		/* e_machine */
};

/*
 * elf, the file called file (open on rd's file or image; rd: what may
 * be read of it, elf/sections.h): 0 and g filled, or -ENOENT (no
 * .gopclntab or no .text, or a .symtab: its own symbols are better),
 * -EFBIG (the table over ELF_READ_MAX_SYMS, or the file's total),
 * -EBADMSG (not a table of a known layout): these two said in one
 * warning naming file; -ENOEXEC, -EIO, -ENOMEM.
 */
int gosyms__load(struct gosyms *g, Elf *elf, struct elf_reads *rd, const char *file);
/* The same for the ELF file open on fd (read with pread; its headers
 * checked before libelf reads them): -ENOEXEC when they are refused. */
int gosyms__load_fd(struct gosyms *g, int fd, const char *file);
void gosyms__free(struct gosyms *g);		/* g's memory; g may be zeroed */

/*
 * Function i (0 <= i < g->tab.nfunc) with *off the file offset of its
 * start (its end at *off + f->end - f->start): 0, or -EBADMSG for a bogus
 * entry or one outside .text (skip it).
 */
int gosyms__func(const struct gosyms *g, uint64_t i, struct gopclntab_func *f, uint64_t *off);

/*
 * fn for every function gosyms__func gives (off: its file offset) while
 * their names' bytes sum to at most the table's size (a real table holds
 * each name once; a hostile one may point 2^22 functions at one 4 KiB
 * name); the entries skipped and the functions past GOPCLNTAB_MAX_FUNCS
 * are counted and said in one warning naming file.  fn's first non-zero return ends
 * the walk and is returned; else 0.
 */
int gosyms__each(const struct gosyms *g, const char *file,
		 int (*fn)(void *ctx, uint64_t off, const struct gopclntab_func *f), void *ctx);

/*
 * The build-id of the ELF file open on fd as precord records it: its GNU
 * build-id (elf_build_id_fd) if it has one, else for a stripped Go binary
 * the id above (BUILD_ID_SIZE), else elf_build_id_fd's error.
 */
int elf_build_id_or_go_fd(int fd, __u8 id[BUILD_ID_SIZE]);

#endif
