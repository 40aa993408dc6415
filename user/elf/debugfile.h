/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Separate debug files (issue 21): whether a DSO carries its own symbol
 * table, the name its .gnu_debuglink gives, and whether a candidate debug
 * file (from /usr/lib/debug, beside the DSO, or a debuginfod server: any
 * of them hostile) may stand for a DSO.  Every file is checked by
 * elf/headers.h before libelf sees it, and a section is read only when
 * elf/sections.h admits it (in the file, under its cap, not a hole).
 */
#ifndef PRECORD_ELF_DEBUGFILE_H
#define PRECORD_ELF_DEBUGFILE_H

#include <stddef.h>
#include <linux/types.h>

/* The ELF file on fd names its own functions: a SHT_SYMTAB section, or
 * a Go binary's .gopclntab (elf/gosyms.h: names, and for a stripped one
 * an id of precord's that no debug file has): 1; neither: 0; -ENOEXEC
 * (not ELF, headers refused) or -errno. */
int elf_has_own_names_fd(int fd);

/*
 * The file name in fd's .gnu_debuglink section, copied into name (size
 * bytes), and its CRC.  The name must be a plain file name (no '/', not
 * "." or "..", printable, NUL-terminated inside the section).  0, -ENOENT
 * (no such section), -ENOEXEC (malformed), -EFBIG (section refused).
 */
int elf_debuglink_fd(int fd, char *name, size_t size, __u32 *crc);

/*
 * May the file on fd serve as the debug file of a DSO whose build-id is
 * id (size bytes)?  Its ELF headers pass elf/headers.h, its build-id note
 * is id, and it has a .symtab whose table and string table elf/sections.h
 * admits (a sparse or oversized one is refused).  0, or -ENOEXEC (not a
 * sane ELF), -ESTALE (another build-id, or none), -ENOENT (no .symtab),
 * -EFBIG (its symbol table refused), -errno.
 */
int elf_debug_file_check(int fd, const __u8 *id, int size);

#endif
