// SPDX-License-Identifier: GPL-2.0
/*
 * The reader of elf/gopclntab.h.  Every read goes through word(), which
 * checks its range against the table's size; offsets are added only after
 * a check that they cannot wrap.
 */
#include "elf/gopclntab.h"

#include <errno.h>
#include <string.h>

#define HEADER_FIXED	8	/* magic, two pads, minLC, ptrSize */

/* The width-byte unsigned word at off, if [off, off + width) is inside. */
static bool word(const struct gopclntab *t, uint64_t off, unsigned int width, uint64_t *v)
{
	const uint8_t *p;
	uint64_t x = 0;

	if (off > t->size || width > t->size - off)
		return false;
	p = t->data + off;
	for (unsigned int i = 0; i < width; i++)
		x = x << 8 | p[t->be ? i : width - 1 - i];
	*v = x;
	return true;
}

static uint32_t magic_of(const uint8_t *p, bool be)
{
	return be ? (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3] :
		    (uint32_t)p[3] << 24 | (uint32_t)p[2] << 16 | (uint32_t)p[1] << 8 | p[0];
}

static int version_of(uint32_t magic)
{
	switch (magic) {
	case GOPCLNTAB_MAGIC_116:
		return 116;
	case GOPCLNTAB_MAGIC_118:
		return 118;
	case GOPCLNTAB_MAGIC_120:
		return 120;
	}
	return 0;
}

/* The functab's word width: a pc or an offset from textStart. */
static unsigned int tab_width(const struct gopclntab *t)
{
	return t->version >= 118 ? 4 : t->ptr_size;
}

int gopclntab__open(struct gopclntab *t, const void *data, size_t size, uint64_t text_start)
{
	const uint8_t *p = data;
	uint64_t nfunc = 0, w = 0, tab_bytes, hdr_words;
	unsigned int ps;

	memset(t, 0, sizeof(*t));
	if (!p || size < HEADER_FIXED || p[4] || p[5] ||
	    (p[6] != 1 && p[6] != 2 && p[6] != 4) || (p[7] != 4 && p[7] != 8))
		return -EBADMSG;
	t->data = p;
	t->size = size;
	t->version = version_of(magic_of(p, false));
	if (!t->version) {
		t->be = true;
		t->version = version_of(magic_of(p, true));
	}
	if (!t->version)
		return -EBADMSG;
	ps = t->ptr_size = p[7];
	hdr_words = t->version >= 118 ? 8 : 7;
	if (!word(t, HEADER_FIXED + (hdr_words - 1) * ps, ps, &w))
		return -EBADMSG;	/* the header's words past the end */
	word(t, HEADER_FIXED, ps, &nfunc);
	if (t->version >= 118) {
		word(t, HEADER_FIXED + 2 * ps, ps, &t->text_start);
		if (!t->text_start)
			t->text_start = text_start;
		word(t, HEADER_FIXED + 3 * ps, ps, &t->names);
		word(t, HEADER_FIXED + 7 * ps, ps, &t->pcln);
	} else {
		word(t, HEADER_FIXED + 2 * ps, ps, &t->names);
		word(t, HEADER_FIXED + 6 * ps, ps, &t->pcln);
	}
	if (t->names >= size || t->pcln >= size || !nfunc)
		return -EBADMSG;
	/* the functab, closing pc included, must fit: nfunc is bounded by
	 * the size before it is multiplied */
	if (nfunc > (size - t->pcln) / (2 * (uint64_t)tab_width(t)))
		return -EBADMSG;
	tab_bytes = (2 * nfunc + 1) * tab_width(t);
	if (tab_bytes > size - t->pcln)
		return -EBADMSG;
	t->nfunc = nfunc;
	if (nfunc > GOPCLNTAB_MAX_FUNCS) {
		t->over = nfunc - GOPCLNTAB_MAX_FUNCS;
		t->nfunc = GOPCLNTAB_MAX_FUNCS;
	}
	return 0;
}

/* The pc of functab slot k (0..nfunc: nfunc is the closing pc). */
static bool tab_pc(const struct gopclntab *t, uint64_t k, uint64_t *pc)
{
	unsigned int wd = tab_width(t);
	uint64_t v;

	if (!word(t, t->pcln + 2 * k * wd, wd, &v))
		return false;
	if (t->version >= 118) {
		if (v > UINT64_MAX - t->text_start)
			return false;
		v += t->text_start;
	}
	*pc = v;
	return true;
}

/* The name at nameoff in the name table: NUL-terminated inside the table,
 * 1..GOPCLNTAB_NAME_MAX bytes. */
static bool name_at(const struct gopclntab *t, uint64_t nameoff, struct gopclntab_func *f)
{
	const uint8_t *s, *nul;
	size_t room;

	if (nameoff > t->size - t->names)
		return false;
	s = t->data + t->names + nameoff;
	room = t->size - (size_t)(t->names + nameoff);
	if (room > GOPCLNTAB_NAME_MAX + 1)
		room = GOPCLNTAB_NAME_MAX + 1;
	nul = memchr(s, 0, room);
	if (!nul || nul == s)
		return false;
	f->name = (const char *)s;
	f->name_len = (size_t)(nul - s);
	return true;
}

int gopclntab__func(const struct gopclntab *t, uint64_t i, struct gopclntab_func *f)
{
	unsigned int wd = tab_width(t);
	uint64_t funcoff, func, entry, nameoff;

	if (i >= t->nfunc || !tab_pc(t, i, &f->start) || !tab_pc(t, i + 1, &f->end) ||
	    f->end <= f->start || !word(t, t->pcln + (2 * i + 1) * wd, wd, &funcoff))
		return -EBADMSG;
	if (funcoff > t->size - t->pcln)
		return -EBADMSG;
	func = t->pcln + funcoff;
	/* _func: its entry (checked against the functab's) then nameOff */
	if (!word(t, func, wd, &entry) || !word(t, func + wd, 4, &nameoff))
		return -EBADMSG;
	if (t->version >= 118) {
		if (entry > UINT64_MAX - t->text_start)
			return -EBADMSG;
		entry += t->text_start;
	}
	if (entry != f->start || (nameoff & 0x80000000u) || !name_at(t, nameoff, f))
		return -EBADMSG;
	return 0;
}
