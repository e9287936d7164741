#!/bin/sh
# Cloud TPU API of tpuctl-emulator: queued resources.  A single spot node
# and a 2-slice multislice go ACCEPTED -> WAITING_FOR_RESOURCES ->
# PROVISIONING -> ACTIVE; delete needs force while nodes exist; a
# stockout with validUntilDuration ends FAILED, reset retries it; a
# preempted spot node suspends its queued resource; v2alpha1 uses
# multiNodeParams.
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"

# --- Cloud TPU API helpers (the same block opens t130..t159) ---
PROJECT=
ZONE=us-central2-b
P=
BASE=
CODE=

# tpu_setup: the emulator's base URL and project, from its env file.
tpu_setup() {
	PROJECT=${CLOUDSDK_CORE_PROJECT:-}
	[ -n "$PROJECT" ] || fail "the emulator env has no CLOUDSDK_CORE_PROJECT"
	P="projects/$PROJECT/locations/$ZONE"
	BASE=${CLOUDSDK_API_ENDPOINT_OVERRIDES_TPU:-}
	[ -n "$BASE" ] || fail "the emulator env has no CLOUDSDK_API_ENDPOINT_OVERRIDES_TPU"
	BASE=${BASE%/}
	[ -s "$EMU_DIR/access-token" ] || fail "no $EMU_DIR/access-token"
}

# api METHOD PATH [BODY]: the reply body in $T/resp, the status in $CODE.
api() {
	m=$1
	u=$2
	shift 2
	if [ $# -gt 0 ]; then
		CODE=$(curl -sS --noproxy '*' -o "$T/resp" -w '%{http_code}' \
		    -X "$m" -H "Authorization: Bearer $(cat "$EMU_DIR/access-token")" \
		    -H 'Content-Type: application/json' --data-binary "$1" \
		    "$BASE$u") || fail "curl $m $u failed"
	else
		CODE=$(curl -sS --noproxy '*' -o "$T/resp" -w '%{http_code}' \
		    -X "$m" -H "Authorization: Bearer $(cat "$EMU_DIR/access-token")" \
		    "$BASE$u") || fail "curl $m $u failed"
	fi
}

# expect_api CODE METHOD PATH [BODY]
expect_api() {
	want=$1
	shift
	api "$@"
	if [ "$CODE" != "$want" ]; then
		cat "$T/resp" >&2
		fail "$1 $2 -> HTTP $CODE, want $want"
	fi
}

# jr FILTER: jq -r over the last reply.
jr() {
	jq -cr "$1" "$T/resp"
}

# expect_jq FILTER VALUE: the last reply's FILTER is VALUE.
expect_jq() {
	got=$(jr "$1")
	[ "$got" = "$2" ] || {
		cat "$T/resp" >&2
		fail "$1 is '$got', want '$2'"
	}
}

# wait_op NAME: poll the operation until done (30 s); it stays in $T/resp.
wait_op() {
	i=0
	while :; do
		expect_api 200 GET "/v2/$1"
		[ "$(jr '.done // false')" = true ] && return 0
		i=$((i + 1))
		[ $i -lt 300 ] || fail "operation $1 not done after 30 s"
		sleep 0.1
	done
}

# wait_state PATH STATE [FILTER]: poll a resource until FILTER is STATE.
wait_state() {
	i=0
	while :; do
		expect_api 200 GET "$1"
		[ "$(jr "${3:-.state}")" = "$2" ] && return 0
		i=$((i + 1))
		[ $i -lt 300 ] || fail "$1: ${3:-.state} is $(jr "${3:-.state}") after 30 s, want $2"
		sleep 0.1
	done
}

# create_node ID BODY: create and wait until the operation is done.
create_node() {
	expect_api 200 POST "/v2/$P/nodes?nodeId=$1" "$2"
	wait_op "$(jr .name)"
}

# emu_event JSON: POST a node event to the emulator's control endpoint.
emu_event() {
	CODE=$(curl -sS --noproxy '*' -o "$T/resp" -w '%{http_code}' \
	    -X POST -H 'Content-Type: application/json' --data-binary "$1" \
	    "$BASE/_emulator/events") || fail "curl events failed"
}
# --- end of helpers ---

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
expect_api 400 POST "$Q?queuedResourceId=Bad" \
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
expect_jq '.error.message | contains("multisliceParams")' true
