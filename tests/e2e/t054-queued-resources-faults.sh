#!/bin/sh
# queued-resources create under faults: Ctrl-C and --timeout while the
# queued resource waits in a stockout delete the queued resource this
# command created (--cancel-on-interrupt, the default), so nothing is left
# to be filled later; --no-cancel-on-interrupt keeps it; --zones moves on
# after a stockout (a FAILED queued resource, or a create operation
# failing with code 8) and leaves nothing behind in the first zone; a lost
# create reply is resolved by the run id (R4); --async sends one request.
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"
# shellcheck source=tests/e2e/lib_tpu.sh
. "$(dirname "$0")/lib_tpu.sh"
emu_start
tpu_setup
Z=us-central2-b
QP=/v2/projects/tpuctl-emu/locations/$Z/queuedResources

stockout() {
	emu_event "{\"event\":\"stockout\",\"zone\":\"$1\"${2:+,\"clear\":true}}"
	[ "$CODE" = 200 ] || fail "stockout event $*: HTTP $CODE"
}
no_qrs() {
	expect_rc 0 "$TPUCTL" queued-resources list --zone - --format json
	[ "$(tr -d ' \n' <"$T/out")" = "[]" ] ||
	    fail "$1: queued resources left: $(cat "$T/out")"
	expect_rc 0 "$TPUCTL" list --zone - --format json
	[ "$(tr -d ' \n' <"$T/out")" = "[]" ] ||
	    fail "$1: nodes left: $(cat "$T/out")"
}

# The zone is out of capacity: the queued resource waits.
stockout $Z

# Ctrl-C during the wait: exit 130, the queued resource is deleted.
"$TPUCTL" queued-resources create qi --node-id qi1 --accelerator-type v4-8 \
    >"$T/out" 2>"$T/err" &
pid=$!
wait_for_grep "$T/err" WAITING_FOR_RESOURCES "" 10
kill -INT $pid
set +e
wait $pid
rc=$?
set -e
[ $rc -eq 130 ] || fail "Ctrl-C: exit $rc, want 130: $(cat "$T/err")"
assert_grep "stopped waiting for queued resource 'qi' in $Z; deleted it so it cannot be filled later" "$T/err"
emu_requests | grep '"method": *"DELETE"' | grep -q 'queuedResources/qi' ||
    fail "Ctrl-C: no DELETE of qi was sent"
emu_requests | grep '"method": *"DELETE"' | grep 'queuedResources/qi' |
    grep -q 'force=true' || fail "Ctrl-C: the DELETE was not forced"
no_qrs "Ctrl-C"

# --timeout: exit 124, deleted too.
expect_rc 124 "$TPUCTL" queued-resources create qt --node-id qt1 \
    --accelerator-type v4-8 --timeout 2s
assert_grep "timed out waiting for queued resource 'qt' in $Z; deleted it" "$T/err"
no_qrs "--timeout"

# --no-cancel-on-interrupt: the queued resource stays queued.
expect_rc 124 "$TPUCTL" queued-resources create qk --node-id qk1 \
    --accelerator-type v4-8 --timeout 2s --no-cancel-on-interrupt
assert_grep "timed out waiting for queued resource 'qk' in $Z \(nothing was cancelled\)" "$T/err"
expect_rc 0 "$TPUCTL" queued-resources describe qk --format 'value(state.state)'
[ "$(cat "$T/out")" = WAITING_FOR_RESOURCES ] || fail "qk is $(cat "$T/out")"
expect_rc 0 "$TPUCTL" queued-resources delete qk

# A queued resource that already existed is never deleted by a failed
# create of the same name: exit 4, it is still there.
expect_rc 0 "$TPUCTL" queued-resources create qk --node-id qk1 \
    --accelerator-type v4-8 --async
expect_rc 4 "$TPUCTL" queued-resources create qk --node-id qk2 \
    --accelerator-type v4-8 --timeout 2s
assert_grep "queued resource 'qk' already exists in zone $Z and was not created by this run" "$T/err"
expect_rc 0 "$TPUCTL" queued-resources describe qk
expect_rc 0 "$TPUCTL" queued-resources delete qk

# Without another zone, a stockout past --valid-until-duration is exit 7
# with the reason.
expect_rc 7 "$TPUCTL" queued-resources create qf --node-id qf1 \
    --accelerator-type v4-8 --valid-until-duration 1s
assert_grep "FAILED: .*no more capacity.*\(code 8\)" "$T/err"
expect_rc 0 "$TPUCTL" queued-resources delete qf
stockout $Z clear

# --zones: the first zone is out of capacity, so its queued resource
# FAILs when --valid-until-duration passes; it is deleted and the second
# zone fills a 2-slice multislice of v5litepod-16 (4 workers each).
stockout us-west4-a
expect_rc 0 "$TPUCTL" queued-resources create zq --node-count 2 \
    --accelerator-type v5litepod-16 --valid-until-duration 2s \
    --zones us-west4-a,us-west4-b
assert_grep "queued resource 'zq' in zone us-west4-a FAILED: .*\(code 8\); trying the next zone" "$T/err"
assert_grep "queued resource 'zq' is ACTIVE in us-west4-b: 2 nodes of v5litepod-16 \(4 workers each\)" "$T/err"
expect_rc 4 "$TPUCTL" queued-resources describe zq --zone us-west4-a
expect_rc 0 "$TPUCTL" queued-resources list --zone - --format 'value(name)'
[ "$(cat "$T/out")" = "projects/tpuctl-emu/locations/us-west4-b/queuedResources/zq" ] ||
    fail "--zones: $(cat "$T/out")"
for n in zq-0 zq-1; do
	expect_rc 0 "$TPUCTL" describe $n --zone us-west4-b \
	    --format 'value(state,health)'
	assert_grep '^READY	HEALTHY$' "$T/out"
done
expect_rc 0 "$TPUCTL" queued-resources delete zq --force --zone us-west4-b
stockout us-west4-a clear

# --zones after a create operation that fails with a stockout (code 8).
# The fault rides on the create itself: a queued resource's create
# operation has no work of its own, so the emulator's tick may finish it
# before the first poll, and a fault on that poll would come too late.
emu_inject --method POST --path /v2/projects/tpuctl-emu/locations/us-east5-a/queuedResources \
    --count 1 lro-error-8
expect_rc 0 "$TPUCTL" queued-resources create zo --node-id zo1 \
    --accelerator-type v5p-8 --zones us-east5-a,us-east5-c
assert_grep "in zone us-east5-a: .*\(code 8\); trying the next zone" "$T/err"
assert_grep "queued resource 'zo' is ACTIVE in us-east5-c" "$T/err"
expect_rc 4 "$TPUCTL" queued-resources describe zo --zone us-east5-a
expect_rc 0 "$TPUCTL" queued-resources delete zo --force --zone us-east5-c

# R4: the create reply is lost after the server made it: the queued
# resource carries this run's id, so create goes on and succeeds.
emu_inject --method POST --path "$QP" --count 1 return-503-after-0K
# A 2-slice multislice of v4-32 (4 workers each).
expect_rc 0 "$TPUCTL" queued-resources create qa --node-count 2 \
    --node-prefix pod --accelerator-type v4-32
emu_requests | grep '"method": *"POST"' | grep 'queuedResources' |
    grep -q '"fault"' || fail "R4: the fault was not applied"
assert_grep "queued resource 'qa' is ACTIVE in $Z: 2 nodes of v4-32 \(4 workers each\)" "$T/err"
expect_rc 0 "$TPUCTL" list --format json
python3 - "$T/out" <<'PY' || fail "the v4-32 multislice nodes"
import json, sys
ns = {n["name"].split("/")[-1]: n for n in json.load(open(sys.argv[1]))}
assert sorted(ns) == ["pod-0", "pod-1"], sorted(ns)
for n in ns.values():
    assert n["state"] == "READY" and len(n["networkEndpoints"]) == 4, n
    assert n["queuedResource"].endswith("/queuedResources/qa"), n
PY

# --async: exactly one request, the operation printed.
n0=$(emu_requests | wc -l)
expect_rc 0 "$TPUCTL" queued-resources create qb --node-id qb1 \
    --accelerator-type v4-8 --async --format 'value(name)'
n1=$(emu_requests | wc -l)
[ $((n1 - n0)) -eq 1 ] || fail "--async: $((n1 - n0)) requests, want 1"
assert_grep "/operations/operation-" "$T/out"
expect_rc 0 "$TPUCTL" queued-resources delete qa qb --force
no_qrs "the end"
