#!/usr/bin/env bash
# Tracing benchmark: the cost of one traced call (entry + return of
# `inner` in build/workloads/tracee) under precord --trace, against
# bpftrace's bare counting of the same uprobe + uretprobe and against
# perf probe + perf record, in the same run.  Reports numbers and ratios;
# it fails only when a tool fails.
#
#   scripts/bench/trace.sh             (make bench runs it via run.sh)
#
# Each run is `tracee 1 N` (two threads, N calls of inner() each) with
# TRACEE_TIME=1, so each thread prints how long its calls took; the
# tracee also runs under a small wrapper (runru) that reports its CPU time
# (user + sys: the uprobe traps and BPF programs run in the tracee's own
# context).  Per configuration and repetition, in a shuffled order:
#
#   baseline   nothing attached
#   bpftrace   uprobe:BIN:inner { @c = count(); } + uretprobe (@r), started
#              before the run, measured once both probes are attached
#   precord    precord --trace BIN:inner -vv -o FILE -- runru tracee 1 N
#   perf       perf probe BIN inner and inner%return, then
#              perf record -k mono -m 2048 -e G:inner -e G:inner__return
#              -- runru tracee 1 N   (-m 2048: the 8 MiB per CPU precord's
#              ring buffer has)
#
# in two placements: "2cpu" (nothing pinned: the tracee's two threads and
# the tool's user space share the machine's CPUs) and "pinned" (tracee on
# CPU 0, the tool on the other CPUs: only what happens in the tracee's own
# context is left; both threads then share CPU 0).
#
# Figures (medians over the repetitions, minus the baseline's median):
#   wall ns/call    2cpu: mean of the two threads' times / N;
#                   pinned: the later thread's time / 2N (threads interleave)
#   CPU ns/call     tracee user+sys / 2N
#   tool ns/call    the tool's own CPU (its wait4 rusage minus the tracee's) / 2N
#   ring B/call     precord: ring-buffer bytes (8-byte ring headers included,
#                   from precord -vv) per call (entry + return)
#   file B/call     size of the output file / 2N
#
# Knobs (environment): BENCH_TRACE_CALLS (N, default 200000),
# BENCH_TRACE_REPS (default 7), BENCH_OUT (default build/bench).
# Output: a table on stdout; build/bench/trace.tsv (medians, '#' lines
# carry the machine, date and versions), build/bench/trace-runs.tsv (every
# run), build/bench/trace.txt (the table).  Explained in
# docs/benchmarks-trace-jit.md.
#
# Hermetic: a copy of tracee in a temporary directory (so no other
# session's uprobes on build/workloads/tracee fire in it), HOME and
# PERF_CONFIG there; tracefs is mounted at /sys/kernel/tracing if it is not
# (and unmounted afterwards); the perf probes are deleted on exit.
set -u
cd "$(dirname "$0")/../.." || exit 1
root=$PWD

die() { echo "trace.sh: $*" >&2; exit 1; }
[ "$(id -u)" = 0 ] || die "must run as root (uprobes, BPF)"
for t in perf bpftrace python3 taskset "${CC:-cc}"; do
	command -v "$t" >/dev/null || die "$t is not installed (scripts/deps.sh installs it)"
done
[ -x build/precord ] || die "build/precord is missing: run make"
[ -x build/workloads/tracee ] || die "build/workloads/tracee is missing: run make"

tmp=$(mktemp -d "${TMPDIR:-/tmp}/precord-bench-trace.XXXXXX") || die "mktemp failed"
group="precbench$$"
mounted=0
probes=0
cleanup() {
	if [ $probes = 1 ]; then
		HOME=$tmp/home perf probe -q -d "$group:*" >/dev/null 2>&1 ||
			echo "trace.sh: could not delete perf probes $group:*" >&2
	fi
	if [ $mounted = 1 ]; then
		umount /sys/kernel/tracing 2>/dev/null || echo "trace.sh: could not unmount /sys/kernel/tracing" >&2
	fi
	rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 130' INT TERM HUP
mkdir -p "$tmp/home"
: >"$tmp/perfconfig"
export HOME=$tmp/home PERF_CONFIG=$tmp/perfconfig LC_ALL=C PAGER=cat
unset PERF_BUILDID_DIR
out=${BENCH_OUT:-$root/build/bench}
mkdir -p "$out" || die "cannot create $out"

cp build/workloads/tracee "$tmp/tracee" || die "cannot copy tracee"
bin=$tmp/tracee

# runru OUT CMD ARGS: runs CMD, then writes its "user_us sys_us maxrss_kb
# exit_status" (from wait4) to OUT and exits with its status.
cat >"$tmp/runru.c" <<'C'
#include <stdio.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>
int main(int argc, char **argv)
{
	struct rusage ru;
	int st;
	pid_t pid;
	FILE *f;

	if (argc < 3)
		return 2;
	pid = fork();
	if (pid == 0) {
		execv(argv[2], argv + 2);
		_exit(127);
	}
	while (wait4(pid, &st, 0, &ru) < 0)
		;
	f = fopen(argv[1], "w");
	if (!f)
		return 2;
	fprintf(f, "%ld %ld %ld %d\n",
		(long)ru.ru_utime.tv_sec * 1000000 + ru.ru_utime.tv_usec,
		(long)ru.ru_stime.tv_sec * 1000000 + ru.ru_stime.tv_usec, ru.ru_maxrss,
		WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st));
	fclose(f);
	return WIFEXITED(st) ? WEXITSTATUS(st) : 1;
}
C
"${CC:-cc}" -O2 -Wall -o "$tmp/runru" "$tmp/runru.c" || die "cannot build runru"

if ! [ -e /sys/kernel/tracing/uprobe_events ]; then
	mount -t tracefs nodev /sys/kernel/tracing || die "cannot mount tracefs at /sys/kernel/tracing"
	mounted=1
fi
probes=1
if ! perf probe -q -x "$bin" -a "$group:inner=inner" >"$tmp/probe.log" 2>&1 ||
	! perf probe -q -x "$bin" -a "$group:inner=inner%return" >>"$tmp/probe.log" 2>&1; then
	cat "$tmp/probe.log" >&2
	die "perf probe failed"
fi

cat >"$tmp/bench.py" <<'PY'
import json, os, random, re, shutil, signal, statistics, struct, subprocess, sys, time

ROOT, TMP, OUT, BIN, GROUP = sys.argv[1:6]
PRECORD = f"{ROOT}/build/precord"
RUNRU = f"{TMP}/runru"
N = int(os.environ.get("BENCH_TRACE_CALLS", "200000"))
REPS = int(os.environ.get("BENCH_TRACE_REPS", "7"))
NCPU = os.cpu_count() or 1
MODES = ["2cpu", "pinned"] if NCPU >= 2 else ["2cpu"]
TOOL_CPUS = "1" if NCPU == 2 else f"1-{NCPU - 1}"
TOOLS = ["baseline", "bpftrace", "precord", "perf"]
BPFTOOL = shutil.which("bpftool") or "/usr/sbin/bpftool"
ENV = dict(os.environ, TRACEE_TIME="1")
children = set()
stats = dict(waited=0.0, perf_aborts=0)
notes = []


def note(msg):
    print(msg, file=sys.stderr, flush=True)


def fail(msg, log=None):
    note(f"trace.sh: {msg}")
    if log and os.path.exists(log):
        note("".join(open(log, errors="replace").readlines()[-20:]))
    raise SystemExit(1)


def spawn(argv, log):
    fa = [(os.POSIX_SPAWN_OPEN, 0, "/dev/null", os.O_RDONLY, 0),
          (os.POSIX_SPAWN_OPEN, 1, log, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600),
          (os.POSIX_SPAWN_DUP2, 1, 2)]
    pid = os.posix_spawnp(argv[0], argv, ENV, file_actions=fa)
    children.add(pid)
    return pid


def reap(pid):
    _, st, ru = os.wait4(pid, 0)
    children.discard(pid)
    return os.waitstatus_to_exitcode(st), ru


def bpf_progs():
    try:
        r = subprocess.run([BPFTOOL, "prog", "list", "-j"], stdout=subprocess.PIPE,
                           stderr=subprocess.DEVNULL, text=True, timeout=10)
        return len(json.loads(r.stdout or "[]"))
    except (OSError, ValueError, subprocess.SubprocessError):
        return -1


def wait_quiet():
    """perf 6.1 aborts (SIGABRT, util/build-id.c assertion) when it records
    while another session's BPF programs are loaded (see record.sh): wait up
    to 20 s per run, 60 s in all, for none to be loaded."""
    t = time.time()
    limit = min(20.0, max(0.0, 60.0 - stats["waited"]))
    while bpf_progs() > 0 and time.time() - t < limit:
        time.sleep(0.5)
    stats["waited"] += time.time() - t


def pin(mode, who):
    if mode != "pinned":
        return []
    return ["taskset", "-c", "0" if who == "tracee" else TOOL_CPUS]


def tracee_argv(mode, rufile):
    return pin(mode, "tracee") + [RUNRU, rufile, BIN, "1", str(N)]


def parse_tracee(log, rufile, mode, what):
    text = open(log, errors="replace").read()
    th = [int(ns) for _t, c, ns in re.findall(r"tracee: thread (\d): (\d+) calls in (\d+) ns", text)]
    if len(th) != 2 or not os.path.exists(rufile):
        fail(f"{what}: the tracee did not report its times", log)
    u, s, _rss, st = open(rufile).read().split()
    if int(st):
        fail(f"{what}: the tracee exited {st}", log)
    os.unlink(rufile)
    wall = (max(th) / (2 * N)) if mode == "pinned" else (sum(th) / 2 / N)
    return dict(wall=wall, cpu=(int(u) + int(s)) * 1000 / (2 * N), tracee_cpu_us=int(u) + int(s))


def scan(path):
    """perf.data: SAMPLE records and lost events.  perf 6.1 reports the
    same losses twice: the kernel's PERF_RECORD_LOST records and, at the
    end, PERF_RECORD_LOST_SAMPLES from each event's lost count: the larger
    of the two sums."""
    with open(path, "rb") as f:
        d = f.read()
    if d[:8] != b"PERFILE2":
        fail(f"{path}: not a perf.data file")
    off, size = struct.unpack_from("<QQ", d, 40)
    pos, end, samples, lost, lost_samples = off, off + size, 0, 0, 0
    while pos + 8 <= end:
        typ, _m, sz = struct.unpack_from("<IHH", d, pos)
        if sz < 8:
            fail(f"{path}: bad record at {pos}")
        if typ == 9:
            samples += 1
        elif typ == 2:
            lost += struct.unpack_from("<Q", d, pos + 16)[0]
        elif typ == 13:
            lost_samples += struct.unpack_from("<Q", d, pos + 8)[0]
        pos += sz
    return samples, max(lost, lost_samples)


def run_baseline(mode, d):
    log, ru = f"{d}/base.log", f"{d}/base.ru"
    rc, _ = reap(spawn(tracee_argv(mode, ru), log))
    if rc:
        fail(f"baseline tracee exited {rc}", log)
    return parse_tracee(log, ru, mode, "baseline")


def bpftrace_attached(pid):
    try:
        r = subprocess.run([BPFTOOL, "perf", "show", "-j"], stdout=subprocess.PIPE,
                           stderr=subprocess.DEVNULL, text=True, timeout=10)
        kinds = {e.get("fd_type") for e in json.loads(r.stdout or "[]")
                 if e.get("pid") == pid and e.get("filename") == BIN}
        return {"uprobe", "uretprobe"} <= kinds
    except (OSError, ValueError, subprocess.SubprocessError):
        return None


def run_bpftrace(mode, d):
    blog, log, ru = f"{d}/bpftrace.out", f"{d}/bt-tracee.log", f"{d}/bt.ru"
    prog = f"uprobe:{BIN}:inner {{ @c = count(); }} uretprobe:{BIN}:inner {{ @r = count(); }}"
    bp = spawn(pin(mode, "tool") + ["bpftrace", "-e", prog], blog)
    t0 = time.time()
    while True:
        if os.waitpid(bp, os.WNOHANG)[0]:
            children.discard(bp)
            fail("bpftrace exited before attaching", blog)
        if "Attaching" in open(blog, errors="replace").read():
            ok = bpftrace_attached(bp)
            if ok or (ok is None and time.time() - t0 > 1.0):
                break
        if time.time() - t0 > 30:
            os.kill(bp, signal.SIGKILL)
            reap(bp)
            fail("bpftrace did not attach within 30 s", blog)
        time.sleep(0.05)
    if ok is None:
        time.sleep(1.0)
    rc, _ = reap(spawn(tracee_argv(mode, ru), log))
    os.kill(bp, signal.SIGINT)
    brc, _ = reap(bp)
    if rc:
        fail(f"tracee under bpftrace exited {rc}", log)
    r = parse_tracee(log, ru, mode, "bpftrace")
    text = open(blog, errors="replace").read()
    c = re.search(r"@c: (\d+)", text)
    rr = re.search(r"@r: (\d+)", text)
    if not c or not rr:
        fail(f"bpftrace printed no counts (exit {brc})", blog)
    r["counted"] = int(c.group(1)) + int(rr.group(1))
    if r["counted"] != 4 * N:
        notes.append(f"bpftrace {mode}: counted {r['counted']} hits, expected {4 * N}")
    return r


def run_precord(mode, d):
    log, ru, out = f"{d}/precord.log", f"{d}/precord.ru", f"{d}/precord.data"
    argv = pin(mode, "tool") + [PRECORD, "--trace", f"{BIN}:inner", "-vv", "-o", out, "--"]
    rc, rus = reap(spawn(argv + tracee_argv(mode, ru), log))
    if rc:
        fail(f"precord exited {rc}", log)
    r = parse_tracee(log, ru, mode, "precord")
    text = open(log, errors="replace").read()
    m = re.search(r"trace: (\d+) bytes in (\d+) blocks for (\d+) hits", text)
    s = re.search(r"\((\d+) samples, (\d+) traced calls, (\d+) lost\)", text)
    if not m or not s:
        fail("precord -vv printed no transport figures or summary", log)
    ring, hits = int(m.group(1)), int(m.group(3))
    r.update(ring_bpc=ring / (hits / 2) if hits else None, calls=int(s.group(2)),
             lost=int(s.group(3)), file_bpc=os.path.getsize(out) / (2 * N),
             tool=((rus.ru_utime + rus.ru_stime) * 1e6 - r["tracee_cpu_us"]) * 1000 / (2 * N))
    if r["calls"] != 2 * N:
        notes.append(f"precord {mode}: {r['calls']} traced calls, expected {2 * N}")
    os.unlink(out)
    return r


def run_perf(mode, d):
    log, ru, out = f"{d}/perf.log", f"{d}/perf.ru", f"{d}/perf.data"
    argv = pin(mode, "tool") + ["perf", "record", "-q", "-k", "mono", "-m", "2048", "-o", out,
                                "-e", f"{GROUP}:inner", "-e", f"{GROUP}:inner__return", "--"]
    for attempt in range(3):
        wait_quiet()
        rc, rus = reap(spawn(argv + tracee_argv(mode, ru), log))
        if rc == -signal.SIGABRT:
            stats["perf_aborts"] += 1
            note(f"  perf record aborted (BPF programs loaded: {bpf_progs()}); again")
            continue
        break
    if rc:
        fail(f"perf record exited {rc}", log)
    r = parse_tracee(log, ru, mode, "perf")
    samples, lost = scan(out)
    r.update(calls=samples // 2, lost=lost, file_bpc=os.path.getsize(out) / (2 * N),
             tool=((rus.ru_utime + rus.ru_stime) * 1e6 - r["tracee_cpu_us"]) * 1000 / (2 * N))
    os.unlink(out)
    return r


RUN = dict(baseline=run_baseline, bpftrace=run_bpftrace, precord=run_precord, perf=run_perf)


def med(rows, key):
    v = [r[key] for r in rows if r.get(key) is not None]
    return statistics.median(v) if v else None


def main():
    t_begin = time.time()
    rng = random.Random(3)
    d = f"{TMP}/run"
    os.makedirs(d, exist_ok=True)
    note(f"trace bench: tracee 1 {N} (2 threads), {REPS} repetitions x {len(MODES)} placements "
         f"x {len(TOOLS)} configurations")
    # Warm-up, not measured: page cache, bpftrace's and precord's first load.
    for tool in ("baseline", "bpftrace", "precord"):
        RUN[tool]("2cpu", d)
    runs = []
    for rep in range(REPS):
        confs = [(m, t) for m in MODES for t in TOOLS]
        rng.shuffle(confs)
        for mode, tool in confs:
            runs.append((mode, tool, rep, RUN[tool](mode, d)))
        note(f"  repetition {rep + 1}/{REPS} done ({time.time() - t_begin:.0f} s)")
    report(runs, time.time() - t_begin)


def fmt(v, f, plus=False):
    if v is None:
        return "-"
    return (("+" if plus and v >= 0 else "") + format(v, f))


def report(runs, elapsed):
    summary, lines = [], []
    for mode in MODES:
        g = {t: [r for m, tt, _, r in runs if (m, tt) == (mode, t)] for t in TOOLS}
        bw, bc = med(g["baseline"], "wall"), med(g["baseline"], "cpu")
        for t in TOOLS:
            rows = g[t]
            w, c = med(rows, "wall"), med(rows, "cpu")
            summary.append(dict(
                mode=mode, tool=t, reps=len(rows), calls_per_thread=N,
                wall_ns=w, cpu_ns=c,
                added_wall_ns=None if t == "baseline" else w - bw,
                added_cpu_ns=None if t == "baseline" else c - bc,
                tool_cpu_ns=med(rows, "tool"), ring_bytes_per_call=med(rows, "ring_bpc"),
                file_bytes_per_call=med(rows, "file_bpc"),
                lost=max((r.get("lost", 0) for r in rows), default=0),
                wall_min=min((r["wall"] for r in rows), default=None),
                wall_max=max((r["wall"] for r in rows), default=None)))

    def find(mode, tool):
        return next(s for s in summary if (s["mode"], s["tool"]) == (mode, tool))

    hdr = (f"{'placement':<9} {'tool':<9} {'wall ns/call':>12} {'(min-max)':>13} {'CPU ns/call':>11}"
           f" {'tool ns/call':>12} {'ring B/call':>11} {'file B/call':>11} {'lost':>6}")
    lines.append(f"Cost per traced call of inner() (entry + return), tracee 1 {N}: "
                 f"2 x {N} calls, median of {REPS}; added to the baseline")
    lines.append(hdr)
    lines.append("-" * len(hdr))
    for s in summary:
        if s["tool"] == "baseline":
            lines.append(f"{s['mode']:<9} {'baseline':<9} {fmt(s['wall_ns'], '.1f'):>12}"
                         f" {'':>13} {fmt(s['cpu_ns'], '.1f'):>11}   (absolute)")
            continue
        rng = f"{s['wall_min'] - find(s['mode'], 'baseline')['wall_ns']:.0f}-" \
              f"{s['wall_max'] - find(s['mode'], 'baseline')['wall_ns']:.0f}"
        lines.append(f"{s['mode']:<9} {s['tool']:<9} {fmt(s['added_wall_ns'], '.0f', True):>12}"
                     f" {rng:>13} {fmt(s['added_cpu_ns'], '.0f', True):>11}"
                     f" {fmt(s['tool_cpu_ns'], '.0f'):>12} {fmt(s['ring_bytes_per_call'], '.2f'):>11}"
                     f" {fmt(s['file_bytes_per_call'], '.1f'):>11} {s['lost']:>6}")
    lines.append("")
    lines.append("Targets (information only): precord within 10% of bpftrace's bare counting; "
                 "clearly below perf probe + perf record")
    for mode in MODES:
        p, b, f = find(mode, "precord"), find(mode, "bpftrace"), find(mode, "perf")
        for key, what in (("added_wall_ns", "wall"), ("added_cpu_ns", "tracee CPU")):
            rb = p[key] / b[key] if b[key] and b[key] > 0 else None
            rf = p[key] / f[key] if f[key] and f[key] > 0 else None
            lines.append(
                f"  {mode:<6} {what:<10}: precord {p[key]:.0f} ns vs bpftrace {b[key]:.0f} ns"
                f" = {fmt(rb, '.2f')}x" + (" ok" if rb is not None and rb <= 1.10 else " MISSED")
                + f"; vs perf {f[key]:.0f} ns = {fmt(rf, '.2f')}x"
                + (" ok" if rf is not None and rf < 1.0 else " MISSED"))
    for n in notes:
        lines.append(f"  note: {n}")
    lines.append(f"(bench took {elapsed:.0f} s, {stats['waited']:.0f} s of it waiting for other "
                 f"BPF programs to go before perf runs; perf aborts retried: {stats['perf_aborts']};"
                 f" load average: {LOAD0} / {open('/proc/loadavg').read().split()[0]}; {NCPU} CPUs)")
    text = "\n".join(lines)
    print(text)

    def ver(argv):
        try:
            return subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                  text=True).stdout.strip().splitlines()[0]
        except (OSError, IndexError):
            return "?"
    meta = [f"# date\t{time.strftime('%Y-%m-%d %H:%M:%S %z')}",
            f"# kernel\t{os.uname().release}", f"# perf\t{ver(['perf', '--version'])}",
            f"# bpftrace\t{ver(['bpftrace', '--version'])}",
            f"# precord\t{ver([PRECORD, '--version'])}", f"# cpus\t{NCPU}",
            f"# calls_per_thread\t{N}", f"# reps\t{REPS}", f"# elapsed_s\t{elapsed:.0f}",
            f"# loadavg_before\t{LOAD0}"]
    cols = ["mode", "tool", "reps", "calls_per_thread", "wall_ns", "cpu_ns", "added_wall_ns",
            "added_cpu_ns", "tool_cpu_ns", "ring_bytes_per_call", "file_bytes_per_call", "lost"]

    def cell(v):
        return "" if v is None else (f"{v:.6g}" if isinstance(v, float) else str(v))
    with open(f"{OUT}/trace.tsv", "w") as f:
        f.write("\n".join(meta) + "\n" + "\t".join(cols) + "\n")
        for s in summary:
            f.write("\t".join(cell(s.get(c)) for c in cols) + "\n")
    rcols = ["wall", "cpu", "tool", "ring_bpc", "file_bpc", "calls", "lost", "counted"]
    with open(f"{OUT}/trace-runs.tsv", "w") as f:
        f.write("\t".join(["mode", "tool", "rep"] + rcols) + "\n")
        for mode, tool, rep, r in runs:
            f.write("\t".join([mode, tool, str(rep)] + [cell(r.get(c)) for c in rcols]) + "\n")
    with open(f"{OUT}/trace.txt", "w") as f:
        f.write("\n".join(meta) + "\n\n" + text + "\n")


LOAD0 = open("/proc/loadavg").read().split()[0]
try:
    main()
finally:
    for pid in list(children):
        try:
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
        except OSError:
            pass
PY

python3 "$tmp/bench.py" "$root" "$tmp" "$out" "$bin" "$group"
