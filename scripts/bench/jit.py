"""The driver of the JIT benchmark: started by jit.sh, which says what it
measures (and docs/benchmarks-trace-jit.md).  Its shared helpers are in
benchlib.py."""
import os, random, shutil, signal, subprocess, time

import benchlib as B
from benchlib import TMP, PRECORD, LAUNCH, fail, med, note

JITGEN = f"{TMP}/jitgen"
SIZES = [int(x) for x in os.environ.get("BENCH_JIT_FUNCS", "10000 100000").split()]
REPS = int(os.environ.get("BENCH_JIT_REPS", "3"))
# perf inject --jit takes ~40 s for 100,000 functions: once by default.
BIG_PERF_REPS = int(os.environ.get("BENCH_JIT_BIG_PERF_REPS", "1"))


def perf_reps(n):
    return REPS if n <= 20000 else min(REPS, BIG_PERF_REPS)
SPIN = os.environ.get("BENCH_JIT_SPIN_MS", "500")
TOOLS = ["perf", "precord", "precord-nojit"]
checks = []
# perf commands wait for other sessions' BPF programs to go
# (benchlib.wait_quiet): up to 20 s per command, 60 s in all, benchlib's
# defaults.


def mono():
    return time.clock_gettime(time.CLOCK_MONOTONIC)


def run(argv, cwd, env, log):
    """Run argv in cwd through the launcher: (exit code, or -signal; wall s;
    CPU s and peak RSS KiB from its wait4)."""
    rufile = f"{TMP}/launch.ru"
    if os.path.exists(rufile):
        os.unlink(rufile)
    t0 = mono()
    pid = B.spawn([LAUNCH, rufile] + argv, log, env, cwd=cwd)
    _, st, _ = B.reap(pid)
    wall = mono() - t0
    if os.waitstatus_to_exitcode(st) or not os.path.exists(rufile):
        fail(f"the launcher failed ({os.waitstatus_to_exitcode(st)})", log)
    u, s, rss, code, sig = B.launch_result(rufile)
    return (-sig if sig else code), wall, (u + s) / 1e6, rss


def perf_run(argv, cwd, env, log, clean=()):
    """run() a perf command, again if it aborts (benchlib.perf_retry)."""
    def attempt():
        for p in clean:
            if os.path.exists(p):
                os.unlink(p)
        return run(argv, cwd, env, log)
    return B.perf_retry(attempt, lambda r: r[0] == -signal.SIGABRT, argv[1])


def count_files(d, pred=lambda n: True):
    n = 0
    for dirpath, dirnames, files in os.walk(d):
        n += sum(1 for f in files if pred(f))
    return n


def jit_samples(data, cwd, env, log, what):
    """perf report must read the file; perf script: (samples named
    jitfn_*, all samples)."""
    rc = perf_run(["perf", "report", "-i", data, "--stdio", "--sort", "sym"], cwd, env, log)[0]
    if rc:
        fail(f"{what}: perf report -i {os.path.basename(data)} exited {rc}", log)
    r = B.perf_retry(lambda: subprocess.run(["perf", "script", "-i", data, "-F", "ip,sym", "-G"],
                                            cwd=cwd, env=env, stdout=subprocess.PIPE,
                                            stderr=subprocess.DEVNULL, text=True,
                                            errors="replace"),
                     lambda r: r.returncode == -signal.SIGABRT)
    if r.returncode:
        fail(f"{what}: perf script -i {os.path.basename(data)} exited {r.returncode}", log)
    lines = [l for l in r.stdout.splitlines() if l.strip()]
    return sum(1 for l in lines if "jitfn_" in l), len(lines)


def jitgen_usage(path):
    rss, cpu_us = open(path).read().split()
    os.unlink(path)
    return int(rss), int(cpu_us) / 1e6


def run_perf(n, rep, base):
    d, home = f"{base}/d", f"{base}/home"
    os.makedirs(d)
    os.makedirs(home)
    log = f"{base}/perf.log"
    env = dict(os.environ, HOME=home, JITGEN_RUSAGE=f"{base}/jitgen.ru")
    rc, rwall, _, _ = perf_run(["perf", "record", "-q", "-k", "mono", "-g", "-o", "p.data", "--",
                                JITGEN, str(n), SPIN], d, env, log, clean=[f"{d}/p.data"])
    if rc:
        fail(f"perf record -- jitgen {n} exited {rc}", log)
    jitgen_usage(f"{base}/jitgen.ru")
    before = count_files(home)
    rc, wall, cpu, rss = perf_run(["perf", "inject", "--jit", "-i", "p.data", "-o", "pj.data"],
                                  d, env, log, clean=[f"{d}/pj.data"])
    if rc:
        fail(f"perf inject --jit ({n} functions) exited {rc}", log)
    r = dict(record_wall=rwall, wall=wall, cpu=cpu, rss=rss,
             files=count_files(d, lambda f: f.startswith("jitted-") and f.endswith(".so")),
             cache_files=count_files(home) - before)
    if rep == 0:
        r["jit_samples"], r["samples"] = jit_samples("pj.data", d, env, log, f"perf {n}")
        checks.append(f"perf inject --jit, {n} functions: perf report reads pj.data; perf script "
                      f"names {r['jit_samples']} of {r['samples']} samples jitfn_*")
    return r


def run_precord(n, rep, base, jit):
    d, home = f"{base}/d", f"{base}/home"
    os.makedirs(d)
    os.makedirs(home)
    log = f"{base}/precord.log"
    env = dict(os.environ, HOME=home, JITGEN_RUSAGE=f"{base}/jitgen.ru")
    argv = [PRECORD, "-q", "-g", "-o", "x.data"] + ([] if jit else ["--no-jit"])
    rc, wall, cpu, rss = run(argv + ["--", JITGEN, str(n), SPIN], d, env, log)
    if rc:
        fail(f"precord{'' if jit else ' --no-jit'} -- jitgen {n} exited {rc}", log)
    grss, gcpu = jitgen_usage(f"{base}/jitgen.ru")
    # wait4's ru_maxrss is the larger of precord's own peak and its child's.
    r = dict(wall=wall, cpu=cpu - gcpu, rss=rss, rss_exact=int(rss > grss), jitgen_rss=grss,
             files=count_files(f"{d}/x.data.jit", lambda f: f.endswith(".so")),
             cache_files=count_files(home))
    if rep == 0 and jit:
        r["jit_samples"], r["samples"] = jit_samples("x.data", d, env, log, f"precord {n}")
        checks.append(f"precord, {n} functions: perf report reads x.data; perf script names "
                      f"{r['jit_samples']} of {r['samples']} samples jitfn_*")
    return r


def main():
    t_begin = time.time()
    rng = random.Random(4)
    note(f"jit bench: jitdumps of {', '.join(map(str, SIZES))} functions; "
         f"{'/'.join(str(perf_reps(n)) for n in SIZES)} repetitions of perf record + perf inject "
         f"--jit, {REPS} of precord and precord --no-jit")
    runs = []
    k = 0
    # Warm-up, not measured: page cache and both tools' first start.
    for tool in ("precord", "perf"):
        base = f"{TMP}/warm-{tool}"
        os.makedirs(base)
        (run_precord(min(SIZES), 1, base, True) if tool == "precord"
         else run_perf(min(SIZES), 1, base))
        shutil.rmtree(base)
    for n in SIZES:
        for rep in range(REPS):
            confs = [t for t in TOOLS if t != "perf" or rep < perf_reps(n)]
            rng.shuffle(confs)
            for tool in confs:
                base = f"{TMP}/r{k}"
                k += 1
                os.makedirs(base)
                if tool == "perf":
                    r = run_perf(n, rep, base)
                else:
                    r = run_precord(n, rep, base, tool == "precord")
                shutil.rmtree(base)
                runs.append((n, tool, rep, r))
            note(f"  {n} functions: repetition {rep + 1}/{REPS} done ({time.time() - t_begin:.0f} s)")
    report(runs, time.time() - t_begin)


def report(runs, elapsed):
    summary, lines = [], []
    for n in SIZES:
        for tool in TOOLS:
            g = [r for nn, t, _, r in runs if (nn, t) == (n, tool)]
            s = dict(funcs=n, tool=tool, reps=len(g), wall_s=med(g, "wall"), cpu_s=med(g, "cpu"),
                     rss_kb=med(g, "rss"), files=med(g, "files"),
                     cache_files=med(g, "cache_files"), record_wall_s=med(g, "record_wall"),
                     rss_exact=min((r.get("rss_exact", 1) for r in g), default=1),
                     jit_samples=next((r["jit_samples"] for r in g if "jit_samples" in r), None),
                     samples=next((r["samples"] for r in g if "samples" in r), None))
            summary.append(s)

    def find(n, tool):
        return next(s for s in summary if (s["funcs"], s["tool"]) == (n, tool))

    for n in SIZES:
        p, x, z = find(n, "perf"), find(n, "precord"), find(n, "precord-nojit")
        x["added_wall_s"] = x["wall_s"] - z["wall_s"]
        x["added_cpu_s"] = x["cpu_s"] - z["cpu_s"]

    def mb(kb, exact=1):
        return f"{kb / 1024:.0f} MB" + ("" if exact else "~")

    hdr = (f"{'functions':>9} {'tool':<24} {'wall':>8} {'CPU':>8} {'peak RSS':>9} {'files':>7}"
           f" {'~/.debug':>8} {'JIT samples':>12}")
    lines += B.table_head(f"Merging a jitdump: median of {REPS} "
                          f"({'/'.join(str(perf_reps(n)) for n in SIZES)} for perf); "
                          f"the program runs {SPIN} ms after mapping its dump", hdr)
    for n in SIZES:
        p, x, z = find(n, "perf"), find(n, "precord"), find(n, "precord-nojit")
        js = lambda s: "" if s["samples"] is None else f"{s['jit_samples']}/{s['samples']}"
        lines.append(f"{n:>9} {'perf record -k mono -g':<24} {p['record_wall_s']:>7.2f}s")
        lines.append(f"{n:>9} {'perf inject --jit':<24} {p['wall_s']:>7.2f}s {p['cpu_s']:>7.2f}s"
                     f" {mb(p['rss_kb']):>9} {p['files']:>7.0f} {p['cache_files']:>8.0f} {js(p):>12}")
        lines.append(f"{n:>9} {'precord -g --no-jit':<24} {z['wall_s']:>7.2f}s {z['cpu_s']:>7.2f}s"
                     f" {mb(z['rss_kb'], z['rss_exact']):>9} {z['files']:>7.0f} {z['cache_files']:>8.0f}")
        lines.append(f"{n:>9} {'precord -g':<24} {x['wall_s']:>7.2f}s {x['cpu_s']:>7.2f}s"
                     f" {mb(x['rss_kb'], x['rss_exact']):>9} {x['files']:>7.0f} {x['cache_files']:>8.0f}"
                     f" {js(x):>12}")
        lines.append(f"{n:>9} {'  precord: JIT merging':<24} {x['added_wall_s']:>+7.2f}s"
                     f" {x['added_cpu_s']:>+7.2f}s {mb(x['rss_kb'] - z['rss_kb']):>9}"
                     "   (added to --no-jit)")
    lines.append("(precord CPU: its own, jitgen's subtracted; '~': precord's peak RSS was not above "
                 "jitgen's, so this is jitgen's)")
    lines.append("")
    lines.append("Targets (information only): precord >= 10x faster and >= 100x fewer files than "
                 "perf inject --jit; precord's memory < 100 MB")
    floor = 0.01	# below this an added time is noise
    for n in SIZES:
        p, x = find(n, "perf"), find(n, "precord")
        aw, ac = max(x["added_wall_s"], floor), max(x["added_cpu_s"], floor)
        tw = ((">=" if aw == floor else "") + f"{p['wall_s'] / aw:.0f}x")
        tc = ((">=" if ac == floor else "") + f"{p['cpu_s'] / ac:.0f}x")
        fr = p["files"] / max(x["files"], 1)
        lines.append(
            f"  {n} functions: time {p['wall_s']:.2f} s vs {x['added_wall_s']:+.2f} s added = {tw}"
            + (" ok" if p["wall_s"] / aw >= 10 else " MISSED")
            + f" (CPU {p['cpu_s']:.2f} s vs {x['added_cpu_s']:+.2f} s = {tc}"
            + (" ok" if p["cpu_s"] / ac >= 10 else " MISSED") + ")"
            + f"; files {p['files']:.0f} vs {x['files']:.0f} = {fr:.0f}x"
            + (" ok" if fr >= 100 else " MISSED")
            + f"; precord RSS {mb(x['rss_kb'], x['rss_exact'])}"
            + (" ok" if x["rss_kb"] < 100 * 1024 else " OVER"))
    for c in checks:
        lines.append(f"  check: {c}")
    lines.append(f"(bench took {elapsed:.0f} s, {B.stats['waited']:.0f} s of it waiting for other "
                 f"BPF programs to go before perf commands; perf aborts retried: "
                 f"{B.stats['perf_aborts']}; load average: {B.LOAD0} / "
                 f"{B.loadavg()}; {os.cpu_count()} CPUs)")
    text = "\n".join(lines)
    print(text)

    meta = B.meta(["perf", "precord"]) + [
        f"# reps\t{REPS}", f"# spin_ms\t{SPIN}", f"# elapsed_s\t{elapsed:.0f}",
        f"# loadavg_before\t{B.LOAD0}"]
    cols = ["funcs", "tool", "reps", "wall_s", "cpu_s", "rss_kb", "rss_exact", "files",
            "cache_files", "record_wall_s", "added_wall_s", "added_cpu_s", "jit_samples", "samples"]
    rcols = ["wall", "cpu", "rss", "rss_exact", "jitgen_rss", "files", "cache_files",
             "record_wall", "jit_samples", "samples"]
    B.write_results(meta, cols, summary, ["funcs", "tool", "rep"], rcols,
                    [(run[:3], run[3]) for run in runs], text)


B.run_main(main)
