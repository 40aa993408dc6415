#!/usr/bin/env bats
# Hostile JIT sources: the target (tests/workloads/hostile_jit.c) runs as
# nobody and writes jitdumps, perf maps and .mlpd files meant to hurt
# precord, which records it as root.  Issue 8, section 4: findings 2, 3, 4,
# 7, 8, 11 and the .mlpd gzip bomb.

load helpers

HJ=$ROOT/build/workloads/hostile_jit
NOBODY=(setpriv --reuid=nobody --regid=nogroup --clear-groups)

setup() {
	common_setup
	require_recording
	need "hostile_jit built" test -x "$HJ"
	need "setpriv" command -v setpriv
	# a directory nobody can write in, inside the test's own
	chmod 755 "$T"
	W=$T/w
	mkdir "$W" && chmod 1777 "$W"
	ls /tmp/perf-*.map 2>/dev/null | sort > "$T/maps.before" || true
}

teardown() {
	[ -n "${PIDS:-}" ] && kill $PIDS 2>/dev/null
	if [ -n "${T:-}" ] && [ -f "$T/maps.before" ]; then
		ls /tmp/perf-*.map 2>/dev/null | sort | comm -13 "$T/maps.before" - | xargs -r rm -f
	fi
	# the chroot's bind mounts live in the target's own mount namespace;
	# never let rm -rf reach /usr through one left here
	if [ -n "${CHROOT:-}" ]; then
		for d in "$CHROOT/usr" "$CHROOT/w"; do
			mountpoint -q "$d" && umount -l "$d"
		done
	fi
	common_teardown
}

# peak CMD...: run CMD, its peak RSS in KB into $T/peak, its status back
peak() {
	python3 -c 'import resource, subprocess, sys
r = subprocess.call(sys.argv[2:])
open(sys.argv[1], "w").write("%d\n" % resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)
sys.exit(r)' "$T/peak" "$@"
}

@test "a sparse jitdump mapped 20 times: one reader, bounded memory, its path escaped in warnings" {
	# 4 records of ~64 MiB each (holes), mapped 20 times: before, 20
	# readers kept a 64 MiB buffer each (1.33 GB) and merged 80 functions
	run peak "$PRECORD" -v -o x.data -- "${NOBODY[@]}" "$HJ" dump "$W" 4 2
	echo "$output" | cat -v >&2
	[ "$status" -eq 0 ]
	kb=$(cat "$T/peak")
	echo "peak RSS: $kb KB" >&2
	[ "$kb" -lt 400000 ]
	echo "$output" | grep -q 'JIT: 4 functions merged'
	# the path has a newline, a forged precord line and escapes: shown
	# as \xNN, never raw
	echo "$output" | grep -qF 'evil\x1b[31m\x0a[ precord: all good, nothing to see ]\x1b[0m/jit-'
	! echo "$output" | grep -q '^\[ precord: all good'
	! echo "$output" | grep -q $'\x1b'
	lint x.data
}

@test "--jit-max-bytes caps what JIT sources cost on disk, and says so" {
	# 4 x 64 MiB of holes: before, 257 MB of images plus 259 MB of cache
	run "$PRECORD" --jit-max-bytes 70M -o x.data -- "${NOBODY[@]}" "$HJ" dump "$W" 4 1
	echo "$output" | cat -v >&2
	[ "$status" -eq 0 ]
	echo "$output" | grep -q 'the limit (--jit-max-bytes)'
	images=$(du -sm x.data.jit | cut -f1)
	cache=$(du -sm "$HOME/.debug" | cut -f1)
	echo "images: $images MB, cache: $cache MB" >&2
	[ "$images" -le 72 ]
	[ "$cache" -le 80 ]
	lint x.data

	run "$PRECORD" --jit-max-bytes lots -- true
	[ "$status" -ne 0 ]
	echo "$output" | grep -q "bad --jit-max-bytes 'lots'"
	"$PRECORD" --help | grep -q -- '--jit-max-bytes SIZE'
}

@test "a 4 TiB sparse perf map: the recording ends on time" {
	# before: `-- sleep 2` never ended, SIGINT had no effect
	start=$(date +%s)
	run timeout 60 "$PRECORD" -o x.data -- "${NOBODY[@]}" "$HJ" map 2
	took=$(( $(date +%s) - start ))
	echo "$output" >&2
	echo "took ${took}s" >&2
	[ "$status" -eq 0 ]
	[ "$took" -le 10 ]
	echo "$output" | grep -q 'the limit (--jit-max-bytes)'
	lint x.data --min-samples 100
}

@test "a 4 TiB sparse perf map: Ctrl-C stops the recording and then the final read" {
	"${NOBODY[@]}" "$HJ" map 60 &
	PIDS=$!
	for _ in $(seq 50); do [ -f "/tmp/perf-$PIDS.map" ] && break; sleep 0.1; done
	"$PRECORD" --jit-max-bytes 2T -o x.data -p "$PIDS" 2> err &
	rec=$!
	sleep 3
	start=$(date +%s)
	kill -INT "$rec"
	sleep 1
	kill -INT "$rec" 2>/dev/null || true	# the final read stops on a second one
	wait "$rec"
	rc=$?
	took=$(( $(date +%s) - start ))
	cat err >&2
	echo "stopped after ${took}s" >&2
	[ "$rc" -eq 0 ]
	[ "$took" -le 4 ]
	lint x.data --min-samples 100
}

@test "a perf map with 2.1M lines: at most 2M mappings, the rest counted and reported" {
	run peak "$PRECORD" -o x.data -- "${NOBODY[@]}" "$HJ" lines 2100000 1
	echo "$output" >&2
	[ "$status" -eq 0 ]
	echo "$output" | grep -q 'JIT: 100000 functions past the limit of JIT mappings were not named'
	kb=$(cat "$T/peak")
	echo "peak RSS: $kb KB ($((kb * 1024 / 2000000)) B per mapping)" >&2
	# before: 512 B per line (1.08 GB for 2.1M lines); now ~360 B
	[ $((kb * 1024 / 2000000)) -lt 420 ]
}

@test "/tmp/perf-PID.map: no symlink on the way (a target whose /tmp is a link), and the target's own" {
	# a chroot whose /tmp links to a host directory with a planted map
	CHROOT=$T/root
	mkdir -p "$CHROOT/usr" "$CHROOT/w" "$T/host"
	ln -s usr/bin "$CHROOT/bin"; ln -s usr/lib "$CHROOT/lib"; ln -s usr/lib64 "$CHROOT/lib64"
	ln -s "$T/host" "$CHROOT/tmp"
	unshare --mount --propagation private sh -c '
		mount --bind /usr "$1/usr" && mount --bind "$2" "$1/w" &&
		exec chroot --userspec=nobody:nogroup "$1" /w/hostile_jit anon 30' \
		sh "$CHROOT" "$(dirname "$HJ")" > pid &
	PIDS=$!
	for _ in $(seq 50); do [ -s pid ] && break; sleep 0.1; done
	tpid=$(cat pid)
	printf '%x 100 SECRET_FROM_HOST\n' 0x10000 > "$T/host/perf-$tpid.map"
	chown nobody "$T/host/perf-$tpid.map"
	run "$PRECORD" -o x.data --duration 2 -p "$tpid"
	echo "$output" >&2
	[ "$status" -eq 0 ]
	echo "$output" | grep -q "/tmp/perf-$tpid.map of PID $tpid: a symbolic link on its path; not read"
	! grep -rq SECRET_FROM_HOST x.data.jit 2>/dev/null
	kill $PIDS; PIDS=

	# a map in the real /tmp that belongs to root, not to the target
	"${NOBODY[@]}" "$HJ" anon 30 > pid2 &
	PIDS=$!
	for _ in $(seq 50); do [ -s pid2 ] && break; sleep 0.1; done
	tpid=$(cat pid2)
	printf '%x 100 ROOTS_OWN\n' 0x10000 > "/tmp/perf-$tpid.map"
	run "$PRECORD" -o y.data --duration 2 -p "$tpid"
	rm -f "/tmp/perf-$tpid.map"
	echo "$output" >&2
	[ "$status" -eq 0 ]
	echo "$output" | grep -q "/tmp/perf-$tpid.map of PID $tpid belongs to another user; not read"
	! grep -rq ROOTS_OWN y.data.jit 2>/dev/null
}

@test "a gzip bomb as .mlpd: bounded by --jit-max-bytes, reported, on time" {
	# a valid header and buffers, then 1 GiB of zeros: ~1 MB compressed
	python3 -c 'import gzip, sys
with gzip.open(sys.argv[2], "wb", compresslevel=1) as f:
    f.write(open(sys.argv[1], "rb").read())
    z = bytes(1 << 20)
    for _ in range(1024):
        f.write(z)' "$ROOT/tests/fuzz/corpus/mlpd/synthetic-three-buffers.mlpd" "$W/bomb.mlpd"
	chown nobody "$W/bomb.mlpd"
	start=$(date +%s)
	run timeout 60 "$PRECORD" --jit-max-bytes 32M --mlpd "$W/bomb.mlpd" -o x.data -- "$HJ" anon 1
	took=$(( $(date +%s) - start ))
	echo "$output" >&2
	echo "took ${took}s" >&2
	[ "$status" -eq 0 ]
	echo "$output" | grep -q 'reading stopped here: JIT byte limit reached (--jit-max-bytes)'
	[ "$took" -le 15 ]
	lint x.data
}
