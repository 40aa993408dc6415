"""What the Python drivers of the benchmarks in scripts/bench/ share.

Each driver, scripts/bench/NAME.py, is started by NAME.sh (see lib.bash,
run_driver) as `python3 -B NAME.py ROOT TMP OUT [ARG...]`: the top of the
tree, the bench's temporary directory and the directory for the results.
Messages start with "NAME.sh:"; the results are OUT/NAME.tsv,
OUT/NAME-runs.tsv and OUT/NAME.txt (write_results).
"""
import json, os, shutil, signal, statistics, struct, subprocess, sys, time

ROOT, TMP, OUT = sys.argv[1:4]
NAME = os.path.splitext(os.path.basename(sys.argv[0]))[0]	# record, trace, jit
PRECORD = f"{ROOT}/build/precord"
LAUNCH = f"{TMP}/launch"	# launch.c, built by lib.bash
BPFTOOL = shutil.which("bpftool") or "/usr/sbin/bpftool"
LOG = None			# a log shown by fail() when it names none
QUIET_WAIT, QUIET_BUDGET = 20.0, 60.0	# see wait_quiet
children = set()		# killed when the driver ends (run_main)
stats = dict(waited=0.0, perf_aborts=0)


def loadavg():
    return open("/proc/loadavg").read().split()[0]


LOAD0 = loadavg()


def note(msg):
    print(msg, file=sys.stderr, flush=True)


def fail(msg, log=None):
    """Give up: the message, the end of log (or of LOG), exit status 1."""
    note(f"{NAME}.sh: {msg}")
    log = log or LOG
    if log:
        try:
            with open(log, errors="replace") as f:
                note("".join(f.readlines()[-20:]))
        except OSError:
            pass
    raise SystemExit(1)


def spawn(argv, log, env, cwd=None, fresh=False):
    """Start argv (stdin /dev/null, stdout and stderr to log) and return its
    pid.  log is appended to, after a "$ argv" line; fresh: truncated,
    with no such line."""
    if fresh:
        mode = os.O_WRONLY | os.O_CREAT | os.O_TRUNC
    else:
        mode = os.O_WRONLY | os.O_CREAT | os.O_APPEND
        with open(log, "a") as f:
            f.write("$ " + " ".join(argv) + "\n")
    fa = [(os.POSIX_SPAWN_OPEN, 0, "/dev/null", os.O_RDONLY, 0),
          (os.POSIX_SPAWN_OPEN, 1, log, mode, 0o600),
          (os.POSIX_SPAWN_DUP2, 1, 2)]
    if cwd:
        old = os.getcwd()
        os.chdir(cwd)		# posix_spawn has no cwd argument
    try:
        pid = os.posix_spawnp(argv[0], argv, env, file_actions=fa)
    finally:
        if cwd:
            os.chdir(old)
    children.add(pid)
    return pid


def reap(pid, flags=0):
    """os.wait4, and pid is no longer one of the children once it is reaped."""
    wp, st, ru = os.wait4(pid, flags)
    if wp:
        children.discard(pid)
    return wp, st, ru


def launch_result(path):
    """What the launcher wrote: (user_us, sys_us, maxrss_kb, exit code or
    -1, signal or 0)."""
    return tuple(int(x) for x in open(path).read().split())


def bpf_progs():
    """How many BPF programs are loaded (-1: unknown)."""
    try:
        r = subprocess.run([BPFTOOL, "prog", "list", "-j"], stdout=subprocess.PIPE,
                           stderr=subprocess.DEVNULL, text=True, timeout=10)
        return len(json.loads(r.stdout or "[]"))
    except (OSError, ValueError, subprocess.SubprocessError):
        return -1


def wait_quiet():
    """perf 6.1 aborts ("assertion failed at util/build-id.c:1010", then
    "stack smashing detected") when it records or reads while another
    precord session's BPF programs are loaded; other recorders would skew
    the figures anyway.  Before each perf run, wait (up to QUIET_WAIT
    seconds, QUIET_BUDGET in all the bench) until no BPF program is
    loaded."""
    t = time.time()
    limit = min(QUIET_WAIT, max(0.0, QUIET_BUDGET - stats["waited"]))
    while bpf_progs() > 0 and time.time() - t < limit:
        time.sleep(0.5)
    stats["waited"] += time.time() - t


def perf_abort(what):
    """Count and tell of a perf command (what) that died of SIGABRT."""
    stats["perf_aborts"] += 1
    note(f"  {what} aborted (BPF programs loaded: {bpf_progs()}); again")


def perf_retry(run, aborted, what=None, tries=3):
    """run() after wait_quiet(), again while aborted(its result) says that
    perf aborted, up to tries times; returns the last result.  what: the
    command, for perf_abort (None: retried silently, not counted)."""
    for attempt in range(tries):
        wait_quiet()
        r = run()
        if attempt < tries - 1 and aborted(r):
            if what is not None:
                perf_abort(what)
            continue
        return r


def scan(path):
    """Walk perf.data: its size; SAMPLE records; lost events, as the
    kernel's PERF_RECORD_LOST records say (lost) and as the counts of
    PERF_RECORD_LOST_SAMPLES say (lost_samples); the first and last
    sample times (HEADER_SAMPLE_TIME, feature 21; None without it)."""
    with open(path, "rb") as f:
        d = f.read()
    if d[:8] != b"PERFILE2":
        fail(f"{path}: not a perf.data file")
    data_off, data_size = struct.unpack_from("<QQ", d, 40)
    features = int.from_bytes(d[72:104], "little")
    pos, end, samples, lost, lost_samples = data_off, data_off + data_size, 0, 0, 0
    while pos + 8 <= end:
        typ, _misc, size = struct.unpack_from("<IHH", d, pos)
        if size < 8:
            fail(f"{path}: bad record at {pos}")
        if typ == 9:		# PERF_RECORD_SAMPLE
            samples += 1
        elif typ == 2:		# PERF_RECORD_LOST: id, lost
            lost += struct.unpack_from("<Q", d, pos + 16)[0]
        elif typ == 13:		# PERF_RECORD_LOST_SAMPLES: lost
            lost_samples += struct.unpack_from("<Q", d, pos + 8)[0]
        pos += size
    first = last = None
    if features >> 21 & 1:
        idx = bin(features & ((1 << 21) - 1)).count("1")
        off, _sz = struct.unpack_from("<QQ", d, end + 16 * idx)
        first, last = struct.unpack_from("<QQ", d, off)
    return dict(size=len(d), samples=samples, lost=lost, lost_samples=lost_samples,
                first=first, last=last)


def med(rows, key):
    v = [r[key] for r in rows if r.get(key) is not None]
    return statistics.median(v) if v else None


def table_head(title, hdr):
    """The lines that open a table: its title, the column header, a rule."""
    return [title, hdr, "-" * len(hdr)]


def version(tool):
    """The first line of `tool --version` (precord: build/precord)."""
    argv = [PRECORD if tool == "precord" else tool, "--version"]
    try:
        return subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                              text=True).stdout.strip().splitlines()[0]
    except (OSError, IndexError):
        return "?"


def meta(tools, cpus=None):
    """The first '#' lines of NAME.tsv: date, kernel, the versions of
    tools, the number of CPUs."""
    return ([f"# date\t{time.strftime('%Y-%m-%d %H:%M:%S %z')}",
             f"# kernel\t{os.uname().release}"]
            + [f"# {t}\t{version(t)}" for t in tools]
            + [f"# cpus\t{os.cpu_count() if cpus is None else cpus}"])


def cell(v):
    return "" if v is None else (f"{v:.6g}" if isinstance(v, float) else str(v))


def write_results(meta_lines, cols, summary, key_cols, run_cols, runs, text):
    """OUT/NAME.tsv: meta_lines, then the summary rows (dicts) in cols;
    OUT/NAME-runs.tsv: every run, runs being (keys, dict) with the keys
    in key_cols and the dict in run_cols; OUT/NAME.txt: meta_lines and
    the table (text)."""
    with open(f"{OUT}/{NAME}.tsv", "w") as f:
        f.write("\n".join(meta_lines) + "\n" + "\t".join(cols) + "\n")
        for s in summary:
            f.write("\t".join(cell(s.get(c)) for c in cols) + "\n")
    with open(f"{OUT}/{NAME}-runs.tsv", "w") as f:
        f.write("\t".join(key_cols + run_cols) + "\n")
        for keys, r in runs:
            f.write("\t".join([str(k) for k in keys] + [cell(r.get(c)) for c in run_cols]) + "\n")
    with open(f"{OUT}/{NAME}.txt", "w") as f:
        f.write("\n".join(meta_lines) + "\n\n" + text + "\n")


def kill_children():
    for pid in list(children):
        try:
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
        except OSError:
            pass


def _interrupted(sig, frame):
    raise KeyboardInterrupt


def run_main(main, catch_signals=False):
    """main(), then kill the children still running, however it ends.
    catch_signals: SIGINT, SIGTERM and SIGHUP (even if ignored when the
    driver started) end it with "interrupted" and exit status 130."""
    if catch_signals:
        for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
            signal.signal(sig, _interrupted)
    try:
        main()
    except KeyboardInterrupt:
        if not catch_signals:
            raise
        note(f"{NAME}.sh: interrupted")
        sys.exit(130)
    finally:
        kill_children()
