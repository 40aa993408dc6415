#!/usr/bin/env bash
# --aggregate benchmark: the file's size, the bytes of its sample records
# per sample taken and per second (the rest of the file, mostly what -a
# finds running at the start, does not grow with time), and the BPF
# program's own cost per sample (kernel.bpf_stats_enabled: run_time_ns /
# run_cnt of precord's on_sample), with and without --aggregate, at 99 and
# 999 Hz, for -g on workload hot3 and for -a -g while hot3 runs.  Reports,
# never fails on figures: only when a recording fails.
#
#   scripts/bench/aggregate.sh        (BENCH_SECS, default 4; BENCH_OUT)
#
# bpf_stats is switched on for the runs and put back as it was.
set -euo pipefail
cd "$(dirname "$0")/../.."
[ "$(id -u)" = 0 ] || { echo "aggregate.sh: run as root (precord loads BPF)" >&2; exit 1; }
for f in build/precord build/workloads/workload; do
	[ -x "$f" ] || { echo "aggregate.sh: $f is not built: run make" >&2; exit 1; }
done
command -v bpftool >/dev/null || { echo "aggregate.sh: bpftool is missing" >&2; exit 1; }

secs=${BENCH_SECS:-4}
out=${BENCH_OUT:-build/bench}
mkdir -p "$out"
tmp=$(mktemp -d /tmp/precord-bench-agg.XXXXXX)
was=$(sysctl -n kernel.bpf_stats_enabled)
bg=
cleanup() {
	[ -n "$bg" ] && kill "$bg" 2>/dev/null
	sysctl -qw kernel.bpf_stats_enabled="$was"
	rm -rf "$tmp"
}
trap cleanup EXIT
sysctl -qw kernel.bpf_stats_enabled=1
export HOME=$tmp

# prog_cost PID: "run_cnt ns_per_run" of precord PID's on_sample
. scripts/bench/lib.bash
prog_cost() { bpf_prog_cost "$1" on_sample; }

# sample_bytes FILE: bytes of the PERF_RECORD_SAMPLE records (the rest,
# mostly the processes found at the start with -a, does not grow with time)
sample_bytes() {
	python3 -c '
import struct, sys
with open(sys.argv[1], "rb") as f:
    b = f.read()
off, size = struct.unpack_from("<QQ", b, 40)
pos, end, total = off, off + size, 0
while pos + 8 <= end:
    t, _, sz = struct.unpack_from("<IHH", b, pos)
    if sz < 8:
        break
    if t == 9:
        total += sz
    pos += sz
print(total)' "$1"
}

printf '%-6s %5s %-5s %9s %9s %10s %10s %9s\n' mode Hz agg samples file_B smpB/smp smpB/s bpf_ns \
	| tee "$out/aggregate.txt"
for mode in "-g" "-a -g"; do
	if [ "$mode" = "-a -g" ]; then
		build/workloads/workload hot3 600 & bg=$!
	fi
	for hz in 99 999; do
		for agg in "" --aggregate; do
			f=$tmp/x.data
			# -g: hot3 runs for its duration; -a: the time is the
			# command's (hot3 SECS counts its own CPU time)
			cmd=(build/workloads/workload hot3 "$secs")
			[ "$mode" = "-a -g" ] && cmd=(sleep "$secs")
			t0=$(date +%s.%N)
			# shellcheck disable=SC2086
			build/precord -N $mode -F "$hz" $agg -o "$f" -- "${cmd[@]}" 2> "$tmp/log" & rec=$!
			cost="0 0"
			while kill -0 "$rec" 2>/dev/null; do
				c=$(prog_cost "$rec")
				[ "${c% *}" != 0 ] && cost=$c
				sleep 0.2
			done
			wait "$rec"
			el=$(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN { print b - a }')
			n=$(sed -n 's/.*(\([0-9]*\) samples.*/\1/p' "$tmp/log")
			size=$(stat -c %s "$f")
			data=$(sample_bytes "$f")
			printf '%-6s %5s %-5s %9s %9s %10.1f %10.0f %9s\n' "$mode" "$hz" \
				"${agg:+yes}" "$n" "$size" "$(awk -v d="$data" -v n="$n" 'BEGIN { print n ? d / n : 0 }')" \
				"$(awk -v s="$data" -v t="$el" 'BEGIN { print s / t }')" "${cost#* }" \
				| tee -a "$out/aggregate.txt"
		done
	done
	if [ -n "$bg" ]; then
		kill "$bg"; wait "$bg" 2>/dev/null || true; bg=
	fi
done
