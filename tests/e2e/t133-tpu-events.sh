#!/bin/sh
# Cloud TPU API of tpuctl-emulator: node events.  A zone stockout fails
# creations there with code 8 until cleared; preempting a spot node
# makes it PREEMPTED (and is refused for on-demand nodes); maintenance
# sets upcomingMaintenance; worker-down/up and rekey reach the fleet.
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
