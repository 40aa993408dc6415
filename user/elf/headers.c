// SPDX-License-Identifier: GPL-2.0
/*
 * The ELF header and section 0 of a hostile file, checked before libelf
 * allocates anything from them (see headers.h).  Field offsets are those
 * of the gABI's Elf32_Ehdr/Elf64_Ehdr and Elf32_Shdr/Elf64_Shdr; the
 * extended numbering (gABI "Extended Section Header Table Index"):
 * e_shnum 0 with sections -> the count is section 0's sh_size, e_phnum
 * PN_XNUM (0xffff) -> the count is section 0's sh_info.
 */
#include "elf/headers.h"

#include <elf.h>
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util/io.h"

struct elf_src {
	int fd;			/* >= 0: read with pread */
	const unsigned char *mem;
	uint64_t size;
};

static int src_read(const struct elf_src *s, void *buf, size_t len, uint64_t off)
{
	ssize_t got;

	if (off > s->size || len > s->size - off)
		return -ENOEXEC;
	if (s->fd < 0) {
		memcpy(buf, s->mem + off, len);
		return 0;
	}
	got = pread_full(s->fd, buf, len, (off_t)off);
	if (got < 0)
		return (int)got;
	return (size_t)got < len ? -ENOEXEC : 0;	/* shrank since fstat */
}

struct field_reader {
	const unsigned char *p;
	bool be;
};

static uint64_t field(const struct field_reader *r, size_t off, size_t size)
{
	uint64_t v = 0;

	for (size_t i = 0; i < size; i++) {
		size_t k = r->be ? i : size - 1 - i;

		v = v << 8 | r->p[off + k];
	}
	return v;
}

/* count entries of entsize bytes at off lie inside the file. */
static bool table_fits(uint64_t off, uint64_t count, uint64_t entsize, uint64_t size)
{
	return off <= size && count <= (size - off) / entsize;
}

struct elf_counts {
	uint64_t phoff, shoff, phnum, shnum;
	unsigned phentsize, shentsize;
};

static int read_ehdr(const struct elf_src *s, struct elf_counts *c, bool *is64, bool *be)
{
	unsigned char eh[sizeof(Elf64_Ehdr)];
	struct field_reader r = { eh, false };
	int err;

	if (s->size < EI_NIDENT)
		return -ENOEXEC;
	err = src_read(s, eh, EI_NIDENT, 0);
	if (err)
		return err;
	if (memcmp(eh, ELFMAG, SELFMAG) ||
	    (eh[EI_CLASS] != ELFCLASS32 && eh[EI_CLASS] != ELFCLASS64) ||
	    (eh[EI_DATA] != ELFDATA2LSB && eh[EI_DATA] != ELFDATA2MSB))
		return -ENOEXEC;
	*is64 = eh[EI_CLASS] == ELFCLASS64;
	*be = r.be = eh[EI_DATA] == ELFDATA2MSB;
	err = src_read(s, eh, *is64 ? sizeof(Elf64_Ehdr) : sizeof(Elf32_Ehdr), 0);
	if (err)
		return err;
	if (*is64) {
		c->phoff = field(&r, 32, 8);
		c->shoff = field(&r, 40, 8);
	} else {
		c->phoff = field(&r, 28, 4);
		c->shoff = field(&r, 32, 4);
	}
	r.p += *is64 ? 54 : 42;		/* e_phentsize onwards: same layout */
	c->phentsize = (unsigned)field(&r, 0, 2);
	c->phnum = field(&r, 2, 2);
	c->shentsize = (unsigned)field(&r, 4, 2);
	c->shnum = field(&r, 6, 2);
	return 0;
}

/* The extended counts from section 0, where the header asks for them. */
static int read_section0(const struct elf_src *s, struct elf_counts *c, bool is64, bool be)
{
	unsigned char sh[sizeof(Elf64_Shdr)];
	struct field_reader r = { sh, be };
	int err;

	if (!c->shoff) {
		/* No section table: libelf takes the counts as given. */
		return c->shnum ? -ENOEXEC : 0;
	}
	if (c->shentsize != (is64 ? sizeof(Elf64_Shdr) : sizeof(Elf32_Shdr)))
		return -ENOEXEC;
	if (c->shnum && c->phnum != PN_XNUM)
		return 0;
	err = src_read(s, sh, c->shentsize, c->shoff);
	if (err)
		return err;
	if (!c->shnum)
		c->shnum = is64 ? field(&r, 32, 8) : field(&r, 20, 4);
	if (c->phnum == PN_XNUM)
		c->phnum = is64 ? field(&r, 44, 4) : field(&r, 28, 4);
	return 0;
}

static int check(const struct elf_src *s)
{
	struct elf_counts c;
	bool is64, be;
	int err = read_ehdr(s, &c, &is64, &be);

	if (!err)
		err = read_section0(s, &c, is64, be);
	if (err)
		return err;
	if (c.shnum > ELF_MAX_SECTIONS || c.phnum > ELF_MAX_SEGMENTS)
		return -E2BIG;
	if (c.shnum && !table_fits(c.shoff, c.shnum, c.shentsize, s->size))
		return -ENOEXEC;
	if (c.phnum && (c.phentsize != (is64 ? sizeof(Elf64_Phdr) : sizeof(Elf32_Phdr)) ||
			!table_fits(c.phoff, c.phnum, c.phentsize, s->size)))
		return -ENOEXEC;
	return 0;
}

int elf_headers_check_fd(int fd)
{
	struct stat st;
	struct elf_src s = { .fd = fd };

	if (fstat(fd, &st))
		return -errno;
	if (!S_ISREG(st.st_mode) || st.st_size < 0)
		return -ENOEXEC;
	s.size = (uint64_t)st.st_size;
	return check(&s);
}

int elf_headers_check_mem(const void *image, size_t len)
{
	struct elf_src s = { .fd = -1, .mem = image, .size = len };

	if (!image)
		return -ENOEXEC;
	return check(&s);
}
