// SPDX-License-Identifier: GPL-2.0
/*
 * The unwind table of one ELF file (cfi_table.h): its FDEs listed and
 * checked by cfi_scan, then for each FDE the rules at each of its rows
 * asked from libdw (dwarf_cfi_addrframe at the row's first address gives
 * the rules and the range [start, end) they hold for; the next row starts
 * at end) and classified by cfi_row.  docs/unwinding.md has the format
 * and the measured cost.
 */
#include "unwind/cfi_table.h"

#include <dwarf.h>
#include <elf.h>
#include <elfutils/libdw.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "elf/headers.h"
#include "elf/sections.h"
#include "unwind/cfi_row.h"
#include "unwind/cfi_scan.h"
#include "util/array.h"
#include "util/clock.h"
#include "util/log.h"
#include "util/printable.h"

#define EXEC_RANGE_MAX	(1ull << 32)	/* row pcs are u32 */

/*
 * Interpreting budget of one file, in bytes of CFA program run by libdw
 * (cfi_fde.work summed): well above any real file (see
 * docs/unwinding.md) and bounded, so a section of FDEs each just under
 * CFI_SCAN_FDE_WORK cannot keep precord busy for minutes.
 */
#define FILE_WORK_MAX	(256ull << 20)

struct cfi_build {
	char *name;
	int fd;				/* a dup of the caller's: libelf preads it */
	struct elf_reads rd;		/* what libelf may read of the file */
	struct cfi_table own, *t;
	size_t cap, max_rows;
	__u64 top;			/* end of the executable range */
	int err;
	/* what the rows are built from (cfi_build__start) */
	Elf *elf;
	Dwarf *dw;			/* .debug_frame's */
	Dwarf_CFI *cfi;			/* .eh_frame's (dwarf_cfi_end) or dw's */
	struct cfi_scan s;		/* its FDEs, sorted by start */
	/* where cfi_build__step goes on */
	size_t next;			/* FDE to start */
	bool in_fde;			/* walking [addr, hi) of FDE next - 1 */
	__u64 addr, hi, cursor, work;
	size_t nr_overlap, nr_outside, nr_budget;
	bool done;
};

static int fail(const char *name, int err, const char *what, const char *why)
{
	char shown[PRINTABLE_MAX];

	printable(shown, sizeof(shown), name);
	if (err == -ENOENT || err == -E2BIG)	/* E2BIG: the caller says it */
		pr_debug("%s: no unwind table: %s%s%s", shown, what, why ? ": " : "", why ? why : "");
	else
		pr_warn("%s: no unwind table for --call-graph ehframe: %s%s%s", shown, what,
			why ? ": " : "", why ? why : "");
	return err;
}

/* The section sh may be read (elf/sections.h), or the file is refused. */
static int admit(struct cfi_build *b, const GElf_Shdr *sh, __u64 cap, const char *sec)
{
	if (!elf_reads__admit(&b->rd, sh, cap))
		return 0;
	return fail(b->name, -EFBIG, sec, b->rd.why);
}

static int segments_read(Elf *elf, struct cfi_build *b)
{
	struct cfi_table *t = b->t;
	size_t phnum, cap = 0;
	__u64 lo = UINT64_MAX, hi = 0;

	if (elf_getphdrnum(elf, &phnum))
		return fail(b->name, -EINVAL, "reading its program headers", elf_errmsg(-1));
	for (size_t i = 0; i < phnum; i++) {
		GElf_Phdr ph;

		if (!gelf_getphdr(elf, (int)i, &ph))
			return fail(b->name, -EINVAL, "reading its program headers", elf_errmsg(-1));
		if (ph.p_type != PT_LOAD || !(ph.p_flags & PF_X) || !ph.p_memsz)
			continue;
		if (ph.p_vaddr + ph.p_memsz < ph.p_vaddr || ph.p_filesz > ph.p_memsz)
			return fail(b->name, -EINVAL, "an executable segment wraps around", NULL);
		if (ARRAY_GROW(t->segs, cap, t->nr_segs + 1))
			return -ENOMEM;
		t->segs[t->nr_segs++] = (struct cfi_segment){ ph.p_vaddr, ph.p_offset, ph.p_filesz };
		if (ph.p_vaddr < lo)
			lo = ph.p_vaddr;
		if (ph.p_vaddr + ph.p_memsz > hi)
			hi = ph.p_vaddr + ph.p_memsz;
	}
	if (!t->nr_segs)
		return fail(b->name, -ENOENT, "no executable PT_LOAD segment", NULL);
	if (hi - lo > EXEC_RANGE_MAX)
		return fail(b->name, -EINVAL, "its executable segments span more than 4 GiB", NULL);
	t->base = lo;
	b->top = hi;
	return 0;
}

/* Append the row for the addresses from vaddr on, merged with an equal
 * predecessor. */
static void row_add(struct cfi_build *b, __u64 vaddr, const struct prec_unwind_row *r)
{
	struct cfi_table *t = b->t;
	struct prec_unwind_row *last = t->nr_rows ? &t->rows[t->nr_rows - 1] : NULL;
	__u32 pc = (__u32)(vaddr - t->base);

	if (b->err)
		return;
	if (last && last->cfa_kind == r->cfa_kind && last->cfa_off == r->cfa_off &&
	    last->bp_off == r->bp_off)
		return;
	if (last && last->pc == pc) {		/* an empty range before: replaced */
		struct prec_unwind_row *prev = t->nr_rows > 1 ? last - 1 : NULL;

		if (prev && prev->cfa_kind == r->cfa_kind && prev->cfa_off == r->cfa_off &&
		    prev->bp_off == r->bp_off) {
			t->nr_rows--;		/* now equal to the one before */
			return;
		}
		*last = *r;
		last->pc = pc;
		return;
	}
	if (t->nr_rows >= b->max_rows) {
		b->err = -E2BIG;
		return;
	}
	if (ARRAY_GROW(t->rows, b->cap, t->nr_rows + 1)) {
		b->err = -ENOMEM;
		return;
	}
	t->rows[t->nr_rows] = *r;
	t->rows[t->nr_rows++].pc = pc;
}

static void none_add(struct cfi_build *b, __u64 vaddr)
{
	struct prec_unwind_row none = { .cfa_kind = PREC_CFA_NONE };

	row_add(b, vaddr, &none);
}

/* The row at b->addr, inside the FDE being walked; b->in_fde ends with
 * the FDE. */
static void fde_row(struct cfi_build *b)
{
	struct prec_unwind_row row;
	Dwarf_Frame *frame = NULL;
	Dwarf_Addr start, end;
	bool signal = false;

	if (dwarf_cfi_addrframe(b->cfi, b->addr, &frame)) {
		/* libdw refused the program from here on (or found no FDE:
		 * the section ended before this one's CIE) */
		pr_debug("%s: no CFI rules at %#llx: %s", b->name,
			 (unsigned long long)b->addr, dwarf_errmsg(-1));
		b->t->nr_unsupported++;
		none_add(b, b->addr);
		b->in_fde = false;
		return;
	}
	dwarf_frame_info(frame, &start, &end, &signal);
	if (!cfi_row__classify(frame, signal, &row))
		b->t->nr_unsupported++;
	free(frame);
	row_add(b, b->addr, &row);
	if (end <= b->addr)	/* libdw ends a range past the address asked */
		b->in_fde = false;
	b->addr = end;
	if (b->addr >= b->hi)
		b->in_fde = false;
}

static int cmp_fde(const void *a, const void *b)
{
	const struct cfi_fde *x = a, *y = b;

	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	return x->off < y->off ? -1 : x->off > y->off;
}

/* The next FDE: its rows are walked (in_fde), or it gets a NONE row or
 * nothing. */
static void fde_next(struct cfi_build *b)
{
	const struct cfi_fde *f = &b->s.fdes[b->next++];
	struct cfi_table *t = b->t;
	__u64 lo = f->start > t->base ? f->start : t->base;
	__u64 hi = f->end < b->top ? f->end : b->top;

	if (lo >= hi) {
		b->nr_outside++;
		return;
	}
	if (lo < b->cursor) {	/* overlaps an earlier FDE: that one's rows stay */
		b->nr_overlap++;
		lo = b->cursor;
		if (lo >= hi)
			return;
	}
	if (b->cursor && lo > b->cursor)
		none_add(b, b->cursor);
	b->work += f->work;
	if (f->skip || b->work > FILE_WORK_MAX) {
		b->nr_budget += !f->skip;
		t->nr_unsupported++;
		none_add(b, lo);
	} else {
		b->in_fde = true;
		b->addr = lo;
		b->hi = hi;
	}
	b->cursor = hi;
}

/*
 * Rows until the FDEs end (0 or -errno) or the clock passes deadline
 * (-EAGAIN; 0: none), looked at before each row but the first: a row is one
 * dwarf_cfi_addrframe, at most CFI_SCAN_FDE_WORK bytes of CFA program.
 */
static int rows_step(struct cfi_build *b, __u64 deadline)
{
	bool first = true;	/* a step makes a row at least: it always goes on */

	while (!b->err && (b->in_fde || b->next < b->s.nr_fdes)) {
		if (!first && deadline && clock_ns(CLOCK_MONOTONIC) >= deadline)
			return -EAGAIN;
		first = false;
		if (b->in_fde)
			fde_row(b);
		else
			fde_next(b);
	}
	if (b->cursor)
		none_add(b, b->cursor);
	if (b->err == -E2BIG)
		return fail(b->name, -E2BIG, "more rows than the limit", NULL);
	if (b->nr_overlap || b->nr_outside || b->nr_budget || b->s.nr_skipped)
		pr_debug("%s: unwind table: %zu FDEs overlap others, %zu outside the executable "
			 "segments, %zu skipped by the checks, %zu past the work budget",
			 b->name, b->nr_overlap, b->nr_outside, b->s.nr_skipped, b->nr_budget);
	return b->err;
}

/* Sections as dwarf_getcfi_elf finds them: the first .eh_frame, the last
 * .eh_frame_hdr before it; and the first .debug_frame. */
struct sections {
	Elf_Scn *eh, *hdr, *debug;
	GElf_Shdr eh_sh, hdr_sh;
	size_t shstrndx;
	bool zdebug;		/* GNU-compressed debug sections (not read) */
};

static int sections_find(Elf *elf, struct cfi_build *b, struct sections *sc)
{
	size_t shstrndx;
	Elf_Scn *scn = NULL;
	GElf_Shdr sh;

	memset(sc, 0, sizeof(*sc));
	if (elf_getshdrstrndx(elf, &shstrndx))
		return fail(b->name, -EINVAL, "reading its section headers", elf_errmsg(-1));
	sc->shstrndx = shstrndx;
	/* elf_strptr reads the whole section names table */
	scn = shstrndx ? elf_getscn(elf, shstrndx) : NULL;
	if (!scn || !gelf_getshdr(scn, &sh))
		return fail(b->name, -EINVAL, "reading its section names", elf_errmsg(-1));
	if (admit(b, &sh, ELF_READ_MAX_OTHER, "its section names (.shstrtab)"))
		return -EFBIG;
	scn = NULL;
	while ((scn = elf_nextscn(elf, scn))) {
		const char *n;

		if (!gelf_getshdr(scn, &sh) || !(n = elf_strptr(elf, shstrndx, sh.sh_name)))
			continue;
		if (!strncmp(n, ".zdebug", 7))
			sc->zdebug = true;
		if (!sc->eh && !strcmp(n, ".eh_frame_hdr")) {
			sc->hdr = scn, sc->hdr_sh = sh;
		} else if (!sc->eh && !strcmp(n, ".eh_frame")) {
			if (sh.sh_type == SHT_NOBITS)
				sc->eh = (Elf_Scn *)-1;	/* libdw stops there too */
			else
				sc->eh = scn, sc->eh_sh = sh;
		} else if (!sc->debug && !strcmp(n, ".debug_frame") && sh.sh_type != SHT_NOBITS) {
			sc->debug = scn;
		}
	}
	if (sc->eh == (Elf_Scn *)-1)
		sc->eh = NULL;
	return 0;
}

/*
 * Check the entries of d (scan) and end the section where they stop
 * being well formed, so that libdw's own linear scan stops there too.
 * d->d_buf is libelf's private copy of the section (ELF_C_READ: read with
 * pread into memory it allocated, never mmap'd), so writing it is safe
 * and changes what libdw reads.
 */
static int scan_and_fence(struct cfi_build *b, Elf_Data *d, __u64 vaddr, bool eh,
			  struct cfi_scan *s)
{
	const char *sec = eh ? ".eh_frame" : ".debug_frame";
	int err = cfi_scan__run(s, d->d_buf, d->d_size, vaddr, eh);

	if (err)
		return err;
	if (s->bad_why) {
		pr_warn("%s: %s: malformed entry at offset %#zx (%s): its unwind rows and the "
			"%zu bytes after it are not used", b->name, sec, s->end, s->bad_why,
			d->d_size - s->end);
		if (d->d_size - s->end >= 4)
			memset((char *)d->d_buf + s->end, 0, 4);
	}
	return 0;
}

/*
 * The .eh_frame_hdr search table would let libdw jump to any offset it
 * names; with it disabled libdw finds FDEs by reading the checked
 * entries in order (once: it keeps them in a tree).  The header is
 * rewritten as "version 1, a 4-byte eh_frame_ptr, no table".
 */
static bool hdr_disable(Elf_Scn *hdr, const Elf_Data *eh)
{
	Elf_Data *d = hdr ? elf_rawdata(hdr, NULL) : NULL;
	const char *p, *q;

	if (!d || !d->d_buf)
		return true;	/* libdw will not use it either */
	p = d->d_buf;
	q = eh->d_buf;
	if (p < q + eh->d_size && q < p + d->d_size)
		return false;	/* shares bytes with .eh_frame: refuse */
	if (d->d_size < 8)
		return false;	/* libdw would refuse the whole CFI */
	((__u8 *)d->d_buf)[0] = 1;
	((__u8 *)d->d_buf)[1] = DW_EH_PE_udata4;
	((__u8 *)d->d_buf)[2] = DW_EH_PE_omit;
	return true;
}

/* .eh_frame checked and handed to libdw: b->s and b->cfi. */
static int prepare_eh(Elf *elf, struct cfi_build *b, const struct sections *sc)
{
	Elf_Data *d;
	int err;

	/* libdw reads both, with elf_rawdata, as we do */
	if (admit(b, &sc->eh_sh, ELF_READ_MAX_CFI, ".eh_frame"))
		return -EFBIG;
	if (sc->hdr && admit(b, &sc->hdr_sh, ELF_READ_MAX_CFI, ".eh_frame_hdr"))
		return -EFBIG;
	d = elf_rawdata(sc->eh, NULL);
	if (d && !d->d_size)
		return -ENOENT;		/* empty: try .debug_frame */
	if (!d || !d->d_buf)
		return fail(b->name, -EINVAL, "reading .eh_frame", elf_errmsg(-1));
	err = scan_and_fence(b, d, sc->eh_sh.sh_addr, true, &b->s);
	if (err)
		return err;
	if (!b->s.nr_fdes) {		/* an empty .eh_frame: try .debug_frame */
		cfi_scan__free(&b->s);
		return -ENOENT;
	}
	if (!hdr_disable(sc->hdr, d))
		return fail(b->name, -EINVAL, "malformed .eh_frame_hdr", NULL);
	b->cfi = dwarf_getcfi_elf(elf);
	if (!b->cfi)
		return fail(b->name, -EINVAL, "libdw cannot read .eh_frame", dwarf_errmsg(-1));
	return 0;
}

/* A section dwarf_begin_elf reads whole (and inflates): libdw's
 * dwarf_scnnames, their .dwo and LTO forms, .gnu_debugaltlink. */
static bool libdw_reads(const char *n)
{
	return !strncmp(n, ".debug", 6) || !strncmp(n, ".zdebug", 7) ||
	       !strncmp(n, ".gnu.debuglto_", 14) || !strcmp(n, ".gnu_debugaltlink");
}

static int debug_admit(Elf *elf, struct cfi_build *b, const struct sections *sc)
{
	Elf_Scn *scn = NULL;

	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		const char *n;

		if (!gelf_getshdr(scn, &sh) || !(n = elf_strptr(elf, sc->shstrndx, sh.sh_name)))
			continue;
		if (libdw_reads(n) && admit(b, &sh, !strcmp(n, ".debug_frame") ? ELF_READ_MAX_CFI :
					    ELF_READ_MAX_OTHER, "a section libdw reads with .debug_frame"))
			return -EFBIG;
	}
	return 0;
}

/* .debug_frame checked and handed to libdw: b->s, b->dw and b->cfi. */
static int prepare_debug(Elf *elf, struct cfi_build *b, const struct sections *sc)
{
	Elf_Data *d;
	int err;

	if (sc->zdebug)
		return fail(b->name, -EINVAL, "GNU-compressed (.zdebug) sections, not read", NULL);
	err = debug_admit(elf, b, sc);
	if (err)
		return err;
	b->dw = dwarf_begin_elf(elf, DWARF_C_READ, NULL);
	if (!b->dw)
		return fail(b->name, -EINVAL, "libdw cannot read its DWARF", dwarf_errmsg(-1));
	/* the (inflated) data dwarf_begin_elf keeps for .debug_frame */
	d = elf_getdata(sc->debug, NULL);
	if (d && !d->d_size)
		return fail(b->name, -ENOENT, "an empty .debug_frame", NULL);
	if (!d || !d->d_buf)
		return fail(b->name, -EINVAL, "reading .debug_frame", elf_errmsg(-1));
	err = scan_and_fence(b, d, 0, false, &b->s);	/* libdw: frame_vaddr 0 */
	if (err)
		return err;
	b->cfi = dwarf_getcfi(b->dw);
	if (!b->cfi)
		return fail(b->name, -EINVAL, "libdw cannot read .debug_frame", dwarf_errmsg(-1));
	return 0;
}

/* What libdw and libelf hold for b goes. */
static void sources_end(struct cfi_build *b)
{
	if (b->dw)
		dwarf_end(b->dw);	/* and the CFI it made */
	else if (b->cfi)
		dwarf_cfi_end(b->cfi);
	b->dw = NULL;
	b->cfi = NULL;
	cfi_scan__free(&b->s);
	if (b->elf)
		elf_end(b->elf);
	b->elf = NULL;
	if (b->fd >= 0)
		close(b->fd);
	b->fd = -1;
}

void cfi_build__free(struct cfi_build *b)
{
	if (!b)
		return;
	sources_end(b);
	cfi_table__free(&b->own);
	free(b->name);
	free(b);
}

/* Everything but the rows: the file's checks, its segments, its CFI
 * checked and handed to libdw, the FDEs sorted. */
static int prepare(struct cfi_build *b)
{
	struct cfi_table *t = b->t;
	struct sections sc;
	GElf_Ehdr eh;
	int err;

	if (elf_version(EV_CURRENT) == EV_NONE)
		return fail(b->name, -EINVAL, "libelf", elf_errmsg(-1));
	err = elf_headers_check_fd(b->fd);
	if (err)
		return fail(b->name, err == -E2BIG ? -EINVAL : err == -ENOEXEC ? -EINVAL : err,
			    "not a well-formed ELF file", NULL);
	/* ELF_C_READ, not _MMAP: a file truncated while it is read gives an
	 * error, not SIGBUS; and the section copies are ours to fence. */
	b->elf = elf_begin(b->fd, ELF_C_READ, NULL);
	if (!b->elf || elf_kind(b->elf) != ELF_K_ELF || !gelf_getehdr(b->elf, &eh))
		return fail(b->name, -EINVAL, "libelf cannot read it", elf_errmsg(-1));
	if (eh.e_ident[EI_CLASS] != ELFCLASS64 || eh.e_ident[EI_DATA] != ELFDATA2LSB ||
	    eh.e_machine != EM_X86_64)
		return fail(b->name, -EINVAL, "not an x86-64 ELF file (the only kind read)", NULL);
	if (elf_reads__init_fd(&b->rd, b->elf, b->fd))
		return fail(b->name, -EINVAL, "not a regular file", NULL);
	err = segments_read(b->elf, b);
	if (!err)
		err = sections_find(b->elf, b, &sc);
	if (err)
		return err;
	err = sc.eh ? prepare_eh(b->elf, b, &sc) : -ENOENT;
	if (err == -ENOENT && sc.debug) {
		t->from_debug_frame = true;
		err = prepare_debug(b->elf, b, &sc);
	} else if (err == -ENOENT) {
		err = fail(b->name, -ENOENT, "no FDE in .eh_frame or .debug_frame", NULL);
	}
	if (!err && b->s.nr_fdes)
		qsort(b->s.fdes, b->s.nr_fdes, sizeof(*b->s.fdes), cmp_fde);
	return err;
}

int cfi_build__start(int fd, const char *name, size_t max_rows, struct cfi_build **out)
{
	struct cfi_build *b = calloc(1, sizeof(*b));
	int err;

	*out = NULL;
	if (!b || !(b->name = strdup(name ? name : "an ELF file"))) {
		free(b);
		return -ENOMEM;
	}
	b->t = &b->own;
	b->max_rows = max_rows;
	b->fd = fd >= 0 ? fcntl(fd, F_DUPFD_CLOEXEC, 3) : -1;
	err = b->fd < 0 ? fail(b->name, -EBADF, "its descriptor", strerror(errno)) : prepare(b);
	if (err) {
		cfi_build__free(b);
		return err;
	}
	*out = b;
	return 0;
}

int cfi_build__step(struct cfi_build *b, __u64 deadline_ns, struct cfi_table *t)
{
	int err;

	if (b->done)
		return -EINVAL;
	err = rows_step(b, deadline_ns);
	if (err == -EAGAIN)
		return err;
	b->done = true;
	if (!err && !b->t->nr_rows)
		err = fail(b->name, -ENOENT, "no FDE covers its executable segments", NULL);
	sources_end(b);
	if (err) {
		cfi_table__free(&b->own);
		return err;
	}
	*t = b->own;
	memset(&b->own, 0, sizeof(b->own));
	return 0;
}

int cfi_table__build(int fd, const char *name, size_t max_rows, struct cfi_table *t)
{
	struct cfi_build *b;
	int err;

	memset(t, 0, sizeof(*t));
	err = cfi_build__start(fd, name, max_rows, &b);
	if (!err)
		err = cfi_build__step(b, 0, t);
	cfi_build__free(b);
	return err;
}

void cfi_table__free(struct cfi_table *t)
{
	if (!t)
		return;
	free(t->rows);
	free(t->segs);
	memset(t, 0, sizeof(*t));
}

const struct prec_unwind_row *cfi_table__lookup(const struct cfi_table *t, __u64 vaddr)
{
	size_t lo = 0, hi;
	__u64 pc;

	if (!t || !t->nr_rows || vaddr < t->base || vaddr - t->base >= EXEC_RANGE_MAX)
		return NULL;
	pc = vaddr - t->base;
	hi = t->nr_rows;
	while (lo < hi) {		/* the first row past pc */
		size_t mid = lo + (hi - lo) / 2;

		if (t->rows[mid].pc <= pc)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo ? &t->rows[lo - 1] : NULL;
}
