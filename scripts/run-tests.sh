#!/usr/bin/env bash
# Runs every test: C unit tests (plain and ASan/UBSan builds), the fuzz
# corpora replayed under ASan/UBSan, and the bats end-to-end tests.
# Prints one TAP-ish line per test and ends with "N passed, N failed".
# Under CI (CI=true) a missing prerequisite is a failure, never a skip.
set -u
cd "$(dirname "$0")/.."
pass=0 fail=0 skip=0
failed_names=()

count_tap() {	# count_tap NAME < tap-output; the output is echoed
	local name=$1 line seen=0
	while IFS= read -r line; do
		printf '%s\n' "$line"
		case "$line" in
		"not ok "*) fail=$((fail + 1)); failed_names+=("$name: ${line#not ok }"); seen=1 ;;
		"ok "*"# skip"*|"ok "*"# SKIP"*) skip=$((skip + 1)); seen=1 ;;
		"ok "*) pass=$((pass + 1)); seen=1 ;;
		esac
	done
	return $seen
}

prereq() {	# prereq NAME CONDITION-COMMAND...
	local name=$1; shift
	if "$@" >/dev/null 2>&1; then
		pass=$((pass + 1)); echo "ok - prerequisite: $name"
	elif [ "${CI:-}" = true ]; then
		fail=$((fail + 1)); failed_names+=("prerequisite: $name")
		echo "not ok - prerequisite: $name (required under CI)"
	else
		skip=$((skip + 1)); echo "ok - prerequisite: $name # skip (not CI)"
	fi
}

echo "# prerequisites"
prereq "running as root" test "$(id -u)" = 0
prereq "kernel BTF" test -r /sys/kernel/btf/vmlinux
prereq "perf installed" perf version
prereq "bats installed" bats --version
prereq "precord built" test -x build/precord

for variant in build build-san; do
	for t in "$variant"/tests/test_*; do
		[ -x "$t" ] || continue
		echo "# unit: $t"
		out=$("$t" 2>&1); rc=$?
		count_tap "$t" <<<"$out"
		if [ $rc -ne 0 ] && ! grep -q '^not ok' <<<"$out"; then
			fail=$((fail + 1)); failed_names+=("$t: exit $rc")
			echo "not ok - $t exited $rc"; echo "$out" | tail -5
		fi
	done
done

for r in build-san/fuzz/replay_*; do
	[ -x "$r" ] || continue
	name=${r##*/replay_}
	corpus=tests/fuzz/corpus/$name
	if [ ! -d "$corpus" ]; then
		fail=$((fail + 1)); failed_names+=("fuzz corpus $name missing")
		echo "not ok - fuzz replay $name: no corpus in $corpus"; continue
	fi
	if out=$("$r" "$corpus" 2>&1); then
		pass=$((pass + 1)); echo "ok - fuzz replay $name ($(tail -1 <<<"$out"))"
	else
		fail=$((fail + 1)); failed_names+=("fuzz replay $name")
		echo "not ok - fuzz replay $name"; tail -20 <<<"$out"
	fi
done

if command -v bats >/dev/null 2>&1 && [ -d tests/bats ]; then
	echo "# bats end-to-end tests"
	count_tap bats < <(bats --tap tests/bats 2>&1)
fi

if [ ${#failed_names[@]} -gt 0 ]; then
	echo "# failed:"
	printf '#   %s\n' "${failed_names[@]}"
fi
echo "$pass passed, $fail failed, $skip skipped"
[ "$fail" -eq 0 ]
