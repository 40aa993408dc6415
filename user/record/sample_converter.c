// SPDX-License-Identifier: GPL-2.0
/*
 * Side-band records of the targets are queued as the kernel wrote them
 * (their trailer already has the file's layout: they come from the event
 * whose attr the file has).
 */
#include "record/sample_converter.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <linux/types.h>

#include "precord/bpf_abi.h"
#include "precord/perf_file.h"
#include "perfdata/record.h"
#include "perfdata/writer.h"
#include "record/dsos.h"
#include "record/proc_state.h"
#include "record/pyprocs.h"
#include "record/target.h"
#include "unwind/unwinder.h"
#include "util/buf.h"
#include "util/log.h"

struct sample_converter {
	struct sample_converter_config cfg;
	struct pbuf rec;		/* scratch for one encoded record */
	__u64 *callchain;		/* scratch: 2 markers + 2 stacks + Python frames */
	__u64 *user;			/* scratch: the user stack with Python frames */
	__u64 samples, bad_records;
	__u64 lost_reported;		/* dropped in BPF, said in LOST_SAMPLES */
	__u64 sb_lost;			/* lost in the side-band rings (LOST) */
	__u64 first_time, last_time;
};

struct sample_converter *sample_converter__new(const struct sample_converter_config *cfg)
{
	struct sample_converter *c = calloc(1, sizeof(*c));

	if (!c)
		return NULL;
	c->cfg = *cfg;
	c->callchain = malloc((2 + 2 * PREC_MAX_STACK + PREC_PY_MAX_FRAMES) * sizeof(__u64));
	c->user = malloc((PREC_MAX_STACK + PREC_PY_MAX_FRAMES) * sizeof(__u64));
	if (!c->callchain || !c->user) {
		free(c->callchain);
		free(c->user);
		free(c);
		errno = ENOMEM;
		return NULL;
	}
	return c;
}

void sample_converter__free(struct sample_converter *c)
{
	if (!c)
		return;
	pbuf_free(&c->rec);
	free(c->callchain);
	free(c->user);
	free(c);
}

void sample_converter__set_writer(struct sample_converter *c, struct perfdata_writer *w)
{
	c->cfg.w = w;
}

/* A side-band record of a target, queued on the writer and told to the
 * tracked state (the head of the next file when rotating). */
static int queue_sideband(struct sample_converter *c, __u64 time, const struct perf_event_header *h)
{
	int err = perfdata_writer__queue(c->cfg.w, time, h, h->size);

	if (!err && c->cfg.state)
		err = proc_state__record(c->cfg.state, h);
	return err;
}

void sample_converter__counts(const struct sample_converter *c, struct sample_counts *out)
{
	*out = (struct sample_counts){
		.samples = c->samples, .lost = c->lost_reported + c->sb_lost,
		.bad_records = c->bad_records,
		.first_time = c->first_time, .last_time = c->last_time,
	};
}

void sample_converter__print_stats(const struct sample_converter *c)
{
	if (c->bad_records)
		pr_warn("%llu malformed records from the kernel were skipped",
			(unsigned long long)c->bad_records);
}

/* Drops counted in BPF since the last call become one LOST_SAMPLES record. */
int sample_converter__report_lost(struct sample_converter *c, __u64 total, __u64 time)
{
	struct perfdata_sample_id sid = { .time = time, .id = c->cfg.lost_id };
	__u64 lost;

	if (total <= c->lost_reported)
		return 0;
	lost = total - c->lost_reported;
	c->lost_reported = total;
	pbuf_reset(&c->rec);
	if (perfdata_encode_lost_samples(&c->rec, c->cfg.id_type, lost, &sid))
		return -ENOMEM;
	return perfdata_writer__queue(c->cfg.w, time, c->rec.data, c->rec.len);
}

/* ips: the sample's stacks, as checked by the caller (8-aligned in the ring). */
static void mark_hits(struct sample_converter *c, __u32 pid, __u64 ip, bool user_mode,
		      const __u64 *ips, __u32 nk, __u32 nu)
{
	if (!c->cfg.dt)
		return;
	if (!user_mode)
		dso_table__kernel_hit(c->cfg.dt);
	else
		dso_table__hit(c->cfg.dt, pid, ip);
	for (__u32 i = 0; i < nu; i++)
		dso_table__hit(c->cfg.dt, pid, ips[nk + i]);
}

static void note_time(struct sample_converter *c, __u64 time)
{
	if (!c->first_time || time < c->first_time)
		c->first_time = time;
	if (time > c->last_time)
		c->last_time = time;
}

/* The ring record's size as its counts say (bpf_abi.h), 0 if they are bad. */
static size_t sample_rec_size(const struct prec_sample *ps)
{
	size_t n = sizeof(*ps) + 8 * ((size_t)ps->nr_kernel + ps->nr_user + ps->nr_py);

	if (ps->nr_kernel > PREC_MAX_STACK || ps->nr_user > PREC_MAX_STACK ||
	    ps->nr_py > PREC_PY_MAX_FRAMES)
		return 0;
	if (ps->regs_abi == 0)
		return ps->stack_len ? 0 : n;
	if (ps->regs_abi != PERF_SAMPLE_REGS_ABI_64 || ps->stack_len > PREC_DWARF_MAX_STACK ||
	    ps->nr_py)
		return 0;
	return n + 8 * PREC_DWARF_NR_REGS + align_up(ps->stack_len, 8);
}

/* perf's callchain of the frames ips[0..nk + nu + npy) (a sample's or a
 * key's): the Python frames spliced into the user ones. */
static __u32 build_callchain(struct sample_converter *c, __u32 pid, __u64 time, bool user_mode,
			     const __u64 *ips, __u32 nk, __u32 nu, __u32 npy)
{
	const __u64 *user = ips + nk;

	if (npy && c->cfg.py) {
		nu = pyprocs__splice(c->cfg.py, pid, time, user_mode, user, nu, ips + nk + nu, npy,
				     c->user, PREC_MAX_STACK + PREC_PY_MAX_FRAMES);
		user = c->user;
	}
	return perfdata_callchain_build(c->callchain, ips, nk, user, nu);
}

static int convert_sample(struct sample_converter *c, const void *data, size_t size)
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
	if (ps.hdr.size != sample_rec_size(&ps) || ps.hdr.size > size)
		return -EINVAL;
	/* a CPU with no sampling event (ids start at 1) */
	if (ps.cpu >= (__u32)c->cfg.nr_cpu_ids || !c->cfg.cpu_ids[ps.cpu])
		return -EINVAL;
	if (c->cfg.callchain)
		n = build_callchain(c, ps.pid, ps.time, ps.user_mode, ips, nk, nu, ps.nr_py);
	out.misc = ps.user_mode ? PERF_RECORD_MISC_USER : PERF_RECORD_MISC_KERNEL;
	out.id = c->cfg.cpu_ids[ps.cpu];
	out.ip = ps.ip;
	out.pid = ps.pid;
	out.tid = ps.tid;
	out.time = ps.time;
	out.cpu = ps.cpu;
	out.period = ps.period;
	out.callchain = c->callchain;
	out.nr_callchain = n;
	out.cgroup = ps.cgroup;
	if (ps.regs_abi && (c->cfg.sample_type & PERF_SAMPLE_REGS_USER)) {
		out.regs_abi = ps.regs_abi;
		out.regs = ips + nk + nu;	/* no Python frames: sample_rec_size */
		out.nr_regs = PREC_DWARF_NR_REGS;
		out.stack = out.regs + PREC_DWARF_NR_REGS;
		out.stack_dyn = ps.stack_len;
	}
	pbuf_reset(&c->rec);
	err = perfdata_encode_sample(&c->rec, c->cfg.sample_type, &out);
	if (!err)
		err = perfdata_writer__queue(c->cfg.w, ps.time, c->rec.data, c->rec.len);
	if (err)
		return err;
	mark_hits(c, ps.pid, ps.ip, ps.user_mode, ips, nk, nu);
	note_time(c, ps.time);
	c->samples++;
	return 0;
}

/* The sampling event's id of a CPU; a key without CPU (the file records
 * none) takes any CPU's: the id only names the event.  0: none. */
static __u64 cpu_id(const struct sample_converter *c, __u32 cpu, bool any)
{
	if (cpu < (__u32)c->cfg.nr_cpu_ids && c->cfg.cpu_ids[cpu])
		return c->cfg.cpu_ids[cpu];
	for (int i = 0; any && i < c->cfg.nr_cpu_ids; i++)
		if (c->cfg.cpu_ids[i])
			return c->cfg.cpu_ids[i];
	return 0;
}

int sample_converter__aggregated(void *ctx, const struct prec_agg_key *k,
				 const struct prec_agg_val *v, const __u64 *ips, __u64 time)
{
	static const __u64 no_frames[1];
	struct sample_converter *c = ctx;
	struct perfdata_sample out = { 0 };
	__u32 nk = ips ? k->nr_kernel : 0, nu = ips ? k->nr_user : 0, n = 0;
	__u32 npy = ips ? k->nr_py : 0;
	bool user_mode = (__s64)k->ip >= 0;
	int err;

	if (nk > PREC_MAX_STACK || nu > PREC_MAX_STACK || npy > PREC_PY_MAX_FRAMES || !v->count)
		return -EINVAL;
	if (!ips)
		ips = no_frames;
	out.id = cpu_id(c, k->cpu, !(c->cfg.sample_type & PERF_SAMPLE_CPU));
	if (!out.id)
		return -EINVAL;
	if (c->cfg.callchain)
		n = build_callchain(c, k->pid, time, user_mode, ips, nk, nu, npy);
	out.misc = user_mode ? PERF_RECORD_MISC_USER : PERF_RECORD_MISC_KERNEL;
	out.ip = k->ip;
	out.pid = k->pid;
	out.tid = k->tid;
	out.time = time;
	out.cpu = k->cpu;
	out.period = v->period;		/* the sum of the counted samples' periods */
	out.callchain = c->callchain;
	out.nr_callchain = n;
	pbuf_reset(&c->rec);
	err = perfdata_encode_sample(&c->rec, c->cfg.sample_type, &out);
	if (!err)
		err = perfdata_writer__queue(c->cfg.w, time, c->rec.data, c->rec.len);
	if (err)
		return err;
	mark_hits(c, k->pid, k->ip, user_mode, ips, nk, nu);
	note_time(c, time);
	c->samples += v->count;
	return 0;
}

int sample_converter__ring_record(void *ctx, void *data, size_t size)
{
	struct sample_converter *c = ctx;
	struct prec_rec_hdr h;
	int err = -EINVAL;

	if (size >= sizeof(h)) {
		memcpy(&h, data, sizeof(h));
		if (h.type == PREC_REC_SAMPLE)
			err = convert_sample(c, data, size);
	}
	if (err == -ENOMEM)
		return err;		/* stops the poll: fatal */
	if (err && !c->bad_records++)
		pr_warn("malformed record from the BPF ring buffer (type %u, %zu bytes); counting and skipping such records",
			size >= sizeof(h) ? h.type : 0, size);
	return 0;
}

static bool is_target_pid(struct sample_converter *c, __u32 pid)
{
	return target_set__has(c->cfg.targets, pid);
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

static int on_mmap2(struct sample_converter *c, const struct perf_event_header *h)
{
	const struct mmap2_body *b = (const void *)(h + 1);
	size_t fixed = sizeof(*h) + sizeof(*b);
	struct perfdata_mmap2 m = { 0 };
	struct perfdata_sample_id sid;
	enum exec_map_action action = EXEC_MAP_WRITE;
	const char *name;
	size_t maxlen;
	__u64 time;

	if (perfdata_sample_id_parse(c->cfg.id_type, h, fixed, &sid))
		return -EINVAL;
	time = sid.time;
	if (!is_target_pid(c, b->pid))
		return 0;
	name = b->filename;
	maxlen = h->size - fixed - perfdata_sample_id_size(c->cfg.id_type);
	if (!memchr(name, 0, maxlen))
		return -EINVAL;
	if (c->cfg.hook.decide)
		action = c->cfg.hook.decide(c->cfg.hook.ctx, b->pid, name, b->prot, b->start, b->len);
	if (action == EXEC_MAP_DROP)
		return 0;
	if (!(b->prot & 4) && name[0] == '/' && !c->cfg.data_maps)
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
	pyprocs__sideband_time(c->cfg.py, time);
	if (c->cfg.dt && name[0] == '/')
		dso_table__mmap(c->cfg.dt, b->pid, b->start, b->len, name,
				&(struct dso_file_id){ m.maj, m.min, m.ino, m.ino_generation,
						       m.ino != 0, time, m.pgoff },
				m.build_id, &m.build_id_size);
	pbuf_reset(&c->rec);
	if (perfdata_encode_mmap2(&c->rec, c->cfg.id_type, &m, &sid))
		return -ENOMEM;
	if (action == EXEC_MAP_HOLD)
		return c->cfg.hook.hold(c->cfg.hook.ctx, b->pid, time, c->rec.data, c->rec.len);
	return queue_sideband(c, time, (const struct perf_event_header *)c->rec.data);
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
	case PERF_RECORD_CGROUP:
		return sizeof(struct perf_event_header) + 8;	/* id, then path */
	default:
		return sizeof(struct perf_event_header);
	}
}

/* A target's FORK: a new process of a target is a target too. */
static int on_task_fork(struct sample_converter *c, const struct perf_event_header *h, __u64 time)
{
	const __u32 *w = (const __u32 *)(h + 1);	/* pid, ppid, tid, ptid */

	if (target_set__fork(c->cfg.targets, w[1], w[0]))
		return -ENOMEM;
	if (!is_target_pid(c, w[0]))
		return 0;
	if (c->cfg.dt && w[0] != w[1])
		dso_table__fork(c->cfg.dt, w[1], w[0]);
	if (c->cfg.unwind && w[0] != w[1])
		unwinder__fork(c->cfg.unwind, w[1], w[0]);
	if (w[0] != w[1])
		pyprocs__fork(c->cfg.py, w[1], w[0], time);
	return queue_sideband(c, time, h);
}

/* A target's EXIT: the process (a thread with -t) leaves the targets. */
static int on_task_exit(struct sample_converter *c, const struct perf_event_header *h, __u64 time)
{
	const __u32 *w = (const __u32 *)(h + 1);	/* pid, ppid, tid, ptid */
	int err;

	if (!is_target_pid(c, w[0]))
		return 0;
	err = queue_sideband(c, time, h);
	target_set__exit(c->cfg.targets, w[0], w[2]);
	if (c->cfg.unwind && w[0] == w[2])
		unwinder__exit(c->cfg.unwind, w[0]);
	if (w[0] == w[2])
		pyprocs__exit(c->cfg.py, w[0], time);
	return err;
}

/* A cgroup created while recording (--all-cgroups): kept whole, whoever
 * made it, for perf to name the samples of its tasks.  Its path must end
 * inside the record. */
static int on_cgroup(struct sample_converter *c, const struct perf_event_header *h, __u64 time)
{
	size_t fixed = sideband_fixed(PERF_RECORD_CGROUP);
	const char *path = (const char *)h + fixed;

	if (!memchr(path, 0, h->size - fixed - perfdata_sample_id_size(c->cfg.id_type))) {
		c->bad_records++;
		return 0;
	}
	return perfdata_writer__queue(c->cfg.w, time, h, h->size);
}

int sample_converter__sideband_record(void *ctx, const struct perf_event_header *h)
{
	struct sample_converter *c = ctx;
	const __u32 *w = (const __u32 *)(h + 1);
	struct perfdata_sample_id sid;
	int err = 0;

	if (perfdata_sample_id_parse(c->cfg.id_type, h, sideband_fixed(h->type), &sid)) {
		c->bad_records++;
		return 0;
	}
	switch (h->type) {
	case PERF_RECORD_MMAP2:
		err = on_mmap2(c, h);
		break;
	case PERF_RECORD_FORK:
		err = on_task_fork(c, h, sid.time);
		break;
	case PERF_RECORD_EXIT:
		err = on_task_exit(c, h, sid.time);
		break;
	case PERF_RECORD_COMM:
		if (!is_target_pid(c, w[0]))
			break;
		/* an exec: the mappings of the old image are gone */
		if (c->cfg.unwind && (h->misc & PERF_RECORD_MISC_COMM_EXEC))
			unwinder__exec(c->cfg.unwind, w[0]);
		if (h->misc & PERF_RECORD_MISC_COMM_EXEC)
			pyprocs__exec(c->cfg.py, w[0]);
		err = queue_sideband(c, sid.time, h);
		break;
	case PERF_RECORD_LOST: {
		__u64 lost;

		memcpy(&lost, (const __u8 *)h + sizeof(*h) + 8, 8);
		c->sb_lost += lost;
		err = perfdata_writer__queue(c->cfg.w, sid.time, h, h->size);
		break;
	}
	case PERF_RECORD_CGROUP:
		err = on_cgroup(c, h, sid.time);
		break;
	case PERF_RECORD_SAMPLE:
		/* bpf/sample.bpf.c returns 0: the kernel keeps no sample */
		c->bad_records++;
		break;
	default:
		break;		/* nothing else is asked for (THROTTLE, …) */
	}
	return err == -ENOMEM ? err : 0;
}
