// SPDX-License-Identifier: GPL-2.0
/*
 * A workload that waits in known ways, for --off-cpu's tests and bench.
 * It measures its own waits (CLOCK_MONOTONIC around each) and writes
 * them to TRUTH as one line when it ends: the ground truth of the tests.
 *
 *   offcpu waits SECS raw|libc TRUTH
 *       for SECS of wall time, in turn: wait_sleep (nanosleep 4 ms) and
 *       wait_poll (poll on a pipe nobody writes, 2 ms timeout).  raw: the
 *       system calls are made from those functions themselves (inline
 *       syscall), so frame-pointer stacks name them; libc: through libc's
 *       nanosleep() and poll() (for --call-graph ehframe).
 *       truth sleep=S poll=S wall=S cpu=S sleeps=N   (the thread's wall
 *       and CPU time of the loop, in seconds; N calls of each function)
 *   offcpu lock SECS TRUTH
 *       two threads for SECS: lock_holder takes a mutex and holds it 10 ms
 *       (asleep), releases it, sleeps 2 ms; lock_waiter takes the mutex
 *       (waiting for the holder: a futex wait), releases it, then sleeps
 *       3 ms in waiter_rest.
 *       truth lockwait=S rest=S   (the waiter's time in pthread_mutex_lock
 *       and in waiter_rest)
 *   offcpu pingpong SECS [RATE]
 *       two threads pass a byte back and forth through two pipes for SECS,
 *       at most RATE round trips a second (0, the default: as fast as they
 *       can; paced by spinning, not sleeping); each round trip is two
 *       waits, one per thread.  Prints "rounds=N per_sec=R cpu=S" (S: the
 *       process's CPU time), the bench of the cost per switch.
 *
 * Built with clang and frame pointers, as every workload (Makefile).
 */
#define _GNU_SOURCE
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define NOINLINE __attribute__((noinline))

static double now(clockid_t c)
{
	struct timespec ts;

	clock_gettime(c, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* The syscall instruction in the caller's own code. */
static inline __attribute__((always_inline)) long sys3(long n, long a, long b, long c)
{
	long ret;

	__asm__ volatile("syscall" : "=a"(ret) : "a"(n), "D"(a), "S"(b), "d"(c)
			 : "rcx", "r11", "memory");
	return ret;
}

static int raw_mode;
static int pipe_fds[2];

NOINLINE static double wait_sleep(void)
{
	struct timespec ts = { 0, 4000000 };
	double t0 = now(CLOCK_MONOTONIC);

	if (raw_mode)
		sys3(SYS_nanosleep, (long)&ts, 0, 0);
	else
		nanosleep(&ts, NULL);
	return now(CLOCK_MONOTONIC) - t0;
}

NOINLINE static double wait_poll(void)
{
	struct pollfd p = { .fd = pipe_fds[0], .events = POLLIN };
	double t0 = now(CLOCK_MONOTONIC);

	if (raw_mode)
		sys3(SYS_poll, (long)&p, 1, 2);
	else
		poll(&p, 1, 2);
	return now(CLOCK_MONOTONIC) - t0;
}

NOINLINE static int run_waits(double secs, const char *truth)
{
	double w0 = now(CLOCK_MONOTONIC), c0 = now(CLOCK_THREAD_CPUTIME_ID);
	double slept = 0, polled = 0, wall, cpu;
	long rounds = 0;
	FILE *f;

	if (pipe(pipe_fds))
		return 1;
	while (now(CLOCK_MONOTONIC) - w0 < secs) {
		slept += wait_sleep();
		polled += wait_poll();
		rounds++;
	}
	wall = now(CLOCK_MONOTONIC) - w0;
	cpu = now(CLOCK_THREAD_CPUTIME_ID) - c0;
	f = fopen(truth, "a");
	if (!f)
		return 1;
	fprintf(f, "truth sleep=%.6f poll=%.6f wall=%.6f cpu=%.6f sleeps=%ld\n", slept, polled, wall,
		cpu, rounds);
	return fclose(f) ? 1 : 0;
}

/* ---- lock ---------------------------------------------------------------- */

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static volatile int stop;
static double lock_secs, rest_secs;

static void sleep_ms(long ms)
{
	struct timespec ts = { ms / 1000, ms % 1000 * 1000000 };

	while (nanosleep(&ts, &ts))
		;
}

NOINLINE static void *lock_holder(void *arg)
{
	(void)arg;
	while (!stop) {
		pthread_mutex_lock(&lock);
		sleep_ms(10);
		pthread_mutex_unlock(&lock);
		sleep_ms(2);
	}
	return NULL;
}

NOINLINE static void waiter_rest(void)
{
	double t0 = now(CLOCK_MONOTONIC);

	sleep_ms(3);
	rest_secs += now(CLOCK_MONOTONIC) - t0;
}

NOINLINE static void *lock_waiter(void *arg)
{
	(void)arg;
	while (!stop) {
		double t0 = now(CLOCK_MONOTONIC);

		pthread_mutex_lock(&lock);
		lock_secs += now(CLOCK_MONOTONIC) - t0;
		pthread_mutex_unlock(&lock);
		waiter_rest();
	}
	return NULL;
}

static int run_lock(double secs, const char *truth)
{
	pthread_t h, w;
	FILE *f;

	if (pthread_create(&h, NULL, lock_holder, NULL) ||
	    pthread_create(&w, NULL, lock_waiter, NULL))
		return 1;
	sleep_ms((long)(secs * 1000));
	stop = 1;
	pthread_join(h, NULL);
	pthread_join(w, NULL);
	f = fopen(truth, "a");
	if (!f)
		return 1;
	fprintf(f, "truth lockwait=%.6f rest=%.6f\n", lock_secs, rest_secs);
	return fclose(f) ? 1 : 0;
}

/* ---- pingpong ------------------------------------------------------------ */

static int ab[2], ba[2];
static volatile unsigned long rounds;

static void *pong(void *arg)
{
	char c;

	(void)arg;
	while (read(ab[0], &c, 1) == 1 && c)
		if (write(ba[1], &c, 1) != 1)
			break;
	return NULL;
}

static int run_pingpong(double secs, double rate)
{
	double t0 = now(CLOCK_MONOTONIC), t;
	struct rusage ru;
	pthread_t th;
	char c = 1;

	if (pipe(ab) || pipe(ba) || pthread_create(&th, NULL, pong, NULL))
		return 1;
	while ((t = now(CLOCK_MONOTONIC) - t0) < secs) {
		for (int i = 0; i < 100; i++) {
			if (write(ab[1], &c, 1) != 1 || read(ba[0], &c, 1) != 1)
				return 1;
			rounds++;
		}
		while (rate > 0 && now(CLOCK_MONOTONIC) - t0 < (double)rounds / rate)
			;
	}
	c = 0;
	if (write(ab[1], &c, 1) != 1)
		return 1;
	pthread_join(th, NULL);
	getrusage(RUSAGE_SELF, &ru);
	printf("rounds=%lu per_sec=%.0f cpu=%.3f\n", rounds, (double)rounds / t,
	       (double)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) +
	       (double)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6);
	return 0;
}

int main(int argc, char **argv)
{
	double secs = argc > 2 ? atof(argv[2]) : 1;

	if (argc >= 5 && !strcmp(argv[1], "waits")) {
		raw_mode = !strcmp(argv[3], "raw");
		return run_waits(secs, argv[4]);
	}
	if (argc >= 4 && !strcmp(argv[1], "lock"))
		return run_lock(secs, argv[3]);
	if (argc >= 3 && !strcmp(argv[1], "pingpong"))
		return run_pingpong(secs, argc > 3 ? atof(argv[3]) : 0);
	fprintf(stderr, "usage: offcpu waits SECS raw|libc TRUTH | lock SECS TRUTH | pingpong SECS [RATE]\n");
	return 2;
}
