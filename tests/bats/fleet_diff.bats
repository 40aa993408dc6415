#!/usr/bin/env bats
# End-to-end: `precord query --diff` (docs/fleet.md, "Comparing"): two
# recordings of one program whose hot_c's share doubles (workload mix
# 5:3:2, then 4:2:4), pushed as two hosts, two time ranges of one host and
# two builds (build-ids) of the program; the expectations are perf
# report's shares of each file.  The store: two clickhouse-server shards
# (tests/tools/clickhouse-cluster), stopped in teardown.

load helpers

OUT_DIR=${FLEET_TEST_OUT:-$ROOT/build/test-output/fleet}

setup() { fleet_setup; }
teardown() { fleet_teardown; }

# record FILE A:B:C [PROGRAM]: 2 s of CPU of hot_a/hot_b/hot_c in that ratio
record() {
	"$PRECORD" -q -g -F 999 -o "$1" -- "${3:-$WL}" mix "$2" 2
}

# diff_line OUTPUT SYMBOL: the --top --diff line of SYMBOL
diff_line() {
	awk -v s="$2" '$4 == s { print; exit }' <<< "$1"
}

# check_top OUTPUT A.data B.data: the top line is hot_c, with A's and B's
# shares within 2 points of perf report's of each file and its change
# AFTER - BEFORE; hot_a and hot_b shrank, each within 2 points too
check_top() {
	local out=$1 fa=$2 fb=$3 s pa pb line
	echo "$out"
	head -1 <<< "$out" | grep -Eq '^ *[0-9]+\.[0-9]{2}%  +[0-9]+\.[0-9]{2}%  +\+[0-9]+\.[0-9]{2}  hot_c  workload$'
	for s in hot_c hot_a hot_b; do
		line=$(diff_line "$out" "$s")
		pa=$(share "$fa" "$s"); pb=$(share "$fb" "$s")
		echo "$s: perf report $pa -> $pb; store: $line"
		[ -n "$line" ]
		read -r before after change _ <<< "$line"
		within "${before%\%}" "$pa" 2
		within "${after%\%}" "$pb" 2
		within "$change" "$(awk -v a="${after%\%}" -v b="${before%\%}" 'BEGIN { print a - b }')" 0.011
	done
	# the ratio the workload made: hot_c's share doubled (perf report's
	# own, with room for sampling noise), and the store says the same
	pa=$(share "$fa" hot_c); pb=$(share "$fb" hot_c)
	awk -v a="$pa" -v b="$pb" 'BEGIN { exit !(b / a > 1.6 && b / a < 2.5) }'
	line=$(diff_line "$out" hot_c)
	read -r before after _ <<< "$line"
	awk -v a="${before%\%}" -v b="${after%\%}" 'BEGIN { exit !(b / a > 1.6 && b / a < 2.5) }'
	[[ "$(diff_line "$out" hot_a)" =~ \ -[0-9]+\.[0-9]{2}\ \ hot_a ]]
}

# rgb_of SVG SYMBOL: the fill of SYMBOL's frame, "R G B"
rgb_of() {
	grep -Eo "<title>$2 \\([^<]*</title><rect [^>]*fill=\"rgb\\([0-9]+,[0-9]+,[0-9]+\\)\"" "$1" |
		head -1 | sed -E 's/.*rgb\(([0-9]+),([0-9]+),([0-9]+)\).*/\1 \2 \3/'
}

@test "fleet --diff: two hosts, hot_c's share doubled: --top names it with both shares, --folded is difffolded's form, the differential SVG renders red for it and blue for what shrank" {
	need "xmllint" command -v xmllint
	need "chromium" command -v chromium
	record a.data 5:3:2
	record b.data 4:2:4
	run "$PRECORD" push "$U1" --host before a.data
	[ "$status" -eq 0 ]
	run "$PRECORD" push "$U2" --host after b.data
	[ "$status" -eq 0 ]

	# --top: BEFORE%  AFTER%  CHANGE  SYMBOL  DSO, largest change first
	run "$PRECORD" query "$U1" --host after --diff host=before --top 10
	[ "$status" -eq 0 ]
	check_top "$output" a.data b.data
	[ "${#lines[@]}" -le 10 ]
	# --children: main is on (nearly) every stack of both: unchanged
	run "$PRECORD" query "$U1" --host after --diff host=before --top 50 --children
	line=$(diff_line "$output" main)
	echo "children: $line"
	read -r before after change _ <<< "$line"
	within "${before%\%}" 100 2 && within "$change" 0 1

	# --folded: every stack of either side, COUNT_A COUNT_B, the columns
	# summing to each side's --folded; the same lines as difffolded.pl's
	# merge of the two --folded (awk here: summed per stack, 0 if absent)
	"$PRECORD" query "$U2" --host after --diff host=before --folded > diff.folded
	"$PRECORD" query "$U1" --host before --folded > a.folded
	"$PRECORD" query "$U1" --host after --folded > b.folded
	[ "$(wc -l < diff.folded)" -ge 3 ]
	! grep -Evq '^[^ ].* [0-9]+ [0-9]+$' diff.folded || false
	ta=$(awk '{ t += $NF } END { print t }' a.folded)
	tb=$(awk '{ t += $NF } END { print t }' b.folded)
	echo "A: $ta samples, B: $tb"
	[ "$ta" -eq "$(samples a.data)" ] && [ "$tb" -eq "$(samples b.data)" ]
	[ "$(awk '{ t += $(NF - 1) } END { print t }' diff.folded)" -eq "$ta" ]
	[ "$(awk '{ t += $NF } END { print t }' diff.folded)" -eq "$tb" ]
	awk 'FNR == 1 { side++ }
	     { n = $NF; s = $0; sub(/ [0-9]+$/, "", s); c[s, side] += n; k[s] = 1 }
	     END { for (s in k) print s, c[s, 1] + 0, c[s, 2] + 0 }' a.folded b.folded | sort > oracle.folded
	sort diff.folded | diff - oracle.folded
	grep -Eq ';hot_c [0-9]+ [0-9]+$' diff.folded

	# the differential flame graph: well-formed, self-contained, titled with
	# both selections; hot_c's frame red, hot_a's blue, its title both
	# shares (each within 2 points of perf report's) and the change
	"$PRECORD" query "$U2" --host after --diff host=before --flamegraph diff.svg
	xmllint --noout diff.svg
	grep -q '>precord diff: B = host after</text>' diff.svg
	grep -q '>against the baseline A = host before</text>' diff.svg
	! grep -Eiq '(xlink:)?href=|src=|url\(|@import' diff.svg || false
	t=$(grep -Eo '<title>hot_c \(A: [0-9.]+%, B: [0-9.]+%, \+[0-9.]+ pts, [0-9]+ samples\)</title>' diff.svg)
	echo "$t"
	a=$(sed -E 's/.*A: ([0-9.]+)%.*/\1/' <<< "$t"); b=$(sed -E 's/.*B: ([0-9.]+)%.*/\1/' <<< "$t")
	within "$a" "$(share a.data hot_c)" 2
	within "$b" "$(share b.data hot_c)" 2
	read -r r g bl <<< "$(rgb_of diff.svg hot_c)"
	echo "hot_c rgb($r,$g,$bl)"
	[ "$r" -ge 200 ] && [ $((r - g)) -ge 100 ] && [ $((r - bl)) -ge 100 ]
	read -r r g bl <<< "$(rgb_of diff.svg hot_a)"
	echo "hot_a rgb($r,$g,$bl)"
	[ "$bl" -ge 200 ] && [ $((bl - r)) -ge 40 ] && [ $((bl - g)) -ge 40 ]
	read -r r g bl <<< "$(rgb_of diff.svg main)"
	echo "main rgb($r,$g,$bl)"
	[ $((r - bl)) -le 12 ] && [ $((bl - r)) -le 12 ]

	# in the browser: the script runs (a search shows B's share of hot_c)
	# and the screenshot has the red and the blue frames
	mkdir -p "$OUT_DIR"
	rm -f "$OUT_DIR/flamegraph-diff.png"
	browser --screenshot="$OUT_DIR/flamegraph-diff.png" "file://$T/diff.svg"
	cp diff.svg "$OUT_DIR/flamegraph-diff.svg"
	browser --dump-dom "file://$T/diff.svg#search=hot_c" > searched.html
	m=$(grep -Eo 'Matched: [0-9.]+%' searched.html | grep -Eo '[0-9.]+')
	echo "search hot_c: $m%"
	within "$m" "$b" 0.5
	# hot_c's frame is 40% of 1180 px by 15, hot_a's and hot_b's 60%
	read -r w h colours red blue <<< "$("$ROOT/tests/tools/png-pixels" "$OUT_DIR/flamegraph-diff.png")"
	echo "screenshot ${w}x$h: $colours colours, $red red pixels, $blue blue"
	[ "$red" -gt 2000 ] && [ "$blue" -gt 2000 ]
}

@test "fleet --diff: two time ranges of one host, two builds of one program; bad overrides refused in one line" {
	# a.data, then b.data in a later 10 s window of the same host
	record a.data 5:3:2
	run "$PRECORD" push "$U1" --host t-host a.data
	[ "$status" -eq 0 ]
	read -r _ _ first_a last_a <<< "$("$PRECORD" query "$U1" --host t-host --totals)"
	cut=$(date -u -d "${last_a%Z} UTC + 10 seconds" +%Y-%m-%dT%H:%M:%SZ)
	while [ "$(date -u +%s)" -lt "$(date -u -d "$cut" +%s)" ]; do sleep 0.5; done
	record b.data 4:2:4
	run "$PRECORD" push "$U2" --host t-host b.data
	[ "$status" -eq 0 ]
	echo "A: $first_a .. $last_a, B from $cut"

	# the later range against the earlier
	run "$PRECORD" query "$U1" --host t-host --since "$cut" --diff "since=$first_a,until=$cut" --top 5
	[ "$status" -eq 0 ]
	check_top "$output" a.data b.data
	# the same with a duration: B is the last 10 minutes from the cut on
	run "$PRECORD" query "$U2" --host t-host --since "$cut" --diff "since=1h,until=$cut" --folded
	[ "$status" -eq 0 ]
	[ "$(awk '{ t += $(NF - 1) } END { print t }' <<< "$output")" -eq "$(samples a.data)" ]
	[ "$(awk '{ t += $NF } END { print t }' <<< "$output")" -eq "$(samples b.data)" ]
	# the reverse diff: hot_c shrank by what it grew
	run "$PRECORD" query "$U1" --host t-host --since "$first_a" --until "$cut" --diff "since=$cut,until=" --top 3
	echo "$output"
	grep -Eq '^ *[0-9.]+%  +[0-9.]+%  +-[0-9.]+  hot_c  workload$' <<< "$(head -1 <<< "$output")"

	# two builds of the program (the same code, another build-id) on one
	# host: --build-id selects each build's stacks
	mkdir v2
	cp "$WL" v2/workload
	old=$(readelf -n "$WL" | awk '/Build ID/ { print $3 }')
	python3 - v2/workload "$old" <<'EOF'
import sys
p, old = sys.argv[1], bytes.fromhex(sys.argv[2])
data = open(p, "rb").read()
assert data.count(old) == 1, "the build-id once in the file"
new = bytes([old[0] ^ 0xff]) + old[1:]
open(p, "wb").write(data.replace(old, new))
EOF
	new=$(readelf -n v2/workload | awk '/Build ID/ { print $3 }')
	[ -n "$new" ] && [ "$new" != "$old" ]
	record c.data 5:3:2
	record d.data 4:2:4 "$T/v2/workload"
	"$PRECORD" push "$U1" --host b-host c.data d.data
	run "$PRECORD" query "$U1" --host b-host --build-id "$new" --diff "build-id=$old" --top 5
	[ "$status" -eq 0 ]
	echo "$output"
	head -1 <<< "$output" | grep -Eq '^ *[0-9.]+%  +[0-9.]+%  +\+[0-9.]+  hot_c  workload$'
	# each column is that build's own --top share, to the hundredth
	for s in hot_a hot_b hot_c; do
		line=$(diff_line "$output" "$s")
		read -r before after _ <<< "$line"
		p=$("$PRECORD" query "$U1" --host b-host --build-id "$old" --top 10 | awk -v s="$s" '$2 == s { print $1 }')
		q=$("$PRECORD" query "$U1" --host b-host --build-id "$new" --top 10 | awk -v s="$s" '$2 == s { print $1 }')
		echo "$s: $before $after; alone $p $q"
		[ "$before" = "$p" ] && [ "$after" = "$q" ]
	done

	# mistakes: one line each, status 2
	for spec in "hosts=x" "since=yesterday" "host=a,host=b" "build-id=XYZ" "event=offcpu" "since=1h,until=2h" ""; do
		run "$PRECORD" query "$U1" --host t-host --diff "$spec"
		echo "$spec: $output"
		[ "$status" -eq 2 ]
		[ "${#lines[@]}" -eq 1 ]
		[[ "$output" == *"--diff"* ]]
	done
	run "$PRECORD" query "$U1" --totals --diff host=a
	[ "$status" -eq 2 ]
	# a side that selects nothing is said (a mistyped host)
	run "$PRECORD" query "$U1" --host t-host --diff host=nosuch --top 3
	echo "$output"
	[ "$status" -eq 0 ]
	[[ "$output" == *"baseline A (--diff), host nosuch, has no samples"* ]]
}
