// SPDX-License-Identifier: GPL-2.0
/*
 * Workloads for precord's tests and benchmarks.  They run for a time, not
 * for a count of iterations, so that a test that counts samples or shares
 * holds on a machine three times faster or slower than this one.
 *
 *   workload hot3 [SECONDS]        hot_a/hot_b/hot_c share SECONDS of CPU
 *                                  time 50:30:20 (default 1)
 *   workload mix A:B:C [SECONDS]   hot3 with hot_a/hot_b/hot_c in the ratio
 *                                  A:B:C (integers 0..20, not all 0): two
 *                                  runs of one program whose shares
 *                                  differ, for query --diff
 *   workload threads N [SECONDS]   N threads named worker-K, each hot3
 *   workload deep D [SECONDS]      hot3 under D frames of descend: stacks
 *                                  of D + 5 frames, as a service's are
 *   workload forkexec PROG ARGS    fork; the child execs PROG ARGS; the
 *                                  parent burns 0.05 s in hot_c; wait
 *   workload dlopen LIB [SECONDS]  wait 0.5 s, dlopen LIB, run its
 *                                  lib_spin for SECONDS
 *   workload kernel [SECONDS]      spend SECONDS in read(2) of /dev/zero
 *   workload spin                  hot3 forever (for -p; kill it when done)
 *   workload forkstorm N SECS [HOLD_MS]  N short children, then a busy one
 *                                  for SECS of its CPU time
 *   workload churn SECS            for SECS of wall time: new threads and
 *                                  processes (fork + exec of /bin/true)
 *                                  all the time (see run_churn)
 *                                  (see run_forkstorm)
 *
 * SECONDS (decimals allowed) is CPU time of each thread, read from
 * CLOCK_THREAD_CPUTIME_ID: with cpu-clock sampling at F Hz, a thread
 * gives about F * SECONDS samples whatever the speed of the machine and
 * whatever else runs on it.
 *
 * Ground truth for the tests: with PRECORD_WL_TRUTH=FILE in the
 * environment, hot3 reads the thread's CPU clock around every call of
 * hot_a, hot_b and hot_c, and each process appends to FILE (O_APPEND, one
 * write) one line when it exits, and one more each time it gets SIGUSR1:
 *
 *   truth pid=PID hot_a=S hot_b=S hot_c=S cpu=S
 *
 * S in seconds: the CPU time its threads spent in each function so far,
 * and cpu the process's whole CPU time.  A test compares the shares perf
 * report gives with these, measured in the very execution it recorded,
 * not with the 5:3:2 of the design (not every CPU runs the three loops at
 * the same speed).  Without the variable nothing is timed (benchmarks).
 *
 * Benchmarks that measure a cost per unit of work need a fixed amount of
 * work instead: `hot3 --work SCALE` and `threads N --work SCALE` run
 * SCALE * 10 rounds of 10 million iterations (SCALE 10 took 1.7 s on the
 * reference VM).
 *
 * Built with clang and frame pointers everywhere (see the Makefile).
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <fcntl.h>
#include <math.h>
#include <signal.h>
#include <stdatomic.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static volatile unsigned long sink;

/*
 * Each hot function has its own loop so that the self time is its own.
 * The three are the same instructions at the same alignment, so that an
 * iteration costs the same in each on any CPU (with different shifts, an
 * AMD EPYC ran them 44:26:29 for the 50:30:20 of the work); the tests do
 * not rely on it all the same: they compare with PRECORD_WL_TRUTH.
 */
__attribute__((noinline, aligned(64))) void hot_a(unsigned long n)
{
	for (unsigned long i = 0; i < n; i++)
		sink += i ^ (i >> 3);
}

__attribute__((noinline, aligned(64))) void hot_b(unsigned long n)
{
	for (unsigned long i = 0; i < n; i++)
		sink += i ^ (i >> 3);
}

__attribute__((noinline, aligned(64))) void hot_c(unsigned long n)
{
	for (unsigned long i = 0; i < n; i++)
		sink += i ^ (i >> 3);
}

#define UNIT 1000000UL
/* hot3's ratio of hot_a, hot_b, hot_c (mix A:B:C changes it) */
static unsigned long mix[3] = { 5, 3, 2 };
/*
 * Iterations between two reads of the thread's CPU clock in burn(): 64 Ki
 * take 160 us here, the clock (a system call, not in the vDSO) 250 ns, so
 * reading it costs 0.16% of the time.
 */
#define CHUNK 65536UL

/* How long a workload runs: SECONDS of the thread's CPU time, or with
 * --work a fixed SCALE for the benchmarks. */
struct budget {
	double seconds;
	int scale;
};

static double cpu_seconds(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* ---- ground truth (PRECORD_WL_TRUTH=FILE) ------------------------------ */

static const char *truth_file;		/* NULL: nothing timed */
static _Atomic unsigned long long truth_ns[3];	/* hot_a, hot_b, hot_c */
static atomic_int truth_asked;		/* SIGUSR1 came */

static unsigned long long clock_ns(clockid_t c)
{
	struct timespec ts;

	clock_gettime(c, &ts);
	return (unsigned long long)ts.tv_sec * 1000000000ULL + (unsigned long long)ts.tv_nsec;
}

/* One line to the truth file: the totals so far. */
static void truth_write(void)
{
	char line[256];
	int fd, n;

	if (!truth_file)
		return;
	n = snprintf(line, sizeof(line), "truth pid=%d hot_a=%.9f hot_b=%.9f hot_c=%.9f cpu=%.9f\n",
		     (int)getpid(), truth_ns[0] * 1e-9, truth_ns[1] * 1e-9, truth_ns[2] * 1e-9,
		     clock_ns(CLOCK_PROCESS_CPUTIME_ID) * 1e-9);
	fd = open(truth_file, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
	if (fd < 0 || write(fd, line, (size_t)n) != n)
		perror("workload: PRECORD_WL_TRUTH");
	if (fd >= 0)
		close(fd);
}

static void truth_signal(int sig)
{
	(void)sig;
	atomic_store(&truth_asked, 1);
}

/* A snapshot asked for by SIGUSR1, written by the thread that sees it. */
static void truth_poll(void)
{
	if (atomic_load_explicit(&truth_asked, memory_order_relaxed) && atomic_exchange(&truth_asked, 0))
		truth_write();
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

/* fn(CHUNK) again and again until the thread has used SECONDS of CPU. */
__attribute__((noinline)) static void burn(void (*fn)(unsigned long), double seconds)
{
	double end = cpu_seconds() + seconds;

	while (cpu_seconds() < end)
		fn(CHUNK);
}

/*
 * Rounds of hot_a, hot_b and hot_c with iterations in the ratio 5:3:2
 * (the three loops run at the same speed) until the time is up.  The
 * split is by work, not by the CPU clock: that clock leaves out the time
 * a hypervisor takes from the VM and cpu-clock samples do not, and
 * splitting by it gave perf report shares as far off as 46:35:18 on this
 * loaded VM, where the split by work gives 50:30:20.  A round is 320 Ki
 * iterations (0.8 ms here); the clock is read once per round.
 */
__attribute__((noinline)) static void hot3(struct budget b)
{
	double end = cpu_seconds() + b.seconds;

	if (b.scale > 0) {
		for (int i = 0; i < b.scale * 10; i++) {
			hot_a(mix[0] * UNIT);
			hot_b(mix[1] * UNIT);
			hot_c(mix[2] * UNIT);
		}
		return;
	}
	if (truth_file) {
		/* the clock read between two calls ends one and starts the next */
		unsigned long long t0, t1, t2, t3 = clock_ns(CLOCK_THREAD_CPUTIME_ID);
		unsigned long long stop = b.seconds < 1e9 ? t3 + (unsigned long long)(b.seconds * 1e9) : ~0ULL;

		do {
			t0 = t3;
			hot_a(mix[0] * CHUNK / 2);
			t1 = clock_ns(CLOCK_THREAD_CPUTIME_ID);
			hot_b(mix[1] * CHUNK / 2);
			t2 = clock_ns(CLOCK_THREAD_CPUTIME_ID);
			hot_c(mix[2] * CHUNK / 2);
			t3 = clock_ns(CLOCK_THREAD_CPUTIME_ID);
			atomic_fetch_add_explicit(&truth_ns[0], t1 - t0, memory_order_relaxed);
			atomic_fetch_add_explicit(&truth_ns[1], t2 - t1, memory_order_relaxed);
			atomic_fetch_add_explicit(&truth_ns[2], t3 - t2, memory_order_relaxed);
			truth_poll();
		} while (t3 < stop);
		return;
	}
	do {
		hot_a(mix[0] * CHUNK / 2);
		hot_b(mix[1] * CHUNK / 2);
		hot_c(mix[2] * CHUNK / 2);
	} while (cpu_seconds() < end);
}

/* hot3 under d more frames (the recursion's calls are not tail calls). */
__attribute__((noinline)) static int descend(int d, struct budget b)
{
	if (d <= 0) {
		hot3(b);
		return 0;
	}
	return descend(d - 1, b) + (int)(sink & 1);
}

/* argv[i]: SECONDS, or "--work" SCALE; DEF seconds when absent. */
static int budget_arg(int argc, char **argv, int i, double def, struct budget *b)
{
	char *end;

	b->seconds = def;
	b->scale = 0;
	if (argc <= i)
		return 0;
	if (!strcmp(argv[i], "--work")) {
		b->scale = argc > i + 1 ? atoi(argv[i + 1]) : 0;
		return b->scale > 0 ? 0 : -1;
	}
	b->seconds = strtod(argv[i], &end);
	return *end || end == argv[i] || !(b->seconds >= 0) ? -1 : 0;
}

static struct budget worker_budget;

static void *worker(void *arg)
{
	char name[16];

	snprintf(name, sizeof(name), "worker-%ld", (long)arg);
	pthread_setname_np(pthread_self(), name);
	hot3(worker_budget);
	return NULL;
}

static int run_threads(int n, struct budget b)
{
	pthread_t t[64];

	if (n < 1 || n > 64)
		return 2;
	worker_budget = b;
	for (long i = 0; i < n; i++)
		pthread_create(&t[i], NULL, worker, (void *)i);
	for (int i = 0; i < n; i++)
		pthread_join(t[i], NULL);
	return 0;
}

static int run_forkexec(char **argv)
{
	pid_t p = fork();
	int st;

	if (p == 0) {
		execv(argv[0], argv);
		_exit(127);
	}
	burn(hot_c, 0.05);	/* the parent does a little too */
	waitpid(p, &st, 0);
	return WIFEXITED(st) ? WEXITSTATUS(st) : 1;
}

static int run_dlopen(const char *lib, double seconds)
{
	struct timespec ts = { 0, 500000000 };
	void *h;
	void (*fn)(unsigned long);

	nanosleep(&ts, NULL);
	h = dlopen(lib, RTLD_NOW);
	if (!h) {
		fprintf(stderr, "workload: %s\n", dlerror());
		return 1;
	}
	*(void **)&fn = dlsym(h, "lib_spin");
	if (!fn)
		return 1;
	burn(fn, seconds);
	return 0;
}

/* read(2) of /dev/zero, 64 KiB at a time (about 10 us each), the clock
 * read every 16 calls. */
__attribute__((noinline)) static void kernel_work(double seconds)
{
	char buf[65536];
	int fd = open("/dev/zero", O_RDONLY);
	double end = cpu_seconds() + seconds;

	while (fd >= 0 && cpu_seconds() < end)
		for (int i = 0; i < 16; i++)
			if (read(fd, buf, sizeof(buf)) < 0)
				goto out;
out:
	if (fd >= 0)
		close(fd);
}

/* ---- forkstorm ---------------------------------------------------------- */

static double storm_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* The busy child's work: hot_a until secs of its CPU time have passed
 * (not wall time: a test counts its samples, F * secs on a busy machine
 * too). */
__attribute__((noinline)) static void storm_busy(double secs)
{
	double end = cpu_seconds() + secs;

	while (cpu_seconds() < end)
		hot_a(UNIT / 10);
}

#define STORM_LAST 20

/*
 * forkstorm N SECS [HOLD_MS]: fork N children that exit at once, each
 * reaped before the next is forked (with HOLD_MS, each lives that long and
 * all N are alive together).  Then print "dead PID" for the last 20 of
 * them, pause 1.5 s when N > 0 (a test can start a process that reuses
 * such a pid),
 * fork one child that burns SECS seconds of its CPU time, print "busy
 * PID", and wait for it.
 */
static int run_forkstorm(int argc, char **argv)
{
	int n = argc > 2 ? atoi(argv[2]) : 9000, hold_ms = argc > 4 ? atoi(argv[4]) : 0;
	double secs = argc > 3 ? atof(argv[3]) : 2;
	struct timespec hold = { hold_ms / 1000, (hold_ms % 1000) * 1000000L };
	struct timespec pause = { 1, 500000000 };
	pid_t last[STORM_LAST], busy;
	int i, st;

	for (i = 0; i < n; i++) {
		pid_t p = fork();

		if (p < 0) {
			perror("workload: fork");
			return 1;
		}
		if (p == 0) {
			if (hold_ms)
				nanosleep(&hold, NULL);
			_exit(0);
		}
		if (!hold_ms)
			waitpid(p, NULL, 0);
		last[i % STORM_LAST] = p;
	}
	while (hold_ms && wait(NULL) > 0)
		;
	for (i = n > STORM_LAST ? n - STORM_LAST : 0; i < n; i++)
		printf("dead %d\n", (int)last[i % STORM_LAST]);
	fflush(stdout);
	if (n)
		nanosleep(&pause, NULL);
	busy = fork();
	if (busy == 0) {
		storm_busy(secs);
		_exit(0);
	}
	if (busy < 0)
		return 1;
	printf("busy %d\n", (int)busy);
	fflush(stdout);
	waitpid(busy, &st, 0);
	return WIFEXITED(st) ? WEXITSTATUS(st) : 1;
}

static int usage(void)
{
	fprintf(stderr, "usage: workload hot3 [SECONDS | --work SCALE]\n"
		"       workload mix A:B:C [SECONDS]\n"
		"       workload threads N [SECONDS | --work SCALE]\n"
		"       workload deep D [SECONDS]\n"
		"       workload forkexec PROG [ARG...]\n"
		"       workload dlopen LIB [SECONDS]\n"
		"       workload kernel [SECONDS]\n"
		"       workload spin\n"
		"       workload forkstorm N SECS [HOLD_MS]\n"
		"       workload churn SECS\n");
	return 2;
}

/* ---- churn --------------------------------------------------------------- */

static void *churn_thread(void *arg)
{
	(void)arg;
	hot_b(UNIT / 100);
	return NULL;
}

/*
 * churn SECS: for SECS seconds of wall time, rounds of 4 short threads
 * (each a little hot_b) and a child that execs /bin/true (a new address
 * space: ld.so maps libc each time), then 5 ms asleep: about 100 threads
 * and 25 processes a second come and go, what a long recording of a busy
 * host sees.  Prints the rounds made.
 */
static int run_churn(double secs)
{
	double end = storm_now() + secs;
	unsigned long rounds = 0;

	while (storm_now() < end) {
		pthread_t th[4];
		int n = 0;
		pid_t pid;

		for (int i = 0; i < 4; i++)
			n += !pthread_create(&th[n], NULL, churn_thread, NULL);
		pid = fork();
		if (pid == 0) {
			execl("/bin/true", "true", (char *)NULL);
			_exit(127);
		}
		if (pid > 0)
			waitpid(pid, NULL, 0);
		while (n--)
			pthread_join(th[n], NULL);
		usleep(5000);
		rounds++;
	}
	printf("churn: %lu rounds\n", rounds);
	return 0;
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "hot3";
	struct budget b;

	truth_init();

	if (!strcmp(mode, "hot3") && argc <= 4) {
		if (budget_arg(argc, argv, 2, 1, &b))
			return usage();
		hot3(b);
	} else if (!strcmp(mode, "mix") && argc > 2 && argc <= 4) {
		int n = 0;

		if (sscanf(argv[2], "%lu:%lu:%lu%n", &mix[0], &mix[1], &mix[2], &n) != 3 ||
		    argv[2][n] || mix[0] > 20 || mix[1] > 20 || mix[2] > 20 ||
		    !(mix[0] + mix[1] + mix[2]) || budget_arg(argc, argv, 3, 1, &b) || b.scale)
			return usage();
		hot3(b);
	} else if (!strcmp(mode, "threads") && argc <= 5) {
		if (budget_arg(argc, argv, 3, 1, &b))
			return usage();
		return run_threads(argc > 2 ? atoi(argv[2]) : 2, b);
	} else if (!strcmp(mode, "deep") && argc > 2 && argc <= 4) {
		if (budget_arg(argc, argv, 3, 1, &b) || b.scale)
			return usage();
		return descend(atoi(argv[2]), b);
	} else if (!strcmp(mode, "forkexec") && argc > 2) {
		return run_forkexec(argv + 2);
	} else if (!strcmp(mode, "dlopen") && argc > 2 && argc <= 4) {
		if (budget_arg(argc, argv, 3, 1, &b) || b.scale)
			return usage();
		return run_dlopen(argv[2], b.seconds);
	} else if (!strcmp(mode, "kernel") && argc <= 3) {
		if (budget_arg(argc, argv, 2, 1, &b) || b.scale)
			return usage();
		kernel_work(b.seconds);
	} else if (!strcmp(mode, "forkstorm")) {
		return run_forkstorm(argc, argv);
	} else if (!strcmp(mode, "churn") && argc == 3) {
		return run_churn(atof(argv[2]));
	} else if (!strcmp(mode, "spin") && argc == 2) {
		hot3((struct budget){ .seconds = INFINITY });
	} else {
		return usage();
	}
	return 0;
}
