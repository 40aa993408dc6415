#!/usr/bin/env bats
# Names for stripped code from debug files (issue 21, acceptance 1 and 2;
# docs/debuginfo.md).  tests/workloads/stripped_static.c, whose two hot
# functions are static, is stripped (strip --strip-all: no .symtab, no
# .gnu_debuglink) and its debug file (objcopy --only-keep-debug) served
# by Debian's debuginfod -F, started here on a free loopback port; there
# is no local copy of it, so only the server can name the functions (one
# test puts it in a --debug-root tree, or beside the binary through a
# .gnu_debuglink, instead: named with no server, acceptance 4).
# Hostile servers (tests/tools/debuginfod-hostile: never answers,
# trickles, 1 GiB, 404) and a closed port check the bounds.  Expectations
# come from the same run: the workload's measured time in each function
# (PRECORD_WL_TRUTH) and the time of day it ended.

load helpers

SSW=$ROOT/build/workloads/stripped_static
FUNCS=(dbg_static_alpha dbg_static_beta)
HOSTILE=$ROOT/tests/tools/debuginfod-hostile

setup() {
	common_setup
	require_recording
	need "Debian's debuginfod" command -v debuginfod
	need "binutils (objcopy, strip, readelf)" command -v objcopy
	need "curl" command -v curl
	need "stripped_static built" test -x "$SSW"
	need "/usr/bin/time (GNU time)" test -x /usr/bin/time
	# the tests' own debuginfod settings only
	unset DEBUGINFOD_URLS DEBUGINFOD_CACHE_PATH DEBUGINFOD_TIMEOUT DEBUGINFOD_MAXSIZE \
		DEBUGINFOD_MAXTIME DEBUGINFOD_PROGRESS DEBUGINFOD_VERBOSE
	mkdir -p bin srv
	cp "$SSW" bin/ss
	objcopy --only-keep-debug bin/ss srv/ss.debug
	strip --strip-all bin/ss
	[ "$(readelf -S bin/ss | grep -c -e '\.symtab' -e gnu_debuglink)" = 0 ]
	HEX=$(readelf -n bin/ss | awk '/Build ID/ { print $3 }')
	[ "${#HEX}" -eq 40 ]
	CACHED=$HOME/.debug$T/bin/ss/$HEX/debug
	DPID= HPID=
}

teardown() {
	[ -z "$DPID" ] || { kill "$DPID"; wait "$DPID"; } 2>/dev/null || true
	[ -z "$HPID" ] || { kill "$HPID"; wait "$HPID"; } 2>/dev/null || true
	fleet_cluster_stop
	common_teardown
}

# start_debuginfod: Debian's server on srv/, URL set once it serves HEX
start_debuginfod() { debuginfod_start "$T/srv" "$HEX"; }

# requests: the debuginfo requests debuginfod has answered so far
requests() {
	curl -sf "$URL/metrics" | awk '/^http_requests_total\{type="debuginfo"\}/ { print $2; f = 1 } END { if (!f) print 0 }'
}

# start_hostile MODE: tests/tools/debuginfod-hostile MODE, URL set
start_hostile() {
	local i
	"$HOSTILE" "$1" "$T/hport" "$T/hlog" &
	HPID=$!
	for i in $(seq 300); do [ -s "$T/hport" ] && break; sleep 0.05; done
	URL=http://127.0.0.1:$(cat "$T/hport")
}

# names FILE: the stripped workload's samples named by perf report, as
# "SYMBOL PCT" (its hot functions, or addresses)
names() {
	perf report -i "$1" --stdio --no-children -g none --sort dso,sym -q 2>/dev/null |
		awk '$2 == "ss" { gsub(/%/, "", $1); print $NF, $1 }'
}

# record FILE OPTS...: the stripped workload (1.5 s of CPU) recorded
# under /usr/bin/time; stderr in FILE.err, peak RSS (KiB) in FILE.rss,
# seconds from the command's end to precord's in FILE.after
record() {
	local f=$1; shift
	rm -f "$T/truth"
	PRECORD_WL_TRUTH=$T/truth /usr/bin/time -o "$f.rss" -f %M \
		"$PRECORD" "$@" -o "$f" -- bin/ss 1.5 2> "$f.err"
	local rc=$?
	awk -v now="$(date +%s.%N)" '$1 == "truth" { for (i = 2; i <= NF; i++) if ($i ~ /^end=/) { sub(/^end=/, "", $i); printf "%.2f\n", now - $i } }' \
		"$T/truth" > "$f.after"
	cat "$f.err" >&2
	echo "$f: $(cat "$f.after") s after the command, peak RSS $(cat "$f.rss") KiB" >&2
	return "$rc"
}

# warnings FILE: precord's warning lines of the recording of FILE
warnings() { grep -c '^precord: warning:' "$1.err" || true; }

@test "DEBUGINFOD_URLS: perf report of precord's file names the static functions with the workload's shares, from the cache precord filled" {
	start_debuginfod
	n0=$(requests)
	DEBUGINFOD_URLS=$URL record p.data
	lint p.data
	[ -s "$CACHED" ]
	names p.data >&2
	like_truth share p.data "$T/truth" 5 "${FUNCS[@]}"
	# one request, for the one DSO without symbols anywhere else
	[ "$(requests)" -eq $((n0 + 1)) ]
	[ "$(warnings p.data)" -eq 0 ]
	# the cache's file is the served one, private, and the download gone
	cmp "$CACHED" srv/ss.debug
	[[ "$(stat -c %a "$CACHED")" == ?00 ]]
	[ "$(stat -c %a "$HOME/.debug/.precord")" = 700 ]
	[ -z "$(find "$HOME/.debug/.precord/debuginfod" -type f -name debuginfo)" ]
	# a second recording finds it in the cache: no request
	DEBUGINFOD_URLS=$URL record q.data
	[ "$(requests)" -eq $((n0 + 1)) ]
	like_truth share q.data "$T/truth" 5 "${FUNCS[@]}"
}

@test "without DEBUGINFOD_URLS (or with --no-debuginfod): addresses only, nothing fetched" {
	start_debuginfod
	n0=$(requests)
	record p.data
	lint p.data
	names p.data >&2
	[ "$(names p.data | grep -c dbg_static_)" = 0 ]
	names p.data | grep -q '^0x'
	[ ! -e "$CACHED" ]
	[ ! -e "$HOME/.debug/.precord" ]
	DEBUGINFOD_URLS=$URL record q.data --no-debuginfod
	[ "$(names q.data | grep -c dbg_static_)" = 0 ]
	[ ! -e "$CACHED" ]
	[ "$(requests)" -eq "$n0" ]
}

@test "local debug files: under --debug-root's .build-id tree, and by .gnu_debuglink, named without any server" {
	# a /usr/lib/debug-like tree of the test's own
	mkdir -p "dbgroot/.build-id/${HEX:0:2}"
	cp srv/ss.debug "dbgroot/.build-id/${HEX:0:2}/${HEX:2}.debug"
	record p.data --debug-root "$T/dbgroot"
	lint p.data
	[ -s "$CACHED" ]
	like_truth share p.data "$T/truth" 5 "${FUNCS[@]}"
	[ ! -e "$HOME/.debug/.precord" ]	# no server: nothing of debuginfod
	# .gnu_debuglink: the debug file in .debug/ beside the binary
	rm -rf "$HOME/.debug" dbgroot
	objcopy --add-gnu-debuglink=srv/ss.debug bin/ss
	mkdir bin/.debug
	cp srv/ss.debug bin/.debug/
	record q.data --debug-root "$T/nothing"
	[ -s "$CACHED" ]
	like_truth share q.data "$T/truth" 5 "${FUNCS[@]}"
}

@test "a server's 'not found' is remembered: the next recording does not ask" {
	start_hostile missing
	DEBUGINFOD_URLS=$URL record p.data
	DEBUGINFOD_URLS=$URL record q.data
	cat "$T/hlog" >&2
	[ "$(grep -c "/buildid/$HEX/debuginfo" "$T/hlog")" -eq 1 ]
	grep -q "^$HEX [0-9]*$" "$HOME/.debug/.precord/debuginfod-misses"
	[ "$(warnings p.data)" -eq 0 ]
	[ "$(warnings q.data)" -eq 0 ]
	lint q.data
}

@test "server down: the recording ends within its deadline after the command, one warning, a complete file" {
	URL=http://127.0.0.1:$(free_port)	# nothing listens there
	DEBUGINFOD_URLS=$URL record p.data --debuginfod-timeout 3
	lint p.data
	awk '{ exit !($1 <= 3 + 3) }' p.data.after
	[ "$(warnings p.data)" -eq 1 ]
	grep -q 'warning: debuginfod: 1 debug file not fetched' p.data.err
	[ ! -e "$CACHED" ]
}

@test "a server that never answers, or trickles: at most the deadline, one warning, a complete file" {
	for mode in slow trickle; do
		start_hostile "$mode"
		DEBUGINFOD_URLS=$URL record "$mode.data" --debuginfod-timeout 2
		kill "$HPID"; wait "$HPID" 2>/dev/null || true; HPID=
		rm -f "$T/hport"
		lint "$mode.data"
		awk '{ exit !($1 <= 2 + 3) }' "$mode.data.after"
		[ "$(warnings "$mode.data")" -eq 1 ]
		grep -q 'no answer by the deadline' "$mode.data.err"
		[ ! -e "$CACHED" ]
		# a timeout is not a miss: the next recording asks again
		[ ! -s "$HOME/.debug/.precord/debuginfod-misses" ]
	done
}

@test "a 1 GiB answer: bounded time, memory and disk; --debuginfod-max refuses it early" {
	record base.data --no-debuginfod
	start_hostile huge
	DEBUGINFOD_URLS=$URL record p.data --debuginfod-timeout 3
	lint p.data
	awk '{ exit !($1 <= 3 + 3) }' p.data.after
	[ "$(warnings p.data)" -eq 1 ]
	# memory: within 64 MiB of the same recording without a server
	[ "$(cat p.data.rss)" -le $(($(cat base.data.rss) + 65536)) ]
	# disk: nothing of the download left
	[ "$(du -sk "$HOME/.debug/.precord" | cut -f1)" -le 1024 ]
	DEBUGINFOD_URLS=$URL record q.data --debuginfod-timeout 3 --debuginfod-max 64M
	grep -q 'over the byte budget' q.data.err
	[ "$(warnings q.data)" -eq 1 ]
	[ "$(cat q.data.rss)" -le $(($(cat base.data.rss) + 65536)) ]
	[ "$(du -sk "$HOME/.debug/.precord" | cut -f1)" -le 1024 ]
	[ ! -e "$CACHED" ]
}

@test "--switch-output: the debug file is fetched when the first file completes; every file names the static functions" {
	start_debuginfod
	DEBUGINFOD_URLS=$URL PRECORD_WL_TRUTH=$T/truth "$PRECORD" --switch-output=1s -o s.data \
		-- bin/ss 3 > announced 2> err
	cat announced err >&2
	[ "$(wc -l < announced)" -ge 2 ]
	[ -s "$CACHED" ]
	while read -r f; do
		lint "$f"
		names "$f" >&2
		names "$f" | grep -q '^dbg_static_alpha '
	done < announced
}

@test "export --pprof and push + query --top name the stripped static functions through the same lookup" {
	need "go (go tool pprof)" command -v go
	export GOCACHE=$T/gocache GOPATH=$T/gopath PPROF_TMPDIR=$T/pprof GOFLAGS=-mod=mod
	start_debuginfod
	record p.data		# no server: nothing cached for ss
	[ ! -e "$CACHED" ]
	# without a server the pushing host has addresses only
	"$PRECORD" export --pprof -i p.data -o none.pb.gz
	[ "$(go tool pprof -top none.pb.gz 2>/dev/null | grep -c dbg_static_)" = 0 ]
	DEBUGINFOD_URLS=$URL "$PRECORD" export --pprof -i p.data -o p.pb.gz
	[ -s "$CACHED" ]
	go tool pprof -top -nodecount=100000 p.pb.gz 2>/dev/null > pprof.txt
	cat pprof.txt >&2
	for f in "${FUNCS[@]}"; do
		t=$(truth_share "$T/truth" "$f" "${FUNCS[@]}")
		x=$(awk -v f="$f" -v fs="${FUNCS[*]}" '
			BEGIN { n = split(fs, w, " "); for (i = 1; i <= n; i++) want[w[i]] = 1 }
			$2 ~ /%$/ && ($6 in want) { gsub(/%/, "", $2); v[$6] = $2; s += $2 }
			END { printf "%.2f\n", (s > 0 ? 100 * v[f] / s : -1) }' pprof.txt)
		echo "$f: pprof $x%, measured $t%" >&2
		within "$x" "$t" 5
	done
	# push from a host whose cache has the binary (the recording put it
	# there) but not its debug file: the lookup fetches it again
	rm "$CACHED"
	fleet_cluster_start 1
	U1=${FLEET_URLS[0]}
	n0=$(requests)
	DEBUGINFOD_URLS=$URL "$PRECORD" push "$U1" --host dbgi p.data
	[ -s "$CACHED" ]
	[ "$(requests)" -eq $((n0 + 1)) ]
	"$PRECORD" query "$U1" --host dbgi --top 20 > top.txt
	cat top.txt >&2
	for f in "${FUNCS[@]}"; do
		t=$(truth_share "$T/truth" "$f" "${FUNCS[@]}")
		x=$(awk -v f="$f" -v fs="${FUNCS[*]}" '
			BEGIN { n = split(fs, w, " "); for (i = 1; i <= n; i++) want[w[i]] = 1 }
			($2 in want) { gsub(/%/, "", $1); v[$2] = $1; s += $1 }
			END { printf "%.2f\n", (s > 0 ? 100 * v[f] / s : -1) }' top.txt)
		echo "$f: query --top $x%, measured $t%" >&2
		within "$x" "$t" 5
	done
}
