// SPDX-License-Identifier: GPL-2.0
/*
 * One recording, top to bottom:
 *   set-up: prerequisites → events and CPUs → BPF → targets → the command
 *     (forked, not yet exec'd) → tracing → JIT sources → perf events →
 *     output file → attrs → synthesize what exists;
 *   record: release the command → loop (rings, aggregation, JIT, drops,
 *     flush, status);
 *   finish: stop → drain → aggregation → tracing and JIT finish → features
 *     → summary.
 * With --switch-output the loop also switches files (record/rotation.h;
 * it asks this file for what is kept back and for the new file's attrs).
 * Teardown frees in reverse order; every free is NULL-safe.  This file
 * alone sees struct session: the objects it holds know only what they are
 * handed.
 */
#include "record/session.h"

#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <unistd.h>

#include "perfdata/record.h"
#include "perfdata/writer.h"
#include "record/aggregator.h"
#include "record/bpf_sampler.h"
#include "record/cgroups.h"
#include "record/debug_fetch.h"
#include "record/dsos.h"
#include "record/event_set.h"
#include "record/file_features.h"
#include "record/jit_sources.h"
#include "record/offcpu.h"
#include "record/pyprocs.h"
#include "record/output.h"
#include "record/rings.h"
#include "record/rotation.h"
#include "record/sample_converter.h"
#include "record/signals.h"
#include "record/status_line.h"
#include "record/synth.h"
#include "record/target.h"
#include "record/tracing.h"
#include "unwind/unwinder.h"
#include "util/clock.h"
#include "util/log.h"

struct session {
	const struct prec_opts *o;
	struct event_set *ev;
	struct dso_table *dt;
	struct target_set *targets;
	struct bpf_sampler *bpf;
	struct tracing *trace;		/* NULL: no --trace */
	struct jit_sources *jit;	/* NULL: no JIT merging */
	struct output *out;
	struct perfdata_writer *w;	/* out's */
	struct sample_converter *conv;
	struct rings *rings;		/* what feeds conv */
	struct aggregator *agg;		/* NULL: no --aggregate */
	struct offcpu *off;		/* NULL: no --off-cpu */
	struct unwinder *unwind;	/* NULL: no --call-graph ehframe */
	struct pyprocs *py;		/* NULL: no Python frames */
	struct cgroup_mount *cgroups;	/* --all-cgroups, -G: the cgroup2 mount */
	int cgroup_fd;			/* -G's cgroup, -1: none */
	__u64 id_type;			/* sample_type giving every record's trailer */
	__u64 start_ns;			/* CLOCK_MONOTONIC */
	struct file_features *ff;	/* each file's features */
	struct debug_fetch *df;		/* debug files of stripped DSOs; NULL: none */
	bool lost_output;		/* JIT images or the XRay log not written */
	__u64 flushed_upto;		/* records up to here are in the file */
	struct rotation *rot;		/* --switch-output; NULL: one file */
};

static void figures(const struct session *s, struct record_figures *f)
{
	struct sample_counts n;

	sample_converter__counts(s->conv, &n);
	f->samples = n.samples;
	f->lost = n.lost;
	f->bytes = perfdata_writer__file_size(s->w);
	tracing__describe(s->trace, f->calls, sizeof(f->calls));
}

/* ---- set-up -------------------------------------------------------------- */

/* --call-graph ehframe: the unwind tables. */
static int setup_unwinder(struct session *s)
{
	struct unwind_map_fds fds;

	if (!s->o->ehframe)
		return 0;
	bpf_sampler__unwind_maps(s->bpf, &fds);
	s->unwind = unwinder__new(&fds);
	return s->unwind ? 0 : -errno;
}

/* Every mapping dso_table reads feeds the unwind tables and the search
 * for CPython processes. */
static void on_mapped(void *ctx, __u32 pid, __u64 start, __u64 len, __u64 pgoff, int fd,
		      const char *name, const __u8 *bid, __u8 bid_size)
{
	struct session *s = ctx;

	if (s->unwind)
		unwinder__mmap(s->unwind, pid, start, len, pgoff, fd, name, bid, bid_size);
	pyprocs__mmap(s->py, pid, start, len, pgoff, fd, name, bid, bid_size);
}

/* Python frames (opts_python): the processes, named into the JIT images. */
static int setup_python(struct session *s)
{
	if (opts_python(s->o) && s->jit) {
		s->py = pyprocs__new(bpf_sampler__py_procs_fd(s->bpf), s->jit);
		if (!s->py)
			return -ENOMEM;
	}
	if (s->unwind || s->py)
		dso_table__set_observer(s->dt, &(struct dso_mmap_observer){
			.mapped = on_mapped, .ctx = s,
		});
	return 0;
}

/* --off-cpu: on the sampler's targets (and unwind tables). */
static int setup_offcpu(struct session *s)
{
	struct unwind_map_fds fds;

	if (s->o->ehframe)
		bpf_sampler__unwind_maps(s->bpf, &fds);
	return offcpu__new(&s->off, &(struct offcpu_config){
		.o = s->o, .targets_fd = bpf_sampler__targets_fd(s->bpf),
		.unwind = s->o->ehframe ? &fds : NULL, .cgroup_fd = s->cgroup_fd,
		.dt = s->dt, .id_type = s->id_type,
	});
}

static int make_converter(struct session *s)
{
	struct sample_converter_config cfg = {
		.w = s->w, .dt = s->dt, .targets = s->targets,
		.sample_type = event_set__sample_type(s->ev), .id_type = s->id_type,
		.state = rotation__state(s->rot),
		.lost_id = event_set__lost_id(s->ev), .callchain = s->o->callchain,
		.data_maps = s->o->dwarf_stack_size != 0,
		.unwind = s->unwind,
		.py = s->py,
		.hook = jit_sources__hook(s->jit),
	};

	cfg.cpu_ids = event_set__cpu_ids(s->ev, &cfg.nr_cpu_ids);
	s->conv = sample_converter__new(&cfg);
	if (!s->conv)
		return -errno;
	file_features__set_converter(s->ff, s->conv);
	bpf_sampler__set_consumer(s->bpf, sample_converter__ring_record, s->conv);
	s->rings = rings__new(&(struct rings_config){
		.ev = s->ev, .bpf = s->bpf, .trace = s->trace, .conv = s->conv,
		.unwind = s->unwind,
	});
	if (!s->rings)
		return -ENOMEM;
	if (s->o->aggregate)
		s->agg = aggregator__new_bpf(s->bpf, sample_converter__aggregated, s->conv);
	return s->agg || !s->o->aggregate ? 0 : -errno;
}

static int synthesize(struct session *s)
{
	struct pbuf b = { 0 };
	int err = synth_kernel(&b, s->id_type);

	if (!err && s->o->all_cgroups)
		err = cgroup_mount__synthesize(s->cgroups, &b, s->id_type);
	/* Each new file repeats them: /proc/kallsyms costs ~40 ms to read,
	 * too much every few seconds (modules loaded later are missed, and
	 * so are cgroups made later). */
	if (!err)
		err = rotation__keep_kernel(s->rot, b.data, b.len);
	if (!err)
		err = target_set__synthesize(s->targets, &b, s->id_type, s->dt,
					     s->o->dwarf_stack_size != 0);
	if (!err)
		jit_sources__synthesized(s->jit, b.data, b.len);
	if (!err)
		err = rotation__records(s->rot, b.data, b.len);
	if (!err)
		err = perfdata_encode_finished_init(&b);
	if (!err)
		err = perfdata_writer__append(s->w, b.data, b.len);
	pbuf_free(&b);
	unwinder__flush(s->unwind);
	return err;
}

/* The attrs and the room of the features of the file s->out (the
 * first, or the next one of a switch: the converter goes on in it). */
static int begin_file(void *ctx)
{
	struct session *s = ctx;
	int err;

	s->w = output__writer(s->out);
	if (s->conv)
		sample_converter__set_writer(s->conv, s->w);
	/*
	 * perf script -F +uregs (how --trace-args shows arguments) wants the
	 * first event of each built-in type to have user registers too: the
	 * file's copies of these attrs say so, and their samples carry an
	 * empty register set.
	 */
	err = event_set__add_evsel(s->ev, s->w, s->o->trace_args ? PERF_SAMPLE_REGS_USER : 0);
	if (!err)
		err = tracing__add_evsels(s->trace, s->w);
	if (!err)
		err = offcpu__add_evsel(s->off, s->w);
	if (err < 0)
		return err;
	err = s->conv ? 0 : make_converter(s);
	if (!err)
		err = perfdata_writer__begin(s->w);
	if (!err)
		err = file_features__reserve(s->ff, s->out);
	perfdata_writer__set_rounds(s->w, !s->o->jit);
	return err;
}

/* ---- rotation's hooks (--switch-output) --------------------------------- */

/* Right before the switch at t: --aggregate's in-kernel counts, at t - 1
 * (the last flush's mark, so no older than anything written). */
static int before_switch(void *ctx, __u64 t)
{
	struct session *s = ctx;
	int err = aggregator__flush(s->agg, t - 1);

	return err ? err : offcpu__flush(s->off, t - 1);
}

static int setup(struct session *s)
{
	const struct prec_opts *o = s->o;
	int err = record_check_prereqs();

	if (!err)
		err = cgroup_mount__setup(o->all_cgroups, o->cgroup, &s->cgroups, &s->cgroup_fd);
	if (err)
		return err;
	s->ev = event_set__new(o);
	if (!s->ev)
		return -errno;
	s->dt = dso_table__new();
	s->ff = file_features__new(&(struct file_features_config){ .o = o, .dt = s->dt });
	s->targets = target_set__new(o->all_cpus, o->nr_tids > 0);
	if (!s->dt || !s->ff || !s->targets)
		return -ENOMEM;
	s->bpf = bpf_sampler__new(o);
	if (!s->bpf)
		return -errno;
	if (s->cgroup_fd >= 0) {
		err = bpf_sampler__only_cgroup(s->bpf, s->cgroup_fd);
		if (err) {
			pr_err("cannot give the BPF program the cgroup of -G %s: %s", o->cgroup,
			       strerror(-err));
			return err;
		}
	}
	err = setup_unwinder(s);
	if (!err)
		err = target_set__add_opts(s->targets, o, bpf_sampler__targets_fd(s->bpf));
	if (!err && target_set__exec_command(s->targets))
		bpf_sampler__follow_exec(s->bpf, target_set__exec_command(s->targets));
	if (!err)
		err = tracing__new(&s->trace, o, bpf_sampler__targets_fd(s->bpf),
				   target_set__command(s->targets));
	if (!err)
		err = jit_sources__new(&s->jit, &(struct jit_sources_config){
			.o = o, .command = target_set__command(s->targets),
			.stop_requests = record_signals_stop_requests,
		});
	if (!err)
		err = setup_python(s);
	if (!err)
		err = event_set__open(s->ev, bpf_sampler__program(s->bpf));
	if (err)
		return err;
	s->id_type = event_set__id_type(s->ev);
	err = setup_offcpu(s);
	if (err)
		return err;
	/* after the command is forked: libdebuginfod's environment is ours */
	s->df = debug_fetch__new(o, file_features__cache_dir(s->ff));
	file_features__set_debug_fetch(s->ff, s->df);
	err = rotation__new(&s->rot, &(struct rotation_config){
		.o = o, .id_type = s->id_type, .dt = s->dt, .jit = s->jit, .ff = s->ff,
		.hooks = { .ctx = s, .before = before_switch, .begin = begin_file },
	}, clock_ns(CLOCK_MONOTONIC));
	if (err)
		return err;
	s->out = output__create(o->output);
	if (!s->out)
		return -errno;
	err = begin_file(s);	/* the attrs, the room of the features */
	if (!err)
		err = synthesize(s);	/* what exists before the start */
	if (err)
		pr_err("cannot write %s: %s%s", o->output, strerror(-err),
		       err == -ENOSPC || err == -EDQUOT ?
		       "; free some space, or record to another disk with -o" : "");
	return err;
}

/* ---- record ------------------------------------------------------------- */

/* One round: what arrived is queued, what is older than the previous
 * round's mark (and tracing's watermark) flushed. */
static int round_trip(struct session *s, __u64 mark, __u64 prev_mark)
{
	/*
	 * --call-graph ehframe: the first second polls every 10 ms, so that
	 * the command's mappings (side-band) get their tables sooner; until
	 * then its samples have frame pointers only (100 ms cost nofp 3% of
	 * its samples' full stacks).
	 */
	bool early = s->unwind && mark - s->start_ns < 1000000000ULL;
	int err = rings__wait(s->rings, early ? 10 : 100);

	if (err >= 0)
		err = rings__drain(s->rings, s->w);
	if (!err)
		err = aggregator__round(s->agg, clock_ns(CLOCK_MONOTONIC));
	if (!err)
		err = offcpu__round(s->off, clock_ns(CLOCK_MONOTONIC));
	if (!err)
		err = jit_sources__poll(s->jit, s->start_ns);
	if (!err)
		err = rings__report_drops(s->rings, mark);
	if (!err)
		err = output__keep_room(s->out, dso_table__build_id_bytes(s->dt));
	if (!err) {
		__u64 upto = tracing__watermark(s->trace);

		upto = upto < prev_mark ? upto : prev_mark;
		err = perfdata_writer__flush(s->w, upto);
		if (!err && upto > s->flushed_upto)
			s->flushed_upto = upto;
	}
	return err;
}

static int run_loop(struct session *s)
{
	const struct prec_opts *o = s->o;
	__u64 deadline = o->duration > 0 ? s->start_ns + (__u64)(o->duration * 1e9) : 0;
	__u64 prev_mark = 0, last_status = 0;

	while (!record_signals_stop()) {
		__u64 mark = clock_ns(CLOCK_MONOTONIC);
		int err = round_trip(s, mark, prev_mark);

		if (err && perfdata_writer__error(s->w))
			return 0;	/* a full disk: stop, keep what was written */
		if (err) {
			pr_err("recording failed: %s", strerror(-err));
			return err;
		}
		prev_mark = mark;
		if (record_signals_child_exited())
			target_set__reap(s->targets);
		if (target_set__gone(s->targets) || (deadline && mark >= deadline))
			break;
		err = rotation__round(s->rot, &s->out, mark, s->flushed_upto + 1);
		if (err)
			return err;
		if (mark - last_status >= 1000000000ULL) {
			struct record_figures f;

			figures(s, &f);
			status_line__show((double)(clock_ns(CLOCK_MONOTONIC) - s->start_ns) / 1e9, &f);
			last_status = mark;
		}
	}
	return 0;
}

/* The clocks of the start, the stop signals, the command released. */
static int start(struct session *s)
{
	struct timeval tv;
	int err;

	gettimeofday(&tv, NULL);
	s->start_ns = clock_ns(CLOCK_MONOTONIC);
	/* the TIME switches count from here, not from set-up */
	rotation__start(s->rot, s->start_ns);
	file_features__start(s->ff, s->start_ns,
			     (__u64)tv.tv_sec * 1000000000ULL + (__u64)tv.tv_usec * 1000ULL);
	record_signals_catch_stop(s->rot != NULL);
	bpf_sampler__start(s->bpf);
	offcpu__start(s->off);
	err = target_set__release(s->targets);
	if (!err && !s->o->quiet && s->o->verbose)
		pr_info("recording; press Ctrl-C to stop");
	return err;
}

/* ---- finish ------------------------------------------------------------- */

/* After a failed write stopped the data, what is still in the rings and
 * the JIT mappings would not be written: only tracing is finished (for
 * --xray-out), then the features.  A rotating recording's last file gets
 * its timestamped name and is announced. */
static int finish_file(struct session *s)
{
	bool stopped = perfdata_writer__error(s->w) != 0;
	int err;

	err = stopped ? 0 : rings__drain(s->rings, s->w);
	if (!err && !stopped)
		err = aggregator__flush(s->agg, clock_ns(CLOCK_MONOTONIC));
	if (!err && !stopped)
		err = offcpu__flush(s->off, clock_ns(CLOCK_MONOTONIC));
	if (!err)
		err = tracing__finish(s->trace, s->w);
	if (!err && !stopped)
		err = jit_sources__finish(s->jit, s->w, s->id_type, s->dt,
					  file_features__cache_dir(s->ff), s->start_ns);
	if (jit_sources__images_lost(s->jit))
		s->lost_output = true;
	if (!err && !stopped)
		err = rings__report_drops(s->rings, clock_ns(CLOCK_MONOTONIC));
	if (err)
		return err;
	err = file_features__write(s->ff, s->out);
	if (tracing__write_xray(s->trace))
		s->lost_output = true;
	return err ? err : rotation__finish(s->rot, s->out);
}

static void print_summary(struct session *s)
{
	struct record_figures f;
	__u32 capacity;
	__u64 full;

	status_line__erase();
	if (s->o->quiet)
		return;
	figures(s, &f);
	if (log_verbosity > 0)
		tracing__print_stats(s->trace);
	status_line__summary(output__path(s->out), &f);
	unwinder__print_stats(s->unwind);
	if (s->py) {
		struct prec_py_stats py;

		pyprocs__print_stats(s->py, bpf_sampler__py_stats(s->bpf, &py) ? NULL : &py);
	}
	full = bpf_sampler__targets_full(s->bpf, &capacity);
	if (full)
		pr_warn("%llu new processes of the targets were not recorded: more than %u targets were alive at once",
			(unsigned long long)full, capacity);
	aggregator__print_stats(s->agg);
	dso_table__print_stats(s->dt);
	offcpu__print_stats(s->off);
	sample_converter__print_stats(s->conv);
}

/* loop_err: how the loop ended.  *status: the command's exit status. */
static int finish(struct session *s, int loop_err, int *status)
{
	int err = loop_err;

	/* A command that only set the duration (-p/-t/-a) is not waited for;
	 * a recorded command gets SIGTERM passed on, and so it does when a
	 * full disk stopped the recording (as perf record does). */
	target_set__end_command(s->targets, record_signals_stop() == SIGTERM ||
				perfdata_writer__error(s->w));
	event_set__stop(s->ev);
	if (!err)
		err = finish_file(s);
	if (err) {
		pr_err("cannot finish %s: %s", s->o->output, strerror(-err));
		return err;
	}
	debug_fetch__finish(s->df);	/* bounded by --debuginfod-timeout */
	s->df = NULL;
	if (perfdata_writer__error(s->w)) {
		output__report_stopped(s->out, s->trace != NULL);
		return perfdata_writer__error(s->w);
	}
	print_summary(s);
	*status = target_set__wait_command(s->targets);
	rotation__wait_pushes(s->rot);
	if (s->lost_output && !*status)
		*status = 1;
	return 0;
}

static void teardown(struct session *s)
{
	target_set__free(s->targets);	/* a command not run to its end: killed */
	tracing__free(s->trace);
	jit_sources__free(s->jit);
	event_set__free(s->ev);
	bpf_sampler__free(s->bpf);
	aggregator__free(s->agg);
	offcpu__free(s->off);
	rings__free(s->rings);
	sample_converter__free(s->conv);
	unwinder__free(s->unwind);
	pyprocs__free(s->py);
	output__free(s->out);		/* unfinished: removed */
	dso_table__free(s->dt);
	rotation__free(s->rot);
	debug_fetch__finish(s->df);
	file_features__free(s->ff);
	cgroup_mount__free(s->cgroups);
	if (s->cgroup_fd >= 0)
		close(s->cgroup_fd);
}

int record_session__run(const struct prec_opts *o)
{
	struct session s = { .o = o, .cgroup_fd = -1 };
	int err, status = 1;

	log_verbosity = o->quiet ? -1 : o->verbose;
	bpf_sampler__set_logging();
	status_line__start(!o->quiet && isatty(STDERR_FILENO));
	err = setup(&s);
	if (!err)
		err = start(&s);
	if (!err)
		err = finish(&s, run_loop(&s), &status);
	status_line__erase();
	teardown(&s);
	return err ? 1 : status;
}
