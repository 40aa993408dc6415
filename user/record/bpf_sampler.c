// SPDX-License-Identifier: GPL-2.0
#include "record/bpf_sampler.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <bpf/libbpf.h>
#include <bpf/bpf.h>

#include "precord/bpf_abi.h"
#include "precord/unwind_abi.h"
#include "record/aggregator.h"
#include "record/percpu.h"
#include "sample.skel.h"
#include "util/buf.h"
#include "util/log.h"

/* At most this much taken off the ring by bpf_sampler__pump() and not yet
 * handed on; beyond it the ring fills (and drops) instead. */
#define STASH_MAX	(256u << 20)

struct bpf_sampler {
	struct sample_bpf *skel;
	struct ring_buffer *rb;
	bpf_record_fn fn;
	void *ctx;
	struct pbuf stash;	/* records of pump(): u64 size, data, 8-aligned */
	bool stashing;
};

static int libbpf_print(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	if (level == LIBBPF_DEBUG && log_verbosity < 2)
		return 0;
	if (level == LIBBPF_INFO && log_verbosity < 1)
		return 0;
	if (log_verbosity < 1)
		return 0;	/* libbpf's own warnings only with -v: we report failures */
	return vfprintf(stderr, fmt, ap);
}

void bpf_sampler__set_logging(void)
{
	libbpf_set_print(libbpf_print);
}

/* PRECORD_MAX_TARGETS: room for that many live target processes in the
 * BPF set instead of 8192 (0: not set). */
static __u32 max_targets(void)
{
	const char *e = getenv("PRECORD_MAX_TARGETS");
	unsigned long v;
	char *end;

	if (!e || !*e)
		return 0;
	v = strtoul(e, &end, 10);
	if (*end || !v || v > 1UL << 22) {
		pr_warn("PRECORD_MAX_TARGETS=%s is not a number from 1 to 4194304; ignored", e);
		return 0;
	}
	return (__u32)v;
}

/*
 * --aggregate: entries of each count map and each stack map.  Room for one
 * second of samples of every CPU all different (a flush comes each second,
 * and earlier at half full), at least 1024, at most 16384: the two stack
 * maps are preallocated (perf_event programs may run in NMI) and take
 * 2 x 2 KiB per entry of kernel memory, 16 MiB at 4096, 64 MiB at 16384.
 * A busier machine only flushes early, and sends what does not fit to
 * the ring as normal samples.
 * PRECORD_AGG_ENTRIES overrides it (tests fill the map with a small one).
 */
static __u32 agg_entries(const struct prec_opts *o)
{
	const char *e = getenv("PRECORD_AGG_ENTRIES");
	int ncpu = libbpf_num_possible_cpus();
	__u64 want = (__u64)(ncpu > 0 ? ncpu : 1) * (o->freq ? o->freq : 1000);
	__u32 n = 1024;
	unsigned long v;
	char *end;

	if (e && *e) {
		v = strtoul(e, &end, 10);
		if (!*end && v >= 1 && v <= 1UL << 20)
			return (__u32)v;
		pr_warn("PRECORD_AGG_ENTRIES=%s is not a number from 1 to 1048576; ignored", e);
	}
	while (n < want && n < 16384)
		n <<= 1;
	return n;
}

static void size_agg_maps(struct sample_bpf *skel, const struct prec_opts *o)
{
	__u32 n = o->aggregate ? agg_entries(o) : 1;

	skel->rodata->aggregate = o->aggregate;
	skel->rodata->agg_cpu = o->all_cpus || o->cpu_list;
	bpf_map__set_max_entries(skel->maps.agg_counts0, n);
	bpf_map__set_max_entries(skel->maps.agg_counts1, n);
	bpf_map__set_max_entries(skel->maps.agg_stacks0, n);
	bpf_map__set_max_entries(skel->maps.agg_stacks1, n);
	/* the outer maps' inner template may keep its size: the kernel
	 * compares the size of array inner maps only */
}

static int attach(struct bpf_link **link, struct bpf_program *prog, const char *tp)
{
	int err;

	*link = bpf_program__attach(prog);
	if (*link)
		return 0;
	err = -errno;
	pr_err("cannot attach to %s: %s", tp, strerror(-err));
	return err;
}

/*
 * --call-graph ehframe: the table rows take --unwind-max-bytes (8-byte
 * slots, allocated when the map is created); the other modes keep the
 * unwinder's maps at one entry.
 */
static void size_unwind_maps(struct sample_bpf *skel, const struct prec_opts *o)
{
	__u64 slots = o->ehframe ? o->unwind_max_bytes / 8 : 1;

	bpf_map__set_max_entries(skel->maps.unwind_rows, (__u32)slots);
	bpf_map__set_max_entries(skel->maps.unwind_tables, o->ehframe ? PREC_UNWIND_MAX_TABLES : 1);
	bpf_map__set_max_entries(skel->maps.unwind_procs, o->ehframe ? PREC_UNWIND_MAX_PROCS : 1);
	bpf_map__set_max_entries(skel->maps.unwind_row_cache, o->ehframe ? PREC_UNWIND_ROW_CACHE : 1);
}

static int load(struct bpf_sampler *b, const struct prec_opts *o)
{
	bool all = o->all_cpus, by_tid = o->nr_tids > 0;
	__u32 ring = 8u << 20, nr_targets = max_targets();
	struct sample_bpf *skel;
	int err;

	b->skel = skel = sample_bpf__open();
	if (!skel) {
		err = -errno;
		pr_err("cannot open the BPF programs: %s", strerror(-err));
		return err;
	}
	skel->rodata->filter_mode = all ? PREC_FILTER_ALL :
				    by_tid ? PREC_FILTER_TID : PREC_FILTER_TGID;
	skel->rodata->want_callchain = o->callchain;
	skel->rodata->want_python = opts_python(o);
	skel->rodata->want_cgroup = o->all_cgroups;
	skel->rodata->cgroup_filter = o->cgroup != NULL;
	skel->rodata->dwarf_stack_size = o->dwarf_stack_size;
	/* one program loads: the dwarf and ehframe ones need
	 * bpf_task_pt_regs (5.15), ehframe's bpf_loop (5.17) too */
	bpf_program__set_autoload(skel->progs.on_sample, !o->dwarf_stack_size && !o->ehframe);
	bpf_program__set_autoload(skel->progs.on_sample_dwarf, o->dwarf_stack_size != 0);
	bpf_program__set_autoload(skel->progs.on_sample_ehframe, o->ehframe);
	size_unwind_maps(skel, o);
	if (o->dwarf_stack_size) {
		int ncpu = libbpf_num_possible_cpus();

		bpf_map__set_max_entries(skel->maps.dwarf_scratch, ncpu > 0 ? (__u32)ncpu : 1);
		/*
		 * A dwarf sample is up to 66 KiB (8.3 KiB with the default
		 * size): at 999 Hz that is 8 MiB/s per CPU.  Room for an
		 * eighth of a second of all CPUs at the largest size (the
		 * reader is woken at a quarter full, and polls every 100 ms),
		 * at least 4 MiB: a larger ring than needed only spreads the
		 * samples over more memory, and costs the workload cache.
		 */
		if (!o->mmap_pages) {
			__u64 need = (__u64)(ncpu > 0 ? ncpu : 1) *
				     (o->freq ? o->freq : 1000) * (o->dwarf_stack_size + 1248) / 8;

			ring = 4u << 20;
			while (ring < need && ring < (1u << 30))
				ring <<= 1;
		}
	} else {
		bpf_map__set_max_entries(skel->maps.dwarf_scratch, 1);
	}
	skel->rodata->keep_idle = all;
	skel->rodata->follow_forks = !o->no_inherit;
	if (o->mmap_pages)
		ring = o->mmap_pages * 4096u;
	bpf_map__set_max_entries(skel->maps.events, ring);
	if (nr_targets)
		bpf_map__set_max_entries(skel->maps.targets, nr_targets);
	skel->rodata->wakeup_bytes = ring / 4;
	size_agg_maps(skel, o);
	err = sample_bpf__load(skel);
	if (err) {
		pr_err("cannot load the BPF programs: %s; run 'precord check'", strerror(-err));
		return err;
	}
	if (!all && !by_tid)
		err = attach(&skel->links.on_fork, skel->progs.on_fork, "sched_process_fork");
	if (!err && !all)
		err = attach(&skel->links.on_exit, skel->progs.on_exit, "sched_process_exit");
	if (!err && o->cmd && !all && !o->nr_pids && !o->nr_tids)
		err = attach(&skel->links.on_exec, skel->progs.on_exec, "sched_process_exec");
	return err;
}

static int on_ring_record(void *ctx, void *data, size_t size)
{
	struct bpf_sampler *b = ctx;
	__u64 len = size;	/* 8 bytes: the record after it 8-aligned, as
				 * in the ring (its u64 fields are read so) */

	if (!b->stashing)
		return b->fn ? b->fn(b->ctx, data, size) : 0;
	/* the record is off the ring whatever this returns */
	pbuf_put(&b->stash, &len, sizeof(len));
	pbuf_put(&b->stash, data, size);
	pbuf_align(&b->stash, 8);
	return b->stash.err;
}

struct bpf_sampler *bpf_sampler__new(const struct prec_opts *o)
{
	struct bpf_sampler *b = calloc(1, sizeof(*b));
	int err;

	if (!b)
		return NULL;
	err = load(b, o);
	if (!err) {
		b->rb = ring_buffer__new(bpf_map__fd(b->skel->maps.events), on_ring_record, b, NULL);
		if (!b->rb) {
			err = -errno;
			pr_err("cannot set up the BPF ring buffer: %s", strerror(-err));
		}
	}
	if (err) {
		bpf_sampler__free(b);
		errno = -err;
		return NULL;
	}
	return b;
}

void bpf_sampler__free(struct bpf_sampler *b)
{
	if (!b)
		return;
	ring_buffer__free(b->rb);
	sample_bpf__destroy(b->skel);
	pbuf_free(&b->stash);
	free(b);
}

void bpf_sampler__set_consumer(struct bpf_sampler *b, bpf_record_fn fn, void *ctx)
{
	b->fn = fn;
	b->ctx = ctx;
}

int bpf_sampler__consume(struct bpf_sampler *b)
{
	int err = 0, n = 0;

	for (size_t off = 0; off + 8 <= b->stash.len && !err; n++) {
		__u64 len;

		memcpy(&len, b->stash.data + off, sizeof(len));
		if (len > b->stash.len - off - 8)
			break;		/* its data did not fit (ENOMEM) */
		err = b->fn ? b->fn(b->ctx, b->stash.data + off + 8, (size_t)len) : 0;
		off = align_up(off + 8 + len, 8);
	}
	pbuf_reset(&b->stash);
	if (err < 0)
		return err;
	err = ring_buffer__consume(b->rb);
	return err < 0 ? err : err + n;
}

int bpf_sampler__pump(struct bpf_sampler *b)
{
	int err;

	if (b->stash.len >= STASH_MAX)
		return 0;
	b->stashing = true;
	err = ring_buffer__consume(b->rb);
	b->stashing = false;
	if (err == -ENOMEM)
		pr_err("cannot keep the samples taken off the BPF ring buffer: out of memory");
	return err < 0 ? err : 0;
}

int bpf_sampler__epoll_fd(const struct bpf_sampler *b)
{
	return ring_buffer__epoll_fd(b->rb);
}

struct bpf_program *bpf_sampler__program(const struct bpf_sampler *b)
{
	if (bpf_program__autoload(b->skel->progs.on_sample_ehframe))
		return b->skel->progs.on_sample_ehframe;
	return bpf_program__autoload(b->skel->progs.on_sample_dwarf) ?
	       b->skel->progs.on_sample_dwarf : b->skel->progs.on_sample;
}

void bpf_sampler__unwind_maps(const struct bpf_sampler *b, struct unwind_map_fds *out)
{
	out->rows = bpf_map__fd(b->skel->maps.unwind_rows);
	out->nr_rows = bpf_map__max_entries(b->skel->maps.unwind_rows);
	out->tables = bpf_map__fd(b->skel->maps.unwind_tables);
	out->nr_tables = bpf_map__max_entries(b->skel->maps.unwind_tables);
	out->procs = bpf_map__fd(b->skel->maps.unwind_procs);
	out->stats = bpf_map__fd(b->skel->maps.unwind_stats);
}

int bpf_sampler__py_procs_fd(const struct bpf_sampler *b)
{
	return bpf_map__fd(b->skel->maps.py_procs);
}

int bpf_sampler__py_stats(const struct bpf_sampler *b, struct prec_py_stats *sum)
{
	return percpu__sum_words(bpf_map__fd(b->skel->maps.py_stats), (__u64 *)sum,
				 sizeof(*sum) / sizeof(__u64));
}

int bpf_sampler__targets_fd(const struct bpf_sampler *b)
{
	return bpf_map__fd(b->skel->maps.targets);
}

int bpf_sampler__only_cgroup(struct bpf_sampler *b, int cgroup_fd)
{
	__u32 zero = 0, fd = (__u32)cgroup_fd;

	if (bpf_map_update_elem(bpf_map__fd(b->skel->maps.only_cgroup), &zero, &fd, BPF_ANY))
		return -errno;
	return 0;
}

void bpf_sampler__start(struct bpf_sampler *b)
{
	__atomic_store_n(&b->skel->bss->sampling, true, __ATOMIC_RELEASE);
}

void bpf_sampler__follow_exec(struct bpf_sampler *b, pid_t pid)
{
	b->skel->bss->exec_child = (__u32)pid;
}

__u64 bpf_sampler__drops(const struct bpf_sampler *b)
{
	__u64 sum;

	percpu__sum_u64(bpf_map__fd(b->skel->maps.drops), &sum);
	return sum;		/* 0 when unreadable */
}

__u64 bpf_sampler__targets_full(const struct bpf_sampler *b, __u32 *capacity)
{
	*capacity = bpf_map__max_entries(b->skel->maps.targets);
	return __atomic_load_n(&b->skel->bss->targets_full, __ATOMIC_RELAXED);
}

void bpf_sampler__agg_maps(const struct bpf_sampler *b, struct agg_maps *m)
{
	const struct sample_bpf *k = b->skel;

	*m = (struct agg_maps){
		.counts_outer = bpf_map__fd(k->maps.agg_counts),
		.stacks_outer = bpf_map__fd(k->maps.agg_stacks),
		.counts = { bpf_map__fd(k->maps.agg_counts0), bpf_map__fd(k->maps.agg_counts1) },
		.stacks = { bpf_map__fd(k->maps.agg_stacks0), bpf_map__fd(k->maps.agg_stacks1) },
		.capacity = bpf_map__max_entries(k->maps.agg_counts0),
	};
}

int bpf_sampler__agg_stats(const struct bpf_sampler *b, struct prec_agg_stats *sum)
{
	return percpu__sum_agg_stats(bpf_map__fd(b->skel->maps.agg_stats), sum);
}
