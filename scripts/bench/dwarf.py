"""The driver of the dwarf-mode benchmark, started by dwarf.sh (which says
what it measures; docs/benchmarks.md, "Dwarf mode")."""
import os, random, signal, sys, time

import benchlib as B
from benchlib import ROOT, TMP, PRECORD, LAUNCH, med, note, reap, wait_quiet

NOFP = f"{ROOT}/build/workloads/nofp"
RATES = [99, 999]
TOOLS = ["precord", "perf"]
REPS = int(os.environ.get("BENCH_REPS", "5"))
WORK = os.environ.get("BENCH_DWARF_WORK", "1000")
ENV = dict(os.environ, HOME=f"{TMP}/home", PERF_CONFIG=f"{TMP}/perfconfig",
           TMPDIR=TMP, LC_ALL="C", PAGER="cat")
ENV.pop("PERF_BUILDID_DIR", None)
LOG = B.LOG = f"{TMP}/tools.log"
WRAP = f"{TMP}/wrap.py"
fail = B.fail

# The workload's own figures: its rusage from wait4 (CPU), and the
# wrapper's own plus its children's (subtracted from the recorder's, whose
# wait4 folds its reaped child, the wrapper, in).
WRAP_SRC = r'''
import os, resource, sys
out, cmd = sys.argv[1], sys.argv[2:]
pid = os.fork()
if pid == 0:
    try:
        os.execv(cmd[0], cmd)
    finally:
        os._exit(127)
_, st, ru = os.wait4(pid, 0)
s = resource.getrusage(resource.RUSAGE_SELF)
c = resource.getrusage(resource.RUSAGE_CHILDREN)
with open(out, "w") as f:
    f.write("%.6f %.6f %d\n" % (ru.ru_utime + ru.ru_stime,
            s.ru_utime + s.ru_stime + c.ru_utime + c.ru_stime, os.waitstatus_to_exitcode(st)))
'''


def tool_env(tool):
    home = f"{TMP}/home-{tool}"
    os.makedirs(home, exist_ok=True)
    return dict(ENV, HOME=home)


def tool_argv(tool, hz, out):
    if tool == "precord":
        return [PRECORD, "-q", "-F", str(hz), "--call-graph", "dwarf", "-o", out]
    return ["perf", "record", "-q", "-k", "mono", "-F", str(hz), "--call-graph", "dwarf",
            "-o", out]


def workload(wfile):
    return [sys.executable, "-S", "-E", WRAP, wfile, NOFP, "--work", WORK]


def run_alone(rundir):
    wfile = f"{rundir}/alone.wrap"
    _, st, _ = reap(B.spawn(workload(wfile), LOG, ENV))
    if os.waitstatus_to_exitcode(st):
        fail("nofp failed")
    return dict(cpu=float(open(wfile).read().split()[0]))


def run_recorded(tool, hz, rundir):
    out, wfile, rfile = f"{rundir}/{tool}.data", f"{rundir}/{tool}.wrap", f"{rundir}/launch.res"
    for attempt in range(3):
        if tool == "perf":
            wait_quiet()
        for f in (out, wfile, rfile):
            if os.path.exists(f):
                os.unlink(f)
        pid = B.spawn([LAUNCH, rfile] + tool_argv(tool, hz, out) + ["--"] + workload(wfile),
                      LOG, tool_env(tool))
        _, st, _ = reap(pid)
        if os.waitstatus_to_exitcode(st):
            fail(f"the launcher exited {os.waitstatus_to_exitcode(st)}")
        u, s, rss, code, sig = B.launch_result(rfile)
        if not (tool == "perf" and sig == signal.SIGABRT):
            break
        B.perf_abort(f"dwarf {hz} Hz: perf")
    if code != 0:
        fail(f"{tool} {hz} Hz exited {code if code >= 0 else 'on signal %d' % sig}")
    cpu, wtot, wst = open(wfile).read().split()
    if int(wst):
        fail(f"nofp failed under {tool}")
    sc = B.scan(out)
    os.unlink(out)
    n = sc["samples"]
    return dict(cpu=float(cpu), prof_cpu=u / 1e6 + s / 1e6 - float(wtot), rss=rss, samples=n,
                bps=sc["size"] / n if n else None, lost=sc["lost"] + sc["lost_samples"],
                size=sc["size"])


def main():
    t0 = time.time()
    rng = random.Random(1)
    rundir = f"{TMP}/run"
    os.makedirs(rundir, exist_ok=True)
    with open(WRAP, "w") as f:
        f.write(WRAP_SRC)
    open(ENV["PERF_CONFIG"], "a").close()
    note(f"dwarf bench: {REPS} x {1 + len(TOOLS) * len(RATES)} runs of nofp --work {WORK}")
    for tool in TOOLS:		# warm-up: page cache, build-id caches
        run_recorded(tool, 99, rundir)
    runs = []
    for rep in range(REPS):
        confs = [(None, 0)] + [(t, hz) for t in TOOLS for hz in RATES]
        rng.shuffle(confs)
        for tool, hz in confs:
            r = run_alone(rundir) if tool is None else run_recorded(tool, hz, rundir)
            runs.append((tool or "alone", hz, rep, r))
        note(f"  repetition {rep + 1}/{REPS} done ({time.time() - t0:.0f} s)")
    report(runs, time.time() - t0)


def report(runs, elapsed):
    def group(tool, hz):
        return [r for t, h, _, r in runs if (t, h) == (tool, hz)]

    base = med(group("alone", 0), "cpu")
    summary = [dict(tool="alone", hz=0, reps=len(group("alone", 0)), cpu_s=base, cpu_ratio=1.0)]
    for tool in TOOLS:
        for hz in RATES:
            g = group(tool, hz)
            c = med(g, "cpu")
            summary.append(dict(tool=tool, hz=hz, reps=len(g), cpu_s=c, cpu_ratio=c / base,
                                prof_cpu_ms=med(g, "prof_cpu") * 1e3, rss_kb=med(g, "rss"),
                                samples=med(g, "samples"), bytes_per_sample=med(g, "bps"),
                                lost=max(r["lost"] for r in g)))
    hdr = (f"{'tool':<8} {'Hz':>4} {'workload CPU':>12} {'slowdown':>8} {'rec CPU':>8}"
           f" {'peak RSS':>9} {'samples':>8} {'B/sample':>8} {'lost':>5}")
    lines = B.table_head(f"nofp --work {WORK} under --call-graph dwarf: median of {REPS}", hdr)
    for s in summary:
        if s["tool"] == "alone":
            lines.append(f"{'alone':<8} {'':>4} {s['cpu_s']:>11.3f}s")
            continue
        lines.append(f"{s['tool']:<8} {s['hz']:>4} {s['cpu_s']:>11.3f}s"
                     f" {(s['cpu_ratio'] - 1) * 100:>+7.1f}% {s['prof_cpu_ms']:>6.0f}ms"
                     f" {s['rss_kb'] / 1024:>6.1f} MB {s['samples']:>8.0f}"
                     f" {s['bytes_per_sample']:>8.0f} {s['lost']:>5}")
    lines.append("")
    lines.append("Targets (information only):")
    find = {(s["tool"], s["hz"]): s for s in summary}
    for hz in RATES:
        p, f = find[("precord", hz)], find[("perf", hz)]
        lines.append(f"  {hz} Hz: slowdown {(p['cpu_ratio'] - 1) * 100:+.1f}% vs "
                     f"{(f['cpu_ratio'] - 1) * 100:+.1f}%"
                     + (" ok" if p["cpu_ratio"] <= f["cpu_ratio"] else " HIGHER")
                     + f"; bytes/sample {p['bytes_per_sample']:.0f} vs {f['bytes_per_sample']:.0f}"
                     + (" ok" if p["bytes_per_sample"] <= f["bytes_per_sample"] else " HIGHER")
                     + f"; lost {p['lost']} vs {f['lost']}")
    lines.append(f"(bench took {elapsed:.0f} s; load average before/after: {B.LOAD0} / "
                 f"{B.loadavg()})")
    text = "\n".join(lines)
    print(text)
    meta = B.meta(["perf", "precord"]) + [f"# work\t{WORK}", f"# reps\t{REPS}",
                                          f"# elapsed_s\t{elapsed:.0f}"]
    cols = ["tool", "hz", "reps", "cpu_s", "cpu_ratio", "prof_cpu_ms", "rss_kb", "samples",
            "bytes_per_sample", "lost"]
    rcols = ["cpu", "prof_cpu", "rss", "samples", "bps", "lost"]
    B.write_results(meta, cols, summary, ["tool", "hz", "rep"], rcols,
                    [((t, h, rep), r) for t, h, rep, r in runs], text)


B.run_main(main, catch_signals=True)
