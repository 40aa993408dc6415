// SPDX-License-Identifier: GPL-2.0
/*
 * CFI entries checked before libdw reads them (see cfi_scan.h).
 *
 * An entry (DWARF 5 section 6.4.1, LSB's .eh_frame):
 *
 *	u32 length (0: .eh_frame terminator; 0xffffffff: 64-bit, refused)
 *	u32 CIE id (CIE: 0 in .eh_frame, 0xffffffff in .debug_frame)
 *	    or CIE pointer (FDE: .eh_frame: distance back from this field to
 *	    the CIE; .debug_frame: the CIE's section offset)
 *	CIE: u8 version, augmentation string, uleb code alignment, sleb
 *	     data alignment, return register (v1: u8, else uleb), [v4: u8
 *	     address size, u8 segment size], ["z": uleb length, then one
 *	     datum per letter: L u8, R u8 FDE pointer encoding, P u8 + an
 *	     encoded pointer, S none], initial instructions
 *	FDE: initial location, address range (the CIE's R encoding, the
 *	     range without its application bits), ["z": uleb length + data],
 *	     instructions
 *
 * Every read below is bounded by the entry; libdw's own parse of the same
 * bytes then stays inside it too (it reads what was checked here).
 */
#include "unwind/cfi_scan.h"

#include <dwarf.h>
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "util/array.h"
#include "util/leb128.h"

#define CIE_ID_EH	0u
#define CIE_ID_DEBUG	0xffffffffu

struct cfi_scan_entry {
	size_t off, len;	/* whole entry: length field included */
	size_t cie_off;		/* FDE: its CIE's offset */
	bool is_cie, good;
	/* CIE only: */
	bool sized, insns_ok;
	__u8 fde_enc;
};

struct cursor {
	const __u8 *p, *end;
	const __u8 *base;	/* section start, for pc-relative pointers */
	uint64_t vaddr;
};

static uint64_t get_le(const __u8 *p, unsigned n)
{
	uint64_t v = 0;

	while (n--)
		v = v << 8 | p[n];
	return v;
}

static bool take(struct cursor *c, unsigned n, uint64_t *v)
{
	if ((size_t)(c->end - c->p) < n)
		return false;
	*v = get_le(c->p, n);
	c->p += n;
	return true;
}

static bool take_uleb(struct cursor *c, uint64_t *v)
{
	return leb128_read_u(&c->p, c->end, v) == 0;
}

static bool take_sleb(struct cursor *c, int64_t *v)
{
	return leb128_read_s(&c->p, c->end, v) == 0;
}

/* Pointer encodings of the FDEs that this reader decodes: absolute or
 * pc-relative, any size.  (textrel, datarel, funcrel, aligned and
 * indirect are not used by x86-64 toolchains.) */
static bool enc_supported(__u8 enc)
{
	switch (enc & 0x0f) {
	case DW_EH_PE_absptr: case DW_EH_PE_uleb128: case DW_EH_PE_udata2:
	case DW_EH_PE_udata4: case DW_EH_PE_udata8: case DW_EH_PE_sleb128:
	case DW_EH_PE_sdata2: case DW_EH_PE_sdata4: case DW_EH_PE_sdata8:
		break;
	default:
		return false;
	}
	return (enc & 0xf0) == DW_EH_PE_absptr || (enc & 0xf0) == DW_EH_PE_pcrel;
}

/* One encoded pointer (enc: supported, absptr meaning 8 bytes). */
static bool take_enc(struct cursor *c, __u8 enc, uint64_t *v)
{
	uint64_t pc = c->vaddr + (uint64_t)(c->p - c->base);
	int64_t s;

	switch (enc & 0x0f) {
	case DW_EH_PE_absptr: case DW_EH_PE_udata8: case DW_EH_PE_sdata8:
		if (!take(c, 8, v))
			return false;
		break;
	case DW_EH_PE_udata2:
		if (!take(c, 2, v))
			return false;
		break;
	case DW_EH_PE_sdata2:
		if (!take(c, 2, v))
			return false;
		*v = (uint64_t)(int64_t)(int16_t)*v;
		break;
	case DW_EH_PE_udata4:
		if (!take(c, 4, v))
			return false;
		break;
	case DW_EH_PE_sdata4:
		if (!take(c, 4, v))
			return false;
		*v = (uint64_t)(int64_t)(int32_t)*v;
		break;
	case DW_EH_PE_uleb128:
		if (!take_uleb(c, v))
			return false;
		break;
	case DW_EH_PE_sleb128:
		if (!take_sleb(c, &s))
			return false;
		*v = (uint64_t)s;
		break;
	default:
		return false;
	}
	if ((enc & 0x70) == DW_EH_PE_pcrel)
		*v += pc;
	return true;
}

/* The size libdw's encoded_value_size gives a 'P' datum (it looks at the
 * low three bits only); false when it would give 0 for a real value. */
static bool skip_personality(struct cursor *c, __u8 enc)
{
	uint64_t v;

	if (enc == DW_EH_PE_omit)
		return true;
	switch (enc & 0x07) {
	case DW_EH_PE_udata2: return take(c, 2, &v);
	case DW_EH_PE_udata4: return take(c, 4, &v);
	case DW_EH_PE_udata8: case DW_EH_PE_absptr: return take(c, 8, &v);
	case DW_EH_PE_uleb128: return leb128_skip(&c->p, c->end) == 0;
	default: return false;
	}
}

static bool reg_ok(struct cursor *c)
{
	uint64_t r;

	return take_uleb(c, &r) && r <= CFI_SCAN_MAX_REG;
}

static bool skip_block(struct cursor *c)
{
	uint64_t n;

	if (!take_uleb(c, &n) || n > (uint64_t)(c->end - c->p))
		return false;
	c->p += n;
	return true;
}

/*
 * One instruction of a CFA program at c: 1 when the walk goes on, 0 when
 * it ends here (an opcode libdw does not know: libdw stops there with an
 * error), -1 when an operand runs past the program's end or a rule names
 * a register above CFI_SCAN_MAX_REG.  *rows: counts the instructions that
 * move the location.
 */
static int insn_one(struct cursor *c, __u8 fde_enc, __u32 *rows)
{
	__u8 op = *c->p++;
	uint64_t v;
	int64_t s;
	bool ok = true;

	switch (op & 0xc0) {
	case DW_CFA_advance_loc:
		(*rows)++;
		return 1;
	case DW_CFA_offset:
		return (op & 0x3f) <= CFI_SCAN_MAX_REG && take_uleb(c, &v) ? 1 : -1;
	case DW_CFA_restore:
		return 1;	/* 6-bit register: below the limit */
	}
	switch (op) {
	case DW_CFA_nop: case DW_CFA_remember_state: case DW_CFA_restore_state:
	case DW_CFA_GNU_window_save:
		break;
	case DW_CFA_set_loc:
		ok = take_enc(c, fde_enc, &v);
		(*rows)++;
		break;
	case DW_CFA_advance_loc1: ok = take(c, 1, &v); (*rows)++; break;
	case DW_CFA_advance_loc2: ok = take(c, 2, &v); (*rows)++; break;
	case DW_CFA_advance_loc4: ok = take(c, 4, &v); (*rows)++; break;
	case DW_CFA_MIPS_advance_loc8: ok = take(c, 8, &v); (*rows)++; break;
	case DW_CFA_offset_extended: case DW_CFA_register:
	case DW_CFA_def_cfa: case DW_CFA_val_offset:
	case DW_CFA_GNU_negative_offset_extended:
		ok = reg_ok(c) && take_uleb(c, &v) && (op != DW_CFA_register || v <= CFI_SCAN_MAX_REG);
		break;
	case DW_CFA_restore_extended: case DW_CFA_undefined:
	case DW_CFA_same_value: case DW_CFA_def_cfa_register:
		ok = reg_ok(c);
		break;
	case DW_CFA_def_cfa_offset: case DW_CFA_GNU_args_size:
		ok = take_uleb(c, &v);
		break;
	case DW_CFA_def_cfa_offset_sf:
		ok = take_sleb(c, &s);
		break;
	case DW_CFA_offset_extended_sf: case DW_CFA_def_cfa_sf:
	case DW_CFA_val_offset_sf:
		ok = reg_ok(c) && take_sleb(c, &s);
		break;
	case DW_CFA_def_cfa_expression:
		ok = skip_block(c);
		break;
	case DW_CFA_expression: case DW_CFA_val_expression:
		ok = reg_ok(c) && skip_block(c);
		break;
	default:
		return 0;
	}
	return ok ? 1 : -1;
}

/* The walk of an entry's program from at->p, as c (for pc-relative
 * operands), rows in at->rows. */
static void walk_begin(struct cfi_scan_at *at, const struct cursor *c, __u8 enc)
{
	at->walking = true;
	at->p = c->p;
	at->end = c->end;
	at->enc = enc;
	at->rows = 1;
}

/*
 * Walk on for at most *budget bytes (taken off it): false when the
 * budget ran out first, true when the program ended, at->ok false when
 * an operand runs past its end or a rule names a register above
 * CFI_SCAN_MAX_REG.
 */
static bool walk(struct cfi_scan_at *at, size_t *budget)
{
	struct cursor c = { at->p, at->end, at->buf, at->vaddr };
	int r = 1;

	while (c.p < c.end && (size_t)(c.p - at->p) < *budget &&
	       (r = insn_one(&c, at->enc, &at->rows)) > 0)
		;
	*budget -= (size_t)(c.p - at->p) < *budget ? (size_t)(c.p - at->p) : *budget;
	at->p = c.p;
	if (r > 0 && c.p < c.end)
		return false;
	at->ok = r >= 0;
	at->walking = false;
	return true;
}

/* A CIE's fields after its id (c at the version byte) up to its
 * instructions. */
static const char *cie_parse(struct cfi_scan_entry *e, struct cursor *c, bool eh_frame)
{
	const __u8 *aug, *nul;
	uint64_t v, aug_len;
	int64_t s;
	__u8 version;
	struct cursor data;

	if (!take(c, 1, &v))
		return "CIE without a version";
	version = (__u8)v;
	if (version != 1 && version != 3 && !(version == 4 && !eh_frame))
		return "CIE version not 1, 3 or 4";
	aug = c->p;
	nul = memchr(aug, 0, (size_t)(c->end - c->p));
	if (!nul)
		return "CIE augmentation string not terminated";
	c->p = nul + 1;
	/* without 'z' libdw reads L, P and R data from the instructions */
	if (aug[0] && aug[0] != 'z' && aug[strspn((const char *)aug, "S")])
		return "CIE augmentation other than \"\", \"S\" or \"z...\"";
	if (version == 4) {
		if (!take(c, 1, &v) || v != 8 || !take(c, 1, &v) || v != 0)
			return "CIE address size not 8 or segment size not 0";
	}
	if (!take_uleb(c, &v) || !take_sleb(c, &s))
		return "CIE alignment factors truncated";
	if (version == 1 ? !take(c, 1, &v) : !take_uleb(c, &v))
		return "CIE return register truncated";
	e->fde_enc = DW_EH_PE_absptr;
	if (aug[0] == 'z') {
		e->sized = true;
		if (!take_uleb(c, &aug_len) || aug_len > (uint64_t)(c->end - c->p))
			return "CIE augmentation data past the entry";
		data = *c;
		data.end = c->p + aug_len;
		for (const __u8 *a = aug + 1; *a; a++) {
			switch (*a) {
			case 'L':
				if (!take(&data, 1, &v))
					return "CIE augmentation data too short";
				break;
			case 'R':
				if (!take(&data, 1, &v))
					return "CIE augmentation data too short";
				e->fde_enc = (__u8)v;
				break;
			case 'P':
				if (!take(&data, 1, &v) || !skip_personality(&data, (__u8)v))
					return "CIE personality pointer bad";
				break;
			case 'S':
				break;
			default:
				return "CIE augmentation letter not L, P, R or S";
			}
		}
		c->p += aug_len;
	}
	if (!enc_supported(e->fde_enc))
		return "CIE FDE pointer encoding not absolute or pc-relative";
	return NULL;	/* c at its initial instructions */
}

static struct cfi_scan_entry *find_cie(struct cfi_scan_entry *v, size_t n, size_t off)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (v[mid].off < off)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < n && v[lo].off == off && v[lo].is_cie && v[lo].good ? &v[lo] : NULL;
}

/* An FDE's fields up to its instructions (then c is at them): NULL, or
 * why it is malformed. */
static const char *fde_parse(struct cfi_scan_at *at, const struct cfi_scan_entry *cie,
			     struct cursor *c)
{
	uint64_t start, range, v;

	if (!take_enc(c, cie->fde_enc, &start) || !take_enc(c, cie->fde_enc & 0x0f, &range))
		return "FDE address range truncated";
	at->start = start;
	at->range = range;
	if (cie->sized) {
		if (!take_uleb(c, &v) || v > (uint64_t)(c->end - c->p))
			return "FDE augmentation data past the entry";
		c->p += v;
	}
	at->insn_len = (size_t)(c->end - c->p);
	return NULL;
}

/* The FDE whose program was walked, listed: 0 or -ENOMEM. */
static int fde_add(struct cfi_scan *s)
{
	struct cfi_scan_at *at = &s->at;
	const struct cfi_scan_entry *e = &at->ents[at->i];
	struct cfi_fde *f;

	if (ARRAY_GROW(s->fdes, s->cap, s->nr_fdes + 1))
		return -ENOMEM;
	f = &s->fdes[s->nr_fdes++];
	f->start = at->start;
	f->end = at->start + at->range;
	f->off = e->off;
	f->rows = at->rows;
	f->work = (uint64_t)at->rows * (at->insn_len + 1);
	f->skip = !(at->ok && at->ents[at->cie].insns_ok) || f->work > CFI_SCAN_FDE_WORK;
	s->nr_skipped += f->skip;
	return 0;
}

/* Bytes a step counts for an entry besides its program's. */
#define ENTRY_COST	16u

/*
 * Pass 1, one entry (or a piece of a CIE's program): its framing, and a
 * CIE's fields.  false when the pass ends (s->end, s->bad_why set), or
 * -ENOMEM in *err.
 */
static bool frame_next(struct cfi_scan *s, size_t *budget, int *err)
{
	struct cfi_scan_at *at = &s->at;
	const __u8 *buf = at->buf;
	size_t len = at->len, off = at->off;
	uint64_t length, id;
	struct cfi_scan_entry *e;
	struct cursor c;
	const char *why = NULL;

	if (at->walking) {		/* a CIE's initial instructions */
		if (walk(at, budget))
			at->ents[at->nr - 1].insns_ok = at->ok;
		return true;
	}
	*budget -= *budget < ENTRY_COST ? *budget : ENTRY_COST;
	if (len - off <= 4)		/* libdw: off + 4 >= size ends the scan */
		goto end;
	length = get_le(buf + off, 4);
	if (length == 0)
		goto end;		/* terminator */
	if (length == 0xffffffffu) {
		why = "64-bit DWARF entry";
		goto end;
	}
	if (length > len - off - 4 || length < 5) {
		why = "entry length past the section";
		goto end;
	}
	if (at->nr >= CFI_SCAN_MAX_ENTRIES) {
		why = "more than 262,144 entries (CFI_SCAN_MAX_ENTRIES)";
		goto end;
	}
	if (ARRAY_GROW(at->ents, at->cap, at->nr + 1)) {
		*err = -ENOMEM;
		return false;
	}
	e = &at->ents[at->nr++];
	memset(e, 0, sizeof(*e));
	e->off = off;
	e->len = 4 + (size_t)length;
	id = get_le(buf + off + 4, 4);
	c = (struct cursor){ buf + off + 8, buf + off + e->len, buf, at->vaddr };
	if (id == (at->eh_frame ? CIE_ID_EH : CIE_ID_DEBUG)) {
		e->is_cie = true;
		e->good = !cie_parse(e, &c, at->eh_frame);
		s->nr_cies += e->good;
		if (e->good)
			walk_begin(at, &c, e->fde_enc);
	} else if (at->eh_frame) {
		e->cie_off = id <= off + 4 ? off + 4 - (size_t)id : SIZE_MAX;
	} else {
		e->cie_off = (size_t)id;
	}
	at->off = off + e->len;
	return true;
end:
	s->end = off;
	s->bad_why = why;
	return false;
}

/*
 * Pass 2, one entry (or a piece of an FDE's program): the FDEs up to the
 * first bad entry.  false when the pass ends, or -ENOMEM in *err.
 */
static bool fde_next(struct cfi_scan *s, size_t *budget, int *err)
{
	struct cfi_scan_at *at = &s->at;
	struct cfi_scan_entry *e, *cie;
	struct cursor c;
	const char *bad = NULL;

	if (at->walking) {		/* the FDE's instructions */
		if (walk(at, budget) && (*err = fde_add(s)) == 0)
			at->i++;
		return !*err;
	}
	*budget -= *budget < ENTRY_COST ? *budget : ENTRY_COST;
	if (at->i >= at->nr)
		return false;
	e = &at->ents[at->i];
	c = (struct cursor){ at->buf + e->off + 8, at->buf + e->off + e->len, at->buf, at->vaddr };
	if (e->is_cie) {
		if (!e->good)	/* the reason: parse it again */
			bad = cie_parse(e, &c, at->eh_frame);
	} else if (!(cie = find_cie(at->ents, at->nr, e->cie_off))) {
		bad = "FDE's CIE pointer does not name a good CIE";
	} else if (!(bad = fde_parse(at, cie, &c))) {
		if (at->start + at->range <= at->start) {
			s->nr_empty++;	/* empty or wrapping: libdw ignores it */
		} else {
			at->cie = (size_t)(cie - at->ents);
			walk_begin(at, &c, cie->fde_enc);
			return true;
		}
	}
	if (bad) {
		s->end = e->off;
		s->bad_why = bad;
		return false;
	}
	at->i++;
	return true;
}

void cfi_scan__begin(struct cfi_scan *s, const __u8 *buf, size_t len, __u64 vaddr,
		     bool eh_frame)
{
	memset(s, 0, sizeof(*s));
	s->at.buf = buf;
	s->at.len = len;
	s->at.vaddr = vaddr;
	s->at.eh_frame = eh_frame;
	s->at.pass = 1;
}

int cfi_scan__step(struct cfi_scan *s, size_t bytes)
{
	struct cfi_scan_at *at = &s->at;
	int err = 0;

	while (at->pass && bytes) {
		bool more = at->pass == 1 ? frame_next(s, &bytes, &err) : fde_next(s, &bytes, &err);

		if (err) {
			cfi_scan__free(s);
			return err;
		}
		if (!more && at->pass++ == 2) {
			free(at->ents);
			memset(at, 0, sizeof(*at));	/* pass 0: done */
		}
	}
	return at->pass ? -EAGAIN : 0;
}

int cfi_scan__run(struct cfi_scan *s, const __u8 *buf, size_t len, __u64 vaddr, bool eh_frame)
{
	int err;

	cfi_scan__begin(s, buf, len, vaddr, eh_frame);
	do
		err = cfi_scan__step(s, SIZE_MAX);
	while (err == -EAGAIN);
	return err;
}

void cfi_scan__free(struct cfi_scan *s)
{
	free(s->at.ents);
	free(s->fdes);
	memset(s, 0, sizeof(*s));
}
