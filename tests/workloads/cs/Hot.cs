// SPDX-License-Identifier: GPL-2.0
//
// Mono workload for precord's .mlpd tests: three hot methods whose CPU time
// is in the ratio 1 : 2 : 3 (Hot:Alpha : Hot:Beta : Hot:Gamma).  All three
// run the same arithmetic; only the iteration count differs.  Rounds of the
// three run until the process has used SECONDS of CPU time, so a test gets
// about as many samples on a faster or slower machine.
//
//   mcs -optimize+ -out:Hot.exe Hot.cs
//   mono Hot.exe [SECONDS]     (default 3; one round is about 0.1 s)
//
// Each method is NoInlining so the JIT emits it as its own code region and
// the .mlpd records it as "Hot:Alpha (int)" etc.
using System;
using System.Diagnostics;
using System.Globalization;
using System.Runtime.CompilerServices;

public static class Hot
{
	const int UNIT = 15000000;	// iterations of the kernel per weight unit

	static ulong sink;

	[MethodImpl(MethodImplOptions.NoInlining)]
	public static ulong Alpha(int rounds)
	{
		ulong x = 1;
		for (int i = 0; i < 1 * UNIT * rounds; i++)
			x = x * 6364136223846793005UL + 1442695040888963407UL ^ (x >> 29);
		return x;
	}

	[MethodImpl(MethodImplOptions.NoInlining)]
	public static ulong Beta(int rounds)
	{
		ulong x = 2;
		for (int i = 0; i < 2 * UNIT * rounds; i++)
			x = x * 6364136223846793005UL + 1442695040888963407UL ^ (x >> 29);
		return x;
	}

	[MethodImpl(MethodImplOptions.NoInlining)]
	public static ulong Gamma(int rounds)
	{
		ulong x = 3;
		for (int i = 0; i < 3 * UNIT * rounds; i++)
			x = x * 6364136223846793005UL + 1442695040888963407UL ^ (x >> 29);
		return x;
	}

	public static int Main(string[] args)
	{
		double seconds = args.Length > 0 ?
			double.Parse(args[0], CultureInfo.InvariantCulture) : 3;
		Process self = Process.GetCurrentProcess();
		int rounds = 0;

		do {
			sink += Alpha(1);
			sink += Beta(1);
			sink += Gamma(1);
			rounds++;
			self.Refresh();
		} while (self.TotalProcessorTime.TotalSeconds < seconds);
		Console.WriteLine("hot: rounds={0} sink={1:x}", rounds, sink);
		return 0;
	}
}
