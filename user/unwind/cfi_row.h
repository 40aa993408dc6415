/* SPDX-License-Identifier: GPL-2.0 */
/*
 * One row of the unwind table from libdw's rules at an address: the CFA
 * rule, the return address's and RBP's (include/precord/bpf_abi.h says
 * what the BPF walker does with each kind).
 */
#ifndef PRECORD_UNWIND_CFI_ROW_H
#define PRECORD_UNWIND_CFI_ROW_H

#include <stdbool.h>
#include <elfutils/libdw.h>
#include <linux/types.h>

#include "precord/bpf_abi.h"

/* x86-64 DWARF register numbers (psABI figure 3.36). */
#define CFI_REG_RBP	6
#define CFI_REG_RSP	7
#define CFI_REG_RA	16

/*
 * The row for frame (row->pc untouched).  signal: dwarf_frame_info's
 * signalp.  Returns false when the row is NONE because a rule is one the
 * walker does not evaluate (or libdw failed on it); true otherwise.
 */
bool cfi_row__classify(Dwarf_Frame *frame, bool signal, struct prec_unwind_row *row);

#endif
