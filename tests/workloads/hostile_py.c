// SPDX-License-Identifier: GPL-2.0
/*
 * Not Python, but looks like CPython 3.11 to precord (tests/bats/python.bats):
 * built with -rdynamic, it exports _PyRuntime, _PyEval_EvalFrameDefault,
 * PyCode_Type, PyUnicode_Type and Py_Version (3.11.2), and its _PyRuntime
 * leads (3.11's offsets, docs/python.md) to a thread state whose frames are
 * hostile:
 *
 *   frames   the chain f0 -> f1 -> ... -> f5 -> f0 (cyclic `previous`):
 *            f0 a good code object "hostile_ok" in "evil.py" line 7, f1 a
 *            code object whose qualname claims 2^62 characters and runs
 *            into an unreadable page, f2 an f_code in that unreadable page,
 *            f3 an object that is not a code object, f4 a UCS-4 name with
 *            control and surrogate code points, f5 a non-compact string;
 *   threads  the thread list cycles and never holds this thread;
 *   churn    frames, and a second thread rewrites f0's f_code, the strings'
 *            lengths and the chain all the time.
 *
 * usage: hostile_py frames|threads|churn SECONDS
 * Spins in _PyEval_EvalFrameDefault (a native frame that gets replaced)
 * called from hostile_run, for SECONDS of wall time.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

const unsigned long Py_Version = 0x030b02f0;
char PyCode_Type[256];
char PyUnicode_Type[256];
char _PyRuntime[1024] __attribute__((aligned(64)));

static char interp[256] __attribute__((aligned(64)));
static char tstate[2][512] __attribute__((aligned(64)));
static char cframe[64] __attribute__((aligned(64)));
static char frames[6][128] __attribute__((aligned(64)));
static char codes[6][256] __attribute__((aligned(64)));
static char strs[8][256] __attribute__((aligned(64)));
static char *bad;			/* a PROT_NONE page */
static volatile int stop;

static void put(void *base, size_t off, uint64_t v)
{
	memcpy((char *)base + off, &v, sizeof(v));
}

/* A compact ASCII str (3.11: length 16, state 32, data 48). */
static void ascii(char *s, const char *text)
{
	put(s, 8, (uintptr_t)PyUnicode_Type);
	put(s, 16, strlen(text));
	put(s, 32, 0x20 | 0x40 | (1 << 2));
	strcpy(s + 48, text);
}

/* A code object (type 8, firstlineno 72, filename 112, qualname 128). */
static void code(char *c, void *qualname, void *filename, int line)
{
	put(c, 8, (uintptr_t)PyCode_Type);
	memcpy(c + 72, &line, sizeof(line));
	put(c, 112, (uintptr_t)filename);
	put(c, 128, (uintptr_t)qualname);
}

static void setup(int threads_mode)
{
	uint32_t ucs4[] = { 'h', 'o', 0x1b, 0xd800, 0x110000, 0x263a, 0 };
	char *last_page;
	int tid = gettid();

	bad = mmap(NULL, 8192, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (bad == MAP_FAILED)
		exit(1);
	mprotect(bad + 4096, 4096, PROT_NONE);
	last_page = bad + 4096 - 48;		/* a str whose data ends at the page */
	bad += 4096;

	put(_PyRuntime, 40, (uintptr_t)interp);		/* interpreters.head */
	put(interp, 16, (uintptr_t)tstate[0]);		/* threads.head */
	put(tstate[0], 8, (uintptr_t)tstate[1]);	/* next */
	put(tstate[0], 160, 1);				/* native_thread_id: nobody */
	put(tstate[1], 8, threads_mode ? (uintptr_t)tstate[0] : 0);
	put(tstate[1], 160, threads_mode ? 2 : (uint64_t)tid);
	put(tstate[1], 56, (uintptr_t)cframe);		/* cframe */
	put(cframe, 8, (uintptr_t)frames[0]);		/* current_frame */

	ascii(strs[0], "hostile_ok");
	ascii(strs[1], "/srv/evil.py");
	code(codes[0], strs[0], strs[1], 7);
	/* 2^62 characters, the data running into the unreadable page */
	put(last_page, 8, (uintptr_t)PyUnicode_Type);
	put(last_page, 16, 1ULL << 62);
	put(last_page, 32, 0x20 | 0x40 | (1 << 2));
	code(codes[1], last_page, strs[1], 8);
	/* codes[2]: not a code object */
	put(codes[2], 8, (uintptr_t)PyUnicode_Type);
	/* UCS-4 with control, surrogate and out-of-range code points */
	put(strs[2], 8, (uintptr_t)PyUnicode_Type);
	put(strs[2], 16, 6);
	put(strs[2], 32, 0x20 | (4 << 2));
	memcpy(strs[2] + 72, ucs4, sizeof(ucs4));
	code(codes[3], strs[2], strs[1], 9);
	/* not compact */
	put(strs[3], 8, (uintptr_t)PyUnicode_Type);
	put(strs[3], 16, 4);
	put(strs[3], 32, 1 << 2);
	code(codes[4], strs[3], strs[1], 10);

	put(frames[0], 32, (uintptr_t)codes[0]);
	put(frames[1], 32, (uintptr_t)codes[1]);
	put(frames[2], 32, (uintptr_t)bad);
	put(frames[3], 32, (uintptr_t)codes[2]);
	put(frames[4], 32, (uintptr_t)codes[3]);
	put(frames[5], 32, (uintptr_t)codes[4]);
	for (int i = 0; i < 6; i++)
		put(frames[i], 48, (uintptr_t)frames[(i + 1) % 6]);	/* previous */
	frames[2][68] = 1;				/* is_entry */
}

static void *churn(void *arg)
{
	uint64_t x = 88172645463325252ULL;

	(void)arg;
	while (!stop) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		switch (x % 5) {
		case 0:
			put(frames[0], 32, (uintptr_t)codes[x >> 8 & 3]);
			break;
		case 1:
			put(strs[0], 16, x >> 20);
			break;
		case 2:
			put(frames[x >> 8 & 3], 48, (uintptr_t)frames[x >> 16 & 3] + (x >> 24 & 7));
			break;
		case 3:
			put(codes[0], 128, x & 1 ? (uintptr_t)strs[0] : (uintptr_t)bad);
			break;
		default:
			put(strs[0], 16, 10);
			put(frames[0], 32, (uintptr_t)codes[0]);
			break;
		}
	}
	return NULL;
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

__attribute__((noinline)) unsigned long _PyEval_EvalFrameDefault(double end)
{
	unsigned long x = 0;

	while (now() < end)
		for (int i = 0; i < 100000; i++)
			x += (unsigned long)i * i;
	return x;
}

__attribute__((noinline)) unsigned long hostile_run(double seconds)
{
	return _PyEval_EvalFrameDefault(now() + seconds);
}

int main(int argc, char **argv)
{
	pthread_t th;
	int churning;

	if (argc != 3) {
		fprintf(stderr, "usage: hostile_py frames|threads|churn SECONDS\n");
		return 2;
	}
	churning = !strcmp(argv[1], "churn");
	setup(!strcmp(argv[1], "threads"));
	if (churning && pthread_create(&th, NULL, churn, NULL))
		return 1;
	printf("hostile_py %s %lu\n", argv[1], hostile_run(atof(argv[2])) & 1);
	stop = 1;
	if (churning)
		pthread_join(th, NULL);
	return 0;
}
