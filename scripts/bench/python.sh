#!/usr/bin/env bash
# Python frames benchmark (docs/python.md, docs/benchmarks.md), on Debian's
# /usr/bin/python3 running tests/workloads/py/deep.py:
#   1. the BPF program's cost per sample (kernel.bpf_stats_enabled:
#      run_time_ns / run_cnt of on_sample, -g at 999 Hz) with 10 and 50
#      Python frames, --python against --no-python;
#   2. the workload's slowdown: the CPU time of fixed work 10 frames deep
#      under -g at 99 and 999 Hz with and without Python frames, against
#      no recording (median of BENCH_REPS, default 3);
#   3. precord's memory (max RSS) naming 10,000 code objects, against
#      --no-python on the same workload.
# Reports, never fails on figures: only when a recording fails.
#
#   scripts/bench/python.sh        (BENCH_REPS; BENCH_OUT)
set -euo pipefail
cd "$(dirname "$0")/../.."
[ "$(id -u)" = 0 ] || { echo "python.sh: run as root (precord loads BPF)" >&2; exit 1; }
[ -x build/precord ] || { echo "python.sh: build/precord is not built: run make" >&2; exit 1; }
command -v bpftool >/dev/null || { echo "python.sh: bpftool is missing" >&2; exit 1; }
PY=/usr/bin/python3
W=tests/workloads/py/deep.py
reps=${BENCH_REPS:-3}
out=${BENCH_OUT:-build/bench}
mkdir -p "$out"
tmp=$(mktemp -d /tmp/precord-bench-py.XXXXXX)
was=$(sysctl -n kernel.bpf_stats_enabled)
cleanup() {
	sysctl -qw kernel.bpf_stats_enabled="$was"
	rm -rf "$tmp"
}
trap cleanup EXIT
sysctl -qw kernel.bpf_stats_enabled=1
export HOME=$tmp
say() { echo "$*" | tee -a "$out/python.txt"; }
: > "$out/python.txt"

. scripts/bench/lib.bash
prog_cost() { bpf_prog_cost "$1" on_sample; }

median() { sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }

say "-- 1. ns per sample in on_sample (-g, 999 Hz, 3 s of CPU), median of $reps"
for depth in 10 50; do
	for py in --no-python --python; do
		for r in $(seq "$reps"); do
			build/precord -q -g -F 999 $py -o "$tmp/x.data" -- "$PY" "$W" depth "$depth" 3 &
			rec=$!
			sleep 2
			pid=$(pgrep -P "$rec" -x precord 2>/dev/null || echo "$rec")
			prog_cost "$pid" | awk '{ print $2 }'
			wait "$rec"
		done | median | { read -r ns; say "depth $depth $py: $ns ns/sample"; }
	done
done

say "-- 2. CPU time of fixed work 10 frames deep (s), median of $reps"
base=$(for r in $(seq "$reps"); do "$PY" "$W" work 10 2500 | sed 's/cpu=//'; done | median)
say "no recording: $base s"
for hz in 99 999; do
	for py in --no-python --python; do
		t=$(for r in $(seq "$reps"); do
			build/precord -q -g -F "$hz" $py -o "$tmp/x.data" -- "$PY" "$W" work 10 2500 |
				sed -n 's/cpu=//p'
		done | median)
		say "$hz Hz $py: $t s ($(awk -v t="$t" -v b="$base" 'BEGIN { printf "%+.1f%%", 100 * (t / b - 1) }'))"
	done
done

say "-- 3. precord's max RSS with 10,000 code objects in the samples (KB; -g, 4000 Hz, 12 s of CPU)"
for py in --no-python --python; do
	/usr/bin/time -o "$tmp/rss" -f "%M" build/precord -v -g $py -o "$tmp/x.data" -- \
		"$PY" "$W" many 10000 12 > "$tmp/log" 2>&1
	say "$py: $(cat "$tmp/rss") KB; $(grep -o '[0-9]* code objects named' "$tmp/log" || echo 'none named')"
done
