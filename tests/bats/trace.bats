#!/usr/bin/env bats
# Function entry/exit tracing with uprobes, XRay-FDR-style records.

load helpers

TR=$ROOT/build/workloads/tracee

setup() { common_setup; require_recording; need "tracee built" test -x "$TR"; }
teardown() { common_teardown; }

# check_calls FILE M N: per thread exactly M outer and N inner calls, every
# return after its entry, inner calls nested inside outer calls.
check_calls() {
	perf script -i "$1" -F tid,time,event,period 2>/dev/null | awk -v M="$2" -v N="$3" '
		# columns: tid, time, period (the duration on returns), event
		{ tid = $1; ev = $4; sub(/:$/, "", ev) }
		ev == "precord:outer" { if (depth[tid] != 0) bad = bad " nested-outer"; depth[tid] = 1; oe[tid]++; next }
		ev == "precord:inner" { if (depth[tid] != 1) bad = bad " inner-outside"; depth[tid] = 2; ie[tid]++; next }
		ev == "precord:inner__return" {
			if (depth[tid] != 2) bad = bad " inner-return-without-entry"
			depth[tid] = 1; ir[tid]++; isum[tid] += $4; next }
		ev == "precord:outer__return" {
			if (depth[tid] != 1) bad = bad " outer-return-without-entry"
			if (isum[tid] > $3) bad = bad " inner-longer-than-outer"
			isum[tid] = 0; depth[tid] = 0; or[tid]++; next }
		END {
			for (t in oe) {
				n++
				printf "tid %s: outer %d/%d inner %d/%d\n", t, oe[t], or[t], ie[t], ir[t]
				if (oe[t] != M || or[t] != M || ie[t] != N || ir[t] != N) bad = bad " counts"
			}
			if (n != 2) bad = bad " threads=" n + 0
			if (bad != "") { print "BAD:" bad; exit 1 }
		}' >&2
}

@test "--trace W:*er -- W: exact calls per thread, nested, in order" {
	run "$PRECORD" --trace "$TR:*er" -o x.data -- "$TR" 5 13
	echo "$output" >&2
	[ "$status" -eq 0 ]
	[[ "$output" == *"36 traced calls, 0 lost"* ]]
	check_calls x.data 5 13
	lint x.data --require EVENT_DESC
}

@test "both attach paths (uprobe_multi links, one uprobe per function) give the same calls" {
	# Linux 6.6+ takes uprobe_multi links; PRECORD_UPROBE_MULTI=0 forces the
	# path older kernels take.  -vv says which one was used.
	run "$PRECORD" -vv --trace "$TR:*er" -o m.data -- "$TR" 3 7
	[ "$status" -eq 0 ]
	grep -q "attached (uprobe_multi links)" <<<"$output"
	check_calls m.data 3 7
	PRECORD_UPROBE_MULTI=0 run "$PRECORD" -vv --trace "$TR:*er" -o p.data -- "$TR" 3 7
	[ "$status" -eq 0 ]
	grep -q "4 uprobes and uretprobes attached (one link each)" <<<"$output"
	check_calls p.data 3 7
}

@test "--trace on a running process (-p), from the moment tracing started" {
	"$TR" 4 9 wait > tracee.out &
	tpid=$!
	for i in $(seq 50); do grep -q ready tracee.out && break; sleep 0.1; done
	"$PRECORD" -q --trace '*er' -p "$tpid" -o x.data &
	ppid=$!
	sleep 1.5
	kill -USR1 "$tpid"
	wait "$ppid"
	check_calls x.data 4 9
	lint x.data
}

# trace_p_with_other MODE: precord MODE --trace '*er' -p a waiting tracee
# (4 9) while another process runs the same binary (10 20000 calls);
# precord -v's messages in trace.err.
trace_p_with_other() {
	"$TR" 4 9 wait > tracee.out &
	tpid=$!
	for i in $(seq 50); do grep -q ready tracee.out && break; sleep 0.1; done
	"$PRECORD" -v "$@" --trace '*er' -p "$tpid" -o x.data 2> trace.err &
	ppid=$!
	sleep 1.5
	"$TR" 10 20000 > /dev/null
	kill -USR1 "$tpid"
	wait "$ppid"
	cat trace.err >&2
	check_calls x.data 4 9
}

@test "unbound probes: another process running the code takes the traps, hits dropped" {
	trace_p_with_other
	grep -Eq "trace: [0-9]+ hits in tasks outside the targets dropped .*-i binds" trace.err
}

@test "-i binds the probes to the target: another process running the code takes no hits" {
	trace_p_with_other -i
	! grep -q "outside the targets" trace.err
	PRECORD_UPROBE_MULTI=0 trace_p_with_other -i
	! grep -q "outside the targets" trace.err
}

@test "-i -- command: the command's calls are traced, its children's are not" {
	run "$PRECORD" -i --trace "$TR:*er" -o x.data -- "$TR" 5 13
	[ "$status" -eq 0 ]
	check_calls x.data 5 13
	run "$PRECORD" -i --trace "$TR:*er" -o y.data -- sh -c "$TR 2 3; true"
	[[ "$output" == *" 0 traced calls"* ]]
	run "$PRECORD" --trace "$TR:*er" -o z.data -- sh -c "$TR 2 3; true"
	[[ "$output" == *" 10 traced calls"* ]]
}

@test "on a terminal, progress shows samples, traced calls, size and losses" {
	need "script (util-linux)" command -v script
	script -qec "$PRECORD --trace '$TR:*er' -o x.data -- $TR 50 200000" tty.log > /dev/null
	tr '\r' '\n' < tty.log > tty.txt
	cat tty.txt >&2
	grep -Eq '\[ precord: [0-9.]+ s, [0-9]+ samples, [0-9]+ traced calls, [0-9.]+ MB, [0-9]+ lost \]' tty.txt
	grep -q 'Captured and wrote .* (0 samples, 400100 traced calls, 0 lost)' tty.txt
}

@test "tracing together with sampling passes the perf-compatibility check" {
	"$PRECORD" -q -F 999 -g --trace "$TR:outer" -o x.data -- "$TR" 40 200000000
	lint x.data --require EVENT_DESC,BUILD_ID
	n=$(perf script -i x.data -F event 2>/dev/null | grep -c 'cpu-clock')
	[ "$n" -gt 10 ]
	[ "$(perf script -i x.data -F tid,event 2>/dev/null | grep -c 'precord:outer:')" -eq 80 ]
}

@test "--trace-args 2 shows the arguments" {
	"$PRECORD" -q --trace "$TR:inner" --trace-args 2 -o x.data -- "$TR" 1 3
	run perf script -i x.data -F tid,event,uregs
	echo "$output" >&2
	[ "$status" -eq 0 ]
	# inner(call index, thread number): DI = 0..2, SI = 1 or 2
	echo "$output" | grep 'precord:inner:' | grep 'DI:0x2' | grep -q 'SI:0x1'
	echo "$output" | grep 'precord:inner:' | grep 'DI:0x0' | grep -q 'SI:0x2'
	[ "$(echo "$output" | grep -c 'precord:inner:.*DI:')" -eq 6 ]
	lint x.data
}

@test "--xray-out: llvm-xray fdr-dump and account read it with the same counts" {
	need "llvm-xray" command -v llvm-xray
	"$PRECORD" -q --trace "$TR:*er" --xray-out calls.xray -o x.data -- "$TR" 6 20
	[ -s calls.xray ]
	[ -s calls.xray.map.yaml ]
	run llvm-xray fdr-dump -verify calls.xray
	[ "$status" -eq 0 ]
	entries=$(echo "$output" | grep -c 'Function.*kind=function-enter\|FunctionEnter\|<Function Enter' || true)
	echo "fdr-dump lines: $(echo "$output" | wc -l), entries $entries" >&2
	run llvm-xray account -instr_map=calls.xray.map.yaml calls.xray
	echo "$output" >&2
	[ "$status" -eq 0 ]
	# funcid count ... : outer 12 calls, inner 40 calls over both threads
	echo "$output" | awk '$2 == 12 { o++ } $2 == 40 { i++ } END { exit !(o == 1 && i == 1) }'
}

@test "tracing errors: no match, not ELF, too many matches" {
	run "$PRECORD" --trace "$TR:no_such_function_*" -o x.data -- "$TR" 1 1
	[ "$status" -ne 0 ]
	[[ "$output" == *"no_such_function_*"* ]]
	[ ! -e x.data ]
	echo "not an elf" > notelf
	run "$PRECORD" --trace "$T/notelf:*" -o x.data -- "$TR" 1 1
	[ "$status" -ne 0 ]
	[[ "$output" == *"notelf"* ]]
	[ ! -e x.data ]
	run "$PRECORD" --trace "libc.so.6:*" -o x.data -- "$TR" 1 1
	[ "$status" -ne 0 ]
	[[ "$output" == *"narrower"* || "$output" == *"matches"* ]]
	[ ! -e x.data ]
}

@test "--trace with -a traces every process" {
	run "$PRECORD" -a --trace "$TR:inner" -o x.data -- "$TR" 1 10
	echo "$output" >&2
	[ "$status" -eq 0 ]
	[[ "$output" == *"20 traced calls"* ]]
	[ "$(perf script -i x.data -F event 2>/dev/null | grep -c 'precord:inner__return:')" -eq 20 ]
	lint x.data
}
