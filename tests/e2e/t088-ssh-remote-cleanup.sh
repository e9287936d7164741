#!/bin/sh
# shellcheck disable=SC2016 # remote shells expand these
# Issue 19 "Remote processes outlive the command": when tpuctl stops a
# remote command (--timeout, SIGINT, SIGTERM, --fail-fast, a client
# killed with -9), the command's process group on every worker gets
# SIGTERM, then SIGKILL after 5 s, and nothing of it keeps running
# (`sleep 7.77` on no worker).  A normal end leaves what the command put
# in the background alone, and a `wait` in the command does not wait for
# tpuctl's watcher.  Exit statuses are unchanged (t070, t078).
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"
# shellcheck source=tests/e2e/lib_sig.sh
. "$(dirname "$0")/lib_sig.sh"
sig_pod_key

# Every worker runs on this host: the remote processes are found through
# a variable only this test sets (other tests may sleep 7.77 too).
MARK="t088-$$"
SIG_ENV="T088_MARK=$MARK"
SLEEP="export T088_MARK=$MARK; sleep 7.77"

# --timeout
expect_rc 8 "$TPUCTL" ssh pod --worker all --ssh-key-file "$KEY" \
    --timeout 1s --command "$SLEEP"
assert_grep '^worker 3: .*tim' "$T/err"
sig_none_left "--timeout" 3

# SIGINT and SIGTERM of tpuctl
for sig in INT TERM; do
	"$TPUCTL" ssh pod --worker all --ssh-key-file "$KEY" \
	    --command "$SLEEP" >"$T/out" 2>"$T/err" &
	pid=$!
	sig_wait_running "SIG$sig" 4
	sig_stop $sig $pid "$T/err"
	sig_none_left "SIG$sig" 3
done

# --fail-fast: worker 1 fails at once, the others are stopped
start=$(date +%s)
expect_rc 8 "$TPUCTL" ssh pod --worker all --ssh-key-file "$KEY" --fail-fast \
    --command "w=\$(curl -s -H 'Metadata-Flavor: Google' \"http://\$GCE_METADATA_HOST/computeMetadata/v1/instance/attributes/agent-worker-number\"); if [ \"\$w\" = 1 ]; then sleep 1; exit 1; fi; $SLEEP"
[ $(($(date +%s) - start)) -lt 6 ] || fail "--fail-fast waited"
assert_grep '^worker 1: exit 1' "$T/err"
sig_none_left "--fail-fast" 3

# the client killed with -9: the connections drop, the commands go
"$TPUCTL" ssh pod --worker all --ssh-key-file "$KEY" --command "$SLEEP" \
    >"$T/out" 2>"$T/err" &
pid=$!
sig_wait_running "kill -9" 4
kill -9 $pid
wait $pid 2>/dev/null || true
sig_none_left "kill -9" 3

# a command that ignores SIGTERM gets SIGKILL after the 5 s grace
start=$(date +%s)
expect_rc 8 "$TPUCTL" ssh pod --worker 0,1 --ssh-key-file "$KEY" \
    --timeout 1s --command "trap '' TERM; export T088_MARK=$MARK; sleep 30"
sleep 2
[ -n "$(sig_sleeps)" ] || fail "SIGKILL came before the grace period"
sig_none_left "SIGTERM ignored" 6
[ $(($(date +%s) - start)) -lt 15 ] || fail "SIGKILL too late"

# a normal end: the background process the command started stays
expect_rc 0 "$TPUCTL" ssh pod --worker 2 --ssh-key-file "$KEY" \
    --command "export T088_MARK=$MARK; sleep 7.77 >/dev/null 2>&1 & echo started"
assert_grep '^\[w2\] started$' "$T/out"
sleep 1
[ "$(sig_sleeps | wc -l)" -eq 1 ] || fail "a normal end killed its background process"
kill "$(sig_sleeps)"
sig_none_left "cleanup" 3

# `wait` in the command does not wait for the watcher; exit codes pass
start=$(date +%s)
expect_rc 0 "$TPUCTL" ssh pod --worker all --ssh-key-file "$KEY" \
    --command 'sleep 0.2 & wait; echo waited'
[ "$(grep -c '^\[w[0-3]\] waited$' "$T/out")" -eq 4 ] || fail "wait: $(cat "$T/out")"
[ $(($(date +%s) - start)) -lt 5 ] || fail "wait waited for the watcher"
expect_rc 3 "$TPUCTL" ssh pod --worker 1 --ssh-key-file "$KEY" -- 'exit 3'
expect_rc 137 "$TPUCTL" ssh pod --worker 1 --ssh-key-file "$KEY" -- 'kill -KILL $$'
assert_grep 'killed by signal KILL' "$T/err"
# the command's stdin is still the channel's, fd 3 is not left open:
# the command's shell has 0, 1 and 2 only.  Listed by a simple command
# that is not the last (a pipeline's first stage sees the pipes the shell
# holds while it starts the next stages: 3, 4, 5 at times; and bash execs
# a last simple command, which would list the ls's own directory fd)
expect_rc 0 "$TPUCTL" ssh pod --worker 0 --ssh-key-file "$KEY" --output raw \
    -- 'ls /proc/$$/fd; :'
[ "$(sort -n "$T/out" | tr '\n' ' ')" = "0 1 2 " ] ||
    fail "fds of the command: $(tr '\n' ' ' <"$T/out")"
