/* SPDX-License-Identifier: GPL-2.0 */
/*
 * jitdump encoders: the writing side of jitdump.h, for test fixtures, fuzz
 * seeds and the synthetic dumps of `make bench`.  Each appends one header
 * or record to a pbuf, in host byte order or (swap) the other one, and
 * returns 0 or -errno.  Layouts are the ones jitdump.h documents.
 */
#ifndef PRECORD_JIT_JITDUMP_ENCODE_H
#define PRECORD_JIT_JITDUMP_ENCODE_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>

#include "jit/jitdump.h"
#include "util/buf.h"

/* total_size >= 40 (extra header bytes are zero); pad1 0xDEADBEEF = V8 */
int jitdump_encode_header(struct pbuf *b, bool swap, __u32 version, __u32 total_size,
			  __u32 pad1, __u32 pid, __u64 timestamp, __u64 flags);

int jitdump_encode_load(struct pbuf *b, bool swap, __u64 ts, __u32 pid, __u32 tid,
			__u64 code_addr, const void *code, __u64 code_size,
			__u64 code_index, const char *name);

int jitdump_encode_move(struct pbuf *b, bool swap, __u64 ts, __u32 pid, __u32 tid,
			__u64 old_addr, __u64 new_addr, __u64 code_size, __u64 code_index);

int jitdump_encode_debug(struct pbuf *b, bool swap, __u64 ts, __u64 code_addr,
			 const struct jitdump_debug_entry *e, size_t n);

/* eh_frame then eh_frame_hdr, as perf and V8 lay them out */
int jitdump_encode_unwind(struct pbuf *b, bool swap, __u64 ts,
			  const void *eh_frame, size_t eh_frame_size,
			  const void *hdr, size_t hdr_size, __u64 mapped_size);

struct jitdump_di2_input {
	const char *const *files;
	__u32 nr_files;
	const char *const *names;
	__u32 nr_names;
	const struct jitdump_di2_function *functions;
	__u32 nr_functions;
	const struct jitdump_di2_inline_call *calls;
	__u32 nr_calls;
	const struct jitdump_di2_range *ranges;
	__u32 nr_ranges;
	const struct jitdump_di2_line *lines;
	__u32 nr_lines;
};
int jitdump_encode_di2(struct pbuf *b, bool swap, __u64 ts,
		       const struct jitdump_di2_input *in);

int jitdump_encode_tier(struct pbuf *b, bool swap, __u64 ts, __u32 color_index,
			const char *name);
int jitdump_encode_source(struct pbuf *b, bool swap, __u64 ts, const char *path,
			  const void *content, __u32 content_size);
/* A record with only the prefix (JIT_CODE_CLOSE, or any id for tests). */
int jitdump_encode_bare(struct pbuf *b, bool swap, __u32 id, __u64 ts);

#endif
