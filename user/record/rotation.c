// SPDX-License-Identifier: GPL-2.0
#include "record/rotation.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fleet/pusher.h"
#include "perfdata/record.h"
#include "perfdata/writer.h"
#include "record/dsos.h"
#include "record/file_features.h"
#include "record/file_switch.h"
#include "record/jit_sources.h"
#include "record/output.h"
#include "record/proc_state.h"
#include "record/signals.h"
#include "report/symbolizer.h"
#include "util/buf.h"
#include "util/clock.h"
#include "util/log.h"

/* --push: how long the end of the recording waits for pending pushes. */
#define PUSH_FINAL_WAIT_SECS	10
/* OUT.<timestamp>.1 .. .N tried when another made OUT.<timestamp> */
#define ROTATED_NAME_TRIES	99

struct rotation {
	struct rotation_config cfg;
	struct file_switch *fsw;
	struct proc_state *state;	/* the live processes: each file's head */
	struct pbuf kernel_head;	/* the kernel's MMAPs, synthesized once */
	struct fleet_pusher *pusher;	/* --push: NULL none */
	__u64 start_ns;			/* the recording's start */
	__u64 files, switch_ns_max;	/* finished files, the longest switch */
};

int rotation__new(struct rotation **out, const struct rotation_config *cfg, __u64 now_ns)
{
	const struct prec_opts *o = cfg->o;
	struct rotation *r;

	*out = NULL;
	if (!o->switch_secs && !o->switch_bytes && !o->switch_signal)
		return 0;
	r = calloc(1, sizeof(*r));
	if (!r)
		return -ENOMEM;
	r->cfg = *cfg;
	r->state = proc_state__new(cfg->id_type);
	if (r->state)
		r->fsw = file_switch__new(&(struct file_switch_config){
			.output = o->output, .every_ns = (__u64)(o->switch_secs * 1e9),
			.bytes = o->switch_bytes, .on_signal = o->switch_signal,
			.max_files = o->switch_max_files,
		}, now_ns);
	if (r->fsw && o->push_url) {
		/* the push thread names stripped code as the recorder does */
		sym_cache__set_debug_defaults(o->debug_root, o->no_debuginfod,
					      o->debuginfod_timeout, o->debuginfod_max);
		r->pusher = fleet_pusher__new(o->push_url, o->host, o->buildid_dir);
	}
	if (!r->fsw || (o->push_url && !r->pusher)) {
		rotation__free(r);
		return -ENOMEM;
	}
	*out = r;
	return 0;
}

void rotation__free(struct rotation *r)
{
	if (!r)
		return;
	proc_state__free(r->state);
	pbuf_free(&r->kernel_head);
	file_switch__free(r->fsw);
	fleet_pusher__finish(r->pusher, 0);
	free(r);
}

struct proc_state *rotation__state(const struct rotation *r)
{
	return r ? r->state : NULL;
}

int rotation__keep_kernel(struct rotation *r, const void *buf, size_t len)
{
	return r ? pbuf_put(&r->kernel_head, buf, len) : 0;
}

int rotation__records(struct rotation *r, const void *buf, size_t len)
{
	return r ? proc_state__records(r->state, buf, len) : 0;
}

void rotation__start(struct rotation *r, __u64 now_ns)
{
	if (!r)
		return;
	r->start_ns = now_ns;
	file_switch__start(r->fsw, now_ns);
}

/* A file is complete at path: the one place that announces it. */
static void file_finished(struct rotation *r, const char *path)
{
	r->files++;
	printf("%s\n", path);
	fflush(stdout);
	if (r->pusher)
		fleet_pusher__add(r->pusher, path);
	file_switch__kept(r->fsw, path);
}

/* The DSO table and the JIT sources forget a process proc_state freed. */
static void forget_pid(void *ctx, __u32 pid)
{
	struct rotation *r = ctx;

	dso_table__forget(r->cfg.dt, pid);
	jit_sources__forget(r->cfg.jit, pid);
}

/* The next file: created under -o, its head the tracked state at t. */
static int open_next(struct rotation *r, struct output **out, __u64 t)
{
	const struct rotation_hooks *h = &r->cfg.hooks;
	struct pbuf b = { 0 };
	int err;

	*out = output__create(r->cfg.o->output);
	if (!*out)
		return -errno;
	err = h->begin(h->ctx);
	if (!err)
		err = pbuf_put(&b, r->kernel_head.data, r->kernel_head.len);
	if (!err)
		err = proc_state__synthesize(r->state, &b, t);
	if (!err)
		err = perfdata_encode_finished_init(&b);
	if (!err)
		err = perfdata_writer__append(output__writer(*out), b.data, b.len);
	pbuf_free(&b);
	return err;
}

/* The finished file old (number file), its writer handing the records
 * from t on to the next one: the JIT mappings made before t, the
 * features. */
static int finish_old(struct rotation *r, struct output *old, __u64 t, __u32 file)
{
	struct jit_cut cut = { .before = t, .file = file };
	int err = jit_sources__checkpoint(r->cfg.jit, output__writer(old), r->cfg.id_type,
					  r->cfg.dt, file_features__cache_dir(r->cfg.ff),
					  r->start_ns, cut);

	return err ? err : file_features__write(r->cfg.ff, old);
}

/*
 * out under its finished name, OUT.<timestamp>; when someone else made
 * that name (the directory may be writable by others), the first free
 * OUT.<timestamp>.N.  0 or -errno (said).
 */
static int rename_finished(struct rotation *r, struct output *out, char *name, size_t size)
{
	int err = file_switch__name(r->fsw, clock_ns(CLOCK_REALTIME), name, size);
	size_t len = strlen(name);

	for (int i = 1; !err; i++) {
		err = output__rename(out, name);
		if (err != -EEXIST)
			return err;
		if (i > ROTATED_NAME_TRIES) {
			name[len] = 0;
			pr_err("cannot rename %s: %s and the %d names after it exist", output__path(out),
			       name, ROTATED_NAME_TRIES);
			return err;
		}
		err = (size_t)snprintf(name + len, size - len, ".%d", i) >= size - len ?
			-ENAMETOOLONG : 0;
	}
	pr_err("cannot name the finished %s: %s", output__path(out), strerror(-err));
	return err;
}

/* The old file out at t: renamed, the next one open, the old finished
 * and announced (removed if it could not be finished).  1: no switch, the
 * current file goes on (said). */
static int replace(struct rotation *r, struct output **out, __u64 t)
{
	const struct rotation_hooks *h = &r->cfg.hooks;
	struct output *old = *out;
	char name[4096];
	int err;

	err = h->before(h->ctx, t);
	if (err)
		return err;
	if (rename_finished(r, old, name, sizeof(name))) {
		pr_warn("no switch: recording goes on into %s", output__path(old));
		return 1;
	}
	err = open_next(r, out, t);
	if (!*out) {		/* output__create said why */
		*out = old;
		pr_warn("no switch: recording goes on into %s", output__path(old));
		return 1;
	}
	if (!err)
		err = perfdata_writer__hand_over(output__writer(old), output__writer(*out), t);
	if (!err)
		err = finish_old(r, old, t, (__u32)(r->files + 1));
	if (!err) {
		__u64 keep = (__u64)r->cfg.o->switch_max_files;

		file_finished(r, name);
		if (keep && r->files >= keep)	/* files 1 .. files - keep removed */
			jit_sources__prune(r->cfg.jit, (__u32)(r->files - keep + 1),
					   file_features__cache_dir(r->cfg.ff));
	}
	output__free(old);	/* unfinished: removed */
	return err;
}

static int switch_file(struct rotation *r, struct output **out, __u64 t)
{
	__u64 t0 = clock_ns(CLOCK_MONOTONIC);
	int err = replace(r, out, t);

	if (err > 0) {
		file_switch__failed(r->fsw, clock_ns(CLOCK_MONOTONIC));
		return 0;
	}
	if (err)
		return err;
	proc_state__collect(r->state, t, forget_pid, r);
	jit_sources__collect(r->cfg.jit);
	dso_table__new_file(r->cfg.dt);
	file_features__file_start(r->cfg.ff, t);
	t0 = clock_ns(CLOCK_MONOTONIC) - t0;
	if (t0 > r->switch_ns_max)
		r->switch_ns_max = t0;
	if (log_verbosity > 1) {
		struct proc_state_stats st = proc_state__stats(r->state);

		pr_debug("switched files in %.1f ms; tracked: %zu processes, %zu threads, %zu mappings",
			 (double)t0 / 1e6, st.procs, st.threads, st.maps);
	}
	file_switch__started(r->fsw, clock_ns(CLOCK_MONOTONIC));
	return 0;
}

int rotation__round(struct rotation *r, struct output **out, __u64 now_ns, __u64 t)
{
	__u64 size;
	int err;

	if (!r)
		return 0;
	size = perfdata_writer__data_size(output__writer(*out));
	if (!file_switch__due(r->fsw, now_ns, size, record_signals_switch_asked()))
		return 0;
	record_signals_switch_taken();
	err = switch_file(r, out, t);
	if (err)
		pr_err("cannot switch to a new %s: %s", r->cfg.o->output, strerror(-err));
	return err;
}

int rotation__finish(struct rotation *r, struct output *out)
{
	char name[4096];

	if (!r)
		return 0;
	if (!rename_finished(r, out, name, sizeof(name)))
		file_finished(r, name);
	else		/* complete all the same */
		pr_warn("the last file is kept as %s", output__path(out));
	if (proc_state__stats(r->state).maps_over)
		pr_warn("%llu mappings past %d in a process were not kept for the heads of the next files (their records are in the file they were made in)",
			(unsigned long long)proc_state__stats(r->state).maps_over, PROC_STATE_MAX_MAPS);
	if (r->files > 1)
		pr_debug("%llu files; the longest switch took %.1f ms",
			 (unsigned long long)r->files, (double)r->switch_ns_max / 1e6);
	return 0;
}

void rotation__wait_pushes(struct rotation *r)
{
	if (!r)
		return;
	fleet_pusher__finish(r->pusher, PUSH_FINAL_WAIT_SECS);
	r->pusher = NULL;
}
