#!/usr/bin/env bash
# Runs precord's tests and prints one TAP-ish line per test, then always,
# as the last line, "N passed, N failed, N skipped"; exits 1 on a failure.
#
#   scripts/run-tests.sh                 everything (make test): the C unit
#                                        tests of build/ and build-san/, the
#                                        fuzz corpora replayed under
#                                        ASan/UBSan, and the bats end-to-end
#                                        tests (root, perf)
#   scripts/run-tests.sh --unit [DIR]    the unit tests and fuzz replays of
#                                        DIR (default build/) only: no root,
#                                        no packages beyond the build's
#                                        (make unit, make SAN=1 unit)
#   scripts/run-tests.sh --bats FILE...  the prerequisites and these bats
#                                        files only (make test BATS=...)
#
# Under CI (CI=true) a missing prerequisite is a failure, never a skip.
set -u
cd "$(dirname "$0")/.." || exit 2
mode=all
unit_dirs="build build-san"
replay_dirs="build-san"
bats_files=tests/bats
case ${1:-} in
--unit) mode=unit; unit_dirs=${2:-build}; replay_dirs=$unit_dirs ;;
--bats)
	shift
	[ $# -gt 0 ] || { echo "usage: scripts/run-tests.sh --bats FILE..." >&2; exit 2; }
	for f in "$@"; do
		[ -f "$f" ] || { echo "run-tests.sh: no bats file $f" >&2; exit 2; }
	done
	mode=all; unit_dirs=""; replay_dirs=""; bats_files="$*" ;;
'') ;;
*) echo "usage: scripts/run-tests.sh [--unit [BUILD-DIR] | --bats FILE...]" >&2; exit 2 ;;
esac
pass=0 fail=0 skip=0
failed_names=()
tmp=$(mktemp -d "${TMPDIR:-/tmp}/precord-run-tests.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT

count_tap() {	# count_tap NAME [quiet] < tap-output: count, and echo the lines
	local name=$1 quiet=${2:-} line
	while IFS= read -r line; do
		[ -n "$quiet" ] || printf '%s\n' "$line"
		case "$line" in
		"not ok "*) fail=$((fail + 1)); failed_names+=("$name: ${line#not ok }") ;;
		"ok "*"# skip"*|"ok "*"# SKIP"*) skip=$((skip + 1)) ;;
		"ok "*) pass=$((pass + 1)) ;;
		esac
	done
}

failure() {	# failure NAME WHY: a failure that is not a TAP line
	fail=$((fail + 1)); failed_names+=("$1")
	echo "not ok - $1${2:+: $2}"
}

# A TAP stream that stopped early (a crash, a syntax error) is a failure.
check_plan() {	# check_plan NAME FILE EXIT-STATUS
	local plan seen
	plan=$(sed -n 's/^1\.\.\([0-9]*\)$/\1/p' "$2" | head -1)
	seen=$(grep -Ec '^(not )?ok ' "$2")
	if [ -n "$plan" ] && [ "$plan" -ne "$seen" ]; then
		failure "$1" "planned $plan tests, $seen ran"
	elif [ "$3" -ne 0 ] && ! grep -q '^not ok' "$2"; then
		failure "$1" "exit $3 with no failed test"; tail -5 "$2"
	fi
}

prereq() {	# prereq NAME CONDITION-COMMAND...
	local name=$1; shift
	if "$@" >/dev/null 2>&1; then
		pass=$((pass + 1)); echo "ok - prerequisite: $name"
	elif [ "${CI:-}" = true ]; then
		failure "prerequisite: $name" "required under CI"
	else
		skip=$((skip + 1)); echo "ok - prerequisite: $name # skip (not CI)"
	fi
}

if [ $mode = all ]; then
	echo "# prerequisites"
	prereq "running as root" test "$(id -u)" = 0
	prereq "kernel BTF" test -r /sys/kernel/btf/vmlinux
	prereq "perf installed" perf version
	prereq "bats installed" bats --version
	prereq "python3 installed" python3 --version
	prereq "precord built" test -x build/precord
fi

for variant in $unit_dirs; do
	n=0
	for t in "$variant"/tests/test_*; do
		[ -x "$t" ] || continue
		n=$((n + 1))
		echo "# unit: $t"
		"$t" >"$tmp/unit.out" 2>&1
		rc=$?
		count_tap "$t" <"$tmp/unit.out"
		check_plan "$t" "$tmp/unit.out" $rc
	done
	[ $n -gt 0 ] || failure "unit tests in $variant/tests" "none built (make unit)"
done

for variant in $replay_dirs; do
	n=0
	for r in "$variant"/fuzz/replay_*; do
		[ -x "$r" ] || continue
		n=$((n + 1))
		name=${r##*/replay_}
		corpus=tests/fuzz/corpus/$name
		if [ ! -d "$corpus" ]; then
			failure "fuzz replay $name ($variant)" "no corpus in $corpus"; continue
		fi
		if out=$("$r" "$corpus" 2>&1); then
			pass=$((pass + 1)); echo "ok - fuzz replay $name ($variant: $(tail -1 <<<"$out"))"
		else
			failure "fuzz replay $name ($variant)"; tail -20 <<<"$out"
		fi
	done
	[ $n -gt 0 ] || failure "fuzz replays in $variant/fuzz" "none built (make unit)"
done

if [ $mode = all ] && command -v bats >/dev/null 2>&1; then
	echo "# bats end-to-end tests"
	# shellcheck disable=SC2086
	bats --tap $bats_files 2>&1 | tee "$tmp/bats.out"
	rc=${PIPESTATUS[0]}
	count_tap bats quiet <"$tmp/bats.out"
	check_plan bats "$tmp/bats.out" "$rc"
fi

if [ ${#failed_names[@]} -gt 0 ]; then
	echo "# failed:"
	printf '#   %s\n' "${failed_names[@]}"
fi
echo "$pass passed, $fail failed, $skip skipped"
[ "$fail" -eq 0 ]
