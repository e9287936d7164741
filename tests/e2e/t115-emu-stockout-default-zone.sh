#!/bin/sh
# `tpuctl-emulator event stockout` without --zone stocks out the default
# zone (serve --zone), as the other events find a short node name there;
# --clear without --zone ends it.
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"

# shellcheck source=tests/e2e/lib_tpu.sh
. "$(dirname "$0")/lib_tpu.sh"

emu_start --zone us-east5-a
tpu_setup

V5P='{"acceleratorType":"v5p-8","runtimeVersion":"v2-alpha-tpuv5"}'
E="projects/$PROJECT/locations/us-east5-a"

expect_rc 0 "$EMULATOR" event --state-dir "$EMU_DIR" stockout
expect_api 200 POST "/v2/$E/nodes?nodeId=s1" "$V5P"
wait_op "$(jr .name)"
expect_jq .error.code 8
expect_jq '.error.message | contains("us-east5-a")' true
# Another zone is not affected.
expect_api 200 POST "/v2/$P/nodes?nodeId=o1" \
    '{"acceleratorType":"v4-8","runtimeVersion":"tpu-vm-v4-base"}'
wait_op "$(jr .name)"
expect_jq .response.state READY

expect_rc 0 "$EMULATOR" event --state-dir "$EMU_DIR" --clear stockout
expect_api 200 POST "/v2/$E/nodes?nodeId=s1" "$V5P"
wait_op "$(jr .name)"
expect_jq .response.state READY

# An explicit --zone still wins, and a bad one is refused.
expect_rc 0 "$EMULATOR" event --state-dir "$EMU_DIR" --zone us-central2-b stockout
expect_api 200 POST "/v2/$P/nodes?nodeId=o2" \
    '{"acceleratorType":"v4-8","runtimeVersion":"tpu-vm-v4-base"}'
wait_op "$(jr .name)"
expect_jq .error.code 8
set +e
"$EMULATOR" event --state-dir "$EMU_DIR" --zone "Not A Zone" stockout 2>"$T/err"
rc=$?
set -e
[ "$rc" != 0 ] || fail "a bad --zone was accepted"
echo ok
