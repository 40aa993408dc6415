/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Symbol files: an ELF that holds nothing but a GNU build-id note and a
 * symbol table for another binary, the way perf report reads a separate
 * debug file from its build-id cache.  Written for stripped Go binaries
 * (elf/gosyms.h), whose names only their .gopclntab has.
 *
 * Layout (libelf places the sections):
 *   .note.gnu.build-id  NT_GNU_BUILD_ID: the binary's (or precord's) id
 *   .text               SHT_PROGBITS, no bytes, AX, placed at
 *                       sh_addr = sh_offset + delta
 *   .symtab/.strtab     one global STT_FUNC per function, st_value its
 *                       address in the binary, st_shndx .text
 *   .shstrtab
 * perf and precord place a symbol at st_value - sh_addr + sh_offset of
 * its section: with delta the binary's .text address less its file
 * offset, that is the function's file offset in the binary, where the
 * samples' MMAP2 records put it.  e_type ET_EXEC (perf adjusts the
 * symbols of every ET_EXEC), no program headers.
 */
#ifndef PRECORD_ELF_SYMFILE_H
#define PRECORD_ELF_SYMFILE_H

#include <stddef.h>
#include <stdint.h>
#include <linux/types.h>

struct symfile_sym {
	uint64_t addr, size;
	const char *name;	/* name_len bytes, no NUL among them */
	size_t name_len;
};

/*
 * Write the symbol file of n functions to fd (an empty file; not closed):
 * id/id_size (1..20 bytes) in its note, machine its e_machine.  0, or
 * -EINVAL (delta would put .text below address 0), -ENOMEM, -EIO
 * (libelf: logged at debug level), -errno of the write.
 */
int symfile__write(int fd, const struct symfile_sym *syms, size_t n, uint64_t delta,
		   const __u8 *id, int id_size, uint16_t machine);

#endif
