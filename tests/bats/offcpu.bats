#!/usr/bin/env bats
# End-to-end: --off-cpu, the time threads wait written as perf record
# --off-cpu writes it (an `offcpu-time` event, PERIOD = ns off the CPU).
# The oracle is the workload's own measure of its waits
# (build/workloads/offcpu writes them to a truth file), taken in the very
# run that was recorded.

load helpers

OC=$ROOT/build/workloads/offcpu

setup() {
	common_setup
	require_recording
	need "offcpu workload built" test -x "$OC"
}
teardown() {
	[ -n "${CG_DIR:-}" ] && rmdir "$CG_DIR" 2>/dev/null
	common_teardown
}

# truth FILE KEY: the value of KEY in the last truth line of FILE
truth() {
	awk -v k="$2" '$1 == "truth" { for (i = 2; i <= NF; i++) { split($i, kv, "="); if (kv[1] == k) v = kv[2] } } END { print v + 0 }' "$1"
}

# oc_sum FILE [SYM|~REGEX ...]: seconds of offcpu-time (sum of PERIOD) of
# the samples whose call chain has every SYM (or a symbol matching REGEX)
oc_sum() {
	local f=$1; shift
	perf script -i "$f" -F tid,event,period,ip,sym 2>/dev/null |
		awk -v want="$*" '
			function done() {
				if (!in_oc) return
				ok = 1
				for (i = 1; i <= n; i++) {
					hit = 0
					for (s in seen)
						if ((substr(w[i], 1, 1) == "~" && s ~ substr(w[i], 2)) || s == w[i]) { hit = 1; break }
					if (!hit) { ok = 0; break }
				}
				if (ok) t += p
				in_oc = 0
			}
			BEGIN { n = split(want, w, " ") }
			/ offcpu-time: *$/ { done(); in_oc = 1; p = $2; delete seen; next }
			/ cpu-clock: / { done(); next }
			in_oc && NF >= 2 { seen[$2] = 1 }
			END { done(); printf "%.6f\n", t / 1e9 }'
}

# report_children FILE SYM: SYM's children share in perf report's
# section of the offcpu-time event
report_children() {
	perf report -i "$1" --stdio --children --sort sym -g none 2>/dev/null |
		awk -v s="$2" '/^# Samples: .* of event / { on = ($0 ~ /'"'"'offcpu-time'"'"'/) }
			on && $NF == s { gsub(/%/, "", $1); print $1; f = 1; exit }
			END { if (!f) print 0 }'
}

# pct A B: 100 * A / B
pct() {
	awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f\n", (b > 0 ? 100 * a / b : 0) }'
}

# check_waits FILE TRUTH: the acceptance of the waits workload
check_waits() {
	local f=$1 tr=$2 total sl po ts tp wall cpu main
	total=$(oc_sum "$f")
	sl=$(oc_sum "$f" wait_sleep)
	po=$(oc_sum "$f" wait_poll)
	main=$(oc_sum "$f" main)
	ts=$(truth "$tr" sleep); tp=$(truth "$tr" poll)
	wall=$(truth "$tr" wall); cpu=$(truth "$tr" cpu)
	echo "off-cpu total $total s (wall - cpu $(awk -v w="$wall" -v c="$cpu" 'BEGIN { print w - c }') s); wait_sleep $sl s (measured $ts), wait_poll $po s (measured $tp), main $main s" >&2
	# the shares of the two functions, as the workload measured them
	within "$(pct "$sl" "$(awk -v a="$sl" -v b="$po" 'BEGIN { print a + b }')")" \
	       "$(pct "$ts" "$(awk -v a="$ts" -v b="$tp" 'BEGIN { print a + b }')")" 5
	# main on >= 95% of the off-CPU time
	awk -v m="$main" -v t="$total" 'BEGIN { exit !(t > 0 && m >= 0.95 * t) }'
	# the total within 10% of the thread's wall time minus its CPU time
	awk -v t="$total" -v w="$wall" -v c="$cpu" 'BEGIN { d = w - c; e = t - d; if (e < 0) e = -e; exit !(d > 0 && e <= 0.10 * d) }'
	# perf report shows the event on its own, with the same shares
	within "$(report_children "$f" wait_sleep)" "$(pct "$sl" "$total")" 1
}

@test "--off-cpu -g: the waits of two functions in their measured ratio, main on them all, the total = wall - CPU" {
	run "$PRECORD" -q --off-cpu -g -o p.data -- "$OC" waits 2 raw "$T/truth"
	[ "$status" -eq 0 ]
	lint p.data
	check_waits p.data "$T/truth"
}

@test "--off-cpu --call-graph ehframe: the same through libc's nanosleep and poll (no frame pointers there)" {
	run "$PRECORD" -q --off-cpu --call-graph ehframe -o p.data -- "$OC" waits 2 libc "$T/truth"
	[ "$status" -eq 0 ]
	lint p.data
	check_waits p.data "$T/truth"
	# the kernel part says which wait: nanosleep's and poll's
	awk -v a="$(oc_sum p.data wait_sleep '~nanosleep')" -v b="$(oc_sum p.data wait_sleep)" 'BEGIN { exit !(b > 0 && a >= 0.99 * b) }'
	awk -v a="$(oc_sum p.data wait_poll '~poll_schedule_timeout')" -v b="$(oc_sum p.data wait_poll)" 'BEGIN { exit !(b > 0 && a >= 0.99 * b) }'
}

@test "--off-cpu: a thread waiting on a mutex another holds: its futex wait under its function, as long as it measured" {
	run "$PRECORD" -q --off-cpu --call-graph ehframe -o p.data -- "$OC" lock 2 "$T/truth"
	[ "$status" -eq 0 ]
	lint p.data
	local got want
	got=$(oc_sum p.data lock_waiter pthread_mutex_lock@@GLIBC_2.2.5 '~futex')
	want=$(truth "$T/truth" lockwait)
	echo "futex wait under lock_waiter: $got s, measured $want s" >&2
	awk -v g="$got" -v w="$want" 'BEGIN { e = g - w; if (e < 0) e = -e; exit !(w > 0.5 && e <= 0.10 * w) }'
}

@test "--off-cpu without -g: perf-check clean, offcpu-time its own event with its call chains" {
	run "$PRECORD" -q --off-cpu -o p.data -- "$OC" waits 1 raw "$T/truth"
	[ "$status" -eq 0 ]
	lint p.data
	perf evlist -i p.data | grep -qx offcpu-time
	perf report -i p.data --stdio 2>/dev/null | grep -q "of event 'offcpu-time'"
	perf evlist -v -i p.data | grep '^offcpu-time:' | grep -q 'type: 1, size: 128, config: 0xa,.*sample_type: IP|TID|TIME|CALLCHAIN|CPU|PERIOD|IDENTIFIER'
	# the CPU samples have no chains, the off-CPU ones do (as perf's)
	awk -v a="$(oc_sum p.data wait_sleep)" 'BEGIN { exit !(a > 0.3) }'
}

@test "--off-cpu -a: perf-check clean, the workload's waits among everyone's" {
	"$PRECORD" -q --off-cpu -a -g -o p.data -- "$OC" waits 1 raw "$T/truth"
	lint p.data
	local sl ts
	sl=$(oc_sum p.data wait_sleep); ts=$(truth "$T/truth" sleep)
	echo "wait_sleep $sl s, measured $ts s" >&2
	awk -v g="$sl" -v w="$ts" 'BEGIN { e = g - w; if (e < 0) e = -e; exit !(w > 0 && e <= 0.10 * w) }'
}

@test "--off-cpu --switch-output: every file clean, the waits split among them and none lost" {
	run "$PRECORD" -q --off-cpu -g --switch-output=1s -o p.data -- "$OC" waits 3 raw "$T/truth"
	[ "$status" -eq 0 ]
	local f n=0 sum=0 total
	for f in p.data.*; do
		lint "$f"
		sum=$(awk -v a="$sum" -v b="$(oc_sum "$f" wait_sleep)" 'BEGIN { print a + b }')
		n=$((n + 1))
	done
	[ "$n" -ge 3 ]
	total=$(truth "$T/truth" sleep)
	echo "$n files, wait_sleep $sum s, measured $total s" >&2
	awk -v g="$sum" -v w="$total" 'BEGIN { e = g - w; if (e < 0) e = -e; exit !(w > 0 && e <= 0.10 * w) }'
}

@test "--off-cpu: a full map is counted and flushed early; its waits are written one by one, none lost" {
	PRECORD_OFFCPU_ENTRIES=1 run "$PRECORD" --off-cpu -g -o p.data -- "$OC" waits 1 raw "$T/truth"
	[ "$status" -eq 0 ]
	echo "$output" | grep -q "off-cpu: [0-9]* waits were written one by one, the kernel's map being full"
	lint p.data
	check_waits p.data "$T/truth"
}

@test "--off-cpu-thresh: waits at least that long are samples of their own, at the time they end" {
	run "$PRECORD" -q --off-cpu --off-cpu-thresh 1 -g -o p.data -- "$OC" waits 1 raw "$T/truth"
	[ "$status" -eq 0 ]
	lint p.data
	# one sample per wait of wait_sleep (4 ms or more each, all over 1 ms),
	# as many as the workload counted (the one running at the end may be
	# cut short of the threshold: at most one fewer)
	local n sleeps
	n=$(perf script -i p.data -F event,period,ip,sym 2>/dev/null | awk '/offcpu-time:/ { s = $1 } /cpu-clock:/ { s = 0 } $2 == "wait_sleep" && s { n++; s = 0 } END { print n + 0 }')
	sleeps=$(truth "$T/truth" sleeps)
	echo "$n samples under wait_sleep for $sleeps sleeps" >&2
	[ "$sleeps" -gt 0 ] && [ "$n" -ge $((sleeps - 1)) ] && [ "$n" -le "$sleeps" ]
	check_waits p.data "$T/truth"
	run "$PRECORD" --off-cpu-thresh 5 -- true
	[ "$status" -ne 0 ]
	[[ "$output" == *"--off-cpu-thresh needs --off-cpu"* ]]
}

@test "--off-cpu -a -G --all-cgroups: only the cgroup's waits, each with its cgroup; perf-check clean" {
	local mnt name pid pids
	mnt=$(awk '{ for (i = 7; i < NF; i++) if ($i == "-") {
		if ($(i + 1) == "cgroup2" && $4 == "/") { print $5; exit } break } }' /proc/self/mountinfo)
	need "a cgroup2 mount" test -n "$mnt"
	name=precord-offcpu.$$
	mkdir "$mnt/$name"
	CG_DIR=$mnt/$name
	sh -c 'echo $$ > "$1/cgroup.procs" && exec "$2" waits 1.5 raw "$3"' sh "$CG_DIR" "$OC" "$T/truth" &
	pid=$!
	run "$PRECORD" -q --off-cpu -a -g -G "$name" --all-cgroups -o p.data -- sleep 1
	wait "$pid"
	[ "$status" -eq 0 ]
	lint p.data
	pids=$(perf script -i p.data -F pid,event 2>/dev/null | awk '/offcpu-time/ { print $1 }' | sort -u)
	echo "off-cpu samples of pids: $pids (workload $pid)" >&2
	[ "$pids" = "$pid" ]
	perf report -i p.data --stdio --sort cgroup -g none 2>/dev/null |
		awk '/^# Samples: .* of event / { on = ($0 ~ /offcpu-time/) } on && /\// { print; f = 1 } END { exit !f }' | grep -q "/$name"
}

@test "export --pprof of an --off-cpu file: the waits a sample type of their own (offcpu, nanoseconds), the CPU ones as before" {
	need "go (go tool pprof)" command -v go
	export GOCACHE=$T/gocache GOPATH=$T/gopath PPROF_TMPDIR=$T/pprof GOFLAGS=-mod=mod
	"$PRECORD" -q --off-cpu -g -o p.data -- "$OC" waits 1 raw "$T/truth"
	run "$PRECORD" export --pprof -i p.data -o p.pb.gz
	[ "$status" -eq 0 ]
	local total sl top cum cpu_perf cpu_pprof
	total=$(oc_sum p.data)
	sl=$(pct "$(oc_sum p.data wait_sleep)" "$total")
	top=$(go tool pprof -sample_index=offcpu -top -nodecount=100000 -nodefraction=0 -unit=ns p.pb.gz 2>/dev/null)
	# "Showing nodes accounting for N ns, 100% of N ns total"
	awk -v t="$total" '/ of .* total/ { gsub(/ns/, "", $(NF - 1)); v = $(NF - 1) / 1e9 } END { e = v - t; if (e < 0) e = -e; exit !(t > 0 && e <= 0.001 * t) }' <<< "$top"
	cum=$(awk '$NF == "wait_sleep" { gsub(/%/, "", $5); print $5 }' <<< "$top")
	echo "offcpu total $total s; wait_sleep perf $sl% pprof cum $cum%" >&2
	within "$sl" "$cum" 1
	# the CPU sample type holds the cpu-clock samples only
	cpu_perf=$(perf report -i p.data --stdio 2>/dev/null | awk "/of event 'cpu-clock'/ { f = 1 } f && /Event count/ { print \$NF; exit }")
	cpu_pprof=$(go tool pprof -sample_index=cpu -top -unit=ns p.pb.gz 2>/dev/null | awk '/ of .* total/ { gsub(/ns/, "", $(NF - 1)); print $(NF - 1) }')
	echo "cpu-clock: perf $cpu_perf ns, pprof $cpu_pprof ns" >&2
	[ "$cpu_perf" = "$cpu_pprof" ]
}

@test "--off-cpu -C: only the waits that begin on those CPUs" {
	need "two CPUs" test "$(nproc)" -ge 2
	"$PRECORD" -q --off-cpu -a -C 0 -o c0.data -- taskset -c 1 "$OC" waits 1 raw "$T/truth"
	"$PRECORD" -q --off-cpu -a -C 1 -o c1.data -- taskset -c 1 "$OC" waits 1 raw "$T/truth"
	lint c0.data
	local on0 on1 ts
	on0=$(oc_sum c0.data wait_sleep); on1=$(oc_sum c1.data wait_sleep); ts=$(truth "$T/truth" sleep)
	echo "wait_sleep of a task on CPU 1: -C 0 $on0 s, -C 1 $on1 s (measured $ts s)" >&2
	awk -v a="$on0" 'BEGIN { exit !(a == 0) }'
	awk -v g="$on1" -v w="$ts" 'BEGIN { e = g - w; if (e < 0) e = -e; exit !(w > 0 && e <= 0.10 * w) }'
}

@test "--off-cpu=user: user frames only (perf's chains), the same shares and total" {
	run "$PRECORD" -q --off-cpu=user -g -o p.data -- "$OC" waits 1 raw "$T/truth"
	[ "$status" -eq 0 ]
	lint p.data
	check_waits p.data "$T/truth"
	# no kernel frame in any off-CPU chain
	[ "$(perf script -i p.data -F event,ip,sym 2>/dev/null | awk '/offcpu-time:/ { p = 1; next } /cpu-clock:/ { p = 0 } p && $1 ~ /^ffffffff/' | wc -l)" -eq 0 ]
	run "$PRECORD" --off-cpu=kernel -- true
	[ "$status" -ne 0 ]
	[[ "$output" == *"--off-cpu=user"* ]]
}

@test "--off-cpu -p and -t: a running process's waits, and one thread's" {
	"$OC" waits 4 raw "$T/truth" &
	local pid=$! p t
	sleep 0.3
	"$PRECORD" -q --off-cpu -g -p "$pid" -o p.data -- sleep 1
	"$PRECORD" -q --off-cpu -g -t "$pid" -o t.data -- sleep 1
	wait "$pid"
	lint p.data
	lint t.data
	p=$(oc_sum p.data main); t=$(oc_sum t.data main)
	echo "-p: $p s, -t: $t s of off-CPU time under main in 1 s recordings" >&2
	# the thread waits nearly all the time: most of each recording (the
	# waits under way at its start and end are not counted; its end comes
	# up to a poll round after sleep's)
	awk -v p="$p" -v t="$t" 'BEGIN { exit !(p >= 0.8 && p <= 1.5 && t >= 0.8 && t <= 1.5) }'
}
