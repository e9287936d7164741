#!/bin/sh
# Cloud TPU API of tpuctl-emulator: queued resources.  A single spot node
# and a 2-slice multislice go ACCEPTED -> WAITING_FOR_RESOURCES ->
# PROVISIONING -> ACTIVE; delete needs force while nodes exist; a
# stockout with validUntilDuration ends FAILED, reset retries it; a
# preempted spot node suspends its queued resource; v2alpha1 uses
# multiNodeParams.
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"

# shellcheck source=tests/e2e/lib_tpu.sh
. "$(dirname "$0")/lib_tpu.sh"

# shellcheck disable=SC2119
emu_start --set tpu.qr_accept_ms=2000 --set tpu.qr_provision_ms=3000 \
    --set tpu.delete_ms=2000
tpu_setup

NODE='"node":{"acceleratorType":"v4-8","runtimeVersion":"tpu-vm-v4-base"}'
Q="/v2/$P/queuedResources"

# A single spot node.  A stockout holds it in WAITING_FOR_RESOURCES;
# accepting takes 2 s and provisioning 3 s, so every state is seen.
emu_event '{"event":"stockout","zone":"us-central2-b"}'
[ "$CODE" = 200 ] || fail "stockout -> HTTP $CODE"
expect_api 200 POST "$Q?queuedResourceId=qr1" \
    "{\"tpu\":{\"nodeSpec\":[{\"parent\":\"$P\",\"nodeId\":\"qn1\",$NODE}]},\"spot\":{}}"
expect_jq .metadata.target "$P/queuedResources/qr1"
op=$(jr .name)
expect_api 200 GET "$Q/qr1"
expect_jq .state.state ACCEPTED
wait_op "$op"
expect_jq '.response["@type"]' type.googleapis.com/google.cloud.tpu.v2.QueuedResource
expect_jq .response.name "$P/queuedResources/qr1"
expect_api 409 POST "$Q?queuedResourceId=qr1" \
    "{\"tpu\":{\"nodeSpec\":[{\"parent\":\"$P\",\"nodeId\":\"qn9\",$NODE}]}}"
wait_state "$Q/qr1" WAITING_FOR_RESOURCES .state.state
expect_api 404 GET "/v2/$P/nodes/qn1"
emu_event '{"event":"stockout","zone":"us-central2-b","clear":true}'
wait_state "$Q/qr1" PROVISIONING .state.state
expect_jq .state.provisioningData '{}'
expect_api 200 GET "/v2/$P/nodes/qn1"
expect_jq .state CREATING
wait_state "$Q/qr1" ACTIVE .state.state
expect_jq .state.activeData '{}'
expect_jq .spot '{}'
expect_api 200 GET "/v2/$P/nodes/qn1"
expect_jq .state READY
expect_jq .queuedResource "$P/queuedResources/qr1"
expect_jq .schedulingConfig.spot true
expect_jq 'has("multisliceNode")' false
expect_api 200 GET "$Q"
expect_jq '[.queuedResources[].name] | join(" ")' "$P/queuedResources/qr1"

# Preempting its spot node suspends the queued resource.
emu_event "{\"event\":\"preempt\",\"node\":\"$P/nodes/qn1\"}"
[ "$CODE" = 200 ] || fail "preempt -> HTTP $CODE"
expect_api 200 GET "$Q/qr1"
expect_jq .state.state SUSPENDED
expect_jq .state.suspendedData '{}'

# Without force, a queued resource with nodes is not deleted.
expect_api 400 DELETE "$Q/qr1"
expect_jq .error.status FAILED_PRECONDITION
expect_api 200 DELETE "$Q/qr1?force=true"
expect_jq .metadata.verb delete
op=$(jr .name)
expect_api 200 GET "$Q/qr1"
expect_jq .state.state DELETING
wait_op "$op"
expect_jq .response '{"@type":"type.googleapis.com/google.protobuf.Empty"}'
expect_api 404 GET "$Q/qr1"
expect_api 404 GET "/v2/$P/nodes/qn1"

# A 2-slice multislice of v4-16 (2 workers each).
expect_api 200 POST "$Q?queuedResourceId=ms" \
    "{\"tpu\":{\"nodeSpec\":[{\"parent\":\"$P\",\"multisliceParams\":{\"nodeCount\":2,\"nodeIdPrefix\":\"ms\"},\"node\":{\"acceleratorType\":\"v4-16\",\"runtimeVersion\":\"tpu-vm-v4-base\"}}]},\"guaranteed\":{}}"
wait_op "$(jr .name)"
wait_state "$Q/ms" ACTIVE .state.state
for n in ms-0 ms-1; do
	expect_api 200 GET "/v2/$P/nodes/$n"
	expect_jq .state READY
	expect_jq .multisliceNode true
	expect_jq .queuedResource "$P/queuedResources/ms"
	expect_jq '.networkEndpoints | length' 2
done
# Deleting its nodes one by one, then the queued resource without force.
for n in ms-0 ms-1; do
	expect_api 200 DELETE "/v2/$P/nodes/$n"
	wait_op "$(jr .name)"
done
expect_api 200 GET "$Q/ms"
expect_jq .state.state SUSPENDED
expect_api 200 DELETE "$Q/ms"
wait_op "$(jr .name)"
expect_api 404 GET "$Q/ms"

# Validation.
expect_api 400 POST "$Q?queuedResourceId=bad" '{"tpu":{"nodeSpec":[]}}'
expect_api 400 POST "$Q?queuedResourceId=bad" \
    "{\"tpu\":{\"nodeSpec\":[{\"parent\":\"$P\",\"nodeId\":\"x\",\"multisliceParams\":{\"nodeCount\":2,\"nodeIdPrefix\":\"x\"},$NODE}]}}"
expect_api 400 POST "$Q?queuedResourceId=bad" \
    "{\"tpu\":{\"nodeSpec\":[{\"parent\":\"projects/$PROJECT/locations/us-east5-a\",\"nodeId\":\"x\",$NODE}]}}"
expect_api 400 POST "$Q?queuedResourceId=bad" \
    "{\"tpu\":{\"nodeSpec\":[{\"parent\":\"$P\",\"nodeId\":\"x\",$NODE}]},\"spot\":{},\"guaranteed\":{}}"
expect_api 400 POST "$Q?queuedResourceId=bad" \
    "{\"tpu\":{\"nodeSpec\":[{\"parent\":\"$P\",\"nodeId\":\"x\",$NODE}]},\"queueingPolicy\":{\"validUntilDuration\":\"soon\"}}"
expect_api 400 POST "$Q?queuedResourceId=bad!id" \
    "{\"tpu\":{\"nodeSpec\":[{\"parent\":\"$P\",\"nodeId\":\"x\",$NODE}]}}"
expect_api 400 POST "$Q?queuedResourceId=bad" \
    "{\"tpu\":{\"nodeSpec\":[{\"parent\":\"$P\",\"nodeId\":\"x\",\"node\":{\"acceleratorType\":\"v5p-8\",\"runtimeVersion\":\"v2-alpha-tpuv5\"}}]}}"
expect_api 200 GET "$Q"
expect_jq '.queuedResources // [] | length' 0

# Stockout with validUntilDuration: FAILED with code 8, then reset.
emu_event '{"event":"stockout","zone":"us-central2-b"}'
expect_api 200 POST "$Q?queuedResourceId=qs" \
    "{\"tpu\":{\"nodeSpec\":[{\"parent\":\"$P\",\"nodeId\":\"qs1\",$NODE}]},\"queueingPolicy\":{\"validUntilDuration\":\"4s\"}}"
wait_op "$(jr .name)"
wait_state "$Q/qs" FAILED .state.state
expect_jq .state.failedData.error.code 8
expect_jq '.state.failedData.error.message | contains("no more capacity")' true
expect_api 404 GET "/v2/$P/nodes/qs1"
expect_api 404 POST "$Q/qr-none:reset" '{}'
emu_event '{"event":"stockout","zone":"us-central2-b","clear":true}'
expect_api 200 POST "$Q/qs:reset" '{}'
expect_jq .metadata.verb reset
wait_op "$(jr .name)"
wait_state "$Q/qs" ACTIVE .state.state
expect_api 400 POST "$Q/qs:reset" '{}'
expect_jq .error.status FAILED_PRECONDITION
expect_api 200 DELETE "$Q/qs?force=true"
wait_op "$(jr .name)"

# v2alpha1: multiNodeParams.
expect_api 200 POST "/v2alpha1/$P/queuedResources?queuedResourceId=al" \
    "{\"tpu\":{\"nodeSpec\":[{\"parent\":\"$P\",\"multiNodeParams\":{\"nodeCount\":2,\"nodeIdPrefix\":\"al\"},$NODE}]},\"bestEffort\":{}}"
wait_op "$(jr .name)"
expect_jq '.response["@type"]' type.googleapis.com/google.cloud.tpu.v2alpha1.QueuedResource
wait_state "/v2alpha1/$P/queuedResources/al" ACTIVE .state.state
expect_api 200 GET "/v2alpha1/$P/nodes/al-1"
expect_jq .apiVersion V2_ALPHA1
expect_jq .multisliceNode true
expect_api 400 POST "/v2/$P/queuedResources?queuedResourceId=al2" \
    "{\"tpu\":{\"nodeSpec\":[{\"parent\":\"$P\",\"multiNodeParams\":{\"nodeCount\":2,\"nodeIdPrefix\":\"al2\"},$NODE}]}}"
expect_jq '.error.message | contains("Unknown name \"multiNodeParams\"")' true
