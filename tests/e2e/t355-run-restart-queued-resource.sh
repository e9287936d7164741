#!/bin/sh
# shellcheck disable=SC2016 # remote shells expand these
# run --max-restarts on a spot multislice queued resource: one slice
# preempted (its node PREEMPTED, the queued resource SUSPENDED) restarts
# the whole job: the queued resource is deleted with its nodes (they hold
# quota), created again by queued-resources create's path with the same
# count, prefix, type, version, tier and labels, and the job runs again
# on every slice.  The slice not lost is not waited for: its job is
# cancelled as soon as the lost one is seen (J17), so the attempt ends
# long before its 60 s sleep.  Nothing SUSPENDED or PREEMPTED is left.
# The budget used up: 8 naming the queued resource.
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"
# shellcheck source=tests/e2e/lib_job.sh
. "$(dirname "$0")/lib_job.sh"
# shellcheck source=tests/e2e/lib_fleet.sh
. "$(dirname "$0")/lib_fleet.sh"

emu_start --set fleet.key_delay_ms=200 --set tpu.preempt_notice_ms=500
fleet_api_setup
expect_rc 0 "$TPUCTL" queued-resources create q355 --node-count 2 \
    --node-prefix ms --accelerator-type v4-8 --version tpu-ubuntu2204-base \
    --spot --labels team=ml

job='echo "start r$TPUCTL_RESTART_COUNT"; [ "$TPUCTL_RESTART_COUNT" -ge 1 ] || sleep 60; echo "done r$TPUCTL_RESTART_COUNT s$TPUCTL_SLICE/$TPUCTL_SLICES"'
"$TPUCTL" run q355 --name qj --max-restarts 1 --command "$job" \
    >"$T/r.out" 2>"$T/r.err" &
rpid=$!
job_preempt_when "$T/r.out" 0 ms-1 "" 2
t0=$(date +%s)
rc=0
wait "$rpid" || rc=$?
t1=$(date +%s)
[ "$rc" -eq 0 ] || fail "run after a slice was preempted: exit $rc: $(cat "$T/r.err")"
[ $((t1 - t0)) -lt 40 ] || fail "the slice not lost was waited for: $((t1 - t0)) s"
assert_grep 'job qj: queued resource q355 is SUSPENDED: the attempt ends now, on every worker$' "$T/r.err"
assert_grep 'job qj: cancelling it on the 1 worker of the slices not lost: the whole job restarts together$' "$T/r.err"
assert_no_grep 'done r0' "$T/r.out"
assert_grep 'job qj: attempt 1 ended: queued resource q355 is SUSPENDED; restart 1 of 1, recreating the queued resource$' "$T/r.err"
assert_grep "deleting queued resource 'q355' in .* with its nodes \\(queued resource q355 is SUSPENDED\\), so it holds no quota\$" "$T/r.err"
assert_grep "recreating queued resource 'q355' in .*: v4-8, 2 slices\$" "$T/r.err"
# every slice ran again, the whole job
for s in 0 1; do
	assert_grep "^\\[s$s/w0\\] start r0\$" "$T/r.out"
	assert_grep "^\\[s$s/w0\\] start r1\$" "$T/r.out"
	assert_grep "^\\[s$s/w0\\] done r1 s$s/2\$" "$T/r.out"
done
assert_grep ': 2 of 2 workers succeeded \(2 nodes\)$' "$T/r.err"
expect_rc 0 "$TPUCTL" queued-resources describe q355 --format json
jq -e '.state.state == "ACTIVE" and (.spot != null)
    and .tpu.nodeSpec[0].multisliceParams.nodeCount == 2
    and .tpu.nodeSpec[0].multisliceParams.nodeIdPrefix == "ms"
    and .tpu.nodeSpec[0].node.labels.team == "ml"' "$T/out" >/dev/null ||
	fail "recreated queued resource: $(cat "$T/out")"
expect_rc 0 "$TPUCTL" list --format json
jq -e 'length == 2 and all(.[]; .state == "READY")' "$T/out" >/dev/null ||
	fail "nodes after recovery: $(cat "$T/out")"

# The budget used up: 8, naming the queued resource; nothing recreated.
"$TPUCTL" run q355 --name bj --max-restarts 0 --command "$job" \
    >"$T/b.out" 2>"$T/b.err" &
rpid=$!
job_preempt_when "$T/b.out" 0 ms-0 "" 2
rc=0
wait "$rpid" || rc=$?
[ "$rc" -eq 8 ] || fail "budget exhausted: exit $rc: $(cat "$T/b.err")"
assert_grep '^tpuctl: job bj: --max-restarts 0 used up after 0 restarts; last cause: queued resource q355 is SUSPENDED$' "$T/b.err"
assert_no_grep 'recreating' "$T/b.err"
echo ok
