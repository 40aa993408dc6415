#!/usr/bin/env bash
# --call-graph ehframe benchmark, in one run against -g and perf record
# --call-graph dwarf (build/workloads/nofp, no frame pointers).  Reports,
# never fails on timings: it fails only when a tool fails.
#
#   1. workload slowdown at 99, 999 and 4999 Hz (nofp --work N, a fixed
#      amount of work; the time its rounds took, as nofp says, against
#      the runs without profiler: the profilers' start-up is not in it)
#   2. ns per sample in the BPF program (bpf_stats: run_time_ns / run_cnt)
#      at user stack depths 8, 32 and 100 (nofp --depth), and -g's
#   3. start-up: tables of a process mapping libc and ten generated
#      libraries built, then a second process mapping the same files
#   4. table memory per MB of .eh_frame (the files of 3.)
#
# Knobs: BENCH_REPS (default 5), BENCH_EHFRAME_WORK (nofp --work N,
# default 600), BENCH_OUT (default build/bench).  Output: a table on stdout
# and in build/bench/ehframe.txt.  docs/benchmarks.md explains it.
set -euo pipefail
cd "$(dirname "$0")/../.."
. scripts/bench/lib.bash

need_root "both tools load BPF / open perf events"
need_tools perf bpftool gcc readelf
need_built build/workloads/nofp

bench_setup
bench_env
REPS=${BENCH_REPS:-5}
WORK=${BENCH_EHFRAME_WORK:-600}
NOFP=$root/build/workloads/nofp
P=$root/build/precord
cd "$tmp"
report=$out/ehframe.txt
: > "$report"
say() { echo "$*" | tee -a "$report"; }

# work_secs CMD...: "MEDIAN MIN MAX" of the seconds nofp --work says its
# rounds took, over REPS runs of CMD
work_secs() {
	local i t all=()
	for ((i = 0; i < REPS; i++)); do
		t=$("$@" 2>&1 >/dev/null | sed -n 's/^nofp: work took \([0-9.]*\) s$/\1/p')
		[[ $t ]] || { echo "bench: no time from: $*" >&2; return 1; }
		all+=("$t")
	done
	printf '%s\n' "${all[@]}" | sort -n | awk '{ a[NR] = $1 } END { printf "%s %s %s\n", a[int((NR + 1) / 2)], a[1], a[NR] }'
}

say "== ehframe bench ($(nproc) CPUs, load $(cut -d' ' -f1-3 /proc/loadavg))"
say "-- 1. slowdown of nofp --work $WORK: the rounds' own wall-clock time (no start-up or"
say "   write-out), median of $REPS runs and [min, max] of them, % over the median without a profiler"
base=$(work_secs "$NOFP" --work "$WORK")
b=${base%% *}
say "no profiler: $b s [$(echo "$base" | cut -d' ' -f2-3 | tr ' ' ',')]"
for hz in 99 999 4999; do
	g=$(work_secs "$P" -q -g -F $hz -o g.data -- "$NOFP" --work "$WORK")
	e=$(work_secs "$P" -q --call-graph ehframe -F $hz -o e.data -- "$NOFP" --work "$WORK")
	d=$(work_secs perf record -q --call-graph dwarf -F $hz -o d.data -- "$NOFP" --work "$WORK")
	say "$(awk -v hz=$hz -v b="$b" -v g="$g" -v e="$e" -v d="$d" '
		function pc(x) { return 100 * (x / b - 1) }
		function one(name, v,   a) { split(v, a, " "); return sprintf("%s %+.1f%% [%+.1f, %+.1f]", name, pc(a[1]), pc(a[2]), pc(a[3])) }
		BEGIN { printf "%5d Hz: %s  %s  %s", hz, one("-g", g), one("ehframe", e), one("perf dwarf", d) }')"
done
say "   file sizes at 4999 Hz: -g $(stat -c %s g.data) B, ehframe $(stat -c %s e.data) B, perf dwarf $(stat -c %s d.data) B"

say "-- 2. ns per sample in the BPF program (bpf_stats over 1.5 s of a 3-s run at 999 Hz), median [range] of $REPS runs"
old_stats=$(sysctl -n kernel.bpf_stats_enabled)
bench_cleanup() { sysctl -q kernel.bpf_stats_enabled="$old_stats" || true; }
sysctl -q kernel.bpf_stats_enabled=1
# prog_stat NAME: "RUN_TIME_NS RUN_CNT" of the loaded program NAME
prog_stat() {
	bpftool prog show 2>/dev/null | awk -v n="$1" '$0 ~ "name " n { f = 1 } f && /run_time_ns/ {
		for (i = 1; i <= NF; i++) { if ($i == "run_time_ns") t = $(i + 1); if ($i == "run_cnt") c = $(i + 1) }
		print t, c; exit }'
}
# prog_ns NAME CMD...: ns a run of the program NAME took while CMD ran,
# between 1 s and 2.5 s after its start (tables built, not yet exiting)
prog_ns() {
	local name=$1; shift
	"$@" > rec.log 2>&1 &
	local pid=$! a b
	sleep 1
	a=$(prog_stat "$name")
	sleep 1.5
	b=$(prog_stat "$name")
	wait $pid || true
	awk -v a="$a" -v b="$b" 'BEGIN { split(a, x, " "); split(b, y, " ");
		if (y[2] > x[2]) printf "%.0f", (y[1] - x[1]) / (y[2] - x[2]); else printf "?" }'
}
# median of the numbers on stdin, and their range: "MEDIAN [MIN-MAX]"
median_range() {
	sort -n | awk '{ a[NR] = $1 } END { printf "%s [%s-%s]", a[int((NR + 1) / 2)], a[1], a[NR] }'
}
for depth in 8 32 100; do
	d=$((depth - 7))
	es=() gs=()
	for ((i = 0; i < REPS; i++)); do
		es+=("$(prog_ns on_sample_ehfr "$P" -q --call-graph ehframe -F 999 -o e.data -- "$NOFP" --depth $d 3)")
		gs+=("$(prog_ns on_sample "$P" -q -g -F 999 -o g.data -- "$NOFP" --depth $d 3)")
	done
	frames=$(perf script -i e.data -F ip 2>/dev/null | awk 'NF == 0 { if (n) { s += n; k++ }; n = 0; next } { n++ } END { if (k) printf "%.0f", s / k }')
	say "depth $depth (mean $frames frames written): ehframe $(printf '%s\n' "${es[@]}" | median_range) ns/sample, -g $(printf '%s\n' "${gs[@]}" | median_range) ns/sample"
done

say "-- 3. start-up: tables of libc and ten libraries"
for i in 0 1 2 3 4 5 6 7 8 9; do
	{
		echo "volatile unsigned long s$i;"
		for f in $(seq 0 199); do
			echo "__attribute__((noinline)) unsigned long f${i}_$f(unsigned long x) { for (int k = 0; k < (int)(x & 7); k++) s$i += x * $f + k; return s$i; }"
		done
		echo "unsigned long lib$i(unsigned long x) { return f${i}_0(x) + f${i}_199(x); }"
	} > l$i.c
	gcc -O2 -fomit-frame-pointer -fPIC -shared l$i.c -o libl$i.so
done
{
	for i in 0 1 2 3 4 5 6 7 8 9; do echo "unsigned long lib$i(unsigned long);"; done
	echo "#include <unistd.h>"
	echo "int main(void) { unsigned long s = 0; for (int r = 0; r < 1000; r++) {"
	for i in 0 1 2 3 4 5 6 7 8 9; do echo "s += lib$i(r);"; done
	echo "} sleep(1); return (int)(s & 1); }"
} > ten.c
gcc -O2 ten.c -o ten -L. $(for i in 0 1 2 3 4 5 6 7 8 9; do echo -ll$i; done) -Wl,-rpath,"$tmp"
"$P" -v --call-graph ehframe -F 99 -o s1.data -- ./ten > s1.log 2>&1
"$P" -v --call-graph ehframe -F 99 -o s2.data -- sh -c './ten & ./ten & wait' > s2.log 2>&1
one=$(grep -o 'unwind tables: [0-9]* built in [0-9.]* ms' s1.log)
two=$(grep -o 'unwind tables: [0-9]* built in [0-9.]* ms' s2.log)
say "one process: $one"
say "two processes of the same files (and sh): $two"

say "-- 4. table memory per MB of .eh_frame"
eh=0
for f in $(ldd ./ten | awk '$3 ~ /^\// { print $3 }') ./ten; do
	s=$(readelf -SW "$f" | awk '{ for (i = 1; i < NF; i++) if ($i == ".eh_frame") print $(i + 4) }' | head -1 | python3 -c 'import sys; print(int(sys.stdin.read().strip() or "0", 16))')
	eh=$((eh + s))
done
mem=$(grep -o '[0-9.]* MiB at most' s1.log | awk '{ print $1 }')
say "$(awk -v e="$eh" -v m="$mem" 'BEGIN { printf ".eh_frame %.2f MiB, tables %.2f MiB: %.2f MiB of table per MiB of .eh_frame", e / 1048576, m, m / (e / 1048576) }')"
