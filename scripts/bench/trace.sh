#!/usr/bin/env bash
# Tracing benchmark: the cost of one traced call (entry + return of
# `inner` in build/workloads/tracee) under precord --trace, against
# bpftrace's bare counting of the same uprobe + uretprobe and against
# perf probe + perf record, in the same run.  Reports numbers and ratios;
# it fails only when a tool fails.
#
#   scripts/bench/trace.sh             (make bench runs it via run.sh)
#
# Each run is `tracee 1 N` (two threads, N calls of inner() each) with
# TRACEE_TIME=1, so each thread prints how long its calls took; the
# tracee also runs under the launcher (scripts/bench/launch.c), which
# reports its CPU time (user + sys: the uprobe traps and BPF programs run
# in the tracee's own context).  Per configuration and repetition, in a shuffled order:
#
#   baseline   nothing attached
#   bpftrace   uprobe:BIN:inner { @c = count(); } + uretprobe (@r), started
#              before the run, measured once both probes are attached
#   precord    precord --trace BIN:inner -vv -o FILE -- launch tracee 1 N
#   perf       perf probe BIN inner and inner%return, then
#              perf record -k mono -m 2048 -e G:inner -e G:inner__return
#              -- launch tracee 1 N  (-m 2048: the 8 MiB per CPU precord's
#              ring buffer has)
#
# in two placements: "2cpu" (nothing pinned: the tracee's two threads and
# the tool's user space share the machine's CPUs) and "pinned" (tracee on
# CPU 0, the tool on the other CPUs: only what happens in the tracee's own
# context is left; both threads then share CPU 0).
#
# Figures (medians over the repetitions, minus the baseline's median):
#   wall ns/call    2cpu: mean of the two threads' times / N;
#                   pinned: the later thread's time / 2N (threads interleave)
#   CPU ns/call     tracee user+sys / 2N
#   tool ns/call    the tool's own CPU (its wait4 rusage minus the tracee's) / 2N
#   ring B/call     precord: ring-buffer bytes (8-byte ring headers included,
#                   from precord -vv) per call (entry + return)
#   file B/call     size of the output file / 2N
#
# Knobs (environment): BENCH_TRACE_CALLS (N, default 200000),
# BENCH_TRACE_REPS (default 7), BENCH_OUT (default build/bench).
# Output: a table on stdout; build/bench/trace.tsv (medians, '#' lines
# carry the machine, date and versions), build/bench/trace-runs.tsv (every
# run), build/bench/trace.txt (the table).  Explained in
# docs/benchmarks-trace-jit.md; the driver is scripts/bench/trace.py.
#
# Hermetic: a copy of tracee in a temporary directory (so no other
# session's uprobes on build/workloads/tracee fire in it), HOME and
# PERF_CONFIG there; tracefs is mounted at /sys/kernel/tracing if it is not
# (and unmounted afterwards); the perf probes are deleted on exit.
set -u
cd "$(dirname "$0")/../.." || exit 1
. scripts/bench/lib.bash

need_root "uprobes, BPF"
need_tools perf bpftrace python3 taskset "${CC:-cc}"
need_built build/workloads/tracee

group="precbench$$"
mounted=0
probes=0
bench_cleanup() {	# run on exit by lib.bash, before $tmp is removed
	if [ $probes = 1 ]; then
		HOME=$tmp/home perf probe -q -d "$group:*" >/dev/null 2>&1 ||
			echo "trace.sh: could not delete perf probes $group:*" >&2
	fi
	if [ $mounted = 1 ]; then
		umount /sys/kernel/tracing 2>/dev/null || echo "trace.sh: could not unmount /sys/kernel/tracing" >&2
	fi
}
bench_setup
bench_env

cp build/workloads/tracee "$tmp/tracee" || die "cannot copy tracee"
bin=$tmp/tracee
build_launcher

if ! [ -e /sys/kernel/tracing/uprobe_events ]; then
	mount -t tracefs nodev /sys/kernel/tracing || die "cannot mount tracefs at /sys/kernel/tracing"
	mounted=1
fi
probes=1
if ! perf probe -q -x "$bin" -a "$group:inner=inner" >"$tmp/probe.log" 2>&1 ||
	! perf probe -q -x "$bin" -a "$group:inner=inner%return" >>"$tmp/probe.log" 2>&1; then
	cat "$tmp/probe.log" >&2
	die "perf probe failed"
fi

run_driver "$bin" "$group"
