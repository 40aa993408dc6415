// SPDX-License-Identifier: GPL-2.0
/*
 * jitdump parsing: pure functions, buffer in, struct out (file iteration
 * is in jitdump_reader.c).
 */
#include "jit/jitdump.h"

#include <errno.h>
#include <stdint.h>
#include <string.h>

/* ---- byte swapping: one helper per on-disk struct ---- */

static inline __u32 sw32(__u32 v) { return __builtin_bswap32(v); }
static inline __u64 sw64(__u64 v) { return __builtin_bswap64(v); }

static void header_swap(struct jitdump_header *h)
{
	h->magic = sw32(h->magic);
	h->version = sw32(h->version);
	h->total_size = sw32(h->total_size);
	h->elf_mach = sw32(h->elf_mach);
	h->pad1 = sw32(h->pad1);
	h->pid = sw32(h->pid);
	h->timestamp = sw64(h->timestamp);
	h->flags = sw64(h->flags);
}

static void prefix_swap(struct jitdump_prefix *p)
{
	p->id = sw32(p->id);
	p->total_size = sw32(p->total_size);
	p->timestamp = sw64(p->timestamp);
}

static void load_swap(struct jitdump_load_fixed *l)
{
	l->pid = sw32(l->pid);
	l->tid = sw32(l->tid);
	l->vma = sw64(l->vma);
	l->code_addr = sw64(l->code_addr);
	l->code_size = sw64(l->code_size);
	l->code_index = sw64(l->code_index);
}

static void move_swap(struct jitdump_move_fixed *m)
{
	m->pid = sw32(m->pid);
	m->tid = sw32(m->tid);
	m->vma = sw64(m->vma);
	m->old_code_addr = sw64(m->old_code_addr);
	m->new_code_addr = sw64(m->new_code_addr);
	m->code_size = sw64(m->code_size);
	m->code_index = sw64(m->code_index);
}

static void debug_swap(struct jitdump_debug_fixed *d)
{
	d->code_addr = sw64(d->code_addr);
	d->nr_entry = sw64(d->nr_entry);
}

static void debug_entry_swap(struct jitdump_debug_entry_fixed *e)
{
	e->addr = sw64(e->addr);
	e->line = (__s32)sw32((__u32)e->line);
	e->discrim = sw32(e->discrim);
}

static void unwind_swap(struct jitdump_unwind_fixed *u)
{
	u->unwinding_size = sw64(u->unwinding_size);
	u->eh_frame_hdr_size = sw64(u->eh_frame_hdr_size);
	u->mapped_size = sw64(u->mapped_size);
}

static void di2_swap(struct jitdump_di2_fixed *d)
{
	d->file_count = sw32(d->file_count);
	d->file_list_size = sw32(d->file_list_size);
	d->name_count = sw32(d->name_count);
	d->name_list_size = sw32(d->name_list_size);
	d->function_count = sw32(d->function_count);
	d->inline_call_count = sw32(d->inline_call_count);
	d->range_count = sw32(d->range_count);
	d->line_count = sw32(d->line_count);
}

static void di2_function_swap(struct jitdump_di2_function *f)
{
	f->name_index = sw32(f->name_index);
	f->file_index = sw32(f->file_index);
	f->start_line = sw32(f->start_line);
	f->start_column = sw32(f->start_column);
	f->flags = sw32(f->flags);
}

static void di2_inline_call_swap(struct jitdump_di2_inline_call *c)
{
	c->depth = sw32(c->depth);
	c->range_count = sw32(c->range_count);
	c->function_index = sw32(c->function_index);
	c->call_line = sw32(c->call_line);
	c->call_column = sw32(c->call_column);
}

static void di2_range_swap(struct jitdump_di2_range *r)
{
	r->start_offset = sw32(r->start_offset);
	r->size = sw32(r->size);
}

static void di2_line_swap(struct jitdump_di2_line *l)
{
	l->code_offset = sw32(l->code_offset);
	l->file_index = sw32(l->file_index);
	l->line = sw32(l->line);
	l->column = sw32(l->column);
}

static void tier_swap(struct jitdump_tier_fixed *t)
{
	t->color_index = sw32(t->color_index);
	t->name_size = sw32(t->name_size);
}

static void source_swap(struct jitdump_source_fixed *s)
{
	s->path_size = sw32(s->path_size);
	s->content_size = sw32(s->content_size);
}

/* ---- pure parsers ---- */

#define FAIL(msg) do { if (why) *why = (msg); return -EBADMSG; } while (0)

int jitdump_parse_header(const void *buf, size_t len,
			 struct jitdump_header *hdr, bool *swap, const char **why)
{
	const char *dummy;

	if (!why)
		why = &dummy;
	if (len < sizeof(*hdr)) {
		*why = "file shorter than the jitdump header";
		return -EAGAIN;
	}
	memcpy(hdr, buf, sizeof(*hdr));
	if (hdr->magic == JITDUMP_MAGIC) {
		*swap = false;
	} else if (hdr->magic == JITDUMP_MAGIC_SWAPPED) {
		*swap = true;
		header_swap(hdr);
	} else {
		*why = "bad magic (not a jitdump file)";
		return -EINVAL;
	}
	if (hdr->total_size < JITDUMP_HEADER_SIZE ||
	    hdr->total_size > JITDUMP_MAX_HEADER_SIZE) {
		*why = "bad header size";
		return -EINVAL;
	}
	if (hdr->version < 1 || hdr->version > 2) {
		*why = "unsupported jitdump version (precord reads 1 and 2)";
		return -ENOTSUP;
	}
	if (hdr->flags & JITDUMP_FLAG_ARCH_TIMESTAMP) {
		*why = "ARCH_TIMESTAMP flag set: timestamps are TSC ticks, which precord cannot convert to CLOCK_MONOTONIC (run the runtime without its TSC option)";
		return -ENOTSUP;
	}
	if (hdr->flags) {
		*why = "unknown header flags";
		return -ENOTSUP;
	}
	if (len < hdr->total_size) {
		*why = "file shorter than the jitdump header";
		return -EAGAIN;
	}
	return 0;
}

/* Length of the NUL-terminated string at p within n bytes, or -1. */
static ssize_t str_within(const __u8 *p, size_t n)
{
	const __u8 *z = memchr(p, 0, n);

	return z ? z - p : -1;
}

static int parse_load(const __u8 *p, size_t n, bool swap,
		      struct jitdump_code_load *out, const char **why)
{
	struct jitdump_load_fixed f;
	ssize_t name_len;
	size_t rest;

	if (n < sizeof(f))
		FAIL("JIT_CODE_LOAD shorter than its fixed fields");
	memcpy(&f, p, sizeof(f));
	if (swap)
		load_swap(&f);
	p += sizeof(f);
	n -= sizeof(f);
	name_len = str_within(p, n);
	if (name_len < 0)
		FAIL("JIT_CODE_LOAD name is not NUL-terminated");
	rest = n - (size_t)name_len - 1;
	if (f.code_size > rest)
		FAIL("JIT_CODE_LOAD code_size beyond the record");
	out->pid = f.pid;
	out->tid = f.tid;
	out->vma = f.vma;
	out->code_addr = f.code_addr;
	out->code_size = f.code_size;
	out->code_index = f.code_index;
	out->name = (const char *)p;
	out->code = p + name_len + 1;
	return 0;
}

static int parse_move(const __u8 *p, size_t n, bool swap,
		      struct jitdump_code_move *out, const char **why)
{
	struct jitdump_move_fixed f;

	if (n < sizeof(f))
		FAIL("JIT_CODE_MOVE shorter than its fixed fields");
	memcpy(&f, p, sizeof(f));
	if (swap)
		move_swap(&f);
	out->pid = f.pid;
	out->tid = f.tid;
	out->vma = f.vma;
	out->old_code_addr = f.old_code_addr;
	out->new_code_addr = f.new_code_addr;
	out->code_size = f.code_size;
	out->code_index = f.code_index;
	return 0;
}

static int parse_debug(const __u8 *p, size_t n, bool swap,
		       struct jitdump_debug_info *out, const char **why)
{
	const size_t min_entry = sizeof(struct jitdump_debug_entry_fixed) + 1;
	struct jitdump_debug_fixed f;
	size_t pos = 0;
	__u64 i;

	if (n < sizeof(f))
		FAIL("JIT_CODE_DEBUG_INFO shorter than its fixed fields");
	memcpy(&f, p, sizeof(f));
	if (swap)
		debug_swap(&f);
	p += sizeof(f);
	n -= sizeof(f);
	if (f.nr_entry > n / min_entry)
		FAIL("JIT_CODE_DEBUG_INFO nr_entry beyond the record");
	for (i = 0; i < f.nr_entry; i++) {
		ssize_t l;

		if (n - pos < min_entry)
			FAIL("JIT_CODE_DEBUG_INFO entries beyond the record");
		l = str_within(p + pos + sizeof(struct jitdump_debug_entry_fixed),
			       n - pos - sizeof(struct jitdump_debug_entry_fixed));
		if (l < 0)
			FAIL("JIT_CODE_DEBUG_INFO file name is not NUL-terminated");
		pos += sizeof(struct jitdump_debug_entry_fixed) + (size_t)l + 1;
	}
	out->code_addr = f.code_addr;
	out->nr_entry = f.nr_entry;
	out->entries = p;
	out->entries_size = pos;
	out->swap = swap;
	return 0;
}

static int parse_unwind(const __u8 *p, size_t n, bool swap,
			struct jitdump_unwind *out, const char **why)
{
	struct jitdump_unwind_fixed f;

	if (n < sizeof(f))
		FAIL("JIT_CODE_UNWINDING_INFO shorter than its fixed fields");
	memcpy(&f, p, sizeof(f));
	if (swap)
		unwind_swap(&f);
	p += sizeof(f);
	n -= sizeof(f);
	if (f.unwinding_size > n)
		FAIL("JIT_CODE_UNWINDING_INFO unwinding_size beyond the record");
	if (f.eh_frame_hdr_size > f.unwinding_size)
		FAIL("JIT_CODE_UNWINDING_INFO eh_frame_hdr_size > unwinding_size");
	out->unwinding_size = f.unwinding_size;
	out->eh_frame_hdr_size = f.eh_frame_hdr_size;
	out->mapped_size = f.mapped_size;
	out->eh_frame = p;
	out->eh_frame_size = f.unwinding_size - f.eh_frame_hdr_size;
	out->eh_frame_hdr = p + out->eh_frame_size;
	out->eh_frame_hdr_len = f.eh_frame_hdr_size;
	return 0;
}

/* The list holds at least count NUL-terminated strings. */
static bool strlist_ok(const char *list, size_t size, __u32 count)
{
	size_t pos = 0;
	__u32 i;

	for (i = 0; i < count; i++)
		if (!jitdump_strlist_next(list, size, &pos))
			return false;
	return true;
}

/* Index checks that make every DEBUG_INFO2 accessor result trustworthy. */
static int di2_check_tree(const struct jitdump_debug_info2 *d, const char **why)
{
	__u64 ranges = 0;
	__u32 i, prev_depth = 0;

	for (i = 0; i < d->n.function_count; i++) {
		struct jitdump_di2_function f;

		jitdump_di2_function(d, i, &f);
		if (f.name_index >= d->n.name_count || f.file_index >= d->n.file_count)
			FAIL("DEBUG_INFO2 function refers to a missing name or file");
	}
	for (i = 0; i < d->n.inline_call_count; i++) {
		struct jitdump_di2_inline_call c;

		jitdump_di2_inline_call(d, i, &c);
		if (c.function_index >= d->n.function_count)
			FAIL("DEBUG_INFO2 inline call refers to a missing function");
		if (c.range_count == 0)
			FAIL("DEBUG_INFO2 inline call without ranges");
		if ((i == 0 && c.depth != 0) || (i > 0 && c.depth > prev_depth + 1))
			FAIL("DEBUG_INFO2 inline call depth out of DFS order");
		prev_depth = c.depth;
		ranges += c.range_count;
	}
	if (ranges != d->n.range_count)
		FAIL("DEBUG_INFO2 range count does not match the inline calls");
	for (i = 0; i < d->n.line_count; i++) {
		struct jitdump_di2_line l;

		jitdump_di2_line(d, i, &l);
		if (l.file_index >= d->n.file_count)
			FAIL("DEBUG_INFO2 line record refers to a missing file");
	}
	return 0;
}

static int parse_di2(const __u8 *p, size_t n, bool swap,
		     struct jitdump_debug_info2 *out, const char **why)
{
	struct jitdump_di2_fixed f;
	__u64 need;

	if (n < sizeof(f))
		FAIL("DEBUG_INFO2 shorter than its fixed fields");
	memcpy(&f, p, sizeof(f));
	if (swap)
		di2_swap(&f);
	p += sizeof(f);
	n -= sizeof(f);
	need = (__u64)f.file_list_size + f.name_list_size +
	       (__u64)f.function_count * sizeof(struct jitdump_di2_function) +
	       (__u64)f.inline_call_count * sizeof(struct jitdump_di2_inline_call) +
	       (__u64)f.range_count * sizeof(struct jitdump_di2_range) +
	       (__u64)f.line_count * sizeof(struct jitdump_di2_line);
	if (need > n)
		FAIL("DEBUG_INFO2 lists beyond the record");
	out->n = f;
	out->swap = swap;
	out->files = (const char *)p;
	p += f.file_list_size;
	out->names = (const char *)p;
	p += f.name_list_size;
	out->functions = p;
	p += (size_t)f.function_count * sizeof(struct jitdump_di2_function);
	out->inline_calls = p;
	p += (size_t)f.inline_call_count * sizeof(struct jitdump_di2_inline_call);
	out->ranges = p;
	p += (size_t)f.range_count * sizeof(struct jitdump_di2_range);
	out->lines = p;
	if (!strlist_ok(out->files, f.file_list_size, f.file_count))
		FAIL("DEBUG_INFO2 file list holds fewer strings than file_count");
	if (!strlist_ok(out->names, f.name_list_size, f.name_count))
		FAIL("DEBUG_INFO2 name list holds fewer strings than function_names_count");
	if (f.function_count == 0 && (f.inline_call_count || f.line_count))
		FAIL("DEBUG_INFO2 without the outer function");
	return di2_check_tree(out, why);
}

static int parse_tier(const __u8 *p, size_t n, bool swap,
		      struct jitdump_tier *out, const char **why)
{
	struct jitdump_tier_fixed f;

	if (n < sizeof(f))
		FAIL("SAMPLY_JIT_TIER shorter than its fixed fields");
	memcpy(&f, p, sizeof(f));
	if (swap)
		tier_swap(&f);
	p += sizeof(f);
	n -= sizeof(f);
	if (f.name_size == 0 || f.name_size > n || str_within(p, f.name_size) < 0)
		FAIL("SAMPLY_JIT_TIER name does not fit its name_size");
	out->color_index = f.color_index;
	out->name = (const char *)p;
	return 0;
}

static int parse_source(const __u8 *p, size_t n, bool swap,
			struct jitdump_source_file *out, const char **why)
{
	struct jitdump_source_fixed f;

	if (n < sizeof(f))
		FAIL("SAMPLY_EMBEDDED_SOURCE_FILE shorter than its fixed fields");
	memcpy(&f, p, sizeof(f));
	if (swap)
		source_swap(&f);
	p += sizeof(f);
	n -= sizeof(f);
	if (f.path_size == 0 || f.path_size > n || str_within(p, f.path_size) < 0)
		FAIL("SAMPLY_EMBEDDED_SOURCE_FILE path does not fit its path_size");
	if (f.content_size > n - f.path_size)
		FAIL("SAMPLY_EMBEDDED_SOURCE_FILE content beyond the record");
	out->path = (const char *)p;
	out->content = p + f.path_size;
	out->content_size = f.content_size;
	return 0;
}

ssize_t jitdump_parse_record(const void *buf, size_t len, bool swap,
			     struct jitdump_record *rec, const char **why)
{
	const __u8 *p = buf;
	size_t n;
	int err;

	memset(rec, 0, sizeof(*rec));
	if (len < sizeof(rec->prefix))
		return 0;
	memcpy(&rec->prefix, p, sizeof(rec->prefix));
	if (swap)
		prefix_swap(&rec->prefix);
	rec->raw = buf;
	if (rec->prefix.total_size < JITDUMP_PREFIX_SIZE) {
		if (why)
			*why = "record size smaller than the record prefix";
		return -EINVAL;
	}
	if (rec->prefix.total_size > JITDUMP_MAX_RECORD_SIZE) {
		if (why)
			*why = "record size implausibly large";
		return -EINVAL;
	}
	if (len < rec->prefix.total_size)
		return 0;
	p += JITDUMP_PREFIX_SIZE;
	n = rec->prefix.total_size - JITDUMP_PREFIX_SIZE;
	switch (rec->prefix.id) {
	case JIT_CODE_LOAD:
		err = parse_load(p, n, swap, &rec->load, why);
		break;
	case JIT_CODE_MOVE:
		err = parse_move(p, n, swap, &rec->move, why);
		break;
	case JIT_CODE_DEBUG_INFO:
		err = parse_debug(p, n, swap, &rec->debug, why);
		break;
	case JIT_CODE_UNWINDING_INFO:
		err = parse_unwind(p, n, swap, &rec->unwind, why);
		break;
	case SAMPLY_JIT_CODE_DEBUG_INFO2:
		err = parse_di2(p, n, swap, &rec->di2, why);
		break;
	case SAMPLY_JIT_TIER:
		err = parse_tier(p, n, swap, &rec->tier, why);
		break;
	case SAMPLY_EMBEDDED_SOURCE_FILE:
		err = parse_source(p, n, swap, &rec->source, why);
		break;
	case JIT_CODE_CLOSE:
	default:
		err = 0;
		break;
	}
	return err ? err : (ssize_t)rec->prefix.total_size;
}

int jitdump_debug_entry_next(const struct jitdump_debug_info *di, size_t *pos,
			     struct jitdump_debug_entry *e)
{
	struct jitdump_debug_entry_fixed f;
	const size_t fixed = sizeof(f);
	ssize_t l;

	if (*pos >= di->entries_size || di->entries_size - *pos < fixed + 1)
		return -ENOENT;
	memcpy(&f, di->entries + *pos, fixed);
	if (di->swap)
		debug_entry_swap(&f);
	l = str_within(di->entries + *pos + fixed, di->entries_size - *pos - fixed);
	if (l < 0)
		return -ENOENT;
	e->addr = f.addr;
	e->line = f.line;
	e->discrim = f.discrim;
	e->file = (const char *)di->entries + *pos + fixed;
	*pos += fixed + (size_t)l + 1;
	return 0;
}

const char *jitdump_strlist_next(const char *list, size_t size, size_t *pos)
{
	const char *s;
	ssize_t l;

	if (*pos >= size)
		return NULL;
	s = list + *pos;
	l = str_within((const __u8 *)s, size - *pos);
	if (l < 0)
		return NULL;
	*pos += (size_t)l + 1;
	return s;
}

void jitdump_di2_function(const struct jitdump_debug_info2 *d, __u32 i,
			  struct jitdump_di2_function *out)
{
	memcpy(out, d->functions + (size_t)i * sizeof(*out), sizeof(*out));
	if (d->swap)
		di2_function_swap(out);
}

void jitdump_di2_inline_call(const struct jitdump_debug_info2 *d, __u32 i,
			     struct jitdump_di2_inline_call *out)
{
	memcpy(out, d->inline_calls + (size_t)i * sizeof(*out), sizeof(*out));
	if (d->swap)
		di2_inline_call_swap(out);
}

void jitdump_di2_range(const struct jitdump_debug_info2 *d, __u32 i,
		       struct jitdump_di2_range *out)
{
	memcpy(out, d->ranges + (size_t)i * sizeof(*out), sizeof(*out));
	if (d->swap)
		di2_range_swap(out);
}

void jitdump_di2_line(const struct jitdump_debug_info2 *d, __u32 i,
		      struct jitdump_di2_line *out)
{
	memcpy(out, d->lines + (size_t)i * sizeof(*out), sizeof(*out));
	if (d->swap)
		di2_line_swap(out);
}
