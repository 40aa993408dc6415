#!/usr/bin/env bats
# JIT code merged at record time: perf report names JIT frames with no
# `perf inject` step.

load helpers

JS=$ROOT/tests/workloads/js/hot.js

# node --perf-basic-prof and mono --jitmap write /tmp/perf-PID.map: the
# ones a test made are removed afterwards, and only those.
setup() {
	common_setup
	require_recording
	need "node" command -v node
	ls /tmp/perf-*.map 2>/dev/null | sort > "$T/maps.before" || true
}
teardown() {
	if [ -n "${T:-}" ] && [ -f "$T/maps.before" ]; then
		ls /tmp/perf-*.map 2>/dev/null | sort | comm -13 "$T/maps.before" - | xargs -r rm -f
	fi
	common_teardown
}

# jsshare FILE NAME: summed self share of every symbol whose name has NAME
jsshare() {
	perf report -i "$1" --stdio --no-children -g none --sort sym -q 2>/dev/null |
		awk -v n="$2" 'index($0, n) { gsub(/%/, "", $1); s += $1 } END { printf "%.2f\n", s + 0 }'
}

# The expectations come from the same execution: the workloads measure the
# CPU time each hot function took and print it at exit (hot.js: "hot.js cpu
# hotFifty F hotThirty T hotTwenty W total P", process CPU seconds; Hot.cs:
# "hot: thread-cpu Alpha A Beta B Gamma G total T", the main thread's).  A
# profile's share of a function is then its time over the total, up to
# sampling noise; the design ratios (5:3:2, 1:2:3) hold on no CPU exactly.
#
# The shares compared are inclusive (perf report --children): a sample
# taken in the kernel while a function runs (an interrupt, the switch back
# to the thread: more of them on a busy machine) is the function's time on
# the workload's clock too, and its user call chain starts in the function.
#
# incl FILE NAME [REPORT-ARGS...]: summed inclusive share of every symbol
# whose name has NAME
incl() {
	local f=$1 n=$2
	shift 2
	perf report -i "$f" --stdio --children -g none --sort sym -q "$@" 2>/dev/null |
		awk -v n="$n" 'index($0, n) { gsub(/%/, "", $1); s += $1 } END { printf "%.2f\n", s + 0 }'
}

# measured OUT NAME: the percent of the total CPU time that NAME took, from
# the workload's line in OUT
measured() {
	awk -v n="$2" '$1 ~ /^hot/ && $2 ~ /cpu$/ {
		for (i = 3; i < NF; i += 2) { t[$i] = $(i + 1) }
		if ((n in t) && t["total"] > 0) { printf "%.2f\n", 100 * t[n] / t["total"]; f = 1 }
	} END { exit !f }' "$1"
}

# near SHARE EXPECTED N: SHARE (percent) is within 4 binomial standard
# deviations, sqrt(p(1-p)/N), of EXPECTED for N samples, plus half a point
# for what the workload's clock and the samples see differently (the first
# call's JIT compilation, start and exit).  The runs give N of about 4000
# (Hot.exe 1, mono's main thread) and 12000 (hot.js 3): ±2.7 to ±3.5 and
# ±1.9 to ±2.3 points; the tests fail below N = 2000 (at most ±5).  A
# function named for another (shares 17 / 30 / 50, 19 / 28 / 47) fails, and
# so does a tenth of the samples left unnamed.
near() {
	awk -v a="$1" -v e="$2" -v n="$3" 'BEGIN {
		p = e / 100; tol = 400 * sqrt(p * (1 - p) / n) + 0.5
		d = a - e; if (d < 0) d = -d
		printf "  %s%% against %s%% measured: off by %.2f, allowed %.2f (%d samples)\n", a, e, d, tol, n > "/dev/stderr"
		exit !(d <= tol)
	}'
}

# captured OUT: the sample count of precord's summary line in OUT
captured() {
	sed -n 's/^\[ precord: Captured and wrote .*(\([0-9]*\) samples.*/\1/p' "$1" | tail -1
}

# check_three SHAREFN FILE OUT N NAME...: the three functions' shares of
# FILE against what the workload measured, in OUT, for N samples: each
# one's part of the three (so a sample of the thread that is in none of
# them while the workload's clock counts it for one of them, seen for 5%
# of mono's main thread in 2 of ~20 gzip runs on a busy machine, moves
# none), and the three together, which fall short when names are lost
check_three() {
	local fn=$1 f=$2 out=$3 n=$4 x m sx=0 sm=0 v
	shift 4
	[ -n "$n" ]
	[ "$n" -ge 2000 ]
	for x in "$@"; do
		v=$("$fn" "$f" "$x"); echo "$x $v" >> three.got
		sx=$(awk -v a="$sx" -v b="$v" 'BEGIN { print a + b }')
		v=$(measured "$out" "$x"); echo "$x $v" >> three.want
		sm=$(awk -v a="$sm" -v b="$v" 'BEGIN { print a + b }')
	done
	echo "the three: $sx% of the samples, $sm% measured" >&2
	for x in "$@"; do
		echo "$x of the three:" >&2
		near "$(awk -v x="$x" -v s="$sx" '$1 == x { printf "%.2f\n", 100 * $2 / s }' three.got)" \
			"$(awk -v x="$x" -v s="$sm" '$1 == x { printf "%.2f\n", 100 * $2 / s }' three.want)" \
			"$(awk -v n="$n" -v s="$sx" 'BEGIN { printf "%d\n", n * s / 100 }')"
	done
	rm -f three.got three.want
	# together: 4 sd and 8 points short at most
	awk -v a="$sx" -v e="$sm" -v n="$n" 'BEGIN { p = e / 100
		exit !(a >= e - 400 * sqrt(p * (1 - p) / n) - 8 && a <= e + 400 * sqrt(p * (1 - p) / n) + 0.5) }'
}

# check_js_shares FILE OUT: the three JS functions' shares in FILE (all of
# node's samples; its other threads are idle while they run) against what
# hot.js measured, printed in OUT
check_js_shares() {
	local n
	n=$(captured "$2")
	echo "samples: $n" >&2
	check_three incl "$1" "$2" "$n" hotFifty hotThirty hotTwenty
}

# jit_loads DUMP...: JIT_CODE_LOAD records in the jitdumps (what perf
# inject --jit makes one jitted-PID-N.so each of)
jit_loads() {
	python3 - "$@" <<'PY'
import struct, sys
n = 0
for path in sys.argv[1:]:
    with open(path, "rb") as f:
        d = f.read()
    off = struct.unpack_from("<I", d, 8)[0]	# header total_size
    while off + 16 <= len(d):
        rid, size = struct.unpack_from("<II", d, off)
        if size < 16:
            break
        n += rid == 0
        off += size
print(n)
PY
}

@test "node --perf-prof: names without inject, shares as the workload measured them, few files, annotate" {
	"$PRECORD" -g -o x.data -- node --perf-prof --interpreted-frames-native-stack "$JS" > out 2>&1 ||
		{ cat out >&2; false; }
	cat out >&2
	lint x.data
	check_js_shares x.data out

	# at least 10x fewer ELF files than JIT_CODE_LOAD records in the
	# jitdump of the same execution (perf inject --jit writes a file each)
	loads=$(jit_loads jit-*.dump)
	images=$(ls x.data.jit/*.so | wc -l)
	echo "precord images: $images, JIT_CODE_LOAD records: $loads" >&2
	[ "$images" -ge 1 ]
	[ $((images * 10)) -le "$loads" ]

	# perf annotate shows the code of a hot JS function
	run perf annotate -i x.data --stdio
	echo "$output" | grep -q 'hotFifty'
	echo "$output" | grep -Eq '^ +[0-9.]+ : +[0-9a-f]+: +(mov|add|imul|lea|cmp|j[a-z]+) '
}

@test "node --perf-basic-prof: names resolve, also after the map is gone and the files moved" {
	"$PRECORD" -g -o x.data -- node --perf-basic-prof "$JS" > out 2>&1 ||
		{ cat out >&2; false; }
	cat out >&2
	lint x.data
	check_js_shares x.data out
	a=$(jsshare x.data hotFifty)
	ls /tmp/perf-*.map 2>/dev/null | sort | comm -13 "$T/maps.before" - | xargs -r rm -f
	mkdir moved
	mv x.data x.data.jit moved/
	cd moved
	b=$(jsshare x.data hotFifty)
	echo "after moving: $a -> $b" >&2
	within "$a" "$b" 0.01
}

@test "--no-jit leaves JIT frames to perf's report-time lookup" {
	run "$PRECORD" --no-jit -g -o x.data -- node --perf-basic-prof "$JS" 0.6
	[ "$status" -eq 0 ]
	[ ! -e x.data.jit ]
	lint x.data
}

# C#: three methods of one body called for 1:2:3 of the iterations
# (tests/workloads/cs/Hot.cs), which measures their thread CPU time
cs_setup() {
	need "mono" command -v mono
	need "mcs" command -v mcs
	mcs -optimize+ -out:Hot.exe "$ROOT/tests/workloads/cs/Hot.cs" >/dev/null
}

# csshare FILE M: incl of Hot:M within the main thread (comm "mono"), whose CPU
# time Hot.cs measures.  Mono's "Profiler Sampler" thread sometimes spins
# on sched_yield for the whole run (seen in 1 of 6 runs of the gzip case:
# half of all samples), which is the workload's doing, not the naming's.
csshare() {
	incl "$1" "Hot:$2" --comms mono --percentage relative
}

# cs_samples FILE: samples of the main thread (comm "mono")
cs_samples() {
	perf report -i "$1" --stdio --no-children -g none --sort comm -q -n 2>/dev/null |
		awk '$3 == "mono" { print $2; f = 1 } END { if (!f) print 0 }'
}

# check_cs_shares FILE OUT: the three methods' shares of the main thread's
# samples in FILE against the thread CPU time Hot.exe measured, in OUT
check_cs_shares() {
	local n
	n=$(cs_samples "$1")
	echo "$1: main thread samples: $n; $(grep '^hot: thread-cpu' "$2")" >&2
	check_three csshare "$1" "$2" "$n" Alpha Beta Gamma
}

@test "mono --jitmap: C# methods named with the shares the workload measured" {
	cs_setup
	"$PRECORD" -g -o x.data -- mono --jitmap Hot.exe 1 > out 2>&1 || { cat out >&2; false; }
	cat out >&2
	check_cs_shares x.data out
	lint x.data
}

@test "mono log profiler: --mlpd names C# methods, plain and gzip" {
	cs_setup
	"$PRECORD" -q -g -o x.data --mlpd F.mlpd -- mono --profile=log:nodefaults,jit,output=F.mlpd Hot.exe 1 > out
	check_cs_shares x.data out
	lint x.data
	"$PRECORD" -q -g -o z.data --mlpd F.mlpd.gz -- mono --profile=log:nodefaults,jit,zip,output=F.mlpd.gz Hot.exe 1 > zout
	file F.mlpd.gz | grep -q gzip
	check_cs_shares z.data zout
	lint z.data
}

@test "the .mlpd method list agrees with mprof-report's" {
	need "mprof-report" command -v mprof-report
	run "$ROOT/tests/workloads/cs/compare-mprof.sh" "$ROOT/build/tests/test_mlpd"
	echo "$output" >&2
	[ "$status" -eq 0 ]
}
