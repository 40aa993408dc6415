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
# Explained in docs/benchmarks-trace-jit.md; the driver is
# scripts/bench/jit.py, and the tools run under the launcher
# (scripts/bench/launch.c), which reports their wait4() figures.
#
# Hermetic: everything is written in a temporary directory (removed on
# exit); HOME and PERF_CONFIG point there.
set -u
cd "$(dirname "$0")/../.." || exit 1
. scripts/bench/lib.bash

need_root "both tools open perf events / load BPF"
need_tools perf python3 "${CC:-cc}"
need_built
[ "$(uname -m)" = x86_64 ] || die "jitgen writes x86-64 code; this machine is $(uname -m)"

bench_setup
bench_env

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
build_launcher

run_driver
