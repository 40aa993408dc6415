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

@test "node --perf-prof: names without inject, shares like perf inject, few files, annotate" {
	run "$PRECORD" -g -o x.data -- node --perf-prof --interpreted-frames-native-stack "$JS"
	echo "$output" >&2
	[ "$status" -eq 0 ]
	lint x.data
	a=$(jsshare x.data hotFifty); b=$(jsshare x.data hotThirty); c=$(jsshare x.data hotTwenty)
	echo "precord: $a $b $c" >&2
	awk -v a="$a" 'BEGIN { exit !(a > 20) }'

	# the same workload through perf record -k mono + perf inject --jit
	mkdir ref && cd ref
	perf record -q -k mono -g -o p.data -- node --perf-prof --interpreted-frames-native-stack "$JS" >/dev/null 2>&1
	perf inject --jit -i p.data -o pj.data 2>/dev/null
	loads=$(ls jitted-*.so | wc -l)
	pa=$(jsshare pj.data hotFifty); pb=$(jsshare pj.data hotThirty); pc=$(jsshare pj.data hotTwenty)
	echo "perf inject: $pa $pb $pc ($loads .so files)" >&2
	cd ..
	within "$a" "$pa" 5
	within "$b" "$pb" 5
	within "$c" "$pc" 5

	# at least 10x fewer ELF files than JIT_CODE_LOAD records
	images=$(ls x.data.jit/*.so | wc -l)
	echo "precord images: $images" >&2
	[ "$images" -ge 1 ]
	[ $((images * 10)) -le "$loads" ]

	# perf annotate shows the code of a hot JS function
	run perf annotate -i x.data --stdio
	echo "$output" | grep -q 'hotFifty'
	echo "$output" | grep -Eq '^ +[0-9.]+ : +[0-9a-f]+: +(mov|add|imul|lea|cmp|j[a-z]+) '
}

@test "node --perf-basic-prof: names resolve, also after the map is gone and the files moved" {
	run "$PRECORD" -g -o x.data -- node --perf-basic-prof "$JS"
	echo "$output" >&2
	[ "$status" -eq 0 ]
	lint x.data
	a=$(jsshare x.data hotFifty)
	awk -v a="$a" 'BEGIN { exit !(a > 20) }'
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

# C#: three methods in the ratio 1:2:3 (tests/workloads/cs/Hot.cs)
cs_setup() {
	need "mono" command -v mono
	need "mcs" command -v mcs
	mcs -optimize+ -out:Hot.exe "$ROOT/tests/workloads/cs/Hot.cs" >/dev/null
}

# csshare FILE NAME: jsshare within the main thread (comm "mono").  Mono's
# "Profiler Sampler" thread sometimes spins on sched_yield for the whole run
# (seen in 1 of 6 runs of the gzip case: half of all samples), which is the
# workload's doing, not the naming's.
csshare() {
	perf report -i "$1" --stdio --no-children -g none --sort sym -q \
		--comms mono --percentage relative 2>/dev/null |
		awk -v n="$2" 'index($0, n) { gsub(/%/, "", $1); s += $1 } END { printf "%.2f\n", s + 0 }'
}

check_cs_shares() {
	a=$(csshare "$1" 'Hot:Alpha'); b=$(csshare "$1" 'Hot:Beta'); g=$(csshare "$1" 'Hot:Gamma')
	echo "Alpha $a Beta $b Gamma $g" >&2
	within "$a" 16.7 3
	within "$b" 33.3 3
	within "$g" 50 3
}

@test "mono --jitmap: C# methods named with the right shares" {
	cs_setup
	run "$PRECORD" -g -o x.data -- mono --jitmap Hot.exe 1
	[ "$status" -eq 0 ]
	check_cs_shares x.data
	lint x.data
}

@test "mono log profiler: --mlpd names C# methods, plain and gzip" {
	cs_setup
	"$PRECORD" -q -g -o x.data --mlpd F.mlpd -- mono --profile=log:nodefaults,jit,output=F.mlpd Hot.exe 1
	check_cs_shares x.data
	lint x.data
	"$PRECORD" -q -g -o z.data --mlpd F.mlpd.gz -- mono --profile=log:nodefaults,jit,zip,output=F.mlpd.gz Hot.exe 1
	file F.mlpd.gz | grep -q gzip
	check_cs_shares z.data
	lint z.data
}

@test "the .mlpd method list agrees with mprof-report's" {
	need "mprof-report" command -v mprof-report
	run "$ROOT/tests/workloads/cs/compare-mprof.sh" "$ROOT/build/tests/test_mlpd"
	echo "$output" >&2
	[ "$status" -eq 0 ]
}
