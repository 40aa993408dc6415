#!/usr/bin/env bats
# The judge judged: tests/tools/perf-check passes a file perf record wrote
# and fails every broken copy of it (made by tests/tools/perfdata.py);
# tests/tools/profile-compare tells the same profile from a different one.

load helpers

CHECK=$ROOT/tests/tools/perf-check
PCOMPARE=$ROOT/tests/tools/profile-compare
BREAK=$ROOT/tests/tools/perfdata.py

# One good recording for the whole file, by perf record itself: the
# checker's tests do not depend on precord.  G holds it, and its HOME
# (perf record adds to the build-id cache).
setup_file() {
	G=$(mktemp -d /tmp/precord-test.XXXXXX)
	export G
	mkdir -p "$G/home"
	if [ "$(id -u)" = 0 ] && perf version >/dev/null 2>&1 && [ -x "$WL" ]; then
		HOME=$G/home perf record -q -e cpu-clock -F 999 -g -o "$G/good.data" -- "$WL" hot3 0.5 \
			>/dev/null 2>&1
		HOME=$G/home perf record -q -e cpu-clock -F 999 -g -o "$G/other.data" -- "$WL" kernel 0.5 \
			>/dev/null 2>&1
		# samples with PERF_SAMPLE_CGROUP, PERF_RECORD_CGROUP records (not
		# -a: binaries other programs rebuild meanwhile would make perf
		# inject's copy differ)
		HOME=$G/home perf record -q --all-cgroups -F 999 -g -o "$G/cgroups.data" -- \
			"$WL" hot3 0.5 >/dev/null 2>&1
	fi
	true
}
teardown_file() { [ -n "${G:-}" ] && rm -rf "$G"; }

setup() {
	common_setup
	need "root" test "$(id -u)" = 0
	need "perf" perf version
	need "python3" command -v python3
	need "workloads built" test -x "$WL"
	[ -s "$G/good.data" ] && [ -s "$G/other.data" ]
	[ ! -d "$G/home/.debug" ] || cp -r "$G/home/.debug" "$HOME/"	# perf record's cache
	# broken files can make a reader spin (hotspot's perfparser does)
	export PERF_CHECK_TIMEOUT=15
}
teardown() { common_teardown; }

# check_broken KIND [ARG]: a copy of the good file with one fault must fail
# the check: exit 1 and "N checks, M problems" with M > 0.
check_broken() {
	"$BREAK" break "$1" "$G/good.data" bad.data ${2:+"$2"}
	run "$CHECK" bad.data
	echo "$output" >&2
	[ "$status" -eq 1 ]
	echo "$output" | tail -1 | grep -Eq '^perf-check: [0-9]+ checks, [1-9][0-9]* problems$'
}

@test "perf-check: a file perf record wrote passes with 0 problems" {
	run "$CHECK" --require BUILD_ID,CPU_TOPOLOGY,EVENT_DESC --min-samples 100 "$G/good.data"
	echo "$output" >&2
	[ "$status" -eq 0 ]
	echo "$output" | tail -1 | grep -Eq '^perf-check: [0-9]+ checks, 0 problems$'
	# every reader ran
	for c in layout header report stats script fields evlist buildids dump json inject \
		dump-clean samples json-samples inject-roundtrip; do
		echo "$output" | grep -Eq "^ok      $c( \(|$)"
	done
	if ls /usr/lib/*/libexec/hotspot-perfparser >/dev/null 2>&1; then
		echo "$output" | grep -q '^ok      perfparser-samples'
	fi
	lint "$G/good.data"		# the helper the other tests use agrees
}

@test "perf-check: a truncated file fails" {
	check_broken truncate
	echo "$output" | grep -q '^PROBLEM layout: data section .* past the end of the file'
	echo "$output" | grep -q '^PROBLEM report: .*failed to process'
}

@test "perf-check: a wrong attr.size (136, an ABI perf 6.1 does not know) fails" {
	check_broken attr-size 136
	echo "$output" | grep -q '^PROBLEM layout: attr at .*attr.size 136'
	echo "$output" | grep -q '^PROBLEM header: exit [1-9].*incompatible file format'
}

@test "perf-check: an unknown record type in the data section fails" {
	check_broken unknown-record 30
	echo "$output" | grep -q '^PROBLEM layout: record at .*type 30'
	echo "$output" | grep -Eq '^PROBLEM dump-clean: .*(PERF_RECORD_UNKNOWN|unknown events)'
	check_broken unknown-record 90
	echo "$output" | grep -q '^PROBLEM report: .*failed to process type: 90'
}

@test "perf-check: a required feature that is missing fails, and only when required" {
	"$BREAK" break drop-feature "$G/good.data" nobuildid.data BUILD_ID
	run "$CHECK" nobuildid.data
	echo "$output" >&2
	[ "$status" -eq 0 ]			# otherwise a good file
	run "$CHECK" --require CPU_TOPOLOGY,BUILD_ID nobuildid.data
	echo "$output" >&2
	[ "$status" -eq 1 ]
	echo "$output" | grep -q '^ok      feature CPU_TOPOLOGY'
	echo "$output" | grep -q '^PROBLEM feature BUILD_ID: not in the file'
	echo "$output" | tail -1 | grep -q '^perf-check: [0-9]* checks, 1 problems$'
	# perf record writes no AUXTRACE without AUX tracing
	run "$CHECK" --require AUXTRACE "$G/good.data"
	[ "$status" -eq 1 ]
	echo "$output" | grep -q '^PROBLEM feature AUXTRACE'
	# a misspelt feature is a usage error, not a pass
	run "$CHECK" --require BUILDID "$G/good.data"
	[ "$status" -eq 2 ]
}

@test "perf-check: an empty feature section perf itself is silent about fails" {
	check_broken empty-feature HOSTNAME
	echo "$output" | grep -q '^PROBLEM layout: feature HOSTNAME: size 0'
	check_broken empty-feature CPU_TOPOLOGY
}

@test "perf-check: data.size 0 (an unfinished recording) fails" {
	check_broken data-size-0
	echo "$output" | grep -q '^PROBLEM layout: data.size is 0'
	echo "$output" | grep -q '^PROBLEM script: exit'
}

@test "perf-check: perf record --all-cgroups passes (CGROUP records, samples with a cgroup)" {
	[ -s "$G/cgroups.data" ]
	perf evlist -v -i "$G/cgroups.data" 2>/dev/null | grep -q 'sample_type: [A-Z|]*|CGROUP,'
	perf report -i "$G/cgroups.data" -D 2>/dev/null | grep -q 'PERF_RECORD_CGROUP cgroup: '
	lint "$G/cgroups.data" --min-samples 100
}

@test "perf-check: a CGROUP record whose path does not end fails (perf prints and sorts on it silently)" {
	[ -s "$G/cgroups.data" ]
	"$BREAK" break cgroup-path "$G/cgroups.data" bad.data
	run "$CHECK" bad.data
	echo "$output" >&2
	[ "$status" -eq 1 ]
	echo "$output" | grep -q '^PROBLEM layout: record at .*(CGROUP, size .*): the path has no NUL'
}

@test "perf-check: samples without a field their sample_type says fail (perf reads past them silently)" {
	check_broken sample-bit 21		# CGROUP
	echo "$output" | grep -q '^PROBLEM layout: record at .*(SAMPLE, size .*): sample_type 0x[0-9a-f]* makes it'
	[ -s "$G/cgroups.data" ]
	"$BREAK" break sample-bit "$G/cgroups.data" bad.data 19	# PHYS_ADDR
	run "$CHECK" bad.data
	[ "$status" -eq 1 ]
	echo "$output" | grep -q '^PROBLEM layout: record at .*(SAMPLE'
}

@test "perf-check: too few samples fails" {
	run "$CHECK" --min-samples 100000 "$G/good.data"
	[ "$status" -eq 1 ]
	echo "$output" | grep -q '^PROBLEM samples: [0-9]*, fewer than 100000'
}

@test "perf-check leaves nothing behind: no temporary files, nothing in ~/.debug" {
	# an empty cache: perf inject would add every DSO with samples to it
	rm -rf "$HOME/.debug"
	mkdir tmp
	TMPDIR=$T/tmp run "$CHECK" "$G/good.data"
	[ "$status" -eq 0 ]
	echo "$output" | grep -q '^ok      inject$'
	[ ! -e "$HOME/.debug" ]
	[ -z "$(ls -A tmp)" ]
}

@test "profile-compare: a file against itself 100%, against perf record of the same execution high, another workload low" {
	pct() { echo "$1" | sed -n 's/^profile-compare: overlap \([0-9.]*\)%.*/\1/p'; }
	run "$PCOMPARE" "$G/good.data" "$G/good.data"
	echo "$output" >&2
	[ "$status" -eq 0 ]
	[ "$(pct "$output")" = 100.0 ]
	run "$PCOMPARE" --children "$G/good.data" "$G/good.data"
	[ "$(pct "$output")" = 100.0 ]
	# two perf record -p of one execution: their profiles differ by
	# sampling noise only (perf record's own -D -1 --control acks say
	# that both are on before the workload is let go)
	rm -f gate gate.pid
	mkfifo gate c1 a1 c2 a2
	sh -c 'echo $$ > "$0.pid"; read -r go < "$0"; exec "$@"' "$T/gate" "$WL" hot3 4 &
	w=$!
	for _ in $(seq 1000); do [ -s gate.pid ] && break; sleep 0.01; done
	perf record -q -D -1 --control fifo:c1,a1 -e cpu-clock -F 999 -g -o one.data -p "$w" >/dev/null 2>&1 &
	r1=$!
	perf record -q -D -1 --control fifo:c2,a2 -e cpu-clock -F 999 -g -o two.data -p "$w" >/dev/null 2>&1 &
	r2=$!
	for i in 1 2; do
		timeout 60 bash -c 'exec 8>"$1" 9<"$2"; echo enable >&8; read -r a <&9; [ "$a" = ack ]' _ c$i a$i ||
			{ echo "perf record $i did not enable its events" >&2; echo go > gate; false; }
	done
	echo go > gate
	wait "$w"; wait "$r1"; wait "$r2"
	n=$(perf report --stats -i one.data 2>/dev/null | awk '/ SAMPLE events:/ { print $3; exit }')
	run "$PCOMPARE" one.data two.data
	echo "$output" >&2
	# about 100 - D, D the sum of the rows' differences: hot_a, hot_b and
	# hot_c's each within noise_tol (2.5 sd of a difference of two samplings)
	min=$(awk -v t="$(noise_tol "${n:-0}")" 'BEGIN { print 100 - 3 * t }')
	echo "overlap of two recordings of one execution ($n samples): at least $min%" >&2
	awk -v p="$(pct "$output")" -v m="$min" 'BEGIN { exit !(p >= m) }'
	run "$PCOMPARE" "$G/good.data" "$G/other.data"
	echo "$output" >&2
	awk -v p="$(pct "$output")" 'BEGIN { exit !(p < 10) }'
	run "$PCOMPARE" --keys sym "$G/good.data" "$G/other.data"
	awk -v p="$(pct "$output")" 'BEGIN { exit !(p < 10) }'
}
