#!/bin/sh
# Cloud TPU API of tpuctl-emulator: node events.  A zone stockout fails
# creations there with code 8 until cleared; preempting a spot node
# makes it PREEMPTED (and is refused for on-demand nodes); maintenance
# sets upcomingMaintenance; worker-down/up and rekey reach the fleet.
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"

# shellcheck source=tests/e2e/lib_tpu.sh
. "$(dirname "$0")/lib_tpu.sh"

# shellcheck disable=SC2119
emu_start
tpu_setup

V4='{"acceleratorType":"v4-8","runtimeVersion":"tpu-vm-v4-base"}'

# Stockout.
emu_event '{"event":"stockout","zone":"us-central2-b"}'
[ "$CODE" = 200 ] || fail "stockout event -> HTTP $CODE"
create_node s1 "$V4"
expect_jq .error.code 8
expect_jq '.error.message | contains("no more capacity in the zone \"us-central2-b\"")' true
expect_api 404 GET "/v2/$P/nodes/s1"
# Other zones are not affected.
expect_api 200 POST "/v2/projects/$PROJECT/locations/us-central1-a/nodes?nodeId=o1" \
    '{"acceleratorType":"v3-8","runtimeVersion":"tpu-ubuntu2204-base"}'
wait_op "$(jr .name)"
expect_jq .response.state READY
emu_event '{"event":"stockout","zone":"us-central2-b","clear":true}'
[ "$CODE" = 200 ] || fail "stockout clear -> HTTP $CODE"
create_node s1 "$V4"
expect_jq .response.state READY
emu_event '{"event":"stockout","zone":"Not A Zone"}'
[ "$CODE" -ge 400 ] || fail "bad zone accepted"

# Preemption: refused for an on-demand node, PREEMPTED for a spot one.
emu_event "{\"event\":\"preempt\",\"node\":\"$P/nodes/s1\"}"
[ "$CODE" -ge 400 ] || fail "preempted an on-demand node"
expect_api 200 GET "/v2/$P/nodes/s1"
expect_jq .state READY
create_node sp1 '{"acceleratorType":"v4-8","runtimeVersion":"tpu-vm-v4-base","schedulingConfig":{"spot":true}}'
expect_jq .response.schedulingConfig '{"spot":true}'
emu_event "{\"event\":\"preempt\",\"node\":\"$P/nodes/sp1\"}"
[ "$CODE" = 200 ] || fail "preempt event -> HTTP $CODE"
expect_api 200 GET "/v2/$P/nodes/sp1"
expect_jq .state PREEMPTED
expect_api 400 POST "/v2/$P/nodes/sp1:start" '{}'
expect_jq .error.status FAILED_PRECONDITION
create_node pe1 '{"acceleratorType":"v4-8","runtimeVersion":"tpu-vm-v4-base","schedulingConfig":{"preemptible":true}}'
# A short node name works too.
emu_event '{"event":"preempt","node":"pe1","zone":"us-central2-b"}'
[ "$CODE" = 200 ] || fail "preempt by short name -> HTTP $CODE"
expect_api 200 GET "/v2/$P/nodes/pe1"
expect_jq .state PREEMPTED
# A preempted node can still be deleted.
expect_api 200 DELETE "/v2/$P/nodes/sp1"
wait_op "$(jr .name)"
expect_api 404 GET "/v2/$P/nodes/sp1"

# Maintenance.
emu_event "{\"event\":\"maintenance\",\"node\":\"$P/nodes/s1\"}"
[ "$CODE" = 200 ] || fail "maintenance event -> HTTP $CODE"
expect_api 200 GET "/v2/$P/nodes/s1"
expect_jq .upcomingMaintenance.maintenanceStatus PENDING
expect_jq .upcomingMaintenance.type SCHEDULED
expect_jq '.upcomingMaintenance.windowStartTime | test("Z$")' true
emu_event "{\"event\":\"maintenance\",\"node\":\"$P/nodes/s1\",\"clear\":true}"
expect_api 200 GET "/v2/$P/nodes/s1"
expect_jq 'has("upcomingMaintenance")' false

# Worker faults.  rekey simulates a man in the middle: the worker's sshd
# serves a new host key while the guest attributes keep the published one.
expect_api 200 POST "/v2/$P/nodes/s1:getGuestAttributes" '{}'
k0=$(jr '.guestAttributes[0].queryValue.items[0].value')
expect_api 200 GET "/v2/$P/nodes/s1"
ip=$(jr '.networkEndpoints[0].ipAddress')
served() {
	ssh-keyscan -T 2 -p "$TPUCTL_SSH_PORT" -t ed25519 "$ip" 2>/dev/null |
	    awk '$2 == "ssh-ed25519" { print $3 }'
}
[ "$(served)" = "$k0" ] || fail "worker 0 does not serve its published key"
emu_event "{\"event\":\"rekey\",\"node\":\"$P/nodes/s1\",\"worker\":0}"
[ "$CODE" = 200 ] || fail "rekey -> HTTP $CODE"
i=0
while :; do
	k1=$(served)
	[ -n "$k1" ] && [ "$k1" != "$k0" ] && break
	i=$((i + 1))
	[ $i -lt 150 ] || fail "worker 0 still serves its old host key"
	sleep 0.2
done
expect_api 200 POST "/v2/$P/nodes/s1:getGuestAttributes" '{}'
expect_jq '.guestAttributes[0].queryValue.items[0].value' "$k0"
emu_event "{\"event\":\"worker-down\",\"node\":\"$P/nodes/s1\",\"worker\":0}"
[ "$CODE" = 200 ] || fail "worker-down -> HTTP $CODE"
emu_event "{\"event\":\"worker-up\",\"node\":\"$P/nodes/s1\",\"worker\":0}"
[ "$CODE" = 200 ] || fail "worker-up -> HTTP $CODE"
emu_event "{\"event\":\"worker-down\",\"node\":\"$P/nodes/s1\",\"worker\":1}"
[ "$CODE" -ge 400 ] || fail "worker 1 of a 1-worker node accepted"
emu_event '{"event":"explode","node":"s1"}'
[ "$CODE" -ge 400 ] || fail "unknown event accepted"
emu_event '{"event":"preempt","node":"nope"}'
[ "$CODE" -ge 400 ] || fail "event on a missing node accepted"
