// SPDX-License-Identifier: GPL-2.0
/*
 * A workload whose CPU goes into libc's own static functions, for the
 * tests of Debian's detached debug files (issue 21, acceptance 5):
 * qsort() of a large int array, over and over.  glibc's qsort is a merge
 * sort (msort_with_tmp, static in libc, named only by libc's debug file
 * from libc6-dbg or a debuginfod server); the comparison function is
 * ours.
 *
 *   qsort_libc SECS
 *       sorts a shuffled array of 64 Ki ints for SECS of the thread's CPU
 *       time; prints nothing.
 */
#include <stdlib.h>
#include <time.h>

#define N	(64 * 1024)

static int vals[N];

static double cpu_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

__attribute__((noinline)) static int cmp_int(const void *a, const void *b)
{
	int x = *(const int *)a, y = *(const int *)b;

	return (x > y) - (x < y);
}

int main(int argc, char **argv)
{
	double secs = argc > 1 ? atof(argv[1]) : 1.0, end;
	unsigned int seed = 1;

	if (secs <= 0)
		return 2;
	end = cpu_now() + secs;
	do {
		for (int i = 0; i < N; i++)
			vals[i] = (int)(rand_r(&seed) & 0xfffff);
		qsort(vals, N, sizeof(vals[0]), cmp_int);
	} while (cpu_now() < end);
	return vals[0] < 0;
}
