#!/bin/sh
# Faults of the emulator's sshd worker fleet through the full emulator
# (POST /_emulator/events) and the node lifecycle: "rekey" gives worker 1
# a new host key while getGuestAttributes keeps publishing the old one
# (a man in the middle: pinning must fail there, only there);
# "worker-down" refuses connections until "worker-up"; nodes.stop stops
# every sshd, nodes.start brings them back with the same host keys.
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

# stop / start: refused while STOPPED; the same host keys afterwards.
fleet_api POST "$NODES/t192:stop" '{}' >/dev/null || fail "nodes.stop failed"
fleet_state t192 STOPPED 60
expect_rc 255 fleet_ssh "$w0" true
assert_grep 'Connection refused' "$T/err"
fleet_api POST "$NODES/t192:start" '{}' >/dev/null || fail "nodes.start failed"
fleet_state t192 READY 60
fleet_wait_key "$w0"
# shellcheck disable=SC2016 # expanded by the remote shell
expect_rc 0 fleet_ssh "$w0" 'echo $TPU_WORKER_ID'
assert_grep '^0$' "$T/out"
fleet_api DELETE "$NODES/t192" >/dev/null
