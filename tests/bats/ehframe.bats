#!/usr/bin/env bats
# End-to-end: --call-graph ehframe, user stacks unwound in the BPF program
# from tables built from .eh_frame, written as -g's plain CALLCHAIN.  The
# oracle is perf record --call-graph dwarf on the same workloads (built
# without frame pointers: build/workloads/nofp*).

load helpers

NOFP=$ROOT/build/workloads/nofp
EXC=$ROOT/build/workloads/nofp-exc
SIG=$ROOT/build/workloads/nofp-signal
LIBNOFP=$ROOT/build/workloads/libnofp.so
JS=$ROOT/tests/workloads/js/hot.js

setup() {
	common_setup
	require_recording
	need "nofp workloads built" test -x "$NOFP" -a -x "$EXC" -a -x "$SIG"
	ls /tmp/perf-*.map 2>/dev/null | sort > "$T/maps.before" || true
}
teardown() {
	[ -n "${BG:-}" ] && kill "$BG" 2>/dev/null && wait "$BG" 2>/dev/null
	if [ -n "${T:-}" ] && [ -f "$T/maps.before" ]; then
		ls /tmp/perf-*.map 2>/dev/null | sort | comm -13 "$T/maps.before" - | xargs -r rm -f
	fi
	common_teardown
}

# per_sample FILE: mean bytes of its PERF_RECORD_SAMPLE records
per_sample() {
	perf report -D -i "$1" 2>/dev/null |
		awk 'function hex(h,  v, i) { v = 0; for (i = 1; i <= length(h); i++) v = v * 16 + index("0123456789abcdef", substr(h, i, 1)) - 1; return v }
		     /PERF_RECORD_SAMPLE/ { if (match($0, /\[0x[0-9a-f]+\]/)) { s += hex(substr($0, RSTART + 3, RLENGTH - 4)); n++ } }
		     END { if (n) printf "%.1f\n", s / n; else print 0 }'
}

# fixed FILE: mean bytes of its samples besides the callchain's entries
fixed() {
	perf report -D -i "$1" 2>/dev/null |
		awk 'function hex(h,  v, i) { v = 0; for (i = 1; i <= length(h); i++) v = v * 16 + index("0123456789abcdef", substr(h, i, 1)) - 1; return v }
		     /PERF_RECORD_SAMPLE/ { if (match($0, /\[0x[0-9a-f]+\]/)) { s += hex(substr($0, RSTART + 3, RLENGTH - 4)); n++ } }
		     /\.\.\. FP chain: nr:/ { split($0, a, "nr:"); s -= 8 * a[2] }
		     END { if (n) printf "%.1f\n", s / n; else print 0 }'
}

# same_paths PERF_FILE PRECORD_FILE TOL FUNC...: children shares agree
same_paths() {
	local p=$1 x=$2 tol=$3 fail=0 f a b; shift 3
	for f in "$@"; do
		a=$(children "$p" "$f"); b=$(children "$x" "$f")
		echo "$f: perf $a precord $b" >&2
		within "$a" "$b" "$tol" || fail=1
	done
	[ "$fail" -eq 0 ]
}

# The functions on nofp's paths (main → path_a → qsort → cmp_ints,
# main → path_b → lib_work → lib_leaf, main → path_c → recurse → rec_leaf).
PATHS="main path_a __GI___qsort_r cmp_ints path_b lib_work lib_leaf path_c recurse rec_leaf"

@test "ehframe: children shares within 3 points of perf record --call-graph dwarf of the same execution, main in >= 95%, a -g-shaped file" {
	PRECORD_WL_TRUTH=$T/truth same_exec --call-graph dwarf -F 999 -o p.data -- \
		-v --call-graph ehframe -F 999 -o x.data -- "$NOFP" 4
	output=$(cat precord.log)
	[[ "$output" != *malformed* ]]
	[[ "$output" == *"unwind tables: "*" built"* ]]
	lint x.data --min-samples 3000
	# -g's attr: CALLCHAIN, no user registers or stack, nothing excluded
	perf evlist -v -i x.data | grep -q 'sample_type: .*CALLCHAIN'
	! perf evlist -v -i x.data | grep -Eq 'REGS_USER|STACK_USER|exclude_callchain_user'
	# --children needs no option: perf report shows the chains as -g's.
	# ~4000 samples each: two samplings of one execution differ by sd <=
	# 1.1 points on a 50% share (binomial; seen: under 1.2).  perf 6.1
	# stops unwinding inside glibc's qsort in some executions (its dwarf
	# mode, on perf record's own file): then the frames above it are
	# compared with the workload's measured time only (below)
	p=$(children p.data main)
	if awk -v p="$p" 'BEGIN { exit !(p >= 95) }'; then
		same_paths p.data x.data 3 $PATHS
	else
		echo "perf unwound $p% to main: qsort's callers not compared with perf's" >&2
		same_paths p.data x.data 3 cmp_ints path_b lib_work lib_leaf path_c recurse rec_leaf
	fi
	main=$(children x.data main)
	awk -v m="$main" 'BEGIN { exit !(m >= 95) }'
	# the paths' shares: the CPU time the workload measured in each, in
	# this execution (sd <= 0.8 points at ~4000 samples; 3 is 3.7 sd)
	cat truth >&2
	like_truth children x.data truth 3 path_a path_b path_c
	# at least 20x smaller samples than perf's dwarf mode
	ps=$(per_sample p.data); xs=$(per_sample x.data)
	echo "bytes per sample: perf dwarf $ps, precord ehframe $xs" >&2
	awk -v p="$ps" -v x="$xs" 'BEGIN { exit !(x > 0 && x * 20 <= p) }'
}

# Where frame pointers exist the stacks are -g's, plus the frames -g
# cannot see: _start and __libc_start_main (libc has no frame pointers),
# two words more a sample; the rest of a sample is -g's to the byte.
@test "ehframe: bytes per sample within 10% of -g where frame pointers exist (but for the 2 frames -g loses); the same stacks" {
	PRECORD_WL_TRUTH=$T/g.truth run "$PRECORD" -g -F 999 -o g.data -- "$WL" hot3 2
	[ "$status" -eq 0 ]
	PRECORD_WL_TRUTH=$T/x.truth run "$PRECORD" --call-graph ehframe -F 999 -o x.data -- "$WL" hot3 2
	[ "$status" -eq 0 ]
	lint x.data --min-samples 1500
	gs=$(per_sample g.data); xs=$(per_sample x.data)
	gf=$(fixed g.data); xf=$(fixed x.data)
	echo "bytes per sample: -g $gs, ehframe $xs; without the chain's entries: $gf, $xf" >&2
	[ "$gf" = "$xf" ]
	awk -v g="$gs" -v x="$xs" 'BEGIN { exit !(g > 0 && x >= g && x - 16 <= g * 1.1) }'
	# the same stacks: main under all, and each run's hot_a, hot_b and
	# hot_c at the CPU time that run measured in them (two runs: their
	# splits may differ, each is its own truth).  ~2000 samples each: sd
	# <= 1.1 points, 4 is 3.5 sd
	awk -v g="$(children g.data main)" -v x="$(children x.data main)" 'BEGIN { exit !(g >= 95 && x >= 95) }'
	like_truth share g.data g.truth 4 hot_a hot_b hot_c
	like_truth share x.data x.truth 4 hot_a hot_b hot_c
	awk -v s="$(children x.data _start)" 'BEGIN { exit !(s >= 95) }'
	# the two frames -g cannot see are 16 bytes a sample whatever the
	# depth: within 10% from stacks of 13 frames on; these have 21
	run "$PRECORD" -g -F 999 -o gd.data -- "$WL" deep 16 2
	[ "$status" -eq 0 ]
	run "$PRECORD" --call-graph ehframe -F 999 -o xd.data -- "$WL" deep 16 2
	[ "$status" -eq 0 ]
	lint xd.data --min-samples 1500
	gs=$(per_sample gd.data); xs=$(per_sample xd.data)
	echo "deep 16: bytes per sample: -g $gs, ehframe $xs" >&2
	awk -v g="$gs" -v x="$xs" 'BEGIN { exit !(g > 0 && x >= g && x <= g * 1.1) }'
}

@test "ehframe: C++ exceptions in the hot path, the same paths as perf's dwarf mode" {
	perf record -q --call-graph dwarf -F 999 -o p.data -- "$EXC" 3 > /dev/null 2>&1
	run "$PRECORD" --call-graph ehframe -F 999 -o x.data -- "$EXC" 3
	[ "$status" -eq 0 ]
	lint x.data --min-samples 2000
	same_paths p.data x.data 5 main catcher burn __cxa_throw _Unwind_RaiseException
	awk -v m="$(children x.data main)" 'BEGIN { exit !(m >= 93) }'
	# the throw's own frames are unwound too (libstdc++, libgcc_s)
	awk -v m="$(children x.data __cxa_throw)" 'BEGIN { exit !(m >= 1) }'
}

@test "ehframe: a signal handler burning CPU unwinds through the signal frame" {
	perf record -q --call-graph dwarf -F 999 -o p.data -- "$SIG" 3 > /dev/null 2>&1
	run "$PRECORD" --call-graph ehframe -F 999 -o x.data -- "$SIG" 3
	[ "$status" -eq 0 ]
	lint x.data --min-samples 2000
	same_paths p.data x.data 5 main main_loop main_burn on_prof handler_burn
	# the handler's samples reach main through __restore_rt and main_burn
	h=$(children x.data handler_burn); m=$(children x.data main)
	awk -v h="$h" 'BEGIN { exit !(h >= 5) }'	# sampled at all; its share is perf's, above
	awk -v m="$m" 'BEGIN { exit !(m >= 95) }'
	awk -v r="$(children x.data __restore_rt)" -v h="$h" 'BEGIN { exit !(r >= h - 3) }'
}

@test "ehframe: threads, and a stack with an inaccessible page right above its outermost frame" {
	# the walk reads the stack a 4 KiB window at a time: here a window
	# from any frame near the top runs into the PROT_NONE page
	PRECORD_WL_TRUTH=$T/truth run "$PRECORD" --call-graph ehframe -F 999 -o x.data -- "$NOFP" --stack-top 2
	[ "$status" -eq 0 ]
	lint x.data --min-samples 1000
	perf record -q --call-graph dwarf -F 999 -o d.data -- "$NOFP" --stack-top 2 >/dev/null 2>&1
	# the coroutine's root as perf unwinds it (a structure, not a speed);
	# the paths against the CPU time this execution measured in them
	# (~2000 samples: noise_tol is 3.5 sd), not against another run's
	same_paths d.data x.data 3 coro_main
	n=$(perf report -i x.data --stats 2>/dev/null | awk '/ SAMPLE events:/ { print $3; exit }')
	like_truth children x.data "$T/truth" "$(noise_tol "$n")" path_a path_b path_c
	# nothing made up past the coroutine's first frame (its BP is the
	# main stack's, far away): no frame above it in (nearly) every sample
	# (path_a's own share is about half, so the bar is far above it)
	awk -v m="$(children x.data __start_context)" 'BEGIN { exit !(m >= 95) }'
	perf report -i x.data --stdio --children --sort sym -g none -q 2>/dev/null |
		awk '{ gsub(/%/, "", $1) } $1 > 90 && $NF !~ /^(__start_context|coro_main)$/ { print "above the coroutine: " $0; bad = 1 } END { exit bad }' >&2
	# threads: every worker's stack down to clone3
	WL=$ROOT/build/workloads/workload
	run "$PRECORD" --call-graph ehframe -F 999 -o t.data -- "$WL" threads 2 2
	[ "$status" -eq 0 ]
	lint t.data --min-samples 1000
	perf script -i t.data -F comm,ip,sym 2>/dev/null |
		awk '/^[ \t]*$/ { if (comm ~ /^worker/) { n++; if (last == "clone3" || last == "__clone3") k++ } last = ""; next }
		     !/^\t/ { comm = $1; next }
		     { last = $2 }
		     END { printf "worker samples %d, down to clone3 %d\n", n, k; exit !(n > 1000 && k >= 0.95 * n) }' >&2
}

@test "ehframe: a no-FP library dlopen'ed after the start gets full stacks" {
	run "$PRECORD" --call-graph ehframe -F 999 -o x.data -- "$WL" dlopen "$LIBNOFP" 2
	[ "$status" -eq 0 ]
	lint x.data --min-samples 1000
	leaf=$(children x.data lib_leaf); main=$(children x.data main)
	echo "lib_leaf $leaf lib_work $(children x.data lib_work) main $main run_dlopen $(children x.data run_dlopen)" >&2
	awk -v l="$leaf" 'BEGIN { exit !(l >= 60) }'
	# lib_leaf → lib_work → lib_spin (no frame pointers) → burn → run_dlopen → main
	for f in lib_work lib_spin run_dlopen main; do
		awk -v r="$(children x.data $f)" -v l="$leaf" 'BEGIN { exit !(r >= l - 5) }'
	done
	# frame pointers alone skip the library's callers (what the test
	# tells apart): lib_leaf's frame has no BP of its own
	run "$PRECORD" -g -F 999 -o g.data -- "$WL" dlopen "$LIBNOFP" 2
	[ "$status" -eq 0 ]
	echo "-g: lib_leaf $(children g.data lib_leaf) lib_work $(children g.data lib_work)" >&2
	awk -v r="$(children g.data lib_work)" -v l="$(children g.data lib_leaf)" 'BEGIN { exit !(r < l - 20) }'
}

@test "ehframe: a child forked before its parent's tables were built gets them too" {
	run "$PRECORD" --call-graph ehframe -F 999 -o x.data -- "$NOFP" --fork 2
	[ "$status" -eq 0 ]
	lint x.data --min-samples 2000
	# main's share in each of the two processes
	perf script -i x.data -F pid,ip,sym 2>/dev/null |
		awk '/^[ \t]*$/ { if (pid) { n[pid]++; if (m) k[pid]++ } m = 0; next }
		     !/^\t/ { pid = $1; next }	# "%5d": pids of 4 digits have a space before
		     $2 == "main" { m = 1 }
		     END { for (p in n) if (n[p] > 500) { printf "pid %s: %d samples, main in %d\n", p, n[p], k[p]; big++; if (k[p] < 0.95 * n[p]) bad = 1 }
			   exit !(big == 2 && !bad) }' >&2
}

@test "ehframe -p and -a: running processes get their tables from the synthesized mappings" {
	PRECORD_WL_TRUTH=$T/truth "$NOFP" 30 & BG=$!
	sleep 0.3
	truth_snapshot "$T/truth" "$BG"
	run "$PRECORD" --call-graph ehframe -F 999 -p "$BG" --duration 2 -o x.data
	[ "$status" -eq 0 ]
	truth_snapshot "$T/truth" "$BG"
	# 2 s of a workload that gets what CPU a busy machine leaves it
	lint x.data --min-samples 200
	awk -v m="$(children x.data main)" 'BEGIN { exit !(m >= 97) }'
	# the paths' shares: the CPU time the workload measured in each
	# between the two snapshots, within 3.5 sd of the samples (~2000
	# idle: 4.4 points)
	cat truth >&2
	n=$(perf report -i x.data --stats 2>/dev/null | awk '/ SAMPLE events:/ { print $3; exit }')
	like_truth --window children x.data truth "$(noise_tol "$n")" path_a path_b path_c
	run "$PRECORD" --call-graph ehframe -F 499 -a --duration 3 -o y.data
	[ "$status" -eq 0 ]
	lint y.data --min-samples 200
	perf report -i y.data --stdio --children --sort comm,sym -g none -q --comm nofp 2>/dev/null |
		grep -q ' main$'
}

@test "ehframe: JIT code (node --perf-prof) keeps its frames" {
	need "node" command -v node
	run "$PRECORD" --call-graph ehframe -o x.data -- node --perf-prof --interpreted-frames-native-stack "$JS"
	echo "$output" >&2
	[ "$status" -eq 0 ]
	lint x.data
	a=$(perf report -i x.data --stdio --no-children -g none --sort sym -q 2>/dev/null |
		awk 'index($0, "hotFifty") { gsub(/%/, "", $1); s += $1 } END { printf "%.2f\n", s + 0 }')
	echo "hotFifty self: $a" >&2
	awk -v a="$a" 'BEGIN { exit !(a > 20) }'
	# below the JIT frames (frame pointers), node's own C++ code
	awk -v m="$(children x.data node::Start)" 'BEGIN { exit !(m >= 90) }'
}

@test "ehframe: --unwind-max-bytes bounds the tables: reached, said, frame pointers beyond" {
	run "$PRECORD" --call-graph ehframe --unwind-max-bytes 256K -F 999 -o x.data -- "$EXC" 1
	echo "$output" >&2
	[ "$status" -eq 0 ]
	[[ "$output" == *"--unwind-max-bytes"* ]]
	lint x.data --min-samples 500
	for bad in 0 12Q 32K 3G; do
		run "$PRECORD" --call-graph ehframe --unwind-max-bytes "$bad" -o y.data -- true
		[ "$status" -ne 0 ]
		[ "${#lines[@]}" -eq 1 ]
		[ ! -e y.data ]
	done
	run "$PRECORD" -g --unwind-max-bytes 64M -o y.data -- true
	[ "$status" -ne 0 ]
	[[ "$output" == *"needs --call-graph ehframe"* ]]
}
