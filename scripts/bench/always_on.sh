#!/usr/bin/env bash
# Always-on cost (issue 11, acceptance 4): precord left running with
# rotation, as the systemd unit runs it.
#  - cost: `-a -g -F 99 --switch-output=5s` (plus --aggregate when this
#    build has it) for 30 s with both CPUs busy: recorder CPU as % of one
#    CPU (utime+stime of precord from /proc), RSS at 28 s against 10 s,
#    lost samples, files written;
#  - soak: the same with --switch-max-files=4 for BENCH_SOAK_SECS (default
#    600) while `workload churn` starts and ends threads and processes all
#    the time: RSS and open descriptors sampled every 10 s, lost samples;
#  - JIT soak: node --perf-prof processes coming and going for
#    BENCH_JIT_SOAK_SECS (default 60), --switch-output=2s
#    --switch-max-files=3: RSS, descriptors, FILE.jit/ and the build-id
#    cache every 10 s.
# Reports figures, never pass/fail on them: it fails only when a tool fails.
#
#   scripts/bench/always_on.sh              (make bench runs it via run.sh)
#   BENCH_SOAK_SECS=60 scripts/bench/always_on.sh    a quick soak
#
# Output: a table on stdout; build/bench/always_on.tsv, always_on-runs.tsv
# (the soak's samples), always_on.txt.  Hermetic as the other benches
# (lib.bash): a temporary directory and HOME, removed on exit.
set -euo pipefail
cd "$(dirname "$0")/../.."
. scripts/bench/lib.bash

need_root "precord loads BPF programs"
need_tools python3 node
need_built build/workloads/workload

bench_setup
bench_env
run_driver
