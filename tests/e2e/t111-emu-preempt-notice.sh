#!/bin/sh
# shellcheck disable=SC2016 # remote shells expand these
# The preemption notice through the metadata server: on a spot v4-16, a
# wait_for_change request for instance/preempted started on each worker
# (over SSH, to its own $GCE_METADATA_IP) before "event preempt" is
# answered TRUE at once, while the worker is still up; the workers are
# stopped tpu.preempt_notice_ms later.  maintenance-event waiters see
# TERMINATE_ON_HOST_MAINTENANCE for an ongoing maintenance and NONE once
# cleared; last_etag and timeout_sec behave as on Google (a stale ETag
# answers at once, the current one waits until the timeout).
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"
# shellcheck source=tests/e2e/lib_fleet.sh
. "$(dirname "$0")/lib_fleet.sh"

emu_start --set fleet.key_delay_ms=300 --set tpu.preempt_notice_ms=8000
fleet_api_setup
fleet_api POST "$NODES?nodeId=t111" \
    '{"acceleratorType":"v4-16","runtimeVersion":"tpu-ubuntu2204-base","schedulingConfig":{"spot":true}}' \
    >/dev/null || fail "nodes.create failed"
n=0
until [ "$(fleet_api GET "$NODES/t111" | tee "$T/node.json" | jq -r .state)" = READY ]; do
	n=$((n + 1))
	[ $n -lt 300 ] || fail "node not READY: $(cat "$T/node.json")"
	sleep 0.2
done
fleet_known_hosts t111 2
fleet_patch_key t111
a0=$(jq -r '.networkEndpoints[0].ipAddress' "$T/node.json")
a1=$(jq -r '.networkEndpoints[1].ipAddress' "$T/node.json")
fleet_wait_key "$a0"
fleet_wait_key "$a1"
port=${GCE_METADATA_HOST##*:}
event() {
	code=$(curl -s -o "$T/ev" -w '%{http_code}' -X POST \
	    -H 'Content-Type: application/json' --data-binary "$1" \
	    "$TPUCTL_EMULATOR_URL/_emulator/events")
	[ "$code" = 200 ] || fail "event $1 gave $code: $(cat "$T/ev")"
}
# mdw ADDR PATH: status, body in $T/body, headers in $T/hdr (host side).
mdw() {
	curl -s -D "$T/hdr" -o "$T/body" -w '%{http_code}' \
	    -H 'Metadata-Flavor: Google' "http://$1:$port/computeMetadata/v1/instance/$2"
}
etag() { sed -n 's/^ETag: \([0-9a-f]*\).*/\1/p' "$T/hdr"; }

# ETags: a stale one answers at once, the current one waits.
[ "$(mdw "$a0" preempted)" = 200 ] || fail "preempted"
[ "$(cat "$T/body")" = FALSE ] || fail "preempted before: $(cat "$T/body")"
e0=$(etag)
[ -n "$e0" ] || fail "no ETag: $(cat "$T/hdr")"
start=$(date +%s)
mdw "$a0" "preempted?wait_for_change=true&last_etag=ffffffffffffffff" >/dev/null
[ $(($(date +%s) - start)) -le 1 ] || fail "a stale last_etag waited"
mdw "$a0" "preempted?wait_for_change=true&last_etag=$e0&timeout_sec=2" >/dev/null
[ $(($(date +%s) - start)) -ge 2 ] || fail "the current last_etag did not wait"
[ "$(cat "$T/body")" = FALSE ] || fail "timed-out wait: $(cat "$T/body")"

# maintenance-event: an ongoing maintenance wakes a waiter, a clear too.
mdw "$a1" "maintenance-event?wait_for_change=true&timeout_sec=30" >/dev/null &
mw=$!
sleep 1
kill -0 $mw 2>/dev/null || fail "the maintenance-event waiter did not wait"
event '{"event":"maintenance","node":"t111","zone":"us-central2-b","ongoing":true}'
wait $mw
[ "$(cat "$T/body")" = TERMINATE_ON_HOST_MAINTENANCE ] ||
    fail "maintenance-event: $(cat "$T/body")"
e1=$(etag)
mdw "$a1" "maintenance-event?wait_for_change=true&last_etag=$e1&timeout_sec=30" >/dev/null &
mw=$!
sleep 1
event '{"event":"maintenance","node":"t111","zone":"us-central2-b","clear":true}'
wait $mw
[ "$(cat "$T/body")" = NONE ] || fail "maintenance-event after clear: $(cat "$T/body")"

# The notice: waiters on both workers, started before the event, get
# TRUE while their worker still runs; a worker session stays up until the
# notice ends.
for a in "$a0" "$a1"; do
	fleet_ssh "$a" 'curl -s -H "Metadata-Flavor: Google" "http://$GCE_METADATA_IP/computeMetadata/v1/instance/preempted?wait_for_change=true&timeout_sec=60"; echo " at $(date +%s.%N)"' \
	    >"$T/wait-$a" 2>&1 &
	eval "pid_$(echo "$a" | tr . _)=\$!"
done
fleet_ssh "$a0" 'sleep 30; echo survived' >"$T/long" 2>&1 &
long=$!
sleep 2
for a in "$a0" "$a1"; do
	[ ! -s "$T/wait-$a" ] || fail "waiter on $a answered early: $(cat "$T/wait-$a")"
done
t_event=$(date +%s.%N)
event '{"event":"preempt","node":"t111","zone":"us-central2-b"}'
for a in "$a0" "$a1"; do
	eval "wait \$pid_$(echo "$a" | tr . _)" || fail "waiter on $a failed: $(cat "$T/wait-$a")"
	grep -q '^TRUE at ' "$T/wait-$a" || fail "waiter on $a: $(cat "$T/wait-$a")"
	t=$(sed -n 's/^TRUE at //p' "$T/wait-$a")
	awk -v a="$t" -v b="$t_event" 'BEGIN { exit !(a - b < 3) }' ||
	    fail "the notice on $a came $t, the event at $t_event"
done
[ "$(fleet_api GET "$NODES/t111" | jq -r .state)" = PREEMPTED ] || fail "not PREEMPTED"
# Within the notice, a worker still takes SSH sessions.
fleet_ssh "$a1" true || fail "worker 1 stopped before the notice ran out"
# Then the workers stop: the long session dies, SSH is refused.
n=0
while fleet_ssh "$a1" true 2>/dev/null; do
	n=$((n + 1))
	[ $n -lt 50 ] || fail "worker 1 still up 10 s after the notice"
	sleep 0.2
done
wait $long || true
assert_no_grep survived "$T/long"
# The metadata server still says so.
mdw "$a0" preempted >/dev/null
[ "$(cat "$T/body")" = TRUE ] || fail "preempted after: $(cat "$T/body")"
