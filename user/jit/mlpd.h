/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Reader for Mono's log profiler output (.mlpd, `mono --profile=log:...`),
 * plain or gzip-compressed.  It reports the code regions the file
 * describes: every method JIT event (TYPE_METHOD/TYPE_JIT) and every code
 * buffer (TYPE_RUNTIME/TYPE_JITHELPER: trampolines, helpers) that carries an
 * address and a size.  Everything else in the file is parsed only to find
 * where the next event starts.  See docs/mlpd.md for what is read and which
 * versions are supported.
 *
 * The input is untrusted: a corrupt buffer or event is reported with
 * pr_warn (file name and byte offset; for gzip input the offset is in the
 * decompressed stream), the rest of that buffer is skipped and reading goes
 * on with the next buffer.  A file cut short (the runtime may still be
 * writing it) is read up to its last whole buffer.
 */
#ifndef PRECORD_JIT_MLPD_H
#define PRECORD_JIT_MLPD_H

#include <linux/types.h>
#include <stddef.h>

#include "jit/budget.h"

struct mlpd_method {
	__u64 time;		/* CLOCK_MONOTONIC ns (see docs/mlpd.md), or 0 if the file's clock is not known to be it */
	__u64 code_addr;
	__u64 code_size;	/* never 0 */
	const char *name;	/* full method name, e.g. "Hot:Work (int)" as mprof-report prints it; valid during the callback */
};

/* Non-zero return stops reading; a negative value is then returned by
 * mlpd_read_file()/mlpd_read_mem(), a positive one makes them return 0. */
typedef int (*mlpd_method_cb)(void *ctx, const struct mlpd_method *m);

/*
 * Reads a plain or gzip-compressed .mlpd (detected by content, not name)
 * within budget b (jit/budget.h; NULL: none): at most b->bytes bytes of
 * the (decompressed) stream are produced — a gzip bomb stops there — and
 * the deadline and stop request are checked per buffer and per read; a cut
 * is reported (pr_warn) and sets b->cut.  Then
 * and calls cb for every code region in file order (not time order:
 * buffers of different threads interleave).  Returns 0, or -errno when the
 * file cannot be read at all: open failure, not a regular file (-EISDIR,
 * -EINVAL), empty or incomplete header (-ENODATA), bad magic, malformed
 * header or corrupt gzip data (-EBADMSG), a version this reader does not
 * know (-EPROTONOSUPPORT).  Every problem is reported here (pr_warn;
 * pr_info for a file cut short), so callers need not log it again.
 */
int mlpd_read_file(const char *path, struct jit_budget *b, mlpd_method_cb cb, void *ctx);

/* Same from memory (plain or gzip); name_for_messages names it in warnings. */
int mlpd_read_mem(const void *data, size_t len, const char *name_for_messages,
		  struct jit_budget *b, mlpd_method_cb cb, void *ctx);

/* Process id from the header of the last file whose header was read
 * successfully (every header version precord reads carries it), else 0. */
extern __u32 mlpd_pid;

/* What the file header says; filled by mlpd_parse_header(). */
struct mlpd_header {
	__u8 major;		/* log profiler version: 1..3 */
	__u8 minor;
	__u8 data_version;	/* event format: 13..17 */
	__u8 ptr_size;		/* 4 or 8 */
	__u64 startup_ms;	/* wall clock, ms since the Unix epoch */
	__u64 startup_ns;	/* profiler clock at startup (major >= 3), else 0 */
	__u32 timer_overhead;
	__u32 flags;		/* must be 0 */
	__u32 pid;
	__u16 port;
	int os_linux;		/* the "os" string is "linux": times are CLOCK_MONOTONIC */
	size_t size;		/* bytes of header: the first buffer starts here */
};

/*
 * Parses the file header at the start of data (decompressed bytes).
 * Returns 0, -ENODATA if len is too short to hold the whole header,
 * -EBADMSG if it is not an .mlpd header or is malformed, or
 * -EPROTONOSUPPORT for an unknown version.  Pure: no messages.
 */
int mlpd_parse_header(const void *data, size_t len, struct mlpd_header *h);

#endif
