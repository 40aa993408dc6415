/* SPDX-License-Identifier: GPL-2.0 */
/*
 * GNU build-ids (NT_GNU_BUILD_ID notes) of ELF files, of the running
 * kernel and of the vdso.  Every ELF is treated as hostile: note sizes are
 * bounds-checked and a malformed file gives an error, never a crash.
 *
 * The id is read as perf reads it (symbol-elf.c elf_read_build_id):
 * min(descsz rounded up to 4, 20) bytes, so a 32-byte id gives its first
 * 20 bytes and what precord records matches what perf report reads back
 * from the same file.
 */
#ifndef PRECORD_ELF_BUILDID_H
#define PRECORD_ELF_BUILDID_H

#include <stddef.h>
#include <linux/types.h>

#define BUILD_ID_SIZE		20
#define BUILD_ID_HEX_SIZE	(BUILD_ID_SIZE * 2 + 1)

/*
 * Build-id of the ELF file open on fd: the first "GNU" note of type 3 in a
 * PT_NOTE segment, else in a SHT_NOTE section.  fd is read with pread
 * (its file offset is not used).  The headers are checked before libelf
 * reads them (elf/headers.h).  Returns the id size (1..20), or -ENOEXEC
 * (not ELF / malformed or unreadable ELF headers), -E2BIG (more sections
 * or segments than any real binary has), -ENOENT (no usable note),
 * -ENOMEM.  libelf's own reasons are logged at debug level (-vv).
 */
int elf_build_id_fd(int fd, __u8 id[BUILD_ID_SIZE]);

/* Same for a path, opened O_RDONLY|O_CLOEXEC; -errno of open() too. */
int elf_build_id_path(const char *path, __u8 id[BUILD_ID_SIZE]);

/* Build-id of an ELF image in memory (len bytes at image). */
int elf_build_id_mem(const void *image, size_t len, __u8 id[BUILD_ID_SIZE]);

/* Build-id of the running kernel, from /sys/kernel/notes. */
int kernel_build_id(__u8 id[BUILD_ID_SIZE]);

/*
 * Build-id of the vdso mapped in this process ([vdso] in /proc/self/maps;
 * every process on this kernel maps the same image).  *image and *len (either
 * may be NULL) get the mapping itself: perf stores exactly these bytes as
 * "[vdso]/<id>/vdso" in its build-id cache.  -ENOENT without a vdso.
 */
int vdso_build_id(__u8 id[BUILD_ID_SIZE], const void **image, size_t *len);

/* Lower-case hex of size bytes (clamped to 0..20) into out, NUL-ended. */
void build_id_hex(const __u8 *id, int size, char out[BUILD_ID_HEX_SIZE]);

#endif
