#!/bin/sh
# Cloud TPU API of tpuctl-emulator: scripted long-running-operation
# faults.  lro-pending-N keeps an operation not done for N polls after
# its work is over; lro-error-CODE finishes it with that error (8 with
# Google's stockout text), undoing creates, deletes, starts and stops.
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
emu_start
tpu_setup

V4='{"acceleratorType":"v4-8","runtimeVersion":"tpu-vm-v4-base"}'

# lro-pending-3 on the create: the node gets READY, yet 3 polls say not
# done; the 4th is done.
emu_inject --method POST --path "/v2/$P/nodes" --count 1 lro-pending-3
expect_api 200 POST "/v2/$P/nodes?nodeId=p1" "$V4"
op=$(jr .name)
wait_state "/v2/$P/nodes/p1" READY
for i in 1 2 3; do
	expect_api 200 GET "/v2/$op"
	expect_jq 'has("done")' false
done
expect_api 200 GET "/v2/$op"
expect_jq .done true
expect_jq .response.state READY

# lro-pending-2 injected on the operation path itself.
expect_api 200 POST "/v2/$P/nodes/p1:stop" '{}'
op=$(jr .name)
wait_state "/v2/$P/nodes/p1" STOPPED
emu_inject --method GET --path "/v2/$op" --count 1 lro-pending-2
expect_api 200 GET "/v2/$op"
expect_jq 'has("done")' false
expect_api 200 GET "/v2/$op"
expect_jq 'has("done")' false
expect_api 200 GET "/v2/$op"
expect_jq .done true
expect_jq .response.state STOPPED

# lro-error-8 on a create: stockout text naming the zone, no node left.
emu_inject --method POST --path "/v2/$P/nodes" --count 1 lro-error-8
expect_api 200 POST "/v2/$P/nodes?nodeId=e1" "$V4"
wait_op "$(jr .name)"
expect_jq .error.code 8
expect_jq '.error.message | startswith("There is no more capacity in the zone \"us-central2-b\"; you can try in another zone where Cloud TPU Nodes are offered (see https://cloud.google.com/tpu/docs/regions) [EID: 0x")' true
expect_jq 'has("response")' false
expect_api 404 GET "/v2/$P/nodes/e1"
# The fault was used up: the same create now works.
create_node e1 "$V4"
expect_jq .response.state READY

# lro-error-13 on a delete: the node stays, in its previous state.
emu_inject --method DELETE --path "/v2/$P/nodes/e1" --count 1 lro-error-13
expect_api 200 DELETE "/v2/$P/nodes/e1"
wait_op "$(jr .name)"
expect_jq .error.code 13
expect_api 200 GET "/v2/$P/nodes/e1"
expect_jq .state READY

# lro-error-9 on a patch: the operation fails.
emu_inject --method PATCH --count 1 lro-error-9
expect_api 200 PATCH "/v2/$P/nodes/e1?updateMask=labels" '{"labels":{"a":"b"}}'
wait_op "$(jr .name)"
expect_jq .error.code 9

# Cancel is recorded in the metadata; delete removes the operation.
expect_api 200 DELETE "/v2/$P/nodes/e1"
op=$(jr .name)
expect_api 200 POST "/v2/$op:cancel" ''
expect_api 200 GET "/v2/$op"
expect_jq .metadata.cancelRequested true
wait_op "$op"
expect_api 200 DELETE "/v2/$op"
expect_api 404 GET "/v2/$op"
