// SPDX-License-Identifier: GPL-2.0
/*
 * Tests for user/jit/mlpd.c, the Mono log profiler (.mlpd) reader.
 *
 * Fixtures are built in memory byte by byte (header, buffers, one encoder
 * per event kind) so every expectation is exact.  Real files recorded from
 * tests/workloads/cs/Hot.cs live in tests/fuzz/corpus/mlpd/.
 *
 * Extra modes (not tests):
 *   test_mlpd --dump FILE        print "0xADDR SIZE NAME" per code region,
 *                                used by tests/workloads/cs/compare-mprof.sh
 *   test_mlpd --dump-times FILE  the same with "TIME " in front
 *   test_mlpd --now              print CLOCK_MONOTONIC in ns
 *   test_mlpd --write-seeds DIR  write the synthetic fixtures as fuzz seeds
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <zlib.h>

#include "harness.h"
#include "jit/mlpd.h"
#include "util/buf.h"
#include "util/log.h"

/* ---- collecting what the reader reports ---- */

#define MAXM 40000

struct got {
	int n;
	struct {
		__u64 time, addr, size;
		char name[160];
	} m[MAXM];
	int stop_after;		/* return 1 after this many (0: never) */
	int ret;		/* value returned when stopping */
};

static struct got got_a, got_b;

static int collect(void *ctx, const struct mlpd_method *m)
{
	struct got *g = ctx;

	if (g->n < MAXM) {
		g->m[g->n].time = m->time;
		g->m[g->n].addr = m->code_addr;
		g->m[g->n].size = m->code_size;
		snprintf(g->m[g->n].name, sizeof(g->m[g->n].name), "%s", m->name);
	}
	g->n++;
	if (g->stop_after && g->n >= g->stop_after)
		return g->ret;
	return 0;
}

static int messages;	/* warnings and errors printed (log_before_print) */

static void count_message(void)
{
	messages++;
}

static int read_mem(const struct pbuf *b, struct got *g)
{
	memset(g, 0, sizeof(*g));
	return mlpd_read_mem(b->data, b->len, "fixture", NULL, collect, g);
}

/* ---- fixture encoders: little-endian, as Mono writes ---- */

static void put_le(struct pbuf *b, __u64 v, int n)
{
	int i;

	for (i = 0; i < n; i++)
		pbuf_put_u8(b, (uint8_t)(v >> (8 * i)));
}

static void put_uleb(struct pbuf *b, __u64 v)
{
	do {
		uint8_t c = v & 0x7f;

		v >>= 7;
		pbuf_put_u8(b, c | (v ? 0x80 : 0));
	} while (v);
}

static void put_sleb(struct pbuf *b, __s64 v)
{
	for (;;) {
		uint8_t c = v & 0x7f;

		v >>= 7;	/* arithmetic shift on gcc/clang */
		if ((v == 0 && !(c & 0x40)) || (v == -1 && (c & 0x40))) {
			pbuf_put_u8(b, c);
			return;
		}
		pbuf_put_u8(b, c | 0x80);
	}
}

static void put_str(struct pbuf *b, const char *s)
{
	pbuf_put(b, s, strlen(s) + 1);
}

static void put_hstr(struct pbuf *b, const char *s)
{
	put_le(b, strlen(s) + 1, 4);
	put_str(b, s);
}

#define PID 4242

static void fx_header(struct pbuf *b, int major, int data, int ptr_size, const char *os)
{
	put_le(b, 0x4D505A01, 4);
	pbuf_put_u8(b, major);
	pbuf_put_u8(b, 0);
	pbuf_put_u8(b, data);
	pbuf_put_u8(b, ptr_size);
	put_le(b, 1700000000000ull, 8);	/* startup, ms */
	if (major >= 3)
		put_le(b, 5000000000ull, 8);	/* startup, ns */
	put_le(b, 16, 4);		/* timer overhead */
	put_le(b, 0, 4);		/* flags */
	put_le(b, PID, 4);
	put_le(b, 0, 2);		/* port */
	put_hstr(b, "log:jit,output=x.mlpd");
	put_hstr(b, "x86-64");
	put_hstr(b, os);
}

#define TIME_BASE	1000000000ull
#define PTR_BASE	0x40000000ull
#define METHOD_BASE	0x560000001000ull

static void fx_buffer(struct pbuf *out, const struct pbuf *ev)
{
	put_le(out, 0x4D504C01, 4);
	put_le(out, ev->len, 4);
	put_le(out, TIME_BASE, 8);
	put_le(out, PTR_BASE, 8);
	put_le(out, 0x7f0000000000ull >> 3, 8);	/* obj base */
	put_le(out, 0x7f00deadbeefull, 8);	/* thread */
	put_le(out, METHOD_BASE, 8);
	pbuf_put(out, ev->data, ev->len);
}

/* [type|exinfo][time diff] */
static void ev_head(struct pbuf *e, int type, __u64 tdiff)
{
	pbuf_put_u8(e, type);
	put_uleb(e, tdiff);
}

/* TYPE_METHOD | TYPE_JIT */
static void ev_jit(struct pbuf *e, __u64 tdiff, __s64 code_off, __u64 size, const char *name)
{
	ev_head(e, 0x43, tdiff);
	put_sleb(e, 0x40);		/* method pointer diff */
	put_sleb(e, code_off);
	put_uleb(e, size);
	put_str(e, name);
}

/* TYPE_RUNTIME | TYPE_JITHELPER */
static void ev_helper(struct pbuf *e, int type, __s64 code_off, __u64 size, const char *name)
{
	ev_head(e, 0x18, 3);
	pbuf_put_u8(e, type);
	put_sleb(e, code_off);
	put_uleb(e, size);
	if (name)
		put_str(e, name);
}

static void ev_bt(struct pbuf *e, int n)
{
	int i;

	put_uleb(e, n);
	for (i = 0; i < n; i++)
		put_sleb(e, i % 2 ? -0x48 : 0x30);
}

/*
 * Every event kind of data version 17 except the code regions, each
 * followed by a JIT event: a wrong skip shows up as a wrong method.
 */
static int fx_all_kinds_v17(struct pbuf *e)
{
	int k = 0;
	char nm[32];

#define MARK() do { snprintf(nm, sizeof(nm), "M:m%d ()", ++k); \
		ev_jit(e, 10, 0x100 * k, 0x10, nm); } while (0)
	ev_head(e, 0x00, 5); put_sleb(e, 8); put_sleb(e, -2); put_uleb(e, 24); MARK();	/* alloc */
	ev_head(e, 0x10, 5); put_sleb(e, 8); put_sleb(e, 2); put_uleb(e, 32); ev_bt(e, 3); MARK();
	ev_head(e, 0x11, 5); pbuf_put_u8(e, 1); pbuf_put_u8(e, 0); MARK();		/* gc event */
	ev_head(e, 0x21, 5); put_uleb(e, 1 << 20); MARK();			/* resize */
	ev_head(e, 0x31, 5); put_uleb(e, 4); put_sleb(e, 1); put_sleb(e, -1); put_sleb(e, 300); put_sleb(e, -300); MARK();
	ev_head(e, 0x41, 5); put_uleb(e, 2); put_uleb(e, 77); put_sleb(e, 5); MARK();	/* handle created */
	ev_head(e, 0x61, 5); put_uleb(e, 2); put_uleb(e, 78); put_sleb(e, 6); ev_bt(e, 2); MARK();
	ev_head(e, 0x51, 5); put_uleb(e, 2); put_uleb(e, 77); MARK();		/* destroyed */
	ev_head(e, 0x71, 5); put_uleb(e, 2); put_uleb(e, 78); ev_bt(e, 1); MARK();
	ev_head(e, 0x81, 5); MARK();						/* finalize start */
	ev_head(e, 0x91, 5); MARK();
	ev_head(e, 0xa1, 5); put_sleb(e, 9); MARK();				/* finalize object */
	ev_head(e, 0xb1, 5); put_sleb(e, 9); MARK();
	ev_head(e, 0x02, 5); pbuf_put_u8(e, 1); put_sleb(e, 64); put_sleb(e, 8); put_str(e, "System.Object"); MARK();
	ev_head(e, 0x22, 5); pbuf_put_u8(e, 2); put_sleb(e, 8); put_str(e, "/x/mscorlib.dll"); put_str(e, "1234-5678"); MARK();
	ev_head(e, 0x42, 5); pbuf_put_u8(e, 2); put_sleb(e, 8); put_str(e, "/x/mscorlib.dll"); MARK();	/* image unload: no mvid */
	ev_head(e, 0x22, 5); pbuf_put_u8(e, 3); put_sleb(e, 16); put_sleb(e, 8); put_str(e, "mscorlib, Version=4.0.0.0"); MARK();
	ev_head(e, 0x22, 5); pbuf_put_u8(e, 4); put_sleb(e, 1); MARK();		/* domain load */
	ev_head(e, 0x02, 5); pbuf_put_u8(e, 4); put_sleb(e, 1); put_str(e, "Hot.exe"); MARK();	/* domain name */
	ev_head(e, 0x22, 5); pbuf_put_u8(e, 5); put_sleb(e, 0x200); MARK();	/* thread start */
	ev_head(e, 0x02, 5); pbuf_put_u8(e, 5); put_sleb(e, 0x200); put_str(e, "Main"); MARK();
	ev_head(e, 0x42, 5); pbuf_put_u8(e, 5); put_sleb(e, 0x200); MARK();	/* thread end */
	ev_head(e, 0x22, 5); pbuf_put_u8(e, 6); put_sleb(e, 1); put_sleb(e, 1); MARK();	/* context */
	ev_head(e, 0x22, 5); pbuf_put_u8(e, 7); put_sleb(e, 0x300); put_sleb(e, 1); put_sleb(e, 64); MARK();	/* vtable */
	ev_head(e, 0x13, 5); put_sleb(e, 0x10); MARK();				/* leave */
	ev_head(e, 0x23, 5); put_sleb(e, -0x10); MARK();			/* enter */
	ev_head(e, 0x33, 5); put_sleb(e, 0x20); MARK();				/* exc leave */
	ev_head(e, 0x14, 5); pbuf_put_u8(e, 0); put_uleb(e, 1); put_sleb(e, 8); put_sleb(e, 3); MARK();	/* clause */
	ev_head(e, 0x04, 5); put_sleb(e, 3); MARK();				/* throw */
	ev_head(e, 0x84, 5); put_sleb(e, 3); ev_bt(e, 4); MARK();		/* throw + bt */
	ev_head(e, 0x05, 5); pbuf_put_u8(e, 1); put_sleb(e, 4); MARK();	/* monitor */
	ev_head(e, 0x85, 5); pbuf_put_u8(e, 2); put_sleb(e, 4); ev_bt(e, 2); MARK();
	ev_head(e, 0x06, 5); MARK();						/* heap start */
	ev_head(e, 0x26, 5); put_sleb(e, 7); put_sleb(e, 64); put_uleb(e, 40); pbuf_put_u8(e, 1);
	put_uleb(e, 2); put_uleb(e, 8); put_sleb(e, 1); put_uleb(e, 8); put_sleb(e, -1); MARK();	/* heap object */
	ev_head(e, 0x36, 5); put_uleb(e, 2); put_sleb(e, 1); put_sleb(e, 2); put_sleb(e, 3); put_sleb(e, 4); MARK();	/* roots */
	ev_head(e, 0x46, 5); put_sleb(e, 0x1000); put_uleb(e, 64); pbuf_put_u8(e, 3); put_sleb(e, 0); put_str(e, "static fields"); MARK();
	ev_head(e, 0x56, 5); put_sleb(e, 0x1000); MARK();			/* root unregister */
	ev_head(e, 0x16, 5); MARK();						/* heap end */
	ev_head(e, 0x07, 5); put_sleb(e, 0x200); put_uleb(e, 1); put_sleb(e, 0x123);
	put_uleb(e, 3); put_sleb(e, 8); put_sleb(e, 8); put_sleb(e, -16); MARK();	/* sample hit */
	ev_head(e, 0x17, 5); put_sleb(e, -0x1000); put_uleb(e, 0); put_str(e, "mono_main"); MARK();	/* usym */
	ev_head(e, 0x37, 5); put_uleb(e, 2);					/* counters desc */
	put_uleb(e, 1 << 8); put_str(e, "Methods JITted using mono JIT"); put_uleb(e, 0); put_uleb(e, 3 << 24); put_uleb(e, 1 << 28); put_uleb(e, 1);
	put_uleb(e, 1 << 15); put_str(e, "Perf"); put_str(e, "custom"); put_uleb(e, 5); put_uleb(e, 0); put_uleb(e, 1 << 30); put_uleb(e, 2);
	MARK();
	ev_head(e, 0x47, 5);							/* counters */
	put_uleb(e, 1); put_uleb(e, 0); put_sleb(e, -5);	/* int */
	put_uleb(e, 2); put_uleb(e, 1); put_uleb(e, 500);	/* uint */
	put_uleb(e, 3); put_uleb(e, 2); put_sleb(e, 7);		/* word */
	put_uleb(e, 4); put_uleb(e, 3); put_sleb(e, 1ll << 40);	/* long */
	put_uleb(e, 5); put_uleb(e, 4); put_uleb(e, 1ull << 63);	/* ulong */
	put_uleb(e, 6); put_uleb(e, 5); put_le(e, 0x400921fb54442d18ull, 8);	/* double */
	put_uleb(e, 7); put_uleb(e, 6); pbuf_put_u8(e, 1); put_str(e, "str");	/* string */
	put_uleb(e, 8); put_uleb(e, 6); pbuf_put_u8(e, 0);	/* null string */
	put_uleb(e, 9); put_uleb(e, 7); put_sleb(e, 99);	/* time interval */
	put_uleb(e, 0);
	MARK();
	ev_head(e, 0x0a, 5); pbuf_put_u8(e, 0); MARK();			/* sync point */
	ev_head(e, 0x1a, 5); put_str(e, "aot-id-1"); MARK();			/* aot id */
#undef MARK
	return k;
}

static void build(struct pbuf *f, int major, int data, const struct pbuf *ev)
{
	memset(f, 0, sizeof(*f));
	fx_header(f, major, data, 8, "linux");
	fx_buffer(f, ev);
}

/* ---- tests ---- */

TEST(header)
{
	struct pbuf f = {};
	struct mlpd_header h;
	size_t full;

	fx_header(&f, 3, 17, 8, "linux");
	full = f.len;
	CHECK_EQ(mlpd_parse_header(f.data, f.len, &h), 0);
	CHECK_EQ(h.major, 3);
	CHECK_EQ(h.data_version, 17);
	CHECK_EQ(h.ptr_size, 8);
	CHECK_EQ(h.pid, PID);
	CHECK_EQ(h.startup_ms, 1700000000000ull);
	CHECK_EQ(h.startup_ns, 5000000000ull);
	CHECK_EQ(h.os_linux, 1);
	CHECK_EQ(h.size, full);
	CHECK_EQ(mlpd_parse_header(f.data, full - 1, &h), -ENODATA);
	CHECK_EQ(mlpd_parse_header(f.data, 3, &h), -ENODATA);
	pbuf_reset(&f);
	fx_header(&f, 1, 13, 4, "osx");
	CHECK_EQ(mlpd_parse_header(f.data, f.len, &h), 0);
	CHECK_EQ(h.startup_ns, 0);
	CHECK_EQ(h.os_linux, 0);
	CHECK_EQ(h.size, f.len);
	pbuf_free(&f);
}

TEST(every_event_kind_v17)
{
	struct pbuf e = {}, f = {};
	int k, i;

	k = fx_all_kinds_v17(&e);
	build(&f, 3, 17, &e);
	messages = 0;
	CHECK_EQ(read_mem(&f, &got_a), 0);
	CHECK_EQ(messages, 0);
	CHECK_EQ(got_a.n, k);
	for (i = 0; i < got_a.n && i < k; i++) {
		char nm[32];

		snprintf(nm, sizeof(nm), "M:m%d ()", i + 1);
		CHECK_STR(got_a.m[i].name, nm);
		CHECK_EQ(got_a.m[i].addr, PTR_BASE + 0x100 * (i + 1));
		CHECK_EQ(got_a.m[i].size, 0x10);
		/* each pair of events adds 5 + 10 ns to the buffer's time */
		CHECK_EQ(got_a.m[i].time, TIME_BASE + 15 * (i + 1));
	}
	CHECK_EQ(mlpd_pid, PID);
	pbuf_free(&e);
	pbuf_free(&f);
}

TEST(code_buffers)
{
	struct pbuf e = {}, f = {};
	static const char *const want[] = {
		"[mono] unbox trampoline", "generic_trampoline_jit",
		"[mono] misc helper", "[mono] delegate invoke",
		"[mono] exception handling", "[mono] code buffer type 12",
	};
	int i;

	ev_helper(&e, 0, 0x10, 0x20, NULL);	/* a method's buffer: skipped */
	ev_helper(&e, 2, 0x20, 0x20, NULL);
	ev_helper(&e, 5, 0x40, 0x20, "generic_trampoline_jit");
	ev_helper(&e, 6, 0x60, 0x20, NULL);
	ev_helper(&e, 8, 0x80, 0x20, NULL);
	ev_helper(&e, 9, -0x40, 0x20, NULL);
	ev_helper(&e, 12, 0xa0, 0x20, NULL);
	ev_helper(&e, 5, 0xc0, 0, "empty");	/* no size: not a region */
	ev_jit(&e, 1, 0x1000, 0x30, "");	/* nameless method */
	ev_jit(&e, 1, 0x2000, 0, "Zero:Size ()");
	ev_jit(&e, 1, -(__s64)PTR_BASE, 0x10, "Null:Code ()");
	ev_jit(&e, 1, 0x3000, 0x10, "Bad\nName\x7f ()");
	build(&f, 3, 17, &e);
	messages = 0;
	CHECK_EQ(read_mem(&f, &got_a), 0);
	CHECK_EQ(messages, 0);
	CHECK_EQ(got_a.n, 8);
	for (i = 0; i < 6 && i < got_a.n; i++)
		CHECK_STR(got_a.m[i].name, want[i]);
	CHECK_EQ(got_a.m[4].addr, PTR_BASE - 0x40);
	CHECK_STR(got_a.m[6].name, "[mono] unnamed method");
	CHECK_EQ(got_a.m[6].addr, PTR_BASE + 0x1000);
	CHECK_STR(got_a.m[7].name, "Bad?Name? ()");
	pbuf_free(&e);
	pbuf_free(&f);
}

/* Data versions 13..16: the documented layout differences. */
TEST(older_versions)
{
	struct pbuf e = {}, f = {};
	int v;

	for (v = 13; v <= 16; v++) {
		pbuf_reset(&e);
		/* monitor: v13 has the event in exinfo, v14+ a byte */
		ev_head(&e, v == 13 ? 0x95 : 0x85, 1);
		if (v >= 14)
			pbuf_put_u8(&e, 1);
		put_sleb(&e, 4);
		ev_bt(&e, 1);
		ev_jit(&e, 1, 0x100, 8, "A:a ()");
		/* sample hit: v13 has a sample type byte */
		ev_head(&e, 0x07, 1);
		if (v == 13)
			pbuf_put_u8(&e, 0);
		put_sleb(&e, 1); put_uleb(&e, 1); put_sleb(&e, 2); put_uleb(&e, 0);
		/* heap roots: old layout before 15, root type a byte in 13 */
		ev_head(&e, 0x36, 1);
		put_uleb(&e, 1);
		if (v < 15) {
			put_uleb(&e, 9);	/* gc number */
			put_sleb(&e, 5);
			if (v == 13)
				pbuf_put_u8(&e, 2);
			else
				put_uleb(&e, 300);
			put_uleb(&e, 0);
		} else {
			put_sleb(&e, 5);
			put_sleb(&e, 6);
		}
		/* heap object: generation byte from 16 */
		ev_head(&e, 0x26, 1); put_sleb(&e, 7); put_sleb(&e, 64); put_uleb(&e, 40);
		if (v >= 16)
			pbuf_put_u8(&e, 0);
		put_uleb(&e, 0);
		/* assembly: image pointer from 14; image: mvid from 16 */
		ev_head(&e, 0x22, 1); pbuf_put_u8(&e, 3); put_sleb(&e, 16);
		if (v >= 14)
			put_sleb(&e, 8);
		put_str(&e, "asm");
		ev_head(&e, 0x22, 1); pbuf_put_u8(&e, 2); put_sleb(&e, 8); put_str(&e, "img");
		if (v >= 16)
			put_str(&e, "mvid");
		/* clause: exception object from 14 */
		ev_head(&e, 0x14, 1); pbuf_put_u8(&e, 1); put_uleb(&e, 0); put_sleb(&e, 8);
		if (v >= 14)
			put_sleb(&e, 3);
		/* counters: type/unit/variance bytes before 15 */
		ev_head(&e, 0x37, 1); put_uleb(&e, 1); put_uleb(&e, 1 << 9); put_str(&e, "c");
		if (v < 15) {
			pbuf_put_u8(&e, 3); pbuf_put_u8(&e, 1); pbuf_put_u8(&e, 2);
		} else {
			put_uleb(&e, 3); put_uleb(&e, 1); put_uleb(&e, 2);
		}
		put_uleb(&e, 1);
		ev_head(&e, 0x47, 1); put_uleb(&e, 1);
		if (v < 15)
			pbuf_put_u8(&e, 3);
		else
			put_uleb(&e, 3);
		put_sleb(&e, 1000); put_uleb(&e, 0);
		/* unmanaged binary and coverage exist before 16 */
		if (v < 16) {
			ev_head(&e, 0x27, 1); put_sleb(&e, 0); put_uleb(&e, 0); put_uleb(&e, 4096); put_str(&e, "/lib/x.so");
			ev_head(&e, 0x19, 1); put_str(&e, "a"); put_str(&e, "b"); put_str(&e, "c"); put_str(&e, "d"); put_str(&e, "e");
			put_uleb(&e, 1); put_uleb(&e, 2); put_uleb(&e, 3);
			ev_head(&e, 0x29, 1); put_uleb(&e, 1); put_uleb(&e, 2); put_uleb(&e, 3); put_uleb(&e, 4); put_uleb(&e, 5);
			ev_head(&e, 0x09, 1); put_str(&e, "a"); put_str(&e, "g"); put_str(&e, "f");
			put_uleb(&e, 1); put_uleb(&e, 2); put_uleb(&e, 3);
			ev_head(&e, 0x39, 1); put_str(&e, "a"); put_str(&e, "k");
			put_uleb(&e, 1); put_uleb(&e, 2); put_uleb(&e, 3);
		}
		/* code buffer: v13 numbered types from 1 (UNKNOWN = 0) */
		ev_helper(&e, v == 13 ? 6 : 5, 0x200, 8, "specific");
		ev_jit(&e, 1, 0x300, 8, "B:b ()");
		pbuf_free(&f);
		build(&f, v == 13 ? 1 : 2, v, &e);
		messages = 0;
		CHECK_EQ(read_mem(&f, &got_a), 0);
		CHECK_EQ(messages, 0);
		CHECK_EQ(got_a.n, 3);
		CHECK_STR(got_a.m[0].name, "A:a ()");
		CHECK_STR(got_a.m[1].name, "specific");
		CHECK_STR(got_a.m[2].name, "B:b ()");
		CHECK_EQ(got_a.m[2].addr, PTR_BASE + 0x300);
		if (got_a.n != 3 || messages)
			fprintf(stderr, "  (data version %d)\n", v);
	}
	pbuf_free(&e);
	pbuf_free(&f);
}

/* Events of a later version in an earlier file are corrupt, and the
 * reverse: the reader follows the version the header announces. */
TEST(version_gates)
{
	struct pbuf e = {}, f = {};

	ev_head(&e, 0x19, 1); put_str(&e, "a"); put_str(&e, "g"); put_str(&e, "f");	/* coverage */
	put_uleb(&e, 1); put_uleb(&e, 2); put_uleb(&e, 3);
	ev_jit(&e, 1, 0x300, 8, "After:coverage ()");
	build(&f, 3, 17, &e);
	messages = 0;
	CHECK_EQ(read_mem(&f, &got_a), 0);
	CHECK_EQ(got_a.n, 0);
	CHECK_EQ(messages, 1);
	pbuf_free(&e);
	pbuf_free(&f);
}

TEST(time_clock_and_pointer_size)
{
	struct pbuf e = {}, f = {};

	/* Mono writes a JIT event's earlier time as a wrapped 10-byte uleb */
	ev_jit(&e, (__u64)-1000, 0x100, 8, "Early:e ()");
	ev_jit(&e, 2000, 0x200, 8, "Late:l ()");
	build(&f, 3, 17, &e);
	CHECK_EQ(read_mem(&f, &got_a), 0);
	CHECK_EQ(got_a.n, 2);
	CHECK_EQ(got_a.m[0].time, TIME_BASE - 1000);
	CHECK_EQ(got_a.m[1].time, TIME_BASE + 1000);

	pbuf_reset(&f);
	fx_header(&f, 3, 17, 8, "windows");
	fx_buffer(&f, &e);
	CHECK_EQ(read_mem(&f, &got_a), 0);
	CHECK_EQ(got_a.n, 2);
	CHECK_EQ(got_a.m[0].time, 0);	/* unknown clock */

	/* 32-bit process: addresses wrap at 4 GiB, ranges must fit */
	pbuf_reset(&e);
	ev_jit(&e, 1, -(__s64)PTR_BASE - 0x10, 8, "Wrap:w ()");
	ev_jit(&e, 1, 0xbffffff8ll, 0x10, "Over:o ()");
	pbuf_reset(&f);
	fx_header(&f, 3, 17, 4, "linux");
	fx_buffer(&f, &e);
	messages = 0;
	CHECK_EQ(read_mem(&f, &got_a), 0);
	CHECK_EQ(got_a.n, 1);
	CHECK_EQ(got_a.m[0].addr, 0xfffffff0ull);
	CHECK_EQ(messages, 1);
	pbuf_free(&e);
	pbuf_free(&f);
}

TEST(callback_stops)
{
	struct pbuf e = {}, f = {};
	int i;

	for (i = 0; i < 5; i++)
		ev_jit(&e, 1, 0x100 * (i + 1), 8, "S:s ()");
	build(&f, 3, 17, &e);
	memset(&got_a, 0, sizeof(got_a));
	got_a.stop_after = 2;
	got_a.ret = 1;
	CHECK_EQ(mlpd_read_mem(f.data, f.len, "x", NULL, collect, &got_a), 0);
	CHECK_EQ(got_a.n, 2);
	memset(&got_a, 0, sizeof(got_a));
	got_a.stop_after = 3;
	got_a.ret = -ECANCELED;
	CHECK_EQ(mlpd_read_mem(f.data, f.len, "x", NULL, collect, &got_a), -ECANCELED);
	CHECK_EQ(got_a.n, 3);
	pbuf_free(&e);
	pbuf_free(&f);
}

static int gzip_mem(const struct pbuf *in, struct pbuf *out)
{
	z_stream z = {};
	int ret;

	memset(out, 0, sizeof(*out));
	if (deflateInit2(&z, 6, Z_DEFLATED, 16 + MAX_WBITS, 8, Z_DEFAULT_STRATEGY) != Z_OK)
		return -1;
	pbuf_reserve(out, deflateBound(&z, in->len) + 64);
	z.next_in = in->data;
	z.avail_in = in->len;
	z.next_out = out->data;
	z.avail_out = out->cap;
	ret = deflate(&z, Z_FINISH);
	out->len = z.total_out;
	deflateEnd(&z);
	return ret == Z_STREAM_END ? 0 : -1;
}

static char tmpdir[64];
static const char *const tmp_names[] = {
	"plain.gz", "packed.mlpd", "big.mlpd", "big.mlpd.gz", "fifo", "live.mlpd", "bomb.mlpd",
	NULL,
};

static const char *tmp_path(const char *name)
{
	static char p[128];

	snprintf(p, sizeof(p), "%s/%s", tmpdir, name);
	return p;
}

static int write_file(const char *path, const void *data, size_t len)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0600);
	ssize_t w;

	if (fd < 0)
		return -1;
	w = write(fd, data, len);
	close(fd);
	return w == (ssize_t)len ? 0 : -1;
}

static int same(const struct got *a, const struct got *b)
{
	int i;

	if (a->n != b->n)
		return 0;
	for (i = 0; i < a->n && i < MAXM; i++)
		if (a->m[i].addr != b->m[i].addr || a->m[i].size != b->m[i].size ||
		    a->m[i].time != b->m[i].time || strcmp(a->m[i].name, b->m[i].name))
			return 0;
	return 1;
}

/* Three buffers of several events, the shape of a real file. */
static void fx_small_file(struct pbuf *f, int *per_buffer_end, int *per_buffer_n)
{
	struct pbuf e = {};
	int b, n = 0;
	char nm[32];

	memset(f, 0, sizeof(*f));
	fx_header(f, 3, 17, 8, "linux");
	for (b = 0; b < 3; b++) {
		pbuf_reset(&e);
		ev_head(&e, 0x02, 5); pbuf_put_u8(&e, 1); put_sleb(&e, 64); put_sleb(&e, 8); put_str(&e, "K");
		snprintf(nm, sizeof(nm), "T:f%d (int)", n);
		ev_jit(&e, 7, 0x100 * ++n, 0x40, nm);
		ev_helper(&e, 5, 0x100 * ++n, 0x20, "tramp");
		ev_head(&e, 0x84, 5); put_sleb(&e, 3); ev_bt(&e, 2);
		snprintf(nm, sizeof(nm), "T:g%d (string)", n);
		ev_jit(&e, (__u64)-3, 0x100 * ++n, 0x80, nm);
		fx_buffer(f, &e);
		per_buffer_end[b] = (int)f->len;
		per_buffer_n[b] = n;
	}
	pbuf_free(&e);
}

TEST(gzip_and_plain_agree)
{
	struct pbuf f = {}, z = {};
	int ends[3], ns[3];

	fx_small_file(&f, ends, ns);
	CHECK_EQ(gzip_mem(&f, &z), 0);
	CHECK(z.len > 2 && z.data[0] == 0x1f && z.data[1] == 0x8b);
	CHECK_EQ(read_mem(&f, &got_a), 0);
	CHECK_EQ(got_a.n, 9);
	CHECK_EQ(read_mem(&z, &got_b), 0);
	CHECK(same(&got_a, &got_b));

	/* the same through files: detection is by content, not by name */
	CHECK_EQ(write_file(tmp_path("plain.gz"), f.data, f.len), 0);
	CHECK_EQ(write_file(tmp_path("packed.mlpd"), z.data, z.len), 0);
	memset(&got_b, 0, sizeof(got_b));
	CHECK_EQ(mlpd_read_file(tmp_path("plain.gz"), NULL, collect, &got_b), 0);
	CHECK(same(&got_a, &got_b));
	memset(&got_b, 0, sizeof(got_b));
	CHECK_EQ(mlpd_read_file(tmp_path("packed.mlpd"), NULL, collect, &got_b), 0);
	CHECK(same(&got_a, &got_b));

	/* two gzip members, as gzread reads them */
	pbuf_put(&z, z.data, z.len);
	memset(&got_b, 0, sizeof(got_b));
	CHECK_EQ(mlpd_read_mem(z.data, z.len, "x", NULL, collect, &got_b), 0);
	CHECK_EQ(got_b.n, 2 * got_a.n);	/* the second header: skipped as a bad buffer */
	pbuf_free(&f);
	pbuf_free(&z);
}

/* A gzip bomb: good buffers, then 64 MiB of zeros (~64 KiB packed).  The
 * budget stops inflation at its bytes, in memory and from a file, and the
 * regions before are kept. */
TEST(gzip_bomb_bounded)
{
	struct pbuf f = { 0 }, z = { 0 };
	struct jit_budget b;
	int ends[3], ns[3];

	fx_small_file(&f, ends, ns);
	pbuf_reserve(&f, f.len + (64u << 20));
	memset(f.data + f.len, 0, 64u << 20);
	f.len += 64u << 20;
	CHECK_EQ(gzip_mem(&f, &z), 0);
	CHECK(z.len < (1u << 20));
	memset(&got_a, 0, sizeof(got_a));
	b = (struct jit_budget){ .bytes = 1u << 20 };
	CHECK_EQ(mlpd_read_mem(z.data, z.len, "bomb", &b, collect, &got_a), 0);
	CHECK(b.cut);
	CHECK_EQ(b.bytes, 0);
	CHECK_EQ(got_a.n, 9);
	CHECK_EQ(write_file(tmp_path("bomb.mlpd"), z.data, z.len), 0);
	memset(&got_b, 0, sizeof(got_b));
	b = (struct jit_budget){ .bytes = 1u << 20 };
	CHECK_EQ(mlpd_read_file(tmp_path("bomb.mlpd"), &b, collect, &got_b), 0);
	CHECK(b.cut);
	CHECK(same(&got_a, &got_b));
	/* without a byte limit, a deadline already passed stops it too */
	b = (struct jit_budget){ .bytes = ~0ULL, .deadline_ns = 1 };
	memset(&got_b, 0, sizeof(got_b));
	mlpd_read_mem(z.data, z.len, "bomb", &b, collect, &got_b);
	CHECK(b.cut);
	pbuf_free(&f);
	pbuf_free(&z);
}

/* Bigger than the reader's staging buffer, with a buffer larger than it:
 * file reading (plain and gzip) must see what memory reading sees. */
TEST(large_file)
{
	struct pbuf f = {}, e = {}, z = {};
	char nm[48];
	int b, i, n = 0;

	fx_header(&f, 3, 17, 8, "linux");
	for (b = 0; b < 40; b++) {
		pbuf_reset(&e);
		for (i = 0; i < (b == 20 ? 12000 : 300); i++) {
			/* 64 bytes of alloc events between the JIT events */
			ev_head(&e, 0x10, 5); put_sleb(&e, 8); put_sleb(&e, 2); put_uleb(&e, 32); ev_bt(&e, 20);
			snprintf(nm, sizeof(nm), "Big:m%d (int,string)", n);
			ev_jit(&e, 1, 0x40 * ++n, 0x40, nm);
		}
		fx_buffer(&f, &e);
	}
	CHECK(f.len > (1u << 20));
	CHECK_EQ(read_mem(&f, &got_a), 0);
	CHECK_EQ(got_a.n, n);
	CHECK_EQ(gzip_mem(&f, &z), 0);
	CHECK_EQ(write_file(tmp_path("big.mlpd"), f.data, f.len), 0);
	CHECK_EQ(write_file(tmp_path("big.mlpd.gz"), z.data, z.len), 0);
	memset(&got_b, 0, sizeof(got_b));
	CHECK_EQ(mlpd_read_file(tmp_path("big.mlpd"), NULL, collect, &got_b), 0);
	CHECK_EQ(got_b.n, n);
	CHECK(same(&got_a, &got_b));
	memset(&got_b, 0, sizeof(got_b));
	CHECK_EQ(mlpd_read_file(tmp_path("big.mlpd.gz"), NULL, collect, &got_b), 0);
	CHECK(same(&got_a, &got_b));
	memset(&got_b, 0, sizeof(got_b));
	CHECK_EQ(read_mem(&z, &got_b), 0);
	CHECK(same(&got_a, &got_b));
	unlink(tmp_path("big.mlpd"));
	unlink(tmp_path("big.mlpd.gz"));
	pbuf_free(&f);
	pbuf_free(&e);
	pbuf_free(&z);
}

/* Every result of a cut file is a prefix of the whole file's result. */
static int is_prefix(const struct got *part, const struct got *whole)
{
	int i;

	if (part->n > whole->n)
		return 0;
	for (i = 0; i < part->n; i++)
		if (part->m[i].addr != whole->m[i].addr || part->m[i].size != whole->m[i].size ||
		    part->m[i].time != whole->m[i].time || strcmp(part->m[i].name, whole->m[i].name))
			return 0;
	return 1;
}

TEST(truncated_at_every_byte)
{
	struct pbuf f = {}, z = {};
	int ends[3], ns[3], bad = 0, bad_n = 0, bad_err = 0;
	size_t len, hdr;
	struct mlpd_header h;

	fx_small_file(&f, ends, ns);
	CHECK_EQ(mlpd_parse_header(f.data, f.len, &h), 0);
	hdr = h.size;
	CHECK_EQ(read_mem(&f, &got_a), 0);
	log_verbosity = -1;
	for (len = 0; len <= f.len; len++) {
		int err = mlpd_read_mem(f.data, len, "cut", NULL, collect,
					(memset(&got_b, 0, sizeof(got_b)), &got_b));
		int b, want = 0;

		if ((len < hdr) != (err < 0))
			bad_err++;
		for (b = 0; b < 3; b++)
			if ((int)len >= ends[b])
				want = ns[b];
		if (!is_prefix(&got_b, &got_a))
			bad++;
		if (got_b.n != want)	/* whole buffers only */
			bad_n++;
	}
	CHECK_EQ(bad_err, 0);
	CHECK_EQ(bad, 0);
	CHECK_EQ(bad_n, 0);

	/* and the gzip file cut anywhere */
	CHECK_EQ(gzip_mem(&f, &z), 0);
	bad = 0;
	for (len = 0; len <= z.len; len++) {
		memset(&got_b, 0, sizeof(got_b));
		mlpd_read_mem(z.data, len, "cutz", NULL, collect, &got_b);
		if (!is_prefix(&got_b, &got_a))
			bad++;
	}
	CHECK_EQ(bad, 0);
	memset(&got_b, 0, sizeof(got_b));
	CHECK_EQ(mlpd_read_mem(z.data, z.len, "z", NULL, collect, &got_b), 0);
	CHECK(same(&got_a, &got_b));
	log_verbosity = 0;
	pbuf_free(&f);
	pbuf_free(&z);
}

/* A damaged buffer costs that buffer (from the damage on), not the file. */
TEST(hostile_buffers)
{
	struct pbuf f = {}, e = {}, good = {};
	int i;

	ev_jit(&good, 1, 0x800, 8, "Good:g ()");

	/* huge buffer length, then a good buffer found again */
	fx_header(&f, 3, 17, 8, "linux");
	put_le(&f, 0x4D504C01, 4);
	put_le(&f, 0xffffffffu, 4);
	pbuf_put_zero(&f, 40);
	fx_buffer(&f, &good);
	messages = 0;
	CHECK_EQ(read_mem(&f, &got_a), 0);
	CHECK_EQ(got_a.n, 1);
	CHECK_EQ(messages, 1);

	/* length past the end while another buffer follows */
	pbuf_reset(&f);
	fx_header(&f, 3, 17, 8, "linux");
	put_le(&f, 0x4D504C01, 4);
	put_le(&f, 1u << 20, 4);
	pbuf_put_zero(&f, 40);
	fx_buffer(&f, &good);
	messages = 0;
	CHECK_EQ(read_mem(&f, &got_a), 0);
	CHECK_EQ(got_a.n, 1);
	CHECK_EQ(messages, 1);

	/* garbage between buffers */
	pbuf_reset(&f);
	fx_header(&f, 3, 17, 8, "linux");
	fx_buffer(&f, &good);
	pbuf_put(&f, "garbage!", 8);
	fx_buffer(&f, &good);
	messages = 0;
	CHECK_EQ(read_mem(&f, &got_a), 0);
	CHECK_EQ(got_a.n, 2);
	CHECK_EQ(messages, 1);

	/* bad events: each skips the rest of its buffer only */
	for (i = 0; i < 9; i++) {
		pbuf_reset(&e);
		ev_jit(&e, 1, 0x100, 8, "Before:b ()");
		switch (i) {
		case 0:		/* huge backtrace count */
			ev_head(&e, 0x84, 1); put_sleb(&e, 3); put_uleb(&e, 1ull << 62);
			break;
		case 1:		/* uleb128 of 11 bytes */
			ev_head(&e, 0x21, 1); pbuf_put(&e, "\xff\xff\xff\xff\xff\xff\xff\xff\xff\x81\x01", 11);
			break;
		case 2:		/* uleb128 overflowing 64 bits in its 10th byte */
			ev_head(&e, 0x21, 1); pbuf_put(&e, "\xff\xff\xff\xff\xff\xff\xff\xff\xff\x02", 10);
			break;
		case 3:		/* sleb128 overflowing */
			ev_head(&e, 0x43, 1); pbuf_put(&e, "\x80\x80\x80\x80\x80\x80\x80\x80\x80\x01", 10);
			break;
		case 4:		/* unknown event type */
			ev_head(&e, 0x0c, 1);
			break;
		case 5:		/* unknown GC exinfo */
			ev_head(&e, 0xf1, 1);
			break;
		case 6:		/* JIT name not terminated inside the buffer */
			ev_head(&e, 0x43, 1); put_sleb(&e, 0); put_sleb(&e, 0x900); put_uleb(&e, 8);
			pbuf_put(&e, "Cut:c", 5);
			break;
		case 7:		/* huge heap reference count */
			ev_head(&e, 0x26, 1); put_sleb(&e, 1); put_sleb(&e, 1); put_uleb(&e, 1); put_uleb(&e, ~0ull >> 1);
			break;
		case 8:		/* counters never ending */
			ev_head(&e, 0x47, 1); put_uleb(&e, 1); put_uleb(&e, 1); put_uleb(&e, 3);
			break;
		}
		if (i != 6 && i != 8)
			ev_jit(&e, 1, 0x200, 8, "After:a ()");
		pbuf_reset(&f);
		fx_header(&f, 3, 17, 8, "linux");
		fx_buffer(&f, &e);
		fx_buffer(&f, &good);
		messages = 0;
		CHECK_EQ(read_mem(&f, &got_a), 0);
		CHECK_EQ(got_a.n, 2);
		CHECK_STR(got_a.m[0].name, "Before:b ()");
		CHECK_STR(got_a.m[1].name, "Good:g ()");
		CHECK_EQ(messages, 1);
		if (got_a.n != 2 || messages != 1)
			fprintf(stderr, "  (hostile case %d)\n", i);
	}
	/* implausible code ranges skip the event, not the buffer */
	pbuf_reset(&e);
	ev_jit(&e, 1, -(__s64)PTR_BASE - 8, 0x100, "Wraps:w ()");
	ev_jit(&e, 1, 0x100, 1ull << 40, "Huge:h ()");
	ev_jit(&e, 1, 0x200, 8, "Fine:f ()");
	pbuf_reset(&f);
	fx_header(&f, 3, 17, 8, "linux");
	fx_buffer(&f, &e);
	messages = 0;
	CHECK_EQ(read_mem(&f, &got_a), 0);
	CHECK_EQ(got_a.n, 1);
	CHECK_STR(got_a.m[0].name, "Fine:f ()");
	CHECK_EQ(messages, 2);
	pbuf_free(&f);
	pbuf_free(&e);
	pbuf_free(&good);
}

TEST(bad_headers)
{
	struct pbuf f = {}, e = {};
	static const struct { int major, data; } unknown[] = {
		{ 3, 18 }, { 3, 12 }, { 4, 17 }, { 0, 17 }, { 3, 255 },
	};
	size_t i;

	ev_jit(&e, 1, 0x100, 8, "X:x ()");
	messages = 0;
	CHECK_EQ(mlpd_read_mem("", 0, "empty", NULL, collect, &got_a), -ENODATA);
	CHECK_EQ(mlpd_read_mem("\x01\x5a\x50", 3, "short", NULL, collect, &got_a), -ENODATA);
	CHECK_EQ(mlpd_read_mem("hello world, not mlpd", 21, "text", NULL, collect, &got_a), -EBADMSG);
	CHECK_EQ(mlpd_read_mem("\x1f\x8b\x08\x00\0\0\0\0\0\x03\xff\xff\xff", 13, "badgz",
			       NULL, collect, &got_a), -EBADMSG);
	CHECK_EQ(mlpd_read_mem("\x1f\x8b\x08\x00garbage", 11, "cutgz", NULL, collect, &got_a), -ENODATA);
	CHECK_EQ(messages, 5);
	for (i = 0; i < sizeof(unknown) / sizeof(unknown[0]); i++) {
		pbuf_reset(&f);
		fx_header(&f, unknown[i].major, unknown[i].data, 8, "linux");
		fx_buffer(&f, &e);
		CHECK_EQ(read_mem(&f, &got_a), -EPROTONOSUPPORT);
		CHECK_EQ(got_a.n, 0);
	}
	/* flags must be 0 */
	pbuf_reset(&f);
	fx_header(&f, 3, 17, 8, "linux");
	f.data[28] = 1;
	CHECK_EQ(read_mem(&f, &got_a), -EPROTONOSUPPORT);
	/* pointer size, header string length */
	pbuf_reset(&f);
	fx_header(&f, 3, 17, 16, "linux");
	CHECK_EQ(read_mem(&f, &got_a), -EBADMSG);
	pbuf_reset(&f);
	fx_header(&f, 3, 17, 8, "linux");
	f.data[38 + 3] = 0x7f;	/* args length */
	CHECK_EQ(read_mem(&f, &got_a), -EBADMSG);
	pbuf_free(&f);
	pbuf_free(&e);
}

TEST(file_errors)
{
	struct pbuf f = {}, e = {};
	char fifo[128];

	messages = 0;
	CHECK_EQ(mlpd_read_file(tmp_path("missing.mlpd"), NULL, collect, &got_a), -ENOENT);
	CHECK_EQ(mlpd_read_file(tmpdir, NULL, collect, &got_a), -EISDIR);
	snprintf(fifo, sizeof(fifo), "%s", tmp_path("fifo"));
	CHECK_EQ(mkfifo(fifo, 0600), 0);
	CHECK_EQ(mlpd_read_file(fifo, NULL, collect, &got_a), -EINVAL);	/* and no hang */
	unlink(fifo);
	CHECK_EQ(messages, 3);

	/* a file still being written: header and one and a half buffers */
	ev_jit(&e, 1, 0x100, 8, "Done:d ()");
	build(&f, 3, 17, &e);
	fx_buffer(&f, &e);
	CHECK_EQ(write_file(tmp_path("live.mlpd"), f.data, f.len - 3), 0);
	memset(&got_a, 0, sizeof(got_a));
	messages = 0;
	CHECK_EQ(mlpd_read_file(tmp_path("live.mlpd"), NULL, collect, &got_a), 0);
	CHECK_EQ(got_a.n, 1);
	CHECK_EQ(messages, 0);	/* an incomplete tail is not a warning */
	unlink(tmp_path("live.mlpd"));
	unlink(tmp_path("plain.gz"));
	unlink(tmp_path("packed.mlpd"));
	pbuf_free(&f);
	pbuf_free(&e);
}

/* ---- real files recorded from tests/workloads/cs/Hot.cs ---- */

static int corpus_path(const char *name, char *out, size_t size)
{
	char self[PATH_MAX];
	ssize_t n;
	char *slash;

	snprintf(out, size, "tests/fuzz/corpus/mlpd/%s", name);
	if (!access(out, R_OK))
		return 0;
	/* run from elsewhere: build/tests/test_mlpd -> ../../tests/... */
	n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	if (n <= 0)
		return -1;
	self[n] = '\0';
	slash = strrchr(self, '/');
	if (slash)
		*slash = '\0';
	snprintf(out, size, "%.3900s/../../tests/fuzz/corpus/mlpd/%.100s", self, name);
	return access(out, R_OK);
}

static const struct got *find_name(const struct got *g, const char *name, int *idx)
{
	int i;

	for (i = 0; i < g->n && i < MAXM; i++)
		if (!strcmp(g->m[i].name, name)) {
			*idx = i;
			return g;
		}
	return NULL;
}

TEST(recorded_hot)
{
	static const char *const hot[] = {
		"Hot:Alpha (int)", "Hot:Beta (int)", "Hot:Gamma (int)", "Hot:Main (string[])",
	};
	char path[PATH_MAX];
	size_t i;
	int idx = 0;

	if (corpus_path("hot-jit.mlpd.gz", path, sizeof(path))) {
		CHECK(!"tests/fuzz/corpus/mlpd/hot-jit.mlpd.gz not found");
		return;
	}
	memset(&got_a, 0, sizeof(got_a));
	messages = 0;
	CHECK_EQ(mlpd_read_file(path, NULL, collect, &got_a), 0);
	CHECK_EQ(messages, 0);
	CHECK(got_a.n > 300);
	CHECK(mlpd_pid != 0);
	for (i = 0; i < sizeof(hot) / sizeof(hot[0]); i++) {
		if (!find_name(&got_a, hot[i], &idx)) {
			fprintf(stderr, "  missing %s\n", hot[i]);
			CHECK(0);
			continue;
		}
		CHECK(got_a.m[idx].size > 16 && got_a.m[idx].size < 4096);
		CHECK(got_a.m[idx].time != 0);
	}
	for (i = 0; i < (size_t)got_a.n && i < MAXM; i++)
		CHECK(got_a.m[i].size > 0 && got_a.m[i].addr > 0);
}

/*
 * Record Hot.exe now and compare with mprof-report (the script does the
 * work; exit 2 means mono, mcs, mprof-report or the log profiler is
 * missing, which fails only under CI).
 */
TEST(live_mprof_report)
{
	char self[PATH_MAX], script[PATH_MAX + 64], cmd[3 * PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	int st, code;
	const char *ci = getenv("CI");

	/* the script runs this binary: never start it again from there */
	if (getenv("MLPD_COMPARE_RUNNING")) {
		printf("# skip live_mprof_report: already inside compare-mprof.sh\n");
		return;
	}
	CHECK(n > 0);
	if (n <= 0)
		return;
	self[n] = '\0';
	snprintf(script, sizeof(script), "tests/workloads/cs/compare-mprof.sh");
	if (access(script, R_OK)) {
		char *slash = strrchr(self, '/');

		snprintf(script, sizeof(script), "%.*s/../../tests/workloads/cs/compare-mprof.sh",
			 slash ? (int)(slash - self) : 0, self);
	}
	snprintf(cmd, sizeof(cmd), "bash '%s' '%s' >&2", script, self);
	st = system(cmd);
	code = WIFEXITED(st) ? WEXITSTATUS(st) : 128;
	if (code == 2 && !(ci && !strcmp(ci, "true"))) {
		printf("# skip live_mprof_report: mono toolchain or log profiler missing\n");
		return;
	}
	CHECK_EQ(code, 0);
}

/* ---- modes ---- */

static int print_region(void *ctx, const struct mlpd_method *m)
{
	if (ctx)
		printf("%llu ", (unsigned long long)m->time);
	printf("0x%llx %llu %s\n", (unsigned long long)m->code_addr,
	       (unsigned long long)m->code_size, m->name);
	return 0;
}

static int write_seeds(const char *dir)
{
	struct pbuf e = {}, f = {}, z = {};
	int ends[3], ns[3], err = 0;
	char p[PATH_MAX];

	snprintf(tmpdir, sizeof(tmpdir), "%.63s", dir);
	fx_all_kinds_v17(&e);
	build(&f, 3, 17, &e);
	err |= write_file(tmp_path("synthetic-all-kinds-v17.mlpd"), f.data, f.len);
	pbuf_free(&f);
	fx_small_file(&f, ends, ns);
	err |= write_file(tmp_path("synthetic-three-buffers.mlpd"), f.data, f.len);
	gzip_mem(&f, &z);
	snprintf(p, sizeof(p), "%s", tmp_path("synthetic-three-buffers.mlpd.gz"));
	err |= write_file(p, z.data, z.len);
	pbuf_free(&e);
	pbuf_free(&f);
	pbuf_free(&z);
	return err ? 1 : 0;
}

int main(int argc, char **argv)
{
	int ret;

	if (argc == 3 && !strcmp(argv[1], "--dump"))
		return mlpd_read_file(argv[2], NULL, print_region, NULL) ? 1 : 0;
	if (argc == 3 && !strcmp(argv[1], "--dump-times"))
		return mlpd_read_file(argv[2], NULL, print_region, argv) ? 1 : 0;
	if (argc == 2 && !strcmp(argv[1], "--now")) {
		struct timespec ts;

		clock_gettime(CLOCK_MONOTONIC, &ts);
		printf("%llu\n", (unsigned long long)ts.tv_sec * 1000000000ull + ts.tv_nsec);
		return 0;
	}
	if (argc == 3 && !strcmp(argv[1], "--write-seeds"))
		return write_seeds(argv[2]);

	if (argc != 1) {
		fprintf(stderr, "usage: %s [--dump FILE | --dump-times FILE | --now | --write-seeds DIR]\n",
			argv[0]);
		return 2;
	}
	log_before_print = count_message;
	snprintf(tmpdir, sizeof(tmpdir), "/tmp/test_mlpd.XXXXXX");
	if (!mkdtemp(tmpdir)) {
		perror("mkdtemp");
		return 1;
	}
	RUN(header);
	RUN(every_event_kind_v17);
	RUN(code_buffers);
	RUN(older_versions);
	RUN(version_gates);
	RUN(time_clock_and_pointer_size);
	RUN(callback_stops);
	RUN(gzip_and_plain_agree);
	RUN(truncated_at_every_byte);
	RUN(large_file);
	RUN(hostile_buffers);
	RUN(bad_headers);
	RUN(file_errors);
	RUN(gzip_bomb_bounded);
	RUN(recorded_hot);
	RUN(live_mprof_report);
	ret = HARNESS_DONE();
	for (const char *const *n = tmp_names; *n; n++)	/* left by a failed test */
		unlink(tmp_path(*n));
	rmdir(tmpdir);
	return ret;
}
