// SPDX-License-Identifier: GPL-2.0
/*
 * JIT image writer (see jitelf.h for the layout).  Sections are created by
 * one add_section() helper with names from a string set; libelf computes
 * the layout (ELF_C_NULL), the allocated sections then get sh_addr =
 * sh_offset, the contents that hold addresses are generated again with the
 * final addresses (their sizes do not change), and the layout is frozen
 * (ELF_F_LAYOUT) for the final write.
 */
#include "jit/jitelf.h"

#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "jit/ehframe.h"
#include "jit/jitdwarf.h"
#include "jit/strset.h"
#include "util/array.h"
#include "util/buf.h"
#include "util/log.h"

#if defined(__x86_64__)
#define HOST_MACHINE	EM_X86_64
#elif defined(__aarch64__)
#define HOST_MACHINE	EM_AARCH64
#elif defined(__riscv)
#define HOST_MACHINE	EM_RISCV
#elif defined(__powerpc64__)
#define HOST_MACHINE	EM_PPC64
#elif defined(__s390x__)
#define HOST_MACHINE	EM_S390
#elif defined(__loongarch__)
#define HOST_MACHINE	EM_LOONGARCH
#else
#error "precord: unknown host ELF machine"
#endif

#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
#define HOST_DATA	ELFDATA2LSB
#else
#define HOST_DATA	ELFDATA2MSB
#endif

#define NOTE_SIZE	(12 + 4 + JITHASH_SIZE)	/* nhdr, "GNU\0", id */
#define TEXT_ALIGN	16

struct jfunc {
	__u32 name;			/* index in img->names */
	bool nocode;
	__u64 off, size;		/* in .text or in .text.nocode */
	__u64 addr;			/* after layout */
	__u32 row_first, nr_rows;
	__u32 inl_first, nr_inl;
	__u32 range_first, nr_ranges;
};

struct jinl {
	__u32 depth, name, decl_file, decl_line;
	__u32 call_file, call_line, call_column, nr_ranges;
};

struct jitelf_image {
	struct pbuf text;
	__u64 nocode;
	struct strset names;		/* .strtab, also DWARF function names */
	struct strset files;		/* DWARF file table */
	struct jfunc *funcs;
	size_t nr_funcs, cap_funcs;
	struct jitdwarf_row *rows;
	size_t nr_rows, cap_rows;
	struct jinl *inl;
	size_t nr_inl, cap_inl;
	struct jitdwarf_range *ranges;
	size_t nr_ranges, cap_ranges;
	struct pbuf eh;
	struct ehframe_fdes fdes;
	__u8 build_id[JITHASH_SIZE];
	__u64 file_size;
	bool written;
};


struct jitelf_image *jitelf_image__new(void)
{
	struct jitelf_image *img = calloc(1, sizeof(*img));

	if (!img)
		return NULL;
	if (strset_init(&img->names) || strset_init(&img->files)) {
		jitelf_image__free(img);
		errno = ENOMEM;
		return NULL;
	}
	return img;
}

void jitelf_image__free(struct jitelf_image *img)
{
	if (!img)
		return;
	pbuf_free(&img->text);
	strset_free(&img->names);
	strset_free(&img->files);
	free(img->funcs);
	free(img->rows);
	free(img->inl);
	free(img->ranges);
	pbuf_free(&img->eh);
	ehframe_fdes_free(&img->fdes);
	free(img);
}

static long add_name(struct strset *s, const char *name, size_t max)
{
	size_t len = strnlen(name, max);

	if (len == 0) {
		name = "<unknown>";
		len = strlen(name);
	}
	return strset_add(s, name, len);
}

int jitelf_image__add_func(struct jitelf_image *img, const char *name,
			   const void *code, __u64 size)
{
	struct jfunc *f;
	long idx;

	if (img->written || size == 0 || !name)
		return -EINVAL;
	if (img->nr_funcs >= INT32_MAX || ARRAY_GROW(img->funcs, img->cap_funcs, img->nr_funcs + 1))
		return -ENOMEM;
	idx = add_name(&img->names, name, JITELF_MAX_NAME);
	if (idx < 0)
		return (int)idx;
	f = &img->funcs[img->nr_funcs];
	memset(f, 0, sizeof(*f));
	f->name = (__u32)idx;
	f->size = size;
	if (code) {
		if (size > SIZE_MAX / 2 || pbuf_align(&img->text, TEXT_ALIGN))
			return -ENOMEM;
		f->off = img->text.len;
		if (pbuf_put(&img->text, code, (size_t)size))
			return -ENOMEM;
	} else {
		if (img->nocode + size < img->nocode || img->nocode + size > (1ULL << 40))
			return -E2BIG;
		f->nocode = true;
		f->off = align_up(img->nocode, TEXT_ALIGN);
		img->nocode = f->off + size;
	}
	return (int)img->nr_funcs++;
}

static struct jfunc *func_get(struct jitelf_image *img, int func)
{
	if (func < 0 || (size_t)func >= img->nr_funcs || img->written)
		return NULL;
	return &img->funcs[func];
}

static int cmp_row(const void *a, const void *b)
{
	const struct jitdwarf_row *x = a, *y = b;

	if (x->offset != y->offset)
		return x->offset < y->offset ? -1 : 1;
	return 0;
}

int jitelf_image__set_lines(struct jitelf_image *img, int func,
			    const struct jitelf_line *rows, size_t n)
{
	struct jfunc *f = func_get(img, func);
	size_t i, first = img->nr_rows;

	if (!f || f->nocode || f->nr_rows)
		return -EINVAL;
	if (n > UINT32_MAX || ARRAY_GROW(img->rows, img->cap_rows, img->nr_rows + n))
		return -ENOMEM;
	for (i = 0; i < n; i++) {
		struct jitdwarf_row *r = &img->rows[img->nr_rows];
		long file;

		if (rows[i].offset >= f->size)
			continue;
		file = add_name(&img->files, rows[i].file ? rows[i].file : "",
				JITELF_MAX_NAME);
		if (file < 0) {
			img->nr_rows = first;
			return (int)file;
		}
		r->offset = rows[i].offset;
		r->file = (__u32)file;
		r->line = rows[i].line;
		r->column = rows[i].column;
		img->nr_rows++;
	}
	/* insertion sort keeps equal offsets in order and is linear on the
	 * already sorted rows runtimes write */
	for (i = first + 1; i < img->nr_rows; i++) {
		struct jitdwarf_row r = img->rows[i];
		size_t j = i;

		while (j > first && cmp_row(&img->rows[j - 1], &r) > 0) {
			img->rows[j] = img->rows[j - 1];
			j--;
		}
		img->rows[j] = r;
	}
	f->row_first = (__u32)first;
	f->nr_rows = (__u32)(img->nr_rows - first);
	return 0;
}

static bool inlines_ok(const struct jfunc *f, const struct jitelf_inline *calls,
		       size_t n, const struct jitelf_range *ranges, size_t nr_ranges)
{
	size_t i, used = 0;
	__u32 depth = 0;

	for (i = 0; i < n; i++) {
		size_t k;

		if (calls[i].depth > depth || !calls[i].nr_ranges ||
		    calls[i].nr_ranges > nr_ranges - used)
			return false;
		for (k = used; k < used + calls[i].nr_ranges; k++)
			if ((__u64)ranges[k].offset + ranges[k].size > f->size)
				return false;
		used += calls[i].nr_ranges;
		depth = calls[i].depth + 1;
	}
	return used == nr_ranges;
}

static long add_file(struct jitelf_image *img, const char *s)
{
	return add_name(&img->files, s ? s : "", JITELF_MAX_NAME);
}

int jitelf_image__set_inlines(struct jitelf_image *img, int func,
			      const struct jitelf_inline *calls, size_t n,
			      const struct jitelf_range *ranges, size_t nr_ranges)
{
	struct jfunc *f = func_get(img, func);
	size_t i, inl0 = img->nr_inl, rng0 = img->nr_ranges;

	if (!f || f->nocode || f->nr_inl)
		return -EINVAL;
	if (!inlines_ok(f, calls, n, ranges, nr_ranges))
		return -EINVAL;
	if (n > UINT32_MAX || nr_ranges > UINT32_MAX ||
	    ARRAY_GROW(img->inl, img->cap_inl, img->nr_inl + n) ||
	    ARRAY_GROW(img->ranges, img->cap_ranges, img->nr_ranges + nr_ranges))
		return -ENOMEM;
	for (i = 0; i < n; i++) {
		const struct jitelf_inline *c = &calls[i];
		long name = add_name(&img->names, c->name ? c->name : "",
				     JITELF_MAX_NAME);
		long decl = add_file(img, c->decl_file);
		long call = add_file(img, c->call_file);

		if (name < 0 || decl < 0 || call < 0) {
			img->nr_inl = inl0;
			return -ENOMEM;
		}
		img->inl[img->nr_inl++] = (struct jinl){
			.depth = c->depth, .name = (__u32)name,
			.decl_file = (__u32)decl, .decl_line = c->decl_line,
			.call_file = (__u32)call, .call_line = c->call_line,
			.call_column = c->call_column, .nr_ranges = c->nr_ranges,
		};
	}
	for (i = 0; i < nr_ranges; i++)
		img->ranges[img->nr_ranges++] = (struct jitdwarf_range){
			.offset = ranges[i].offset, .size = ranges[i].size,
		};
	f->inl_first = (__u32)inl0;
	f->nr_inl = (__u32)n;
	f->range_first = (__u32)rng0;
	f->nr_ranges = (__u32)nr_ranges;
	return 0;
}

int jitelf_image__set_eh_frame(struct jitelf_image *img, int func,
			       const void *eh_frame, size_t size,
			       __u64 code_addr, const char **why)
{
	struct jfunc *f = func_get(img, func);
	const char *dummy;

	if (!why)
		why = &dummy;
	if (!f || f->nocode) {
		*why = "no code for the unwinding information";
		return -EINVAL;
	}
	if (img->eh.len && pbuf_align(&img->eh, 4))
		return -ENOMEM;
	return ehframe_import(&img->eh, &img->fdes, eh_frame, size, code_addr,
			      f->size, (__u32)func, why);
}

size_t jitelf_image__nr_funcs(const struct jitelf_image *img)
{
	return img->nr_funcs;
}

__u64 jitelf_image__code_bytes(const struct jitelf_image *img)
{
	return img->text.len;
}

__u64 jitelf_image__nocode_bytes(const struct jitelf_image *img)
{
	return img->nocode;
}

__u64 jitelf_image__mem_bytes(const struct jitelf_image *img)
{
	return img->text.len + img->names.data.len + img->files.data.len + img->eh.len +
	       img->nr_funcs * sizeof(struct jfunc) +
	       img->nr_rows * sizeof(struct jitdwarf_row) +
	       img->nr_inl * sizeof(struct jinl) +
	       img->nr_ranges * sizeof(struct jitdwarf_range);
}

__u64 jitelf_image__func_addr(const struct jitelf_image *img, int func)
{
	if (func < 0 || (size_t)func >= img->nr_funcs)
		return 0;
	return img->funcs[func].addr;
}

const __u8 *jitelf_image__build_id(const struct jitelf_image *img)
{
	return img->build_id;
}

__u64 jitelf_image__file_size(const struct jitelf_image *img)
{
	return img->file_size;
}

/* ---- writing ---- */

/*
 * A libelf call failed while building an image: precord's own file, so an
 * error with libelf's reason -- once; the next ones at debug level, as
 * every image would fail alike.  Returns -EIO.
 */
static int elf_fail(const char *call)
{
	static bool reported;

	if (!__atomic_exchange_n(&reported, true, __ATOMIC_RELAXED))
		pr_err("jit: cannot build a JIT image: libelf's %s failed: %s",
		       call, elf_errmsg(-1));
	else
		pr_debug("jit: cannot build a JIT image: libelf's %s failed: %s",
			 call, elf_errmsg(-1));
	return -EIO;
}

struct elfw {
	Elf *e;
	int fd;
	struct strset shstr;
	/* generated contents */
	struct pbuf symtab, note, ehdr_hdr;
	struct jitdwarf_out dw;
	struct jitdwarf_func *dfuncs;
	size_t nr_dfuncs;
	const char **file_names;
	/* sections */
	Elf_Scn *note_scn, *text_scn, *eh_scn, *hdr_scn, *nocode_scn;
	Elf_Scn *sym_scn, *str_scn, *abbrev_scn, *info_scn, *line_scn, *ranges_scn;
	Elf_Scn *shstr_scn;
	__u64 text_addr, eh_addr, hdr_addr, nocode_addr, note_addr;
};

static Elf_Scn *add_section(struct elfw *w, const char *name, Elf64_Word type,
			    Elf64_Xword flags, Elf64_Xword align, Elf64_Xword entsize,
			    void *buf, size_t size)
{
	long idx = strset_add(&w->shstr, name, strlen(name));
	Elf_Scn *scn;
	Elf_Data *d;
	GElf_Shdr sh;

	if (idx < 0)
		return NULL;
	scn = elf_newscn(w->e);
	if (!scn) {
		elf_fail("elf_newscn");
		return NULL;
	}
	if (!gelf_getshdr(scn, &sh)) {
		elf_fail("gelf_getshdr");
		return NULL;
	}
	sh.sh_name = strset_offset(&w->shstr, (__u32)idx);
	sh.sh_type = type;
	sh.sh_flags = flags;
	sh.sh_addralign = align;
	sh.sh_entsize = entsize;
	if (!gelf_update_shdr(scn, &sh)) {
		elf_fail("gelf_update_shdr");
		return NULL;
	}
	d = elf_newdata(scn);
	if (!d) {
		elf_fail("elf_newdata");
		return NULL;
	}
	d->d_buf = buf;
	d->d_size = size;
	d->d_type = ELF_T_BYTE;
	d->d_align = align;
	d->d_off = 0;
	d->d_version = EV_CURRENT;
	return scn;
}

/* Point an existing section at (possibly moved) bytes of the same size. */
static int set_data(Elf_Scn *scn, void *buf, size_t size)
{
	Elf_Data *d = elf_getdata(scn, NULL);

	if (!d)
		return elf_fail("elf_getdata");
	if (d->d_size != size)
		return -EIO;
	d->d_buf = buf;
	elf_flagdata(d, ELF_C_SET, ELF_F_DIRTY);
	return 0;
}

static void func_addrs(struct jitelf_image *img, const struct elfw *w)
{
	size_t i;

	for (i = 0; i < img->nr_funcs; i++) {
		struct jfunc *f = &img->funcs[i];

		f->addr = (f->nocode ? w->nocode_addr : w->text_addr) + f->off;
	}
}

static int gen_symtab(struct jitelf_image *img, struct elfw *w)
{
	size_t text_ndx = elf_ndxscn(w->text_scn);
	size_t nocode_ndx = w->nocode_scn ? elf_ndxscn(w->nocode_scn) : 0;
	Elf64_Sym sym;
	size_t i;

	pbuf_reset(&w->symtab);
	memset(&sym, 0, sizeof(sym));
	pbuf_put(&w->symtab, &sym, sizeof(sym));
	for (i = 0; i < img->nr_funcs; i++) {
		const struct jfunc *f = &img->funcs[i];

		sym.st_name = strset_offset(&img->names, f->name);
		sym.st_info = ELF64_ST_INFO(STB_GLOBAL, STT_FUNC);
		sym.st_other = STV_DEFAULT;
		sym.st_shndx = (Elf64_Half)(f->nocode ? nocode_ndx : text_ndx);
		sym.st_value = f->addr;
		sym.st_size = f->size;
		pbuf_put(&w->symtab, &sym, sizeof(sym));
	}
	return w->symtab.err;
}

/* DWARF input arrays for the functions with line or inline information. */
static int prep_dwarf(struct jitelf_image *img, struct elfw *w)
{
	size_t i, n = 0;

	w->file_names = calloc(img->files.nr ? img->files.nr : 1, sizeof(*w->file_names));
	w->dfuncs = calloc(img->nr_funcs ? img->nr_funcs : 1, sizeof(*w->dfuncs));
	if (!w->file_names || !w->dfuncs)
		return -ENOMEM;
	for (i = 0; i < img->files.nr; i++)
		w->file_names[i] = strset_str(&img->files, (__u32)i);
	for (i = 0; i < img->nr_funcs; i++)
		if (img->funcs[i].nr_rows || img->funcs[i].nr_inl)
			n++;
	w->nr_dfuncs = n;
	return 0;
}

static int gen_dwarf(struct jitelf_image *img, struct elfw *w, __u64 cu_low, __u64 cu_high)
{
	struct jinl *src;
	size_t i, n = 0, k;
	struct jitdwarf_inline *inl;
	int err;

	if (!w->nr_dfuncs)
		return 0;
	inl = calloc(img->nr_inl ? img->nr_inl : 1, sizeof(*inl));
	if (!inl)
		return -ENOMEM;
	for (k = 0, src = img->inl; k < img->nr_inl; k++, src++)
		inl[k] = (struct jitdwarf_inline){
			.depth = src->depth, .name = strset_str(&img->names, src->name),
			.decl_file = src->decl_file, .decl_line = src->decl_line,
			.call_file = src->call_file, .call_line = src->call_line,
			.call_column = src->call_column, .nr_ranges = src->nr_ranges,
		};
	for (i = 0; i < img->nr_funcs; i++) {
		const struct jfunc *f = &img->funcs[i];

		if (!f->nr_rows && !f->nr_inl)
			continue;
		w->dfuncs[n++] = (struct jitdwarf_func){
			.addr = f->addr, .size = f->size,
			.name = strset_str(&img->names, f->name),
			.rows = f->nr_rows ? img->rows + f->row_first : NULL,
			.nr_rows = f->nr_rows,
			.inl = f->nr_inl ? inl + f->inl_first : NULL, .nr_inl = f->nr_inl,
			.ranges = f->nr_ranges ? img->ranges + f->range_first : NULL,
		};
	}
	err = jitdwarf_build(w->dfuncs, n, w->file_names, img->files.nr, cu_low,
			     cu_high, &w->dw);
	free(inl);
	return err;
}

static int gen_note(struct elfw *w, const __u8 *id)
{
	pbuf_reset(&w->note);
	pbuf_put_u32(&w->note, 4);		/* namesz */
	pbuf_put_u32(&w->note, JITHASH_SIZE);	/* descsz */
	pbuf_put_u32(&w->note, NT_GNU_BUILD_ID);
	pbuf_put(&w->note, "GNU", 4);
	pbuf_put(&w->note, id, JITHASH_SIZE);
	return w->note.err;
}

static int gen_eh(struct jitelf_image *img, struct elfw *w)
{
	size_t i;
	int err;

	if (!img->fdes.nr)
		return 0;
	for (i = 0; i < img->fdes.nr; i++) {
		struct ehframe_fde *e = &img->fdes.v[i];

		e->target = img->funcs[e->func].addr + e->delta;
	}
	err = ehframe_patch(img->eh.data, img->eh.len, &img->fdes, w->eh_addr);
	if (!err)
		err = ehframe_build_hdr(&w->ehdr_hdr, &img->fdes, w->eh_addr, w->hdr_addr);
	return err;
}

/* Generate everything that holds addresses (pass 0: sizes only). */
static int gen_contents(struct jitelf_image *img, struct elfw *w)
{
	__u64 hi = w->nocode_scn ? w->nocode_addr + img->nocode :
		   w->text_addr + img->text.len;
	int err;

	func_addrs(img, w);
	err = gen_symtab(img, w);
	if (!err)
		err = gen_dwarf(img, w, w->text_addr, hi);
	if (!err)
		err = gen_eh(img, w);
	return err;
}

static int create_sections(struct jitelf_image *img, struct elfw *w)
{
	const Elf64_Xword ax = SHF_ALLOC | SHF_EXECINSTR;
	const bool has_eh = img->fdes.nr > 0;

	/* terminator of .eh_frame */
	if (has_eh && (pbuf_align(&img->eh, 4) || pbuf_put_u32(&img->eh, 0)))
		return -ENOMEM;
	if (pbuf_put_zero(&w->ehdr_hdr, ehframe_hdr_size(img->fdes.nr)) ||
	    pbuf_put_zero(&w->note, NOTE_SIZE))
		return -ENOMEM;
	w->note_scn = add_section(w, ".note.gnu.build-id", SHT_NOTE, SHF_ALLOC, 4, 0,
				  w->note.data, w->note.len);
	w->text_scn = add_section(w, ".text", SHT_PROGBITS, ax, TEXT_ALIGN, 0,
				  img->text.data, img->text.len);
	if (!w->note_scn || !w->text_scn)
		return -EIO;
	if (has_eh) {
		w->eh_scn = add_section(w, ".eh_frame", SHT_PROGBITS, SHF_ALLOC, 8, 0,
					img->eh.data, img->eh.len);
		w->hdr_scn = add_section(w, ".eh_frame_hdr", SHT_PROGBITS, SHF_ALLOC, 4, 0,
					 w->ehdr_hdr.data, w->ehdr_hdr.len);
		if (!w->eh_scn || !w->hdr_scn)
			return -EIO;
	}
	if (img->nocode) {
		w->nocode_scn = add_section(w, ".text.nocode", SHT_NOBITS, ax, TEXT_ALIGN,
					    0, NULL, img->nocode);
		if (!w->nocode_scn)
			return -EIO;
	}
	return 0;
}

static int create_meta_sections(struct jitelf_image *img, struct elfw *w)
{
	GElf_Shdr sh;

	w->sym_scn = add_section(w, ".symtab", SHT_SYMTAB, 0, 8, sizeof(Elf64_Sym),
				 w->symtab.data, w->symtab.len);
	w->str_scn = add_section(w, ".strtab", SHT_STRTAB, 0, 1, 0,
				 img->names.data.data, img->names.data.len);
	if (!w->sym_scn || !w->str_scn)
		return -EIO;
	if (!gelf_getshdr(w->sym_scn, &sh))
		return elf_fail("gelf_getshdr");
	sh.sh_link = (Elf64_Word)elf_ndxscn(w->str_scn);
	sh.sh_info = 1;				/* first global symbol */
	if (!gelf_update_shdr(w->sym_scn, &sh))
		return elf_fail("gelf_update_shdr");
	if (w->nr_dfuncs) {
		w->abbrev_scn = add_section(w, ".debug_abbrev", SHT_PROGBITS, 0, 1, 0,
					    w->dw.abbrev.data, w->dw.abbrev.len);
		w->info_scn = add_section(w, ".debug_info", SHT_PROGBITS, 0, 1, 0,
					  w->dw.info.data, w->dw.info.len);
		w->line_scn = add_section(w, ".debug_line", SHT_PROGBITS, 0, 1, 0,
					  w->dw.line.data, w->dw.line.len);
		if (!w->abbrev_scn || !w->info_scn || !w->line_scn)
			return -EIO;
		if (w->dw.ranges.len) {
			w->ranges_scn = add_section(w, ".debug_ranges", SHT_PROGBITS, 0, 1, 0,
						    w->dw.ranges.data, w->dw.ranges.len);
			if (!w->ranges_scn)
				return -EIO;
		}
	}
	/* the string table's own name goes in before its bytes are handed over */
	if (strset_add(&w->shstr, ".shstrtab", strlen(".shstrtab")) < 0)
		return -ENOMEM;
	w->shstr_scn = add_section(w, ".shstrtab", SHT_STRTAB, 0, 1, 0,
				   w->shstr.data.data, w->shstr.data.len);
	return w->shstr_scn ? 0 : -EIO;
}

/* The file offset libelf gave scn (0 for no section); 0 or -EIO. */
static int scn_offset(Elf_Scn *scn, __u64 *off)
{
	GElf_Shdr sh;

	*off = 0;
	if (!scn)
		return 0;
	if (!gelf_getshdr(scn, &sh))
		return elf_fail("gelf_getshdr");
	*off = sh.sh_offset;
	return 0;
}

static int set_addr(Elf_Scn *scn, __u64 addr)
{
	GElf_Shdr sh;

	if (!scn)
		return 0;
	if (!gelf_getshdr(scn, &sh))
		return elf_fail("gelf_getshdr");
	sh.sh_addr = addr;
	return gelf_update_shdr(scn, &sh) ? 0 : elf_fail("gelf_update_shdr");
}

/* After libelf's layout: alloc sections get sh_addr = sh_offset. */
static int assign_addresses(struct jitelf_image *img, struct elfw *w)
{
	__u64 end;
	int err;

	err = scn_offset(w->text_scn, &w->text_addr);
	if (!err)
		err = scn_offset(w->eh_scn, &w->eh_addr);
	if (!err)
		err = scn_offset(w->hdr_scn, &w->hdr_addr);
	if (!err)
		err = scn_offset(w->note_scn, &w->note_addr);
	if (err)
		return err;
	end = w->eh_scn ? w->hdr_addr + w->ehdr_hdr.len : w->text_addr + img->text.len;
	w->nocode_addr = align_up(end, TEXT_ALIGN);
	err = set_addr(w->note_scn, w->note_addr);
	if (!err)
		err = set_addr(w->text_scn, w->text_addr);
	if (!err)
		err = set_addr(w->eh_scn, w->eh_addr);
	if (!err)
		err = set_addr(w->hdr_scn, w->hdr_addr);
	if (!err)
		err = set_addr(w->nocode_scn, w->nocode_addr);
	return err;
}

static int write_phdrs(struct jitelf_image *img, struct elfw *w)
{
	__u64 file_end = w->eh_scn ? w->hdr_addr + w->ehdr_hdr.len :
			 w->text_addr + img->text.len;
	__u64 mem_end = w->nocode_scn ? w->nocode_addr + img->nocode : file_end;
	GElf_Phdr load = {
		.p_type = PT_LOAD, .p_flags = PF_R | PF_X,
		.p_offset = w->text_addr, .p_vaddr = w->text_addr, .p_paddr = w->text_addr,
		.p_filesz = file_end - w->text_addr, .p_memsz = mem_end - w->text_addr,
		.p_align = 0x1000,
	};
	GElf_Phdr note = {
		.p_type = PT_NOTE, .p_flags = PF_R,
		.p_offset = w->note_addr, .p_vaddr = w->note_addr,
		.p_paddr = w->note_addr, .p_filesz = NOTE_SIZE,
		.p_memsz = NOTE_SIZE, .p_align = 4,
	};
	GElf_Phdr eh = {
		.p_type = PT_GNU_EH_FRAME, .p_flags = PF_R,
		.p_offset = w->hdr_addr, .p_vaddr = w->hdr_addr, .p_paddr = w->hdr_addr,
		.p_filesz = w->ehdr_hdr.len, .p_memsz = w->ehdr_hdr.len, .p_align = 4,
	};

	if (!gelf_update_phdr(w->e, 0, &load) || !gelf_update_phdr(w->e, 1, &note) ||
	    (w->eh_scn && !gelf_update_phdr(w->e, 2, &eh)))
		return elf_fail("gelf_update_phdr");
	return 0;
}

static void hash_image(struct jitelf_image *img, struct elfw *w, __u8 *out)
{
	struct jithash h;

	jithash_init(&h);
	jithash_update(&h, img->text.data, img->text.len);
	jithash_update_u64(&h, img->nocode);
	jithash_update(&h, w->symtab.data, w->symtab.len);
	jithash_update(&h, img->names.data.data, img->names.data.len);
	jithash_update(&h, img->eh.data, img->eh.len);
	jithash_update(&h, w->dw.info.data, w->dw.info.len);
	jithash_update(&h, w->dw.line.data, w->dw.line.len);
	jithash_update(&h, w->dw.ranges.data, w->dw.ranges.len);
	jithash_final(&h, out);
}

/* Hand the regenerated contents back to libelf (same sizes). */
static int refresh_data(struct jitelf_image *img, struct elfw *w)
{
	int err = set_data(w->sym_scn, w->symtab.data, w->symtab.len);

	if (!err && w->nr_dfuncs) {
		err = set_data(w->info_scn, w->dw.info.data, w->dw.info.len);
		if (!err)
			err = set_data(w->line_scn, w->dw.line.data, w->dw.line.len);
		if (!err && w->ranges_scn)
			err = set_data(w->ranges_scn, w->dw.ranges.data, w->dw.ranges.len);
	}
	if (!err && w->eh_scn) {
		err = set_data(w->eh_scn, img->eh.data, img->eh.len);
		if (!err)
			err = set_data(w->hdr_scn, w->ehdr_hdr.data, w->ehdr_hdr.len);
	}
	if (!err)
		err = set_data(w->note_scn, w->note.data, w->note.len);
	return err;
}

/*
 * The image's blocks are allocated before libelf writes it: a full disk
 * is then reported as such (libelf's write error says only "write
 * error"), and no half-written image is left.
 */
static int alloc_file(struct elfw *w)
{
	off_t size = elf_update(w->e, ELF_C_NULL);

	if (size < 0)
		return elf_fail("elf_update (layout)");
	if (!size || !fallocate(w->fd, 0, 0, size))
		return 0;
	return errno == EOPNOTSUPP || errno == ENOSYS ? 0 : -errno;
}

static int write_elf(struct jitelf_image *img, struct elfw *w)
{
	GElf_Ehdr eh;
	off_t size;
	int err;

	if (!gelf_newehdr(w->e, ELFCLASS64))
		return elf_fail("gelf_newehdr");
	if (!gelf_getehdr(w->e, &eh))
		return elf_fail("gelf_getehdr");
	eh.e_ident[EI_DATA] = HOST_DATA;
	eh.e_type = ET_DYN;
	eh.e_machine = HOST_MACHINE;
	eh.e_version = EV_CURRENT;
	if (!gelf_update_ehdr(w->e, &eh))
		return elf_fail("gelf_update_ehdr");
	if (!gelf_newphdr(w->e, img->fdes.nr ? 3 : 2))
		return elf_fail("gelf_newphdr");
	err = create_sections(img, w);
	if (!err)
		err = prep_dwarf(img, w);
	if (!err)
		err = gen_contents(img, w);		/* pass 0: sizes */
	if (!err)
		err = create_meta_sections(img, w);
	if (err)
		return err;
	if (!gelf_getehdr(w->e, &eh))
		return elf_fail("gelf_getehdr");
	eh.e_shstrndx = (Elf64_Half)elf_ndxscn(w->shstr_scn);
	if (!gelf_update_ehdr(w->e, &eh))
		return elf_fail("gelf_update_ehdr");
	if (elf_update(w->e, ELF_C_NULL) < 0)
		return elf_fail("elf_update (layout)");
	err = assign_addresses(img, w);
	if (!err)
		err = gen_contents(img, w);		/* pass 1: final addresses */
	if (err)
		return err;
	hash_image(img, w, img->build_id);
	err = gen_note(w, img->build_id);
	if (!err)
		err = refresh_data(img, w);
	if (!err)
		err = write_phdrs(img, w);
	if (err)
		return err;
	if (!gelf_getehdr(w->e, &eh))
		return elf_fail("gelf_getehdr");
	eh.e_entry = w->text_addr;
	if (!gelf_update_ehdr(w->e, &eh))
		return elf_fail("gelf_update_ehdr");
	elf_flagelf(w->e, ELF_C_SET, ELF_F_LAYOUT);	/* keep the layout above */
	err = alloc_file(w);
	if (err)
		return err;
	size = elf_update(w->e, ELF_C_WRITE);
	if (size < 0) {
		/* the disk: counted and reported by the caller, once */
		if (errno == ENOSPC || errno == EDQUOT || errno == EIO) {
			err = -errno;
			pr_debug("jit: cannot write an image: %s", elf_errmsg(-1));
			return err;
		}
		return elf_fail("elf_update (write)");
	}
	img->file_size = (__u64)size;
	return 0;
}

int jitelf_image__write(struct jitelf_image *img, int fd)
{
	struct elfw w;
	int err;

	if (img->written)
		return -EINVAL;
	if (elf_version(EV_CURRENT) == EV_NONE)
		return elf_fail("elf_version");
	memset(&w, 0, sizeof(w));
	w.fd = fd;
	if (strset_init(&w.shstr))
		return -ENOMEM;
	w.e = elf_begin(fd, ELF_C_WRITE, NULL);
	err = w.e ? write_elf(img, &w) : elf_fail("elf_begin");
	if (w.e)
		elf_end(w.e);
	strset_free(&w.shstr);
	pbuf_free(&w.symtab);
	pbuf_free(&w.note);
	pbuf_free(&w.ehdr_hdr);
	jitdwarf_out_free(&w.dw);
	free(w.dfuncs);
	free(w.file_names);
	if (!err)
		img->written = true;
	return err;
}
