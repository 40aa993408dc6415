"""The driver of the sampling benchmark: started by record.sh, which says
what it measures (and docs/benchmarks.md, "Sampling").  Its shared
helpers are in benchlib.py."""
import os, random, re, signal, statistics, subprocess, sys, time

import benchlib as B
from benchlib import ROOT, TMP, PRECORD, LAUNCH, med, note, reap, wait_quiet

WORKLOAD = f"{ROOT}/build/workloads/workload"
WRAP = f"{TMP}/wrap.py"
RATES = [99, 999, 4999]
REPS = int(os.environ.get("BENCH_REPS", "5"))
STOP_REPS = int(os.environ.get("BENCH_STOP_REPS", "3"))
SCALE = int(os.environ.get("BENCH_SCALE", "10"))
HOLD = float(os.environ.get("BENCH_HOLD", "1.5"))
ENV = dict(os.environ, HOME=f"{TMP}/home", PERF_CONFIG=f"{TMP}/perfconfig",
           TMPDIR=TMP, LC_ALL="C", PAGER="cat")
ENV.pop("PERF_BUILDID_DIR", None)


def tool_env(tool):
    """Each tool keeps its own build-id cache ($HOME/.debug) for the whole
    bench, warmed up before the measurements: the steady state of someone
    who records again and again, and neither tool sees the other's."""
    home = f"{TMP}/home-{'precord' if tool == 'precord' else 'perf'}"
    os.makedirs(home, exist_ok=True)
    return dict(ENV, HOME=home)


# A fixed amount of work (--work), not a time: the overheads are costs per unit of work.
WORKLOADS = {"hot3": ["hot3", "--work", str(SCALE)], "threads2": ["threads", "2", "--work", str(SCALE)]}
TOOLS = ["precord", "perf"]			# workload runs
STOP_TOOLS = ["precord", "perf", "perf-nobpf"]	# -p start/stop runs
LOG = B.LOG = f"{TMP}/tools.log"	# every tool's output; fail() shows its end
B.QUIET_WAIT = float(os.environ.get("BENCH_QUIET_WAIT", "30"))	# per perf run
B.QUIET_BUDGET = float(os.environ.get("BENCH_QUIET_BUDGET", "150"))	# in all
stats = B.stats
stats["report_fallbacks"] = 0
fail = B.fail


def mono():
    return time.clock_gettime_ns(time.CLOCK_MONOTONIC)


def tool_argv(tool, hz, out):
    if tool == "precord":
        return [PRECORD, "-q", "-F", str(hz), "-g", "-o", out]
    argv = ["perf", "record", "-q", "-k", "mono", "-F", str(hz), "-g", "-o", out]
    return argv + (["--no-bpf-event"] if tool == "perf-nobpf" else [])


def spawn(argv, env=None):
    return B.spawn(argv, LOG, env or ENV)


def perf_aborted(tool, sig, what):
    """A perf that died of SIGABRT (see benchlib.wait_quiet) is run again
    (up to 3 times)."""
    if tool.startswith("perf") and sig == signal.SIGABRT:
        B.perf_abort(f"{what}: perf")
        return True
    return False


def launch_result(st, rfile):
    """The recorder's (cpu_s, maxrss_kb, exit code or -1, signal or 0)
    from the launcher's file; st: the launcher's wait status."""
    if os.waitstatus_to_exitcode(st) != 0:
        fail(f"the launcher exited {os.waitstatus_to_exitcode(st)}")
    u, s, rss, code, sig = B.launch_result(rfile)
    return u / 1e6 + s / 1e6, rss, code, sig


def child_of(pid):
    try:
        with open(f"/proc/{pid}/task/{pid}/children") as f:
            return int(f.read().split()[0])
    except (OSError, IndexError, ValueError):
        return 0


def vmhwm(pid):
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1])
    except OSError:
        pass
    return 0


def scan(path):
    """perf.data (benchlib.scan), its lost events summed up."""
    s = B.scan(path)
    s["lost"] += s["lost_samples"]
    return s


def perf_samples(path, env):
    """SAMPLE events in `perf report --stats`; None if perf aborted (see
    wait_quiet) twice: the caller then uses its own count."""
    r = B.perf_retry(lambda: subprocess.run(["perf", "report", "--stats", "-i", path], env=env,
                                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                            text=True),
                     lambda r: r.returncode == -signal.SIGABRT, tries=2)
    if r.returncode == -signal.SIGABRT:
        stats["report_fallbacks"] += 1
        return None
    m = re.search(r"SAMPLE events:\s+(\d+)", r.stdout)
    if r.returncode or not m:
        fail(f"perf report --stats -i {path} failed:\n{r.stdout[-2000:]}")
    return int(m.group(1))


def run_alone(wl, rundir):
    """The workload without a profiler, through the same wrapper."""
    wfile = f"{rundir}/alone.wrap"
    pid = spawn([sys.executable, "-S", "-E", WRAP, wfile, WORKLOAD] + WORKLOADS[wl])
    _, st, _ = reap(pid)
    if os.waitstatus_to_exitcode(st):
        fail(f"workload {wl} failed")
    wall, cpu, _tot, _rss, _ = open(wfile).read().split()
    return dict(wall=int(wall) / 1e9, cpu=float(cpu))


def run_recorded(tool, hz, wl, rundir):
    """tool -F hz -g -o FILE -- wrapper workload ARGS."""
    out, wfile = f"{rundir}/{tool}-{hz}.data", f"{rundir}/{tool}-{hz}.wrap"
    argv = tool_argv(tool, hz, out) + ["--", sys.executable, "-S", "-E", WRAP, wfile,
                                        WORKLOAD] + WORKLOADS[wl]
    rfile = f"{rundir}/launch.res"
    for attempt in range(3):
        if tool.startswith("perf"):
            wait_quiet()
        for f in (out, wfile, rfile):
            if os.path.exists(f):
                os.unlink(f)
        t0 = mono()
        pid = spawn([LAUNCH, rfile] + argv, tool_env(tool))
        hwm = 0
        while True:
            wp, st, _ = reap(pid, os.WNOHANG)
            if wp:
                break
            hwm = max(hwm, vmhwm(child_of(pid)))
            time.sleep(0.05)
        rec_cpu, rec_rss, code, sig = launch_result(st, rfile)
        if not perf_aborted(tool, sig, f"{wl} {hz} Hz"):
            break
    if code != 0:
        fail(f"{' '.join(argv)} exited {code if code >= 0 else 'on signal %d' % sig}")
    wall, cpu, wtot, wrss, wst = open(wfile).read().split()
    if int(wst):
        fail(f"workload {wl} failed under {tool}")
    # The recorder's wait4 rusage is its own plus its reaped child's (the
    # wrapper, which folds in the workload): subtract what the wrapper saw.
    prof_cpu = rec_cpu - float(wtot)
    # ru_maxrss is the larger of the recorder's own and its children's;
    # when the wrapper's is smaller it is the recorder's own VmHWM, else
    # fall back on VmHWM polled every 50 ms from /proc.
    exact = rec_rss > int(wrss)
    rss = rec_rss if exact else hwm
    s = scan(out)
    n = perf_samples(out, tool_env(tool))
    if n is None:
        n = s["samples"]
    elif n != s["samples"]:
        note(f"  note: {tool} {wl} {hz} Hz: perf report counts {n} samples, "
             f"the file holds {s['samples']}")
    os.unlink(out)
    return dict(wall=int(wall) / 1e9, cpu=float(cpu), prof_cpu=prof_cpu, rss=rss,
                rss_exact=int(exact), start_first=(s["first"] - t0) / 1e9 if s["first"] else None,
                samples=n, bps=s["size"] / n if n else None, lost=s["lost"], size=s["size"])


def run_stop(tool, hz, rundir):
    """tool -F hz -g -o FILE -p PID of `workload spin`; SIGINT after HOLD s."""
    out, rfile = f"{rundir}/{tool}-{hz}-p.data", f"{rundir}/launch.res"
    hold = HOLD
    for attempt in range(5):
        if tool.startswith("perf"):
            wait_quiet()
        for f in (out, rfile):
            if os.path.exists(f):
                os.unlink(f)
        spin = spawn([WORKLOAD, "spin"])
        time.sleep(0.1)
        try:
            t0 = mono()
            pid = spawn([LAUNCH, rfile] + tool_argv(tool, hz, out) + ["-p", str(spin)],
                        tool_env(tool))
            time.sleep(hold)
            t_int = mono()
            os.kill(pid, signal.SIGINT)	# the launcher passes it on
            _, st, _ = reap(pid)
            t_exit = mono()
        finally:
            os.kill(spin, signal.SIGKILL)
            reap(spin)
        rec_cpu, rec_rss, code, sig = launch_result(st, rfile)
        if attempt < 2 and perf_aborted(tool, sig, f"-p {hz} Hz"):
            continue
        # perf record dies of the SIGINT it re-raises; precord exits 0.
        if not (code == 0 or code == 130 or sig == signal.SIGINT):
            fail(f"{tool} -p exited {code if code >= 0 else 'on signal %d' % sig}")
        s = scan(out)
        os.unlink(out)
        if s["first"] and s["first"] < t_int:
            break
        note(f"  {tool} {hz} Hz -p: no sample within {hold} s, holding longer")
        hold *= 2
    else:
        fail(f"{tool} -p: no usable recording in 5 attempts")
    start = (s["first"] - t0) / 1e9
    stop = (t_exit - t_int) / 1e9
    # No children here: ru_maxrss is the recorder's own VmHWM.
    return dict(start_first=start, stop_exit=stop, fixed=start + stop,
                prof_cpu=rec_cpu, rss=rec_rss, lost=s["lost"])


def main():
    t_begin = time.time()
    rng = random.Random(1)
    runs = []		# (section, workload, tool, hz, rep, dict)
    rundir = f"{TMP}/run"
    os.makedirs(rundir, exist_ok=True)
    nconf = len(WORKLOADS) * (1 + len(TOOLS) * len(RATES))
    note(f"record bench: {REPS} x {nconf} workload runs, {STOP_REPS} x "
         f"{len(STOP_TOOLS) * len(RATES)} -p start/stop runs")
    # Warm-up, not measured: page cache, and each tool's build-id cache.
    for tool in STOP_TOOLS:
        if tool.startswith("perf"):
            wait_quiet()
        out = f"{rundir}/warmup.data"
        pid = spawn(tool_argv(tool, 999, out) + ["--", WORKLOAD, "hot3", "0.1"], tool_env(tool))
        _, st, _ = reap(pid)
        rc = os.waitstatus_to_exitcode(st)
        if rc and not perf_aborted(tool, -rc, "warm-up"):
            fail(f"{tool} warm-up run exited {rc}")
        if os.path.exists(out):
            os.unlink(out)
    # Workload runs: every repetition runs every configuration (the
    # workload alone included) in a shuffled order, so that drift and
    # other load on the machine spread evenly over the configurations.
    for rep in range(REPS):
        confs = [(wl, None, 0) for wl in WORKLOADS]
        confs += [(wl, t, hz) for wl in WORKLOADS for t in TOOLS for hz in RATES]
        rng.shuffle(confs)
        for wl, tool, hz in confs:
            if tool is None:
                r = run_alone(wl, rundir)
                runs.append(("run", wl, "alone", 0, rep, r))
            else:
                r = run_recorded(tool, hz, wl, rundir)
                runs.append(("run", wl, tool, hz, rep, r))
        note(f"  repetition {rep + 1}/{REPS} done ({time.time() - t_begin:.0f} s)")
    for rep in range(STOP_REPS):
        confs = [(t, hz) for t in STOP_TOOLS for hz in RATES]
        rng.shuffle(confs)
        for tool, hz in confs:
            runs.append(("stop", "spin", tool, hz, rep, run_stop(tool, hz, rundir)))
        note(f"  start/stop repetition {rep + 1}/{STOP_REPS} done ({time.time() - t_begin:.0f} s)")
    report(runs, time.time() - t_begin)


def pct(x):
    return "" if x is None else f"{(x - 1) * 100:+.1f}%"


def num(x, fmt):
    return "" if x is None else format(x, fmt)


def report(runs, elapsed):
    def group(sec, wl, tool, hz):
        return [r for s, w, t, h, _, r in runs if (s, w, t, h) == (sec, wl, tool, hz)]

    summary, lines = [], []
    for wl in WORKLOADS:
        base = group("run", wl, "alone", 0)
        bw, bc = med(base, "wall"), med(base, "cpu")
        summary.append(dict(section="run", workload=wl, tool="alone", hz=0, reps=len(base),
                            wall_s=bw, cpu_s=bc, wall_ratio=1.0, cpu_ratio=1.0))
        for tool in TOOLS:
            for hz in RATES:
                g = group("run", wl, tool, hz)
                w, c = med(g, "wall"), med(g, "cpu")
                summary.append(dict(
                    section="run", workload=wl, tool=tool, hz=hz, reps=len(g),
                    wall_s=w, cpu_s=c, wall_ratio=w / bw, cpu_ratio=c / bc,
                    prof_cpu_ms=med(g, "prof_cpu") * 1e3, rss_kb=med(g, "rss"),
                    rss_exact=min(r["rss_exact"] for r in g),
                    start_first_ms=(med(g, "start_first") or 0) * 1e3,
                    samples=med(g, "samples"), bytes_per_sample=med(g, "bps"),
                    lost=max(r["lost"] for r in g)))
    for tool in STOP_TOOLS:
        for hz in RATES:
            g = group("stop", "spin", tool, hz)
            summary.append(dict(
                section="stop", workload="spin-p", tool=tool, hz=hz, reps=len(g),
                prof_cpu_ms=med(g, "prof_cpu") * 1e3, rss_kb=med(g, "rss"), rss_exact=1,
                start_first_ms=med(g, "start_first") * 1e3,
                stop_exit_ms=med(g, "stop_exit") * 1e3, fixed_ms=med(g, "fixed") * 1e3,
                lost=max(r["lost"] for r in g)))

    # ---- the table ------------------------------------------------------
    hdr = (f"{'workload':<9} {'tool':<8} {'Hz':>5} {'wall':>7} {'CPU':>7} {'rec CPU':>8}"
           f" {'peak RSS':>9} {'start→1st':>9} {'samples':>8} {'B/sample':>8} {'lost':>5}")
    lines += B.table_head(f"Workload runs: median of {REPS}; wall and CPU are the workload's "
                          "own, relative to the workload alone", hdr)
    for s in summary:
        if s["section"] != "run":
            continue
        if s["tool"] == "alone":
            lines.append(f"{s['workload']:<9} {'alone':<8} {'':>5} {s['wall_s']:>6.3f}s"
                         f" {s['cpu_s']:>6.3f}s")
            continue
        rss = f"{s['rss_kb'] / 1024:.1f} MB" + ("" if s["rss_exact"] else "~")
        lines.append(
            f"{s['workload']:<9} {s['tool']:<8} {s['hz']:>5} {pct(s['wall_ratio']):>7}"
            f" {pct(s['cpu_ratio']):>7} {s['prof_cpu_ms']:>6.0f}ms {rss:>9}"
            f" {s['start_first_ms']:>7.0f}ms {s['samples']:>8.0f}"
            f" {num(s['bytes_per_sample'], '.0f'):>8} {s['lost']:>5}")
    lines.append("")
    hdr = (f"{'-p start/stop':<13} {'Hz':>5} {'start→1st':>9} {'SIGINT→exit':>11}"
           f" {'start+stop':>10} {'rec CPU':>8} {'peak RSS':>9} {'lost':>5}")
    lines += B.table_head(f"Start and stop: `-p PID` of `workload spin`, SIGINT after {HOLD} s; "
                          f"median of {STOP_REPS}", hdr)
    for s in summary:
        if s["section"] == "stop":
            lines.append(
                f"{s['tool']:<13} {s['hz']:>5} {s['start_first_ms']:>7.0f}ms"
                f" {s['stop_exit_ms']:>9.0f}ms {s['fixed_ms']:>8.0f}ms"
                f" {s['prof_cpu_ms']:>6.0f}ms {s['rss_kb'] / 1024:>6.1f} MB {s['lost']:>5}")
    lines.append("")

    # ---- the targets of the issue (information, not a verdict) ----------
    def find(sec, wl, tool, hz):
        return next(s for s in summary if (s["section"], s["workload"], s["tool"], s["hz"])
                    == (sec, wl, tool, hz))
    lines.append("Targets (information only):")
    noise = {}
    for wl in WORKLOADS:
        cmp = []
        for hz in RATES:
            p, f = find("run", wl, "precord", hz), find("run", wl, "perf", hz)
            cmp.append(f"{hz} Hz {pct(p['cpu_ratio'])} vs {pct(f['cpu_ratio'])}"
                       + (" ok" if p["cpu_ratio"] <= f["cpu_ratio"] else " HIGHER"))
        a = [r["cpu"] for r in group("run", wl, "alone", 0)]
        noise[wl] = (max(a) - min(a)) / 2 / statistics.median(a)
        lines.append(f"  workload CPU overhead precord vs perf, {wl}: " + "; ".join(cmp)
                     + f" (the workload alone varied by ±{noise[wl] * 100:.1f}%)")
    for wl in WORKLOADS:
        cmp = []
        for hz in RATES:
            p = find("run", wl, "precord", hz)["bytes_per_sample"]
            f = find("run", wl, "perf", hz)["bytes_per_sample"]
            ok = p is not None and f is not None and p <= f
            cmp.append(f"{hz} Hz {num(p, '.1f')} vs {num(f, '.1f')}" + (" ok" if ok else " HIGHER"))
        lines.append(f"  bytes per sample (file size / samples, -g) precord vs perf, {wl}: "
                     + "; ".join(cmp))
    fx = {t: max(find("stop", "spin-p", t, hz)["fixed_ms"] for hz in RATES) for t in STOP_TOOLS}
    lines.append(f"  start+stop (worst rate) <= 100 ms: precord {fx['precord']:.0f} ms"
                 + (" ok" if fx["precord"] <= 100 else " OVER")
                 + f"; perf {fx['perf']:.0f} ms; perf --no-bpf-event {fx['perf-nobpf']:.0f} ms")
    l4999 = find("run", "threads2", "precord", 4999)["lost"]
    lines.append(f"  lost samples at 4999 Hz, 2 threads on 2 CPUs: precord {l4999} (worst run)"
                 + (" ok" if l4999 == 0 else " LOST")
                 + f"; perf {find('run', 'threads2', 'perf', 4999)['lost']}")
    lines.append(f"(bench took {elapsed:.0f} s, {stats['waited']:.0f} s of it waiting for other "
                 f"BPF programs to go; load average before/after: {B.LOAD0} / "
                 f"{B.loadavg()}; perf aborts retried: "
                 f"{stats['perf_aborts']}; perf report --stats unusable: "
                 f"{stats['report_fallbacks']})")
    text = "\n".join(lines)
    print(text)

    # ---- machine-readable ----------------------------------------------
    meta = B.meta(["perf", "precord"]) + [
        f"# scale\t{SCALE}", f"# reps\t{REPS}",
        f"# stop_reps\t{STOP_REPS}", f"# hold_s\t{HOLD}", f"# elapsed_s\t{elapsed:.0f}",
        f"# loadavg_before\t{B.LOAD0}", f"# waited_s\t{stats['waited']:.0f}",
        f"# perf_aborts\t{stats['perf_aborts']}"]
    meta += [f"# alone_cpu_spread_{wl}\t{noise[wl]:.4f}" for wl in WORKLOADS]
    cols = ["section", "workload", "tool", "hz", "reps", "wall_s", "cpu_s", "wall_ratio",
            "cpu_ratio", "prof_cpu_ms", "rss_kb", "rss_exact", "start_first_ms",
            "stop_exit_ms", "fixed_ms", "samples", "bytes_per_sample", "lost"]
    rcols = ["wall", "cpu", "prof_cpu", "rss", "rss_exact", "start_first", "stop_exit",
             "samples", "bps", "lost"]
    B.write_results(meta, cols, summary, ["section", "workload", "tool", "hz", "rep"], rcols,
                    [(run[:5], run[5]) for run in runs], text)


B.run_main(main, catch_signals=True)
