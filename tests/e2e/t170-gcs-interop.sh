#!/bin/sh
# t170: Google's own @google-cloud/storage client against the emulator: bucket,
# simple and resumable uploads with validation, list, validated download,
# compose and deletes (tests/interop/gcs.js).

# shellcheck source-path=SCRIPTDIR
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"

# shellcheck disable=SC2119
emu_start
# shellcheck source=tests/e2e/lib_gcs.sh
. "$(dirname "$0")/lib_gcs.sh"

sh "$SRCDIR/tests/interop/install.sh" || fail "npm install of the interop clients failed"
EMU_ENV="$EMU_DIR/env" EMU_TOKEN_FILE="$EMU_DIR/access-token" \
    GCS_TEST_PROJECT="$PROJECT" GCS_TEST_TMP="$T" \
    node "$SRCDIR/tests/interop/gcs.js" >"$T/out" 2>"$T/err" || {
	cat "$T/out" "$T/err" >&2
	fail "gcs.js failed"
}
assert_grep '^ok compose' "$T/out"
assert_grep '^ok done' "$T/out"
