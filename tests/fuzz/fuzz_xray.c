// SPDX-License-Identifier: GPL-2.0
/*
 * Fuzz the trace block decoder, the call rebuilder and the --xray-out
 * encoder.  The input is a PREC_REC_TRACE_BLOCK ring record; its bytes
 * are also decoded as bare block data (so mutations reach the decoder
 * even when they break the header).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "trace/xray.h"
#include "trace/xray_calls.h"
#include "trace/xray_file.h"

struct ctx {
	struct xray_calls *calls;
	struct xray_file *xf;
};

static int on_event(void *p, const struct xray_event *ev)
{
	struct ctx *c = p;

	return xray_calls__push(c->calls, ev);
}

static int on_call(void *p, const struct xray_call *call)
{
	struct ctx *c = p;

	if (call->kind == XRAY_CALL_ENTRY)
		xray_calls__set_ip(c->calls, call->ev->func_id);
	return xray_file__add(c->xf, call);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct ctx c = { .calls = xray_calls__new(), .xf = xray_file__new() };
	struct prec_trace_block hdr;
	struct xray_error err;
	struct pbuf out = { 0 };
	const uint8_t *p;
	uint8_t *copy;

	if (!c.calls || !c.xf)
		goto out;
	/* exact-size heap copy: ASan sees any read past the end */
	copy = malloc(size ? size : 1);
	if (!copy)
		goto out;
	memcpy(copy, data, size);
	if (!xray_parse_ring_block(copy, size, &hdr, &p, &err))
		xray_decode_block(p, hdr.len, hdr.cpu, on_event, &c, &err);
	xray_decode_block(copy, size, 0, on_event, &c, &err);
	free(copy);
	/* half the events up to the middle of time, then the rest */
	xray_calls__drain(c.calls, size > 8 ? ((uint64_t)data[0] << 8 | data[1]) : 0,
			  on_call, &c);
	xray_calls__drain(c.calls, ~0ULL, on_call, &c);
	xray_calls__open_frames(c.calls);
	xray_file__encode(c.xf, &out);
	pbuf_free(&out);
out:
	xray_calls__free(c.calls);
	xray_file__free(c.xf);
	return 0;
}
