/* SPDX-License-Identifier: GPL-2.0 */
/*
 * One CFI section (.eh_frame or .debug_frame) of a file, copied into an
 * ELF image in memory that holds only it and its name, for libdw
 * (elf_memory: the section's data is the copy itself, not read again).
 * The caller reads the section into it piece by piece (cfi_table.c: a
 * build that stops at a deadline), checks and fences it there, and hands
 * libdw the image: libdw sees no other section of the hostile file (no
 * .eh_frame_hdr search table, no other .debug_* section to read).
 */
#ifndef PRECORD_UNWIND_CFI_IMAGE_H
#define PRECORD_UNWIND_CFI_IMAGE_H

#include <gelf.h>
#include <libelf.h>
#include <stddef.h>

struct cfi_image {
	unsigned char *p;	/* ELF header, section headers, names, the section */
	size_t size;		/* of the section */
	Elf *elf;		/* elf_memory over p (cfi_image__elf) */
};

/*
 * An image for the section sh named name (".eh_frame" or ".debug_frame")
 * of a file whose ELF header is eh (its class, data, machine and type
 * are kept), sh_size bytes left for the section: 0 or -ENOMEM.
 */
int cfi_image__init(struct cfi_image *im, const GElf_Ehdr *eh, const char *name,
		    const GElf_Shdr *sh);
/* Where the section's sh_size bytes go. */
unsigned char *cfi_image__section(const struct cfi_image *im);
/* libelf's handle of the image (made at the first call), NULL on error;
 * its section is index 1. */
Elf *cfi_image__elf(struct cfi_image *im);
void cfi_image__free(struct cfi_image *im);	/* NULL-safe; elf_end too */

#endif
