#!/bin/sh
# shellcheck disable=SC2016 # remote shells expand these
# tpuctl cancel of submitted jobs: one that runs (its queued resource
# ACTIVE, the job started by the startup-script) is stopped on both
# workers (killed by TERM, nothing of it left running); one whose queued
# resource still waits for capacity (a stockout) has not started: cancel
# deletes its queued resource, so it never starts.
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"
# shellcheck source=tests/e2e/lib_fleet.sh
. "$(dirname "$0")/lib_fleet.sh"
# shellcheck source=tests/e2e/lib_job.sh
. "$(dirname "$0")/lib_job.sh"

emu_start --set fleet.key_delay_ms=200
fleet_api_setup
cat >"$T/long.yaml" <<'END'
name: long359
slice: {accelerator-type: v4-16}
command: 'echo started; sleep 300; echo never'
END
expect_rc 0 "$TPUCTL" submit "$T/long.yaml"
# wait until it runs on both workers
job_wait_started long359
expect_rc 0 "$TPUCTL" cancel --grace 2s long359
assert_grep '^job long359: ended on 2 of 2 workers$' "$T/err"
expect_rc 0 "$TPUCTL" jobs long359
assert_grep 'killed by TERM' "$T/out"
expect_rc 0 "$TPUCTL" ssh long359 --worker=all -- sh -c \
    'p=$(cat .tpuctl/jobs/long359/pgid); if kill -0 -"$p" 2>/dev/null; then echo alive; else echo gone; fi'
[ "$(grep -c '^\[w[01]\] gone$' "$T/out")" -eq 2 ] || fail "after cancel: $(cat "$T/out")"
expect_rc 8 "$TPUCTL" logs long359
assert_grep '^\[w0\] started$' "$T/out"
assert_no_grep never "$T/out"

# capacity that never comes: cancel deletes the queued resource
"$EMULATOR" event --state-dir "$EMU_DIR" --zone us-central2-b stockout >/dev/null ||
    fail "stockout event failed"
cat >"$T/wait.yaml" <<'END'
name: wait359
slice: {accelerator-type: v4-8, spot: true}
command: 'echo should not run'
END
expect_rc 0 "$TPUCTL" submit "$T/wait.yaml"
expect_rc 0 "$TPUCTL" cancel wait359
assert_grep "job wait359 has not started .*: deleting its queued resource 'wait359'" "$T/err"
assert_grep 'job wait359 cancelled before it started' "$T/err"
expect_rc 0 "$TPUCTL" queued-resources list --format 'value(name)'
assert_no_grep wait359 "$T/out"
