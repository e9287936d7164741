#!/bin/sh
# shellcheck disable=SC2016 # remote shells expand these
# run --max-restarts on a spot node: preempted twice during a job, the
# node is deleted and recreated with the same spec (type, version, spot,
# labels, metadata), the job runs again with TPUCTL_RESTART_COUNT 1 then
# 2 and finishes with exit 0; nothing PREEMPTED is left.  The budget used
# up ends with 8 naming the cause; a job that fails by itself is not
# restarted, unless --restart-on-failure; bad input is exit 2.
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"
# shellcheck source=tests/e2e/lib_job.sh
. "$(dirname "$0")/lib_job.sh"
# shellcheck source=tests/e2e/lib_fleet.sh
. "$(dirname "$0")/lib_fleet.sh"

emu_start --set fleet.key_delay_ms=200 --set tpu.preempt_notice_ms=1000
fleet_api_setup
expect_rc 0 "$TPUCTL" create t306 --accelerator-type v4-8 --spot \
    --version tpu-ubuntu2204-base --labels team=ml --metadata-raw --metadata k306=v306

# Bad input: exit 2, nothing sent.
before=$(emu_requests | wc -l)
expect_rc 2 "$TPUCTL" run t306 --max-restarts -1 -- true
assert_grep "^tpuctl: --max-restarts '-1': must be an integer" "$T/err"
expect_rc 2 "$TPUCTL" run t306 --max-restarts x -- true
expect_rc 2 "$TPUCTL" run t306 --restart-backoff 1s -- true
assert_grep '^tpuctl: --restart-backoff: needs --max-restarts$' "$T/err"
expect_rc 2 "$TPUCTL" run t306 --max-restarts 1 --restart-backoff -3 -- true
expect_rc 2 "$TPUCTL" run t306 --max-restarts 1 --detach -- true
[ "$(emu_requests | wc -l)" -eq "$before" ] || fail "bad input made requests"

job='echo "start r$TPUCTL_RESTART_COUNT"; [ "$TPUCTL_RESTART_COUNT" -ge 2 ] || sleep 60; echo "done r$TPUCTL_RESTART_COUNT $(cat f)"'
mkdir "$T/wd"
echo payload >"$T/wd/f"
"$TPUCTL" run t306 --name pj --max-restarts 2 --restart-backoff 1s \
    --workdir "$T/wd" --command "$job" >"$T/r.out" 2>"$T/r.err" &
rpid=$!
job_preempt_when "$T/r.out" 0 t306
job_preempt_when "$T/r.out" 1 t306
rc=0
wait "$rpid" || rc=$?
[ "$rc" -eq 0 ] || fail "run after 2 preemptions: exit $rc: $(cat "$T/r.err")"
[ "$(grep -c '^\[w0\] start r' "$T/r.out")" -eq 3 ] || fail "attempts: $(cat "$T/r.out")"
for r in 0 1 2; do
	assert_grep "^\[w0\] start r$r\$" "$T/r.out"
done
assert_grep '^\[w0\] done r2 payload$' "$T/r.out"
assert_grep 'job pj: attempt 1 ended: node t306 is PREEMPTED; restart 1 of 2, recreating the node$' "$T/r.err"
assert_grep 'job pj: attempt 2 ended: node t306 is PREEMPTED; restart 2 of 2, recreating the node$' "$T/r.err"
assert_grep "deleting node 't306' in .* \(state PREEMPTED\), so it holds no quota$" "$T/r.err"
assert_grep "recreating node 't306' in .*: v4-8, tpu-ubuntu2204-base, spot$" "$T/r.err"
assert_grep "node 't306' is READY again" "$T/r.err"
assert_grep 'waiting 1 s \(--restart-backoff\)$' "$T/r.err"
assert_grep '^job pj: 1 of 1 worker succeeded$' "$T/r.err"
# the same spec, READY, nothing PREEMPTED left
expect_rc 0 "$TPUCTL" list --format json
jq -e 'length == 1 and .[0].state == "READY" and .[0].labels.team == "ml"
    and .[0].metadata.k306 == "v306" and .[0].schedulingConfig.spot == true
    and .[0].acceleratorType == "v4-8"' "$T/out" >/dev/null ||
	fail "after recovery: $(cat "$T/out")"
# earlier attempts' logs kept locally
st="$HOME/.local/state/tpuctl/jobs/pj"
assert_grep '^start r0$' "$st/s0-w0.out.0"
assert_grep '^start r1$' "$st/s0-w0.out.1"
assert_grep '^done r2 payload$' "$st/s0-w0.out"

# The budget used up: 8, naming the last cause.
"$TPUCTL" run t306 --name bj --max-restarts 0 --command "$job" \
    >"$T/b.out" 2>"$T/b.err" &
rpid=$!
job_preempt_when "$T/b.out" 0 t306
rc=0
wait "$rpid" || rc=$?
[ "$rc" -eq 8 ] || fail "budget exhausted: exit $rc: $(cat "$T/b.err")"
assert_grep '^tpuctl: job bj: --max-restarts 0 used up after 0 restarts; last cause: node t306 is PREEMPTED$' "$T/b.err"
# the node is left PREEMPTED (no restart asked): delete it, recreate
expect_rc 0 "$TPUCTL" delete t306
expect_rc 0 "$TPUCTL" create t306 --accelerator-type v4-8 \
    --version tpu-ubuntu2204-base

# A job failing by itself on a healthy slice: not restarted.
expect_rc 8 "$TPUCTL" run t306 --name fj --max-restarts 2 -- \
    sh -c 'echo "try r$TPUCTL_RESTART_COUNT"; exit 3'
[ "$(cat "$T/out")" = '[w0] try r0' ] || fail "plain failure rerun: $(cat "$T/out")"
assert_no_grep 'restart' "$T/err"
assert_grep '^worker 0: exited 3$' "$T/err"
# ... unless --restart-on-failure: rerun on the same node, then 8.
expect_rc 8 "$TPUCTL" run t306 --name rj --max-restarts 1 \
    --restart-on-failure -- sh -c 'echo "try r$TPUCTL_RESTART_COUNT"; exit 3'
[ "$(cat "$T/out")" = '[w0] try r0
[w0] try r1' ] || fail "--restart-on-failure: $(cat "$T/out")"
assert_grep 'job rj: attempt 1 ended: worker 0 exited 3 \(--restart-on-failure\); restart 1 of 1$' "$T/err"
assert_grep '^tpuctl: job rj: --max-restarts 1 used up after 1 restart; last cause: worker 0 exited 3 \(--restart-on-failure\)$' "$T/err"
assert_no_grep 'recreating' "$T/err"
echo ok
