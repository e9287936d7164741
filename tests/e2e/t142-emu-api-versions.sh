#!/bin/sh
# Issue 17: the emulator keeps the two API versions apart as Google does:
# a v2alpha1-only field (Node.autocheckpointEnabled/bootDiskConfig,
# QueuedResource.bestEffort, Guaranteed.reserved, NodeSpec.multiNodeParams)
# on a v2 route, or v2's NodeSpec.multisliceParams on a v2alpha1 route, is
# 400 INVALID_ARGUMENT "Unknown name" with a google.rpc.BadRequest detail,
# and nothing is created; networkConfig.queueCount is stored and returned
# (nodes.create and a queued resource's nodes); tpuctl sends each field on
# the version that has it.
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"
# shellcheck source=tests/e2e/lib_tpu.sh
. "$(dirname "$0")/lib_tpu.sh"
emu_start --set tpu.create_ms=50 --set tpu.qr_accept_ms=20 \
    --set tpu.qr_provision_ms=50 --set tpu.update_ms=0
tpu_setup

N='"acceleratorType":"v4-8","runtimeVersion":"tpu-ubuntu2204-base"'
# unknown [METHOD] VERSION PATH BODY FIELD AT: Google's whole error body
unknown() {
	m=POST
	case $1 in PATCH) m=PATCH && shift ;; esac
	expect_api 400 "$m" "/$1/$P/$2" "$3"
	msg="Invalid JSON payload received. Unknown name \"$4\" at '$5': Cannot find field."
	want=$(jq -cn --arg m "$msg" --arg at "$5" '{error: {code: 400,
	    message: $m, status: "INVALID_ARGUMENT", details: [{"@type":
	    "type.googleapis.com/google.rpc.BadRequest", fieldViolations:
	    [{field: $at, description: $m}]}]}}')
	[ "$(jq -c . "$T/resp")" = "$want" ] ||
	    fail "$1 $2 $4: $(cat "$T/resp"), want $want"
}
unknown v2 'nodes?nodeId=a1' "{$N,\"autocheckpointEnabled\":true}" \
    autocheckpointEnabled node
unknown v2 'nodes?nodeId=a1' "{$N,\"bootDiskConfig\":{}}" bootDiskConfig node
QS="{\"nodeId\":\"qn\",\"parent\":\"$P\",\"node\":{$N}}"
unknown v2 'queuedResources?queuedResourceId=q1' \
    "{\"tpu\":{\"nodeSpec\":[$QS]},\"bestEffort\":{}}" bestEffort queued_resource
unknown v2 'queuedResources?queuedResourceId=q1' \
    "{\"tpu\":{\"nodeSpec\":[$QS]},\"guaranteed\":{\"reserved\":true}}" \
    reserved queued_resource.guaranteed
unknown v2 'queuedResources?queuedResourceId=q1' \
    "{\"tpu\":{\"nodeSpec\":[{\"parent\":\"$P\",\"node\":{$N},\"multiNodeParams\":{\"nodeCount\":2}}]}}" \
    multiNodeParams 'queued_resource.tpu.node_spec[0]'
unknown v2 'queuedResources?queuedResourceId=q1' \
    "{\"tpu\":{\"nodeSpec\":[{\"nodeId\":\"qn\",\"parent\":\"$P\",\"node\":{$N,\"autocheckpointEnabled\":false}}]}}" \
    autocheckpointEnabled 'queued_resource.tpu.node_spec[0].node'
unknown v2alpha1 'queuedResources?queuedResourceId=q1' \
    "{\"tpu\":{\"nodeSpec\":[{\"parent\":\"$P\",\"node\":{$N},\"multisliceParams\":{\"nodeCount\":2}}]}}" \
    multisliceParams 'queued_resource.tpu.node_spec[0]'
expect_api 200 GET "/v2/$P/nodes"
expect_jq '.nodes // [] | length' 0
expect_api 200 GET "/v2/$P/queuedResources"
expect_jq '.queuedResources // [] | length' 0

# the same fields on their own version are taken
expect_api 200 POST "/v2alpha1/$P/nodes?nodeId=a1" \
    "{$N,\"autocheckpointEnabled\":true}"
wait_op "$(jr .name)"
# a v2 PATCH may not carry them either, whatever its mask
unknown PATCH v2 'nodes/a1?updateMask=description' \
    '{"description":"x","bootDiskConfig":{}}' bootDiskConfig node
expect_api 200 GET "/v2/$P/nodes/a1"
expect_jq '.description // ""' ''

# queueCount: stored and returned, for a node and a queued resource's node
expect_rc 0 "$TPUCTL" create c1 --accelerator-type v4-8 --queue-count 4
expect_rc 0 "$TPUCTL" describe c1 --format 'value(networkConfig.queueCount)'
[ "$(cat "$T/out")" = 4 ] || fail "c1 queueCount: '$(cat "$T/out")'"
expect_rc 0 "$TPUCTL" queued-resources create q2 --accelerator-type v4-8 \
    --node-id qn2 --queue-count 3
wait_state "/v2/$P/nodes/qn2" READY
expect_jq .networkConfig.queueCount 3

# tpuctl: the v2alpha1 fields go to v2alpha1 and are accepted there
expect_rc 0 "$TPUCTL" create c2 --accelerator-type v4-8 --autocheckpoint-enabled
expect_rc 0 "$TPUCTL" queued-resources create q3 --accelerator-type v4-8 \
    --node-id qn3 --best-effort
emu_requests | jq -r 'select(.method == "POST" and .status == 400) | .path' \
    >"$T/bad"
[ "$(wc -l <"$T/bad")" -eq 7 ] || fail "tpuctl got a 400: $(cat "$T/bad")"
