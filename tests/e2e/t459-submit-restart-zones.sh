#!/bin/sh
# shellcheck disable=SC2016 # remote shells expand these
# Issue 16: submit --wait with max-restarts and slice.zones [A, C]: the
# spot slice is preempted while A is out of capacity.  The queued
# resource is deleted, queued again in A (its zone), ends FAILED there
# (code 8, its valid-until-duration of 3 s) and is deleted, then queued
# in C, where the job runs again (TPUCTL_RESTART_COUNT=1).  Every later
# step uses C: the follow, delete-after (nothing left in A or C), and
# the job's record (jobs shows C; logs reads it).
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"
# shellcheck source=tests/e2e/lib_job.sh
. "$(dirname "$0")/lib_job.sh"
# shellcheck source=tests/e2e/lib_fleet.sh
. "$(dirname "$0")/lib_fleet.sh"

emu_start --set fleet.key_delay_ms=200 --set tpu.preempt_notice_ms=500 \
    --set tpu.qr_provision_ms=300
fleet_api_setup
A=us-east5-a C=us-east5-c
cat >"$T/r.yaml" <<END
name: sub459
slice:
  type: v5p
  topology: 2x2x1
  spot: true
  valid-until-duration: 3s
  zones: [$A, $C]
command: 'echo "start r\$TPUCTL_RESTART_COUNT"; [ "\$TPUCTL_RESTART_COUNT" -ge 1 ] || sleep 60; echo "done r\$TPUCTL_RESTART_COUNT"'
max-restarts: 1
delete-after: true
END
"$TPUCTL" submit --wait "$T/r.yaml" >"$T/s.out" 2>"$T/s.err" &
spid=$!
n=0
until grep -q 'start r0$' "$T/s.out" 2>/dev/null; do
	n=$((n + 1))
	[ $n -lt 600 ] || fail "attempt 0 never started: $(cat "$T/s.err")"
	sleep 0.2
done
# the first zone has no capacity from now on
"$EMULATOR" event --state-dir "$EMU_DIR" --zone $A stockout >/dev/null ||
    fail "stockout event"
"$EMULATOR" event --state-dir "$EMU_DIR" --zone $A preempt --node sub459 ||
    fail "preempt failed"
wait_rc "$spid" 120 submit "$T/s.err"
[ "$rc" -eq 0 ] || fail "submit --wait, restarted into $C: exit $rc: $(cat "$T/s.err")"
assert_grep 'job sub459: attempt 1 ended: queued resource sub459 is SUSPENDED; restart 1 of 1, recreating the queued resource$' "$T/s.err"
assert_grep "job sub459: queued resource 'sub459' in $A FAILED: .*\\(code 8\\); trying $C \\(slice.zones\\)\$" "$T/s.err"
assert_grep "deleting queued resource 'sub459' \\(delete-after\\)" "$T/s.err"
assert_grep '^\[w0\] start r0$' "$T/s.out"
assert_no_grep 'done r0' "$T/s.out"
assert_grep '^\[w0\] done r1$' "$T/s.out"
for z in $A $C; do
	expect_rc 0 "$TPUCTL" queued-resources list --zone "$z" --format 'value(name)'
	assert_no_grep sub459 "$T/out"
	expect_rc 0 "$TPUCTL" list --zone "$z" --format 'value(name)'
	assert_no_grep sub459 "$T/out"
done
# the queued resource was last created in C, and deleted there
emu_requests | jq -e -s --arg c "$C" '[.[] | select(.method == "DELETE" and (.path | test("/locations/" + $c + "/queuedResources/sub459")))] | length >= 1' >/dev/null ||
	fail "no delete in $C: $(emu_requests | jq -c 'select(.method != "GET") | [.method, .path]')"
expect_rc 0 "$TPUCTL" jobs --format json
jq -e --arg c "$C" '.[] | select(.name == "sub459") | .zone == $c' "$T/out" >/dev/null ||
	fail "the job's record is not in $C: $(cat "$T/out")"
expect_rc 0 "$TPUCTL" logs sub459
assert_grep '^\[w0\] done r1$' "$T/out"
