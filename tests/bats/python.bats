#!/usr/bin/env bats
# Python frames with no flag on the target (issue 19, docs/python.md):
# Debian's /usr/bin/python3 (3.11) recorded with -g and --call-graph
# ehframe; the workloads in tests/workloads/py print their own ground truth.

load helpers

PY=/usr/bin/python3
PYW=$ROOT/tests/workloads/py
HP=$ROOT/build/workloads/hostile_py
AS_NOBODY=(setpriv --reuid=nobody --regid=nogroup --clear-groups)

setup() {
	common_setup
	require_recording
	need "Debian's python3.11 at $PY" debian_python "$PY"
}
teardown() { common_teardown; }

# py_counts FILE FIELD ID FUNCS...: samples whose FIELD (pid or tid) is ID,
# and how many of them have each Python function of FUNCS in their stack
# ("FUNC (file.py:line)" frames), as perf script shows them:
# "total=N FUNC=N ...".  A record counts for its period over the smallest
# period in the file (--aggregate: one record stands for many samples).
py_counts() {
	local file=$1 field=$2 id=$3; shift 3
	perf script -i "$file" -F "$field,period,ip,sym" 2>/dev/null | awk -v id="$id" -v fs="$*" '
		BEGIN { RS = ""; FS = "\n"; m = split(fs, f, " ") }
		{
			split($1, h, " ")
			if (!min || h[2] < min) min = h[2]
			if (h[1] != id) next
			n += h[2]
			for (j = 1; j <= m; j++) if (index($0, " " f[j] " (")) c[j] += h[2]
		}
		END {
			if (!min) min = 1
			printf "total=%d", n / min + 0.5
			for (j = 1; j <= m; j++) printf " %s=%d", f[j], c[j] / min + 0.5
			print ""
		}'
}

# val "k=v ..." k
val() {
	tr ' ' '\n' <<<"$1" | sed -n "s/^$2=//p"
}

# ratio_like_truth FILE TRUTH [--window]: in the workload's samples, ho_main
# on >= 90%, and ho_fa:ho_fb within 10% of the CPU times it measured
# (its last truth line, or with --window the last minus the one before)
ratio_like_truth() {
	local file=$1 truth=$2 window=${3:-} pid c total main a b ta tb
	pid=$(sed -n 's/^truth pid=\([0-9]*\) .*/\1/p' "$truth" | tail -1)
	c=$(py_counts "$file" pid "$pid" ho_main ho_fa ho_fb)
	total=$(val "$c" total); main=$(val "$c" ho_main); a=$(val "$c" ho_fa); b=$(val "$c" ho_fb)
	read -r ta tb < <(awk -v w="$window" '$1 == "truth" {
			for (i = 2; i <= NF; i++) { split($i, kv, "="); pa[kv[1]] = la[kv[1]]; la[kv[1]] = kv[2] }
		}
		END { if (w != "") print la["ho_fa"] - pa["ho_fa"], la["ho_fb"] - pa["ho_fb"]
		      else print la["ho_fa"], la["ho_fb"] }' "$truth")
	echo "pid $pid: $c; truth ho_fa=${ta}s ho_fb=${tb}s" >&2
	[ "$total" -ge 4000 ]
	awk -v m="$main" -v n="$total" 'BEGIN { exit !(m >= 0.9 * n) }'
	awk -v a="$a" -v b="$b" -v ta="$ta" -v tb="$tb" 'BEGIN {
		r = a / b; t = ta / tb; printf "samples ho_fa/ho_fb %.3f, measured %.3f\n", r, t > "/dev/stderr"
		d = r / t - 1; if (d < 0) d = -d; exit !(d <= 0.10) }'
}

@test "-g, -- python3: the program's functions named, in the ratio it measured" {
	PRECORD_WL_TRUTH=$T/truth run "$PRECORD" -g -o x.data -- "$PY" "$PYW/ratio.py" 3 3
	echo "$output" >&2
	[ "$status" -eq 0 ]
	ratio_like_truth x.data "$T/truth"
	lint x.data
}

@test "--call-graph ehframe, -- python3: named, in the ratio measured, and native frames below" {
	PRECORD_WL_TRUTH=$T/truth run "$PRECORD" --call-graph ehframe -o x.data -- "$PY" "$PYW/ratio.py" 3 3
	echo "$output" >&2
	[ "$status" -eq 0 ]
	ratio_like_truth x.data "$T/truth"
	# <module> sits on the interpreter's own frames down to main
	n=$(perf script -i x.data -F ip,sym 2>/dev/null | awk 'BEGIN { RS = "" }
		/ ho_fa \(/ && /<module> \(ratio.py:1\)[^\n]*\n[^\n]*PyEval_EvalCode/ && / Py_BytesMain/ { n++ }
		END { print n + 0 }')
	echo "stacks from ho_fa down through PyEval_EvalCode to Py_BytesMain: $n" >&2
	[ "$n" -ge 100 ]
	lint x.data
}

# record_p OPTS...: ratio.py started before precord, recorded with -p
# between two truth lines until it has run 3 s of CPU (however busy the
# machine: enough samples for a 10% bound on the ratio)
record_p() {
	local pid i
	PRECORD_WL_TRUTH=$T/truth "$PY" "$PYW/ratio.py" 600 3 > wl.out &
	pid=$!
	for i in $(seq 500); do grep -q ready wl.out && break; sleep 0.01; done
	truth_snapshot "$T/truth" "$pid"
	run "$PRECORD" "$@" -o x.data -p "$pid" -- bash -c '
		ticks() { awk "{ print \$14 + \$15 }" "/proc/$1/stat"; }
		end=$(( $(ticks "$1") + 3 * $(getconf CLK_TCK) ))
		while [ "$(ticks "$1")" -lt "$end" ]; do sleep 0.1; done' _ "$pid"
	echo "$output" >&2
	truth_snapshot "$T/truth" "$pid"
	kill "$pid"; wait "$pid" || true
	[ "$status" -eq 0 ]
}

@test "-g -p of a python3 started before: named, in the ratio measured over the recording" {
	record_p -g
	ratio_like_truth x.data "$T/truth" --window
	lint x.data
}

@test "--call-graph ehframe -p of a python3 started before: named, in the ratio measured" {
	record_p --call-graph ehframe
	ratio_like_truth x.data "$T/truth" --window
	lint x.data
}

@test "two Python threads: each thread's samples name only its own function" {
	for mode in -g "--call-graph ehframe"; do
		# shellcheck disable=SC2086
		run "$PRECORD" $mode -o x.data -- "$PY" "$PYW/threads.py" 1.5
		echo "$output" >&2
		[ "$status" -eq 0 ]
		ta=$(sed -n 's/^thread ho_ta tid=//p' <<<"$output")
		tb=$(sed -n 's/^thread ho_tb tid=//p' <<<"$output")
		[ -n "$ta" ] && [ -n "$tb" ]
		a=$(py_counts x.data tid "$ta" ho_ta ho_tb)
		b=$(py_counts x.data tid "$tb" ho_ta ho_tb)
		echo "$mode: thread $ta: $a; thread $tb: $b" >&2
		[ "$(val "$a" ho_tb)" -eq 0 ] && [ "$(val "$b" ho_ta)" -eq 0 ]	# none crossed
		[ "$(val "$a" total)" -ge 500 ] && [ "$(val "$b" total)" -ge 500 ]
		awk -v x="$(val "$a" ho_ta)" -v n="$(val "$a" total)" 'BEGIN { exit !(x >= 0.9 * n) }'
		awk -v x="$(val "$b" ho_tb)" -v n="$(val "$b" total)" 'BEGIN { exit !(x >= 0.9 * n) }'
		lint x.data
	done
}

# callback_stacks FILE: "N T": of the T samples with ho_key, the N whose
# stack reads ho_key, then at least one native frame, then ho_caller
callback_stacks() {
	perf script -i "$1" -F ip,sym,dso 2>/dev/null | awk 'BEGIN { RS = ""; FS = "\n" }
		{
			k = c = 0; nat = 0
			for (i = 1; i <= NF; i++) {
				if (index($i, " ho_key (")) { if (!k) k = i }
				else if (k && index($i, " ho_caller (")) { c = i; break }
				else if (k && $i !~ /\.jit\/jit-[0-9]+\.so\)$/) nat++
			}
			if (k) t++
			if (k && c && nat) n++
		}
		END { print n + 0, t + 0 }'
}

@test "sorted(key=f): f above the interpreter's C frames above its caller, in one stack" {
	run "$PRECORD" --call-graph ehframe -o x.data -- "$PY" "$PYW/callback.py" 1.5
	echo "$output" >&2
	[ "$status" -eq 0 ]
	read -r n t < <(callback_stacks x.data)
	echo "stacks ho_key / C frames / ho_caller: $n of $t with ho_key" >&2
	[ "$n" -ge 100 ]
	awk -v n="$n" -v t="$t" 'BEGIN { exit !(n >= 0.9 * t) }'
	lint x.data
}

# pyenv_python X.Y: root's pyenv build of CPython X.Y, if there is one
pyenv_python() {
	ls -d /root/.pyenv/versions/"$1".*/bin/python"$1" 2>/dev/null | head -1
}

@test "CPython 3.12 and 3.13 (pyenv builds, when present): named, with their C callbacks" {
	local found=0 v py
	for v in 3.12 3.13; do
		py=$(pyenv_python "$v")
		[ -n "$py" ] || continue
		found=1
		run "$PRECORD" --call-graph ehframe -o x.data -- "$py" "$PYW/callback.py" 1.5
		echo "$output" >&2
		[ "$status" -eq 0 ]
		read -r n t < <(callback_stacks x.data)
		echo "$v: stacks ho_key / C frames / ho_caller: $n of $t with ho_key" >&2
		[ "$n" -ge 100 ]
		awk -v n="$n" -v t="$t" 'BEGIN { exit !(n >= 0.9 * t) }'
		lint x.data
	done
	[ "$found" -eq 1 ] || skip "no pyenv CPython 3.12 or 3.13 (optional)"
}

@test "a CPython before 3.11 (a pyenv build, when present): one line, its native frames" {
	local py
	py=$(pyenv_python 3.10)
	[ -n "$py" ] || skip "no pyenv CPython 3.10 (optional)"
	run "$PRECORD" --call-graph ehframe -o x.data -- "$py" "$PYW/callback.py" 0.5
	echo "$output" >&2
	[ "$status" -eq 0 ]
	[ "$(grep -c 'runs CPython before 3.11, whose frames precord does not read' <<<"$output")" -eq 1 ]
	perf script -i x.data -F ip,sym 2>/dev/null | grep -q ' _PyEval_EvalFrameDefault$'
	lint x.data
}

@test "-a: three Pythons started before and one after all named; --aggregate and each rotated file too" {
	local pids=() late i f
	for i in 1 2 3; do
		PRECORD_WL_TRUTH=$T/truth "$PY" "$PYW/ratio.py" 60 2 > "wl$i.out" &
		pids+=($!)
	done
	for i in $(seq 500); do [ "$(cat wl?.out | grep -c ready)" -eq 3 ] && break; sleep 0.01; done
	(sleep 1.5; exec "$PY" "$PYW/ratio.py" 1.5 2 > wl4.out) &
	late=$!
	run "$PRECORD" -a --call-graph ehframe --aggregate --switch-output=1s -o x.data -- sleep 4
	echo "$output" >&2
	kill "${pids[@]}"; wait "${pids[@]}" "$late" || true
	[ "$status" -eq 0 ]
	ls x.data.* >&2
	for p in "${pids[@]}" "$late"; do
		all=0; named=0
		for f in x.data.[0-9]*[0-9]; do
			c=$(py_counts "$f" pid "$p" ho_main)
			echo "pid $p in $f: $c" >&2
			all=$((all + $(val "$c" total))); named=$((named + $(val "$c" ho_main)))
			# each rotated file names the frames of its own samples
			[ "$(val "$c" total)" -lt 20 ] ||
				awk -v x="$(val "$c" ho_main)" -v n="$(val "$c" total)" 'BEGIN { exit !(x >= 0.8 * n) }'
		done
		echo "pid $p: $named of $all samples with ho_main" >&2
		[ "$all" -ge 100 ]
		awk -v x="$named" -v n="$all" 'BEGIN { exit !(x >= 0.8 * n) }'
	done
	for f in x.data.[0-9]*[0-9]; do
		lint "$f"
	done
}

@test "hostile fake CPython as nobody (cyclic, unreadable, huge, not code objects): no crash, no hang, bounded memory, native frames kept" {
	need "hostile_py built" test -x "$HP"
	need "setpriv" command -v setpriv
	for mode in frames threads churn; do
		for cg in -g "--call-graph ehframe"; do
			# shellcheck disable=SC2086
			run timeout 120 /usr/bin/time -f "maxrss-kb %M" "$PRECORD" -v $cg -o x.data -- \
				"${AS_NOBODY[@]}" "$HP" "$mode" 2
			echo "$output" >&2
			[ "$status" -eq 0 ]
			rss=$(sed -n 's/^maxrss-kb //p' <<<"$output")
			[ "$rss" -lt 300000 ]
			[[ "$output" == *"Python: 1 processes"* ]]
			# native frames kept below the Python ones
			n=$(perf script -i x.data -F ip,sym 2>/dev/null | grep -c ' hostile_run$' || true)
			echo "$mode $cg: $n stacks with hostile_run, rss ${rss} KB" >&2
			[ "$n" -ge 100 ]
			case $mode in
			frames)
				[[ "$output" == *"cut at 128 frames "[1-9]* ]]
				perf script -i x.data -F ip,sym 2>/dev/null | grep -q ' hostile_ok (evil.py:7)$'
				perf script -i x.data -F ip,sym 2>/dev/null | grep -q ' \[python unknown\]$'
				;;
			threads)
				[[ "$output" == *"no thread state "[1-9]* ]]
				! perf script -i x.data -F ip,sym 2>/dev/null | grep -q 'python unknown\|evil.py'
				;;
			esac
			lint x.data
		done
	done
}

@test "--no-python: no Python frames, the interpreter's own only" {
	run "$PRECORD" --no-python --call-graph ehframe -o x.data -- "$PY" "$PYW/ratio.py" 0.5 3
	echo "$output" >&2
	[ "$status" -eq 0 ]
	! perf script -i x.data -F ip,sym 2>/dev/null | grep -q ' ho_main ('
	perf script -i x.data -F ip,sym 2>/dev/null | grep -q ' _PyEval_EvalFrameDefault$'
	[ ! -e x.data.jit ]
}

# py_children FILE FUNC: perf report's children share of the Python FUNC
py_children() {
	perf report -i "$1" --stdio --children --sort sym -q -g none 2>/dev/null |
		awk -v f="$2" 'index($0, "] " f " (") { gsub(/%/, "", $1); print $1; exit }'
}

# pprof_cum PROFILE FUNC: go tool pprof's cum share of the Python FUNC
pprof_cum() {
	go tool pprof -top -nodecount=100000 -nodefraction=0 -edgefraction=0 "$1" 2>/dev/null |
		awk -v f="$2" '$5 ~ /%$/ && index($0, " " f " (") { gsub(/%/, "", $5); print $5; exit }'
}

@test "--aggregate, then export --pprof: the Python names with perf report's shares" {
	need "go (go tool pprof)" command -v go
	export GOCACHE=$T/gocache GOPATH=$T/gopath PPROF_TMPDIR=$T/pprof GOFLAGS=-mod=mod
	PRECORD_WL_TRUTH=$T/truth run "$PRECORD" --call-graph ehframe --aggregate -o x.data -- \
		"$PY" "$PYW/ratio.py" 3 3
	echo "$output" >&2
	[ "$status" -eq 0 ]
	ratio_like_truth x.data "$T/truth"
	lint x.data
	run "$PRECORD" export --pprof -i x.data -o x.pb.gz
	echo "$output" >&2
	[ "$status" -eq 0 ]
	for f in ho_main ho_fa ho_fb; do
		p=$(py_children x.data "$f"); q=$(pprof_cum x.pb.gz "$f")
		echo "$f: perf report children ${p:-none}%, pprof cum ${q:-none}%" >&2
		[ -n "$p" ] && [ -n "$q" ]
		within "$p" "$q" 0.5
	done
}
