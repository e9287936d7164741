#!/bin/sh
# shellcheck disable=SC2016 # remote shells expand these
# Issue 16: submit --wait with max-restarts recovers as run --max-restarts
# does.  A spot slice preempted while the job runs: the queued resource
# (SUSPENDED) is deleted with its node (they hold quota), queued again
# with the same spec, its startup-script starts the job again with
# TPUCTL_RESTART_COUNT=1, and submit returns that attempt's contract (0);
# delete-after leaves nothing.  The budget used up (max-restarts 0): 8
# naming the last cause, and nothing SUSPENDED is left (delete-after).
# Without --wait max-restarts is refused (exit 2, nothing sent).
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"
# shellcheck source=tests/e2e/lib_job.sh
. "$(dirname "$0")/lib_job.sh"
# shellcheck source=tests/e2e/lib_fleet.sh
. "$(dirname "$0")/lib_fleet.sh"

emu_start --set fleet.key_delay_ms=200 --set tpu.qr_provision_ms=500 \
    --set tpu.preempt_notice_ms=500
fleet_api_setup

cat >"$T/r.yaml" <<'END'
name: sub471
slice: {accelerator-type: v4-8, spot: true}
command: 'echo "start r$TPUCTL_RESTART_COUNT"; [ "$TPUCTL_RESTART_COUNT" -ge 1 ] || sleep 60; echo "done r$TPUCTL_RESTART_COUNT"'
max-restarts: 1
restart-backoff: 1s
delete-after: true
END
expect_rc 2 "$TPUCTL" submit "$T/r.yaml"
assert_grep 'r.yaml: max-restarts: needs --wait \(without a client attached nothing can recreate a preempted slice\)$' "$T/err"
[ "$(emu_tpu_mutations)" = "[]" ] || fail "sent: $(emu_tpu_mutations)"

"$TPUCTL" submit --wait "$T/r.yaml" >"$T/s.out" 2>"$T/s.err" &
spid=$!
job_preempt_when "$T/s.out" 0 sub471
rc=0
wait "$spid" || rc=$?
[ "$rc" -eq 0 ] || fail "submit --wait after a preemption: exit $rc: $(cat "$T/s.err")"
assert_grep '^\[w0\] start r0$' "$T/s.out"
assert_no_grep 'done r0' "$T/s.out"
assert_grep '^\[w0\] done r1$' "$T/s.out"
assert_grep 'job sub471: attempt 1 ended: queued resource sub471 is SUSPENDED; restart 1 of 1, recreating the queued resource$' "$T/s.err"
assert_grep "deleting queued resource 'sub471' in .* with its nodes \\(queued resource sub471 is SUSPENDED\\), so it holds no quota\$" "$T/s.err"
assert_grep 'job sub471: waiting 1 s \(restart-backoff\)$' "$T/s.err"
assert_no_slice sub471
# the first attempt's output is kept beside the last one's
expect_rc 0 "$TPUCTL" logs sub471
assert_grep '^\[w0\] done r1$' "$T/out"

# max-restarts 0: the budget is used up at the first preemption: 8
sed -e 's/sub471/sub471b/' -e 's/max-restarts: 1/max-restarts: 0/' \
    "$T/r.yaml" >"$T/b.yaml"
"$TPUCTL" submit --wait "$T/b.yaml" >"$T/b.out" 2>"$T/b.err" &
spid=$!
job_preempt_when "$T/b.out" 0 sub471b
rc=0
wait "$spid" || rc=$?
[ "$rc" -eq 8 ] || fail "budget used up: exit $rc, want 8: $(cat "$T/b.err")"
assert_grep 'job sub471b: max-restarts 0 used up after 0 restarts; last cause: queued resource sub471b is SUSPENDED$' "$T/b.err"
assert_no_slice sub471b
