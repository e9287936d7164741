#!/bin/sh
# The sshd fleet under serve --tls: the workers' GCE_METADATA_HOST is the
# emulator's plain-HTTP metadata listener (emu->metadata_host), not the
# HTTPS API port, and the metadata server answers from a worker.
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"

# shellcheck source=tests/e2e/lib_fleet.sh
. "$(dirname "$0")/lib_fleet.sh"

emu_start --tls --set fleet.key_delay_ms=200
fleet_api_setup
case $API in
https://*) ;;
*) fail "not serving https: $API" ;;
esac
port=${API##*:}
[ "$GCE_METADATA_HOST" != "127.0.0.1:$port" ] || fail "metadata on the TLS port"

fleet_create_node t194 v4-16 60
fleet_known_hosts t194 2
fleet_patch_key t194
i=0
while [ $i -lt 2 ]; do
	addr=$(jq -r ".networkEndpoints[$i].ipAddress" "$T/node.json")
	fleet_wait_key "$addr"
	# shellcheck disable=SC2016 # expanded by the remote shell
	expect_rc 0 fleet_ssh "$addr" 'echo $GCE_METADATA_HOST; curl -s -H "Metadata-Flavor: Google" "http://$GCE_METADATA_HOST/computeMetadata/v1/project/project-id"'
	[ "$(sed -n 1p "$T/out")" = "$addr:${GCE_METADATA_HOST##*:}" ] ||
	    fail "worker $i: GCE_METADATA_HOST: $(cat "$T/out")"
	[ "$(sed -n 2p "$T/out")" = "$CLOUDSDK_CORE_PROJECT" ] ||
	    fail "worker $i: metadata server unreachable: $(cat "$T/out")"
	i=$((i + 1))
done
