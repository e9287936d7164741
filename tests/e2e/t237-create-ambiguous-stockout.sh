#!/bin/sh
# t237: an ambiguous create during a stockout (issue 19 defect 7): the
# POST's connection is reset after the emulator took it, the node is
# found with this run's id (R4), and its operation then fails with code 8.
# tpuctl waits on that operation (found through operations.list), so it
# exits 7 with the stockout reason, not 4 "not found" when the node
# vanishes; nothing is left holding quota.  Without a stockout the same
# ambiguous create still succeeds.
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"
emu_start
Z=us-central2-b
NODES=/v2/projects/tpuctl-emu/locations/$Z/nodes

"$EMULATOR" event --state-dir "$EMU_DIR" --zone $Z stockout >/dev/null ||
    fail "stockout event"
emu_inject --method POST --path "$NODES" --count 1 reset-connection
expect_rc 7 "$TPUCTL" create s1 --accelerator-type v4-8
assert_grep "failed in zone $Z" "$T/err"
assert_grep 'no more capacity' "$T/err"
assert_grep '\(code 8\)' "$T/err"
assert_no_grep 'not found' "$T/err"
expect_rc 4 "$TPUCTL" describe s1

# --zones: the ambiguous stockout in the first zone moves on to the next
"$EMULATOR" event --state-dir "$EMU_DIR" --zone us-east5-a stockout \
    >/dev/null || fail "stockout event"
emu_inject --method POST --path /v2/projects/tpuctl-emu/locations/us-east5-a/nodes \
    --count 1 reset-connection
expect_rc 0 "$TPUCTL" create s2 --type v5p --topology 2x2x1 \
    --zones us-east5-a,us-east5-c
assert_grep 'no more capacity.*trying the next zone' "$T/err"
assert_grep "created node 's2' \(v5p-8, 1 worker\) in us-east5-c" "$T/err"
expect_rc 4 "$TPUCTL" describe s2 --zone us-east5-a

"$EMULATOR" event --state-dir "$EMU_DIR" --zone $Z stockout --clear \
    >/dev/null || fail "stockout --clear"
emu_inject --method POST --path "$NODES" --count 1 reset-connection
expect_rc 0 "$TPUCTL" create s3 --accelerator-type v4-8
expect_rc 0 "$TPUCTL" describe s3
exit 0
