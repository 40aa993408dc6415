/* SPDX-License-Identifier: GPL-2.0 */
/*
 * .eh_frame for JIT images, from JIT_CODE_UNWINDING_INFO records.
 *
 * A runtime writes each function's .eh_frame as if it sat right after the
 * function's code, at code_addr + ALIGN8(code_size) (what perf inject
 * assumes, and what V8 does), so FDE pc_begin fields are relative to that
 * place.  An image holds many functions, so each function's CIEs and FDEs
 * are copied into one .eh_frame and every pc_begin is rewritten for its new
 * place.  .eh_frame_hdr (with its binary-search table) is rebuilt.
 */
#ifndef PRECORD_JIT_EHFRAME_H
#define PRECORD_JIT_EHFRAME_H

#include <stddef.h>
#include <linux/types.h>

#include "util/buf.h"

struct ehframe_fde {
	__u32 fde_off;		/* FDE start in the image's .eh_frame */
	__u32 field_off;	/* its pc_begin field */
	__u8 enc;		/* DW_EH_PE_* encoding of pc_begin */
	__u32 func;		/* caller's function index */
	__u64 delta;		/* pc_begin - function start */
	__u64 target;		/* set by the caller: final pc_begin address */
};

struct ehframe_fdes {
	struct ehframe_fde *v;
	size_t nr, cap;
};

/*
 * Append one function's .eh_frame (n bytes as the runtime wrote them) to
 * out and its FDEs to fdes.  Returns 0, or -EBADMSG with *why set (out and
 * fdes are left as they were), or -ENOMEM.
 */
int ehframe_import(struct pbuf *out, struct ehframe_fdes *fdes,
		   const __u8 *in, size_t n, __u64 code_addr, __u64 code_size,
		   __u32 func, const char **why);

/* Rewrite every pc_begin of eh (the image's .eh_frame, at eh_addr) to
 * point at fde.target.  -ERANGE if a target does not fit its encoding. */
int ehframe_patch(__u8 *eh, size_t len, const struct ehframe_fdes *fdes,
		  __u64 eh_addr);

/* .eh_frame_hdr at hdr_addr for the .eh_frame at eh_addr (sorts fdes). */
int ehframe_build_hdr(struct pbuf *hdr, struct ehframe_fdes *fdes,
		      __u64 eh_addr, __u64 hdr_addr);
size_t ehframe_hdr_size(size_t nr_fdes);

void ehframe_fdes_free(struct ehframe_fdes *fdes);

#endif
