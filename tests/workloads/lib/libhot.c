// SPDX-License-Identifier: GPL-2.0
/* A library the workload dlopen()s after the recording has started. */
static volatile unsigned long lib_sink;

__attribute__((noinline)) void lib_spin(unsigned long n)
{
	for (unsigned long i = 0; i < n; i++)
		lib_sink += i * 7;
}

void lib_hot(int scale)
{
	for (int i = 0; i < scale * 10; i++)
		lib_spin(5000000UL);
}
