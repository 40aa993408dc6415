// SPDX-License-Identifier: GPL-2.0
/*
 * Deterministic workloads for precord's tests and benchmarks.
 *
 *   workload hot3 [SCALE]        hot_a/hot_b/hot_c burn CPU 50:30:20
 *                                (SCALE=10 is about 1 s on this machine)
 *   workload threads N [SCALE]   N threads named worker-K, each hot3
 *   workload forkexec PROG ARGS  fork; the child execs PROG ARGS; wait
 *   workload dlopen LIB [SCALE]  wait 0.5 s, dlopen LIB, call lib_hot(SCALE)
 *   workload kernel [SCALE]      spend time in system calls
 *   workload spin                hot3 forever (for -p; kill it when done)
 *   workload forkstorm N SECS [HOLD_MS]  N short children, then a busy one
 *                                (see run_forkstorm)
 *
 * Built with clang and frame pointers everywhere (see the Makefile).
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static volatile unsigned long sink;

/* Each hot function has its own loop so that the self time is its own. */
__attribute__((noinline)) void hot_a(unsigned long n)
{
	for (unsigned long i = 0; i < n; i++)
		sink += i ^ (i >> 3);
}

__attribute__((noinline)) void hot_b(unsigned long n)
{
	for (unsigned long i = 0; i < n; i++)
		sink += i ^ (i >> 5);
}

__attribute__((noinline)) void hot_c(unsigned long n)
{
	for (unsigned long i = 0; i < n; i++)
		sink += i ^ (i >> 7);
}

#define UNIT 1000000UL

__attribute__((noinline)) static void hot3(int scale)
{
	for (int i = 0; i < scale * 10; i++) {
		hot_a(5 * UNIT);
		hot_b(3 * UNIT);
		hot_c(2 * UNIT);
	}
}

static int scale_arg(int argc, char **argv, int i, int def)
{
	return argc > i ? atoi(argv[i]) : def;
}

static void *worker(void *arg)
{
	char name[16];

	snprintf(name, sizeof(name), "worker-%ld", (long)arg & 0xffff);
	pthread_setname_np(pthread_self(), name);
	hot3((int)((long)arg >> 16));
	return NULL;
}

static int run_threads(int n, int scale)
{
	pthread_t t[64];

	if (n < 1 || n > 64)
		return 2;
	for (long i = 0; i < n; i++)
		pthread_create(&t[i], NULL, worker, (void *)(((long)scale << 16) | i));
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
	hot_c(2 * UNIT);	/* the parent does a little too */
	waitpid(p, &st, 0);
	return WIFEXITED(st) ? WEXITSTATUS(st) : 1;
}

static int run_dlopen(const char *lib, int scale)
{
	struct timespec ts = { 0, 500000000 };
	void *h;
	void (*fn)(int);

	nanosleep(&ts, NULL);
	h = dlopen(lib, RTLD_NOW);
	if (!h) {
		fprintf(stderr, "workload: %s\n", dlerror());
		return 1;
	}
	*(void **)&fn = dlsym(h, "lib_hot");
	if (!fn)
		return 1;
	fn(scale);
	return 0;
}

__attribute__((noinline)) static void kernel_work(int scale)
{
	char buf[65536];
	int fd = open("/dev/zero", O_RDONLY);

	for (int i = 0; fd >= 0 && i < scale * 2000; i++)
		if (read(fd, buf, sizeof(buf)) < 0)
			break;
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

/* The busy child's work: hot_a until secs have passed. */
__attribute__((noinline)) static void storm_busy(double secs)
{
	double end = storm_now() + secs;

	while (storm_now() < end)
		hot_a(UNIT / 10);
}

#define STORM_LAST 20

/*
 * forkstorm N SECS [HOLD_MS]: fork N children that exit at once, each
 * reaped before the next is forked (with HOLD_MS, each lives that long and
 * all N are alive together).  Then print "dead PID" for the last 20 of
 * them, pause 1.5 s when N > 0 (a test can start a process that reuses
 * such a pid),
 * fork one child that burns CPU for SECS seconds, print "busy PID", and
 * wait for it.
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

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "hot3";

	if (!strcmp(mode, "hot3"))
		hot3(scale_arg(argc, argv, 2, 10));
	else if (!strcmp(mode, "threads"))
		return run_threads(scale_arg(argc, argv, 2, 2), scale_arg(argc, argv, 3, 10));
	else if (!strcmp(mode, "forkexec") && argc > 2)
		return run_forkexec(argv + 2);
	else if (!strcmp(mode, "dlopen") && argc > 2)
		return run_dlopen(argv[2], scale_arg(argc, argv, 3, 10));
	else if (!strcmp(mode, "kernel"))
		kernel_work(scale_arg(argc, argv, 2, 10));
	else if (!strcmp(mode, "forkstorm"))
		return run_forkstorm(argc, argv);
	else if (!strcmp(mode, "spin"))
		for (;;)
			hot3(1);
	else {
		fprintf(stderr, "usage: workload hot3|threads|forkexec|dlopen|kernel|spin|forkstorm ...\n");
		return 2;
	}
	return 0;
}
