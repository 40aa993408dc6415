// SPDX-License-Identifier: GPL-2.0
/*
 * A signal handler that burns CPU, built without frame pointers, for
 * --call-graph ehframe: the stack goes through the kernel's signal frame
 * (__restore_rt) back into the interrupted code.
 *
 *   sighandler [SECONDS]   SECONDS of CPU time (default 1): main →
 *                          main_loop → main_burn, interrupted every 10 ms
 *                          of CPU by SIGPROF, whose handler on_prof →
 *                          handler_burn spins for about half of it
 */
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <time.h>

static volatile unsigned long sink;
static volatile sig_atomic_t signals;

static double cpu_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

__attribute__((noinline)) static unsigned long handler_burn(unsigned long x, double until)
{
	while (cpu_now() < until)
		for (int i = 0; i < 2000; i++)
			x = x * 2862933555777941757UL + 3037000493UL;
	return x;
}

__attribute__((noinline)) static void on_prof(int sig)
{
	(void)sig;
	signals++;
	sink += handler_burn(sink, cpu_now() + 0.005);
}

__attribute__((noinline)) static unsigned long main_burn(unsigned long x)
{
	for (int i = 0; i < 20000; i++)
		x = x * 6364136223846793005UL + 1;
	return x;
}

__attribute__((noinline)) static void main_loop(double until)
{
	while (cpu_now() < until)
		sink += main_burn(sink);
}

int main(int argc, char **argv)
{
	double secs = argc > 1 ? atof(argv[1]) : 1.0;
	struct itimerval it = { { 0, 10000 }, { 0, 10000 } };
	struct sigaction sa;

	if (!(secs > 0))
		secs = 1.0;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_prof;
	sigaction(SIGPROF, &sa, NULL);
	setitimer(ITIMER_PROF, &it, NULL);
	main_loop(cpu_now() + secs);
	return signals > 0 ? 0 : 1;
}
