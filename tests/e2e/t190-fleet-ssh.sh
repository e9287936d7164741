#!/bin/sh
# The emulator's sshd worker fleet through the full emulator: create a
# v4-32 node (4 workers) with the Cloud TPU API, put a key into the node
# metadata with nodes.patch, pin every worker's host key from
# getGuestAttributes and ssh (the OpenSSH client, StrictHostKeyChecking
# yes) into each worker: it must be worker i, in its own HOME.
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

emu_start --set fleet.key_delay_ms=500
fleet_api_setup

fleet_create_node t190 v4-32 90
jq -e '.networkEndpoints | length == 4' "$T/node.json" >/dev/null ||
    fail "a v4-32 node should have 4 network endpoints: $(cat "$T/node.json")"

# Before the key is in metadata, publickey authentication fails (the
# host keys are already pinned, so this is not a host-key failure).
fleet_known_hosts t190 4
addr0=$(jq -r '.networkEndpoints[0].ipAddress' "$T/node.json")
expect_rc 255 fleet_ssh "$addr0" true
assert_grep 'Permission denied' "$T/err"

fleet_patch_key t190
fleet_wait_key "$addr0"
hostnames=$(jq -r '[.networkEndpoints[].ipAddress] | join(",")' "$T/node.json")

i=0
while [ $i -lt 4 ]; do
	addr=$(jq -r ".networkEndpoints[$i].ipAddress" "$T/node.json")
	# shellcheck disable=SC2016 # expanded by the remote shell
	expect_rc 0 fleet_ssh "$addr" 'echo $TPU_WORKER_ID; echo $HOME; pwd; echo $TPU_ACCELERATOR_TYPE; echo $GCE_METADATA_HOST; echo $TPU_WORKER_HOSTNAMES'
	[ "$(sed -n 1p "$T/out")" = "$i" ] ||
	    fail "worker $i at $addr says it is worker $(sed -n 1p "$T/out")"
	home=$(sed -n 2p "$T/out")
	[ "$(sed -n 3p "$T/out")" = "$home" ] ||
	    fail "worker $i does not start in its HOME: $(cat "$T/out")"
	[ "$(sed -n 4p "$T/out")" = v4-32 ] ||
	    fail "worker $i: TPU_ACCELERATOR_TYPE: $(cat "$T/out")"
	# The workers' metadata server is the emulator's.
	[ "$(sed -n 5p "$T/out")" = "$GCE_METADATA_HOST" ] ||
	    fail "worker $i: GCE_METADATA_HOST: $(cat "$T/out")"
	[ "$(sed -n 6p "$T/out")" = "$hostnames" ] ||
	    fail "worker $i: TPU_WORKER_HOSTNAMES: $(cat "$T/out")"
	echo "$home" >>"$T/homes"
	i=$((i + 1))
done
[ "$(sort -u "$T/homes" | wc -l)" -eq 4 ] ||
    fail "workers share a HOME: $(cat "$T/homes")"

# Files written on worker 0 are not on worker 1.
addr1=$(jq -r '.networkEndpoints[1].ipAddress' "$T/node.json")
expect_rc 0 fleet_ssh "$addr0" 'echo w0 > only-on-w0'
expect_rc 1 fleet_ssh "$addr1" 'test -e only-on-w0'

# scp (SFTP) lands in the worker's HOME too, on that worker only.
echo "payload $$" >"$T/payload"
scp -q -F /dev/null -i "$KEY" -o BatchMode=yes -o IdentitiesOnly=yes \
    -o StrictHostKeyChecking=yes -o UserKnownHostsFile="$T/known_hosts" \
    -o GlobalKnownHostsFile=/dev/null -P "$SSH_PORT" \
    "$T/payload" "$SSH_USER@$addr1:payload" || fail "scp to worker 1 failed"
expect_rc 0 fleet_ssh "$addr1" 'cat payload'
cmp -s "$T/out" "$T/payload" || fail "worker 1 has '$(cat "$T/out")'"
expect_rc 1 fleet_ssh "$addr0" 'test -e payload'

# Deleting the node stops its sshds: connections are refused.
fleet_api DELETE "$NODES/t190" >/dev/null
i=0
while fleet_ssh "$addr0" true >/dev/null 2>&1; do
	i=$((i + 1))
	[ $i -lt 300 ] || fail "worker 0 still answers after nodes.delete"
	sleep 0.2
done
