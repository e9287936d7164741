#!/bin/sh
# nodes.stop refuses a multi-host slice (a TPU Pod), as Google does
# (https://cloud.google.com/tpu/docs/managing-tpus-tpu-vm
# #stopping_your_resources): 400 FAILED_PRECONDITION naming the node,
# its type and worker count; the node stays READY with its workers.
# Single-host slices, up to 8 chips on v5e, stop and start.
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"

# shellcheck source=tests/e2e/lib_tpu.sh
. "$(dirname "$0")/lib_tpu.sh"

# shellcheck disable=SC2119
emu_start
tpu_setup
W="projects/$PROJECT/locations/us-west4-a"

create_node pod '{"acceleratorType":"v4-16","runtimeVersion":"tpu-vm-v4-base"}'
expect_jq .response.state READY
expect_api 400 POST "/v2/$P/nodes/pod:stop" '{}'
expect_jq .error.code 400
expect_jq .error.status FAILED_PRECONDITION
expect_jq .error.message "Node '$P/nodes/pod' is a multi-host slice (v4-16, 2 workers): stopping TPU Pods is not supported; delete it instead"
expect_api 200 GET "/v2/$P/nodes/pod"
expect_jq .state READY
expect_jq '.networkEndpoints | length' 2
# tpuctl passes the refusal on: exit 4 (FAILED_PRECONDITION).
expect_rc 4 "$TPUCTL" stop pod
assert_grep "multi-host slice" "$T/err"

# v5litepod-8 is one host of 8 chips: it stops; v5litepod-16 (4 hosts) not.
expect_api 200 POST "/v2/$W/nodes?nodeId=one" '{"acceleratorType":"v5litepod-8","runtimeVersion":"v2-alpha-tpuv5-lite"}'
wait_op "$(jr .name)"
expect_api 200 POST "/v2/$W/nodes?nodeId=four" '{"acceleratorType":"v5litepod-16","runtimeVersion":"v2-alpha-tpuv5-lite"}'
wait_op "$(jr .name)"
expect_api 400 POST "/v2/$W/nodes/four:stop" '{}'
expect_jq '.error.message | contains("(v5litepod-16, 4 workers)")' true
expect_api 200 POST "/v2/$W/nodes/one:stop" '{}'
wait_op "$(jr .name)"
expect_jq .response.state STOPPED
expect_api 200 POST "/v2/$W/nodes/one:start" '{}'
wait_op "$(jr .name)"
expect_jq .response.state READY
echo ok
