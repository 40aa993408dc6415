#!/bin/bash
# fleet-retention.sh URL RAW_DAYS ROLLUP_DAYS: retention of precord's
# store on ONE ClickHouse server (run it on every server of the cluster,
# e.g. daily from cron): raw rows (samples, stacks, files, pushes) are
# kept RAW_DAYS days, the hourly rollups ROLLUP_DAYS days
# (docs/fleet.md, "Retention").  ClickHouse 18.16 has no TTL: old days
# are dropped as partitions.
#
# Before a raw day goes, what the rollups counted of it that no commit
# counts (push attempts that failed, second commits of a file) is taken
# back from them with negative rows: a query can no longer take it back
# once the raw rows are gone.  (The first and last windows of --totals
# cannot be taken back: they may then span such an attempt's windows.)
# Between the two steps a query over that day takes it back twice: run
# it when nobody asks about last week's hours.
set -euo pipefail
[ $# -eq 3 ] || { echo "usage: $0 URL RAW_DAYS ROLLUP_DAYS" >&2; exit 2; }
URL=$1 RAW=$2 ROLL=$3
[[ "$RAW" =~ ^[0-9]+$ && "$ROLL" =~ ^[0-9]+$ ]] || { echo "$0: days are whole numbers" >&2; exit 2; }
[ "$ROLL" -ge "$RAW" ] || { echo "$0: keep rollups at least as long as raw rows" >&2; exit 2; }

sql() { curl -sS --fail-with-body "$URL" --data-binary "$1"; }

# partitions (YYYYMMDD) of a table older than N days
old_days() {
	sql "SELECT DISTINCT partition FROM system.parts WHERE active AND database = currentDatabase()
	     AND table = '$1' AND partition < toString(toYYYYMMDD(today() - $2)) ORDER BY partition"
}

HOUR="toDateTime(intDiv(toUInt32(window), 3600) * 3600)"
NOT_COUNTED="(host, file_id, push_id) IN (SELECT host, file_id, push_id FROM precord_pushes_local
	WHERE (host, file_id, push_id) NOT IN (SELECT host, file_id, argMin(push_id, pushed_ns)
	FROM precord_files_local GROUP BY host, file_id))"

for p in $(old_days precord_samples_local "$RAW"); do
	d="toDate('${p:0:4}-${p:4:2}-${p:6:2}')"
	sql "INSERT INTO precord_hour_stacks_local SELECT toDate($HOUR) AS date, $HOUR AS hour, event,
	     stack_hash, leaf_build_id, -toInt64(sum(count)), -toInt64(sum(weight))
	     FROM precord_samples_local WHERE date = $d AND $NOT_COUNTED
	     GROUP BY hour, event, stack_hash, leaf_build_id"
	sql "INSERT INTO precord_hour_hosts_local SELECT toDate($HOUR) AS date, $HOUR AS hour, event,
	     host, comm, cgroup, sumState(-toInt64(count)), sumState(-toInt64(weight)),
	     minState(toDateTime(4294967295)), maxState(toDateTime(0))
	     FROM precord_samples_local WHERE date = $d AND $NOT_COUNTED
	     GROUP BY hour, event, host, comm, cgroup"
	sql "ALTER TABLE precord_samples_local DROP PARTITION $p"
done
for t in stacks2 stacks files pushes; do
	for p in $(old_days "precord_${t}_local" "$RAW"); do
		sql "ALTER TABLE precord_${t}_local DROP PARTITION $p"
	done
done
for t in hour_stacks hour_hosts; do
	for p in $(old_days "precord_${t}_local" "$ROLL"); do
		sql "ALTER TABLE precord_${t}_local DROP PARTITION $p"
	done
done
