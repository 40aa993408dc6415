// SPDX-License-Identifier: GPL-2.0
#include "jit/jitdump_encode.h"

#include <errno.h>
#include <string.h>

struct enc {
	struct pbuf *b;
	bool swap;
	size_t start;			/* record start, for total_size */
};

static void put32(struct enc *e, __u32 v)
{
	pbuf_put_u32(e->b, e->swap ? __builtin_bswap32(v) : v);
}

static void put64(struct enc *e, __u64 v)
{
	pbuf_put_u64(e->b, e->swap ? __builtin_bswap64(v) : v);
}

static void put_str(struct enc *e, const char *s)
{
	pbuf_put(e->b, s, strlen(s) + 1);
}

/* NUL-terminated strings padded to a multiple of 4; returns the size. */
static __u32 strlist_size(const char *const *v, __u32 n)
{
	size_t size = 0;
	__u32 i;

	for (i = 0; i < n; i++)
		size += strlen(v[i]) + 1;
	return (__u32)align_up(size, 4);
}

static void put_strlist(struct enc *e, const char *const *v, __u32 n)
{
	size_t start = e->b->len;
	__u32 i;

	for (i = 0; i < n; i++)
		put_str(e, v[i]);
	pbuf_put_zero(e->b, align_up(e->b->len - start, 4) - (e->b->len - start));
}

static void rec_begin(struct enc *e, __u32 id, __u64 ts)
{
	e->start = e->b->len;
	put32(e, id);
	put32(e, 0);			/* total_size, patched by rec_end */
	put64(e, ts);
}

static int rec_end(struct enc *e)
{
	__u64 size = e->b->len - e->start;
	__u32 v = (__u32)size;

	if (e->b->err)
		return e->b->err;
	if (size > UINT32_MAX)
		return -E2BIG;
	if (e->swap)
		v = __builtin_bswap32(v);
	memcpy(e->b->data + e->start + 4, &v, 4);
	return 0;
}

int jitdump_encode_header(struct pbuf *b, bool swap, __u32 version, __u32 total_size,
			  __u32 pad1, __u32 pid, __u64 timestamp, __u64 flags)
{
	struct enc e = { .b = b, .swap = swap };

	put32(&e, JITDUMP_MAGIC);
	put32(&e, version);
	put32(&e, total_size);
	put32(&e, 62);			/* EM_X86_64; readers ignore it */
	put32(&e, pad1);
	put32(&e, pid);
	put64(&e, timestamp);
	put64(&e, flags);
	if (total_size > JITDUMP_HEADER_SIZE)
		pbuf_put_zero(b, total_size - JITDUMP_HEADER_SIZE);
	return b->err;
}

int jitdump_encode_load(struct pbuf *b, bool swap, __u64 ts, __u32 pid, __u32 tid,
			__u64 code_addr, const void *code, __u64 code_size,
			__u64 code_index, const char *name)
{
	struct enc e = { .b = b, .swap = swap };

	rec_begin(&e, JIT_CODE_LOAD, ts);
	put32(&e, pid);
	put32(&e, tid);
	put64(&e, code_addr);		/* vma */
	put64(&e, code_addr);
	put64(&e, code_size);
	put64(&e, code_index);
	put_str(&e, name);
	if (code)
		pbuf_put(b, code, code_size);
	else
		pbuf_put_zero(b, code_size);
	return rec_end(&e);
}

int jitdump_encode_move(struct pbuf *b, bool swap, __u64 ts, __u32 pid, __u32 tid,
			__u64 old_addr, __u64 new_addr, __u64 code_size, __u64 code_index)
{
	struct enc e = { .b = b, .swap = swap };

	rec_begin(&e, JIT_CODE_MOVE, ts);
	put32(&e, pid);
	put32(&e, tid);
	put64(&e, new_addr);		/* vma */
	put64(&e, old_addr);
	put64(&e, new_addr);
	put64(&e, code_size);
	put64(&e, code_index);
	return rec_end(&e);
}

int jitdump_encode_debug(struct pbuf *b, bool swap, __u64 ts, __u64 code_addr,
			 const struct jitdump_debug_entry *ent, size_t n)
{
	struct enc e = { .b = b, .swap = swap };
	size_t i;

	rec_begin(&e, JIT_CODE_DEBUG_INFO, ts);
	put64(&e, code_addr);
	put64(&e, n);
	for (i = 0; i < n; i++) {
		put64(&e, ent[i].addr);
		put32(&e, (__u32)ent[i].line);
		put32(&e, ent[i].discrim);
		put_str(&e, ent[i].file);
	}
	return rec_end(&e);
}

int jitdump_encode_unwind(struct pbuf *b, bool swap, __u64 ts,
			  const void *eh_frame, size_t eh_frame_size,
			  const void *hdr, size_t hdr_size, __u64 mapped_size)
{
	struct enc e = { .b = b, .swap = swap };

	rec_begin(&e, JIT_CODE_UNWINDING_INFO, ts);
	put64(&e, eh_frame_size + hdr_size);
	put64(&e, hdr_size);
	put64(&e, mapped_size);
	pbuf_put(b, eh_frame, eh_frame_size);
	pbuf_put(b, hdr, hdr_size);
	return rec_end(&e);
}

int jitdump_encode_di2(struct pbuf *b, bool swap, __u64 ts,
		       const struct jitdump_di2_input *in)
{
	struct enc e = { .b = b, .swap = swap };
	__u32 i;

	rec_begin(&e, SAMPLY_JIT_CODE_DEBUG_INFO2, ts);
	put32(&e, in->nr_files);
	put32(&e, strlist_size(in->files, in->nr_files));
	put32(&e, in->nr_names);
	put32(&e, strlist_size(in->names, in->nr_names));
	put32(&e, in->nr_functions);
	put32(&e, in->nr_calls);
	put32(&e, in->nr_ranges);
	put32(&e, in->nr_lines);
	put_strlist(&e, in->files, in->nr_files);
	put_strlist(&e, in->names, in->nr_names);
	for (i = 0; i < in->nr_functions; i++) {
		const struct jitdump_di2_function *f = &in->functions[i];

		put32(&e, f->name_index);
		put32(&e, f->file_index);
		put32(&e, f->start_line);
		put32(&e, f->start_column);
		put32(&e, f->flags);
	}
	for (i = 0; i < in->nr_calls; i++) {
		const struct jitdump_di2_inline_call *c = &in->calls[i];

		put32(&e, c->depth);
		put32(&e, c->range_count);
		put32(&e, c->function_index);
		put32(&e, c->call_line);
		put32(&e, c->call_column);
	}
	for (i = 0; i < in->nr_ranges; i++) {
		put32(&e, in->ranges[i].start_offset);
		put32(&e, in->ranges[i].size);
	}
	for (i = 0; i < in->nr_lines; i++) {
		const struct jitdump_di2_line *l = &in->lines[i];

		put32(&e, l->code_offset);
		put32(&e, l->file_index);
		put32(&e, l->line);
		put32(&e, l->column);
	}
	return rec_end(&e);
}

int jitdump_encode_tier(struct pbuf *b, bool swap, __u64 ts, __u32 color_index,
			const char *name)
{
	struct enc e = { .b = b, .swap = swap };
	const char *v[1] = { name };

	rec_begin(&e, SAMPLY_JIT_TIER, ts);
	put32(&e, color_index);
	put32(&e, strlist_size(v, 1));
	put_strlist(&e, v, 1);
	return rec_end(&e);
}

int jitdump_encode_source(struct pbuf *b, bool swap, __u64 ts, const char *path,
			  const void *content, __u32 content_size)
{
	struct enc e = { .b = b, .swap = swap };
	const char *v[1] = { path };

	rec_begin(&e, SAMPLY_EMBEDDED_SOURCE_FILE, ts);
	put32(&e, strlist_size(v, 1));
	put32(&e, content_size);
	put_strlist(&e, v, 1);
	pbuf_put(b, content, content_size);
	pbuf_put_zero(b, align_up(content_size, 4) - content_size);
	return rec_end(&e);
}

int jitdump_encode_bare(struct pbuf *b, bool swap, __u32 id, __u64 ts)
{
	struct enc e = { .b = b, .swap = swap };

	rec_begin(&e, id, ts);
	return rec_end(&e);
}
