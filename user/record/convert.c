// SPDX-License-Identifier: GPL-2.0
/*
 * Ring records → perf.data records.  BPF samples become PERF_RECORD_SAMPLE
 * with perf's callchain markers; side-band records of the targets are
 * queued as the kernel wrote them (their trailer already has the file's
 * layout: they come from the event whose attr the file has).
 */
#include <errno.h>
#include <string.h>

#include <linux/types.h>

#include "precord/bpf_abi.h"
#include "precord/perf_file.h"
#include "perfdata/record.h"
#include "perfdata/writer.h"
#include "record/dsos.h"
#include "record/session_int.h"
#include "record/target.h"
#include "util/log.h"

/* ips: the sample's stacks, as checked by the caller (8-aligned in the ring). */
static void mark_hits(struct session *s, const struct prec_sample *ps, const __u64 *ips)
{
	__u32 i, nk = ps->nr_kernel, nu = ps->nr_user;

	if (!ps->user_mode)
		dso_table__kernel_hit(s->dt);
	else
		dso_table__hit(s->dt, ps->pid, ps->ip);
	for (i = 0; i < nu; i++)
		dso_table__hit(s->dt, ps->pid, ips[nk + i]);
}

static int convert_sample(struct session *s, const void *data, size_t size)
{
	struct prec_sample ps;
	const __u64 *ips = (const __u64 *)((const __u8 *)data + sizeof(ps));
	struct perfdata_sample out = { 0 };
	__u32 nk, nu, n = 0;
	int err;

	if (size < sizeof(ps))
		return -EINVAL;
	memcpy(&ps, data, sizeof(ps));
	nk = ps.nr_kernel;
	nu = ps.nr_user;
	if (nk > PREC_MAX_STACK || nu > PREC_MAX_STACK ||
	    ps.hdr.size != sizeof(ps) + 8 * (nk + nu) || ps.hdr.size > size)
		return -EINVAL;
	/* a CPU with no sampling event (ids start at 1) */
	if (ps.cpu >= (__u32)s->nr_cpu_ids || !s->cpu_ids[ps.cpu])
		return -EINVAL;
	if (s->o->callchain)
		n = perfdata_callchain_build(s->callchain, ips, nk, ips + nk, nu);
	out.misc = ps.user_mode ? PERF_RECORD_MISC_USER : PERF_RECORD_MISC_KERNEL;
	out.id = s->cpu_ids[ps.cpu];
	out.ip = ps.ip;
	out.pid = ps.pid;
	out.tid = ps.tid;
	out.time = ps.time;
	out.cpu = ps.cpu;
	out.period = ps.period;
	out.callchain = s->callchain;
	out.nr_callchain = n;
	pbuf_reset(&s->rec);
	err = perfdata_encode_sample(&s->rec, s->sample_type, &out);
	if (!err)
		err = perfdata_writer__queue(s->w, ps.time, s->rec.data, s->rec.len);
	if (err)
		return err;
	if (s->dt)
		mark_hits(s, &ps, ips);
	if (!s->first_time || ps.time < s->first_time)
		s->first_time = ps.time;
	if (ps.time > s->last_time)
		s->last_time = ps.time;
	s->samples++;
	return 0;
}

int convert_ring_record(void *ctx, void *data, size_t size)
{
	struct session *s = ctx;
	struct prec_rec_hdr h;
	int err = -EINVAL;

	if (size >= sizeof(h)) {
		memcpy(&h, data, sizeof(h));
		if (h.type == PREC_REC_SAMPLE)
			err = convert_sample(s, data, size);
	}
	if (err == -ENOMEM)
		return err;		/* stops the poll: fatal */
	if (err && !s->bad_records++)
		pr_warn("malformed record from the BPF ring buffer (type %u, %zu bytes); counting and skipping such records",
			size >= sizeof(h) ? h.type : 0, size);
	return 0;
}

static bool is_target_pid(struct session *s, __u32 pid)
{
	return target_set__has(s->targets, pid);
}

struct mmap2_body {
	__u32 pid, tid;
	__u64 start, len, pgoff;
	union {
		struct { __u32 maj, min; __u64 ino, ino_generation; };
		struct { __u8 build_id_size, r0; __u16 r1; __u8 build_id[20]; };
	};
	__u32 prot, flags;
	char filename[];
};

static int on_mmap2(struct session *s, const struct perf_event_header *h)
{
	const struct mmap2_body *b = (const void *)(h + 1);
	size_t fixed = sizeof(*h) + sizeof(*b);
	struct perfdata_mmap2 m = { 0 };
	struct perfdata_sample_id sid;
	enum jit_mmap_action action;
	const char *name;
	size_t maxlen;
	__u64 time;

	if (perfdata_sample_id_parse(s->id_type, h, fixed, &sid))
		return -EINVAL;
	time = sid.time;
	if (!is_target_pid(s, b->pid))
		return 0;
	name = b->filename;
	maxlen = h->size - fixed - perfdata_sample_id_size(s->id_type);
	if (!memchr(name, 0, maxlen))
		return -EINVAL;
	action = session_jit_mmap(s, b->pid, name, b->prot, b->start, b->len, time);
	if (action == JIT_MMAP_DROP)
		return 0;
	if (!(b->prot & 4) && name[0] == '/')
		return 0;		/* data mappings: perf record skips them too */
	m.misc = h->misc & ~PERF_RECORD_MISC_MMAP_BUILD_ID;
	m.pid = b->pid;
	m.tid = b->tid;
	m.start = b->start;
	m.len = b->len;
	m.pgoff = b->pgoff;
	m.prot = b->prot;
	m.flags = b->flags;
	m.filename = name;
	if (h->misc & PERF_RECORD_MISC_MMAP_BUILD_ID) {
		m.build_id_size = b->build_id_size <= 20 ? b->build_id_size : 0;
		memcpy(m.build_id, b->build_id, m.build_id_size);
	} else {
		m.maj = b->maj;
		m.min = b->min;
		m.ino = b->ino;
		m.ino_generation = b->ino_generation;
	}
	if (s->dt && name[0] == '/')
		dso_table__mmap(s->dt, b->pid, b->start, b->len, name,
				&(struct dso_file_id){ m.maj, m.min, m.ino, m.ino_generation,
						       m.ino != 0, time },
				m.build_id, &m.build_id_size);
	pbuf_reset(&s->rec);
	if (perfdata_encode_mmap2(&s->rec, s->id_type, &m, &sid))
		return -ENOMEM;
	if (action == JIT_MMAP_HOLD)
		return session_jit_hold(s, b->pid, time, s->rec.data, s->rec.len);
	return perfdata_writer__queue(s->w, time, s->rec.data, s->rec.len);
}

/* Bytes of a side-band record of type before its trailer, at least. */
static size_t sideband_fixed(__u32 type)
{
	switch (type) {
	case PERF_RECORD_FORK:
	case PERF_RECORD_EXIT:
		return sizeof(struct perf_event_header) + 24;	/* pid ppid tid ptid time */
	case PERF_RECORD_COMM:
		return sizeof(struct perf_event_header) + 8;	/* pid tid, then comm */
	case PERF_RECORD_LOST:
		return sizeof(struct perf_event_header) + 16;	/* id lost */
	default:
		return sizeof(struct perf_event_header);
	}
}

/* A target's FORK: a new process of a target is a target too. */
static int on_fork(struct session *s, const struct perf_event_header *h, __u64 time)
{
	const __u32 *w = (const __u32 *)(h + 1);	/* pid, ppid, tid, ptid */

	if (target_set__fork(s->targets, w[1], w[0]))
		return -ENOMEM;
	if (!is_target_pid(s, w[0]))
		return 0;
	if (s->dt && w[0] != w[1])
		dso_table__fork(s->dt, w[1], w[0]);
	return perfdata_writer__queue(s->w, time, h, h->size);
}

/* A target's EXIT: the process (a thread with -t) leaves the targets. */
static int on_exit(struct session *s, const struct perf_event_header *h, __u64 time)
{
	const __u32 *w = (const __u32 *)(h + 1);	/* pid, ppid, tid, ptid */
	int err;

	if (!is_target_pid(s, w[0]))
		return 0;
	err = perfdata_writer__queue(s->w, time, h, h->size);
	target_set__exit(s->targets, w[0], w[2]);
	return err;
}

int convert_sideband_record(void *ctx, const struct perf_event_header *h)
{
	struct session *s = ctx;
	const __u32 *w = (const __u32 *)(h + 1);
	struct perfdata_sample_id sid;
	int err = 0;

	if (perfdata_sample_id_parse(s->id_type, h, sideband_fixed(h->type), &sid)) {
		s->bad_records++;
		return 0;
	}
	switch (h->type) {
	case PERF_RECORD_MMAP2:
		err = on_mmap2(s, h);
		break;
	case PERF_RECORD_FORK:
		err = on_fork(s, h, sid.time);
		break;
	case PERF_RECORD_EXIT:
		err = on_exit(s, h, sid.time);
		break;
	case PERF_RECORD_COMM:
		if (is_target_pid(s, w[0]))
			err = perfdata_writer__queue(s->w, sid.time, h, h->size);
		break;
	case PERF_RECORD_LOST: {
		__u64 lost;

		memcpy(&lost, (const __u8 *)h + sizeof(*h) + 8, 8);
		s->sb_lost += lost;
		err = perfdata_writer__queue(s->w, sid.time, h, h->size);
		break;
	}
	case PERF_RECORD_SAMPLE:
		/* bpf/sample.bpf.c returns 0: the kernel keeps no sample */
		s->bad_records++;
		break;
	default:
		break;		/* nothing else is asked for (THROTTLE, …) */
	}
	return err == -ENOMEM ? err : 0;
}
