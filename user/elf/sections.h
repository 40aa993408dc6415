/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Whether a section of a hostile file may be read, asked before libelf
 * reads it.  libelf reads a section whole (elf_getdata, elf_rawdata, the
 * first elf_strptr of a string table, gelf_getchdr) into memory it
 * allocates from sh_size, and inflates a compressed one to the size its
 * header claims: a 4 KB-on-disk sparse library whose .eh_frame claimed
 * 1.5 GiB took the recorder to 1.67 GB; a 1.5 GiB sparse .symtab took
 * precord export to 1.58 GB and 6 s.  A section is read only when it lies
 * in the file, its size (and inflated size) is under a cap of its kind,
 * its bytes are mostly on disk (not holes), and the file's sections read
 * so far stay under a total.
 */
#ifndef PRECORD_ELF_SECTIONS_H
#define PRECORD_ELF_SECTIONS_H

#include <gelf.h>
#include <libelf.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/*
 * Caps, from the largest sections of real binaries (Debian 12 and the
 * toolchains on the build host, measured with readelf -S): .eh_frame
 * 7.4 MiB (rustup's libLLVM.so.22), 6.5 MiB (CUDA 13's libnvrtc), 5.0 MiB
 * (libLLVM-15); .eh_frame_hdr 1.3 MiB; .debug_frame 0.5 MiB; .strtab
 * 19.1 MiB (librustc_driver), 7.2 MiB (node); .symtab 5.9 MiB; .dynstr
 * 12.7 MiB (libclickhouse); .shstrtab 1.1 MiB (an fpc .o); the sum of
 * those in one file 35 MiB (libLLVM.so.22).  Each cap is about ten times
 * the largest seen.
 */
#define ELF_READ_MAX_CFI	(64ull << 20)	/* .eh_frame, .eh_frame_hdr, .debug_frame */
#define ELF_READ_MAX_SYMS	(256ull << 20)	/* .symtab, .strtab, .dynsym, .dynstr */
#define ELF_READ_MAX_OTHER	(64ull << 20)	/* .shstrtab, the .debug_* libdw reads */
#define ELF_READ_MAX_FILE	(512ull << 20)	/* all sections read from one file */

/* Sections below this size are not checked for holes (cheap either way). */
#define ELF_READ_SPARSE_MIN	(64u << 10)

/* The sections read from one file so far. */
struct elf_reads {
	int fd;				/* -1: an image in memory */
	const unsigned char *image;
	uint64_t size;			/* of the file or image */
	bool sparse;			/* st_blocks short of st_size: look for holes */
	bool is64, be;
	uint64_t total;			/* bytes admitted (inflated sizes included) */
	char why[128];			/* the last refusal, for a message */
};

/* For elf, read from fd (libelf's elf_begin) or from image[0..len)
 * (elf_memory).  0 or -errno (fstat, not an ELF descriptor). */
int elf_reads__init_fd(struct elf_reads *r, Elf *elf, int fd);
int elf_reads__init_mem(struct elf_reads *r, Elf *elf, const void *image, size_t len);

/*
 * May the section with header sh (of scn) be read?  Its range must lie in
 * the file, sh_size (and for SHF_COMPRESSED the ch_size of its header,
 * read here with pread, not gelf_getchdr) at most cap, its range mostly
 * data on disk (SEEK_DATA/SEEK_HOLE), and the file's total at most
 * ELF_READ_MAX_FILE.  0 (counted in the total) or -EFBIG with r->why set.
 * SHT_NOBITS sections are always readable (libelf allocates nothing).
 */
int elf_reads__admit(struct elf_reads *r, const GElf_Shdr *sh, uint64_t cap);

/* The same for section index ndx (e.g. a sh_link or e_shstrndx). */
int elf_reads__admit_index(struct elf_reads *r, Elf *elf, size_t ndx, uint64_t cap);

#endif
