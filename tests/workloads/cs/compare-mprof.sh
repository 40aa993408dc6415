#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# Record tests/workloads/cs/Hot.cs with Mono's log profiler (plain and
# zip) and check that precord's .mlpd reader lists the same code regions
# as mprof-report, the reference reader.
#
#   compare-mprof.sh [DUMPER]
#
# DUMPER (default build/tests/test_mlpd) is run as `DUMPER --dump FILE` and
# prints "0xADDR SIZE NAME" per region.  mprof-report --debug prints every
# JIT event ("jitted method M (NAME), size: N, code: 0xADDR") and code
# buffer ("jit helper NAME, size: N, code: 0xADDR"); precord leaves out JIT
# events without code and code buffers of type "method" (each duplicates a
# JIT event) and names the generic buffers "[mono] NAME".
#
# Exit 0: same lists and the three hot methods present; 1: mismatch;
# 2: mono, mcs, mprof-report or libmono-profiler is missing (skip).
set -u
export MLPD_COMPARE_RUNNING=1	# test_mlpd never runs this script again

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
dumper=${1:-$here/../../../build/tests/test_mlpd}
rounds=${HOT_SECONDS:-0.2}	# CPU seconds of Hot.exe

for tool in mono mcs mprof-report; do
	command -v "$tool" >/dev/null || { echo "compare-mprof: $tool not installed" >&2; exit 2; }
done
[ -x "$dumper" ] || { echo "compare-mprof: $dumper not built" >&2; exit 1; }
case $("$dumper" --now 2>/dev/null) in
''|*[!0-9]*) echo "compare-mprof: $dumper has no --now mode (rebuild it)" >&2; exit 1 ;;
esac

tmp=$(mktemp -d "${TMPDIR:-/tmp}/compare-mprof.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT

mcs -optimize+ -out:"$tmp/Hot.exe" "$here/Hot.cs" >"$tmp/mcs.log" 2>&1 ||
	{ cat "$tmp/mcs.log" >&2; echo "compare-mprof: mcs failed" >&2; exit 1; }

# nodefaults must come first; jit adds the code buffers (trampolines).
t0=$("$dumper" --now)
mono --profile=log:nodefaults,jit,output="$tmp/hot.mlpd" "$tmp/Hot.exe" "$rounds" \
	>"$tmp/mono.log" 2>&1
t1=$("$dumper" --now)
if [ ! -s "$tmp/hot.mlpd" ]; then
	cat "$tmp/mono.log" >&2
	if ! ls /usr/lib/libmono-profiler-log.so* /usr/lib/*/libmono-profiler-log.so* >/dev/null 2>&1; then
		echo "compare-mprof: Mono's log profiler (libmono-profiler) is not installed" >&2
		exit 2
	fi
	echo "compare-mprof: mono wrote no .mlpd" >&2
	exit 1
fi
mono --profile=log:nodefaults,jit,zip,output="$tmp/hot.mlpd.gz" "$tmp/Hot.exe" "$rounds" \
	>>"$tmp/mono.log" 2>&1 || { cat "$tmp/mono.log" >&2; exit 1; }
# every kind of event Mono 6.8 writes, so the reader skips them all right
mono --profile=log:legacy,sample,calls,alloc,heapshot,jit,output="$tmp/all.mlpd" \
	"$tmp/Hot.exe" "$rounds" >>"$tmp/mono.log" 2>&1 || { cat "$tmp/mono.log" >&2; exit 1; }

expected() {	# mprof-report's regions, in precord's naming
	mprof-report --debug "$1" | awk '
	/^jitted method / {
		line = $0
		i = index(line, " (")
		j = 0
		for (k = length(line); k > 0; k--)
			if (substr(line, k, 9) == "), size: ") { j = k; break }
		name = substr(line, i + 2, j - i - 2)
		split(substr(line, j + 9), f, ", code: ")
		if (f[1] + 0 > 0 && f[2] != "(nil)")
			print f[2], f[1] + 0, name
		next
	}
	/^jit helper / {
		line = substr($0, 12)
		j = 0
		for (k = length(line); k > 0; k--)
			if (substr(line, k, 8) == ", size: ") { j = k; break }
		name = substr(line, 1, j - 1)
		split(substr(line, j + 8), f, ", code: ")
		if (name == "method" || f[1] + 0 == 0 || f[2] == "(nil)")
			next
		if (name ~ /^(method trampoline|unbox trampoline|imt trampoline|generics trampoline|specific trampoline|misc helper|monitor\/lock|delegate invoke|exception handling)$/)
			name = "[mono] " name
		print f[2], f[1] + 0, name
	}'
}

fail=0
# The reader's times are CLOCK_MONOTONIC: inside the run of mono.
if ! "$dumper" --dump-times "$tmp/hot.mlpd" 2>/dev/null |
	awk -v t0="$t0" -v t1="$t1" '$1 < t0 || $1 > t1 { bad++ } END { exit bad > 0 || NR == 0 }'; then
	echo "compare-mprof: hot.mlpd: times outside CLOCK_MONOTONIC [$t0, $t1]" >&2
	fail=1
fi
for f in hot.mlpd hot.mlpd.gz all.mlpd; do
	expected "$tmp/$f" | sort >"$tmp/want.$f"
	"$dumper" --dump "$tmp/$f" 2>"$tmp/err.$f" | sort >"$tmp/got.$f"
	if [ -s "$tmp/err.$f" ]; then
		echo "compare-mprof: $f: reader printed warnings:" >&2
		cat "$tmp/err.$f" >&2
		fail=1
	fi
	if ! diff -u "$tmp/want.$f" "$tmp/got.$f" >"$tmp/diff.$f"; then
		echo "compare-mprof: $f: precord and mprof-report differ:" >&2
		head -40 "$tmp/diff.$f" >&2
		fail=1
	fi
	for m in 'Hot:Alpha (' 'Hot:Beta (' 'Hot:Gamma (' 'Hot:Main (string[])'; do
		grep -qF " $m" "$tmp/got.$f" || { echo "compare-mprof: $f: $m missing" >&2; fail=1; }
	done
	echo "compare-mprof: $f: $(wc -l <"$tmp/want.$f") regions in mprof-report, $(wc -l <"$tmp/got.$f") read by precord" >&2
done
exit $fail
