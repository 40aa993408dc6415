// SPDX-License-Identifier: GPL-2.0
/*
 * C++ without frame pointers (g++ -O2 -fomit-frame-pointer, see the
 * Makefile) that throws in its hot path, for --call-graph ehframe:
 *
 *   exc [SECONDS]   SECONDS of CPU time (default 1):
 *                   main → catcher → thrower → burn, thrower throws every
 *                   turn and catcher catches (the unwinder of libgcc_s and
 *                   libstdc++ runs: _Unwind_RaiseException, __cxa_throw)
 */
#include <cstdlib>
#include <ctime>
#include <stdexcept>

static volatile unsigned long sink;

static double cpu_now()
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

__attribute__((noinline)) static unsigned long burn(unsigned long x)
{
	for (int i = 0; i < 20000; i++)
		x = x * 6364136223846793005UL + 1;
	return x;
}

__attribute__((noinline)) static void thrower(unsigned long x)
{
	sink += burn(x);
	if (sink != 1)
		throw std::runtime_error("turn");
}

__attribute__((noinline)) static long catcher(double until)
{
	long caught = 0;

	while (cpu_now() < until) {
		try {
			thrower(sink);
		} catch (const std::exception &) {
			caught++;
		}
	}
	return caught;
}

int main(int argc, char **argv)
{
	double secs = argc > 1 ? atof(argv[1]) : 1.0;

	if (!(secs > 0))
		secs = 1.0;
	return catcher(cpu_now() + secs) > 0 ? 0 : 1;
}
