// SPDX-License-Identifier: GPL-2.0
/*
 * jitdump reader: fixtures written here with jitdump_encode_*, in both byte
 * orders; every record type; truncated, corrupt and hostile files.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "harness.h"
#include "jit/jitdump.h"
#include "jit/jitdump_encode.h"
#include "util/log.h"

static char tmpdir[] = "/tmp/precord-test-jitdump-XXXXXX";

static void write_file(const char *path, const void *data, size_t len)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);

	CHECK(fd >= 0);
	CHECK(write(fd, data, len) == (ssize_t)len);
	close(fd);
}

static void append_file(const char *path, const void *data, size_t len)
{
	int fd = open(path, O_WRONLY | O_APPEND);

	CHECK(fd >= 0);
	CHECK(write(fd, data, len) == (ssize_t)len);
	close(fd);
}

/* ---- collected records ---- */

struct seen {
	int n, loads, moves, debug, unwind, di2, tier, source, close;
	__u64 last_index, offsets[64];
	char names[8][64];
};

static int collect(void *ctx, const struct jitdump_record *rec)
{
	struct seen *s = ctx;

	if (s->n < 64)
		s->offsets[s->n] = rec->file_offset;
	s->n++;
	switch (rec->prefix.id) {
	case JIT_CODE_LOAD:
		if (s->loads < 8)
			snprintf(s->names[s->loads], 64, "%s", rec->load.name);
		s->loads++;
		s->last_index = rec->load.code_index;
		break;
	case JIT_CODE_MOVE: s->moves++; break;
	case JIT_CODE_DEBUG_INFO: s->debug++; break;
	case JIT_CODE_UNWINDING_INFO: s->unwind++; break;
	case SAMPLY_JIT_CODE_DEBUG_INFO2: s->di2++; break;
	case SAMPLY_JIT_TIER: s->tier++; break;
	case SAMPLY_EMBEDDED_SOURCE_FILE: s->source++; break;
	case JIT_CODE_CLOSE: s->close++; break;
	}
	return 0;
}

/* ---- header ---- */

TEST(header_both_orders)
{
	struct jitdump_header h;
	struct pbuf b = { 0 };
	bool swap = true;

	jitdump_encode_header(&b, false, 1, 40, 0, 1234, 99, 0);
	CHECK_EQ(jitdump_parse_header(b.data, b.len, &h, &swap, NULL), 0);
	CHECK(!swap);
	CHECK_EQ(h.pid, 1234);
	CHECK_EQ(h.timestamp, 99);
	pbuf_reset(&b);
	jitdump_encode_header(&b, true, 2, 40, 0xDEADBEEF, 1234, 99, 0);
	CHECK_EQ(jitdump_parse_header(b.data, b.len, &h, &swap, NULL), 0);
	CHECK(swap);
	CHECK_EQ(h.version, 2);
	CHECK_EQ(h.pid, 1234);
	CHECK_EQ(h.pad1, 0xDEADBEEF);
	CHECK_EQ(h.total_size, 40);
	pbuf_free(&b);
}

TEST(header_refusals)
{
	struct jitdump_header h;
	struct pbuf b = { 0 };
	const char *why = NULL;
	bool swap;

	jitdump_encode_header(&b, false, 1, 40, 0, 1, 1, JITDUMP_FLAG_ARCH_TIMESTAMP);
	CHECK_EQ(jitdump_parse_header(b.data, b.len, &h, &swap, &why), -ENOTSUP);
	CHECK(why && strstr(why, "ARCH_TIMESTAMP"));
	pbuf_reset(&b);
	jitdump_encode_header(&b, false, 1, 40, 0, 1, 1, 1ULL << 7);
	CHECK_EQ(jitdump_parse_header(b.data, b.len, &h, &swap, &why), -ENOTSUP);
	pbuf_reset(&b);
	jitdump_encode_header(&b, false, 3, 40, 0, 1, 1, 0);
	CHECK_EQ(jitdump_parse_header(b.data, b.len, &h, &swap, &why), -ENOTSUP);
	pbuf_reset(&b);
	jitdump_encode_header(&b, false, 0, 40, 0, 1, 1, 0);
	CHECK_EQ(jitdump_parse_header(b.data, b.len, &h, &swap, &why), -ENOTSUP);
	pbuf_reset(&b);
	jitdump_encode_header(&b, false, 1, 39, 0, 1, 1, 0);
	CHECK_EQ(jitdump_parse_header(b.data, b.len, &h, &swap, &why), -EINVAL);
	/* total_size larger than what is there yet: wait */
	pbuf_reset(&b);
	jitdump_encode_header(&b, false, 1, 40, 0, 1, 1, 0);
	memcpy(b.data + 8, &(__u32){ 48 }, 4);
	CHECK_EQ(jitdump_parse_header(b.data, b.len, &h, &swap, &why), -EAGAIN);
	memcpy(b.data + 8, &(__u32){ 100000 }, 4);
	CHECK_EQ(jitdump_parse_header(b.data, b.len, &h, &swap, &why), -EINVAL);
	CHECK_EQ(jitdump_parse_header(b.data, 39, &h, &swap, &why), -EAGAIN);
	CHECK_EQ(jitdump_parse_header("ELF\x7f" "0123456789012345678901234567890123456789", 40,
				      &h, &swap, &why), -EINVAL);
	pbuf_free(&b);
}

/* ---- each record, in both byte orders ---- */

static void check_records(bool swap)
{
	static const __u8 code[5] = { 0x55, 0x48, 0x89, 0xe5, 0xc3 };
	struct jitdump_debug_entry ents[3] = {
		{ 0x1000, 10, 1, "a.js" }, { 0x1002, 11, 7, "bb.js" }, { 0x1004, 12, 3, "a.js" },
	};
	struct jitdump_record rec;
	struct jitdump_debug_entry e;
	struct pbuf b = { 0 };
	size_t pos = 0, off;
	ssize_t n;

	jitdump_encode_load(&b, swap, 77, 10, 11, 0x1000, code, sizeof(code), 5, "fn name");
	n = jitdump_parse_record(b.data, b.len, swap, &rec, NULL);
	CHECK_EQ(n, (ssize_t)b.len);
	CHECK_EQ(rec.prefix.id, JIT_CODE_LOAD);
	CHECK_EQ(rec.prefix.timestamp, 77);
	CHECK_EQ(rec.load.pid, 10);
	CHECK_EQ(rec.load.tid, 11);
	CHECK_EQ(rec.load.code_addr, 0x1000);
	CHECK_EQ(rec.load.code_size, 5);
	CHECK_EQ(rec.load.code_index, 5);
	CHECK_STR(rec.load.name, "fn name");
	CHECK(!memcmp(rec.load.code, code, 5));
	CHECK(rec.raw == b.data);

	off = b.len;
	jitdump_encode_move(&b, swap, 78, 10, 12, 0x1000, 0x2000, 5, 5);
	n = jitdump_parse_record(b.data + off, b.len - off, swap, &rec, NULL);
	CHECK_EQ(n, (ssize_t)(b.len - off));
	CHECK_EQ(rec.move.old_code_addr, 0x1000);
	CHECK_EQ(rec.move.new_code_addr, 0x2000);
	CHECK_EQ(rec.move.code_index, 5);
	CHECK_EQ(rec.move.tid, 12);

	/* every DEBUG_INFO entry, not just the first (perf's foreign-endian bug) */
	off = b.len;
	jitdump_encode_debug(&b, swap, 79, 0x1000, ents, 3);
	n = jitdump_parse_record(b.data + off, b.len - off, swap, &rec, NULL);
	CHECK_EQ(n, (ssize_t)(b.len - off));
	CHECK_EQ(rec.debug.code_addr, 0x1000);
	CHECK_EQ(rec.debug.nr_entry, 3);
	for (int i = 0; i < 3; i++) {
		CHECK_EQ(jitdump_debug_entry_next(&rec.debug, &pos, &e), 0);
		CHECK_EQ(e.addr, ents[i].addr);
		CHECK_EQ(e.line, ents[i].line);
		CHECK_EQ(e.discrim, ents[i].discrim);
		CHECK_STR(e.file, ents[i].file);
	}
	CHECK_EQ(jitdump_debug_entry_next(&rec.debug, &pos, &e), -ENOENT);

	off = b.len;
	jitdump_encode_unwind(&b, swap, 80, "EHFRAME!", 8, "HDR", 3, 11);
	n = jitdump_parse_record(b.data + off, b.len - off, swap, &rec, NULL);
	CHECK_EQ(n, (ssize_t)(b.len - off));
	CHECK_EQ(rec.unwind.eh_frame_size, 8);
	CHECK(!memcmp(rec.unwind.eh_frame, "EHFRAME!", 8));
	CHECK_EQ(rec.unwind.eh_frame_hdr_len, 3);
	CHECK(!memcmp(rec.unwind.eh_frame_hdr, "HDR", 3));
	CHECK_EQ(rec.unwind.mapped_size, 11);

	off = b.len;
	jitdump_encode_tier(&b, swap, 81, 4, "Baseline");
	n = jitdump_parse_record(b.data + off, b.len - off, swap, &rec, NULL);
	CHECK_EQ(n, (ssize_t)(b.len - off));
	CHECK_EQ(rec.tier.color_index, 4);
	CHECK_STR(rec.tier.name, "Baseline");

	off = b.len;
	jitdump_encode_source(&b, swap, 82, "/src/x.js", "let a = 1;\n", 11);
	n = jitdump_parse_record(b.data + off, b.len - off, swap, &rec, NULL);
	CHECK_EQ(n, (ssize_t)(b.len - off));
	CHECK_STR(rec.source.path, "/src/x.js");
	CHECK_EQ(rec.source.content_size, 11);
	CHECK(!memcmp(rec.source.content, "let a = 1;\n", 11));

	off = b.len;
	jitdump_encode_bare(&b, swap, JIT_CODE_CLOSE, 83);
	n = jitdump_parse_record(b.data + off, b.len - off, swap, &rec, NULL);
	CHECK_EQ(n, 16);
	CHECK_EQ(rec.prefix.id, JIT_CODE_CLOSE);

	off = b.len;
	jitdump_encode_bare(&b, swap, 4242, 84);
	pbuf_put_zero(&b, 0);
	n = jitdump_parse_record(b.data + off, b.len - off, swap, &rec, NULL);
	CHECK_EQ(n, 16);
	CHECK_EQ(rec.prefix.id, 4242);
	pbuf_free(&b);
}

TEST(records_native)
{
	check_records(false);
}

TEST(records_swapped)
{
	check_records(true);
}

static void make_di2(struct pbuf *b, bool swap)
{
	static const char *const files[] = { "outer.js", "inl.js" };
	static const char *const names[] = { "outer", "inlA", "inlB" };
	static const struct jitdump_di2_function fns[] = {
		{ 0, 0, 1, 0, 0 }, { 1, 1, 10, 2, 0 }, { 2, 1, 20, 4, 0 },
	};
	static const struct jitdump_di2_inline_call calls[] = {
		{ 0, 1, 1, 5, 3 },	/* outer calls inlA at outer.js:5 */
		{ 1, 2, 2, 12, 1 },	/* inlA calls inlB at inl.js:12, two ranges */
	};
	static const struct jitdump_di2_range ranges[] = { { 8, 16 }, { 10, 2 }, { 20, 4 } };
	static const struct jitdump_di2_line lines[] = {
		{ 0, 0, 3, 0 }, { 8, 1, 11, 1 }, { 10, 1, 21, 2 }, { 24, 0, 6, 0 },
	};
	struct jitdump_di2_input in = {
		files, 2, names, 3, fns, 3, calls, 2, ranges, 3, lines, 4,
	};

	jitdump_encode_di2(b, swap, 50, &in);
}

static void check_di2(bool swap)
{
	struct jitdump_di2_inline_call c;
	struct jitdump_di2_function f;
	struct jitdump_di2_range r;
	struct jitdump_di2_line l;
	struct jitdump_record rec;
	struct pbuf b = { 0 };
	size_t pos = 0;
	ssize_t n;

	make_di2(&b, swap);
	n = jitdump_parse_record(b.data, b.len, swap, &rec, NULL);
	CHECK_EQ(n, (ssize_t)b.len);
	CHECK_EQ(rec.prefix.id, SAMPLY_JIT_CODE_DEBUG_INFO2);
	CHECK_EQ(rec.di2.n.file_count, 2);
	CHECK_EQ(rec.di2.n.file_list_size % 4, 0);
	CHECK_STR(jitdump_strlist_next(rec.di2.files, rec.di2.n.file_list_size, &pos), "outer.js");
	CHECK_STR(jitdump_strlist_next(rec.di2.files, rec.di2.n.file_list_size, &pos), "inl.js");
	pos = 0;
	jitdump_strlist_next(rec.di2.names, rec.di2.n.name_list_size, &pos);
	CHECK_STR(jitdump_strlist_next(rec.di2.names, rec.di2.n.name_list_size, &pos), "inlA");
	jitdump_di2_function(&rec.di2, 2, &f);
	CHECK_EQ(f.name_index, 2);
	CHECK_EQ(f.start_line, 20);
	CHECK_EQ(f.start_column, 4);
	jitdump_di2_inline_call(&rec.di2, 1, &c);
	CHECK_EQ(c.depth, 1);
	CHECK_EQ(c.range_count, 2);
	CHECK_EQ(c.call_line, 12);
	jitdump_di2_range(&rec.di2, 2, &r);
	CHECK_EQ(r.start_offset, 20);
	CHECK_EQ(r.size, 4);
	jitdump_di2_line(&rec.di2, 3, &l);
	CHECK_EQ(l.code_offset, 24);
	CHECK_EQ(l.line, 6);
	pbuf_free(&b);
}

TEST(debug_info2_both_orders)
{
	check_di2(false);
	check_di2(true);
}

/* Patch a u32 of a DEBUG_INFO2 fixture (field index after the prefix). */
static ssize_t di2_patched(size_t at, __u32 v, const char **why)
{
	struct jitdump_record rec;
	struct pbuf b = { 0 };
	ssize_t n;

	make_di2(&b, false);
	memcpy(b.data + at, &v, 4);
	n = jitdump_parse_record(b.data, b.len, false, &rec, why);
	pbuf_free(&b);
	return n;
}

TEST(debug_info2_bad)
{
	const char *why = NULL;
	size_t lists = 16 + 32 + 16 + 16;	/* prefix, counts, file + name lists */

	CHECK_EQ(di2_patched(16 + 0, 3, &why), -EBADMSG);	/* file_count */
	CHECK_EQ(di2_patched(16 + 16, 1000000, &why), -EBADMSG);	/* functions */
	CHECK_EQ(di2_patched(16 + 28, 0xffffffff, &why), -EBADMSG);	/* lines */
	CHECK_EQ(di2_patched(16 + 4, 0x7fffffff, &why), -EBADMSG);	/* list size */
	CHECK_EQ(di2_patched(lists + 0, 9, &why), -EBADMSG);	/* name index */
	CHECK_EQ(di2_patched(lists + 60 + 8, 7, &why), -EBADMSG);	/* call fn */
	CHECK_EQ(di2_patched(lists + 60 + 20, 3, &why), -EBADMSG);	/* depth 3 */
	CHECK_EQ(di2_patched(lists + 60 + 0, 1, &why), -EBADMSG);	/* first depth */
	CHECK_EQ(di2_patched(lists + 60 + 24, 1, &why), -EBADMSG);	/* ranges sum */
	CHECK_EQ(di2_patched(lists + 60 + 40 + 24 + 4, 5, &why), -EBADMSG);	/* line file */
	CHECK(why != NULL);
	CHECK_EQ(di2_patched(lists + 60 + 40 + 24 + 4, 1, &why), (ssize_t)(lists + 60 + 40 + 24 + 64));
}

TEST(corrupt_records)
{
	static const __u8 code[4] = { 1, 2, 3, 4 };
	struct jitdump_debug_entry ents[2] = { { 0x10, 1, 0, "f" }, { 0x12, 2, 0, "g" } };
	struct jitdump_record rec;
	struct pbuf b = { 0 };
	const char *why = NULL;
	__u64 huge = ~0ULL;

	/* size smaller than the prefix: framing is lost */
	jitdump_encode_bare(&b, false, JIT_CODE_CLOSE, 1);
	memcpy(b.data + 4, &(__u32){ 8 }, 4);
	CHECK_EQ(jitdump_parse_record(b.data, b.len, false, &rec, &why), -EINVAL);
	memcpy(b.data + 4, &(__u32){ 0xffffffff }, 4);
	CHECK_EQ(jitdump_parse_record(b.data, b.len, false, &rec, &why), -EINVAL);
	/* a whole record still being written: incomplete, not an error */
	pbuf_reset(&b);
	jitdump_encode_load(&b, false, 1, 1, 1, 0x10, code, 4, 1, "f");
	CHECK_EQ(jitdump_parse_record(b.data, b.len - 1, false, &rec, &why), 0);
	CHECK_EQ(jitdump_parse_record(b.data, 10, false, &rec, &why), 0);
	/* code_size beyond the record */
	memcpy(b.data + 16 + 24, &(__u64){ 5 }, 8);
	CHECK_EQ(jitdump_parse_record(b.data, b.len, false, &rec, &why), -EBADMSG);
	CHECK_EQ(rec.prefix.total_size, b.len);
	memcpy(b.data + 16 + 24, &huge, 8);
	CHECK_EQ(jitdump_parse_record(b.data, b.len, false, &rec, &why), -EBADMSG);
	/* name not terminated */
	pbuf_reset(&b);
	jitdump_encode_load(&b, false, 1, 1, 1, 0x10, NULL, 0, 1, "abc");
	b.data[b.len - 1] = 'x';
	CHECK_EQ(jitdump_parse_record(b.data, b.len, false, &rec, &why), -EBADMSG);
	/* load shorter than its fixed fields */
	pbuf_reset(&b);
	jitdump_encode_bare(&b, false, JIT_CODE_LOAD, 1);
	CHECK_EQ(jitdump_parse_record(b.data, b.len, false, &rec, &why), -EBADMSG);
	/* debug: nr_entry beyond the record, huge, unterminated name */
	pbuf_reset(&b);
	jitdump_encode_debug(&b, false, 1, 0x10, ents, 2);
	memcpy(b.data + 24, &(__u64){ 3 }, 8);
	CHECK_EQ(jitdump_parse_record(b.data, b.len, false, &rec, &why), -EBADMSG);
	memcpy(b.data + 24, &huge, 8);
	CHECK_EQ(jitdump_parse_record(b.data, b.len, false, &rec, &why), -EBADMSG);
	memcpy(b.data + 24, &(__u64){ 2 }, 8);
	b.data[b.len - 1] = 'z';
	CHECK_EQ(jitdump_parse_record(b.data, b.len, false, &rec, &why), -EBADMSG);
	/* unwind sizes */
	pbuf_reset(&b);
	jitdump_encode_unwind(&b, false, 1, "abcd", 4, "h", 1, 0);
	memcpy(b.data + 24, &(__u64){ 6 }, 8);	/* hdr > unwinding */
	CHECK_EQ(jitdump_parse_record(b.data, b.len, false, &rec, &why), -EBADMSG);
	memcpy(b.data + 16, &huge, 8);
	CHECK_EQ(jitdump_parse_record(b.data, b.len, false, &rec, &why), -EBADMSG);
	/* tier / source */
	pbuf_reset(&b);
	jitdump_encode_tier(&b, false, 1, 0, "Ion");
	memcpy(b.data + 20, &(__u32){ 64 }, 4);
	CHECK_EQ(jitdump_parse_record(b.data, b.len, false, &rec, &why), -EBADMSG);
	pbuf_reset(&b);
	jitdump_encode_source(&b, false, 1, "p", "xy", 2);
	memcpy(b.data + 20, &(__u32){ 0xfffffff0 }, 4);
	CHECK_EQ(jitdump_parse_record(b.data, b.len, false, &rec, &why), -EBADMSG);
	pbuf_free(&b);
}

/* ---- reader over files ---- */

static void build_dump(struct pbuf *b, bool swap, int nloads)
{
	static const __u8 code[16] = { 0x90 };
	char name[32];

	jitdump_encode_header(b, swap, 2, 40, 0, 99, 1, 0);
	for (int i = 0; i < nloads; i++) {
		snprintf(name, sizeof(name), "f%d", i);
		jitdump_encode_load(b, swap, 100 + i, 99, 99, 0x1000 + 0x100 * i, code,
				    sizeof(code), i, name);
	}
}

TEST(reader_incremental)
{
	char path[256];
	struct jitdump_reader *r;
	struct seen s = { 0 };
	struct pbuf b = { 0 };
	size_t cut;

	snprintf(path, sizeof(path), "%s/inc.dump", tmpdir);
	write_file(path, "", 0);
	r = jitdump_reader__new(path, -1);
	CHECK(r != NULL);
	if (!r)
		return;
	/* no header yet: nothing, no error */
	CHECK_EQ(jitdump_reader__read(r, &JIT_BUDGET_NONE, collect, &s), 0);
	CHECK(jitdump_reader__header(r) == NULL);
	build_dump(&b, false, 3);
	cut = b.len - 5;		/* last record half written */
	append_file(path, b.data, cut);
	CHECK_EQ(jitdump_reader__read(r, &JIT_BUDGET_NONE, collect, &s), 2);
	CHECK(jitdump_reader__header(r) != NULL);
	CHECK(jitdump_reader__pending(r) > 0);
	CHECK_EQ(jitdump_reader__pending(r), cut - jitdump_reader__offset(r));
	append_file(path, b.data + cut, b.len - cut);
	CHECK_EQ(jitdump_reader__read(r, &JIT_BUDGET_NONE, collect, &s), 1);
	CHECK_EQ(s.loads, 3);
	CHECK_STR(s.names[2], "f2");
	CHECK_EQ(jitdump_reader__pending(r), 0);
	CHECK_EQ(jitdump_reader__offset(r), b.len);
	/* nothing new: nothing delivered */
	CHECK_EQ(jitdump_reader__read(r, &JIT_BUDGET_NONE, collect, &s), 0);
	CHECK_EQ(jitdump_reader__bad(r), 0);
	jitdump_reader__free(r);
	pbuf_free(&b);
}

/*
 * Records still in the writer's buffer (V8 keeps 2 MiB of its jitdump in
 * stdio): delivered ahead of the file once, skipped when the file gets
 * the same bytes, the file's read when it gets others; nothing done when
 * the reader has not read to the file's end, or the bytes are not records.
 */
TEST(reader_unwritten)
{
	char path[256];
	struct jitdump_reader *r;
	struct seen s = { 0 };
	struct pbuf b = { 0 }, more = { 0 };
	size_t cut, cut2;

	snprintf(path, sizeof(path), "%s/unwritten.dump", tmpdir);
	build_dump(&b, false, 5);
	cut = 40 + (b.len - 40) / 5 * 3 - 7;	/* two records, the third cut */
	cut2 = 40 + (b.len - 40) / 5 * 4;	/* four whole records */
	write_file(path, b.data, cut);
	r = jitdump_reader__new(path, -1);
	CHECK(r != NULL);
	if (!r)
		return;
	/* not read to the end yet: nothing */
	CHECK_EQ(jitdump_reader__read_unwritten(r, b.data + cut, 10, cut, &JIT_BUDGET_NONE,
						collect, &s), 0);
	CHECK_EQ(jitdump_reader__read(r, &JIT_BUDGET_NONE, collect, &s), 2);
	/* the wrong offset (the file grew meanwhile): nothing */
	CHECK_EQ(jitdump_reader__read_unwritten(r, b.data + cut, cut2 - cut, cut + 1,
						&JIT_BUDGET_NONE, collect, &s), 0);
	/* records 3 and 4 from the buffer, the fifth not there yet */
	CHECK_EQ(jitdump_reader__read_unwritten(r, b.data + cut, cut2 - cut, cut,
						&JIT_BUDGET_NONE, collect, &s), 2);
	CHECK_EQ(s.loads, 4);
	CHECK_STR(s.names[3], "f3");
	CHECK_EQ(s.offsets[2], 40 + (b.len - 40) / 5 * 2);
	CHECK_EQ(jitdump_reader__ahead(r), cut2 - jitdump_reader__offset(r));
	/* the buffer grew: only the new record */
	CHECK_EQ(jitdump_reader__read_unwritten(r, b.data + cut, b.len - cut, cut,
						&JIT_BUDGET_NONE, collect, &s), 1);
	CHECK_EQ(s.loads, 5);
	/* a buffer that is not what was delivered: nothing */
	pbuf_put(&more, b.data + cut, b.len - cut);
	more.data[3] ^= 0x40;
	CHECK_EQ(jitdump_reader__read_unwritten(r, more.data, more.len, cut,
						&JIT_BUDGET_NONE, collect, &s), 0);
	/* the file still short of it: no read, no record twice */
	append_file(path, b.data + cut, 3);
	CHECK_EQ(jitdump_reader__read(r, &JIT_BUDGET_NONE, collect, &s), 0);
	/* written: skipped, then a new record is read */
	append_file(path, b.data + cut + 3, b.len - cut - 3);
	jitdump_encode_load(&more, false, 200, 99, 99, 0x9000, (const __u8 *)"\x90", 1, 9, "late");
	append_file(path, more.data + (b.len - cut), more.len - (b.len - cut));
	CHECK_EQ(jitdump_reader__read(r, &JIT_BUDGET_NONE, collect, &s), 1);
	CHECK_EQ(s.loads, 6);
	CHECK_STR(s.names[5], "late");
	CHECK_EQ(jitdump_reader__ahead(r), 0);
	CHECK_EQ(jitdump_reader__bad(r), 0);
	jitdump_reader__free(r);
	pbuf_free(&b);
	pbuf_free(&more);
}

/* What the file got is not what the buffer held: the file's records are
 * read (once said), and bytes that are no records end nothing. */
TEST(reader_unwritten_hostile)
{
	static const __u8 junk[64] = { 1, 0, 0, 0, 0xff, 0xff, 0xff, 0x7f };
	char path[256];
	struct jitdump_reader *r;
	struct seen s = { 0 };
	struct pbuf b = { 0 }, other = { 0 };

	snprintf(path, sizeof(path), "%s/unwritten2.dump", tmpdir);
	build_dump(&b, false, 1);
	write_file(path, b.data, b.len);
	r = jitdump_reader__new(path, -1);
	CHECK(r != NULL);
	if (!r)
		return;
	CHECK_EQ(jitdump_reader__read(r, &JIT_BUDGET_NONE, collect, &s), 1);
	/* corrupt framing in memory: nothing, the reader lives on */
	CHECK_EQ(jitdump_reader__read_unwritten(r, junk, sizeof(junk), b.len, &JIT_BUDGET_NONE,
						collect, &s), 0);
	/* a record that says it is larger than anything: incomplete */
	CHECK_EQ(jitdump_reader__read_unwritten(r, junk + 8, 16, b.len, &JIT_BUDGET_NONE,
						collect, &s), 0);
	jitdump_encode_load(&other, false, 300, 99, 99, 0xa000, (const __u8 *)"\x90", 1, 7, "mem");
	CHECK_EQ(jitdump_reader__read_unwritten(r, other.data, other.len, b.len,
						&JIT_BUDGET_NONE, collect, &s), 1);
	CHECK_STR(s.names[1], "mem");
	/* the file gets a different record of the same size */
	pbuf_reset(&other);
	jitdump_encode_load(&other, false, 300, 99, 99, 0xa000, (const __u8 *)"\x90", 1, 7, "fil");
	append_file(path, other.data, other.len);
	CHECK_EQ(jitdump_reader__read(r, &JIT_BUDGET_NONE, collect, &s), 1);
	CHECK_STR(s.names[2], "fil");
	CHECK_EQ(jitdump_reader__read(r, &JIT_BUDGET_NONE, collect, &s), 0);
	jitdump_reader__free(r);
	pbuf_free(&b);
	pbuf_free(&other);
}

static bool always_stop(void *ctx)
{
	(void)ctx;
	return true;
}

/* A read takes what its budget allows and resumes there: no record is
 * split, the deadline and a stop request end it before any record. */
TEST(reader_budget)
{
	char path[256];
	struct jitdump_reader *r;
	struct seen s = { 0 };
	struct pbuf b = { 0 };
	struct jit_budget bud;
	size_t rec;

	snprintf(path, sizeof(path), "%s/budget.dump", tmpdir);
	build_dump(&b, false, 4);
	write_file(path, b.data, b.len);
	rec = (b.len - 40) / 4;		/* the records are the same size */
	r = jitdump_reader__new(path, -1);
	CHECK(r != NULL);
	if (!r)
		return;
	bud = (struct jit_budget){ .bytes = rec + rec / 2 };
	CHECK_EQ(jitdump_reader__read(r, &bud, collect, &s), 1);
	CHECK(bud.cut);
	CHECK_EQ(bud.bytes, rec / 2);
	CHECK_EQ(jitdump_reader__offset(r), 40 + rec);
	bud = (struct jit_budget){ .bytes = ~0ULL, .stop = always_stop };
	CHECK_EQ(jitdump_reader__read(r, &bud, collect, &s), 0);
	CHECK(bud.cut);
	bud = (struct jit_budget){ .bytes = ~0ULL, .deadline_ns = 1 };	/* long past */
	CHECK_EQ(jitdump_reader__read(r, &bud, collect, &s), 0);
	CHECK(bud.cut);
	bud = (struct jit_budget){ .bytes = ~0ULL };
	CHECK_EQ(jitdump_reader__read(r, &bud, collect, &s), 3);
	CHECK(!bud.cut);
	CHECK_EQ(s.loads, 4);
	CHECK_EQ(jitdump_reader__offset(r), b.len);
	jitdump_reader__free(r);
	pbuf_free(&b);
}

TEST(reader_big_header_and_big_records)
{
	char path[256];
	struct jitdump_reader *r;
	struct seen s = { 0 };
	struct pbuf b = { 0 };
	__u8 *big = calloc(1, 3 << 20);
	int fd;

	snprintf(path, sizeof(path), "%s/big.dump", tmpdir);
	jitdump_encode_header(&b, true, 1, 64, 0, 5, 1, 0);	/* 24 extra header bytes */
	jitdump_encode_load(&b, true, 1, 5, 5, 0x1000, big, 3 << 20, 1, "big");
	for (int i = 0; i < 5000; i++)		/* ~3 MB more over chunk edges */
		jitdump_encode_load(&b, true, 2 + i, 5, 5, 0x2000, big, 600, 2 + i, "small");
	jitdump_encode_bare(&b, true, JIT_CODE_CLOSE, 9);
	write_file(path, b.data, b.len);
	fd = open(path, O_RDONLY);
	r = jitdump_reader__new("named-in-messages", fd);
	CHECK(r != NULL);
	if (r) {
		CHECK_EQ(jitdump_reader__read(r, &JIT_BUDGET_NONE, collect, &s), 5002);
		CHECK_EQ(s.loads, 5001);
		CHECK_EQ(s.close, 1);
		CHECK_STR(s.names[0], "big");
		CHECK_EQ(s.last_index, 5001);
		CHECK_EQ(s.offsets[0], 64);
		CHECK_STR(jitdump_reader__path(r), "named-in-messages");
	}
	jitdump_reader__free(r);
	free(big);
	pbuf_free(&b);
}

TEST(reader_corrupt_keeps_good)
{
	char path[256];
	struct jitdump_reader *r;
	struct seen s = { 0 };
	struct pbuf b = { 0 };
	size_t bad_at;

	snprintf(path, sizeof(path), "%s/bad.dump", tmpdir);
	build_dump(&b, false, 2);
	jitdump_encode_bare(&b, false, 777, 5);		/* unknown id: skipped */
	bad_at = b.len;
	jitdump_encode_load(&b, false, 1, 1, 1, 0x10, NULL, 4, 1, "x");
	memcpy(b.data + bad_at + 16 + 24, &(__u64){ 400 }, 8);	/* code_size: bad payload */
	jitdump_encode_load(&b, false, 1, 1, 1, 0x10, NULL, 4, 9, "after");
	jitdump_encode_bare(&b, false, JIT_CODE_CLOSE, 5);
	memcpy(b.data + b.len - 12, &(__u32){ 3 }, 4);	/* framing lost */
	jitdump_encode_load(&b, false, 1, 1, 1, 0x10, NULL, 4, 10, "never");
	write_file(path, b.data, b.len);
	r = jitdump_reader__new(path, -1);
	CHECK(r != NULL);
	if (!r)
		return;
	CHECK_EQ(jitdump_reader__read(r, &JIT_BUDGET_NONE, collect, &s), 3);
	CHECK_EQ(s.loads, 3);
	CHECK_STR(s.names[2], "after");
	CHECK_EQ(jitdump_reader__bad(r), 2);
	CHECK_EQ(jitdump_reader__unknown(r), 1);
	/* the file is given up after the framing error */
	CHECK_EQ(jitdump_reader__read(r, &JIT_BUDGET_NONE, collect, &s), 0);
	jitdump_reader__free(r);
	pbuf_free(&b);
}

TEST(reader_refuses)
{
	char path[256];
	struct jitdump_reader *r;
	struct pbuf b = { 0 };

	snprintf(path, sizeof(path), "%s/tsc.dump", tmpdir);
	jitdump_encode_header(&b, false, 1, 40, 0, 1, 1, JITDUMP_FLAG_ARCH_TIMESTAMP);
	write_file(path, b.data, b.len);
	r = jitdump_reader__new(path, -1);
	CHECK(r != NULL);
	if (r) {
		CHECK_EQ(jitdump_reader__read(r, &JIT_BUDGET_NONE, collect, NULL), -ENOTSUP);
		CHECK_EQ(jitdump_reader__read(r, &JIT_BUDGET_NONE, collect, NULL), 0);
	}
	jitdump_reader__free(r);
	/* directories, fifos: refused at open */
	errno = 0;
	CHECK(jitdump_reader__new(tmpdir, -1) == NULL);
	CHECK_EQ(errno, EINVAL);
	CHECK(jitdump_reader__new("/nonexistent/jit-1.dump", -1) == NULL);
	pbuf_free(&b);
}

/* Every prefix of a valid file, and byte flips: never a crash (ASan). */
TEST(hostile_prefixes_and_flips)
{
	struct jitdump_debug_entry ents[2] = { { 0x1000, 1, 0, "f" }, { 0x1001, 2, 0, "g" } };
	struct pbuf b = { 0 };
	unsigned int seed = 1;

	build_dump(&b, true, 2);
	jitdump_encode_debug(&b, true, 1, 0x1000, ents, 2);
	make_di2(&b, true);
	jitdump_encode_unwind(&b, true, 1, "abcd", 4, "hdr", 3, 0);
	jitdump_encode_tier(&b, true, 1, 2, "t");
	jitdump_encode_source(&b, true, 1, "s", "c", 1);
	for (size_t len = 0; len <= b.len; len++) {
		struct jitdump_header h;
		bool swap;
		size_t pos = JITDUMP_HEADER_SIZE;

		if (jitdump_parse_header(b.data, len, &h, &swap, NULL))
			continue;
		while (pos < len) {
			struct jitdump_record rec;
			ssize_t n = jitdump_parse_record(b.data + pos, len - pos, swap, &rec, NULL);

			if (n <= 0)
				break;
			pos += (size_t)n;
		}
	}
	for (int round = 0; round < 3000; round++) {
		__u8 *copy = malloc(b.len);
		size_t pos = JITDUMP_HEADER_SIZE;

		memcpy(copy, b.data, b.len);
		for (int k = 0; k < 4; k++) {
			seed = seed * 1103515245 + 12345;
			copy[JITDUMP_HEADER_SIZE + (seed >> 8) % (b.len - JITDUMP_HEADER_SIZE)] ^=
				(__u8)(seed >> 3);
		}
		while (pos < b.len) {
			struct jitdump_record rec;
			ssize_t n = jitdump_parse_record(copy + pos, b.len - pos, true, &rec, NULL);

			if (n == -EBADMSG)
				n = rec.prefix.total_size;
			if (n <= 0)
				break;
			if (rec.prefix.id == JIT_CODE_DEBUG_INFO) {
				struct jitdump_debug_entry e;
				size_t p = 0;

				while (!jitdump_debug_entry_next(&rec.debug, &p, &e))
					CHECK(e.file != NULL);
			}
			pos += (size_t)n;
		}
		free(copy);
	}
	pbuf_free(&b);
}

int main(void)
{
	log_verbosity = -1;		/* the bad files warn by design */
	return HARNESS_WITH_TMPDIR(tmpdir, {
		RUN(header_both_orders);
		RUN(header_refusals);
		RUN(records_native);
		RUN(records_swapped);
		RUN(debug_info2_both_orders);
		RUN(debug_info2_bad);
		RUN(corrupt_records);
		RUN(reader_incremental);
		RUN(reader_budget);
		RUN(reader_unwritten);
		RUN(reader_unwritten_hostile);
		RUN(reader_big_header_and_big_records);
		RUN(reader_corrupt_keeps_good);
		RUN(reader_refuses);
		RUN(hostile_prefixes_and_flips);
	});
}
