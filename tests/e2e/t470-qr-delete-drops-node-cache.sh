#!/bin/sh
# Issue 16: "queued-resources delete" forgets the queued resource's nodes
# in the node cache even when its membership was never cached (a node
# reached by its own name, as logs reaches a submitted job's): a later
# "ssh NODE" asks the API and is told the node is gone (exit 4) instead
# of dialling the dead workers from the cache (exit 9).  A node of
# another queued resource stays cached.
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"
emu_start
export CLOUDSDK_COMPUTE_ZONE=us-central2-b
KEY="$T/id_ed25519"
ssh-keygen -q -t ed25519 -N '' -f "$KEY" >/dev/null
C="$XDG_CACHE_HOME/tpuctl/nodes/tpuctl-emu/us-central2-b"

expect_rc 0 "$TPUCTL" -q queued-resources create q --node-id q-0 \
    --accelerator-type v4-8
expect_rc 0 "$TPUCTL" -q queued-resources create xq --node-id xq-0 \
    --accelerator-type v4-8
for n in q-0 xq-0; do
	expect_rc 0 "$TPUCTL" ssh "$n" --ssh-key-file "$KEY" -- echo hi
	assert_grep "hi$" "$T/out"
	[ -f "$C/$n.json" ] || fail "node $n not cached by ssh"
done
# the membership as logs leaves it: not cached
rm -f "$XDG_CACHE_HOME/tpuctl/qrs/tpuctl-emu/us-central2-b/q.json" \
    "$XDG_CACHE_HOME/tpuctl/qrs/tpuctl-emu/us-central2-b/xq.json"

expect_rc 0 "$TPUCTL" -q queued-resources delete q --force
[ ! -e "$C/q-0.json" ] || fail "node q-0 still cached after its queued resource was deleted"
[ -f "$C/xq-0.json" ] || fail "node xq-0 of another queued resource was dropped"
expect_rc 4 "$TPUCTL" ssh q-0 --ssh-key-file "$KEY" -- true
assert_grep "not found" "$T/err"
