#!/bin/sh
# Node health follows the workers: a worker whose sshd is down (the
# worker-down event, or the sshd killed behind the emulator's back) makes
# a READY node TIMEOUT with a healthDescription, worker-up makes it
# HEALTHY again; ongoing maintenance is UNHEALTHY_MAINTENANCE; symptom
# events fill Node.symptoms (createTime, details, symptomType, workerId),
# integer-encoded with enum-encoding=int.
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"

# shellcheck source=tests/e2e/lib_tpu.sh
. "$(dirname "$0")/lib_tpu.sh"

emu_start --set tpu.create_ms=200
tpu_setup
N="$P/nodes/h1"

create_node h1 '{"acceleratorType":"v4-16","runtimeVersion":"tpu-ubuntu2204-base"}'
expect_api 200 GET "/v2/$N"
expect_jq .state READY
expect_jq .health HEALTHY
expect_jq 'has("symptoms")' false

emu_event "{\"event\":\"worker-down\",\"node\":\"$N\",\"worker\":1}"
[ "$CODE" = 200 ] || fail "worker-down -> HTTP $CODE: $(cat "$T/resp")"
wait_state "/v2/$N" TIMEOUT .health
expect_jq .state READY
expect_jq '.healthDescription | contains("unresponsive")' true
expect_api 200 GET "/v2/$P/nodes"
expect_jq '.nodes[0].health' TIMEOUT
emu_event "{\"event\":\"worker-up\",\"node\":\"$N\",\"worker\":1}"
[ "$CODE" = 200 ] || fail "worker-up -> HTTP $CODE"
wait_state "/v2/$N" HEALTHY .health
expect_jq 'has("healthDescription")' false

# An sshd killed behind the emulator's back (the monitor notices it).
expect_api 200 GET "/v2/$N"
addr=$(jr '.networkEndpoints[0].ipAddress')
port=${TPUCTL_SSH_PORT:?}
pid=$(ss -Hltnp "src $addr:$port" 2>/dev/null | sed -n 's/.*pid=\([0-9]*\).*/\1/p' | head -1)
if [ -n "$pid" ]; then
	kill "$pid"
	wait_state "/v2/$N" TIMEOUT .health
	emu_event "{\"event\":\"worker-up\",\"node\":\"$N\",\"worker\":0}"
	wait_state "/v2/$N" HEALTHY .health
else
	echo "note: no sshd pid visible for $addr:$port, kill case not run" >&2
fi

# Ongoing maintenance.
emu_event "{\"event\":\"maintenance\",\"node\":\"$N\",\"ongoing\":true}"
[ "$CODE" = 200 ] || fail "maintenance ongoing -> HTTP $CODE"
expect_api 200 GET "/v2/$N"
expect_jq .health UNHEALTHY_MAINTENANCE
emu_event "{\"event\":\"maintenance\",\"node\":\"$N\",\"clear\":true}"
expect_api 200 GET "/v2/$N"
expect_jq .health HEALTHY

# Symptoms.
emu_event "{\"event\":\"symptom\",\"node\":\"$N\",\"worker\":1,\"symptomType\":\"OUT_OF_MEMORY\",\"details\":\"oom on worker 1\"}"
[ "$CODE" = 200 ] || fail "symptom -> HTTP $CODE: $(cat "$T/resp")"
expect_api 200 GET "/v2/$N"
expect_jq '.symptoms | length' 1
expect_jq '.symptoms[0].symptomType' OUT_OF_MEMORY
expect_jq '.symptoms[0].workerId' 1
expect_jq '.symptoms[0].details' "oom on worker 1"
jr '.symptoms[0].createTime' | grep -Eq '^20[0-9]{2}-[0-9]{2}-[0-9]{2}T' ||
    fail "createTime: $(cat "$T/resp")"
expect_api 200 GET "/v2/$N?%24alt=json%3Benum-encoding%3Dint"
expect_jq '.symptoms[0].symptomType' 2
for bad in '"symptomType":"NOPE","worker":0' '"symptomType":"LOW_MEMORY","worker":2' \
    '"worker":0'; do
	emu_event "{\"event\":\"symptom\",\"node\":\"$N\",$bad}"
	[ "$CODE" -ge 400 ] || fail "symptom {$bad} accepted"
done
emu_event "{\"event\":\"symptom\",\"node\":\"$N\",\"clear\":true}"
expect_api 200 GET "/v2/$N"
expect_jq 'has("symptoms")' false

# The same events through the command line, and terminate (for gc).
ev() {
	"$EMULATOR" event --state-dir "$EMU_DIR" "$@"
}
ev symptom --node h1 --zone "$ZONE" --worker 0 --type HBM_OUT_OF_MEMORY ||
    fail "event symptom"
ev maintenance --ongoing --node h1 --zone "$ZONE" || fail "event maintenance --ongoing"
expect_api 200 GET "/v2/$N"
expect_jq '.symptoms[0].symptomType' HBM_OUT_OF_MEMORY
expect_jq .health UNHEALTHY_MAINTENANCE
ev maintenance --clear --node h1 --zone "$ZONE" || fail "event maintenance --clear"
ev symptom --clear --node h1 --zone "$ZONE" || fail "event symptom --clear"
expect_api 200 GET "/v2/$N"
expect_jq .health HEALTHY
expect_jq 'has("symptoms")' false
expect_rc 2 ev explode --node h1
assert_grep 'terminate' "$T/err"
expect_rc 2 ev symptom --node h1 --zone "$ZONE" --worker 0 --type NOPE
assert_grep 'needs "symptomType"' "$T/err"
ev terminate --node h1 --zone "$ZONE" || fail "event terminate"
expect_api 200 GET "/v2/$N"
expect_jq .state TERMINATED
expect_api 200 DELETE "/v2/$N"
wait_op "$(jr .name)"
expect_api 404 GET "/v2/$N"
