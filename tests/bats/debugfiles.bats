#!/usr/bin/env bats
# Names from local debug files and from Debian's own (issue 21,
# acceptance 4 and 5; docs/debuginfo.md).
# - A stripped shared LIBRARY (tests/workloads/lib/libdbgstatic.c, whose
#   hot functions are static) that tests/workloads/stripped_lib dlopen()s:
#   its debug file (objcopy --only-keep-debug) in a /usr/lib/debug-like
#   .build-id tree of the test's own, which --debug-root points at; no
#   server.
# - libc's static functions (msort_with_tmp: glibc's qsort) in
#   tests/workloads/qsort_libc, named from libc6-dbg's file under
#   /usr/lib/debug by perf report, push + query --top and export --pprof
#   alike; then from the test's debuginfod (-F, a free loopback port)
#   serving a copy of that file, with precord's local lookup pointed at an
#   empty --debug-root and an empty cache.
# Expectations come from the same run: the workload's measured time
# (PRECORD_WL_TRUTH), or perf report of the same file.

load helpers

SLW=$ROOT/build/workloads/stripped_lib
SLIB=$ROOT/build/workloads/libdbgstatic.so
QSW=$ROOT/build/workloads/qsort_libc
LIBFUNCS=(dbglib_static_gamma dbglib_static_delta)

setup() {
	common_setup
	require_recording
	need "binutils (objcopy, strip, readelf)" command -v objcopy
	need "stripped_lib, libdbgstatic.so and qsort_libc built" test -x "$SLW" -a -f "$SLIB" -a -x "$QSW"
	unset DEBUGINFOD_URLS DEBUGINFOD_CACHE_PATH DEBUGINFOD_TIMEOUT DEBUGINFOD_MAXSIZE \
		DEBUGINFOD_MAXTIME DEBUGINFOD_PROGRESS DEBUGINFOD_VERBOSE
	mkdir -p empty
	DPID=
}

teardown() {
	[ -z "$DPID" ] || { kill "$DPID"; wait "$DPID"; } 2>/dev/null || true
	fleet_cluster_stop
	common_teardown
}

# build_id FILE: its GNU build-id, hex
build_id() { readelf -n "$1" | awk '/Build ID/ { print $3; exit }'; }

# libc_setup: LIBC (the workload's libc, its real path), LBID (its
# build-id), LDEBUG (libc6-dbg's file for it), LCACHED (its place in
# precord's cache)
libc_setup() {
	need "libc6-dbg (scripts/deps.sh)" bash -c "dpkg-query -W -f='\${Status}' libc6-dbg | grep -q 'ok installed'"
	LIBC=$(readlink -f "$(ldd "$QSW" | awk '$1 ~ /^libc\.so/ { print $3 }')")
	[ -f "$LIBC" ]
	LBID=$(build_id "$LIBC")
	[ "${#LBID}" -eq 40 ]
	LDEBUG=/usr/lib/debug/.build-id/${LBID:0:2}/${LBID:2}.debug
	[ -s "$LDEBUG" ]
	LCACHED=$HOME/.debug$LIBC/$LBID/debug
	# libc itself has no .symtab: its static functions are in the debug file only
	[ "$(readelf -S "$LIBC" | grep -c '\.symtab')" = 0 ]
}

# libc_record FILE OPTS...: qsort_libc (2 s of CPU) recorded with -g
libc_record() {
	local f=$1; shift
	"$PRECORD" -g "$@" -o "$f" -- "$QSW" 2
}

# perf_self FILE: "SYMBOL PCT" of libc's and the workload's symbols (self,
# of all samples), as perf report names them
perf_self() {
	perf report -i "$1" --stdio --no-children -g none --sort dso,sym -q 2>/dev/null |
		awk '$2 == "libc.so.6" || $2 == "qsort_libc" { gsub(/%/, "", $1); print $NF, $1 }'
}

# msort FILE: the name perf report gives libc's merge sort (msort_with_tmp
# or a compiler's clone of it, msort_with_tmp.part.0)
msort() { perf_self "$1" | awk '$1 ~ /^msort_with_tmp/ { print $1; exit }'; }

# pprof_self PB SYMBOL: SYMBOL's flat% in go tool pprof -top of PB
pprof_self() {
	go tool pprof -top -nodecount=100000 "$1" 2>/dev/null |
		awk -v s="$2" '$2 ~ /%$/ && $6 == s { gsub(/%/, "", $2); print $2; f = 1; exit } END { if (!f) print 0 }'
}

go_env() {
	need "go (go tool pprof)" command -v go
	export GOCACHE=$T/gocache GOPATH=$T/gopath PPROF_TMPDIR=$T/pprof GOFLAGS=-mod=mod
}

@test "a stripped shared library: its static functions named from a --debug-root .build-id tree, without any server" {
	mkdir -p bin
	cp "$SLIB" bin/libdbgstatic.so
	objcopy --only-keep-debug bin/libdbgstatic.so lib.debug
	strip --strip-all bin/libdbgstatic.so
	[ "$(readelf -S bin/libdbgstatic.so | grep -c -e '\.symtab' -e gnu_debuglink)" = 0 ]
	HEX=$(build_id bin/libdbgstatic.so)
	[ "${#HEX}" -eq 40 ]
	CACHED=$HOME/.debug$T/bin/libdbgstatic.so/$HEX/debug
	# nowhere to find it: addresses
	PRECORD_WL_TRUTH=$T/truth0 "$PRECORD" --debug-root "$T/empty" -o n.data -- "$SLW" "$T/bin/libdbgstatic.so" 1.5
	lint n.data
	perf report -i n.data --stdio --no-children -g none --sort dso,sym -q 2>/dev/null | grep libdbgstatic >&2
	[ "$(share n.data dbglib_static_gamma)" = 0 ]
	[ ! -e "$CACHED" ]
	# a /usr/lib/debug-like tree of the test's own
	mkdir -p "dbgroot/.build-id/${HEX:0:2}"
	cp lib.debug "dbgroot/.build-id/${HEX:0:2}/${HEX:2}.debug"
	PRECORD_WL_TRUTH=$T/truth "$PRECORD" --debug-root "$T/dbgroot" -o p.data -- "$SLW" "$T/bin/libdbgstatic.so" 1.5 2> err
	cat err >&2
	[ "$(grep -c warning err)" = 0 ]
	lint p.data
	cmp "$CACHED" lib.debug
	[ ! -e "$HOME/.debug/.precord" ]	# no server: nothing of debuginfod
	perf report -i p.data --stdio --no-children -g none --sort dso,sym -q 2>/dev/null | grep libdbgstatic >&2
	like_truth share p.data "$T/truth" 5 "${LIBFUNCS[@]}"
}

@test "libc6-dbg: libc's static functions (qsort's msort_with_tmp) named by push + query --top and export --pprof as perf report names them" {
	libc_setup
	go_env
	libc_record p.data
	lint p.data
	perf_self p.data | head -8 >&2
	M=$(msort p.data)
	[ -n "$M" ]
	pm=$(perf_self p.data | awk -v s="$M" '$1 == s { print $2 }')
	pc=$(perf_self p.data | awk '$1 == "cmp_int" { print $2 }')
	# the hot part of the run is libc's
	awk -v v="$pm" 'BEGIN { exit !(v >= 20) }'
	# precord's lookup took libc6-dbg's file into the cache
	cmp "$LCACHED" "$LDEBUG"
	"$PRECORD" export --pprof -i p.data -o p.pb.gz
	x=$(pprof_self p.pb.gz "$M"); y=$(pprof_self p.pb.gz cmp_int)
	echo "$M: perf report $pm%, pprof $x%; cmp_int: $pc%, $y%" >&2
	within "$x" "$pm" 2
	within "$y" "$pc" 2
	fleet_cluster_start 1
	U1=${FLEET_URLS[0]}
	"$PRECORD" push "$U1" --host libc p.data
	"$PRECORD" query "$U1" --host libc --top 20 > top.txt
	cat top.txt >&2
	x=$(awk -v s="$M" '$2 == s { gsub(/%/, "", $1); print $1; f = 1; exit } END { if (!f) print 0 }' top.txt)
	y=$(awk '$2 == "cmp_int" { gsub(/%/, "", $1); print $1; f = 1; exit } END { if (!f) print 0 }' top.txt)
	echo "$M: perf report $pm%, query --top $x%; cmp_int: $pc%, $y%" >&2
	within "$x" "$pm" 2
	within "$y" "$pc" 2
}

@test "libc's debug file from debuginfod, the local lookup pointed at an empty --debug-root: the same names" {
	libc_setup
	go_env
	need "Debian's debuginfod" command -v debuginfod
	need "curl" command -v curl
	mkdir -p srv
	cp "$LDEBUG" srv/libc.debug
	# no server, nothing local: precord's lookup finds nothing for libc
	libc_record n.data --debug-root "$T/empty"
	[ ! -e "$LCACHED" ]
	"$PRECORD" export --pprof --debug-root "$T/empty" -i n.data -o n.pb.gz
	M=$(msort n.data)	# perf report reads /usr/lib/debug itself
	[ -n "$M" ]
	[ "$(pprof_self n.pb.gz "$M")" = 0 ]
	debuginfod_start "$T/srv" "$LBID"
	rm -rf "$HOME/.debug"
	DEBUGINFOD_URLS=$URL libc_record p.data --debug-root "$T/empty" 2> err
	cat err >&2
	lint p.data
	# the cache has the server's copy, and perf report names the same
	cmp "$LCACHED" srv/libc.debug
	perf_self p.data | head -8 >&2
	[ "$(msort p.data)" = "$M" ]
	pm=$(perf_self p.data | awk -v s="$M" '$1 == s { print $2 }')
	awk -v v="$pm" 'BEGIN { exit !(v >= 20) }'
	# export's own lookup, cache emptied: from the server only
	rm -rf "$HOME/.debug"
	"$PRECORD" export --pprof --debug-root "$T/empty" -i p.data -o none.pb.gz
	[ "$(pprof_self none.pb.gz "$M")" = 0 ]
	DEBUGINFOD_URLS=$URL "$PRECORD" export --pprof --debug-root "$T/empty" -i p.data -o p.pb.gz
	cmp "$LCACHED" srv/libc.debug
	x=$(pprof_self p.pb.gz "$M")
	echo "$M: perf report $pm%, pprof (debuginfod) $x%" >&2
	within "$x" "$pm" 2
	# push's too
	rm -rf "$HOME/.debug"
	fleet_cluster_start 1
	U1=${FLEET_URLS[0]}
	DEBUGINFOD_URLS=$URL "$PRECORD" push "$U1" --host libc --debug-root "$T/empty" p.data
	cmp "$LCACHED" srv/libc.debug
	"$PRECORD" query "$U1" --host libc --top 20 > top.txt
	cat top.txt >&2
	x=$(awk -v s="$M" '$2 == s { gsub(/%/, "", $1); print $1; f = 1; exit } END { if (!f) print 0 }' top.txt)
	echo "$M: perf report $pm%, query --top (debuginfod) $x%" >&2
	within "$x" "$pm" 2
}
