#!/bin/sh
# shellcheck disable=SC2016,SC2086 # remote shells expand these; $S is two words
# Issue 20 "Standard input" with issue 19's cleanup: while stdin is being
# forwarded (its EOF not sent yet, so the watcher cannot use the
# channel's stdin), SIGINT of tpuctl exits 130 and a client killed with
# -9 drops its connections: in both cases the remote command's process
# group is stopped and nothing of it keeps running; with --stdin on
# several workers too.  A normal end after EOF leaves the background
# alone.
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"
# shellcheck source=tests/e2e/lib_sig.sh
. "$(dirname "$0")/lib_sig.sh"
sig_pod_key
S="--ssh-key-file $KEY"

MARK="t414-$$"
SIG_ENV="T414_MARK=$MARK"
# the remote command reads a line of stdin, then sleeps; stdin stays
# open (a FIFO held by this shell) so that EOF is never sent
JOB="export T414_MARK=$MARK; read -r x; sleep 7.77"
mkfifo "$T/fifo"
exec 7<>"$T/fifo"

# SIGINT: 130, nothing left (one worker: stdin forwarded by default)
"$TPUCTL" ssh pod $S --worker 1 --command "$JOB" <"$T/fifo" >"$T/out" 2>"$T/err" &
pid=$!
echo line >&7
sig_wait_running "SIGINT" 1
kill -INT $pid
rc=0
wait $pid || rc=$?
[ $rc -eq 130 ] || fail "SIGINT: exit $rc: $(cat "$T/err")"
sig_none_left "SIGINT" 4

# --stdin on four workers, then the client killed with -9
"$TPUCTL" ssh pod $S --worker all --stdin --command "$JOB" <"$T/fifo" >"$T/out" 2>"$T/err" &
pid=$!
printf 'line\nline\nline\nline\n' >&7
sig_wait_running "kill -9" 4
kill -9 $pid
wait $pid 2>/dev/null || true
sig_none_left "kill -9" 4
exec 7>&-

# a normal end with stdin forwarded: the background process stays
printf 'go\n' >"$T/go"
expect_rc 0 "$TPUCTL" ssh pod $S --worker 2 \
    --command "read -r x; export T414_MARK=$MARK; sleep 7.77 >/dev/null 2>&1 & echo \$x" <"$T/go"
assert_grep '^\[w2\] go$' "$T/out"
sleep 2
[ "$(sig_sleeps | wc -l)" -eq 1 ] || fail "a normal end killed its background process"
kill "$(sig_sleeps)"
sig_none_left "cleanup" 3
