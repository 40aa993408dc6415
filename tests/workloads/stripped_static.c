// SPDX-License-Identifier: GPL-2.0
/*
 * A workload whose hot functions are static, for the tests of debug
 * files (issue 21): stripped of its symbols (strip --strip-all) it shows
 * only addresses, and its names come back from its debug file only
 * (objcopy --only-keep-debug), served by debuginfod or kept in a
 * /usr/lib/debug-like tree.
 *
 *   stripped_static SECS
 *       for SECS of the thread's CPU time, rounds of dbg_static_alpha (3
 *       units of work) and dbg_static_beta (1 unit).  With
 *       PRECORD_WL_TRUTH=FILE, the thread's CPU clock is read around each
 *       call and one line is appended to FILE at the end:
 *         truth pid=PID dbg_static_alpha=S dbg_static_beta=S end=T
 *       (seconds in each; T the time of day at the end, in seconds), the
 *       ground truth the tests compare perf report's shares with, and
 *       when the command ended.
 *
 * Built with clang and frame pointers, as every workload (Makefile).
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define UNIT	(100 * 1000ul)

static volatile unsigned long sink;

static double cpu_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* The same loop in both, at the same alignment: an iteration costs the
 * same in each. */
__attribute__((noinline, aligned(64))) static void dbg_static_alpha(unsigned long n)
{
	for (unsigned long i = 0; i < n; i++)
		sink += i ^ (sink >> 3);
}

__attribute__((noinline, aligned(64))) static void dbg_static_beta(unsigned long n)
{
	for (unsigned long i = 0; i < n; i++)
		sink += i ^ (sink >> 3);
}

int main(int argc, char **argv)
{
	const char *truth = getenv("PRECORD_WL_TRUTH");
	double secs = argc > 1 ? atof(argv[1]) : 1.0, end, t0, t1, t2;
	double in_alpha = 0, in_beta = 0;

	if (secs <= 0) {
		fprintf(stderr, "usage: stripped_static SECONDS\n");
		return 2;
	}
	end = cpu_now() + secs;
	do {
		t0 = cpu_now();
		dbg_static_alpha(3 * UNIT);
		t1 = cpu_now();
		dbg_static_beta(UNIT);
		t2 = cpu_now();
		in_alpha += t1 - t0;
		in_beta += t2 - t1;
	} while (t2 < end);
	if (truth && *truth) {
		char line[256];
		struct timespec now;
		int n;

		clock_gettime(CLOCK_REALTIME, &now);
		n = snprintf(line, sizeof(line),
			     "truth pid=%d dbg_static_alpha=%.9f dbg_static_beta=%.9f end=%ld.%06ld\n",
			     (int)getpid(), in_alpha, in_beta, (long)now.tv_sec, now.tv_nsec / 1000);
		int fd = open(truth, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);

		if (fd < 0 || write(fd, line, (size_t)n) != n)
			perror("stripped_static: PRECORD_WL_TRUTH");
		if (fd >= 0)
			close(fd);
	}
	return 0;
}
