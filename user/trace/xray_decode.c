// SPDX-License-Identifier: GPL-2.0
/*
 * Pure decoding of trace blocks (the stream bpf/trace.bpf.c writes, see
 * include/precord/bpf_abi.h); xray_calls.c rebuilds calls from the
 * events.  Every length is checked against the bytes at hand before it is
 * read; a bad record stops its block with a message naming its offset.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <stdint.h>
#include <string.h>

#include "trace/xray.h"
#include "util/le.h"

static const char *md_name(unsigned int kind)
{
	static const char *const names[] = {
		"NewBuffer", "EndOfBuffer", "NewCPUId", "TSCWrap", "WallTimeMarker",
		"CustomEventMarker", "CallArgument", "BufferExtents",
		"TypedEventMarker", "Pid", "LoadBias",
	};

	return kind < sizeof(names) / sizeof(names[0]) ? names[kind] : "unknown";
}

struct decoder {
	const __u8 *p;
	size_t len;
	__u32 tid, pid;
	bool have_tid, have_pid, have_time;
	__u64 base;
	struct xray_event pend;		/* entry waiting for its arguments */
	bool pending;
	bool bias_pending;
	__u64 bias;
	__u8 slot;
	xray_event_fn fn;
	void *ctx;
	struct xray_error *err;
};

static int bad(struct decoder *d, size_t off, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static int bad(struct decoder *d, size_t off, const char *fmt, ...)
{
	va_list ap;

	if (d->err) {
		d->err->offset = off;
		va_start(ap, fmt);
		vsnprintf(d->err->msg, sizeof(d->err->msg), fmt, ap);
		va_end(ap);
	}
	return -EINVAL;
}

static int flush_pending(struct decoder *d)
{
	if (!d->pending)
		return 0;
	d->pending = false;
	return d->fn(d->ctx, &d->pend);
}

static int decode_md(struct decoder *d, size_t off)
{
	const __u8 *r = d->p + off;
	unsigned int kind = r[0] >> 1;

	if (kind == PREC_XRAY_MD_CALL_ARGUMENT) {
		if (!d->pending)
			return bad(d, off, "CallArgument not after an entry with arguments");
		if (d->pend.nr_args >= PREC_TRACE_MAX_ARGS)
			return bad(d, off, "more than %d CallArgument records",
				   PREC_TRACE_MAX_ARGS);
		d->pend.args[d->pend.nr_args++] = le64_load(r + 1);
		return 0;
	}
	if (d->bias_pending)
		return bad(d, off, "%s after LoadBias (an entry must follow it)",
			   md_name(kind));
	switch (kind) {
	case PREC_XRAY_MD_NEW_BUFFER:
		d->tid = le32_load(r + 1);
		d->have_tid = true;
		d->have_time = false;
		return 0;
	case PREC_XRAY_MD_PID:
	case PREC_XRAY_MD_WALLTIME:
		if (!d->have_tid || d->have_time)
			return bad(d, off, "%s outside a thread preamble", md_name(kind));
		if (kind == PREC_XRAY_MD_PID) {
			d->pid = le32_load(r + 1);
			d->have_pid = true;
		}
		return 0;
	case PREC_XRAY_MD_NEW_CPU_ID:
		if (!d->have_tid || !d->have_pid)
			return bad(d, off, "NewCPUId before NewBuffer and Pid");
		d->pend.cpu = le16_load(r + 1);
		d->base = le64_load(r + 3);
		d->have_time = true;
		return 0;
	case PREC_XRAY_MD_TSC_WRAP:
		if (!d->have_time)
			return bad(d, off, "TSCWrap before NewCPUId");
		d->base = le64_load(r + 1);
		return 0;
	case PREC_XRAY_MD_LOAD_BIAS:
		if (!d->have_time)
			return bad(d, off, "LoadBias before NewCPUId");
		d->bias = le64_load(r + 1);
		d->slot = r[9];
		d->bias_pending = true;
		return 0;
	case PREC_XRAY_MD_END_OF_BUFFER:
		return 1;
	default:
		if (kind <= PREC_XRAY_MD_LOAD_BIAS)
			return bad(d, off, "unexpected metadata record %s (kind %u) in a trace block",
				   md_name(kind), kind);
		return bad(d, off, "unknown metadata record kind %u", kind);
	}
}

static int decode_function(struct decoder *d, size_t off)
{
	const __u8 *r = d->p + off;
	__u32 w = le32_load(r);
	unsigned int action = (w >> 1) & 7;
	struct xray_event *ev = &d->pend;

	if (!d->have_time)
		return bad(d, off, "function record before NewCPUId");
	if (action > PREC_XRAY_ENTER_ARGS)
		return bad(d, off, "unknown function record action %u", action);
	if (d->bias_pending && action != PREC_XRAY_ENTER && action != PREC_XRAY_ENTER_ARGS)
		return bad(d, off, "exit record after LoadBias (an entry must follow it)");
	d->base += le32_load(r + 4);
	ev->time = d->base;
	ev->pid = d->pid;
	ev->tid = d->tid;
	ev->func_id = w >> 4;
	ev->action = action == PREC_XRAY_ENTER_ARGS ? PREC_XRAY_ENTER : action;
	ev->nr_args = 0;
	ev->has_bias = d->bias_pending;
	ev->bias = d->bias_pending ? d->bias : 0;
	ev->bias_slot = d->bias_pending ? d->slot : 0;
	ev->offset = (__u32)off;
	d->bias_pending = false;
	if (action == PREC_XRAY_ENTER_ARGS) {
		d->pending = true;
		return 0;
	}
	return d->fn(d->ctx, ev);
}

int xray_decode_block(const void *data, size_t len, __u32 cpu,
		      xray_event_fn fn, void *ctx, struct xray_error *err)
{
	struct decoder d = { .p = data, .len = len, .fn = fn, .ctx = ctx, .err = err };
	size_t off = 0;
	int ret = 0;

	d.pend.cpu = cpu;
	while (off < len) {
		bool md = d.p[off] & 1;
		size_t need = md ? XRAY_MD_SIZE : XRAY_FUNC_SIZE;

		if (len - off < need)
			return bad(&d, off, "truncated %s record: %zu of %zu bytes",
				   md ? "metadata" : "function", len - off, need);
		if (!md || d.p[off] >> 1 != PREC_XRAY_MD_CALL_ARGUMENT) {
			ret = flush_pending(&d);
			if (ret)
				return ret;
		}
		ret = md ? decode_md(&d, off) : decode_function(&d, off);
		if (ret < 0)
			return ret;
		if (ret > 0)		/* EndOfBuffer: the rest is unused space */
			break;
		off += need;
	}
	if (d.bias_pending)
		return bad(&d, off, "block ends after LoadBias");
	return flush_pending(&d);
}

int xray_parse_ring_block(const void *rec, size_t size, struct prec_trace_block *hdr,
			  const __u8 **data, struct xray_error *err)
{
	const size_t hsz = sizeof(struct prec_trace_block);
	struct prec_trace_block h;

	if (size < hsz) {
		if (err) {
			err->offset = 0;
			snprintf(err->msg, sizeof(err->msg),
				 "trace block record of %zu bytes (header is %zu)", size, hsz);
		}
		return -EINVAL;
	}
	memcpy(&h, rec, hsz);
	if (h.hdr.type != PREC_REC_TRACE_BLOCK || h.hdr.size < hsz || h.hdr.size > size ||
	    h.len > h.hdr.size - hsz || h.len > PREC_TRACE_BLOCK_DATA || h.len % 8) {
		if (err) {
			err->offset = 0;
			snprintf(err->msg, sizeof(err->msg),
				 "bad trace block header: type %u size %u len %u (record %zu bytes)",
				 h.hdr.type, h.hdr.size, h.len, size);
		}
		return -EINVAL;
	}
	*hdr = h;
	*data = (const __u8 *)rec + hsz;
	return 0;
}
