#!/bin/sh
# Issue 20: a node created (and cached) in another zone is found there:
# "tpuctl ssh NAME" without --zone uses the node cache's zone and says so
# once on stderr; an explicit --zone wins.  A name not in the zone is
# looked up once in every zone (locations/-) and the error says where it
# is; when that list fails, only the hint is dropped (U2).
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"
emu_start
export CLOUDSDK_COMPUTE_ZONE=us-central2-b
KEY="$T/id_ed25519"
ssh-keygen -q -t ed25519 -N '' -f "$KEY" >/dev/null

expect_rc 0 "$TPUCTL" create far --zone us-west4-a \
    --accelerator-type v5litepod-1
expect_rc 0 "$TPUCTL" ssh far --ssh-key-file "$KEY" -- echo hi
assert_grep "^\[w0\] hi$" "$T/out"
assert_grep "^tpuctl: 'far' is in zone us-west4-a \(node cache\): using that zone \(--zone chooses another\)$" "$T/err"
[ "$(grep -c "node cache" "$T/err")" -eq 1 ] || fail "said more than once: $(cat "$T/err")"
# -q: the same, silently
expect_rc 0 "$TPUCTL" -q ssh far --ssh-key-file "$KEY" -- echo hi
assert_no_grep "node cache" "$T/err"
# scp finds it too
echo payload >"$T/f"
expect_rc 0 "$TPUCTL" scp --ssh-key-file "$KEY" "$T/f" far:f408
assert_grep "is in zone us-west4-a" "$T/err"

# An explicit --zone is what the user meant: not found there, and where
# it is instead, from one list across zones.
mark=$(emu_requests | wc -l)
expect_rc 4 "$TPUCTL" ssh far --zone us-central2-b --ssh-key-file "$KEY" -- true
assert_grep "^tpuctl: 'far' not found in zone us-central2-b; exists in zones us-west4-a \(--zone\)$" "$T/err"
assert_no_grep "node cache" "$T/err"
emu_requests | tail -n +$((mark + 1)) >"$T/reqs"
[ "$(grep -c '"path": *"/v2/projects/tpuctl-emu/locations/-/nodes"' "$T/reqs")" -eq 1 ] ||
    fail "not one list across zones: $(cat "$T/reqs")"

# No cache (another machine): not found, with the zones it exists in.
export TPUCTL_CACHE_DIR="$T/fresh-cache"
expect_rc 4 "$TPUCTL" ssh far --ssh-key-file "$KEY" -- true
assert_grep "^tpuctl: 'far' not found in zone us-central2-b; exists in zones us-west4-a \(--zone\)$" "$T/err"
expect_rc 4 "$TPUCTL" stop far
assert_grep "^tpuctl: node 'far' not found in zone us-central2-b; exists in zones us-west4-a \(--zone\)$" "$T/err"
# The list across zones failing (403) only drops the hint: the same
# not-found, exit 4, after one try of the list.
mark=$(emu_requests | wc -l)
emu_inject --method GET --path /v2/projects/tpuctl-emu/locations/-/nodes \
    --count 1 return-403
expect_rc 4 "$TPUCTL" ssh far --ssh-key-file "$KEY" -- true
assert_grep "^tpuctl: node 'far' not found in zone us-central2-b of project tpuctl-emu \(nor a queued resource of that name\)$" "$T/err"
assert_no_grep 'exists in zones' "$T/err"
emu_requests | tail -n +$((mark + 1)) >"$T/reqs"
[ "$(grep -c '"path": *"/v2/projects/tpuctl-emu/locations/-/nodes"' "$T/reqs")" -eq 1 ] ||
    fail "the failing list not tried once: $(cat "$T/reqs")"
# Nowhere at all: the message as before.
expect_rc 4 "$TPUCTL" ssh nosuch --ssh-key-file "$KEY" -- true
assert_grep "^tpuctl: node 'nosuch' not found in zone us-central2-b of project tpuctl-emu \(nor a queued resource of that name\)$" "$T/err"

# The same name in two cached zones: ambiguous, the configured zone stays.
unset TPUCTL_CACHE_DIR
expect_rc 0 "$TPUCTL" create far --zone europe-west4-b \
    --accelerator-type v5litepod-1
expect_rc 4 "$TPUCTL" ssh far --ssh-key-file "$KEY" -- true
assert_no_grep "node cache" "$T/err"
assert_grep "^tpuctl: 'far' not found in zone us-central2-b; exists in zones europe-west4-b, us-west4-a \(--zone\)$" "$T/err"
