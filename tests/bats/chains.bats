#!/usr/bin/env bats
# End-to-end: callchains and record sizes as perf record writes them, and
# the BPF target set as processes come and go.

load helpers

setup() { common_setup; require_recording; }
teardown() { common_teardown; }

# chain_check FILE: every callchain of `perf report -D` FILE, one line:
# "chains N kernel K user U bad B zero Z".  bad counts chains with a
# context marker right after another, more than one marker of a context,
# or frames before the first marker; zero those with a zero address at
# the end (perf record leaves one where the walk ran into a frame without
# a frame pointer, such as Debian's libc: precord does not).
chain_check() {
	perf report -D -i "$1" 2>/dev/null | python3 -c '
import re, sys
MAX = 2**64 - 4095
K, U = 2**64 - 128, 2**64 - 512
chains, cur, want = [], None, 0
for line in sys.stdin:
    m = re.match(r"\.\.\. FP chain: nr:(\d+)", line)
    if m:
        cur, want = [], int(m.group(1))
        chains.append(cur)
        continue
    m = re.match(r"\.\.\.\.\.\s+\d+: ([0-9a-f]+)", line)
    if m and cur is not None and len(cur) < want:
        cur.append(int(m.group(1), 16))
bad = kern = user = zero = 0
for c in chains:
    b = c.count(K) > 1 or c.count(U) > 1 or (c and c[0] < MAX)
    b = b or any(x >= MAX and y >= MAX for x, y in zip(c, c[1:]))
    bad += b
    zero += bool(c and c[-1] == 0)
    kern += K in c
    user += U in c
print("chains %d kernel %d user %d bad %d zero %d" % (len(chains), kern, user, bad, zero))
'
}

# stat_of "chains N kernel K ..." NAME: the number after NAME
stat_of() {
	echo "$1" | awk -v k="$2" '{ for (i = 1; i < NF; i++) if ($i == k) print $(i + 1) }'
}

# top_stack FILE: the most frequent callchain of FILE, as symbol names
top_stack() {
	perf script -i "$1" -F ip,sym 2>/dev/null |
		awk 'NF == 0 { if (s != "") print s; s = ""; next } { s = s " " $2 } END { if (s != "") print s }' |
		sort | uniq -c | sort -rn | head -1 | sed 's/^ *[0-9]* //'
}

# data_bps FILE: bytes of the data section per sample
data_bps() {
	local n
	n=$(perf report --stats -i "$1" 2>/dev/null | awk '/ SAMPLE events:/ { print $3; exit }')
	python3 -c '
import struct, sys
with open(sys.argv[1], "rb") as f:
    off, size = struct.unpack_from("<QQ", f.read(56), 40)
print("%.2f" % (size / int(sys.argv[2])))' "$1" "$n"
}

@test "callchains: one context marker per context, the shape of perf record's" {
	# fork and exit give kernel stacks under user stacks; the busy child
	# gives the dominant user stack.  perf record -p records the same
	# execution, so their top stacks are of one profile
	same_exec -q -F 999 -g -o p.data -- -F 999 -g -o x.data -- "$WL" forkstorm 3000 2
	! grep -q malformed precord.log
	lint x.data --min-samples 1000
	p=$(chain_check p.data); x=$(chain_check x.data)
	echo "perf: $p" >&2
	echo "precord: $x" >&2
	[ "$(stat_of "$p" bad)" -eq 0 ]		# the checker agrees with perf
	[ "$(stat_of "$x" bad)" -eq 0 ]
	[ "$(stat_of "$x" zero)" -eq 0 ]
	[ "$(stat_of "$x" kernel)" -gt 10 ]	# both contexts were seen
	[ "$(stat_of "$x" user)" -gt 1000 ]
	# no marker twice in a row anywhere in the dump
	! perf report -D -i x.data 2>/dev/null | awk '
		/^\.\.\.\.\. +[0-9]+: fffffffffffff/ { if (prev) { print; found = 1 } prev = 1; next }
		{ prev = 0 } END { exit !found }'
	ps=$(top_stack p.data); xs=$(top_stack x.data)
	echo "perf top stack:$ps" >&2
	echo "precord top stack:$xs" >&2
	[[ "$ps" == *storm_busy* ]]
	[ "$xs" = "$ps" ]
}

@test "bytes per sample at most perf record's, with perf record's sample fields" {
	perf record -q -F 999 -g -o p.data -- "$WL" forkstorm 0 2 > /dev/null 2>&1
	run "$PRECORD" -F 999 -g -o x.data -- "$WL" forkstorm 0 2
	[ "$status" -eq 0 ]
	n=$(echo "$output" | sed -n 's/.*MB x.data (\([0-9]*\) samples.*/\1/p')
	# every sample came through BPF: the kernel's ring had none
	[ "$(perf report --stats -i x.data 2>/dev/null | awk '/ SAMPLE events:/ { print $3; exit }')" -eq "$n" ]
	[[ "$output" != *malformed* ]]
	pb=$(data_bps p.data); xb=$(data_bps x.data)
	echo "bytes per sample: perf $pb precord $xb" >&2
	awk -v x="$xb" -v p="$pb" 'BEGIN { exit !(x <= p + 1) }'
	# one attr, and its sample fields are perf record's
	[ "$(perf evlist -i x.data | wc -l)" -eq 1 ]
	pt=$(perf evlist -v -i p.data | sed -n 's/.*sample_type: \([A-Z|]*\),.*/\1/p')
	xt=$(perf evlist -v -i x.data | sed -n 's/.*sample_type: \([A-Z|]*\),.*/\1/p')
	echo "sample_type: perf $pt precord $xt" >&2
	[ "$xt" = "$pt" ]
	# forkstorm's 2 s are wall time: 834 samples seen beside a CPU hog;
	# the mean bytes a sample needs a few hundred
	lint x.data --min-samples 200
}

@test "-a: samples carry CPU, no id, side-band on the sampling event" {
	run "$PRECORD" -a -g -o x.data -- sleep 1
	[ "$status" -eq 0 ]
	run perf evlist -v -i x.data
	echo "$output" >&2
	[ "${#lines[@]}" -eq 1 ]
	[[ "$output" == *"sample_type: IP|TID|TIME|CALLCHAIN|CPU|PERIOD,"* ]]
	[[ "$output" == *"mmap: 1, comm: 1"* ]]
	x=$(chain_check x.data)
	echo "precord: $x" >&2
	[ "$(stat_of "$x" bad)" -eq 0 ]
	[ "$(stat_of "$x" zero)" -eq 0 ]
	lint x.data --min-samples 100
}

@test "a busy child after 9000 fork/exit cycles of the target is sampled" {
	run "$PRECORD" -F 999 -o x.data -- "$WL" forkstorm 9000 2
	[ "$status" -eq 0 ]
	[[ "$output" != *"not recorded"* ]]
	busy=$(echo "$output" | awk '$1 == "busy" { print $2 }')
	[ -n "$busy" ]
	n=$(perf script -i x.data -F pid 2>/dev/null | grep -cw "$busy" || true)
	echo "samples of the busy child $busy: $n" >&2
	[ "$n" -ge 1798 ]	# 2 s of its CPU time at 999 Hz, less 10%
	lint x.data
}

@test "a process that gets a dead child's pid is not recorded" {
	"$PRECORD" -q -F 999 -o x.data -- "$WL" forkstorm 50 1 > storm.out &
	rec=$!
	for _ in $(seq 200); do
		[ "$(grep -c '^dead' storm.out 2>/dev/null)" -ge 20 ] && break
		sleep 0.05
	done
	# an unrelated busy process takes the pid of one of the dead children
	# (pids are handed out in order: the next one after ns_last_pid)
	reused=
	for pid in $(awk '$1 == "dead" { print $2 }' storm.out); do
		echo $((pid - 1)) > /proc/sys/kernel/ns_last_pid
		( end=$((SECONDS + 1)); while [ $SECONDS -le $end ]; do :; done ) &
		if [ "$!" = "$pid" ]; then reused=$pid; break; fi
		kill "$!" 2> /dev/null || true
	done
	wait "$rec"
	wait
	echo "pid $reused reused" >&2
	[ -n "$reused" ]
	# none after the dead child's EXIT (the child itself may have one: a
	# fork and exit can take a millisecond on a busy machine, and CI once
	# saw one sample of a dead child, before its EXIT)
	run perf script --show-task-events -i x.data
	gone=$(echo "$output" | awk -v p="PERF_RECORD_EXIT($reused:$reused)" \
		'index($0, p) { t = $(NF - 1); sub(/:$/, "", t); print t; exit }')
	echo "pid $reused's dead child exited at $gone" >&2
	[ -n "$gone" ]
	run perf script -i x.data -F pid,time
	n=$(echo "$output" | awk -v p="$reused" -v g="$gone" \
		'$1 == p { t = $2; sub(/:$/, "", t); if (t + 0 >= g + 0) n++ } END { print n + 0 }')
	echo "samples of pid $reused after that: $n" >&2
	[ "$n" -eq 0 ]
	# of that pid, only the dead child's own FORK and EXIT are in the file
	run perf script --show-task-events -i x.data
	echo "$output" | grep -w "$reused" >&2 || true
	[ "$(echo "$output" | grep -w "$reused" | grep -vc 'PERF_RECORD_\(FORK\|EXIT\)' || true)" -eq 0 ]
	[ "$(echo "$output" | grep -w "$reused" | grep -c 'PERF_RECORD_FORK')" -eq 1 ]
}

@test "a full target set is counted and reported" {
	# room for 64: 200 children alive at once, 137 or so left out
	PRECORD_MAX_TARGETS=64 run "$PRECORD" -F 999 -o x.data -- "$WL" forkstorm 200 1 1000
	[ "$status" -eq 0 ]
	echo "$output" >&2
	n=$(echo "$output" | sed -n 's/.*warning: \([0-9]*\) new processes of the targets were not recorded: more than 64 targets.*/\1/p')
	[ -n "$n" ]
	[ "$n" -ge 100 ]
	# the children left the set when they exited: the busy child is sampled
	busy=$(echo "$output" | awk '$1 == "busy" { print $2 }')
	n=$(perf script -i x.data -F pid 2>/dev/null | grep -cw "$busy" || true)
	echo "samples of the busy child $busy: $n" >&2
	[ "$n" -ge 899 ]	# 1 s of its CPU time at 999 Hz, less 10%
}
