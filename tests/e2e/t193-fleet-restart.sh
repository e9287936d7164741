#!/bin/sh
# The sshd worker fleet survives an emulator restart: same worker
# addresses, same fleet port, same host keys (pinned before the restart),
# authorized keys and HOME contents kept; no sshd left behind by the
# stopped emulator.
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"

# --- fleet helpers (the same in t190-t193) ---

# fleet_api_setup: $API (base URL), $NODES (the nodes collection path in
# the emulator's project and zone), $TOKEN (from the metadata server),
# $KEY (a fresh ed25519 client key), $SSH_PORT and $SSH_USER.
fleet_api_setup() {
	API=${CLOUDSDK_API_ENDPOINT_OVERRIDES_TPU:-}
	[ -n "$API" ] || fail "the emulator env has no CLOUDSDK_API_ENDPOINT_OVERRIDES_TPU"
	API=${API%/}
	NODES="/v2/projects/${CLOUDSDK_CORE_PROJECT:?}/locations/${CLOUDSDK_COMPUTE_ZONE:?}/nodes"
	SSH_PORT=${TPUCTL_SSH_PORT:?the emulator env has no TPUCTL_SSH_PORT}
	SSH_USER=${TPUCTL_SSH_USER:?the emulator env has no TPUCTL_SSH_USER}
	TOKEN=$(curl -sf -H 'Metadata-Flavor: Google' \
	    "$API/computeMetadata/v1/instance/service-accounts/default/token" |
	    jq -r .access_token) || fail "no token from the metadata server"
	if [ -z "$TOKEN" ] || [ "$TOKEN" = null ]; then
		fail "empty token from the metadata server"
	fi
	KEY="$T/id_ed25519"
	[ -f "$KEY" ] || ssh-keygen -q -t ed25519 -N "" -C t19x -f "$KEY"
}

# fleet_api METHOD PATH [BODY]: the reply on stdout; fails on HTTP >= 400.
fleet_api() {
	if [ $# -ge 3 ]; then
		curl -sS -f -X "$1" -H "Authorization: Bearer $TOKEN" \
		    -H 'Content-Type: application/json' --data-binary "$3" \
		    "$API$2"
	else
		curl -sS -f -X "$1" -H "Authorization: Bearer $TOKEN" "$API$2"
	fi
}

# fleet_create_node ID TYPE TIMEOUT_S: create and wait for READY; the
# node JSON is left in $T/node.json.
fleet_create_node() {
	fleet_api POST "$NODES?nodeId=$1" \
	    "{\"acceleratorType\":\"$2\",\"runtimeVersion\":\"tpu-ubuntu2204-base\"}" \
	    >"$T/op.json" || fail "nodes.create $1 failed"
	n=0
	limit=$(($3 * 5))
	while :; do
		fleet_api GET "$NODES/$1" \
		    >"$T/node.json" 2>/dev/null || true
		[ "$(jq -r .state "$T/node.json" 2>/dev/null)" = READY ] && break
		n=$((n + 1))
		[ $n -lt "$limit" ] ||
		    fail "node $1 not READY in $3 s: $(cat "$T/node.json")"
		sleep 0.2
	done
}

# fleet_known_hosts ID N: $T/known_hosts from getGuestAttributes
# (namespace hostkeys) and the node's network endpoints.
fleet_known_hosts() {
	fleet_api POST \
	    "$NODES/$1:getGuestAttributes" \
	    '{"queryPath":"hostkeys/"}' >"$T/ga.json" ||
	    fail "getGuestAttributes failed"
	# One line per worker: "[addr]:port ssh-ed25519 AAAA...".
	jq -r --arg port "$SSH_PORT" --slurpfile ga "$T/ga.json" '
	    [.networkEndpoints[].ipAddress] as $a |
	    range(0; $a | length) as $i |
	    ($ga[0].guestAttributes[$i].queryValue.items[]? |
		select(.namespace == "hostkeys" and .key == "ssh-ed25519") |
		.value) as $v |
	    "[\($a[$i])]:\($port) " +
		(if ($v | startswith("ssh-ed25519 ")) then $v
		 else "ssh-ed25519 " + $v end)' \
	    "$T/node.json" >"$T/known_hosts" || fail "bad guest attributes"
	[ "$(wc -l <"$T/known_hosts")" -eq "$2" ] ||
	    fail "want $2 ssh-ed25519 host keys: $(cat "$T/ga.json")"
}

# fleet_patch_key ID: put $KEY.pub for $SSH_USER into the ssh-keys metadata.
fleet_patch_key() {
	body=$(jq -n --arg k "$SSH_USER:$(cat "$KEY.pub")" \
	    '{metadata: {"ssh-keys": $k}}')
	fleet_api PATCH \
	    "$NODES/$1?updateMask=metadata" \
	    "$body" >/dev/null || fail "nodes.patch metadata failed"
}

# fleet_ssh ADDR CMD: OpenSSH client with the pinned host keys only.
fleet_ssh() {
	ssh -F /dev/null -i "$KEY" -o BatchMode=yes -o IdentitiesOnly=yes \
	    -o StrictHostKeyChecking=yes \
	    -o UserKnownHostsFile="$T/known_hosts" \
	    -o GlobalKnownHostsFile=/dev/null -o ConnectTimeout=10 \
	    -p "$SSH_PORT" "$SSH_USER@$1" "$2"
}

# fleet_wait_key ADDR: until the agent applied the key (at most 30 s);
# a host-key failure is never acceptable.
fleet_wait_key() {
	n=0
	until fleet_ssh "$1" true >"$T/out" 2>"$T/err"; do
		if grep -q 'Host key verification failed' "$T/err"; then
			fail "host key of $1 does not match getGuestAttributes"
		fi
		n=$((n + 1))
		[ $n -lt 150 ] || fail "key never accepted by $1: $(cat "$T/err")"
		sleep 0.2
	done
}
# --- end of fleet helpers ---

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
