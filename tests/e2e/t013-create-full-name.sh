#!/bin/sh
# Issue 17: "tpuctl create" takes a full resource name
# (projects/P/locations/Z/nodes/N, what --format 'value(name)' prints): it
# sets project and zone, the node is created under them with id N; a
# --zone naming another zone, --zones (the name fixes the zone) or a
# malformed name is a one-line usage error (exit 2) and nothing is sent.
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"
emu_start

P=$CLOUDSDK_CORE_PROJECT
Z=$CLOUDSDK_COMPUTE_ZONE
FULL="projects/$P/locations/$Z/nodes/c1"
unset CLOUDSDK_COMPUTE_ZONE

# no zone configured: a short name is refused, the full name gives it
expect_rc 2 "$TPUCTL" create c0 --accelerator-type v4-8
assert_grep 'no zone' "$T/err"
before=$(emu_requests | wc -l)
expect_rc 2 "$TPUCTL" create "$FULL" --accelerator-type v4-8 \
    --zones "$Z,us-east5-a"
assert_grep "^tpuctl: --zones does not go with a full resource name \('$FULL' names its zone\)\$" "$T/err"
[ "$(wc -l <"$T/err")" -eq 1 ] || fail "not one line: $(cat "$T/err")"
expect_rc 2 "$TPUCTL" --zone us-east5-a create "$FULL" --accelerator-type v4-8
assert_grep "^tpuctl: '$FULL' is in zone $Z, but --zone is us-east5-a" "$T/err"
expect_rc 2 "$TPUCTL" --project other-proj create "$FULL" \
    --accelerator-type v4-8
assert_grep "is in project $P, but --project is other-proj" "$T/err"
expect_rc 2 "$TPUCTL" create "projects/$P/locations/$Z/queuedResources/c1" \
    --accelerator-type v4-8
assert_grep "expected an id or projects/PROJECT/locations/ZONE/nodes/ID" "$T/err"
expect_rc 2 "$TPUCTL" create "projects/$P/locations/$Z/nodes/Bad_Name" \
    --accelerator-type v4-8
[ "$(emu_requests | wc -l)" = "$before" ] || fail "a refused create sent requests"

expect_rc 0 "$TPUCTL" create "$FULL" --accelerator-type v4-8
assert_grep "^tpuctl: created node 'c1' \(v4-8, 1 worker\) in $Z\$" "$T/err"
[ "$(emu_tpu_mutations)" = "[[\"POST\",\"/v2/projects/$P/locations/$Z/nodes\",\"nodeId=c1\"]]" ] ||
    fail "not one POST of nodeId=c1 under $P/$Z: $(emu_tpu_mutations)"
expect_rc 0 "$TPUCTL" --zone "$Z" describe c1 --format 'value(name,state)'
[ "$(cat "$T/out")" = "$FULL	READY" ] || fail "describe: $(cat "$T/out")"
# the same name again: the node exists (exit 4), as with a short name
expect_rc 4 "$TPUCTL" create "$FULL" --accelerator-type v4-8
