// SPDX-License-Identifier: GPL-2.0
/*
 * libdw's rules at one address, as a prec_unwind_row.  libdw gives (see
 * elfutils/libdw.h and libdw/dwarf_frame_register.c, cfi.c):
 *
 *   CFA:  DW_CFA_def_cfa reg off      -> one op, DW_OP_bregx(reg, off)
 *         DW_CFA_def_cfa_expression   -> the expression's ops
 *   registers: undefined              -> nops 0, ops == ops_mem
 *              same value             -> nops 0, ops == NULL
 *              offset(k): at CFA + k  -> DW_OP_call_frame_cfa
 *                                        [, DW_OP_plus_uconst k] (k != 0)
 *              anything else          -> other ops (val_offset ends in
 *                                        DW_OP_stack_value)
 *
 * Registers the CFI does not mention follow libdw's x86-64 ABI defaults
 * (backends/x86_64_cfi.c): RBP and the return address "same value".
 */
#include "unwind/cfi_row.h"

#include <dwarf.h>
#include <stdint.h>

/*
 * The CFA expression of glibc's __restore_rt (sysdeps/unix/sysv/linux/
 * x86_64/libc_sigaction.c): DW_OP_breg7 160; DW_OP_deref.  On entry to
 * the trampoline the handler's `ret` has popped rt_sigframe.pretcode, so
 * RSP points at the struct ucontext the kernel wrote (arch/x86/include/
 * asm/sigframe.h, uapi asm-generic/ucontext.h): uc_flags 8 + uc_link 8 +
 * uc_stack 24 (ss_sp, ss_flags + pad, ss_size) put uc_mcontext, the
 * struct sigcontext, at +40; its r8..r15, rdi, rsi, rbp, rbx, rdx, rax,
 * rcx, rsp, rip are 8 bytes each from +0, so RBP is at RSP + 120, the
 * interrupted RSP at RSP + 160 and RIP at RSP + 168.
 */
#define SIGFRAME_RSP	160

static void row_set(struct prec_unwind_row *row, enum prec_cfa_kind kind, int cfa_off, int bp_off)
{
	row->cfa_kind = (__u8)kind;
	row->cfa_off = (__s16)cfa_off;
	row->bp_off = (__s8)bp_off;
}

/* The register named by a one-op "reg + off" expression, or -1. */
static int op_breg(const Dwarf_Op *op, __s64 *off)
{
	if (op->atom == DW_OP_bregx && op->number <= 31) {
		*off = (__s64)op->number2;
		return (int)op->number;
	}
	if (op->atom >= DW_OP_breg0 && op->atom <= DW_OP_breg31) {
		*off = (__s64)op->number;
		return op->atom - DW_OP_breg0;
	}
	return -1;
}

/*
 * The CFA expression binutils' ld writes for the lazy-binding PLT
 * (elf_x86_64_eh_frame_lazy_plt): CFA = RSP + 8, + 8 more once the
 * instruction offset in the 16-byte entry is >= N (after its push).
 * Returns N, or -1.
 */
static int plt_expr(const Dwarf_Op *ops, size_t nops)
{
	static const __u8 shape[] = {
		DW_OP_breg7, DW_OP_breg16, DW_OP_lit15, DW_OP_and, 0,
		DW_OP_ge, DW_OP_lit3, DW_OP_shl, DW_OP_plus,
	};

	if (nops != sizeof(shape))
		return -1;
	for (size_t i = 0; i < nops; i++)
		if (shape[i] && ops[i].atom != shape[i])
			return -1;
	if (ops[0].number != 8 || ops[1].number != 0 ||
	    ops[4].atom < DW_OP_lit0 || ops[4].atom > DW_OP_lit31)
		return -1;
	return ops[4].atom - DW_OP_lit0;
}

static bool is_signal_expr(const Dwarf_Op *ops, size_t nops)
{
	return nops == 2 && ops[0].atom == DW_OP_breg7 &&
	       ops[0].number == SIGFRAME_RSP && ops[1].atom == DW_OP_deref;
}

/* "saved at CFA + k": k, else false. */
static bool saved_at_cfa(const Dwarf_Op *ops, size_t nops, __s64 *k)
{
	if (!ops || nops < 1 || nops > 2 || ops[0].atom != DW_OP_call_frame_cfa)
		return false;
	if (nops == 1) {
		*k = 0;
		return true;
	}
	if (ops[1].atom != DW_OP_plus_uconst)
		return false;
	*k = (__s64)ops[1].number;
	return true;
}

bool cfi_row__classify(Dwarf_Frame *frame, bool signal, struct prec_unwind_row *row)
{
	Dwarf_Op mem[3], *ops;
	size_t nops;
	__s64 off, k;
	int reg, plt = -1, bp_off = 0;
	enum prec_cfa_kind kind;

	row_set(row, PREC_CFA_NONE, 0, 0);
	if (dwarf_frame_info(frame, NULL, NULL, NULL) != CFI_REG_RA)
		return false;
	if (dwarf_frame_register(frame, CFI_REG_RA, mem, &ops, &nops))
		return false;
	if (nops == 0 && ops) {			/* undefined: outermost */
		row_set(row, PREC_CFA_END, 0, 0);
		return true;
	}
	if (dwarf_frame_cfa(frame, &ops, &nops) || nops == 0)
		return false;
	if (signal) {
		if (!is_signal_expr(ops, nops))
			return false;
		/* The trampoline's other rules are expressions on the
		 * sigcontext: the walker reads it by the kernel's layout. */
		row_set(row, PREC_CFA_SIGNAL, SIGFRAME_RSP, 0);
		return true;
	}
	if (nops == 1 && (reg = op_breg(&ops[0], &off)) >= 0) {
		if (reg == CFI_REG_RSP)
			kind = PREC_CFA_SP;
		else if (reg == CFI_REG_RBP)
			kind = PREC_CFA_BP;
		else
			return false;
		if (off < INT16_MIN || off > INT16_MAX)
			return false;
	} else if ((plt = plt_expr(ops, nops)) >= 0) {
		kind = PREC_CFA_PLT;
		off = plt;
	} else {
		return false;
	}
	/* return address saved at CFA - 8 */
	if (dwarf_frame_register(frame, CFI_REG_RA, mem, &ops, &nops) ||
	    !saved_at_cfa(ops, nops, &k) || k != -8)
		return false;
	if (dwarf_frame_register(frame, CFI_REG_RBP, mem, &ops, &nops))
		return false;
	if (ops || nops) {			/* not "same value" */
		if (!saved_at_cfa(ops, nops, &k) || k == 0 || k % 8 ||
		    k / 8 < INT8_MIN || k / 8 > INT8_MAX)
			return false;
		bp_off = (int)(k / 8);
	}
	row_set(row, kind, (int)off, bp_off);
	return true;
}
