#!/usr/bin/env bats
# precord export --pprof: go tool pprof must show the shares perf report
# shows for the same file (flat = perf's self, cum = perf's children).

load helpers

setup() {
	common_setup
	require_recording
	need "go (go tool pprof)" command -v go
	export GOCACHE=$T/gocache GOPATH=$T/gopath PPROF_TMPDIR=$T/pprof GOFLAGS=-mod=mod
}
teardown() { common_teardown; }

# perf_shares FILE: "SYMBOL SELF CHILDREN" for every symbol perf reports.
perf_shares() {
	perf report -i "$1" --stdio --children --sort sym -q -g none 2>/dev/null |
		awk '$3 ~ /^\[.\]$/ { gsub(/%/, "", $1); gsub(/%/, "", $2); print $4, $2, $1 }'
}

# pprof_shares PROFILE: "FUNCTION FLAT CUM" for every function.
pprof_shares() {
	go tool pprof -top -nodecount=100000 -nodefraction=0 -edgefraction=0 "$1" 2>/dev/null |
		awk '$2 ~ /%$/ && $5 ~ /%$/ { gsub(/%/, "", $2); gsub(/%/, "", $5); print $6, $2, $5 }'
}

# check_shares DATA PROFILE TRUTH: perf's ten largest symbols (by children, of
# 0.5% and more: a 1-sample frame of a broken frame-pointer chain is named
# 0x0000001e00000000 by perf and under no such name by pprof) and the workload's
# functions agree within 2 points, self and children; and the hot
# functions' split is the workload's measured one (its PRECORD_WL_TRUTH).
check_shares() {
	perf_shares "$1" > perf.txt
	pprof_shares "$2" > pprof.txt
	[ -s perf.txt ] && [ -s pprof.txt ]
	{ sort -k3 -rn perf.txt | awk '$3 >= 0.5' | head -10 | awk '{ print $1 }'; printf '%s\n' hot_a hot_b hot_c hot3 main; } |
		sort -u > syms.txt
	local bad=0 sym p q
	while read -r sym; do
		p=$(awk -v s="$sym" '$1 == s { print $2, $3; exit }' perf.txt)
		q=$(awk -v s="$sym" '$1 == s { print $2, $3; exit }' pprof.txt)
		echo "$sym perf(self children)=${p:-none} pprof(flat cum)=${q:-none}" >&2
		[ -n "$p" ] && [ -n "$q" ] || { bad=1; continue; }
		within "${p% *}" "${q% *}" 2 || bad=1
		within "${p#* }" "${q#* }" 2 || bad=1
	done < syms.txt
	[ "$bad" -eq 0 ]
	# the workload's split is there (a test that cannot pass empty): each
	# hot function's flat share among the three is the one the workload
	# measured in this run (TRUTH), within the noise of its samples
	local n tol x t
	n=$(perf report --stats -i "$1" 2>/dev/null | awk '/ SAMPLE events:/ { print $3; exit }')
	tol=$(noise_tol "${n:-0}")
	for sym in hot_a hot_b hot_c; do
		x=$(awk -v f="$sym" '$1 ~ /^hot_[abc]$/ { s += $2 } $1 == f { v = $2 }
			END { printf "%.2f\n", (s > 0 ? 100 * v / s : -1) }' pprof.txt)
		t=$(truth_share "$3" "$sym" hot_a hot_b hot_c)
		echo "$sym: pprof flat $x% of hot_a..c, measured by the workload $t% (tol $tol, $n samples)" >&2
		within "$x" "$t" "$tol" || bad=1
	done
	[ "$bad" -eq 0 ]
}

@test "export --pprof of a precord recording: pprof -top shares are perf report's" {
	PRECORD_WL_TRUTH=$T/truth "$PRECORD" -q -F 999 -g -o x.data -- "$WL" hot3 2
	run "$PRECORD" export --pprof -i x.data -o x.pb.gz
	echo "$output" >&2
	[ "$status" -eq 0 ]
	[ -z "$output" ]
	gzip -t x.pb.gz
	check_shares x.data x.pb.gz "$T/truth"
	# mappings carry build-ids and the workload's path
	run go tool pprof -raw x.pb.gz
	[[ "$output" == *"$(basename "$WL")"* ]]
	id=$(perf buildid-list -i x.data 2>/dev/null | awk -v w="$WL" '$2 == w { print $1 }')
	[ -n "$id" ]
	[[ "$output" == *"$id"* ]]
	go tool pprof -top -cum x.pb.gz 2>/dev/null | head -12 >&2
}

@test "export --pprof of a perf record file" {
	PRECORD_WL_TRUTH=$T/truth perf record -q -F 999 -g -o p.data -- "$WL" hot3 2 2>/dev/null
	run "$PRECORD" export --pprof -i p.data -o p.pb.gz
	echo "$output" >&2
	[ "$status" -eq 0 ]
	check_shares p.data p.pb.gz "$T/truth"
}

@test "export --pprof of a hostile file: one error line, non-zero exit, no output" {
	"$PRECORD" -q -F 999 -g -o x.data -- "$WL" hot3 0.3
	head -c 60 x.data > short.data
	for f in short.data /dev/null x.data.missing; do
		run "$PRECORD" export --pprof -i "$f" -o out.pb.gz
		echo "$f: $status: $output" >&2
		[ "$status" -ne 0 ]
		[ "${#lines[@]}" -eq 1 ]
		[[ "${lines[0]}" == "precord: "* ]]
		[ ! -e out.pb.gz ]
	done
	# a data section whose sizes run past the end: what is good is kept
	size=$(stat -c %s x.data)
	head -c $((size * 2 / 3)) x.data > cut.data
	run "$PRECORD" export --pprof -i cut.data -o cut.pb.gz
	echo "$output" >&2
	[ "$status" -eq 0 ]
	gzip -t cut.pb.gz
	run "$PRECORD" export -i x.data
	[ "$status" -eq 2 ]
	[ "${#lines[@]}" -eq 1 ]
	ls -A "$T" | grep -v -e '^home$' -e '\.data' -e '\.pb\.gz$' -e '^go' -e '^pprof$' && false
	true
}

# Issue 18, finding 14: the output is created new (a planted symlink at
# OUT is replaced, its target untouched) with the umask's mode, not 0644.
@test "export --pprof: the output honours the umask and replaces a planted symlink" {
	"$PRECORD" -q -F 999 -g -o x.data -- "$WL" hot3 0.3
	(umask 077 && "$PRECORD" export --pprof -i x.data -o u.pb.gz)
	[ "$(stat -c %a u.pb.gz)" = 600 ]
	(umask 022 && "$PRECORD" export --pprof -i x.data -o v.pb.gz)
	[ "$(stat -c %a v.pb.gz)" = 644 ]
	printf 'secret\n' > victim && chmod 600 victim
	ln -s victim planted.pb.gz
	"$PRECORD" export --pprof -i x.data -o planted.pb.gz
	[ "$(cat victim)" = secret ]
	[ "$(stat -c %a victim)" = 600 ]
	[ ! -L planted.pb.gz ]
	gzip -t planted.pb.gz
	! ls | grep -q '\.tmp'
}
