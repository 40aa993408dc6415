# Shared set-up for precord's end-to-end tests.  Every test gets its own
# temporary directory and HOME (so perf's build-id cache, ~/.debug, lands
# there), removed afterwards.

ROOT=$(cd "$BATS_TEST_DIRNAME/../.." && pwd)
PRECORD=${PRECORD_BIN:-$ROOT/build/precord}	# PRECORD_BIN: another build
WL=$ROOT/build/workloads/workload
# The judge of perf compatibility is the project's own (tests/tools,
# docs/testing.md).  PRECORD_SHARED=DIR runs the suite against the outside
# tools in DIR/tools instead, a second opinion; nothing depends on them.
if [ -n "${PRECORD_SHARED:-}" ]; then
	LINT=$PRECORD_SHARED/tools/perfdata-lint
	COMPARE=$PRECORD_SHARED/tools/profile-compare
else
	LINT=$ROOT/tests/tools/perf-check
	COMPARE=$ROOT/tests/tools/profile-compare
fi

common_setup() {
	T=$(mktemp -d /tmp/precord-test.XXXXXX)
	export HOME=$T/home
	mkdir -p "$HOME"
	cd "$T" || return 1
}

common_teardown() {
	cd /
	[ -n "${T:-}" ] && rm -rf "$T"
}

# A missing prerequisite skips on a developer's machine and fails under CI.
need() {
	local what=$1; shift
	if ! "$@" >/dev/null 2>&1; then
		if [ "${CI:-}" = true ]; then
			echo "prerequisite missing under CI: $what" >&2
			return 1
		fi
		skip "$what"
	fi
}

require_recording() {
	need "root" test "$(id -u)" = 0
	need "kernel BTF" test -r /sys/kernel/btf/vmlinux
	need "perf" perf version
	need "precord built" test -x "$PRECORD"
	need "workloads built" test -x "$WL"
	need "python3 (for the checker)" command -v python3
	need "the perf-compatibility checker" test -x "$LINT"
}

# lint FILE [ARGS...]: the checker must report 0 problems.
lint() {
	local f=$1; shift
	run "$LINT" "$@" "$f"
	echo "$output" | grep -E '^PROBLEM|: [0-9]+ checks, [0-9]+ problems$' >&2
	[ "$status" -eq 0 ]
	echo "$output" | tail -1 | grep -Eq '^[a-z-]+: [1-9][0-9]* checks, 0 problems$'
}

# share FILE SYMBOL: self overhead (percent, as a number) of SYMBOL.
share() {
	perf report -i "$1" --stdio --no-children -g none --sort sym -q 2>/dev/null |
		awk -v s="$2" '$NF == s { gsub(/%/, "", $1); print $1; f = 1; exit } END { if (!f) print 0 }'
}

# samples FILE: the number of samples perf report counts in FILE
samples() {
	perf report -i "$1" --stdio -n --no-children --sort comm -q -g none 2>/dev/null |
		awk 'NF { s += $2 } END { print s + 0 }'
}

# browser ARGS...: headless chromium on a 1200x400 window with a profile
# under $T (the flame graphs' tests: --screenshot=PNG URL, --dump-dom URL)
browser() {
	local args=(--headless --disable-gpu --hide-scrollbars --window-size=1200,400
		--user-data-dir="$T/chromium")
	[ "$(id -u)" = 0 ] && args+=(--no-sandbox)
	timeout 60 chromium "${args[@]}" "$@" 2>/dev/null
}

# within A B TOL: |A - B| <= TOL
within() {
	awk -v a="$1" -v b="$2" -v t="$3" 'BEGIN { d = a - b; if (d < 0) d = -d; exit !(d <= t) }'
}

# children FILE SYMBOL: children (inclusive) share, percent, of SYMBOL
children() {
	perf report -i "$1" --stdio --children --sort sym -g none -q 2>/dev/null |
		awk -v s="$2" '$NF == s { gsub(/%/, "", $1); print $1; f = 1; exit } END { if (!f) print 0 }'
}

# ---- Oracles (docs/testing.md, "Where a test's numbers come from") -------
#
# A test's expectation is measured in the run it checks, never a design
# ratio that holds on one CPU model or on an idle machine only: either the
# workload's own ground truth (PRECORD_WL_TRUTH) or perf record recording
# the very same execution (same_exec).  Tolerances are for sampling noise:
# a share p of n samples has sd = sqrt(p(1-p)/n) (binomial; timer samples
# of a steady loop scatter less), e.g. 1.1 points at p = 0.5, n = 2000.

# among share|children FILE F FUNCS...: F's share in percent of the total
# of FUNCS (self shares, or children shares of functions on disjoint
# paths), as perf report gives them
among() {
	local kind=$1 file=$2 f=$3 g v; shift 3
	for g in "$@"; do
		v=$("$kind" "$file" "$g")
		echo "$g $v"
	done | awk -v f="$f" '{ s += $2 } $1 == f { v = $2 } END { printf "%.2f\n", (s > 0 ? 100 * v / s : 0) }'
}

# truth_share [--window] TRUTH F FUNCS...: F's share in percent of the CPU
# time of FUNCS, from the workload's PRECORD_WL_TRUTH file TRUTH: each
# process's last line, summed over processes; --window: each process's
# last line minus the one before (SIGUSR1 before and after a recording of
# a running process)
truth_share() {
	local window=0
	[ "$1" = --window ] && { window=1; shift; }
	local file=$1 f=$2; shift 2
	awk -v f="$f" -v fs="$*" -v w="$window" '
		$1 == "truth" {
			pid = ""
			for (i = 2; i <= NF; i++) { split($i, kv, "="); if (kv[1] == "pid") pid = kv[2] }
			n[pid]++
			for (i = 2; i <= NF; i++) { split($i, kv, "="); prev[pid, kv[1]] = last[pid, kv[1]]; last[pid, kv[1]] = kv[2] }
		}
		END {
			m = split(fs, want, " ")
			for (pid in n) {
				if (w && n[pid] < 2) continue
				for (j = 1; j <= m; j++) {
					v = last[pid, want[j]] - (w ? prev[pid, want[j]] : 0)
					s += v
					if (want[j] == f) x += v
				}
			}
			printf "%.2f\n", (s > 0 ? 100 * x / s : -1)
		}' "$file"
}

# truth_lines TRUTH: how many lines TRUTH has (0 when absent)
truth_lines() {
	if [ -f "$1" ]; then grep -c '^truth ' "$1" || true; else echo 0; fi
}

# truth_snapshot TRUTH PID: SIGUSR1 to PID, then wait for its line
truth_snapshot() {
	local n i
	n=$(truth_lines "$1")
	kill -USR1 "$2"
	for i in $(seq 500); do
		[ "$(truth_lines "$1")" -gt "$n" ] && return 0
		sleep 0.01
	done
	echo "no truth line from $2" >&2
	return 1
}

# like_truth [--window] share|children FILE TRUTH TOL FUNCS...: FILE's
# share of each of FUNCS among FUNCS is the workload's measured one,
# within TOL points
like_truth() {
	local window=
	[ "$1" = --window ] && { window=--window; shift; }
	local kind=$1 file=$2 truth=$3 tol=$4 f x t fail=0; shift 4
	for f in "$@"; do
		x=$(among "$kind" "$file" "$f" "$@")
		t=$(truth_share $window "$truth" "$f" "$@")
		echo "$f: $kind $x% of $*, measured by the workload $t%" >&2
		within "$x" "$t" "$tol" || fail=1
	done
	[ "$fail" -eq 0 ]
}

# same_exec PERF_OPTS... -- PRECORD_OPTS... -- CMD...: one execution of
# CMD recorded by precord (CMD is its command) and by perf record -p at
# the same time.  CMD waits on a FIFO until perf's events are enabled
# (perf record -D -1 --control: its ack says so), then execs, so both
# see it all from the start; perf record ends when CMD does.  precord's
# output in precord.log, perf's in perf.log; fails when either fails.
same_exec() {
	local popts=() xopts=() rec prec pid i rc=0
	while [ "$1" != -- ]; do popts+=("$1"); shift; done; shift
	while [ "$1" != -- ]; do xopts+=("$1"); shift; done; shift
	rm -f "$T/gate" "$T/gate.pid" "$T/ctl" "$T/ack"
	mkfifo "$T/gate" "$T/ctl" "$T/ack"
	"$PRECORD" "${xopts[@]}" -- sh -c 'echo $$ > "$0.pid"; read -r go < "$0"; exec "$@"' \
		"$T/gate" "$@" > precord.log 2>&1 &
	rec=$!
	for i in $(seq 1000); do [ -s "$T/gate.pid" ] && break; sleep 0.01; done
	pid=$(cat "$T/gate.pid" 2>/dev/null)
	if [ -z "$pid" ]; then
		echo "same_exec: precord did not start its command" >&2
		cat precord.log >&2
		kill "$rec" 2>/dev/null; wait "$rec"
		return 1
	fi
	perf record -D -1 --control "fifo:$T/ctl,$T/ack" "${popts[@]}" -p "$pid" > perf.log 2>&1 &
	prec=$!
	if ! timeout 60 bash -c 'exec 8>"$1" 9<"$2"; echo enable >&8; read -r a <&9; [ "$a" = ack ]' \
		_ "$T/ctl" "$T/ack"; then
		echo "same_exec: perf record did not enable its events" >&2
		rc=1
	fi
	echo go > "$T/gate"
	wait "$prec" || { echo "same_exec: perf record failed" >&2; rc=1; }
	wait "$rec" || { echo "same_exec: precord failed" >&2; rc=1; }
	cat precord.log perf.log >&2
	return "$rc"
}

# lint_lossy FILE [ARGS...]: lint, but a file whose only complaint is
# perf's "Processed N samples and lost X%!" warning passes when the loss
# is in the file as LOST_SAMPLES records (a recording on a loaded machine
# may lose samples: they must be said, not absent).  Any other problem
# fails as with lint.
lint_lossy() {
	local f=$1; shift
	run "$LINT" "$@" "$f"
	echo "$output" | grep -E '^PROBLEM|: [0-9]+ checks, [0-9]+ problems$' >&2
	echo "$output" | tail -1 | grep -Eq '^[a-z-]+: [1-9][0-9]* checks, [0-9]+ problems$'
	[ "$status" -eq 0 ] && return 0
	[ "$status" -eq 1 ] || return 1
	! echo "$output" | grep '^PROBLEM' |
		grep -Ev '^PROBLEM [a-z-]+: stderr: Warning: Processed [0-9]+ samples and lost [0-9.]+%!$' |
		grep -vx 'PROBLEM dump-clean: Warning:' | grep -q . || return 1
	perf report -i "$f" --stats 2>/dev/null | grep -Eq 'LOST_SAMPLES events: +[1-9]'
}

# noise_tol N: a tolerance in points for a share of N samples: 3.5 sd of
# a 50% share (the widest), sqrt(0.25 / N), plus half a point
noise_tol() {
	awk -v n="$1" 'BEGIN { printf "%.1f\n", (n > 0 ? 350 * sqrt(0.25 / n) : 100) + 0.5 }'
}

# same_exec_precord OPTS_A... -- OPTS_B... -- CMD...: one execution of CMD
# recorded by two precord instances at once, as same_exec does with perf:
# A has CMD as its command, B records it with -v -p PID; CMD is held on a
# FIFO until B says "recording" (its events are on).  A's output in
# a.log, B's in b.log; fails when either fails.
same_exec_precord() {
	local aopts=() bopts=() ra rb pid i rc=0
	while [ "$1" != -- ]; do aopts+=("$1"); shift; done; shift
	while [ "$1" != -- ]; do bopts+=("$1"); shift; done; shift
	rm -f "$T/gate" "$T/gate.pid"
	mkfifo "$T/gate"
	"$PRECORD" "${aopts[@]}" -- sh -c 'echo $$ > "$0.pid"; read -r go < "$0"; exec "$@"' \
		"$T/gate" "$@" > a.log 2>&1 &
	ra=$!
	for i in $(seq 1000); do [ -s "$T/gate.pid" ] && break; sleep 0.01; done
	pid=$(cat "$T/gate.pid" 2>/dev/null)
	if [ -z "$pid" ]; then
		echo "same_exec_precord: precord did not start its command" >&2
		cat a.log >&2
		kill "$ra" 2>/dev/null; wait "$ra"
		return 1
	fi
	"$PRECORD" -v "${bopts[@]}" -p "$pid" > b.log 2>&1 &
	rb=$!
	for i in $(seq 6000); do
		grep -q 'recording; press Ctrl-C' b.log && break
		kill -0 "$rb" 2>/dev/null || break
		sleep 0.01
	done
	grep -q 'recording; press Ctrl-C' b.log ||
		{ echo "same_exec_precord: the second precord did not start" >&2; rc=1; }
	echo go > "$T/gate"
	wait "$rb" || { echo "same_exec_precord: the second precord failed" >&2; rc=1; }
	wait "$ra" || { echo "same_exec_precord: precord failed" >&2; rc=1; }
	cat a.log b.log >&2
	return "$rc"
}

# ---- Python and the fleet store (python.bats, python_fleet.bats,
# fleet.bats, offcpu_fleet.bats) --------

# debian_python PY: PY is Debian's interpreter, CPython 3.11 exporting
# _PyRuntime (the version is the binary's own, not its name's)
debian_python() {
	"$1" -c 'import sys; sys.exit(sys.version_info[:2] != (3, 11))' &&
		readelf --dyn-syms -W "$(readlink -f "$1")" | grep -q ' _PyRuntime$'
}

# fleet_cluster_start N: N clickhouse-server processes under $T/ch
# (tests/tools/clickhouse-cluster: loopback only, free ports), the shards
# of the cluster "precord" with the schema on each; their URLs in the
# array FLEET_URLS.  fleet_cluster_stop (in teardown) stops them.
fleet_cluster_start() {
	need "clickhouse-server (Debian's clickhouse-server)" \
		bash -c 'command -v clickhouse-server || test -x /usr/sbin/clickhouse-server'
	need "curl" command -v curl
	"$ROOT/tests/tools/clickhouse-cluster" start "$T/ch" "$1" > "$T/servers"
	mapfile -t FLEET_URLS < <(awk '{ print $1 }' "$T/servers")
	[ "${#FLEET_URLS[@]}" -eq "$1" ]
	for u in "${FLEET_URLS[@]}"; do
		"$PRECORD" fleet-schema "$u" --cluster precord
	done
}

# fleet_setup / fleet_teardown: setup and teardown of a fleet test file
# (what recording needs, two shards in U1 and U2, stopped after)
fleet_setup() {
	common_setup
	require_recording
	fleet_cluster
}

fleet_teardown() {
	fleet_cluster_stop
	common_teardown
}

fleet_cluster_stop() {
	[ -z "${T:-}" ] || [ ! -d "$T/ch" ] || "$ROOT/tests/tools/clickhouse-cluster" stop "$T/ch"
}

# fleet_cluster: fleet_cluster_start 2, the two URLs in U1 and U2 (stop
# them with fleet_cluster_stop)
fleet_cluster() {
	fleet_cluster_start 2
	U1=${FLEET_URLS[0]}
	U2=${FLEET_URLS[1]}
}

# free_port: a TCP port free on the loopback interface now
free_port() {
	python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

# debuginfod_start DIR HEX: Debian's debuginfod -F DIR on a free loopback
# port (its database and log in $T), DPID its pid and URL its address once
# it serves the debug file of build-id HEX; stop it with kill "$DPID"
debuginfod_start() {
	local port i
	port=$(free_port)
	debuginfod -F "$1" -p "$port" -d "$T/db.sqlite" -t 0 -g 0 > "$T/debuginfod.log" 2>&1 &
	DPID=$!
	URL=http://127.0.0.1:$port
	for i in $(seq 600); do
		curl -sf -o /dev/null "$URL/buildid/$2/debuginfo" && return 0
		kill -0 "$DPID" || break
		sleep 0.1
	done
	echo "debuginfod did not serve $2" >&2
	cat "$T/debuginfod.log" >&2
	return 1
}
