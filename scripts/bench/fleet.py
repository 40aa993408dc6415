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
    """The one-minute file pushed cold (a new process: symbol tables
    loaded, kallsyms most of it) and warm (after warmup in the same
    process), as other hosts each time."""
    _, out = timed([PRECORD, "push", URL, "--host", f"cold-{tag}", path])
    cold_ms = push_ms(out, path)
    samples = int(out.split(path + ": ", 1)[1].split()[0])
    warm = []
    for i in range(REPS):
        _, out = timed([PRECORD, "push", URL, "--host", f"warm-{tag}-{i}", warmup, path])
        warm.append(push_ms(out, path))
    w = statistics.median(warm)
    rows = int(sql(f"SELECT count() FROM precord_samples_local WHERE host = 'cold-{tag}'"))
    weight = int(sql(f"SELECT sum(weight) FROM precord_samples_local WHERE host = 'cold-{tag}'"))
    results.append(dict(what=f"push {tag} one minute", file_bytes=os.path.getsize(path),
                        samples=samples, rows=rows, raw_samples=round(weight / (1e9 / 99)),
                        cold_ms=cold_ms, warm_ms=w, samples_per_s=samples / (w / 1000)))
    note(f"fleet.sh: push {tag}: {samples} samples ({round(weight / (1e9 / 99))} raw), {rows} rows, "
         f"{os.path.getsize(path)} B file; cold {cold_ms:.1f} ms, warm {w:.1f} ms "
         f"({samples / (w / 1000):.0f} samples/s)")


def stack_sql(n):
    """The arrays of synthetic stack n (an SQL expression): 8-40 frames of
    800 functions in 40 DSOs, no build-ids."""
    frames = f"range(8 + ({n}) % 33)"
    return (f"arrayMap(i -> concat('fn_', toString(cityHash64({n}, i) % 800)), {frames})",
            f"arrayMap(i -> concat('/usr/lib/lib', toString(cityHash64({n}, i) % 800 % 40), '.so'), {frames})",
            f"arrayMap(i -> '', {frames})")


def key_sql(arrays):
    """The stack key of three array expressions, as store.c computes it
    (user/fleet/hash.h, FLEET_STACK_KEY_SQL): a query keeps only the
    stacks whose content is their key, so made-up keys would query as
    [unverified]."""
    def one(a):
        return (f"concat(toString(length({a})), '[', arrayStringConcat(arrayMap(x -> "
                f"concat(toString(length(x)), ':', x), {a})), ']')")
    return ("reinterpretAsUInt64(substring(SHA256(concat('precord stack 1;', "
            + ", ".join(one(a) for a in arrays) + ")), 1, 8))")


def synth_day(host):
    """One host-day at 99 Hz on CPUS busy CPUs: 8640 windows of 10 s, each
    with 99*CPUS*10 samples over 100 (comm, pid, stack) rows drawn from
    3000 stacks of 8-40 frames of 800 functions in 40 DSOs, stored under
    their SHA-256 keys in precord_stacks2_local."""
    day0 = int(time.time()) - 86400
    day0 -= day0 % 10
    per_win = 99 * CPUS * 10
    sym, dso, bid = stack_sql("number")
    sql("INSERT INTO precord_stacks2_local (seen, stack_hash, symbols, dsos, build_ids) "
        f"SELECT toDateTime({day0}), {key_sql(('symbols', 'dsos', 'build_ids'))}, "
        f"symbols, dsos, build_ids FROM (SELECT {sym} AS symbols, {dso} AS dsos, "
        f"{bid} AS build_ids FROM numbers(3000))")
    # each row's stack number, then its key computed from that stack's arrays
    stack = "intHash64(intDiv(number, 100) * 7 + number % 100) % 3000"
    key = key_sql(stack_sql("n"))
    sql("INSERT INTO precord_samples_local (window, host, cgroup, comm, pid, leaf_build_id, "
        "stack_hash, count, weight, file_id, push_id) "
        f"SELECT toDateTime({day0} + intDiv(number, 100) * 10), '{host}', "
        "concat('/system.slice/svc', toString(cityHash64(number % 100) % 20), '.service'), "
        "concat('comm', toString(cityHash64(number % 100) % 20)), toUInt32(1000 + cityHash64(number % 100) % 50), "
        "'0123456789abcdef0123456789abcdef01234567', "
        f"{key}, "
        f"toUInt64({per_win // 100}), toUInt64({per_win // 100} * 10101010), "
        f"intDiv(number, 600), 1 FROM (SELECT number, {stack} AS n FROM numbers(864000))")
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
            s, out = timed([PRECORD, "query", URL, "--host", host, "--since", "2d"] + args)
            if "[unverified]" in out:
                B.fail(f"query {name}: the synthetic stacks query as [unverified] (their keys "
                       "are not the SHA-256 keys of their frames)")
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


def table_bytes():
    rows = sql("SELECT table, sum(data_compressed_bytes) FROM system.parts WHERE active AND "
               "database = currentDatabase() GROUP BY table FORMAT TabSeparated")
    return {l.split("\t")[0]: int(l.split("\t")[1]) for l in rows.splitlines() if l}


def optimize():
    for t in ["samples", "stacks2", "files", "pushes", "hour_stacks", "hour_hosts"]:
        sql(f"OPTIMIZE TABLE precord_{t}_local FINAL")


def bench_steady(tag, files):
    """Two consecutive one-minute files of one host pushed one after the
    other by two processes: the first pays for the day's stacks, the
    second is what every further minute costs (its stacks fold into the
    stored ones).  Bytes per table after OPTIMIZE FINAL."""
    host = f"steady-{tag}"
    for i, f in enumerate(files[:2]):
        optimize()
        before = table_bytes()
        run([PRECORD, "push", URL, "--host", host, f])
        optimize()
        after = table_bytes()
        d = {t: after.get(t, 0) - before.get(t, 0) for t in after}
        n = int(sql(f"SELECT sum(count) FROM precord_samples_local WHERE host = '{host}' "
                    f"AND file_id = (SELECT file_id FROM precord_files_local WHERE host = '{host}' "
                    f"AND name = '{f}')"))
        w = int(sql(f"SELECT sum(weight) FROM precord_files_local WHERE host = '{host}' AND name = '{f}'"))
        raw = w / (1e9 / 99)
        total = sum(d.values())
        results.append(dict(what=f"stored, {tag} minute {i + 1}", samples=n, raw_samples=round(raw),
                            bytes=total, bytes_per_sample=total / n, bytes_per_raw_sample=total / raw,
                            note=" ".join(f"{t.replace('precord_', '').replace('_local', '')}={v}"
                                          for t, v in sorted(d.items()))))
        note(f"fleet.sh: {tag} minute {i + 1}: {n} samples, {total} bytes stored "
             f"({total / n:.2f} B/sample, {total / raw:.2f} B/raw sample; {results[-1]['note']})")


def record_minutes(tag, extra):
    """Two one-minute files (--switch-output=60s) of `-a -g -F 99`."""
    base = f"{TMP}/{tag}.data"
    ok, err = record(base, extra + [f"--switch-output={int(SECS)}s"], 2 * SECS + 1)
    files = sorted(f"{TMP}/{n}" for n in os.listdir(TMP) if n.startswith(f"{tag}.data."))
    return ok, err, files


def main():
    run([PRECORD, "fleet-schema", URL])
    note(f"fleet.sh: recording 2 x {SECS:.0f} s of -a -g -F 99 (load {B.loadavg()})")
    ok, err, raw = record_minutes("raw", [])
    if not ok or len(raw) < 2:
        B.fail(f"precord -a -g -F 99 --switch-output failed: {err}")
    # a short file pushed first in the same process: the warm push of the
    # big one finds kallsyms, libc and the workload's tables loaded
    ok, err = record(f"{TMP}/warm.data", [], 2)
    sets = [("raw", raw)]
    ok_agg, err_agg, agg = record_minutes("agg", ["--aggregate"])
    if ok_agg and len(agg) >= 2:
        sets.append(("aggregate", agg))
    else:
        note(f"fleet.sh: --aggregate not measured: {err_agg.splitlines()[-1] if err_agg else '?'}")
        results.append(dict(what="push aggregate", note="--aggregate not in this build"))
    # storage first, on a store that holds no copy of these files
    for tag, files in sets:
        bench_steady(tag, files)
    for tag, files in sets:
        bench_push(tag, files[0], f"{TMP}/warm.data")
    before = stored_bytes()
    samples = synth_day("synthetic")
    sql("OPTIMIZE TABLE precord_stacks2_local FINAL")
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
