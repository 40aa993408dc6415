"""The driver of the fleet-scale benchmark, started by fleet_scale.sh
(which says what it measures; docs/fleet.md, "Rollups")."""
import glob, os, re, statistics, subprocess, time, urllib.error, urllib.parse, urllib.request

import benchlib as B
from benchlib import ROOT, TMP, PRECORD, note

URL, URL2 = os.environ["FLEET_URL"], os.environ["FLEET_URL2"]
HOSTS = int(os.environ.get("BENCH_FLEET_HOSTS", "1000"))
HOURS = int(os.environ.get("BENCH_FLEET_HOURS", "24"))
SECS = int(os.environ.get("BENCH_FLEET_SECS", "20"))
REPS = int(os.environ.get("BENCH_REPS", "5"))
# what the seed host runs beside the workload: "build" (default), a loop
# of compilers, one a second (new processes and stacks all the time, as on a host that
# builds or runs short jobs), or "quiet" (the workload alone: ~20 rows a
# window, a lower bound)
SEED = os.environ.get("BENCH_FLEET_SEED", "build")
WL = f"{ROOT}/build/workloads/workload"
ENV = dict(os.environ, HOME=f"{TMP}/home", PERF_CONFIG=f"{TMP}/perfconfig", LC_ALL="C")
FILE_WINDOWS = 30		# 5-minute files: 30 windows of 10 s
results = []


def sql(q, url=URL, data=None):
    url = url + "?" + urllib.parse.urlencode({"query": q, "insert_distributed_sync": "1"})
    try:
        with urllib.request.urlopen(url, data=data if data is not None else b"", timeout=3600) as r:
            return r.read().decode()
    except urllib.error.HTTPError as e:
        B.fail(f"ClickHouse refused {q[:300]}...: {e.read().decode()[:400]}")


def run(argv, env=ENV):
    p = subprocess.run(argv, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    if p.returncode:
        B.fail(f"{' '.join(argv)} failed ({p.returncode}): {p.stderr.strip()[-400:]}")
    return p.stdout


def timed(argv, env=ENV):
    t = time.monotonic()
    run(argv, env)
    return time.monotonic() - t


def record(path):
    wl = subprocess.Popen([WL, "threads", "2", str(SECS + 5)], env=ENV,
                          stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    build = None
    if SEED == "build":
        srcs = " ".join(sorted(glob.glob(f"{ROOT}/user/*/*.c"))[:40])
        build = subprocess.Popen(["sh", "-c", f"cd {ROOT} && while :; do for f in {srcs}; do "
                                  "cc -O1 -Iinclude -Iuser -Ibuild -c $f -o /dev/null 2>/dev/null; sleep 1; "
                                  "done; done"], env=ENV, start_new_session=True,
                                 stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        run([PRECORD, "-q", "-a", "-g", "-F", "99", "--aggregate", "-o", path,
             "--duration", str(SECS)])
    finally:
        for p in (wl, build):
            if p:
                os.killpg(p.pid, 9) if p is build else p.kill()
                p.wait()


SAMPLE_COLS = ("window, host, cgroup, comm, pid, leaf_build_id, stack_hash, count, weight, "
               "file_id, push_id, event")


def hour_rows(t0, h, hosts=HOSTS, first=0):
    """The SELECT of hour h's rows of every host: the seed's windows in
    turn, files of FILE_WINDOWS windows with their ids."""
    return (f"SELECT toDateTime({t0} + {h} * 3600 + w * 10) AS window, concat('h', toString(hh + 1)) AS host, "
            "cgroup, comm, pid, leaf_build_id, stack_hash, count, weight, "
            f"cityHash64(hh, {h}, intDiv(w, {FILE_WINDOWS})) AS file_id, "
            f"cityHash64(hh, {h}, intDiv(w, {FILE_WINDOWS}), 1) AS push_id, event "
            f"FROM (SELECT {first} + number % {hosts} AS hh, intDiv(number, {hosts}) AS w, "
            f"w % (SELECT max(k) + 1 FROM seed) AS k FROM numbers({hosts * 360})) "
            "ALL INNER JOIN seed USING k")


def file_rows(t0, h, table):
    """The pushes or files rows of hour h's files."""
    files = f"SELECT number % {HOSTS} AS hh, intDiv(number, {HOSTS}) AS f FROM numbers({HOSTS * 360 // FILE_WINDOWS})"
    common = (f"concat('h', toString(hh + 1)), cityHash64(hh, {h}, f), cityHash64(hh, {h}, f, 1), "
              f"toDateTime({t0} + {h} * 3600 + f * {FILE_WINDOWS * 10}), "
              f"toDateTime({t0} + {h} * 3600 + f * {FILE_WINDOWS * 10} + {FILE_WINDOWS * 10 - 10})")
    if table == "pushes":
        return (f"INSERT INTO precord_pushes (host, file_id, push_id, first, last, started_ns) "
                f"SELECT {common}, 0 FROM ({files})")
    return (f"INSERT INTO precord_files (host, file_id, push_id, first, last, name, samples, records, "
            f"weight, pushed_ns) SELECT {common}, 'replica', 0, 0, 0, 1 FROM ({files})")


def parts(table):
    r = sql("SELECT sum(rows), sum(data_compressed_bytes) FROM system.parts WHERE active AND "
            f"database = currentDatabase() AND table = '{table}' FORMAT TabSeparated")
    r2 = sql("SELECT sum(rows), sum(data_compressed_bytes) FROM system.parts WHERE active AND "
             f"database = currentDatabase() AND table = '{table}' FORMAT TabSeparated", URL2)
    a, b = [int(x or 0) for x in r.split()], [int(x or 0) for x in r2.split()]
    return a[0] + b[0], a[1] + b[1]


def settle(limit=1800):
    """Waits (at most limit seconds) for both shards' background merges
    of the replicated rows to end, so that the insert rate is the views'
    cost and not the merges' competition for the CPUs; returns the wait."""
    s = time.monotonic()
    while time.monotonic() - s < limit:
        busy = sum(int(sql("SELECT count() FROM system.merges FORMAT TabSeparated", u) or 0)
                   for u in (URL, URL2))
        if not busy:
            break
        time.sleep(5)
    return time.monotonic() - s


def bench_insert_rate(t0, seed_rows, seed_windows):
    """An hour of the rows of as many hosts as make ~1M rows (in memory
    first) inserted into a samples table with the rollups' views and into
    one without."""
    hosts = max(1, 1000000 * seed_windows // (seed_rows * 360))
    sql("CREATE TABLE chunk ENGINE = Memory AS " + hour_rows(t0, 0, hosts))
    n = int(sql("SELECT count() FROM chunk"))
    sql("CREATE DATABASE IF NOT EXISTS ins")
    sql("CREATE TABLE ins.plain AS precord_samples_local")
    sql("CREATE TABLE ins.rolled AS precord_samples_local")
    for t in ("hour_stacks", "hour_hosts"):
        sql(f"CREATE TABLE ins.{t} AS precord_{t}_local")
        view = sql(f"SELECT create_table_query FROM system.tables WHERE database = currentDatabase() "
                   f"AND name = 'precord_{t}_mv' FORMAT TSVRaw").strip()
        sel = re.sub(r"FROM \S*precord_samples_local", "FROM ins.rolled", view.split(" AS SELECT ", 1)[1])
        sql(f"CREATE MATERIALIZED VIEW ins.{t}_mv TO ins.{t} AS SELECT {sel}")
    t = {"plain": [], "rolled": []}
    for _ in range(REPS):
        for table in ("plain", "rolled"):
            sql(f"TRUNCATE TABLE ins.{table}")
            s = time.monotonic()
            sql(f"INSERT INTO ins.{table} ({SAMPLE_COLS}) SELECT {SAMPLE_COLS} FROM chunk")
            t[table].append(time.monotonic() - s)
    sql("DROP DATABASE ins")
    sql("DROP TABLE chunk")
    plain, rolled = statistics.median(t["plain"]), statistics.median(t["rolled"])
    results.append(dict(what="insert without rollups", rows=n, ms=plain * 1000, rows_per_s=n / plain))
    results.append(dict(what="insert with rollups", rows=n, ms=rolled * 1000, rows_per_s=n / rolled,
                        ratio=rolled / plain))
    note(f"fleet_scale.sh: insert of {n} rows: {n / plain:.0f} rows/s without rollups, "
         f"{n / rolled:.0f} with ({rolled / plain:.2f}x the time; target <= 1.3)")


def main():
    for u in (URL, URL2):
        run([PRECORD, "fleet-schema", u, "--cluster", "precord"])
    note(f"fleet_scale.sh: recording {SECS} s of -a -g -F 99 --aggregate, seed host '{SEED}' "
         f"(load {B.loadavg()})")
    record(f"{TMP}/seed.data")
    run([PRECORD, "push", URL, "--host", "h0", f"{TMP}/seed.data"])
    # the seed: h0's rows by window number
    w0 = int(sql("SELECT toUInt32(min(window)) FROM precord_samples WHERE host = 'h0'"))
    sql(f"CREATE TABLE seed ENGINE = Memory AS SELECT toUInt64(intDiv(toUInt32(window) - {w0}, 10)) AS k, "
        "cgroup, comm, pid, leaf_build_id, stack_hash, count, weight, event "
        "FROM precord_samples WHERE host = 'h0'")
    seed_rows = int(sql("SELECT count() FROM seed"))
    seed_windows = int(sql("SELECT max(k) + 1 FROM seed"))
    t0 = (int(time.time()) // 3600 - HOURS) * 3600
    note(f"fleet_scale.sh: seed {seed_rows} rows in {seed_windows} windows; replicating to "
         f"{HOSTS} hosts x {HOURS} h (~{seed_rows * 8640 * HOSTS * HOURS // 24 // seed_windows} rows)")
    ins = []
    for h in range(HOURS):
        s = time.monotonic()
        sql(file_rows(t0, h, "pushes"))
        # INSERTs of at most ~300K rows (the servers' 1.86 GiB per query)
        step = max(1, 300000 * seed_windows // (seed_rows * 360))
        for lo in range(0, HOSTS, step):
            sql(f"INSERT INTO precord_samples ({SAMPLE_COLS}) " +
                hour_rows(t0, h, min(step, HOSTS - lo), lo))
        sql(file_rows(t0, h, "files"))
        ins.append(time.monotonic() - s)
        note(f"fleet_scale.sh: hour {h + 1}/{HOURS} in {ins[-1]:.0f} s (load {B.loadavg()})")
    rows = int(sql("SELECT count() FROM precord_samples"))
    samples = int(sql(f"SELECT sum(count) FROM precord_samples WHERE window >= toDateTime({t0})"))
    note(f"fleet_scale.sh: {rows} rows ({samples} samples) in {sum(ins):.0f} s "
         f"({rows / sum(ins):.0f} rows/s through the views, load {B.loadavg()})")
    results.append(dict(what="replicated", rows=rows, samples=samples, ms=sum(ins) * 1000,
                        rows_per_s=rows / sum(ins), note=f"{HOSTS} hosts x {HOURS} h"))
    for t in ("samples", "hour_stacks", "hour_hosts", "pushes", "files", "stacks2"):
        r, b = parts(f"precord_{t}_local")
        results.append(dict(what=f"stored {t}", rows=r, bytes=b))
        note(f"fleet_scale.sh: precord_{t}_local: {r} rows, {b} bytes (before merges)")
    since = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(t0))
    cases = [("fleet --top 20", ["--top", "20"]), ("fleet --totals", ["--totals"]),
             ("fleet --folded", ["--folded"]),
             ("fleet --flamegraph", ["--flamegraph", f"{TMP}/flame.svg"]),
             ("one host --top 20", ["--top", "20", "--host", "h42"])]
    times = {}
    for _ in range(REPS):
        for name, args in cases:
            times.setdefault(name, []).append(timed([PRECORD, "query", URL, "--since", since] + args))
    host_ms = statistics.median(times["one host --top 20"]) * 1000
    for name, _ in cases:
        m = statistics.median(times[name]) * 1000
        results.append(dict(what=f"query {name}", ms=m, ratio=m / host_ms))
        note(f"fleet_scale.sh: query {name}: {m:.0f} ms ({m / host_ms:.1f}x one host)")
    raw = dict(ENV, PRECORD_FLEET_ROLLUP="0")
    for name, args in cases[:4]:
        # the raw rows may not fit a query's memory at this size: said,
        # not fatal
        t = time.monotonic()
        p = subprocess.run([PRECORD, "query", URL, "--since", since] + args, env=raw,
                           stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        m = (time.monotonic() - t) * 1000
        why = "" if p.returncode == 0 else p.stderr.strip().splitlines()[-1][-160:]
        results.append(dict(what=f"query {name}, raw rows", ms=m, ratio=m / host_ms,
                            note=f"failed: {why}" if why else None))
        note(f"fleet_scale.sh: query {name} from the raw rows: {m:.0f} ms" +
             (f" (failed: {why})" if why else ""))
    waited = settle()
    note(f"fleet_scale.sh: waited {waited:.0f} s for the shards' merges (load {B.loadavg()})")
    bench_insert_rate(t0, seed_rows, seed_windows)
    cols = ["what", "rows", "samples", "bytes", "ms", "rows_per_s", "ratio", "note"]
    text = "\n".join("  ".join(f"{c}={B.cell(r.get(c))}" for c in cols if r.get(c) is not None)
                     for r in results)
    meta = B.meta(["precord"], None) + [f"# load\t{B.LOAD0} -> {B.loadavg()}",
                                        f"# size\t{HOSTS} hosts x {HOURS} h",
                                        f"# clickhouse\t{sql('SELECT version()').strip()}"]
    B.write_results(meta, cols, results, ["what"], cols[1:], [([r["what"]], r) for r in results],
                    text)
    print("\n".join(meta) + "\n\n" + text)


B.run_main(main, catch_signals=True)
