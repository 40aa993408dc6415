#!/usr/bin/env bash
# Dwarf-mode loss beside a CPU-bound neighbour (issue 17): precord
# --call-graph dwarf -a -F 499 and perf record --call-graph dwarf -a -F 499,
# both recording `sleep N` AT THE SAME TIME (same neighbour, same load,
# same seconds), each run; medians over the runs.  Reports, never fails on
# the figures: it fails only when a tool fails.
#
#   scripts/bench/dwarf_loss.sh        (make bench runs it via run.sh)
#
# Knobs (environment): BENCH_REPS (runs, default 5), BENCH_LOSS_SECONDS
# (N, default 5), BENCH_LOSS_HOGS (CPU-bound python loops, default 1),
# BENCH_PRECORD (default build/precord), BENCH_OUT (default build/bench).
#
# Loss as perf report counts it (perf_session__warn_about_errors: "Processed
# N samples and lost X%"): lost samples (the LOST_SAMPLES records' counts,
# per event in perf report --stats) / (samples + lost samples).  Side-band
# chunks lost (PERF_RECORD_LOST records: mmap, comm, fork records that did
# not fit a perf ring) are counted apart.  Output: a table on stdout and in
# build/bench/dwarf_loss.txt, every run in build/bench/dwarf_loss-runs.tsv.
set -euo pipefail
cd "$(dirname "$0")/../.."
. scripts/bench/lib.bash

need_root "both tools open perf events and load BPF"
need_tools perf python3
need_built

reps=${BENCH_REPS:-5}
secs=${BENCH_LOSS_SECONDS:-5}
hogs=${BENCH_LOSS_HOGS:-1}
precord=${BENCH_PRECORD:-build/precord}
[ -x "$precord" ] || die "$precord is missing: run make"
hog_pids=()

bench_cleanup() {
	[ ${#hog_pids[@]} -gt 0 ] && kill "${hog_pids[@]}" 2>/dev/null
	wait 2>/dev/null || true
}

bench_setup
bench_env

# stats FILE: "samples lost_samples lost_chunks" from perf report --stats
stats() {
	perf report -i "$1" --stats 2>/dev/null | awk '
		/^Aggregated stats/ { agg = 1; next }
		/ stats:$/ { agg = 0; next }
		agg && /^ *SAMPLE events:/ { s = $3 }
		agg && /^ *LOST events:/ { c = $3 }
		!agg && /^ *LOST_SAMPLES events:/ { l += $3 }
		END { printf "%d %d %d\n", s, l, c }'
}

runs=$out/dwarf_loss-runs.tsv
printf 'run\ttool\tsamples\tlost_samples\tloss_pct\tlost_chunks\n' >"$runs"
for ((r = 1; r <= reps; r++)); do
	hog_pids=()
	for ((i = 0; i < hogs; i++)); do
		python3 -c 'while True: pass' & hog_pids+=($!)
	done
	sleep 0.5
	"$precord" -q --call-graph dwarf -a -F 499 -o "$tmp/p.data" -- sleep "$secs" \
		>"$tmp/p.log" 2>&1 & pp=$!
	perf record -q --call-graph dwarf -a -F 499 -o "$tmp/f.data" -- sleep "$secs" \
		>"$tmp/f.log" 2>&1 & pf=$!
	rc=0
	wait $pp || rc=$?
	[ $rc -eq 0 ] || { cat "$tmp/p.log" >&2; die "precord exited $rc"; }
	wait $pf || rc=$?
	[ $rc -eq 0 ] || { cat "$tmp/f.log" >&2; die "perf record exited $rc"; }
	kill "${hog_pids[@]}" 2>/dev/null; wait "${hog_pids[@]}" 2>/dev/null || true
	hog_pids=()
	for t in precord perf; do
		f=$tmp/p.data; [ $t = perf ] && f=$tmp/f.data
		read -r s l c < <(stats "$f")
		awk -v r=$r -v t=$t -v s="$s" -v l="$l" -v c="$c" 'BEGIN {
			printf "%d\t%s\t%d\t%d\t%.2f\t%d\n", r, t, s, l, (s + l) ? 100 * l / (s + l) : 0, c }' >>"$runs"
	done
	rm -rf "$tmp"/p.data* "$tmp"/f.data*
	echo "$bench: run $r of $reps done" >&2
done

{
	echo "dwarf -a -F 499 loss, $secs s beside $hogs CPU-bound loop(s), both tools at once ($reps runs)"
	echo "CPU: $(lscpu | sed -n 's/^Model name: *//p') x $(nproc); load before: $(cut -d' ' -f1-3 /proc/loadavg)"
	awk -F'\t' 'NR > 1 {
		n[$2]++; loss[$2, n[$2]] = $5; lc[$2, n[$2]] = $6; all[$2] = all[$2] " " $5 }
		function med(t, a,   k, i, j, v, x) {
			k = n[t]; for (i = 1; i <= k; i++) v[i] = a[t, i]
			for (i = 2; i <= k; i++) { x = v[i]; for (j = i - 1; j > 0 && v[j] > x; j--) v[j + 1] = v[j]; v[j + 1] = x }
			return k % 2 ? v[(k + 1) / 2] : (v[k / 2] + v[k / 2 + 1]) / 2 }
		END {
			printf "%-8s %14s %18s  %s\n", "tool", "median loss %", "median LOST chunks", "loss % of each run"
			for (t in n) printf "%-8s %14.2f %18d  %s\n", t, med(t, loss), med(t, lc), all[t]
		}' "$runs" | sort -r
} | tee "$out/dwarf_loss.txt"
