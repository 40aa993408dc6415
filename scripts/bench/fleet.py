"""The driver of the fleet-store benchmark, started by fleet.sh (which says
what it measures; docs/fleet.md, "Measured")."""
import os, statistics, subprocess, sys, time, urllib.parse, urllib.request

import benchlib as B
from benchlib import ROOT, TMP, OUT, PRECORD, note

URL = os.environ["FLEET_URL"]
REPS = int(os.environ.get("BENCH_REPS", "5"))
SECS = float(os.environ.get("BENCH_FLEET_SECS", "60"))
CPUS = int(os.environ.get("BENCH_FLEET_CPUS", "2"))
WL = f"{ROOT}/build/workloads/workload"
ENV = dict(os.environ, HOME=f"{TMP}/home", PERF_CONFIG=f"{TMP}/perfconfig", LC_ALL="C")
results = []


def sql(q, data=None):
    url = URL + "?" + urllib.parse.urlencode({"query": q})
    with urllib.request.urlopen(url, data=data if data is not None else b"", timeout=600) as r:
        return r.read().decode()


def run(argv, **kw):
    p = subprocess.run(argv, env=ENV, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       text=True, **kw)
    if p.returncode:
        B.fail(f"{' '.join(argv)} failed ({p.returncode}): {p.stderr.strip()[-400:]}")
    return p.stdout


def timed(argv):
    t = time.monotonic()
    out = run(argv)
    return time.monotonic() - t, out


def record(path, extra, secs=SECS):
    """secs of `-a -g -F 99` with both CPUs kept busy (workload threads)."""
    wl = subprocess.Popen([WL, "threads", "2", str(secs + 5)], env=ENV,
                          stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        p = subprocess.run([PRECORD, "-q", "-a", "-g", "-F", "99"] + extra +
                           ["-o", path, "--duration", str(secs)], env=ENV,
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    finally:
        wl.kill()
        wl.wait()
    return p.returncode == 0, p.stderr.strip()


def push_ms(out, path):
    for line in out.splitlines():
        if line.startswith(path + ":") and " ms" in line:
            return float(line.rsplit(",", 1)[1].split()[0])
    return None


def stored_bytes(where=""):
    return int(sql("SELECT sum(data_compressed_bytes) FROM system.parts WHERE active "
                   f"AND database = currentDatabase() AND table LIKE 'precord%local' {where}") or 0)


def bench_push(tag, path, warmup):
    samples = int(run(["perf", "report", "-i", path, "--stdio", "-n", "--no-children",
                       "--sort", "comm", "-q", "-g", "none"]).split() and
                  sum(int(l.split()[1]) for l in run(["perf", "report", "-i", path, "--stdio", "-n",
                      "--no-children", "--sort", "comm", "-q", "-g", "none"]).splitlines()
                      if l.strip()))
    for t in ["samples", "stacks", "files"]:
        sql(f"OPTIMIZE TABLE precord_{t}_local FINAL")
    before = stored_bytes()
    cold, out = timed([PRECORD, "push", URL, "--host", f"cold-{tag}", path])
    cold_ms = push_ms(out, path)
    # what this one file costs the store, compressed, its stacks and its
    # files row included (the warm pushes below are copies: not counted)
    for t in ["samples", "stacks", "files"]:
        sql(f"OPTIMIZE TABLE precord_{t}_local FINAL")
    file_stored = stored_bytes() - before
    warm = []
    for i in range(REPS):
        _, out = timed([PRECORD, "push", URL, "--host", f"warm-{tag}-{i}", warmup, path])
        warm.append(push_ms(out, path))
    w = statistics.median(warm)
    rows = int(sql(f"SELECT count() FROM precord_samples_local WHERE host = 'cold-{tag}'"))
    weight = int(sql(f"SELECT sum(weight) FROM precord_samples_local WHERE host = 'cold-{tag}'"))
    results.append(dict(what=f"push {tag}", file_bytes=os.path.getsize(path), samples=samples,
                        rows=rows, raw_samples=round(weight / (1e9 / 99)), bytes=file_stored,
                        bytes_per_sample=file_stored / samples,
                        bytes_per_raw_sample=file_stored / (weight / (1e9 / 99)),
                        cold_ms=cold_ms, warm_ms=w, samples_per_s=samples / (w / 1000)))
    note(f"fleet.sh: push {tag}: {samples} samples, {rows} rows, {file_stored} bytes stored; cold {cold_ms:.1f} ms, "
         f"warm {w:.1f} ms ({samples / (w / 1000):.0f} samples/s)")


def synth_day(host):
    """One host-day at 99 Hz on CPUS busy CPUs: 8640 windows of 10 s, each
    with 99*CPUS*10 samples over 100 (comm, pid, stack) rows drawn from
    3000 stacks of 8-40 frames of 800 functions in 40 DSOs."""
    day0 = int(time.time()) - 86400
    day0 -= day0 % 10
    per_win = 99 * CPUS * 10
    sql("INSERT INTO precord_stacks_local (seen, stack_hash, symbols, dsos, build_ids) "
        f"SELECT toDateTime({day0}), number, "
        "arrayMap(i -> concat('fn_', toString(cityHash64(number, i) % 800)), range(8 + number % 33)), "
        "arrayMap(i -> concat('/usr/lib/lib', toString(cityHash64(number, i) % 800 % 40), '.so'), range(8 + number % 33)), "
        "arrayMap(i -> '', range(8 + number % 33)) FROM numbers(3000)")
    sql("INSERT INTO precord_samples_local (window, host, cgroup, comm, pid, leaf_build_id, "
        "stack_hash, count, weight, file_id, push_id) "
        f"SELECT toDateTime({day0} + intDiv(number, 100) * 10), '{host}', "
        "concat('/system.slice/svc', toString(cityHash64(number % 100) % 20), '.service'), "
        "concat('comm', toString(cityHash64(number % 100) % 20)), toUInt32(1000 + cityHash64(number % 100) % 50), "
        "'0123456789abcdef0123456789abcdef01234567', "
        f"intHash64(intDiv(number, 100) * 7 + number % 100) % 3000, "
        f"toUInt64({per_win // 100}), toUInt64({per_win // 100} * 10101010), "
        "intDiv(number, 600), 1 FROM numbers(864000)")
    sql("INSERT INTO precord_files_local (host, file_id, push_id, name, samples, weight, first, last, pushed_ns) "
        f"SELECT '{host}', number, 1, concat('synthetic.', toString(number)), {per_win // 100 * 600}, 0, "
        f"toDateTime({day0} + number * 60), toDateTime({day0} + number * 60 + 59), 0 FROM numbers(1440)")
    sql("OPTIMIZE TABLE precord_samples_local FINAL")
    samples = int(sql(f"SELECT sum(count) FROM precord_samples_local WHERE host = '{host}'"))
    return samples


def bench_query(host, samples):
    for name, args in [("--top 20", ["--top", "20"]), ("--top 20 --children", ["--top", "20", "--children"]),
                       ("--totals", ["--totals"]), ("--folded", ["--folded"]),
                       ("--flamegraph", ["--flamegraph", f"{TMP}/flame.svg"])]:
        t = []
        for _ in range(REPS):
            s, _ = timed([PRECORD, "query", URL, "--host", host, "--since", "2d"] + args)
            t.append(s * 1000)
        m = statistics.median(t)
        results.append(dict(what=f"query {name}", samples=samples, ms=m))
        note(f"fleet.sh: query {name} over one host-day ({samples} samples): {m:.0f} ms")


def bench_formats():
    """The synthetic day's rows inserted in three formats into a scratch
    table: what each costs the server (push sends TabSeparated)."""
    sql("CREATE TABLE IF NOT EXISTS scratch AS precord_samples_local")
    cols = "window, host, cgroup, comm, pid, leaf_build_id, stack_hash, count, weight, file_id, push_id"
    for fmt in ["TabSeparated", "RowBinary", "JSONEachRow"]:
        url = URL + "?" + urllib.parse.urlencode(
            {"query": f"SELECT {cols} FROM precord_samples_local WHERE host = 'synthetic' FORMAT {fmt}"})
        data = urllib.request.urlopen(url, data=b"", timeout=600).read()
        t = []
        for _ in range(3):
            sql("TRUNCATE TABLE scratch")
            s = time.monotonic()
            sql(f"INSERT INTO scratch ({cols}) FORMAT {fmt}", data)
            t.append(time.monotonic() - s)
        m = statistics.median(t)
        rows = int(sql("SELECT count() FROM scratch"))
        results.append(dict(what=f"insert {fmt}", rows=rows, file_bytes=len(data), ms=m * 1000,
                            rows_per_s=rows / m))
        note(f"fleet.sh: insert {fmt}: {rows} rows, {len(data)} bytes, {m * 1000:.0f} ms "
             f"({rows / m:.0f} rows/s)")
    sql("DROP TABLE scratch")


def main():
    run([PRECORD, "fleet-schema", URL])
    note(f"fleet.sh: recording {SECS:.0f} s of -a -g -F 99 (load {B.loadavg()})")
    ok, err = record(f"{TMP}/raw.data", [])
    if not ok:
        B.fail(f"precord -a -g -F 99 failed: {err}")
    # a short file pushed first in the same process: the warm push of the
    # big one finds kallsyms, libc and the workload's tables loaded
    ok, err = record(f"{TMP}/warm.data", [], 2)
    files = [("raw", f"{TMP}/raw.data")]
    ok_agg, err_agg = record(f"{TMP}/agg.data", ["--aggregate"])
    if ok_agg:
        files.append(("aggregate", f"{TMP}/agg.data"))
    else:
        note(f"fleet.sh: --aggregate not measured: {err_agg.splitlines()[-1] if err_agg else '?'}")
        results.append(dict(what="push aggregate", note="--aggregate not in this build"))
    for tag, path in files:
        bench_push(tag, path, f"{TMP}/warm.data")
    before = stored_bytes()
    samples = synth_day("synthetic")
    sql("OPTIMIZE TABLE precord_stacks_local FINAL")
    parts = sql("SELECT table, sum(rows), sum(data_compressed_bytes), sum(data_uncompressed_bytes) "
                "FROM system.parts WHERE active AND database = currentDatabase() GROUP BY table "
                "ORDER BY table FORMAT TabSeparated")
    day = int(sql("SELECT sum(data_compressed_bytes) FROM system.parts WHERE active AND "
                  "database = currentDatabase() AND table = 'precord_samples_local'"))
    rows = int(sql("SELECT count() FROM precord_samples_local WHERE host = 'synthetic'"))
    results.append(dict(what="stored, synthetic host-day", samples=samples, rows=rows,
                        bytes=stored_bytes() - before,
                        bytes_per_sample=(stored_bytes() - before) / samples))
    note(f"fleet.sh: synthetic host-day: {samples} samples in {rows} rows; "
         f"{stored_bytes() - before} bytes ({(stored_bytes() - before) / samples:.3f} B/sample)\n{parts}")
    bench_query("synthetic", samples)
    bench_formats()
    cols = ["what", "samples", "raw_samples", "rows", "file_bytes", "cold_ms", "warm_ms",
            "samples_per_s", "bytes", "bytes_per_sample", "bytes_per_raw_sample", "ms",
            "rows_per_s", "note"]
    text = "\n".join("  ".join(f"{c}={B.cell(r.get(c))}" for c in cols if r.get(c) is not None)
                     for r in results)
    meta = B.meta(["precord"], None) + [f"# load\t{B.LOAD0} -> {B.loadavg()}",
                                        f"# clickhouse\t{sql('SELECT version()').strip()}"]
    B.write_results(meta, cols, results, ["what"], cols[1:], [([r["what"]], r) for r in results],
                    text)
    print("\n".join(meta) + "\n\n" + text)


B.run_main(main, catch_signals=True)
