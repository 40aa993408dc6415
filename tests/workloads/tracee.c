// SPDX-License-Identifier: GPL-2.0
/*
 * Workload for function tracing: two threads each call outer() M times,
 * and inner() exactly N times in all from those outer() calls (N/M per
 * call, the first N%M calls one more).
 *
 *   tracee M N            run at once
 *   tracee M N wait       print "ready PID", wait for SIGUSR1, then run:
 *                         for `precord -p PID`
 *   tracee M N MS         sleep MS milliseconds first
 *
 * inner(a, b) and outer(i, n) take integer arguments so --trace-args has
 * something known to show: inner's are (call index in the thread, thread
 * number 1 or 2).  With TRACEE_TIME=1 in the environment each thread
 * prints the time its calls took ("tracee: thread T: C calls in NS ns"),
 * for measuring the cost a tracer adds per call.
 */
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static long m_calls, n_calls;
static volatile long sink;

__attribute__((noinline)) long inner(long a, long b)
{
	sink += a ^ b;
	asm volatile("" ::: "memory");
	return a + b;
}

__attribute__((noinline)) long outer(long i, long n, long thread, long *done)
{
	long k, s = 0;

	for (k = 0; k < n; k++)
		s += inner((*done)++, thread);
	sink += i;
	asm volatile("" ::: "memory");
	return s;
}

static long long now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static void *run(void *arg)
{
	long thread = (long)arg, i, done = 0, s = 0;
	long long t0 = now_ns();

	for (i = 0; i < m_calls; i++) {
		long n = n_calls / m_calls + (i < n_calls % m_calls);

		s += outer(i, n, thread, &done);
	}
	if (getenv("TRACEE_TIME"))
		fprintf(stderr, "tracee: thread %ld: %ld calls in %lld ns\n", thread,
			m_calls + n_calls, now_ns() - t0);
	return (void *)s;
}

static void wait_for_go(void)
{
	sigset_t set;
	int sig;

	sigemptyset(&set);
	sigaddset(&set, SIGUSR1);
	pthread_sigmask(SIG_BLOCK, &set, NULL);
	printf("ready %d\n", (int)getpid());
	fflush(stdout);
	sigwait(&set, &sig);
}

int main(int argc, char **argv)
{
	pthread_t t[2];
	long i;

	if (argc < 3) {
		fprintf(stderr, "usage: %s M N [wait|MS]\n", argv[0]);
		return 2;
	}
	m_calls = atol(argv[1]);
	n_calls = atol(argv[2]);
	if (m_calls < 0 || n_calls < 0 || (m_calls == 0 && n_calls > 0)) {
		fprintf(stderr, "tracee: need M >= 1 when N > 0\n");
		return 2;
	}
	if (argc > 3 && !strcmp(argv[3], "wait")) {
		wait_for_go();
	} else if (argc > 3) {
		long ms = atol(argv[3]);
		struct timespec ts = { ms / 1000, (ms % 1000) * 1000000 };

		nanosleep(&ts, NULL);
	}
	for (i = 0; i < 2; i++)
		if (pthread_create(&t[i], NULL, run, (void *)(i + 1)))
			return 1;
	for (i = 0; i < 2; i++)
		pthread_join(t[i], NULL);
	return 0;
}
