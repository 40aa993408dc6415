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
#include <zlib.h>

#include "elf/headers.h"
#include "elf/sections.h"
#include "unwind/cfi_image.h"
#include "unwind/cfi_row.h"
#include "unwind/cfi_scan.h"
#include "util/array.h"
#include "util/clock.h"
#include "util/io.h"
#include "util/le.h"
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

/*
 * A build's phases (cfi_build__step goes through them a unit at a time,
 * the clock read between units):
 *   NAMES	.shstrtab read, READ_CHUNK bytes a unit
 *   FIND	the sections found and admitted, the image set up
 *   READ	the CFI section read into the image, READ_CHUNK bytes a unit
 *		(a compressed .debug_frame into z)
 *   INFLATE	(a compressed .debug_frame: inflated into the image,
 *		READ_CHUNK bytes in and out at most a unit)
 *   OPEN	(.debug_frame: libdw's handle of the image)
 *   SCAN	cfi_scan, SCAN_UNIT bytes of entries a unit; then the fence
 *   CFI	libdw's CFI handle
 *   SORT	the FDEs sorted by start: a pass over them when they are in
 *		order, else a merge sort of SORT_UNIT FDEs a unit
 *   WARM	libdw's list of the entries, WARM_UNIT entries a unit
 *   ROWS	the rows, one libdw evaluation a unit (rows_step)
 *   FREE_LIBDW	libdw's handle ended (its tree of FDEs freed: 11 ms at
 *		CFI_SCAN_MAX_ENTRIES)
 *   FREE	the rest: the section's copy, the file (the 64 MiB image's
 *		munmap: 12 ms)
 * A build that fails goes through the FREE phases too.
 */
enum phase {
	PH_NAMES, PH_FIND, PH_READ, PH_INFLATE, PH_OPEN, PH_SCAN, PH_CFI, PH_SORT, PH_WARM, PH_ROWS,
	PH_FREE_LIBDW, PH_FREE, PH_DONE
};

#define READ_CHUNK	(1u << 20)
#define SCAN_UNIT	(256u << 10)
#define SORT_UNIT	8192u
#define WARM_UNIT	4096u

/* Sections as dwarf_getcfi_elf finds them: the first .eh_frame, the last
 * .eh_frame_hdr before it; and the first .debug_frame. */
struct sections {
	Elf_Scn *eh, *hdr, *debug;
	GElf_Shdr eh_sh, hdr_sh, debug_sh;
	bool zdebug;		/* GNU-compressed debug sections (not read) */
};

struct cfi_build {
	char *name;
	int fd;				/* a dup of the caller's: libelf and precord pread it */
	struct elf_reads rd;		/* what libelf may read of the file */
	struct cfi_table own, *t;
	size_t cap, max_rows;
	__u64 top;			/* end of the executable range */
	int err;
	int result;			/* the build's, from PH_FREE_LIBDW on */
	enum phase ph;
	/* the file's section names (its .shstrtab), read here */
	char *names;
	size_t names_len, names_nul;	/* names end at the last NUL, before names_nul */
	__u64 names_off;
	struct sections sc;
	bool debug;			/* building from .debug_frame */
	/* what the rows are built from */
	Elf *elf;			/* the file's: headers and section headers */
	struct cfi_image img;		/* a copy of its CFI section for libdw */
	__u64 img_off;			/* the section's offset in the file */
	unsigned char *z;		/* a compressed .debug_frame as read */
	size_t z_len;
	z_stream zs;			/* its inflation (zs_on: begun) */
	bool zs_on;
	size_t got;			/* bytes of names or section read */
	__u8 *sec;			/* the section libdw reads (img's, or inflated) */
	size_t sec_len;
	Dwarf *dw;			/* .debug_frame's */
	Dwarf_CFI *cfi;			/* .eh_frame's (dwarf_cfi_end) or dw's */
	struct cfi_scan s;		/* its FDEs, sorted by start */
	struct cfi_fde *tmp;		/* the merge sort's other half */
	size_t width, pos;		/* its runs, the next pair (width 0: not begun) */
	size_t warm;			/* the next entry libdw has not listed */
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
 * (-EAGAIN; 0: none), looked at before each row but the first when first
 * (a step makes a row at least: it always goes on): a row is one
 * dwarf_cfi_addrframe, at most CFI_SCAN_FDE_WORK bytes of CFA program.
 */
static int rows_step(struct cfi_build *b, __u64 deadline, bool first)
{
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

/* The name of section header sh, as elf_strptr gives it (NULL when it
 * runs past the table's last NUL); from the copy read in PH_NAMES. */
static const char *name_of(const struct cfi_build *b, const GElf_Shdr *sh)
{
	return sh->sh_name < b->names_nul ? b->names + sh->sh_name : NULL;
}

static int sections_find(struct cfi_build *b, struct sections *sc)
{
	Elf_Scn *scn = NULL;
	GElf_Shdr sh;

	while ((scn = elf_nextscn(b->elf, scn))) {
		const char *n;

		if (!gelf_getshdr(scn, &sh) || !(n = name_of(b, &sh)))
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
			sc->debug = scn, sc->debug_sh = sh;
		}
	}
	if (sc->eh == (Elf_Scn *)-1)
		sc->eh = NULL;
	return 0;
}

/* A section dwarf_begin_elf reads whole (and inflates): libdw's
 * dwarf_scnnames, their .dwo and LTO forms, .gnu_debugaltlink.  Only
 * .debug_frame is handed to libdw now (cfi_image.h), but the file's
 * others are held to the same limits as before. */
static bool libdw_reads(const char *n)
{
	return !strncmp(n, ".debug", 6) || !strncmp(n, ".zdebug", 7) ||
	       !strncmp(n, ".gnu.debuglto_", 14) || !strcmp(n, ".gnu_debugaltlink");
}

static int debug_admit(struct cfi_build *b)
{
	Elf_Scn *scn = NULL;

	while ((scn = elf_nextscn(b->elf, scn))) {
		GElf_Shdr sh;
		const char *n;

		if (!gelf_getshdr(scn, &sh) || !(n = name_of(b, &sh)))
			continue;
		if (libdw_reads(n) && admit(b, &sh, !strcmp(n, ".debug_frame") ? ELF_READ_MAX_CFI :
					    ELF_READ_MAX_OTHER, "a section libdw reads with .debug_frame"))
			return -EFBIG;
	}
	return 0;
}

/*
 * A compressed section (SHF_COMPRESSED) is inflated here a piece at a
 * time rather than by libdw at once (a 64 KB file whose .debug_frame
 * inflated to 64 MiB took 222 ms in dwarf_begin_elf): the image gets it
 * inflated, *sh its size and flags so; the compressed bytes go to b->z.
 * Its compression header is read again here (elf_reads__admit read it
 * before: the file may have changed since).  0 or -errno.
 */
static int inflated_shdr(struct cfi_build *b, GElf_Shdr *sh)
{
	Elf64_Chdr ch;

	if (sh->sh_size < sizeof(ch) ||
	    pread_full(b->fd, &ch, sizeof(ch), (off_t)sh->sh_offset) != (ssize_t)sizeof(ch))
		return fail(b->name, -EINVAL, "reading .debug_frame", "compression header");
	if (ch.ch_type != ELFCOMPRESS_ZLIB)
		return fail(b->name, -EINVAL, "reading .debug_frame", "not zlib-compressed");
	if (ch.ch_size > ELF_READ_MAX_CFI)
		return fail(b->name, -EFBIG, ".debug_frame", "inflated size over the limit");
	b->z_len = (size_t)sh->sh_size;
	b->z = malloc(b->z_len);
	if (!b->z)
		return -ENOMEM;
	sh->sh_size = ch.ch_size;
	sh->sh_flags &= ~(GElf_Xword)SHF_COMPRESSED;
	return 0;
}

/* The image for the CFI section sh, then PH_READ. */
static int image_begin(struct cfi_build *b, const GElf_Shdr *file_sh, const char *sec)
{
	GElf_Shdr sh = *file_sh;
	GElf_Ehdr eh;
	int err;

	if (!gelf_getehdr(b->elf, &eh))
		return fail(b->name, -EINVAL, "libelf cannot read it", elf_errmsg(-1));
	if ((sh.sh_flags & SHF_COMPRESSED) && (err = inflated_shdr(b, &sh)))
		return err;
	err = cfi_image__init(&b->img, &eh, sec, &sh);
	if (err)
		return err == -ENOMEM ? err : fail(b->name, err, sec, NULL);
	b->img_off = sh.sh_offset;
	b->got = 0;
	b->ph = PH_READ;
	return 0;
}

/* .eh_frame admitted and its reading begun. */
static int eh_begin(struct cfi_build *b)
{
	const struct sections *sc = &b->sc;

	/* .eh_frame_hdr is not read any more (libdw's image has none), but
	 * a file is held to the limits it was */
	if (admit(b, &sc->eh_sh, ELF_READ_MAX_CFI, ".eh_frame"))
		return -EFBIG;
	if (sc->hdr && admit(b, &sc->hdr_sh, ELF_READ_MAX_CFI, ".eh_frame_hdr"))
		return -EFBIG;
	if (!sc->eh_sh.sh_size)
		return -ENOENT;		/* empty: try .debug_frame */
	return image_begin(b, &sc->eh_sh, ".eh_frame");
}

/* .debug_frame admitted (with what libdw used to read with it) and its
 * reading begun; or, without one, the build fails. */
static int debug_begin(struct cfi_build *b)
{
	const struct sections *sc = &b->sc;
	int err;

	if (!sc->debug)
		return fail(b->name, -ENOENT, "no FDE in .eh_frame or .debug_frame", NULL);
	b->debug = b->t->from_debug_frame = true;
	if (sc->zdebug)
		return fail(b->name, -EINVAL, "GNU-compressed (.zdebug) sections, not read", NULL);
	err = debug_admit(b);
	if (err)
		return err;
	if (!sc->debug_sh.sh_size)
		return fail(b->name, -ENOENT, "an empty .debug_frame", NULL);
	return image_begin(b, &sc->debug_sh, ".debug_frame");
}

/* libdw's handle of the CFI section (its tree of FDEs) goes. */
static void libdw_end(struct cfi_build *b)
{
	if (b->dw)
		dwarf_end(b->dw);	/* and the CFI it made */
	else if (b->cfi)
		dwarf_cfi_end(b->cfi);
	b->dw = NULL;
	b->cfi = NULL;
}

/* What libdw and libelf hold for the CFI section goes (a build going on
 * from .eh_frame to .debug_frame, or its end). */
static void section_end(struct cfi_build *b)
{
	libdw_end(b);
	cfi_scan__free(&b->s);
	free(b->tmp);
	b->tmp = NULL;
	cfi_image__free(&b->img);
	free(b->z);
	b->z = NULL;
	if (b->zs_on)
		inflateEnd(&b->zs);
	b->zs_on = false;
	b->sec = NULL;
	b->sec_len = 0;
}

/* Read the next READ_CHUNK bytes at off of a size-byte range into dst
 * (b->got bytes of it read so far): 0, or -EIO when the file ends first. */
static int read_chunk(struct cfi_build *b, void *dst, size_t size, __u64 off)
{
	size_t n = size - b->got < READ_CHUNK ? size - b->got : READ_CHUNK;
	ssize_t r = pread_full(b->fd, (char *)dst + b->got, n, (off_t)(off + b->got));

	if (r != (ssize_t)n)
		return -EIO;
	b->got += n;
	return 0;
}

/* PH_NAMES: the next piece of the section names. */
static int names_step(struct cfi_build *b)
{
	size_t from = b->got;
	const char *nul;

	if (b->got < b->names_len && read_chunk(b, b->names, b->names_len, b->names_off))
		return fail(b->name, -EINVAL, "reading its section names", strerror(EIO));
	nul = b->got > from ? memrchr(b->names + from, 0, b->got - from) : NULL;
	if (nul)
		b->names_nul = (size_t)(nul - b->names) + 1;
	if (b->got == b->names_len)
		b->ph = PH_FIND;
	return 0;
}

/* PH_FIND: the CFI section to read. */
static int find_step(struct cfi_build *b)
{
	int err;

	sections_find(b, &b->sc);
	err = b->sc.eh ? eh_begin(b) : -ENOENT;
	return err == -ENOENT && !b->debug ? debug_begin(b) : err;
}

/* PH_READ: the next piece of the CFI section. */
static int read_step(struct cfi_build *b)
{
	const char *sec = b->debug ? "reading .debug_frame" : "reading .eh_frame";

	void *dst = b->z ? b->z : cfi_image__section(&b->img);
	size_t size = b->z ? b->z_len : b->img.size;

	if (read_chunk(b, dst, size, b->img_off))
		return fail(b->name, -EINVAL, sec, strerror(EIO));
	if (b->got < size)
		return 0;
	b->ph = b->z ? PH_INFLATE : PH_OPEN;
	return 0;
}

/* PH_INFLATE: the next piece of a compressed .debug_frame inflated into
 * the image; it must give the size its header said, exactly. */
static int inflate_step(struct cfi_build *b)
{
	z_stream *z = &b->zs;
	size_t in_left, out_left;
	int zr;

	if (!b->zs_on) {
		memset(z, 0, sizeof(*z));
		if (inflateInit(z) != Z_OK)
			return -ENOMEM;
		b->zs_on = true;
		z->next_in = b->z + sizeof(Elf64_Chdr);
		z->next_out = cfi_image__section(&b->img);
	}
	in_left = b->z_len - sizeof(Elf64_Chdr) - (size_t)z->total_in;
	out_left = b->img.size - (size_t)z->total_out;
	z->avail_in = (uInt)(in_left < READ_CHUNK ? in_left : READ_CHUNK);
	z->avail_out = (uInt)(out_left < READ_CHUNK ? out_left : READ_CHUNK);
	zr = inflate(z, Z_NO_FLUSH);
	if (zr == Z_STREAM_END && z->total_out == b->img.size) {
		inflateEnd(z);
		b->zs_on = false;
		free(b->z);
		b->z = NULL;
		b->ph = PH_OPEN;
		return 0;
	}
	if (zr != Z_OK)		/* short, long, or not zlib's: each unit moves */
		return fail(b->name, -EINVAL, "reading .debug_frame",
			    "its compressed data does not inflate to the size it claims");
	return 0;
}

/* PH_OPEN: the section's bytes as libdw reads them, the scan begun. */
static int open_step(struct cfi_build *b)
{
	Elf *elf = cfi_image__elf(&b->img);
	Elf_Data *d;

	if (!elf)
		return fail(b->name, -EINVAL, "libelf cannot read a copy of its CFI", elf_errmsg(-1));
	if (!b->debug) {
		b->sec = cfi_image__section(&b->img);
		b->sec_len = b->img.size;
		cfi_scan__begin(&b->s, b->sec, b->sec_len, b->sc.eh_sh.sh_addr, true);
		b->ph = PH_SCAN;
		return 0;
	}
	b->dw = dwarf_begin_elf(elf, DWARF_C_READ, NULL);
	if (!b->dw)
		return fail(b->name, -EINVAL, "libdw cannot read its DWARF", dwarf_errmsg(-1));
	d = elf_getdata(elf_getscn(elf, 1), NULL);
	if (d && !d->d_size)
		return fail(b->name, -ENOENT, "an empty .debug_frame", NULL);
	if (!d || !d->d_buf)
		return fail(b->name, -EINVAL, "reading .debug_frame", elf_errmsg(-1));
	b->sec = d->d_buf;
	b->sec_len = d->d_size;
	cfi_scan__begin(&b->s, b->sec, b->sec_len, 0, false);	/* libdw: frame_vaddr 0 */
	b->ph = PH_SCAN;
	return 0;
}

/*
 * PH_SCAN: the next piece of the entries checked; at their end, the
 * section ends where they stop being well formed (a zero terminator
 * there, in the image: libdw's own linear scan stops there too).
 */
static int scan_step(struct cfi_build *b)
{
	const char *sec = b->debug ? ".debug_frame" : ".eh_frame";
	struct cfi_scan *s = &b->s;
	int err = cfi_scan__step(s, SCAN_UNIT);

	if (err)
		return err == -EAGAIN ? 0 : err;
	if (s->bad_why) {
		pr_warn("%s: %s: malformed entry at offset %#zx (%s): its unwind rows and the "
			"%zu bytes after it are not used", b->name, sec, s->end, s->bad_why,
			b->sec_len - s->end);
		if (b->sec_len - s->end >= 4)
			memset(b->sec + s->end, 0, 4);
	}
	/* An FDE never handed to libdw (skip) is made one libdw passes over:
	 * its CIE pointer names the FDE itself, no CIE.  Else, overlapping
	 * an FDE whose rows are walked, it could be the one libdw's tree
	 * gives for an address of that one, and its program run: a rule for
	 * register 132,120,576 took 1 GB there. */
	for (size_t i = 0; i < s->nr_fdes; i++)
		if (s->fdes[i].skip)
			le32_store(b->sec + s->fdes[i].off + 4,
				   b->debug ? (__u32)s->fdes[i].off : 4u);
	b->ph = PH_CFI;
	return 0;
}

/* PH_CFI: libdw's handle of the checked section (an .eh_frame without
 * FDEs: .debug_frame is tried). */
static int cfi_step(struct cfi_build *b)
{
	if (b->debug) {
		b->cfi = dwarf_getcfi(b->dw);
		if (!b->cfi)
			return fail(b->name, -EINVAL, "libdw cannot read .debug_frame",
				    dwarf_errmsg(-1));
	} else if (!b->s.nr_fdes) {	/* an empty .eh_frame: try .debug_frame */
		section_end(b);
		return debug_begin(b);
	} else {
		/* no .eh_frame_hdr: libdw finds FDEs by reading the checked
		 * entries in order (once: it keeps them in a tree) */
		b->cfi = dwarf_getcfi_elf(cfi_image__elf(&b->img));
		if (!b->cfi)
			return fail(b->name, -EINVAL, "libdw cannot read .eh_frame",
				    dwarf_errmsg(-1));
	}
	free(b->names);		/* no section is looked for any more */
	b->names = NULL;
	b->names_len = b->names_nul = 0;
	b->ph = PH_SORT;
	return 0;
}

/*
 * PH_SORT: the FDEs by start (then offset: a total order, so the result
 * is qsort's).  Linkers write them in order: one pass sees it.  Else a
 * bottom-up merge sort, SORT_UNIT FDEs a unit (a pair of runs at least).
 */
static int sort_step(struct cfi_build *b)
{
	struct cfi_fde *v = b->s.fdes, *swap;
	size_t n = b->s.nr_fdes, merged = 0;

	if (!b->width) {
		size_t i = 1;

		while (i < n && cmp_fde(&v[i - 1], &v[i]) < 0)
			i++;
		if (i >= n) {
			b->ph = PH_WARM;
			return 0;
		}
		b->tmp = malloc(n * sizeof(*v));
		if (!b->tmp)
			return -ENOMEM;
		b->width = 1;
		return 0;
	}
	while (merged < SORT_UNIT && b->pos < n) {
		size_t lo = b->pos, mid = lo + b->width < n ? lo + b->width : n;
		size_t hi = mid + b->width < n ? mid + b->width : n, i = lo, j = mid, k = lo;

		while (i < mid && j < hi)
			b->tmp[k++] = cmp_fde(&v[j], &v[i]) < 0 ? v[j++] : v[i++];
		memcpy(&b->tmp[k], &v[i], (mid - i) * sizeof(*v));
		k += mid - i;
		memcpy(&b->tmp[k], &v[j], (hi - j) * sizeof(*v));
		merged += hi - lo;
		b->pos = hi;
	}
	if (b->pos < n)
		return 0;
	swap = b->s.fdes;		/* a pass done: tmp holds it */
	b->s.fdes = b->tmp;
	b->s.cap = n;
	b->tmp = swap;
	b->pos = 0;
	if (b->width >= n - b->width) {	/* the runs were the halves at most */
		free(b->tmp);
		b->tmp = NULL;
		b->ph = PH_WARM;
		return 0;
	}
	b->width *= 2;
	return 0;
}

/*
 * PH_WARM: libdw lists the next WARM_UNIT entries.  Without a search
 * table libdw reads entries in order until it finds the FDE it is asked
 * for, listing each in a tree: asked for the first FDE of a section
 * whose FDEs are in reverse order, it read 262,144 entries (80 ms) in
 * one call.  Here it is asked for an address no FDE covers (all ones: an
 * FDE's end is at most that) with the length of the entry WARM_UNIT
 * entries on made impossible for the call: libdw lists the entries up to
 * it and stops there without going past it (dwarf_next_cfi fails before
 * moving on), the length is put back, and the next unit goes on from it.
 * Nothing is evaluated.  The rows then find every FDE in the tree.
 */
static int warm_step(struct cfi_build *b)
{
	size_t off = b->warm, end = b->s.end;
	Dwarf_Frame *frame = NULL;
	__u8 saved[4] = { 0 };

	/* entries before s.end are checked: their lengths fit */
	for (unsigned i = 0; i < WARM_UNIT && off < end; i++)
		off += 4 + (size_t)le32_load(b->sec + off);
	if (off < end) {
		memcpy(saved, b->sec + off, 4);
		memset(b->sec + off, 0xf0, 1);
		memset(b->sec + off + 1, 0xff, 3);	/* 0xfffffff0: past the section */
	}
	if (!dwarf_cfi_addrframe(b->cfi, (Dwarf_Addr)-1, &frame))
		free(frame);
	if (off < end)
		memcpy(b->sec + off, saved, 4);
	else
		b->ph = PH_ROWS;
	b->warm = off;
	return 0;
}

/* One unit of the phase b is in (below PH_ROWS): 0 or -errno. */
static int prepare_step(struct cfi_build *b)
{
	switch (b->ph) {
	case PH_NAMES: return names_step(b);
	case PH_FIND: return find_step(b);
	case PH_READ: return read_step(b);
	case PH_INFLATE: return inflate_step(b);
	case PH_OPEN: return open_step(b);
	case PH_SCAN: return scan_step(b);
	case PH_CFI: return cfi_step(b);
	case PH_SORT: return sort_step(b);
	case PH_WARM: return warm_step(b);
	default: return -EINVAL;
	}
}

/* What libdw and libelf hold for b goes. */
static void sources_end(struct cfi_build *b)
{
	section_end(b);
	free(b->names);
	b->names = NULL;
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

/* The start: the file's headers checked, its executable segments, the
 * section names' header admitted (O(headers)). */
static int headers(struct cfi_build *b)
{
	GElf_Ehdr eh;
	GElf_Shdr sh;
	Elf_Scn *scn;
	size_t shstrndx;
	int err;

	if (elf_version(EV_CURRENT) == EV_NONE)
		return fail(b->name, -EINVAL, "libelf", elf_errmsg(-1));
	err = elf_headers_check_fd(b->fd);
	if (err)
		return fail(b->name, err == -E2BIG ? -EINVAL : err == -ENOEXEC ? -EINVAL : err,
			    "not a well-formed ELF file", NULL);
	/* ELF_C_READ, not _MMAP: a file truncated while it is read gives an
	 * error, not SIGBUS.  Only headers are read through it. */
	b->elf = elf_begin(b->fd, ELF_C_READ, NULL);
	if (!b->elf || elf_kind(b->elf) != ELF_K_ELF || !gelf_getehdr(b->elf, &eh))
		return fail(b->name, -EINVAL, "libelf cannot read it", elf_errmsg(-1));
	if (eh.e_ident[EI_CLASS] != ELFCLASS64 || eh.e_ident[EI_DATA] != ELFDATA2LSB ||
	    eh.e_machine != EM_X86_64)
		return fail(b->name, -EINVAL, "not an x86-64 ELF file (the only kind read)", NULL);
	if (elf_reads__init_fd(&b->rd, b->elf, b->fd))
		return fail(b->name, -EINVAL, "not a regular file", NULL);
	err = segments_read(b->elf, b);
	if (err)
		return err;
	if (elf_getshdrstrndx(b->elf, &shstrndx))
		return fail(b->name, -EINVAL, "reading its section headers", elf_errmsg(-1));
	scn = shstrndx ? elf_getscn(b->elf, shstrndx) : NULL;
	if (!scn || !gelf_getshdr(scn, &sh))
		return fail(b->name, -EINVAL, "reading its section names", elf_errmsg(-1));
	if (admit(b, &sh, ELF_READ_MAX_OTHER, "its section names (.shstrtab)"))
		return -EFBIG;
	/* elf_strptr gives no name from a table that is not SHT_STRTAB or
	 * has no bytes in the file: nor does name_of */
	if (sh.sh_type != SHT_STRTAB || !sh.sh_size)
		return 0;
	if (sh.sh_flags & SHF_COMPRESSED)
		return fail(b->name, -EINVAL, "compressed section names (.shstrtab), not read",
			    NULL);
	b->names = malloc((size_t)sh.sh_size);
	if (!b->names)
		return -ENOMEM;
	b->names_len = (size_t)sh.sh_size;
	b->names_off = sh.sh_offset;
	return 0;
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
	err = b->fd < 0 ? fail(b->name, -EBADF, "its descriptor", strerror(errno)) : headers(b);
	if (err) {
		cfi_build__free(b);
		return err;
	}
	*out = b;
	return 0;
}

/* The rows are done (err 0) or the build failed: the result kept, what
 * it holds freed in the next units. */
static void finish(struct cfi_build *b, int err)
{
	if (!err && !b->t->nr_rows)
		err = fail(b->name, -ENOENT, "no FDE covers its executable segments", NULL);
	b->result = err;
	b->ph = PH_FREE_LIBDW;
}

int cfi_build__step(struct cfi_build *b, __u64 deadline_ns, struct cfi_table *t)
{
	bool first = true;	/* a step does a unit at least: it always goes on */
	int err;

	if (b->done)
		return -EINVAL;
	for (; b->ph != PH_DONE; first = false) {
		if (!first && deadline_ns && clock_ns(CLOCK_MONOTONIC) >= deadline_ns)
			return -EAGAIN;
		switch (b->ph) {
		case PH_ROWS:
			err = rows_step(b, deadline_ns, first);
			if (err == -EAGAIN)
				return err;
			finish(b, err);
			break;
		case PH_FREE_LIBDW:
			libdw_end(b);
			b->ph = PH_FREE;
			break;
		case PH_FREE:
			sources_end(b);
			b->ph = PH_DONE;
			break;
		default:
			err = prepare_step(b);
			if (err)
				finish(b, err);
			break;
		}
	}
	b->done = true;
	if (b->result) {
		cfi_table__free(&b->own);
		return b->result;
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
