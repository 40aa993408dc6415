// SPDX-License-Identifier: GPL-2.0
#include "record/tracing.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "precord/bpf_abi.h"
#include "record/synth.h"
#include "record/target.h"
#include "trace/trace.h"
#include "util/log.h"

struct tracing {
	struct trace_session *ts;
};

/* The processes the probes are bound to, in out (room for
 * PREC_MAX_PIDS); 0: not bound. */
static int bind_pids(const struct prec_opts *o, pid_t command, int *out)
{
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
	if (command > 0)
		out[n++] = command;
	return n;
}

static int setup(struct trace_session *ts, const struct prec_opts *o, int targets_fd,
		 pid_t command)
{
	char exe[64], *resolved = NULL;
	const char *main_exe = NULL;
	int pid = 0, err, bind[PREC_MAX_PIDS], nr_bind;

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
	err = trace_session__resolve(ts, pid > 0 ? pid : 0, main_exe);
	free(resolved);
	if (err)
		return err;
	if (o->all_cpus)
		return trace_session__attach(ts, -1, PREC_FILTER_ALL, NULL, 0);
	/* Probes bound to the target processes spare every other process
	 * the traps; but children forked later would then not hit them, so
	 * they are bound only when children are not followed (-t, -i). */
	nr_bind = bind_pids(o, command, bind);
	err = trace_session__attach(ts, targets_fd,
				    o->nr_tids ? PREC_FILTER_TID : PREC_FILTER_TGID, bind, nr_bind);
	if (!err && nr_bind)
		pr_debug("trace: probes bound to %d process%s", nr_bind, nr_bind > 1 ? "es" : "");
	return err;
}

int tracing__new(struct tracing **out, const struct prec_opts *o, int targets_fd,
		 pid_t command)
{
	struct trace_opts to = {
		.specs = o->trace_specs, .nr_specs = o->nr_trace_specs,
		.nr_args = o->trace_args, .xray_out = o->xray_out,
	};
	struct tracing *t;
	int err;

	*out = NULL;
	if (!o->nr_trace_specs)
		return 0;
	t = calloc(1, sizeof(*t));
	if (!t)
		return -ENOMEM;
	t->ts = trace_session__new(&to);
	if (!t->ts) {
		err = -errno;
		pr_err("cannot set up tracing: %s", strerror(-err));
		free(t);
		return err;
	}
	*out = t;	/* kept on failure too: the probes attached so far go with it */
	return setup(t->ts, o, targets_fd, command);
}

int tracing__add_evsels(struct tracing *t, struct perfdata_writer *w)
{
	return t ? trace_session__add_evsels(t->ts, w) : 0;
}

int tracing__fd(const struct tracing *t)
{
	return t ? trace_session__fd(t->ts) : -1;
}

int tracing__consume(struct tracing *t, struct perfdata_writer *w)
{
	return t ? trace_session__consume(t->ts, w) : 0;
}

__u64 tracing__watermark(const struct tracing *t)
{
	return t ? trace_session__watermark(t->ts) : ~0ULL;
}

int tracing__finish(struct tracing *t, struct perfdata_writer *w)
{
	return t ? trace_session__finish(t->ts, w) : 0;
}

int tracing__write_xray(struct tracing *t)
{
	return t ? trace_session__write_xray(t->ts) : 0;
}

__u64 tracing__lost(const struct tracing *t)
{
	__u64 calls = 0, lost = 0;

	if (t)
		trace_session__stats(t->ts, &calls, &lost);
	return lost;
}

void tracing__describe(const struct tracing *t, char *buf, size_t n)
{
	__u64 calls = 0;

	if (n)
		buf[0] = 0;
	if (!t)
		return;
	trace_session__stats(t->ts, &calls, NULL);
	snprintf(buf, n, ", %llu traced calls", (unsigned long long)calls);
}

void tracing__print_stats(const struct tracing *t)
{
	if (t)
		trace_session__print_stats(t->ts);
}

void tracing__free(struct tracing *t)
{
	if (!t)
		return;
	trace_session__free(t->ts);
	free(t);
}
