// SPDX-License-Identifier: GPL-2.0
/*
 * INTERIM, removed at the merge of branch cfi (which has the real
 * builder, user/unwind/cfi_table.c): a minimal cfi_table__build so that
 * --call-graph ehframe links and its BPF walk can be tested meanwhile.
 * It asks libdw for the frame at each address of the executable
 * segments and keeps the rules the row format has.
 */
#include "unwind/cfi_table.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <dwarf.h>
#include <elfutils/libdw.h>
#include <gelf.h>
#include <libelf.h>

#include "util/array.h"

static bool cfa_rule(Dwarf_Frame *f, __u64 ip, struct prec_unwind_row *r)
{
	Dwarf_Op *ops;
	size_t n;

	(void)ip;
	if (dwarf_frame_cfa(f, &ops, &n) || !n)
		return false;
	if (n == 1 && (ops[0].atom == DW_OP_bregx || (ops[0].atom >= DW_OP_breg0 && ops[0].atom <= DW_OP_breg31))) {
		unsigned reg = ops[0].atom == DW_OP_bregx ? (unsigned)ops[0].number : (unsigned)(ops[0].atom - DW_OP_breg0);
		__s64 off = ops[0].atom == DW_OP_bregx ? (__s64)ops[0].number2 : (__s64)ops[0].number;

		if ((reg != 7 && reg != 6) || off < -32768 || off > 32767)
			return false;
		r->cfa_kind = reg == 7 ? PREC_CFA_SP : PREC_CFA_BP;
		r->cfa_off = (__s16)off;
		return true;
	}
	/* the PLT: rsp + 8 + ((rip & 15) >= N) << 3 */
	if (n == 9 && ops[0].atom == DW_OP_breg7 && ops[0].number == 8 &&
	    ops[1].atom == DW_OP_breg16 && ops[2].atom == DW_OP_lit15 &&
	    ops[3].atom == DW_OP_and && ops[4].atom >= DW_OP_lit0 && ops[4].atom <= DW_OP_lit31 &&
	    ops[5].atom == DW_OP_ge && ops[6].atom == DW_OP_lit3 && ops[7].atom == DW_OP_shl &&
	    ops[8].atom == DW_OP_plus) {
		r->cfa_kind = PREC_CFA_PLT;
		r->cfa_off = (__s16)(ops[4].atom - DW_OP_lit0);
		return true;
	}
	return false;
}

/* Offset from the CFA where regno is saved: 1 and *off, 0 same value,
 * -1 undefined, -2 anything else. */
static int saved_at(Dwarf_Frame *f, int regno, __s64 *off)
{
	Dwarf_Op mem[3], *ops;
	size_t n;

	if (dwarf_frame_register(f, regno, mem, &ops, &n))
		return -2;
	if (!n)
		return ops ? -1 : 0;
	if (ops[0].atom != DW_OP_call_frame_cfa)
		return -2;
	if (n == 1) {
		*off = 0;
		return 1;
	}
	if (n == 2 && ops[1].atom == DW_OP_plus_uconst) {
		*off = (__s64)ops[1].number;
		return 1;
	}
	return -2;
}

static void make_row(Dwarf_Frame *f, __u64 ip, bool sig, struct prec_unwind_row *r)
{
	__s64 ra_off = 0, bp_off = 0;
	int ra, bp;

	r->bp_off = 0;
	if (sig) {
		r->cfa_kind = PREC_CFA_SIGNAL;
		r->cfa_off = 0;
		return;
	}
	ra = saved_at(f, 16, &ra_off);
	if (ra == -1) {
		r->cfa_kind = PREC_CFA_END;
		r->cfa_off = 0;
		return;
	}
	bp = saved_at(f, 6, &bp_off);
	if (ra != 1 || ra_off != -8 || bp < 0 || (bp == 1 && (bp_off % 8 || bp_off / 8 < -128 || bp_off / 8 > 127)) ||
	    !cfa_rule(f, ip, r)) {
		r->cfa_kind = PREC_CFA_NONE;
		r->cfa_off = 0;
		return;
	}
	r->bp_off = bp == 1 ? (__s8)(bp_off / 8) : 0;
}

static bool same(const struct prec_unwind_row *a, const struct prec_unwind_row *b)
{
	return a->cfa_kind == b->cfa_kind && a->cfa_off == b->cfa_off && a->bp_off == b->bp_off;
}

int cfi_table__build(int fd, const char *name, size_t max_rows, struct cfi_table *t)
{
	Elf *elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	size_t nph, cap = 0, scap = 0;
	Dwarf_CFI *cfi;
	int err = 0;

	(void)name;
	memset(t, 0, sizeof(*t));
	if (!elf || elf_kind(elf) != ELF_K_ELF || elf_getphdrnum(elf, &nph)) {
		err = -EINVAL;
		goto out;
	}
	t->base = ~0ull;
	for (size_t i = 0; i < nph; i++) {
		GElf_Phdr ph;

		if (!gelf_getphdr(elf, (int)i, &ph) || ph.p_type != PT_LOAD || !(ph.p_flags & PF_X))
			continue;
		if (ARRAY_GROW(t->segs, scap, t->nr_segs + 1)) {
			err = -ENOMEM;
			goto out;
		}
		t->segs[t->nr_segs++] = (struct cfi_segment){ ph.p_vaddr, ph.p_offset, ph.p_filesz };
		if ((ph.p_vaddr & ~4095ull) < t->base)
			t->base = ph.p_vaddr & ~4095ull;
	}
	cfi = t->nr_segs ? dwarf_getcfi_elf(elf) : NULL;
	if (!cfi) {
		err = -ENOENT;
		goto out;
	}
	for (size_t s = 0; s < t->nr_segs && !err; s++) {
		__u64 a = t->segs[s].vaddr, end = a + t->segs[s].filesz;

		while (a < end) {
			struct prec_unwind_row r = { .pc = (__u32)(a - t->base), .cfa_kind = PREC_CFA_NONE };
			Dwarf_Frame *f = NULL;
			Dwarf_Addr fs, fe;
			bool sig = false;
			__u64 next = a + 1;

			if (!dwarf_cfi_addrframe(cfi, a, &f) && dwarf_frame_info(f, &fs, &fe, &sig) >= 0) {
				make_row(f, a, sig, &r);
				next = fe > a ? fe : a + 1;
			}
			free(f);
			if (!t->nr_rows || !same(&t->rows[t->nr_rows - 1], &r)) {
				if (t->nr_rows >= max_rows) {
					err = -E2BIG;
					break;
				}
				if (ARRAY_GROW(t->rows, cap, t->nr_rows + 1)) {
					err = -ENOMEM;
					break;
				}
				t->rows[t->nr_rows++] = r;
			}
			a = next;
		}
	}
	if (!err && t->nr_rows && t->rows[t->nr_rows - 1].cfa_kind != PREC_CFA_NONE) {
		__u64 last = t->segs[t->nr_segs - 1].vaddr + t->segs[t->nr_segs - 1].filesz;

		if (ARRAY_GROW(t->rows, cap, t->nr_rows + 1))
			err = -ENOMEM;
		else
			t->rows[t->nr_rows++] = (struct prec_unwind_row){
				.pc = (__u32)(last - t->base), .cfa_kind = PREC_CFA_NONE };
	}
out:
	if (elf)
		elf_end(elf);
	if (err)
		cfi_table__free(t);
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
	size_t lo = 0, hi = t->nr_rows;

	if (vaddr < t->base)
		return NULL;
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;

		if (t->rows[mid].pc <= vaddr - t->base)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo ? &t->rows[lo - 1] : NULL;
}
