#!/bin/sh
# Faults of the emulator's sshd worker fleet through the full emulator
# (POST /_emulator/events) and the node lifecycle: "rekey" gives worker 1
# a new host key while getGuestAttributes keeps publishing the old one
# (a man in the middle: pinning must fail there, only there);
# "worker-down" refuses connections until "worker-up"; "blackhole" drops
# SYNs or accepts and stays silent until worker-up; nodes.stop refuses
# the multi-host node and stops every sshd of a single-host one,
# nodes.start brings them back with the same host keys.
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"

# shellcheck source=tests/e2e/lib_fleet.sh
. "$(dirname "$0")/lib_fleet.sh"

# fleet_state ID STATE TIMEOUT_S: wait for the node state.
fleet_state() {
	n=0
	while :; do
		fleet_api GET "$NODES/$1" >"$T/node.json" 2>/dev/null || true
		[ "$(jq -r .state "$T/node.json")" = "$2" ] && break
		n=$((n + 1))
		[ $n -lt $(($3 * 5)) ] || fail "node $1 not $2 in $3 s"
		sleep 0.2
	done
}

# fleet_event JSON: POST it to the emulator's control endpoint.
fleet_event() {
	fleet_api POST /_emulator/events "$1" >/dev/null ||
	    fail "event $1 rejected"
}

emu_start --set fleet.key_delay_ms=300
fleet_api_setup

fleet_create_node t192 v4-16 90
fleet_known_hosts t192 2
cp "$T/known_hosts" "$T/pinned"
fleet_patch_key t192
w0=$(jq -r '.networkEndpoints[0].ipAddress' "$T/node.json")
w1=$(jq -r '.networkEndpoints[1].ipAddress' "$T/node.json")
fleet_wait_key "$w0"
fleet_wait_key "$w1"
full="${NODES#/v2/}/t192"

# rekey worker 1: its sshd now serves a key nobody published.
fleet_event "{\"event\":\"rekey\",\"node\":\"$full\",\"worker\":1}"
rm -f "$T/err"
n=0
until grep -q 'Host key verification failed' "$T/err" 2>/dev/null; do
	if fleet_ssh "$w1" true >"$T/out" 2>"$T/err"; then
		fail "worker 1 still accepted after rekey"
	fi
	n=$((n + 1))
	[ $n -lt 150 ] || fail "worker 1 never came back after rekey: $(cat "$T/err")"
	sleep 0.2
done
expect_rc 0 fleet_ssh "$w0" true
# The published keys did not change.
fleet_known_hosts t192 2
cmp -s "$T/known_hosts" "$T/pinned" ||
    fail "getGuestAttributes changed after rekey"

# worker-down / worker-up on worker 0.
fleet_event "{\"event\":\"worker-down\",\"node\":\"$full\",\"worker\":0}"
expect_rc 255 fleet_ssh "$w0" true
assert_grep 'Connection refused' "$T/err"
sleep 1
expect_rc 255 fleet_ssh "$w0" true
assert_grep 'Connection refused' "$T/err"
fleet_event "{\"event\":\"worker-up\",\"node\":\"$full\",\"worker\":0}"
fleet_wait_key "$w0"

# blackhole on worker 0: "drop" (no TCP connection), then "silent" (no
# SSH banner); health TIMEOUT meanwhile; a bad mode is a 400; worker-down
# turns the hole into a refusal; worker-up brings the sshd back.
hole_ssh() {
	ssh -F /dev/null -i "$KEY" -o BatchMode=yes -o IdentitiesOnly=yes \
	    -o StrictHostKeyChecking=yes \
	    -o UserKnownHostsFile="$T/known_hosts" \
	    -o GlobalKnownHostsFile=/dev/null -o ConnectTimeout=2 \
	    -p "$SSH_PORT" "$SSH_USER@$1" "$2"
}
fleet_event "{\"event\":\"blackhole\",\"node\":\"$full\",\"worker\":0}"
expect_rc 255 hole_ssh "$w0" true
assert_grep 'Connection timed out' "$T/err"
assert_no_grep 'banner' "$T/err"
[ "$(fleet_api GET "$NODES/t192" | jq -r .health)" = TIMEOUT ] ||
    fail "health is not TIMEOUT with a black-holed worker"
fleet_event "{\"event\":\"blackhole\",\"node\":\"$full\",\"worker\":0,\"mode\":\"silent\"}"
expect_rc 255 hole_ssh "$w0" true
assert_grep 'timed out during banner exchange' "$T/err"
if fleet_api POST /_emulator/events \
    "{\"event\":\"blackhole\",\"node\":\"$full\",\"worker\":0,\"mode\":\"deaf\"}" \
    >/dev/null 2>&1; then
	fail "blackhole with mode 'deaf' accepted"
fi
fleet_event "{\"event\":\"worker-down\",\"node\":\"$full\",\"worker\":0}"
expect_rc 255 hole_ssh "$w0" true
assert_grep 'Connection refused' "$T/err"
fleet_event "{\"event\":\"blackhole\",\"node\":\"$full\",\"worker\":0}"
fleet_event "{\"event\":\"worker-up\",\"node\":\"$full\",\"worker\":0}"
fleet_wait_key "$w0"
[ "$(fleet_api GET "$NODES/t192" | jq -r .health)" = HEALTHY ] ||
    fail "health is not HEALTHY after worker-up"

# nodes.stop refuses this multi-host slice, as Google does (t116); the
# stop / start of a single-host node is checked at the end.
if fleet_api POST "$NODES/t192:stop" '{}' >/dev/null 2>&1; then
	fail "nodes.stop stopped a multi-host slice"
fi
fleet_wait_key "$w0"
# shellcheck disable=SC2016 # expanded by the remote shell
expect_rc 0 fleet_ssh "$w0" 'h=${HOME%/home}; echo ${h##*/w}'
assert_grep '^0$' "$T/out"
# A hole left open when the node is deleted is closed with it.
fleet_event "{\"event\":\"blackhole\",\"node\":\"$full\",\"worker\":1,\"mode\":\"silent\"}"
fleet_api DELETE "$NODES/t192" >/dev/null
n=0
until hole_ssh "$w1" true >"$T/out" 2>"$T/err" ||
    grep -q 'Connection refused' "$T/err"; do
	n=$((n + 1))
	[ $n -lt 15 ] || fail "worker 1's hole outlived the node: $(cat "$T/err")"
	sleep 0.2
done
assert_grep 'Connection refused' "$T/err"

# stop / start of a single-host node: every sshd stops, and it comes back
# with the same host keys.
fleet_create_node t192s v4-8 90
fleet_known_hosts t192s 1
fleet_patch_key t192s
s0=$(jq -r '.networkEndpoints[0].ipAddress' "$T/node.json")
fleet_wait_key "$s0"
fleet_api POST "$NODES/t192s:stop" '{}' >/dev/null || fail "nodes.stop failed"
fleet_state t192s STOPPED 60
expect_rc 255 fleet_ssh "$s0" true
assert_grep 'Connection refused' "$T/err"
fleet_api POST "$NODES/t192s:start" '{}' >/dev/null || fail "nodes.start failed"
fleet_state t192s READY 60
fleet_wait_key "$s0"
