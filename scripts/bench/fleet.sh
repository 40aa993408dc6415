#!/usr/bin/env bash
# Fleet-store benchmark (docs/fleet.md, "Measured"): one clickhouse-server
# started here (tests/tools/clickhouse-cluster, loopback, free ports, data
# in the bench's temporary directory) with precord's tables, then
#   - push: two minutes of `-a -g -F 99` rotated into one-minute files
#     (and the same with --aggregate when this build has it); the first
#     pushed cold (a new process: the symbol tables loaded) and warm
#     (after another file in the same push); samples per second;
#   - storage: bytes per sample after ClickHouse's compression
#     (system.parts, after OPTIMIZE FINAL) of the first minute of a day
#     (its stacks are new) and of the next; one synthetic host-day at 99 Hz;
#   - query: `precord query --top`, --children, --totals, --folded and
#     --flamegraph over that host-day (median of BENCH_REPS);
#   - insert formats: the host-day's rows inserted as TabSeparated (what
#     push sends), RowBinary and JSONEachRow, bytes and seconds.
# Reports, never fails on timings: it fails only when a tool fails.
#
#   scripts/bench/fleet.sh             (make bench runs it via run.sh)
#
# Knobs: BENCH_REPS (default 5), BENCH_FLEET_SECS (a file's length,
# default 60), BENCH_FLEET_CPUS (CPUs of the synthetic host, default 2),
# BENCH_OUT (default build/bench).  Output: build/bench/fleet.txt and
# fleet.tsv.  Hermetic: a temporary HOME, the server stopped and its data
# removed at the end.
set -euo pipefail
cd "$(dirname "$0")/../.."
. scripts/bench/lib.bash

fleet_bench 1
run_driver
