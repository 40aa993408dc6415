// SPDX-License-Identifier: GPL-2.0
/*
 * Pure XRay FDR encoders (layouts in xray.h).  Used by the unit tests to
 * build the streams bpf/trace.bpf.c writes, and by the --xray-out writer.
 */
#include <errno.h>
#include <string.h>

#include "trace/xray.h"
#include "util/le.h"

int xray_put_function(struct pbuf *out, unsigned int action, __u32 func_id, __u32 delta)
{
	__u32 w = (action & 7) << 1 | func_id << 4;

	if (action > PREC_XRAY_ENTER_ARGS || func_id > XRAY_MAX_FUNC_ID)
		return -EINVAL;
	pbuf_put_u32(out, w);
	return pbuf_put_u32(out, delta);
}

int xray_put_md(struct pbuf *out, unsigned int kind, const void *payload, size_t n)
{
	__u8 rec[XRAY_MD_SIZE] = { 0 };

	if (kind > 127 || n > XRAY_MD_SIZE - 1)
		return -EINVAL;
	rec[0] = (__u8)(kind << 1 | 1);
	if (n)
		memcpy(rec + 1, payload, n);
	return pbuf_put(out, rec, sizeof(rec));
}

/* A metadata record whose payload is one little-endian value of n bytes
 * (4 or 8): the first n bytes of v's 8. */
static int put_md_value(struct pbuf *out, unsigned int kind, __u64 v, int n)
{
	__u8 p[8];

	le64_store(p, v);
	return xray_put_md(out, kind, p, (size_t)n);
}

int xray_put_new_buffer(struct pbuf *out, __u32 tid)
{
	return put_md_value(out, PREC_XRAY_MD_NEW_BUFFER, tid, 4);
}

int xray_put_pid(struct pbuf *out, __u32 pid)
{
	return put_md_value(out, PREC_XRAY_MD_PID, pid, 4);
}

int xray_put_new_cpu(struct pbuf *out, __u16 cpu, __u64 time)
{
	__u8 p[10];

	le16_store(p, cpu);
	le64_store(p + 2, time);
	return xray_put_md(out, PREC_XRAY_MD_NEW_CPU_ID, p, sizeof(p));
}

int xray_put_tsc_wrap(struct pbuf *out, __u64 time)
{
	return put_md_value(out, PREC_XRAY_MD_TSC_WRAP, time, 8);
}

int xray_put_walltime(struct pbuf *out, __u64 sec, __u32 usec)
{
	__u8 p[12];

	le64_store(p, sec);
	le32_store(p + 8, usec);
	return xray_put_md(out, PREC_XRAY_MD_WALLTIME, p, sizeof(p));
}

int xray_put_call_arg(struct pbuf *out, __u64 arg)
{
	return put_md_value(out, PREC_XRAY_MD_CALL_ARGUMENT, arg, 8);
}

int xray_put_end_of_buffer(struct pbuf *out)
{
	return xray_put_md(out, PREC_XRAY_MD_END_OF_BUFFER, NULL, 0);
}

int xray_put_buffer_extents(struct pbuf *out, __u64 size)
{
	return put_md_value(out, PREC_XRAY_MD_BUFFER_EXTENTS, size, 8);
}

int xray_put_load_bias(struct pbuf *out, __u64 bias, __u8 slot)
{
	__u8 p[9];

	le64_store(p, bias);
	p[8] = slot;
	return xray_put_md(out, PREC_XRAY_MD_LOAD_BIAS, p, sizeof(p));
}

int xray_put_custom_event(struct pbuf *out, __s32 delta, const void *data, __u32 size)
{
	__u8 p[8];
	int err;

	if (size == 0 || size > 0x7fffffff)
		return -EINVAL;
	le32_store(p, size);
	le32_store(p + 4, (__u32)delta);
	err = xray_put_md(out, PREC_XRAY_MD_CUSTOM_EVENT, p, sizeof(p));
	if (err)
		return err;
	return pbuf_put(out, data, size);
}

/*
 * File format: u16 version, u16 type (1 = FDR), u32 bits (bit 0
 * constant_tsc, bit 1 nonstop_tsc), u64 cycle frequency, then 16 bytes of
 * free-form data, where the runtime puts its u64 buffer size.
 */
int xray_put_file_header(struct pbuf *out, __u16 version, __u64 cycle_freq,
			 __u64 buffer_size)
{
	pbuf_put_u16(out, version);
	pbuf_put_u16(out, 1);
	pbuf_put_u32(out, 3);
	pbuf_put_u64(out, cycle_freq);
	pbuf_put_u64(out, buffer_size);
	return pbuf_put_u64(out, 0);
}

void xray_enc_begin(struct xray_enc *e)
{
	memset(e, 0, sizeof(*e));
}

int xray_enc_function(struct xray_enc *e, struct pbuf *out, unsigned int action,
		      __u32 func_id, __u32 cpu, __u64 time)
{
	__u64 delta;
	int err = 0;

	if (!e->started || cpu != e->cpu) {
		err = xray_put_new_cpu(out, (__u16)cpu, time);
		e->cpu = cpu;
		e->last = time;
		e->started = true;
	} else if (time < e->last || (time - e->last) >> 32) {
		err = xray_put_tsc_wrap(out, time);
		e->last = time;
	}
	if (err)
		return err;
	delta = time - e->last;
	e->last = time;
	return xray_put_function(out, action, func_id, (__u32)delta);
}
