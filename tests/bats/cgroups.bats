#!/usr/bin/env bats
# Cgroups, as perf record does them: --all-cgroups names each sample's
# cgroup (perf report --sort cgroup), -G records one cgroup's tasks only.
# Each test makes its own cgroup under the cgroup2 mount and removes it.

load helpers

# The cgroup2 mount showing the whole hierarchy (root "/"): /sys/fs/cgroup
# on a pure v2 system, /sys/fs/cgroup/unified on a hybrid one.
cgroup2_mount() {
	awk '{ for (i = 7; i < NF; i++) if ($i == "-") {
		if ($(i + 1) == "cgroup2" && $4 == "/") { print $5; exit } break } }' /proc/self/mountinfo
}

setup() {
	common_setup
	require_recording
	MNT=$(cgroup2_mount)
	need "a cgroup2 mount" test -n "$MNT"
	NAME=precord-test.$$.$BATS_TEST_NUMBER
	CG=$MNT/$NAME
	mkdir "$CG"
	PIDS=()
}

# Workloads are killed and the cgroups removed, whatever happened.
teardown() {
	local p d
	for p in "${PIDS[@]}"; do kill -9 "$p" 2>/dev/null; done
	for p in "${PIDS[@]}"; do wait "$p" 2>/dev/null; done
	if [ -n "${CG:-}" ] && [ -d "$CG" ]; then
		for d in $(find "$CG" -depth -type d); do
			for p in $(cat "$d/cgroup.procs" 2>/dev/null); do kill -9 "$p" 2>/dev/null; done
		done
		for _ in 1 2 3 4 5 6 7 8 9 10; do
			find "$CG" -depth -type d -exec rmdir {} + 2>/dev/null
			[ -d "$CG" ] || break
			sleep 0.2
		done
	fi
	common_teardown
}

# in_cgroup DIR CMD...: run CMD in cgroup DIR, in the background.
in_cgroup() {
	local dir=$1; shift
	sh -c 'echo $$ > "$1/cgroup.procs" && shift && exec "$@"' sh "$dir" "$@" &
	PIDS+=($!)
}

# cgroup_share FILE PATH: the self share (a number) of cgroup PATH.
cgroup_share() {
	perf report -i "$1" --stdio --no-children -g none --sort cgroup -q 2>/dev/null |
		awk -v c="$2" '$2 == c { gsub(/%/, "", $1); print $1; f = 1; exit } END { if (!f) print 0 }'
}

# pid_share FILE PID: the self share of process PID.
pid_share() {
	perf report -i "$1" --stdio --no-children -g none --sort pid -q 2>/dev/null |
		awk -v p="$2" '$2 ~ "^" p ":" { gsub(/%/, "", $1); print $1; f = 1; exit } END { if (!f) print 0 }'
}

# cgroup_id FILE PATH: the id PERF_RECORD_CGROUP gives PATH.
cgroup_id() {
	perf report -i "$1" -D 2>/dev/null |
		awk -v c="$2" '/PERF_RECORD_CGROUP cgroup:/ && $NF == c { print $(NF - 1); exit }'
}

@test "--all-cgroups: a workload moved into a new cgroup shows under its path with its share" {
	in_cgroup "$CG" "$WL" hot3 5
	wl=${PIDS[0]}
	sleep 0.3
	# perf record --all-cgroups over the same seconds: the reference
	perf record -q --all-cgroups -a -F 999 -g -o p.data -- sleep 3 2>/dev/null &
	perfpid=$!
	run "$PRECORD" -a -g -F 999 --all-cgroups -o x.data -- sleep 3
	wait "$perfpid"
	echo "$output" >&2
	[ "$status" -eq 0 ]
	lint x.data --require BUILD_ID,CPU_TOPOLOGY,EVENT_DESC --min-samples 500
	# the samples carry their cgroup, the side-band event asks for new ones
	perf evlist -v -i x.data 2>/dev/null | grep -q 'sample_type: [A-Z|]*|CGROUP,'
	perf evlist -v -i x.data 2>/dev/null | grep -q ', cgroup: 1'
	# the cgroup is named with the id perf record synthesizes for it
	id=$(cgroup_id x.data "/$NAME"); pid_=$(cgroup_id p.data "/$NAME")
	echo "id of /$NAME: precord $id, perf $pid_" >&2
	[ -n "$id" ] && [ "$id" = "$pid_" ] && [ "$id" != 0 ]
	[ "$(cgroup_id x.data /)" = "$(cgroup_id p.data /)" ]
	x=$(cgroup_share x.data "/$NAME"); p=$(cgroup_share p.data "/$NAME")
	w=$(pid_share x.data "$wl")
	echo "/$NAME: precord $x%, perf record $p%; the workload's pid $w%" >&2
	# its share is the workload's (nothing else runs there), a real one
	# (how big depends on what else the machine runs: 18-50% seen),
	# and perf record's of the same seconds
	within "$x" "$w" 0.5
	awk -v x="$x" 'BEGIN { exit !(x >= 5) }'
	within "$x" "$p" 8
	# every other sample is named too: the root cgroup, or another one
	perf report -i x.data --stdio --no-children -g none --sort cgroup -q 2>/dev/null >rows
	cat rows >&2
	! grep -q 'unknown' rows
}

@test "--all-cgroups: a cgroup made while recording is named (the kernel's PERF_RECORD_CGROUP)" {
	rmdir "$CG"
	"$PRECORD" -q -a --all-cgroups -o x.data -- sleep 3 &
	rec=$!
	sleep 0.8
	mkdir "$CG"
	in_cgroup "$CG" "$WL" hot3 1.2
	wait "${PIDS[0]}"
	wait "$rec"
	perf report -i x.data -D 2>/dev/null | grep "PERF_RECORD_CGROUP cgroup: .* /$NAME\$" >rec
	cat rec >&2
	# from the kernel: a time, not a synthesized zero
	awk '{ exit !($2 > 0) }' rec
	x=$(cgroup_share x.data "/$NAME")
	echo "/$NAME: $x%" >&2
	awk -v x="$x" 'BEGIN { exit !(x >= 3) }'
	lint x.data
}

@test "--all-cgroups with a command: the command's move into a cgroup shows" {
	run "$PRECORD" -g --all-cgroups -o x.data -- \
		sh -c 'echo $$ > "$1/cgroup.procs" && exec "$2" hot3 1' sh "$CG" "$WL"
	[ "$status" -eq 0 ]
	x=$(cgroup_share x.data "/$NAME")
	echo "/$NAME: $x%" >&2
	awk -v x="$x" 'BEGIN { exit !(x >= 95) }'
	lint x.data --min-samples 500
}

@test "-G: the cgroup's tasks (its descendants' too) and nothing else" {
	mkdir "$CG/inner"
	# both run until the teardown kills them: 5 s of CPU time ran out
	# before the second recording once the checker took its time
	in_cgroup "$CG/inner" "$WL" hot3 120
	inside=${PIDS[0]}
	"$WL" hot3 120 &
	outside=$!
	PIDS+=("$outside")
	sleep 0.3
	run "$PRECORD" -a -g -F 999 -G "$NAME" -o x.data -- sleep 2
	echo "$output" >&2
	[ "$status" -eq 0 ]
	# 2 s of wall time: ~2000 samples on an idle machine, 438 seen beside
	# a CPU hog (the workload's share of a CPU); the test is which tasks
	lint x.data --min-samples 100
	perf report -i x.data --stdio --no-children -g none --sort pid -q 2>/dev/null >rows
	cat rows >&2
	[ "$(grep -c '%' rows)" -eq 1 ]
	grep -q " $inside:workload" rows
	! grep -q " $outside:" rows
	# an absolute path under the mount names the same cgroup
	run "$PRECORD" -q -a -G "$CG/inner" -o y.data -- sleep 1
	[ "$status" -eq 0 ]
	perf report -i y.data --stdio --no-children -g none --sort pid -q 2>/dev/null >rows
	[ "$(grep -c '%' rows)" -eq 1 ]
	grep -q " $inside:workload" rows
}

@test "-G: a cgroup that does not exist, or no -a: one line, exit 1, no file" {
	run "$PRECORD" -a -G "$NAME/none" -o x.data -- sleep 1
	echo "$output" >&2
	[ "$status" -ne 0 ]
	[ "${#lines[@]}" -eq 1 ]
	[[ "$output" == *"cgroup '$NAME/none' not found"* ]]
	[ ! -e x.data ]
	run "$PRECORD" -G "$NAME" -o x.data -- sleep 1
	[ "$status" -ne 0 ]
	[ "${#lines[@]}" -eq 1 ]
	[[ "$output" == *"needs -a"* ]]
	run "$PRECORD" -a -G "$NAME/../.." -o x.data -- sleep 1
	[ "$status" -ne 0 ]
	[ "${#lines[@]}" -eq 1 ]
	[ ! -e x.data ]
}
