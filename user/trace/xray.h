/* SPDX-License-Identifier: GPL-2.0 */
/*
 * XRay FDR records: pure encoders, the decoder of the blocks that
 * bpf/trace.bpf.c sends (stream grammar in include/precord/bpf_abi.h), and
 * the per-thread call rebuilder that turns decoded records into calls.
 *
 * Record layouts (little endian, no padding):
 *   function (8):  bit 0 = 0, bits 1-3 action, bits 4-31 id, u32 delta
 *   metadata (16): bit 0 = 1, bits 1-7 kind, 15 bytes of payload
 */
#ifndef PRECORD_TRACE_XRAY_H
#define PRECORD_TRACE_XRAY_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>

#include "precord/bpf_abi.h"
#include "util/buf.h"

#define XRAY_FUNC_SIZE		8
#define XRAY_MD_SIZE		16
#define XRAY_MAX_FUNC_ID	((1u << 28) - 1)
#define XRAY_FDR_VERSION	5	/* what the clang-14 runtime writes */
#define XRAY_FILE_HEADER_SIZE	32

/* ---- encoders: each appends one record; 0 or -ENOMEM / -EINVAL ---- */

int xray_put_function(struct pbuf *out, unsigned int action, __u32 func_id, __u32 delta);
/* Any metadata record: kind and up to 15 payload bytes (zero-padded). */
int xray_put_md(struct pbuf *out, unsigned int kind, const void *payload, size_t n);
int xray_put_new_buffer(struct pbuf *out, __u32 tid);
int xray_put_pid(struct pbuf *out, __u32 pid);
int xray_put_new_cpu(struct pbuf *out, __u16 cpu, __u64 time);
int xray_put_tsc_wrap(struct pbuf *out, __u64 time);
int xray_put_walltime(struct pbuf *out, __u64 sec, __u32 usec);
int xray_put_call_arg(struct pbuf *out, __u64 arg);
int xray_put_end_of_buffer(struct pbuf *out);
int xray_put_buffer_extents(struct pbuf *out, __u64 size);
int xray_put_load_bias(struct pbuf *out, __u64 bias, __u8 slot);
/* Version-5 custom event: the marker, then size payload bytes. */
int xray_put_custom_event(struct pbuf *out, __s32 delta, const void *data, __u32 size);
/* 32-byte file header: version, type 1 (FDR), constant+nonstop TSC. */
int xray_put_file_header(struct pbuf *out, __u16 version, __u64 cycle_freq,
			 __u64 buffer_size);

/*
 * Stream encoder: writes function records with time deltas and inserts
 * NewCPUId / TSCWrap records when needed, as the XRay runtime does.
 * Call xray_enc_begin() after the Thread preamble (NewBuffer, Pid ...).
 */
struct xray_enc {
	__u64 last;		/* time the next delta is taken from */
	__u32 cpu;
	bool started;
};

void xray_enc_begin(struct xray_enc *e);
int xray_enc_function(struct xray_enc *e, struct pbuf *out, unsigned int action,
		      __u32 func_id, __u32 cpu, __u64 time);

/* ---- decoder of trace blocks ---- */

struct xray_event {
	__u64 time;		/* CLOCK_MONOTONIC ns */
	__u32 pid, tid, cpu;
	__u32 func_id;
	__u8 action;		/* PREC_XRAY_ENTER, _EXIT or _TAIL_EXIT */
	__u8 nr_args;		/* entries: CallArgument records that followed */
	__u8 has_bias;		/* entries: a LoadBias record preceded it */
	__u8 bias_slot;
	__u64 bias;
	__u64 args[PREC_TRACE_MAX_ARGS];
	__u32 offset;		/* of the function record in the block data */
};

struct xray_error {
	size_t offset;		/* byte offset of the bad record */
	char msg[120];
};

/* Return 0 to go on, < 0 to stop decoding (returned as is). */
typedef int (*xray_event_fn)(void *ctx, const struct xray_event *ev);

/*
 * Decode the data of one block from CPU cpu, calling fn for each function
 * record, in stream order.  Returns 0, the callback's negative value, or
 * -EINVAL for a malformed stream (err says where and why; events before
 * the bad record have been delivered).
 */
int xray_decode_block(const void *data, size_t len, __u32 cpu,
		      xray_event_fn fn, void *ctx, struct xray_error *err);

/*
 * Check a PREC_REC_TRACE_BLOCK ring record of size bytes: fills *hdr and
 * points *data at its len data bytes.  0 or -EINVAL (err filled).
 */
int xray_parse_ring_block(const void *rec, size_t size, struct prec_trace_block *hdr,
			  const __u8 **data, struct xray_error *err);

#endif
