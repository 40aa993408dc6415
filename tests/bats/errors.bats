#!/usr/bin/env bats
# Bad input: one clear line, a non-zero exit, and no unreadable output file.

load helpers

setup() { common_setup; require_recording; }
teardown() { common_teardown; }

one_line_error() {	# status and output of the last `run`
	[ "$status" -ne 0 ]
	[ "$(echo "$output" | grep -c .)" -eq 1 ]
	[[ "$output" == "precord: "* ]]
}

@test "no such PID" {
	run "$PRECORD" -p 999999 -o x.data -- sleep 1
	one_line_error
	[[ "$output" == *"cannot attach to PID 999999: no such process"* ]]
	[ ! -e x.data ]
}

@test "unknown option" {
	run "$PRECORD" --frobnicate -- true
	one_line_error
	[[ "$output" == *"unknown option"* ]]
}

@test "unknown event" {
	run "$PRECORD" -e nosuchevent -o x.data -- true
	one_line_error
	[[ "$output" == *"unknown event 'nosuchevent'"* ]]
	[ ! -e x.data ]
}

@test "hardware event without a PMU" {
	[ -e /sys/bus/event_source/devices/cpu ] && skip "this machine has a hardware PMU"
	run "$PRECORD" -e cycles -o x.data -- true
	one_line_error
	[[ "$output" == *"'cycles' is not supported"* ]]
	[ ! -e x.data ]
}

@test "unwritable output" {
	run "$PRECORD" -o /nonexistent/dir/x.data -- true
	one_line_error
	[[ "$output" == *"cannot create /nonexistent/dir/x.data"* ]]
}

@test "command that cannot run" {
	run "$PRECORD" -o x.data -- ./no-such-program
	one_line_error
	[[ "$output" == *"cannot run './no-such-program'"* ]]
	[ ! -e x.data ]
}

@test "not root" {
	need "setpriv" command -v setpriv
	chmod 755 "$T"
	run setpriv --reuid=65534 --regid=65534 --clear-groups "$PRECORD" -o "$T/x.data" -- true
	one_line_error
	[[ "$output" == *"must run as root"* ]]
	[ ! -e x.data ]
}

@test "nothing to record" {
	run "$PRECORD" -o x.data
	one_line_error
	[ ! -e x.data ]
}

@test "--help and --version" {
	run "$PRECORD" --help
	[ "$status" -eq 0 ]
	[[ "$output" == *"usage: precord"* ]]
	run "$PRECORD" --version
	[ "$status" -eq 0 ]
	[[ "$output" == "precord version "* ]]
}

@test "every long option of --help is in the man page and in README.md" {
	run "$PRECORD" --help
	[ "$status" -eq 0 ]
	opts=$(grep -oE -- '--[a-z][a-z-]+' <<<"$output" | sort -u)
	[ -n "$opts" ]
	man_text=$(sed 's/\\-/-/g' "$ROOT/man/precord.1")
	missing=
	for o in $opts; do
		grep -q -- "$o" <<<"$man_text" || missing="$missing man:$o"
		grep -q -- "$o" "$ROOT/README.md" || missing="$missing README:$o"
	done
	echo "missing:$missing" >&2
	[ -z "$missing" ]
}

@test "a target that exits during the recording ends it cleanly" {
	"$WL" hot3 0.6 & pid=$!
	run "$PRECORD" -p "$pid" -o x.data -- sleep 30
	[ "$status" -eq 0 ]
	lint x.data
}
