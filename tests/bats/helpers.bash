# Shared set-up for precord's end-to-end tests.  Every test gets its own
# temporary directory and HOME (so perf's build-id cache, ~/.debug, lands
# there), removed afterwards.

ROOT=$(cd "$BATS_TEST_DIRNAME/../.." && pwd)
PRECORD=$ROOT/build/precord
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

# within A B TOL: |A - B| <= TOL
within() {
	awk -v a="$1" -v b="$2" -v t="$3" 'BEGIN { d = a - b; if (d < 0) d = -d; exit !(d <= t) }'
}
