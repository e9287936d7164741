#!/bin/sh
# Issue 20: "tpuctl delete a b c" sends every DELETE before it waits (the
# operations run side by side), prints one summary line, and on a
# partial failure exits 8 naming what failed.  On a terminal the prompt
# lists every node.
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"
emu_start
NODES=/v2/projects/tpuctl-emu/locations/us-central2-b/nodes
OPS=/v2/projects/tpuctl-emu/locations/us-central2-b/operations

for n in a b c; do
	expect_rc 0 "$TPUCTL" create "$n" --accelerator-type v4-8 --async
done
for n in a b c; do
	expect_rc 0 "$TPUCTL" list --format 'value(name,state)'
done
before=$(emu_requests | wc -l)

expect_rc 0 "$TPUCTL" delete a b c
assert_grep "^tpuctl: deleted 3 nodes: a, b, c$" "$T/err"
[ "$(grep -c deleted "$T/err")" -eq 1 ] || fail "not one summary: $(cat "$T/err")"
assert_no_grep "node 'b'" "$T/err"

# The three DELETEs come before the first operation poll.
emu_requests | tail -n +$((before + 1)) |
    grep -E "\"method\": *\"(DELETE|GET)\"" |
    grep -E "\"path\": *\"($NODES/[abc]\"|$OPS/)" >"$T/seq"
head -3 "$T/seq" | grep -c '"DELETE"' >"$T/n"
[ "$(cat "$T/n")" -eq 3 ] || fail "DELETEs interleaved with waits: $(cat "$T/seq")"
expect_rc 0 "$TPUCTL" list --format 'value(name)'
[ ! -s "$T/out" ] || fail "nodes left: $(cat "$T/out")"

# Partial failure: the others are deleted, exit 8, the failure named in
# full and in the summary.
expect_rc 0 "$TPUCTL" create d --accelerator-type v4-8
expect_rc 0 "$TPUCTL" create e --accelerator-type v4-8
expect_rc 8 "$TPUCTL" delete d nosuch e
assert_grep "node 'nosuch' not found in zone us-central2-b" "$T/err"
assert_grep "^tpuctl: deleted 2 of 3 nodes \(d, e\); failed: nosuch$" "$T/err"
expect_rc 0 "$TPUCTL" list --format 'value(name)'
[ ! -s "$T/out" ] || fail "nodes left: $(cat "$T/out")"

# None deleted: the failure's own code (4), all named.
expect_rc 4 "$TPUCTL" delete x1 x2
assert_grep "^tpuctl: none of 2 nodes deleted; failed: x1, x2$" "$T/err"
# One node: its own error, as before.
expect_rc 4 "$TPUCTL" delete x1
assert_grep "^tpuctl: node 'x1' not found in zone us-central2-b$" "$T/err"

# On a terminal the prompt lists all of them, then deletes them all.
expect_rc 0 "$TPUCTL" create f --accelerator-type v4-8
expect_rc 0 "$TPUCTL" create g --accelerator-type v4-32
printf 'y\n' | script -qec "'$TPUCTL' delete f g" /dev/null >"$T/tty" 2>&1 ||
    fail "delete on a terminal: $(cat "$T/tty")"
assert_grep "Delete 2 TPU nodes in us-central2-b\?" "$T/tty"
assert_grep "^  f \(v4-8, 4 chips, READY\)" "$T/tty"
assert_grep "^  g \(v4-32, 16 chips, READY\)" "$T/tty"
assert_grep "deleted 2 nodes: f, g" "$T/tty"
expect_rc 0 "$TPUCTL" list --format 'value(name)'
[ ! -s "$T/out" ] || fail "nodes left: $(cat "$T/out")"
