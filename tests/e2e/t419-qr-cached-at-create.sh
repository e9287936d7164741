#!/bin/sh
# Issue 20: a queued resource is put into the node cache where it was
# created: after "queued-resources create ms --zones us-west4-a" (and
# with --async, before it is ACTIVE), "tpuctl ssh ms" without --zone
# finds it in us-west4-a from the cache (no list across zones), and an
# ACTIVE one needs no queuedResources.get either.
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"
emu_start
export CLOUDSDK_COMPUTE_ZONE=us-central2-b
KEY="$T/id_ed25519"
ssh-keygen -q -t ed25519 -N '' -f "$KEY" >/dev/null

expect_rc 0 "$TPUCTL" queued-resources create ms --node-id ms-0 \
    --zones us-west4-a --accelerator-type v5litepod-1
mark=$(emu_requests | wc -l)
expect_rc 0 "$TPUCTL" ssh ms --ssh-key-file "$KEY" -- echo hi
assert_grep "^\[s0/w0\] hi$" "$T/out"
assert_grep "^tpuctl: 'ms' is in zone us-west4-a \(node cache\): using that zone \(--zone chooses another\)$" "$T/err"
emu_requests | tail -n +$((mark + 1)) >"$T/reqs"
assert_no_grep '"path": *"/v2/projects/tpuctl-emu/locations/-/' "$T/reqs"
assert_no_grep '"method": *"GET", *"path": *"/v2/projects/tpuctl-emu/locations/us-west4-a/queuedResources/ms"' "$T/reqs"

# --async: cached before it is ACTIVE, so its zone is found too
expect_rc 0 "$TPUCTL" queued-resources create ma --node-id ma-0 \
    --zones us-west4-a --accelerator-type v5litepod-1 --async
mark=$(emu_requests | wc -l)
set +e
"$TPUCTL" ssh ma --ssh-key-file "$KEY" -- true >"$T/out" 2>"$T/err"
set -e
assert_grep "^tpuctl: 'ma' is in zone us-west4-a \(node cache\): using that zone" "$T/err"
emu_requests | tail -n +$((mark + 1)) >"$T/reqs"
assert_no_grep '"path": *"/v2/projects/tpuctl-emu/locations/-/' "$T/reqs"

# deleted: the cache forgets it, and the name is not found
expect_rc 0 "$TPUCTL" -q queued-resources delete ms --zone us-west4-a --force
expect_rc 4 "$TPUCTL" ssh ms --ssh-key-file "$KEY" -- true
assert_no_grep "node cache" "$T/err"
