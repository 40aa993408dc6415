// SPDX-License-Identifier: GPL-2.0
/*
 * elf/sections.h, the check before libelf reads a section: the range in
 * the file, the cap of its kind, the inflated size of a compressed
 * section (from its header, read without libelf), holes in a sparse file
 * (data written there is accepted, the same range left a hole is not),
 * the total of one file, SHT_NOBITS.
 */
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "elf/sections.h"
#include "harness.h"

static char fixture[PATH_MAX];
static char tmpdir[] = "/tmp/precord-sections-XXXXXX";

static GElf_Shdr section(uint64_t off, uint64_t size)
{
	return (GElf_Shdr){ .sh_type = SHT_PROGBITS, .sh_offset = off, .sh_size = size };
}

/* A file of size bytes, holes but for data_len bytes of 0xaa at data_off. */
static int sparse_file(const char *name, uint64_t size, uint64_t data_off, size_t data_len)
{
	char path[PATH_MAX];
	unsigned char *buf = malloc(data_len ? data_len : 1);
	int fd;

	snprintf(path, sizeof(path), "%s/%s", tmpdir, name);
	fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0644);
	if (fd < 0 || !buf || ftruncate(fd, (off_t)size)) {
		free(buf);
		return -1;
	}
	memset(buf, 0xaa, data_len);
	if (data_len && pwrite(fd, buf, data_len, (off_t)data_off) != (ssize_t)data_len) {
		close(fd);
		fd = -1;
	}
	free(buf);
	return fd;
}

static Elf *fixture_elf(int *fd)
{
	*fd = open(fixture, O_RDONLY);
	return *fd >= 0 ? elf_begin(*fd, ELF_C_READ, NULL) : NULL;
}

TEST(range_and_caps)
{
	struct elf_reads r;
	GElf_Shdr sh;
	int efd, fd = sparse_file("big", 2ull << 30, 0, 0);
	Elf *elf = fixture_elf(&efd);

	CHECK(elf && fd >= 0);
	CHECK_EQ(elf_reads__init_fd(&r, elf, fd), 0);
	sh = section(0, ELF_READ_MAX_CFI + 1);
	CHECK_EQ(elf_reads__admit(&r, &sh, ELF_READ_MAX_CFI), -EFBIG);
	CHECK(strstr(r.why, "limit"));
	sh = section((2ull << 30) - 100, 101);		/* one byte past the end */
	CHECK_EQ(elf_reads__admit(&r, &sh, ELF_READ_MAX_CFI), -EFBIG);
	CHECK(strstr(r.why, "past the end"));
	sh = section(UINT64_MAX - 10, 100);		/* wraps around */
	CHECK_EQ(elf_reads__admit(&r, &sh, ELF_READ_MAX_CFI), -EFBIG);
	sh = section(0, 1ull << 40);
	sh.sh_type = SHT_NOBITS;			/* nothing read */
	CHECK_EQ(elf_reads__admit(&r, &sh, ELF_READ_MAX_CFI), 0);
	CHECK_EQ(r.total, 0);
	close(fd);
	elf_end(elf);
	close(efd);
}

TEST(holes)
{
	struct elf_reads r;
	GElf_Shdr sh;
	int efd, fd = sparse_file("holes", 64ull << 20, 8 << 20, 4 << 20);
	Elf *elf = fixture_elf(&efd);

	CHECK(elf && fd >= 0);
	CHECK_EQ(elf_reads__init_fd(&r, elf, fd), 0);
	CHECK(r.sparse);
	sh = section(8 << 20, 4 << 20);			/* the data */
	CHECK_EQ(elf_reads__admit(&r, &sh, ELF_READ_MAX_CFI), 0);
	CHECK_EQ(r.total, 4 << 20);
	sh = section(7 << 20, 5 << 20);			/* 80% data */
	CHECK_EQ(elf_reads__admit(&r, &sh, ELF_READ_MAX_CFI), 0);
	sh = section(16 << 20, 4 << 20);		/* a hole */
	CHECK_EQ(elf_reads__admit(&r, &sh, ELF_READ_MAX_CFI), -EFBIG);
	CHECK(strstr(r.why, "holes"));
	sh = section(4 << 20, 12 << 20);		/* a third data */
	CHECK_EQ(elf_reads__admit(&r, &sh, ELF_READ_MAX_CFI), -EFBIG);
	sh = section(60 << 20, 4 << 20);		/* holes up to the end */
	CHECK_EQ(elf_reads__admit(&r, &sh, ELF_READ_MAX_CFI), -EFBIG);
	sh = section(32 << 20, 4096);			/* small: not looked at */
	CHECK_EQ(elf_reads__admit(&r, &sh, ELF_READ_MAX_CFI), 0);
	CHECK_EQ(lseek(fd, 0, SEEK_CUR), 0);		/* the caller's offset kept */
	close(fd);
	elf_end(elf);
	close(efd);
}

TEST(compressed)
{
	Elf64_Chdr ch = { .ch_type = ELFCOMPRESS_ZLIB, .ch_size = 1ull << 30, .ch_addralign = 1 };
	struct elf_reads r;
	GElf_Shdr sh;
	int efd, fd = sparse_file("zlib", 8192, 0, 8192);
	Elf *elf = fixture_elf(&efd);

	CHECK(elf && fd >= 0);
	CHECK_EQ(pwrite(fd, &ch, sizeof(ch), 4096), (ssize_t)sizeof(ch));
	CHECK_EQ(elf_reads__init_fd(&r, elf, fd), 0);
	sh = section(4096, 4096);
	sh.sh_flags = SHF_COMPRESSED;
	CHECK_EQ(elf_reads__admit(&r, &sh, ELF_READ_MAX_OTHER), -EFBIG);
	CHECK(strstr(r.why, "inflating to 1024 MiB"));
	ch.ch_size = 1 << 20;
	CHECK_EQ(pwrite(fd, &ch, sizeof(ch), 4096), (ssize_t)sizeof(ch));
	CHECK_EQ(elf_reads__admit(&r, &sh, ELF_READ_MAX_OTHER), 0);
	CHECK_EQ(r.total, 4096 + (1 << 20));		/* both copies counted */
	sh.sh_size = 10;				/* shorter than its header */
	CHECK_EQ(elf_reads__admit(&r, &sh, ELF_READ_MAX_OTHER), -EFBIG);
	close(fd);
	elf_end(elf);
	close(efd);
}

/* An image in memory (elf_memory): no holes to look for, the same total. */
TEST(file_total)
{
	size_t len = 1ull << 30;
	void *image = mmap(NULL, len, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	struct elf_reads r;
	GElf_Shdr sh;
	int efd, i, err = 0;
	Elf *elf = fixture_elf(&efd);

	CHECK(elf && image != MAP_FAILED);
	CHECK_EQ(elf_reads__init_mem(&r, elf, image, len), 0);
	for (i = 0; i < 16 && !err; i++) {
		sh = section((uint64_t)i * (60 << 20), 60 << 20);
		err = elf_reads__admit(&r, &sh, ELF_READ_MAX_CFI);
	}
	CHECK_EQ(err, -EFBIG);
	CHECK_EQ(i, (int)(ELF_READ_MAX_FILE / (60 << 20)) + 1);
	CHECK(strstr(r.why, "in all"));
	CHECK(r.total <= ELF_READ_MAX_FILE);
	munmap(image, len);
	elf_end(elf);
	close(efd);
}

int main(int argc, char **argv)
{
	(void)argc;
	elf_version(EV_CURRENT);
	harness_fixture(argv[0], "cfi_fixture.so", fixture, sizeof(fixture));
	return HARNESS_WITH_TMPDIR(tmpdir, {
		RUN(range_and_caps);
		RUN(holes);
		RUN(compressed);
		RUN(file_total);
	});
}
