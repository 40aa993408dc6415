// SPDX-License-Identifier: GPL-2.0
/*
 * The checks of elf/sections.h.  The compression header is read here
 * (gABI Elf32_Chdr/Elf64_Chdr: ch_type, [ch_reserved,] ch_size,
 * ch_addralign) because gelf_getchdr reads the whole section first.
 */
#include "elf/sections.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util/io.h"

static int init(struct elf_reads *r, Elf *elf)
{
	const char *id = elf ? elf_getident(elf, NULL) : NULL;

	if (!id || (id[EI_CLASS] != ELFCLASS32 && id[EI_CLASS] != ELFCLASS64))
		return -ENOEXEC;
	r->is64 = id[EI_CLASS] == ELFCLASS64;
	r->be = id[EI_DATA] == ELFDATA2MSB;
	return 0;
}

int elf_reads__init_fd(struct elf_reads *r, Elf *elf, int fd)
{
	struct stat st;

	memset(r, 0, sizeof(*r));
	r->fd = fd;
	if (fstat(fd, &st))
		return -errno;
	if (!S_ISREG(st.st_mode) || st.st_size < 0)
		return -ENOEXEC;
	r->size = (uint64_t)st.st_size;
	r->sparse = (uint64_t)st.st_blocks * 512 < r->size;
	return init(r, elf);
}

int elf_reads__init_mem(struct elf_reads *r, Elf *elf, const void *image, size_t len)
{
	memset(r, 0, sizeof(*r));
	r->fd = -1;
	r->image = image;
	r->size = len;
	return image ? init(r, elf) : -ENOEXEC;
}

__attribute__((format(printf, 2, 3)))
static int refuse(struct elf_reads *r, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(r->why, sizeof(r->why), fmt, ap);
	va_end(ap);
	return -EFBIG;
}

/*
 * Bytes of [off, off + len) the file holds on disk, counted up to need
 * (enough to say yes).  A file system without SEEK_DATA answers with the
 * whole file as data (the generic lseek), an error as well.  The file
 * offset is restored: the fd is the caller's.
 */
static uint64_t on_disk(int fd, uint64_t off, uint64_t len, uint64_t need)
{
	off_t saved = lseek(fd, 0, SEEK_CUR);
	uint64_t end = off + len, pos = off, data = 0;

	while (pos < end && data < need) {
		off_t d = lseek(fd, (off_t)pos, SEEK_DATA), h;

		if (d < 0) {
			if (errno != ENXIO)	/* ENXIO: only holes up to the end */
				data = len;
			break;
		}
		if ((uint64_t)d >= end)
			break;
		h = lseek(fd, d, SEEK_HOLE);
		if (h < 0 || (uint64_t)h > end)
			h = (off_t)end;
		data += (uint64_t)h - (uint64_t)d;
		pos = (uint64_t)h;
	}
	if (saved >= 0)
		lseek(fd, saved, SEEK_SET);
	return data;
}

static uint64_t field(const unsigned char *p, size_t size, bool be)
{
	uint64_t v = 0;

	for (size_t i = 0; i < size; i++)
		v = v << 8 | p[be ? i : size - 1 - i];
	return v;
}

/* ch_size of the compression header at off: 0 and -EFBIG when unreadable. */
static int inflated_size(struct elf_reads *r, const GElf_Shdr *sh, uint64_t *size)
{
	unsigned char ch[sizeof(Elf64_Chdr)];
	size_t len = r->is64 ? sizeof(Elf64_Chdr) : sizeof(Elf32_Chdr);

	if (sh->sh_size < len)
		return refuse(r, "a compressed section of %llu bytes, shorter than its header",
			      (unsigned long long)sh->sh_size);
	if (r->fd < 0)
		memcpy(ch, r->image + sh->sh_offset, len);
	else if (pread_full(r->fd, ch, len, (off_t)sh->sh_offset) != (ssize_t)len)
		return refuse(r, "a compressed section whose header at %#llx is unreadable",
			      (unsigned long long)sh->sh_offset);
	*size = r->is64 ? field(ch + 8, 8, r->be) : field(ch + 4, 4, r->be);
	return 0;
}

int elf_reads__admit(struct elf_reads *r, const GElf_Shdr *sh, uint64_t cap)
{
	uint64_t size = sh->sh_size, inflated = 0;
	int err;

	if (sh->sh_type == SHT_NOBITS || !size)
		return 0;
	if (sh->sh_offset > r->size || size > r->size - sh->sh_offset)
		return refuse(r, "a section at %#llx of %llu bytes past the end of the file",
			      (unsigned long long)sh->sh_offset, (unsigned long long)size);
	if (size > cap)
		return refuse(r, "a section of %llu MiB (the limit: %llu MiB)", (unsigned long long)(size >> 20), (unsigned long long)(cap >> 20));
	if (sh->sh_flags & SHF_COMPRESSED) {
		err = inflated_size(r, sh, &inflated);
		if (err)
			return err;
		if (inflated > cap)
			return refuse(r, "a compressed section inflating to %llu MiB (the limit: %llu MiB)",
				      (unsigned long long)(inflated >> 20),
				      (unsigned long long)(cap >> 20));
	}
	if (r->fd >= 0 && r->sparse && size >= ELF_READ_SPARSE_MIN &&
	    on_disk(r->fd, sh->sh_offset, size, size / 2) < size / 2)
		return refuse(r, "a section of %llu MiB mostly in holes of a sparse file",
			      (unsigned long long)(size >> 20));
	if (size + inflated > ELF_READ_MAX_FILE - r->total)
		return refuse(r, "sections of more than %llu MiB in all",
			      (unsigned long long)(ELF_READ_MAX_FILE >> 20));
	r->total += size + inflated;
	return 0;
}

int elf_reads__admit_index(struct elf_reads *r, Elf *elf, size_t ndx, uint64_t cap)
{
	Elf_Scn *scn = elf_getscn(elf, ndx);
	GElf_Shdr sh;

	if (!scn || !gelf_getshdr(scn, &sh))
		return refuse(r, "no section %zu", ndx);
	return elf_reads__admit(r, &sh, cap);
}
