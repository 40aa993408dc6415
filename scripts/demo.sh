#!/usr/bin/env bash
# make demo: record the bundled workload (three hot functions, 50:30:20)
# with call chains and show what perf report makes of it.
set -eu
cd "$(dirname "$0")/.."
out=build/demo
mkdir -p "$out"
sudo=""
[ "$(id -u)" = 0 ] || sudo="sudo"
echo "== $sudo build/precord -F 999 -g -o $out/perf.data -- build/workloads/workload hot3 2"
$sudo build/precord -F 999 -g -N -o "$out/perf.data" -- build/workloads/workload hot3 2
echo
echo "== perf report -i $out/perf.data --no-children --sort comm,dso,sym"
$sudo perf report -i "$out/perf.data" --stdio --no-children -g none --sort comm,dso,sym 2>/dev/null |
	grep -v '^$' | head -25
echo
echo "== perf report -i $out/perf.data --children (callers of the hot functions)"
$sudo perf report -i "$out/perf.data" --stdio --children -g none --sort sym 2>/dev/null |
	grep -E '^ +[0-9]' | head -8
echo
echo "The recording stays in $out/perf.data: try perf script, perf annotate hot_a, hotspot."
