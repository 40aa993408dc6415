// SPDX-License-Identifier: GPL-2.0
#include "record/event_set.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "precord/bpf_abi.h"
#include "precord/perf_file.h"
#include "perfdata/record.h"
#include "perfdata/writer.h"
#include "util/array.h"
#include "util/buf.h"
#include "util/log.h"

struct event_name {
	const char *name;
	__u32 type;
	__u64 config;
};

/* A side-band record of one drain: its time and where it is in buf. */
struct sb_entry {
	__u64 time;
	size_t off;
};

struct event_set {
	const struct prec_opts *o;
	const struct event_name *ev;	/* NULL: nothing samples */
	struct cpu_set_list cpus;
	struct sample_events se;
	struct sideband sb;
	__u64 sample_type;		/* of the samples as written */
	__u64 *cpu_ids;			/* cpu number → sampling event id */
	struct sb_entry *q;		/* side-band records of one drain */
	size_t nq, q_cap;
	struct pbuf buf;
};

static const struct event_name events[] = {
	{ "cpu-clock", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_CLOCK },
	{ "task-clock", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_TASK_CLOCK },
	{ "cycles", PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES },
	{ "cpu-cycles", PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES },
	{ "instructions", PERF_TYPE_HARDWARE, PERF_COUNT_HW_INSTRUCTIONS },
	{ "cache-misses", PERF_TYPE_HARDWARE, PERF_COUNT_HW_CACHE_MISSES },
	{ "cache-references", PERF_TYPE_HARDWARE, PERF_COUNT_HW_CACHE_REFERENCES },
	{ "branches", PERF_TYPE_HARDWARE, PERF_COUNT_HW_BRANCH_INSTRUCTIONS },
	{ "branch-misses", PERF_TYPE_HARDWARE, PERF_COUNT_HW_BRANCH_MISSES },
	{ "ref-cycles", PERF_TYPE_HARDWARE, PERF_COUNT_HW_REF_CPU_CYCLES },
};

static const struct event_name *find_event(const char *name)
{
	char base[64];

	snprintf(base, sizeof(base), "%s", name);
	base[strcspn(base, ":")] = 0;	/* modifiers such as :u or :ppp */
	for (size_t i = 0; i < sizeof(events) / sizeof(events[0]); i++)
		if (!strcmp(base, events[i].name))
			return &events[i];
	return NULL;
}

/*
 * The fields of every sample, as perf record 6.1 chooses them
 * (evsel__config, evlist__config): IP|TID|TIME, PERIOD when the rate is a
 * frequency (and with --aggregate, whose samples weigh several), CPU with
 * -a or -C, CALLCHAIN with -g, CGROUP with --all-cgroups.  The side-band
 * rides on the sampling event as perf's does, so with that one attr in the
 * file no record needs an id.  --trace and --off-cpu add attrs: then every
 * record says its event with IDENTIFIER, in the layout of the trace samples
 * (PREC_SAMPLE_BASE_BITS).
 */
static __u64 sample_type(const struct prec_opts *o)
{
	__u64 t = PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME;

	if (o->nr_trace_specs || o->off_cpu)	/* more attrs: ids (offcpu.h) */
		t |= PREC_SAMPLE_BASE_BITS;
	if (!o->period || o->aggregate)	/* aggregated: count x period */
		t |= PERF_SAMPLE_PERIOD;
	if (o->all_cpus || o->cpu_list)
		t |= PERF_SAMPLE_CPU;
	if (o->callchain)
		t |= PERF_SAMPLE_CALLCHAIN;
	if (o->dwarf_stack_size)
		t |= PERF_SAMPLE_REGS_USER | PERF_SAMPLE_STACK_USER;
	if (o->all_cgroups)
		t |= PERF_SAMPLE_CGROUP;	/* the id comes from the program */
	return t;
}

/*
 * The side-band rings (SIDEBAND_PAGES each) wake the loop's poll when
 * this much is in one: a process mapping 20,000 pages in 0.4 s (45,000
 * records a second) filled a ring between two rounds of the loop (100 ms
 * without samples) and lost half of them, the other processes' with them.
 */
#define SIDEBAND_PAGES		128
#define SIDEBAND_WAKEUP_BYTES	(64 * 1024)

/* MMAP2 / COMM / FORK / EXIT records of every task on the event's CPU. */
static void want_sideband(struct perf_event_attr *a)
{
	a->watermark = 1;
	a->wakeup_watermark = SIDEBAND_WAKEUP_BYTES;
	a->mmap = 1;
	a->mmap2 = 1;
	a->comm = 1;
	a->comm_exec = 1;
	a->task = 1;
	/*
	 * No attr.build_id: on this kernel an event with it makes the kernel
	 * flag the MMAP2 records of *other* events on the same mapping as
	 * build-id records while they carry maj/min/ino, and a perf record
	 * running at the same time reads the device number as a build-id
	 * size and aborts (util/build-id.c assertion, stack smashing).
	 * Build-ids are read from the mapped files instead (record/dsos.c).
	 */
}

static void sample_attr(const struct prec_opts *o, const struct event_name *ev,
			struct perf_event_attr *a)
{
	memset(a, 0, sizeof(*a));
	a->size = sizeof(*a);
	a->type = ev->type;
	a->config = ev->config;
	if (o->period) {
		a->sample_period = o->period;
	} else {
		a->freq = 1;
		a->sample_freq = o->freq;
	}
	a->sample_type = sample_type(o);
	if (o->dwarf_stack_size) {
		/*
		 * What perf record --call-graph dwarf writes: the kernel
		 * part of the chain only, the user part is perf's to unwind
		 * from the registers (perf's default x86_64 mask) and stack.
		 * These are the file's attr; the kernel's event goes without
		 * them (events.c: the program takes them itself).
		 */
		a->exclude_callchain_user = 1;
		a->mmap_data = 1;	/* perf's unwinder reads .eh_frame_hdr */
		a->sample_regs_user = PREC_DWARF_REGS_MASK;
		a->sample_stack_user = o->dwarf_stack_size;
	}
	a->sample_id_all = 1;
	a->use_clockid = 1;
	a->clockid = o->clockid;
	a->exclude_idle = 0;
	want_sideband(a);
	/* PERF_RECORD_CGROUP for each cgroup created while recording (perf
	 * sets it on its dummy:HG side-band event) */
	a->cgroup = o->all_cgroups;
}

/* The side-band source when nothing samples (--trace alone). */
static void sideband_attr(struct perf_event_attr *a, int clockid)
{
	memset(a, 0, sizeof(*a));
	a->size = sizeof(*a);
	a->type = PERF_TYPE_SOFTWARE;
	a->config = PERF_COUNT_SW_DUMMY;
	a->sample_period = 1;
	a->sample_type = PREC_SAMPLE_BASE_BITS;
	a->sample_id_all = 1;
	want_sideband(a);
	a->use_clockid = 1;
	a->clockid = clockid;
	a->disabled = 0;
}

struct event_set *event_set__new(const struct prec_opts *o)
{
	struct event_set *es = calloc(1, sizeof(*es));
	int err = 0;

	if (!es)
		return NULL;
	es->o = o;
	if (!o->nr_trace_specs || o->sample_explicit) {
		const char *name = o->event ? o->event : "cpu-clock";

		es->ev = find_event(name);
		if (!es->ev) {
			pr_err("unknown event '%s': give cpu-clock, task-clock, cycles or instructions", name);
			err = -EINVAL;
		}
	}
	if (!err) {
		err = cpu_set_list__parse(&es->cpus, o->cpu_list);
		if (err)
			pr_err("bad CPU list '%s': %s", o->cpu_list ? o->cpu_list : "(online)",
			       strerror(-err));
	}
	if (!err) {
		es->cpu_ids = calloc((size_t)es->cpus.max_cpu, sizeof(__u64));
		if (!es->cpu_ids)
			err = -ENOMEM;
	}
	if (err) {
		event_set__free(es);
		errno = -err;
		return NULL;
	}
	return es;
}

void event_set__free(struct event_set *es)
{
	if (!es)
		return;
	sample_events__close(&es->se);
	sideband__close(&es->sb);
	cpu_set_list__free(&es->cpus);
	free(es->cpu_ids);
	free(es->q);
	pbuf_free(&es->buf);
	free(es);
}

static int open_sampling(struct event_set *es, struct bpf_program *prog)
{
	const struct event_name *ev = es->ev;
	struct perf_event_attr a;
	int err;

	sample_attr(es->o, ev, &a);
	err = sample_events__open(&es->se, &a, &es->cpus, prog);
	if (err == -ENOENT || err == -EOPNOTSUPP || err == -ENODEV) {
		pr_err("event '%s' is not supported on this machine%s: use -e cpu-clock",
		       es->o->event, ev->type == PERF_TYPE_HARDWARE ? " (no hardware PMU)" : "");
		return err;
	}
	if (err) {
		pr_err("cannot open the sampling event '%s': %s", ev->name, strerror(-err));
		return err;
	}
	for (int i = 0; i < es->se.nr; i++)
		es->cpu_ids[es->cpus.cpus[i]] = es->se.ids[i];
	es->sample_type = es->se.attr.sample_type;
	return 0;
}

int event_set__open(struct event_set *es, struct bpf_program *prog)
{
	struct perf_event_attr sba;
	int err;

	if (es->ev) {
		err = open_sampling(es, prog);
		if (err)
			return err;
		err = sideband__map(&es->sb, &es->se, SIDEBAND_PAGES);
	} else {
		sideband_attr(&sba, es->o->clockid);
		sba.cgroup = es->o->all_cgroups;
		err = sideband__open(&es->sb, &sba, &es->cpus, SIDEBAND_PAGES);
	}
	if (err)
		pr_err("cannot open side-band events: %s", strerror(-err));
	return err;
}

int event_set__add_evsel(struct event_set *es, struct perfdata_writer *w, __u64 extra_bits)
{
	struct perf_event_attr a;
	char name[64];
	__u64 *ids;
	int err;

	if (es->ev) {
		/* the side-band comes with the samples: no dummy event */
		snprintf(name, sizeof(name), "%s", es->ev->name);
		a = es->se.attr;
		a.sample_type |= extra_bits;
		a.watermark = 0;		/* how precord reads, not the file's */
		a.wakeup_watermark = 0;
		es->sample_type = a.sample_type;
		err = perfdata_writer__add_evsel(w, &a, name, es->se.ids, (__u32)es->se.nr);
		return err < 0 ? err : 0;
	}
	ids = calloc((size_t)es->sb.nr, sizeof(__u64));
	if (!ids)
		return -ENOMEM;
	for (int i = 0; i < es->sb.nr; i++)
		ids[i] = es->sb.rings[i].id;
	a = es->sb.attr;
	a.sample_type |= extra_bits;
	a.watermark = 0;
	a.wakeup_watermark = 0;
	err = perfdata_writer__add_evsel(w, &a, "dummy:HG", ids, (__u32)es->sb.nr);
	free(ids);
	return err < 0 ? err : 0;
}

__u64 event_set__sample_type(const struct event_set *es)
{
	return es->sample_type;
}

__u64 event_set__id_type(const struct event_set *es)
{
	return es->sb.attr.sample_type;
}

const __u64 *event_set__cpu_ids(const struct event_set *es, int *nr)
{
	*nr = es->cpus.max_cpu;
	return es->cpu_ids;
}

__u64 event_set__lost_id(const struct event_set *es)
{
	return es->ev ? es->se.ids[0] : 0;
}

static int gather(void *ctx, const struct perf_event_header *h)
{
	struct event_set *es = ctx;
	struct perfdata_sample_id sid;

	/* a record too short for a trailer sorts first (time 0); the
	 * consumer drops it */
	perfdata_sample_id_parse(event_set__id_type(es), h, sizeof(*h), &sid);
	if (ARRAY_GROW(es->q, es->q_cap, es->nq + 1))
		return -ENOMEM;
	es->q[es->nq++] = (struct sb_entry){ sid.time, es->buf.len };
	return pbuf_put(&es->buf, h, h->size);
}

static int cmp_sb_entry(const void *a, const void *b)
{
	const struct sb_entry *x = a, *y = b;

	if (x->time != y->time)
		return x->time < y->time ? -1 : 1;
	return x->off < y->off ? -1 : x->off > y->off;	/* stable */
}

int event_set__sideband_nr(const struct event_set *es)
{
	return es->sb.nr;
}

int event_set__sideband_fd(const struct event_set *es, int i)
{
	return es->sb.rings[i].fd;
}

int event_set__drain_sideband(struct event_set *es, sb_record_fn fn, void *ctx)
{
	int err = sideband__drain(&es->sb, gather, es);

	if (err >= 0 && es->nq) {
		qsort(es->q, es->nq, sizeof(*es->q), cmp_sb_entry);
		for (size_t i = 0; err >= 0 && i < es->nq; i++)
			err = fn(ctx, (const void *)(es->buf.data + es->q[i].off));
	}
	es->nq = 0;
	pbuf_reset(&es->buf);
	return err < 0 ? err : 0;
}

void event_set__stop(struct event_set *es)
{
	sample_events__stop(&es->se);
}
