// SPDX-License-Identifier: GPL-2.0
/*
 * --xray-out: the FDR log layout (header, one buffer per thread with its
 * extents, preamble, start event, records), what happens to orphan and
 * unwound calls, the YAML instrumentation map, and file creation.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "harness.h"
#include "trace/xray_file.h"

static __u64 le(const __u8 *p, int n)
{
	__u64 v = 0;

	while (n--)
		v = v << 8 | p[n];
	return v;
}

static struct xray_event ev(__u32 tid, __u32 fid, int action, __u64 time, __u32 cpu)
{
	struct xray_event e = { .time = time, .pid = 50, .tid = tid, .cpu = cpu,
				.func_id = fid, .action = (__u8)action };
	return e;
}

static int add(void *ctx, const struct xray_call *c)
{
	return xray_file__add(ctx, c);
}

/* Thread 8 starts at 1010 on CPU 1 (its exit at 1000 has no entry and is
 * left out); thread 7 at 5000 on CPU 0. */
static struct xray_file *sample_file(void)
{
	struct xray_calls *c = xray_calls__new();
	struct xray_file *f = xray_file__new();
	struct xray_event e[] = {
		ev(7, 1, PREC_XRAY_ENTER, 5000, 0),
		ev(7, 2, PREC_XRAY_ENTER, 5100, 0),
		ev(7, 3, PREC_XRAY_ENTER, 5200, 0),	/* exit lost */
		ev(7, 2, PREC_XRAY_EXIT, 5300, 0),	/* unwinds 3 */
		ev(7, 1, PREC_XRAY_EXIT, 5000 + (5ULL << 32), 1),	/* wrap, migrated */
		ev(8, 9, PREC_XRAY_EXIT, 1000, 1),	/* orphan: left out */
		ev(8, 1, PREC_XRAY_ENTER, 1010, 1),
	};
	size_t i;

	e[6].nr_args = 2;
	e[6].args[0] = 0x1122;
	e[6].args[1] = 3;
	for (i = 0; i < sizeof(e) / sizeof(e[0]); i++)
		xray_calls__push(c, &e[i]);
	xray_calls__drain(c, ~0ULL, add, f);
	xray_calls__free(c);
	return f;
}

/* Walk one thread buffer; returns its end offset, or 0. */
static size_t check_buffer(const struct pbuf *b, size_t off, __u32 tid, __u64 first,
			   __u16 cpu, __u64 t0, const __u8 *body, size_t body_len)
{
	const __u8 *p = b->data + off;
	__u64 size;

	CHECK_EQ(p[0], PREC_XRAY_MD_BUFFER_EXTENTS << 1 | 1);
	size = le(p + 1, 8);
	CHECK(off + 16 + size <= b->len);
	CHECK_EQ(p[16], PREC_XRAY_MD_NEW_BUFFER << 1 | 1);
	CHECK_EQ(le(p + 17, 4), tid);
	CHECK_EQ(p[32], PREC_XRAY_MD_WALLTIME << 1 | 1);
	CHECK_EQ(le(p + 33, 8), first / 1000000000);
	CHECK_EQ(le(p + 41, 4), first % 1000000000 / 1000);
	CHECK_EQ(p[48], PREC_XRAY_MD_PID << 1 | 1);
	CHECK_EQ(le(p + 49, 4), 50);
	CHECK_EQ(p[64], PREC_XRAY_MD_NEW_CPU_ID << 1 | 1);
	CHECK_EQ(le(p + 65, 2), cpu);
	CHECK_EQ(le(p + 67, 8), t0);
	CHECK_EQ(p[80], PREC_XRAY_MD_CUSTOM_EVENT << 1 | 1);
	CHECK_EQ(le(p + 81, 4), 7);		/* size */
	CHECK_EQ(le(p + 85, 4), 0);		/* delta */
	CHECK(!memcmp(p + 96, "precord", 7));
	CHECK_EQ(size, 80 + 7 + body_len);
	CHECK(!memcmp(p + 103, body, body_len));
	return off + 16 + (size_t)size;
}

TEST(log_layout)
{
	struct xray_file *f = sample_file();
	struct pbuf out = { 0 }, body7 = { 0 }, body8 = { 0 };
	size_t off;

	/* what each thread's records must be */
	xray_put_new_cpu(&body8, 1, 1010);
	xray_put_function(&body8, PREC_XRAY_ENTER_ARGS, 1, 0);
	xray_put_call_arg(&body8, 0x1122);
	xray_put_call_arg(&body8, 3);
	xray_put_new_cpu(&body7, 0, 5000);
	xray_put_function(&body7, PREC_XRAY_ENTER, 1, 0);
	xray_put_function(&body7, PREC_XRAY_ENTER, 2, 100);
	xray_put_function(&body7, PREC_XRAY_ENTER, 3, 100);
	xray_put_function(&body7, PREC_XRAY_EXIT, 3, 100);	/* unwound at 5300 */
	xray_put_function(&body7, PREC_XRAY_EXIT, 2, 0);
	xray_put_new_cpu(&body7, 1, 5000 + (5ULL << 32));
	xray_put_function(&body7, PREC_XRAY_EXIT, 1, 0);

	CHECK_EQ(xray_file__encode(f, &out), 0);
	CHECK_EQ(le(out.data, 2), 5);
	CHECK_EQ(le(out.data + 2, 2), 1);
	CHECK_EQ(le(out.data + 4, 4), 3);
	CHECK_EQ(le(out.data + 8, 8), 1000000000);
	CHECK_EQ(le(out.data + 16, 8), 87 + body7.len);		/* largest buffer */
	off = check_buffer(&out, 32, 8, 1010, 1, 1010, body8.data, body8.len);
	off = check_buffer(&out, off, 7, 5000, 0, 1010, body7.data, body7.len);
	CHECK_EQ(off, out.len);
	pbuf_free(&out);
	pbuf_free(&body7);
	pbuf_free(&body8);
	xray_file__free(f);
}

TEST(empty_log)
{
	struct xray_file *f = xray_file__new();
	struct pbuf out = { 0 };

	CHECK_EQ(xray_file__encode(f, &out), 0);
	CHECK_EQ(out.len, XRAY_FILE_HEADER_SIZE);
	pbuf_free(&out);
	xray_file__free(f);
	xray_file__free(NULL);
}

TEST(instr_map)
{
	struct trace_func funcs[2] = {
		{ .id = 1, .name = "outer", .addr = 0x1230 },
		{ .id = 2, .name = "it's\n", .addr = 0xabc },
	};
	struct pbuf out = { 0 };

	CHECK_EQ(xray_map_encode(funcs, 2, &out), 0);
	pbuf_put_u8(&out, 0);
	CHECK_STR((char *)out.data,
		  "---\n"
		  "- { id: 1, address: 0x1230, function: 0x1230, kind: function-enter, always-instrument: true, function-name: 'outer', version: 2 }\n"
		  "- { id: 1, address: 0x1230, function: 0x1230, kind: function-exit, always-instrument: true, function-name: 'outer', version: 2 }\n"
		  "- { id: 2, address: 0xABC, function: 0xABC, kind: function-enter, always-instrument: true, function-name: 'it''s?', version: 2 }\n"
		  "- { id: 2, address: 0xABC, function: 0xABC, kind: function-exit, always-instrument: true, function-name: 'it''s?', version: 2 }\n"
		  "...\n");
	pbuf_free(&out);
}

TEST(write_files)
{
	char dir[] = "/tmp/test_xray_file.XXXXXX", path[PATH_MAX], map[PATH_MAX + 16];
	struct trace_func fn = { .id = 1, .name = "outer", .addr = 0x1230 };
	struct xray_file *f = sample_file();
	struct stat st;

	CHECK(mkdtemp(dir) != NULL);
	snprintf(path, sizeof(path), "%s/out.xray", dir);
	snprintf(map, sizeof(map), "%s.map.yaml", path);
	CHECK_EQ(xray_file__write(f, path, &fn, 1), 0);
	CHECK(!stat(path, &st) && st.st_size > XRAY_FILE_HEADER_SIZE);
	CHECK(!stat(map, &st) && st.st_size > 100);
	/* an existing file is replaced; a symlink is not followed */
	CHECK_EQ(xray_file__write(f, path, &fn, 1), 0);
	unlink(path);
	CHECK_EQ(symlink("/dev/null", path), 0);
	CHECK_EQ(xray_file__write(f, path, &fn, 1), -ELOOP);
	unlink(path);
	unlink(map);
	CHECK_EQ(rmdir(dir), 0);
	xray_file__free(f);
}

int main(void)
{
	RUN(log_layout);
	RUN(empty_log);
	RUN(instr_map);
	RUN(write_files);
	return HARNESS_DONE();
}
