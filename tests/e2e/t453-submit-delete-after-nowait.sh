#!/bin/sh
# shellcheck disable=SC2016 # remote shells expand these
# tpuctl submit of a spec with delete-after: true and no --wait: submit
# returns with the job's name; no client is attached while the capacity
# comes and the job runs; each worker's uploader puts its stdout, stderr
# and state in the stage bucket (gs://B/PREFIX/jobs/JOB/wS-W.*) with its
# metadata token, and worker 0, once every worker's state there is final,
# deletes the queued resource with its nodes through the TPU API.
# Afterwards `logs` and `jobs` read the bucket (the slice is gone) and
# nothing of the slice is left.
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"
# shellcheck source=tests/e2e/lib_job.sh
. "$(dirname "$0")/lib_job.sh"
# shellcheck source=tests/e2e/lib_fleet.sh
. "$(dirname "$0")/lib_fleet.sh"

emu_start --set fleet.key_delay_ms=200 --set tpu.qr_provision_ms=2000
fleet_api_setup
expect_rc 0 "$TPUCTL" data mb gs://stg453
cat >"$T/job.yaml" <<'END'
name: sub453
slice: {accelerator-type: v4-16, spot: true}
stage: gs://stg453/pre
delete-after: true
command: 'echo "out w$TPUCTL_WORKER"; echo "err w$TPUCTL_WORKER" >&2; sleep 1; [ "$TPUCTL_WORKER" = 0 ] || exit 3'
END
expect_rc 0 "$TPUCTL" submit "$T/job.yaml"
[ "$(cat "$T/out")" = sub453 ] || fail "submit's stdout: $(cat "$T/out")"
expect_rc 0 "$TPUCTL" queued-resources describe sub453 --format 'value(state.state)'
[ "$(cat "$T/out")" != ACTIVE ] || fail "submit waited for the capacity"

# the slice goes away by itself once the job has ended on both workers
job_wait_qr_gone sub453
assert_no_slice sub453
for w in 0 1; do
	expect_rc 0 "$TPUCTL" data cat "gs://stg453/pre/jobs/sub453/w0-$w.out"
	[ "$(cat "$T/out")" = "out w$w" ] || fail "w$w.out: $(cat "$T/out")"
	expect_rc 0 "$TPUCTL" data cat "gs://stg453/pre/jobs/sub453/w0-$w.state"
done
assert_grep '^exit 3 [0-9]+ [0-9]+$' "$T/out"
# the delete was worker 0's, with its metadata token: the DELETE came
# from the workers' side (force: its nodes too)
emu_tpu_mutations >"$T/mut"
assert_grep '"DELETE","/v2/projects/[^/]+/locations/us-central2-b/queuedResources/sub453","force=true"' "$T/mut"

# logs and jobs read the bucket now
expect_rc 8 "$TPUCTL" logs sub453
assert_grep '^\[w0\] out w0$' "$T/out"
assert_grep '^\[w1\] out w1$' "$T/out"
assert_grep '^\[w1\] err w1$' "$T/err"
assert_grep 'job sub453: 1 of 2 workers failed' "$T/err"
expect_rc 8 "$TPUCTL" logs --output jsonl --worker 1 sub453
jq -e -s 'map(select(.stream == "stdout")) | .[0].line == "out w1"' "$T/out" >/dev/null ||
    fail "jsonl: $(cat "$T/out")"
expect_rc 0 "$TPUCTL" jobs --format json
jq -e '.[] | select(.name == "sub453") | .workers | map(.state) == ["exited 0", "exited 3"]' \
    "$T/out" >/dev/null || fail "jobs: $(cat "$T/out")"
# cancel: nothing is left to cancel, the ends recorded stand
expect_rc 0 "$TPUCTL" cancel sub453
assert_grep 'job sub453: ended on 2 of 2 workers' "$T/err"
