// SPDX-License-Identifier: GPL-2.0
/*
 * Encoders for the records precord writes into the data section.  Each
 * appends one whole record; on error the buffer is left as it was.
 */
#include "perfdata/record.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "precord/perf_file.h"

/*
 * File format: the sample_id_all trailer of every non-sample record, the
 * fields whose bit is in the attrs' sample_type, in this order:
 *	{u32 pid, tid} (TID) {u64 time} (TIME) {u64 id} (ID)
 *	{u64 stream_id} (STREAM_ID) {u32 cpu, res} (CPU) {u64 id} (IDENTIFIER)
 * (perf reads it backwards from the end of the record).
 */
size_t perfdata_sample_id_size(__u64 t)
{
	return 8 * (size_t)__builtin_popcountll(t & PERFDATA_SAMPLE_ID_ALL_BITS);
}

static int put_sample_id(struct pbuf *out, __u64 t, const struct perfdata_sample_id *sid)
{
	static const struct perfdata_sample_id zero;

	if (!sid)
		sid = &zero;
	if (t & PERF_SAMPLE_TID) {
		pbuf_put_u32(out, sid->pid);
		pbuf_put_u32(out, sid->tid);
	}
	if (t & PERF_SAMPLE_TIME)
		pbuf_put_u64(out, sid->time);
	if (t & PERF_SAMPLE_ID)
		pbuf_put_u64(out, sid->id);
	if (t & PERF_SAMPLE_STREAM_ID)
		pbuf_put_u64(out, 0);
	if (t & PERF_SAMPLE_CPU) {
		pbuf_put_u32(out, sid->cpu);
		pbuf_put_u32(out, 0);
	}
	if (t & PERF_SAMPLE_IDENTIFIER)
		pbuf_put_u64(out, sid->id);
	return out->err;
}

int perfdata_sample_id_parse(__u64 t, const struct perf_event_header *h, size_t fixed,
			     struct perfdata_sample_id *sid)
{
	size_t n = perfdata_sample_id_size(t);
	const __u8 *p;

	memset(sid, 0, sizeof(*sid));
	if (h->size < fixed || h->size - fixed < n)
		return -EINVAL;
	p = (const __u8 *)h + h->size - n;
	if (t & PERF_SAMPLE_TID) {
		memcpy(&sid->pid, p, 4);
		memcpy(&sid->tid, p + 4, 4);
		p += 8;
	}
	if (t & PERF_SAMPLE_TIME) {
		memcpy(&sid->time, p, 8);
		p += 8;
	}
	if (t & PERF_SAMPLE_ID) {
		memcpy(&sid->id, p, 8);
		p += 8;
	}
	if (t & PERF_SAMPLE_STREAM_ID)
		p += 8;
	if (t & PERF_SAMPLE_CPU) {
		memcpy(&sid->cpu, p, 4);
		p += 8;
	}
	if (t & PERF_SAMPLE_IDENTIFIER)
		memcpy(&sid->id, p, 8);
	return 0;
}

/* Start a record; returns its offset in out, or -errno. */
static long rec_begin(struct pbuf *out, __u32 type, __u16 misc)
{
	long at = (long)out->len;
	struct perf_event_header h = { .type = type, .misc = misc };

	if (out->err)
		return out->err;
	if (pbuf_put(out, &h, sizeof(h)))
		return out->err;
	return at;
}

/* Pad to 8, patch header.size; undo the record on any error. */
static int rec_end(struct pbuf *out, long at)
{
	size_t size;
	__u16 sz16;

	pbuf_align(out, 8);
	if (out->err) {
		int err = out->err;

		out->err = 0;
		out->len = (size_t)at;
		return err;
	}
	size = out->len - (size_t)at;
	if (size > 0xfff8) {	/* header.size is a u16 */
		out->len = (size_t)at;
		return -E2BIG;
	}
	sz16 = (__u16)size;
	memcpy(out->data + at + offsetof(struct perf_event_header, size), &sz16, 2);
	return 0;
}

/* Strings (comm, filename) are NUL-terminated and NUL-padded to 8. */
static void put_padded_str(struct pbuf *out, const char *s)
{
	size_t n = strlen(s) + 1;

	pbuf_put(out, s, n);
	pbuf_put_zero(out, align_up(n, 8) - n);
}

#define SUPPORTED_SAMPLE_BITS (PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP | \
	PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_ADDR | PERF_SAMPLE_CPU | \
	PERF_SAMPLE_PERIOD | PERF_SAMPLE_CALLCHAIN | PERF_SAMPLE_RAW | \
	PERF_SAMPLE_REGS_USER | PERF_SAMPLE_STACK_USER | PERF_SAMPLE_WEIGHT | \
	PERF_SAMPLE_CGROUP)

/* The record's size must fit header.size: what is left for the stack's
 * data once size, dyn_size and the fields after it are counted. */
static void put_stack_user(struct pbuf *out, long at, __u64 st, const struct perfdata_sample *s)
{
	size_t used = out->len - (size_t)at + 16 + (st & PERF_SAMPLE_WEIGHT ? 8 : 0) +
		      (st & PERF_SAMPLE_CGROUP ? 8 : 0);
	size_t room = used < 0xfff8 ? (0xfff8 - used) & ~(size_t)7 : 0;
	size_t dyn = s->stack && !out->err ? s->stack_dyn : 0;
	size_t size;

	if (dyn > room)
		dyn = room;
	size = align_up(dyn, 8);
	pbuf_put_u64(out, size);
	if (!size)
		return;
	pbuf_put(out, s->stack, dyn);
	pbuf_put_zero(out, size - dyn);
	pbuf_put_u64(out, dyn);
}

/*
 * File format: PERF_RECORD_SAMPLE, fields in this order when their bit is
 * set: u64 id (IDENTIFIER); u64 ip; u32 pid, tid; u64 time; u64 addr;
 * u32 cpu, res; u64 period; u64 nr, u64 ips[nr] (CALLCHAIN); u32 size,
 * char data[size] (RAW, padded so the record stays 8-aligned); u64 abi,
 * u64 regs[] when abi != 0 (REGS_USER); u64 size, char data[size],
 * u64 dyn_size when size != 0 (STACK_USER); u64 weight; u64 cgroup
 * (CGROUP: after WEIGHT, DATA_SRC, TRANSACTION, REGS_INTR and PHYS_ADDR,
 * which precord never writes).
 */
int perfdata_encode_sample(struct pbuf *out, __u64 st, const struct perfdata_sample *s)
{
	long at;

	if (st & ~(__u64)SUPPORTED_SAMPLE_BITS)
		return -EINVAL;
	at = rec_begin(out, PERF_RECORD_SAMPLE, s->misc);
	if (at < 0)
		return (int)at;
	if (st & PERF_SAMPLE_IDENTIFIER)
		pbuf_put_u64(out, s->id);
	if (st & PERF_SAMPLE_IP)
		pbuf_put_u64(out, s->ip);
	if (st & PERF_SAMPLE_TID) {
		pbuf_put_u32(out, s->pid);
		pbuf_put_u32(out, s->tid);
	}
	if (st & PERF_SAMPLE_TIME)
		pbuf_put_u64(out, s->time);
	if (st & PERF_SAMPLE_ADDR)
		pbuf_put_u64(out, s->addr);
	if (st & PERF_SAMPLE_CPU) {
		pbuf_put_u32(out, s->cpu);
		pbuf_put_u32(out, 0);
	}
	if (st & PERF_SAMPLE_PERIOD)
		pbuf_put_u64(out, s->period);
	if (st & PERF_SAMPLE_CALLCHAIN) {
		pbuf_put_u64(out, s->nr_callchain);
		pbuf_put(out, s->callchain, (size_t)s->nr_callchain * 8);
	}
	if (st & PERF_SAMPLE_RAW) {
		/* u32 size + data must end 8-aligned: pad data inside size. */
		size_t padded = align_up((size_t)s->raw_size + 4, 8) - 4;

		pbuf_put_u32(out, (__u32)padded);
		pbuf_put(out, s->raw, s->raw_size);
		pbuf_put_zero(out, padded - s->raw_size);
	}
	if (st & PERF_SAMPLE_REGS_USER) {
		pbuf_put_u64(out, s->regs_abi);
		if (s->regs_abi)
			pbuf_put(out, s->regs, (size_t)s->nr_regs * 8);
	}
	if (st & PERF_SAMPLE_STACK_USER)
		put_stack_user(out, at, st, s);
	if (st & PERF_SAMPLE_WEIGHT)
		pbuf_put_u64(out, s->weight);
	if (st & PERF_SAMPLE_CGROUP)
		pbuf_put_u64(out, s->cgroup);
	return rec_end(out, at);
}

/*
 * Append stack's frames after marker: whatever is in the range of context
 * markers left out (a frame-pointer walk through code without frame
 * pointers reads such garbage too, and perf would reset the whole chain
 * at it), then zeros at the end dropped.  Returns the new count.
 */
static __u32 put_context(__u64 *out, __u32 n, __u64 marker, const __u64 *stack, __u32 nr)
{
	__u32 i, end = n + 1;

	for (i = 0; i < nr; i++)
		if (stack[i] < (__u64)PERF_CONTEXT_MAX)
			out[end++] = stack[i];
	while (end > n + 1 && !out[end - 1])
		end--;
	if (end == n + 1)
		return n;		/* no frames: no marker */
	out[n] = marker;
	return end;
}

__u32 perfdata_callchain_build(__u64 *out, const __u64 *kern, __u32 nk,
			       const __u64 *user, __u32 nu)
{
	__u32 n = put_context(out, 0, (__u64)PERF_CONTEXT_KERNEL, kern, nk);

	return put_context(out, n, (__u64)PERF_CONTEXT_USER, user, nu);
}

/* File format: u32 pid, tid; char comm[] (NUL-padded to 8); trailer. */
int perfdata_encode_comm(struct pbuf *out, __u64 id_type, __u32 pid, __u32 tid,
			 const char *comm, bool exec, const struct perfdata_sample_id *sid)
{
	long at = rec_begin(out, PERF_RECORD_COMM, exec ? PERF_RECORD_MISC_COMM_EXEC : 0);
	char name[16];

	if (at < 0)
		return (int)at;
	snprintf(name, sizeof(name), "%s", comm);
	pbuf_put_u32(out, pid);
	pbuf_put_u32(out, tid);
	put_padded_str(out, name);
	put_sample_id(out, id_type, sid);
	return rec_end(out, at);
}

/*
 * File format: u32 pid, tid; u64 start, len, pgoff; then either
 * {u32 maj, min; u64 ino, ino_generation} or, with misc MMAP_BUILD_ID,
 * {u8 build_id_size, u8, u16, u8 build_id[20]}; u32 prot, flags;
 * char filename[] (NUL-padded to 8); trailer.
 */
int perfdata_encode_mmap2(struct pbuf *out, __u64 id_type, const struct perfdata_mmap2 *m,
			  const struct perfdata_sample_id *sid)
{
	__u16 misc = m->misc;
	long at;

	if (m->build_id_size > BUILD_ID_MAX)
		return -EINVAL;
	if (m->build_id_size)
		misc |= PERF_RECORD_MISC_MMAP_BUILD_ID;
	at = rec_begin(out, PERF_RECORD_MMAP2, misc);
	if (at < 0)
		return (int)at;
	pbuf_put_u32(out, m->pid);
	pbuf_put_u32(out, m->tid);
	pbuf_put_u64(out, m->start);
	pbuf_put_u64(out, m->len);
	pbuf_put_u64(out, m->pgoff);
	if (m->build_id_size) {
		__u8 id[20] = { 0 };

		memcpy(id, m->build_id, m->build_id_size);
		pbuf_put_u8(out, m->build_id_size);
		pbuf_put_zero(out, 3);
		pbuf_put(out, id, sizeof(id));
	} else {
		pbuf_put_u32(out, m->maj);
		pbuf_put_u32(out, m->min);
		pbuf_put_u64(out, m->ino);
		pbuf_put_u64(out, m->ino_generation);
	}
	pbuf_put_u32(out, m->prot);
	pbuf_put_u32(out, m->flags);
	put_padded_str(out, m->filename);
	put_sample_id(out, id_type, sid);
	return rec_end(out, at);
}

/* File format: u32 pid, tid; u64 start, len, pgoff; filename; trailer. */
int perfdata_encode_kernel_mmap(struct pbuf *out, __u64 id_type, __u64 start, __u64 len,
				__u64 pgoff, const char *filename,
				const struct perfdata_sample_id *sid)
{
	long at = rec_begin(out, PERF_RECORD_MMAP, PERF_RECORD_MISC_KERNEL);

	if (at < 0)
		return (int)at;
	pbuf_put_u32(out, (__u32)-1);
	pbuf_put_u32(out, 0);
	pbuf_put_u64(out, start);
	pbuf_put_u64(out, len);
	pbuf_put_u64(out, pgoff);
	put_padded_str(out, filename);
	put_sample_id(out, id_type, sid);
	return rec_end(out, at);
}

/* File format: u32 pid, ppid, tid, ptid; u64 time; trailer. */
int perfdata_encode_task(struct pbuf *out, __u64 id_type, __u32 type, __u32 pid, __u32 ppid,
			 __u32 tid, __u32 ptid, __u64 time, __u16 misc,
			 const struct perfdata_sample_id *sid)
{
	long at;

	if (type != PERF_RECORD_FORK && type != PERF_RECORD_EXIT)
		return -EINVAL;
	at = rec_begin(out, type, misc);
	if (at < 0)
		return (int)at;
	pbuf_put_u32(out, pid);
	pbuf_put_u32(out, ppid);
	pbuf_put_u32(out, tid);
	pbuf_put_u32(out, ptid);
	pbuf_put_u64(out, time);
	put_sample_id(out, id_type, sid);
	return rec_end(out, at);
}

/* File format: u64 lost; trailer (the id says which event lost them). */
int perfdata_encode_lost_samples(struct pbuf *out, __u64 id_type, __u64 lost,
				 const struct perfdata_sample_id *sid)
{
	long at = rec_begin(out, PERF_RECORD_LOST_SAMPLES, 0);

	if (at < 0)
		return (int)at;
	pbuf_put_u64(out, lost);
	put_sample_id(out, id_type, sid);
	return rec_end(out, at);
}

/* File format: u64 id, lost; trailer. */
int perfdata_encode_lost(struct pbuf *out, __u64 id_type, __u64 id, __u64 lost,
			 const struct perfdata_sample_id *sid)
{
	long at = rec_begin(out, PERF_RECORD_LOST, 0);

	if (at < 0)
		return (int)at;
	pbuf_put_u64(out, id);
	pbuf_put_u64(out, lost);
	put_sample_id(out, id_type, sid);
	return rec_end(out, at);
}

/* File format: u64 id; char path[] (NUL-padded to 8); trailer. */
int perfdata_encode_cgroup(struct pbuf *out, __u64 id_type, __u64 id, const char *path,
			   const struct perfdata_sample_id *sid)
{
	long at = rec_begin(out, PERF_RECORD_CGROUP, 0);

	if (at < 0)
		return (int)at;
	pbuf_put_u64(out, id);
	put_padded_str(out, path);
	put_sample_id(out, id_type, sid);
	return rec_end(out, at);
}

int perfdata_encode_finished_round(struct pbuf *out)
{
	long at = rec_begin(out, PERF_RECORD_FINISHED_ROUND, 0);

	return at < 0 ? (int)at : rec_end(out, at);
}

int perfdata_encode_finished_init(struct pbuf *out)
{
	long at = rec_begin(out, PERF_RECORD_FINISHED_INIT, 0);

	return at < 0 ? (int)at : rec_end(out, at);
}
