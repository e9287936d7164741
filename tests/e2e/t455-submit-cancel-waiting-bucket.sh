#!/bin/sh
# tpuctl cancel of a submitted job (delete-after, stage bucket, no
# --wait) whose queued resource still waits for capacity: nothing ran,
# cancel deletes the queued resource (no node, no queued resource left)
# and records that it never started; jobs says so, nothing was uploaded.
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"

emu_start
expect_rc 0 "$TPUCTL" data mb gs://stg455
"$EMULATOR" event --state-dir "$EMU_DIR" --zone us-central2-b stockout >/dev/null ||
    fail "stockout event failed"
cat >"$T/job.yaml" <<'END'
name: wait455
slice: {accelerator-type: v4-8, spot: true}
stage: gs://stg455
delete-after: true
command: 'echo should not run'
END
expect_rc 0 "$TPUCTL" submit "$T/job.yaml"
expect_rc 0 "$TPUCTL" queued-resources describe wait455 --format 'value(state.state)'
[ "$(cat "$T/out")" != ACTIVE ] || fail "the queued resource is ACTIVE"
expect_rc 0 "$TPUCTL" cancel wait455
assert_grep "job wait455 has not started .*: deleting its queued resource 'wait455'" "$T/err"
assert_grep 'job wait455 cancelled before it started' "$T/err"
assert_no_slice wait455
expect_rc 0 "$TPUCTL" jobs --format json
jq -e '.[] | select(.name == "wait455") | .workers | map(.state) == ["no such job"]' \
    "$T/out" >/dev/null || fail "jobs: $(cat "$T/out")"
expect_rc 0 "$TPUCTL" data ls -r gs://stg455
assert_no_grep 'wait455' "$T/out"
