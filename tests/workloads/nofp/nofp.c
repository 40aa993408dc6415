// SPDX-License-Identifier: GPL-2.0
/*
 * A workload built as most packaged code is, without frame pointers (gcc
 * -O2 -fomit-frame-pointer, see the Makefile), for --call-graph dwarf:
 *
 *   nofp [SECONDS]   SECONDS of CPU time (default 1) shared 50:30:20 by
 *                    main → path_a → qsort (libc) → cmp_ints
 *                    main → path_b → lib_work → lib_leaf (libnofp.so)
 *                    main → path_c → recurse (×4) → rec_leaf
 *
 *   nofp --work N    a fixed amount of work instead (benchmarks: a cost
 *                    per unit of work), N rounds of the three paths; says
 *                    on stderr the wall-clock time the rounds took
 *                    ("nofp: work took S s": a profiler's start-up and
 *                    write-out are not in it)
 *
 *   nofp --depth D SECONDS   path_c alone with recurse (×D): stacks of
 *                    D + 7 user frames (scripts/bench/ehframe.sh)
 *
 *   nofp --fork SECONDS   fork first thing, then parent and child both
 *                    run the three paths for SECONDS: the child's
 *                    mappings come before any table is built
 *
 *   nofp --stack-top SECONDS  the three paths from coro_main, on a stack
 *                    of its own (makecontext) with an inaccessible page
 *                    right above it: an unwinder reading past a frame
 *                    near the top of a stack must cope with the fault
 *
 * Time is CPU time of the thread (CLOCK_THREAD_CPUTIME_ID), handed out in
 * slices of 10 ms, so the ratios hold whatever the machine's speed.
 *
 * Ground truth for the tests, as the workload's (tests/workloads/workload.c):
 * with PRECORD_WL_TRUTH=FILE, each process appends to FILE one line when it
 * exits and one each time it gets SIGUSR1, the CPU time spent in each path
 * so far, read from the thread's clock around each call, and the process's:
 *
 *   truth pid=PID path_a=S path_b=S path_c=S cpu=S
 * -fno-optimize-sibling-calls keeps every caller on the stack.
 */
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <ucontext.h>
#include <unistd.h>

void lib_work(unsigned long n);

static volatile unsigned long sink;
static long work;		/* --work: loop counts, not time slices */
static int depth = 4;		/* --depth: recurse's */

/* Another turn of a path's loop: until its slice ends, or n turns. */
static int more(double until, long *n, long turns);

static double cpu_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Heavy on purpose: most of path_a's time is in the callback. */
__attribute__((noinline)) static int cmp_ints(const void *a, const void *b)
{
	unsigned int x = *(const unsigned int *)a, y = *(const unsigned int *)b;

	for (int i = 0; i < 16; i++) {
		x = x * 2654435761u + 1;
		y = y * 2654435761u + 1;
	}
	sink += x ^ y;
	return (*(const unsigned int *)a > *(const unsigned int *)b) -
	       (*(const unsigned int *)a < *(const unsigned int *)b);
}

__attribute__((noinline)) static void path_a(double until)
{
	unsigned int v[256], seed = 1;

	long n = 0;

	while (more(until, &n, 82)) {
		for (int i = 0; i < 256; i++)
			v[i] = seed = seed * 1103515245u + 12345u;
		qsort(v, 256, sizeof(v[0]), cmp_ints);
	}
}

__attribute__((noinline)) static void path_b(double until)
{
	long n = 0;

	while (more(until, &n, 7))
		lib_work(2000);
}

__attribute__((noinline)) static unsigned long rec_leaf(unsigned long x)
{
	for (int i = 0; i < 20000; i++)
		x = x * 6364136223846793005UL + 1;
	return x;
}

__attribute__((noinline)) static unsigned long recurse(int depth, unsigned long x)
{
	if (!depth)
		return rec_leaf(x);
	return recurse(depth - 1, x + 1) + 1;
}

__attribute__((noinline)) static void path_c(double until)
{
	long n = 0;

	while (more(until, &n, 37))
		sink += recurse(depth, sink);
}

static double wall_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int more(double until, long *n, long turns)
{
	return work ? (*n)++ < turns : cpu_now() < until;
}

/* ---- ground truth (PRECORD_WL_TRUTH=FILE) ------------------------------ */

static const char *truth_file;		/* NULL: nothing timed */
static double truth_s[3];		/* path_a, path_b, path_c */
static volatile sig_atomic_t truth_asked;

static void truth_write(void)
{
	struct timespec ts;
	char line[256];
	int fd, n;

	if (!truth_file)
		return;
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	n = snprintf(line, sizeof(line), "truth pid=%d path_a=%.9f path_b=%.9f path_c=%.9f cpu=%.9f\n",
		     (int)getpid(), truth_s[0], truth_s[1], truth_s[2],
		     (double)ts.tv_sec + (double)ts.tv_nsec / 1e9);
	fd = open(truth_file, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
	if (fd < 0 || write(fd, line, (size_t)n) != n)
		perror("nofp: PRECORD_WL_TRUTH");
	if (fd >= 0)
		close(fd);
}

static void truth_signal(int sig)
{
	(void)sig;
	truth_asked = 1;
}

static void truth_init(void)
{
	const char *f = getenv("PRECORD_WL_TRUTH");
	struct sigaction sa;

	if (!f || !*f)
		return;
	truth_file = f;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = truth_signal;
	sa.sa_flags = SA_RESTART;
	sigaction(SIGUSR1, &sa, NULL);
	atexit(truth_write);
}

/*
 * One turn of the three paths from time t: 5, 3 and 2 ms of CPU time.
 * Inlined, so that the paths' caller is the caller's frame (main or
 * coro_main) as before; timed only with PRECORD_WL_TRUTH.
 */
static inline __attribute__((always_inline)) void three_paths(double t)
{
	double t1, t2, t3;

	if (!truth_file) {
		path_a(t + 0.005);
		path_b(t + 0.008);
		path_c(t + 0.010);
		return;
	}
	path_a(t + 0.005);
	t1 = cpu_now();
	path_b(t + 0.008);
	t2 = cpu_now();
	path_c(t + 0.010);
	t3 = cpu_now();
	truth_s[0] += t1 - t;
	truth_s[1] += t2 - t1;
	truth_s[2] += t3 - t2;
	if (truth_asked) {
		truth_asked = 0;
		truth_write();
	}
}

static ucontext_t main_ctx, coro_ctx;
static double coro_secs;

__attribute__((noinline)) static void coro_main(void)
{
	double start = cpu_now(), t;

	while ((t = cpu_now()) - start < coro_secs)
		three_paths(t);
}

/* --stack-top: 0, or 1 when the stack cannot be made. */
static int run_at_stack_top(double secs)
{
	size_t size = 256 * 1024;
	char *m = mmap(NULL, size + 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (m == MAP_FAILED || mprotect(m + size, 4096, PROT_NONE) || getcontext(&coro_ctx))
		return 1;
	coro_secs = secs;
	coro_ctx.uc_stack.ss_sp = m;
	coro_ctx.uc_stack.ss_size = size;
	coro_ctx.uc_link = &main_ctx;
	makecontext(&coro_ctx, coro_main, 0);
	return swapcontext(&main_ctx, &coro_ctx) ? 1 : 0;
}

int main(int argc, char **argv)
{
	double secs = argc > 1 ? atof(argv[1]) : 1.0, start = cpu_now(), t;

	truth_init();

	if (argc > 2 && !strcmp(argv[1], "--work")) {
		double w0 = wall_now();

		work = atol(argv[2]);
		for (long i = 0; i < work; i++) {
			path_a(0);
			path_b(0);
			path_c(0);
		}
		fprintf(stderr, "nofp: work took %.6f s\n", wall_now() - w0);
		return 0;
	}
	if (argc > 2 && !strcmp(argv[1], "--stack-top"))
		return run_at_stack_top(atof(argv[2]));
	if (argc > 2 && !strcmp(argv[1], "--fork")) {
		pid_t child = fork();

		if (child < 0)
			return 1;
		secs = atof(argv[2]);
		start = cpu_now();
		while ((t = cpu_now()) - start < secs) {
			three_paths(t);
		}
		return child && waitpid(child, NULL, 0) != child;
	}
	if (argc > 3 && !strcmp(argv[1], "--depth")) {
		depth = atoi(argv[2]);
		secs = atof(argv[3]);
		start = cpu_now();
		while ((t = cpu_now()) - start < secs)
			path_c(t + 0.010);
		return 0;
	}
	if (!(secs > 0))
		secs = 1.0;
	while ((t = cpu_now()) - start < secs)
		three_paths(t);
	return 0;
}
