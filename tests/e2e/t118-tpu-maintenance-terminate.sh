#!/bin/sh
# Host maintenance and termination, as Google's "View maintenance
# notifications" and the Node.state enum (tpu.v2.json) describe them:
# "event maintenance" announces SCHEDULED maintenance seven days ahead
# (PENDING, canReschedule true); --ongoing makes it ONGOING
# (canReschedule false), the node UNHEALTHY_MAINTENANCE and the workers'
# maintenance-event TERMINATE_ON_HOST_MAINTENANCE; --clear ends both.
# "event terminate" makes any node TERMINATED ("due to maintenance or the
# end of its life cycle") and stops its workers at once; a terminated
# node is neither started nor stopped, only deleted.
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"

# shellcheck source=tests/e2e/lib_tpu.sh
. "$(dirname "$0")/lib_tpu.sh"

# shellcheck disable=SC2119
emu_start
tpu_setup
port=${GCE_METADATA_HOST##*:}
mdw() {
	curl -s -o "$T/body" -w '%{http_code}' -H 'Metadata-Flavor: Google' \
	    "http://$1:$port/computeMetadata/v1/instance/$2"
}
# up ADDR: 0 when the worker's sshd accepts connections.
up() {
	python3 -c '
import socket, sys
s = socket.socket()
s.settimeout(2)
sys.exit(s.connect_ex((sys.argv[1], int(sys.argv[2]))) != 0)
' "$1" "$TPUCTL_SSH_PORT"
}

create_node m1 '{"acceleratorType":"v4-8","runtimeVersion":"tpu-vm-v4-base"}'
expect_api 200 GET "/v2/$P/nodes/m1"
w0=$(jr '.networkEndpoints[0].ipAddress')

now=$(date +%s)
expect_rc 0 "$EMULATOR" event --state-dir "$EMU_DIR" maintenance --node m1
expect_api 200 GET "/v2/$P/nodes/m1"
expect_jq .upcomingMaintenance.maintenanceStatus PENDING
expect_jq .upcomingMaintenance.canReschedule true
expect_jq .upcomingMaintenance.type SCHEDULED
expect_jq .health HEALTHY
start=$(jr '.upcomingMaintenance.windowStartTime | sub("\\.[0-9]+Z$"; "Z") | fromdateiso8601')
ahead=$((start - now))
if [ $ahead -lt $((7 * 86400 - 60)) ] || [ $ahead -gt $((7 * 86400 + 60)) ]; then
	fail "windowStartTime $(jr .upcomingMaintenance.windowStartTime) is not seven days ahead"
fi
[ "$(mdw "$w0" maintenance-event)" = 200 ] || fail "maintenance-event"
[ "$(cat "$T/body")" = NONE ] || fail "maintenance-event while pending: $(cat "$T/body")"

expect_rc 0 "$EMULATOR" event --state-dir "$EMU_DIR" maintenance --ongoing --node m1
expect_api 200 GET "/v2/$P/nodes/m1"
expect_jq .upcomingMaintenance.maintenanceStatus ONGOING
expect_jq .upcomingMaintenance.canReschedule false
expect_jq .health UNHEALTHY_MAINTENANCE
mdw "$w0" maintenance-event >/dev/null
[ "$(cat "$T/body")" = TERMINATE_ON_HOST_MAINTENANCE ] ||
    fail "maintenance-event while ongoing: $(cat "$T/body")"

expect_rc 0 "$EMULATOR" event --state-dir "$EMU_DIR" maintenance --clear --node m1
expect_api 200 GET "/v2/$P/nodes/m1"
expect_jq 'has("upcomingMaintenance")' false
expect_jq .health HEALTHY
mdw "$w0" maintenance-event >/dev/null
[ "$(cat "$T/body")" = NONE ] || fail "maintenance-event after clear: $(cat "$T/body")"

# terminate: an on-demand node too; the workers stop at once.
up "$w0" || fail "worker 0 is not up before terminate"
expect_rc 0 "$EMULATOR" event --state-dir "$EMU_DIR" terminate --node m1
expect_api 200 GET "/v2/$P/nodes/m1"
expect_jq .state TERMINATED
n=0
while up "$w0"; do
	n=$((n + 1))
	[ $n -lt 25 ] || fail "worker 0 still up 5 s after terminate"
	sleep 0.2
done
expect_api 400 POST "/v2/$P/nodes/m1:start" '{}'
expect_jq .error.status FAILED_PRECONDITION
expect_api 400 POST "/v2/$P/nodes/m1:stop" '{}'
expect_jq .error.status FAILED_PRECONDITION
expect_api 200 DELETE "/v2/$P/nodes/m1"
wait_op "$(jr .name)"
expect_api 404 GET "/v2/$P/nodes/m1"
echo ok
