#!/bin/sh
# Cloud TPU API of tpuctl-emulator: the life of a v4-32 node over REST,
# shaped like the recorded real exchanges (tpu_v2_node_crud): create ->
# LRO -> READY with 4 workers, get, list with paging, patch labels and
# metadata, getGuestAttributes host keys, stop/start, delete.
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"

# shellcheck source=tests/e2e/lib_tpu.sh
. "$(dirname "$0")/lib_tpu.sh"

# Creation and deletion take 3 s, so the node is seen CREATING and DELETING.
emu_start --set tpu.create_ms=3000 --set tpu.delete_ms=3000
tpu_setup

# Create: an operation without "done", metadata like Google's.
expect_api 200 POST "/v2/$P/nodes?nodeId=n1" '{"acceleratorType":"v4-32",
  "runtimeVersion":"tpu-ubuntu2204-base","labels":{"env":"test"},
  "networkConfig":{"enableExternalIps":true,"network":"default"},
  "metadata":{"startup-script":"echo hi"}}'
op=$(jr .name)
case "$op" in
"$P/operations/operation-"*) ;;
*) fail "operation name '$op'" ;;
esac
expect_jq 'has("done")' false
expect_jq '.metadata["@type"]' type.googleapis.com/google.cloud.common.OperationMetadata
expect_jq .metadata.verb create
expect_jq .metadata.apiVersion v2
expect_jq .metadata.target "$P/nodes/n1"
expect_api 200 GET "/v2/$P/nodes/n1"
expect_jq .state CREATING

# The same id again: 409 ALREADY_EXISTS.
expect_api 409 POST "/v2/$P/nodes?nodeId=n1" \
    '{"acceleratorType":"v4-8","runtimeVersion":"tpu-ubuntu2204-base"}'
expect_jq .error.status ALREADY_EXISTS

wait_op "$op"
expect_jq .done true
expect_jq 'has("error")' false
expect_jq '.response["@type"]' type.googleapis.com/google.cloud.tpu.v2.Node
expect_jq .response.state READY
expect_jq '.metadata.endTime | test("^[0-9]{4}-[0-9]{2}-[0-9]{2}T.*Z$")' true

expect_api 200 GET "/v2/$P/nodes/n1"
expect_jq .name "$P/nodes/n1"
expect_jq .state READY
expect_jq .health HEALTHY
expect_jq .apiVersion V2
expect_jq .acceleratorType v4-32
expect_jq .acceleratorConfig.type V4
expect_jq .acceleratorConfig.topology 2x2x4
expect_jq .runtimeVersion tpu-ubuntu2204-base
expect_jq '.id | test("^[0-9]{19}$")' true
expect_jq .labels.env test
expect_jq .networkConfig.network "projects/$PROJECT/global/networks/default"
expect_jq .networkConfig.subnetwork "projects/$PROJECT/regions/us-central2/subnetworks/default"
expect_jq .schedulingConfig '{}'
expect_jq '.networkEndpoints | length' 4
expect_jq '[.networkEndpoints[] | select(.port == 8470 and (.ipAddress | test("^127\\.")) and .accessConfig.externalIp == .ipAddress)] | length' 4
expect_jq '[.networkEndpoints[].ipAddress] | unique | length' 4

# Two more nodes (one worker each) to page through.
create_node n2 '{"acceleratorType":"v4-8","runtimeVersion":"tpu-vm-v4-base"}'
expect_jq 'has("error")' false
create_node n3 '{"acceleratorConfig":{"type":"V4","topology":"2x2x1"},"runtimeVersion":"tpu-vm-v4-base"}'
expect_jq .response.acceleratorType v4-8
expect_jq '.response.networkEndpoints[0].accessConfig' '{}'

expect_api 200 GET "/v2/$P/nodes"
expect_jq '[.nodes[].name] | join(" ")' "$P/nodes/n1 $P/nodes/n2 $P/nodes/n3"
expect_jq 'has("nextPageToken")' false
expect_api 200 GET "/v2/$P/nodes?pageSize=2"
expect_jq '.nodes | length' 2
tok=$(jr .nextPageToken)
case "$tok" in "" | null) fail "no nextPageToken" ;; esac
expect_api 200 GET "/v2/$P/nodes?pageSize=2&pageToken=$tok"
expect_jq '[.nodes[].name] | join(" ")' "$P/nodes/n3"
expect_jq 'has("nextPageToken")' false
expect_api 400 GET "/v2/$P/nodes?pageToken=bogus"
expect_jq .error.status INVALID_ARGUMENT
expect_api 400 GET "/v2/$P/nodes?pageSize=-1"
# Another zone is empty; "-" lists every zone.
expect_api 200 GET "/v2/projects/$PROJECT/locations/us-central1-a/nodes"
expect_jq '.nodes // [] | length' 0
expect_api 200 GET "/v2/projects/$PROJECT/locations/-/nodes"
expect_jq '.nodes | length' 3

# Patch labels and metadata (the mask replaces whole fields).
expect_api 200 PATCH "/v2/$P/nodes/n1?updateMask=labels,metadata" \
    '{"labels":{"env":"prod","team":"ml"},"metadata":{"ssh-keys":"alice:ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIExample alice"}}'
expect_jq .metadata.verb update
wait_op "$(jr .name)"
expect_jq .response.labels.team ml
expect_api 200 GET "/v2/$P/nodes/n1"
expect_jq .labels.env prod
expect_jq '.metadata["ssh-keys"] | startswith("alice:ssh-ed25519 ")' true
expect_jq '.metadata | has("startup-script")' false
expect_api 200 PATCH "/v2/$P/nodes/n1?updateMask=description" \
    '{"description":"new description"}'
wait_op "$(jr .name)"
expect_jq .response.description "new description"
expect_api 400 PATCH "/v2/$P/nodes/n1?updateMask=acceleratorType" '{}'
expect_jq '.error.message | contains("acceleratorType")' true
expect_api 400 PATCH "/v2/$P/nodes/n1?updateMask=labels" '{"labels":{"Bad":"x"}}'
expect_api 400 PATCH "/v2/$P/nodes/n1?updateMask=metadata" \
    '{"metadata":{"bad key":"x"}}'

# Host keys of every worker, as the guest agent publishes them.
expect_api 200 POST "/v2/$P/nodes/n1:getGuestAttributes" '{"queryPath":"hostkeys/"}'
expect_jq '.guestAttributes | length' 4
expect_jq '[.guestAttributes[].queryValue.items[] | select(.namespace == "hostkeys" and .key == "ssh-ed25519" and (.value | test("^AAAAC3NzaC1lZDI1NTE5")))] | length' 4
expect_jq '[.guestAttributes[].queryValue.items[0].value] | unique | length' 4
k2=$(jr '.guestAttributes[2].queryValue.items[0].value')
expect_api 200 POST "/v2/$P/nodes/n1:getGuestAttributes" '{"workerIds":["2"]}'
expect_jq '.guestAttributes | length' 1
expect_jq '.guestAttributes[0].queryValue.items[0].value' "$k2"
expect_api 400 POST "/v2/$P/nodes/n1:getGuestAttributes" '{"workerIds":["4"]}'

# Stop and start a single-host node; a multi-host slice (TPU Pod) is not
# stopped, as on Google (t116).
expect_api 400 POST "/v2/$P/nodes/n1:stop" '{}'
expect_jq .error.status FAILED_PRECONDITION
expect_jq '.error.message | contains("multi-host")' true
expect_api 200 POST "/v2/$P/nodes/n3:stop" '{}'
expect_jq .metadata.verb stop
wait_op "$(jr .name)"
expect_jq .response.state STOPPED
expect_api 400 POST "/v2/$P/nodes/n3:stop" '{}'
expect_jq .error.status FAILED_PRECONDITION
expect_api 200 POST "/v2/$P/nodes/n3:start" '{}'
wait_op "$(jr .name)"
expect_jq .response.state READY
expect_api 200 GET "/v2/$P/nodes/n3"
expect_jq .state READY

# Operations are listed too.
expect_api 200 GET "/v2/$P/operations"
[ "$(jr '.operations | length')" -ge 7 ] || fail "operations list too short"

# Delete: the final response is google.protobuf.Empty, then 404.
expect_api 200 DELETE "/v2/$P/nodes/n1"
expect_jq .metadata.verb delete
op=$(jr .name)
expect_api 200 GET "/v2/$P/nodes/n1"
expect_jq .state DELETING
wait_op "$op"
expect_jq .response '{"@type":"type.googleapis.com/google.protobuf.Empty"}'
expect_api 404 GET "/v2/$P/nodes/n1"
expect_jq .error.status NOT_FOUND
expect_jq .error.message "Resource '$P/nodes/n1' was not found"
expect_api 404 DELETE "/v2/$P/nodes/n1"
