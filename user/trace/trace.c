// SPDX-License-Identifier: GPL-2.0
/*
 * The --trace session: functions → perf evsels → BPF uprobes → ring
 * buffer blocks → decoded events → per-thread calls → perf samples (and
 * --xray-out).  See trace.h for the call order and what perf.data gets.
 *
 * Ordering: a thread's records can sit in several per-CPU blocks (it
 * migrates), and a block leaves its CPU only when full.  So consume()
 * starts a flush round r at most every ROUND_INTERVAL_NS (and never while
 * one is still open): it runs trace_flush
 * on every CPU (BPF_PROG_TEST_RUN on that CPU), which sends the partial
 * block and then a marker for round r.  Once the markers of every CPU
 * have been read, every record made before the round began is in hand,
 * and calls are rebuilt up to that time (the watermark); no record read
 * later can be older.  Reading the ring stops after a time budget, so a
 * tracee faster than precord cannot keep consume() busy for ever (the
 * ring buffer then fills up and hits are counted as lost).
 */
#include "trace/trace.h"

#include <errno.h>
#include <limits.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <linux/perf_event.h>

#include "trace.skel.h"
#include "perfdata/record.h"
#include "perfdata/writer.h"
#include "trace/probes.h"
#include "trace/symbols.h"
#include "trace/xray.h"
#include "trace/xray_calls.h"
#include "trace/xray_file.h"
#include "util/log.h"

#define CONSUME_BUDGET_NS	(50 * 1000000ULL)
#define RING_BYTES_PER_CPU	(8u << 20)	/* ~0.2 s of blocks at full speed */
#define RING_BYTES_MAX		(128u << 20)
/* The reader is woken when this much waits (4 blocks, ~4,000 calls),
 * else by its poll timeout: fewer wake-ups for the traced threads to send
 * (each is a self-IPI) and for the reader to take, in batches that still
 * fit in cache (256 KiB cost the reader 25% more CPU here). */
#define RING_WAKEUP_BYTES	(64u << 10)
#define FLUSH_TRIES		5
/* Flush rounds interrupt every CPU (an IPI each): at most one per 5 ms
 * while recording (one per ring wake-up cost the reader 15% of its CPU). */
#define ROUND_INTERVAL_NS	(5 * 1000000ULL)

_Static_assert(offsetof(struct prec_trace_cpu, seq) - offsetof(struct prec_trace_cpu, hdr) ==
	       offsetof(struct prec_trace_block, seq), "prec_trace_cpu block layout");
_Static_assert(offsetof(struct prec_trace_cpu, data) - offsetof(struct prec_trace_cpu, hdr) ==
	       sizeof(struct prec_trace_block), "prec_trace_cpu block layout");

struct bias_ent {
	__u64 key;		/* tgid << 32 | binary index */
	__u64 bias;
	bool used;
};

struct trace_session {
	char **specs;
	int nr_specs;
	int nr_args;
	char *xray_out;
	struct trace_syms syms;
	struct trace_bpf *skel;
	struct trace_probes probes;
	struct ring_buffer *rb;
	int nr_cpus;
	void *pcpu;		/* per-CPU values of trace_cpu */
	size_t pcpu_stride;
	struct xray_calls *calls;
	struct xray_file *xf;
	struct perfdata_writer *w;	/* during consume/finish */
	__u64 watermark;
	/* flush rounds */
	__u64 round;		/* the last round started */
	__u64 round_time;	/* when it started */
	__u64 round_bound;	/* its watermark once complete */
	int round_expected;	/* markers it waits for */
	int round_seen;
	__u64 *cpu_ok;		/* per CPU: start of its last flushed round */
	__u64 deadline;		/* ring reading stops after this (0: never) */
	__u64 ring_records;
	__u64 pcpu_read;	/* when the counters were last read */
	__u64 last_bias_key;	/* entry_ip()'s last lookup (~0: none) */
	__u64 last_bias;
	bool last_bias_known;
	bool flush_warned;
	struct bias_ent *bias;
	size_t bias_cap, bias_used;
	__u64 reg_mask;		/* sample_regs_user of entry events */
	struct pbuf buf;
	/* counters */
	__u64 bad_blocks, bad_funcs, samples;
	__u64 k_events, k_busy_lost, k_ring_lost, k_blocks, k_lost_blocks, k_ring_bytes;
	__u64 k_foreign;		/* hits outside the targets */
	bool bound;			/* probes bound to the target processes */
};

static __u64 mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (__u64)ts.tv_sec * 1000000000ULL + (__u64)ts.tv_nsec;
}

/* perf register numbers of the argument registers, in argument order. */
#if defined(__x86_64__)
static const int arg_regs[PREC_TRACE_MAX_ARGS] = { 5, 4, 3, 2, 16, 17 };	/* DI SI DX CX R8 R9 */
#elif defined(__aarch64__)
static const int arg_regs[PREC_TRACE_MAX_ARGS] = { 0, 1, 2, 3, 4, 5 };	/* X0..X5 */
#else
static const int arg_regs[PREC_TRACE_MAX_ARGS] = { -1, -1, -1, -1, -1, -1 };
#endif

struct trace_session *trace_session__new(const struct trace_opts *o)
{
	struct trace_session *t;
	int i;

	if (!o || o->nr_specs <= 0 || o->nr_args < 0 || o->nr_args > PREC_TRACE_MAX_ARGS ||
	    (o->nr_args && arg_regs[0] < 0)) {
		errno = EINVAL;
		return NULL;
	}
	t = calloc(1, sizeof(*t));
	if (!t)
		return NULL;
	t->last_bias_key = ~0ULL;
	t->specs = calloc((size_t)o->nr_specs, sizeof(*t->specs));
	t->calls = xray_calls__new();
	if (o->xray_out) {
		t->xray_out = strdup(o->xray_out);
		t->xf = xray_file__new();
	}
	if (!t->specs || !t->calls || (o->xray_out && (!t->xray_out || !t->xf)))
		goto nomem;
	for (i = 0; i < o->nr_specs; i++) {
		t->specs[i] = strdup(o->specs[i]);
		if (!t->specs[i])
			goto nomem;
		t->nr_specs++;
	}
	t->nr_args = o->nr_args;
	for (i = 0; i < t->nr_args; i++)
		t->reg_mask |= 1ULL << arg_regs[i];
	return t;
nomem:
	trace_session__free(t);
	errno = ENOMEM;
	return NULL;
}

int trace_session__resolve(struct trace_session *t, int pid, const char *main_exe)
{
	size_t i;
	int k, err;

	for (k = 0; k < t->nr_specs; k++) {
		err = trace_syms_add_spec(&t->syms, t->specs[k], pid, main_exe);
		if (err)
			return err;
	}
	for (i = 0; i < t->syms.nr_funcs; i++)
		if (!t->syms.funcs[i].event)
			return -ENOMEM;
	pr_debug("trace: %zu functions in %zu binaries", t->syms.nr_funcs, t->syms.nr_binaries);
	return 0;
}

/* "config:N" from a PMU format file: bit N, else 0. */
static int read_sysfs_u64(const char *path, const char *fmt, unsigned long long *v)
{
	FILE *f = fopen(path, "re");
	int ok;

	if (!f)
		return -errno;
	ok = fscanf(f, fmt, v) == 1;
	fclose(f);
	return ok ? 0 : -EINVAL;
}

int trace_session__add_evsels(struct trace_session *t, struct perfdata_writer *w)
{
	unsigned long long type, bit = 0;
	char name[512];
	size_t i;
	int k, err;

	err = read_sysfs_u64("/sys/bus/event_source/devices/uprobe/type", "%llu", &type);
	if (err) {
		pr_err("trace: no uprobe PMU (/sys/bus/event_source/devices/uprobe/type): %s",
		       strerror(-err));
		return err;
	}
	if (read_sysfs_u64("/sys/bus/event_source/devices/uprobe/format/retprobe",
			   "config:%llu", &bit) || bit > 63)
		bit = 0;
	for (i = 0; i < t->syms.nr_funcs; i++) {
		const struct trace_func *f = &t->syms.funcs[i];

		for (k = 0; k < 2; k++) {
			struct perf_event_attr a = {
				.type = (__u32)type,
				.size = sizeof(a),
				.config = k ? 1ULL << bit : 0,
				.config2 = f->file_off,
				.sample_period = 1,
				.sample_type = PREC_SAMPLE_BASE_BITS,
				.sample_id_all = 1,
				.use_clockid = 1,
				.clockid = CLOCK_MONOTONIC,
			};
			__u64 id = TRACE_SAMPLE_ID_BASE + 2 * i + (__u64)k;

			if (k)
				a.sample_type |= PERF_SAMPLE_WEIGHT;
			else if (t->reg_mask) {
				a.sample_type |= PERF_SAMPLE_REGS_USER;
				a.sample_regs_user = t->reg_mask;
			}
			snprintf(name, sizeof(name), "precord:%s%s", f->event, k ? "__return" : "");
			err = perfdata_writer__add_evsel(w, &a, name, &id, 1);
			if (err < 0)
				return err;
		}
	}
	return 0;
}

static int ring_size(int nr_cpus)
{
	unsigned int want = RING_BYTES_PER_CPU * (unsigned int)(nr_cpus > 0 ? nr_cpus : 1);
	unsigned int sz = RING_BYTES_PER_CPU;

	while (sz < want && sz < RING_BYTES_MAX)
		sz <<= 1;
	return (int)sz;
}

static int on_event(void *ctx, const struct xray_event *ev)
{
	struct trace_session *t = ctx;

	return xray_calls__push(t->calls, ev);
}

static void round_marker(struct trace_session *t, __u64 round)
{
	if (round != t->round || t->round_seen >= t->round_expected)
		return;
	if (++t->round_seen == t->round_expected && t->round_bound > t->watermark)
		t->watermark = t->round_bound;
}

static int on_ring(void *ctx, void *data, size_t size)
{
	struct trace_session *t = ctx;
	struct prec_trace_block hdr;
	struct xray_error err;
	const __u8 *p;
	int ret;

	ret = xray_parse_ring_block(data, size, &hdr, &p, &err);
	if (!ret && hdr.len == 0)
		round_marker(t, hdr.seq);
	else if (!ret)
		ret = xray_decode_block(p, hdr.len, hdr.cpu, on_event, t, &err);
	if (ret == -EINVAL) {
		t->bad_blocks++;
		pr_warn("trace: bad block from CPU %u (#%llu) at byte %zu: %s; rest of block skipped",
			hdr.cpu, (unsigned long long)hdr.seq, err.offset, err.msg);
		ret = 0;
	}
	if (!ret && t->deadline && !(++t->ring_records & 31) && mono_ns() > t->deadline)
		ret = -EAGAIN;		/* out of time: the rest waits */
	return ret;			/* -ENOMEM stops too */
}

static int load_programs(struct trace_session *t, int filter_mode, int targets_map_fd,
			 bool multi)
{
	int err;

	t->skel = trace_bpf__open();
	if (!t->skel) {
		err = -errno;
		pr_err("trace: cannot open the BPF object: %s", strerror(-err));
		return err;
	}
	t->skel->rodata->filter_mode = (__u32)filter_mode;
	t->skel->rodata->nr_args = (__u32)t->nr_args;
	err = bpf_map__set_max_entries(t->skel->maps.trace_events, (__u32)ring_size(t->nr_cpus));
	t->skel->rodata->wakeup_bytes = RING_WAKEUP_BYTES;
	if (!err && targets_map_fd >= 0)
		err = bpf_map__reuse_fd(t->skel->maps.targets, targets_map_fd);
	if (!err && multi)
		err = trace_probes__prepare_multi(t->skel->progs.trace_entry,
						  t->skel->progs.trace_exit);
	if (!err)
		err = trace_bpf__load(t->skel);
	if (err && !multi)
		pr_err("trace: cannot load the BPF programs: %s", strerror(-err));
	return err;
}

static int load_and_attach(struct trace_session *t, int filter_mode, int targets_map_fd,
			   const int *pids, int nr_pids, bool multi)
{
	int err = load_programs(t, filter_mode, targets_map_fd, multi);

	if (!err)
		err = trace_probes__attach(&t->probes, t->skel->progs.trace_entry,
					   t->skel->progs.trace_exit, &t->syms, pids, nr_pids,
					   multi);
	return err;
}

int trace_session__attach(struct trace_session *t, int targets_map_fd, int filter_mode,
			  const int *pids, int nr_pids)
{
	bool multi;
	__u64 now;
	int err;

	if (!t->syms.nr_funcs || t->skel)
		return -EINVAL;
	if (filter_mode != PREC_FILTER_ALL && targets_map_fd < 0)
		return -EINVAL;
	t->nr_cpus = libbpf_num_possible_cpus();
	if (t->nr_cpus <= 0)
		return t->nr_cpus < 0 ? t->nr_cpus : -EINVAL;
	t->pcpu_stride = align_up(sizeof(struct prec_trace_cpu), 8);
	t->pcpu = calloc((size_t)t->nr_cpus, t->pcpu_stride);
	if (!t->pcpu)
		return -ENOMEM;
	for (size_t i = 0; i < t->syms.nr_funcs; i++) {	/* the cookie holds 32 bits */
		const struct trace_func *f = &t->syms.funcs[i];

		if (f->file_off > UINT32_MAX) {
			pr_err("trace: %s in %s: file offset 0x%llx is too large",
			       f->name, t->syms.binaries[f->binary].path,
			       (unsigned long long)f->file_off);
			return -EFBIG;
		}
	}
	t->cpu_ok = calloc((size_t)t->nr_cpus, sizeof(*t->cpu_ok));
	if (!t->cpu_ok)
		return -ENOMEM;
	now = mono_ns();		/* before the probes: no record is older */
	for (int cpu = 0; cpu < t->nr_cpus; cpu++)
		t->cpu_ok[cpu] = now;
	multi = trace_probes__multi_wanted();
	err = load_and_attach(t, filter_mode, targets_map_fd, pids, nr_pids, multi);
	if (err && multi) {	/* an older kernel: one uprobe per function */
		pr_debug("trace: no uprobe_multi links (%s); attaching uprobes one by one",
			 strerror(-err));
		trace_probes__detach(&t->probes);
		trace_bpf__destroy(t->skel);
		t->skel = NULL;
		multi = false;
		err = load_and_attach(t, filter_mode, targets_map_fd, pids, nr_pids, multi);
	}
	if (err)
		return err;
	t->bound = nr_pids > 0;
	t->rb = ring_buffer__new(bpf_map__fd(t->skel->maps.trace_events), on_ring, t, NULL);
	if (!t->rb) {
		err = -errno;
		pr_err("trace: cannot set up the ring buffer: %s", strerror(-err));
		return err;
	}
	pr_debug("trace: %zu uprobes and uretprobes attached (%s)", t->probes.nr_probes,
		 multi ? "uprobe_multi links" : "one link each");
	return 0;
}

int trace_session__fd(const struct trace_session *t)
{
	return t->rb ? ring_buffer__epoll_fd(t->rb) : -1;
}

static struct prec_trace_cpu *pcpu(struct trace_session *t, int cpu)
{
	return (struct prec_trace_cpu *)((char *)t->pcpu + (size_t)cpu * t->pcpu_stride);
}

/* Refresh the per-CPU copies of trace_cpu (counters, last_time). */
static int read_pcpu(struct trace_session *t)
{
	__u32 zero = 0;
	int cpu;

	if (bpf_map_lookup_elem(bpf_map__fd(t->skel->maps.trace_cpu), &zero, t->pcpu))
		return -errno;
	t->pcpu_read = mono_ns();
	t->k_events = t->k_busy_lost = t->k_ring_lost = 0;
	t->k_blocks = t->k_lost_blocks = t->k_ring_bytes = t->k_foreign = 0;
	for (cpu = 0; cpu < t->nr_cpus; cpu++) {
		const struct prec_trace_cpu *c = pcpu(t, cpu);

		t->k_events += c->events;
		t->k_busy_lost += c->busy_lost;
		t->k_ring_lost += c->ring_lost;
		t->k_blocks += c->blocks;
		t->k_lost_blocks += c->lost_blocks;
		t->k_ring_bytes += c->ring_bytes;
		t->k_foreign += c->foreign;
	}
	return 0;
}

/*
 * Start flush round t->round + 1: every CPU sends its partial block and a
 * marker.  The round's watermark is its start time, or, for a CPU that
 * could not be flushed (a program held its buffer, or no room for the
 * marker), the start of that CPU's last flushed round: its pending block
 * began after that.
 */
static void start_round(struct trace_session *t)
{
	int fd = bpf_program__fd(t->skel->progs.trace_flush);
	__u64 now = mono_ns(), bound = now, arg;
	int cpu, i;

	t->round++;
	t->round_time = now;
	arg = t->round;
	t->round_expected = 0;
	t->round_seen = 0;
	for (cpu = 0; cpu < t->nr_cpus; cpu++) {
		LIBBPF_OPTS(bpf_test_run_opts, opts, .ctx_in = &arg, .ctx_size_in = sizeof(arg),
			    .flags = BPF_F_TEST_RUN_ON_CPU, .cpu = (__u32)cpu);
		int ret = -1;

		for (i = 0; i < FLUSH_TRIES; i++) {
			if (bpf_prog_test_run_opts(fd, &opts)) {
				ret = errno == ENXIO ? -ENXIO : -1;	/* ENXIO: offline */
				if (ret != -ENXIO && !t->flush_warned) {
					pr_warn("trace: cannot flush the buffer of CPU %d: %s; its calls wait for the end",
						cpu, strerror(errno));
					t->flush_warned = true;
				}
				break;
			}
			ret = (int)opts.retval;
			if (ret != 1)
				break;
			usleep(50);
		}
		if (ret == 0) {
			t->round_expected++;
			t->cpu_ok[cpu] = now;
		} else if (ret != -ENXIO && t->cpu_ok[cpu] < bound) {
			bound = t->cpu_ok[cpu];
		}
	}
	t->round_bound = bound;
	if (!t->round_expected && bound > t->watermark)
		t->watermark = bound;
}

static bool round_open(const struct trace_session *t)
{
	return t->round_seen < t->round_expected;
}

static void bias_set(struct trace_session *t, __u64 key, __u64 bias);

static struct bias_ent *bias_find(struct trace_session *t, __u64 key)
{
	size_t i;

	if (!t->bias_cap)
		return NULL;
	i = (size_t)(key * 0x9e3779b97f4a7c15ULL >> 32) & (t->bias_cap - 1);
	while (t->bias[i].used && t->bias[i].key != key)
		i = (i + 1) & (t->bias_cap - 1);
	return &t->bias[i];
}

static void bias_set(struct trace_session *t, __u64 key, __u64 bias)
{
	struct bias_ent *e;

	if ((t->bias_used + 1) * 2 > t->bias_cap) {
		size_t ncap = t->bias_cap ? 2 * t->bias_cap : 64, i;
		struct bias_ent *old = t->bias, *n = calloc(ncap, sizeof(*n));

		if (!n)
			return;		/* ips fall back to ELF addresses */
		t->bias = n;
		t->bias_cap = ncap;
		t->bias_used = 0;
		for (i = 0; i < ncap / 2; i++)
			if (old && old[i].used)
				bias_set(t, old[i].key, old[i].bias);
		free(old);
	}
	e = bias_find(t, key);
	if (!e->used) {
		e->used = true;
		e->key = key;
		t->bias_used++;
	}
	e->bias = bias;
}

static __u64 entry_ip(struct trace_session *t, const struct xray_event *ev,
		      const struct trace_func *f)
{
	__u64 key = (__u64)ev->pid << 32 | f->binary;
	struct bias_ent *e;

	if (ev->has_bias) {
		bias_set(t, key, ev->bias);
		t->last_bias_key = ~0ULL;
	}
	if (key != t->last_bias_key) {	/* runs of one process and binary */
		e = bias_find(t, key);
		t->last_bias_key = key;
		t->last_bias_known = e && e->used;
		t->last_bias = t->last_bias_known ? e->bias : 0;
	}
	return t->last_bias_known ? t->last_bias + f->file_off : f->addr;
}

/*
 * File format: PERF_RECORD_SAMPLE of an entry event with --trace-args:
 * u64 id; u64 ip; u32 pid, tid; u64 time; u32 cpu, res; u64 period;
 * u64 abi (PERF_SAMPLE_REGS_ABI_64), u64 regs[] in register-number order.
 * (perfdata_encode_sample has no REGS_USER.)
 */
static int encode_args_sample(struct trace_session *t, const struct perfdata_sample *s,
			      const struct xray_event *ev)
{
	__u64 regs[64] = { 0 };
	struct perf_event_header h = { .type = PERF_RECORD_SAMPLE, .misc = s->misc };
	size_t at = t->buf.len;
	int i;

	for (i = 0; i < t->nr_args; i++)
		regs[arg_regs[i]] = i < ev->nr_args ? ev->args[i] : 0;
	pbuf_put(&t->buf, &h, sizeof(h));
	pbuf_put_u64(&t->buf, s->id);
	pbuf_put_u64(&t->buf, s->ip);
	pbuf_put_u32(&t->buf, s->pid);
	pbuf_put_u32(&t->buf, s->tid);
	pbuf_put_u64(&t->buf, s->time);
	pbuf_put_u32(&t->buf, s->cpu);
	pbuf_put_u32(&t->buf, 0);
	pbuf_put_u64(&t->buf, s->period);
	pbuf_put_u64(&t->buf, PERF_SAMPLE_REGS_ABI_64);
	for (i = 0; i < 64; i++)
		if (t->reg_mask & 1ULL << i)
			pbuf_put_u64(&t->buf, regs[i]);
	if (t->buf.err)
		return t->buf.err;
	h.size = (__u16)(t->buf.len - at);
	memcpy(t->buf.data + at, &h, sizeof(h));
	return 0;
}

static int queue_sample(struct trace_session *t, const struct xray_call *c,
			const struct trace_func *f, size_t idx)
{
	const struct xray_event *ev = c->ev;
	bool entry = c->kind == XRAY_CALL_ENTRY;
	struct perfdata_sample s = {
		.misc = PERF_RECORD_MISC_USER,
		.id = TRACE_SAMPLE_ID_BASE + 2 * idx + !entry,
		.pid = ev->pid,
		.tid = ev->tid,
		.time = ev->time,
		.cpu = ev->cpu,
		.period = entry ? 1 : c->duration,
		.weight = entry ? 0 : c->duration,
	};
	int err = 0;
	void *r;

	if (entry) {
		s.ip = entry_ip(t, ev, f);
		xray_calls__set_ip(t->calls, s.ip);
	} else {
		s.ip = c->entry->ip;
	}
	if (entry && t->reg_mask) {
		pbuf_reset(&t->buf);
		err = encode_args_sample(t, &s, ev);
		if (!err)
			err = perfdata_writer__queue(t->w, ev->time, t->buf.data, t->buf.len);
	} else {
		/* written in place: no copy through a buffer per call */
		r = perfdata_writer__queue_space(t->w, ev->time, perfdata_base_sample_size(!entry));
		if (r)
			perfdata_put_base_sample(r, &s, !entry);
		else
			err = -ENOMEM;
	}
	if (!err)
		t->samples++;
	return err;
}

static int on_call(void *ctx, const struct xray_call *c)
{
	struct trace_session *t = ctx;
	__u32 fid = c->kind == XRAY_CALL_UNWOUND ? c->entry->func_id : c->ev->func_id;
	int err = 0;

	if (c->kind == XRAY_CALL_ORPHAN)
		return 0;
	if (fid == 0 || fid > t->syms.nr_funcs) {
		t->bad_funcs++;
		return 0;
	}
	if (c->kind != XRAY_CALL_UNWOUND && t->w)
		err = queue_sample(t, c, &t->syms.funcs[fid - 1], fid - 1);
	if (!err && t->xf)
		err = xray_file__add(t->xf, c);
	return err;
}

static int read_ring(struct trace_session *t, __u64 budget)
{
	int n;

	t->deadline = budget ? mono_ns() + budget : 0;
	n = ring_buffer__consume(t->rb);
	t->deadline = 0;
	if (n < 0 && n != -EAGAIN) {
		pr_err("trace: reading the ring buffer failed: %s", strerror(-n));
		return n;
	}
	return 0;
}

static int drain_calls(struct trace_session *t, struct perfdata_writer *w, __u64 upto)
{
	int err;

	t->w = w;
	err = xray_calls__drain(t->calls, upto, on_call, t);
	t->w = NULL;
	if (err)
		pr_err("trace: cannot queue samples: %s", strerror(-err));
	return err;
}

int trace_session__consume(struct trace_session *t, struct perfdata_writer *w)
{
	int err;

	if (!t->rb)
		return 0;
	if (!round_open(t) && mono_ns() - t->round_time >= ROUND_INTERVAL_NS)
		start_round(t);
	err = read_ring(t, CONSUME_BUDGET_NS);
	if (!err && mono_ns() - t->pcpu_read >= 1000000000ULL)
		read_pcpu(t);	/* counters for the status line, once a second */
	if (!err && t->watermark)
		err = drain_calls(t, w, t->watermark - 1);
	return err;
}

__u64 trace_session__watermark(const struct trace_session *t)
{
	return t->watermark;
}

int trace_session__finish(struct trace_session *t, struct perfdata_writer *w)
{
	bool fresh = false;
	int err = 0, i;

	if (!t->rb)
		return -EINVAL;
	trace_probes__detach(&t->probes);
	/* When a round begun after the detach is complete, all is in hand. */
	for (i = 0; i < 4 && !err; i++) {
		fresh = !round_open(t);
		if (fresh)
			start_round(t);
		err = read_ring(t, 0);
		if (!err && round_open(t)) {	/* a marker found no room */
			t->round_seen = t->round_expected;
			fresh = false;
		}
		if (fresh)
			break;
	}
	if (!err && !fresh)
		pr_warn("trace: could not flush every CPU; the last calls may be incomplete");
	if (!err)
		err = read_pcpu(t);
	t->watermark = ~0ULL;
	if (!err)
		err = drain_calls(t, w, ~0ULL);
	return err;
}

int trace_session__write_xray(struct trace_session *t)
{
	return t->xf ? xray_file__write(t->xf, t->xray_out, t->syms.funcs, t->syms.nr_funcs) : 0;
}

void trace_session__stats(const struct trace_session *t, __u64 *calls, __u64 *lost)
{
	const struct xray_calls_stats *st = xray_calls__stats(t->calls);

	if (calls)
		*calls = st->entries;
	if (lost)
		*lost = t->k_busy_lost + t->k_ring_lost + t->bad_blocks;
}

void trace_session__print_stats(const struct trace_session *t)
{
	const struct xray_calls_stats *st;
	__u64 sent;

	if (!t)
		return;
	st = xray_calls__stats(t->calls);
	pr_info("trace: %llu calls, %llu returns of %zu functions; %llu hits lost (%llu busy, %llu ring buffer full), %llu bad blocks",
		(unsigned long long)st->entries, (unsigned long long)st->returns,
		t->syms.nr_funcs, (unsigned long long)(t->k_busy_lost + t->k_ring_lost),
		(unsigned long long)t->k_busy_lost, (unsigned long long)t->k_ring_lost,
		(unsigned long long)t->bad_blocks);
	if (t->k_foreign)
		pr_info("trace: %llu hits in tasks outside the targets dropped%s",
			(unsigned long long)t->k_foreign,
			t->bound ? "" : " (those processes still took the traps; "
			"-i binds the probes to the targets)");
	pr_debug("trace: %llu returns without an entry (calls begun before tracing), %llu calls still running, %llu exits never seen, %llu late records, %llu bad function ids",
		 (unsigned long long)st->orphans,
		 (unsigned long long)xray_calls__open_frames(t->calls),
		 (unsigned long long)st->unwound, (unsigned long long)st->late,
		 (unsigned long long)t->bad_funcs);
	/* Transport cost: ring bytes (8-byte ring headers included) per hit
	 * (an entry or a return) that reached user space. */
	sent = t->k_events - t->k_ring_lost;
	if (sent)
		pr_debug("trace: %llu bytes in %llu blocks for %llu hits: %.2f bytes per hit, %.2f per call (entry + return); %llu blocks lost",
			 (unsigned long long)t->k_ring_bytes, (unsigned long long)t->k_blocks,
			 (unsigned long long)sent, (double)t->k_ring_bytes / (double)sent,
			 2.0 * (double)t->k_ring_bytes / (double)sent,
			 (unsigned long long)t->k_lost_blocks);
}

void trace_session__free(struct trace_session *t)
{
	int i;

	if (!t)
		return;
	trace_probes__free(&t->probes);
	ring_buffer__free(t->rb);
	trace_bpf__destroy(t->skel);
	for (i = 0; i < t->nr_specs; i++)
		free(t->specs[i]);
	free(t->specs);
	free(t->xray_out);
	trace_syms_free(&t->syms);
	xray_calls__free(t->calls);
	xray_file__free(t->xf);
	free(t->pcpu);
	free(t->cpu_ok);
	free(t->bias);
	pbuf_free(&t->buf);
	free(t);
}
