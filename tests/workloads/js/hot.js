// SPDX-License-Identifier: GPL-2.0
//
// JIT workload for precord's JIT merging: three named hot functions with
// the same loop body, run for 5:3:2 of the iterations, so they take about
// 50%, 30% and 20% of the CPU time.  That is their design, not a
// measurement (the three copies of the code need not run at one speed on
// every CPU), so the workload measures the process CPU time each took
// (process.cpuUsage() around every call and around the warm-up of each:
// node's other threads are idle while they run, but for V8 compiling them
// in the warm-up, a few ms) and prints it at exit, with one checksum:
//
//   hot.js checksum C
//   hot.js cpu hotFifty F hotThirty T hotTwenty W total P pid N
//
// F, T, W: seconds of CPU time inside each function; P: the process's CPU
// time since it started, read at the end; N: its process id.  A profile's
// share of hotFifty in the process should be F / P, up to sampling noise.
// It runs rounds of the three until the process has used SECONDS of CPU
// time (default 3), so a test gets about as many samples on a faster or
// slower machine.
//
//   node --perf-prof --interpreted-frames-native-stack hot.js [SECONDS]
//        (writes jit-<pid>.dump in the current directory)
//   node --perf-basic-prof hot.js [SECONDS]
//        (writes /tmp/perf-<pid>.map)
'use strict';

const SECONDS = Number(process.argv[2]) || 3;
// One round is 10 * UNIT iterations, about 25 ms on the reference VM: long
// enough that each call is optimized in place, short enough to stop on time.
const UNIT = 1e6;

// Each function is long-running on its own (its loop gets optimized in
// place), and the caller runs only ROUNDS times, so V8 never inlines them.
function hotFifty(n, seed) {
	let x = seed | 0;
	for (let i = 0; i < n; i++)
		x = (Math.imul(x, 1103515245) + 12345 + i) | 0;
	return x;
}

function hotThirty(n, seed) {
	let x = seed | 0;
	for (let i = 0; i < n; i++)
		x = (Math.imul(x, 1103515245) + 12345 + i) | 0;
	return x;
}

function hotTwenty(n, seed) {
	let x = seed | 0;
	for (let i = 0; i < n; i++)
		x = (Math.imul(x, 1103515245) + 12345 + i) | 0;
	return x;
}

function cpuSeconds() {
	const u = process.cpuUsage();
	return (u.user + u.system) / 1e6;
}

// Warm up: get all three optimized before the long calls, otherwise V8's
// tiering (on-stack replacement in the middle of a long loop) makes the
// split between them vary from run to run by 20 points.  Timed too: in a
// 0.2 s process it is a fifth of the functions' time.
let f = 0, t = 0, w = 0;
let t0, t1 = cpuSeconds();
for (let i = 0; i < 2000; i++)
	hotFifty(1000, i);
t0 = t1; t1 = cpuSeconds(); f += t1 - t0;
for (let i = 0; i < 2000; i++)
	hotThirty(1000, i);
t0 = t1; t1 = cpuSeconds(); t += t1 - t0;
for (let i = 0; i < 2000; i++)
	hotTwenty(1000, i);
t0 = t1; t1 = cpuSeconds(); w += t1 - t0;

let sum = 0;
for (let r = 0; t1 < SECONDS; r++) {
	t0 = t1;
	sum = (sum + hotFifty(5 * UNIT, r)) | 0;
	t1 = cpuSeconds(); f += t1 - t0; t0 = t1;
	sum = (sum + hotThirty(3 * UNIT, r)) | 0;
	t1 = cpuSeconds(); t += t1 - t0; t0 = t1;
	sum = (sum + hotTwenty(2 * UNIT, r)) | 0;
	t1 = cpuSeconds(); w += t1 - t0;
}
console.log(`hot.js checksum ${sum >>> 0}`);
console.log(`hot.js cpu hotFifty ${f.toFixed(6)} hotThirty ${t.toFixed(6)} ` +
	`hotTwenty ${w.toFixed(6)} total ${cpuSeconds().toFixed(6)} pid ${process.pid}`);
