#!/bin/sh
# RELIABILITY.md matrix 4B against the emulator: a long pending operation
# (B1), an operation that ends in a stockout (B2, exit 7, nothing left
# holding quota), --timeout (B4, exit 124, the operation named, nothing
# cancelled), SIGINT (B5, 130), --async (B6, one request), the R4 retry
# rule (A10: the create reply is lost, the node is ours), a name taken by
# someone else (exit 4), and --zones moving on after a stockout.
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"
emu_start
NODES=/v2/projects/tpuctl-emu/locations/us-central2-b/nodes
OPS=/v2/projects/tpuctl-emu/locations/us-central2-b/operations

# B1: the operation stays pending for 3 more polls, then succeeds.
emu_inject --method GET --path "$OPS/" --count 1 lro-pending-3
expect_rc 0 "$TPUCTL" create b1 --accelerator-type v4-8
polls=$(emu_requests | grep -c "\"path\": *\"$OPS/")
[ "$polls" -ge 4 ] || fail "B1: only $polls operation polls"

# B2: stockout inside the operation: exit 7, zone and reason named.
emu_inject --method GET --path "$OPS/" --count 1 lro-error-8
expect_rc 7 "$TPUCTL" create b2 --accelerator-type v4-8
assert_grep 'in zone us-central2-b' "$T/err"
assert_grep 'no more capacity' "$T/err"
expect_rc 4 "$TPUCTL" describe b2

# B4: --timeout on a forever-pending operation.
emu_inject --method GET --path "$OPS/" --count -1 lro-pending-1000
expect_rc 124 "$TPUCTL" create b4 --accelerator-type v4-8 --timeout 3s
assert_grep 'timed out waiting for operation operation-' "$T/err"
assert_grep "tpuctl operations wait operation-[^ ]* --zone us-central2-b" "$T/err"
if emu_requests | grep '"method": *"DELETE"' | grep -q b4; then
	fail "B4: a DELETE was sent after the timeout"
fi

"$EMULATOR" faults --state-dir "$EMU_DIR" --clear >/dev/null ||
    fail "clearing faults"
emu_inject --method GET --path "$OPS/" --count 1 lro-pending-4

# B5: SIGINT while waiting: dies by SIGINT, nothing cancelled.
"$TPUCTL" create b5 --accelerator-type v4-8 >"$T/out" 2>"$T/err" &
pid=$!
sleep 2
kill -INT $pid
set +e
wait $pid
rc=$?
set -e
[ $rc -eq 130 ] || fail "B5: exit $rc after SIGINT, want 130"
assert_grep 'nothing was cancelled' "$T/err"
if emu_requests | grep -E '"method": *"(DELETE|POST)"' | grep -q ':cancel'; then
	fail "B5: the operation was cancelled"
fi

"$EMULATOR" faults --state-dir "$EMU_DIR" --clear >/dev/null ||
    fail "clearing faults"
# The interrupted creations are resumable with operations wait.
op=$(grep -o 'operation-[0-9a-z-]*' "$T/err" | head -1)
expect_rc 0 "$TPUCTL" operations wait "$op" --format 'value(name)'
assert_grep 'nodes/b5$' "$T/out"

# B6: --async sends exactly one request and prints the operation.
n0=$(emu_requests | wc -l)
expect_rc 0 "$TPUCTL" create b6 --accelerator-type v4-8 --async \
    --format 'value(name)'
n1=$(emu_requests | wc -l)
[ $((n1 - n0)) -eq 1 ] || fail "B6: $((n1 - n0)) requests, want 1"
assert_grep "/operations/operation-" "$T/out"

# A10 / R4: the create reply is lost (the server did create the node):
# the node carries this run's id, so create succeeds.
emu_inject --method POST --path "$NODES" --count 1 return-503-after-0K
expect_rc 0 "$TPUCTL" create a10 --accelerator-type v4-8
assert_grep "created node 'a10'" "$T/err"
# ... and a node of that name made by someone else is exit 4.
expect_rc 4 "$TPUCTL" create a10 --accelerator-type v4-8
assert_grep "already exists in zone us-central2-b and was not created by this run" "$T/err"

# --zones: a stockout in the first zone moves on to the next.
"$EMULATOR" event --state-dir "$EMU_DIR" --zone us-east5-a stockout \
    >/dev/null || fail "stockout event"
expect_rc 0 "$TPUCTL" create z1 --type v5p --topology 2x2x1 \
    --zones us-east5-a,us-east5-c
assert_grep 'trying the next zone' "$T/err"
assert_grep "created node 'z1' \(v5p-8, 1 worker\) in us-east5-c" "$T/err"
expect_rc 4 "$TPUCTL" describe z1 --zone us-east5-a
expect_rc 0 "$TPUCTL" describe z1 --zone us-east5-c
