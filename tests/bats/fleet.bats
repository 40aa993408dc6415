#!/usr/bin/env bats
# End-to-end: the fleet store (docs/fleet.md).  Every test starts two
# clickhouse-server processes (tests/tools/clickhouse-cluster: loopback
# only, free ports, data under the test's directory) as the two shards of
# the cluster "precord", and stops them in teardown, failed or not.

load helpers

CLUSTER=$ROOT/tests/tools/clickhouse-cluster
# The flame graph's screenshot is kept here for a person to look at.
OUT_DIR=${FLEET_TEST_OUT:-$ROOT/build/test-output/fleet}

setup() {
	common_setup
	require_recording
	fleet_cluster
}

teardown() {
	[ -n "${BG:-}" ] && wait "$BG" 2>/dev/null
	[ -n "${T:-}" ] && "$CLUSTER" stop "$T/ch"
	common_teardown
}

sql() { curl -sS --fail-with-body "$1" --data-binary "$2"; }

# A stacks row's key computed by the server from its columns: the SHA-256
# of its content (user/fleet/hash.h, FLEET_STACK_KEY_SQL).
key_array() { echo "concat(toString(length($1)), '[', arrayStringConcat(arrayMap(x -> concat(toString(length(x)), ':', x), $1)), ']')"; }
KEY_SQL="reinterpretAsUInt64(substring(SHA256(concat('precord stack 1;', $(key_array symbols), $(key_array dsos), $(key_array build_ids))), 1, 8))"

# host_on_shard N: a host name the cluster's sharding key (cityHash64 of
# the host, 2 shards of weight 1) puts on shard N (0 or 1).
host_on_shard() {
	local h
	for h in alpha beta gamma delta epsilon zeta eta theta iota kappa; do
		if [ "$(sql "$U1" "SELECT cityHash64('$h') % 2")" = "$1" ]; then
			echo "$h"
			return 0
		fi
	done
	return 1
}

# top_share HOST SYMBOL: SYMBOL's share in `precord query --top` of HOST
top_share() {
	"$PRECORD" query "$U1" --host "$1" --top 50 |
		awk -v s="$2" '$2 == s { gsub(/%/, "", $1); print $1; f = 1; exit } END { if (!f) print 0 }'
}

@test "fleet: schema on two shards, two hosts pushed (one file twice): --top within 2 points of perf report, --totals equal, rows on both shards" {
	# fleet-schema again changes nothing, and a cluster it has not is refused
	"$PRECORD" fleet-schema "$U1" --cluster precord
	run "$PRECORD" fleet-schema "$U1" --cluster nosuch
	[ "$status" -ne 0 ]
	[[ "$output" == *"no cluster 'nosuch'"* ]]

	"$PRECORD" -q -g -F 999 -o a.data -- "$WL" hot3 2
	"$PRECORD" -q -g -F 999 -o b.data -- "$WL" threads 2 1
	perf record -q -g -F 999 -o c.data -- "$WL" hot3 1 > /dev/null 2>&1
	H1=$(host_on_shard 0)
	H2=$(host_on_shard 1)
	run "$PRECORD" push "$U1" --host "$H1" a.data
	echo "$output"
	[ "$status" -eq 0 ]
	# the second host: a precord file and a perf record file, through the
	# other server
	run "$PRECORD" push "$U2" --host "$H2" b.data c.data
	echo "$output"
	[ "$status" -eq 0 ]
	# the same file again counts once
	run "$PRECORD" push "$U2" --host "$H1" a.data
	echo "$output"
	[ "$status" -eq 0 ]
	[[ "$output" == *"already in the store"* ]]

	run "$PRECORD" query "$U2" --totals
	echo "$output"
	[ "$status" -eq 0 ]
	[ "${#lines[@]}" -eq 2 ]
	na=$(samples a.data); nb=$(samples b.data); nc=$(samples c.data)
	echo "$output" | grep -Eq "^$H1 $na [0-9T:Z-]+ [0-9T:Z-]+$"
	echo "$output" | grep -Eq "^$H2 $((nb + nc)) [0-9T:Z-]+ [0-9T:Z-]+$"

	# --since/--until: UTC times and durations; [since, until) of windows
	first=$(echo "$output" | awk -v h="$H1" '$1 == h { print $3 }')
	last=$(echo "$output" | awk -v h="$H1" '$1 == h { print $4 }')
	after=$(date -u -d "${last%Z} UTC + 1 minute" +%Y-%m-%dT%H:%M:%S)
	line1=$(echo "$output" | grep "^$H1 ")
	[ "$("$PRECORD" query "$U1" --totals --host "$H1" --since "$first" --until "$after")" = "$line1" ]
	[ "$("$PRECORD" query "$U1" --totals --host "$H1" --since 1h)" = "$line1" ]
	[ -z "$("$PRECORD" query "$U1" --totals --host "$H1" --until "$first")" ]
	[ -z "$("$PRECORD" query "$U1" --totals --until 2000-01-01)" ]
	[ -z "$("$PRECORD" query "$U1" --totals --since "$after")" ]
	run "$PRECORD" query "$U1" --totals --since 2026-13-01
	[ "$status" -eq 2 ]
	[[ "$output" == *"bad --since '2026-13-01'"* ]]
	run "$PRECORD" query "$U1" --totals --since 1h --until 2h
	[ "$status" -eq 2 ]
	[[ "$output" == *"--since is not before --until"* ]]
	# --build-id: stacks whose leaf is in that DSO (the workload's)
	bid=$(perf buildid-list -i a.data 2>/dev/null | awk '$2 ~ /workload$/ { print $1 }')
	[ -n "$bid" ]
	n_wl=$("$PRECORD" query "$U1" --totals --host "$H1" --build-id "$bid" | awk '{ print $2 }')
	echo "leaf in the workload: $n_wl of $na"
	[ "$n_wl" -gt $((na / 2)) ] && [ "$n_wl" -le "$na" ]
	"$PRECORD" query "$U1" --host "$H1" --build-id "$bid" --top 1 | grep -Eq '^ *[0-9.]+%  hot_a  workload$'
	run "$PRECORD" query "$U1" --totals --build-id "ABC'"
	[ "$status" -eq 2 ]

	# per host, the store's shares are perf report's of that host's files
	fail=0
	for s in hot_a hot_b hot_c; do
		p=$(share a.data "$s"); q=$(top_share "$H1" "$s")
		echo "$H1 $s: perf report $p, store $q"
		within "$p" "$q" 2 || fail=1
	done
	# H2's two files together: perf report's shares of each, weighted by
	# their samples (both at 999 Hz: the same period per sample)
	for s in hot_a hot_b hot_c; do
		p=$(awk -v x="$(share b.data "$s")" -v y="$(share c.data "$s")" -v m="$nb" -v n="$nc" \
			'BEGIN { print (x * m + y * n) / (m + n) }')
		q=$(top_share "$H2" "$s")
		echo "$H2 $s: perf report $p, store $q"
		within "$p" "$q" 2 || fail=1
	done
	[ "$fail" -eq 0 ]
	# --top lines are PCT%  SYMBOL  DSO
	"$PRECORD" query "$U1" --host "$H1" --top 3 | head -1 | grep -Eq '^ *[0-9]+\.[0-9]{2}%  hot_a  workload$'

	# each shard holds its host's rows
	[ "$(sql "$U1" "SELECT count() FROM precord_samples_local")" -gt 0 ]
	[ "$(sql "$U2" "SELECT count() FROM precord_samples_local")" -gt 0 ]
	[ "$(sql "$U1" "SELECT uniqExact(host) FROM precord_samples_local")" -eq 1 ]
	[ "$(sql "$U2" "SELECT uniqExact(host) FROM precord_samples_local")" -eq 1 ]
}

@test "fleet: --push with the store down for the first seconds: every kept file's samples in the store, once" {
	# the store is down when the recording starts and comes back after 3 s
	"$CLUSTER" stop "$T/ch"
	( sleep 3; "$CLUSTER" restart "$T/ch" > /dev/null ) &
	BG=$!
	run "$PRECORD" -g -F 199 -o r.data --switch-output=2s --switch-max-files=3 \
		--push "$U1" --host pushed-host -- "$WL" hot3 9
	wait "$BG"
	BG=
	echo "$output"
	[ "$status" -eq 0 ]
	rec=$output
	# nothing left pending or refused (files removed by --switch-max-files
	# before the store came back would be counted as such, and are allowed)
	! grep -Eq 'NOT delivered: [1-9]' <<< "$rec" || false
	! grep -Eq ' [1-9][0-9]* refused' <<< "$rec" || false
	kept=(r.data.*)
	[ "${#kept[@]}" -ge 2 ] && [ "${#kept[@]}" -le 3 ]
	total=0
	for f in "${kept[@]}"; do
		n=$(samples "$f")
		total=$((total + n))
		# one committed row per kept file, with its samples; its rows once
		run sql "$U1" "SELECT count(), any(samples) FROM precord_files WHERE host = 'pushed-host' AND name = '$f'"
		echo "$f: $n samples; files table: $output"
		[ "$output" = "1	$n" ]
	done
	# nothing counted twice: the store's committed samples of the host are
	# the kept files' plus those removed by --switch-max-files after they
	# were pushed (each once, as the files table says)
	stored=$("$PRECORD" query "$U1" --host pushed-host --totals | awk '{ print $2 }')
	infiles=$(sql "$U1" "SELECT sum(samples) FROM precord_files WHERE host = 'pushed-host'")
	dups=$(sql "$U1" "SELECT count() - uniqExact(name) FROM precord_files WHERE host = 'pushed-host'")
	echo "kept $total, stored $stored, files table $infiles, duplicate file rows $dups"
	[ "$stored" -eq "$infiles" ]
	[ "$stored" -ge "$total" ]
	[ "$dups" -eq 0 ]
}

@test "fleet: --flamegraph is a self-contained SVG a headless browser renders; --folded is perf script collapsed" {
	need "xmllint" command -v xmllint
	need "chromium" command -v chromium
	"$PRECORD" -q -g -F 999 -o a.data -- "$WL" hot3 2
	"$PRECORD" push "$U1" --host fg-host a.data

	"$PRECORD" query "$U2" --host fg-host --flamegraph flame.svg
	xmllint --noout flame.svg
	for s in main hot3 hot_a hot_b hot_c; do
		grep -q ">$s (" flame.svg
	done
	grep -q '<script' flame.svg
	# nothing loaded from anywhere: no href, src, url() or import, and no
	# URL but the SVG namespace's name
	! grep -Eiq '(xlink:)?href=|src=|url\(|@import' flame.svg || false
	[ -z "$(grep -Eo 'https?://[^" ]*' flame.svg | grep -v '^http://www.w3.org/2000/svg$')" ]
	mkdir -p "$OUT_DIR"
	rm -f "$OUT_DIR/flamegraph.png"
	browser --screenshot="$OUT_DIR/flamegraph.png" "file://$T/flame.svg"
	cp flame.svg "$OUT_DIR/flamegraph.svg"
	# the script runs in the browser: zoomed on hot_a (from the link), it
	# takes the whole width and hot_b is hidden; a search shows its share
	browser --dump-dom "file://$T/flame.svg#zoom=hot_a" > zoomed.html
	grep -Eq '<title>hot_a \([^<]*</title><rect x="10" y="[0-9]+" width="1180"' zoomed.html
	grep -Eq '<g class="f"[^>]*display: none;[^>]*><title>hot_b ' zoomed.html
	browser --dump-dom "file://$T/flame.svg#search=hot_" > searched.html
	m=$(grep -Eo 'Matched: [0-9.]+%' searched.html | grep -Eo '[0-9.]+')
	echo "search hot_: $m%"
	within "$m" 100 2
	# a PNG, and not a blank page: the frames' colours are there
	read -r w h colours _ <<< "$("$ROOT/tests/tools/png-pixels" "$OUT_DIR/flamegraph.png")"
	echo "screenshot ${w}x$h, $colours colours"
	[ "$colours" -gt 20 ]

	# --folded against perf script of the same file, collapsed here
	"$PRECORD" query "$U1" --host fg-host --folded | sort > store.folded
	perf script -i a.data -F ip,sym 2>/dev/null | awk '
		/^$/ { if (n) { s = f[n]; for (i = n - 1; i >= 1; i--) s = s ";" f[i]; c[s]++ } n = 0; next }
		{ n++; f[n] = $2 }
		END { if (n) { s = f[n]; for (i = n - 1; i >= 1; i--) s = s ";" f[i]; c[s]++ } for (s in c) print s, c[s] }' |
		sort > perf.folded
	total=$(awk '{ t += $NF } END { print t }' perf.folded)
	[ "$(awk '{ t += $NF } END { print t }' store.folded)" -eq "$total" ]
	[ "$total" -eq "$(samples a.data)" ]
	# every stack with 1% of the samples or more: the same count in both
	awk -v t="$total" '$NF * 100 >= t' perf.folded > big
	[ "$(wc -l < big)" -ge 3 ]
	while read -r line; do
		grep -qxF "$line" store.folded || { echo "missing in the store: $line"; false; }
	done < big
}

@test "fleet: a store that stays down: push fails in one line; --push counts what it dropped and what waits on disk" {
	"$PRECORD" -q -g -F 199 -o a.data -- "$WL" hot3 0.5
	"$CLUSTER" stop "$T/ch"
	run "$PRECORD" push "$U1" a.data
	echo "$output"
	[ "$status" -eq 1 ]
	[[ "$output" == *"cannot reach ClickHouse at $U1"* ]]
	[ "$(grep -c . <<< "$output")" -eq 1 ]

	run "$PRECORD" -q -g -F 99 -o d.data --switch-output=1s --switch-max-files=2 \
		--push "$U1" -- "$WL" hot3 4
	echo "$output"
	[ "$status" -eq 0 ]
	kept=(d.data.*)
	[ "${#kept[@]}" -eq 2 ]
	made=$(grep -c '^d\.data\.' <<< "$output")
	[ "$made" -ge 4 ]
	grep -q "NOT delivered: 2 still pending (kept on disk, first ${kept[0]})" <<< "$output"
	grep -q ", $((made - 2)) removed by --switch-max-files before they were pushed" <<< "$output"
}

# Issue 18, finding 12: names are what the processes and the store's
# writers made them.  A stack of hostile names, written straight into the
# store and committed as push commits (what a process naming its code, or
# anyone who can write to the store, can do).
@test "fleet: hostile names (invalid UTF-8, controls, newline, ';', XML specials): --flamegraph is valid XML, --folded one line per stack, --top and --totals without control bytes" {
	need "xmllint" command -v xmllint
	# under its key (the SHA-256 of its content), as push stores it
	sql "$U1" "INSERT INTO precord_stacks2_local (seen, stack_hash, symbols, dsos, build_ids)
SELECT now(), $KEY_SQL, symbols, dsos, build_ids FROM (SELECT $(cat <<'SQL'
  [concat('esc', unhex('1B5B33316D07')), concat('nl', unhex('0A'), 'forged;x 999'),
   '<&"\'>', concat('bad', unhex('FFFE'), 'over', unhex('C0AF')), 'main'] AS symbols,
  [concat('/lib/', unhex('1B5D303B07'), 'x.so'), 'w', 'w', 'w', 'w'] AS dsos, ['', '', '', '', ''] AS build_ids
SQL
))"
	K=$(sql "$U1" "SELECT stack_hash FROM precord_stacks2_local WHERE symbols[5] = 'main'")
	[ -n "$K" ]
	sql "$U1" "INSERT INTO precord_samples_local (window, host, cgroup, comm, pid, leaf_build_id, stack_hash, count, weight, file_id, push_id) SELECT now(), host, '', 'w', 1, '', $K, 7, 7000, 99, 5 FROM (SELECT arrayJoin(['hostile', concat('evil', unhex('1B5B324A07'))]) AS host)"
	sql "$U1" "INSERT INTO precord_files_local (host, file_id, push_id, name, samples, weight, first, last, pushed_ns) SELECT host, 99, 5, 'x', 7, 7000, now(), now(), 1 FROM (SELECT arrayJoin(['hostile', concat('evil', unhex('1B5B324A07'))]) AS host)"

	"$PRECORD" query "$U2" --host hostile --flamegraph h.svg
	xmllint --noout h.svg
	grep -qF '<title>bad\xff\xfeover\xc0\xaf (7 samples' h.svg
	grep -qF '<title>&lt;&amp;&quot;&apos;&gt; (7 samples' h.svg
	grep -qF '<title>nl\x0aforged;x 999 (7 samples' h.svg

	"$PRECORD" query "$U1" --host hostile --folded > f
	cat -A f
	[ "$(wc -l < f)" -eq 1 ]
	[ "$(cat f)" = 'main;bad\xff\xfeover\xc0\xaf;<&"'"'"'>;nl\x0aforged\x3bx 999;esc\x1b[31m\x07 7' ]

	# nothing a terminal obeys, and valid UTF-8
	"$PRECORD" query "$U1" --top 5 > t
	"$PRECORD" query "$U1" --totals >> t
	cat -A t
	! LC_ALL=C grep -q $'[\x01-\x08\x0b-\x1f\x7f]' t
	iconv -f UTF-8 -t UTF-8 t > /dev/null
	grep -qF 'esc\x1b[31m\x07  \x1b]0;\x07x.so' t
	grep -Eq '^evil\\x1b\[2J\\x07 7 ' t
}

# Issue 18, finding 7: a stack is stored once per key for the whole
# cluster, and the old key (an unkeyed, invertible 64-bit hash of the
# names) let a process on another host solve 8 bytes of its function name
# so that its stack took the place of the victim's hottest one.  Here the
# attacker does what any writer with the store's credentials can: it
# writes its own frames under the victim's key straight into the stacks
# tables (the old code's and the new), after the victim, and has the
# servers merge (ReplacingMergeTree folded the rows of one key, the last
# one kept).  The victim's report must not change at all.
@test "fleet: frames written by another host under the victim's stack key never show in the victim's report, merges included" {
	"$PRECORD" -q -g -F 999 -o v.data -- "$WL" hot3 2
	"$PRECORD" -q -g -F 999 -o x.data -- "$WL" threads 1 1
	run "$PRECORD" push "$U1" --host victim v.data
	echo "$output"
	[ "$status" -eq 0 ]
	run "$PRECORD" push "$U2" --host attacker x.data
	echo "$output"
	[ "$status" -eq 0 ]
	"$PRECORD" query "$U1" --host victim --folded | sort > before
	"$PRECORD" query "$U1" --host victim --top 50 > top-before
	cat top-before
	grep -q ' hot_a  workload$' top-before
	run grep -c unverified top-before
	[ "$output" = 0 ]

	# the victim's hottest stack, and the attacker's frames under its key
	# in every stacks table there is (through the Distributed tables: on
	# the key's shard), then every part merged
	K=$(sql "$U2" "SELECT stack_hash FROM precord_samples WHERE host = 'victim' GROUP BY stack_hash ORDER BY sum(weight) DESC LIMIT 1")
	[ -n "$K" ]
	for t in precord_stacks precord_stacks2; do
		sql "$U2" "EXISTS TABLE $t" | grep -q 1 || continue
		sql "$U2" "INSERT INTO $t (seen, stack_hash, symbols, dsos, build_ids) VALUES (now(), $K, ['attacker_was_here', 'main'], ['/tmp/evil.so', '/tmp/evil'], ['', ''])"
	done
	for u in "$U1" "$U2"; do
		for t in precord_stacks_local precord_stacks2_local; do
			sql "$u" "EXISTS TABLE $t" | grep -q 1 || continue
			sql "$u" "OPTIMIZE TABLE $t FINAL"
		done
	done

	"$PRECORD" query "$U1" --host victim --top 50 > top-after
	cat top-after
	run grep -c attacker_was_here top-after
	[ "$output" = 0 ]
	"$PRECORD" query "$U2" --host victim --folded | sort > after
	diff before after
	cmp top-before top-after
	"$PRECORD" query "$U1" --host victim --flamegraph v.svg
	run grep -c attacker_was_here v.svg
	[ "$output" = 0 ]
	# the forged row is kept beside the victim's (its own sort key), not
	# merged into it
	[ "$(sql "$U1" "SELECT count() FROM precord_stacks2 WHERE stack_hash = $K")" -eq 2 ]
}

# What rows without a matching stack mean: an older precord's pushes (its
# stacks under the old hash, in precord_stacks) and rows another writer
# made up.  A store made by an older fleet-schema is told to run it again,
# which adds the new table and changes nothing else.
@test "fleet: an older store is migrated by fleet-schema; samples whose stack does not match its key show as [unverified], counted and said" {
	"$PRECORD" -q -g -F 199 -o a.data -- "$WL" hot3 0.5
	for u in "$U1" "$U2"; do
		sql "$u" "DROP TABLE precord_stacks2"
		sql "$u" "DROP TABLE precord_stacks2_local"
	done
	run "$PRECORD" push "$U1" --host h a.data
	echo "$output"
	[ "$status" -eq 1 ]
	[[ "$output" == *"tables of an older precord: run \`precord fleet-schema"* ]]
	for u in "$U1" "$U2" "$U1"; do
		"$PRECORD" fleet-schema "$u" --cluster precord
	done
	# samples, stacks, stacks2, files, pushes, the two rollups (local and
	# Distributed) and the rollups' two views
	[ "$(sql "$U1" "SELECT count() FROM system.tables WHERE name LIKE 'precord%'")" -eq 16 ]
	run "$PRECORD" push "$U1" --host h a.data
	echo "$output"
	[ "$status" -eq 0 ]

	# an old push: samples under the old hash, its stack in the old table;
	# and one under a key whose only row has other frames
	sql "$U1" "INSERT INTO precord_stacks_local (seen, stack_hash, symbols, dsos, build_ids) VALUES (now(), 4242, ['old_frame'], ['w'], [''])"
	sql "$U1" "INSERT INTO precord_stacks2_local (seen, stack_hash, symbols, dsos, build_ids) VALUES (now(), 4343, ['made_up'], ['w'], [''])"
	sql "$U1" "INSERT INTO precord_samples_local (window, host, cgroup, comm, pid, leaf_build_id, stack_hash, count, weight, file_id, push_id) VALUES (now(), 'legacy', '', 'w', 1, '', 4242, 3, 3000, 99, 5), (now(), 'legacy', '', 'w', 1, '', 4343, 1, 1000, 99, 5)"
	sql "$U1" "INSERT INTO precord_files_local (host, file_id, push_id, name, samples, weight, first, last, pushed_ns) VALUES ('legacy', 99, 5, 'x', 4, 4000, now(), now(), 1)"
	run "$PRECORD" query "$U2" --host legacy --top 5
	echo "$output"
	[ "$status" -eq 0 ]
	[[ "$output" == *"2 stacks (4 samples) have no stored frames that match their key"* ]]
	grep -Eq '^100\.00%  \[unverified\]  $' <<< "$output"
	[[ "$output" != *old_frame* && "$output" != *made_up* ]]
	# the pushed host is whole
	run "$PRECORD" query "$U2" --host h --top 5
	[ "$status" -eq 0 ]
	[[ "$output" != *unverified* ]]
}

# Issue 18, finding 9: a password nobody else can read (the environment),
# and none in ps, in any message or in the recorded files.  The servers
# have a user "precord" with the password "s3cret-pw".
@test "fleet: the store's password from PRECORD_CH_USER/PASSWORD for push, query and --push; never in ps, messages or files" {
	"$PRECORD" -q -g -F 199 -o a.data -- "$WL" hot3 0.5
	# the environment's credentials are the ones sent: a wrong password is
	# refused (the default user without a password would be let in)
	PRECORD_CH_USER=precord PRECORD_CH_PASSWORD=wrong run "$PRECORD" push "$U1" --host cred a.data
	echo "$output"
	[ "$status" -eq 1 ]
	[[ "$output" == *"Code: 193"* ]]
	PRECORD_CH_USER=precord PRECORD_CH_PASSWORD=s3cret-pw run "$PRECORD" push "$U1" --host cred a.data
	echo "$output"
	[ "$status" -eq 0 ]
	PRECORD_CH_USER=precord PRECORD_CH_PASSWORD=s3cret-pw run "$PRECORD" query "$U2" --host cred --totals
	echo "$output"
	[ "$status" -eq 0 ]
	[[ "$output" == "cred $(samples a.data) "* ]]

	# the URL's own user:password@ works, and no message shows it
	hp=${U1#http://}
	run "$PRECORD" query "http://precord:s3cret-pw@$hp" --host cred --totals
	[ "$status" -eq 0 ]
	[[ "$output" == "cred "* ]]
	run "$PRECORD" query "http://precord:wrong-pw@$hp" --totals
	echo "$output"
	[ "$status" -eq 1 ]
	[[ "$output" == *"http://precord:***@$hp"* ]]
	[[ "$output" != *wrong-pw* ]]
	run "$PRECORD" push "http://precord:s3cret-pw@127.0.0.1:1/" a.data
	echo "$output"
	[ "$status" -eq 1 ]
	[[ "$output" == *"cannot reach ClickHouse at http://precord:***@127.0.0.1:1/"* ]]
	[[ "$output" != *s3cret-pw* ]]

	# --push with the password in the environment: not on the command line
	PRECORD_CH_USER=precord PRECORD_CH_PASSWORD=s3cret-pw \
		"$PRECORD" -g -F 99 -o e.data --switch-output=1s --push "$U1" --host cred-env \
		-- "$WL" hot3 2.5 > e.out 2>&1 &
	pid=$!
	sleep 1.5
	ps -o args= -p "$pid" > e.ps
	wait "$pid"
	cat e.out e.ps
	! grep -q s3cret-pw e.ps || false
	grep -q -- '--push: [1-9][0-9]* files pushed' e.out
	[ "$(sql "$U1" "SELECT count() FROM precord_files WHERE host = 'cred-env'")" -ge 1 ]

	# --push with the password in the URL: ps (once started), the summary
	# line and the files' CMDLINE show none
	"$PRECORD" -g -F 99 -o u.data --switch-output=1s --push "http://precord:s3cret-pw@$hp" \
		--host cred-url -- "$WL" hot3 2.5 > u.out 2>&1 &
	pid=$!
	sleep 1.5
	ps -o args= -p "$pid" > u.ps
	wait "$pid"
	cat u.out u.ps
	! grep -q s3cret-pw u.ps || false
	grep -qF "precord:*********@$hp" u.ps
	! grep -q s3cret-pw u.out || false
	grep -qF -- "files pushed to http://precord:***@$hp" u.out
	for f in u.data.*; do
		perf report -i "$f" --header-only 2>/dev/null | grep -F 'cmdline' | tee -a u.cmdline
	done
	grep -q -- '--push' u.cmdline
	! grep -q s3cret-pw u.cmdline || false
	[ "$(sql "$U1" "SELECT count() FROM precord_files WHERE host = 'cred-url'")" -ge 1 ]
}

# Issue 18, finding 14: --flamegraph OUT is created new beside OUT and
# renamed over it: a symlink planted at OUT (here to a root 0600 file) is
# replaced, never followed; the umask holds.
@test "fleet: --flamegraph replaces a planted symlink, never writes through it; honours the umask" {
	"$PRECORD" -q -g -F 999 -o a.data -- "$WL" hot3 0.5
	"$PRECORD" push "$U1" --host sym-host a.data
	printf 'root secret\n' > victim && chmod 600 victim
	ln -s "$T/victim" flame.svg
	(umask 077 && "$PRECORD" query "$U2" --host sym-host --flamegraph flame.svg)
	[ "$(cat victim)" = "root secret" ]
	[ "$(stat -c %a victim)" = 600 ]
	[ ! -L flame.svg ]
	grep -q '>hot3 (' flame.svg
	[ "$(stat -c %a flame.svg)" = 600 ]
	(umask 022 && "$PRECORD" query "$U2" --host sym-host --flamegraph flame.svg)
	[ "$(stat -c %a flame.svg)" = 644 ]
	! ls | grep -q '\.tmp'
}
