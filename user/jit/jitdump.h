/* SPDX-License-Identifier: GPL-2.0 */
/*
 * jitdump reader: perf's jitdump format (versions 1 and 2, either byte
 * order) plus samply's records.  Input is untrusted: every length and count
 * is checked against the bytes at hand.
 *
 * Two layers:
 *  - pure parsers (jitdump_parse_header, jitdump_parse_record and the
 *    accessors below) that work on a byte buffer and never allocate;
 *  - struct jitdump_reader, which iterates a file (or a file still being
 *    written: call jitdump_reader__read again to get the records appended
 *    since the last call).
 *
 * File format (all fields in the writer's byte order; a byte-swapped magic
 * means a foreign-endian file):
 *
 *   header   u32 magic 'JiTD' (0x4A695444), u32 version, u32 total_size,
 *            u32 elf_mach, u32 pad1, u32 pid, u64 timestamp, u64 flags
 *            (total_size >= 40; extra header bytes are skipped)
 *   records  u32 id, u32 total_size (incl. this prefix), u64 timestamp,
 *            payload; no alignment between records
 */
#ifndef PRECORD_JIT_JITDUMP_H
#define PRECORD_JIT_JITDUMP_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>
#include <linux/types.h>

#include "jit/budget.h"

#define JITDUMP_MAGIC			0x4A695444u
#define JITDUMP_MAGIC_SWAPPED		0x4454694Au
#define JITDUMP_HEADER_SIZE		40
#define JITDUMP_MAX_HEADER_SIZE		4096
#define JITDUMP_PREFIX_SIZE		16
/* A record larger than this is corrupt (V8's biggest code objects are a
 * few hundred KiB). */
#define JITDUMP_MAX_RECORD_SIZE		(64u << 20)
#define JITDUMP_FLAG_ARCH_TIMESTAMP	(1ULL << 0)
/* V8 writes 0xDEADBEEF into pad1 and biases DEBUG_INFO addresses by 0x40
 * (the ELF header size of perf's old jitted-*.so images). */
#define JITDUMP_V8_PAD1			0xDEADBEEFu
#define JITDUMP_V8_DEBUG_BIAS		0x40

enum jitdump_record_id {
	JIT_CODE_LOAD			= 0,
	JIT_CODE_MOVE			= 1,
	JIT_CODE_DEBUG_INFO		= 2,
	JIT_CODE_CLOSE			= 3,
	JIT_CODE_UNWINDING_INFO		= 4,
	SAMPLY_JIT_CODE_DEBUG_INFO2	= 827346259,
	SAMPLY_JIT_TIER			= 827346260,
	SAMPLY_EMBEDDED_SOURCE_FILE	= 827346261,
};

/* ---- on-disk layouts (copied out of the buffer with memcpy, then swapped
 * through the one helper each struct has) ---- */

struct jitdump_header {
	__u32 magic;
	__u32 version;
	__u32 total_size;
	__u32 elf_mach;
	__u32 pad1;
	__u32 pid;
	__u64 timestamp;
	__u64 flags;
};

struct jitdump_prefix {
	__u32 id;
	__u32 total_size;
	__u64 timestamp;
};

struct jitdump_load_fixed {		/* then name\0, then code bytes */
	__u32 pid, tid;
	__u64 vma, code_addr, code_size, code_index;
};

struct jitdump_move_fixed {
	__u32 pid, tid;
	__u64 vma, old_code_addr, new_code_addr, code_size, code_index;
};

struct jitdump_debug_fixed {		/* then nr_entry debug entries */
	__u64 code_addr, nr_entry;
};

struct jitdump_debug_entry_fixed {	/* then file name\0 */
	__u64 addr;
	__s32 line;
	__u32 discrim;
};

struct jitdump_unwind_fixed {		/* then .eh_frame, then .eh_frame_hdr */
	__u64 unwinding_size, eh_frame_hdr_size, mapped_size;
};

/* SAMPLY_JIT_CODE_DEBUG_INFO2: this, then the file list and the function
 * name list (NUL-terminated strings padded to the given sizes, multiples
 * of 4), then function_count functions, inline_call_count inline calls,
 * range_count ranges and line_count line records. */
struct jitdump_di2_fixed {
	__u32 file_count, file_list_size;
	__u32 name_count, name_list_size;
	__u32 function_count, inline_call_count, range_count, line_count;
};

struct jitdump_di2_function {
	__u32 name_index, file_index, start_line, start_column, flags;
};

struct jitdump_di2_inline_call {
	__u32 depth, range_count, function_index, call_line, call_column;
};

struct jitdump_di2_range {
	__u32 start_offset, size;
};

struct jitdump_di2_line {
	__u32 code_offset, file_index, line, column;
};

/* SAMPLY_JIT_TIER (precord's layout, see docs/jit.md): applies to the next
 * JIT_CODE_LOAD, like DEBUG_INFO2.  Then the name, padded to name_size. */
struct jitdump_tier_fixed {
	__u32 color_index;
	__u32 name_size;
};

/* SAMPLY_EMBEDDED_SOURCE_FILE (precord's layout, see docs/jit.md): then
 * the path padded to path_size, then content_size bytes of content. */
struct jitdump_source_fixed {
	__u32 path_size;
	__u32 content_size;
};

/* ---- parsed records: pointers point into the caller's buffer ---- */

struct jitdump_code_load {
	__u32 pid, tid;
	__u64 vma, code_addr, code_size, code_index;
	const char *name;
	const __u8 *code;		/* code_size bytes */
};

struct jitdump_code_move {
	__u32 pid, tid;
	__u64 vma, old_code_addr, new_code_addr, code_size, code_index;
};

struct jitdump_debug_info {
	__u64 code_addr, nr_entry;
	const __u8 *entries;		/* validated: nr_entry entries fit */
	size_t entries_size;
	bool swap;
};

struct jitdump_debug_entry {
	__u64 addr;
	__s32 line;
	__u32 discrim;
	const char *file;
};

struct jitdump_unwind {
	__u64 unwinding_size, eh_frame_hdr_size, mapped_size;
	const __u8 *eh_frame;		/* unwinding_size - eh_frame_hdr_size */
	size_t eh_frame_size;
	const __u8 *eh_frame_hdr;
	size_t eh_frame_hdr_len;
};

struct jitdump_debug_info2 {
	struct jitdump_di2_fixed n;
	const char *files;		/* n.file_list_size bytes */
	const char *names;		/* n.name_list_size bytes */
	const __u8 *functions, *inline_calls, *ranges, *lines;
	bool swap;
};

struct jitdump_tier {
	__u32 color_index;
	const char *name;
};

struct jitdump_source_file {
	const char *path;
	const __u8 *content;
	__u32 content_size;
};

struct jitdump_record {
	struct jitdump_prefix prefix;
	const void *raw;		/* the whole record: prefix.total_size bytes */
	__u64 file_offset;		/* set by the reader */
	union {
		struct jitdump_code_load load;
		struct jitdump_code_move move;
		struct jitdump_debug_info debug;
		struct jitdump_unwind unwind;
		struct jitdump_debug_info2 di2;
		struct jitdump_tier tier;
		struct jitdump_source_file source;
	};
};

/*
 * Parse the file header.  Returns 0 (and *swap), -EAGAIN when fewer bytes
 * than the header needs are present yet, -EINVAL for a bad magic or size,
 * -ENOTSUP for an unsupported version or flags (ARCH_TIMESTAMP included).
 * *why (optional) gets a static message for the error.
 */
int jitdump_parse_header(const void *buf, size_t len,
			 struct jitdump_header *hdr, bool *swap, const char **why);

/*
 * Parse one record at buf.  Returns:
 *   > 0        the record's size; rec is filled (an unknown id fills only
 *              rec->prefix; callers skip it)
 *   0          incomplete: more bytes are needed (a record being written)
 *   -EBADMSG   framing is fine but the payload does not parse: rec->prefix
 *              is valid, skip prefix.total_size bytes
 *   -EINVAL    corrupt framing (size < prefix or > JITDUMP_MAX_RECORD_SIZE):
 *              nothing after this point can be trusted
 * *why (optional) gets a static message for the errors.
 */
ssize_t jitdump_parse_record(const void *buf, size_t len, bool swap,
			     struct jitdump_record *rec, const char **why);

/* Iterate the (already validated) entries of a DEBUG_INFO record:
 * *pos starts at 0.  Returns 0, or -ENOENT after the last entry. */
int jitdump_debug_entry_next(const struct jitdump_debug_info *di, size_t *pos,
			     struct jitdump_debug_entry *e);

/* Next string of a NUL-separated list of size bytes (the DEBUG_INFO2 file
 * and name lists): NULL at the end.  *pos starts at 0. */
const char *jitdump_strlist_next(const char *list, size_t size, size_t *pos);

/* Element i of a validated DEBUG_INFO2 list, copied and byte-swapped. */
void jitdump_di2_function(const struct jitdump_debug_info2 *d, __u32 i,
			  struct jitdump_di2_function *out);
void jitdump_di2_inline_call(const struct jitdump_debug_info2 *d, __u32 i,
			     struct jitdump_di2_inline_call *out);
void jitdump_di2_range(const struct jitdump_debug_info2 *d, __u32 i,
		       struct jitdump_di2_range *out);
void jitdump_di2_line(const struct jitdump_debug_info2 *d, __u32 i,
		      struct jitdump_di2_line *out);

/* ---- file iteration ---- */

struct jitdump_reader;

/* Callback per whole, valid record; the record's pointers are valid only
 * during the call.  A non-zero return stops reading: __read then returns
 * it if negative, else -ECANCELED; the next __read resumes after it. */
typedef int (*jitdump_record_cb)(void *ctx, const struct jitdump_record *rec);

/* fd: an open file (ownership passes to the reader), or -1 to open path.
 * path names the file in messages.  NULL + errno on error. */
struct jitdump_reader *jitdump_reader__new(const char *path, int fd);
void jitdump_reader__free(struct jitdump_reader *r);

/*
 * Read the records appended since the last call, up to the last whole
 * record, within budget b (jit/budget.h): at most b->bytes consumed (a
 * record that does not fit is left for later and b->cut set), the deadline
 * and stop request checked between chunks.  A record that does not parse
 * is reported (pr_warn with file and offset) and skipped; corrupt framing
 * ends the file for good.  Returns the number of records delivered, or
 * -errno (-ENOTSUP/-EINVAL: the file was refused; later calls return 0).
 */
int jitdump_reader__read(struct jitdump_reader *r, struct jit_budget *b,
			 jitdump_record_cb cb, void *ctx);
/*
 * Records the writer has not written to the file yet: len bytes that
 * belong at offset at, read from the writer's own buffer (jit/stdio_tail.h:
 * V8 keeps up to 2 MiB of its jitdump in a stdio buffer, so a service
 * in steady state never writes the records of the code it runs).  at
 * must be where the file ends now, and the reader must have read up to
 * there (its unparsed partial record included): otherwise nothing is
 * done.  The whole records in (partial record + bytes) are delivered as
 * __read would, once: a later call delivers only records past those, and
 * __read skips them once the file holds them — if the file's bytes
 * differ from what was delivered (the buffer was not the file's), it says
 * so once and reads the file's records too.  Bad framing in bytes ends
 * this call, not the file.  Returns the records delivered, or -errno.
 */
int jitdump_reader__read_unwritten(struct jitdump_reader *r, const void *bytes, size_t len,
				   __u64 at, struct jit_budget *b, jitdump_record_cb cb,
				   void *ctx);
/* Bytes delivered ahead of the file by __read_unwritten, not yet seen in
 * the file. */
__u64 jitdump_reader__ahead(const struct jitdump_reader *r);
/* The open file (for fstat: one reader per file). */
int jitdump_reader__fd(const struct jitdump_reader *r);

/* NULL until the header was read. */
const struct jitdump_header *jitdump_reader__header(const struct jitdump_reader *r);
/* The file is in the other byte order (valid once the header was read). */
bool jitdump_reader__swapped(const struct jitdump_reader *r);
/* Offset of the first byte not consumed yet; bytes left unparsed at the
 * end (a record still being written). */
__u64 jitdump_reader__offset(const struct jitdump_reader *r);
__u64 jitdump_reader__pending(const struct jitdump_reader *r);
/* Records skipped as bad so far (unparsable payloads + corrupt framing). */
__u64 jitdump_reader__bad(const struct jitdump_reader *r);
/* Records whose id this reader does not know. */
__u64 jitdump_reader__unknown(const struct jitdump_reader *r);
const char *jitdump_reader__path(const struct jitdump_reader *r);

#endif
