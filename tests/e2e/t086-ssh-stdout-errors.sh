#!/bin/sh
# Issue 19 defect 10: `tpuctl ssh ... >/dev/full` exited 0.  A write error
# on standard output exits 1 with one line, as every other command, for
# one worker and several, in prefix, raw and jsonl modes, and stops the
# run (no summary); a log file of --output-dir that cannot be written is
# named; a closed pipe (| head -1) ends tpuctl quietly by SIGPIPE at once,
# even while the remote command would print forever.
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"
# shellcheck source=tests/e2e/lib_sig.sh
. "$(dirname "$0")/lib_sig.sh"
sig_pod_key

full() {
	rc=0
	"$TPUCTL" ssh pod --ssh-key-file "$KEY" "$@" >/dev/full 2>"$T/err" ||
	    rc=$?
	[ $rc -eq 1 ] || fail "ssh $* >/dev/full: exit $rc: $(cat "$T/err")"
	assert_grep '^tpuctl: write error on standard output: No space left on device$' "$T/err"
	[ "$(wc -l <"$T/err")" -eq 1 ] || fail "ssh $*: not one line: $(cat "$T/err")"
}
full --worker 0 -- echo hi
full --worker all -- echo hi
full --worker 2 --output raw -- echo hi
full --worker all --output raw -- echo hi
full --worker all --output jsonl -- echo hi
full --worker 1 --output jsonl -- echo hi
# jsonl's exit records are output too: a command that prints nothing
full --worker all --output jsonl -- true
# stopped at once, not after the remote command
start=$(date +%s)
full --worker all --command 'echo hi; sleep 30'
[ $(($(date +%s) - start)) -lt 10 ] || fail "/dev/full: the run went on"
# nothing on stdout: no error
expect_rc 0 "$TPUCTL" ssh pod --worker all --ssh-key-file "$KEY" -- true \
    >/dev/full

# the shell path (no command, stdin not a terminal): also exit 1
rc=0
echo 'echo hi' | "$TPUCTL" ssh pod --worker 0 --ssh-key-file "$KEY" \
    >/dev/full 2>"$T/err" || rc=$?
[ $rc -eq 1 ] || fail "shell >/dev/full: exit $rc: $(cat "$T/err")"
assert_grep 'No space left on device' "$T/err"

# a log file that cannot be written
mkdir "$T/logs"
ln -s /dev/full "$T/logs/w3.log"
expect_rc 1 "$TPUCTL" ssh pod --worker all --ssh-key-file "$KEY" \
    --output-dir "$T/logs" -- echo hi
assert_grep "^tpuctl: cannot write $T/logs/w3.log: No space left on device\$" "$T/err"

# a closed pipe: quiet death by SIGPIPE, quickly
start=$(date +%s)
{
	rc=0
	"$TPUCTL" ssh pod --worker all --ssh-key-file "$KEY" -- yes \
	    2>"$T/err" || rc=$?
	echo $rc >"$T/rc"
} | head -1 >"$T/first"
[ $(($(date +%s) - start)) -lt 10 ] || fail "| head -1: the run went on"
[ "$(cat "$T/rc")" -eq 141 ] || fail "| head -1: exit $(cat "$T/rc"): $(cat "$T/err")"
[ ! -s "$T/err" ] || fail "| head -1: stderr: $(cat "$T/err")"
assert_grep '^\[w[0-3]\] y$' "$T/first"
