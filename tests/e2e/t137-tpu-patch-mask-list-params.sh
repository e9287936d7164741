#!/bin/sh
# nodes.patch takes exactly the updateMask fields tpu.v2.json documents
# (description, tags, labels, metadata,
# network_config.enable_external_ips, snake_case or lowerCamelCase) and
# refuses any other path with 400; nodes.list and queuedResources.list
# refuse filter/orderBy (parameters the API does not have) with the
# API's 400 instead of ignoring them.
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"

# shellcheck source=tests/e2e/lib_tpu.sh
. "$(dirname "$0")/lib_tpu.sh"

emu_start --set tpu.create_ms=200 --set tpu.update_ms=100
tpu_setup

create_node p1 '{"acceleratorType":"v4-8","runtimeVersion":"tpu-ubuntu2204-base",
  "tags":["a"],"labels":{"k":"v"}}'
expect_api 200 GET "/v2/$P/nodes/p1"
expect_jq '.networkConfig.enableExternalIps // false' false
addr=$(jr '.networkEndpoints[0].ipAddress')

# network_config.enable_external_ips (snake_case mask).
expect_api 200 PATCH "/v2/$P/nodes/p1?updateMask=network_config.enable_external_ips" \
    '{"networkConfig":{"enableExternalIps":true}}'
wait_op "$(jr .name)"
expect_api 200 GET "/v2/$P/nodes/p1"
expect_jq .networkConfig.enableExternalIps true
expect_jq '.networkConfig.network | endswith("/global/networks/default")' true
expect_jq '.labels.k' v
expect_jq '.networkEndpoints[0].accessConfig.externalIp' "$addr"

# lowerCamelCase path and tags together; the field mask clears an
# absent field (tags) and turns the bool back off.
expect_api 200 PATCH "/v2/$P/nodes/p1?updateMask=networkConfig.enableExternalIps,tags" '{}'
wait_op "$(jr .name)"
expect_api 200 GET "/v2/$P/nodes/p1"
expect_jq '.networkConfig.enableExternalIps // false' false
expect_jq 'has("tags")' false
expect_jq '.networkEndpoints[0].accessConfig | has("externalIp")' false
expect_api 200 PATCH "/v2/$P/nodes/p1?updateMask=tags" '{"tags":["x","y"]}'
wait_op "$(jr .name)"
expect_jq '.response.tags | join(",")' x,y

# Anything else is refused and changes nothing.
for m in networkConfig schedulingConfig acceleratorType runtimeVersion \
    network_config.network metadat 'labels,shieldedInstanceConfig'; do
	expect_api 400 PATCH "/v2/$P/nodes/p1?updateMask=$m" '{"labels":{"z":"z"}}'
	expect_jq .error.status INVALID_ARGUMENT
	expect_jq .error.code 400
done
expect_api 400 PATCH "/v2/$P/nodes/p1" '{"labels":{"z":"z"}}'
expect_api 400 PATCH "/v2/$P/nodes/p1?updateMask=network_config.enable_external_ips" \
    '{"networkConfig":{"enableExternalIps":"yes"}}'
expect_api 200 GET "/v2/$P/nodes/p1"
expect_jq '.labels.k' v
expect_jq '.labels | has("z")' false

# Metadata patches still reach the node (ssh-key propagation path).
expect_api 200 PATCH "/v2/$P/nodes/p1?updateMask=metadata" \
    '{"metadata":{"ssh-keys":"bob:ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIExample bob"}}'
wait_op "$(jr .name)"
expect_api 200 GET "/v2/$P/nodes/p1"
expect_jq '.metadata["ssh-keys"] | startswith("bob:")' true

# List parameters the API does not have.
for q in 'filter=state%3DREADY' 'orderBy=name' 'filter='; do
	expect_api 400 GET "/v2/$P/nodes?$q"
	expect_jq .error.status INVALID_ARGUMENT
	expect_jq '.error.message | contains("Cannot bind query parameter")' true
	expect_api 400 GET "/v2/$P/queuedResources?$q"
	expect_jq '.error.message | contains("Cannot bind query parameter")' true
done
expect_api 200 GET "/v2/$P/nodes?pageSize=1"
expect_jq '.nodes | length' 1
expect_api 200 GET "/v2/$P/queuedResources?pageSize=1"
