// SPDX-License-Identifier: GPL-2.0
/*
 * Sparse sections (issue 18, finding 1): copies of the unwind fixtures
 * (tests/unit/fixtures/cfi_fixture.S) whose .eh_frame, .eh_frame_hdr,
 * .debug_frame, .shstrtab, .symtab or .strtab header claims 1 GiB (over
 * the caps) or 60 MiB (under them) at the end of a sparse file (ftruncate:
 * nothing more on disk).  libelf reads a section
 * whole, so before elf/sections.h the unwind-table builder and the symbol
 * loader read the gigabyte of holes.  Each file must be refused (EFBIG)
 * with the peak RSS (VmHWM, reset through /proc/self/clear_refs) growing
 * by less than 50 MB; the untouched fixtures still load.
 */
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <libelf.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "harness.h"
#include "report/symtab.h"
#include "unwind/cfi_table.h"
#include "util/log.h"

/* Over every cap of elf/sections.h, and under them (mostly holes). */
static const uint64_t claims[] = { 1ull << 30, 60ull << 20 };
#define RSS_MAX_KB	(50u << 10)

static char fixture_eh[PATH_MAX], fixture_debug[PATH_MAX];
static char tmpdir[] = "/tmp/precord-sparse-XXXXXX";

/*
 * Copy src to dst with section `name` moved past the end of the file and
 * claiming size bytes there, the file extended (sparse) to hold them.
 * 0 or -1.
 */
static int make_sparse(const char *src, const char *dst, const char *name, uint64_t size)
{
	size_t len, i;
	unsigned char *p = harness_slurp(src, &len);
	Elf64_Ehdr *eh = (Elf64_Ehdr *)p;
	Elf64_Shdr *sh, *target = NULL;
	const char *names;
	uint64_t off = ((uint64_t)len + 4095) & ~4095ull;
	int fd, ret = -1;

	if (!p)
		return -1;
	sh = (Elf64_Shdr *)(p + eh->e_shoff);
	names = (const char *)p + sh[eh->e_shstrndx].sh_offset;
	for (i = 0; i < eh->e_shnum; i++)
		if (!strcmp(names + sh[i].sh_name, name))
			target = &sh[i];
	if (!target) {
		free(p);
		return -1;
	}
	target->sh_offset = off;
	target->sh_size = size;
	fd = open(dst, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	if (fd >= 0 && write(fd, p, len) == (ssize_t)len && !ftruncate(fd, (off_t)(off + size)))
		ret = 0;
	if (fd >= 0)
		close(fd);
	free(p);
	return ret;
}

struct victim {
	const char *fixture;
	const char *section;
	bool cfi;		/* else: the symbol table */
};

static const struct victim victims[] = {
	{ fixture_eh, ".eh_frame", true },
	{ fixture_eh, ".eh_frame_hdr", true },
	{ fixture_eh, ".shstrtab", true },
	{ fixture_debug, ".debug_frame", true },
	{ fixture_eh, ".symtab", false },
	{ fixture_eh, ".strtab", false },
};

/* Load path as the recorder (cfi) or precord export (symbols) does:
 * the error (negative errno), 0 when loaded. */
static int load(const char *path, bool cfi)
{
	int fd = open(path, O_RDONLY), err;

	if (fd < 0)
		return -errno;
	if (cfi) {
		struct cfi_table t;

		err = cfi_table__build(fd, path, 1u << 20, &t);
		cfi_table__free(&t);
	} else {
		struct symtab *st = symtab__load_elf(fd, path);

		err = st ? 0 : -errno;
		symtab__free(st);
	}
	close(fd);
	return err;
}

TEST(fixtures_load)
{
	CHECK_EQ(load(fixture_eh, true), 0);
	CHECK_EQ(load(fixture_debug, true), 0);
	CHECK_EQ(load(fixture_eh, false), 0);
}

TEST(sparse_refused)
{
	char path[PATH_MAX];

	for (size_t k = 0; k < 2 * sizeof(victims) / sizeof(victims[0]); k++) {
		const struct victim *v = &victims[k / 2];
		uint64_t claim = claims[k % 2];
		long before, after;
		int err;

		snprintf(path, sizeof(path), "%s/sparse%s%s", tmpdir, v->section,
			 v->fixture == fixture_debug ? "-debug" : "");
		CHECK_EQ(make_sparse(v->fixture, path, v->section, claim), 0);
		harness_hwm_reset();
		before = harness_status_kb("VmRSS:");
		err = load(path, v->cfi);
		after = harness_status_kb("VmHWM:");
		printf("# %s of %llu MiB (%s): %d, peak RSS +%ld KB\n", v->section,
		       (unsigned long long)(claim >> 20), v->cfi ? "unwind table" : "symbols", err,
		       after - before);
		if (err != -EFBIG || after - before >= RSS_MAX_KB)
			fprintf(stderr, "  %s: %d (want %d), +%ld KB\n", v->section, err, -EFBIG,
				after - before);
		CHECK_EQ(err, -EFBIG);
		CHECK(before > 0 && after - before < RSS_MAX_KB);
		unlink(path);
	}
}

int main(int argc, char **argv)
{
	(void)argc;
	log_verbosity = getenv("SPARSE_TEST_VERBOSE") ? 2 : -1;
	elf_version(EV_CURRENT);
	harness_fixture(argv[0], "cfi_fixture.so", fixture_eh, sizeof(fixture_eh));
	harness_fixture(argv[0], "cfi_fixture_debug.so", fixture_debug, sizeof(fixture_debug));
	return HARNESS_WITH_TMPDIR(tmpdir, {
		RUN(fixtures_load);
		RUN(sparse_refused);
	});
}
