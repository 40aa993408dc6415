// SPDX-License-Identifier: GPL-2.0
/*
 * JIT merger, jitdump side: records that describe the next JIT_CODE_LOAD
 * (DEBUG_INFO, DEBUG_INFO2, UNWINDING_INFO) are kept whole and applied when
 * the load comes; loads add a function and a mapping, moves a mapping.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "jit/merger_int.h"
#include "util/log.h"
#include "util/printable.h"

static void src_warn(struct jit_merger *m, struct source *s, __u64 off, const char *what)
{
	char shown[PRINTABLE_MAX];

	m->st.bad_records++;
	if (s->warnings++ < 10)
		pr_warn("jitdump %s: offset %llu: %s", printable(shown, sizeof(shown), s->path),
			(unsigned long long)off, what);
}

/* Empty, and give a large buffer back. */
static void pending_drop(struct pbuf *b)
{
	if (b->cap > (1u << 20))
		pbuf_free(b);
	else
		pbuf_reset(b);
}

static void pending_keep(struct jit_merger *m, struct source *s, struct pbuf *b,
			 const struct jitdump_record *rec)
{
	pending_drop(b);
	if (rec->prefix.total_size > JIT_MAX_PENDING) {
		src_warn(m, s, rec->file_offset, "record for the next load larger than 8 MiB; skipped");
		return;
	}
	pbuf_put(b, rec->raw, rec->prefix.total_size);
}

static bool pending_parse(struct source *s, struct pbuf *b, struct jitdump_record *rec)
{
	bool swap = jitdump_reader__swapped(s->jd);

	if (!b->len || b->err)
		return false;
	return jitdump_parse_record(b->data, b->len, swap, rec, NULL) > 0;
}

/*
 * DEBUG_INFO rows for the function just loaded.  All or nothing: a record
 * with an entry outside the function is garbage (node 20's V8 writes freed
 * memory as file names for user scripts, and the walk then derails).
 */
static int apply_debug(struct jit_merger *m, struct source *s, int func,
		       const struct jitdump_code_load *ld, const struct jitdump_debug_info *di)
{
	const __u64 lo = ld->code_addr, hi = ld->code_addr + ld->code_size;
	char shown[PRINTABLE_MAX], name[256];
	struct jitdump_debug_entry e;
	struct jitelf_line *rows;
	__u64 bias = 0;
	size_t pos = 0, n = 0;
	int err;

	if (di->code_addr != ld->code_addr || !di->nr_entry)
		return 0;
	if (jitdump_reader__header(s->jd)->pad1 == JITDUMP_V8_PAD1)
		bias = JITDUMP_V8_DEBUG_BIAS;
	while (!jitdump_debug_entry_next(di, &pos, &e))
		if (e.addr < lo + bias)
			bias = 0;
	rows = calloc(di->nr_entry, sizeof(*rows));
	if (!rows)
		return -ENOMEM;
	for (pos = 0; !jitdump_debug_entry_next(di, &pos, &e);) {
		__u64 addr = e.addr - bias;

		if (addr < lo || addr > hi) {
			pr_debug("jitdump %s: debug info for %s outside the function; dropped",
				 printable(shown, sizeof(shown), s->path),
				 printable(name, sizeof(name), ld->name));
			n = 0;
			break;
		}
		if (addr == hi || e.line <= 0)
			continue;
		rows[n++] = (struct jitelf_line){
			.offset = (__u32)(addr - lo), .file = e.file,
			.line = (__u32)e.line, .column = e.discrim,
		};
	}
	err = n ? jitelf_image__set_lines(m->img, func, rows, n) : 0;
	if (!err && n)
		m->st.debug++;
	free(rows);
	return err;
}

/* Pointers to the strings of a DEBUG_INFO2 list (validated: count fit). */
static const char **di2_strings(const char *list, size_t size, __u32 count)
{
	const char **v = calloc(count ? count : 1, sizeof(*v));
	size_t pos = 0;
	__u32 i;

	for (i = 0; v && i < count; i++)
		v[i] = jitdump_strlist_next(list, size, &pos);
	return v;
}

static int di2_inlines(struct jit_merger *m, int func, const struct jitdump_debug_info2 *d,
		       const char **files, const char **names)
{
	__u32 n = d->n.inline_call_count, i, *stack;
	struct jitelf_inline *calls = calloc(n + 1, sizeof(*calls));
	struct jitelf_range *ranges = calloc(d->n.range_count + 1, sizeof(*ranges));
	int err = -ENOMEM;

	stack = calloc(n + 1, sizeof(*stack));
	if (!calls || !ranges || !stack)
		goto out;
	for (i = 0; i < n; i++) {
		struct jitdump_di2_inline_call c;
		struct jitdump_di2_function fn, caller;

		jitdump_di2_inline_call(d, i, &c);
		jitdump_di2_function(d, c.function_index, &fn);
		jitdump_di2_function(d, c.depth ? stack[c.depth - 1] : 0, &caller);
		stack[c.depth] = c.function_index;
		calls[i] = (struct jitelf_inline){
			.depth = c.depth, .name = names[fn.name_index],
			.decl_file = files[fn.file_index], .decl_line = fn.start_line,
			.call_file = files[caller.file_index], .call_line = c.call_line,
			.call_column = c.call_column + (c.call_column != UINT32_MAX),
			.nr_ranges = c.range_count,
		};
	}
	for (i = 0; i < d->n.range_count; i++) {
		struct jitdump_di2_range r;

		jitdump_di2_range(d, i, &r);
		ranges[i] = (struct jitelf_range){ .offset = r.start_offset, .size = r.size };
	}
	err = jitelf_image__set_inlines(m->img, func, calls, n, ranges, d->n.range_count);
out:
	free(calls);
	free(ranges);
	free(stack);
	return err;
}

static int apply_di2(struct jit_merger *m, int func, const struct jitdump_debug_info2 *d)
{
	const char **files = di2_strings(d->files, d->n.file_list_size, d->n.file_count);
	const char **names = di2_strings(d->names, d->n.name_list_size, d->n.name_count);
	struct jitelf_line *rows = calloc(d->n.line_count + 1, sizeof(*rows));
	int err = -ENOMEM;
	__u32 i;

	if (!files || !names || !rows)
		goto out;
	for (i = 0; i < d->n.line_count; i++) {
		struct jitdump_di2_line l;

		jitdump_di2_line(d, i, &l);
		rows[i] = (struct jitelf_line){
			.offset = l.code_offset, .file = files[l.file_index], .line = l.line,
			.column = l.column + (l.column != UINT32_MAX),
		};
	}
	err = d->n.line_count ? jitelf_image__set_lines(m->img, func, rows, d->n.line_count) : 0;
	if (!err && d->n.inline_call_count && di2_inlines(m, func, d, files, names))
		pr_debug("jit: DEBUG_INFO2 inline calls outside the function; dropped");
	if (!err && (d->n.line_count || d->n.inline_call_count))
		m->st.debug++;
out:
	free(files);
	free(names);
	free(rows);
	return err;
}

static void apply_pending(struct jit_merger *m, struct source *s, int func,
			  const struct jitdump_record *load_rec)
{
	const struct jitdump_code_load *ld = &load_rec->load;
	char shown[PRINTABLE_MAX], name[256];
	struct jitdump_record rec;
	const char *why = "";

	if (func < 0)
		goto out;
	if (pending_parse(s, &s->pend_di2, &rec))
		apply_di2(m, func, &rec.di2);
	else if (pending_parse(s, &s->pend_debug, &rec))
		apply_debug(m, s, func, ld, &rec.debug);
	if (pending_parse(s, &s->pend_unwind, &rec) && rec.unwind.eh_frame_size) {
		if (jitelf_image__set_eh_frame(m->img, func, rec.unwind.eh_frame,
					       rec.unwind.eh_frame_size, ld->code_addr, &why))
			pr_debug("jitdump %s: unwinding info for %s not used: %s",
				 printable(shown, sizeof(shown), s->path),
				 printable(name, sizeof(name), ld->name), why);
		else
			m->st.unwind++;
	}
out:
	pending_drop(&s->pend_di2);
	pending_drop(&s->pend_debug);
	pending_drop(&s->pend_unwind);
}

static void rec_ids(const struct source *s, __u32 rpid, __u32 rtid, __u32 *pid, __u32 *tid)
{
	if (!s->pid) {
		*pid = rpid;
		*tid = rtid;
	} else {
		*pid = s->pid;
		*tid = rpid == s->pid ? rtid : s->pid;	/* other pid namespace */
	}
}

static int on_load(struct jit_merger *m, struct source *s, __u32 src_idx,
		   const struct jitdump_record *rec)
{
	const struct jitdump_code_load *ld = &rec->load;
	__u32 pid, tid;
	int func, err;

	if (!ld->code_size) {
		apply_pending(m, s, -1, rec);	/* nothing to map: just clear */
		return 0;
	}
	if (ld->code_addr + ld->code_size < ld->code_addr) {
		src_warn(m, s, rec->file_offset, "JIT_CODE_LOAD range wraps around; skipped");
		return 0;
	}
	func = merger_add_func(m, ld->name, ld->code, ld->code_size);
	if (func < 0)
		return func == -E2BIG ? 0 : func;
	apply_pending(m, s, func, rec);
	rec_ids(s, ld->pid, ld->tid, &pid, &tid);
	err = merger_add_imap(m, rec->prefix.timestamp, pid, tid, ld->code_addr, ld->code_size,
		       (__u32)(m->nr_images - 1), func);
	if (!err)
		err = merger_code_put(m, &(struct code_ent){
			.code_index = ld->code_index, .size = ld->code_size, .src = src_idx,
			.image = (__u32)(m->nr_images - 1), .func = func,
		});
	if (!err)
		m->st.loads++;
	return err == -E2BIG ? 0 : err;
}

static int on_move(struct jit_merger *m, struct source *s, __u32 src_idx,
		   const struct jitdump_record *rec)
{
	const struct jitdump_code_move *mv = &rec->move;
	struct code_ent *e;
	__u32 pid, tid;
	bool found;
	int err;

	e = merger_code_find(m, src_idx, mv->code_index, &found);
	if (!found) {
		src_warn(m, s, rec->file_offset, "JIT_CODE_MOVE of an unknown code_index; skipped");
		return 0;
	}
	if (mv->new_code_addr + e->size < mv->new_code_addr) {
		src_warn(m, s, rec->file_offset, "JIT_CODE_MOVE range wraps around; skipped");
		return 0;
	}
	rec_ids(s, mv->pid, mv->tid, &pid, &tid);
	err = merger_add_imap(m, rec->prefix.timestamp, pid, tid, mv->new_code_addr, e->size,
		       e->image, e->func);
	if (!err)
		m->st.moves++;
	return err == -E2BIG ? 0 : err;
}

int merger_jitdump_record(void *ctx, const struct jitdump_record *rec)
{
	struct jd_ctx *c = ctx;
	struct jit_merger *m = c->m;
	struct source *s = &m->srcs[c->src];

	switch (rec->prefix.id) {
	case JIT_CODE_LOAD:
		return on_load(m, s, c->src, rec);
	case JIT_CODE_MOVE:
		return on_move(m, s, c->src, rec);
	case JIT_CODE_DEBUG_INFO:
		pending_keep(m, s, &s->pend_debug, rec);
		break;
	case SAMPLY_JIT_CODE_DEBUG_INFO2:
		pending_keep(m, s, &s->pend_di2, rec);
		break;
	case JIT_CODE_UNWINDING_INFO:
		pending_keep(m, s, &s->pend_unwind, rec);
		break;
	default:	/* CODE_CLOSE, TIER, EMBEDDED_SOURCE_FILE: validated, unused */
		break;
	}
	return 0;
}
