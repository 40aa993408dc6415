#!/usr/bin/env bats
# A full disk loses nothing: precord stops, keeps a file perf reads with
# the samples written before the disk filled, says how many, exits 1.
# The disks are small tmpfs mounts inside the test's directory.

load helpers

TR=$ROOT/build/workloads/tracee

setup() {
	common_setup
	require_recording
	mkdir small
	need "mount tmpfs" mount -t tmpfs -o size=4k tmpfs small
	umount small
}

teardown() {
	# every mount a test made, even when it failed half way
	for m in "$T"/small "$T"/x.data.jit; do
		mountpoint -q "$m" 2>/dev/null && { umount "$m" || umount -l "$m"; }
	done
	common_teardown
}

# small SIZE [DIR]: a tmpfs of SIZE at DIR (default: small)
small() {
	mkdir -p "${2:-small}"
	mount -t tmpfs -o "size=$1" tmpfs "${2:-small}"
}

# SAMPLE records in FILE as perf report --stats counts them
stats_samples() {
	perf report -i "$1" --stats 2>/dev/null | awk '/SAMPLE events:/ { print $3; exit }'
}

@test "the output on a full disk: stopped, one line, the samples kept are the samples perf reads" {
	small 2m
	# the command is stopped with the recording: its pid tells
	run timeout 120 "$PRECORD" -F 20000 -g -o small/x.data -- \
		sh -c 'echo $$ > cmd.pid; exec "$0" spin' "$WL"
	echo "$output" >&2
	[ "$status" -eq 1 ]
	[ "$(echo "$output" | grep -c .)" -eq 1 ]
	[[ "$output" == "precord: disk full writing small/x.data (No space left on device): recording stopped; kept "*" samples up to the last complete flush; free some space, or record to another disk with -o" ]]
	kept=$(echo "$output" | sed -n 's/.*; kept \([0-9]*\) samples.*/\1/p')
	[ "$kept" -gt 1000 ]
	! kill -0 "$(cat cmd.pid)" 2>/dev/null
	# the disk was full: what is left is less than the flush that did not fit
	[ "$(df -k --output=avail small | tail -1)" -lt 512 ]
	lint small/x.data --require BUILD_ID,EVENT_DESC,CMDLINE,CPU_TOPOLOGY --min-samples 1000
	[ "$(stats_samples small/x.data)" -eq "$kept" ]
	perf report -i small/x.data --stdio --no-children -g none --sort sym -q 2>/dev/null | grep -q hot
}

@test "-a on a full disk: the same" {
	small 3m
	run timeout 120 "$PRECORD" -a -F 10000 -g -o small/x.data -- "$WL" spin
	echo "$output" >&2
	[ "$status" -eq 1 ]
	[[ "$output" == *"disk full writing small/x.data"*"; kept "* ]]
	kept=$(echo "$output" | sed -n 's/.*; kept \([0-9]*\) samples.*/\1/p')
	lint small/x.data --require BUILD_ID,EVENT_DESC --min-samples 100
	[ "$(stats_samples small/x.data)" -eq "$kept" ]
}

@test "the JIT folder on a full disk: perf.data complete, the lost images said, exit 1" {
	need "node" command -v node
	small 64k x.data.jit
	run timeout 120 "$PRECORD" -g -o x.data -- node --perf-prof \
		--interpreted-frames-native-stack "$ROOT/tests/workloads/js/hot.js"
	echo "$output" >&2
	[ "$status" -eq 1 ]
	echo "$output" | grep -q "^precord: disk full writing JIT images in $T/x.data.jit (No space left on device): [0-9]* images\? with [0-9]* JIT functions not written; samples in them show as unresolved"
	echo "$output" | grep -q '^\[ precord: Captured and wrote .* x.data ([0-9]* samples'
	lint x.data --require BUILD_ID,EVENT_DESC --min-samples 100
	# no half-written image is left, and perf.data names none that is gone
	for f in x.data.jit/*.so; do
		[ -e "$f" ] || continue
		readelf -h "$f" >/dev/null
	done
	perf buildid-list -i x.data 2>/dev/null | awk '{ print $2 }' | grep 'x.data.jit' |
		while read -r f; do [ -e "$f" ]; done
}

@test "--xray-out on a full disk: the log removed and said, perf.data complete, exit 1" {
	need "tracee built" test -x "$TR"
	small 1m
	run timeout 120 "$PRECORD" --trace "$TR:inner" --xray-out small/calls.xray -o x.data -- "$TR" 10 100000
	echo "$output" >&2
	[ "$status" -eq 1 ]
	echo "$output" | grep -q "^precord: trace: disk full writing 'small/calls.xray' (No space left on device): the XRay log is not written (removed); the traced calls are in perf.data"
	[ ! -e small/calls.xray ]
	[ ! -e small/calls.xray.map.yaml ]
	lint x.data --require EVENT_DESC
	# every call is in perf.data: 2 threads x 100000 entries and returns
	[ "$(stats_samples x.data)" -eq 400000 ]
}

@test "-p and -t of a kernel thread: one clear line, exit non-zero, no file" {
	kt=$(pgrep -x kthreadd | head -1)
	need "kthreadd visible" test -n "$kt"
	run "$PRECORD" -p "$kt" -o x.data -- sleep 1
	echo "$output" >&2
	[ "$status" -ne 0 ]
	[ "$(echo "$output" | grep -c .)" -eq 1 ]
	[[ "$output" == "precord: cannot record PID $kt (kthreadd): it is a kernel thread, which has no user stack; kernel threads are recorded only with -a (all CPUs)" ]]
	[ ! -e x.data ]
	kw=$(ps -o pid= --ppid "$kt" | head -1 | tr -d ' ')
	run "$PRECORD" -t "$kw" -o x.data -- sleep 1
	[ "$status" -ne 0 ]
	[[ "$output" == "precord: cannot record TID $kw ("*"): it is a kernel thread"* ]]
	[ ! -e x.data ]
}
