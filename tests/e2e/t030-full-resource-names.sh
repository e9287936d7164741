#!/bin/sh
# Issue 17: a full resource name (what --format 'value(name)' prints) is
# accepted wherever a node or queued-resource name is; it sets project
# and zone, and a --zone or --project naming another is a usage error
# naming both (exit 2, nothing sent).
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"
emu_start

P=tpuctl-emu
Z=us-central2-b
expect_rc 0 "$TPUCTL" create n1 --accelerator-type v4-8
expect_rc 0 "$TPUCTL" describe n1 --format 'value(name)'
FULL=$(cat "$T/out")
[ "$FULL" = "projects/$P/locations/$Z/nodes/n1" ] || fail "value(name): $FULL"

# No zone configured at all: the name gives it.
unset CLOUDSDK_COMPUTE_ZONE
expect_rc 2 "$TPUCTL" describe n1
assert_grep 'no zone' "$T/err"
expect_rc 0 "$TPUCTL" describe "$FULL" --format 'value(name)'
[ "$(cat "$T/out")" = "$FULL" ] || fail "describe FULL: $(cat "$T/out")"
expect_rc 0 "$TPUCTL" --zone "$Z" describe "$FULL" --format 'value(state)'
[ "$(cat "$T/out")" = READY ] || fail "same --zone: $(cat "$T/out")"

# A conflicting --zone / --project: one line naming both, nothing sent.
before=$(emu_requests | wc -l)
expect_rc 2 "$TPUCTL" --zone us-east5-a describe "$FULL"
assert_grep "^tpuctl: '$FULL' is in zone $Z, but --zone is us-east5-a" "$T/err"
[ "$(wc -l <"$T/err")" -eq 1 ] || fail "not one line: $(cat "$T/err")"
expect_rc 2 "$TPUCTL" --project other-proj stop "$FULL"
assert_grep "is in project $P, but --project is other-proj" "$T/err"
# the wrong collection, a malformed name
expect_rc 2 "$TPUCTL" describe "projects/$P/locations/$Z/queuedResources/n1"
assert_grep "expected an id or projects/PROJECT/locations/ZONE/nodes/ID" "$T/err"
expect_rc 2 "$TPUCTL" delete "projects/$P/nodes/n1"
assert_grep "invalid name 'projects/$P/nodes/n1'" "$T/err"
expect_rc 2 "$TPUCTL" describe "projects/$P/locations/$Z/nodes/Bad_Name"
after=$(emu_requests | wc -l)
[ "$before" = "$after" ] || fail "a refused name sent requests"

# stop, start, update, ssh on the full name
expect_rc 0 "$TPUCTL" stop "$FULL"
expect_rc 0 "$TPUCTL" start "$FULL"
expect_rc 0 "$TPUCTL" update "$FULL" --update-labels env=ci
expect_rc 0 "$TPUCTL" describe n1 --zone "$Z" --format 'value(labels.env)'
[ "$(cat "$T/out")" = ci ] || fail "update FULL: $(cat "$T/out")"
KEY="$T/id_ed25519"
ssh-keygen -q -t ed25519 -N '' -f "$KEY" >/dev/null
expect_rc 0 "$TPUCTL" ssh "$FULL" --ssh-key-file "$KEY" -- 'echo hi'
[ "$(cat "$T/out")" = "[w0] hi" ] || fail "ssh FULL: $(cat "$T/out")"
echo data >"$T/f"
expect_rc 0 "$TPUCTL" scp --ssh-key-file "$KEY" "$T/f" "$FULL:/tmp/f30"
expect_rc 0 "$TPUCTL" ssh "$FULL" --ssh-key-file "$KEY" -- 'cat /tmp/f30'
[ "$(cat "$T/out")" = "[w0] data" ] || fail "scp FULL: $(cat "$T/out")"

# queued resources: describe, and ssh resolves the slice; delete
expect_rc 0 "$TPUCTL" --zone "$Z" queued-resources create q1 --node-id q1n \
    --accelerator-type v4-8
QFULL="projects/$P/locations/$Z/queuedResources/q1"
expect_rc 0 "$TPUCTL" queued-resources describe "$QFULL" \
    --format 'value(state.state)'
[ "$(cat "$T/out")" = ACTIVE ] || fail "qr describe FULL: $(cat "$T/out")"
expect_rc 2 "$TPUCTL" --zone us-east5-a queued-resources describe "$QFULL"
assert_grep "^tpuctl: '$QFULL' is in zone $Z, but --zone is us-east5-a" "$T/err"
expect_rc 2 "$TPUCTL" queued-resources describe "projects/$P/locations/$Z/nodes/q1"
expect_rc 0 "$TPUCTL" ssh "$QFULL" --ssh-key-file "$KEY" -- 'echo qr'
[ "$(cat "$T/out")" = "[s0/w0] qr" ] || fail "ssh QFULL: $(cat "$T/out")"
expect_rc 0 "$TPUCTL" --quiet queued-resources delete "$QFULL" --force
expect_rc 0 "$TPUCTL" --quiet delete "$FULL"
expect_rc 0 "$TPUCTL" --zone "$Z" list --format 'value(name)'
[ ! -s "$T/out" ] || fail "not deleted: $(cat "$T/out")"
