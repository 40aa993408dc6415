/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Shared by the jitdump fuzz harnesses: parse a whole dump from memory
 * with the pure parsers (jitdump.h) and touch every accessor's result, so
 * ASan sees any read past what a parser validated.
 */
#ifndef PRECORD_FUZZ_JITDUMP_WALK_H
#define PRECORD_FUZZ_JITDUMP_WALK_H

#include <errno.h>
#include <stdint.h>
#include <string.h>

#include "jit/jitdump.h"

static inline void walk_record(const struct jitdump_record *rec)
{
	volatile size_t sink = 0;
	size_t pos = 0;
	__u32 i;

	switch (rec->prefix.id) {
	case JIT_CODE_DEBUG_INFO: {
		struct jitdump_debug_entry e;

		while (!jitdump_debug_entry_next(&rec->debug, &pos, &e))
			sink += strlen(e.file) + (size_t)e.line;
		break;
	}
	case SAMPLY_JIT_CODE_DEBUG_INFO2: {
		const struct jitdump_debug_info2 *d = &rec->di2;
		struct jitdump_di2_function f;
		struct jitdump_di2_inline_call c;
		struct jitdump_di2_range r;
		struct jitdump_di2_line l;
		const char *s;

		while ((s = jitdump_strlist_next(d->files, d->n.file_list_size, &pos)))
			sink += strlen(s);
		for (i = 0; i < d->n.function_count; i++)
			jitdump_di2_function(d, i, &f), sink += f.name_index;
		for (i = 0; i < d->n.inline_call_count; i++)
			jitdump_di2_inline_call(d, i, &c), sink += c.depth;
		for (i = 0; i < d->n.range_count; i++)
			jitdump_di2_range(d, i, &r), sink += r.size;
		for (i = 0; i < d->n.line_count; i++)
			jitdump_di2_line(d, i, &l), sink += l.line;
		break;
	}
	case JIT_CODE_LOAD:
		sink += strlen(rec->load.name);
		if (rec->load.code_size)
			sink += rec->load.code[rec->load.code_size - 1];
		break;
	case SAMPLY_JIT_TIER:
		sink += strlen(rec->tier.name);
		break;
	case SAMPLY_EMBEDDED_SOURCE_FILE:
		sink += strlen(rec->source.path) + rec->source.content_size;
		break;
	}
	(void)sink;
}

static inline void parse_all(const uint8_t *data, size_t size)
{
	struct jitdump_header h;
	size_t pos;
	bool swap;

	if (jitdump_parse_header(data, size, &h, &swap, NULL))
		return;
	for (pos = h.total_size; pos < size;) {
		struct jitdump_record rec;
		ssize_t n = jitdump_parse_record(data + pos, size - pos, swap, &rec, NULL);

		if (n == -EBADMSG)
			n = rec.prefix.total_size;
		else if (n > 0)
			walk_record(&rec);
		if (n <= 0)
			break;
		pos += (size_t)n;
	}
}

#endif
