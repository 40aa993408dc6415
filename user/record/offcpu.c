// SPDX-License-Identifier: GPL-2.0
/*
 * The user side of bpf/offcpu.bpf.c: load it on the sampler's target set
 * (and unwind tables), drain its summed waits through record/aggregator
 * and its one-by-one waits from its ring, and write both as samples of
 * the `offcpu-time` event.
 */
#include "record/offcpu.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "offcpu.skel.h"
#include "perfdata/record.h"
#include "perfdata/writer.h"
#include "precord/bpf_abi.h"
#include "record/aggregator.h"
#include "record/dsos.h"
#include "record/events.h"
#include "record/percpu.h"
#include "util/buf.h"
#include "util/log.h"

/* Distinct keys summed between two flushes (each second, earlier at half
 * full); a stack is 2 KiB, allocated when first seen. */
#define OFFCPU_ENTRIES		4096
#define OFFCPU_RING		(1u << 20)

struct offcpu {
	struct offcpu_bpf *skel;
	struct ring_buffer *rb;
	struct aggregator *agg;
	struct perfdata_writer *w;
	struct dso_table *dt;
	__u64 sample_type;		/* of the offcpu-time samples */
	__u64 id_type;
	int clockid;			/* of every attr (-k) */
	struct pbuf rec;		/* one encoded record */
	__u64 chain[2 + 2 * PREC_MAX_STACK];
	__u64 waits, long_waits;	/* written one by one: long, or maps full */
	__u64 summed_ns, single_ns;
	__u64 lost_reported;
	__u64 bad_records;
	int err;			/* of the ring's callback */
};

/* PRECORD_OFFCPU_ENTRIES: the maps' size (tests fill them). */
static __u32 offcpu_entries(void)
{
	const char *e = getenv("PRECORD_OFFCPU_ENTRIES");
	unsigned long v;
	char *end;

	if (!e || !*e)
		return OFFCPU_ENTRIES;
	v = strtoul(e, &end, 10);
	if (*end || !v || v > 1UL << 20) {
		pr_warn("PRECORD_OFFCPU_ENTRIES=%s is not a number from 1 to 1048576; ignored", e);
		return OFFCPU_ENTRIES;
	}
	return (__u32)v;
}

static int write_sample(struct offcpu *oc, const struct perfdata_sample *in, const __u64 *ips,
			__u32 nk, __u32 nu)
{
	struct perfdata_sample s = *in;
	int err;

	if (!oc->w)
		return 0;
	s.id = OFFCPU_SAMPLE_ID;
	s.misc = (__s64)s.ip < 0 ? PERF_RECORD_MISC_KERNEL : PERF_RECORD_MISC_USER;
	s.callchain = oc->chain;
	s.nr_callchain = perfdata_callchain_build(oc->chain, ips, nk, ips + nk, nu);
	pbuf_reset(&oc->rec);
	err = perfdata_encode_sample(&oc->rec, oc->sample_type, &s);
	if (!err)
		err = perfdata_writer__queue(oc->w, s.time, oc->rec.data, oc->rec.len);
	if (err || !oc->dt)
		return err;
	if (nk)
		dso_table__kernel_hit(oc->dt);
	for (__u32 i = 0; i < nu; i++)
		dso_table__hit(oc->dt, s.pid, ips[nk + i]);
	return 0;
}

/* A summed key (agg_sink_fn): period = the nanoseconds of its waits. */
static int on_summed(void *ctx, const struct prec_agg_key *k, const struct prec_agg_val *v,
		     const __u64 *ips, __u64 time)
{
	static const __u64 none[1];
	struct offcpu *oc = ctx;
	struct perfdata_sample s = {
		.ip = k->ip, .pid = k->pid, .tid = k->tid, .time = time,
		.period = v->period, .cgroup = k->cgroup,
	};

	if (k->nr_kernel > PREC_MAX_STACK || k->nr_user > PREC_MAX_STACK)
		return -EINVAL;
	oc->summed_ns += v->period;
	if (!ips)
		return write_sample(oc, &s, none, 0, 0);
	return write_sample(oc, &s, ips, k->nr_kernel, k->nr_user);
}

/* A wait from the ring: a prec_sample whose period is its length. */
static int on_ring(void *ctx, void *data, size_t size)
{
	struct offcpu *oc = ctx;
	const __u64 *ips = (const __u64 *)((const char *)data + sizeof(struct prec_sample));
	struct prec_sample p;
	struct perfdata_sample s;
	int err;

	if (size < sizeof(p))
		goto bad;
	memcpy(&p, data, sizeof(p));
	if (p.hdr.type != PREC_REC_SAMPLE || p.nr_kernel > PREC_MAX_STACK ||
	    p.nr_user > PREC_MAX_STACK ||
	    p.hdr.size != sizeof(p) + 8 * ((size_t)p.nr_kernel + p.nr_user) || p.hdr.size > size)
		goto bad;
	s = (struct perfdata_sample){
		.ip = p.ip, .pid = p.pid, .tid = p.tid, .time = p.time, .cpu = p.cpu,
		.period = p.period, .cgroup = p.cgroup,
	};
	oc->waits++;
	oc->single_ns += p.period;
	err = write_sample(oc, &s, ips, p.nr_kernel, p.nr_user);
	if (err)
		oc->err = err;
	return err;
bad:
	if (!oc->bad_records++)
		pr_warn("off-cpu: malformed record from the BPF ring buffer (%zu bytes); counting and skipping such records",
			size);
	return 0;
}

static int sum_stats(void *ctx, struct prec_agg_stats *sum)
{
	struct offcpu *oc = ctx;

	return percpu__sum_agg_stats(bpf_map__fd(oc->skel->maps.agg_stats), sum);
}

static __u64 ring_drops(const struct offcpu *oc)
{
	__u64 sum;

	percpu__sum_u64(bpf_map__fd(oc->skel->maps.drops), &sum);
	return sum;		/* 0 when unreadable */
}

/* The sampler's maps this object shares: the targets, the unwind tables. */
static int reuse_maps(struct offcpu_bpf *k, const struct offcpu_config *cfg)
{
	const struct unwind_map_fds *u = cfg->unwind;
	int err = bpf_map__reuse_fd(k->maps.targets, cfg->targets_fd);

	if (!err && u) {
		err = bpf_map__reuse_fd(k->maps.unwind_rows, u->rows);
		if (!err)
			err = bpf_map__reuse_fd(k->maps.unwind_tables, u->tables);
		if (!err)
			err = bpf_map__reuse_fd(k->maps.unwind_procs, u->procs);
		if (!err)
			err = bpf_map__reuse_fd(k->maps.unwind_stats, u->stats);
	}
	return err;
}

/* The summing maps of aggregate.bpf.h (its stacks allocated as keys
 * come: AGG_STACKS_FLAGS in bpf/offcpu.bpf.c). */
static void size_maps(struct offcpu_bpf *k, __u32 n)
{
	bpf_map__set_max_entries(k->maps.agg_counts0, n);
	bpf_map__set_max_entries(k->maps.agg_counts1, n);
	bpf_map__set_max_entries(k->maps.agg_stacks0, n);
	bpf_map__set_max_entries(k->maps.agg_stacks1, n);
}

/* -C: the CPUs whose waits count (the waits that begin there, as perf's
 * cpu_filter). */
static int set_cpus(struct offcpu_bpf *k, const char *list)
{
	struct cpu_set_list cl = { 0 };
	__u8 one = 1;
	int err = cpu_set_list__parse(&cl, list);

	for (int i = 0; !err && i < cl.nr; i++) {
		__u32 cpu = (__u32)cl.cpus[i];

		if (bpf_map_update_elem(bpf_map__fd(k->maps.only_cpus), &cpu, &one, BPF_ANY))
			err = -errno;
	}
	cpu_set_list__free(&cl);
	return err;
}

static int load(struct offcpu *oc, const struct offcpu_config *cfg)
{
	const struct prec_opts *o = cfg->o;
	struct offcpu_bpf *k;
	int err;

	oc->skel = k = offcpu_bpf__open();
	if (!k)
		return -errno;
	k->rodata->filter_mode = o->all_cpus ? PREC_FILTER_ALL :
				 o->nr_tids ? PREC_FILTER_TID : PREC_FILTER_TGID;
	k->rodata->ehframe = o->ehframe;
	k->rodata->kernel_stack = !o->off_cpu_user;
	k->rodata->want_cgroup = o->all_cgroups;
	k->rodata->cgroup_filter = cfg->cgroup_fd >= 0;
	k->rodata->thresh_ns = o->off_cpu_thresh_ms * 1000000ULL;
	k->rodata->cpu_filter = o->cpu_list != NULL;
	if (o->cpu_list) {
		int ncpu = libbpf_num_possible_cpus();

		bpf_map__set_max_entries(k->maps.only_cpus, ncpu > 0 ? (__u32)ncpu : 1);
	}
	size_maps(k, offcpu_entries());
	/* without ehframe the unwinder is not called: its cache unused */
	if (!o->ehframe)
		bpf_map__set_max_entries(k->maps.unwind_row_cache, 1);
	bpf_map__set_max_entries(k->maps.offcpu_events, OFFCPU_RING);
	err = reuse_maps(k, cfg);
	if (!err)
		err = offcpu_bpf__load(k);
	if (err)
		return err;
	if (o->cpu_list) {
		err = set_cpus(k, o->cpu_list);
		if (err)
			return err;
	}
	if (cfg->cgroup_fd >= 0) {
		__u32 zero = 0, fd = (__u32)cfg->cgroup_fd;

		if (bpf_map_update_elem(bpf_map__fd(k->maps.only_cgroup), &zero, &fd, BPF_ANY))
			return -errno;
	}
	return offcpu_bpf__attach(k);
}

int offcpu__new(struct offcpu **out, const struct offcpu_config *cfg)
{
	struct offcpu *oc;
	struct agg_maps m;
	int err;

	*out = NULL;
	if (!cfg->o->off_cpu)
		return 0;
	oc = calloc(1, sizeof(*oc));
	if (!oc)
		return -ENOMEM;
	oc->dt = cfg->dt;
	oc->id_type = cfg->id_type;
	oc->clockid = cfg->o->clockid;
	oc->sample_type = OFFCPU_ID_BITS | PERF_SAMPLE_IP | PERF_SAMPLE_PERIOD |
			  PERF_SAMPLE_CALLCHAIN | (cfg->o->all_cgroups ? PERF_SAMPLE_CGROUP : 0);
	err = load(oc, cfg);
	if (err) {
		pr_err("cannot load the off-CPU BPF program: %s; run 'precord check'",
		       strerror(-err));
		offcpu__free(oc);
		return err;
	}
	oc->rb = ring_buffer__new(bpf_map__fd(oc->skel->maps.offcpu_events), on_ring, oc, NULL);
	m = (struct agg_maps){
		.counts_outer = bpf_map__fd(oc->skel->maps.agg_counts),
		.stacks_outer = bpf_map__fd(oc->skel->maps.agg_stacks),
		.counts = { bpf_map__fd(oc->skel->maps.agg_counts0),
			    bpf_map__fd(oc->skel->maps.agg_counts1) },
		.stacks = { bpf_map__fd(oc->skel->maps.agg_stacks0),
			    bpf_map__fd(oc->skel->maps.agg_stacks1) },
		.capacity = bpf_map__max_entries(oc->skel->maps.agg_counts0),
	};
	oc->agg = oc->rb ? aggregator__new_maps(&m, sum_stats, oc, on_summed, oc) : NULL;
	if (!oc->agg) {
		err = -errno;
		pr_err("cannot set up the off-CPU maps: %s", strerror(-err));
		offcpu__free(oc);
		return err;
	}
	*out = oc;
	return 0;
}

void offcpu__free(struct offcpu *oc)
{
	if (!oc)
		return;
	aggregator__free(oc->agg);
	ring_buffer__free(oc->rb);
	offcpu_bpf__destroy(oc->skel);
	pbuf_free(&oc->rec);
	free(oc);
}

/*
 * perf's off_cpu evsel: PERF_TYPE_SOFTWARE / PERF_COUNT_SW_BPF_OUTPUT,
 * freq 1 with period 1, and the sample fields it allows
 * (OFFCPU_SAMPLE_TYPES); the clock and sample_id_all of every precord
 * attr.
 */
int offcpu__add_evsel(struct offcpu *oc, struct perfdata_writer *w)
{
	struct perf_event_attr a;
	__u64 id = OFFCPU_SAMPLE_ID;
	int err;

	if (!oc)
		return 0;
	memset(&a, 0, sizeof(a));
	a.size = sizeof(a);
	a.type = PERF_TYPE_SOFTWARE;
	a.config = PERF_COUNT_SW_BPF_OUTPUT;
	a.freq = 1;
	a.sample_freq = 1;
	a.sample_type = oc->sample_type;
	a.sample_id_all = 1;
	a.use_clockid = 1;
	a.clockid = oc->clockid;
	err = perfdata_writer__add_evsel(w, &a, OFFCPU_EVENT_NAME, &id, 1);
	if (err < 0)
		return err;
	oc->w = w;
	return 0;
}

void offcpu__start(struct offcpu *oc)
{
	if (oc)
		__atomic_store_n(&oc->skel->bss->enabled, true, __ATOMIC_RELEASE);
}

/* The ring's waits and what BPF could not put in it. */
static int drain(struct offcpu *oc, __u64 now)
{
	struct perfdata_sample_id sid = { .time = now, .id = OFFCPU_SAMPLE_ID };
	__u64 lost;
	int err;

	oc->err = 0;
	err = ring_buffer__consume(oc->rb);
	if (oc->err)
		return oc->err;
	if (err < 0)
		return err;
	lost = ring_drops(oc);
	if (lost <= oc->lost_reported || !oc->w)
		return 0;
	pbuf_reset(&oc->rec);
	if (perfdata_encode_lost_samples(&oc->rec, oc->id_type, lost - oc->lost_reported, &sid))
		return -ENOMEM;
	oc->lost_reported = lost;
	return perfdata_writer__queue(oc->w, now, oc->rec.data, oc->rec.len);
}

int offcpu__round(struct offcpu *oc, __u64 now)
{
	int err = oc ? drain(oc, now) : 0;

	return err ? err : aggregator__round(oc ? oc->agg : NULL, now);
}

int offcpu__flush(struct offcpu *oc, __u64 time)
{
	int err = oc ? drain(oc, time) : 0;

	return err ? err : aggregator__flush(oc ? oc->agg : NULL, time);
}

void offcpu__print_stats(const struct offcpu *oc)
{
	struct prec_agg_stats st;
	struct agg_counts n;
	__u64 no_storage;

	if (!oc)
		return;
	aggregator__counts(oc->agg, &n);
	if (log_verbosity > 0)
		pr_info("off-cpu: %llu waits summed in the kernel (%.3f s) into %llu samples in %llu flushes (%llu early); %llu written one by one (%.3f s)",
			(unsigned long long)n.samples, (double)oc->summed_ns / 1e9,
			(unsigned long long)n.records, (unsigned long long)n.flushes,
			(unsigned long long)n.early_flushes, (unsigned long long)oc->waits,
			(double)oc->single_ns / 1e9);
	if (!sum_stats((void *)oc, &st) && st.full)
		pr_warn("off-cpu: %llu waits were written one by one, the kernel's map being full (%llu early flushes); none lost",
			(unsigned long long)st.full, (unsigned long long)n.early_flushes);
	if (n.missing_stacks)
		pr_warn("off-cpu: %llu sums were written without their call chain (their stack was not found)",
			(unsigned long long)n.missing_stacks);
	if (oc->lost_reported)
		pr_warn("off-cpu: %llu long waits were lost: the ring buffer was full",
			(unsigned long long)oc->lost_reported);
	no_storage = __atomic_load_n(&oc->skel->bss->no_storage, __ATOMIC_RELAXED);
	if (no_storage)
		pr_warn("off-cpu: %llu waits were not measured: no kernel memory for their thread's state",
			(unsigned long long)no_storage);
	if (oc->bad_records)
		pr_warn("off-cpu: %llu malformed records were skipped",
			(unsigned long long)oc->bad_records);
}
