#!/bin/sh
# shellcheck disable=SC2016 # remote shells expand these
# Issue 16: run --max-restarts on a queued resource whose node id is the
# queued resource's own id (as submit makes them): the name resolves to
# the node, but the node's queuedResource field says what it is.  Its
# preemption (the queued resource SUSPENDED) is recovered as the queued
# resource: deleted with its node, queued again with the same spec, the
# job reruns (TPUCTL_RESTART_COUNT=1); no SUSPENDED queued resource is
# left holding quota, and no node made outside the queued resource.
# With --zones A,C and A stocked out at the recreation: FAILED there
# (code 8, its valid-until-duration), queued in C, where the job, its
# record (jobs, logs without --zone) and the queued resource are.
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
expect_rc 0 "$TPUCTL" queued-resources create q460 --node-id q460 \
    --type v5p --topology 2x2x1 --spot --zone $A --valid-until-duration 3s

job='echo "start r$TPUCTL_RESTART_COUNT"; [ "$TPUCTL_RESTART_COUNT" -ge 1 ] || sleep 60; echo "done r$TPUCTL_RESTART_COUNT"'
"$TPUCTL" run q460 --zone $A --name same --max-restarts 1 --zones $A,$C \
    --command "$job" >"$T/r.out" 2>"$T/r.err" &
rpid=$!
n=0
until grep -q 'start r0$' "$T/r.out" 2>/dev/null; do
	n=$((n + 1))
	[ $n -lt 600 ] || fail "attempt 0 never started: $(cat "$T/r.err")"
	sleep 0.2
done
"$EMULATOR" event --state-dir "$EMU_DIR" --zone $A stockout >/dev/null ||
    fail "stockout event"
job_preempt_when "$T/r.out" 0 q460 $A
wait_rc "$rpid" 120 run "$T/r.err"
[ "$rc" -eq 0 ] || fail "run --max-restarts on q460: exit $rc: $(cat "$T/r.err")"
assert_grep 'job same: attempt 1 ended: queued resource q460 is SUSPENDED; restart 1 of 1, recreating the queued resource$' "$T/r.err"
assert_grep "deleting queued resource 'q460' in .* with its nodes" "$T/r.err"
assert_grep "recreating queued resource 'q460' in $A: v5p-8, 1 slice\$" "$T/r.err"
assert_no_grep "recreating node 'q460'" "$T/r.err"
assert_grep "queued resource 'q460' in zone $A FAILED: .*\\(code 8\\); trying the next zone\$" "$T/r.err"
assert_grep "job same: queued resource 'q460' moved from $A to $C \\(--zones\\)\$" "$T/r.err"
assert_grep '^\[w0\] start r0$' "$T/r.out"
assert_no_grep 'done r0' "$T/r.out"
assert_grep '^\[w0\] done r1$' "$T/r.out"
# one queued resource, ACTIVE in C, and its node is the queued resource's
expect_rc 0 "$TPUCTL" queued-resources list --zone $A --format 'value(name)'
assert_no_grep q460 "$T/out"
expect_rc 0 "$TPUCTL" list --zone $A --format 'value(name)'
assert_no_grep q460 "$T/out"
expect_rc 0 "$TPUCTL" queued-resources list --zone $C --format json
jq -e 'length == 1 and .[0].state.state == "ACTIVE"' "$T/out" >/dev/null ||
	fail "queued resources in $C: $(cat "$T/out")"
expect_rc 0 "$TPUCTL" jobs --format json
jq -e --arg c "$C" '.[] | select(.name == "same") | .zone == $c' "$T/out" >/dev/null ||
	fail "the job's record is not in $C: $(cat "$T/out")"
expect_rc 0 "$TPUCTL" logs same
assert_grep '^\[w0\] done r1$' "$T/out"
expect_rc 0 "$TPUCTL" describe q460 --zone $C --format json
jq -e '(.queuedResource // "") | endswith("/queuedResources/q460")' \
    "$T/out" >/dev/null || fail "node q460 is not the queued resource's: $(cat "$T/out")"
expect_rc 0 "$TPUCTL" queued-resources delete --force --zone $C q460
