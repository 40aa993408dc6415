/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Sanity checks on the ELF header of a hostile file, made before libelf
 * sees it.  libelf's elf_begin allocates one descriptor per section from
 * the section count in the header (or in section 0 for the extended
 * count) before it checks anything: a 4 KB sparse file claiming 4M
 * sections cost 1.1 GB and 12.8 s in a real recording.  These checks read
 * the ELF header and section 0 with pread and refuse a file whose tables
 * do not fit in it or whose counts are larger than any real binary's.
 */
#ifndef PRECORD_ELF_HEADERS_H
#define PRECORD_ELF_HEADERS_H

#include <stddef.h>

/*
 * Section and segment counts above these are refused.  Linked binaries
 * have a few dozen of each (Debian 12's libc.so.6: 64 sections, 14
 * segments); only relocatable objects built with -ffunction-sections
 * reach tens of thousands, and nothing maps those.  libelf's cost at the
 * section limit, measured: ~8 MB and 4 ms per file.
 */
#define ELF_MAX_SECTIONS	32768u
#define ELF_MAX_SEGMENTS	4096u

/*
 * The file open on fd (read with pread from offset 0; its offset is not
 * used) has a well-formed ELF identification (magic, class, byte order),
 * its program and section header tables lie inside the file with the
 * entry sizes of its class, and their counts (extended counts in section
 * 0 included) are within the limits above.  Returns 0, -ENOEXEC (not ELF
 * or malformed), -E2BIG (too many sections or segments), or -errno of
 * fstat/pread.
 */
int elf_headers_check_fd(int fd);

/* Same for len bytes of an image in memory. */
int elf_headers_check_mem(const void *image, size_t len);

#endif
