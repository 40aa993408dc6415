// SPDX-License-Identifier: GPL-2.0
/*
 * One recording, top to bottom:
 *   check prerequisites → open+configure+load BPF → targets → output file →
 *   attrs → synthesize what exists → side-band + sampling events → start the
 *   command → poll loop (rings, flush, status) → stop → drain → JIT and
 *   tracing finish → features → summary.
 * Teardown runs in reverse order; every free is NULL-safe.
 */
#include "record/session.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <bpf/libbpf.h>
#include <bpf/bpf.h>

#include "precord/bpf_abi.h"
#include "precord/perf_file.h"
#include "perfdata/buildid_cache.h"
#include "record/bpf_sampler.h"
#include "perfdata/record.h"
#include "perfdata/writer.h"
#include "record/dsos.h"
#include "record/event_set.h"
#include "record/jit_sources.h"
#include "record/sample_converter.h"
#include "record/session_int.h"
#include "record/synth.h"
#include "record/target.h"
#include "record/tracing.h"
#include "util/array.h"
#include "util/log.h"

static volatile sig_atomic_t stop_signal, stop_requests;
static volatile sig_atomic_t child_exited;

static void on_signal(int sig)
{
	stop_signal = sig;
	stop_requests++;
}

static unsigned int stop_requests_so_far(void)
{
	return (unsigned int)stop_requests;
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

/* ---- status line ------------------------------------------------------ */

static bool status_on;
static bool status_shown;

static void status_erase(void)
{
	if (status_shown) {
		fputs("\r\033[K", stderr);
		status_shown = false;
	}
}

static void status_show(struct session *s)
{
	double secs = (double)(now_ns(CLOCK_MONOTONIC) - s->start_ns) / 1e9;
	struct sample_counts n;
	char calls[48] = "";

	if (!status_on)
		return;
	sample_converter__counts(s->conv, &n);
	tracing__describe(s->trace, calls, sizeof(calls));
	fprintf(stderr, "\r\033[K[ precord: %.1f s, %llu samples%s, %.3f MB, %llu lost ]",
		secs, (unsigned long long)n.samples, calls,
		(double)perfdata_writer__file_size(s->w) / (1024.0 * 1024.0),
		(unsigned long long)n.lost);
	status_shown = true;
}

/* ---- prerequisites ---------------------------------------------------- */

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

/* ---- output ------------------------------------------------------------ */

/* The JIT images of perf.data live in perf.data.jit: they follow the file
 * to perf.data.old.jit (what is in the way there is kept, with a warning). */
static void rotate_jit_dir(const char *path, const char *old)
{
	char *from = NULL, *to = NULL;
	struct stat st;

	if (asprintf(&from, "%s.jit", path) >= 0 && asprintf(&to, "%s.jit", old) >= 0 &&
	    !lstat(from, &st) && S_ISDIR(st.st_mode) && rename(from, to))
		pr_warn("cannot rename %s to %s: %s; its JIT images may be mixed with new ones",
			from, to, strerror(errno));
	free(from);
	free(to);
}

static int open_output(struct session *s)
{
	const char *path = s->o->output;
	struct stat st;
	char *old;

	if (!lstat(path, &st)) {
		if (!S_ISREG(st.st_mode)) {
			pr_err("cannot write %s: it exists and is not a regular file", path);
			return -EEXIST;
		}
		if (asprintf(&old, "%s.old", path) < 0)
			return -ENOMEM;
		if (rename(path, old)) {
			int err = -errno;

			pr_err("cannot rename %s to %s: %s", path, old, strerror(-err));
			free(old);
			return err;
		}
		rotate_jit_dir(path, old);
		free(old);
	}
	s->out_fd = open(path, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (s->out_fd < 0) {
		int err = -errno;

		pr_err("cannot create %s: %s; choose another file with -o", path, strerror(-err));
		return err;
	}
	s->out_path = strdup(path);
	s->w = perfdata_writer__new(s->out_fd);
	if (!s->w || !s->out_path)
		return -ENOMEM;
	s->out_fd = -1;		/* owned by the writer */
	return 0;
}

static void discard_output(struct session *s)
{
	if (s->out_path) {
		unlink(s->out_path);
		free(s->out_path);
		s->out_path = NULL;
	}
}

static int add_evsels(struct session *s)
{
	/*
	 * perf script -F +uregs (how --trace-args shows arguments) wants the
	 * first event of each built-in type to have user registers too: the
	 * file's copies of these attrs say so, and their samples carry an
	 * empty register set.
	 */
	int err = event_set__add_evsel(s->ev, s->w, s->o->trace_args ? PERF_SAMPLE_REGS_USER : 0);

	if (err)
		return err;
	err = tracing__add_evsels(s->trace, s->w);
	return err < 0 ? err : 0;
}

static int make_converter(struct session *s)
{
	struct sample_converter_config cfg = {
		.w = s->w, .dt = s->dt, .targets = s->targets,
		.sample_type = event_set__sample_type(s->ev), .id_type = s->id_type,
		.lost_id = event_set__lost_id(s->ev), .callchain = s->o->callchain,
		.hook = jit_sources__hook(s->jit),
	};

	cfg.cpu_ids = event_set__cpu_ids(s->ev, &cfg.nr_cpu_ids);
	s->conv = sample_converter__new(&cfg);
	if (!s->conv)
		return -errno;
	bpf_sampler__set_consumer(s->bpf, sample_converter__ring_record, s->conv);
	return 0;
}

static int synthesize(struct session *s)
{
	struct pbuf b = { 0 };
	int err = synth_kernel(&b, s->id_type);

	if (!err)
		err = target_set__synthesize(s->targets, &b, s->id_type, s->dt);
	if (!err)
		err = perfdata_encode_finished_init(&b);
	if (!err)
		err = perfdata_writer__append(s->w, b.data, b.len);
	pbuf_free(&b);
	return err;
}

/* ---- a full disk -------------------------------------------------------- */

/*
 * The feature section is measured once at the start (BUILD_ID aside) and
 * its room is kept past the data all along, grown with the BUILD_ID
 * entries of the DSOs seen; the slack covers what may change meanwhile
 * (host name, PMUs: a few strings of 64 bytes).
 */
#define FEATURES_SLACK	4096

static void make_env(struct session *s, struct perfdata_env *env, __u64 tod, __u64 mono)
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
}

static int keep_feature_room(struct session *s)
{
	return perfdata_writer__reserve(s->w, s->features_bytes +
					dso_table__build_id_bytes(s->dt));
}

static int reserve_features(struct session *s)
{
	struct perfdata_env env;

	make_env(s, &env, 0, 0);
	s->features_bytes = perfdata_writer__features_size(s->w, &env) + FEATURES_SLACK;
	return keep_feature_room(s);
}

/* The data stopped at a failed write: one line, what is kept. */
static void report_stopped(struct session *s)
{
	int err = perfdata_writer__error(s->w);
	bool full = err == -ENOSPC || err == -EDQUOT;

	pr_err("%s %s (%s): recording stopped; kept %llu samples%s up to the last complete flush; %s",
	       err == -ENOSPC ? "disk full writing" : err == -EDQUOT ?
	       "disk quota exceeded writing" : "cannot write",
	       s->o->output, strerror(-err), (unsigned long long)perfdata_writer__samples(s->w),
	       s->trace ? " (traced entries and returns included)" : "",
	       full ? "free some space, or record to another disk with -o" :
		      "check the disk, or record to another with -o");
}

/* ---- the loop ---------------------------------------------------------- */

/* Samples dropped (BPF's ring, tracing's) since the last call: recorded. */
static int report_drops(struct session *s, __u64 time)
{
	return sample_converter__report_lost(s->conv, bpf_sampler__drops(s->bpf) +
					     tracing__lost(s->trace), time);
}

static int drain(struct session *s)
{
	int err = event_set__drain_sideband(s->ev, sample_converter__sideband_record, s->conv);

	if (err >= 0)
		err = bpf_sampler__consume(s->bpf);
	if (err >= 0)
		err = tracing__consume(s->trace, s->w);
	return err < 0 ? err : 0;
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

static int run_loop(struct session *s)
{
	const struct prec_opts *o = s->o;
	__u64 deadline = o->duration > 0 ? s->start_ns + (__u64)(o->duration * 1e9) : 0;
	__u64 prev_mark = 0, last_status = 0;
	int err = 0;

	while (!stop_signal) {
		__u64 mark = now_ns(CLOCK_MONOTONIC);

		err = wait_for_data(s, 100);
		if (err >= 0)
			err = drain(s);
		if (!err)
			err = jit_sources__poll(s->jit, s->start_ns);
		if (!err)
			err = report_drops(s, mark);
		if (!err)
			err = keep_feature_room(s);
		if (!err) {
			__u64 upto = tracing__watermark(s->trace);

			err = perfdata_writer__flush(s->w, upto < prev_mark ? upto : prev_mark);
		}
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
		if (mark - last_status >= 1000000000ULL) {
			status_show(s);
			last_status = mark;
		}
	}
	return 0;
}

/* ---- teardown ---------------------------------------------------------- */

/* After a failed write stopped the data, what is still in the rings and
 * the JIT mappings would not be written: only tracing is finished (for
 * --xray-out), then the features. */
static int finish_file(struct session *s, __u64 tod, __u64 mono)
{
	const struct perfdata_build_id *ids = NULL;
	bool stopped = perfdata_writer__error(s->w) != 0;
	size_t nr_ids = 0;
	struct perfdata_env env;
	int err;

	if (!s->o->no_buildid_cache)
		s->cache_dir = buildid_cache_dir(s->o->buildid_dir);
	err = stopped ? 0 : drain(s);
	if (!err)
		err = tracing__finish(s->trace, s->w);
	if (!err && !stopped)
		err = jit_sources__finish(s->jit, s->w, s->id_type, s->dt, s->cache_dir,
					  s->start_ns);
	if (jit_sources__images_lost(s->jit))
		s->lost_output = true;
	if (!err && !stopped)
		err = report_drops(s, now_ns(CLOCK_MONOTONIC));
	if (err)
		return err;
	err = dso_table__finish(s->dt, s->cache_dir, true, &ids, &nr_ids);
	if (err)
		return err;
	make_env(s, &env, tod, mono);
	env.build_ids = ids;
	env.nr_build_ids = nr_ids;
	err = perfdata_writer__finish(s->w, &env);
	if (tracing__write_xray(s->trace))
		s->lost_output = true;
	return err;
}

static void teardown(struct session *s)
{
	tracing__free(s->trace);
	jit_sources__free(s->jit);
	event_set__free(s->ev);
	bpf_sampler__free(s->bpf);
	perfdata_writer__free(s->w);
	dso_table__free(s->dt);
	sample_converter__free(s->conv);
	free(s->out_path);
	free(s->cache_dir);
}

static void print_summary(struct session *s)
{
	char extra[96] = "";
	struct sample_counts n;
	__u32 capacity;
	__u64 full;

	status_erase();
	if (s->o->quiet)
		return;
	sample_converter__counts(s->conv, &n);
	tracing__describe(s->trace, extra, sizeof(extra));
	if (log_verbosity > 0)
		tracing__print_stats(s->trace);
	fprintf(stderr, "[ precord: Captured and wrote %.3f MB %s (%llu samples%s, %llu lost) ]\n",
		(double)perfdata_writer__file_size(s->w) / (1024.0 * 1024.0), s->o->output,
		(unsigned long long)n.samples, extra, (unsigned long long)n.lost);
	full = bpf_sampler__targets_full(s->bpf, &capacity);
	if (full)
		pr_warn("%llu new processes of the targets were not recorded: more than %u targets were alive at once",
			(unsigned long long)full, capacity);
	if (n.bad_records)
		pr_warn("%llu malformed records from the kernel were skipped",
			(unsigned long long)n.bad_records);
}

static int setup_targets(struct session *s)
{
	const struct prec_opts *o = s->o;
	int map_fd = bpf_sampler__targets_fd(s->bpf);
	int err;

	err = target_set__add_listed(s->targets, o->pids, o->nr_pids, "PID", map_fd);
	if (!err)
		err = target_set__add_listed(s->targets, o->tids, o->nr_tids, "TID", map_fd);
	return err;
}

static int start_command(struct session *s)
{
	int err = target_set__spawn(s->targets, s->o->cmd);

	if (!err && target_set__exec_command(s->targets))
		bpf_sampler__follow_exec(s->bpf, target_set__exec_command(s->targets));
	return err;
}

int record_session__run(const struct prec_opts *o)
{
	struct session s = { .o = o, .out_fd = -1 };
	struct sigaction sa = { .sa_handler = on_signal };
	__u64 tod, mono;
	int err, status = 1;
	bool output_made = false;

	log_verbosity = o->quiet ? -1 : o->verbose;
	bpf_sampler__set_logging();
	status_on = !o->quiet && isatty(STDERR_FILENO);
	log_before_print = status_erase;
	s.all = o->all_cpus;
	s.by_tid = o->nr_tids > 0;

	err = check_prereqs();
	if (err)
		goto out;
	s.ev = event_set__new(o);
	if (!s.ev) {
		err = -errno;
		goto out;
	}
	s.dt = dso_table__new();
	s.targets = target_set__new(s.all, s.by_tid);
	if (!s.dt || !s.targets) {
		err = -ENOMEM;
		goto out;
	}

	s.bpf = bpf_sampler__new(o);
	if (!s.bpf) {
		err = -errno;
		goto out;
	}
	err = setup_targets(&s);
	if (!err && o->cmd) {
		sigaction(SIGCHLD, &(struct sigaction){ .sa_handler = on_sigchld }, NULL);
		err = start_command(&s);
	}
	if (!err)
		err = tracing__new(&s.trace, o, bpf_sampler__targets_fd(s.bpf),
				   target_set__command(s.targets));
	if (!err)
		err = jit_sources__new(&s.jit, &(struct jit_sources_config){
			.o = o, .command = target_set__command(s.targets),
			.stop_requests = stop_requests_so_far,
		});
	if (err)
		goto out;

	err = event_set__open(s.ev, bpf_sampler__program(s.bpf));
	if (err)
		goto out;
	s.id_type = event_set__id_type(s.ev);
	err = open_output(&s);
	if (err)
		goto out;
	output_made = true;
	err = add_evsels(&s);
	if (!err)
		err = make_converter(&s);
	if (!err)
		err = perfdata_writer__begin(s.w);
	if (!err)
		err = reserve_features(&s);
	if (!err)
		err = synthesize(&s);
	if (err) {
		pr_err("cannot write %s: %s%s", o->output, strerror(-err),
		       err == -ENOSPC || err == -EDQUOT ?
		       "; free some space, or record to another disk with -o" : "");
		goto out;
	}
	perfdata_writer__set_rounds(s.w, !o->jit);
	{
		struct timeval tv;

		gettimeofday(&tv, NULL);
		mono = now_ns(CLOCK_MONOTONIC);
		tod = (__u64)tv.tv_sec * 1000000000ULL + (__u64)tv.tv_usec * 1000ULL;
	}
	s.start_ns = mono;
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	err = target_set__release(s.targets);
	if (err)
		goto out;
	if (!o->quiet && o->verbose)
		pr_info("recording; press Ctrl-C to stop");
	err = run_loop(&s);
	/* A command that only set the duration (-p/-t/-a) is not waited for;
	 * a recorded command gets SIGTERM passed on, and so it does when a
	 * full disk stopped the recording (as perf record does). */
	target_set__end_command(s.targets, stop_signal == SIGTERM || perfdata_writer__error(s.w));
	event_set__stop(s.ev);
	if (!err)
		err = finish_file(&s, tod, mono);
	if (err) {
		pr_err("cannot finish %s: %s", o->output, strerror(-err));
		goto out;
	}
	output_made = false;
	if (perfdata_writer__error(s.w)) {
		report_stopped(&s);
		err = perfdata_writer__error(s.w);
		goto out;
	}
	print_summary(&s);
	status = target_set__wait_command(s.targets);
	if (s.lost_output && !status)
		status = 1;
out:
	status_erase();
	target_set__free(s.targets);
	if (output_made)
		discard_output(&s);
	teardown(&s);
	return err ? 1 : status;
}
