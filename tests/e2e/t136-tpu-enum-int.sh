#!/bin/sh
# Cloud TPU API of tpuctl-emulator: "$alt=json;enum-encoding=int", which
# the @google-cloud/tpu REST client sends, turns enum fields into their
# proto numbers (Node.State READY = 2, Health HEALTHY = 1, ApiVersion
# V2 = 4, AcceleratorConfig.Type V4 = 7, QueuedResourceState ACTIVE = 6);
# numbers are accepted in request bodies too.
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"

# shellcheck source=tests/e2e/lib_tpu.sh
. "$(dirname "$0")/lib_tpu.sh"

# shellcheck disable=SC2119
emu_start
tpu_setup

INT='%24alt=json%3Benum-encoding%3Dint'

# The accelerator config type as a number in the request.
expect_api 200 POST "/v2/$P/nodes?nodeId=i1&$INT" \
    '{"acceleratorConfig":{"type":7,"topology":"2x2x1"},"runtimeVersion":"tpu-vm-v4-base"}'
op=$(jr .name)
expect_jq .metadata.apiVersion v2
wait_op "$op"
expect_api 200 GET "/v2/$op?$INT"
expect_jq .response.state 2
expect_jq .response.acceleratorType v4-8
expect_api 200 GET "/v2/$P/nodes/i1?$INT"
expect_jq .state 2
expect_jq .health 1
expect_jq .apiVersion 4
expect_jq .acceleratorConfig.type 7
expect_jq .acceleratorConfig.topology 2x2x1
# Without the parameter: names.
expect_api 200 GET "/v2/$P/nodes/i1"
expect_jq .state READY
expect_jq .acceleratorConfig.type V4
expect_api 200 GET "/v2/$P/nodes?$INT"
expect_jq '.nodes[0].state' 2
expect_api 200 GET "/v2/projects/$PROJECT/locations/us-west4-a/acceleratorTypes/v5litepod-16?$INT"
expect_jq '.acceleratorConfigs[0].type' 9
expect_api 200 POST "/v2/$P/nodes/i1:stop?$INT" '{}'
wait_op "$(jr .name)"
expect_api 200 GET "/v2/$P/nodes/i1?$INT"
expect_jq .state 8

expect_api 200 POST "/v2/$P/queuedResources?queuedResourceId=q1&$INT" \
    "{\"tpu\":{\"nodeSpec\":[{\"parent\":\"$P\",\"nodeId\":\"q1n\",\"node\":{\"acceleratorType\":\"v4-8\",\"runtimeVersion\":\"tpu-vm-v4-base\"}}]}}"
wait_op "$(jr .name)"
wait_state "/v2/$P/queuedResources/q1" ACTIVE .state.state
expect_api 200 GET "/v2/$P/queuedResources/q1?$INT"
expect_jq .state.state 6
expect_api 200 GET "/v2/$P/nodes/q1n?$INT"
expect_jq .state 2
