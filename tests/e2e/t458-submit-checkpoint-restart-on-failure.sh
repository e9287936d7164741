#!/bin/sh
# shellcheck disable=SC2016 # remote shells expand these
# Issue 16: the spec keys checkpoint and restart-on-failure, honoured by
# submit --wait as run honours --checkpoint and --restart-on-failure.
# The job sees TPUCTL_CHECKPOINT; a job that fails by itself (exit 3, the
# slice fine) runs again on the same slice only with restart-on-failure,
# within max-restarts (TPUCTL_RESTART_COUNT=1, the queued resource kept,
# no second one queued), and that attempt's contract (0) is returned.
# Without restart-on-failure the failure stands: one attempt, the job's
# contract (8), nothing restarted; delete-after leaves nothing either way.
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"
# shellcheck source=tests/e2e/lib_fleet.sh
. "$(dirname "$0")/lib_fleet.sh"

emu_start --set fleet.key_delay_ms=200 --set tpu.qr_provision_ms=300
fleet_api_setup

cat >"$T/r.yaml" <<'END'
name: sub458
slice: {accelerator-type: v4-8, spot: true}
command: 'echo "ck=$TPUCTL_CHECKPOINT r$TPUCTL_RESTART_COUNT"; [ "$TPUCTL_RESTART_COUNT" -ge 1 ] || exit 3; echo "done r$TPUCTL_RESTART_COUNT"'
checkpoint: gs://ck458/runs/sub458
max-restarts: 1
restart-on-failure: true
delete-after: true
END
rc=0
"$TPUCTL" submit --wait "$T/r.yaml" >"$T/s.out" 2>"$T/s.err" || rc=$?
[ "$rc" -eq 0 ] || fail "submit --wait restart-on-failure: exit $rc: $(cat "$T/s.err")"
assert_grep '^\[w0\] ck=gs://ck458/runs/sub458 r0$' "$T/s.out"
assert_grep '^\[w0\] ck=gs://ck458/runs/sub458 r1$' "$T/s.out"
assert_no_grep 'done r0' "$T/s.out"
assert_grep '^\[w0\] done r1$' "$T/s.out"
assert_grep 'job sub458: attempt 1 ended: worker 0 exited 3 \(--restart-on-failure\); restart 1 of 1$' "$T/s.err"
# the same slice: one queued resource created, none deleted before the end
[ "$(emu_requests | jq -s '[.[] | select(.method == "POST" and (.path | test("/queuedResources$")))] | length')" -eq 1 ] ||
	fail "queued again: $(emu_requests | jq -c 'select(.method != "GET") | [.method, .path]')"
assert_no_grep 'recreating|deleting queued resource .sub458. in' "$T/s.err"
assert_no_slice sub458

# without restart-on-failure: one attempt, its failure returned (8)
sed -e 's/sub458/sub458b/g' -e '/restart-on-failure/d' "$T/r.yaml" >"$T/b.yaml"
rc=0
"$TPUCTL" submit --wait "$T/b.yaml" >"$T/b.out" 2>"$T/b.err" || rc=$?
[ "$rc" -eq 8 ] || fail "a job failing by itself without restart-on-failure: exit $rc, want 8: $(cat "$T/b.err")"
assert_grep '^\[w0\] ck=gs://ck458/runs/sub458b r0$' "$T/b.out"
assert_no_grep ' r1$' "$T/b.out"
assert_no_grep 'restart 1 of 1' "$T/b.err"
assert_no_slice sub458b
