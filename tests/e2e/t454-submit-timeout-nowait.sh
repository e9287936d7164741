#!/bin/sh
# tpuctl submit without --wait of a spec with timeout and delete-after:
# the workers enforce the timeout themselves (no client attached): past
# it the job gets SIGTERM and "exit 124" is its recorded end, on the
# worker and in the bucket, with a line in its stderr; then worker 0
# deletes the slice.  jobs and logs read the end from the bucket.
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"
# shellcheck source=tests/e2e/lib_job.sh
. "$(dirname "$0")/lib_job.sh"

emu_start --set fleet.key_delay_ms=200 --set tpu.qr_provision_ms=1000
expect_rc 0 "$TPUCTL" data mb gs://stg454
cat >"$T/job.yaml" <<'END'
name: sub454
slice: {accelerator-type: v4-8}
stage: gs://stg454
timeout: 3s
delete-after: true
command: 'echo started; trap "echo got TERM; exit 143" TERM; sleep 120 & wait; echo never'
END
expect_rc 0 "$TPUCTL" submit "$T/job.yaml"
[ "$(cat "$T/out")" = sub454 ] || fail "submit's stdout: $(cat "$T/out")"
job_wait_qr_gone sub454
assert_no_slice sub454
expect_rc 0 "$TPUCTL" data cat gs://stg454/jobs/sub454/w0-0.state
assert_grep '^exit 124 [0-9]+ [0-9]+$' "$T/out"
s0=$(cut -d' ' -f3 "$T/out")
e0=$(cut -d' ' -f4 "$T/out")
if [ $((e0 - s0)) -lt 3 ] || [ $((e0 - s0)) -gt 30 ]; then
	fail "ran from $s0 to $e0, timeout 3s"
fi
expect_rc 0 "$TPUCTL" jobs --format json
jq -e '.[] | select(.name == "sub454") | .workers[0].state == "exited 124"' \
    "$T/out" >/dev/null || fail "jobs: $(cat "$T/out")"
expect_rc 8 "$TPUCTL" logs sub454
assert_grep '^\[w0\] started$' "$T/out"
assert_grep '^\[w0\] got TERM$' "$T/out"
assert_no_grep never "$T/out"
assert_grep 'tpuctl: timeout: the job did not end within 3s: stopping it' "$T/err"
