#!/bin/sh
# shellcheck disable=SC2016 # remote shells expand these
# A connection holder that is stopped (SIGSTOP: alive, never answering)
# does not hang its clients (issue 18, W7): in the middle of a command
# the client gets no frame (not even the holder's keepalive) for 10 s and
# fails that command (8, "connection holder lost", the command not run
# again); a command that finds a stopped holder gets no HELLO within 5 s
# and runs cold (0).  Either way the client ends the stuck holder, so the
# next command starts a new one instead of waiting again.
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"

# shellcheck source=tests/e2e/lib_fleet.sh
. "$(dirname "$0")/lib_fleet.sh"

# shellcheck source=tests/e2e/lib_warm.sh
. "$(dirname "$0")/lib_warm.sh"

emu_start
fleet_api_setup
fleet_create_node t091 v4-32 90

now_ms() {
	date +%s%3N
}

expect_rc 0 "$TPUCTL" ssh t091 --persist 60s --worker=all -- true
pid=$(holder_pid t091)
[ -n "$pid" ] || fail "no holder after a --persist command: $(cat "$T/list")"

# stopped in the middle of a command: that command fails, bounded
t0=$(now_ms)
"$TPUCTL" ssh t091 --persist 60s --worker=all -- 'sleep 2; echo late' \
    >"$T/kout" 2>"$T/kerr" &
bg=$!
sleep 1
kill -STOP "$pid"
pool_stopped=$pid
n=0
while kill -0 "$bg" 2>/dev/null; do
	n=$((n + 1))
	[ $n -lt 400 ] || {
		kill -CONT "$pid"
		fail "client still waits for the stopped holder after 40 s"
	}
	sleep 0.1
done
rc=0
wait "$bg" || rc=$?
ms=$(($(now_ms) - t0))
[ "$rc" -eq 8 ] || fail "holder stopped mid-command: exit $rc: $(cat "$T/kerr")"
assert_grep 'connection holder lost while running the command \(no answer for 10 s\)' "$T/kerr"
assert_grep "connection holder $pid did not answer: ended" "$T/kerr"
assert_no_grep 'late' "$T/kout"
[ "$ms" -ge 10000 ] || fail "failed after $ms ms, before the 10 s deadline"
wait_gone "$pid" "the stopped holder"
pool_stopped=

# the next command works, through a new holder
expect_rc 0 "$TPUCTL" ssh t091 --persist 60s --worker=all -- echo again
[ "$(grep -c '^\[w[0-3]\] again$' "$T/out")" -eq 4 ] ||
    fail "after the stop: $(cat "$T/out")"
pid2=$(holder_pid t091)
if [ -z "$pid2" ] || [ "$pid2" = "$pid" ]; then
	fail "no new holder: $(cat "$T/list")"
fi

# stopped between commands: the next one gets no HELLO and runs cold
kill -STOP "$pid2"
pool_stopped=$pid2
t0=$(now_ms)
expect_rc 0 "$TPUCTL" ssh t091 --persist 60s --worker=all -- echo cold
ms=$(($(now_ms) - t0))
[ "$(grep -c '^\[w[0-3]\] cold$' "$T/out")" -eq 4 ] ||
    fail "with a stopped holder: $(cat "$T/out")"
assert_grep "connection holder $pid2 did not answer: ended" "$T/err"
[ "$ms" -lt 30000 ] || fail "took $ms ms with a stopped holder"
wait_gone "$pid2" "the stopped holder"
pool_stopped=
expect_rc 0 "$TPUCTL" ssh t091 --persist 60s --worker=all -- true
pid3=$(holder_pid t091)
if [ -z "$pid3" ] || [ "$pid3" = "$pid2" ]; then
	fail "no new holder after the cold run: $(cat "$T/list")"
fi
