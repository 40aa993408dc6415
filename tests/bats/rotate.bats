#!/usr/bin/env bats
# File rotation (--switch-output, issue 11): every rotated file stands
# alone (its own features, build-ids, the processes that started long
# before, JIT code), no sample falls between two files or lands in two,
# each finished file is announced on stdout, the oldest are removed with
# --switch-max-files, and SIGUSR2/SIGHUP switch, SIGTERM finishes.

load helpers

JS=$ROOT/tests/workloads/js/hot.js

setup() {
	common_setup
	require_recording
	: > "$T/bg.pids"
}

teardown() {
	if [ -n "${T:-}" ] && [ -f "$T/bg.pids" ]; then
		for p in $(cat "$T/bg.pids"); do kill -9 "$p" 2>/dev/null || true; done
		wait 2>/dev/null || true
	fi
	common_teardown
}

# rotated [BASE]: the rotated files of BASE (default perf.data) in this
# directory, oldest first (perf.data.jit, the JIT images, is not one).
rotated() {
	ls -1 | grep -E "^${1:-perf.data}\.[0-9]{16}\$" | sort
}

# samples FILE: PERF_RECORD_SAMPLE records in FILE, as perf counts them.
samples() {
	perf report -i "$1" --stats 2>/dev/null | awk '/SAMPLE events:/ { print $3; exit }'
}

# record_files N OPTS...: precord OPTS (announced on stdout into announced,
# stderr in err) until N files are announced, then SIGTERM, which finishes
# one more: a count of files, not of seconds (a busy machine stretches
# 2 s files: 5 in 13 s seen); fails if precord does.
record_files() {
	local n=$1 rec; shift
	"$PRECORD" "$@" > announced 2> err & rec=$!; echo $rec >> bg.pids
	for _ in $(seq 600); do
		[ "$(wc -l < announced)" -ge "$n" ] && break
		sleep 0.1
	done
	kill -TERM $rec
	wait $rec || { cat err >&2; false; }
}

@test "-a --switch-output=2s --switch-max-files=3: every kept file stands alone, C and JS functions named in each" {
	need "node" command -v node
	"$WL" threads 2 60 >/dev/null & wl=$!; echo $wl >> bg.pids
	node --perf-prof --interpreted-frames-native-stack "$JS" 60 >/dev/null & js=$!; echo $js >> bg.pids
	sleep 2		# both run, JIT code compiled, before precord starts
	record_files 4 -a -g -F 199 --switch-output=2s --switch-max-files=3
	cat announced err >&2
	kept=$(rotated | wc -l)
	[ "$kept" -eq 3 ]
	[ ! -e perf.data ]
	# every switch announced; the last 3 kept
	[ "$(wc -l < announced)" -ge 5 ]
	[ "$(tail -n "$kept" announced)" = "$(rotated)" ]
	for f in $(head -n -3 announced); do [ ! -e "$f" ]; done
	for f in $(rotated); do
		lint "$f" --require BUILD_ID,CPU_TOPOLOGY
		# shares within each process, counted per sample (perf report's
		# --pid filters merged entries, and loses a symbol whose entry
		# another process running the same binary made first): what else
		# runs does not change them; both run their hot functions only,
		# so a few percent named is no chance
		read -r c _ ca < <(named_of "$f" "$wl" hot_a)
		read -r j _ ja < <(named_of "$f" "$js" hotFifty)
		echo "$f: hot_a $c of the workload's $ca samples, hotFifty $j of node's $ja" >&2
		[ "$ca" -gt 0 ] && [ "$ja" -gt 0 ]
		[ $((c * 20)) -gt "$ca" ] && [ $((j * 20)) -gt "$ja" ]
		# the C program's threads have their names in each file
		perf report -i "$f" --stdio --no-children -g none --sort comm -q 2>/dev/null | grep -q 'worker-'
	done
}

@test "SIGUSR2 and SIGHUP switch (signal mode); the files together hold every sample once" {
	"$PRECORD" -a -F 499 --switch-output -o s.data -- "$WL" threads 2 4 > announced 2> err &
	pid=$!
	echo $pid >> bg.pids
	sleep 1.5
	kill -USR2 $pid
	sleep 1
	kill -HUP $pid
	wait $pid || { cat err >&2; false; }
	cat announced err >&2
	[ "$(wc -l < announced)" -eq 3 ]
	[ "$(cat announced)" = "$(rotated s.data)" ]
	total=$(sed -n 's/.*(\([0-9]*\) samples, 0 lost).*/\1/p' err)
	sum=0
	for f in $(rotated s.data); do
		n=$(samples "$f")
		echo "$f: $n samples" >&2
		[ "$n" -gt 100 ]
		sum=$((sum + n))
	done
	echo "summary $total, files $sum" >&2
	[ "$sum" -eq "$total" ]
	lint "$(sed -n 2p announced)" --require BUILD_ID
}

@test "--switch-output=SIZE without -a: each file starts with the command's names and mappings" {
	"$PRECORD" -g -F 999 --switch-output=100K -- "$WL" threads 2 3 > announced 2> err ||
		{ cat err >&2; false; }
	cat announced err >&2
	[ "$(wc -l < announced)" -ge 3 ]
	last=$(tail -1 announced)
	for f in $(head -n -1 announced); do
		size=$(stat -c %s "$f")
		[ "$size" -ge 100000 ]
	done
	# a middle file: no COMM/MMAP2 of the command but those of its head,
	# and perf still names the command and its functions
	f=$(sed -n 2p announced)
	lint "$f" --require BUILD_ID,CPU_TOPOLOGY
	perf report -i "$f" --stdio --no-children --sort comm,dso,sym -q 2>/dev/null | grep -E 'worker-.*workload.*hot_a'
	lint "$last"
}

# stray_jit FILE: the pids FILE maps JIT images for (MMAP2 of *.jit/jit-N.so)
# with no COMM or FORK of theirs in FILE: processes the file does not
# cover.  Prints them, one a line; "JITPIDS STRAYS" on stderr.
stray_jit() {
	perf script --show-mmap-events --show-task-events -i "$1" 2>/dev/null | awk '
		/PERF_RECORD_MMAP2 / && /\.jit\/jit-[0-9]+\.so$/ {
			for (i = 1; i <= NF; i++)
				if ($i == "PERF_RECORD_MMAP2") { split($(i + 1), a, "/"); jit[a[1] + 0] = 1 }
		}
		/PERF_RECORD_COMM: / { n = split($0, a, ":"); split(a[n], b, "/"); live[b[1] + 0] = 1 }
		/PERF_RECORD_FORK\(/ { s = $0; sub(/.*PERF_RECORD_FORK\(/, "", s); split(s, a, ":"); live[a[1] + 0] = 1 }
		END {
			for (p in jit) { nj++; if (!(p in live)) { print p; ns++ } }
			printf "%d %d\n", nj, ns > "/dev/stderr"
		}'
}

# jit_pids_of FILE: the pids FILE maps JIT images for, one a line
jit_pids_of() {
	perf script --show-mmap-events -i "$1" 2>/dev/null | awk '
		/PERF_RECORD_MMAP2 / && /\.jit\/jit-[0-9]+\.so$/ {
			for (i = 1; i <= NF; i++)
				if ($i == "PERF_RECORD_MMAP2") { split($(i + 1), a, "/"); print a[1] + 0 }
		}' | sort -u
}

# jit_images FILE: the JIT images FILE's mappings name (basenames), sorted
jit_images() {
	perf script --show-mmap-events -i "$1" 2>/dev/null |
		grep -o '\.jit/jit-[0-9]*\.so$' | sed 's|^\.jit/||' | sort -u
}

# started FILE...: the pids of the processes FILEs saw start (a FORK of a
# new process, not of a thread), one a line
started() {
	local f
	for f in "$@"; do
		perf script --show-task-events -i "$f" 2>/dev/null | awk '/PERF_RECORD_FORK\(/ {
			s = $0; sub(/.*PERF_RECORD_FORK\(/, "", s); split(s, c, /[:)]/)
			p = s; sub(/.*\):\(/, "", p); split(p, q, ":")
			if (c[1] == c[2] && c[1] != q[1]) print c[1]
		}'
	done | sort -u
}

# hot_samples PIDS FILE...: the samples the processes in PIDS (a file, one
# a line) have in the three JS functions, all of them, over FILEs
hot_samples() {
	local pids=$1 f
	shift
	for f in "$@"; do
		perf report -i "$f" --stdio --no-children -g none --sort pid,sym -q -n 2>/dev/null
	done | awk -v pf="$pids" '
		BEGIN { while ((getline l < pf) > 0) want[l + 0] = 1 }
		{ split($3, a, ":"); if (!(a[1] + 0 in want)) next; all += $2 }
		/hot(Fifty|Thirty|Twenty)/ { hot += $2 }
		END { printf "%d %d\n", hot, all }'
}

@test "JIT processes coming and going: each file maps the JIT code of its own processes, named; images go with their files" {
	need "node" command -v node
	mkdir saved
	# a new node process as soon as the last ends (~0.3 s of CPU each)
	# for 8 s, files of 1 s, 3 kept; each file is linked as it is announced
	# (seconds before its removal); the node pids in nodes, what each
	# measured (hot.js's "hot.js cpu ... pid N" line) in node.out
	"$PRECORD" -g -F 199 --switch-output=1s --switch-max-files=3 -- bash -c \
		'while [ $SECONDS -lt 8 ]; do node --perf-prof "$1" 0.3 >> node.out & echo $! >> nodes; wait $!; done' \
		bash "$JS" 2> err | while read -r f; do ln "$f" saved/; echo "$f"; done > announced
	cat err >&2
	grep -q 'Captured and wrote' err
	sort -u nodes -o nodes
	echo "node processes: $(wc -l < nodes); files: $(wc -l < announced)" >&2
	# 8 s of wall time at least, whatever the machine: 8 or 9 files, but
	# a busy machine delays switches (seen: one file of 2 s, 7 files); the
	# checks below need 5
	[ "$(wc -l < announced)" -ge 5 ]
	# the processes came and went: the test needs at least three
	[ "$(wc -l < nodes)" -ge 3 ]
	: > jit_pids
	for f in $(cat announced); do
		stray=$(stray_jit "saved/$f" 2> counts)
		echo "$f: JIT pids and strays: $(cat counts); strays: $stray" >&2
		# an exited process's JIT mappings stay in the files it was in,
		# and one started after a switch is the next file's only
		[ -z "$stray" ]
		# no file holds the JIT code of every process
		[ "$(cut -d' ' -f1 counts)" -lt "$(wc -l < nodes)" ]
		jit_pids_of "saved/$f" >> jit_pids
		lint "saved/$f" --require BUILD_ID
	done
	# every node process that ran had its JIT code mapped in some file,
	# and no other process did
	sort -u jit_pids -o jit_pids
	diff nodes jit_pids >&2
	# JS functions named in the kept files: the node processes that
	# started in them (so whole there) have as many samples in the three
	# functions as their CPU time there gives at 199 Hz (cpu-clock: a
	# sample per 1/199 s of a thread's CPU time), as they measured it
	started $(tail -3 announced) | comm -12 - nodes > whole
	echo "node processes whole in the kept files: $(tr '\n' ' ' < whole)" >&2
	read -r hot all < <(hot_samples whole $(tail -3 announced))
	want=$(awk -v pf=whole 'BEGIN { while ((getline l < pf) > 0) w[l + 0] = 1 }
		$1 == "hot.js" && $2 == "cpu" && ($12 + 0 in w) { s += $4 + $6 + $8 }
		END { printf "%.0f\n", 199 * s }' node.out)
	echo "their samples: $all, in hotFifty/hotThirty/hotTwenty $hot, measured $want" >&2
	# within 4 sd of a count of WANT Poisson events (a timer's samples
	# scatter less); below, also a fifth for what node's clock counts
	# that is not the functions' own (V8 compiling them on its threads in
	# the warm-up: seen 36 samples for 48 measured).  WANT >= 30 (each
	# process has ~0.1 s in them, ~20 samples) so that none fails.
	[ "$want" -ge 30 ]
	awk -v h="$hot" -v w="$want" 'BEGIN {
		exit !(h >= w - 4 * sqrt(w) - w / 5 && h <= w + 4 * sqrt(w)) }'
	# images: every one a kept file names is there; the rest are gone but
	# those of the file removed when the last was announced (no switch
	# after it to prune them)
	ls perf.data.jit | grep -E '^jit-[0-9]+\.so$' | sort > on_disk
	for f in $(tail -3 announced); do jit_images "$f"; done | sort -u > kept_named
	jit_images "saved/$(tail -4 announced | head -1)" > last_removed
	echo "images on disk $(wc -l < on_disk), named by kept files $(wc -l < kept_named)" >&2
	[ -z "$(comm -13 on_disk kept_named)" ]
	[ -z "$(sort -u kept_named last_removed | comm -23 on_disk -)" ]
	# which is no empty check: the first file named images of node
	# processes long gone, which only removed files named
	[ -n "$(jit_images "saved/$(head -1 announced)" | comm -23 - kept_named | comm -23 - last_removed)" ]
	# the build-id cache holds copies of the images on disk only
	find "$HOME/.debug$PWD/perf.data.jit" -name elf | awk -F/ '{ print $(NF - 2) }' |
		sort -u > cached
	echo "images in the build-id cache $(wc -l < cached)" >&2
	[ -s cached ]
	[ -z "$(comm -23 cached on_disk)" ]
}

@test "SIGTERM finishes the current file, announced and complete" {
	"$PRECORD" -a -F 99 --switch-output=1s -o t.data > announced 2> err &
	pid=$!
	echo $pid >> bg.pids
	sleep 2.6
	kill -TERM $pid
	wait $pid || { cat err >&2; false; }
	cat announced err >&2
	[ "$(wc -l < announced)" -ge 2 ]
	[ "$(cat announced)" = "$(rotated t.data)" ]
	[ ! -e t.data ]
	lint "$(tail -1 announced)"
}

@test "--switch-max-files needs --switch-output; a bad --switch-output is refused" {
	run "$PRECORD" --switch-max-files=2 -a -- true
	[ "$status" -ne 0 ]
	echo "$output" | grep -q 'needs --switch-output'
	run "$PRECORD" --switch-output=5x -a -- true
	[ "$status" -ne 0 ]
	echo "$output" | grep -q 'bad --switch-output'
}

# named_of FILE PID FUNC: "NAMED UNNAMED ALL", the samples of process PID
# in FILE in FUNC, in no mapping or an unnamed one, and in all.
named_of() {
	perf script -G -i "$1" -F pid,ip,sym,dso 2>/dev/null | awk -v p="$2" -v fn="$3" '
		$1 == p { all++; if (index($0, fn)) named++
			  else if (index($0, "[unknown]") || index($0, "[JIT] tid")) unnamed++ }
		END { printf "%d %d %d\n", named, unnamed, all }'
}

# steady_files MAXFILES: node --perf-prof and node --perf-basic-prof, both
# compiling their hot function once and then running it only, started
# before an -a recording of seven 2 s files; every kept file must name the
# function in most of each process's samples.  V8 keeps its jitdump in a
# 2 MiB stdio buffer: the function's record stays in node's memory.
steady_files() {
	local steady=$ROOT/tests/workloads/js/steady.js
	node --perf-prof "$steady" 60 >/dev/null & jd=$!; echo $jd >> bg.pids
	node --perf-basic-prof "$steady" 60 >/dev/null & pm=$!; echo $pm >> bg.pids
	sleep 1.5		# both compiled their code before the recording
	record_files 6 -q -a -g -F 199 --switch-output=2s ${1:+--switch-max-files=$1}
	kill $jd $pm; wait $jd $pm 2>/dev/null || true
	rm -f /tmp/perf-$pm.map
	cat err >&2
	[ "$(wc -l < announced)" -ge 7 ]
	bad=0
	last=$(rotated | tail -1)
	for f in $(rotated); do
		for p in $jd $pm; do
			# steadyHot, or the script's top level once V8 compiles
			# its loop (~12 s in) with steadyHot inlined: JS of
			# steady.js either way, named from the buffer's records
			read -r named unnamed all < <(named_of "$f" "$p" steady.js)
			echo "$f: pid $p: steady.js's JS $named, unnamed $unnamed of $all samples" >&2
			# 30-400 samples a process a 2 s file (a busy machine gives
			# less; the last file, cut by SIGTERM, may have a few); the
			# loop is nearly all of its time (Date.now and GC are the
			# rest): over 90% seen
			[ "$all" -ge 10 ] || [ "$f" = "$last" ] || bad=1
			[ $((named * 2)) -ge "$all" ] || bad=1
			# unnamed: code made in the last moments of a file, whose
			# perf-map line comes after it (once 6 of 81); the bug this
			# guards against left 100% unnamed
			[ $((unnamed * 10)) -le "$all" ] || bad=1
		done
	done
	lint "$(rotated | head -1)" --require BUILD_ID
	lint "$last" --require BUILD_ID
	[ $bad -eq 0 ]
}

@test "a JIT service in steady state (code compiled once, before the recording): its function named in every rotated file, jitdump and perf map" {
	need "node" command -v node
	steady_files ""
	[ "$(rotated | wc -l)" -ge 6 ]
}

@test "the same with --switch-max-files=3: the last files, long after the code was compiled, name it" {
	need "node" command -v node
	steady_files 3
	[ "$(rotated | wc -l)" -eq 3 ]
}

# Issue 18, finding 14: in a directory others can write, every
# OUT.<timestamp> name of the coming seconds made beforehand (files, and
# symlinks to a root file): each switch takes OUT.<timestamp>.N, nothing
# planted is touched, the recording runs to its end.
@test "planted OUT.<timestamp> names: the switches take OUT.<timestamp>.N and the recording goes on" {
	printf 'root secret\n' > victim && chmod 600 victim
	# the next 30 s, every centisecond: even ones files, odd ones symlinks
	python3 - "$T/victim" <<'EOF'
import os, sys, time
now = int(time.time())
for s in range(now, now + 30):
    stamp = time.strftime("%Y%m%d%H%M%S", time.localtime(s))
    for cc in range(100):
        name = "perf.data.%s%02d" % (stamp, cc)
        if cc % 2:
            os.symlink(sys.argv[1], name)
        else:
            open(name, "w").close()
EOF
	planted=$(ls | grep -c '^perf\.data\.')
	"$PRECORD" -F 199 --switch-output=1s -- "$WL" hot3 4 > announced 2> err ||
		{ cat err >&2; false; }
	cat announced err >&2
	[ "$(wc -l < announced)" -ge 3 ]
	for f in $(cat announced); do
		[[ "$f" =~ ^perf\.data\.[0-9]{16}\.1$ ]]
		[ -f "$f" ] && [ ! -L "$f" ]
		[ "$(samples "$f")" -gt 0 ]
	done
	[ "$(cat victim)" = "root secret" ]
	[ "$(stat -c %a victim)" = 600 ]
	[ "$(find . -maxdepth 1 -name 'perf.data.*' -type f -size +0 | grep -vc '\.1$')" -eq 0 ]
	[ "$(ls | grep -c '^perf\.data\.')" -eq $((planted + $(wc -l < announced))) ]
	[ ! -e perf.data ]
}
