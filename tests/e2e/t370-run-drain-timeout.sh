#!/bin/sh
# shellcheck disable=SC2016 # remote shells expand these
# run --max-restarts on a spot v4-16 (2 workers) preempted with a long
# notice (30 s before the workers stop): worker 0's job ends on the
# notice's SIGTERM, worker 1's ignores it.  The attempt ends as soon as
# worker 0's job has and the node reads PREEMPTED (not when the VM
# stops); the drain before the delete waits run/drain_timeout (2 s
# here) for worker 1, names it, and the node is deleted under it,
# recreated, and the job runs again.  A bad run/drain_timeout is exit 2
# with nothing sent.
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"
# shellcheck source=tests/e2e/lib_fleet.sh
. "$(dirname "$0")/lib_fleet.sh"

emu_start --set fleet.key_delay_ms=200 --set tpu.preempt_notice_ms=30000
fleet_api_setup
expect_rc 0 "$TPUCTL" create t370 --accelerator-type v4-16 --spot \
    --version tpu-ubuntu2204-base

before=$(emu_requests | wc -l)
TPUCTL_RUN_DRAIN_TIMEOUT=x expect_rc 2 "$TPUCTL" run t370 --max-restarts 1 -- true
assert_grep 'run/drain_timeout' "$T/err"
[ "$(emu_requests | wc -l)" -eq "$before" ] || fail "bad input made requests"

job='echo "start r$TPUCTL_RESTART_COUNT"
if [ "$TPUCTL_RESTART_COUNT" -eq 0 ]; then
	[ "$TPUCTL_WORKER" != 1 ] || trap "" TERM
	sleep 40
fi
echo "done r$TPUCTL_RESTART_COUNT"'
TPUCTL_RUN_DRAIN_TIMEOUT=2 "$TPUCTL" run t370 --name dj --max-restarts 1 \
    --command "$job" >"$T/r.out" 2>"$T/r.err" &
rpid=$!
wait_for_grep -c 2 "$T/r.out" 'start r0$' "" 120
t0=$(date +%s)
"$EMULATOR" event --state-dir "$EMU_DIR" preempt --node t370 || fail "preempt failed"
rc=0
wait "$rpid" || rc=$?
t1=$(date +%s)
[ "$rc" -eq 0 ] || fail "run after a preemption: exit $rc: $(cat "$T/r.err")"
assert_grep 'job dj: node t370 is PREEMPTED: the attempt ends now, on every worker$' "$T/r.err"
assert_grep 'job dj: waiting until the job has ended on every worker \(it may be saving a checkpoint; at most 2 s, run/drain_timeout\)$' "$T/r.err"
assert_grep 'job dj: still running on worker 1 after 2 s \(run/drain_timeout\); deleting it with the slice$' "$T/r.err"
assert_no_grep 'still running on worker 0' "$T/r.err"
assert_grep 'job dj: attempt 1 ended: node t370 is PREEMPTED; restart 1 of 1, recreating the node$' "$T/r.err"
for w in 0 1; do
	assert_grep "^\\[w$w\\] done r1\$" "$T/r.out"
	assert_no_grep "^\\[w$w\\] done r0\$" "$T/r.out"
done
# well before the workers would have stopped by themselves (30 s)
[ $((t1 - t0)) -lt 25 ] || fail "recovery took $((t1 - t0)) s: $(cat "$T/r.err")"
expect_rc 0 "$TPUCTL" list --format json
jq -e 'length == 1 and .[0].state == "READY"' "$T/out" >/dev/null ||
	fail "after recovery: $(cat "$T/out")"
echo ok
