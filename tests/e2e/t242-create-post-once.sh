#!/bin/sh
# t242: a create whose connection breaks after the server took it is sent
# once (issue 19, surviving mutation "re-sending a POST after the
# connection breaks mid-request"): the emulator's request log holds one
# POST per creation, whatever libcurl would do with a dead reused
# connection; the creation is then resolved by reading it back (R4), for
# a node and a queued resource.
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"
emu_start
LOC=/v2/projects/tpuctl-emu/locations/us-central2-b

# posts PATH: POSTs to PATH in the request log, the reset one included
posts() {
	emu_requests | jq -r --arg p "$1" \
	    'select(.method == "POST" and .path == $p) | .path' | grep -c . || true
}

# no cached token: the create fetches one first, from the emulator, so
# its POST goes on a reused connection (the case libcurl would re-send)
rm -rf "$XDG_CACHE_HOME/tpuctl/tokens"
emu_inject --method POST --path "$LOC/nodes" --count 1 reset-connection
expect_rc 0 "$TPUCTL" -v create p1 --accelerator-type v4-8 --async
[ "$(posts "$LOC/nodes")" -eq 1 ] ||
    fail "the create was POSTed $(posts "$LOC/nodes") times, want 1"
assert_grep "node 'p1' exists with this run's id" "$T/err"
expect_rc 0 "$TPUCTL" describe p1

rm -rf "$XDG_CACHE_HOME/tpuctl/tokens"
emu_inject --method POST --path "$LOC/queuedResources" --count 1 reset-connection
expect_rc 0 "$TPUCTL" -v queued-resources create q1 --node-id qn1 \
    --accelerator-type v4-8 --async
[ "$(posts "$LOC/queuedResources")" -eq 1 ] ||
    fail "the queued resource was POSTed $(posts "$LOC/queuedResources") times, want 1"
exit 0
