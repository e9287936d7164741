#!/bin/sh
# RELIABILITY.md B3: 503s and a reset connection on operations.get while
# create waits: the wait goes on (the polls are retried, the operation is
# not cancelled nor the node recreated) and create succeeds; the same for
# operations wait.  (A storm longer than the retry budget, exit 5 naming
# the operation, then operations wait: checked by hand, 80 s, not here.)
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"
emu_start
NODES=/v2/projects/tpuctl-emu/locations/us-central2-b/nodes
OPS=/v2/projects/tpuctl-emu/locations/us-central2-b/operations

posts() {
	emu_requests | jq -c "select(.method == \"POST\" and .path == \"$NODES\")" |
	    wc -l
}

# Two 503s, then a reset connection, on the operation polls.
emu_inject --method GET --path "$OPS/" --count 2 return-503
emu_inject --method GET --path "$OPS/" --count 1 reset-connection
expect_rc 0 "$TPUCTL" create b3 --accelerator-type v4-8
assert_grep "created node 'b3'" "$T/err"
polls=$(emu_requests | grep -c "\"path\": *\"$OPS/")
[ "$polls" -ge 4 ] || fail "B3: only $polls operation polls, want >= 4"
n503=$(emu_requests | jq -c "select(.path | startswith(\"$OPS/\")) |
    select(.status == 503)" | wc -l)
[ "$n503" -eq 2 ] || fail "B3: $n503 polls answered 503, want 2"
[ "$(posts)" -eq 1 ] || fail "B3: $(posts) creating POSTs, want 1"
if emu_requests | grep -q ':cancel'; then
	fail "B3: the operation was cancelled"
fi
expect_rc 0 "$TPUCTL" describe b3 --format 'value(state)'
assert_grep '^READY$' "$T/out"

# operations wait over the same faults.
expect_rc 0 "$TPUCTL" create b3w --accelerator-type v4-8 --async \
    --format 'value(name)'
op=$(sed 's|.*/||' "$T/out")
emu_inject --method GET --path "$OPS/" --count 1 return-503
emu_inject --method GET --path "$OPS/" --count 1 reset-connection
expect_rc 0 "$TPUCTL" operations wait "$op" --format 'value(name)'
assert_grep 'nodes/b3w$' "$T/out"

echo "ok: $TEST_NAME"
