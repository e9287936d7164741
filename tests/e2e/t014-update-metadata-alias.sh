#!/bin/sh
# Issue 17: update's --update-metadata (gcloud's name) is --metadata: the
# same PATCH (body and updateMask), the same refusal of a bad entry.
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"
emu_start

expect_rc 0 "$TPUCTL" create n --accelerator-type v4-8
expect_rc 0 "$TPUCTL" --dry-run update n --metadata startup-script=true
cp "$T/out" "$T/out.metadata"
expect_rc 0 "$TPUCTL" --dry-run update n --update-metadata startup-script=true
cmp -s "$T/out" "$T/out.metadata" ||
    fail "--update-metadata and --metadata differ: $(cat "$T/out") / $(cat "$T/out.metadata")"
jq -e 'select(.method == "PATCH") | .body.metadata["startup-script"] == "true"' \
    "$T/out" >/dev/null || fail "no startup-script in the PATCH: $(cat "$T/out")"
expect_rc 2 "$TPUCTL" update n --metadata nokey
cp "$T/err" "$T/err.metadata"
expect_rc 2 "$TPUCTL" update n --update-metadata nokey
cmp -s "$T/err" "$T/err.metadata" ||
    fail "refusals differ: $(cat "$T/err") / $(cat "$T/err.metadata")"
# and it is sent: the node has the entry
expect_rc 0 "$TPUCTL" update n --update-metadata startup-script='echo hi'
expect_rc 0 "$TPUCTL" describe n --format 'value(metadata.startup-script)'
[ "$(cat "$T/out")" = "echo hi" ] || fail "metadata after update: $(cat "$T/out")"
