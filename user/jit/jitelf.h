/* SPDX-License-Identifier: GPL-2.0 */
/*
 * JIT images: one ELF file (written with libelf) holding many jitted
 * functions.  Each function sits at its own offset; the file offset of a
 * function equals its virtual address in the image, so a PERF_RECORD_MMAP2
 * with start = runtime address, len = code size, pgoff = that offset
 * resolves samples to it, and one image can serve functions whose runtime
 * addresses clash or move over time.
 *
 * Image layout (libelf places the sections; precord never computes an
 * offset by hand):
 *   ELF header, program headers: PT_LOAD (R+X, p_offset == p_vaddr, from
 *     .text to the end of the allocated sections; functions without code
 *     bytes are in its p_memsz-only tail), PT_NOTE, [PT_GNU_EH_FRAME]
 *   .note.gnu.build-id  20-byte content hash (jithash.h)
 *   .text               code of the functions whose bytes are known
 *   [.eh_frame, .eh_frame_hdr]   from JIT_CODE_UNWINDING_INFO
 *   [.text.nocode]      SHT_NOBITS: functions known only by address, size
 *                       and name (perf maps, Mono .mlpd)
 *   .symtab/.strtab     one STT_FUNC symbol per function, value = address
 *   [.debug_abbrev, .debug_info, .debug_line, .debug_ranges]  jitdwarf.h
 *   .shstrtab
 */
#ifndef PRECORD_JIT_JITELF_H
#define PRECORD_JIT_JITELF_H

#include <stddef.h>
#include <linux/types.h>

#include "jit/jithash.h"

#define JITELF_MAX_NAME		4096	/* longer symbol names are cut */

struct jitelf_image;

struct jitelf_line {
	__u32 offset;			/* from the function start */
	const char *file;
	__u32 line, column;
};

/* An inlined call (DEBUG_INFO2 shape), in DFS order. */
struct jitelf_inline {
	__u32 depth;
	const char *name;
	const char *decl_file;
	__u32 decl_line;
	const char *call_file;
	__u32 call_line, call_column;
	__u32 nr_ranges;		/* consumed from the ranges array */
};

struct jitelf_range {
	__u32 offset, size;		/* from the function start */
};

struct jitelf_image *jitelf_image__new(void);
void jitelf_image__free(struct jitelf_image *img);	/* NULL-safe */

/*
 * Add a function of size bytes (> 0).  code: its bytes, or NULL when they
 * are unknown (the symbol then lives in .text.nocode).  Returns the
 * function's index (>= 0) or -errno.
 */
int jitelf_image__add_func(struct jitelf_image *img, const char *name,
			   const void *code, __u64 size);

/* Line rows for function func; rows outside the function are dropped,
 * the rest sorted by offset.  Only for functions with code. */
int jitelf_image__set_lines(struct jitelf_image *img, int func,
			    const struct jitelf_line *rows, size_t n);
/* Inlined calls; all of them are dropped if one range leaves the function
 * or the depths are not in DFS order (-EINVAL). */
int jitelf_image__set_inlines(struct jitelf_image *img, int func,
			      const struct jitelf_inline *calls, size_t n,
			      const struct jitelf_range *ranges, size_t nr_ranges);
/* The function's .eh_frame as the runtime wrote it, for code at
 * code_addr.  -EBADMSG (with *why) if it cannot be relocated. */
int jitelf_image__set_eh_frame(struct jitelf_image *img, int func,
			       const void *eh_frame, size_t size,
			       __u64 code_addr, const char **why);

size_t jitelf_image__nr_funcs(const struct jitelf_image *img);
__u64 jitelf_image__code_bytes(const struct jitelf_image *img);
__u64 jitelf_image__nocode_bytes(const struct jitelf_image *img);
/* Approximate heap bytes held (for the caller's image size cap). */
__u64 jitelf_image__mem_bytes(const struct jitelf_image *img);

/* Lay out and write the image to fd (an empty file; not closed).  After
 * success the functions' addresses and the build id are known. */
int jitelf_image__write(struct jitelf_image *img, int fd);
__u64 jitelf_image__func_addr(const struct jitelf_image *img, int func);
const __u8 *jitelf_image__build_id(const struct jitelf_image *img);
__u64 jitelf_image__file_size(const struct jitelf_image *img);

#endif
