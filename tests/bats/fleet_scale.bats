#!/usr/bin/env bats
# The fleet store at fleet scale (docs/fleet.md, "Rollups"): counts that
# are samples taken, the hourly rollups' answers (exact: a second commit
# and a half push count once, as in the raw rows), --by, retention.
# Every test starts two clickhouse-server shards (tests/tools/
# clickhouse-cluster) and stops them in teardown.

load helpers

setup() { fleet_setup; }
teardown() { fleet_teardown; }

# q URL SQL: one statement; INSERTs through a Distributed table land on
# the shards before it returns, as push's do
q() { curl -sS --fail-with-body "$1?insert_distributed_sync=1" --data-binary "$2"; }

# near A B PCT: A within PCT percent of B
near() { awk -v a="$1" -v b="$2" -v p="$3" 'BEGIN { d = a - b; if (d < 0) d = -d; exit !(b > 0 && d <= b * p / 100) }'; }

# every fleet-wide answer the rollups may give, through U1
fleet_answers() {
	"$PRECORD" query "$U1" --totals "$@"
	"$PRECORD" query "$U1" --totals --by comm "$@"
	"$PRECORD" query "$U1" --totals --by cgroup "$@"
	"$PRECORD" query "$U1" --top 15 "$@"
	"$PRECORD" query "$U1" --top 15 --children "$@"
	"$PRECORD" query "$U1" --folded "$@" | sort
}

# and those per host (raw rows)
answers() {
	fleet_answers "$@"
	"$PRECORD" query "$U1" --top 3 --by host "$@"
}

@test "fleet scale: an --aggregate file's samples are the samples taken (push, --totals, files table); a plain file's unchanged" {
	"$PRECORD" -q -g -F 999 --aggregate -o agg.data -- "$WL" hot3 2
	"$PRECORD" -q -g -F 999 -o plain.data -- "$WL" hot3 1
	# perf's own view: the records, and the samples their periods stand
	# for at cpu-clock's fixed period at 999 Hz (1e9 / 999 ns)
	records=$(perf script -i agg.data -F period 2>/dev/null | wc -l)
	taken=$(perf script -i agg.data -F period 2>/dev/null | awk '{ s += $1 } END { printf "%d", s / 1001001 + 0.5 }')
	plain=$(perf script -i plain.data -F period 2>/dev/null | wc -l)
	echo "aggregated: $records records, $taken samples; plain: $plain samples"
	[ "$records" -gt 0 ] && [ "$records" -lt "$taken" ]

	run "$PRECORD" push "$U1" --host agg-host agg.data
	echo "$output"
	[ "$status" -eq 0 ]
	n=$(echo "$output" | sed -n 's/^agg.data: \([0-9]*\) samples (\([0-9]*\) records) as .*/\1/p')
	r=$(echo "$output" | sed -n 's/^agg.data: \([0-9]*\) samples (\([0-9]*\) records) as .*/\2/p')
	near "$n" "$taken" 1
	[ "$r" -eq "$records" ]
	run "$PRECORD" push "$U2" --host plain-host plain.data
	echo "$output"
	[[ "$output" == "plain.data: $plain samples as "* ]]

	for mode in 1 0; do
		out=$(PRECORD_FLEET_ROLLUP=$mode "$PRECORD" query "$U2" --totals)
		echo "rollups $mode: $out"
		t=$(echo "$out" | awk '$1 == "agg-host" { print $2 }')
		near "$t" "$taken" 1
		[ "$t" -eq "$n" ]
		[ "$(echo "$out" | awk '$1 == "plain-host" { print $2 }')" -eq "$plain" ]
	done
	[ "$(q "$U1" "SELECT samples, records FROM precord_files WHERE host = 'agg-host'")" = "$n	$records" ]
	[ "$(q "$U1" "SELECT samples, records FROM precord_files WHERE host = 'plain-host'")" = "$plain	$plain" ]
	# the rollups hold the samples (the views summed the rows' counts)
	[ "$(q "$U1" "SELECT sum(count) FROM precord_hour_stacks WHERE event = 'cpu'")" -eq $((n + plain)) ]
}

@test "fleet scale: rollup answers are the raw rows' answers; a second commit and a half push count once; --by; edges of a range read raw" {
	"$PRECORD" -q -g -F 999 --aggregate -o a.data -- "$WL" hot3 2
	"$PRECORD" -q -g -F 999 -o b.data -- "$WL" threads 2 1
	"$PRECORD" push "$U1" --host ha a.data
	"$PRECORD" push "$U2" --host hb b.data
	base=$(answers)
	echo "$base"
	[ "$base" = "$(PRECORD_FLEET_ROLLUP=0 answers)" ]
	# --totals: one line per host; --by comm per comm; --top --by host:
	# a header per host, then its top lines
	[ "$("$PRECORD" query "$U1" --totals | wc -l)" -eq 2 ]
	"$PRECORD" query "$U1" --totals --by comm | grep -q '^worker-0 [0-9]* '
	"$PRECORD" query "$U1" --top 3 --by host | grep -Eq '^## host ha  [0-9.]+%  [0-9]+ samples$'
	"$PRECORD" query "$U1" --top 3 --by host | grep -Eq '^## host hb  [0-9.]+%  [0-9]+ samples$'
	[ "$("$PRECORD" query "$U1" --top 3 --by host | grep -c '^## host')" -eq 2 ]
	run "$PRECORD" query "$U1" --folded --by host
	[ "$status" -eq 2 ]
	run "$PRECORD" query "$U1" --totals --by pid
	[ "$status" -eq 2 ]
	[[ "$output" == *"bad --by 'pid'"* ]]
	rolled=$(q "$U1" "SELECT sum(count) FROM precord_hour_stacks")

	# a second commit of a.data (two pushers raced: its rows under another
	# push id, committed later) and a push of b.data that died before its
	# commit: the views counted both...
	q "$U1" "INSERT INTO precord_pushes (host, file_id, push_id, first, last, started_ns) SELECT host, file_id, push_id + 1, first, last, started_ns + 1 FROM precord_pushes WHERE host = 'ha'"
	q "$U1" "INSERT INTO precord_samples (window, host, cgroup, comm, pid, leaf_build_id, stack_hash, count, weight, file_id, push_id, event) SELECT window, host, cgroup, comm, pid, leaf_build_id, stack_hash, count, weight, file_id, push_id + 1, event FROM precord_samples WHERE host = 'ha'"
	q "$U1" "INSERT INTO precord_files (host, file_id, push_id, name, samples, records, weight, first, last, pushed_ns) SELECT host, file_id, push_id + 1, name, samples, records, weight, first, last, pushed_ns + 1 FROM precord_files WHERE host = 'ha'"
	q "$U1" "INSERT INTO precord_pushes (host, file_id, push_id, first, last, started_ns) SELECT host, file_id, push_id + 7, first, last, started_ns + 1 FROM precord_pushes WHERE host = 'hb'"
	q "$U1" "INSERT INTO precord_samples (window, host, cgroup, comm, pid, leaf_build_id, stack_hash, count, weight, file_id, push_id, event) SELECT window, host, cgroup, comm, pid, leaf_build_id, stack_hash, count, weight, file_id, push_id + 7, event FROM precord_samples WHERE host = 'hb'"
	[ "$(q "$U1" "SELECT sum(count) FROM precord_hour_stacks")" -eq $((2 * rolled)) ]
	# ... and no answer changed
	[ "$(answers)" = "$base" ]

	# ranges: whole hours from the rollups, the edges raw: every answer
	# equals the raw rows' answer
	first=$(q "$U1" "SELECT toUInt32(min(window)) FROM precord_samples")
	hour=$((first / 3600 * 3600))
	at() { date -u -d "@$1" +%Y-%m-%dT%H:%M:%S; }
	for r in "--since $(at $hour)" "--since $(at $((hour - 1800)))" "--since $(at $((first - 5)))" \
		 "--since $(at $((first + 10))) --until $(at $((hour + 7200)))" \
		 "--until $(at $((hour + 3600)))" "--until $(at $((first + 10)))"; do
		# shellcheck disable=SC2086
		got=$(answers $r)
		# shellcheck disable=SC2086
		want=$(PRECORD_FLEET_ROLLUP=0 answers $r)
		[ "$got" = "$want" ] || { echo "range $r: rollups"; echo "$got"; echo "raw"; echo "$want"; false; }
	done
}

@test "fleet scale: fleet-schema adds the records column and backfills the rollups of a store made before them; retention drops raw days and the rollups still answer them exactly" {
	"$PRECORD" -q -g -F 999 --aggregate -o a.data -- "$WL" hot3 1
	"$PRECORD" push "$U1" --host ha a.data
	# the store as an older precord left it: no rollups, no pushes rows
	for u in "$U1" "$U2"; do
		for t in precord_hour_stacks_mv precord_hour_hosts_mv precord_hour_stacks precord_hour_hosts \
			 precord_hour_stacks_local precord_hour_hosts_local; do
			q "$u" "DROP TABLE $t"
		done
		q "$u" "TRUNCATE TABLE precord_pushes_local"
		q "$u" "ALTER TABLE precord_files DROP COLUMN records"
		q "$u" "ALTER TABLE precord_files_local DROP COLUMN records"
	done
	run "$PRECORD" query "$U1" --totals
	[ "$status" -ne 0 ]
	[[ "$output" == *"run \`precord fleet-schema"* ]]
	# a half push by that precord (no pushes row): not backfilled
	q "$U1" "INSERT INTO precord_samples (window, host, cgroup, comm, pid, leaf_build_id, stack_hash, count, weight, file_id, push_id, event) SELECT window, host, cgroup, comm, pid, leaf_build_id, stack_hash, count, weight, file_id, push_id + 3, event FROM precord_samples WHERE host = 'ha'"
	for u in "$U1" "$U2"; do
		"$PRECORD" fleet-schema "$u" --cluster precord
	done
	want=$(PRECORD_FLEET_ROLLUP=0 answers)
	[ -n "$want" ]
	[ "$(answers)" = "$want" ]
	# the files' records column is back, once; an old row reads its
	# samples there (an older precord's samples were its records)
	for u in "$U1" "$U2"; do
		"$PRECORD" fleet-schema "$u" --cluster precord
		[ "$(q "$u" "SELECT count() FROM system.columns WHERE database = currentDatabase() AND name = 'records'")" -eq 2 ]
	done
	[ "$(q "$U1" "SELECT count() FROM precord_files WHERE records = samples")" -eq 1 ]

	# two days ago: the same file's rows, committed, and a half push
	q "$U1" "INSERT INTO precord_pushes (host, file_id, push_id, first, last, started_ns) VALUES ('ha', 77, 1, now() - 172800, now() - 172800, 1), ('ha', 77, 2, now() - 172800, now() - 172800, 2)"
	for id in 1 2; do
		q "$U1" "INSERT INTO precord_samples (window, host, cgroup, comm, pid, leaf_build_id, stack_hash, count, weight, file_id, push_id, event) SELECT window - 172800, host, cgroup, comm, pid, leaf_build_id, stack_hash, count, weight, 77, $id, event FROM precord_samples WHERE host = 'ha' AND push_id GLOBAL IN (SELECT push_id FROM precord_files WHERE host = 'ha')"
	done
	q "$U1" "INSERT INTO precord_files (host, file_id, push_id, name, samples, records, weight, first, last, pushed_ns) VALUES ('ha', 77, 1, 'old.data', 1, 1, 1, now() - 172800, now() - 172800, 1)"
	old=$(PRECORD_FLEET_ROLLUP=0 fleet_answers --until 1d)
	[ -n "$old" ]
	[ "$(fleet_answers --until 1d)" = "$old" ]
	for u in "$U1" "$U2"; do
		"$ROOT/scripts/fleet-retention.sh" "$u" 1 90
	done
	# the raw rows of that day are gone, the rollups answer for it
	[ "$(q "$U1" "SELECT count() FROM precord_samples WHERE window < now() - 86400")" -eq 0 ]
	[ -z "$(PRECORD_FLEET_ROLLUP=0 "$PRECORD" query "$U1" --totals --until 1d)" ]
	[ "$(fleet_answers --until 1d)" = "$old" ]
	# today's answers did not move
	[ "$(answers --since 1d)" = "$(PRECORD_FLEET_ROLLUP=0 answers --since 1d)" ]
}
