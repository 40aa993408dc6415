// SPDX-License-Identifier: GPL-2.0
/*
 * DWARF 4 writer for JIT images (see jitdwarf.h).
 *
 * .debug_info layout:
 *   CU header {u32 unit_length, u16 version 4, u32 abbrev_offset 0, u8 8}
 *   DW_TAG_compile_unit (producer, name, stmt_list 0, low_pc, high_pc)
 *     per function with inlines: one abstract DW_TAG_subprogram per call
 *       (name, linkage_name, decl_file, decl_line, inline)
 *     per function: DW_TAG_subprogram (name, low_pc, high_pc)
 *       DW_TAG_inlined_subroutine (abstract_origin, low/high_pc or
 *         ranges, call_file, call_line, call_column), nested by depth
 */
#include "jit/jitdwarf.h"

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "util/leb128.h"

enum {
	DW_TAG_inlined_subroutine = 0x1d,
	DW_TAG_compile_unit = 0x11,
	DW_TAG_subprogram = 0x2e,
	DW_AT_name = 0x03,
	DW_AT_stmt_list = 0x10,
	DW_AT_low_pc = 0x11,
	DW_AT_high_pc = 0x12,
	DW_AT_inline = 0x20,
	DW_AT_producer = 0x25,
	DW_AT_abstract_origin = 0x31,
	DW_AT_decl_file = 0x3a,
	DW_AT_decl_line = 0x3b,
	DW_AT_ranges = 0x55,
	DW_AT_call_column = 0x57,
	DW_AT_call_file = 0x58,
	DW_AT_call_line = 0x59,
	DW_AT_linkage_name = 0x6e,
	DW_FORM_addr = 0x01,
	DW_FORM_data1 = 0x0b,
	DW_FORM_data8 = 0x07,
	DW_FORM_string = 0x08,
	DW_FORM_udata = 0x0f,
	DW_FORM_ref4 = 0x13,
	DW_FORM_sec_offset = 0x17,
	DW_INL_inlined = 1,
	DW_LNS_copy = 1,
	DW_LNS_advance_pc = 2,
	DW_LNS_advance_line = 3,
	DW_LNS_set_file = 4,
	DW_LNS_set_column = 5,
	DW_LNE_end_sequence = 1,
	DW_LNE_set_address = 2,
};

enum abbrev_code {
	AB_CU = 1,
	AB_SUB_KIDS,		/* concrete subprogram with inlined calls */
	AB_SUB,
	AB_ABSTRACT,
	AB_INL_PC_KIDS,
	AB_INL_PC,
	AB_INL_RANGES_KIDS,
	AB_INL_RANGES,
};

#define LINE_BASE	(-5)
#define LINE_RANGE	14
#define OPCODE_BASE	13
#define DWARF_VERSION	4

static void put_str(struct pbuf *b, const char *s)
{
	pbuf_put(b, s, strlen(s) + 1);
}

static void patch_u32(struct pbuf *b, size_t at, __u32 v)
{
	if (!b->err && at + 4 <= b->len)
		memcpy(b->data + at, &v, 4);
}

/* ---- .debug_abbrev ---- */

static void abbrev(struct pbuf *b, enum abbrev_code code, __u32 tag, bool kids,
		   const __u8 (*attrs)[2], size_t n)
{
	size_t i;

	leb128_put_u(b, code);
	leb128_put_u(b, tag);
	pbuf_put_u8(b, kids);
	for (i = 0; i < n; i++) {
		leb128_put_u(b, attrs[i][0]);
		leb128_put_u(b, attrs[i][1]);
	}
	pbuf_put_u16(b, 0);
}

#define ABBREV(b, code, tag, kids, attrs) \
	abbrev(b, code, tag, kids, attrs, sizeof(attrs) / sizeof(attrs[0]))

static void build_abbrev(struct pbuf *b)
{
	static const __u8 cu[][2] = {
		{ DW_AT_producer, DW_FORM_string }, { DW_AT_name, DW_FORM_string },
		{ DW_AT_stmt_list, DW_FORM_sec_offset }, { DW_AT_low_pc, DW_FORM_addr },
		{ DW_AT_high_pc, DW_FORM_data8 },
	};
	static const __u8 sub[][2] = {
		{ DW_AT_name, DW_FORM_string }, { DW_AT_low_pc, DW_FORM_addr },
		{ DW_AT_high_pc, DW_FORM_data8 },
	};
	static const __u8 abstract[][2] = {
		{ DW_AT_name, DW_FORM_string }, { DW_AT_linkage_name, DW_FORM_string },
		{ DW_AT_decl_file, DW_FORM_udata }, { DW_AT_decl_line, DW_FORM_udata },
		{ DW_AT_inline, DW_FORM_data1 },
	};
	static const __u8 inl_pc[][2] = {
		{ DW_AT_abstract_origin, DW_FORM_ref4 }, { DW_AT_low_pc, DW_FORM_addr },
		{ DW_AT_high_pc, DW_FORM_data8 }, { DW_AT_call_file, DW_FORM_udata },
		{ DW_AT_call_line, DW_FORM_udata }, { DW_AT_call_column, DW_FORM_udata },
	};
	static const __u8 inl_ranges[][2] = {
		{ DW_AT_abstract_origin, DW_FORM_ref4 }, { DW_AT_ranges, DW_FORM_sec_offset },
		{ DW_AT_call_file, DW_FORM_udata }, { DW_AT_call_line, DW_FORM_udata },
		{ DW_AT_call_column, DW_FORM_udata },
	};

	ABBREV(b, AB_CU, DW_TAG_compile_unit, true, cu);
	ABBREV(b, AB_SUB_KIDS, DW_TAG_subprogram, true, sub);
	ABBREV(b, AB_SUB, DW_TAG_subprogram, false, sub);
	ABBREV(b, AB_ABSTRACT, DW_TAG_subprogram, false, abstract);
	ABBREV(b, AB_INL_PC_KIDS, DW_TAG_inlined_subroutine, true, inl_pc);
	ABBREV(b, AB_INL_PC, DW_TAG_inlined_subroutine, false, inl_pc);
	ABBREV(b, AB_INL_RANGES_KIDS, DW_TAG_inlined_subroutine, true, inl_ranges);
	ABBREV(b, AB_INL_RANGES, DW_TAG_inlined_subroutine, false, inl_ranges);
	pbuf_put_u8(b, 0);
}

/* ---- .debug_line ---- */

static void line_header(struct pbuf *b, const char *const *files, size_t nr_files,
			size_t *len_at, size_t *hdr_len_at)
{
	static const __u8 std_lengths[OPCODE_BASE - 1] = {
		0, 1, 1, 1, 1, 0, 0, 0, 1, 0, 0, 1,
	};
	size_t i;

	*len_at = b->len;
	pbuf_put_u32(b, 0);			/* unit_length */
	pbuf_put_u16(b, DWARF_VERSION);
	*hdr_len_at = b->len;
	pbuf_put_u32(b, 0);			/* header_length */
	pbuf_put_u8(b, 1);			/* minimum_instruction_length */
	pbuf_put_u8(b, 1);			/* maximum_operations_per_instruction */
	pbuf_put_u8(b, 1);			/* default_is_stmt */
	pbuf_put_u8(b, (__u8)LINE_BASE);
	pbuf_put_u8(b, LINE_RANGE);
	pbuf_put_u8(b, OPCODE_BASE);
	pbuf_put(b, std_lengths, sizeof(std_lengths));
	pbuf_put_u8(b, 0);			/* no include_directories */
	for (i = 0; i < nr_files; i++) {
		put_str(b, files[i]);
		leb128_put_u(b, 0);	/* directory: the CU's */
		leb128_put_u(b, 0);	/* mtime */
		leb128_put_u(b, 0);	/* length */
	}
	pbuf_put_u8(b, 0);
}

static void line_advance(struct pbuf *b, __s64 line_delta, __u64 addr_delta)
{
	__s64 adj = line_delta - LINE_BASE;

	if (adj >= 0 && adj < LINE_RANGE &&
	    addr_delta <= (255 - OPCODE_BASE - (__u64)adj) / LINE_RANGE) {
		pbuf_put_u8(b, (__u8)(adj + LINE_RANGE * addr_delta + OPCODE_BASE));
		return;
	}
	if (line_delta) {
		pbuf_put_u8(b, DW_LNS_advance_line);
		leb128_put_s(b, line_delta);
	}
	if (addr_delta) {
		pbuf_put_u8(b, DW_LNS_advance_pc);
		leb128_put_u(b, addr_delta);
	}
	pbuf_put_u8(b, DW_LNS_copy);
}

static void line_sequence(struct pbuf *b, const struct jitdwarf_func *f)
{
	__u32 file = 0, column = 0, off;
	__s64 line = 1;
	size_t i;

	if (!f->nr_rows)
		return;
	off = f->rows[0].offset;
	pbuf_put_u8(b, 0);			/* DW_LNE_set_address */
	leb128_put_u(b, 9);
	pbuf_put_u8(b, DW_LNE_set_address);
	pbuf_put_u64(b, f->addr + off);
	for (i = 0; i < f->nr_rows; i++) {
		const struct jitdwarf_row *r = &f->rows[i];

		if (i == 0 || r->file != file) {
			pbuf_put_u8(b, DW_LNS_set_file);
			leb128_put_u(b, (__u64)r->file + 1);
			file = r->file;
		}
		if (r->column != column) {
			pbuf_put_u8(b, DW_LNS_set_column);
			leb128_put_u(b, r->column);
			column = r->column;
		}
		line_advance(b, (__s64)r->line - line, r->offset - off);
		line = r->line;
		off = r->offset;
	}
	if (f->size > off) {
		pbuf_put_u8(b, DW_LNS_advance_pc);
		leb128_put_u(b, f->size - off);
	}
	pbuf_put_u8(b, 0);			/* DW_LNE_end_sequence */
	leb128_put_u(b, 1);
	pbuf_put_u8(b, DW_LNE_end_sequence);
}

static void build_line(struct pbuf *b, const struct jitdwarf_func *funcs, size_t n,
		       const char *const *files, size_t nr_files)
{
	size_t len_at, hdr_len_at, i;

	line_header(b, files, nr_files, &len_at, &hdr_len_at);
	patch_u32(b, hdr_len_at, (__u32)(b->len - hdr_len_at - 4));
	for (i = 0; i < n; i++)
		line_sequence(b, &funcs[i]);
	patch_u32(b, len_at, (__u32)(b->len - len_at - 4));
}

/* ---- .debug_info ---- */

static void info_inline(struct pbuf *info, struct pbuf *ranges,
			const struct jitdwarf_func *f, const struct jitdwarf_inline *c,
			const struct jitdwarf_range *r, __u32 origin, __u64 cu_low, bool kids)
{
	__u32 i, nonempty = 0;

	for (i = 0; i < c->nr_ranges; i++)
		nonempty += r[i].size != 0;
	if (nonempty <= 1) {
		__u32 start = 0, size = 0;

		for (i = 0; i < c->nr_ranges; i++)
			if (r[i].size) {
				start = r[i].offset;
				size = r[i].size;
			}
		leb128_put_u(info, kids ? AB_INL_PC_KIDS : AB_INL_PC);
		pbuf_put_u32(info, origin);
		pbuf_put_u64(info, f->addr + start);
		pbuf_put_u64(info, size);
	} else {
		leb128_put_u(info, kids ? AB_INL_RANGES_KIDS : AB_INL_RANGES);
		pbuf_put_u32(info, origin);
		pbuf_put_u32(info, (__u32)ranges->len);
		for (i = 0; i < c->nr_ranges; i++) {
			if (!r[i].size)
				continue;
			pbuf_put_u64(ranges, f->addr + r[i].offset - cu_low);
			pbuf_put_u64(ranges, f->addr + r[i].offset + r[i].size - cu_low);
		}
		pbuf_put_u64(ranges, 0);
		pbuf_put_u64(ranges, 0);
	}
	leb128_put_u(info, (__u64)c->call_file + 1);
	leb128_put_u(info, c->call_line);
	leb128_put_u(info, c->call_column);
}

static int info_func(struct pbuf *info, struct pbuf *ranges,
		     const struct jitdwarf_func *f, __u64 cu_low)
{
	const struct jitdwarf_range *r = f->ranges;
	__u32 *origin, open = 0;
	size_t i;

	if (!f->nr_inl) {
		leb128_put_u(info, AB_SUB);
		put_str(info, f->name);
		pbuf_put_u64(info, f->addr);
		pbuf_put_u64(info, f->size);
		return info->err;
	}
	origin = calloc(f->nr_inl, sizeof(*origin));
	if (!origin)
		return -ENOMEM;
	/* abstract instances first: the inlined calls refer to them by their
	 * offset from the CU header (the only CU starts at offset 0) */
	for (i = 0; i < f->nr_inl; i++) {
		origin[i] = (__u32)info->len;
		leb128_put_u(info, AB_ABSTRACT);
		put_str(info, f->inl[i].name);
		put_str(info, f->inl[i].name);	/* binutils names inlines by it */
		leb128_put_u(info, (__u64)f->inl[i].decl_file + 1);
		leb128_put_u(info, f->inl[i].decl_line);
		pbuf_put_u8(info, DW_INL_inlined);
	}
	leb128_put_u(info, AB_SUB_KIDS);
	put_str(info, f->name);
	pbuf_put_u64(info, f->addr);
	pbuf_put_u64(info, f->size);
	for (i = 0; i < f->nr_inl; i++) {
		const struct jitdwarf_inline *c = &f->inl[i];
		bool kids = i + 1 < f->nr_inl && f->inl[i + 1].depth > c->depth;

		if (c->depth > open) {
			free(origin);
			return -EINVAL;		/* not in DFS order */
		}
		for (; open > c->depth; open--)
			pbuf_put_u8(info, 0);
		info_inline(info, ranges, f, c, r, origin[i], cu_low, kids);
		r += c->nr_ranges;
		if (kids)
			open = c->depth + 1;
	}
	for (; open > 0; open--)
		pbuf_put_u8(info, 0);
	pbuf_put_u8(info, 0);			/* end of the subprogram's children */
	free(origin);
	return info->err;
}

static void build_info(struct pbuf *info, struct pbuf *ranges,
		       const struct jitdwarf_func *funcs, size_t n,
		       __u64 cu_low, __u64 cu_high, int *err)
{
	size_t len_at = info->len, i;

	pbuf_put_u32(info, 0);			/* unit_length */
	pbuf_put_u16(info, DWARF_VERSION);
	pbuf_put_u32(info, 0);			/* debug_abbrev_offset */
	pbuf_put_u8(info, 8);			/* address_size */
	leb128_put_u(info, AB_CU);
	put_str(info, "precord");
	put_str(info, "jit");
	pbuf_put_u32(info, 0);			/* stmt_list */
	pbuf_put_u64(info, cu_low);
	pbuf_put_u64(info, cu_high - cu_low);
	for (i = 0; i < n && !*err; i++)
		*err = info_func(info, ranges, &funcs[i], cu_low);
	pbuf_put_u8(info, 0);			/* end of the CU's children */
	patch_u32(info, len_at, (__u32)(info->len - len_at - 4));
}

int jitdwarf_build(const struct jitdwarf_func *funcs, size_t n,
		   const char *const *files, size_t nr_files,
		   __u64 cu_low, __u64 cu_high, struct jitdwarf_out *out)
{
	int err = 0;

	pbuf_reset(&out->abbrev);
	pbuf_reset(&out->info);
	pbuf_reset(&out->line);
	pbuf_reset(&out->ranges);
	build_abbrev(&out->abbrev);
	build_line(&out->line, funcs, n, files, nr_files);
	build_info(&out->info, &out->ranges, funcs, n, cu_low, cu_high, &err);
	if (err)
		return err;
	if (out->abbrev.err || out->info.err || out->line.err || out->ranges.err)
		return -ENOMEM;
	if (out->info.len > UINT32_MAX || out->line.len > UINT32_MAX)
		return -E2BIG;
	return 0;
}

void jitdwarf_out_free(struct jitdwarf_out *out)
{
	pbuf_free(&out->abbrev);
	pbuf_free(&out->info);
	pbuf_free(&out->line);
	pbuf_free(&out->ranges);
}
