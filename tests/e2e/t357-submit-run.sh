#!/bin/sh
# shellcheck disable=SC2016 # remote shells expand these
# tpuctl submit SPEC: a 2-worker job (v4-16) with a staged workdir is
# queued as a queued resource and submit returns at once with the job's
# name on stdout; no client is attached when the capacity arrives: the
# node's startup-script pulls the workdir from the bucket with each
# worker's metadata token and launches the job in run's layout; `logs
# --follow` waits for it and returns its exit contract, `jobs` lists it,
# the output is what each worker wrote.
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"
# shellcheck source=tests/e2e/lib_fleet.sh
. "$(dirname "$0")/lib_fleet.sh"

emu_start --set fleet.key_delay_ms=200 --set tpu.qr_provision_ms=3000
fleet_api_setup
expect_rc 0 "$TPUCTL" data mb gs://stg357
mkdir -p "$T/spec/src"
printf 'from the workdir\n' >"$T/spec/src/msg.txt"
cat >"$T/spec/job.yaml" <<'END'
name: sub357
slice:
  accelerator-type: v4-16
  spot: true
workdir: src
stage: gs://stg357/jobs
env: {GREETING: "hi there"}
command: 'cat msg.txt; echo "w$TPUCTL_WORKER/$TPUCTL_WORKERS $GREETING m=$MASTER_ADDR"; echo out >"$HOME/w$TPUCTL_WORKER.done"'
END
expect_rc 0 "$TPUCTL" submit "$T/spec/job.yaml"
[ "$(cat "$T/out")" = sub357 ] || fail "submit's stdout: $(cat "$T/out")"
assert_grep "job sub357 submitted: queued resource 'sub357' in us-central2-b \(2 workers\)" "$T/err"
# returned once queued: the queued resource is not ACTIVE yet
expect_rc 0 "$TPUCTL" queued-resources describe sub357 --format 'value(state.state)'
[ "$(cat "$T/out")" != ACTIVE ] || fail "submit waited for the capacity"
expect_rc 0 "$TPUCTL" queued-resources describe sub357 --format json
jq -e '.spot == {} and .tpu.nodeSpec[0].nodeId == "sub357" and
    (.tpu.nodeSpec[0].node.metadata["startup-script"] | startswith("#!/bin/sh"))' \
    "$T/out" >/dev/null || fail "queued resource: $(cat "$T/out")"
expect_rc 0 "$TPUCTL" data ls gs://stg357/jobs/
[ "$(grep -c '\.tar$' "$T/out")" -eq 1 ] || fail "staged: $(cat "$T/out")"

expect_rc 0 "$TPUCTL" logs --follow sub357
for w in 0 1; do
	assert_grep "^\[w$w\] from the workdir\$" "$T/out"
	assert_grep "^\[w$w\] w$w/2 hi there m=[0-9.]+\$" "$T/out"
done
[ "$(grep -c '^\[w[01]\]' "$T/out")" -eq 4 ] || fail "logs: $(cat "$T/out")"
m0=$(sed -n 's/^\[w0\] .* m=//p' "$T/out")
m1=$(sed -n 's/^\[w1\] .* m=//p' "$T/out")
[ "$m0" = "$m1" ] || fail "MASTER_ADDR differs: $m0 $m1"
assert_grep '^job sub357: 2 of 2 workers succeeded$' "$T/err"
assert_grep 'job sub357 \(submitted\): waiting for it to start' "$T/err"
# each worker wrote its own file, in its home
expect_rc 0 "$TPUCTL" ssh sub357 --worker=all -- sh -c 'cat w*.done'
assert_grep '^\[w0\] out$' "$T/out"
assert_grep '^\[w1\] out$' "$T/out"
expect_rc 0 "$TPUCTL" jobs --format json
jq -e '[.[] | select(.name == "sub357")] | length == 1' "$T/out" >/dev/null ||
    fail "jobs: $(cat "$T/out")"
