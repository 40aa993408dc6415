#!/usr/bin/env bash
# make fuzz: build the libFuzzer harnesses in tests/fuzz/ with clang,
# ASan and UBSan, and run each for FUZZ_SECONDS (default 60) starting from
# its seed corpus in tests/fuzz/corpus/NAME.  New interesting inputs go to
# build-fuzz/corpus/NAME (copy the good ones into the seed corpus by hand);
# crashes are left in build-fuzz/ as crash-* files and fail the run.
# FUZZ_ONLY=NAME (e.g. xray) runs that harness alone.
set -euo pipefail
cd "$(dirname "$0")/.."
secs=${FUZZ_SECONDS:-60}
san="-fsanitize=address,undefined -fno-sanitize-recover=all"
make --no-print-directory BUILD=build-fuzz CC=clang \
	CFLAGS="-O1 -g -fno-omit-frame-pointer -fsanitize=fuzzer-no-link $san" \
	build-fuzz/libprecord.a
libs=$(pkg-config --libs libbpf libelf zlib)
status=0
for src in tests/fuzz/fuzz_${FUZZ_ONLY:-*}.c; do
	name=$(basename "$src" .c); name=${name#fuzz_}
	bin=build-fuzz/fuzz_$name
	clang -O1 -g -std=gnu11 -D_GNU_SOURCE -Iinclude -Iuser -Ibuild-fuzz \
		-fsanitize=fuzzer $san "$src" build-fuzz/libprecord.a $libs -lpthread -o "$bin"
	mkdir -p "build-fuzz/corpus/$name"
	echo "== fuzzing $name for ${secs}s"
	if ! (cd build-fuzz && "./fuzz_$name" -max_total_time="$secs" -print_final_stats=1 \
		"corpus/$name" "../tests/fuzz/corpus/$name" 2>&1 | tail -15); then
		status=1
	fi
done
ls build-fuzz/crash-* 2>/dev/null && status=1
exit $status
