// SPDX-License-Identifier: GPL-2.0
/*
 * A program whose hot functions are static functions of a shared
 * library, for the tests of local debug files (issue 21, acceptance 4):
 * the library (tests/workloads/lib/libdbgstatic.c) is stripped and its
 * names come back from its debug file only.
 *
 *   stripped_lib LIBRARY SECS
 *       dlopen()s LIBRARY and, for SECS of the thread's CPU time, calls
 *       its dbglib_work() for rounds of dbglib_static_gamma (3 units of
 *       work) and dbglib_static_delta (1 unit).  With PRECORD_WL_TRUTH=FILE
 *       one line is appended to FILE at the end:
 *         truth pid=PID dbglib_static_gamma=S dbglib_static_delta=S
 *       (the thread's CPU seconds in each call), the ground truth.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#define UNIT	(100 * 1000ul)

static double cpu_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

int main(int argc, char **argv)
{
	const char *truth = getenv("PRECORD_WL_TRUTH");
	double secs = argc > 2 ? atof(argv[2]) : 0, end, t0, t1, t2;
	double in_gamma = 0, in_delta = 0;
	void (*work)(int, unsigned long);
	void *lib;

	if (argc < 3 || secs <= 0) {
		fprintf(stderr, "usage: stripped_lib LIBRARY SECONDS\n");
		return 2;
	}
	lib = dlopen(argv[1], RTLD_NOW);
	if (!lib) {
		fprintf(stderr, "stripped_lib: %s\n", dlerror());
		return 1;
	}
	*(void **)&work = dlsym(lib, "dbglib_work");
	if (!work) {
		fprintf(stderr, "stripped_lib: %s\n", dlerror());
		return 1;
	}
	end = cpu_now() + secs;
	do {
		t0 = cpu_now();
		work(0, 3 * UNIT);
		t1 = cpu_now();
		work(1, UNIT);
		t2 = cpu_now();
		in_gamma += t1 - t0;
		in_delta += t2 - t1;
	} while (t2 < end);
	if (truth && *truth) {
		FILE *f = fopen(truth, "a");

		if (!f || fprintf(f, "truth pid=%d dbglib_static_gamma=%.9f dbglib_static_delta=%.9f\n",
				  (int)getpid(), in_gamma, in_delta) < 0 || fclose(f) != 0)
			perror("stripped_lib: PRECORD_WL_TRUTH");
	}
	dlclose(lib);
	return 0;
}
