#!/bin/sh
# shellcheck disable=SC2016 # remote shells expand these
# Issue 16: run --max-restarts --zones on a spot queued resource: its
# node preempted (the queued resource SUSPENDED) while its own zone is
# out of capacity: the queued resource is deleted with its node, queued
# again in the first zone with its valid-until-duration (3 s: stocked
# out, it ends FAILED, code 8, and is cleaned up; the next zone is
# tried), created in the second zone, the job runs again
# there (TPUCTL_RESTART_COUNT=1) and the job's zone follows it.  Nothing
# is left in the first zone.
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"
# shellcheck source=tests/e2e/lib_fleet.sh
. "$(dirname "$0")/lib_fleet.sh"

emu_start --set fleet.key_delay_ms=200 --set tpu.preempt_notice_ms=500 \
    --set tpu.qr_provision_ms=300
fleet_api_setup
A=us-east5-a C=us-east5-c
expect_rc 0 "$TPUCTL" queued-resources create q474 --node-id q474n \
    --type v5p --topology 2x2x1 --spot --zone $A --valid-until-duration 3s

job='echo "start r$TPUCTL_RESTART_COUNT"; [ "$TPUCTL_RESTART_COUNT" -ge 1 ] || sleep 60; echo "done r$TPUCTL_RESTART_COUNT"'
"$TPUCTL" run q474 --zone $A --name qz --max-restarts 1 --zones $A,$C \
    --command "$job" >"$T/r.out" 2>"$T/r.err" &
rpid=$!
wait_for_grep "$T/r.out" 'start r0$' "" 120
# the first zone has no capacity from now on
"$EMULATOR" event --state-dir "$EMU_DIR" --zone $A stockout >/dev/null ||
    fail "stockout event"
"$EMULATOR" event --state-dir "$EMU_DIR" --zone $A preempt --node q474n ||
    fail "preempt failed"
wait_rc "$rpid" 120 run "$T/r.err"
[ "$rc" -eq 0 ] || fail "run with --zones on a queued resource: exit $rc: $(cat "$T/r.err")"
assert_grep 'job qz: attempt 1 ended: queued resource q474 is SUSPENDED; restart 1 of 1, recreating the queued resource$' "$T/r.err"
assert_grep "deleting queued resource 'q474' in $A with its nodes" "$T/r.err"
assert_grep "recreating queued resource 'q474' in $A: v5p-8, 1 slice\$" "$T/r.err"
assert_grep "queued resource 'q474' in zone $A FAILED: .*\\(code 8\\); trying the next zone\$" "$T/r.err"
assert_grep "job qz: queued resource 'q474' moved from $A to $C \\(--zones\\)\$" "$T/r.err"
assert_grep '^\[s0/w0\] start r0$' "$T/r.out"
assert_no_grep 'done r0' "$T/r.out"
assert_grep '^\[s0/w0\] done r1$' "$T/r.out"
expect_rc 0 "$TPUCTL" queued-resources list --zone $A --format 'value(name)'
assert_no_grep q474 "$T/out"
expect_rc 0 "$TPUCTL" list --zone $A --format 'value(name)'
assert_no_grep q474 "$T/out"
expect_rc 0 "$TPUCTL" queued-resources describe q474 --zone $C --format json
jq -e '.state.state == "ACTIVE" and (.spot != null)' "$T/out" >/dev/null ||
	fail "in $C: $(cat "$T/out")"
expect_rc 0 "$TPUCTL" jobs --format json
assert_grep "$C" "$T/out"
