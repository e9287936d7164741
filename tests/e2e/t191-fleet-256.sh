#!/bin/sh
# Scale of the emulator's sshd worker fleet: a v4-2048 node has 256
# workers, each its own sshd on its own loopback address; the node must
# be READY (every sshd accepting connections) within 60 s on 2 cores, and
# the first and last workers must answer with their pinned host keys.
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"

# shellcheck source=tests/e2e/lib_fleet.sh
. "$(dirname "$0")/lib_fleet.sh"

emu_start --set fleet.key_delay_ms=500
fleet_api_setup

start=$(date +%s)
fleet_create_node t191 v4-2048 60
echo "256 workers READY after $(($(date +%s) - start)) s"
jq -e '.networkEndpoints | length == 256' "$T/node.json" >/dev/null ||
    fail "a v4-2048 node should have 256 network endpoints"
[ "$(jq -r '[.networkEndpoints[].ipAddress] | unique | length' "$T/node.json")" -eq 256 ] ||
    fail "worker addresses are not distinct"

fleet_known_hosts t191 256
[ "$(cut -d' ' -f3 "$T/known_hosts" | sort -u | wc -l)" -eq 256 ] ||
    fail "workers share host keys"
fleet_patch_key t191
for i in 0 255; do
	addr=$(jq -r ".networkEndpoints[$i].ipAddress" "$T/node.json")
	fleet_wait_key "$addr"
	# shellcheck disable=SC2016 # expanded by the remote shell
	expect_rc 0 fleet_ssh "$addr" 'echo $TPU_WORKER_ID; echo $TPU_WORKER_HOSTNAMES'
	[ "$(sed -n 1p "$T/out")" = "$i" ] || fail "worker $i: $(cat "$T/out")"
	[ "$(sed -n 2p "$T/out" | tr ',' '\n' | wc -l)" -eq 256 ] ||
	    fail "worker $i: TPU_WORKER_HOSTNAMES does not list 256 workers"
done
fleet_api DELETE "$NODES/t191" >/dev/null
