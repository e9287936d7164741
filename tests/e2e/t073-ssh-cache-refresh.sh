#!/bin/sh
# The node cache: a second `tpuctl ssh` right after `create` and a first
# ssh makes no TPU API call.  When the cached description is stale (the
# node was deleted and recreated behind tpuctl's back: new id, new host
# keys, no ssh-keys in its metadata), the first failure refreshes it:
# the key is propagated again, the new host keys are pinned under the new
# id, and the command runs once on every worker; no false alarm, exit 0.
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"
# shellcheck source=tests/e2e/lib_fleet.sh
. "$(dirname "$0")/lib_fleet.sh"

emu_start
fleet_api_setup
expect_rc 0 "$TPUCTL" create t073 --accelerator-type v4-32
[ -n "$(find "$XDG_CACHE_HOME/tpuctl" -name t073.json 2>/dev/null)" ] ||
	fail "create did not cache the node"
expect_rc 0 "$TPUCTL" ssh t073 --worker=all -- echo one
id1=$("$TPUCTL" describe t073 --format 'value(id)')

# Warm: no TPU API request at all.
before=$(emu_requests | grep -c '"/v2/' || true)
expect_rc 0 "$TPUCTL" ssh t073 --worker=all -- echo two
[ "$(grep -c '^\[w[0-3]\] two$' "$T/out")" -eq 4 ] ||
	fail "warm run output: $(cat "$T/out")"
after=$(emu_requests | grep -c '"/v2/' || true)
[ "$after" -eq "$before" ] || { emu_requests | tail -3 >&2; }; [ "$after" -eq "$before" ] ||
	fail "warm ssh made $((after - before)) API calls"

# Recreated behind tpuctl's back: the cache still has the old node.
fleet_api DELETE "$NODES/t073" >/dev/null || fail "delete"
n=0
while fleet_api GET "$NODES/t073" >/dev/null 2>&1; do
	n=$((n + 1))
	[ $n -lt 150 ] || fail "node not deleted"
	sleep 0.2
done
fleet_create_node t073 v4-32 90
id2=$(jq -r .id "$T/node.json")
[ "$id1" != "$id2" ] || fail "the recreated node kept id $id1"
expect_rc 0 "$TPUCTL" ssh t073 --worker=all -- echo three
[ "$(grep -c '^\[w[0-3]\] three$' "$T/out")" -eq 4 ] ||
	fail "after recreate: $(cat "$T/out") $(cat "$T/err")"
assert_grep '^4 of 4 workers succeeded' "$T/err"
kh="$XDG_CONFIG_HOME/tpuctl/known_hosts"
assert_grep "^tpu\\.$id2-3 ssh-ed25519 " "$kh"
exit 0
