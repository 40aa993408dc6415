/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A symbol table loaded once and looked up many times: the functions of an
 * ELF file (.symtab, else .dynsym) placed at their file offsets, as perf
 * places them; the kernel's from a kallsyms file; a JIT runtime's from a
 * perf map.  Every input is hostile: ELF headers are checked before libelf
 * reads them (elf/headers.h), counts and string indexes are bounded, and a
 * kallsyms or perf map file is read up to SYMTAB_MAX_TEXT bytes.
 */
#ifndef PRECORD_REPORT_SYMTAB_H
#define PRECORD_REPORT_SYMTAB_H

#include <stddef.h>
#include <linux/types.h>

#define SYMTAB_MAX_TEXT	((size_t)256 << 20)	/* kallsyms is ~12 MB here */

struct sym {
	__u64 start, end;		/* [start, end) in the table's space */
	const char *name;
	const char *module;		/* kallsyms: "[xfs]" for a module's symbol, else NULL */
};

struct symtab;

/*
 * ELF file open on fd (read with pread; the caller keeps fd): symbols at
 * file offsets.  NULL with errno: ENOEXEC (not ELF, malformed), ENOENT (no
 * function symbols), ENOMEM, EFBIG (its symbol or string table is over the
 * limits of elf/sections.h: one warning).  libelf's reasons are logged at
 * debug level.
 */
struct symtab *symtab__load_elf(int fd, const char *name);
/* The same with the .symtab of a separate debug file (debug_fd; -1 for
 * none) when it has one and the same section headers, else as above. */
struct symtab *symtab__load_elf_debug(int fd, int debug_fd, const char *name);
/* The same for an image in memory (the vdso). */
struct symtab *symtab__load_elf_mem(const void *image, size_t len, const char *name);
/* kallsyms text (t/T/w/W symbols) at absolute addresses; EPERM when every
 * address is 0 (kptr_restrict), ENOENT when there is no symbol. */
struct symtab *symtab__load_kallsyms(int fd, const char *name);
/* A perf map (/tmp/perf-PID.map) at absolute addresses; bad lines skipped. */
struct symtab *symtab__load_perfmap(int fd, const char *name);
void symtab__free(struct symtab *t);

/* The symbol containing addr, or NULL. */
const struct sym *symtab__find(const struct symtab *t, __u64 addr);
/* kallsyms: the address of _text (0 when absent). */
__u64 symtab__text(const struct symtab *t);
size_t symtab__nr(const struct symtab *t);
/* Bytes the table holds (symbols and names). */
size_t symtab__bytes(const struct symtab *t);

#endif
