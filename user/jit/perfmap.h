/* SPDX-License-Identifier: GPL-2.0 */
/*
 * perf map reader: /tmp/perf-<pid>.map, perf's JIT interface text format.
 *
 * File format: one symbol per line,
 *   START SIZE name\n
 * START and SIZE in hex, each with or without a 0x prefix; name is the rest
 * of the line and may contain spaces.  The last line may lack its newline.
 * Input is untrusted: junk lines are reported with their line number and
 * skipped.
 */
#ifndef PRECORD_JIT_PERFMAP_H
#define PRECORD_JIT_PERFMAP_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>

#include "jit/budget.h"

#define PERFMAP_MAX_LINE	65536	/* longer lines are junk */

struct perfmap_entry {
	__u64 start, size;
	const char *name;		/* not NUL-terminated: name_len bytes */
	size_t name_len;
};

/*
 * Parse one line (without its '\n'; a trailing '\r' is ignored).
 * Returns 0, or -EINVAL with *why (optional) set to a static message.
 */
int perfmap_parse_line(const char *line, size_t len, struct perfmap_entry *e,
		       const char **why);

struct perfmap_reader;

/* Called for every good line; line_no counts from 1.  A non-zero return
 * stops reading and is returned. */
typedef int (*perfmap_entry_cb)(void *ctx, const struct perfmap_entry *e,
				__u64 line_no);

/* fd: an open file (ownership passes to the reader) or -1 to open path.
 * NULL + errno on error. */
struct perfmap_reader *perfmap_reader__new(const char *path, int fd);
void perfmap_reader__free(struct perfmap_reader *r);

/*
 * Read the lines appended since the last call, within budget b
 * (jit/budget.h: at most b->bytes consumed, deadline and stop request
 * checked per chunk; b->cut set when input is left).  A last line without
 * '\n' is kept for the next call (the runtime may be writing it) unless
 * final is true.  Returns the number of entries delivered, -errno, or the
 * callback's non-zero result.
 */
int perfmap_reader__read(struct perfmap_reader *r, bool final, struct jit_budget *b,
			 perfmap_entry_cb cb, void *ctx);
/* The open file (for fstat: one reader per file). */
int perfmap_reader__fd(const struct perfmap_reader *r);
/* Offset of the first byte not consumed yet. */
__u64 perfmap_reader__offset(const struct perfmap_reader *r);
__u64 perfmap_reader__bad(const struct perfmap_reader *r);
const char *perfmap_reader__path(const struct perfmap_reader *r);

#endif
