#!/usr/bin/env bash
# make bench: run every benchmark in scripts/bench/ (every *.sh but this
# one), in name order.  All of them run even when one fails; the exit
# status is non-zero if any failed.  Results land in build/bench/ and the
# figures are explained in docs/benchmarks.md.
set -u
export LC_ALL=C	# name order, whatever the locale
cd "$(dirname "$0")/../.."
self=$(basename "$0")
failed=()
n=0
shopt -s nullglob
for b in scripts/bench/*.sh; do
	[ "$(basename "$b")" = "$self" ] && continue
	n=$((n + 1))
	echo "== bench: $b"
	start=$SECONDS
	if bash "$b"; then
		echo "== bench: $b done in $((SECONDS - start)) s"
	else
		rc=$?
		echo "== bench: $b FAILED (exit $rc) after $((SECONDS - start)) s" >&2
		failed+=("$b")
	fi
	echo
done
if [ $n -eq 0 ]; then
	echo "no benchmarks in scripts/bench/" >&2
	exit 1
fi
if [ ${#failed[@]} -gt 0 ]; then
	echo "bench: ${#failed[@]} of $n failed: ${failed[*]}" >&2
	exit 1
fi
echo "bench: all $n passed; results in build/bench/"
