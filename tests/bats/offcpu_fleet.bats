#!/usr/bin/env bats
# End-to-end: off-CPU time in the fleet store (docs/offcpu.md, "Fleet").
# `push` stores a file's offcpu-time samples beside its CPU samples (the
# samples' event column, 'offcpu', weight = ns waited); `query --event
# offcpu` reports them and plain `query` the CPU samples as before.  The
# oracle is perf report of the very file pushed.  Every test starts two
# clickhouse-server processes as the two shards of the cluster "precord"
# (tests/tools/clickhouse-cluster, as fleet.bats does) and stops them in
# teardown.

load helpers

CLUSTER=$ROOT/tests/tools/clickhouse-cluster
OC=$ROOT/build/workloads/offcpu

setup() {
	common_setup
	require_recording
	need "offcpu workload built" test -x "$OC"
	fleet_cluster
}

teardown() {
	[ -n "${T:-}" ] && "$CLUSTER" stop "$T/ch"
	common_teardown
}

sql() { curl -sS --fail-with-body "$1" --data-binary "$2"; }

# report_share FILE EVENT children|no-children SYM: SYM's share in perf
# report's section of EVENT (0 when absent)
report_share() {
	perf report -i "$1" --stdio "--$3" --sort sym -g none 2>/dev/null |
		awk -v e="'$2'" -v s="$4" '/^# Samples: .* of event / { on = (index($0, e) > 0) }
			on && /%/ && $NF == s { gsub(/%/, "", $1); print $1; f = 1; exit }
			END { if (!f) print 0 }'
}

# query_share ARGS... -- SYM: SYM's share in `precord query ARGS` (0 when absent)
query_share() {
	local args=() s
	while [ "$1" != "--" ]; do args+=("$1"); shift; done
	s=$2
	"$PRECORD" query "${args[@]}" | awk -v s="$s" '$2 == s { gsub(/%/, "", $1); print $1; f = 1; exit } END { if (!f) print 0 }'
}

@test "offcpu fleet: pushed --off-cpu -g file: --event offcpu --top within 2 points of perf report's offcpu-time, --top (cpu) of its CPU samples, folded in ns, flame graph titled off-CPU" {
	"$PRECORD" -q --off-cpu -g -o p.data -- "$OC" waits 2 raw "$T/truth"
	run "$PRECORD" push "$U1" --host oc-host p.data
	echo "$output"
	[ "$status" -eq 0 ]
	[[ "$output" == *" off-CPU samples as "* ]]

	# off-CPU, children (the waiting functions are callers of the wait)
	local f q r
	for f in wait_sleep wait_poll main run_waits; do
		q=$(query_share "$U1" --event offcpu --top 200 --children -- "$f")
		r=$(report_share p.data offcpu-time children "$f")
		echo "offcpu children $f: query $q%, perf report $r%" >&2
		awk -v r="$r" 'BEGIN { exit !(r > 0) }'
		within "$q" "$r" 2
	done
	# off-CPU, self: the leaf of every wait is the scheduler
	q=$(query_share "$U1" --event offcpu --top 200 -- __schedule)
	r=$(report_share p.data offcpu-time no-children __schedule)
	echo "offcpu self __schedule: query $q%, perf report $r%" >&2
	within "$q" "$r" 2

	# CPU (the default event): the file's CPU samples only, as before
	local n_cpu n_oc
	n_cpu=$(perf report -i p.data --stdio -n --no-children --sort comm -g none 2>/dev/null |
		awk "/of event 'cpu-clock'/ { on = 1; next } /of event / { on = 0 } on && /%/ { s += \$2 } END { print s + 0 }")
	n_oc=$(perf script -i p.data -F event 2>/dev/null | grep -c 'offcpu-time')
	run "$PRECORD" query "$U1" --totals
	echo "$output"
	[ "$(echo "$output" | awk '{ print $2 }')" = "$n_cpu" ]
	run "$PRECORD" query "$U1" --totals --event offcpu
	echo "$output (perf script: $n_oc offcpu-time samples)"
	[ "$(echo "$output" | awk '{ print $2 }')" = "$n_oc" ]
	"$PRECORD" query "$U1" --top 10 | awk '{ print $2 }' > cpu_syms
	[ -s cpu_syms ]
	while read -r f; do
		q=$(query_share "$U1" --top 200 -- "$f")
		r=$(report_share p.data cpu-clock no-children "$f")
		echo "cpu self $f: query $q%, perf report $r%" >&2
		within "$q" "$r" 2
	done < cpu_syms
	# a CPU query shows no off-CPU time: __schedule has 100% of it
	q=$(query_share "$U1" --top 200 -- __schedule)
	r=$(report_share p.data cpu-clock no-children __schedule)
	within "$q" "$r" 2

	# --folded --event offcpu: values in ns, summing to perf's event count
	local ev sum
	ev=$(perf report -i p.data --stdio 2>/dev/null | awk "/of event 'offcpu-time'/ { f = 1 } f && /Event count/ { print \$NF; exit }")
	sum=$("$PRECORD" query "$U1" --event offcpu --folded | awk '{ s += $NF } END { printf "%d\n", s }')
	echo "folded off-CPU: $sum ns, perf report event count $ev" >&2
	[ "$sum" = "$ev" ]

	# the flame graphs: off-CPU says so in its title and its unit is ns
	"$PRECORD" query "$U1" --event offcpu --flamegraph oc.svg
	"$PRECORD" query "$U1" --flamegraph cpu.svg
	xmllint --noout oc.svg
	grep -q '>precord: off-CPU time (ns waited), all hosts</text>' oc.svg
	grep -q '>wait_sleep ([0-9]* ns, [0-9.]*%)</title>' oc.svg
	! grep -q 'samples, ' oc.svg || false
	! grep -q 'off-CPU' cpu.svg || false
	grep -q ' samples, ' cpu.svg

	run "$PRECORD" query "$U1" --event wall
	[ "$status" -eq 2 ]
	[[ "$output" == *"bad --event 'wall'"* ]]
}

@test "offcpu fleet: fleet-schema on a store made before the event column adds it once; old rows are CPU samples, queried as before" {
	"$PRECORD" -q -g -F 999 -o a.data -- "$WL" hot3 1
	"$PRECORD" push "$U1" --host old-host a.data
	"$PRECORD" query "$U1" --top 20 > before
	[ -s before ]
	# the store as an older precord made it: no event column anywhere
	for u in "$U1" "$U2"; do
		sql "$u" "ALTER TABLE precord_samples DROP COLUMN event"
		sql "$u" "ALTER TABLE precord_samples_local DROP COLUMN event"
	done
	run "$PRECORD" query "$U1" --top 20
	[ "$status" -ne 0 ]
	[[ "$output" == *"tables of an older precord"*"fleet-schema"* ]]

	# twice on every server: the second changes nothing
	for u in "$U1" "$U2" "$U1" "$U2"; do
		"$PRECORD" fleet-schema "$u" --cluster precord
	done
	for u in "$U1" "$U2"; do
		for t in precord_samples precord_samples_local; do
			[ "$(sql "$u" "SELECT count() FROM system.columns WHERE database = currentDatabase() AND table = '$t' AND name = 'event'")" = 1 ]
		done
	done
	"$PRECORD" query "$U1" --top 20 > after
	diff before after
	[ "$("$PRECORD" query "$U1" --event offcpu --top 20 | wc -l)" -eq 0 ]

	# an off-CPU file pushed now: CPU answers of the old host unchanged
	"$PRECORD" -q --off-cpu -g -o p.data -- "$OC" waits 1 raw "$T/truth"
	"$PRECORD" push "$U1" --host new-host p.data
	"$PRECORD" query "$U1" --host old-host --top 20 > after2
	diff before after2
	[ "$("$PRECORD" query "$U1" --event offcpu --top 5 --children | awk '$2 == "main" { print $1 }')" = "100.00%" ]
}
