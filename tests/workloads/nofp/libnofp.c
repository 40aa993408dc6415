// SPDX-License-Identifier: GPL-2.0
/*
 * The shared library of the nofp workload, built without frame pointers
 * too (see the Makefile): lib_work → lib_leaf.
 */
static volatile unsigned long lib_sink;

__attribute__((noinline)) static unsigned long lib_leaf(unsigned long x)
{
	for (int i = 0; i < 64; i++)
		x = x * 6364136223846793005UL + 1442695040888963407UL;
	return x;
}

__attribute__((noinline)) void lib_work(unsigned long n)
{
	unsigned long x = lib_sink;

	for (unsigned long i = 0; i < n; i++)
		x ^= lib_leaf(x + i);
	lib_sink = x;
}

/* The entry point `workload dlopen LIB` calls (tests/bats/ehframe.bats:
 * a library without frame pointers loaded after the recording started). */
__attribute__((noinline)) void lib_spin(unsigned long n)
{
	lib_work(n / 4096 + 1);
}
