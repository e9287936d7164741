#!/bin/sh
# The worker-side uploader of a submitted job (delete-after, no --wait)
# under faults: a 503 on an upload to the bucket, the metadata server's
# token failing once, the queued resource's DELETE failing once (503).
# Each is retried: the logs and states in the bucket are complete, the
# slice is deleted, nothing is left.
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"
# shellcheck source=tests/e2e/lib_job.sh
. "$(dirname "$0")/lib_job.sh"

emu_start --set fleet.key_delay_ms=200 --set tpu.qr_provision_ms=1000
expect_rc 0 "$TPUCTL" data mb gs://stg456
QR="/v2/projects/$CLOUDSDK_CORE_PROJECT/locations/$CLOUDSDK_COMPUTE_ZONE/queuedResources/sub456"
emu_inject --method POST --path /upload/storage/v1/b/stg456/o --count 1 return-503
emu_inject --method GET --path /computeMetadata/v1/instance/service-accounts/default/token \
    --count 1 return-503
emu_inject --method DELETE --path "$QR" --count 1 return-503
cat >"$T/job.yaml" <<'END'
name: sub456
slice: {accelerator-type: v4-16}
stage: gs://stg456
delete-after: true
command: 'i=0; while [ $i -lt 5 ]; do echo "w$TPUCTL_WORKER line $i"; i=$((i + 1)); done'
END
expect_rc 0 "$TPUCTL" submit "$T/job.yaml"
job_wait_qr_gone sub456
assert_no_slice sub456
emu_requests >"$T/req"
for p in /upload/storage/v1/b/stg456/o \
    /computeMetadata/v1/instance/service-accounts/default/token "$QR"; do
	jq -e -s --arg p "$p" '[.[] | select(.path == $p and .status == 503)] | length == 1' \
	    "$T/req" >/dev/null || fail "no 503 on $p"
done
jq -e -s --arg p "$QR" '[.[] | select(.path == $p and .method == "DELETE" and .status == 200)] | length >= 1' \
    "$T/req" >/dev/null || fail "the DELETE never succeeded"
expect_rc 0 "$TPUCTL" logs sub456
for w in 0 1; do
	[ "$(grep -c "^\[w$w\] w$w line [0-4]\$" "$T/out")" -eq 5 ] ||
	    fail "w$w: $(cat "$T/out")"
done
expect_rc 0 "$TPUCTL" jobs --format json
jq -e '.[] | select(.name == "sub456") | .workers | map(.state) == ["exited 0", "exited 0"]' \
    "$T/out" >/dev/null || fail "jobs: $(cat "$T/out")"
