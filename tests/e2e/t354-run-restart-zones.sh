#!/bin/sh
# shellcheck disable=SC2016 # remote shells expand these
# run --max-restarts --zones: a spot node preempted while its zone is out
# of capacity is recreated in the next zone of --zones (the stockout of
# the first is logged), the job goes on there, and a later restart looks
# for the node in its new zone.  Every zone out of capacity: exit 7, with
# no node left holding quota.  --zones without --max-restarts or with a
# bad zone: exit 2, nothing sent.
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"
# shellcheck source=tests/e2e/lib_job.sh
. "$(dirname "$0")/lib_job.sh"
# shellcheck source=tests/e2e/lib_fleet.sh
. "$(dirname "$0")/lib_fleet.sh"

emu_start --set fleet.key_delay_ms=200 --set tpu.preempt_notice_ms=500
fleet_api_setup
A=us-east5-a C=us-east5-c
expect_rc 0 "$TPUCTL" create z354 --type v5p --topology 2x2x1 --spot --zone $A

before=$(emu_requests | wc -l)
expect_rc 2 "$TPUCTL" run z354 --zone $A --zones $A,$C -- true
assert_grep '^tpuctl: --zones: needs --max-restarts$' "$T/err"
expect_rc 2 "$TPUCTL" run z354 --zone $A --max-restarts 1 --zones $A,mars-1x -- true
assert_grep 'mars-1x' "$T/err"
[ "$(emu_requests | wc -l)" -eq "$before" ] || fail "bad input made requests"

job='echo "start r$TPUCTL_RESTART_COUNT"; [ "$TPUCTL_RESTART_COUNT" -ge 2 ] || sleep 60; echo "done r$TPUCTL_RESTART_COUNT"'
"$EMULATOR" event --state-dir "$EMU_DIR" --zone $A stockout >/dev/null ||
    fail "stockout event"
"$TPUCTL" run z354 --zone $A --name zj --max-restarts 2 --zones $A,$C \
    --command "$job" >"$T/r.out" 2>"$T/r.err" &
rpid=$!
job_preempt_when "$T/r.out" 0 z354 $A
# attempt 1 runs in C; preempted there, recreated in C (its zone first)
job_preempt_when "$T/r.out" 1 z354 $C
rc=0
wait "$rpid" || rc=$?
[ "$rc" -eq 0 ] || fail "run with --zones: exit $rc: $(cat "$T/r.err")"
assert_grep "recreating node 'z354' in $A: v5p-8" "$T/r.err"
assert_grep "in zone $A: .*\\(code 8\\); trying the next zone \\(--zones\\)\$" "$T/r.err"
assert_grep "recreating node 'z354' in $C: v5p-8, .*, spot\$" "$T/r.err"
assert_grep "job zj: node 'z354' moved from $A to $C \\(--zones\\)\$" "$T/r.err"
assert_grep 'job zj: attempt 2 ended: node z354 is PREEMPTED; restart 2 of 2, recreating the node$' "$T/r.err"
[ "$(grep -c "moved from" "$T/r.err")" -eq 1 ] || fail "moved twice: $(cat "$T/r.err")"
for r in 0 1 2; do
	assert_grep "^\\[w0\\] start r$r\$" "$T/r.out"
done
assert_grep '^\[w0\] done r2$' "$T/r.out"
expect_rc 0 "$TPUCTL" list --zone - --format json
jq -e --arg c "$C" 'length == 1 and .[0].state == "READY"
    and (.[0].name | contains("/locations/" + $c + "/"))
    and .[0].schedulingConfig.spot == true' "$T/out" >/dev/null ||
	fail "after the move: $(cat "$T/out")"
expect_rc 0 "$TPUCTL" jobs --format json
assert_grep "$C" "$T/out"

# Every zone out of capacity: the recreation fails with 7; the failed
# creations are cleaned up, nothing holds quota.
"$EMULATOR" event --state-dir "$EMU_DIR" --zone $C stockout >/dev/null ||
    fail "stockout event"
"$TPUCTL" run z354 --zone $C --name xj --max-restarts 1 --zones $A,$C \
    --command "$job" >"$T/x.out" 2>"$T/x.err" &
rpid=$!
job_preempt_when "$T/x.out" 0 z354 $C
rc=0
wait "$rpid" || rc=$?
[ "$rc" -eq 7 ] || fail "no capacity anywhere: exit $rc: $(cat "$T/x.err")"
assert_grep "in zone $C: .*\\(code 8\\); trying the next zone \\(--zones\\)\$" "$T/x.err"
assert_grep '^tpuctl: restart: ' "$T/x.err"
expect_rc 0 "$TPUCTL" list --zone - --format json
jq -e 'length == 0' "$T/out" >/dev/null || fail "left behind: $(cat "$T/out")"
echo ok
