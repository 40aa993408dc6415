#!/usr/bin/env bats
# The build-id cache and the JIT image folder of a precord running as root
# (scripts/precord.service) on targets run by nobody, who controls the
# files it maps (issue 18, findings 2 and 3): nobody and other users read
# nothing from them that they could not read from the originals, and what
# precord writes there is bounded.

load helpers

HE=$ROOT/build/workloads/hostile_elf
AS_NOBODY=(setpriv --reuid=nobody --regid=nogroup --clear-groups)
# another unprivileged user, with no entry in passwd: the one who snoops
AS_OTHER=(setpriv --reuid=65000 --regid=65000 --clear-groups)

setup() {
	common_setup
	require_recording
	need "setpriv" command -v setpriv
	chmod 711 "$T"
	mkdir "$T/n" && chown nobody:nogroup "$T/n"
}
teardown() { common_teardown; }

# leaks USER DIR...: every file under DIR that USER can read although
# USER cannot read its original (a cache entry <cache>/<path>/<hex>/elf
# stands for /<path>; every process has the vdso; kallsyms and JIT images
# have no original USER reads).
leaks() {
	local who=$1; shift
	local -a as
	if [ "$who" = nobody ]; then as=("${AS_NOBODY[@]}"); else as=("${AS_OTHER[@]}"); fi
	"${as[@]}" find "$@" -type f -readable 2>/dev/null | while read -r f; do
		orig=
		case $f in
		"$HOME/.debug/"*/elf)
			orig=${f#"$HOME/.debug"}; orig=${orig%/*/elf} ;;
		"$HOME/.debug/[vdso]/"*/vdso)
			orig=/proc/self/maps ;;
		esac
		if [ -z "$orig" ] || ! "${as[@]}" test -r "$orig"; then
			echo "$f"
		fi
	done
}

@test "a binary from a 0700 folder and kallsyms: nobody else reads them from the cache" {
	# nobody's own program in nobody's 0700 folder: no other user reads it
	"${AS_NOBODY[@]}" mkdir -m 700 "$T/n/priv"
	"${AS_NOBODY[@]}" cp "$WL" "$T/n/priv/wl"
	! "${AS_OTHER[@]}" test -r "$T/n/priv/wl"
	# it burns 50 ms in itself, its child 1.5 s in read(2): user and kernel samples
	run "$PRECORD" -F 999 -o x.data -- "${AS_NOBODY[@]}" "$T/n/priv/wl" forkexec "$T/n/priv/wl" kernel 1.5
	echo "$output" >&2
	[ "$status" -eq 0 ]
	# what was cached: the private binary, kallsyms
	copy=$(echo "$HOME/.debug$T/n/priv/wl"/*/elf)
	cmp "$copy" "$T/n/priv/wl"
	ksyms=$(echo "$HOME"/.debug/\[kernel.kallsyms\]/*/kallsyms)
	[ -f "$ksyms" ]
	grep -q ' T _text$' "$ksyms"
	# perf itself, as root, reads them
	run perf report -i x.data --stdio --no-children --sort dso,sym -q
	[[ "$output" == *"[k] "* ]] && [[ "$output" == *"hot_c"* ]]
	# the modes: folders 0700, copies no wider than their originals
	# (owner only behind nobody's 0700 folder), kallsyms root's only
	[ "$(stat -c %a "$HOME/.debug")" = 700 ]
	[ -z "$(find "$HOME/.debug" -type d ! -perm 700)" ]
	[ "$(stat -c %a "$copy")" = 700 ]
	[ "$(stat -c %a "$ksyms")" = 600 ]
	# and as the users: nothing readable that the original did not give
	! "${AS_NOBODY[@]}" cat "$ksyms" >/dev/null 2>&1
	! "${AS_OTHER[@]}" cat "$copy" >/dev/null 2>&1
	[ -z "$(leaks nobody "$HOME/.debug")" ]
	[ -z "$(leaks other "$HOME/.debug")" ]
	lint x.data
}

@test "JIT images: FILE.jit 0700, images 0600, their cache copies root's" {
	"${AS_NOBODY[@]}" "$WL" hot3 4 & target=$!
	printf '7f0000001000 100 jitted_fn\n' > "$T/perf-$target.map"
	run "$PRECORD" -o x.data --perf-map "$T/perf-$target.map" -p "$target" -- sleep 1
	echo "$output" >&2
	kill "$target" 2>/dev/null || true; wait "$target" || true
	[ "$status" -eq 0 ]
	[ -f x.data.jit/jit-0.so ]
	jcopy=$(echo "$HOME/.debug$T/x.data.jit/jit-0.so"/*/elf)
	cmp "$jcopy" x.data.jit/jit-0.so
	[ "$(stat -c %a x.data.jit)" = 700 ]
	[ "$(stat -c %a x.data.jit/jit-0.so)" = 600 ]
	[ "$(stat -c %a "$jcopy")" = 600 ]
	! "${AS_NOBODY[@]}" cat x.data.jit/jit-0.so >/dev/null 2>&1
	! "${AS_NOBODY[@]}" ls x.data.jit >/dev/null 2>&1
	[ -z "$(leaks nobody "$HOME/.debug" "$T/x.data.jit")" ]
	[ -z "$(leaks other "$HOME/.debug" "$T/x.data.jit")" ]
}

@test "a cache left 0755 by an older precord: its kallsyms copy narrowed to root's" {
	"${AS_NOBODY[@]}" "$WL" kernel 1 & target=$!
	run "$PRECORD" -F 999 -o x.data -p "$target"
	wait "$target" || true
	[ "$status" -eq 0 ]
	ksyms=$(echo "$HOME"/.debug/\[kernel.kallsyms\]/*/kallsyms)
	[ -f "$ksyms" ]
	# what precord before issue 18 left: everything 0755
	find "$HOME/.debug" -type d -exec chmod 755 {} +
	chmod 755 "$ksyms"
	"${AS_NOBODY[@]}" "$WL" kernel 1 & target=$!
	run "$PRECORD" -F 999 -o y.data -p "$target"
	echo "$output" >&2
	wait "$target" || true
	[ "$status" -eq 0 ]
	[ "$(stat -c %a "$ksyms")" = 600 ]
	! "${AS_NOBODY[@]}" cat "$ksyms" >/dev/null 2>&1
	leaks nobody "$HOME/.debug" >&2
	[ -z "$(leaks nobody "$HOME/.debug")" ]
}

@test "a sparse ELF (12 KB of data in 1 GiB): its cache copy keeps the holes" {
	need "hostile_elf built" test -x "$HE"
	"${AS_NOBODY[@]}" cp "$WL" "$T/n/sparse"
	"${AS_NOBODY[@]}" truncate -s 1G "$T/n/sparse"
	[ "$(du -k "$T/n/sparse" | cut -f1)" -lt 1024 ]	# holes on this file system
	start=$(date +%s%N)
	run "$PRECORD" -F 999 -o x.data -- "${AS_NOBODY[@]}" "$T/n/sparse" hot3 0.5
	echo "$output" >&2
	[ "$status" -eq 0 ]
	copy=$(echo "$HOME/.debug$T/n/sparse"/*/elf)
	[ -f "$copy" ]
	cmp "$copy" "$T/n/sparse"			# the same bytes to a reader
	du -k "$copy" >&2
	[ "$(du -k "$copy" | cut -f1)" -lt 1024 ]	# was 1 GiB on disk
	[ "$(du -sk "$HOME/.debug" | cut -f1)" -lt 65536 ]
	lint x.data
}

@test "--buildid-cache-max bounds what a run writes into the cache; the samples are kept" {
	run "$PRECORD" -F 999 --buildid-cache-max 64K -o x.data -- "${AS_NOBODY[@]}" "$WL" forkexec "$WL" kernel 1
	echo "$output" >&2
	[ "$status" -eq 0 ]
	# libc and kallsyms are over 64K each: not cached, said once per kind
	n=$(grep -c 'build-id cache: .*not cached' <<<"$output")
	[ "$n" -ge 1 ] && [ "$n" -le 2 ]
	[[ "$output" == *"the limit per file"* ]]
	bytes=$(find "$HOME/.debug" -type f -printf '%s\n' | awk '{ s += $1 } END { print s + 0 }')
	echo "cached $bytes bytes" >&2
	[ "$bytes" -le 65536 ]
	[ -z "$(find "$HOME/.debug" -path '*kallsyms*' -type f)" ]
	[ -n "$(find "$HOME/.debug" -path "*$WL/*/elf")" ]	# the 38 KB workload fits
	# the samples of the binaries not cached are recorded all the same
	run perf report -i x.data --stdio --no-children --sort dso -q
	echo "$output" >&2
	[[ "$output" == *"libc.so"* ]] || [[ "$output" == *"[kernel.kallsyms]"* ]]
	lint x.data
	# a limit is a size
	run "$PRECORD" --buildid-cache-max 0 -o y.data -- true
	[ "$status" -ne 0 ]
	[[ "$output" == *"bad --buildid-cache-max '0'"* ]]
}

@test "the systemd unit's own arguments: nothing it writes is readable by another user" {
	unit=$ROOT/scripts/precord.service
	line=$(sed -n 's/^ExecStart=//p' "$unit")
	um=$(sed -n 's/^UMask=//p' "$unit")
	dmode=$(sed -n 's/^StateDirectoryMode=//p' "$unit")
	[ -n "$line" ] && [ -n "$um" ] && [ -n "$dmode" ]
	# what systemd does: the state folder in its mode, the unit's umask
	state=$T/state
	mkdir -m "$dmode" "$state"
	read -ra argv <<<"$line"
	args=()
	for a in "${argv[@]:1}"; do	# the binary is the one under test
		a=${a//\/var\/lib\/precord/$state}
		case $a in --switch-output=*) a=--switch-output=1s ;; esac
		args+=("$a")
	done
	echo "unit arguments: ${args[*]}" >&2
	need "node" command -v node
	# nobody's processes: a native one from its own 0700 folder, one in the
	# kernel, node with its jitdump (JIT images)
	"${AS_NOBODY[@]}" mkdir -m 700 "$T/n/priv"
	"${AS_NOBODY[@]}" cp "$WL" "$T/n/priv/wl"
	"${AS_NOBODY[@]}" "$T/n/priv/wl" hot3 30 & t1=$!
	"${AS_NOBODY[@]}" "$WL" kernel 30 & t2=$!
	(cd "$T/n" && exec "${AS_NOBODY[@]}" node --perf-prof "$ROOT/tests/workloads/js/hot.js" 30 >/dev/null) & t3=$!
	sleep 1		# its JIT code compiled before precord starts
	(cd "$state" && umask "$um" && exec "$PRECORD" "${args[@]}") > "$T/rec.out" 2>&1 & rec=$!
	# two files finished (each one's path goes to stdout), or 30 s
	for _ in $(seq 300); do
		[ "$(grep -c '^/.*perf\.data\.' "$T/rec.out")" -ge 2 ] && break
		sleep 0.1
	done
	kill -TERM "$rec"
	wait "$rec"; rc=$?
	kill "$t1" "$t2" "$t3" 2>/dev/null || true
	wait "$t1" "$t2" "$t3" 2>/dev/null || true
	cat "$T/rec.out" >&2
	[ "$rc" -eq 0 ]
	# it wrote files, a cache and the private binary's copy
	[ "$(find "$state" -maxdepth 1 -name 'perf.data.*' -type f | wc -l)" -ge 2 ]
	[ -n "$(find "$state/.debug" -path "*$T/n/priv/wl/*/elf")" ]
	[ -n "$(find "$state" -path '*.jit/*.so' -type f)" ]
	# every file and folder under the state folder (not the .build-id links,
	# whose mode means nothing): no bit for group or others
	find "$state" ! -type l -perm /077 -exec stat -c "%a %n" {} + >&2 || true
	[ -z "$(find "$state" ! -type l -perm /077)" ]
	# and as the users themselves: nothing to read, nothing to list
	[ -z "$("${AS_NOBODY[@]}" find "$state" -readable 2>/dev/null)" ]
	[ -z "$("${AS_OTHER[@]}" find "$state" -readable 2>/dev/null)" ]
	! "${AS_NOBODY[@]}" ls "$state" >/dev/null 2>&1
}
