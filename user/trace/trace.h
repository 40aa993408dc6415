/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Function entry/exit tracing session (--trace): resolves the functions,
 * adds their perf events to the perf.data, runs bpf/trace.bpf.c on
 * uprobes/uretprobes, decodes its XRay-FDR-style blocks into per-thread
 * calls and queues one perf sample per entry and per return, and writes
 * --xray-out.  Call order:
 *
 *   new → resolve → add_evsels (before perfdata_writer__begin) → attach
 *   → consume (repeatedly, e.g. after each poll) → finish → free
 *
 * In perf.data each function FUNC gets two events of the uprobe PMU type,
 * named "precord:FUNC" (entry) and "precord:FUNC__return".  Samples carry
 * IDENTIFIER|IP|TID|TIME|CPU|PERIOD (ip = the function's address in the
 * process); the return's PERIOD and WEIGHT are the call's duration in ns.
 * With --trace-args N the entry also has REGS_USER with the N argument
 * registers (x86-64: DI SI DX CX R8 R9), shown by `perf script -F +uregs`.
 */
#ifndef PRECORD_TRACE_TRACE_H
#define PRECORD_TRACE_TRACE_H

#include <linux/types.h>

#include "precord/bpf_abi.h"	/* enum prec_filter */

struct perfdata_writer;
struct trace_session;

struct trace_opts {
	char **specs;			/* "[BINARY:]GLOB", from --trace */
	int nr_specs;
	int nr_args;			/* --trace-args N, 0..6 */
	const char *xray_out;		/* --xray-out FILE, or NULL */
};

/* Perf sample ids of traced functions: entry = BASE + 2*i, return +1. */
#define TRACE_SAMPLE_ID_BASE	0x7e00000000000000ULL

struct trace_session *trace_session__new(const struct trace_opts *o);	/* NULL + errno */
/*
 * Find the functions.  pid (> 0): a target whose /proc/PID/maps names the
 * libraries; main_exe: the target's executable (for BINARY-less specs).
 * 0 or -errno, with a message naming what was searched.
 */
int trace_session__resolve(struct trace_session *t, int pid, const char *main_exe);
/* Two evsels per function (before perfdata_writer__begin).  0 or -errno. */
int trace_session__add_evsels(struct trace_session *t, struct perfdata_writer *w);
/*
 * Load the BPF object and attach every uprobe/uretprobe.  targets_map_fd:
 * the sampler's `targets` map (or -1 with PREC_FILTER_ALL); filter_mode:
 * enum prec_filter.  pids (nr_pids > 0): bind the probes to these
 * processes, so that no other process takes their traps (their children
 * are then not traced); nr_pids 0: every process runs into the probes and
 * the BPF filter drops what is not a target.  0 or -errno.
 */
int trace_session__attach(struct trace_session *t, int targets_map_fd, int filter_mode,
			  const int *pids, int nr_pids);
/* The ring buffer's epoll fd, readable when trace blocks are waiting. */
int trace_session__fd(const struct trace_session *t);
/*
 * Non-blocking: every 5 ms at most, push out the per-CPU partial blocks;
 * drain the ring buffer (for 50 ms at most); queue the samples of every
 * call whose records are all in (perfdata_writer__queue_space).  Returns
 * 0 or -errno.
 */
int trace_session__consume(struct trace_session *t, struct perfdata_writer *w);
/*
 * Earliest time (CLOCK_MONOTONIC ns) of a sample that consume/finish may
 * still queue; records older than this may be flushed from the writer.
 */
__u64 trace_session__watermark(const struct trace_session *t);
/* Detach, drain everything, queue the rest.  0 or -errno. */
int trace_session__finish(struct trace_session *t, struct perfdata_writer *w);
/* After finish: write --xray-out (if given).  0, or -errno with a message
 * (a file that could not be written whole is removed). */
int trace_session__write_xray(struct trace_session *t);
/* calls: function entries seen; lost: hits lost in the kernel (buffer
 * busy or ring buffer full) plus records in malformed blocks. */
void trace_session__stats(const struct trace_session *t, __u64 *calls, __u64 *lost);
/* One line for the end-of-run summary (-v gives details), NULL-safe. */
void trace_session__print_stats(const struct trace_session *t);
void trace_session__free(struct trace_session *t);	/* NULL-safe; detaches */

#endif
