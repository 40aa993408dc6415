// SPDX-License-Identifier: GPL-2.0
/*
 * XRay FDR records: exact encodings (checked against bytes of a log that
 * the clang-14 XRay runtime wrote), encode/decode round trips for every
 * record kind, TSC wraps, CPU migration, the call rebuilder, and hostile
 * streams.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "trace/xray.h"
#include "trace/xray_calls.h"

#define MAX_EV 64

struct sink {
	struct xray_event ev[MAX_EV];
	int n;
	int stop_at;		/* return -ECANCELED at this event (if > 0) */
};

static int collect(void *ctx, const struct xray_event *ev)
{
	struct sink *s = ctx;

	if (s->stop_at && s->n + 1 == s->stop_at)
		return -ECANCELED;
	if (s->n < MAX_EV)
		s->ev[s->n++] = *ev;
	return 0;
}

static int decode(struct pbuf *b, struct sink *s, struct xray_error *err)
{
	memset(s->ev, 0, sizeof(s->ev));
	s->n = 0;
	return xray_decode_block(b->data, b->len, 0, collect, s, err);
}

static void preamble(struct pbuf *b, __u32 tid, __u32 pid, __u16 cpu, __u64 time)
{
	xray_put_new_buffer(b, tid);
	if (pid)
		xray_put_pid(b, pid);
	xray_put_new_cpu(b, cpu, time);
}

TEST(function_record_bytes)
{
	/* From a real log: enter #4 +0, enter #2 +1008, exit #1 +96. */
	static const __u8 want[] = {
		0x40, 0, 0, 0, 0, 0, 0, 0,
		0x20, 0, 0, 0, 0xf0, 0x03, 0, 0,
		0x12, 0, 0, 0, 0x60, 0, 0, 0,
		0x26, 0, 0, 0, 1, 0, 0, 0,		/* entry-args #2 +1 */
		0xf4, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,	/* tail-exit max id */
	};
	struct pbuf b = { 0 };

	CHECK_EQ(xray_put_function(&b, PREC_XRAY_ENTER, 4, 0), 0);
	CHECK_EQ(xray_put_function(&b, PREC_XRAY_ENTER, 2, 1008), 0);
	CHECK_EQ(xray_put_function(&b, PREC_XRAY_EXIT, 1, 96), 0);
	CHECK_EQ(xray_put_function(&b, PREC_XRAY_ENTER_ARGS, 2, 1), 0);
	CHECK_EQ(xray_put_function(&b, PREC_XRAY_TAIL_EXIT, XRAY_MAX_FUNC_ID, 0xffffffff), 0);
	CHECK_EQ(b.len, sizeof(want));
	CHECK(!memcmp(b.data, want, sizeof(want)));
	CHECK_EQ(xray_put_function(&b, 4, 1, 0), -EINVAL);
	CHECK_EQ(xray_put_function(&b, PREC_XRAY_ENTER, XRAY_MAX_FUNC_ID + 1, 0), -EINVAL);
	CHECK_EQ(b.len, sizeof(want));
	pbuf_free(&b);
}

TEST(metadata_record_bytes)
{
	/* BufferExtents 128, NewBuffer 4791, Walltime 308.543039, Pid 4790,
	 * NewCPUId 0 @ 0x18ea363eac10c75a: as the clang-14 runtime wrote them. */
	static const __u8 want[] = {
		0x0f, 0x80, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
		0x01, 0xb7, 0x12, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
		0x09, 0x34, 0x01, 0, 0, 0, 0, 0, 0, 0x3f, 0x49, 0x08, 0, 0, 0, 0,
		0x13, 0xb6, 0x12, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
		0x05, 0, 0, 0x5a, 0xc7, 0x10, 0xac, 0x3e, 0x36, 0xea, 0x18, 0, 0, 0, 0, 0,
	};	/* (the runtime left a stray 0x08 in NewCPUId's reserved byte 11) */
	static const __u8 hdr[] = {
		5, 0, 1, 0, 3, 0, 0, 0, 0x00, 0xca, 0x9a, 0x3b, 0, 0, 0, 0,
		0, 0, 0x10, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
	};
	struct pbuf b = { 0 };

	xray_put_buffer_extents(&b, 128);
	xray_put_new_buffer(&b, 4791);
	xray_put_walltime(&b, 308, 543039);
	xray_put_pid(&b, 4790);
	CHECK_EQ(xray_put_new_cpu(&b, 0, 0x18ea363eac10c75aULL), 0);
	CHECK_EQ(b.len, sizeof(want));
	CHECK(!memcmp(b.data, want, sizeof(want)));
	pbuf_reset(&b);
	CHECK_EQ(xray_put_file_header(&b, 5, 1000000000, 1048576), 0);
	CHECK_EQ(b.len, XRAY_FILE_HEADER_SIZE);
	CHECK(!memcmp(b.data, hdr, sizeof(hdr)));
	pbuf_reset(&b);
	xray_put_tsc_wrap(&b, 0x1122334455667788ULL);
	xray_put_call_arg(&b, 0x8877665544332211ULL);
	xray_put_end_of_buffer(&b);
	xray_put_load_bias(&b, 0x5555aaaa0000ULL, 7);
	CHECK_EQ(b.len, 64);
	CHECK_EQ(b.data[0], 0x07);
	CHECK_EQ(b.data[1], 0x88);
	CHECK_EQ(b.data[8], 0x11);
	CHECK_EQ(b.data[16], 0x0d);
	CHECK_EQ(b.data[17], 0x11);
	CHECK_EQ(b.data[24], 0x88);
	CHECK_EQ(b.data[32], 0x03);
	CHECK_EQ(b.data[48], 21);
	CHECK_EQ(b.data[57], 7);
	CHECK_EQ(xray_put_md(&b, 128, NULL, 0), -EINVAL);
	CHECK_EQ(xray_put_md(&b, 1, want, 16), -EINVAL);
	pbuf_reset(&b);
	CHECK_EQ(xray_put_custom_event(&b, -3, "abc", 3), 0);
	CHECK_EQ(b.len, 19);
	CHECK_EQ(b.data[0], 0x0b);
	CHECK_EQ(b.data[1], 3);
	CHECK_EQ(b.data[5], 0xfd);
	CHECK_EQ(b.data[8], 0xff);
	CHECK(!memcmp(b.data + 16, "abc", 3));
	CHECK_EQ(xray_put_custom_event(&b, 0, "x", 0), -EINVAL);
	pbuf_free(&b);
}

TEST(round_trip_every_kind)
{
	struct pbuf b = { 0 };
	struct xray_error err;
	struct sink s = { 0 };
	__u64 t0 = 1000000000000ULL;

	xray_put_new_buffer(&b, 101);
	xray_put_walltime(&b, 5, 6);		/* ignored, must not break things */
	xray_put_pid(&b, 100);
	xray_put_new_cpu(&b, 1, t0);
	xray_put_load_bias(&b, 0x555500000000ULL, 3);
	xray_put_function(&b, PREC_XRAY_ENTER, 7, 0);
	xray_put_function(&b, PREC_XRAY_ENTER_ARGS, 8, 10);
	xray_put_call_arg(&b, 11);
	xray_put_call_arg(&b, (__u64)-2);
	xray_put_function(&b, PREC_XRAY_EXIT, 8, 20);
	xray_put_tsc_wrap(&b, t0 + 5000000000ULL);
	xray_put_function(&b, PREC_XRAY_TAIL_EXIT, 7, 1);
	/* another thread of the same process: no Pid record */
	preamble(&b, 102, 0, 1, t0 + 6000000000ULL);
	xray_put_function(&b, PREC_XRAY_EXIT, 9, 3);
	/* a thread of another process */
	preamble(&b, 201, 200, 1, t0 + 7000000000ULL);
	xray_put_function(&b, PREC_XRAY_ENTER_ARGS, 1, 0);
	xray_put_end_of_buffer(&b);
	xray_put_function(&b, PREC_XRAY_ENTER, 1, 0);	/* after EOB: ignored */
	CHECK_EQ(b.err, 0);
	CHECK_EQ(decode(&b, &s, &err), 0);
	CHECK_EQ(s.n, 6);
	CHECK_EQ(s.ev[0].time, t0);
	CHECK_EQ(s.ev[0].tid, 101);
	CHECK_EQ(s.ev[0].pid, 100);
	CHECK_EQ(s.ev[0].cpu, 1);
	CHECK_EQ(s.ev[0].func_id, 7);
	CHECK_EQ(s.ev[0].action, PREC_XRAY_ENTER);
	CHECK_EQ(s.ev[0].has_bias, 1);
	CHECK_EQ(s.ev[0].bias, 0x555500000000ULL);
	CHECK_EQ(s.ev[0].bias_slot, 3);
	CHECK_EQ(s.ev[0].offset, 80);
	CHECK_EQ(s.ev[1].offset, 88);
	CHECK_EQ(s.ev[1].time, t0 + 10);
	CHECK_EQ(s.ev[1].action, PREC_XRAY_ENTER);
	CHECK_EQ(s.ev[1].has_bias, 0);
	CHECK_EQ(s.ev[1].nr_args, 2);
	CHECK_EQ(s.ev[1].args[0], 11);
	CHECK_EQ(s.ev[1].args[1], (__u64)-2);
	CHECK_EQ(s.ev[2].time, t0 + 30);
	CHECK_EQ(s.ev[2].action, PREC_XRAY_EXIT);
	CHECK_EQ(s.ev[3].time, t0 + 5000000001ULL);
	CHECK_EQ(s.ev[3].action, PREC_XRAY_TAIL_EXIT);
	CHECK_EQ(s.ev[4].tid, 102);
	CHECK_EQ(s.ev[4].pid, 100);
	CHECK_EQ(s.ev[4].time, t0 + 6000000003ULL);
	CHECK_EQ(s.ev[5].tid, 201);
	CHECK_EQ(s.ev[5].pid, 200);
	CHECK_EQ(s.ev[5].nr_args, 0);
	/* a callback error stops decoding and is returned */
	s.stop_at = 3;
	CHECK_EQ(decode(&b, &s, &err), -ECANCELED);
	CHECK_EQ(s.n, 2);
	pbuf_free(&b);
}

TEST(encoder_tsc_wrap_and_cpu)
{
	struct pbuf b = { 0 };
	struct xray_enc e;
	struct xray_error err;
	struct sink s = { 0 };
	const __u64 t0 = 42, big = (1ULL << 32) + 5;

	xray_put_new_buffer(&b, 9);
	xray_put_pid(&b, 9);
	xray_enc_begin(&e);
	CHECK_EQ(xray_enc_function(&e, &b, PREC_XRAY_ENTER, 1, 0, t0), 0);
	CHECK_EQ(b.len, 32 + 16 + 8);		/* NewCPUId first */
	xray_enc_function(&e, &b, PREC_XRAY_ENTER, 2, 0, t0 + 0xffffffffULL);
	CHECK_EQ(b.len, 64);			/* fits 32 bits: no wrap */
	xray_enc_function(&e, &b, PREC_XRAY_EXIT, 2, 0, t0 + 0xffffffffULL + big);
	CHECK_EQ(b.len, 64 + 16 + 8);		/* TSCWrap */
	xray_enc_function(&e, &b, PREC_XRAY_EXIT, 1, 1, t0 + 0xffffffffULL + big + 7);
	CHECK_EQ(b.len, 88 + 16 + 8);		/* NewCPUId: migrated */
	xray_enc_function(&e, &b, PREC_XRAY_ENTER, 3, 1, 3);
	CHECK_EQ(b.len, 112 + 16 + 8);		/* going back in time: TSCWrap */
	CHECK_EQ(decode(&b, &s, &err), 0);
	CHECK_EQ(s.n, 5);
	CHECK_EQ(s.ev[0].time, t0);
	CHECK_EQ(s.ev[1].time, t0 + 0xffffffffULL);
	CHECK_EQ(s.ev[2].time, t0 + 0xffffffffULL + big);
	CHECK_EQ(s.ev[3].time, t0 + 0xffffffffULL + big + 7);
	CHECK_EQ(s.ev[3].cpu, 1);
	CHECK_EQ(s.ev[2].cpu, 0);
	CHECK_EQ(s.ev[4].time, 3);
	pbuf_free(&b);
}

/* ---- hostile streams ---- */

static int expect_bad(struct pbuf *b, size_t off, const char *what)
{
	struct xray_error err = { 0 };
	struct sink s = { 0 };
	int ret = decode(b, &s, &err);

	CHECK_EQ(ret, -EINVAL);
	CHECK_EQ(err.offset, off);
	CHECK(strstr(err.msg, what) != NULL);
	if (!strstr(err.msg, what))
		fprintf(stderr, "  message: %s\n", err.msg);
	return s.n;
}

TEST(hostile_streams)
{
	struct pbuf b = { 0 };

	/* function record before any NewCPUId */
	xray_put_function(&b, PREC_XRAY_ENTER, 1, 0);
	expect_bad(&b, 0, "before NewCPUId");
	/* NewCPUId without Pid in the block's first thread */
	pbuf_reset(&b);
	xray_put_new_buffer(&b, 1);
	xray_put_new_cpu(&b, 0, 5);
	expect_bad(&b, 16, "NewCPUId before");
	/* unknown metadata kind, after one good event */
	pbuf_reset(&b);
	preamble(&b, 1, 1, 0, 5);
	xray_put_function(&b, PREC_XRAY_ENTER, 1, 0);
	xray_put_md(&b, 11, NULL, 0);
	CHECK_EQ(expect_bad(&b, 56, "unknown metadata record kind 11"), 1);
	/* XRay kinds that have no place in a trace block */
	b.data[56] = PREC_XRAY_MD_BUFFER_EXTENTS << 1 | 1;
	expect_bad(&b, 56, "BufferExtents");
	b.data[56] = PREC_XRAY_MD_CUSTOM_EVENT << 1 | 1;
	expect_bad(&b, 56, "CustomEventMarker");
	b.data[56] = 127 << 1 | 1;
	expect_bad(&b, 56, "kind 127");
	/* unknown function action */
	b.data[56] = 4 << 1;
	expect_bad(&b, 56, "action 4");
	/* CallArgument without an entry-with-args; seven arguments */
	pbuf_reset(&b);
	preamble(&b, 1, 1, 0, 5);
	xray_put_function(&b, PREC_XRAY_ENTER, 1, 0);
	xray_put_call_arg(&b, 1);
	expect_bad(&b, 56, "CallArgument not after");
	pbuf_reset(&b);
	preamble(&b, 1, 1, 0, 5);
	xray_put_function(&b, PREC_XRAY_ENTER_ARGS, 1, 0);
	for (int i = 0; i < 7; i++)
		xray_put_call_arg(&b, i);
	expect_bad(&b, 56 + 6 * 16, "more than 6");
	/* LoadBias followed by an exit, or by nothing */
	pbuf_reset(&b);
	preamble(&b, 1, 1, 0, 5);
	xray_put_load_bias(&b, 4096, 0);
	xray_put_function(&b, PREC_XRAY_EXIT, 1, 0);
	expect_bad(&b, 64, "exit record after LoadBias");
	b.len = 64;
	expect_bad(&b, 64, "block ends after LoadBias");
	xray_put_pid(&b, 3);
	expect_bad(&b, 64, "Pid after LoadBias");
	/* Pid in the body; TSCWrap before NewCPUId */
	pbuf_reset(&b);
	preamble(&b, 1, 1, 0, 5);
	xray_put_pid(&b, 3);
	expect_bad(&b, 48, "outside a thread preamble");
	pbuf_reset(&b);
	xray_put_new_buffer(&b, 1);
	xray_put_tsc_wrap(&b, 3);
	expect_bad(&b, 16, "TSCWrap before");
	pbuf_free(&b);
}

TEST(truncated_streams)
{
	struct pbuf b = { 0 };
	struct xray_error err;
	struct sink s = { 0 };
	size_t full, n;

	preamble(&b, 1, 1, 0, 5);
	xray_put_function(&b, PREC_XRAY_ENTER_ARGS, 1, 0);
	xray_put_call_arg(&b, 1);
	xray_put_function(&b, PREC_XRAY_EXIT, 1, 9);
	full = b.len;
	/* every prefix either decodes or is rejected, never read past */
	for (n = 0; n <= full; n++) {
		__u8 *copy = malloc(n ? n : 1);
		int ret;

		memcpy(copy, b.data, n);
		s.n = 0;
		ret = xray_decode_block(copy, n, 0, collect, &s, &err);
		if (n % 8 || n == 8 || n == 24 || n == 40 || n == 64) {
			CHECK_EQ(ret, -EINVAL);
		} else {
			CHECK_EQ(ret, 0);
		}
		free(copy);
	}
	/* half a function record at the end */
	b.len = full - 4;
	expect_bad(&b, full - 8, "truncated function record: 4 of 8");
	b.len = 64;
	expect_bad(&b, 56, "truncated metadata record: 8 of 16");
	pbuf_free(&b);
}

TEST(ring_block_header)
{
	__u64 words[8] = { 0 };
	struct prec_trace_block *blk = (void *)words, h;
	struct xray_error err;
	const __u8 *data;

	blk->hdr.type = PREC_REC_TRACE_BLOCK;
	blk->hdr.size = sizeof(*blk) + 16;
	blk->cpu = 1;
	blk->len = 16;
	blk->seq = 9;
	CHECK_EQ(xray_parse_ring_block(words, sizeof(*blk) + 16, &h, &data, &err), 0);
	CHECK_EQ(h.seq, 9);
	CHECK_EQ(h.len, 16);
	CHECK(data == (const __u8 *)words + sizeof(*blk));
	/* record shorter than its header / than hdr.size; len past the end;
	 * len not a multiple of 8; wrong type */
	CHECK_EQ(xray_parse_ring_block(words, 8, &h, &data, &err), -EINVAL);
	CHECK_EQ(xray_parse_ring_block(words, sizeof(*blk) + 8, &h, &data, &err), -EINVAL);
	blk->len = 24;
	CHECK_EQ(xray_parse_ring_block(words, sizeof(words), &h, &data, &err), -EINVAL);
	blk->len = 12;
	CHECK_EQ(xray_parse_ring_block(words, sizeof(words), &h, &data, &err), -EINVAL);
	blk->len = 16;
	blk->hdr.size = 3;
	CHECK_EQ(xray_parse_ring_block(words, sizeof(words), &h, &data, &err), -EINVAL);
	blk->hdr.size = sizeof(*blk) + 16;
	blk->hdr.type = PREC_REC_SAMPLE;
	CHECK_EQ(xray_parse_ring_block(words, sizeof(words), &h, &data, &err), -EINVAL);
	CHECK(strstr(err.msg, "bad trace block header") != NULL);
	blk->hdr.type = PREC_REC_TRACE_BLOCK;
	blk->len = 0xfffffff8;
	blk->hdr.size = 0xffffffff;
	CHECK_EQ(xray_parse_ring_block(words, sizeof(words), &h, &data, &err), -EINVAL);
}

/* ---- call rebuilder ---- */

struct call_log {
	char buf[1024];
	size_t len;
	__u64 durations[32];
	int nd;
	struct xray_calls *c;
};

static int log_call(void *ctx, const struct xray_call *c)
{
	struct call_log *l = ctx;
	static const char k[] = "ERO U";
	int n;

	if (l->len + 32 < sizeof(l->buf)) {
		n = snprintf(l->buf + l->len, sizeof(l->buf) - l->len, "%c%u.%u@%u ",
			     c->kind == XRAY_CALL_UNWOUND ? 'U' : k[c->kind], c->ev->tid,
			     c->kind == XRAY_CALL_UNWOUND ? c->entry->func_id : c->ev->func_id,
			     c->depth);
		l->len += (size_t)n;
	}
	if (c->kind == XRAY_CALL_ENTRY)
		xray_calls__set_ip(l->c, 0x1000 + c->ev->func_id);
	if (c->kind == XRAY_CALL_RETURN && l->nd < 32) {
		l->durations[l->nd++] = c->duration;
		CHECK_EQ(c->entry->ip, 0x1000 + c->ev->func_id);
	}
	return 0;
}

static struct xray_event ev(__u32 tid, __u32 fid, int action, __u64 time, __u32 cpu)
{
	struct xray_event e = { .time = time, .pid = 1, .tid = tid, .cpu = cpu,
				.func_id = fid, .action = (__u8)action };
	return e;
}

TEST(calls_recursion_orphans_unwinding)
{
	struct call_log l = { .len = 0 };
	struct xray_calls *c = xray_calls__new();
	struct xray_event e[] = {
		ev(5, 1, PREC_XRAY_EXIT, 5, 0),		/* began before tracing */
		ev(5, 2, PREC_XRAY_ENTER, 10, 0),
		ev(5, 2, PREC_XRAY_ENTER, 20, 0),	/* recursion */
		ev(5, 2, PREC_XRAY_EXIT, 25, 0),
		ev(5, 3, PREC_XRAY_ENTER, 30, 0),	/* its exit was lost */
		ev(5, 2, PREC_XRAY_EXIT, 40, 0),
		ev(5, 4, PREC_XRAY_ENTER, 50, 0),	/* still running at the end */
	};
	size_t i;

	CHECK(c != NULL);
	l.c = c;
	for (i = 0; i < sizeof(e) / sizeof(e[0]); i++)
		CHECK_EQ(xray_calls__push(c, &e[i]), 0);
	CHECK_EQ(xray_calls__drain(c, ~0ULL, log_call, &l), 0);
	CHECK_STR(l.buf, "O5.1@0 E5.2@0 E5.2@1 R5.2@1 E5.3@1 U5.3@1 R5.2@0 E5.4@0 ");
	CHECK_EQ(l.nd, 2);
	CHECK_EQ(l.durations[0], 5);
	CHECK_EQ(l.durations[1], 30);
	CHECK_EQ(xray_calls__open_frames(c), 1);
	CHECK_EQ(xray_calls__stats(c)->orphans, 1);
	CHECK_EQ(xray_calls__stats(c)->unwound, 1);
	CHECK_EQ(xray_calls__stats(c)->entries, 4);
	CHECK_EQ(xray_calls__stats(c)->returns, 2);
	xray_calls__free(c);
}

/* A thread migrates from CPU 0 to CPU 1 and back; the blocks arrive in
 * the wrong order, and the watermark holds back what may still come. */
TEST(calls_cpu_migration)
{
	struct call_log l = { .len = 0 };
	struct xray_calls *c = xray_calls__new();
	struct pbuf b0 = { 0 }, b1 = { 0 };
	struct xray_enc e0, e1;
	struct sink s = { 0 };
	struct xray_error err;
	int i;

	l.c = c;
	/* CPU 0: outer enters at 100, inner enters at 110; then CPU 1:
	 * inner exits at 200, outer exits at 300; tid 8 meanwhile on CPU 0. */
	preamble(&b0, 7, 7, 0, 100);
	xray_enc_begin(&e0);
	e0.started = true;
	e0.last = 100;
	xray_enc_function(&e0, &b0, PREC_XRAY_ENTER, 1, 0, 100);
	xray_enc_function(&e0, &b0, PREC_XRAY_ENTER, 2, 0, 110);
	preamble(&b0, 8, 0, 0, 150);
	xray_put_function(&b0, PREC_XRAY_ENTER, 2, 0);
	xray_put_function(&b0, PREC_XRAY_EXIT, 2, 1);
	preamble(&b1, 7, 7, 1, 200);
	xray_enc_begin(&e1);
	e1.started = true;
	e1.cpu = 1;
	e1.last = 200;
	xray_enc_function(&e1, &b1, PREC_XRAY_EXIT, 2, 1, 200);
	xray_enc_function(&e1, &b1, PREC_XRAY_EXIT, 1, 1, 300);
	/* block of CPU 1 first */
	CHECK_EQ(decode(&b1, &s, &err), 0);
	for (i = 0; i < s.n; i++)
		xray_calls__push(c, &s.ev[i]);
	/* nothing before 150 is known to be complete yet: hold back */
	CHECK_EQ(xray_calls__drain(c, 149, log_call, &l), 0);
	CHECK_EQ(l.len, 0);
	CHECK_EQ(decode(&b0, &s, &err), 0);
	CHECK_EQ(s.n, 4);
	for (i = 0; i < s.n; i++)
		xray_calls__push(c, &s.ev[i]);
	CHECK_EQ(xray_calls__drain(c, 250, log_call, &l), 0);
	/* both threads, merged in time order */
	CHECK(strcmp(l.buf, "E7.1@0 E7.2@1 E8.2@0 R8.2@0 R7.2@1 ") == 0);
	CHECK_EQ(xray_calls__open_frames(c), 1);
	CHECK_EQ(xray_calls__drain(c, ~0ULL, log_call, &l), 0);
	CHECK(strstr(l.buf, "R7.1@0 ") != NULL);
	CHECK_EQ(xray_calls__stats(c)->orphans, 0);
	CHECK_EQ(xray_calls__stats(c)->late, 0);
	CHECK_EQ(l.nd, 3);
	CHECK_EQ(l.durations[0] + l.durations[1] + l.durations[2], 90 + 1 + 200);
	/* an event older than what was processed counts as late */
	{
		struct xray_event x = ev(7, 9, PREC_XRAY_EXIT, 50, 0);

		xray_calls__push(c, &x);
		xray_calls__drain(c, ~0ULL, log_call, &l);
		CHECK_EQ(xray_calls__stats(c)->late, 1);
		CHECK_EQ(xray_calls__stats(c)->orphans, 1);
	}
	xray_calls__free(c);
	pbuf_free(&b0);
	pbuf_free(&b1);
}

struct order_check {
	__u64 last;
	int bad;
};

static int check_order(void *ctx, const struct xray_call *c)
{
	struct order_check *o = ctx;

	if (c->ev->time < o->last)
		o->bad++;
	o->last = c->ev->time;
	return 0;
}

TEST(calls_many_threads)
{
	struct xray_calls *c = xray_calls__new();
	__u32 t;

	for (t = 1; t <= 1000; t++) {
		struct xray_event a = ev(t, 1, PREC_XRAY_ENTER, t, 0);
		struct xray_event b = ev(t, 1, PREC_XRAY_EXIT, t + 10, 0);

		CHECK_EQ(xray_calls__push(c, &b), 0);	/* out of order */
		CHECK_EQ(xray_calls__push(c, &a), 0);
	}
	{
		struct order_check o = { 0, 0 };

		/* delivered in time order across the threads */
		CHECK_EQ(xray_calls__drain(c, ~0ULL, check_order, &o), 0);
		CHECK_EQ(o.bad, 0);
	}
	CHECK_EQ(xray_calls__stats(c)->returns, 1000);
	CHECK_EQ(xray_calls__stats(c)->orphans, 0);
	CHECK_EQ(xray_calls__open_frames(c), 0);
	xray_calls__free(c);
	xray_calls__free(NULL);
}

/* Arguments and load biases survive queueing: across partial drains, an
 * out-of-order (sorted) queue, and the reclaiming of drained extras. */
struct arg_check {
	__u64 next;		/* entries seen */
	int bad;
};

static int check_args(void *ctx, const struct xray_call *c)
{
	struct arg_check *a = ctx;
	const struct xray_event *e = c->ev;

	if (c->kind != XRAY_CALL_ENTRY)
		return 0;
	/* entry k (time 10k) has k % 3 arguments k, k+1, ... and bias k << 12
	 * when k % 5 == 0 */
	if (e->time != 10 * a->next || e->nr_args != a->next % 3 ||
	    e->has_bias != (a->next % 5 == 0) || e->bias != (e->has_bias ? a->next << 12 : 0))
		a->bad++;
	for (unsigned int i = 0; i < e->nr_args; i++)
		if (e->args[i] != a->next + i)
			a->bad++;
	a->next++;
	return 0;
}

TEST(calls_keep_args_and_bias)
{
	struct xray_calls *c = xray_calls__new();
	struct arg_check a = { 0, 0 };
	__u64 k, pushed = 0;

	for (int round = 0; round < 20; round++) {
		/* 100 entries per round, pushed in pairs swapped (unsorted) */
		for (k = pushed; k < pushed + 100; k += 2) {
			for (int j = 1; j >= 0; j--) {
				__u64 n = k + (__u64)j;
				struct xray_event e = ev(3, 1, PREC_XRAY_ENTER, 10 * n, 0);

				e.nr_args = (__u8)(n % 3);
				for (unsigned int i = 0; i < e.nr_args; i++)
					e.args[i] = n + i;
				e.has_bias = n % 5 == 0;
				e.bias = e.has_bias ? n << 12 : 0;
				CHECK_EQ(xray_calls__push(c, &e), 0);
			}
		}
		pushed += 100;
		/* drain all but the last 30 */
		CHECK_EQ(xray_calls__drain(c, 10 * (pushed - 30) - 1, check_args, &a), 0);
		CHECK_EQ(a.next, pushed - 30);
	}
	CHECK_EQ(xray_calls__drain(c, ~0ULL, check_args, &a), 0);
	CHECK_EQ(a.next, pushed);
	CHECK_EQ(a.bad, 0);
	xray_calls__free(c);
}

/* A thread whose queue holds only events after upto gives nothing, also
 * after part of its queue was drained before. */
struct upto_check {
	__u64 upto;
	int n, bad;
};

static int check_upto(void *ctx, const struct xray_call *c)
{
	struct upto_check *u = ctx;

	u->n++;
	if (c->ev->time > u->upto)
		u->bad++;
	return 0;
}

TEST(calls_drain_stops_at_upto)
{
	struct xray_calls *c = xray_calls__new();
	struct upto_check u = { 15, 0, 0 };
	struct xray_event a1 = ev(1, 1, PREC_XRAY_ENTER, 10, 0);
	struct xray_event a2 = ev(1, 1, PREC_XRAY_EXIT, 20, 0);
	struct xray_event b1 = ev(2, 1, PREC_XRAY_ENTER, 12, 0);
	struct xray_event b2 = ev(2, 1, PREC_XRAY_EXIT, 14, 0);
	struct xray_event b3 = ev(2, 1, PREC_XRAY_ENTER, 30, 0);

	CHECK_EQ(xray_calls__push(c, &a1), 0);
	CHECK_EQ(xray_calls__push(c, &a2), 0);
	CHECK_EQ(xray_calls__drain(c, 15, check_upto, &u), 0);
	CHECK_EQ(u.n, 1);		/* a1 */
	CHECK_EQ(xray_calls__push(c, &b1), 0);
	CHECK_EQ(xray_calls__push(c, &b2), 0);
	CHECK_EQ(xray_calls__push(c, &b3), 0);
	CHECK_EQ(xray_calls__drain(c, 15, check_upto, &u), 0);
	CHECK_EQ(u.n, 3);		/* + b1, b2; a2 and b3 wait */
	CHECK_EQ(u.bad, 0);
	u.upto = ~0ULL;
	CHECK_EQ(xray_calls__drain(c, ~0ULL, check_upto, &u), 0);
	CHECK_EQ(u.n, 5);
	CHECK_EQ(xray_calls__stats(c)->returns, 2);
	xray_calls__free(c);
}

int main(void)
{
	RUN(function_record_bytes);
	RUN(metadata_record_bytes);
	RUN(round_trip_every_kind);
	RUN(encoder_tsc_wrap_and_cpu);
	RUN(hostile_streams);
	RUN(truncated_streams);
	RUN(ring_block_header);
	RUN(calls_recursion_orphans_unwinding);
	RUN(calls_cpu_migration);
	RUN(calls_many_threads);
	RUN(calls_keep_args_and_bias);
	RUN(calls_drain_stops_at_upto);
	return HARNESS_DONE();
}
