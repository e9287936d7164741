#!/bin/sh
# The metadata server as seen from a TPU worker: with
# "X-Emulator-Worker: NODE/N" it answers agent-worker-number,
# worker-network-endpoints and accelerator-type for that worker of a node
# created through the TPU API (short or full node names).
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"

emu_start --set tpu.create_ms=300
tok=$(cat "$EMU_DIR/access-token")
parent="projects/tpuctl-emu/locations/us-central2-b"
code=$(curl -s -o "$T/body" -w '%{http_code}' -H "Authorization: Bearer $tok" \
    -H 'Content-Type: application/json' \
    -d '{"acceleratorType":"v4-16","runtimeVersion":"tpu-ubuntu2204-base"}' \
    "$TPUCTL_EMULATOR_URL/v2/$parent/nodes?nodeId=wmd")
[ "$code" = 200 ] || fail "node create gave $code: $(cat "$T/body")"

M="http://$GCE_METADATA_HOST/computeMetadata/v1/instance/attributes"
md() {
	curl -s -o "$T/body" -w '%{http_code}' -H 'Metadata-Flavor: Google' \
	    -H "X-Emulator-Worker: $1" "$M/$2"
}
i=0
until [ "$(md wmd/1 agent-worker-number)" = 200 ]; do
	i=$((i + 1))
	[ $i -lt 100 ] || fail "worker metadata never appeared"
	sleep 0.2
done
[ "$(cat "$T/body")" = 1 ] || fail "agent-worker-number: $(cat "$T/body")"
[ "$(md "$parent/nodes/wmd/0" agent-worker-number)" = 200 ] || fail "full name"
[ "$(cat "$T/body")" = 0 ] || fail "worker 0 number: $(cat "$T/body")"
[ "$(md wmd/1 accelerator-type)" = 200 ] || fail "accelerator-type"
[ "$(cat "$T/body")" = v4-16 ] || fail "accelerator-type: $(cat "$T/body")"
[ "$(md wmd/0 worker-network-endpoints)" = 200 ] || fail "endpoints"
n=$(tr ',' '\n' <"$T/body" | grep -cE '^unknown:unknown:127\.[0-9]+\.[0-9]+\.[0-9]+$')
[ "$n" = 2 ] || fail "worker-network-endpoints: $(cat "$T/body")"
[ "$(md wmd/0 '')" = 200 ] || fail "attribute listing"
assert_grep '^agent-worker-number$' "$T/body"
[ "$(md wmd/7 agent-worker-number)" = 404 ] || fail "worker 7 of a 2-worker node"
[ "$(md wmd/x agent-worker-number)" = 404 ] || fail "bad worker number"
