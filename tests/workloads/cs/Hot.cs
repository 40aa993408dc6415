// SPDX-License-Identifier: GPL-2.0
//
// Mono workload for precord's .mlpd tests: three hot methods whose CPU time
// is in the ratio 1 : 2 : 3 (Hot:Alpha : Hot:Beta : Hot:Gamma).  Every loop
// count is fixed, so two runs do the same work.  All three run the same
// arithmetic; only the iteration count differs.
//
//   mcs -optimize+ -out:Hot.exe Hot.cs
//   mono Hot.exe [ROUNDS]      (default 30 rounds, about 3 s on one core)
//
// Each method is NoInlining so the JIT emits it as its own code region and
// the .mlpd records it as "Hot:Alpha (int)" etc.
using System;
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
		int rounds = args.Length > 0 ? int.Parse(args[0]) : 30;

		for (int r = 0; r < rounds; r++) {
			sink += Alpha(1);
			sink += Beta(1);
			sink += Gamma(1);
		}
		Console.WriteLine("hot: rounds={0} sink={1:x}", rounds, sink);
		return 0;
	}
}
