#!/bin/sh
# The sshd worker fleet survives an emulator restart: same worker
# addresses, same fleet port, same host keys (pinned before the restart),
# authorized keys and HOME contents kept; no sshd left behind by the
# stopped emulator.
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"

# shellcheck source=tests/e2e/lib_fleet.sh
. "$(dirname "$0")/lib_fleet.sh"

emu_start --set fleet.key_delay_ms=300
fleet_api_setup

fleet_create_node t193 v4-16 90
fleet_known_hosts t193 2
cp "$T/node.json" "$T/node.before"
fleet_patch_key t193
w1=$(jq -r '.networkEndpoints[1].ipAddress' "$T/node.json")
fleet_wait_key "$w1"
expect_rc 0 fleet_ssh "$w1" 'echo kept > marker'
port_before=$SSH_PORT

# Stop the emulator (SIGTERM): its sshds go with it.
kill -TERM "$EMU_PID"
i=0
while kill -0 "$EMU_PID" 2>/dev/null; do
	i=$((i + 1))
	[ $i -lt 100 ] || fail "the emulator did not stop in 10 s"
	sleep 0.1
done
EMU_PID=
if pgrep -f "$EMU_DIR/fleet/" >/dev/null; then
	fail "sshd processes left after the emulator stopped: $(pgrep -af "$EMU_DIR/fleet/")"
fi
expect_rc 255 fleet_ssh "$w1" true
assert_grep 'Connection refused' "$T/err"

rm -f "$EMU_DIR/env"
emu_start --set fleet.key_delay_ms=300
fleet_api_setup
[ "$SSH_PORT" = "$port_before" ] ||
    fail "fleet port changed across a restart: $port_before -> $SSH_PORT"
fleet_state_ready() {
	n=0
	while :; do
		fleet_api GET "$NODES/t193" >"$T/node.json" 2>/dev/null || true
		[ "$(jq -r .state "$T/node.json")" = READY ] && break
		n=$((n + 1))
		[ $n -lt 300 ] || fail "node t193 not READY again after the restart"
		sleep 0.2
	done
}
fleet_state_ready
[ "$(jq -c '[.networkEndpoints[].ipAddress]' "$T/node.json")" = \
    "$(jq -c '[.networkEndpoints[].ipAddress]' "$T/node.before")" ] ||
    fail "worker addresses changed across a restart"
# The host keys pinned before the restart still verify; the key and
# the files in HOME are still there.
fleet_wait_key "$w1"
expect_rc 0 fleet_ssh "$w1" 'cat marker'
assert_grep '^kept$' "$T/out"
