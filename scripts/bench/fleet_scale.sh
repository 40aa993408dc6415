#!/usr/bin/env bash
# Fleet-scale benchmark of the store (docs/fleet.md, "Rollups"; issue 22):
# two clickhouse-server shards started here (tests/tools/clickhouse-cluster,
# loopback, free ports, data in the bench's temporary directory), then
#   - one real recording, `precord -a -g -F 99 --aggregate` with both
#     CPUs busy, pushed as host h0;
#   - its rows replicated server-side (INSERT ... SELECT) to HOSTS hosts x
#     HOURS hours through the tables push writes (pushes, samples, files
#     of 5-minute files), so the rollups' views fill as in production;
#   - fleet-wide --top, --folded, --flamegraph and --totals over the range
#     and a one-host --top, timed in the same run (median of BENCH_REPS),
#     and once each fleet-wide from the raw rows (PRECORD_FLEET_ROLLUP=0);
#   - the insert rate of an hour of rows into a samples table with the
#     rollups' views and into one without (alternated, medians);
#   - the rollups' rows and bytes against the raw rows'.
# Targets (reported, never asserted): fleet-wide within 4x of one host and
# under 1 s; inserts with rollups within 30% of without.
#
# Knobs: BENCH_FLEET_HOSTS (default 1000), BENCH_FLEET_HOURS (default 24),
# BENCH_FLEET_SECS (the recording, default 20), BENCH_REPS (default 5),
# BENCH_FLEET_SEED (build or quiet, see fleet_scale.py), BENCH_OUT.  The
# full size is 0.73 G rows with the default seed here (29 min of inserts
# on 2 shared CPUs, ~1 GB stored); run it smaller on a small machine,
# e.g. BENCH_FLEET_HOSTS=100 BENCH_FLEET_HOURS=24.
set -euo pipefail
cd "$(dirname "$0")/../.."
. scripts/bench/lib.bash

fleet_bench 2
run_driver
