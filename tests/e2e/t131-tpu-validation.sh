#!/bin/sh
# Cloud TPU API of tpuctl-emulator: request validation with Google-like
# errors (400 INVALID_ARGUMENT, 404 for unknown zones and nodes, 401
# without a token) and the catalog routes: locations, acceleratorTypes,
# runtimeVersions, on v2 and v2alpha1.
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"

# shellcheck source=tests/e2e/lib_tpu.sh
. "$(dirname "$0")/lib_tpu.sh"

# shellcheck disable=SC2119
emu_start
tpu_setup

V4='"runtimeVersion":"tpu-vm-v4-base"'

# No token: 401.
c=$(curl -sS --noproxy '*' -o /dev/null -w '%{http_code}' "$BASE/v2/$P/nodes")
[ "$c" = 401 ] || fail "no token -> HTTP $c, want 401"

# Unknown zone: 404 naming it; a malformed path: 404.
expect_api 404 GET "/v2/projects/$PROJECT/locations/us-nowhere1-a/nodes"
expect_jq '.error.message | contains("us-nowhere1-a")' true
expect_api 404 GET "/v2/projects/$PROJECT/locations/us-nowhere1-a"
expect_api 404 GET "/v2/projects/$PROJECT/zones/$ZONE/nodes"

# nodes.create validation: every case is 400 INVALID_ARGUMENT and creates
# nothing.
bad() {
	expect_api 400 POST "/v2/$P/nodes$1" "$2"
	expect_jq .error.status INVALID_ARGUMENT
	expect_jq ".error.message | contains(\"$3\")" true
}
bad "" "{\"acceleratorType\":\"v4-8\",$V4}" "node_id"
bad "?nodeId=Bad_Name" "{\"acceleratorType\":\"v4-8\",$V4}" "RFC 1035"
bad "?nodeId=n1" "{\"acceleratorType\":\"v4-8\",$V4" ""
bad "?nodeId=n1" "{\"acceleratorType\":\"v9-8\",$V4}" "unknown TPU generation"
bad "?nodeId=n1" "{\"acceleratorType\":\"v4-7\",$V4}" "whole number of chips"
bad "?nodeId=n1" "{\"acceleratorType\":\"V4-8\",$V4}" "did you mean 'v4-8'"
bad "?nodeId=n1" '{"acceleratorType":"v5p-8","runtimeVersion":"v2-alpha-tpuv5"}' 'not available in zone \"us-central2-b\"'
bad "?nodeId=n1" "{\"acceleratorType\":\"v4-8\",\"acceleratorConfig\":{\"type\":\"V4\",\"topology\":\"4x4x4\"},$V4}" "has 64 chips"
bad "?nodeId=n1" "{\"acceleratorConfig\":{\"type\":\"V4\",\"topology\":\"2x2\"},$V4}" "3 dimensions"
bad "?nodeId=n1" '{"acceleratorType":"v4-8"}' "runtime_version"
bad "?nodeId=n1" '{"acceleratorType":"v4-8","runtimeVersion":"v2-alpha-tpuv6e"}' "not supported"
bad "?nodeId=n1" "{\"acceleratorType\":\"v4-8\",$V4,\"labels\":{\"Env\":\"x\"}}" "label key 'Env'"
bad "?nodeId=n1" "{\"acceleratorType\":\"v4-8\",$V4,\"labels\":{\"k\":\"Has Space\"}}" "Has Space"
bad "?nodeId=n1" "{\"acceleratorType\":\"v4-8\",$V4,\"metadata\":{\"bad key\":\"x\"}}" "metadata key 'bad key'"
bad "?nodeId=n1" "{\"acceleratorType\":\"v4-8\",$V4,\"schedulingConfig\":{\"spot\":true,\"reserved\":true}}" "reserved"
expect_api 200 GET "/v2/$P/nodes"
expect_jq '.nodes // [] | length' 0

# Unknown resources: 404 with Google's text.
expect_api 404 GET "/v2/$P/nodes/nope"
expect_jq .error.message "Resource '$P/nodes/nope' was not found"
expect_api 404 POST "/v2/$P/nodes/nope:stop" '{}'
expect_api 404 GET "/v2/$P/operations/operation-1-abc"

# Locations, with paging.
expect_api 200 GET "/v2/projects/$PROJECT/locations"
expect_jq '[.locations[].locationId] | index("us-central2-b") != null' true
expect_jq '[.locations[].locationId] | index("europe-west4-a") != null' true
n=$(jr '.locations | length')
expect_api 200 GET "/v2/projects/$PROJECT/locations?pageSize=5"
expect_jq '.locations | length' 5
expect_api 200 GET "/v2/projects/$PROJECT/locations/$ZONE"
expect_jq .name "$P"
expect_jq .locationId "$ZONE"
[ "$n" -ge 20 ] || fail "only $n locations"

# Accelerator types: the zone's generations only, with topologies.
expect_api 200 GET "/v2/$P/acceleratorTypes"
expect_jq '[.acceleratorTypes[].type] | index("v4-8") != null' true
expect_jq '[.acceleratorTypes[].type] | index("v5p-8")' null
expect_jq '.acceleratorTypes[] | select(.type == "v4-8") | .acceleratorConfigs' '[{"topology":"2x2x1","type":"V4"}]'
expect_jq '.acceleratorTypes[] | select(.type == "v4-8") | .name' "$P/acceleratorTypes/v4-8"
expect_api 200 GET "/v2/$P/acceleratorTypes/v4-32"
expect_jq '.acceleratorConfigs[0].topology' 2x2x4
expect_api 404 GET "/v2/$P/acceleratorTypes/v5p-8"
expect_api 200 GET "/v2/projects/$PROJECT/locations/europe-west4-b/acceleratorTypes/v5litepod-16"
expect_jq '.acceleratorConfigs[0]' '{"topology":"4x4","type":"V5LITE_POD"}'

# Runtime versions.
expect_api 200 GET "/v2/$P/runtimeVersions"
expect_jq '[.runtimeVersions[].version] | index("tpu-vm-v4-base") != null' true
expect_jq '[.runtimeVersions[].version] | index("v2-alpha-tpuv5")' null
expect_api 200 GET "/v2/$P/runtimeVersions/tpu-ubuntu2204-base"
expect_jq .name "$P/runtimeVersions/tpu-ubuntu2204-base"
expect_jq .version tpu-ubuntu2204-base
expect_api 404 GET "/v2/$P/runtimeVersions/no-such-runtime"

# v2alpha1 serves the same resources, with its own apiVersion.
expect_api 200 POST "/v2alpha1/$P/nodes?nodeId=a1" "{\"acceleratorType\":\"v4-8\",$V4}"
expect_jq .metadata.apiVersion v2alpha1
wait_op "$(jr .name)"
expect_jq '.response["@type"]' type.googleapis.com/google.cloud.tpu.v2alpha1.Node
expect_api 200 GET "/v2alpha1/$P/nodes/a1"
expect_jq .apiVersion V2_ALPHA1
expect_api 200 GET "/v2alpha1/$P/reservations"
expect_api 200 DELETE "/v2alpha1/$P/nodes/a1"
wait_op "$(jr .name)"
