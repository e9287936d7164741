#!/bin/sh
# Cloud TPU API of tpuctl-emulator: a restart keeps nodes, operations,
# queued resources and stockouts (STATE_DIR/tpu/state.json), brings the
# workers of running nodes back with the same host keys, and leaves
# stopped nodes stopped.
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

V4='{"acceleratorType":"v4-8","runtimeVersion":"tpu-vm-v4-base","labels":{"keep":"me"}}'
create_node r1 "$V4"
op1=$(jr .name)
create_node r2 "$V4"
expect_api 200 POST "/v2/$P/nodes/r2:stop" '{}'
wait_op "$(jr .name)"
expect_api 200 POST "/v2/$P/queuedResources?queuedResourceId=rq" \
    "{\"tpu\":{\"nodeSpec\":[{\"parent\":\"$P\",\"nodeId\":\"rq1\",\"node\":{\"acceleratorType\":\"v4-8\",\"runtimeVersion\":\"tpu-vm-v4-base\"}}]}}"
wait_state "/v2/$P/queuedResources/rq" ACTIVE .state.state
expect_api 200 POST "/v2/$P/nodes/r1:getGuestAttributes" '{}'
key=$(jr '.guestAttributes[0].queryValue.items[0].value')
expect_api 200 GET "/v2/$P/nodes/r1"
id=$(jr .id)
ip=$(jr '.networkEndpoints[0].ipAddress')
emu_event '{"event":"stockout","zone":"us-east1-d"}'
[ -s "$EMU_DIR/tpu/state.json" ] || fail "no tpu/state.json"
jq -e . "$EMU_DIR/tpu/state.json" >/dev/null || fail "state.json is not JSON"

# Stop the emulator and start it again on the same state dir.
kill -TERM "$EMU_PID"
i=0
while kill -0 "$EMU_PID" 2>/dev/null; do
	i=$((i + 1))
	[ $i -lt 100 ] || fail "the emulator did not stop"
	sleep 0.1
done
EMU_PID=
rm -f "$EMU_DIR/env"
# shellcheck disable=SC2119
emu_start
tpu_setup

expect_api 200 GET "/v2/$P/nodes"
expect_jq '[.nodes[].name] | join(" ")' "$P/nodes/r1 $P/nodes/r2 $P/nodes/rq1"
expect_api 200 GET "/v2/$P/nodes/r1"
expect_jq .state READY
expect_jq .id "$id"
expect_jq .labels.keep me
wait_state "/v2/$P/nodes/r1" "$ip" '.networkEndpoints[0].ipAddress'
expect_api 200 GET "/v2/$P/nodes/r2"
expect_jq .state STOPPED
expect_api 200 GET "/v2/$op1"
expect_jq .done true
expect_jq .response.name "$P/nodes/r1"
expect_api 200 GET "/v2/$P/queuedResources/rq"
expect_jq .state.state ACTIVE
expect_api 200 POST "/v2/$P/nodes/r1:getGuestAttributes" '{}'
expect_jq '.guestAttributes[0].queryValue.items[0].value' "$key"
# The stockout survived too.
expect_api 200 POST "/v2/projects/$PROJECT/locations/us-east1-d/nodes?nodeId=x1" \
    '{"acceleratorType":"v5litepod-4","runtimeVersion":"v2-alpha-tpuv5-lite"}'
wait_op "$(jr .name)"
expect_jq .error.code 8
# A stopped node starts again after the restart.
expect_api 200 POST "/v2/$P/nodes/r2:start" '{}'
wait_op "$(jr .name)"
expect_jq .response.state READY
expect_jq '.response.networkEndpoints | length' 1
