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

# children FILE SYMBOL: children share (percent, a number) of SYMBOL
children() {
	perf report -i "$1" --stdio --children --sort sym -g none -q 2>/dev/null |
		awk -v s="$2" '$NF == s { gsub(/%/, "", $1); print $1; f = 1; exit } END { if (!f) print 0 }'
}

# The functions on the workload's paths (main → path_a → qsort → cmp_ints,
# main → path_b → lib_work → lib_leaf, main → path_c → recurse → rec_leaf).
PATHS="main path_a __GI___qsort_r cmp_ints path_b lib_work lib_leaf path_c recurse rec_leaf"

@test "dwarf: children shares within 3 points of perf record --call-graph dwarf, main in >= 95%" {
	perf record -q --call-graph dwarf -F 999 -o p.data -- "$NOFP" 3 > /dev/null 2>&1
	run "$PRECORD" --call-graph dwarf -F 999 -o x.data -- "$NOFP" 3
	[ "$status" -eq 0 ]
	[[ "$output" != *malformed* ]]
	lint x.data --min-samples 2000
	perf evlist -v -i x.data | grep -q 'sample_regs_user: 0xff0fff'
	perf evlist -v -i x.data | grep -q 'sample_stack_user: 8192'
	perf evlist -v -i x.data | grep -q 'exclude_callchain_user: 1'
	perf report -D -i x.data 2>/dev/null | grep -q 'user regs: mask 0xff0fff ABI 64-bit'
	fail=0
	for f in $PATHS; do
		p=$(children p.data "$f"); x=$(children x.data "$f")
		echo "$f: perf $p precord $x" >&2
		within "$p" "$x" 3 || fail=1
	done
	[ "$fail" -eq 0 ]
	main=$(children x.data main)
	awk -v m="$main" 'BEGIN { exit !(m >= 95) }'
	# the paths are there in their known ratios (50:30:20 of CPU time)
	within "$(children x.data path_a)" 50 8
	within "$(children x.data path_b)" 30 8
	within "$(children x.data path_c)" 20 8
	# smaller than perf's file: only the stack that holds data is written
	ps=$(stat -c %s p.data); xs=$(stat -c %s x.data)
	echo "perf $ps bytes, precord $xs bytes" >&2
	[ "$xs" -lt "$ps" ]
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
	awk -v m="$(children y.data main)" 'BEGIN { exit !(m >= 95) }'
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
	"$NOFP" 30 & BG=$!
	sleep 0.3
	run "$PRECORD" --call-graph dwarf -F 999 -p "$BG" --duration 1.5 -o x.data
	[ "$status" -eq 0 ]
	lint x.data --min-samples 500
	awk -v m="$(children x.data main)" 'BEGIN { exit !(m >= 95) }'
	within "$(children x.data path_a)" 50 10
}

@test "dwarf -a: every task; kernel threads get no registers and no stack" {
	"$NOFP" 30 & BG=$!
	run "$PRECORD" --call-graph dwarf -F 499 -a --duration 1 -o x.data
	[ "$status" -eq 0 ]
	lint x.data --min-samples 200
	# the workload unwinds to main
	perf report -i x.data --stdio --children --sort comm,sym -g none -q --comm nofp 2>/dev/null |
		grep -q ' main$'
	# the idle task's samples (pid 0) carry abi 0 and an empty stack, as
	# perf record's do (perf -D prints "ustack: size 0" for them too)
	perf report -D -i x.data 2>/dev/null | awk '
		/PERF_RECORD_SAMPLE/ { idle = ($0 ~ / 0\/0: /) }
		idle && /user regs:/ { bad = 1; print }
		idle && /ustack:/ && !/ustack: size 0,/ { bad = 1; print }
		END { exit bad }'
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
