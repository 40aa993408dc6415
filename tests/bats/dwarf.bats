#!/usr/bin/env bats
# End-to-end: --call-graph dwarf on code built without frame pointers
# (build/workloads/nofp and its libnofp.so, gcc -O2 -fomit-frame-pointer),
# unwound by perf from the user registers and stack as perf record's own.

load helpers

NOFP=$ROOT/build/workloads/nofp

setup() {
	common_setup
	require_recording
	need "nofp workload built" test -x "$NOFP"
}
teardown() {
	[ -n "${BG:-}" ] && kill "$BG" 2>/dev/null && wait "$BG" 2>/dev/null
	common_teardown
}

# The functions on the workload's paths (main → path_a → qsort → cmp_ints,
# main → path_b → lib_work → lib_leaf, main → path_c → recurse → rec_leaf).
PATHS="main path_a __GI___qsort_r cmp_ints path_b lib_work lib_leaf path_c recurse rec_leaf"

@test "dwarf: children shares within 3 points of perf record --call-graph dwarf of the same execution; the paths' shares are the workload's measured ones" {
	# one execution, recorded by perf record -p and precord at once
	PRECORD_WL_TRUTH=$T/truth same_exec --call-graph dwarf -F 999 -o p.data -- \
		--call-graph dwarf -F 999 -o x.data -- "$NOFP" 3
	output=$(cat precord.log)
	[[ "$output" != *malformed* ]]
	lint x.data --min-samples 2000
	perf evlist -v -i x.data | grep -q 'sample_regs_user: 0xff0fff'
	perf evlist -v -i x.data | grep -q 'sample_stack_user: 8192'
	perf evlist -v -i x.data | grep -q 'exclude_callchain_user: 1'
	perf report -D -i x.data 2>/dev/null | grep -q 'user regs: mask 0xff0fff ABI 64-bit'
	# ~3000 samples each: the two samplings of one execution differ by
	# sd <= 1.3 points on a 50% share (binomial; seen: under 1.2)
	fail=0
	for f in $PATHS; do
		p=$(children p.data "$f"); x=$(children x.data "$f")
		echo "$f: perf $p precord $x" >&2
		within "$p" "$x" 3 || fail=1
	done
	[ "$fail" -eq 0 ]
	# perf unwinds precord's stacks to main as far as it unwinds its own
	# (not always all of them: perf 6.1 stops inside glibc's qsort in
	# some executions, depending on the stack's layout, in both files)
	awk -v m="$(children x.data main)" -v p="$(children p.data main)" 'BEGIN { exit !(m >= 45 && m >= p - 2) }'
	# path_b against path_c: the CPU time the workload measured in each
	# (path_a's share is perf's, above: perf's unwinding of qsort is what
	# fails when it does).  ~1500 samples: sd <= 1.3 points, 4 is 3 sd
	cat truth >&2
	like_truth children x.data truth 4 path_b path_c
	# smaller than perf's file a sample (the two may have taken different
	# counts of this execution's samples): only the stack that holds data
	# is written
	pn=$(perf report -i p.data --stats 2>/dev/null | awk '/ SAMPLE events:/ { print $3; exit }')
	xn=$(perf report -i x.data --stats 2>/dev/null | awk '/ SAMPLE events:/ { print $3; exit }')
	ps=$(stat -c %s p.data); xs=$(stat -c %s x.data)
	echo "perf $ps bytes for $pn samples, precord $xs bytes for $xn samples" >&2
	awk -v p="$ps" -v x="$xs" -v pn="$pn" -v xn="$xn" 'BEGIN { exit !(pn > 0 && xn > 0 && x / xn < p / pn) }'
}

@test "dwarf,SIZE: SIZE in the attr; a small SIZE loses the outer frames, not the samples" {
	run "$PRECORD" --call-graph dwarf,1024 -F 999 -o x.data -- "$NOFP" 1
	[ "$status" -eq 0 ]
	lint x.data --min-samples 500
	perf evlist -v -i x.data | grep -q 'sample_stack_user: 1024'
	# no ustack above SIZE
	! perf report -D -i x.data 2>/dev/null | awk '/ustack: size/ { if ($3 + 0 > 1024) { print; bad = 1 } } END { exit !bad }'
	run "$PRECORD" --call-graph dwarf,65528 -F 499 -o y.data -- "$NOFP" 1
	[ "$status" -eq 0 ]
	lint y.data --min-samples 250
	# every stack perf unwinds reaches main: path_b's and path_c's (perf
	# 6.1 stops inside glibc's qsort under path_a in some executions,
	# perf record's own files as well: see the first test)
	b=$(children y.data path_b); c=$(children y.data path_c); m=$(children y.data main)
	echo "main $m path_b $b path_c $c" >&2
	awk -v m="$m" -v b="$b" -v c="$c" 'BEGIN { exit !(b + c >= 30 && m >= b + c - 2) }'
}

@test "dwarf: bad SIZE values are refused with one line, nothing recorded" {
	for bad in 0 7 65536 70000 abc -8 8x ""; do
		run "$PRECORD" --call-graph "dwarf,$bad" -o x.data -- true
		echo "dwarf,$bad: $status $output" >&2
		[ "$status" -ne 0 ]
		[ "${#lines[@]}" -eq 1 ]
		[[ "$output" == *"stack size"* ]]
		[ ! -e x.data ]
	done
	run "$PRECORD" --call-graph lbr -o x.data -- true
	[ "$status" -ne 0 ]
	[[ "$output" == *"fp, dwarf[,SIZE] or ehframe"* ]]
}

@test "-g still means frame pointers; the last --call-graph/-g wins" {
	run "$PRECORD" -g -F 999 -o x.data -- "$NOFP" 0.5
	[ "$status" -eq 0 ]
	lint x.data
	! perf evlist -v -i x.data | grep -q 'REGS_USER'
	perf evlist -v -i x.data | grep -q 'CALLCHAIN'
	run "$PRECORD" --call-graph dwarf -g -F 999 -o y.data -- "$NOFP" 0.5
	[ "$status" -eq 0 ]
	! perf evlist -v -i y.data | grep -q 'STACK_USER'
	run "$PRECORD" -g --call-graph dwarf -F 999 -o z.data -- "$NOFP" 0.5
	[ "$status" -eq 0 ]
	perf evlist -v -i z.data | grep -q 'STACK_USER'
}

@test "dwarf -p: a running process, its data mappings synthesized for the unwinder" {
	PRECORD_WL_TRUTH=$T/truth "$NOFP" 30 & BG=$!
	sleep 0.3
	truth_snapshot "$T/truth" "$BG"
	# perf record -p beside it, over the same seconds: how far perf
	# unwinds this execution's stacks (see the first test)
	perf record -q --call-graph dwarf -F 999 -p "$BG" -o p.data -- sleep 3.3 >/dev/null 2>&1 &
	prec=$!
	run "$PRECORD" --call-graph dwarf -F 999 -p "$BG" --duration 3 -o x.data
	[ "$status" -eq 0 ]
	truth_snapshot "$T/truth" "$BG"
	wait "$prec"
	# 3 s of a workload that gets what CPU a busy machine leaves it
	lint x.data --min-samples 300
	m=$(children x.data main); p=$(children p.data main)
	echo "main: precord $m perf $p" >&2
	awk -v m="$m" -v p="$p" 'BEGIN { exit !(m >= 45 && m >= p - 3) }'
	# path_b against path_c over the recorded seconds: the CPU time the
	# workload measured in each between the two snapshots.  Over 700
	# samples in the two (~1500 idle): sd <= 1.9 points, 6 is 3.2 sd
	cat truth >&2
	like_truth --window children x.data truth 6 path_b path_c
}

@test "dwarf -a: every task; kernel threads get no registers and no stack" {
	"$NOFP" 30 & BG=$!
	run "$PRECORD" --call-graph dwarf -F 499 -a --duration 1 -o x.data
	echo "$output" >&2
	[ "$status" -eq 0 ]
	# -a in dwarf mode copies 8 KiB a sample: on a loaded machine some
	# are lost (72% seen), which the file must say (LOST_SAMPLES); perf
	# unwinding 8 KiB stacks of every task beside a CPU hog took over the
	# checker's 60 s a reader: 300 s, still far from a hang
	PERF_CHECK_TIMEOUT=300 lint_lossy x.data --min-samples 50
	# every task: the workload, and others (the idle task or any other)
	perf script -i x.data -F pid 2>/dev/null | sort -u > pids
	grep -qw "$BG" pids
	[ "$(wc -l < pids)" -ge 2 ]
	# the workload unwinds to main
	perf report -i x.data --stdio --children --sort comm,sym -g none -q --comm nofp 2>/dev/null |
		grep -q ' main$'
	# kernel threads (kthreadd's children) and the idle task (pid 0)
	# carry abi 0 and an empty stack, as perf record's samples do (perf
	# -D prints "ustack: size 0" for them too)
	kt=$(ps -e -o pid=,ppid= | awk '$1 == 2 || $2 == 2 { printf "%s%s", s, $1; s = "|" }')
	perf report -D -i x.data 2>/dev/null | awk -v kt="^($kt)/" '
		/PERF_RECORD_SAMPLE/ { split($0, a, ": "); k = 0
			for (i in a) if (a[i] ~ /^[0-9]+\/[0-9]+$/) { k = (a[i] == "0/0" || a[i] ~ kt); break }
			n += k }
		k && /user regs:/ { bad = 1; print }
		k && /ustack:/ && !/ustack: size 0,/ { bad = 1; print }
		END { print n + 0 " samples of kernel threads and the idle task"; exit bad }' >&2
}

@test "dwarf with threads and with --trace (several attrs, IDENTIFIER)" {
	run "$PRECORD" --call-graph dwarf -F 999 -o t.data -- "$WL" threads 2 1
	[ "$status" -eq 0 ]
	lint t.data --min-samples 1000
	# worker threads unwind through start_thread (libc, no frame pointers)
	awk -v m="$(children t.data start_thread)" 'BEGIN { exit !(m >= 90) }'
	run "$PRECORD" --call-graph dwarf -F 999 --trace "$NOFP:path_*" -o x.data -- "$NOFP" 1
	[ "$status" -eq 0 ]
	lint x.data --min-samples 500
	perf evlist -v -i x.data | grep -q 'cpu-clock: .*REGS_USER|STACK_USER|IDENTIFIER'
	perf script -i x.data -F event 2>/dev/null | grep -q path_a
	awk -v m="$(children x.data cmp_ints)" 'BEGIN { exit !(m >= 25) }'
}
