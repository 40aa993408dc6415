#!/usr/bin/env bash
# Sampling benchmark: precord against perf record, in the same run, at 99,
# 999 and 4999 Hz with -g, on the bundled CPU-bound workload (hot3, one
# thread; and `threads 2`, two threads on the two CPUs).  Reports ratios
# and costs, never pass/fail on timings: it fails only when a tool fails.
#
#   scripts/bench/record.sh            (make bench runs it via run.sh)
#
# Knobs (environment): BENCH_REPS (repetitions of each workload run,
# default 5), BENCH_STOP_REPS (repetitions of each -p start/stop run,
# default 3), BENCH_SCALE (workload --work SCALE, default 10), BENCH_HOLD (seconds
# a -p recording runs before SIGINT, default 1.5), BENCH_QUIET_WAIT and
# BENCH_QUIET_BUDGET (how long to wait, per perf run and in all, for other
# BPF programs to go before running perf: defaults 30 and 150 s; see
# wait_quiet below), BENCH_OUT (directory for the results, default
# build/bench).
#
# Output: a table on stdout; build/bench/record.tsv (medians, one row per
# configuration, '#' lines carry the machine, date and versions);
# build/bench/record-runs.tsv (every run); build/bench/record.txt (the
# table).  How each figure is measured: docs/benchmarks.md, "Sampling",
# and the comments in the driver, scripts/bench/record.py.
#
# Hermetic: everything is written in a temporary directory (removed on
# exit, nothing is left in /tmp); HOME points there, one per tool (both
# tools keep a build-id cache in $HOME/.debug), and PERF_CONFIG is an
# empty file there.  Needs root, perf, python3, a C compiler (for the
# launcher, scripts/bench/launch.c) and, to keep perf from running next to
# other BPF users, bpftool.
set -euo pipefail
cd "$(dirname "$0")/../.."
. scripts/bench/lib.bash

need_root "both tools load BPF / open perf events"
need_tools perf python3
need_built build/workloads/workload

bench_setup
# The launcher (launch.c) runs a recorder as its child and reports the
# recorder's wait4() rusage (user+sys to the microsecond, peak RSS); SIGINT
# and SIGTERM are passed on to the recorder.
build_launcher

# The workload wrapper: the command each profiler runs.  It times the
# workload alone (CLOCK_MONOTONIC just before fork and just after wait4)
# and reports the workload's rusage, its own total rusage (self and
# children, which is what the recorder's wait4 will add to the recorder's
# own figure) and its own peak RSS.
cat >"$tmp/wrap.py" <<'PY'
import os, resource, signal, sys, time
signal.signal(signal.SIGINT, signal.SIG_IGN)	# the workload decides
out, cmd = sys.argv[1], sys.argv[2:]
t0 = time.clock_gettime_ns(time.CLOCK_MONOTONIC)
pid = os.fork()
if pid == 0:
    try:
        signal.signal(signal.SIGINT, signal.SIG_DFL)
        os.execv(cmd[0], cmd)
    finally:
        os._exit(127)
_, st, ru = os.wait4(pid, 0)
t1 = time.clock_gettime_ns(time.CLOCK_MONOTONIC)
s = resource.getrusage(resource.RUSAGE_SELF)
c = resource.getrusage(resource.RUSAGE_CHILDREN)
with open(out, "w") as f:
    f.write("%d %.6f %.6f %d %d\n" % (
        t1 - t0, ru.ru_utime + ru.ru_stime,
        s.ru_utime + s.ru_stime + c.ru_utime + c.ru_stime,
        max(s.ru_maxrss, c.ru_maxrss), os.waitstatus_to_exitcode(st)))
os._exit(0 if os.waitstatus_to_exitcode(st) == 0 else 1)
PY

run_driver
