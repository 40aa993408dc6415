// SPDX-License-Identifier: GPL-2.0
/*
 * JIT images: written with jitelf, read back with libelf/gelf.  Checks the
 * program headers, symbols, code bytes, build-id note, .debug_line rows
 * (decoded here by a small line-program interpreter), the DIE tree of
 * .debug_info, and .eh_frame/.eh_frame_hdr relocation.
 */
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "harness.h"
#include "jit/jitdwarf.h"
#include "jit/jitelf.h"
#include "jit/jithash.h"
#include "util/leb128.h"
#include "util/log.h"

static char tmpdir[] = "/tmp/precord-test-jitelf-XXXXXX";

struct image_file {
	int fd;
	Elf *e;
	char path[256];
};

static int write_image(struct jitelf_image *img, const char *name, struct image_file *f)
{
	int err;

	snprintf(f->path, sizeof(f->path), "%s/%s", tmpdir, name);
	f->fd = open(f->path, O_RDWR | O_CREAT | O_TRUNC, 0644);
	CHECK(f->fd >= 0);
	err = jitelf_image__write(img, f->fd);
	elf_version(EV_CURRENT);
	f->e = elf_begin(f->fd, ELF_C_READ, NULL);
	return err;
}

static void close_image(struct image_file *f)
{
	elf_end(f->e);
	close(f->fd);
}

static Elf_Scn *find_scn(Elf *e, const char *name, GElf_Shdr *sh)
{
	size_t shstrndx;
	Elf_Scn *scn = NULL;

	if (elf_getshdrstrndx(e, &shstrndx))
		return NULL;
	while ((scn = elf_nextscn(e, scn))) {
		const char *n;

		gelf_getshdr(scn, sh);
		n = elf_strptr(e, shstrndx, sh->sh_name);
		if (n && !strcmp(n, name))
			return scn;
	}
	return NULL;
}

static Elf_Data *scn_data(Elf *e, const char *name, GElf_Shdr *sh)
{
	Elf_Scn *scn = find_scn(e, name, sh);

	return scn ? elf_getdata(scn, NULL) : NULL;
}

/* ---- a small DWARF reader, enough for what jitdwarf writes ---- */

static __u64 uleb(const __u8 **p, const __u8 *end)
{
	__u64 v = 0;
	unsigned int shift = 0;

	while (*p < end) {
		__u8 b = *(*p)++;

		v |= (__u64)(b & 0x7f) << shift;
		shift += 7;
		if (!(b & 0x80))
			break;
	}
	return v;
}

static __s64 sleb(const __u8 **p, const __u8 *end)
{
	__s64 v = 0;
	unsigned int shift = 0;
	__u8 b = 0;

	while (*p < end) {
		b = *(*p)++;
		v |= (__s64)(b & 0x7f) << shift;
		shift += 7;
		if (!(b & 0x80))
			break;
	}
	if (shift < 64 && (b & 0x40))
		v |= -((__s64)1 << shift);
	return v;
}

struct row {
	__u64 addr;
	char file[32];
	__u32 line, col;
	bool end;
};

/* Decode a DWARF 4 line program into rows; returns the row count. */
static int decode_lines(const __u8 *p, size_t size, struct row *rows, int max)
{
	const __u8 *end, *prog, *q;
	const char *files[32];
	int nfiles = 0, n = 0;
	__u32 unit_len, hdr_len;
	__u8 min_len, opbase;
	__s8 line_base;
	__u8 line_range;
	__u64 addr = 0;
	__u32 file = 1, col = 0;
	__s64 line = 1;

	memcpy(&unit_len, p, 4);
	end = p + 4 + unit_len;
	CHECK(end <= p + size);
	CHECK_EQ(p[4] | p[5] << 8, 4);
	memcpy(&hdr_len, p + 6, 4);
	prog = p + 10 + hdr_len;
	min_len = p[10];
	line_base = (__s8)p[13];
	line_range = p[14];
	opbase = p[15];
	CHECK_EQ(min_len, 1);
	q = p + 16 + (opbase - 1);
	CHECK_EQ(*q, 0);		/* no include directories */
	q++;
	while (*q && nfiles < 32) {
		files[nfiles++] = (const char *)q;
		q += strlen((const char *)q) + 1;
		uleb(&q, end);
		uleb(&q, end);
		uleb(&q, end);
	}
	CHECK(q + 1 == prog);
	for (q = prog; q < end && n < max;) {
		__u8 op = *q++;
		bool emit = false, endseq = false;

		if (op >= opbase) {
			__u8 adj = op - opbase;

			addr += adj / line_range;
			line += line_base + adj % line_range;
			emit = true;
		} else if (op == 0) {
			__u64 len = uleb(&q, end);
			__u8 sub = *q;

			if (sub == 2)
				memcpy(&addr, q + 1, 8);
			if (sub == 1)
				emit = endseq = true;
			q += len;
		} else if (op == 1) {
			emit = true;
		} else if (op == 2) {
			addr += uleb(&q, end);
		} else if (op == 3) {
			line += sleb(&q, end);
		} else if (op == 4) {
			file = (__u32)uleb(&q, end);
		} else if (op == 5) {
			col = (__u32)uleb(&q, end);
		} else if (op == 8) {
			addr += (255 - opbase) / line_range;
		} else {
			CHECK(!"unexpected opcode");
			break;
		}
		if (emit) {
			rows[n].addr = addr;
			snprintf(rows[n].file, sizeof(rows[n].file), "%s",
				 file >= 1 && (int)file <= nfiles ? files[file - 1] : "?");
			rows[n].line = (__u32)line;
			rows[n].col = col;
			rows[n].end = endseq;
			n++;
		}
		if (endseq) {
			addr = 0;
			file = 1;
			line = 1;
			col = 0;
		}
	}
	return n;
}

struct die {
	__u64 off, tag, depth;
	const char *name;
	__u64 low, high, origin, ranges, call_line;
	bool has_ranges;
};

/* Walk .debug_info with .debug_abbrev; forms limited to what jitdwarf
 * writes.  Returns the DIE count. */
static int decode_dies(const __u8 *info, size_t isize, const __u8 *abbrev, size_t asize,
		       struct die *dies, int max)
{
	const __u8 *p = info + 11, *end;
	int n = 0, depth = 0;
	__u32 len;

	memcpy(&len, info, 4);
	end = info + 4 + len;
	CHECK(end == info + isize);
	CHECK_EQ(info[4], 4);
	CHECK_EQ(info[10], 8);
	while (p < end && n < max) {
		__u64 off = (__u64)(p - info), code = uleb(&p, end);
		const __u8 *a = abbrev;
		struct die *d = &dies[n];

		if (!code) {
			depth--;
			continue;
		}
		/* find the abbreviation */
		for (;;) {
			__u64 c = uleb(&a, abbrev + asize), tag = uleb(&a, abbrev + asize);
			bool kids = *a++;

			if (c == code) {
				memset(d, 0, sizeof(*d));
				d->off = off;
				d->tag = tag;
				d->depth = (__u64)depth;
				for (;;) {
					__u64 at = uleb(&a, abbrev + asize), form = uleb(&a, abbrev + asize);
					__u64 v = 0;

					if (!at && !form)
						break;
					switch (form) {
					case 0x08:	/* string */
						if (at == 0x03)
							d->name = (const char *)p;
						p += strlen((const char *)p) + 1;
						continue;
					case 0x01: case 0x07: memcpy(&v, p, 8); p += 8; break;
					case 0x0b: v = *p++; break;
					case 0x13: case 0x17: { __u32 v32; memcpy(&v32, p, 4); v = v32; p += 4; break; }
					case 0x0f: v = uleb(&p, end); break;
					default: CHECK(!"unexpected form"); return n;
					}
					if (at == 0x11) d->low = v;
					if (at == 0x12) d->high = v;
					if (at == 0x31) d->origin = v;
					if (at == 0x55) { d->ranges = v; d->has_ranges = true; }
					if (at == 0x59) d->call_line = v;
				}
				n++;
				if (kids)
					depth++;
				break;
			}
			while (uleb(&a, abbrev + asize) | uleb(&a, abbrev + asize))
				;
			if (a >= abbrev + asize) {
				CHECK(!"abbrev not found");
				return n;
			}
		}
	}
	CHECK_EQ(depth, 0);
	return n;
}

/* ---- the image under test ---- */

static const __u8 code_a[64] = { 0x55, 0x48, 0x89, 0xe5, [63] = 0xc3 };
static const __u8 code_b[20] = { 0x90, 0x90, [19] = 0xc3 };

/* A V8-shaped .eh_frame for a function of code_size bytes at code_addr:
 * CIE "zLR" (pcrel|sdata4), one FDE covering the function, terminator.
 * It assumes it is placed at code_addr + ALIGN8(code_size). */
static size_t make_eh_frame(__u8 *out, __u64 code_size)
{
	static const __u8 cie[28] = {
		0x18, 0, 0, 0, 0, 0, 0, 0, 3, 'z', 'L', 'R', 0, 1, 0x78, 0x10,
		2, 0xff, 0x1b, 0x0c, 0x07, 0x08, 0x90, 0x01, 0, 0, 0, 0,
	};
	__u8 fde[36] = { 0x20, 0, 0, 0, 0x20, 0, 0, 0 };
	__s32 pc = -(__s32)(((code_size + 7) & ~7ULL) + 28 + 8);
	__u32 range = (__u32)code_size;

	memcpy(fde + 8, &pc, 4);
	memcpy(fde + 12, &range, 4);
	fde[16] = 0;			/* augmentation data length */
	fde[17] = 0x41;			/* DW_CFA_advance_loc 1 */
	fde[18] = 0x0e;			/* DW_CFA_def_cfa_offset 16 */
	fde[19] = 0x10;
	memcpy(out, cie, sizeof(cie));
	memcpy(out + 28, fde, sizeof(fde));
	memset(out + 64, 0, 4);		/* terminator */
	return 68;
}

static struct jitelf_image *make_image(bool with_eh)
{
	struct jitelf_image *img = jitelf_image__new();
	struct jitelf_line rows[] = {
		{ 8, "a.js", 11, 2 }, { 0, "a.js", 10, 1 }, { 30, "b.js", 3, 0 },
		{ 500, "x.js", 1, 1 },			/* beyond the function: dropped */
	};
	struct jitelf_inline calls[] = {
		{ 0, "inl1", "c.js", 5, "a.js", 11, 3, 1 },
		{ 1, "inl2", "d.js", 7, "c.js", 6, 1, 2 },
	};
	struct jitelf_range ranges[] = { { 8, 16 }, { 10, 2 }, { 20, 4 } };
	__u8 eh[128];
	size_t n;

	CHECK_EQ(jitelf_image__add_func(img, "fooA", code_a, sizeof(code_a)), 0);
	CHECK_EQ(jitelf_image__add_func(img, "bar B with spaces", code_b, sizeof(code_b)), 1);
	CHECK_EQ(jitelf_image__add_func(img, "nocodeC", NULL, 100), 2);
	CHECK_EQ(jitelf_image__set_lines(img, 0, rows, 4), 0);
	CHECK_EQ(jitelf_image__set_inlines(img, 0, calls, 2, ranges, 3), 0);
	if (with_eh) {
		n = make_eh_frame(eh, sizeof(code_b));
		CHECK_EQ(jitelf_image__set_eh_frame(img, 1, eh, n, 0x7000, NULL), 0);
		n = make_eh_frame(eh, sizeof(code_a));
		CHECK_EQ(jitelf_image__set_eh_frame(img, 0, eh, n, 0x9000, NULL), 0);
	}
	return img;
}

TEST(image_layout_and_symbols)
{
	struct jitelf_image *img = make_image(false);
	struct image_file f;
	GElf_Ehdr eh;
	GElf_Phdr ph;
	GElf_Shdr sh, text_sh;
	Elf_Data *d;
	size_t nph, i;
	__u8 buf[64];
	bool saw_load = false, saw_note = false;

	CHECK_EQ(write_image(img, "a.so", &f), 0);
	CHECK(f.e != NULL);
	if (!f.e)
		return;
	CHECK(gelf_getehdr(f.e, &eh) != NULL);
	CHECK_EQ(eh.e_type, ET_DYN);
#ifdef __x86_64__
	CHECK_EQ(eh.e_machine, EM_X86_64);
#endif
	CHECK_EQ(eh.e_ident[EI_CLASS], ELFCLASS64);
	CHECK(find_scn(f.e, ".text", &text_sh) != NULL);
	CHECK_EQ(eh.e_entry, text_sh.sh_addr);
	CHECK_EQ(text_sh.sh_addr, text_sh.sh_offset);
	CHECK(!elf_getphdrnum(f.e, &nph));
	CHECK_EQ(nph, 2);
	for (i = 0; i < nph; i++) {
		gelf_getphdr(f.e, (int)i, &ph);
		if (ph.p_type == PT_LOAD) {
			saw_load = true;
			CHECK_EQ(ph.p_offset, ph.p_vaddr);
			CHECK_EQ(ph.p_offset, text_sh.sh_offset);
			CHECK_EQ(ph.p_flags, PF_R | PF_X);
			CHECK(ph.p_filesz >= text_sh.sh_size);
			/* covers the code-less function too */
			CHECK(ph.p_vaddr + ph.p_memsz >= jitelf_image__func_addr(img, 2) + 100);
		}
		if (ph.p_type == PT_NOTE)
			saw_note = true;
	}
	CHECK(saw_load && saw_note);
	/* symbols: value = file offset = address; code bytes at that offset */
	d = scn_data(f.e, ".symtab", &sh);
	CHECK(d != NULL);
	if (d) {
		static const char *const names[] = { "fooA", "bar B with spaces", "nocodeC" };
		static const __u64 sizes[] = { 64, 20, 100 };
		size_t nsym = sh.sh_size / sh.sh_entsize;

		CHECK_EQ(nsym, 4);
		for (i = 1; i < nsym && i < 4; i++) {
			GElf_Sym sym;
			GElf_Shdr ssh;

			gelf_getsym(d, (int)i, &sym);
			CHECK_STR(elf_strptr(f.e, sh.sh_link, sym.st_name), names[i - 1]);
			CHECK_EQ(sym.st_value, jitelf_image__func_addr(img, (int)i - 1));
			CHECK_EQ(sym.st_size, sizes[i - 1]);
			CHECK_EQ(GELF_ST_TYPE(sym.st_info), STT_FUNC);
			gelf_getshdr(elf_getscn(f.e, sym.st_shndx), &ssh);
			CHECK_EQ(ssh.sh_type, i == 3 ? SHT_NOBITS : SHT_PROGBITS);
			CHECK(ssh.sh_flags & SHF_EXECINSTR);
		}
	}
	CHECK_EQ(pread(f.fd, buf, 64, (off_t)jitelf_image__func_addr(img, 0)), 64);
	CHECK(!memcmp(buf, code_a, 64));
	CHECK_EQ(pread(f.fd, buf, 20, (off_t)jitelf_image__func_addr(img, 1)), 20);
	CHECK(!memcmp(buf, code_b, 20));
	CHECK_EQ(jitelf_image__func_addr(img, 0) % 16, 0);
	/* build-id note */
	d = scn_data(f.e, ".note.gnu.build-id", &sh);
	CHECK(d != NULL && d->d_size == 36);
	if (d && d->d_size == 36) {
		const __u8 *n = d->d_buf;

		CHECK_EQ(n[0], 4);
		CHECK_EQ(n[4], 20);
		CHECK_EQ(n[8], NT_GNU_BUILD_ID);
		CHECK(!memcmp(n + 12, "GNU", 4));
		CHECK(!memcmp(n + 16, jitelf_image__build_id(img), 20));
		CHECK(sh.sh_flags & SHF_ALLOC);
	}
	close_image(&f);
	jitelf_image__free(img);
}

TEST(build_id_is_a_content_hash)
{
	struct jitelf_image *a = make_image(false), *b = make_image(false), *c;
	struct image_file fa, fb, fc;
	__u8 other[64];

	memcpy(other, code_a, 64);
	other[10] = 0xcc;
	c = jitelf_image__new();
	jitelf_image__add_func(c, "fooA", other, 64);
	CHECK_EQ(write_image(a, "ha.so", &fa), 0);
	CHECK_EQ(write_image(b, "hb.so", &fb), 0);
	CHECK_EQ(write_image(c, "hc.so", &fc), 0);
	CHECK(!memcmp(jitelf_image__build_id(a), jitelf_image__build_id(b), 20));
	CHECK(memcmp(jitelf_image__build_id(a), jitelf_image__build_id(c), 20));
	CHECK_EQ(jitelf_image__file_size(a), jitelf_image__file_size(b));
	close_image(&fa);
	close_image(&fb);
	close_image(&fc);
	jitelf_image__free(a);
	jitelf_image__free(b);
	jitelf_image__free(c);
}

TEST(debug_line_rows)
{
	struct jitelf_image *img = make_image(false);
	struct image_file f;
	struct row rows[16];
	GElf_Shdr sh;
	Elf_Data *d;
	__u64 a;
	int n;

	CHECK_EQ(write_image(img, "l.so", &f), 0);
	a = jitelf_image__func_addr(img, 0);
	d = scn_data(f.e, ".debug_line", &sh);
	CHECK(d != NULL);
	if (!d)
		return;
	n = decode_lines(d->d_buf, d->d_size, rows, 16);
	/* sorted by offset, the out-of-range row dropped, then end_sequence */
	CHECK_EQ(n, 4);
	CHECK_EQ(rows[0].addr, a);
	CHECK_STR(rows[0].file, "a.js");
	CHECK_EQ(rows[0].line, 10);
	CHECK_EQ(rows[0].col, 1);
	CHECK_EQ(rows[1].addr, a + 8);
	CHECK_EQ(rows[1].line, 11);
	CHECK_EQ(rows[1].col, 2);
	CHECK_EQ(rows[2].addr, a + 30);
	CHECK_STR(rows[2].file, "b.js");
	CHECK_EQ(rows[2].line, 3);
	CHECK(rows[3].end);
	CHECK_EQ(rows[3].addr, a + 64);
	close_image(&f);
	jitelf_image__free(img);
}

TEST(debug_info_inline_tree)
{
	struct jitelf_image *img = make_image(false);
	struct image_file f;
	struct die dies[16];
	GElf_Shdr sh1, sh2, sh3;
	Elf_Data *info, *abbrev, *ranges;
	__u64 a;
	int n, i, sub = -1, in1 = -1, in2 = -1;

	CHECK_EQ(write_image(img, "i.so", &f), 0);
	a = jitelf_image__func_addr(img, 0);
	info = scn_data(f.e, ".debug_info", &sh1);
	abbrev = scn_data(f.e, ".debug_abbrev", &sh2);
	ranges = scn_data(f.e, ".debug_ranges", &sh3);
	CHECK(info && abbrev && ranges);
	if (!info || !abbrev || !ranges)
		return;
	n = decode_dies(info->d_buf, info->d_size, abbrev->d_buf, abbrev->d_size, dies, 16);
	CHECK_EQ(n, 6);		/* CU, 2 abstract, fooA, 2 inlined */
	CHECK_EQ(dies[0].tag, 0x11);
	for (i = 0; i < n; i++) {
		if (dies[i].tag == 0x2e && dies[i].name && !strcmp(dies[i].name, "fooA"))
			sub = i;
		if (dies[i].tag == 0x1d && in1 < 0)
			in1 = i;
		else if (dies[i].tag == 0x1d)
			in2 = i;
	}
	CHECK(sub > 0 && in1 > sub && in2 > in1);
	if (sub < 0 || in1 < 0 || in2 < 0)
		return;
	CHECK_EQ(dies[sub].low, a);
	CHECK_EQ(dies[sub].high, 64);
	CHECK_EQ(dies[in1].depth, dies[sub].depth + 1);
	CHECK_EQ(dies[in2].depth, dies[in1].depth + 1);
	CHECK_EQ(dies[in1].low, a + 8);
	CHECK_EQ(dies[in1].high, 16);
	CHECK_EQ(dies[in1].call_line, 11);
	CHECK(dies[in2].has_ranges);
	for (i = 0; i < n; i++) {
		if (dies[i].off == dies[in1].origin)
			CHECK_STR(dies[i].name, "inl1");
		if (dies[i].off == dies[in2].origin)
			CHECK_STR(dies[i].name, "inl2");
	}
	/* .debug_ranges: two ranges, relative to the CU's low_pc, then 0,0 */
	if (dies[in2].has_ranges && ranges->d_size >= dies[in2].ranges + 48) {
		__u64 r[6];

		memcpy(r, (__u8 *)ranges->d_buf + dies[in2].ranges, sizeof(r));
		CHECK_EQ(r[0] + dies[0].low, a + 10);
		CHECK_EQ(r[1] + dies[0].low, a + 12);
		CHECK_EQ(r[2] + dies[0].low, a + 20);
		CHECK_EQ(r[3] + dies[0].low, a + 24);
		CHECK_EQ(r[4], 0);
		CHECK_EQ(r[5], 0);
	}
	close_image(&f);
	jitelf_image__free(img);
}

TEST(eh_frame_relocated)
{
	struct jitelf_image *img = make_image(true);
	struct image_file f;
	GElf_Shdr ehs, hdrs;
	Elf_Data *eh, *hdr;
	GElf_Phdr ph;
	size_t nph, i;
	bool saw = false;

	CHECK_EQ(write_image(img, "e.so", &f), 0);
	eh = scn_data(f.e, ".eh_frame", &ehs);
	hdr = scn_data(f.e, ".eh_frame_hdr", &hdrs);
	CHECK(eh && hdr);
	if (!eh || !hdr)
		return;
	CHECK_EQ(ehs.sh_addr, ehs.sh_offset);
	CHECK_EQ(hdr->d_size, 12 + 2 * 8);
	if (hdr->d_size == 28) {
		const __u8 *h = hdr->d_buf;
		__s32 ptr, loc, fde;
		__u32 count;

		CHECK_EQ(h[0], 1);
		CHECK_EQ(h[1], 0x1b);
		CHECK_EQ(h[3], 0x3b);
		memcpy(&ptr, h + 4, 4);
		CHECK_EQ(hdrs.sh_addr + 4 + ptr, ehs.sh_addr);
		memcpy(&count, h + 8, 4);
		CHECK_EQ(count, 2);
		/* sorted by address: fooA (func 0) first */
		for (i = 0; i < 2; i++) {
			__s32 pc;
			__u64 fde_addr;

			memcpy(&loc, h + 12 + 8 * i, 4);
			memcpy(&fde, h + 16 + 8 * i, 4);
			CHECK_EQ(hdrs.sh_addr + loc, jitelf_image__func_addr(img, (int)i));
			fde_addr = hdrs.sh_addr + fde;
			/* the FDE's own pc_begin (pcrel) points at the same place */
			memcpy(&pc, (__u8 *)eh->d_buf + (fde_addr - ehs.sh_addr) + 8, 4);
			CHECK_EQ(fde_addr + 8 + pc, jitelf_image__func_addr(img, (int)i));
		}
	}
	CHECK(!elf_getphdrnum(f.e, &nph));
	for (i = 0; i < nph; i++) {
		gelf_getphdr(f.e, (int)i, &ph);
		if (ph.p_type == PT_GNU_EH_FRAME) {
			saw = true;
			CHECK_EQ(ph.p_vaddr, hdrs.sh_addr);
		}
		if (ph.p_type == PT_LOAD)
			CHECK(ph.p_offset + ph.p_filesz >= hdrs.sh_offset + hdrs.sh_size);
	}
	CHECK(saw);
	close_image(&f);
	jitelf_image__free(img);
}

TEST(hostile_inputs)
{
	struct jitelf_image *img = jitelf_image__new();
	struct jitelf_inline bad_depth[] = { { 1, "x", "f", 1, "f", 1, 1, 1 } };
	struct jitelf_inline ok_call[] = { { 0, "", NULL, 1, NULL, 1, 1, 1 } };
	struct jitelf_range out_of_func[] = { { 60, 10 } };
	struct jitelf_range in_func[] = { { 0, 4 } };
	const char *why = NULL;
	char *long_name = malloc(10000);
	__u8 junk[64];
	struct image_file f;

	memset(long_name, 'n', 9999);
	long_name[9999] = '\0';
	memset(junk, 0xab, sizeof(junk));
	CHECK_EQ(jitelf_image__add_func(img, "f", code_a, 0), -EINVAL);
	CHECK_EQ(jitelf_image__add_func(img, long_name, code_a, 64), 0);
	CHECK_EQ(jitelf_image__add_func(img, "", NULL, 8), 1);
	CHECK_EQ(jitelf_image__set_lines(img, 1, NULL, 0), -EINVAL);	/* no code */
	CHECK_EQ(jitelf_image__set_lines(img, 7, NULL, 0), -EINVAL);
	CHECK_EQ(jitelf_image__set_inlines(img, 0, bad_depth, 1, in_func, 1), -EINVAL);
	CHECK_EQ(jitelf_image__set_inlines(img, 0, ok_call, 1, out_of_func, 1), -EINVAL);
	CHECK_EQ(jitelf_image__set_inlines(img, 0, ok_call, 1, in_func, 0), -EINVAL);
	CHECK_EQ(jitelf_image__set_inlines(img, 0, ok_call, 1, in_func, 1), 0);
	CHECK_EQ(jitelf_image__set_eh_frame(img, 0, junk, sizeof(junk), 0x1000, &why), -EBADMSG);
	CHECK(why != NULL);
	CHECK_EQ(jitelf_image__set_eh_frame(img, 1, junk, 8, 0x1000, &why), -EINVAL);
	CHECK_EQ(write_image(img, "h.so", &f), 0);
	if (f.e) {
		GElf_Shdr sh;
		Elf_Data *d = scn_data(f.e, ".symtab", &sh);
		GElf_Sym sym;

		CHECK(d != NULL);
		if (d) {
			gelf_getsym(d, 1, &sym);
			CHECK_EQ(strlen(elf_strptr(f.e, sh.sh_link, sym.st_name)), JITELF_MAX_NAME);
			gelf_getsym(d, 2, &sym);
			CHECK_STR(elf_strptr(f.e, sh.sh_link, sym.st_name), "<unknown>");
		}
	}
	/* written once */
	CHECK_EQ(jitelf_image__write(img, f.fd), -EINVAL);
	CHECK_EQ(jitelf_image__add_func(img, "late", code_a, 4), -EINVAL);
	close_image(&f);
	jitelf_image__free(img);
	free(long_name);
}

TEST(hash_and_leb)
{
	struct jithash h1, h2;
	__u8 a[20], b[20], data[1000];
	struct pbuf p = { 0 };
	const __u8 *q;

	for (int i = 0; i < 1000; i++)
		data[i] = (__u8)(i * 7);
	jithash_init(&h1);
	jithash_update(&h1, data, sizeof(data));
	jithash_final(&h1, a);
	jithash_init(&h2);
	for (int i = 0; i < 1000; i += 13)
		jithash_update(&h2, data + i, i + 13 <= 1000 ? 13 : 1000 - i);
	jithash_final(&h2, b);
	CHECK(!memcmp(a, b, 20));
	jithash_init(&h2);
	jithash_update(&h2, data, 999);
	jithash_final(&h2, b);
	CHECK(memcmp(a, b, 20));

	leb128_put_u(&p, 624485);
	CHECK_EQ(p.len, 3);
	CHECK(!memcmp(p.data, "\xe5\x8e\x26", 3));
	pbuf_reset(&p);
	leb128_put_s(&p, -123456);
	CHECK(!memcmp(p.data, "\xc0\xbb\x78", 3));
	q = p.data;
	CHECK_EQ(sleb(&q, p.data + p.len), -123456);
	pbuf_free(&p);
}

int main(void)
{
	log_verbosity = -1;
	return HARNESS_WITH_TMPDIR(tmpdir, {
		RUN(image_layout_and_symbols);
		RUN(build_id_is_a_content_hash);
		RUN(debug_line_rows);
		RUN(debug_info_inline_tree);
		RUN(eh_frame_relocated);
		RUN(hostile_inputs);
		RUN(hash_and_leb);
	});
}
