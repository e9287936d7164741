#!/bin/sh
# Helpers of the sshd-fleet tests (t190-t199): create a node through the
# Cloud TPU API, pin its host keys, propagate a key, ssh into workers.
# Sourced after lib.sh by the tests that use it.

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
	MD=${GCE_METADATA_HOST:?the emulator env has no GCE_METADATA_HOST}
	TOKEN=$(curl -sf -H 'Metadata-Flavor: Google' \
	    "http://$MD/computeMetadata/v1/instance/service-accounts/default/token" |
	    jq -r .access_token) || fail "no token from the metadata server"
	if [ -z "$TOKEN" ] || [ "$TOKEN" = null ]; then
		fail "empty token from the metadata server"
	fi
	KEY="$T/id_ed25519"
	[ -f "$KEY" ] || ssh-keygen -q -t ed25519 -N "" -C t19x -f "$KEY"
}

# fleet_api METHOD PATH [BODY]: the reply on stdout; fails on HTTP >= 400.
# Trusts the emulator's CA (TPUCTL_CA_BUNDLE) when it serves --tls.
fleet_api() {
	if [ $# -ge 3 ]; then
		curl -sS -f ${TPUCTL_CA_BUNDLE:+--cacert "$TPUCTL_CA_BUNDLE"} \
		    -X "$1" -H "Authorization: Bearer $TOKEN" \
		    -H 'Content-Type: application/json' --data-binary "$3" \
		    "$API$2"
	else
		curl -sS -f ${TPUCTL_CA_BUNDLE:+--cacert "$TPUCTL_CA_BUNDLE"} \
		    -X "$1" -H "Authorization: Bearer $TOKEN" "$API$2"
	fi
}

# fleet_create_node ID TYPE TIMEOUT_S [FIELDS]: create and wait for
# READY; FIELDS is a JSON object of more node fields (e.g. metadata).
# The node JSON is left in $T/node.json.
fleet_create_node() {
	body=$(jq -cn --arg t "$2" --argjson x "${4:-"{}"}" \
	    '{acceleratorType: $t, runtimeVersion: "tpu-ubuntu2204-base"} + $x') ||
	    fail "bad node fields: ${4:-}"
	fleet_api POST "$NODES?nodeId=$1" "$body" \
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

# fleet_delete_node NAME: nodes.delete NAME, back once GET no longer
# finds it (30 s at most).
fleet_delete_node() {
	fleet_api DELETE "$NODES/$1" >/dev/null || fail "delete $1"
	n=0
	while fleet_api GET "$NODES/$1" >/dev/null 2>&1; do
		n=$((n + 1))
		[ $n -lt 150 ] || fail "$1 not deleted"
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
