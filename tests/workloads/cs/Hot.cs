// SPDX-License-Identifier: GPL-2.0
//
// Mono workload for precord's JIT tests: three hot methods, Hot:Alpha,
// Hot:Beta and Hot:Gamma, with the same body, called with 1, 2 and 3 units
// of iterations.  The ratio 1 : 2 : 3 is their design, not a measurement:
// on some CPUs the same loop runs at different speeds in the three copies
// of its code (seen: 21.5 : 26.3 : 48.9 on an AMD EPYC).  So the workload
// measures what each took, in CPU time of its own thread
// (clock_gettime(CLOCK_THREAD_CPUTIME_ID), not wall time, which a busy
// machine inflates), and prints it at exit:
//
//   hot: rounds=N sink=X
//   hot: thread-cpu Alpha A Beta B Gamma G total T
//
// A, B, G: seconds of the main thread's CPU time inside each method; T: the
// main thread's CPU time since it started, read as Main returns.  A
// profile's self share of Hot:Alpha in the main thread (comm "mono") should
// be A / T, up to sampling noise.  Rounds of the three run until the thread
// has used SECONDS of CPU time, so a test gets about as many samples on a
// faster or slower machine.
//
//   mcs -optimize+ -out:Hot.exe Hot.cs
//   mono Hot.exe [SECONDS]     (default 3; one round is about 0.1 s)
//
// Each method is NoInlining so the JIT emits it as its own code region and
// the .mlpd records it as "Hot:Alpha (int,ulong)" etc.
using System;
using System.Globalization;
using System.Runtime.CompilerServices;
using System.Runtime.InteropServices;

public static class Hot
{
	const int UNIT = 15000000;	// iterations of the kernel per weight unit
	const int CLOCK_THREAD_CPUTIME_ID = 3;

	[StructLayout(LayoutKind.Sequential)]
	struct Timespec
	{
		public long tv_sec;
		public long tv_nsec;
	}

	[DllImport("libc", EntryPoint = "clock_gettime")]
	static extern int clock_gettime(int clock, out Timespec ts);

	// CPU seconds of the calling thread
	static double ThreadCpu()
	{
		Timespec ts;
		if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, out ts) != 0)
			throw new Exception("clock_gettime(CLOCK_THREAD_CPUTIME_ID) failed");
		return ts.tv_sec + ts.tv_nsec * 1e-9;
	}

	static ulong sink;

	// The same body three times: only the name differs.
	[MethodImpl(MethodImplOptions.NoInlining)]
	public static ulong Alpha(int n, ulong x)
	{
		for (int i = 0; i < n; i++)
			x = x * 6364136223846793005UL + 1442695040888963407UL ^ (x >> 29);
		return x;
	}

	[MethodImpl(MethodImplOptions.NoInlining)]
	public static ulong Beta(int n, ulong x)
	{
		for (int i = 0; i < n; i++)
			x = x * 6364136223846793005UL + 1442695040888963407UL ^ (x >> 29);
		return x;
	}

	[MethodImpl(MethodImplOptions.NoInlining)]
	public static ulong Gamma(int n, ulong x)
	{
		for (int i = 0; i < n; i++)
			x = x * 6364136223846793005UL + 1442695040888963407UL ^ (x >> 29);
		return x;
	}

	public static int Main(string[] args)
	{
		double seconds = args.Length > 0 ?
			double.Parse(args[0], CultureInfo.InvariantCulture) : 3;
		double a = 0, b = 0, g = 0, t0, t1;
		int rounds = 0;

		t1 = ThreadCpu();
		do {
			t0 = t1;
			sink += Alpha(1 * UNIT, 1);
			t1 = ThreadCpu(); a += t1 - t0; t0 = t1;
			sink += Beta(2 * UNIT, 2);
			t1 = ThreadCpu(); b += t1 - t0; t0 = t1;
			sink += Gamma(3 * UNIT, 3);
			t1 = ThreadCpu(); g += t1 - t0;
			rounds++;
		} while (t1 < seconds);
		Console.WriteLine("hot: rounds={0} sink={1:x}", rounds, sink);
		Console.WriteLine(string.Format(CultureInfo.InvariantCulture,
			"hot: thread-cpu Alpha {0:F6} Beta {1:F6} Gamma {2:F6} total {3:F6}",
			a, b, g, ThreadCpu()));
		return 0;
	}
}
