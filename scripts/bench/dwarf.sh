#!/usr/bin/env bash
# Dwarf-mode benchmark: precord --call-graph dwarf against perf record
# --call-graph dwarf, in the same run, at 99 and 999 Hz, on
# build/workloads/nofp --work N (no frame pointers; a fixed amount of work,
# so the overheads are costs per unit of work).  Reports, never fails on
# timings: it fails only when a tool fails.
#
#   scripts/bench/dwarf.sh             (make bench runs it via run.sh)
#
# Knobs (environment): BENCH_REPS (repetitions, default 5), BENCH_DWARF_WORK
# (nofp --work N, default 1000, about 3 s), BENCH_OUT (default build/bench).
#
# Output: a table on stdout and in build/bench/dwarf.txt, medians in
# build/bench/dwarf.tsv, every run in build/bench/dwarf-runs.tsv.  What each
# figure means: docs/benchmarks.md, "Dwarf mode".  Hermetic as record.sh
# (a temporary HOME per tool, an empty PERF_CONFIG, nothing left behind).
set -euo pipefail
cd "$(dirname "$0")/../.."
. scripts/bench/lib.bash

need_root "both tools load BPF / open perf events"
need_tools perf python3
need_built build/workloads/nofp

bench_setup
build_launcher
run_driver
