// SPDX-License-Identifier: GPL-2.0
/*
 * An ELF image in memory holding one CFI section (cfi_image.h):
 *
 *	0	Elf64_Ehdr (no program headers)
 *	64	section headers: 0 null, 1 the section, 2 .shstrtab
 *	256	.shstrtab: "\0" name "\0.shstrtab\0"
 *	320	the section's bytes
 */
#include "unwind/cfi_image.h"

#include <elf.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define SHDRS_AT	64u
#define NAMES_AT	256u
#define SECTION_AT	320u

int cfi_image__init(struct cfi_image *im, const GElf_Ehdr *eh, const char *name,
		    const GElf_Shdr *sh)
{
	Elf64_Ehdr e = { 0 };
	Elf64_Shdr s[3];
	size_t n = strlen(name) + 1;

	memset(im, 0, sizeof(*im));
	if (n + sizeof(".shstrtab") + 1 > SECTION_AT - NAMES_AT || sh->sh_size > SIZE_MAX - SECTION_AT)
		return -EINVAL;
	im->p = malloc(SECTION_AT + (size_t)sh->sh_size);
	if (!im->p)
		return -ENOMEM;
	im->size = (size_t)sh->sh_size;
	memset(im->p, 0, SECTION_AT);
	memcpy(e.e_ident, eh->e_ident, EI_NIDENT);
	e.e_type = eh->e_type;
	e.e_machine = eh->e_machine;
	e.e_version = EV_CURRENT;
	e.e_shoff = SHDRS_AT;
	e.e_ehsize = sizeof(e);
	e.e_shentsize = sizeof(s[0]);
	e.e_shnum = 3;
	e.e_shstrndx = 2;
	memcpy(im->p, &e, sizeof(e));
	memset(s, 0, sizeof(s));
	/* its type, flags (SHF_COMPRESSED: libdw inflates it) and address
	 * (pc-relative pointers of .eh_frame are relative to it) */
	s[1] = (Elf64_Shdr){ .sh_name = 1, .sh_type = sh->sh_type, .sh_flags = sh->sh_flags,
			     .sh_addr = sh->sh_addr, .sh_offset = SECTION_AT,
			     .sh_size = sh->sh_size, .sh_addralign = 8 };
	s[2] = (Elf64_Shdr){ .sh_name = (Elf64_Word)(1 + n), .sh_type = SHT_STRTAB,
			     .sh_offset = NAMES_AT, .sh_size = 1 + n + sizeof(".shstrtab"),
			     .sh_addralign = 1 };
	memcpy(im->p + SHDRS_AT, s, sizeof(s));
	memcpy(im->p + NAMES_AT + 1, name, n);
	memcpy(im->p + NAMES_AT + 1 + n, ".shstrtab", sizeof(".shstrtab"));
	return 0;
}

unsigned char *cfi_image__section(const struct cfi_image *im)
{
	return im->p + SECTION_AT;
}

Elf *cfi_image__elf(struct cfi_image *im)
{
	if (!im->elf && im->p)
		im->elf = elf_memory((char *)im->p, SECTION_AT + im->size);
	return im->elf;
}

void cfi_image__free(struct cfi_image *im)
{
	if (!im)
		return;
	if (im->elf)
		elf_end(im->elf);
	free(im->p);
	memset(im, 0, sizeof(*im));
}
