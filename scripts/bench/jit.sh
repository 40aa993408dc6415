#!/usr/bin/env bash
# JIT benchmark: merging a synthetic jitdump of 10,000 and 100,000
# functions, precord (at record time) against `perf inject --jit`, in the
# same run.  Reports numbers and ratios; it fails only when a tool fails.
#
#   scripts/bench/jit.sh               (make bench runs it via run.sh)
#
# The program (jitgen, C, built here with cc) maps an RWX code region,
# writes NFUNCS small functions into it (a counted loop each, 64 bytes
# apart), writes jit-<pid>.dump in its current directory (jitdump version
# 1, little endian, CLOCK_MONOTONIC timestamps: one JIT_CODE_LOAD per
# function, a JIT_CODE_DEBUG_INFO with 3 lines before every 10th), maps
# the dump PROT_READ|PROT_EXEC (the marker), then calls the functions
# round-robin for 0.5 s so that most samples land in JIT code, and exits.
# Per size and repetition, in a shuffled order, each in a fresh directory
# and with a fresh HOME (build-id cache):
#
#   perf          perf record -k mono -g -o p.data -- jitgen N 500, then
#                 perf inject --jit -i p.data -o pj.data: its wall time,
#                 CPU time, peak RSS (wait4), the jitted-*.so it writes next
#                 to the dump and the files it adds to ~/.debug
#   precord       precord -g -o x.data -- jitgen N 500: wall, CPU and peak
#                 RSS of precord (its wait4 figures minus/against jitgen's
#                 own, which jitgen reports), the images in x.data.jit/ and
#                 the files it adds to ~/.debug
#   precord-nojit the same with --no-jit; precord's "added" time and CPU
#                 are the medians' differences
#
# The first repetition of each tool and size is also read back: perf
# report must read the file, and perf script must name the JIT samples
# (jitfn_NNNNNN).
#
# Knobs (environment): BENCH_JIT_FUNCS (sizes, default "10000 100000"),
# BENCH_JIT_REPS (default 3), BENCH_JIT_BIG_PERF_REPS (perf record + perf
# inject runs for sizes over 20,000 functions, default 1: ~40 s each),
# BENCH_JIT_SPIN_MS (default 500), BENCH_OUT (default build/bench).  Output: a table on stdout; build/bench/jit.tsv
# (medians, '#' lines carry the machine, date and versions),
# build/bench/jit-runs.tsv (every run), build/bench/jit.txt (the table).
# Explained in docs/benchmarks-trace-jit.md.
#
# Hermetic: everything is written in a temporary directory (removed on
# exit); HOME and PERF_CONFIG point there.
set -u
cd "$(dirname "$0")/../.." || exit 1
root=$PWD

die() { echo "jit.sh: $*" >&2; exit 1; }
[ "$(id -u)" = 0 ] || die "must run as root (both tools open perf events / load BPF)"
for t in perf python3 "${CC:-cc}"; do
	command -v "$t" >/dev/null || die "$t is not installed (scripts/deps.sh installs it)"
done
[ -x build/precord ] || die "build/precord is missing: run make"
[ "$(uname -m)" = x86_64 ] || die "jitgen writes x86-64 code; this machine is $(uname -m)"

tmp=$(mktemp -d "${TMPDIR:-/tmp}/precord-bench-jit.XXXXXX") || die "mktemp failed"
trap 'rm -rf "$tmp"' EXIT
trap 'exit 130' INT TERM HUP
: >"$tmp/perfconfig"
export PERF_CONFIG=$tmp/perfconfig LC_ALL=C PAGER=cat HOME=$tmp/home
unset PERF_BUILDID_DIR
out=${BENCH_OUT:-$root/build/bench}
mkdir -p "$out" "$tmp/home" || die "cannot create $out"

cat >"$tmp/jitgen.c" <<'C'
/* jitgen NFUNCS SPIN_MS: a fake JIT runtime (see scripts/bench/jit.sh). */
#define _GNU_SOURCE
#include <elf.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#define SLOT 64		/* bytes per function, all of them code */

static uint64_t mono(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void put(FILE *f, const void *p, size_t n)
{
	if (fwrite(p, 1, n, f) != n) {
		perror("jitgen: write");
		exit(1);
	}
}

struct rec_hdr { uint32_t id, total_size; uint64_t timestamp; };
struct load { uint32_t pid, tid; uint64_t vma, code_addr, code_size, code_index; };
struct dbg { uint64_t code_addr, nr_entry; };
struct dbg_entry { uint64_t addr; uint32_t line, discrim; };

int main(int argc, char **argv)
{
	static const unsigned char fn[] = {
		0xb9, 0x20, 0x4e, 0x00, 0x00,	/* mov ecx, 20000 */
		0xff, 0xc9,			/* 1: dec ecx */
		0x75, 0xfc,			/* jnz 1b */
		0xc3,				/* ret */
	};
	static const char file[] = "/srv/app/jitgen.js";
	uint32_t pid = (uint32_t)getpid(), tid = (uint32_t)gettid();
	unsigned char *code;
	char path[64], name[32];
	long n, i, spin_ms;
	uint64_t t_end;
	FILE *f;

	if (argc < 3 || (n = atol(argv[1])) < 1)
		return 2;
	spin_ms = atol(argv[2]);
	/* The code region is mapped before the dump is written, as node
	 * does: no executable anonymous mapping appears after the loads. */
	code = mmap(NULL, (size_t)n * SLOT, PROT_READ | PROT_WRITE | PROT_EXEC,
		    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (code == MAP_FAILED) {
		perror("jitgen: mmap code");
		return 1;
	}
	for (i = 0; i < n; i++) {
		memset(code + i * SLOT, 0xcc, SLOT);
		memcpy(code + i * SLOT, fn, sizeof(fn));
	}
	snprintf(path, sizeof(path), "jit-%d.dump", (int)pid);
	f = fopen(path, "w+");
	if (!f) {
		perror("jitgen: open dump");
		return 1;
	}
	{
		struct { uint32_t magic, version, total_size, elf_mach, pad1, pid;
			 uint64_t timestamp, flags; } h = {
			0x4A695444, 1, 40, EM_X86_64, 0, pid, mono(), 0 };

		put(f, &h, sizeof(h));
	}
	for (i = 0; i < n; i++) {
		uint64_t addr = (uint64_t)(uintptr_t)(code + i * SLOT);
		size_t nl = (size_t)snprintf(name, sizeof(name), "jitfn_%06ld", i) + 1;
		struct rec_hdr r;
		struct load l = { pid, tid, addr, addr, SLOT, (uint64_t)i };

		if (i % 10 == 0) {	/* DEBUG_INFO (before its load): 3 lines */
			struct dbg d = { addr, 3 };
			struct dbg_entry e;
			int k;

			r.id = 2;
			r.total_size = (uint32_t)(sizeof(r) + sizeof(d) + 3 * (sizeof(e) + sizeof(file)));
			r.timestamp = mono();
			put(f, &r, sizeof(r));
			put(f, &d, sizeof(d));
			for (k = 0; k < 3; k++) {
				e.addr = addr + 5 * (uint64_t)k;
				e.line = (uint32_t)(10 * (i % 1000) + k + 1);
				e.discrim = 0;
				put(f, &e, sizeof(e));
				put(f, file, sizeof(file));
			}
		}
		r.id = 0;
		r.total_size = (uint32_t)(sizeof(r) + sizeof(l) + nl + SLOT);
		r.timestamp = mono();
		put(f, &r, sizeof(r));
		put(f, &l, sizeof(l));
		put(f, name, nl);
		put(f, code + i * SLOT, SLOT);
	}
	if (fflush(f)) {
		perror("jitgen: write");
		return 1;
	}
	if (mmap(NULL, 4096, PROT_READ | PROT_EXEC, MAP_PRIVATE, fileno(f), 0) == MAP_FAILED) {
		perror("jitgen: mmap marker");
		return 1;
	}
	t_end = mono() + (uint64_t)spin_ms * 1000000ull;
	for (i = 0; mono() < t_end; i = (i + 7919) % n)
		((void (*)(void))(void *)(code + i * SLOT))();
	fclose(f);
	if (getenv("JITGEN_RUSAGE")) {	/* own peak RSS (KiB) and CPU (us) */
		struct rusage ru;
		FILE *o = fopen(getenv("JITGEN_RUSAGE"), "w");

		getrusage(RUSAGE_SELF, &ru);
		if (o) {
			fprintf(o, "%ld %ld\n", ru.ru_maxrss,
				(long)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1000000 +
				ru.ru_utime.tv_usec + ru.ru_stime.tv_usec);
			fclose(o);
		}
	}
	return 0;
}
C
"${CC:-cc}" -O2 -Wall -o "$tmp/jitgen" "$tmp/jitgen.c" || die "cannot build jitgen"

# launch OUT CMD ARGS: runs CMD and writes its wait4 figures to OUT:
# "user_us sys_us maxrss_kb exit_code signal".  A C program because a
# process starts with the peak RSS of the one it was forked from (the
# kernel carries it over exec): spawned from Python, every tool would
# "peak" at Python's size.
cat >"$tmp/launch.c" <<'C'
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
		execvp(argv[2], argv + 2);
		_exit(127);
	}
	while (wait4(pid, &st, 0, &ru) < 0)
		;
	f = fopen(argv[1], "w");
	if (!f)
		return 2;
	fprintf(f, "%ld %ld %ld %d %d\n",
		(long)ru.ru_utime.tv_sec * 1000000 + ru.ru_utime.tv_usec,
		(long)ru.ru_stime.tv_sec * 1000000 + ru.ru_stime.tv_usec, ru.ru_maxrss,
		WIFEXITED(st) ? WEXITSTATUS(st) : -1, WIFSIGNALED(st) ? WTERMSIG(st) : 0);
	fclose(f);
	return 0;
}
C
"${CC:-cc}" -O2 -Wall -o "$tmp/launch" "$tmp/launch.c" || die "cannot build the launcher"

cat >"$tmp/bench.py" <<'PY'
import json, os, random, shutil, signal, statistics, subprocess, sys, time

ROOT, TMP, OUT = sys.argv[1:4]
PRECORD = f"{ROOT}/build/precord"
JITGEN = f"{TMP}/jitgen"
LAUNCH = f"{TMP}/launch"
SIZES = [int(x) for x in os.environ.get("BENCH_JIT_FUNCS", "10000 100000").split()]
REPS = int(os.environ.get("BENCH_JIT_REPS", "3"))
# perf inject --jit takes ~40 s for 100,000 functions: once by default.
BIG_PERF_REPS = int(os.environ.get("BENCH_JIT_BIG_PERF_REPS", "1"))


def perf_reps(n):
    return REPS if n <= 20000 else min(REPS, BIG_PERF_REPS)
SPIN = os.environ.get("BENCH_JIT_SPIN_MS", "500")
TOOLS = ["perf", "precord", "precord-nojit"]
BPFTOOL = shutil.which("bpftool") or "/usr/sbin/bpftool"
children = set()
stats = dict(waited=0.0, perf_aborts=0)
checks = []


def note(msg):
    print(msg, file=sys.stderr, flush=True)


def fail(msg, log=None):
    note(f"jit.sh: {msg}")
    if log and os.path.exists(log):
        note("".join(open(log, errors="replace").readlines()[-20:]))
    raise SystemExit(1)


def mono():
    return time.clock_gettime(time.CLOCK_MONOTONIC)


def run(argv, cwd, env, log):
    """Run argv in cwd through the launcher: (exit code, or -signal; wall s;
    CPU s and peak RSS KiB from its wait4)."""
    rufile = f"{TMP}/launch.ru"
    if os.path.exists(rufile):
        os.unlink(rufile)
    argv = [LAUNCH, rufile] + argv
    fa = [(os.POSIX_SPAWN_OPEN, 0, "/dev/null", os.O_RDONLY, 0),
          (os.POSIX_SPAWN_OPEN, 1, log, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600),
          (os.POSIX_SPAWN_DUP2, 1, 2)]
    with open(log, "a") as f:
        f.write("$ " + " ".join(argv) + "\n")
    t0 = mono()
    old = os.getcwd()
    os.chdir(cwd)		# posix_spawn has no cwd argument
    try:
        pid = os.posix_spawnp(argv[0], argv, env, file_actions=fa)
    finally:
        os.chdir(old)
    children.add(pid)
    _, st, _ = os.wait4(pid, 0)
    wall = mono() - t0
    children.discard(pid)
    if os.waitstatus_to_exitcode(st) or not os.path.exists(rufile):
        fail(f"the launcher failed ({os.waitstatus_to_exitcode(st)})", log)
    u, s, rss, code, sig = (int(x) for x in open(rufile).read().split())
    return (-sig if sig else code), wall, (u + s) / 1e6, rss


def bpf_progs():
    try:
        r = subprocess.run([BPFTOOL, "prog", "list", "-j"], stdout=subprocess.PIPE,
                           stderr=subprocess.DEVNULL, text=True, timeout=10)
        return len(json.loads(r.stdout or "[]"))
    except (OSError, ValueError, subprocess.SubprocessError):
        return -1


def wait_quiet():
    """perf 6.1 aborts (SIGABRT, util/build-id.c assertion) when it runs
    while another session's BPF programs are loaded (see record.sh): wait
    up to 20 s per perf command, 60 s in all, for none to be loaded."""
    t = time.time()
    limit = min(20.0, max(0.0, 60.0 - stats["waited"]))
    while bpf_progs() > 0 and time.time() - t < limit:
        time.sleep(0.5)
    stats["waited"] += time.time() - t


def perf_run(argv, cwd, env, log, clean=()):
    for attempt in range(3):
        wait_quiet()
        for p in clean:
            if os.path.exists(p):
                os.unlink(p)
        r = run(argv, cwd, env, log)
        if r[0] == -signal.SIGABRT and attempt < 2:
            stats["perf_aborts"] += 1
            note(f"  {argv[1]} aborted (BPF programs loaded: {bpf_progs()}); again")
            continue
        return r


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
    for attempt in range(3):
        wait_quiet()
        r = subprocess.run(["perf", "script", "-i", data, "-F", "ip,sym", "-G"], cwd=cwd, env=env,
                           stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
                           errors="replace")
        if r.returncode != -signal.SIGABRT:
            break
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


def med(rows, key):
    v = [r[key] for r in rows if r.get(key) is not None]
    return statistics.median(v) if v else None


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
    lines.append(f"Merging a jitdump: median of {REPS} ({'/'.join(str(perf_reps(n)) for n in SIZES)}"
                 f" for perf); the program runs {SPIN} ms after mapping its dump")
    lines.append(hdr)
    lines.append("-" * len(hdr))
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
    lines.append(f"(bench took {elapsed:.0f} s, {stats['waited']:.0f} s of it waiting for other "
                 f"BPF programs to go before perf commands; perf aborts retried: "
                 f"{stats['perf_aborts']}; load average: {LOAD0} / "
                 f"{open('/proc/loadavg').read().split()[0]}; {os.cpu_count()} CPUs)")
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
            f"# precord\t{ver([PRECORD, '--version'])}", f"# cpus\t{os.cpu_count()}",
            f"# reps\t{REPS}", f"# spin_ms\t{SPIN}", f"# elapsed_s\t{elapsed:.0f}",
            f"# loadavg_before\t{LOAD0}"]
    cols = ["funcs", "tool", "reps", "wall_s", "cpu_s", "rss_kb", "rss_exact", "files",
            "cache_files", "record_wall_s", "added_wall_s", "added_cpu_s", "jit_samples", "samples"]

    def cell(v):
        return "" if v is None else (f"{v:.6g}" if isinstance(v, float) else str(v))
    with open(f"{OUT}/jit.tsv", "w") as f:
        f.write("\n".join(meta) + "\n" + "\t".join(cols) + "\n")
        for s in summary:
            f.write("\t".join(cell(s.get(c)) for c in cols) + "\n")
    rcols = ["wall", "cpu", "rss", "rss_exact", "jitgen_rss", "files", "cache_files",
             "record_wall", "jit_samples", "samples"]
    with open(f"{OUT}/jit-runs.tsv", "w") as f:
        f.write("\t".join(["funcs", "tool", "rep"] + rcols) + "\n")
        for n, tool, rep, r in runs:
            f.write("\t".join([str(n), tool, str(rep)] + [cell(r.get(c)) for c in rcols]) + "\n")
    with open(f"{OUT}/jit.txt", "w") as f:
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

python3 "$tmp/bench.py" "$root" "$tmp" "$out"
