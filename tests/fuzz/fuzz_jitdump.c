// SPDX-License-Identifier: GPL-2.0
/*
 * Fuzz target for the jitdump reader: the pure parsers with every
 * accessor, then the whole merger (reader, image writer, DWARF, .eh_frame)
 * on the input given in two halves as a live file would be.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "jit/jitdump.h"
#include "jit/merger.h"
#include "util/log.h"

static char out_dir[] = "/tmp/precord-fuzz-jitdump-XXXXXX";

static void walk_record(const struct jitdump_record *rec)
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

static void parse_all(const uint8_t *data, size_t size)
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

/* The merger writes images: into a fresh directory, removed afterwards. */
static void merge_all(const uint8_t *data, size_t size)
{
	struct jit_merger *m;
	size_t half = size / 2;
	char cmd[128];
	int fd;

	fd = memfd_create("jitdump", MFD_CLOEXEC);
	if (fd < 0)
		return;
	memcpy(out_dir + strlen(out_dir) - 6, "XXXXXX", 6);
	if (write(fd, data, half) != (ssize_t)half || !mkdtemp(out_dir)) {
		close(fd);
		return;
	}
	m = jit_merger__new(out_dir);
	if (!m) {
		close(fd);
		return;
	}
	jit_merger__add_jitdump(m, "fuzz.dump", dup(fd), 1);
	jit_merger__poll(m, 1);
	if (write(fd, data + half, size - half) == (ssize_t)(size - half))
		jit_merger__poll(m, 2);
	jit_merger__finish(m);
	jit_merger__free(m);
	close(fd);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", out_dir);
	if (system(cmd))
		return;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	log_verbosity = -1;
	parse_all(data, size);
	if (size <= (4u << 20))
		merge_all(data, size);
	return 0;
}
