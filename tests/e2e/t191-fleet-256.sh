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
	# Its address, its number (from its HOME: no TPU_WORKER_ID on a TPU
	# VM) and, as root, its own hostname.
	# shellcheck disable=SC2016 # expanded by the remote shell
	expect_rc 0 fleet_ssh "$addr" 'set -- $SSH_CONNECTION; echo $3; h=${HOME%/home}; echo ${h##*/w}; hostname'
	[ "$(sed -n 1p "$T/out")" = "$addr" ] || fail "worker $i: $(cat "$T/out")"
	[ "$(sed -n 2p "$T/out")" = "$i" ] || fail "worker $i: $(cat "$T/out")"
	if [ "$(id -u)" -eq 0 ]; then
		sed -n 3p "$T/out" | grep -Eq "^t1v-n-[0-9a-f]{8}-w-$i\$" ||
		    fail "worker $i: hostname $(sed -n 3p "$T/out")"
	fi
done
fleet_api DELETE "$NODES/t191" >/dev/null
