# Sourced by the benchmarks in scripts/bench/ (record.sh, trace.sh,
# jit.sh) once they have changed to the top of the tree: what they share
# in bash.  Their Python drivers (scripts/bench/NAME.py) share
# scripts/bench/benchlib.py, and the C launcher is scripts/bench/launch.c.
# Named .bash, not .sh: run.sh runs every scripts/bench/*.sh as a bench.

root=$PWD
bench=$(basename "$0")		# record.sh, ...: the prefix of every message
benchdir=$root/scripts/bench

die() { echo "$bench: $*" >&2; exit 1; }

# need_root WHY: die unless running as root.
need_root() { [ "$(id -u)" = 0 ] || die "must run as root ($1)"; }

# need_tools TOOL...: die unless every TOOL is on PATH.
need_tools() {
	local t
	for t in "$@"; do
		command -v "$t" >/dev/null || die "$t is not installed (scripts/deps.sh installs it)"
	done
}

# need_built FILE...: die unless build/precord and every FILE (a path
# under build/) is built.
need_built() {
	local f
	for f in build/precord "$@"; do
		[ -x "$f" ] || die "$f is missing: run make"
	done
}

# bench_setup: $tmp, a fresh temporary directory removed on exit (after
# the bench's own bench_cleanup, if it defines one) with an empty
# $tmp/perfconfig and a $tmp/home; exits 130 on SIGINT, SIGTERM and
# SIGHUP (the EXIT trap still runs).  $out: BENCH_OUT, or build/bench,
# created.
bench_setup() {
	tmp=$(mktemp -d "${TMPDIR:-/tmp}/precord-bench-${bench%.sh}.XXXXXX") || die "mktemp failed"
	trap bench_exit EXIT
	trap 'exit 130' INT TERM HUP
	mkdir -p "$tmp/home" || die "cannot create $tmp/home"
	: >"$tmp/perfconfig"
	out=${BENCH_OUT:-$root/build/bench}
	mkdir -p "$out" || die "cannot create $out"
}

bench_exit() {
	if declare -F bench_cleanup >/dev/null; then
		bench_cleanup
	fi
	rm -rf "$tmp"
}

# bench_env: HOME and PERF_CONFIG in $tmp for every tool the bench runs.
bench_env() {
	export HOME=$tmp/home PERF_CONFIG=$tmp/perfconfig LC_ALL=C PAGER=cat
	unset PERF_BUILDID_DIR
}

# build_launcher: $tmp/launch from launch.c (see there).
build_launcher() {
	"${CC:-cc}" -O2 -Wall -o "$tmp/launch" "$benchdir/launch.c" || die "cannot build the launcher"
}

# run_driver ARG...: the bench's Python driver, scripts/bench/NAME.py, with
# the top of the tree, $tmp, $out and ARGs as its arguments (-B: no
# __pycache__ in the tree).  Its exit status is the bench's.
run_driver() {
	python3 -B "$benchdir/${bench%.sh}.py" "$root" "$tmp" "$out" "$@"
}

# bpf_prog_cost PID NAME: "run_cnt ns_per_run" of the BPF program NAME
# that process PID holds (its fdinfo has the counters while
# kernel.bpf_stats_enabled is 1; bpftool here shows no pids); "0 0": none
bpf_prog_cost() {
	local fd id
	for fd in /proc/"$1"/fd/*; do
		[ "$(readlink "$fd" 2>/dev/null)" = "anon_inode:bpf-prog" ] || continue
		id=$(awk '$1 == "prog_id:" { print $2 }' /proc/"$1"/fdinfo/"${fd##*/}")
		bpftool prog show id "$id" 2>/dev/null | grep -q " name $2 " || continue
		awk '$1 == "run_time_ns:" { t = $2 } $1 == "run_cnt:" { n = $2 }
		     END { printf "%d %.0f\n", n, n ? t / n : 0 }' /proc/"$1"/fdinfo/"${fd##*/}"
		return
	done
	echo "0 0"
}

# fleet_bench N: what a bench of the fleet store needs (root, python3,
# curl, clickhouse-server, the workload), then bench_setup, bench_env
# and N clickhouse-server shards of the cluster "precord"
# (tests/tools/clickhouse-cluster: loopback, free ports, data in $tmp),
# stopped on exit; their URLs exported as FLEET_URL and FLEET_URL2.
fleet_bench() {
	need_root "precord -a loads BPF"
	need_tools python3 curl
	[ -x "$(command -v clickhouse-server || echo /usr/sbin/clickhouse-server)" ] ||
		die "clickhouse-server is not installed (scripts/deps.sh installs it)"
	need_built build/workloads/workload
	bench_setup
	bench_cleanup() { "$root/tests/tools/clickhouse-cluster" stop "$tmp/ch" 2>/dev/null || true; }
	bench_env
	"$root/tests/tools/clickhouse-cluster" start "$tmp/ch" "$1" > "$tmp/servers" ||
		die "clickhouse-server did not start"
	FLEET_URL=$(awk 'NR == 1 { print $1 }' "$tmp/servers")
	FLEET_URL2=$(awk 'NR == 2 { print $1 }' "$tmp/servers")
	export FLEET_URL FLEET_URL2
}
