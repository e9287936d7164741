#!/bin/sh
# Issue 20: a 412 (a generation precondition that did not hold) is said in
# the user's terms, not the API's "At least one of the pre-conditions you
# specified did not hold": --no-clobber onto an existing object says it
# exists and was not overwritten (exit 4), for an upload and a gs:// to
# gs:// copy; a delete pinned to the listed generation that finds a newer
# object (sync --delete, rm) says it changed and was not deleted.
# shellcheck source-path=SCRIPTDIR
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"
# shellcheck disable=SC2119
emu_start
# shellcheck source=tests/e2e/lib_gcs.sh
. "$(dirname "$0")/lib_gcs.sh"
mkbucket e2e-410
printf 'first\n' >"$T/f"
printf 'second\n' >"$T/g"
expect_rc 0 "$TPUCTL" data cp "$T/f" gs://e2e-410/o

expect_rc 4 "$TPUCTL" data cp --no-clobber "$T/g" gs://e2e-410/o
assert_grep '^tpuctl: gs://e2e-410/o exists: not overwritten \(--no-clobber\)$' "$T/err"
assert_no_grep 'pre-conditions|HTTP 412' "$T/err"
expect_rc 0 "$TPUCTL" data cp --no-clobber gs://e2e-410/o gs://e2e-410/o2x
expect_rc 0 "$TPUCTL" data cp "$T/g" gs://e2e-410/o2
expect_rc 4 "$TPUCTL" data cp --no-clobber gs://e2e-410/o gs://e2e-410/o2
assert_grep '^tpuctl: gs://e2e-410/o2 exists: not overwritten \(--no-clobber\)$' "$T/err"
assert_no_grep 'pre-conditions|HTTP 412' "$T/err"
expect_rc 0 "$TPUCTL" data cat gs://e2e-410/o2
[ "$(cat "$T/out")" = second ] || fail "--no-clobber replaced the object"

# The delete of sync --delete finds another generation (412).
mkdir -p "$T/d"
expect_rc 0 "$TPUCTL" data cp "$T/f" gs://e2e-410/sy/extra
emu_inject --method DELETE --path /storage/v1/b/e2e-410/o/ --count 1 return-412
expect_rc 4 "$TPUCTL" data sync --delete "$T/d" gs://e2e-410/sy
assert_grep '^tpuctl: gs://e2e-410/sy/extra changed since it was listed: not deleted \(run the sync again\)$' "$T/err"
assert_no_grep 'pre-conditions|HTTP 412' "$T/err"
# and of rm -r (pinned to the listing too)
emu_inject --method DELETE --path /storage/v1/b/e2e-410/o/ --count 1 return-412
expect_rc 4 "$TPUCTL" data rm -r gs://e2e-410/sy
assert_grep '^tpuctl: gs://e2e-410/sy/extra: changed since it was listed: not removed \(run the command again to remove the new version\)$' "$T/err"
assert_no_grep 'pre-conditions|HTTP 412' "$T/err"
