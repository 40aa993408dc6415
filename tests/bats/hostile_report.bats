#!/usr/bin/env bats
# What the report symbolizer (precord export, the --push thread) opens for
# a recording, run as root on the recordings of hostile processes
# (tests/workloads/hostile_report.c, as nobody): issue 18, finding 8.
# The pprof's string table (function names) is read with zcat | strings.

load helpers

HR=$ROOT/build/workloads/hostile_report
AS_NOBODY=(setpriv --reuid=nobody --regid=nogroup --clear-groups)

setup() {
	common_setup
	require_recording
	need "hostile_report built" test -x "$HR"
	need "setpriv" command -v setpriv
	need "strace" command -v strace
	need "cc" command -v cc
	chmod 711 "$T"
	mkdir "$T/n" && chown nobody:nogroup "$T/n"
	# two libraries alike but for their function's name, no build-id
	# (then nothing but the path tells the symbolizer which file it was)
	echo '__attribute__((noinline)) void hot_spin(long n) { for (volatile long i = 0; i < n; i++); }' > hot.c
	sed 's/hot_spin/secret_spin_zq/' hot.c > secret.c
	cc -O1 -shared -fPIC -Wl,--build-id=none -o "$T/n/h.so" hot.c
	cc -O1 -shared -fPIC -Wl,--build-id=none -o "$T/secret.so" secret.c
	chown nobody:nogroup "$T/n/h.so"
	chmod 600 "$T/secret.so"			# root's, unreadable to nobody
	JITPID=
	CLUSTER_DIR=
}

teardown() {
	[ -n "$JITPID" ] && rm -f "/tmp/perf-$JITPID.map"
	[ -n "$CLUSTER_DIR" ] && "$ROOT/tests/tools/clickhouse-cluster" stop "$CLUSTER_DIR"
	common_teardown
}

names() {
	zcat "$1" | strings
}

# lacks PROFILE WORD: no function name of PROFILE has WORD (a function,
# so that a failure fails the test: bats ignores a bare "! cmd")
lacks() {
	! names "$1" | grep -q "$2"
}

# build_twins ID: $T/n/evil (nobody's) and $T/victim, one build-id, the
# same code, their hot functions named evil_named_zq and victim_hot.
build_twins() {
	cat > spin.c <<'SRC'
#include <time.h>
__attribute__((noinline)) void victim_hot(void) { for (volatile long i = 0; i < 100000; i++); }
int main(void) { time_t end = time(0) + 2; while (time(0) < end) victim_hot(); return 0; }
SRC
	sed 's/victim_hot/evil_named_zq/' spin.c > evil.c
	cc -O1 -Wl,--build-id="$1" -o "$T/n/evil" evil.c
	cc -O1 -Wl,--build-id="$1" -o "$T/victim" spin.c
	chown nobody:nogroup "$T/n/evil"
}

# victim_named_right: root records $T/victim (its output in $recorded);
# perf report and export name its frames victim_hot, never evil_named_zq.
victim_named_right() {
	"$PRECORD" -F 999 -o v.data -- "$T/victim" 2> rec.txt
	recorded=$(cat rec.txt)
	echo "$recorded" >&2
	perf report -i v.data --stdio --no-children --sort sym -q > report.txt 2>/dev/null
	head -3 report.txt >&2
	grep -q victim_hot report.txt
	if grep -q evil_named_zq report.txt; then return 1; fi
	"$PRECORD" export --pprof -i v.data -o v.pb.gz
	names v.pb.gz | grep -q victim_hot
	lacks v.pb.gz evil_named_zq
}

# record_swap TARGET: nobody's process spins in $T/n/h.so, then makes it a
# symlink to TARGET ("-": it stays).
record_swap() {
	run "$PRECORD" -F 999 -o x.data -- "${AS_NOBODY[@]}" "$HR" swap "$T/n/h.so" 2 "$1"
	echo "$output" >&2
	[ "$status" -eq 0 ]
	perf report -i x.data --stdio --no-children --sort dso -q 2>/dev/null | grep -q 'h\.so'
}

@test "export of a mapped library swapped for a symlink to /dev/kmsg: the device is never opened" {
	record_swap /dev/kmsg
	[[ "$output" == *"swapped $T/n/h.so -> /dev/kmsg"* ]]
	run strace -f -y -e trace=open,openat,openat2 -o trace.txt "$PRECORD" export --pprof -i x.data -o x.pb.gz
	echo "$output" >&2
	[ "$status" -eq 0 ]
	grep 'h\.so' trace.txt >&2 || true
	run grep '</dev/kmsg>' trace.txt			# was opened as root
	[ "$status" -eq 1 ]
}

@test "export: a swapped library's symlink to a root-only binary does not leak its symbols" {
	record_swap -				# the control: the library stays
	"$PRECORD" export --pprof -i x.data -o ok.pb.gz
	names ok.pb.gz | grep -q hot_spin
	record_swap "$T/secret.so"
	run "$PRECORD" export --pprof -i x.data -o x.pb.gz
	echo "$output" >&2
	[ "$status" -eq 0 ]
	lacks x.pb.gz secret_spin_zq			# was named from the 0600 file
}

@test "export: a /tmp/perf-PID.map nobody planted for a root process is not read" {
	run "$PRECORD" -F 999 -o j.data -- "$HR" jit 2
	echo "$output" >&2
	[ "$status" -eq 0 ]
	read -r JITPID start len < <(sed -n 's/^jit \([0-9]*\) \([0-9a-f]*\) \([0-9a-f]*\)$/\1 \2 \3/p' <<<"$output")
	[ -n "$JITPID" ] && [ -n "$start" ]
	rm -f "/tmp/perf-$JITPID.map"
	# the control: root's own map names the frames
	printf '%s %s jit_by_root\n' "$start" "$len" > "/tmp/perf-$JITPID.map"
	"$PRECORD" export --pprof -i j.data -o ok.pb.gz
	names ok.pb.gz | grep -q jit_by_root
	rm "/tmp/perf-$JITPID.map"
	"${AS_NOBODY[@]}" sh -c "printf '%s %s planted_by_nobody\n' $start $len > /tmp/perf-$JITPID.map"
	run "$PRECORD" export --pprof -i j.data -o x.pb.gz
	echo "$output" >&2
	[ "$status" -eq 0 ]
	lacks x.pb.gz planted_by_nobody			# renamed root's JIT frames
	# nor through a symlink of root's to nobody's file
	mv "/tmp/perf-$JITPID.map" "$T/planted.map"
	ln -s "$T/planted.map" "/tmp/perf-$JITPID.map"
	run "$PRECORD" export --pprof -i j.data -o y.pb.gz
	lacks y.pb.gz planted_by_nobody
}

# Finding 13: nobody's binary carrying the victim's build-id, recorded
# (and so cached) first, named the victim's frames in perf report and
# export (the .build-id link pointed at nobody's copy).
@test "build-id cache poisoning: a file with the victim's build-id cached first does not name its frames" {
	need "perf" perf version
	build_twins 0x5eed5eed5eed5eed5eed5eed5eed5eed5eed5eed
	[ "$(nm "$T/n/evil" | awk '/evil_named_zq/ { print $1 }')" = "$(nm "$T/victim" | awk '/victim_hot/ { print $1 }')" ]
	"$PRECORD" -F 999 -o e.data -- "${AS_NOBODY[@]}" "$T/n/evil"
	victim_named_right
	# the attacker's own recording still has its names
	"$PRECORD" export --pprof -i e.data -o e.pb.gz
	names e.pb.gz | grep -q evil_named_zq
	# said once, naming both files
	[ "$(grep -c "build-id 5eed5eed5eed5eed5eed5eed5eed5eed5eed5eed: $T/n/evil and $T/victim differ" <<<"$recorded")" -eq 1 ]
}

# The recorder's --push thread read symbols from ~/.debug whatever
# --buildid-dir said: a binary gone from disk by the time its files are
# pushed (only the cache given by --buildid-dir holds it) went unnamed.
@test "--push takes symbols from the recorder's --buildid-dir" {
	need "clickhouse-server (Debian's clickhouse-server)" \
		bash -c 'command -v clickhouse-server || test -x /usr/sbin/clickhouse-server'
	need "curl" command -v curl
	cat > gone.c <<'SRC'
#include <time.h>
#include <unistd.h>
__attribute__((noinline)) void gone_hot_zq(void) { for (volatile long i = 0; i < 100000; i++); }
int main(int argc, char **argv) { time_t end = time(0) + 5; (void)argc; unlink(argv[0]); while (time(0) < end) gone_hot_zq(); return 0; }
SRC
	cc -O1 -o "$T/gone" gone.c
	CLUSTER_DIR=$T/ch
	"$ROOT/tests/tools/clickhouse-cluster" start "$CLUSTER_DIR" 1 > servers
	u=$(awk 'NR == 1 { print $1 }' servers)
	"$PRECORD" fleet-schema "$u"
	run "$PRECORD" -F 199 -o r.data --switch-output=2s --buildid-dir "$T/bid" \
		--push "$u" --host gone-host -- "$T/gone"
	echo "$output" >&2
	[ "$status" -eq 0 ]
	[ ! -e "$T/gone" ]
	ls "$T/bid/$T/gone" >&2
	run "$PRECORD" query "$u" --host gone-host --top 10
	echo "$output" >&2
	[[ "$output" == *gone_hot_zq* ]]
}

# Finding 13 under one path: nobody, in its own user and mount namespace,
# binds its file over the victim's path and runs it, so the kernel names
# its mapping with the victim's path; cached first, its copy stood for
# the victim's frames.
@test "build-id cache poisoning under the victim's own path (a bind mount in nobody's namespace)" {
	need "unshare" command -v unshare
	need "unprivileged user namespaces" "${AS_NOBODY[@]}" unshare -Urm true
	build_twins 0x5eed5eed5eed5eed5eed5eed5eed5eed5eed5eee
	"$PRECORD" -F 999 -o e.data -- "${AS_NOBODY[@]}" unshare -Urm \
		sh -c "mount --bind $T/n/evil $T/victim && exec $T/victim"
	# the kernel named nobody's mapping with the victim's path
	perf report -i e.data --stdio --no-children --sort dso -q 2>/dev/null | grep -q victim
	victim_named_right
	[ "$(grep -c "another file than the one cached as $T/victim carries it" <<<"$recorded")" -eq 1 ]
}
