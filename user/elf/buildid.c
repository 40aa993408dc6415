// SPDX-License-Identifier: GPL-2.0
/*
 * NT_GNU_BUILD_ID notes of ELF files (libelf), of the kernel
 * (/sys/kernel/notes) and of the vdso.
 *
 * A note stream is a sequence of
 *
 *	+--------+--------+--------+------------------+------------------+
 *	| namesz | descsz |  type  | name, padded     | desc, padded     |
 *	|  u32   |  u32   |  u32   | to the alignment | to the alignment |
 *	+--------+--------+--------+------------------+------------------+
 *
 * (alignment 4, or 8 for segments/sections aligned to 8).  A build-id is
 * the note with name "GNU\0" (namesz 4) and type 3; its desc is the id.
 */
#include "elf/buildid.h"

#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <inttypes.h>
#include <limits.h>
#include <libelf.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "elf/headers.h"
#include "util/io.h"
#include "util/log.h"
#include "util/printable.h"

#define NT_GNU_BUILD_ID_TYPE	3
#define NOTE_CHUNK_MAX		(16u << 20)	/* ignore absurd note areas */
#define KERNEL_NOTES_MAX	(1u << 20)

#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
#define HOST_ELFDATA	ELFDATA2LSB
#else
#define HOST_ELFDATA	ELFDATA2MSB
#endif

static __u32 note_u32(const __u8 *p, bool swap)
{
	__u32 v;

	memcpy(&v, p, sizeof(v));
	return swap ? __builtin_bswap32(v) : v;
}

/* Offsets are size_t and every u32 size fits in one, so no sum overflows
 * before it is compared with len. */
static size_t note_align(size_t v, size_t align)
{
	return (v + align - 1) & ~(align - 1);
}

/*
 * A libelf call failed on the file open on fd (-1: an image in memory):
 * which call, the file's name and libelf's reason, at debug level (a
 * target's file: that part is skipped, the build-id may stay unknown).
 * Returns err.
 */
static int libelf_fail(const char *call, int fd, int err)
{
	char link[64], name[PATH_MAX], shown[PRINTABLE_MAX];
	ssize_t n = -1;

	if (!log_enabled(LOG_DEBUG))
		return err;
	if (fd >= 0) {
		snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
		n = readlink(link, name, sizeof(name));
	}
	pr_debug("%s: reading the build-id: libelf's %s failed: %s",
		 n > 0 ? printable_mem(shown, sizeof(shown), name, (size_t)n) :
		 fd >= 0 ? "an ELF file" : "an ELF image in memory",
		 call, elf_errmsg(-1));
	return err;
}

/*
 * Find the GNU build-id in a note stream of len bytes.  Returns the id
 * size (1..20), or -ENOENT.  Like perf (symbol-elf.c elf_read_build_id,
 * sysfs__read_build_id) the size is descsz rounded up to 4 and cut to 20,
 * so a 32-byte id gives its first 20 bytes.  A note whose sizes run past
 * the end stops the scan.
 */
static int notes_find_build_id(const __u8 *p, size_t len, size_t align,
			       bool swap, __u8 id[BUILD_ID_SIZE])
{
	size_t off = 0;

	while (len - off >= 12) {
		__u32 namesz = note_u32(p + off, swap);
		__u32 descsz = note_u32(p + off + 4, swap);
		__u32 type = note_u32(p + off + 8, swap);
		size_t name_off = off + 12, desc_off, next;

		if (namesz > len - name_off)
			goto bad;
		desc_off = note_align(name_off + namesz, align);
		if (desc_off > len || descsz > len - desc_off)
			goto bad;
		if (type == NT_GNU_BUILD_ID_TYPE && namesz == 4 &&
		    !memcmp(p + name_off, "GNU", 4) && descsz > 0) {
			/* perf reads the desc padded to 4 (its NOTE_ALIGN),
			 * at most 20 bytes: do the same, within the area. */
			size_t n = note_align(descsz, 4);

			if (n > len - desc_off)
				n = descsz;
			if (n > BUILD_ID_SIZE)
				n = BUILD_ID_SIZE;

			memset(id, 0, BUILD_ID_SIZE);
			memcpy(id, p + desc_off, n);
			return (int)n;
		}
		next = note_align(desc_off + descsz, align);
		if (next > len)
			break;
		off = next;
	}
	return -ENOENT;
bad:
	pr_debug("malformed ELF note at offset %zu of a %zu-byte note area", off, len);
	return -ENOENT;
}

static int elf_scan_chunk(Elf *elf, int fd, GElf_Off off, GElf_Xword size,
			  GElf_Xword align, bool swap, __u8 id[BUILD_ID_SIZE])
{
	Elf_Data *d;

	if (size < 12 || size > NOTE_CHUNK_MAX)
		return -ENOENT;
	/* libelf checks off + size against the file size. */
	d = elf_getdata_rawchunk(elf, off, size, ELF_T_BYTE);
	if (!d)
		return libelf_fail("elf_getdata_rawchunk", fd, -ENOENT);
	if (!d->d_buf || d->d_size < size)
		return -ENOENT;
	return notes_find_build_id(d->d_buf, size, align == 8 ? 8 : 4, swap, id);
}

static int elf_scan_segments(Elf *elf, int fd, bool swap, __u8 id[BUILD_ID_SIZE])
{
	size_t i, n;

	if (elf_getphdrnum(elf, &n))
		return libelf_fail("elf_getphdrnum", fd, -ENOENT);
	for (i = 0; i < n; i++) {
		GElf_Phdr ph;
		int ret;

		if (!gelf_getphdr(elf, (int)i, &ph))
			return libelf_fail("gelf_getphdr", fd, -ENOENT);
		if (ph.p_type != PT_NOTE)
			continue;
		ret = elf_scan_chunk(elf, fd, ph.p_offset, ph.p_filesz, ph.p_align, swap, id);
		if (ret > 0)
			return ret;
	}
	return -ENOENT;
}

static int elf_scan_sections(Elf *elf, int fd, bool swap, __u8 id[BUILD_ID_SIZE])
{
	Elf_Scn *scn = NULL;

	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		int ret;

		if (!gelf_getshdr(scn, &sh))
			return libelf_fail("gelf_getshdr", fd, -ENOENT);
		if (sh.sh_type != SHT_NOTE)
			continue;
		ret = elf_scan_chunk(elf, fd, sh.sh_offset, sh.sh_size, sh.sh_addralign, swap, id);
		if (ret > 0)
			return ret;
	}
	return -ENOENT;
}

/* The build-id of elf, opened from fd (-1: from memory). */
static int elf_build_id(Elf *elf, int fd, __u8 id[BUILD_ID_SIZE])
{
	GElf_Ehdr eh;
	bool swap;
	int ret;

	if (!elf)
		return libelf_fail(fd >= 0 ? "elf_begin" : "elf_memory", fd, -ENOEXEC);
	if (elf_kind(elf) != ELF_K_ELF)
		return -ENOEXEC;
	if (!gelf_getehdr(elf, &eh))
		return libelf_fail("gelf_getehdr", fd, -ENOEXEC);
	if (eh.e_ident[EI_DATA] != ELFDATA2LSB && eh.e_ident[EI_DATA] != ELFDATA2MSB)
		return -ENOEXEC;
	swap = eh.e_ident[EI_DATA] != HOST_ELFDATA;
	ret = elf_scan_segments(elf, fd, swap, id);
	if (ret < 0)
		ret = elf_scan_sections(elf, fd, swap, id);
	return ret;
}

int elf_build_id_fd(int fd, __u8 id[BUILD_ID_SIZE])
{
	Elf *elf;
	int ret;

	if (elf_version(EV_CURRENT) == EV_NONE)
		return libelf_fail("elf_version", fd, -ENOEXEC);
	ret = elf_headers_check_fd(fd);
	if (ret)
		return ret;
	/* ELF_C_READ, not _MMAP: a hostile process truncating the file
	 * while we read it must give an error, not a SIGBUS. */
	elf = elf_begin(fd, ELF_C_READ, NULL);
	ret = elf_build_id(elf, fd, id);
	if (elf)
		elf_end(elf);
	return ret;
}

int elf_build_id_path(const char *path, __u8 id[BUILD_ID_SIZE])
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	int ret;

	if (fd < 0)
		return -errno;
	ret = elf_build_id_fd(fd, id);
	close(fd);
	return ret;
}

int elf_build_id_mem(const void *image, size_t len, __u8 id[BUILD_ID_SIZE])
{
	char *copy;
	Elf *elf;
	int ret;

	if (!image || !len)
		return -ENOEXEC;
	if (elf_version(EV_CURRENT) == EV_NONE)
		return libelf_fail("elf_version", -1, -ENOEXEC);
	ret = elf_headers_check_mem(image, len);
	if (ret)
		return ret;
	/* libelf wants a writable image; the vdso mapping is not. */
	copy = malloc(len);
	if (!copy)
		return -ENOMEM;
	memcpy(copy, image, len);
	elf = elf_memory(copy, len);
	ret = elf_build_id(elf, -1, id);
	if (elf)
		elf_end(elf);
	free(copy);
	return ret;
}

int kernel_build_id(__u8 id[BUILD_ID_SIZE])
{
	int fd = open("/sys/kernel/notes", O_RDONLY | O_CLOEXEC);
	size_t len = 0, cap = 4096;
	__u8 *buf, *nbuf;
	int ret;

	if (fd < 0)
		return -errno;
	buf = malloc(cap);
	while (buf) {
		ssize_t n = read_full(fd, buf + len, cap - len);

		if (n <= 0)
			break;
		len += (size_t)n;
		if (len < cap || cap >= KERNEL_NOTES_MAX)
			break;
		nbuf = realloc(buf, cap * 2);
		if (!nbuf) {
			free(buf);
			buf = NULL;
			break;
		}
		buf = nbuf;
		cap *= 2;
	}
	close(fd);
	if (!buf)
		return -ENOMEM;
	ret = notes_find_build_id(buf, len, 4, false, id);
	free(buf);
	return ret;
}

/* Find "[vdso]" in /proc/self/maps. */
static int vdso_find(uintptr_t *start, uintptr_t *end)
{
	FILE *f = fopen("/proc/self/maps", "re");
	char *line = NULL;
	size_t cap = 0;
	int ret = -ENOENT;

	if (!f)
		return -errno;
	while (getline(&line, &cap, f) > 0) {
		size_t n = strlen(line);
		uintmax_t s, e;

		while (n && (line[n - 1] == '\n' || line[n - 1] == ' '))
			line[--n] = '\0';
		if (n < 7 || strcmp(line + n - 7, " [vdso]"))
			continue;
		if (sscanf(line, "%jx-%jx", &s, &e) == 2 && e > s) {
			*start = (uintptr_t)s;
			*end = (uintptr_t)e;
			ret = 0;
		}
		break;
	}
	free(line);
	fclose(f);
	return ret;
}

int vdso_build_id(__u8 id[BUILD_ID_SIZE], const void **image, size_t *len)
{
	uintptr_t start = 0, end = 0;
	int ret = vdso_find(&start, &end);

	if (ret)
		return ret;
	ret = elf_build_id_mem((const void *)start, end - start, id);
	if (ret < 0)
		return ret;
	if (image)
		*image = (const void *)start;
	if (len)
		*len = end - start;
	return ret;
}

void build_id_hex(const __u8 *id, int size, char out[BUILD_ID_HEX_SIZE])
{
	static const char digits[] = "0123456789abcdef";
	int i;

	if (size < 0)
		size = 0;
	if (size > BUILD_ID_SIZE)
		size = BUILD_ID_SIZE;
	for (i = 0; i < size; i++) {
		out[2 * i] = digits[id[i] >> 4];
		out[2 * i + 1] = digits[id[i] & 15];
	}
	out[2 * size] = '\0';
}
