#!/bin/sh
# Issue 17: every command checks its operand count in one place
# (cmd_want_operands / cmd_check_operands): too few is "missing operand",
# too many "unexpected operand 'X'" naming the first one too many, then
# the command's usage line; exit 2, nothing on stdout, no request sent.
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"
emu_start

# operands WANT-MESSAGE USAGE-PREFIX ARGS...
operands() {
	msg=$1
	usage=$2
	shift 2
	expect_rc 2 "$TPUCTL" "$@"
	[ "$(sed -n 1p "$T/err")" = "tpuctl: $msg" ] ||
	    fail "'$*': first line '$(sed -n 1p "$T/err")', want 'tpuctl: $msg'"
	sed -n 2p "$T/err" | grep -q "^usage: tpuctl $usage" ||
	    fail "'$*': no usage line for '$usage': $(cat "$T/err")"
	[ ! -s "$T/out" ] || fail "'$*': stdout not empty"
}

for c in cancel logs submit; do
	operands 'missing operand' "$c " "$c"
	operands "unexpected operand 'b'" "$c " "$c" a b
done
operands "unexpected operand 'b'" 'jobs ' jobs a b
operands 'missing operand' 'ssh ' ssh
operands 'missing operand' 'run ' run
operands 'missing operand' 'scp ' scp n1:/tmp
operands 'missing operand' 'data cp ' data cp gs://b/x
operands 'missing operand' 'data mv ' data mv gs://b/x
operands 'missing operand' 'describe ' describe
operands "unexpected operand 'b'" 'describe ' describe a b
[ "$(emu_requests | wc -l)" -eq 0 ] ||
    fail "requests were sent: $(emu_requests | jq -c '[.method, .path]')"
