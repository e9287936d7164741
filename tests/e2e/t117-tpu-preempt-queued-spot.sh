#!/bin/sh
# shellcheck disable=SC2016 # remote shells expand these
# Preemption of a spot queued resource's node, as on Google: the node is
# PREEMPTED and its queued resource SUSPENDED at once; the workers'
# metadata say preempted TRUE, the workers keep running for the notice
# (tpu.preempt_notice_ms), then every worker process stops and SSH is
# refused; a spot node cannot be started again, nor preempted twice.
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"
# shellcheck source=tests/e2e/lib_fleet.sh
. "$(dirname "$0")/lib_fleet.sh"

emu_start --set fleet.key_delay_ms=300 --set tpu.preempt_notice_ms=3000 \
    --set tpu.qr_accept_ms=100 --set tpu.qr_provision_ms=100
fleet_api_setup
QRS="${NODES%/nodes}/queuedResources"
parent=${NODES#/v2/}
parent=${parent%/nodes}
fleet_api POST "$QRS?queuedResourceId=q117" \
    "{\"tpu\":{\"nodeSpec\":[{\"parent\":\"$parent\",\"nodeId\":\"n117\",\"node\":{\"acceleratorType\":\"v4-16\",\"runtimeVersion\":\"tpu-ubuntu2204-base\"}}]},\"spot\":{}}" \
    >/dev/null || fail "queuedResources.create failed"
n=0
until [ "$(fleet_api GET "$QRS/q117" | jq -r .state.state)" = ACTIVE ] &&
    [ "$(fleet_api GET "$NODES/n117" | tee "$T/node.json" | jq -r .state)" = READY ]; do
	n=$((n + 1))
	[ $n -lt 300 ] || fail "queued resource not ACTIVE with a READY node"
	sleep 0.2
done
fleet_known_hosts n117 2
fleet_patch_key n117
a0=$(jq -r '.networkEndpoints[0].ipAddress' "$T/node.json")
a1=$(jq -r '.networkEndpoints[1].ipAddress' "$T/node.json")
fleet_wait_key "$a0"
fleet_wait_key "$a1"
port=${GCE_METADATA_HOST##*:}
mdw() {
	curl -s -o "$T/body" -w '%{http_code}' -H 'Metadata-Flavor: Google' \
	    "http://$1:$port/computeMetadata/v1/instance/$2"
}
code=$(mdw "$a1" preempted)
[ "$code" = 200 ] || fail "preempted: HTTP $code"
[ "$(cat "$T/body")" = FALSE ] || fail "preempted before the event: $(cat "$T/body")"

# A job left running on worker 1, detached from its SSH session.
fleet_ssh "$a1" 'nohup sleep 300 >/dev/null 2>&1 & echo $!' >"$T/job" ||
    fail "cannot start a job on worker 1"
job=$(cat "$T/job")
kill -0 "$job" 2>/dev/null || fail "job $job is not running"

expect_rc 0 "$EMULATOR" event --state-dir "$EMU_DIR" preempt --node n117
t0=$(date +%s)
fleet_api GET "$NODES/n117" >"$T/node.json"
[ "$(jq -r .state "$T/node.json")" = PREEMPTED ] || fail "node: $(cat "$T/node.json")"
fleet_api GET "$QRS/q117" >"$T/qr.json"
jq -e '.state.state == "SUSPENDED" and .state.suspendedData == {}' "$T/qr.json" \
    >/dev/null || fail "queued resource: $(cat "$T/qr.json")"
for a in "$a0" "$a1"; do
	code=$(mdw "$a" preempted)
	[ "$code" = 200 ] || fail "preempted on $a: HTTP $code"
	[ "$(cat "$T/body")" = TRUE ] || fail "preempted on $a: $(cat "$T/body")"
done
# Within the notice the workers still run.
fleet_ssh "$a0" true || fail "worker 0 stopped before the notice ran out"
kill -0 "$job" 2>/dev/null || fail "the job died before the notice ran out"

# After it, every worker is unreachable and the job is gone.
for a in "$a0" "$a1"; do
	n=0
	while fleet_ssh "$a" true 2>/dev/null; do
		n=$((n + 1))
		[ $n -lt 50 ] || fail "worker $a still up 10 s after the notice"
		sleep 0.2
	done
done
[ $(($(date +%s) - t0)) -ge 2 ] || fail "the workers stopped before the 3 s notice"
expect_rc 255 fleet_ssh "$a1" true
assert_grep 'Connection refused' "$T/err"
n=0
while kill -0 "$job" 2>/dev/null; do
	n=$((n + 1))
	[ $n -lt 50 ] || fail "job $job survived the preemption"
	sleep 0.2
done

# A preempted spot node is recreated, not restarted; nor preempted twice.
code=$(curl -s -o "$T/start.json" -w '%{http_code}' -X POST \
    -H "Authorization: Bearer $TOKEN" -H 'Content-Type: application/json' \
    --data-binary '{}' "$API$NODES/n117:start")
[ "$code" = 400 ] || fail "start of a preempted node: $code"
jq -e '.error.status == "FAILED_PRECONDITION"' "$T/start.json" >/dev/null ||
    fail "start: $(cat "$T/start.json")"
expect_rc 2 "$EMULATOR" event --state-dir "$EMU_DIR" preempt --node n117
assert_grep "only a running node is preempted" "$T/err"
# The queued resource and its node go together.
fleet_api DELETE "$QRS/q117?force=true" >/dev/null || fail "delete failed"
n=0
while fleet_api GET "$QRS/q117" >/dev/null 2>&1; do
	n=$((n + 1))
	[ $n -lt 100 ] || fail "queued resource not deleted"
	sleep 0.2
done
echo ok
