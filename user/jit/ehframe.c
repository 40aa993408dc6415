// SPDX-License-Identifier: GPL-2.0
/*
 * .eh_frame import and relocation for JIT images (see ehframe.h).
 *
 * .eh_frame entry:  u32 length (0 = terminator), u32 id (0 = CIE, else the
 *   distance back to the entry's CIE), then
 *   CIE: u8 version, augmentation string, [v4: u8 addr size, u8 seg size],
 *        uleb code_align, sleb data_align, return register (u8 in v1, uleb
 *        later), ['z': uleb length, one argument per augmentation letter]
 *   FDE: pc_begin and pc_range in the CIE's 'R' encoding, ...
 * .eh_frame_hdr: u8 version 1, u8 eh_frame_ptr_enc (pcrel|sdata4),
 *   u8 fde_count_enc (udata4), u8 table_enc (datarel|sdata4),
 *   s32 eh_frame_ptr, u32 fde_count, {s32 initial_loc, s32 fde} * count
 *   sorted by initial_loc, both relative to the header's start.
 */
#include "jit/ehframe.h"

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "util/leb128.h"

enum {
	PE_absptr = 0x00, PE_udata4 = 0x03, PE_udata8 = 0x04,
	PE_sdata4 = 0x0b, PE_sdata8 = 0x0c,
	PE_pcrel = 0x10, PE_datarel = 0x30, PE_omit = 0xff,
};

#define MAX_CIES	16

struct cursor {
	const __u8 *p;
	size_t pos, end;
	bool bad;
};

static __u8 cur_u8(struct cursor *c)
{
	if (c->pos >= c->end) {
		c->bad = true;
		return 0;
	}
	return c->p[c->pos++];
}

/* Past a LEB128 field whose value precord does not use (any length). */
static void cur_skip_leb(struct cursor *c)
{
	const __u8 *q = c->p + c->pos;

	if (leb128_skip(&q, c->p + c->end))
		c->bad = true;
	c->pos = (size_t)(q - c->p);
}

/* Size of a pc_begin in encoding enc, 0 if precord does not relocate it. */
static size_t enc_size(__u8 enc)
{
	if ((enc & 0x70) != 0 && (enc & 0x70) != PE_pcrel)
		return 0;
	switch (enc & 0x0f) {
	case PE_absptr:
	case PE_udata8:
	case PE_sdata8:
		return 8;
	case PE_udata4:
	case PE_sdata4:
		return 4;
	default:
		return 0;
	}
}

static __u64 read_enc(const __u8 *p, __u8 enc)
{
	__u32 v32;
	__u64 v64;

	if (enc_size(enc) == 4) {
		memcpy(&v32, p, 4);
		return (enc & 0x0f) == PE_sdata4 ? (__u64)(__s64)(__s32)v32 : v32;
	}
	memcpy(&v64, p, 8);
	return v64;
}

struct cie {
	size_t off;
	__u8 enc;
};

/* Parse the CIE body at c (after the id); sets *enc.  false = unsupported. */
static bool parse_cie(struct cursor *c, __u8 *enc, const char **why)
{
	const char *aug;
	size_t aug_len, i;
	__u8 version = cur_u8(c);

	*enc = PE_absptr;
	if (version != 1 && version != 3 && version != 4)
		return *why = "unsupported CIE version", false;
	aug = (const char *)c->p + c->pos;
	aug_len = strnlen(aug, c->end - c->pos);
	if (aug_len == c->end - c->pos)
		return *why = "CIE augmentation not terminated", false;
	c->pos += aug_len + 1;
	if (strstr(aug, "eh"))
		return *why = "CIE with the old 'eh' augmentation", false;
	if (version == 4) {
		if (cur_u8(c) != 8)
			return *why = "CIE address size is not 8", false;
		cur_u8(c);
	}
	cur_skip_leb(c);			/* code alignment */
	cur_skip_leb(c);			/* data alignment (sleb) */
	if (version == 1)
		cur_u8(c);
	else
		cur_skip_leb(c);		/* return address register */
	if (aug[0] != 'z')
		return aug[0] == '\0' ? true : (*why = "unknown CIE augmentation", false);
	cur_skip_leb(c);			/* augmentation data length */
	for (i = 1; i < aug_len; i++) {
		switch (aug[i]) {
		case 'R':
			*enc = cur_u8(c);
			break;
		case 'L':
			if (cur_u8(c) != PE_omit)
				return *why = "CIE with an LSDA pointer", false;
			break;
		case 'P':
			if (cur_u8(c) != PE_omit)
				return *why = "CIE with a personality routine", false;
			break;
		case 'S':
		case 'B':
			break;
		default:
			return *why = "unknown CIE augmentation", false;
		}
	}
	if (c->bad)
		return *why = "CIE truncated", false;
	if (!enc_size(*enc))
		return *why = "unsupported FDE pointer encoding", false;
	return true;
}

static int fdes_push(struct ehframe_fdes *f, const struct ehframe_fde *e)
{
	if (f->nr == f->cap) {
		size_t cap = f->cap ? f->cap * 2 : 64;
		struct ehframe_fde *v = realloc(f->v, cap * sizeof(*v));

		if (!v)
			return -ENOMEM;
		f->v = v;
		f->cap = cap;
	}
	f->v[f->nr++] = *e;
	return 0;
}

/* Walk the entries; with commit, append FDE fixups (base = offset of in[0]
 * in the image's .eh_frame).  Returns the bytes before the terminator. */
static ssize_t walk(const __u8 *in, size_t n, __u64 code_addr, __u64 code_size,
		    struct ehframe_fdes *fdes, size_t base, __u32 func, const char **why)
{
	struct cie cies[MAX_CIES];
	size_t nr_cies = 0, off = 0;
	const __u64 origin = code_addr + ((code_size + 7) & ~7ULL);

	while (off + 4 <= n) {
		struct cursor c = { .p = in, .pos = off + 4 };
		__u32 len, id;
		size_t i;

		memcpy(&len, in + off, 4);
		if (len == 0)
			break;				/* terminator */
		if (len == 0xffffffffu || len > n - off - 4 || len < 4)
			return *why = "entry length beyond the data", -EBADMSG;
		c.end = off + 4 + len;
		memcpy(&id, in + off + 4, 4);
		c.pos += 4;
		if (id == 0) {
			if (nr_cies == MAX_CIES)
				return *why = "too many CIEs", -EBADMSG;
			cies[nr_cies].off = off;
			if (!parse_cie(&c, &cies[nr_cies].enc, why))
				return -EBADMSG;
			nr_cies++;
		} else {
			struct ehframe_fde e = { 0 };
			size_t cie_off = off + 4 - id, sz;
			__u64 v, target;

			for (i = 0; i < nr_cies && cies[i].off != cie_off; i++)
				;
			if (id > off + 4 || i == nr_cies)
				return *why = "FDE without its CIE", -EBADMSG;
			sz = enc_size(cies[i].enc);
			if (c.pos + sz > c.end)
				return *why = "FDE truncated", -EBADMSG;
			v = read_enc(in + c.pos, cies[i].enc);
			if ((cies[i].enc & 0x70) == PE_pcrel)
				target = origin + c.pos + v;
			else
				target = v;
			if (target < code_addr || target - code_addr > code_size)
				return *why = "FDE outside its function", -EBADMSG;
			e.fde_off = (__u32)(base + off);
			e.field_off = (__u32)(base + c.pos);
			e.enc = cies[i].enc;
			e.func = func;
			e.delta = target - code_addr;
			if (fdes && fdes_push(fdes, &e))
				return -ENOMEM;
		}
		off = c.end;
	}
	return (ssize_t)off;
}

int ehframe_import(struct pbuf *out, struct ehframe_fdes *fdes,
		   const __u8 *in, size_t n, __u64 code_addr, __u64 code_size,
		   __u32 func, const char **why)
{
	size_t old_nr = fdes->nr;
	ssize_t used;

	used = walk(in, n, code_addr, code_size, NULL, 0, func, why);
	if (used < 0)
		return (int)used;
	if (out->len + (size_t)used > 0x7fffffff)
		return *why = ".eh_frame too large", -EBADMSG;
	used = walk(in, (size_t)used, code_addr, code_size, fdes, out->len, func, why);
	if (used < 0 || pbuf_put(out, in, (size_t)used)) {
		fdes->nr = old_nr;
		return -ENOMEM;
	}
	return 0;
}

int ehframe_patch(__u8 *eh, size_t len, const struct ehframe_fdes *fdes, __u64 eh_addr)
{
	size_t i;

	for (i = 0; i < fdes->nr; i++) {
		const struct ehframe_fde *e = &fdes->v[i];
		size_t sz = enc_size(e->enc);
		__u64 v = e->target;

		if (e->field_off + sz > len)
			return -ERANGE;
		if ((e->enc & 0x70) == PE_pcrel)
			v -= eh_addr + e->field_off;
		if (sz == 4) {
			__s64 s = (__s64)v;
			__u32 v32 = (__u32)v;

			if ((e->enc & 0x0f) == PE_sdata4 ? (s < INT32_MIN || s > INT32_MAX) :
			    v > UINT32_MAX)
				return -ERANGE;
			memcpy(eh + e->field_off, &v32, 4);
		} else {
			memcpy(eh + e->field_off, &v, 8);
		}
	}
	return 0;
}

size_t ehframe_hdr_size(size_t nr_fdes)
{
	return 12 + nr_fdes * 8;
}

static int cmp_target(const void *a, const void *b)
{
	const struct ehframe_fde *x = a, *y = b;

	return x->target < y->target ? -1 : x->target > y->target;
}

int ehframe_build_hdr(struct pbuf *hdr, struct ehframe_fdes *fdes,
		      __u64 eh_addr, __u64 hdr_addr)
{
	__s64 d;
	size_t i;

	qsort(fdes->v, fdes->nr, sizeof(*fdes->v), cmp_target);
	pbuf_reset(hdr);
	pbuf_put_u8(hdr, 1);
	pbuf_put_u8(hdr, PE_pcrel | PE_sdata4);
	pbuf_put_u8(hdr, PE_udata4);
	pbuf_put_u8(hdr, PE_datarel | PE_sdata4);
	d = (__s64)(eh_addr - (hdr_addr + 4));
	if (d < INT32_MIN || d > INT32_MAX || fdes->nr > UINT32_MAX)
		return -ERANGE;
	pbuf_put_u32(hdr, (__u32)(__s32)d);
	pbuf_put_u32(hdr, (__u32)fdes->nr);
	for (i = 0; i < fdes->nr; i++) {
		__s64 loc = (__s64)(fdes->v[i].target - hdr_addr);
		__s64 fde = (__s64)(eh_addr + fdes->v[i].fde_off - hdr_addr);

		if (loc < INT32_MIN || loc > INT32_MAX || fde < INT32_MIN || fde > INT32_MAX)
			return -ERANGE;
		pbuf_put_u32(hdr, (__u32)(__s32)loc);
		pbuf_put_u32(hdr, (__u32)(__s32)fde);
	}
	return hdr->err;
}

void ehframe_fdes_free(struct ehframe_fdes *fdes)
{
	free(fdes->v);
	memset(fdes, 0, sizeof(*fdes));
}
