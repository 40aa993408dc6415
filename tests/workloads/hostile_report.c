// SPDX-License-Identifier: GPL-2.0
/*
 * Targets for tests/bats/hostile_report.bats (issue 18, finding 8): what
 * the report symbolizer (export, push) opens for a recording.
 *
 *   hostile_report swap LIB SECS TARGET
 *	dlopen LIB, spin in its hot_spin() for SECS seconds, then replace
 *	LIB by a symlink to TARGET (a device, another user's binary).
 *   hostile_report jit SECS
 *	spin SECS seconds in anonymous executable memory (JIT code with
 *	no perf map); prints "jit PID START LEN".
 */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int do_swap(const char *lib, double secs, const char *target)
{
	void *h = dlopen(lib, RTLD_NOW);
	void (*spin)(long);
	double end = now() + secs;

	if (!h || !(spin = (void (*)(long))dlsym(h, "hot_spin"))) {
		fprintf(stderr, "dlopen %s: %s\n", lib, dlerror());
		return 1;
	}
	while (now() < end)
		spin(1000000);
	if (!strcmp(target, "-"))
		return 0;		/* the control: LIB stays */
	if (unlink(lib) || symlink(target, lib)) {
		perror(lib);
		return 1;
	}
	printf("swapped %s -> %s\n", lib, target);
	return 0;
}

static int do_jit(double secs)
{
	/* mov rax, rdi; 1: dec rax; jnz 1b; ret */
	static const unsigned char code[] = { 0x48, 0x89, 0xf8, 0x48, 0xff, 0xc8, 0x75, 0xfb, 0xc3 };
	size_t len = 4096;
	unsigned char *p = mmap(NULL, len, PROT_READ | PROT_WRITE | PROT_EXEC,
				MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	void (*spin)(long);
	double end = now() + secs;

	if (p == MAP_FAILED) {
		perror("mmap");
		return 1;
	}
	memcpy(p, code, sizeof(code));
	spin = (void (*)(long))(void *)p;
	printf("jit %d %lx %zx\n", (int)getpid(), (unsigned long)p, len);
	fflush(stdout);
	while (now() < end)
		spin(1000000);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc == 5 && !strcmp(argv[1], "swap"))
		return do_swap(argv[2], atof(argv[3]), argv[4]);
	if (argc == 3 && !strcmp(argv[1], "jit"))
		return do_jit(atof(argv[2]));
	fprintf(stderr, "usage: hostile_report swap LIB SECS TARGET | jit SECS\n");
	return 2;
}
