#!/usr/bin/env bash
# debuginfod benchmark (issue 21, acceptance 6; docs/debuginfo.md): the
# time precord adds at the end of a recording to name stripped code.  A
# program linked with 20 stripped shared libraries, each with its own
# static hot function (generated here in C, built with gcc, debug files
# split off with objcopy --only-keep-debug), runs BENCH_SECS of CPU under
# `precord -g`; Debian's debuginfod -F serves the 20 debug files on a free
# loopback port.  Four cases, BENCH_REPS runs each, in turn:
#   cold  --no-debuginfod   the build-id cache emptied before each run
#   cold  DEBUGINFOD_URLS   the same: 20 debug files fetched each time
#   warm  --no-debuginfod   the cache kept from a run with the server
#   warm  DEBUGINFOD_URLS   the same: nothing to fetch
# Per case: the median seconds from the program's end (its own clock,
# written as it exits) to precord's, the server's debuginfo requests per
# run, the debug files in the cache after it.  "added" is the median with
# the server minus the median without, in the same state.  Reports, never
# fails on timings: only when a tool fails or names are missing.
#
#   scripts/bench/debuginfod.sh   (BENCH_SECS, default 1; BENCH_REPS, 3;
#                                  BENCH_OUT)
# Output: build/bench/debuginfod.txt.  Hermetic: all in a temporary
# directory, the server stopped at the end.
set -euo pipefail
cd "$(dirname "$0")/../.."
. scripts/bench/lib.bash
need_root "precord loads BPF"
need_tools debuginfod gcc objcopy strip readelf curl python3
need_built build/precord
secs=${BENCH_SECS:-1}
reps=${BENCH_REPS:-3}
nlib=20
bench_setup
dpid=
bench_cleanup() { [ -z "$dpid" ] || { kill "$dpid"; wait "$dpid"; } 2>/dev/null || true; }
bench_env
unset DEBUGINFOD_URLS DEBUGINFOD_CACHE_PATH DEBUGINFOD_TIMEOUT DEBUGINFOD_MAXSIZE DEBUGINFOD_MAXTIME

# the 20 libraries and the program
mkdir -p "$tmp/bin" "$tmp/srv" "$tmp/src"
for i in $(seq "$nlib"); do
	cat > "$tmp/src/lib$i.c" <<-C
	static volatile unsigned long sink$i;
	__attribute__((noinline)) static void bench_static_$i(unsigned long n)
	{
		for (unsigned long k = 0; k < n; k++)
			sink$i += k ^ (sink$i >> 3);
	}
	void bench_run_$i(unsigned long n) { bench_static_$i(n); }
	C
	gcc -O1 -g -fPIC -shared -fno-omit-frame-pointer "$tmp/src/lib$i.c" -o "$tmp/bin/libbench$i.so"
	objcopy --only-keep-debug "$tmp/bin/libbench$i.so" "$tmp/srv/libbench$i.debug"
	strip --strip-all "$tmp/bin/libbench$i.so"
done
{
	echo '#include <stdio.h>'
	echo '#include <stdlib.h>'
	echo '#include <time.h>'
	for i in $(seq "$nlib"); do echo "void bench_run_$i(unsigned long n);"; done
	echo 'static double cpu(void) { struct timespec t; clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t); return t.tv_sec + t.tv_nsec * 1e-9; }'
	echo 'int main(int argc, char **argv)'
	echo '{'
	echo '	double end = cpu() + atof(argv[1]);'
	echo '	struct timespec now;'
	echo '	FILE *f;'
	echo '	do {'
	for i in $(seq "$nlib"); do echo "		bench_run_$i(20000);"; done
	echo '	} while (cpu() < end);'
	echo '	clock_gettime(CLOCK_REALTIME, &now);'
	echo '	f = fopen(argv[2], "w");'
	# shellcheck disable=SC2028 # C's \n, for the compiler
	echo '	if (!f || fprintf(f, "%ld.%09ld\n", (long)now.tv_sec, now.tv_nsec) < 0 || fclose(f))'
	echo '		return 1;'
	echo '	return 0;'
	echo '}'
} > "$tmp/src/main.c"
libs=()
for i in $(seq "$nlib"); do libs+=("-lbench$i"); done
# shellcheck disable=SC2016 # $ORIGIN is the dynamic linker's
gcc -O1 -fno-omit-frame-pointer "$tmp/src/main.c" -o "$tmp/bin/prog" -L"$tmp/bin" "${libs[@]}" -Wl,-rpath,'$ORIGIN'
last=$(readelf -n "$tmp/bin/libbench$nlib.so" | awk '/Build ID/ { print $3 }')

port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
debuginfod -F "$tmp/srv" -p "$port" -d "$tmp/db.sqlite" -t 0 -g 0 > "$tmp/debuginfod.log" 2>&1 &
dpid=$!
url=http://127.0.0.1:$port
for _ in $(seq 600); do
	curl -sf -o /dev/null "$url/buildid/$last/debuginfo" && break
	kill -0 "$dpid" || die "debuginfod died: $(tail -3 "$tmp/debuginfod.log")"
	sleep 0.1
done
curl -sf -o /dev/null "$url/buildid/$last/debuginfo" || die "debuginfod does not serve the debug files"

requests() {
	curl -sf "$url/metrics" | awk '/^http_requests_total\{type="debuginfo"\}/ { print $2; f = 1 } END { if (!f) print 0 }'
}
# cached: debug files of the 20 libraries in the build-id cache
cached() { find "$HOME/.debug$tmp/bin" -name debug -type f 2>/dev/null | wc -l; }

# one_run STATE SERVER: one recording; "after requests cached" appended to
# $tmp/case.STATE.SERVER
one_run() {
	local state=$1 server=$2 n0 now env=()
	[ "$state" = cold ] && rm -rf "$HOME/.debug"
	if [ "$server" = server ]; then env=(DEBUGINFOD_URLS="$url"); else env=(DEBUGINFOD_URLS=); fi
	n0=$(requests)
	rm -f "$tmp/end"
	if [ "$server" = server ]; then
		env "${env[@]}" build/precord -q -g -o "$tmp/p.data" -- "$tmp/bin/prog" "$secs" "$tmp/end"
	else
		env "${env[@]}" build/precord -q -g --no-debuginfod -o "$tmp/p.data" -- "$tmp/bin/prog" "$secs" "$tmp/end"
	fi
	now=$(date +%s.%N)
	echo "$(awk -v now="$now" '{ printf "%.3f", now - $1 }' "$tmp/end") $(( $(requests) - n0 )) $(cached)" \
		>> "$tmp/case.$state.$server"
}

median() { sort -n | awk '{ v[NR] = $1 } END { print (NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2) }'; }

for _ in $(seq "$reps"); do
	one_run cold none
	one_run cold server
	one_run warm server	# the cache the cold run filled: nothing to fetch
	one_run warm none
done

# the names come out: perf report of the last file with the server's run's cache
named=$(perf report -i "$tmp/p.data" --stdio --no-children -g none --sort sym -q 2>/dev/null | grep -c 'bench_static_' || true)
report=$out/debuginfod.txt
{
	echo "debuginfod: $nlib stripped DSOs, their debug files served by debuginfod -F on loopback; ${secs}s of CPU per recording, $reps runs per case"
	for state in cold warm; do
		for server in none server; do
			f=$tmp/case.$state.$server
			printf '%-5s %-7s after the command: median %.3f s (%s); requests per run: %s; debug files cached: %s\n' \
				"$state" "$server" "$(cut -d' ' -f1 "$f" | median)" "$(cut -d' ' -f1 "$f" | tr '\n' ' ' | sed 's/ $//')" \
				"$(cut -d' ' -f2 "$f" | tr '\n' ' ' | sed 's/ $//')" "$(cut -d' ' -f3 "$f" | tr '\n' ' ' | sed 's/ $//')"
		done
		a=$(cut -d' ' -f1 "$tmp/case.$state.server" | median)
		b=$(cut -d' ' -f1 "$tmp/case.$state.none" | median)
		awk -v a="$a" -v b="$b" -v s="$state" 'BEGIN { printf "%s cache: added by debuginfod %+.3f s (ratio %.2f)\n", s, a - b, (b > 0 ? a / b : 0) }'
	done
	echo "perf report of the last recording names $named of the $nlib static functions"
} | tee "$report"
[ "$named" -eq "$nlib" ] || die "perf report names $named of the $nlib functions, not all"
