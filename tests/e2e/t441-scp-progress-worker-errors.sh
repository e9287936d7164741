#!/bin/sh
# shellcheck disable=SC2016 # expanded by the shell script(1) runs
# Issue 20: scp shows progress on a terminal as scp(1) does: one line on
# stderr redrawn in place (bytes over every worker, rate; an upload's
# percentage and ETA), ended before the summary; nothing when stderr is
# not a terminal or with -q.  An error on a file's own open, create or
# read names the worker it happened on.
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"
emu_start

expect_rc 0 "$TPUCTL" create pod --accelerator-type v4-16
KEY="$T/id_ed25519"
ssh-keygen -q -t ed25519 -N '' -f "$KEY" >/dev/null
head -c 3000000 /dev/urandom >"$T/big"
esc=$(printf '\033')

# not a terminal: the summary only
expect_rc 0 "$TPUCTL" scp --worker all --ssh-key-file "$KEY" "$T/big" pod:big
assert_no_grep "$esc" "$T/err"
assert_grep '^Copied 2 files \(5\.7 MiB\) to 2 workers in ' "$T/err"

if have_tool script bsdutils "scp progress on a terminal"; then
	SCRIPT_CMD="$TPUCTL scp --worker all --ssh-key-file $KEY $T/big pod:big2" \
	    script -qec 'eval "$SCRIPT_CMD"' /dev/null >"$T/tty" 2>&1 ||
	    fail "scp on a terminal: $(cat "$T/tty")"
	grep -q "${esc}\[K" "$T/tty" || fail "no progress line: $(cat "$T/tty")"
	grep -q '100% 5\.7 MiB / 5\.7 MiB ' "$T/tty" || fail "upload did not reach 100%: $(cat "$T/tty")"
	grep -q 'Copied 2 files' "$T/tty" || fail "no summary on a terminal"
	# a download: bytes and rate (the total is not known in advance)
	SCRIPT_CMD="$TPUCTL scp --worker 1 --ssh-key-file $KEY pod:big2 $T/back" \
	    script -qec 'eval "$SCRIPT_CMD"' /dev/null >"$T/tty" 2>&1 ||
	    fail "download on a terminal: $(cat "$T/tty")"
	grep -q "${esc}\[K2\.9 MiB  " "$T/tty" || fail "no download progress: $(cat "$T/tty")"
	cmp -s "$T/big" "$T/back" || fail "download on a terminal"
	# -q: nothing at all
	SCRIPT_CMD="$TPUCTL -q scp --worker all --ssh-key-file $KEY $T/big pod:big3" \
	    script -qec 'eval "$SCRIPT_CMD"' /dev/null >"$T/tty" 2>&1 ||
	    fail "-q scp on a terminal: $(cat "$T/tty")"
	[ ! -s "$T/tty" ] || fail "-q printed: $(cat "$T/tty")"
fi

# a local file that cannot be created: the worker is named
: >"$T/file"
expect_rc 1 "$TPUCTL" scp --worker 1 --ssh-key-file "$KEY" pod:big "$T/file/x"
[ "$(wc -l <"$T/err")" -eq 1 ] || fail "not one line: $(cat "$T/err")"
assert_grep "^tpuctl: worker 1: cannot create '$T/file/x\.tpuctl-tmp': Not a directory$" "$T/err"
# several workers: the [wN] line names it once
# several workers: the [wN] line names it, once
expect_rc 8 "$TPUCTL" scp --worker all --ssh-key-file "$KEY" "$T/big" pod:/nonexistent-441/x
assert_grep "^\[w1\] error: sftp: cannot open '/nonexistent-441/x': no such file or directory$" "$T/err"
assert_no_grep "error: worker" "$T/err"
expect_rc 4 "$TPUCTL" scp --worker 1 --ssh-key-file "$KEY" "$T/big" pod:/nonexistent-441/x
assert_grep "^tpuctl: worker 1: sftp: cannot open '/nonexistent-441/x': no such file or directory$" "$T/err"
