// SPDX-License-Identifier: GPL-2.0
/*
 * Fuzz target for the symbolizer's ELF input (report/symtab.c): an ELF
 * file in one reused memfd, made sparse by the input's first four bytes
 * (little endian: the low 20 bits are 4 KiB pages of hole after the
 * data, up to 4 GiB; bit 31: the file is also its own debug file), so
 * section sizes and offsets can point far into holes; huge counts and
 * overlapping sections come from the mutations.  The table must stay
 * within bytes proportional to the data (a hole has no symbols and no
 * names), every lookup must return a symbol holding the address, and
 * the same bytes read from memory must give the same table size.
 *
 * Seeds (tests/fuzz/corpus/symbolizer_elf): a small shared library with
 * a .symtab and its hostile variants (see docs/fuzzing.md); go-stripped:
 * a 1.5 KB static ELF of 0x300 bytes of .text at 0x401000 with the
 * unit test's Go 1.18 table (tests/fuzz/corpus/gopclntab/go118-le64) as
 * its .gopclntab (objcopy --add-section) and no .symtab (strip), for the
 * stripped-Go path (elf/gosyms.c).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "report/symtab.h"
#include "util/log.h"

#define HOLE_PAGE	4096ull

static int memfd = -1;

static void check(const struct symtab *t, const uint8_t *data, size_t size, size_t holes)
{
	/* a symbol is 24 bytes of the file (ELF64) at least, its name in it */
	if (symtab__bytes(t) > 4096 + 16 * (size + 1) + holes / 64)
		abort();
	for (size_t i = 0; i + 8 <= size && i < 256; i += 8) {
		__u64 addr;
		const struct sym *s;

		memcpy(&addr, data + i, 8);
		s = symtab__find(t, addr);
		if (s && (addr < s->start || (s->end > s->start && addr >= s->end) || !s->name))
			abort();
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct symtab *t, *m;
	uint32_t head = 0;
	size_t holes;

	log_verbosity = -1;
	if (size < 4)
		return 0;
	memcpy(&head, data, 4);
	data += 4;
	size -= 4;
	holes = (size_t)((head & 0xfffff) * HOLE_PAGE);
	if (memfd < 0)
		memfd = memfd_create("elf", MFD_CLOEXEC);
	/* the last input's bytes past this one cut off, then the hole */
	if (memfd < 0 || pwrite(memfd, data, size, 0) != (ssize_t)size ||
	    ftruncate(memfd, (off_t)size) || (holes && ftruncate(memfd, (off_t)(size + holes))))
		return 0;
	t = (head & 0x80000000u) ? symtab__load_elf_debug(memfd, memfd, "fuzz")
				 : symtab__load_elf(memfd, "fuzz");
	if (t)
		check(t, data, size, holes);
	if (!holes) {
		m = symtab__load_elf_mem(data, size, "fuzz");
		if (!(head & 0x80000000u) && (!m != !t || (m && symtab__nr(m) != symtab__nr(t))))
			abort();	/* the file and the same bytes in memory differ */
		symtab__free(m);
	}
	symtab__free(t);
	return 0;
}
