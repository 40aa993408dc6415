// SPDX-License-Identifier: GPL-2.0
/*
 * The unwind-table builder (user/unwind/cfi_table.c):
 *  - the fixture tests/unit/fixtures/cfi_fixture.S (built by the Makefile
 *    into $(BUILD)/fixtures/, with .eh_frame and with .debug_frame only)
 *    against rows computed by hand, at every byte;
 *  - libc, this test binary (gcc -O2: no frame pointers) and the fixture
 *    against libdw itself: at every address of their executable segments
 *    the table's row must be the one classified here, independently of the
 *    builder, from dwarf_cfi_addrframe at that address (libdw's own
 *    .eh_frame_hdr lookup, which the builder does not use);
 *  - hostile variants of the fixture: each fails cleanly or keeps the
 *    good entries;
 *  - the cost: libc and ten other libraries, rows, ms, bytes per MB;
 *  - a build in steps (cfi_build__step) against an expired deadline:
 *    it stops after each unit (a piece of a section read or checked, of
 *    the sort, of libdw's list of entries, a row) and goes on, and makes
 *    the one-shot table (libc, python3, the workloads, the fixtures, a
 *    file of the most expensive FDEs cfi_scan lets through, the hostile
 *    variants, a 64 MiB .eh_frame of reversed FDEs); freed after any
 *    step, it leaks nothing (ASan); its start reads headers only;
 *  - section names with no NUL after the last one (libelf's elf_strptr
 *    scanned the table for each): the rows and about the CPU time of the
 *    same file whose names end with a NUL.
 */
#include <dwarf.h>
#include <elf.h>
#include <elfutils/libdw.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <limits.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <ucontext.h>
#include <zlib.h>
#include <unistd.h>

#include "harness.h"
#include "../workloads/hostile_unwind_elf.h"
#include "unwind/cfi_scan.h"
#include "unwind/cfi_table.h"
#include "util/log.h"

#define MAX_ROWS	(1u << 22)

static char fixture_eh[PATH_MAX], fixture_debug[PATH_MAX];

enum { SP = PREC_CFA_SP, BP = PREC_CFA_BP, PLT = PREC_CFA_PLT, SIG = PREC_CFA_SIGNAL,
       END = PREC_CFA_END, NONE = PREC_CFA_NONE };

/* The fixture's rows by hand: from sym + off up to the next line's
 * offset (or the symbol's end). */
static const struct fixture_row {
	const char *sym;
	unsigned off;
	int kind, cfa_off, bp_off;
} fixture_rows[] = {
	{ "f_frame", 0, SP, 8, 0 },
	{ "f_frame", 1, SP, 16, -2 },
	{ "f_frame", 4, BP, 16, -2 },
	{ "f_frame", 9, SP, 8, 0 },
	{ "f_gap", 0, NONE, 0, 0 },
	{ "f_nofp", 0, SP, 8, 0 },
	{ "f_nofp", 1, SP, 16, -2 },
	{ "f_nofp", 5, SP, 40, -2 },
	{ "f_nofp", 10, SP, 16, -2 },
	{ "f_nofp", 11, SP, 8, 0 },
	{ "f_outer", 0, END, 0, 0 },
	{ "f_plt", 0, SP, 16, 0 },
	{ "f_plt", 6, SP, 24, 0 },
	{ "f_plt", 16, PLT, 11, 0 },
	{ "f_bpexpr", 0, SP, 8, 0 },
	{ "f_bpexpr", 1, SP, 16, -2 },
	{ "f_bpexpr", 4, BP, 16, -2 },
	{ "f_bpexpr", 7, SP, 8, -2 },
	{ "f_unsup", 0, SP, 8, 0 },
	{ "f_unsup", 1, NONE, 0, 0 },	/* CFA = *(rsp + 8) */
	{ "f_unsup", 2, SP, 8, 0 },
	{ "f_unsup", 3, NONE, 0, 0 },	/* return address at CFA - 16 */
	{ "f_unsup", 4, NONE, 0, 0 },	/* rbp in rbx */
	{ "f_unsup", 5, NONE, 0, 0 },	/* CFA offset 40000 */
	{ "f_unsup", 6, NONE, 0, 0 },	/* rbp at CFA - 2048 */
	{ "f_unsup", 7, SP, 16, -2 },
	{ "f_unsup", 8, NONE, 0, 0 },	/* CFA on rbx */
	{ "f_signal", 0, SIG, 160, 0 },
	{ "f_sigplain", 0, NONE, 0, 0 },
	{ "f_last", 0, SP, 8, 0 },
	{ "f_tail", 0, NONE, 0, 0 },
};

/* NONE rows of the fixture made by unsupported rules: f_unsup's six
 * and f_sigplain. */
#define FIXTURE_UNSUPPORTED	7

static int sym_find(const char *path, const char *name, GElf_Addr *addr, GElf_Xword *size)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC), ret = -ENOENT;
	Elf *elf;
	Elf_Scn *scn = NULL;

	if (fd < 0)
		return -errno;
	elf = elf_begin(fd, ELF_C_READ, NULL);
	while (elf && ret && (scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		Elf_Data *d;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_SYMTAB || !(d = elf_getdata(scn, NULL)))
			continue;
		for (size_t i = 0; i < sh.sh_size / sh.sh_entsize; i++) {
			GElf_Sym s;
			const char *n;

			if (!gelf_getsym(d, (int)i, &s) || !(n = elf_strptr(elf, sh.sh_link, s.st_name)))
				continue;
			if (!strcmp(n, name)) {
				*addr = s.st_value;
				*size = s.st_size;
				ret = 0;
				break;
			}
		}
	}
	if (elf)
		elf_end(elf);
	close(fd);
	return ret;
}

static int build_path(const char *path, struct cfi_table *t)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC), err;

	if (fd < 0)
		return -errno;
	err = cfi_table__build(fd, path, MAX_ROWS, t);
	close(fd);
	return err;
}

static bool row_is(const struct prec_unwind_row *r, int kind, int cfa_off, int bp_off)
{
	return r && r->cfa_kind == kind && r->cfa_off == cfa_off && r->bp_off == bp_off;
}

static void fixture_check(const char *path, bool debug_frame)
{
	struct cfi_table t;
	size_t n = sizeof(fixture_rows) / sizeof(fixture_rows[0]);

	CHECK_EQ(build_path(path, &t), 0);
	CHECK_EQ(t.from_debug_frame, debug_frame);
	CHECK_EQ(t.nr_unsupported, FIXTURE_UNSUPPORTED);
	CHECK(t.nr_segs >= 1);
	for (size_t i = 0; i < n; i++) {
		const struct fixture_row *e = &fixture_rows[i];
		GElf_Addr a = 0;
		GElf_Xword size = 0;
		unsigned to;

		if (sym_find(path, e->sym, &a, &size)) {
			CHECK(!"fixture symbol missing");
			continue;
		}
		to = i + 1 < n && !strcmp(fixture_rows[i + 1].sym, e->sym) ?
		     fixture_rows[i + 1].off : (unsigned)size;
		for (unsigned off = e->off; off < to; off++) {
			const struct prec_unwind_row *r = cfi_table__lookup(&t, a + off);

			if (!row_is(r, e->kind, e->cfa_off, e->bp_off)) {
				fprintf(stderr, "  %s: %s+%u: got kind %d cfa %d bp %d, want %d %d %d\n",
					path, e->sym, off, r ? r->cfa_kind : -1, r ? r->cfa_off : 0,
					r ? r->bp_off : 0, e->kind, e->cfa_off, e->bp_off);
				CHECK(!"fixture row");
			}
		}
	}
	/* sorted, merged, pcs relative to the lowest executable vaddr */
	for (size_t i = 1; i < t.nr_rows; i++) {
		CHECK(t.rows[i - 1].pc < t.rows[i].pc);
		CHECK(!row_is(&t.rows[i], t.rows[i - 1].cfa_kind, t.rows[i - 1].cfa_off,
			      t.rows[i - 1].bp_off));
	}
	for (size_t i = 0; i < t.nr_segs; i++)
		CHECK(t.segs[i].vaddr >= t.base);
	CHECK(cfi_table__lookup(&t, t.base - 1) == NULL);
	cfi_table__free(&t);
	CHECK_EQ(t.nr_rows, 0);
	cfi_table__free(&t);
	cfi_table__free(NULL);
}

TEST(fixture_eh_frame)
{
	fixture_check(fixture_eh, false);
}

TEST(fixture_debug_frame)
{
	fixture_check(fixture_debug, true);
}

/* The kernel's frame as glibc's ucontext_t mirrors it (cfi_row.c). */
TEST(sigframe_layout)
{
	CHECK_EQ(offsetof(ucontext_t, uc_mcontext.gregs[REG_RSP]), 160);
	CHECK_EQ(offsetof(ucontext_t, uc_mcontext.gregs[REG_RIP]), 168);
	CHECK_EQ(offsetof(ucontext_t, uc_mcontext.gregs[REG_RBP]), 120);
}

/*
 * The oracle: the row at one address from libdw's rules, written apart
 * from user/unwind/cfi_row.c.
 */
static void oracle_row(Dwarf_Frame *fr, bool sig, struct prec_unwind_row *r)
{
	static const int plt[] = { DW_OP_breg7, DW_OP_breg16, DW_OP_lit15, DW_OP_and, -1,
				   DW_OP_ge, DW_OP_lit3, DW_OP_shl, DW_OP_plus };
	Dwarf_Op mem[3], *ops;
	size_t n;
	long long off, k;
	int kind;

	memset(r, 0, sizeof(*r));
	r->cfa_kind = NONE;
	if (dwarf_frame_info(fr, NULL, NULL, NULL) != 16 ||
	    dwarf_frame_register(fr, 16, mem, &ops, &n))
		return;
	if (n == 0 && ops != NULL) {
		r->cfa_kind = END;
		return;
	}
	if (dwarf_frame_cfa(fr, &ops, &n) || n == 0)
		return;
	if (sig) {
		if (n == 2 && ops[0].atom == DW_OP_breg7 && ops[0].number == 160 &&
		    ops[1].atom == DW_OP_deref) {
			r->cfa_kind = SIG;
			r->cfa_off = 160;
		}
		return;
	}
	if (n == 1 && ops[0].atom == DW_OP_bregx && (ops[0].number == 6 || ops[0].number == 7)) {
		kind = ops[0].number == 7 ? SP : BP;
		off = (long long)ops[0].number2;
	} else if (n == 1 && (ops[0].atom == DW_OP_breg6 || ops[0].atom == DW_OP_breg7)) {
		kind = ops[0].atom == DW_OP_breg7 ? SP : BP;
		off = (long long)ops[0].number;
	} else if (n == 9) {
		for (size_t i = 0; i < 9; i++)
			if (plt[i] >= 0 && ops[i].atom != plt[i])
				return;
		if (ops[0].number != 8 || ops[1].number ||
		    ops[4].atom < DW_OP_lit0 || ops[4].atom > DW_OP_lit31)
			return;
		kind = PLT;
		off = ops[4].atom - DW_OP_lit0;
	} else {
		return;
	}
	if (off < -32768 || off > 32767)
		return;
	if (dwarf_frame_register(fr, 16, mem, &ops, &n) || n != 2 ||
	    ops[0].atom != DW_OP_call_frame_cfa || ops[1].atom != DW_OP_plus_uconst ||
	    (long long)ops[1].number != -8)
		return;
	if (dwarf_frame_register(fr, 6, mem, &ops, &n))
		return;
	if (ops == NULL && n == 0) {
		k = 0;
	} else if (n == 2 && ops[0].atom == DW_OP_call_frame_cfa &&
		   ops[1].atom == DW_OP_plus_uconst) {
		k = (long long)ops[1].number;
		if (k % 8 || k / 8 < -128 || k / 8 > 127)
			return;
		k /= 8;
	} else {
		return;
	}
	r->cfa_kind = (__u8)kind;
	r->cfa_off = (__s16)off;
	r->bp_off = (__s8)k;
}

/* Every address of path's executable segments: table == oracle. */
static void oracle_check(const char *path)
{
	struct cfi_table t;
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	Elf *elf = NULL;
	Dwarf_CFI *cfi = NULL;
	size_t phnum = 0, addrs = 0, bad = 0, none = 0, nocfi = 0;

	CHECK(fd >= 0);
	if (fd < 0)
		return;
	CHECK_EQ(cfi_table__build(fd, path, MAX_ROWS, &t), 0);
	elf = elf_begin(fd, ELF_C_READ, NULL);
	CHECK(elf != NULL);
	if (elf)
		cfi = dwarf_getcfi_elf(elf);
	CHECK(cfi != NULL);
	if (elf)
		elf_getphdrnum(elf, &phnum);
	for (size_t i = 0; cfi && i < phnum; i++) {
		GElf_Phdr ph;
		struct prec_unwind_row want = { .cfa_kind = NONE };
		Dwarf_Addr lo = 1, hi = 0;	/* range of want */
		bool have = false;

		if (!gelf_getphdr(elf, (int)i, &ph) || ph.p_type != PT_LOAD || !(ph.p_flags & PF_X))
			continue;
		for (Dwarf_Addr a = ph.p_vaddr; a < ph.p_vaddr + ph.p_memsz; a++) {
			const struct prec_unwind_row *got = cfi_table__lookup(&t, a);

			addrs++;
			if (a < lo || a >= hi) {
				Dwarf_Frame *fr = NULL;
				bool sig = false;

				have = !dwarf_cfi_addrframe(cfi, a, &fr);
				if (have) {
					dwarf_frame_info(fr, &lo, &hi, &sig);
					oracle_row(fr, sig, &want);
					free(fr);
				} else {
					lo = 1, hi = 0;
				}
			}
			if (!have) {
				nocfi++;
				if (got && got->cfa_kind != NONE)
					goto mismatch;
				continue;
			}
			none += want.cfa_kind == NONE;
			if (row_is(got, want.cfa_kind, want.cfa_off, want.bp_off))
				continue;
mismatch:
			if (bad++ < 10)
				fprintf(stderr, "  %s: %#lx: table kind %d cfa %d bp %d, libdw %s%d %d %d\n",
					path, (unsigned long)a, got ? got->cfa_kind : -1,
					got ? got->cfa_off : 0, got ? got->bp_off : 0,
					have ? "" : "(no FDE) ", want.cfa_kind, want.cfa_off,
					want.bp_off);
		}
	}
	CHECK(addrs > 0);
	CHECK_EQ(bad, 0);
	printf("# %s: %zu addresses agree with libdw (%zu without FDE, %zu NONE), %zu rows, "
	       "%zu unsupported\n", path, addrs - bad, nocfi, none, t.nr_rows, t.nr_unsupported);
	if (cfi)
		dwarf_cfi_end(cfi);
	if (elf)
		elf_end(elf);
	close(fd);
	cfi_table__free(&t);
}

/* The C library this test runs with, from its own mappings. */
static int libc_path(char *buf, size_t size)
{
	FILE *f = fopen("/proc/self/maps", "re");
	char line[PATH_MAX + 128];
	int ret = -ENOENT;

	if (!f)
		return -errno;
	while (ret && fgets(line, sizeof(line), f)) {
		char *p = strchr(line, '/');

		if (p && strstr(p, "/libc.so.6")) {
			p[strcspn(p, "\n")] = 0;
			snprintf(buf, size, "%s", p);
			ret = 0;
		}
	}
	fclose(f);
	return ret;
}

TEST(libc_against_libdw)
{
	char path[PATH_MAX];

	CHECK_EQ(libc_path(path, sizeof(path)), 0);
	oracle_check(path);
}

TEST(self_against_libdw)
{
	char path[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", path, sizeof(path) - 1);

	CHECK(n > 0);
	if (n <= 0)
		return;
	path[n] = 0;
	oracle_check(path);
}

TEST(fixture_against_libdw)
{
	oracle_check(fixture_eh);
}


/*
 * Hostile variants of the fixture, made in memory and built from a memfd.
 * `test_cfi_table --write-corpus DIR` writes them (and the fixtures) as
 * the seed corpus of tests/fuzz/fuzz_cfi.c.
 */
struct image {
	unsigned char *p;
	size_t len;
	size_t eh_off, eh_size, eh_shdr;	/* .eh_frame: data, its section header */
	size_t hdr_off, hdr_size;
};

static int image_load(const char *path, struct image *im)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	struct stat st;
	Elf *elf;
	Elf_Scn *scn = NULL;
	size_t shstrndx;

	memset(im, 0, sizeof(*im));
	if (fd < 0 || fstat(fd, &st))
		return -1;
	im->len = (size_t)st.st_size;
	im->p = malloc(im->len);
	if (!im->p || pread(fd, im->p, im->len, 0) != (ssize_t)im->len) {
		close(fd);
		return -1;
	}
	elf = elf_begin(fd, ELF_C_READ, NULL);
	if (elf && !elf_getshdrstrndx(elf, &shstrndx)) {
		GElf_Ehdr eh;

		gelf_getehdr(elf, &eh);
		while ((scn = elf_nextscn(elf, scn))) {
			GElf_Shdr sh;
			const char *n;

			if (!gelf_getshdr(scn, &sh) || !(n = elf_strptr(elf, shstrndx, sh.sh_name)))
				continue;
			if (!strcmp(n, ".eh_frame")) {
				im->eh_off = sh.sh_offset;
				im->eh_size = sh.sh_size;
				im->eh_shdr = eh.e_shoff + elf_ndxscn(scn) * sizeof(Elf64_Shdr);
			} else if (!strcmp(n, ".eh_frame_hdr")) {
				im->hdr_off = sh.sh_offset;
				im->hdr_size = sh.sh_size;
			}
		}
	}
	if (elf)
		elf_end(elf);
	close(fd);
	return im->eh_off && im->hdr_off ? 0 : -1;
}

static int build_mem(const unsigned char *p, size_t len, struct cfi_table *t, double *ms)
{
	int fd = memfd_create("cfi", MFD_CLOEXEC), err = -EIO;
	struct timespec a, b;

	if (fd < 0)
		return -errno;
	if (pwrite(fd, p, len, 0) == (ssize_t)len) {
		clock_gettime(CLOCK_MONOTONIC, &a);
		err = cfi_table__build(fd, "hostile", MAX_ROWS, t);
		clock_gettime(CLOCK_MONOTONIC, &b);
		*ms = (double)(b.tv_sec - a.tv_sec) * 1e3 + (double)(b.tv_nsec - a.tv_nsec) / 1e6;
	}
	close(fd);
	return err;
}

static void put32(unsigned char *p, uint32_t v)
{
	memcpy(p, &v, 4);
}

static uint32_t get32(const unsigned char *p)
{
	uint32_t v;

	memcpy(&v, p, 4);
	return v;
}

/* Offset in .eh_frame of entry k (0: the first CIE). */
static size_t entry_off(const struct image *im, int k)
{
	size_t off = 0;

	while (k-- > 0)
		off += 4 + get32(im->p + im->eh_off + off);
	return off;
}

static unsigned char *find(const struct image *im, const void *what, size_t n)
{
	return memmem(im->p + im->eh_off, im->eh_size, what, n);
}

enum expect { KEEP_ALL, KEEP_FRAME, FAIL };

struct hostile {
	const char *name;
	enum expect expect;
	size_t len;		/* the image cut to this (0: whole) */
};

/* Apply hostile case i to a copy of the fixture; false when out of cases. */
static bool hostile_make(const struct image *fx, int i, struct image *im, struct hostile *h)
{
	static const unsigned char unsup[] = { 0x0f, 0x03, 0x77, 0x08, 0x06 };
	static const unsigned char bigreg[] = { 0x07, 0x80, 0x80, 0x80, 0x3f };
	unsigned char *e = NULL;

	*im = *fx;
	im->p = malloc(fx->len);
	memcpy(im->p, fx->p, fx->len);
	e = im->p + im->eh_off;
	memset(h, 0, sizeof(*h));
	switch (i) {
	case 0:	/* cut inside .eh_frame: libelf cannot read the section */
		*h = (struct hostile){ "truncated-eh-frame", FAIL, im->eh_off + 40 };
		break;
	case 1:
		*h = (struct hostile){ "truncated-headers", FAIL, 100 };
		break;
	case 2:	/* the second FDE's length runs past the section */
		*h = (struct hostile){ "fde-length-past-end", KEEP_FRAME, 0 };
		put32(e + entry_off(im, 2), 0xfffffff0u);
		break;
	case 3:	/* the second FDE's CIE pointer points before the section */
		*h = (struct hostile){ "cie-pointer-outside", KEEP_FRAME, 0 };
		put32(e + entry_off(im, 2) + 4, 0x7fffffffu);
		break;
	case 4:	/* .eh_frame of size 0 (and no .debug_frame) */
		*h = (struct hostile){ "zero-length-eh-frame", FAIL, 0 };
		memset(im->p + im->eh_shdr + offsetof(Elf64_Shdr, sh_size), 0, 8);
		break;
	case 5:	/* .eh_frame_hdr claims 2^31 FDEs */
		*h = (struct hostile){ "hdr-huge-fde-count", KEEP_ALL, 0 };
		put32(im->p + im->hdr_off + 8, 0x7fffffffu);
		break;
	case 6:	/* .eh_frame_hdr's table names offsets inside entries */
		*h = (struct hostile){ "hdr-table-garbage", KEEP_ALL, 0 };
		for (size_t o = 12; o + 4 <= im->hdr_size; o += 8)
			put32(im->p + im->hdr_off + o + 4, 0x11u * (uint32_t)o);
		break;
	case 7:
		*h = (struct hostile){ "class32", FAIL, 0 };
		im->p[EI_CLASS] = ELFCLASS32;
		break;
	case 8:
		*h = (struct hostile){ "big-endian", FAIL, 0 };
		im->p[EI_DATA] = ELFDATA2MSB;
		break;
	case 9:
		*h = (struct hostile){ "aarch64", FAIL, 0 };
		im->p[offsetof(Elf64_Ehdr, e_machine)] = EM_AARCH64;
		im->p[offsetof(Elf64_Ehdr, e_machine) + 1] = 0;
		break;
	case 10: /* "zR" -> "zP": a personality pointer that does not fit */
		*h = (struct hostile){ "cie-augmentation-overlong", FAIL, 0 };
		e = find(im, "zR", 3);
		if (e)
			e[1] = 'P';
		break;
	case 11: /* a rule for register 132,120,576 (libdw: a 2 GB array) */
		*h = (struct hostile){ "huge-register", KEEP_FRAME, 0 };
		e = find(im, unsup, sizeof(unsup));
		if (e)
			memcpy(e, bigreg, sizeof(bigreg));
		break;
	case 12: /* the last FDE's range: 4 GiB */
		*h = (struct hostile){ "fde-range-huge", KEEP_FRAME, 0 };
		put32(e + entry_off(im, 10) + 12, 0xffffffffu);
		break;
	case 13: /* a terminator right at the start */
		*h = (struct hostile){ "terminator-first", FAIL, 0 };
		put32(e, 0);
		break;
	default:
		free(im->p);
		im->p = NULL;
		return false;
	}
	if (h->len)
		im->len = h->len;
	return true;
}

TEST(hostile)
{
	struct image fx, im;
	struct hostile h;
	GElf_Addr frame = 0, last = 0;
	GElf_Xword size;

	CHECK_EQ(image_load(fixture_eh, &fx), 0);
	CHECK_EQ(sym_find(fixture_eh, "f_frame", &frame, &size), 0);
	CHECK_EQ(sym_find(fixture_eh, "f_plt", &last, &size), 0);
	for (int i = 0; fx.p && hostile_make(&fx, i, &im, &h); i++) {
		struct cfi_table t;
		double ms = 0;
		int err = build_mem(im.p, im.len, &t, &ms);
		const struct prec_unwind_row *r = cfi_table__lookup(&t, frame + 4);

		printf("# hostile %s: %d, %zu rows, %.2f ms\n", h.name, err, t.nr_rows, ms);
		CHECK(ms < 1000);
		if (h.expect == FAIL) {
			CHECK(err == -EINVAL || err == -ENOENT);
			CHECK_EQ(t.nr_rows, 0);
		} else {
			CHECK_EQ(err, 0);
			CHECK(row_is(r, BP, 16, -2));	/* f_frame's rows kept */
			r = cfi_table__lookup(&t, last + 16);
			if (h.expect == KEEP_ALL)
				CHECK(row_is(r, PLT, 11, 0));
		}
		for (size_t k = 1; k < t.nr_rows; k++)
			CHECK(t.rows[k - 1].pc < t.rows[k].pc);
		cfi_table__free(&t);
		free(im.p);
	}
	free(fx.p);
}

/* --write-corpus DIR: the fixtures and the hostile variants as seeds. */
static int write_corpus(const char *dir)
{
	const char *srcs[] = { fixture_eh, fixture_debug };
	const char *names[] = { "fixture-eh-frame", "fixture-debug-frame" };
	struct image fx, im;
	struct hostile h;
	char path[PATH_MAX];
	int err = 0;

	for (int i = 0; i < 2; i++) {
		int fd = open(srcs[i], O_RDONLY | O_CLOEXEC);
		struct stat st;
		char *buf;

		if (fd < 0 || fstat(fd, &st) || !(buf = malloc((size_t)st.st_size)))
			return 1;
		snprintf(path, sizeof(path), "%s/%s", dir, names[i]);
		FILE *f = fopen(path, "we");

		err |= !f || pread(fd, buf, (size_t)st.st_size, 0) != st.st_size ||
		       fwrite(buf, 1, (size_t)st.st_size, f) != (size_t)st.st_size;
		if (f)
			fclose(f);
		free(buf);
		close(fd);
	}
	if (image_load(fixture_eh, &fx))
		return 1;
	for (int i = 0; hostile_make(&fx, i, &im, &h); i++) {
		snprintf(path, sizeof(path), "%s/hostile-%s", dir, h.name);
		FILE *f = fopen(path, "we");

		err |= !f || fwrite(im.p, 1, im.len, f) != im.len;
		if (f)
			fclose(f);
		free(im.p);
	}
	free(fx.p);
	{	/* FDEs in reverse address order: the merge sort */
		static const struct hu_elf rev = { .nr_fdes = 40, .rows = 3, .reverse = 1, .id = 11 };
		unsigned char buf[8192];
		size_t len = hu_elf_write(buf, sizeof(buf), &rev);
		FILE *f;

		snprintf(path, sizeof(path), "%s/reversed-fdes", dir);
		f = fopen(path, "we");
		err |= !len || !f || fwrite(buf, 1, len, f) != len;
		if (f)
			fclose(f);
	}
	return err;
}


static size_t eh_frame_size(const char *path)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	Elf *elf = fd >= 0 ? elf_begin(fd, ELF_C_READ, NULL) : NULL;
	Elf_Scn *scn = NULL;
	size_t shstrndx, size = 0;

	while (elf && !elf_getshdrstrndx(elf, &shstrndx) && (scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		const char *n;

		if (gelf_getshdr(scn, &sh) && (n = elf_strptr(elf, shstrndx, sh.sh_name)) &&
		    !strcmp(n, ".eh_frame"))
			size = sh.sh_size;
	}
	if (elf)
		elf_end(elf);
	if (fd >= 0)
		close(fd);
	return size;
}

/*
 * The cost at start-up of a process with libc and ten other libraries:
 * the libraries this test has mapped, then common ones, eleven in all.
 */
TEST(cost)
{
	static const char *const common[] = {
		"libstdc++.so.6", "libm.so.6", "libgcc_s.so.1", "libcrypto.so.3",
		"libssl.so.3", "libsystemd.so.0", "libglib-2.0.so.0", "libcurl.so.4",
		"libxml2.so.2", "libsqlite3.so.0", "libpython3.11.so.1.0",
	};
	char paths[11][PATH_MAX], line[PATH_MAX + 128];
	size_t n = 0, rows = 0, eh = 0;
	double total = 0;
	FILE *f = fopen("/proc/self/maps", "re");

	CHECK_EQ(libc_path(paths[n], sizeof(paths[n])), 0);
	n++;
	while (f && n < 11 && fgets(line, sizeof(line), f)) {
		char *p = strchr(line, '/');
		bool seen = false;

		if (!p || !strstr(p, ".so"))
			continue;
		p[strcspn(p, "\n")] = 0;
		for (size_t i = 0; i < n; i++)
			seen |= !strcmp(paths[i], p);
		if (!seen)
			snprintf(paths[n++], PATH_MAX, "%s", p);
	}
	if (f)
		fclose(f);
	for (size_t i = 0; i < sizeof(common) / sizeof(common[0]) && n < 11; i++) {
		char p[PATH_MAX];
		bool seen = false;

		snprintf(p, sizeof(p), "/usr/lib/x86_64-linux-gnu/%s", common[i]);
		for (size_t k = 0; k < n; k++)
			seen |= !strcmp(paths[k], p);
		if (!seen && !access(p, R_OK))
			snprintf(paths[n++], PATH_MAX, "%s", p);
	}
	for (size_t i = 0; i < n; i++) {
		struct cfi_table t;
		struct timespec a, b;
		size_t ehs = eh_frame_size(paths[i]);
		double ms;
		int err;

		clock_gettime(CLOCK_MONOTONIC, &a);
		err = build_path(paths[i], &t);
		clock_gettime(CLOCK_MONOTONIC, &b);
		ms = (double)(b.tv_sec - a.tv_sec) * 1e3 + (double)(b.tv_nsec - a.tv_nsec) / 1e6;
		CHECK_EQ(err, 0);
		printf("# cost %-48s %7zu rows %7.2f ms  .eh_frame %8zu B  table %8zu B  %6.0f KB/MB\n",
		       paths[i], t.nr_rows, ms, ehs, t.nr_rows * sizeof(*t.rows),
		       ehs ? (double)(t.nr_rows * sizeof(*t.rows)) / 1024 / ((double)ehs / 1048576) : 0);
		total += ms;
		rows += t.nr_rows;
		eh += ehs;
		cfi_table__free(&t);
	}
	printf("# cost: %zu files, %zu rows, %.1f ms, %zu B of table for %zu B of .eh_frame "
	       "(%.0f KB per MB)\n", n, rows, total, rows * sizeof(struct prec_unwind_row), eh,
	       eh ? (double)(rows * sizeof(struct prec_unwind_row)) / 1024 / ((double)eh / 1048576) : 0);
	CHECK_EQ(n, 11);
	CHECK(total < 5000);	/* a regression to seconds, not a benchmark */
}

static const char *extra_path;

TEST(extra_against_libdw)
{
	oracle_check(extra_path);
}


/*
 * The file open at fd built in steps, each with an expired deadline (one
 * unit a step: a piece of a section read or checked, of the sort, of
 * libdw's list, or a row), and at once: the same result (the error, or
 * the same table).  Returns the steps.
 */
static size_t steps_vs_once_fd(int fd, const char *name)
{
	struct cfi_table once = { 0 }, stepped = { 0 };
	struct cfi_build *b = NULL;
	size_t steps = 0;
	int err, err1 = cfi_table__build(fd, name, MAX_ROWS, &once);

	err = cfi_build__start(fd, name, MAX_ROWS, &b);
	if (!err)
		do
			err = cfi_build__step(b, 1, &stepped);	/* 1 ns: long passed */
		while (++steps < 50u << 20 && err == -EAGAIN);
	cfi_build__free(b);
	CHECK_EQ(err, err1);
	CHECK_EQ(stepped.nr_rows, once.nr_rows);
	CHECK_EQ(stepped.nr_unsupported, once.nr_unsupported);
	CHECK_EQ(stepped.base, once.base);
	CHECK_EQ(stepped.nr_segs, once.nr_segs);
	CHECK_EQ(stepped.from_debug_frame, once.from_debug_frame);
	CHECK(!once.nr_rows || !memcmp(stepped.rows, once.rows, once.nr_rows * sizeof(*once.rows)));
	CHECK(!once.nr_segs || !memcmp(stepped.segs, once.segs, once.nr_segs * sizeof(*once.segs)));
	cfi_table__free(&once);
	cfi_table__free(&stepped);
	return steps;
}

static size_t steps_vs_once(const char *path)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	size_t steps;

	CHECK(fd >= 0);
	if (fd < 0)
		return 0;
	steps = steps_vs_once_fd(fd, path);
	close(fd);		/* the builds keep their own descriptors */
	return steps;
}

/* Builds of fd stopped after k steps and freed, for k from 0 to the end
 * or to limit (every k up to first, then every `every`th): nothing leaks
 * (ASan), however far it went.  Returns the steps of a whole build (0:
 * past limit). */
static size_t free_anywhere(int fd, const char *name, size_t first, size_t every, size_t limit)
{
	size_t total = 0;

	for (size_t k = 0; k <= limit; k = k < first ? k + 1 : k + every) {
		struct cfi_build *b = NULL;
		struct cfi_table t = { 0 };
		int err = cfi_build__start(fd, name, MAX_ROWS, &b);
		size_t i = 0;

		while (!err && i < k) {
			i++;
			if ((err = cfi_build__step(b, 1, &t)) == -EAGAIN)
				err = 0;
			else if (!err)
				break;		/* done */
		}
		cfi_build__free(b);
		cfi_table__free(&t);
		if (!b || i < k) {		/* ended before k steps */
			total = i;
			break;
		}
	}
	return total;
}

/* A file of hu_elf o in a temporary file (path: a mkstemp template): its
 * descriptor, or -1. */
static int hu_file(const struct hu_elf *o, char *path)
{
	size_t cap = (size_t)o->nr_fdes * (o->rows * 5 + o->pad + 24) + (1u << 20), len;
	unsigned char *buf = malloc(cap);
	int fd = -1;

	len = buf ? hu_elf_write(buf, cap, o) : 0;
	if (len && (fd = mkstemp(path)) >= 0 && write(fd, buf, len) != (ssize_t)len) {
		close(fd);
		fd = -1;
	}
	free(buf);
	return fd;
}

/* Workloads (make all's build/workloads) with CFI: real files the
 * recorder builds tables for in the tests. */
static const char *const workloads[] = { "nofp", "libnofp.so", "workload", "nofp-exc" };
static char workload_dir[PATH_MAX - 64];

TEST(build_in_steps)
{
	static const struct hu_elf costly = { .nr_fdes = 20, .rows = 900, .remember = 1, .id = 7 };
	char path[PATH_MAX], tmp[] = "/tmp/precord-cfi-XXXXXX";
	struct cfi_build *b = NULL;
	struct cfi_table t = { 0 };
	size_t steps;
	int fd;

	CHECK_EQ(libc_path(path, sizeof(path)), 0);
	steps = steps_vs_once(path);
	printf("# libc: %zu steps\n", steps);
	CHECK(steps > 1000);		/* a step a row, about */
	/* python3 and its library, the workloads, the .debug_frame fixture */
	{
		const char *more[] = { "/usr/bin/python3", "/usr/lib/x86_64-linux-gnu/libpython3.11.so.1.0",
				       fixture_debug, fixture_eh };

		for (size_t i = 0; i < sizeof(more) / sizeof(more[0]); i++)
			if (!access(more[i], R_OK))
				printf("# %s: %zu steps\n", more[i], steps_vs_once(more[i]));
		for (size_t i = 0; i < sizeof(workloads) / sizeof(workloads[0]); i++) {
			snprintf(path, sizeof(path), "%s/%s", workload_dir, workloads[i]);
			CHECK_EQ(access(path, R_OK), 0);
			printf("# %s: %zu steps\n", path, steps_vs_once(path));
		}
	}
	/* FDEs of 900 rows whose programs libdw runs from their start: the
	 * deadline stops a build inside an FDE too */
	fd = hu_file(&costly, tmp);
	CHECK(fd >= 0);
	steps = steps_vs_once_fd(fd, tmp);
	printf("# %u FDEs of %u rows: %zu steps\n", costly.nr_fdes, costly.rows, steps);
	CHECK(steps >= (size_t)costly.nr_fdes * costly.rows);
	/* freed half-way: nothing leaks (ASan), the descriptor is closed */
	CHECK_EQ(cfi_build__start(fd, tmp, MAX_ROWS, &b), 0);
	CHECK_EQ(cfi_build__step(b, 1, &t), -EAGAIN);
	cfi_build__free(b);
	close(fd);
	unlink(tmp);
	/* a file that is no ELF fails at the start, as cfi_table__build does */
	fd = open("/proc/self/cmdline", O_RDONLY | O_CLOEXEC);
	CHECK(fd >= 0);
	CHECK_EQ(cfi_build__start(fd, "cmdline", MAX_ROWS, &b), -EINVAL);
	CHECK(b == NULL);
	close(fd);
}

/* Freed after any number of steps, in every phase: libc, the
 * .debug_frame fixture, the costly file, the hostile variants. */
TEST(free_at_any_step)
{
	static const struct hu_elf costly = { .nr_fdes = 4, .rows = 300, .remember = 1, .id = 9 };
	char path[PATH_MAX], tmp[] = "/tmp/precord-cfi-XXXXXX";
	struct image fx, im;
	struct hostile h;
	int fd;

	CHECK_EQ(libc_path(path, sizeof(path)), 0);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	CHECK(fd >= 0);
	printf("# libc: %zu steps\n", free_anywhere(fd, path, 64, 997, SIZE_MAX));
	close(fd);
	fd = open(fixture_debug, O_RDONLY | O_CLOEXEC);
	CHECK(fd >= 0);
	CHECK(free_anywhere(fd, fixture_debug, 64, 1, SIZE_MAX) > 4);
	close(fd);
	fd = hu_file(&costly, tmp);
	CHECK(fd >= 0);
	CHECK(free_anywhere(fd, tmp, 64, 7, SIZE_MAX) > costly.nr_fdes * costly.rows);
	close(fd);
	unlink(tmp);
	CHECK_EQ(image_load(fixture_eh, &fx), 0);
	for (int i = 0; fx.p && hostile_make(&fx, i, &im, &h); i++) {
		int m = memfd_create("cfi", MFD_CLOEXEC);

		CHECK(m >= 0 && pwrite(m, im.p, im.len, 0) == (ssize_t)im.len);
		free_anywhere(m, h.name, 64, 1, SIZE_MAX);
		steps_vs_once_fd(m, h.name);
		close(m);
		free(im.p);
	}
	free(fx.p);
}

/*
 * The hostile file of the most costly start: a 64 MiB .eh_frame of
 * CFI_SCAN_MAX_ENTRIES entries of 256 bytes, the FDEs in reverse address
 * order (sorted, and listed by libdw before the first row).  The start
 * reads none of it (RSS: less than 4 MiB more); each step with an expired deadline does one unit, so the
 * build takes thousands of steps before its first row, and the stepped
 * table is the one-shot one.  Forward order too (no sort), and the build
 * freed in each phase.
 */
TEST(huge_eh_frame_in_steps)
{
	struct hu_elf o = { .nr_fdes = CFI_SCAN_MAX_ENTRIES - 1, .rows = 1, .pad = 239,
			    .reverse = 1, .id = 10 };
	struct cfi_build *b = NULL;
	struct cfi_table t = { 0 };
	char tmp[] = "/tmp/precord-cfi-XXXXXX";
	long before, after;
	size_t steps, rows_steps;
	struct stat st;
	int fd = hu_file(&o, tmp);

	(void)t;

	CHECK(fd >= 0);
	CHECK(!fstat(fd, &st) && st.st_size > (60 << 20));
	before = harness_status_kb("VmRSS:");
	CHECK_EQ(cfi_build__start(fd, tmp, MAX_ROWS, &b), 0);
	after = harness_status_kb("VmRSS:");
	printf("# start: RSS +%ld KB for a %lld-byte file\n", after - before, (long long)st.st_size);
	CHECK(after - before < (4 << 10));	/* headers only */
	cfi_build__free(b);
	steps = steps_vs_once_fd(fd, tmp);
	/* a step a row: two an FDE (its start, its row) */
	rows_steps = 2 * (size_t)o.nr_fdes;
	printf("# %u FDEs of 256 bytes, reverse order: %zu steps, %zu before the rows\n",
	       o.nr_fdes, steps, steps - rows_steps);
	/* 64 read, 256 scanned, 64 listed by libdw, 32 merge passes at least */
	CHECK(steps > rows_steps + 64 + 256 + 64 + 32);
	/* freed in each phase before the rows (read, scan, sort, libdw's
	 * list): after 0 to 7 steps, then every 61st to 900 */
	free_anywhere(fd, tmp, 8, 61, 900);
	close(fd);
	unlink(tmp);
	o.reverse = 0;
	strcpy(tmp, "/tmp/precord-cfi-XXXXXX");
	fd = hu_file(&o, tmp);
	CHECK(fd >= 0);
	steps = steps_vs_once_fd(fd, tmp);
	printf("# forward order: %zu steps\n", steps);
	CHECK(steps > rows_steps + 64 + 256 + 64);
	close(fd);
	unlink(tmp);
}

/*
 * An FDE cfi_scan skips (a rule for register 132,120,576) overlapping the
 * second row of the FDE before it, then a third FDE: libdw's tree (all
 * entries listed before the rows) had the skipped FDE at its root, gave
 * it for the walked FDE's second row and ran its program: 1 GB and 3 s.
 * Its CIE pointer is now made to name no CIE in libdw's copy.
 */
TEST(skipped_fde_overlapping)
{
	static const unsigned char bigreg[] = { 0x07, 0x80, 0x80, 0x80, 0x3f, 0, 0 };
	struct hu_elf o = { .nr_fdes = 3, .rows = 3, .id = 12 };
	unsigned char buf[16384];
	size_t len = hu_elf_write(buf, sizeof(buf), &o);
	const Elf64_Ehdr *eh = (const void *)buf;
	const Elf64_Shdr *sh = (const Elf64_Shdr *)(buf + eh->e_shoff) + 3;	/* .eh_frame */
	/* FDE 1 (24 bytes each, after the 24-byte CIE): from HU_TEXT + 1 */
	unsigned char *g = buf + sh->sh_offset + 48;
	uint32_t start = (uint32_t)(HU_TEXT + 1 - (sh->sh_addr + 56));
	const struct prec_unwind_row *r;
	struct cfi_table t;
	double ms;
	long before, after;
	int err;

	CHECK(len > 0);
	memcpy(g + 8, &start, 4);
	memcpy(g + 17, bigreg, sizeof(bigreg));
	harness_hwm_reset();
	before = harness_status_kb("VmHWM:");
	err = build_mem(buf, len, &t, &ms);
	after = harness_status_kb("VmHWM:");
	printf("# %d, %zu rows, %.2f ms, peak RSS +%ld KB\n", err, t.nr_rows, ms, after - before);
	CHECK_EQ(err, 0);
	CHECK(after - before < (64 << 10));
	r = cfi_table__lookup(&t, HU_TEXT + 1);	/* FDE 0's second row */
	CHECK(r && r->cfa_kind == PREC_CFA_SP && r->cfa_off == 16);
	cfi_table__free(&t);
}

/*
 * The .debug_frame fixture with its .debug_frame replaced by a zlib
 * compressed (SHF_COMPRESSED) one of data (len bytes inflated; its header
 * claims claim bytes), appended to the file: a memfd, or -1.
 */
static int zdebug_make(const unsigned char *data, size_t len, size_t claim)
{
	size_t flen, zlen = compressBound(len);
	unsigned char *p = harness_slurp(fixture_debug, &flen), *z = malloc(sizeof(Elf64_Chdr) + zlen);
	Elf64_Ehdr *eh = (Elf64_Ehdr *)p;
	Elf64_Chdr ch = { .ch_type = ELFCOMPRESS_ZLIB, .ch_size = claim, .ch_addralign = 8 };
	uLongf got = zlen;
	int fd = -1;

	if (p && z && compress2(z + sizeof(ch), &got, data, len, 9) == Z_OK) {
		Elf64_Shdr *sh = (Elf64_Shdr *)(p + eh->e_shoff);
		const char *names = (const char *)p + sh[eh->e_shstrndx].sh_offset;

		memcpy(z, &ch, sizeof(ch));
		for (size_t i = 0; i < eh->e_shnum; i++)
			if (!strcmp(names + sh[i].sh_name, ".debug_frame")) {
				sh[i].sh_offset = (flen + 7) & ~(size_t)7;
				sh[i].sh_size = sizeof(ch) + got;
				sh[i].sh_flags |= SHF_COMPRESSED;
			}
		fd = memfd_create("zdebug", MFD_CLOEXEC);
		if (fd >= 0 && (pwrite(fd, p, flen, 0) != (ssize_t)flen ||
				pwrite(fd, z, sizeof(ch) + got, (off_t)((flen + 7) & ~(size_t)7)) !=
					(ssize_t)(sizeof(ch) + got))) {
			close(fd);
			fd = -1;
		}
	}
	free(p);
	free(z);
	return fd;
}

/*
 * A compressed .debug_frame is inflated in steps (a MiB a unit), not by
 * libdw at once: the fixture's, compressed, builds its table in steps as
 * at once; 64 MiB of zeros compressed to 64 KB (222 ms of libdw's
 * inflation in one call before) takes 64 units and more; a stream that
 * inflates to more or less than its header says fails either way.
 */
TEST(compressed_debug_frame_in_steps)
{
	size_t len = 0, big = (64u << 20) - 4096, steps;
	unsigned char *data = NULL, *zeros = calloc(1, big);
	int fd;

	/* the fixture's .debug_frame */
	{
		int f = open(fixture_debug, O_RDONLY | O_CLOEXEC);
		Elf *elf = f >= 0 ? elf_begin(f, ELF_C_READ, NULL) : NULL;
		Elf_Scn *scn = NULL;
		size_t shstrndx;

		while (elf && !elf_getshdrstrndx(elf, &shstrndx) && (scn = elf_nextscn(elf, scn))) {
			GElf_Shdr sh;
			const char *n;
			Elf_Data *d;

			if (gelf_getshdr(scn, &sh) && (n = elf_strptr(elf, shstrndx, sh.sh_name)) &&
			    !strcmp(n, ".debug_frame") && (d = elf_rawdata(scn, NULL))) {
				data = malloc(d->d_size);
				memcpy(data, d->d_buf, d->d_size);
				len = d->d_size;
			}
		}
		if (elf)
			elf_end(elf);
		if (f >= 0)
			close(f);
	}
	CHECK(data != NULL && zeros != NULL);
	if (!data || !zeros)
		return;
	fd = zdebug_make(data, len, len);
	CHECK(fd >= 0);
	steps = steps_vs_once_fd(fd, "zdebug");
	{
		struct cfi_table t;

		CHECK_EQ(cfi_table__build(fd, "zdebug", MAX_ROWS, &t), 0);
		CHECK(t.from_debug_frame && t.nr_rows > 10);
		cfi_table__free(&t);
	}
	printf("# compressed .debug_frame of %zu bytes: %zu steps\n", len, steps);
	close(fd);
	fd = zdebug_make(zeros, big, big);
	CHECK(fd >= 0);
	steps = steps_vs_once_fd(fd, "zeros");
	printf("# 64 MiB of zeros compressed: %zu steps\n", steps);
	CHECK(steps > 64);
	close(fd);
	/* a stream inflating to more or less than its header says */
	for (int d = -1; d <= 1; d += 2) {
		struct cfi_table t;

		fd = zdebug_make(data, len, len + (size_t)d);
		CHECK(fd >= 0);
		CHECK_EQ(cfi_table__build(fd, "zdebug", MAX_ROWS, &t), -EINVAL);
		steps_vs_once_fd(fd, "zdebug");
		close(fd);
	}
	free(data);
	free(zeros);
}

/* cfi_scan in steps of one byte (a piece of an entry a step) lists what
 * one run does, on libc's .eh_frame and a costly file's. */
TEST(scan_in_steps)
{
	struct image im;
	char path[PATH_MAX];
	struct cfi_scan once, s;
	size_t steps = 0;
	int err;

	CHECK_EQ(libc_path(path, sizeof(path)), 0);
	CHECK_EQ(image_load(path, &im), 0);
	CHECK_EQ(cfi_scan__run(&once, im.p + im.eh_off, im.eh_size, im.eh_off, true), 0);
	cfi_scan__begin(&s, im.p + im.eh_off, im.eh_size, im.eh_off, true);
	while ((err = cfi_scan__step(&s, 1)) == -EAGAIN)
		steps++;
	CHECK_EQ(err, 0);
	printf("# libc .eh_frame: %zu FDEs, %zu steps of a byte\n", once.nr_fdes, steps);
	CHECK(steps > once.nr_fdes);
	CHECK_EQ(s.nr_fdes, once.nr_fdes);
	CHECK_EQ(s.end, once.end);
	CHECK_EQ(s.nr_cies, once.nr_cies);
	CHECK_EQ(s.nr_skipped, once.nr_skipped);
	CHECK_EQ(s.nr_empty, once.nr_empty);
	for (size_t i = 0; i < once.nr_fdes && i < s.nr_fdes; i++) {
		const struct cfi_fde *x = &s.fdes[i], *y = &once.fdes[i];

		CHECK(x->start == y->start && x->end == y->end && x->off == y->off &&
		      x->rows == y->rows && x->work == y->work && x->skip == y->skip);
	}
	cfi_scan__free(&s);
	cfi_scan__free(&once);
	/* freed half-way */
	cfi_scan__begin(&s, im.p + im.eh_off, im.eh_size, im.eh_off, true);
	CHECK_EQ(cfi_scan__step(&s, 4096), -EAGAIN);
	cfi_scan__free(&s);
	free(im.p);
}

/* A .eh_frame of 300,000 FDEs: the scan stops at CFI_SCAN_MAX_ENTRIES
 * (the section ends there, as at a malformed entry), the build keeps the
 * rows before it. */
TEST(entries_capped)
{
	static const struct hu_elf many = { .nr_fdes = 300000, .rows = 2, .id = 8 };
	size_t cap = 16u << 20, len;
	unsigned char *buf = malloc(cap);
	const Elf64_Ehdr *eh = (const void *)buf;
	const Elf64_Shdr *sh;
	char tmp[] = "/tmp/precord-cfi-XXXXXX";
	struct cfi_table t = { 0 };
	struct cfi_scan s;
	int fd;

	CHECK(buf != NULL);
	len = hu_elf_write(buf, cap, &many);
	CHECK(len > 0);
	sh = (const void *)(buf + eh->e_shoff + 3 * sizeof(*sh));	/* .eh_frame */
	CHECK_EQ(cfi_scan__run(&s, buf + sh->sh_offset, sh->sh_size, sh->sh_addr, true), 0);
	printf("# %u FDEs: %zu listed, stopped at %zu of %llu bytes: %s\n", many.nr_fdes,
	       s.nr_fdes, s.end, (unsigned long long)sh->sh_size, s.bad_why ? s.bad_why : "-");
	CHECK_EQ(s.nr_fdes + s.nr_cies, CFI_SCAN_MAX_ENTRIES);
	CHECK(s.bad_why != NULL);
	cfi_scan__free(&s);
	fd = mkstemp(tmp);
	CHECK(fd >= 0);
	CHECK_EQ(write(fd, buf, len), (ssize_t)len);
	CHECK_EQ(cfi_table__build(fd, tmp, MAX_ROWS, &t), 0);
	/* 2 rows an FDE, the last FDE's SP 16 and the next one's SP 8: no
	 * merges; then a NONE row where the kept FDEs end */
	CHECK_EQ(t.nr_rows, 2 * (size_t)(CFI_SCAN_MAX_ENTRIES - 1) + 1);
	cfi_table__free(&t);
	close(fd);
	unlink(tmp);
	free(buf);
}

/*
 * Section names (.shstrtab) with no NUL after the last name.  libelf's
 * elf_strptr, which found every section's name until precord read the
 * table itself, checks that a name ends before the table does by looking
 * for a NUL back from the table's end: with no NUL after its names, each
 * name cost the table's size (2,012 sections and a 60 MiB table: 13.2 s,
 * 8.6 s of CPU, at 247f3b4).  Here SHSTR_SECTIONS sections name a
 * SHSTR_SIZE table whose bytes after the names are 'A's up to its last
 * byte; its twin is the same file with that last byte a NUL.  Both must
 * give the same table (one-shot and in steps), and the hostile one must
 * cost no more CPU than a few times its twin's, measured in the same run.
 * The 'A's are on disk: a hole reads as NULs, which would end libelf's
 * scan at once.
 */
#define SHSTR_SECTIONS	2000u
#define SHSTR_SIZE	(16u << 20)
#define SHSTR_PAD_NAME	46	/* ".pad": after hu_elf_write's names */

/* The hostile file at path: hu_elf_write's file, then the new table and
 * SHSTR_SECTIONS section headers (hu's five, then ".pad"s of no bytes).
 * Its descriptor (the table's last byte at *last), or -1. */
static int shstr_file(const char *path, off_t *last)
{
	static const struct hu_elf o = { .nr_fdes = 16, .rows = 4, .id = 13 };
	static const char names[] = "\0.text\0.note.gnu.build-id\0.eh_frame\0.shstrtab\0.pad";
	unsigned char buf[8192], *fill = malloc(1u << 20);
	size_t len = hu_elf_write(buf, sizeof(buf), &o);
	Elf64_Ehdr *eh = (Elf64_Ehdr *)buf;
	Elf64_Shdr *sh = calloc(SHSTR_SECTIONS, sizeof(*sh));
	off_t tab = (off_t)((len + 7) & ~(size_t)7), shoff = tab + SHSTR_SIZE;
	int fd = open(path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600), ok = 1;

	if (fd < 0 || !fill || !sh || !len || sizeof(names) != SHSTR_PAD_NAME + 5) {
		ok = 0;
		goto out;
	}
	memcpy(sh, buf + eh->e_shoff, 5 * sizeof(*sh));
	sh[4].sh_offset = (Elf64_Off)tab;
	sh[4].sh_size = SHSTR_SIZE;
	for (size_t i = 5; i < SHSTR_SECTIONS; i++)
		sh[i] = (Elf64_Shdr){ .sh_name = SHSTR_PAD_NAME, .sh_type = SHT_PROGBITS,
				      .sh_addralign = 1 };
	eh->e_shoff = (Elf64_Off)shoff;
	eh->e_shnum = SHSTR_SECTIONS;
	ok &= pwrite(fd, buf, len, 0) == (ssize_t)len;
	memset(fill, 'A', 1u << 20);
	memcpy(fill, names, sizeof(names));
	for (size_t off = 0; ok && off < SHSTR_SIZE; off += 1u << 20) {
		ok &= pwrite(fd, fill, 1u << 20, tab + (off_t)off) == (ssize_t)(1u << 20);
		memset(fill, 'A', sizeof(names));
	}
	ok &= pwrite(fd, sh, SHSTR_SECTIONS * sizeof(*sh), shoff) ==
	      (ssize_t)(SHSTR_SECTIONS * sizeof(*sh));
	*last = tab + SHSTR_SIZE - 1;
out:
	if (!ok && fd >= 0) {
		close(fd);
		fd = -1;
	}
	free(fill);
	free(sh);
	return fd;
}

static double cpu_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* fd's table built at once three times (the first kept in t): the least
 * CPU seconds one took. */
static double build_cpu(int fd, const char *name, struct cfi_table *t)
{
	double best = 1e9;

	for (int i = 0; i < 3; i++) {
		struct cfi_table x;
		double a = cpu_s();

		CHECK_EQ(cfi_table__build(fd, name, MAX_ROWS, i ? &x : t), 0);
		a = cpu_s() - a;
		if (i)
			cfi_table__free(&x);
		best = a < best ? a : best;
	}
	return best;
}

TEST(shstrtab_without_nul)
{
	char dir[] = "/tmp/precord-shstr-XXXXXX", path[sizeof(dir) + 16];
	struct cfi_table twin = { 0 }, t = { 0 };
	double twin_s, s, bound;
	struct stat st;
	off_t last = 0;
	int fd = -1;

	CHECK(mkdtemp(dir) != NULL);
	snprintf(path, sizeof(path), "%s/names", dir);
	fd = shstr_file(path, &last);
	CHECK(fd >= 0);
	if (fd < 0)
		goto out;
	CHECK(!fstat(fd, &st) && st.st_blocks * 512 >= SHSTR_SIZE);	/* the 'A's on disk */
	/* the twin: its table ends with a NUL */
	CHECK_EQ(pwrite(fd, "", 1, last), 1);
	twin_s = build_cpu(fd, "shstrtab-nul", &twin);
	CHECK(twin.nr_rows > (size_t)16);	/* .eh_frame found by its name */
	/* the hostile file: no NUL after ".pad" */
	CHECK_EQ(pwrite(fd, "A", 1, last), 1);
	s = build_cpu(fd, "shstrtab-no-nul", &t);
	bound = 4 * twin_s + 0.05;	/* 50 ms: a tiny twin's noise */
	printf("# .shstrtab of %u MiB, no NUL after its names, %u sections: %.1f ms of CPU; "
	       "the same ending with a NUL: %.1f ms (bound %.1f ms); %zu rows\n",
	       SHSTR_SIZE >> 20, SHSTR_SECTIONS, s * 1e3, twin_s * 1e3, bound * 1e3, t.nr_rows);
	CHECK(s <= bound);
	/* the same table */
	CHECK_EQ(t.nr_rows, twin.nr_rows);
	CHECK_EQ(t.nr_unsupported, twin.nr_unsupported);
	CHECK_EQ(t.base, twin.base);
	CHECK_EQ(t.nr_segs, twin.nr_segs);
	CHECK_EQ(t.from_debug_frame, twin.from_debug_frame);
	CHECK(t.nr_rows != twin.nr_rows ||
	      !memcmp(t.rows, twin.rows, twin.nr_rows * sizeof(*twin.rows)));
	CHECK(t.nr_segs != twin.nr_segs ||
	      !memcmp(t.segs, twin.segs, twin.nr_segs * sizeof(*twin.segs)));
	/* in steps too: the names read a MiB a step */
	CHECK(steps_vs_once_fd(fd, "shstrtab-no-nul") > SHSTR_SIZE >> 20);
	close(fd);
out:
	cfi_table__free(&t);
	cfi_table__free(&twin);
	unlink(path);
	CHECK_EQ(rmdir(dir), 0);
}

/*
 * --build FILE: FILE's table built at once, "ms <wall ms> rows <rows>"
 * (tests/bats/hostile_unwind.bats: what a build costs on this machine
 * now, beside what a round of a recording ran past its budget).
 */
static int build_once(const char *path)
{
	struct timespec a, b;
	struct cfi_table t;
	int fd = open(path, O_RDONLY | O_CLOEXEC), err;

	if (fd < 0) {
		perror(path);
		return 1;
	}
	clock_gettime(CLOCK_MONOTONIC, &a);
	err = cfi_table__build(fd, path, MAX_ROWS, &t);
	clock_gettime(CLOCK_MONOTONIC, &b);
	printf("ms %.1f rows %zu\n", (double)(b.tv_sec - a.tv_sec) * 1e3 +
	       (double)(b.tv_nsec - a.tv_nsec) / 1e6, t.nr_rows);
	cfi_table__free(&t);
	close(fd);
	return err != 0;
}

int main(int argc, char **argv)
{
	log_verbosity = getenv("CFI_TEST_VERBOSE") ? 2 : -1;
	elf_version(EV_CURRENT);
	harness_fixture(argv[0], "cfi_fixture.so", fixture_eh, sizeof(fixture_eh));
	harness_fixture(argv[0], "cfi_fixture_debug.so", fixture_debug, sizeof(fixture_debug));
	/* build/workloads (make all), for build-san's tests too */
	harness_fixture(argv[0], "../../build/workloads", workload_dir, sizeof(workload_dir));

	if (argc == 3 && !strcmp(argv[1], "--write-corpus"))
		return write_corpus(argv[2]);
	if (argc == 3 && !strcmp(argv[1], "--build"))
		return build_once(argv[2]);
	if (argc > 1) {		/* test_cfi_table FILE...: the oracle on those */
		for (int i = 1; i < argc; i++) {
			extra_path = argv[i];
			RUN(extra_against_libdw);
		}
		return HARNESS_DONE();
	}
	RUN(fixture_eh_frame);
	RUN(fixture_debug_frame);
	RUN(sigframe_layout);
	RUN(fixture_against_libdw);
	RUN(hostile);
	RUN(libc_against_libdw);
	RUN(self_against_libdw);
	RUN(cost);
	RUN(build_in_steps);
	RUN(free_at_any_step);
	RUN(huge_eh_frame_in_steps);
	RUN(scan_in_steps);
	RUN(skipped_fde_overlapping);
	RUN(compressed_debug_frame_in_steps);
	RUN(entries_capped);
	RUN(shstrtab_without_nul);
	return HARNESS_DONE();
}
