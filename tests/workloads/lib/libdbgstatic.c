// SPDX-License-Identifier: GPL-2.0
/*
 * A library whose hot functions are static (tests/workloads/stripped_lib.c
 * dlopen()s it), for the tests of local debug files (issue 21,
 * acceptance 4): stripped, its functions are named by its debug file only.
 */
static volatile unsigned long dbglib_sink;

/* The same loop in both, at the same alignment. */
__attribute__((noinline, aligned(64))) static void dbglib_static_gamma(unsigned long n)
{
	while (n--)
		dbglib_sink += n ^ (dbglib_sink >> 3);
}

__attribute__((noinline, aligned(64))) static void dbglib_static_delta(unsigned long n)
{
	while (n--)
		dbglib_sink += n ^ (dbglib_sink >> 3);
}

/* The one exported function: WHICH 0 runs gamma, else delta. */
void dbglib_work(int which, unsigned long n)
{
	if (which == 0)
		dbglib_static_gamma(n);
	else
		dbglib_static_delta(n);
}
