// SPDX-License-Identifier: GPL-2.0
/*
 * Glue between the recording session and function tracing (user/trace/):
 * which binary the patterns resolve in, which map filters the targets,
 * and the calls at each stage of the session.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <bpf/libbpf.h>

#include "record/bpf_sampler.h"
#include "record/session_int.h"
#include "record/synth.h"
#include "record/target.h"
#include "trace/trace.h"
#include "util/log.h"

/* The processes the probes are bound to, in out (room for
 * PREC_MAX_PIDS); 0: not bound. */
static int bind_pids(const struct session *s, int *out)
{
	const struct prec_opts *o = s->o;
	int n = 0, i, j;

	if (o->nr_tids) {
		for (i = 0; i < o->nr_tids; i++) {
			int tgid = proc_tgid((__u32)o->tids[i]);

			for (j = 0; j < n && out[j] != tgid; j++)
				;
			if (tgid > 0 && j == n)
				out[n++] = tgid;
		}
		return n;
	}
	if (!o->no_inherit)
		return 0;
	if (o->nr_pids) {
		for (i = 0; i < o->nr_pids; i++)
			out[n++] = o->pids[i];
		return n;
	}
	if (target_set__command(s->targets))
		out[n++] = target_set__command(s->targets);
	return n;
}

int session_trace_setup(struct session *s)
{
	const struct prec_opts *o = s->o;
	struct trace_opts to = {
		.specs = o->trace_specs, .nr_specs = o->nr_trace_specs,
		.nr_args = o->trace_args, .xray_out = o->xray_out,
	};
	char exe[64], *resolved = NULL;
	const char *main_exe = NULL;
	int pid = 0, err, bind[PREC_MAX_PIDS], nr_bind;

	if (!o->nr_trace_specs)
		return 0;
	s->ts = trace_session__new(&to);
	if (!s->ts) {
		err = -errno;
		pr_err("cannot set up tracing: %s", strerror(-err));
		return err;
	}
	/* The binary a pattern without BIN: means, and the process whose
	 * mappings name libraries: the -p/-t target, else the command. */
	if (o->nr_pids || o->nr_tids) {
		pid = o->nr_pids ? o->pids[0] : proc_tgid((__u32)o->tids[0]);
		snprintf(exe, sizeof(exe), "/proc/%d/exe", pid);
		main_exe = exe;
	} else if (o->cmd) {
		resolved = target_resolve_exe(o->cmd[0]);
		main_exe = resolved;
	}
	err = trace_session__resolve(s->ts, pid > 0 ? pid : 0, main_exe);
	free(resolved);
	if (err)
		return err;
	if (s->all)
		return trace_session__attach(s->ts, -1, PREC_FILTER_ALL, NULL, 0);
	/* Probes bound to the target processes spare every other process
	 * the traps; but children forked later would then not hit them, so
	 * they are bound only when children are not followed (-t, -i). */
	nr_bind = bind_pids(s, bind);
	err = trace_session__attach(s->ts, bpf_sampler__targets_fd(s->bpf),
				    s->by_tid ? PREC_FILTER_TID : PREC_FILTER_TGID, bind, nr_bind);
	if (!err && nr_bind)
		pr_debug("trace: probes bound to %d process%s", nr_bind, nr_bind > 1 ? "es" : "");
	return err;
}

int session_trace_add_evsels(struct session *s)
{
	return s->ts ? trace_session__add_evsels(s->ts, s->w) : 0;
}

int session_trace_fd(struct session *s)
{
	return s->ts ? trace_session__fd(s->ts) : -1;
}

int session_trace_consume(struct session *s)
{
	return s->ts ? trace_session__consume(s->ts, s->w) : 0;
}

__u64 session_trace_watermark(struct session *s)
{
	return s->ts ? trace_session__watermark(s->ts) : ~0ULL;
}

int session_trace_finish(struct session *s)
{
	return s->ts ? trace_session__finish(s->ts, s->w) : 0;
}

int session_trace_write_xray(struct session *s)
{
	return s->ts ? trace_session__write_xray(s->ts) : 0;
}

__u64 session_trace_lost(struct session *s)
{
	__u64 calls = 0, lost = 0;

	if (s->ts)
		trace_session__stats(s->ts, &calls, &lost);
	return lost;
}

__u64 session_trace_calls(struct session *s)
{
	__u64 calls = 0;

	if (s->ts)
		trace_session__stats(s->ts, &calls, NULL);
	return calls;
}

void session_trace_summary(struct session *s, char *buf, size_t n)
{
	__u64 calls = 0, lost = 0;

	if (n)
		buf[0] = 0;
	if (!s->ts)
		return;
	trace_session__stats(s->ts, &calls, &lost);
	snprintf(buf, n, ", %llu traced calls", (unsigned long long)calls);
	if (log_verbosity > 0)
		trace_session__print_stats(s->ts);
}

void session_trace_free(struct session *s)
{
	trace_session__free(s->ts);
	s->ts = NULL;
}
