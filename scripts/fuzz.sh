#!/usr/bin/env bash
# make fuzz: build the libFuzzer harnesses in tests/fuzz/ with clang,
# ASan and UBSan, and run each for FUZZ_SECONDS (default 60) starting from
# its seed corpus in tests/fuzz/corpus/NAME.  New interesting inputs go to
# build-fuzz/corpus/NAME (copy the good ones into the seed corpus by hand);
# crashes are left in build-fuzz/ as crash-* files and fail the run.
# FUZZ_ONLY=NAME (e.g. xray, jitdump_parse) runs that harness alone;
# FUZZ_RUNS=N stops each harness after N executions instead of a time.
# Each harness ends with one line: executions, seconds, executions/s.
# tests/fuzz/fuzz_NAME.options (OSS-Fuzz's form: "[libfuzzer]", then
# "key = value" lines) gives the harness's own libFuzzer flags, e.g. a
# max_len that covers what the harness reads.
set -euo pipefail
cd "$(dirname "$0")/.."
secs=${FUZZ_SECONDS:-60}
san="-fsanitize=address,undefined -fno-sanitize-recover=all"
# the generic containers out of libFuzzer's coverage (see the file)
ignore="-fsanitize-coverage-ignorelist=$PWD/tests/fuzz/coverage-ignore.txt"
make --no-print-directory BUILD=build-fuzz CC=clang \
	CFLAGS="-O1 -g -fno-omit-frame-pointer -fsanitize=fuzzer-no-link $san $ignore" \
	build-fuzz/libprecord.a
libs=$(pkg-config --libs libbpf libelf libdw zlib libprotobuf-c libcurl libdebuginfod)
status=0
summary=()
if [[ -n ${FUZZ_RUNS:-} ]]; then limit=(-runs="$FUZZ_RUNS"); else limit=(-max_total_time="$secs"); fi
for src in tests/fuzz/fuzz_${FUZZ_ONLY:-*}.c; do
	name=$(basename "$src" .c); name=${name#fuzz_}
	bin=build-fuzz/fuzz_$name
	clang -O1 -g -std=gnu11 -D_GNU_SOURCE -Iinclude -Iuser -Ibuild-fuzz \
		-fsanitize=fuzzer $san "$src" build-fuzz/libprecord.a $libs -lpthread -o "$bin"
	mkdir -p "build-fuzz/corpus/$name"
	own=()
	if [[ -f tests/fuzz/fuzz_$name.options ]]; then
		mapfile -t own < <(awk -F' *= *' '/^\[/ { on = ($0 == "[libfuzzer]"); next }
			on && NF == 2 && $1 ~ /^[a-z_]+$/ { printf "-%s=%s\n", $1, $2 }' \
			"tests/fuzz/fuzz_$name.options")
	fi
	echo "== fuzzing $name (${limit[*]}${own[*]:+ ${own[*]}})"
	log=build-fuzz/fuzz_$name.log
	t0=$(date +%s.%N)
	if ! (cd build-fuzz && "./fuzz_$name" "${limit[@]}" "${own[@]}" -print_final_stats=1 \
		"corpus/$name" "../tests/fuzz/corpus/$name" >"../$log" 2>&1); then
		status=1
		tail -30 "$log"
	fi
	t1=$(date +%s.%N)
	runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
	line=$(awk -v n="${runs:-0}" -v a="$t0" -v b="$t1" -v h="$name" \
		'BEGIN { t = b - a; printf "%-16s %12d executions in %8.1f s: %9.0f exec/s", h, n, t, (t > 0 ? n / t : 0) }')
	echo "$line"
	summary+=("$line")
done
echo "== executions per second"
printf '%s\n' "${summary[@]}"
ls build-fuzz/crash-* 2>/dev/null && status=1
exit $status
