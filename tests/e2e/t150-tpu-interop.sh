#!/bin/sh
# Cloud TPU API of tpuctl-emulator against Google's official Node.js
# clients (tests/interop/tpu.js): googleapis tpu v2 and @google-cloud/tpu
# in REST mode create, wait, list, get, patch and delete nodes.  If they
# and the emulator disagree, the emulator is wrong.
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"

# shellcheck source=tests/e2e/lib_tpu.sh
. "$(dirname "$0")/lib_tpu.sh"

sh "$SRCDIR/tests/interop/install.sh" || fail "tests/interop/install.sh failed"

# shellcheck disable=SC2119
emu_start
tpu_setup

TPU_ACCESS_TOKEN_FILE="$EMU_DIR/access-token" TPU_PROJECT=$PROJECT \
    TPU_ZONE=$ZONE node "$SRCDIR/tests/interop/tpu.js" >"$T/node.out" 2>&1 || {
	cat "$T/node.out" >&2
	fail "tpu.js failed"
}
assert_grep '^tpu.js: all ok$' "$T/node.out"

# The clients' requests reached the emulator as expected.
emu_requests >"$T/requests"
assert_grep 'enum-encoding' "$T/requests"
expect_api 200 GET "/v2/$P/nodes"
expect_jq '.nodes // [] | length' 0
