#!/usr/bin/env bats
# End-to-end: --aggregate counts identical samples in the kernel and writes
# one sample per distinct key whose PERIOD weighs them all: a much smaller
# file with the same profile, and nothing lost when the kernel's map fills.

load helpers

setup() { common_setup; require_recording; }
teardown() { common_teardown; }

REQ=BUILD_ID,SAMPLE_TIME

# overlap [--children] A B: profile-compare's overlap of A and B, in percent
overlap() {
	"$COMPARE" "$@" | tee -a compare.log | sed -n 's/^profile-compare: overlap \([0-9.]*\)%.*/\1/p'
}

# events FILE: the total event count of FILE (the sum of the periods)
events() {
	perf script -i "$1" -F period 2>/dev/null | awk '{ s += $1 } END { printf "%.0f\n", s }'
}

# taken LOG: the samples the BPF program took, from the -v summary line
taken() {
	sed -n 's/.*aggregate: \([0-9]*\) samples taken.*/\1/p' "$1"
}

@test "--aggregate at 999 Hz: at least 10x smaller, the same profile, self and children" {
	# one execution recorded twice at once: aggregated (the command's
	# precord) and not (-p); their profiles differ by sampling noise only
	PRECORD_WL_TRUTH=$T/truth same_exec_precord -v -g -F 999 --aggregate -o a.data -- \
		-g -F 999 -o n.data -- "$WL" hot3 4
	grep -q 'aggregate: .* samples taken' a.log
	lint a.data --require "$REQ"
	lint n.data --require "$REQ" --min-samples 2000
	# 10x smaller when the workload has a CPU all the time: the plain file
	# has a sample per 1/999 s of its CPU time, the aggregated one a
	# record per distinct stack per second of wall time; on a busy machine
	# the ratio is 10 times the workload's CPU time over the wall time it
	# took (from its first sample to its last), and at least 2 (with 22%
	# of a CPU the file was still 9x smaller: fewer samples a second have
	# fewer distinct stacks too)
	a=$(stat -c %s a.data); n=$(stat -c %s n.data)
	cpu=$(awk '$1 == "truth" { for (i = 2; i <= NF; i++) if ($i ~ /^cpu=/) { sub(/^cpu=/, "", $i); print $i } }' "$T/truth")
	span=$(perf script -i n.data -F time 2>/dev/null | awk 'NR == 1 { f = $1 + 0 } { l = $1 + 0 } END { print l - f }')
	ratio=$(awk -v c="$cpu" -v w="$span" 'BEGIN { r = (w > 0 ? c / w : 0); if (r > 1) r = 1; if (r < 0.2) r = 0.2; printf "%.2f\n", 10 * r }')
	echo "aggregated $a bytes, not aggregated $n bytes; $cpu s of CPU in $span s: at least ${ratio}x smaller" >&2
	awk -v a="$a" -v n="$n" -v r="$ratio" 'BEGIN { exit !(a * r <= n) }'
	# perf report's shares (PERIOD) are those of the plain recording: two
	# samplings of one execution.  The overlap is about 100 - D, D the sum
	# of the rows' differences; each of hot_a, hot_b and hot_c may differ
	# by noise_tol (2.5 sd of the difference of two samplings)
	s=$(taken a.log); min=$(awk -v t="$(noise_tol "$s")" 'BEGIN { print 100 - 3 * t }')
	self=$(overlap a.data n.data); children=$(overlap --children a.data n.data)
	cat compare.log >&2
	echo "overlap: self $self%, children $children%, of $s samples: at least $min%" >&2
	awk -v p="$self" -v m="$min" 'BEGIN { exit !(p >= m) }'
	awk -v p="$children" -v m="$min" 'BEGIN { exit !(p >= m) }'
	# and those the workload measured, within the noise of its samples
	like_truth share a.data "$T/truth" "$(noise_tol "$s")" hot_a hot_b hot_c
	like_truth share n.data "$T/truth" "$(noise_tol "$s")" hot_a hot_b hot_c
	# the aggregated samples weigh as much time as the plain ones: within 10%
	ea=$(events a.data); en=$(events n.data)
	echo "event count: aggregated $ea, not aggregated $en" >&2
	awk -v a="$ea" -v b="$en" 'BEGIN { exit !(a > 0.9 * b && a < 1.1 * b) }'
	# fewer records than samples: each stands for several, as many as the
	# file is smaller (the ratio above)
	records=$(perf script -i a.data -F period 2>/dev/null | wc -l)
	echo "$records records for $s samples" >&2
	[ "$records" -gt 0 ]
	awk -v k="$records" -v s="$s" -v r="$ratio" 'BEGIN { exit !(k * r <= s) }'
}

@test "--aggregate -c N: PERIOD is in the samples, count x N, and adds up to every sample taken" {
	run "$PRECORD" -v -g -c 1000000 --aggregate -o c.data -- "$WL" hot3 2
	echo "$output" >&2
	[ "$status" -eq 0 ]
	echo "$output" > rec.log
	summary=$output
	lint c.data --require "$REQ"
	perf report --header-only -i c.data 2>/dev/null | grep -q 'sample_type = .*PERIOD'
	# every period a multiple of N, some of several samples
	perf script -i c.data -F period 2>/dev/null | awk '$1 % 1000000 { exit 1 }'
	max=$(perf script -i c.data -F period 2>/dev/null | sort -n | tail -1)
	[ "$max" -ge 10000000 ]
	n=$(taken rec.log)
	[ "$n" -gt 500 ]
	[ "$(events c.data)" -eq $((n * 1000000)) ]
	[[ "$summary" == *"(${n} samples, 0 lost)"* ]]
}

@test "--aggregate with a full map: the rest go one by one, nothing lost, and it is said" {
	# 4 entries, 8 threads with their stacks: the map fills at once
	PRECORD_AGG_ENTRIES=4 run "$PRECORD" -v -g -c 1000000 --aggregate -o f.data -- "$WL" threads 8 2
	echo "$output" >&2
	[ "$status" -eq 0 ]
	echo "$output" > rec.log
	summary=$output
	lint f.data --require "$REQ"
	[[ "$summary" == *"samples were written one by one, the kernel's map being full"*"none lost"* ]]
	[[ "$summary" == *" 0 lost)"* ]]
	# samples in the file (PERIOD / N) == samples the BPF program took
	n=$(taken rec.log)
	[ "$n" -gt 1000 ]
	[ "$(events f.data)" -eq $((n * 1000000)) ]
	# and some were aggregated all the same (early flushes)
	records=$(perf script -i f.data -F period 2>/dev/null | wc -l)
	[ "$records" -lt "$n" ]
	[[ "$summary" =~ \(([1-9][0-9]*)\ early\) ]]
}

@test "--aggregate -p PID" {
	PRECORD_WL_TRUTH=$T/truth "$WL" hot3 30 & pid=$!
	sleep 0.2
	truth_snapshot "$T/truth" "$pid"
	run "$PRECORD" -v -g -F 999 --aggregate -p "$pid" -o p.data -- sleep 3
	echo "$output" >&2
	echo "$output" > rec.log
	truth_snapshot "$T/truth" "$pid"
	kill "$pid"; wait "$pid" || true
	[ "$status" -eq 0 ]
	lint p.data --require "$REQ"
	run perf report -i p.data --stdio --no-children -g none --sort pid -q
	[ "$(echo "$output" | grep -c '%')" -eq 1 ]
	[[ "$output" == *"$pid:workload"* ]]
	# hot_a, hot_b, hot_c: the CPU time the workload measured in each
	# between the two snapshots (PERIOD-weighted, as perf report reads
	# them), within 3.5 sd of the samples taken (~3000 idle: 3.7 points)
	cat truth >&2
	tol=$(noise_tol "$(taken rec.log)")
	like_truth --window share p.data truth "$tol" hot_a hot_b hot_c
	# every sample taken weighs its period (about 1 ms at 999 Hz)
	n=$(taken rec.log); e=$(events p.data)
	echo "$n samples taken, event count $e" >&2
	[ "$n" -gt 300 ]
	awk -v e="$e" -v n="$n" 'BEGIN { exit !(e > 0.9 * n * 1001001 && e < 1.1 * n * 1001001) }'
	[ "$(stat -c %s p.data)" -lt 100000 ]
}

@test "--aggregate -a: every CPU keeps its own counts" {
	# one busy workload per CPU: an idle CPU's cpu-clock hardly fires
	# (perf record -a on a quiet machine gets ~0 samples there too)
	online=$(getconf _NPROCESSORS_ONLN)
	pids=()
	for ((i = 0; i < online; i++)); do "$WL" hot3 30 & pids+=($!); done
	sleep 0.2
	run "$PRECORD" -v -a -g -F 999 --aggregate -o x.data -- sleep 2
	echo "$output" >&2
	kill "${pids[@]}"; wait "${pids[@]}" || true
	[ "$status" -eq 0 ]
	lint x.data --require "$REQ"
	seen=$(perf script -i x.data -F cpu 2>/dev/null | tr -d '[] ' | sort -u | wc -l)
	echo "CPUs with samples: $seen of $online" >&2
	[ "$seen" -eq "$online" ]
	# 2 s of every CPU, as cpu-clock ns: within 15%
	e=$(events x.data)
	echo "event count $e" >&2
	awk -v e="$e" -v c="$online" 'BEGIN { exit !(e > 0.85 * 2e9 * c && e < 1.15 * 2e9 * c) }'
	[ "$(share x.data hot_a)" != 0 ]
}

@test "--aggregate with --call-graph dwarf is refused in one line" {
	run "$PRECORD" --aggregate --call-graph dwarf -o d.data -- true
	[ "$status" -ne 0 ]
	[ "${#lines[@]}" -eq 1 ]
	[[ "$output" == *"--aggregate cannot count --call-graph dwarf samples"* ]]
	[ ! -e d.data ]
}
