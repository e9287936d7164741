#!/bin/sh
# Cloud TPU API of tpuctl-emulator: scripted long-running-operation
# faults.  lro-pending-N keeps an operation not done for N polls after
# its work is over; lro-error-CODE finishes it with that error (8 with
# Google's stockout text), undoing creates, deletes, starts and stops.
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"

# shellcheck source=tests/e2e/lib_tpu.sh
. "$(dirname "$0")/lib_tpu.sh"

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
