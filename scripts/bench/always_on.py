"""Driver of scripts/bench/always_on.sh: see there and docs/benchmarks.md.

Figures come from /proc/PID of the running precord: utime+stime (stat
fields 14 and 15, in clock ticks) for its CPU, VmRSS (status) for its
memory, the entries of /proc/PID/fd for its descriptors; lost samples from
its summary line; the files from the lines it announces on stdout."""
import os, re, subprocess, time

from benchlib import (ROOT, TMP, PRECORD, NAME, children, fail, kill_children,
                      meta, note, run_main, spawn, table_head, write_results)

WL = f"{ROOT}/build/workloads/workload"
TICK = os.sysconf("SC_CLK_TCK")
SOAK = float(os.environ.get("BENCH_SOAK_SECS", "600"))
JIT_SOAK = int(os.environ.get("BENCH_JIT_SOAK_SECS", "60"))
JS = f"{ROOT}/tests/workloads/js/hot.js"


def cpu_s(pid):
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICK	# utime, stime


def rss_kb(pid):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return 0


def nr_fds(pid):
    return len(os.listdir(f"/proc/{pid}/fd"))


def has_aggregate():
    """Whether this build takes --aggregate (another branch adds it)."""
    r = subprocess.run([PRECORD, "--aggregate", "-q", "-o", f"{TMP}/probe.data",
                        "--duration", "0.2", "-a"], capture_output=True, text=True)
    return "not implemented" not in r.stderr and "unrecognized" not in r.stderr


def start_precord(argv, tag):
    d = f"{TMP}/{tag}"
    os.makedirs(d, exist_ok=True)
    log = f"{TMP}/{tag}.log"
    files = f"{TMP}/{tag}.files"
    with open(files, "w") as fo, open(log, "w") as fe:
        p = subprocess.Popen([PRECORD] + argv, cwd=d, stdout=fo, stderr=fe,
                             stdin=subprocess.DEVNULL)
    children.add(p.pid)
    return p, log, files


def lost_of(log):
    m = re.search(r"\((\d+) samples, (\d+) lost\)", open(log).read())
    if not m:
        fail("no summary line from precord", log)
    return int(m.group(1)), int(m.group(2))


def busy(n, secs):
    return [spawn([WL, "hot3", str(secs)], f"{TMP}/busy.log", os.environ) for _ in range(n)]


def cost(agg, rotate=True):
    """rotate False: the same recording in one file, the baseline."""
    argv = ["-a", "-g", "-F", "99"] + (["--switch-output=5s"] if rotate else []) + \
        (["--aggregate"] if agg else [])
    for pid in busy(2, 40):
        children.add(pid)
    time.sleep(0.5)
    p, log, files = start_precord(argv + ["--", "sleep", "30"], "cost")
    t0 = time.monotonic()
    samples = {}
    while p.poll() is None:
        t = time.monotonic() - t0
        for mark in (1, 10, 28, 29):
            if mark not in samples and t >= mark:
                try:
                    samples[mark] = (t, cpu_s(p.pid), rss_kb(p.pid))
                except OSError:
                    pass
        time.sleep(0.05)
    if p.returncode:
        fail(f"precord exited {p.returncode}", log)
    kill_children()
    nsamp, lost = lost_of(log)
    (ta, ca, _), (tb, cb, _) = samples[1], samples[29]
    return dict(cpu_pct=100 * (cb - ca) / (tb - ta), rss10_kb=samples[10][2],
                rss28_kb=samples[28][2],
                rss_change_pct=100 * (samples[28][2] - samples[10][2]) / samples[10][2],
                samples=nsamp, lost=lost, files=len(open(files).read().split()))


def soak(agg):
    argv = ["-a", "-g", "-F", "99", "--switch-output=5s", "--switch-max-files=4"] + \
        (["--aggregate"] if agg else [])
    # churn ends 2 s before precord, so it prints its rounds
    churn = spawn([WL, "churn", str(SOAK - 1.5)], f"{TMP}/churn.log", os.environ)
    children.add(churn)
    time.sleep(0.5)
    p, log, files = start_precord(argv + ["--", "sleep", str(SOAK)], "soak")
    t0 = time.monotonic()
    rows, next_t = [], 10.0
    while p.poll() is None:
        t = time.monotonic() - t0
        if t >= next_t:
            try:
                rows.append(dict(t=round(t), rss_kb=rss_kb(p.pid), fds=nr_fds(p.pid),
                                 cpu_s=cpu_s(p.pid)))
            except OSError:
                pass
            next_t += 10
        time.sleep(0.2)
    if p.returncode:
        fail(f"precord exited {p.returncode}", log)
    kill_children()
    nsamp, lost = lost_of(log)
    rounds = re.search(r"churn: (\d+) rounds", open(f"{TMP}/churn.log").read())
    if len(rows) < 3:
        fail("the soak is too short to compare: give BENCH_SOAK_SECS >= 40")
    first = rows[min(2, len(rows) - 1)]		# 30 s in: past the start-up
    last = rows[-1]
    return dict(secs=SOAK, rss30_kb=first["rss_kb"], rss_end_kb=last["rss_kb"],
                rss_max_kb=max(r["rss_kb"] for r in rows),
                fds_min=min(r["fds"] for r in rows), fds_max=max(r["fds"] for r in rows),
                cpu_pct=100 * (last["cpu_s"] - first["cpu_s"]) / max(1, last["t"] - first["t"]),
                samples=nsamp, lost=lost, files_announced=len(open(files).read().split()),
                files_kept=len([f for f in os.listdir(f"{TMP}/soak") if re.fullmatch(r"perf\.data\.\d{16}", f)]),
                churn_rounds=int(rounds.group(1)) if rounds else 0), rows


def du_mb(path):
    """Disk use of the files under path (blocks, links not followed), MiB."""
    total = 0
    for d, _, files in os.walk(path):
        for f in files:
            try:
                total += os.lstat(os.path.join(d, f)).st_blocks * 512
            except OSError:
                pass
    return total / 2**20


def jit_soak():
    """JIT processes coming and going (a node --perf-prof process every
    ~0.25 s, 0.2 s of JS each) under rotation with --switch-max-files=3:
    precord's RSS and descriptors, FILE.jit/ and the build-id cache every
    10 s.  Before precord forgot exited JIT processes and pruned their
    images, all four grew without bound."""
    loop = (f'while [ $SECONDS -lt {JIT_SOAK} ]; do node --perf-prof "$1" 0.2 >/dev/null; '
            'rm -f jit-*.dump isolate-*.log; done')
    p, log, _ = start_precord(["-q", "-g", "-F", "99", "--switch-output=2s", "--switch-max-files=3",
                               "--", "bash", "-c", loop, "bash", JS], "jitsoak")
    d, cache = f"{TMP}/jitsoak", os.path.join(os.environ["HOME"], ".debug")
    t0, rows, next_t = time.monotonic(), [], 10.0
    while p.poll() is None:
        t = time.monotonic() - t0
        if t >= next_t:
            try:
                rows.append(dict(t=round(t), rss_kb=rss_kb(p.pid), fds=nr_fds(p.pid),
                                 jit_mb=round(du_mb(f"{d}/perf.data.jit"), 1),
                                 cache_mb=round(du_mb(cache), 1)))
            except OSError:
                pass
            next_t += 10
        time.sleep(0.2)
    if p.returncode:
        fail(f"precord exited {p.returncode}", log)
    if len(rows) < 2:
        fail("the JIT soak is too short: give BENCH_JIT_SOAK_SECS >= 30")
    return dict(secs=JIT_SOAK, rss10_kb=rows[0]["rss_kb"], rss_end_kb=rows[-1]["rss_kb"],
                fds_min=min(r["fds"] for r in rows), fds_max=max(r["fds"] for r in rows),
                jit_max_mb=max(r["jit_mb"] for r in rows),
                cache_max_mb=max(r["cache_mb"] for r in rows)), rows


def main():
    agg = has_aggregate()
    note(f"{NAME}.sh: --aggregate {'is' if agg else 'is not'} in this build"
         f"{'' if agg else ' (refused): measured without it'}")
    base = cost(agg, rotate=False)
    note(f"{NAME}.sh: one file (baseline): {base}")
    c = cost(agg)
    note(f"{NAME}.sh: cost: {c}")
    s, rows = soak(agg)
    note(f"{NAME}.sh: soak: {s}")
    j, jrows = jit_soak()
    note(f"{NAME}.sh: JIT soak: {j}")
    lines = meta(["precord"]) + [f"# aggregate\t{'yes' if agg else 'no (refused by this build)'}"]
    text = "\n".join(table_head("always-on cost (-a -g -F 99 --switch-output=5s, 2 CPUs busy, 30 s)",
                      "run | cpu % of one CPU | RSS 10 s | RSS 28 s | change | samples | lost | files")) + "\n"
    for tag, r in (("one file", base), ("rotating", c)):
        text += (f"{tag} | {r['cpu_pct']:.2f} | {r['rss10_kb']} kB | {r['rss28_kb']} kB | "
                 f"{r['rss_change_pct']:+.1f}% | {r['samples']} | {r['lost']} | {r['files']}\n")
    text += "\n"
    text += "\n".join(table_head(f"soak ({SOAK:.0f} s, workload churn, --switch-max-files=4)",
                       "RSS 30 s | RSS end | RSS max | fds min-max | cpu % | samples | lost | "
                       "files announced/kept | churn rounds")) + "\n"
    text += (f"{s['rss30_kb']} kB | {s['rss_end_kb']} kB | {s['rss_max_kb']} kB | "
             f"{s['fds_min']}-{s['fds_max']} | {s['cpu_pct']:.2f} | {s['samples']} | {s['lost']} | "
             f"{s['files_announced']}/{s['files_kept']} | {s['churn_rounds']}\n")
    text += "\n"
    text += "\n".join(table_head(f"JIT soak ({JIT_SOAK} s, node --perf-prof every ~0.25 s, "
                                 "--switch-output=2s --switch-max-files=3)",
                                 "RSS 10 s | RSS end | fds min-max | FILE.jit max | "
                                 "build-id cache max")) + "\n"
    text += (f"{j['rss10_kb']} kB | {j['rss_end_kb']} kB | {j['fds_min']}-{j['fds_max']} | "
             f"{j['jit_max_mb']} MiB | {j['cache_max_mb']} MiB\n")
    print(text)
    summary = [dict(phase="one-file", **base), dict(phase="cost", **c), dict(phase="soak", **s),
               dict(phase="jit-soak", **j)]
    cols = ["phase", "cpu_pct", "rss10_kb", "rss28_kb", "rss_change_pct", "rss30_kb",
            "rss_end_kb", "rss_max_kb", "fds_min", "fds_max", "samples", "lost", "files",
            "files_announced", "files_kept", "churn_rounds", "jit_max_mb", "cache_max_mb", "secs"]
    write_results(lines, cols, summary, ["phase"],
                  ["t", "rss_kb", "fds", "cpu_s", "jit_mb", "cache_mb"],
                  [(["soak"], r) for r in rows] + [(["jit-soak"], r) for r in jrows], text)


run_main(main, catch_signals=True)
