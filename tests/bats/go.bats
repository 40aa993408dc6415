#!/usr/bin/env bats
# Stripped Go binaries (issue 21, acceptance 3; docs/perf-data.md, "Go
# binaries"): tests/workloads/go/hogo.go built with `go build -ldflags='-s
# -w'` (no .symtab, a .gopclntab, a Go build id and no GNU build-id) runs
# main.hoGoAlpha and main.hoGoBeta, identical bodies, for 3 ms and 1 ms of
# CPU time in turn, and prints the CPU time each took (its ground truth).  perf report of
# precord's recording (HOME holding the build-id cache precord filled),
# precord export --pprof (go tool pprof) and precord push + query --top
# must name both with the workload's split, within 10 points.

load helpers

HOGO=$ROOT/build/workloads/hogo
TOL=10

setup() {
	common_setup
	require_recording
	need "go (golang-go)" command -v go
	need "the Go workload built (make all with go installed)" test -x "$HOGO"
	export GOCACHE=$T/gocache GOPATH=$T/gopath PPROF_TMPDIR=$T/pprof GO111MODULE=off \
		GOPROXY=off GOTOOLCHAIN=local GOFLAGS=
}

teardown() {
	fleet_cluster_stop
	common_teardown
}

# pprof_flat PROFILE FUNC: go tool pprof's flat share of FUNC (0: none)
pprof_flat() {
	go tool pprof -top -nodecount=100000 -nodefraction=0 -edgefraction=0 "$1" 2>/dev/null |
		awk -v f="$2" '$2 ~ /%$/ && $6 == f { gsub(/%/, "", $2); print $2; x = 1; exit }
			END { if (!x) print 0 }'
}

# check_split NAME ALPHA BETA: ALPHA's share of ALPHA + BETA (two shares
# of one profile) is the workload's, within TOL points, and the two hold
# most of the samples (the names are there, not addresses)
check_split() {
	local x t
	x=$(awk -v a="$2" -v b="$3" 'BEGIN { printf "%.2f\n", (a + b > 0 ? 100 * a / (a + b) : -1) }')
	t=$(truth_share truth.txt hoGoAlpha hoGoAlpha hoGoBeta)
	echo "$1: main.hoGoAlpha $2%, main.hoGoBeta $3%: alpha $x% of the two; the workload measured $t%" >&2
	awk -v a="$2" -v b="$3" 'BEGIN { exit !(a + b >= 50) }'
	within "$x" "$t" "$TOL"
}

# record_hogo BINARY: precord -g of BINARY for 2 s into p.data, its truth
# line in truth.txt
record_hogo() {
	run "$PRECORD" -g -o p.data -- "$1" 2
	echo "$output" >&2
	[ "$status" -eq 0 ]
	echo "$output" | grep '^truth ' > truth.txt
}

@test "the workload is a stripped Go binary with no GNU build-id" {
	run readelf -S -W "$HOGO"
	[[ $output == *" .gopclntab "* ]]
	[[ $output != *" .symtab "* ]]
	run readelf -n -W "$HOGO"
	[[ $output == *"GO BUILDID"* ]]
	[[ $output != *"NT_GNU_BUILD_ID"* ]]
}

@test "perf report names a stripped Go binary's functions with the workload's shares" {
	# its names are its own (.gopclntab): no debug file is asked for,
	# even with a server set (a closed port here: asking would warn)
	DEBUGINFOD_URLS=http://127.0.0.1:9 record_hogo "$HOGO"
	[[ $output != *debuginfod* ]]
	lint p.data
	check_split "perf report" "$(share p.data main.hoGoAlpha)" "$(share p.data main.hoGoBeta)"
	# the id precord gave it is in BUILD_ID, its symbol file in the cache
	id=$(perf buildid-list -i p.data 2>/dev/null | awk -v f="$HOGO" '$2 == f { print $1 }')
	echo "BUILD_ID: $HOGO $id" >&2
	[[ $id =~ ^[0-9a-f]{40}$ ]]
	[ -f "$HOME/.debug/.build-id/${id:0:2}/${id:2}/elf" ]
	run readelf -n -W "$HOME/.debug/.build-id/${id:0:2}/${id:2}/elf"
	[[ $output == *"Build ID: $id"* ]]
	# the names come from there: without the cache, addresses only
	mv "$HOME/.debug" "$T/debug.away"
	[ "$(share p.data main.hoGoAlpha)" = 0 ]
}

@test "precord export --pprof names them, from the cache and from the binary's .gopclntab" {
	record_hogo "$HOGO"
	run "$PRECORD" export --pprof -i p.data -o a.pb.gz
	[ "$status" -eq 0 ]
	check_split "pprof (cache)" "$(pprof_flat a.pb.gz main.hoGoAlpha)" \
		"$(pprof_flat a.pb.gz main.hoGoBeta)"
	rm -rf "$HOME/.debug"
	run "$PRECORD" export --pprof -i p.data -o b.pb.gz
	[ "$status" -eq 0 ]
	check_split "pprof (.gopclntab)" "$(pprof_flat b.pb.gz main.hoGoAlpha)" \
		"$(pprof_flat b.pb.gz main.hoGoBeta)"
}

@test "precord export --pprof names them in perf record's file of the same execution" {
	same_exec -g -o perf.data -- -g -o p.data -- "$HOGO" 2
	grep '^truth ' precord.log > truth.txt
	run "$PRECORD" export --pprof -i perf.data -o perf.pb.gz
	[ "$status" -eq 0 ]
	check_split "pprof of perf.data" "$(pprof_flat perf.pb.gz main.hoGoAlpha)" \
		"$(pprof_flat perf.pb.gz main.hoGoBeta)"
	check_split "perf report of precord's file" "$(share p.data main.hoGoAlpha)" \
		"$(share p.data main.hoGoBeta)"
}

@test "precord push + query --top name them" {
	fleet_cluster_start 2
	U1=${FLEET_URLS[0]}
	record_hogo "$HOGO"
	rm -rf "$HOME/.debug"		# the pushing host reads the binary itself
	run "$PRECORD" push "$U1" --host gohost p.data
	echo "$output" >&2
	[ "$status" -eq 0 ]
	run "$PRECORD" query "$U1" --host gohost --top 20
	echo "$output" >&2
	[ "$status" -eq 0 ]
	a=$(echo "$output" | awk '$2 == "main.hoGoAlpha" { gsub(/%/, "", $1); print $1; exit }')
	b=$(echo "$output" | awk '$2 == "main.hoGoBeta" { gsub(/%/, "", $1); print $1; exit }')
	check_split "query --top" "${a:-0}" "${b:-0}"
}

@test "a Go binary with a GNU build-id keeps it, its names in the cache under it" {
	gid=0123456789abcdef0123456789abcdef01234567
	cp "$ROOT/tests/workloads/go/hogo.go" .
	go build -ldflags="-s -w -B 0x$gid" -o hogo-b hogo.go
	record_hogo "$T/hogo-b"
	id=$(perf buildid-list -i p.data 2>/dev/null | awk -v f="$T/hogo-b" '$2 == f { print $1 }')
	[ "$id" = "$gid" ]
	check_split "perf report" "$(share p.data main.hoGoAlpha)" "$(share p.data main.hoGoBeta)"
}

@test "a Go binary with a bogus .gopclntab: recorded, one warning, addresses" {
	cp "$HOGO" bogus
	# nfunc (the word after the 8-byte header) past the table's end
	off=$(readelf -S -W bogus | sed -n 's/.*\] \.gopclntab *PROGBITS *[0-9a-f]* \([0-9a-f]*\) .*/\1/p')
	[ -n "$off" ]
	printf '\xff\xff\xff\x7f' | dd of=bogus bs=1 seek=$((0x$off + 8)) conv=notrunc status=none
	record_hogo "$T/bogus"
	grep "bogus: Go function names not read: its .gopclntab is not of a known layout" <<< "$output"
	[ "$(grep -c 'gopclntab' <<< "$output")" -eq 1 ]
	lint p.data
	[ "$(share p.data main.hoGoAlpha)" = 0 ]
}
