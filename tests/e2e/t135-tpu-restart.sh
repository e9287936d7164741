#!/bin/sh
# Cloud TPU API of tpuctl-emulator: a restart keeps nodes, operations,
# queued resources and stockouts (STATE_DIR/tpu/state.json), brings the
# workers of running nodes back with the same host keys, and leaves
# stopped nodes stopped.
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"

# shellcheck source=tests/e2e/lib_tpu.sh
. "$(dirname "$0")/lib_tpu.sh"

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
