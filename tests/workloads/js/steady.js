// SPDX-License-Identifier: GPL-2.0
//
// A JIT service in steady state: one hot function, compiled in its first
// milliseconds, then run for SECONDS (default 60) of wall time with no new
// code but one: ~12 s in (node 20), V8 compiles the top-level loop with
// steadyHot inlined (`JS:* steady.js:1:1`).  V8 writes its jitdump through a 2 MiB stdio buffer, so the record
// of that code stays in node's memory, not in the file, for as long as the
// process runs (rotate.bats: every rotated file must still name it).
//
//   node --perf-prof steady.js [SECONDS]         (jit-<pid>.dump in the cwd)
//   node --perf-basic-prof steady.js [SECONDS]   (/tmp/perf-<pid>.map)
'use strict';

function steadyHot(n, seed) {
	let x = seed | 0;
	for (let i = 0; i < n; i++)
		x = (Math.imul(x, 1103515245) + 12345 + i) | 0;
	return x;
}

const end = Date.now() + 1000 * (Number(process.argv[2]) || 60);
let s = 0;
while (Date.now() < end)
	s ^= steadyHot(1e6, s);
console.log(s);
