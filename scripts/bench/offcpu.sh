#!/usr/bin/env bash
# --off-cpu benchmark: what measuring every wait costs a program that
# switches a lot.  build/workloads/offcpu pingpong (two threads passing a
# byte through two pipes: two waits per round trip) runs alone and under
# `precord --off-cpu -g`, in turn, REPS times each, as fast as it can and
# paced at 5000 and 50000 round trips a second (10k and 100k waits a
# second), and under the systemd unit's -a -g -F 19 --aggregate with and
# without --off-cpu.  Per case: the median round trips a second of each, the BPF
# program's own time per run (kernel.bpf_stats_enabled: run_time_ns /
# run_cnt of on_switch, which runs on every switch of the machine),
# precord's CPU time (its rusage with its child's, less the workload's
# own), the output's bytes a second and what was lost.  Recorded with
# -F 99, so that the file's bytes are mostly the off-CPU samples'; the
# recording without --off-cpu (the same -g -F 99) is the cost of CPU
# sampling alone.  Reports, never
# fails on figures: only when a recording fails.
#
#   scripts/bench/offcpu.sh        (BENCH_SECS, default 3; BENCH_REPS, 3;
#                                   BENCH_OUT)
#
# bpf_stats is switched on for the runs and put back as it was.
set -euo pipefail
cd "$(dirname "$0")/../.."
. scripts/bench/lib.bash
need_root "precord loads BPF"
need_built build/workloads/offcpu
secs=${BENCH_SECS:-3}
reps=${BENCH_REPS:-3}
bench_setup
was=$(sysctl -n kernel.bpf_stats_enabled)
bench_cleanup() { sysctl -qw kernel.bpf_stats_enabled="$was"; }
sysctl -qw kernel.bpf_stats_enabled=1
export HOME=$tmp/home
WL=build/workloads/offcpu

# prog_cost PID: "run_cnt ns_per_run" of the on_switch program of precord PID
prog_cost() {
	local fd id
	for fd in /proc/"$1"/fd/*; do
		[ "$(readlink "$fd" 2>/dev/null)" = "anon_inode:bpf-prog" ] || continue
		id=$(awk '$1 == "prog_id:" { print $2 }' /proc/"$1"/fdinfo/"${fd##*/}" 2>/dev/null) || continue
		# not grep -q: bpftool would die of SIGPIPE, failing the pipe
		[[ "$(bpftool prog show id "$id" 2>/dev/null)" == *" name on_switch "* ]] || continue
		awk '$1 == "run_time_ns:" { t = $2 } $1 == "run_cnt:" { n = $2 }
		     END { printf "%d %.0f\n", n, n ? t / n : 0 }' /proc/"$1"/fdinfo/"${fd##*/}" 2>/dev/null || echo "0 0"
		return
	done
	echo "0 0"
}

median() { sort -n | awk '{ v[NR] = $1 } END { print (NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2) }'; }

report=$out/offcpu.txt
: > "$report"
# one_case LABEL RATE FLAG ARGS...: the ping-pong alone, under precord
# ARGS, under precord FLAG (--off-cpu or --off-cpu=user) ARGS, REPS times
# each in turn; one line
one_case() {
	local label=$1 rate=$2 flag=$3 a c r pid rec l lost=0 wcpu; shift 3
	: > "$tmp/alone"; : > "$tmp/cpuonly"; : > "$tmp/rec"; : > "$tmp/cost"; : > "$tmp/cpu"; : > "$tmp/bytes"
	for ((i = 0; i < reps; i++)); do
		"$WL" pingpong "$secs" "$rate" | sed -n 's/.*per_sec=\([0-9]*\).*/\1/p' >> "$tmp/alone"
		build/precord -q "$@" -o "$tmp/c.data" -- "$WL" pingpong "$secs" "$rate" |
			sed -n 's/.*per_sec=\([0-9]*\).*/\1/p' >> "$tmp/cpuonly"
		/usr/bin/time -f '%U %S' -o "$tmp/time" build/precord "$flag" "$@" -o "$tmp/p.data" -- \
			"$WL" pingpong "$secs" "$rate" > "$tmp/wl" 2> "$tmp/err" &
		pid=$!
		sleep "$(awk -v s="$secs" 'BEGIN { print s * 0.8 }')"
		rec=$(pgrep -P "$pid" -n || echo "$pid")
		[ -d /proc/"$rec"/fd ] && prog_cost "$rec" >> "$tmp/cost" || true
		wait "$pid" || die "the recording failed: $(cat "$tmp/err")"
		sed -n 's/.*per_sec=\([0-9]*\).*/\1/p' "$tmp/wl" >> "$tmp/rec"
		wcpu=$(sed -n 's/.*cpu=\([0-9.]*\).*/\1/p' "$tmp/wl")
		awk -v w="$wcpu" -v s="$secs" '{ printf "%.2f\n", 100 * ($1 + $2 - w) / s }' "$tmp/time" >> "$tmp/cpu"
		echo $(( $(stat -c %s "$tmp/p.data") / secs )) >> "$tmp/bytes"
		l=$(sed -n 's/.*(\([0-9]*\) samples, \([0-9]*\) lost).*/\2/p' "$tmp/err")
		lost=$((lost + ${l:-0}))
		grep -q "long waits were lost" "$tmp/err" && lost=$((lost + 1))
	done
	a=$(median < "$tmp/alone"); c=$(median < "$tmp/cpuonly"); r=$(median < "$tmp/rec")
	printf '%-6s %-8s %10s %10s %10s %7s %9s %9s %10s %6s\n' "$label" "$rate" "$a" "$c" "$r" \
		"$(awk -v a="$c" -v r="$r" 'BEGIN { printf "%.1f", a ? 100 * (a - r) / a : 0 }')" \
		"$(awk '$2 > 0 { print $2 }' "$tmp/cost" | median)" "$(median < "$tmp/cpu")" \
		"$(median < "$tmp/bytes")" "$lost" | tee -a "$report"
}

printf '%-6s %-8s %10s %10s %10s %7s %9s %9s %10s %6s\n' mode rate alone_rt/s rec_rt/s offcpu_rt/s fewer% bpf_ns recCPU% out_B/s lost | tee -a "$report"
for rate in 0 5000 50000; do
	one_case cmd "$rate" --off-cpu -g -F 99
	one_case user "$rate" --off-cpu=user -g -F 99
done
# the systemd unit's recording (scripts/precord.service), with --off-cpu or not
one_case unit 0 --off-cpu -a -g -F 19 --aggregate
one_case unit-u 0 --off-cpu=user -a -g -F 19 --aggregate
echo "mode: cmd = precord [--off-cpu] -g -F 99 -- pingpong; user: the same with --off-cpu=user; unit = precord [--off-cpu] -a -g -F 19 --aggregate (the systemd unit's), unit-u with --off-cpu=user. rate: round trips/s asked (0: as fast as they can; two waits each); rec_rt/s: under precord without --off-cpu; offcpu_rt/s: with it; fewer%: how many fewer than without; bpf_ns: on_switch's mean run time over every switch of the machine; recCPU%: precord's own CPU with --off-cpu, percent of one CPU; out_B/s: its file's bytes a second" | tee -a "$report"
