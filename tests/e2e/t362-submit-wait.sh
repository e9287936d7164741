#!/bin/sh
# shellcheck disable=SC2016 # remote shells expand these
# submit --wait stays attached: it waits for the capacity, follows the
# job and returns its exit contract.  delete-after deletes the queued
# resource and its node when the job has ended, success or not, and the
# job's logs stay readable afterwards (the local copy).  The spec's
# timeout cancels a job still running after it: 124, the slice deleted.
# timeout and delete-after without --wait are refused (exit 2, nothing
# sent).
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"
# shellcheck source=tests/e2e/lib_fleet.sh
. "$(dirname "$0")/lib_fleet.sh"

emu_start --set fleet.key_delay_ms=200 --set tpu.qr_provision_ms=500
fleet_api_setup

cat >"$T/ok.yaml" <<'END'
name: sub362
slice: {accelerator-type: v4-16}
command: 'echo "hello from w$TPUCTL_WORKER"'
delete-after: true
END
# refused without --wait, before any request
expect_rc 2 "$TPUCTL" submit "$T/ok.yaml"
assert_grep 'ok.yaml: delete-after: needs --wait' "$T/err"
printf 'name: sub362t\nslice: {accelerator-type: v4-8}\ncommand: "true"\ntimeout: 5s\n' >"$T/t.yaml"
expect_rc 2 "$TPUCTL" submit "$T/t.yaml"
assert_grep 't.yaml: timeout: needs --wait' "$T/err"
[ "$(emu_tpu_mutations)" = "[]" ] || fail "sent: $(emu_tpu_mutations)"
assert_no_slice sub362

expect_rc 0 "$TPUCTL" submit --wait "$T/ok.yaml"
assert_grep '^\[w0\] hello from w0$' "$T/out"
assert_grep '^\[w1\] hello from w1$' "$T/out"
assert_no_grep '^sub362$' "$T/out"
assert_grep '^job sub362: 2 of 2 workers succeeded$' "$T/err"
assert_grep "deleting queued resource 'sub362' \(delete-after\)" "$T/err"
assert_no_slice sub362
# the logs, after the slice is gone
expect_rc 0 "$TPUCTL" logs sub362
assert_grep '^\[w1\] hello from w1$' "$T/out"

# a failing job: 8, and the slice is deleted all the same
sed -e 's/sub362/sub362f/' -e 's/command: .*/command: "[ $TPUCTL_WORKER = 0 ] || exit 3"/' \
    "$T/ok.yaml" >"$T/f.yaml"
expect_rc 8 "$TPUCTL" submit --wait "$T/f.yaml"
assert_grep 'job sub362f: 1 of 2 workers succeeded' "$T/err"
assert_grep 'exited 3' "$T/err"
assert_no_slice sub362f

# past the timeout: cancelled, 124, deleted
cat >"$T/slow.yaml" <<'END'
name: sub362s
slice: {accelerator-type: v4-8}
command: 'echo started; sleep 60; echo never'
timeout: 8s
delete-after: true
END
expect_rc 124 "$TPUCTL" submit --wait "$T/slow.yaml"
assert_grep '^\[w0\] started$' "$T/out"
assert_no_grep never "$T/out"
assert_grep 'job sub362s: not ended after 8s: cancelled' "$T/err"
assert_no_slice sub362s
