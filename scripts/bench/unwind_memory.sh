#!/usr/bin/env bash
# Unwind-table memory of `-a --call-graph ehframe` on a host running many
# distinct binaries (issue 18: the systemd unit's default and its memory
# bound are chosen from it).  Starts processes that map a few hundred
# distinct executable files between them (python3 importing every
# extension module it has, node, mono, perl with its XS modules, clang,
# gdb, and Debian's services already running), waits until they have
# mapped them, then records the whole host for BENCH_UNWIND_SECONDS
# (default 10) at 19 Hz, as the unit does, and reports what precord -v
# says of its tables next to the number of distinct executable files
# mapped and the bytes of their .eh_frame and .eh_frame_hdr sections.
# Reports, never fails on figures: it fails only when a tool fails.
#
# Output: build/bench/unwind_memory.txt; docs/benchmarks.md explains it.
set -euo pipefail
cd "$(dirname "$0")/../.."
. scripts/bench/lib.bash

need_root "precord -a loads BPF"
need_tools readelf python3
need_built

bench_setup
bench_env
SECS=${BENCH_UNWIND_SECONDS:-10}
P=$root/build/precord
cd "$tmp"
report=$out/unwind_memory.txt
: > "$report"
say() { echo "$*" | tee -a "$report"; }
pids=()
# every process in its own group, killed whole at the end
start() { setsid "$@" & pids+=($!); }
bench_cleanup() {
	local p
	for p in "${pids[@]}"; do kill -- -"$p" 2>/dev/null || true; done
	wait "${pids[@]}" 2>/dev/null || true
}

# python3 with every extension module of its lib-dynload and dist-packages
cat > imp.py <<'EOF'
import glob, importlib, os, sys, time
n = 0
for d in sys.path:
    for f in glob.glob(os.path.join(d, "*.so")) + glob.glob(os.path.join(d, "*", "*.so")):
        name = os.path.basename(f).split(".")[0]
        try:
            importlib.import_module(name); n += 1
        except BaseException:
            pass
print(f"imported {n}", flush=True)
t = time.time() + 600
while time.time() < t:
    sum(range(10000)); time.sleep(0.01)
EOF
start /usr/bin/python3 imp.py > py.out 2>&1 < /dev/null
if command -v node >/dev/null; then
	start node -e 'setInterval(() => { let s = 0; for (let i = 0; i < 1e5; i++) s += i }, 10)'
fi
if command -v perl >/dev/null; then
	start perl -MPOSIX -MSocket -MData::Dumper -MStorable -MList::Util -MTime::HiRes -MFcntl -MIO::Handle \
		-e 'while (1) { Time::HiRes::sleep(0.01) }' 2>/dev/null
fi
if command -v clang >/dev/null; then
	# clang: libLLVM and libclang-cpp, the largest .eh_frame on the host
	printf 'int main(void) { return 0; }\n' > t.c
	start bash -c 'while :; do clang -O2 -c t.c -o t.o 2>/dev/null; done'
fi
if command -v gdb >/dev/null; then
	start gdb -q -batch -ex 'shell sleep 600' >/dev/null 2>&1 < /dev/null
fi
if command -v mono >/dev/null && [ -f "$root/tests/workloads/cs/Hot.cs" ] && command -v mcs >/dev/null; then
	mcs -out:hot.exe "$root/tests/workloads/cs/Hot.cs" >/dev/null 2>&1 &&
		start mono hot.exe 600 >/dev/null 2>&1
fi
for _ in $(seq 100); do grep -q imported py.out 2>/dev/null && break; sleep 0.1; done
sleep 2

# distinct executable files mapped on the host now, and their CFI bytes
for m in /proc/[0-9]*/maps; do cat "$m" 2>/dev/null || true; done | awk '$2 ~ /x/ && $6 ~ /^\// { print $6 }' | sort -u > files
nfiles=$(wc -l < files)
cfi=$(python3 -c '
import re, subprocess, sys
total = 0
for f in open(sys.argv[1]).read().split():
    r = subprocess.run(["readelf", "-SW", f], capture_output=True, text=True)
    for m in re.finditer(r"\]\s+(\.eh_frame(?:_hdr)?)\s+\S+\s+[0-9a-f]+\s+[0-9a-f]+\s+([0-9a-f]+)", r.stdout):
        total += int(m.group(2), 16)
print(total)
' files)

say "== unwind table memory ($(nproc) CPUs, load $(cut -d' ' -f1-3 /proc/loadavg), $(sed -n 's/^imported //p' py.out) python extension modules)"
say "distinct executable files mapped on the host: $nfiles, their .eh_frame + .eh_frame_hdr: $((cfi / 1024)) KiB"
"$P" -a --call-graph ehframe -F 19 -v -o u.data -- sleep "$SECS" 2> rec.err >/dev/null
grep -E 'unwind (tables|walks)' rec.err | sed 's/^precord: //' | while read -r l; do say "$l"; done
rss=$( (/usr/bin/time -f '%M' "$P" -a --call-graph ehframe -F 19 -q -o v.data -- sleep 2 >/dev/null) 2>&1 | tail -n 1)
say "recorder peak RSS (a 2 s run): $((rss / 1024)) MiB"
