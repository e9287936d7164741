#!/bin/sh
# tpuctl update: labels, metadata and description merged onto the node
# read, one PATCH whose updateMask names only what changes (request log),
# the body as --dry-run prints it, other metadata entries kept, nothing
# sent when nothing changes, a 409 re-reads and retries once, a second
# 409 is exit 4, --async prints the operation.
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"
emu_start
N=/v2/projects/tpuctl-emu/locations/us-central2-b/nodes/u1

expect_rc 0 "$TPUCTL" create u1 --accelerator-type v4-8 \
    --labels env=dev,team=a --metadata startup-script=echo\ hi

# The body --dry-run prints: merged labels, every metadata entry kept.
expect_rc 0 "$TPUCTL" --dry-run update u1 --update-labels env=prod \
    --remove-labels team --metadata shutdown-script=bye --description hello
jq -e 'select(.method == "PATCH") |
    (.url | endswith("/nodes/u1?updateMask=description,labels,metadata")) and
    .body.description == "hello" and .body.labels.env == "prod" and
    (.body.labels | has("team") | not) and
    .body.metadata == {"startup-script":"echo hi","shutdown-script":"bye"}' \
    "$T/out" >/dev/null || fail "dry-run body: $(cat "$T/out")"
if emu_requests | grep -q '"method": *"PATCH"'; then
	fail "--dry-run sent the PATCH"
fi

# Labels only: the mask is "labels".
expect_rc 0 "$TPUCTL" update u1 --update-labels env=prod --remove-labels team
assert_grep "updated node 'u1' \(labels\)" "$T/err"
emu_requests | jq -e -s --arg p "$N" '[.[] | select(.method == "PATCH")] |
    length == 1 and .[0].path == $p and .[0].query == "updateMask=labels"' \
    >/dev/null || fail "PATCH log: $(emu_requests | grep PATCH)"
expect_rc 0 "$TPUCTL" describe u1 --format json
jq -e '.labels.env == "prod" and (.labels | has("team") | not) and
    (.labels | has("tpuctl-run-id")) and
    .metadata == {"startup-script":"echo hi"}' "$T/out" >/dev/null ||
    fail "after labels: $(cat "$T/out")"

# Metadata from a file, another key kept; description.
printf '#!/bin/sh\necho down\n' >"$T/down.sh"
expect_rc 0 "$TPUCTL" update u1 --metadata-from-file shutdown-script="$T/down.sh" \
    --description 'a test node'
emu_requests | jq -e -s '[.[] | select(.method == "PATCH")] | last |
    .query == "updateMask=description,metadata"' >/dev/null ||
    fail "mask: $(emu_requests | grep PATCH | tail -1)"
expect_rc 0 "$TPUCTL" describe u1 --format json
jq -e '.description == "a test node" and
    .metadata == {"startup-script":"echo hi",
        "shutdown-script":"#!/bin/sh\necho down\n"}' "$T/out" >/dev/null ||
    fail "after metadata: $(cat "$T/out")"

# Remove a metadata key, clear labels; --format json prints the node.
expect_rc 0 "$TPUCTL" update u1 --remove-metadata startup-script --clear-labels \
    --format json
jq -e '.metadata == {"shutdown-script":"#!/bin/sh\necho down\n"} and
    ((.labels // {}) == {})' "$T/out" >/dev/null ||
    fail "after remove: $(cat "$T/out")"

# Nothing changes: no PATCH at all.
patches=$(emu_requests | grep -c '"method": *"PATCH"')
expect_rc 0 "$TPUCTL" update u1 --description 'a test node'
assert_grep 'nothing to update' "$T/err"
[ "$(emu_requests | grep -c '"method": *"PATCH"')" -eq "$patches" ] ||
    fail "a PATCH was sent for no change"

# A 409 from a concurrent change: read again, PATCH again, success.
emu_inject --method PATCH --path "$N" --count 1 return-409
node_gets() {
	emu_requests | grep "\"path\": *\"$N\"" | grep -c '"method": *"GET"'
}
gets=$(node_gets)
expect_rc 0 "$TPUCTL" update u1 --update-labels round=two
assert_grep 'changed while updating' "$T/err"
[ "$(emu_requests | grep -c '"method": *"PATCH"')" -eq $((patches + 2)) ] ||
    fail "409: want 2 more PATCHes"
[ "$(node_gets)" -eq $((gets + 2)) ] ||
    fail "409: the node was not read again"
expect_rc 0 "$TPUCTL" describe u1 --format 'value(labels.round)'
assert_grep '^two$' "$T/out"

# Two 409s in a row: exit 4, once retried only.
emu_inject --method PATCH --path "$N" --count 2 return-409
patches=$(emu_requests | grep -c '"method": *"PATCH"')
expect_rc 4 "$TPUCTL" update u1 --update-labels round=three
[ "$(emu_requests | grep -c '"method": *"PATCH"')" -eq $((patches + 2)) ] ||
    fail "double 409: want exactly 2 more PATCHes"
"$EMULATOR" faults --state-dir "$EMU_DIR" --clear >/dev/null

# --async: the operation is printed, not awaited.
expect_rc 0 "$TPUCTL" update u1 --async --update-labels round=four \
    --format 'value(name)'
assert_grep '/operations/operation-' "$T/out"

# A missing node: exit 4, no PATCH.
patches=$(emu_requests | grep -c '"method": *"PATCH"')
expect_rc 4 "$TPUCTL" update nope --description x
assert_grep "node 'nope' not found" "$T/err"
[ "$(emu_requests | grep -c '"method": *"PATCH"')" -eq "$patches" ] ||
    fail "PATCH sent for a missing node"
