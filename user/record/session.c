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
 * With --switch-output the loop also switches files (switch_file): the
 * records before the switch time finish the old file, the new one starts
 * with the state tracked of the live processes (proc_state), and each
 * finished file is announced (file_finished).
 * Teardown frees in reverse order; every free is NULL-safe.  This file
 * alone sees struct session: the objects it holds know only what they are
 * handed.
 */
#include "record/session.h"

#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include "perfdata/buildid_cache.h"
#include "perfdata/features.h"
#include "perfdata/record.h"
#include "perfdata/writer.h"
#include "record/aggregator.h"
#include "record/bpf_sampler.h"
#include "record/cgroups.h"
#include "record/dsos.h"
#include "record/event_set.h"
#include "fleet/pusher.h"
#include "record/file_switch.h"
#include "record/jit_sources.h"
#include "record/output.h"
#include "record/proc_state.h"
#include "record/sample_converter.h"
#include "record/status_line.h"
#include "record/synth.h"
#include "record/target.h"
#include "record/tracing.h"
#include "unwind/unwinder.h"
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
	struct aggregator *agg;		/* NULL: no --aggregate */
	struct unwinder *unwind;	/* NULL: no --call-graph ehframe */
	char *cache_dir;		/* build-id cache, NULL: none */
	struct cgroup_mount *cgroups;	/* --all-cgroups, -G: the cgroup2 mount */
	int cgroup_fd;			/* -G's cgroup, -1: none */
	__u64 id_type;			/* sample_type giving every record's trailer */
	__u64 start_ns, start_tod_ns;	/* CLOCK_MONOTONIC, time of day */
	bool lost_output;		/* JIT images or the XRay log not written */
	/* --switch-output */
	struct file_switch *fsw;	/* NULL: one file */
	struct proc_state *state;	/* the live processes: each file's head */
	struct pbuf kernel_head;	/* the kernel's MMAPs, synthesized once */
	__u64 flushed_upto;		/* records up to here are in the file */
	__u64 file_start;		/* the switch time that began this file */
	__u64 files, switch_ns_max;	/* finished files, the longest switch */
	struct fleet_pusher *pusher;	/* --push: NULL none */
};

/* --push: how long the end of the recording waits for pending pushes. */
#define PUSH_FINAL_WAIT_SECS	10

static volatile sig_atomic_t stop_signal, stop_requests;
static volatile sig_atomic_t child_exited, switch_requested;

static void on_signal(int sig)
{
	stop_signal = sig;
	stop_requests++;
}

/* Long reads of JIT sources stop on a request. */
static unsigned int stop_requests_so_far(void)
{
	return (unsigned int)stop_requests;
}

/* SIGUSR2 (perf's --switch-output signal) and, when rotating, SIGHUP. */
static void on_switch_signal(int sig)
{
	(void)sig;
	switch_requested = 1;
}

static void on_sigchld(int sig)
{
	(void)sig;
	child_exited = 1;
}

static __u64 now_ns(clockid_t clk)
{
	struct timespec ts;

	clock_gettime(clk, &ts);
	return (__u64)ts.tv_sec * 1000000000ULL + (__u64)ts.tv_nsec;
}

static void figures(const struct session *s, struct record_figures *f)
{
	struct sample_counts n;

	sample_converter__counts(s->conv, &n);
	f->samples = n.samples;
	f->lost = n.lost;
	f->bytes = perfdata_writer__file_size(s->w);
	tracing__describe(s->trace, f->calls, sizeof(f->calls));
}

/* What the file's features say of the recording; tod, mono: the clocks
 * at its start (0 when only measuring). */
static void make_env(const struct session *s, struct perfdata_env *env, __u64 tod, __u64 mono)
{
	struct sample_counts n = { 0 };
	struct timespec res;

	if (s->conv)
		sample_converter__counts(s->conv, &n);
	*env = (struct perfdata_env){
		.argc = s->o->argc, .argv = s->o->argv,
		.first_sample_time = n.first_time, .last_sample_time = n.last_time,
		.have_clock = true, .clockid = s->o->clockid,
		.clock_tod_ns = tod, .clock_ns = mono,
	};
	if (!clock_getres(s->o->clockid, &res))
		env->clock_res_ns = (__u64)res.tv_sec * 1000000000ULL + (__u64)res.tv_nsec;
	/* a rotated file: its own part of the samples' times (SAMPLE_TIME) */
	if (s->fsw && env->first_sample_time && env->first_sample_time < s->file_start)
		env->first_sample_time = s->file_start;
}

/* ---- set-up -------------------------------------------------------------- */

static int check_prereqs(void)
{
	if (geteuid() != 0) {
		pr_err("must run as root to load BPF programs and open perf events: try 'sudo precord ...'");
		return -EPERM;
	}
	if (access("/sys/kernel/btf/vmlinux", R_OK)) {
		pr_err("this kernel has no BTF (/sys/kernel/btf/vmlinux is missing): precord needs CONFIG_DEBUG_INFO_BTF=y; run 'precord check'");
		return -ENOENT;
	}
	return 0;
}

/* --call-graph ehframe: every mapping dso_table reads feeds the tables. */
static int setup_unwinder(struct session *s)
{
	struct unwind_map_fds fds;

	if (!s->o->ehframe)
		return 0;
	bpf_sampler__unwind_maps(s->bpf, &fds);
	s->unwind = unwinder__new(&fds);
	if (!s->unwind)
		return -errno;
	dso_table__set_observer(s->dt, &(struct dso_mmap_observer){
		.mapped = unwinder__mmap, .ctx = s->unwind,
	});
	return 0;
}

/* -p/-t targets, and the command, forked to wait for its release. */
static int setup_targets(struct session *s)
{
	const struct prec_opts *o = s->o;
	int map_fd = bpf_sampler__targets_fd(s->bpf);
	int err;

	err = target_set__add_listed(s->targets, o->pids, o->nr_pids, "PID", map_fd);
	if (!err)
		err = target_set__add_listed(s->targets, o->tids, o->nr_tids, "TID", map_fd);
	if (err || !o->cmd)
		return err;
	sigaction(SIGCHLD, &(struct sigaction){ .sa_handler = on_sigchld }, NULL);
	err = target_set__spawn(s->targets, o->cmd);
	if (!err && target_set__exec_command(s->targets))
		bpf_sampler__follow_exec(s->bpf, target_set__exec_command(s->targets));
	return err;
}

static int make_converter(struct session *s)
{
	struct sample_converter_config cfg = {
		.w = s->w, .dt = s->dt, .targets = s->targets,
		.sample_type = event_set__sample_type(s->ev), .id_type = s->id_type,
		.state = s->state,
		.lost_id = event_set__lost_id(s->ev), .callchain = s->o->callchain,
		.data_maps = s->o->dwarf_stack_size != 0,
		.unwind = s->unwind,
		.hook = jit_sources__hook(s->jit),
	};

	cfg.cpu_ids = event_set__cpu_ids(s->ev, &cfg.nr_cpu_ids);
	s->conv = sample_converter__new(&cfg);
	if (!s->conv)
		return -errno;
	bpf_sampler__set_consumer(s->bpf, sample_converter__ring_record, s->conv);
	if (s->o->aggregate) {
		struct agg_maps m;

		bpf_sampler__agg_maps(s->bpf, &m);
		s->agg = aggregator__new_bpf(&m, sample_converter__aggregated, s->conv);
		if (!s->agg)
			return -errno;
	}
	return 0;
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
	if (!err && s->fsw)
		err = pbuf_put(&s->kernel_head, b.data, b.len);
	if (!err)
		err = target_set__synthesize(s->targets, &b, s->id_type, s->dt,
					     s->o->dwarf_stack_size != 0);
	if (!err)
		jit_sources__synthesized(s->jit, b.data, b.len);
	if (!err && s->state)
		err = proc_state__records(s->state, b.data, b.len);
	if (!err)
		err = perfdata_encode_finished_init(&b);
	if (!err)
		err = perfdata_writer__append(s->w, b.data, b.len);
	pbuf_free(&b);
	if (s->unwind)
		unwinder__flush(s->unwind);
	return err;
}

/* The attrs and the room of the features of the file s->w writes. */
static int begin_file(struct session *s)
{
	struct perfdata_env env;
	/*
	 * perf script -F +uregs (how --trace-args shows arguments) wants the
	 * first event of each built-in type to have user registers too: the
	 * file's copies of these attrs say so, and their samples carry an
	 * empty register set.
	 */
	int err = event_set__add_evsel(s->ev, s->w,
				       s->o->trace_args ? PERF_SAMPLE_REGS_USER : 0);

	if (!err)
		err = tracing__add_evsels(s->trace, s->w);
	if (err < 0)
		return err;
	err = s->conv ? 0 : make_converter(s);
	if (!err)
		err = perfdata_writer__begin(s->w);
	make_env(s, &env, 0, 0);
	if (!err)
		err = output__reserve_features(s->out, &env, dso_table__build_id_bytes(s->dt));
	perfdata_writer__set_rounds(s->w, !s->o->jit);
	return err;
}

/* --all-cgroups and -G: the cgroup2 mount, -G's cgroup open. */
static int setup_cgroups(struct session *s)
{
	const struct prec_opts *o = s->o;

	if (!o->all_cgroups && !o->cgroup)
		return 0;
	s->cgroups = cgroup_mount__find();
	if (!s->cgroups)
		return -ENOENT;
	if (o->cgroup) {
		s->cgroup_fd = cgroup_mount__open(s->cgroups, o->cgroup);
		if (s->cgroup_fd < 0)
			return s->cgroup_fd;
	}
	return 0;
}

/* The attrs, the room of the features, what exists before the start. */
static int write_head(struct session *s)
{
	int err = begin_file(s);

	return err ? err : synthesize(s);
}

static int make_switch(struct session *s)
{
	const struct prec_opts *o = s->o;

	s->fsw = file_switch__new(&(struct file_switch_config){
		.output = o->output, .every_ns = (__u64)(o->switch_secs * 1e9),
		.bytes = o->switch_bytes, .on_signal = o->switch_signal,
		.max_files = o->switch_max_files,
	}, now_ns(CLOCK_MONOTONIC));
	return s->fsw ? 0 : -ENOMEM;
}

static int setup(struct session *s)
{
	const struct prec_opts *o = s->o;
	int err = check_prereqs();

	if (!err)
		err = setup_cgroups(s);
	if (err)
		return err;
	s->ev = event_set__new(o);
	if (!s->ev)
		return -errno;
	s->dt = dso_table__new();
	s->targets = target_set__new(o->all_cpus, o->nr_tids > 0);
	if (!s->dt || !s->targets)
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
		err = setup_targets(s);
	if (!err)
		err = tracing__new(&s->trace, o, bpf_sampler__targets_fd(s->bpf),
				   target_set__command(s->targets));
	if (!err)
		err = jit_sources__new(&s->jit, &(struct jit_sources_config){
			.o = o, .command = target_set__command(s->targets),
			.stop_requests = stop_requests_so_far,
		});
	if (!err)
		err = event_set__open(s->ev, bpf_sampler__program(s->bpf));
	if (err)
		return err;
	s->id_type = event_set__id_type(s->ev);
	if (o->switch_secs || o->switch_bytes || o->switch_signal) {
		s->state = proc_state__new(s->id_type);
		err = s->state ? make_switch(s) : -ENOMEM;
		if (err)
			return err;
	}
	if (o->push_url && !(s->pusher = fleet_pusher__new(o->push_url, o->host)))
		return -ENOMEM;
	s->out = output__create(o->output);
	if (!s->out)
		return -errno;
	s->w = output__writer(s->out);
	err = write_head(s);
	if (err)
		pr_err("cannot write %s: %s%s", o->output, strerror(-err),
		       err == -ENOSPC || err == -EDQUOT ?
		       "; free some space, or record to another disk with -o" : "");
	return err;
}

/* ---- record ------------------------------------------------------------- */

static int drain(struct session *s)
{
	int err = event_set__drain_sideband(s->ev, sample_converter__sideband_record, s->conv);

	if (err >= 0 && s->unwind)
		unwinder__flush(s->unwind);
	if (err >= 0)
		err = bpf_sampler__consume(s->bpf);
	if (err >= 0)
		err = tracing__consume(s->trace, s->w);
	return err < 0 ? err : 0;
}

/*
 * --aggregate: the samples counted in the kernel so far go into the file
 * now, at time (now: later than any of them, and than what the writer
 * has flushed).  The one flush of the aggregation: each second and when
 * the maps fill (aggregate_round), at the finish, before a file switch.
 */
static int aggregate_flush(struct session *s, __u64 time)
{
	int err = s->agg ? aggregator__flush(s->agg, time) : 0;

	if (err)
		pr_err("cannot drain the aggregation maps: %s", strerror(-err));
	return err;
}

static int aggregate_round(struct session *s, __u64 time)
{
	struct prec_agg_stats st;
	int err;

	if (!s->agg)
		return 0;
	err = bpf_sampler__agg_stats(s->bpf, &st);
	if (!err && aggregator__due(s->agg, &st, time))
		err = aggregate_flush(s, time);
	return err;
}

/* Samples dropped (BPF's ring, tracing's) since the last call: recorded. */
static int report_drops(struct session *s, __u64 time)
{
	return sample_converter__report_lost(s->conv, bpf_sampler__drops(s->bpf) +
					     tracing__lost(s->trace), time);
}

/* Sleep until a ring has data or timeout_ms passes. */
static int wait_for_data(struct session *s, int timeout_ms)
{
	struct pollfd p[2] = {
		{ .fd = bpf_sampler__epoll_fd(s->bpf), .events = POLLIN },
		{ .fd = tracing__fd(s->trace), .events = POLLIN },
	};

	if (poll(p, p[1].fd >= 0 ? 2 : 1, timeout_ms) < 0 && errno != EINTR)
		return -errno;
	return 0;
}

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
	int err = wait_for_data(s, early ? 10 : 100);

	if (err >= 0)
		err = drain(s);
	if (!err)
		err = aggregate_round(s, now_ns(CLOCK_MONOTONIC));
	if (!err)
		err = jit_sources__poll(s->jit, s->start_ns);
	if (!err)
		err = report_drops(s, mark);
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

/* ---- file switch (--switch-output) ------------------------------------- */

static const char *cache_dir(struct session *s)
{
	if (!s->cache_dir && !s->o->no_buildid_cache)
		s->cache_dir = buildid_cache_dir(s->o->buildid_dir);
	return s->cache_dir;
}

/*
 * Right before a file switch at time t: what is kept back from the
 * writer's queue must be queued now, with a time < t, to go into the
 * finishing file: --aggregate's in-kernel counts, at t - 1 (the last
 * flush's mark, so no older than anything the writer has written).
 */
static int before_switch(struct session *s, __u64 t)
{
	return aggregate_flush(s, t - 1);
}

/*
 * A file is complete at path: the one place that announces it.  A line
 * with its path on stdout (scripts read it: `precord ... | while read f`),
 * then --switch-max-files removes the oldest.  Other consumers of
 * finished files (a fleet store) hook here.
 */
static void file_finished(struct session *s, const char *path)
{
	s->files++;
	printf("%s\n", path);
	fflush(stdout);
	if (s->pusher)
		fleet_pusher__add(s->pusher, path);
	file_switch__kept(s->fsw, path);
}

/* The DSO table and the JIT sources forget a process proc_state freed. */
static void forget_pid(void *ctx, __u32 pid)
{
	struct session *s = ctx;

	dso_table__forget(s->dt, pid);
	jit_sources__forget(s->jit, pid);
}

/* The features of the file old writes (records up to the switch). */
/* The features of out: the build-ids of the DSOs its samples hit. */
static int write_features(struct session *s, struct output *out)
{
	const struct perfdata_build_id *ids = NULL;
	size_t nr_ids = 0;
	struct perfdata_env env;
	int err = dso_table__finish(s->dt, cache_dir(s), true, &ids, &nr_ids);

	if (err)
		return err;
	make_env(s, &env, s->start_tod_ns, s->start_ns);
	env.build_ids = ids;
	env.nr_build_ids = nr_ids;
	return output__finish(out, &env);
}

static int finish_rotated(struct session *s, struct output *old, struct perfdata_writer *w,
			  __u64 t)
{
	struct jit_cut cut = { .before = t, .file = (__u32)(s->files + 1) };
	int err = jit_sources__checkpoint(s->jit, w, s->id_type, s->dt, cache_dir(s), s->start_ns,
					  cut);

	return err ? err : write_features(s, old);
}

/* The next file: created under -o, its head the tracked state at t. */
static int open_next(struct session *s, __u64 t)
{
	struct pbuf b = { 0 };
	int err;

	s->out = output__create(s->o->output);
	if (!s->out)
		return -errno;
	s->w = output__writer(s->out);
	err = begin_file(s);
	if (!err)
		err = pbuf_put(&b, s->kernel_head.data, s->kernel_head.len);
	if (!err)
		err = proc_state__synthesize(s->state, &b, t);
	if (!err)
		err = perfdata_encode_finished_init(&b);
	if (!err)
		err = perfdata_writer__append(s->w, b.data, b.len);
	pbuf_free(&b);
	return err;
}

/*
 * Switch at t = one past the last flush's mark: every record with time
 * < t has been read from the rings (the flush's own rule) and goes to
 * the old file, the rest to the new one.  The old file is renamed
 * first, so the new one takes -o's name; the rings are not read during
 * the switch (docs/benchmarks.md: how long it takes, what the ring holds).
 */
static int switch_file(struct session *s)
{
	__u64 t = s->flushed_upto + 1, t0 = now_ns(CLOCK_MONOTONIC);
	struct output *old = s->out;
	struct perfdata_writer *old_w = s->w;
	char name[4096];
	int err;

	err = before_switch(s, t);
	if (!err)
		err = file_switch__name(s->fsw, now_ns(CLOCK_REALTIME), name, sizeof(name));
	if (!err)
		err = output__rename(old, name);
	if (err)
		return err;
	err = open_next(s, t);
	if (!err)
		err = perfdata_writer__hand_over(old_w, s->w, t);
	if (!err) {
		sample_converter__set_writer(s->conv, s->w);
		err = finish_rotated(s, old, old_w, t);
	}
	if (!err) {
		__u64 keep = (__u64)s->o->switch_max_files;

		file_finished(s, name);
		if (keep && s->files >= keep)	/* files 1 .. files - keep removed */
			jit_sources__prune(s->jit, (__u32)(s->files - keep + 1), cache_dir(s));
	} else if (!s->out)
		s->out = old, s->w = old_w, old = NULL;	/* keep writing the old one */
	output__free(old);	/* unfinished: removed */
	if (err)
		return err;
	proc_state__collect(s->state, t, forget_pid, s);
	jit_sources__collect(s->jit);
	dso_table__new_file(s->dt);
	s->file_start = t;
	t0 = now_ns(CLOCK_MONOTONIC) - t0;
	if (t0 > s->switch_ns_max)
		s->switch_ns_max = t0;
	if (log_verbosity > 1) {
		struct proc_state_stats st = proc_state__stats(s->state);

		pr_debug("switched files in %.1f ms; tracked: %zu processes, %zu threads, %zu mappings",
			 (double)t0 / 1e6, st.procs, st.threads, st.maps);
	}
	file_switch__started(s->fsw, now_ns(CLOCK_MONOTONIC));
	return 0;
}

static int run_loop(struct session *s)
{
	const struct prec_opts *o = s->o;
	__u64 deadline = o->duration > 0 ? s->start_ns + (__u64)(o->duration * 1e9) : 0;
	__u64 prev_mark = 0, last_status = 0;

	while (!stop_signal) {
		__u64 mark = now_ns(CLOCK_MONOTONIC);
		int err = round_trip(s, mark, prev_mark);

		if (err && perfdata_writer__error(s->w))
			return 0;	/* a full disk: stop, keep what was written */
		if (err) {
			pr_err("recording failed: %s", strerror(-err));
			return err;
		}
		prev_mark = mark;
		if (child_exited)
			target_set__reap(s->targets);
		if (target_set__gone(s->targets) || (deadline && mark >= deadline))
			break;
		if (s->fsw && file_switch__due(s->fsw, mark, perfdata_writer__data_size(s->w),
					       switch_requested)) {
			switch_requested = 0;
			err = switch_file(s);
			if (err) {
				pr_err("cannot switch to a new %s: %s", o->output, strerror(-err));
				return err;
			}
		}
		if (mark - last_status >= 1000000000ULL) {
			struct record_figures f;

			figures(s, &f);
			status_line__show((double)(now_ns(CLOCK_MONOTONIC) - s->start_ns) / 1e9, &f);
			last_status = mark;
		}
	}
	return 0;
}

/* The clocks of the start, the stop signals, the command released. */
static int start(struct session *s)
{
	struct sigaction sa = { .sa_handler = on_signal };
	struct timeval tv;
	int err;

	gettimeofday(&tv, NULL);
	s->start_ns = now_ns(CLOCK_MONOTONIC);
	if (s->fsw)	/* the TIME switches count from here, not from set-up */
		file_switch__start(s->fsw, s->start_ns);
	s->start_tod_ns = (__u64)tv.tv_sec * 1000000000ULL + (__u64)tv.tv_usec * 1000ULL;
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	/* SIGHUP: with --switch-output a switch now (as log daemons reopen
	 * their files on HUP), else a stop (the terminal went away). */
	sigaction(SIGHUP, s->fsw ? &(struct sigaction){ .sa_handler = on_switch_signal } : &sa,
		  NULL);
	if (s->fsw)
		sigaction(SIGUSR2, &(struct sigaction){ .sa_handler = on_switch_signal }, NULL);
	err = target_set__release(s->targets);
	if (!err && !s->o->quiet && s->o->verbose)
		pr_info("recording; press Ctrl-C to stop");
	return err;
}

/* ---- finish ------------------------------------------------------------- */

/* A rotating recording's last file gets its timestamped name too (as
 * perf names it) and is announced. */
static int finish_last_rotated(struct session *s)
{
	char name[4096];
	int err;

	if (!s->fsw)
		return 0;
	err = file_switch__name(s->fsw, now_ns(CLOCK_REALTIME), name, sizeof(name));
	if (!err)
		err = output__rename(s->out, name);
	if (!err)
		file_finished(s, name);
	if (s->files > 1)
		pr_debug("%llu files; the longest switch took %.1f ms",
			 (unsigned long long)s->files, (double)s->switch_ns_max / 1e6);
	return err;
}

/* After a failed write stopped the data, what is still in the rings and
 * the JIT mappings would not be written: only tracing is finished (for
 * --xray-out), then the features. */
static int finish_file(struct session *s)
{
	bool stopped = perfdata_writer__error(s->w) != 0;
	int err;

	err = stopped ? 0 : drain(s);
	if (!err && !stopped)
		err = aggregate_flush(s, now_ns(CLOCK_MONOTONIC));
	if (!err)
		err = tracing__finish(s->trace, s->w);
	if (!err && !stopped)
		err = jit_sources__finish(s->jit, s->w, s->id_type, s->dt, cache_dir(s),
					  s->start_ns);
	if (jit_sources__images_lost(s->jit))
		s->lost_output = true;
	if (!err && !stopped)
		err = report_drops(s, now_ns(CLOCK_MONOTONIC));
	if (err)
		return err;
	err = write_features(s, s->out);
	if (tracing__write_xray(s->trace))
		s->lost_output = true;
	return err ? err : finish_last_rotated(s);
}

/* What --aggregate did (-v), and always what it could not count. */
static void print_aggregation(const struct session *s)
{
	struct prec_agg_stats st;
	struct agg_counts n;

	if (!s->agg || bpf_sampler__agg_stats(s->bpf, &st))
		return;
	aggregator__counts(s->agg, &n);
	if (log_verbosity > 0)
		pr_info("aggregate: %llu samples taken; %llu counted in the kernel, written as %llu samples in %llu flushes (%llu early)",
			(unsigned long long)st.taken, (unsigned long long)n.samples,
			(unsigned long long)n.records, (unsigned long long)n.flushes,
			(unsigned long long)n.early_flushes);
	if (st.full)
		pr_warn("aggregate: %llu samples were written one by one, the kernel's map being full (%llu early flushes); none lost",
			(unsigned long long)st.full, (unsigned long long)n.early_flushes);
	if (n.missing_stacks)
		pr_warn("aggregate: %llu counts were written without their call chain (their stack was not found)",
			(unsigned long long)n.missing_stacks);
}

static void print_summary(struct session *s)
{
	struct record_figures f;
	struct sample_counts n;
	__u32 capacity;
	__u64 full;

	status_line__erase();
	if (s->o->quiet)
		return;
	figures(s, &f);
	if (log_verbosity > 0)
		tracing__print_stats(s->trace);
	status_line__summary(output__path(s->out), &f);
	if (s->unwind)
		unwinder__print_stats(s->unwind);
	full = bpf_sampler__targets_full(s->bpf, &capacity);
	if (full)
		pr_warn("%llu new processes of the targets were not recorded: more than %u targets were alive at once",
			(unsigned long long)full, capacity);
	print_aggregation(s);
	sample_converter__counts(s->conv, &n);
	if (n.bad_records)
		pr_warn("%llu malformed records from the kernel were skipped",
			(unsigned long long)n.bad_records);
}

/* loop_err: how the loop ended.  *status: the command's exit status. */
static int finish(struct session *s, int loop_err, int *status)
{
	int err = loop_err;

	/* A command that only set the duration (-p/-t/-a) is not waited for;
	 * a recorded command gets SIGTERM passed on, and so it does when a
	 * full disk stopped the recording (as perf record does). */
	target_set__end_command(s->targets, stop_signal == SIGTERM || perfdata_writer__error(s->w));
	event_set__stop(s->ev);
	if (!err)
		err = finish_file(s);
	if (err) {
		pr_err("cannot finish %s: %s", s->o->output, strerror(-err));
		return err;
	}
	if (perfdata_writer__error(s->w)) {
		output__report_stopped(s->out, s->trace != NULL);
		return perfdata_writer__error(s->w);
	}
	print_summary(s);
	*status = target_set__wait_command(s->targets);
	fleet_pusher__finish(s->pusher, PUSH_FINAL_WAIT_SECS);
	s->pusher = NULL;
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
	sample_converter__free(s->conv);
	unwinder__free(s->unwind);
	output__free(s->out);		/* unfinished: removed */
	dso_table__free(s->dt);
	proc_state__free(s->state);
	pbuf_free(&s->kernel_head);
	file_switch__free(s->fsw);
	fleet_pusher__finish(s->pusher, 0);
	free(s->cache_dir);
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
