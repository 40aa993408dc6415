#!/usr/bin/env bats
# Hostile targets (tests/workloads/hostile_elf.c) running as nobody while
# precord runs as root: the files precord opens for build-ids, the build-id
# cache and the JIT image folder (issue 8, section 4: findings 1, 5, 9, 10, 12).

load helpers

HE=$ROOT/build/workloads/hostile_elf
LIBHOT=$ROOT/build/workloads/libhot.so
AS_NOBODY=(setpriv --reuid=nobody --regid=nogroup --clear-groups)

setup() {
	common_setup
	require_recording
	need "hostile_elf built" test -x "$HE"
	need "libhot.so built" test -r "$LIBHOT"
	need "setpriv" command -v setpriv
	need "readelf" command -v readelf
	chmod 711 "$T"
	mkdir "$T/n" && chown nobody:nogroup "$T/n"
	cp "$LIBHOT" "$T/lib.so" && chmod 644 "$T/lib.so"
}
teardown() { common_teardown; }

build_id() {
	readelf -n "$1" | sed -n 's/.*Build ID: //p'
}

@test "a mapped file swapped for a symlink, a FIFO or another ELF: only the mapped file is read" {
	cp /bin/true "$T/secret" && chmod 600 "$T/secret"	# root's, unreadable to nobody
	secret=$(build_id "$T/secret"); other=$(build_id /bin/ls)
	[ -n "$secret" ] && [ -n "$other" ] && [ "$secret" != "$other" ]
	run "$PRECORD" -F 999 -o x.data -- "${AS_NOBODY[@]}" "$HE" swap "$T/lib.so" "$T/secret" /bin/ls "$T/n" 3
	echo "$output" >&2
	[ "$status" -eq 0 ]
	# the swapped libraries had samples, so precord wanted their files
	hits=$(perf report -i x.data --stdio --no-children -g none --sort dso -q 2>/dev/null | grep -c 'h-[0-9]*\.so')
	[ "$hits" -ge 3 ]
	rounds=$(sed -n 's/^fifo-opened [0-9]* rounds \([0-9]*\)$/\1/p' <<<"$output")
	[ "$rounds" -ge 6 ]
	[[ "$output" == *"fifo-opened 0 rounds"* ]]	# no FIFO opened by root
	run perf buildid-list -i x.data
	echo "$output" >&2
	[[ "$output" != *"$secret"* ]]			# the link was not followed
	[ -z "$(grep -E "^$other .*/h-[0-9]+\.so$" <<<"$output")" ]	# not another file's id
	# nothing of the secret in the cache, and no cached file wider than its source
	[ -z "$(find "$HOME/.debug" -path "*$secret*" 2>/dev/null)" ]
	rm -f "$T"/n/h-*.so	# perf itself would block on the planted FIFOs
	lint x.data
}

@test "an ELF claiming 4M sections (extended count, sparse) costs no memory or time" {
	run /usr/bin/time -f "maxrss-kb %M" "$PRECORD" -o x.data -- "${AS_NOBODY[@]}" "$HE" bigelf "$T/n" 2
	echo "$output" >&2
	[ "$status" -eq 0 ]
	[[ "$output" == *"big.so: more than 32768 sections or 4096 segments: its build-id is not read"* ]]
	rss=$(sed -n 's/^maxrss-kb //p' <<<"$output")
	[ "$rss" -lt 300000 ]				# was 1.1 GB
	lint x.data
}

@test "a library whose .eh_frame and .symtab claim 1.5 GiB in holes: refused, bounded memory and time" {
	# 4 KB of libhot.so on disk, a 1.5 GiB file: libelf read the sections
	# whole (the recorder peaked at 1.67 GB, export at 1.58 GB and 6 s)
	run timeout 120 /usr/bin/time -f "maxrss-kb %M elapsed %e" "$PRECORD" -a \
		--call-graph ehframe -F 499 -o x.data -- "${AS_NOBODY[@]}" "$HE" sparse "$T/lib.so" "$T/n" 3
	echo "$output" >&2
	[ "$status" -eq 0 ]
	[[ "$output" == *"sparse-mapped $T/n/sparse.so"* ]]
	[ "$(grep -c "sparse.so: no unwind table for --call-graph ehframe: .eh_frame: a section of 1536 MiB (the limit: 64 MiB)" <<<"$output")" -eq 1 ]
	rss=$(sed -n 's/^maxrss-kb \([0-9]*\) .*/\1/p' <<<"$output")
	secs=$(sed -n 's/^maxrss-kb .* elapsed \([0-9]*\).*/\1/p' <<<"$output")
	[ "$rss" -lt 300000 ]				# was 1.67 GB
	[ "$secs" -lt 30 ]				# a 3 s workload
	# the library had samples, so export wants its symbols
	perf report -i x.data --stdio --no-children -g none --sort dso -q 2>/dev/null | grep -q 'sparse\.so'
	run timeout 120 /usr/bin/time -f "maxrss-kb %M elapsed %e" "$PRECORD" export --pprof \
		-i x.data -o x.pb.gz
	echo "$output" >&2
	[ "$status" -eq 0 ]
	[ "$(grep -c "sparse.so: symbols not read: a section of 1536 MiB (the limit: 256 MiB)" <<<"$output")" -eq 1 ]
	rss=$(sed -n 's/^maxrss-kb \([0-9]*\) .*/\1/p' <<<"$output")
	secs=$(sed -n 's/^maxrss-kb .* elapsed \([0-9]*\).*/\1/p' <<<"$output")
	[ "$rss" -lt 300000 ]				# was 1.58 GB
	[ "$secs" -lt 5 ]				# was 6 s
	[ -s x.pb.gz ]
}

count_many() {	# count_many FILE: BUILD_ID entries of the m-N.so copies
	perf buildid-list -i "$1" 2>/dev/null | grep -cE "/m-[0-9]+\.so$"
}

@test "1100 mapped files with a soft descriptor limit of 1024: every build-id read" {
	need "hard RLIMIT_NOFILE above 2048" test "$(ulimit -Hn)" = unlimited -o "$(ulimit -Hn)" -gt 2048
	run bash -c 'ulimit -Sn 1024 && exec "$@"' _ "$PRECORD" -o x.data -- \
		"${AS_NOBODY[@]}" "$HE" many "$T/lib.so" "$T/n" 1100 2
	echo "$output" >&2
	[ "$status" -eq 0 ]
	[ "$(count_many x.data)" -eq 1100 ]
	lint x.data
}

@test "1100 mapped files with a hard descriptor limit of 1024: every build-id read" {
	run bash -c 'ulimit -n 1024 && exec "$@"' _ "$PRECORD" -o x.data -- \
		"${AS_NOBODY[@]}" "$HE" many "$T/lib.so" "$T/n" 1100 2
	echo "$output" >&2
	[ "$status" -eq 0 ]
	[ "$(count_many x.data)" -eq 1100 ]
}

@test "the JIT image folder swapped for a folder of FIFOs: precord neither blocks nor caches them" {
	mkdir "$T/out" && chmod 777 "$T/out"
	"${AS_NOBODY[@]}" "$HE" many "$T/lib.so" "$T/n" 1 6 & target=$!
	printf '7f0000001000 100 jitted_fn\n' > "$T/perf-$target.map"
	# the attacker: as soon as precord makes x.data.jit, move it away and
	# put a folder of FIFOs in its place
	"${AS_NOBODY[@]}" bash -c 'd=$1/x.data.jit
		for i in $(seq 500); do [ -d "$d" ] && break; sleep 0.01; done
		mv "$d" "$1/moved" && mkdir "$d" && for i in 0 1 2 3; do mkfifo "$d/jit-$i.so"; done' \
		_ "$T/out" & attacker=$!
	run timeout 30 "$PRECORD" -o "$T/out/x.data" --perf-map "$T/perf-$target.map" -p "$target" -- sleep 2
	echo "$output" >&2
	wait "$attacker"
	kill "$target" 2>/dev/null || true; wait "$target" || true
	[ "$status" -eq 0 ]				# 124: blocked on a FIFO
	[ -p "$T/out/x.data.jit/jit-0.so" ] && [ -f "$T/out/moved/jit-0.so" ]
	id=$(build_id "$T/out/moved/jit-0.so")
	[ -n "$id" ]
	cached="$HOME/.debug$T/out/x.data.jit/jit-0.so/$id/elf"
	cmp "$cached" "$T/out/moved/jit-0.so"		# the image written, not a FIFO's bytes
}

@test "a build-id cache root that is another user's symlink is refused, the recording kept" {
	mkdir "$T/victim"
	ln -s "$T/victim" "$HOME/.debug" && chown -h nobody:nogroup "$HOME/.debug"
	run "$PRECORD" -o x.data -- "$HE" many "$T/lib.so" "$T/n" 1 1
	echo "$output" >&2
	[ "$status" -eq 0 ]
	[[ "$output" == *"build-id cache $HOME/.debug is a symlink owned by UID "*", not by root: nothing cached"* ]]
	[ -z "$(ls -A "$T/victim")" ]
	lint x.data
	# an ordinary cache: its place is said at -v
	rm "$HOME/.debug"
	run "$PRECORD" -v -o y.data -- "$HE" many "$T/lib.so" "$T/n" 1 1
	[ "$status" -eq 0 ]
	[[ "$output" == *"build-id cache: $HOME/.debug"* ]]
	[ -n "$(ls -A "$HOME/.debug")" ]
}
