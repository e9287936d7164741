#!/bin/sh
# The emulator's sshd worker fleet through the full emulator: create a
# v4-32 node (4 workers) with the Cloud TPU API, put a key into the node
# metadata with nodes.patch, pin every worker's host key from
# getGuestAttributes and ssh (the OpenSSH client, StrictHostKeyChecking
# yes) into each worker: it must be the worker at that address, in its
# own HOME, with a TPU VM's login environment (no TPU_* variable, the
# system's python3, a metadata server that answers).
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"

# shellcheck source=tests/e2e/lib_fleet.sh
. "$(dirname "$0")/lib_fleet.sh"

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

i=0
while [ $i -lt 4 ]; do
	addr=$(jq -r ".networkEndpoints[$i].ipAddress" "$T/node.json")
	# shellcheck disable=SC2016 # expanded by the remote shell
	expect_rc 0 fleet_ssh "$addr" 'set -- $SSH_CONNECTION; echo $3; echo $HOME; pwd; env | grep -c "^TPU_"; command -v python3; curl -sf -H "Metadata-Flavor: Google" "http://$GCE_METADATA_HOST/computeMetadata/v1/project/project-id"; echo; echo $GCE_METADATA_HOST'
	[ "$(sed -n 1p "$T/out")" = "$addr" ] ||
	    fail "worker $i at $addr says it is $(sed -n 1p "$T/out")"
	home=$(sed -n 2p "$T/out")
	[ "$(sed -n 3p "$T/out")" = "$home" ] ||
	    fail "worker $i does not start in its HOME: $(cat "$T/out")"
	[ "$(sed -n 4p "$T/out")" = 0 ] ||
	    fail "worker $i has TPU_* variables: $(cat "$T/out")"
	[ "$(sed -n 5p "$T/out")" = /usr/bin/python3 ] ||
	    fail "worker $i: python3 is not the system's: $(cat "$T/out")"
	# The workers' metadata server answers.
	[ "$(sed -n 6p "$T/out")" = "$CLOUDSDK_CORE_PROJECT" ] ||
	    fail "worker $i: metadata server: $(cat "$T/out")"
	# The worker's own metadata server: its address, the emulator's port.
	[ "$(sed -n 7p "$T/out")" = "$addr:${GCE_METADATA_HOST##*:}" ] ||
	    fail "worker $i: GCE_METADATA_HOST: $(cat "$T/out")"
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
