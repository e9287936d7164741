#!/bin/sh
# The emulator's "ssh-cut" event: every SSH connection to one worker
# drops (the client sees it: ssh exits 255), the worker's listening sshd
# goes on accepting, a command started in its own session (setsid) from
# the dropped connection runs on, and another worker's connection is
# left alone.  Bad input: a worker out of range is refused.
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"
# shellcheck source=tests/e2e/lib_fleet.sh
. "$(dirname "$0")/lib_fleet.sh"

emu_start --set fleet.key_delay_ms=200
fleet_api_setup
fleet_create_node t309 v4-16 90
fleet_known_hosts t309 2
fleet_patch_key t309
w0=$(jq -r '.networkEndpoints[0].ipAddress' "$T/node.json")
w1=$(jq -r '.networkEndpoints[1].ipAddress' "$T/node.json")
fleet_wait_key "$w0"
fleet_wait_key "$w1"

m0="309.$$"
m1="310.$$"
# w0: a detached sleep, then the session waits; w1: a session waiting.
fleet_ssh "$w0" "setsid sleep $m0 </dev/null >/dev/null 2>&1 & echo started; exec sleep 120" \
    >"$T/c0.out" 2>"$T/c0.err" &
c0=$!
fleet_ssh "$w1" "echo started; exec sleep $m1" >"$T/c1.out" 2>"$T/c1.err" &
c1=$!
i=0
until grep -q started "$T/c0.out" && grep -q started "$T/c1.out" &&
    pgrep -f "^sleep $m0\$" >/dev/null; do
	i=$((i + 1))
	[ $i -lt 200 ] || fail "sessions did not start: $(cat "$T/c0.err" "$T/c1.err")"
	sleep 0.1
done

expect_rc 0 "$EMULATOR" event --state-dir "$EMU_DIR" ssh-cut --node t309 \
    --worker 0
# the client of worker 0 sees the drop at once
i=0
while kill -0 "$c0" 2>/dev/null; do
	i=$((i + 1))
	[ $i -lt 100 ] || fail "ssh to worker 0 still connected 10 s after ssh-cut"
	sleep 0.1
done
set +e
wait "$c0"
rc=$?
set -e
[ "$rc" -eq 255 ] || fail "ssh to worker 0 after ssh-cut: exit $rc: $(cat "$T/c0.err")"
# the detached command runs on; worker 1's session too
pgrep -f "^sleep $m0\$" >/dev/null || fail "the detached sleep died with its connection"
kill -0 "$c1" 2>/dev/null || fail "worker 1's connection dropped too: $(cat "$T/c1.err")"
# worker 0 accepts new connections at once
expect_rc 0 fleet_ssh "$w0" "echo again"
[ "$(cat "$T/out")" = again ] || fail "new connection: $(cat "$T/out")"
# no connections: not an error
expect_rc 0 "$EMULATOR" event --state-dir "$EMU_DIR" ssh-cut --node t309 \
    --worker 0
# bad input
expect_rc 2 "$EMULATOR" event --state-dir "$EMU_DIR" ssh-cut --node t309 \
    --worker 2
assert_grep 'event "ssh-cut" needs "worker" from 0 to 1' "$T/err"

pkill -f "^sleep $m0\$" || true
# worker 1's command would outlive its client (no tty, no hangup)
pkill -f "^sleep $m1\$" || true
kill "$c1" 2>/dev/null || true
wait "$c1" 2>/dev/null || true
